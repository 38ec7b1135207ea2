//! brewricd: parse the configuration, start the shards, accept connections.

use std::io::Write;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use brewric::catalog::CatalogStore;
use brewric::wal::{recovery, Wal};

use brewric::config::Config;
use brewric::runtime::shard::{start_shards, SessionSpawner};
use brewric::server::Server;

/// mimalloc: the engine allocates many short-lived vectors per batch and per
/// statement; glibc malloc showed up at the top of INSERT profiles.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match Config::from_args(&args, |k| std::env::var(k).ok()) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(cfg) {
        eprintln!("brewricd: {e}");
        std::process::exit(1);
    }
}

fn run(cfg: Config) -> Result<(), String> {
    std::fs::create_dir_all(&cfg.data_dir).map_err(|e| format!("cannot create {}: {e}", cfg.data_dir.display()))?;
    let _lock = lock_data_dir(&cfg.data_dir)?;
    let listener = std::net::TcpListener::bind(&cfg.listen).map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;

    // Recovery: the catalog, then every shard's WAL, before any client is served.
    let started = Instant::now();
    let catalog = CatalogStore::open(cfg.data_dir.clone())?;
    let logs = recovery::read_logs(&cfg.data_dir)?;
    let recovered = recovery::plan_replay(logs, &catalog.snapshot())?;

    let server_cell: Arc<OnceLock<Arc<Server>>> = Arc::new(OnceLock::new());
    let cell = server_cell.clone();
    let spawner: SessionSpawner = Arc::new(move |stream, ctx| {
        if let Some(server) = cell.get() {
            tokio::task::spawn_local(brewric::wire::serve(stream, server.clone(), ctx.id));
        }
    });
    let shards = start_shards(cfg.shards, spawner).map_err(|e| format!("cannot start shards: {e}"))?;
    let server = Arc::new(Server::new(catalog, shards.clone(), cfg.query_memory_mb << 20, recovered.next_txn));
    let _ = server_cell.set(server.clone());
    replay(&server, &cfg, recovered, started)?;

    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("brewricd listening on {addr}");
    eprintln!("brewricd: {} shards, data in {}", cfg.shards, cfg.data_dir.display());
    let _ = std::io::stdout().flush();
    // The acceptor hands sockets to shards round-robin; each shard then owns its sessions.
    let mut next = 0usize;
    for stream in listener.incoming() {
        match stream {
            Ok(s) => {
                let shard = &shards[next % shards.len()];
                next += 1;
                if !shard.send_connection(s) {
                    eprintln!("brewricd: shard {} is gone", shard.id);
                }
            }
            Err(e) => eprintln!("brewricd: accept failed: {e}"),
        }
    }
    Ok(())
}

/// Loads the recovered rows into the shards (a directory's rows go to shard
/// `dir mod shards`, so a changed `--shards` still finds them), moves
/// sequences past every value a row holds, and starts each shard's WAL.
fn replay(server: &Arc<Server>, cfg: &Config, recovered: recovery::Recovered, started: Instant) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?;
    let shards = &server.shards;
    let bytes: u64 = recovered.logs.iter().map(|l| l.bytes).sum();
    let records: usize = recovered.logs.iter().map(|l| l.records.len()).sum();
    advance_sequences(server, &recovered);
    rt.block_on(async {
        for (dir, ops) in recovered.ops {
            let shard = &shards[dir as usize % shards.len()];
            let catalog = server.catalog.snapshot();
            let types: std::collections::HashMap<u32, Vec<brewric::types::DataType>> = catalog
                .databases
                .values()
                .flat_map(|d| d.schemas.values())
                .flat_map(|s| s.tables.values())
                .map(|t| (t.oid, t.column_types()))
                .collect();
            shard
                .run(move |ctx| {
                    let mut storage = ctx.storage.borrow_mut();
                    for op in ops {
                        match op {
                            recovery::ReplayOp::Append { table, batch } => {
                                if let Some(t) = types.get(&table) {
                                    storage.append(table, t, &batch);
                                }
                            }
                            recovery::ReplayOp::Truncate { table } => storage.truncate(table),
                        }
                    }
                })
                .await
                .map_err(|e| e.message)?;
        }
        for shard in shards.iter() {
            let id = shard.id as u32;
            let log = recovered.logs.iter().find(|l| l.shard == id);
            let (last, next_lsn) = (log.and_then(|l| l.last_segment), log.map_or(0, |l| l.next_lsn));
            let dir = brewric::wal::shard_dir(&cfg.data_dir, id);
            shard
                .run(move |ctx| {
                    let ring = ctx.ring.borrow_mut().take();
                    Wal::start(&dir, id, last, next_lsn, ring).map(|wal| {
                        *ctx.wal.borrow_mut() = Some(wal);
                    })
                })
                .await
                .map_err(|e| e.message)?
                .map_err(|e| format!("cannot start the WAL: {e}"))?;
        }
        Ok::<(), String>(())
    })?;
    let secs = started.elapsed().as_secs_f64();
    if records > 0 {
        eprintln!(
            "brewricd: recovered {} rows from {records} WAL records ({:.1} MB) in {secs:.2} s ({:.0} MB/s)",
            recovered.rows,
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / secs.max(1e-9)
        );
    }
    Ok(())
}

/// After a crash a sequence may lag values already in rows (it is saved with
/// the catalog, rows with the WAL): move each past the largest such value.
fn advance_sequences(server: &Server, recovered: &recovery::Recovered) {
    let catalog = server.catalog.snapshot();
    for db in catalog.databases.values() {
        for schema in db.schemas.values() {
            for table in schema.tables.values() {
                for (ci, col) in table.columns.iter().enumerate() {
                    let Some(default) = &col.default else { continue };
                    let text = default.to_string();
                    let Some(name) = text.strip_prefix("nextval('").and_then(|r| r.split('\'').next()) else { continue };
                    let (sname, seq) = name.split_once('.').unwrap_or(("public", name));
                    let Some(seq) = db.schemas.get(sname).and_then(|s| s.sequences.get(seq)) else { continue };
                    for ops in recovered.ops.values() {
                        for op in ops {
                            if let recovery::ReplayOp::Append { table: oid, batch } = op {
                                if *oid == table.oid {
                                    for i in 0..batch.len {
                                        if let Some(v) = batch.columns[ci].datum(i).as_i64() {
                                            seq.advance_past(v);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Takes an exclusive lock on `<data-dir>/LOCK` for the life of the process:
/// two servers appending to the same WAL would corrupt it. The lock is an
/// flock, so it goes away with the process however it ends (kill -9 included).
fn lock_data_dir(dir: &std::path::Path) -> Result<std::fs::File, String> {
    use std::os::fd::AsRawFd;
    let path = dir.join("LOCK");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: flock on a descriptor we own; the result is checked.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        return Err(format!(
            "the data directory {} is in use by another brewricd (lock {} is held); stop it first or use another --data-dir",
            dir.display(),
            path.display()
        ));
    }
    Ok(file)
}
