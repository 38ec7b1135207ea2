//! brewricd: parse the configuration, start the shards, accept connections.

use std::io::Write;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use brewric::catalog::CatalogStore;
use std::collections::HashMap;

use brewric::storage::checkpoint;
use brewric::storage::files::{self, Manifest};
use brewric::wal::{recovery, Wal};

use brewric::config::Config;
use brewric::runtime::shard::{start_shards, SessionSpawner};
use brewric::server::Server;

/// mimalloc: the engine allocates many short-lived vectors per batch and per
/// statement; glibc malloc showed up at the top of INSERT profiles.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc returns memory it has kept free for this long (ms) to the OS.
/// Its 10 ms default hands back the buffers ingest frees and allocates again
/// every few milliseconds, so each batch faulted in (and the kernel zeroed)
/// fresh pages: a third of ILP ingest's CPU. Ten seconds (jemalloc's default
/// decay) also keeps what a flush frees — the memtables it wrote out — for
/// the next ingest: an MCAP fleet loaded after an earlier one was flushed took
/// ~60k page faults instead of ~300k and 2.0 s instead of 2.3 s (with a 1 s
/// delay the memory was gone by the time the next load came). Memory idle
/// for ten seconds still goes back.
const ALLOCATOR_PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// mimalloc asks for transparent huge pages on its arenas by default
/// (`madvise(MADV_HUGEPAGE)`). A huge page's first touch makes the kernel
/// zero 2 MiB at once; on the virtual machines measured that zeroing ran at
/// ~0.5 GB/s and was 55% of an MCAP load's time (a 24-recording load: 9.5 s
/// with huge pages, 5 s without). Ingest touches fresh memory continuously, so
/// small pages it is: mimalloc is told so for the arenas it maps from now
/// on, and the process is, for the arena it mapped before `main`.
const ALLOCATOR_ALLOW_THP: std::ffi::c_long = 0;

fn configure_allocator() {
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    /// Indexes into mimalloc.h's `mi_option_t` (v3, the version the mimalloc crate builds).
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    const MI_OPTION_ALLOW_THP: std::ffi::c_int = 43;
    // An operator's MIMALLOC_* setting is read by mimalloc itself and wins.
    let ours = |env: &str| std::env::var_os(env).is_none();
    // SAFETY: the symbol is mimalloc's own (linked with the global
    // allocator) and takes plain integers; this runs first thing in main,
    // before any other thread exists, as mimalloc's option setters are not
    // thread safe. prctl takes integers only; PR_SET_THP_DISABLE changes
    // nothing but the kernel's page size choice for this process (it covers
    // the arena mimalloc mapped before main).
    unsafe {
        if ours("MIMALLOC_PURGE_DELAY") {
            mi_option_set(MI_OPTION_PURGE_DELAY, ALLOCATOR_PURGE_DELAY_MS);
        }
        if ours("MIMALLOC_ALLOW_THP") {
            mi_option_set(MI_OPTION_ALLOW_THP, ALLOCATOR_ALLOW_THP);
            if ALLOCATOR_ALLOW_THP == 0 {
                libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
            }
        }
    }
}

fn main() {
    configure_allocator();
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
    std::fs::create_dir_all(&cfg.data_dir)
        .map_err(|e| format!("cannot create {}: {e}", cfg.data_dir.display()))?;
    let _lock = lock_data_dir(&cfg.data_dir)?;
    let listener = std::net::TcpListener::bind(&cfg.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;

    // Recovery: the catalog, then every shard's WAL, before any client is served.
    let started = Instant::now();
    let catalog = CatalogStore::open(cfg.data_dir.clone())?;
    let manifest = Manifest::load(&cfg.data_dir)?;
    let logs = recovery::read_logs(&cfg.data_dir)?;
    let recovered = recovery::plan_replay(logs, &catalog.snapshot(), &manifest, &cfg.data_dir)?;
    // Kept recordings are needed while a WAL record or a table's frame references name them.
    let mut kept = recovered.kept_recordings.clone();
    kept.extend(catalog.snapshot().frame_files());
    brewric::storage::recordings::remove_unreferenced(&cfg.data_dir, &kept);

    let server_cell: Arc<OnceLock<Arc<Server>>> = Arc::new(OnceLock::new());
    let cell = server_cell.clone();
    let spawner: SessionSpawner = Arc::new(move |stream, ctx| {
        if let Some(server) = cell.get() {
            tokio::task::spawn_local(brewric::wire::serve(stream, server.clone(), ctx.id));
        }
    });
    let last_rows = Arc::new(brewric::storage::last_rows::LastRowRegistry::default());
    let shards = start_shards(cfg.shards, spawner, last_rows.clone())
        .map_err(|e| format!("cannot start shards: {e}"))?;
    if let Some(password) = &cfg.password {
        set_bootstrap_password(&catalog, password)?;
    }
    let tls = match (&cfg.tls_cert, &cfg.tls_key) {
        (Some(cert), Some(key)) => Some(brewric::wire::tls::load(cert, key)?),
        _ => None,
    };
    let access = brewric::server::Access {
        auth: cfg.auth,
        tls,
        tls_required: cfg.tls_required,
        max_connections: cfg.max_connections,
    };
    let server = Arc::new(
        Server::new(
            catalog,
            shards.clone(),
            cfg.query_memory_mb << 20,
            recovered.next_txn,
            last_rows,
        )
        .with_access(access),
    );
    let _ = server_cell.set(server.clone());
    let kept_by_wal = recovered.kept_recordings.clone();
    replay(&server, &cfg, &manifest, recovered, started)?;
    if remove_unfinished_ingests(&server)? {
        // Their kept recordings are unnamed now.
        let mut kept = kept_by_wal;
        kept.extend(server.catalog.snapshot().frame_files());
        brewric::storage::recordings::remove_unreferenced(&cfg.data_dir, &kept);
    }

    server.checkpoints.memtable_limit.set(cfg.memtable_limit_bytes());
    let policy = checkpoint::FlushPolicy {
        memtable_bytes: cfg.flush_mb << 20,
        max_age: std::time::Duration::from_secs(cfg.flush_age_s as u64),
    };
    let flusher_server = server.clone();
    let _ = shards[0].send_job_blocking(Box::new(move |_| {
        tokio::task::spawn_local(checkpoint::run_flusher(flusher_server, policy));
    }));
    let scheduler_server = server.clone();
    let _ = shards[0].send_job_blocking(Box::new(move |_| {
        tokio::task::spawn_local(brewric::sql::jobs::run_scheduler(scheduler_server));
    }));

    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    start_ingest_listeners(&cfg, &server)?;
    println!("brewricd listening on {addr}");
    eprintln!(
        "brewricd: {} shards, data in {}",
        cfg.shards,
        cfg.data_dir.display()
    );
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

/// After the replay: what recording ingests cut short by a restart created
/// goes where still empty (see `catalog::IngestCreated`), storage and all.
/// True when a table went.
fn remove_unfinished_ingests(server: &Arc<Server>) -> Result<bool, String> {
    let catalog = server.catalog.snapshot();
    if catalog.databases.values().all(|d| d.ingest_created.is_empty()) {
        return Ok(false);
    }
    let listed: Vec<u32> = catalog
        .databases
        .values()
        .flat_map(|d| d.ingest_created.iter().map(|c| c.object.oid))
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut rows: HashMap<u32, u64> = HashMap::new();
    rt.block_on(async {
        for shard in server.shards.iter() {
            let listed = listed.clone();
            let counts = shard
                .run(move |ctx| {
                    let storage = ctx.storage.borrow();
                    listed.iter().map(|&oid| (oid, storage.row_count(oid))).collect::<Vec<_>>()
                })
                .await
                .map_err(|e| e.into_message())?;
            for (oid, n) in counts {
                *rows.entry(oid).or_default() += n;
            }
        }
        Ok::<_, String>(())
    })?;
    let removed = server
        .catalog
        .update(|cat| {
            let mut removed = Vec::new();
            for db in cat.databases.values_mut().filter(|d| !d.ingest_created.is_empty()) {
                removed.extend(Arc::make_mut(db).remove_unfinished_ingests(|oid| rows.get(&oid).is_some_and(|&n| n > 0)));
            }
            Ok(removed)
        })
        .map_err(|e| e.into_message())?;
    rt.block_on(async {
        for &oid in &removed {
            for shard in server.shards.iter() {
                shard.run(move |ctx| ctx.storage.borrow_mut().drop_table(oid)).await.map_err(|e| e.into_message())?;
            }
        }
        Ok::<_, String>(())
    })?;
    if !removed.is_empty() {
        eprintln!("brewricd: removed {} empty tables of recording ingests a restart cut short", removed.len());
    }
    Ok(!removed.is_empty())
}

/// `--password-file` / BREWRIC_PASSWORD: the bootstrap superusers' password
/// (a SCRAM-SHA-256 verifier), set at every start.
fn set_bootstrap_password(catalog: &CatalogStore, password: &str) -> Result<(), String> {
    let verifier = brewric::auth::ScramVerifier::new(password).to_stored();
    catalog
        .update(|cat| {
            for name in [brewric::catalog::BOOTSTRAP_ROLE, "postgres"] {
                if let Some(role) = cat.roles.get(name) {
                    let mut role = (**role).clone();
                    role.password = Some(verifier.clone());
                    cat.roles.insert(name.to_string(), Arc::new(role));
                }
            }
            Ok(())
        })
        .map_err(|e| format!("cannot set the bootstrap password: {}", e.message))
}

/// Binds the HTTP write API and ILP/TCP (unless off) and accepts their
/// connections on threads of their own, handing each to a shard in turn.
/// Their addresses are printed before the PostgreSQL one (tests read them).
fn start_ingest_listeners(cfg: &Config, server: &Arc<Server>) -> Result<(), String> {
    if let Some(address) = &cfg.http {
        let listener = std::net::TcpListener::bind(address)
            .map_err(|e| format!("cannot listen for HTTP on {address}: {e}"))?;
        println!("brewricd http on {}", listener.local_addr().map_err(|e| e.to_string())?);
        let state = Arc::new(brewric::http::HttpState::new(
            server.clone(),
            brewric::http::HttpConfig {
                max_body: cfg.http_max_body,
                token: cfg.http_token.clone(),
                database: cfg.ingest_database.clone(),
                max_in_flight: 16 * cfg.shards,
            },
        ));
        accept_on_shards("http", listener, server.shards.clone(), move |stream, shard| {
            tokio::task::spawn_local(brewric::http::serve(stream, state.clone(), shard));
        })?;
    }
    if let Some(address) = &cfg.ilp {
        let listener = std::net::TcpListener::bind(address)
            .map_err(|e| format!("cannot listen for ILP on {address}: {e}"))?;
        println!("brewricd ilp on {}", listener.local_addr().map_err(|e| e.to_string())?);
        let config = Arc::new(brewric::wire::ilp::IlpConfig {
            database: cfg.ingest_database.clone(),
            schema: cfg.ilp_schema.clone(),
        });
        let server = server.clone();
        accept_on_shards("ilp", listener, server.shards.clone(), move |stream, shard| {
            tokio::task::spawn_local(brewric::wire::ilp::serve(stream, server.clone(), config.clone(), shard));
        })?;
    }
    Ok(())
}

/// Accepts on `listener` in a thread; each socket runs `start` on the next shard.
fn accept_on_shards(
    what: &'static str,
    listener: std::net::TcpListener,
    shards: Vec<brewric::runtime::ShardHandle>,
    start: impl Fn(tokio::net::TcpStream, usize) + Send + Sync + 'static,
) -> Result<(), String> {
    let start = Arc::new(start);
    std::thread::Builder::new()
        .name(format!("{what}-accept"))
        .spawn(move || {
            let mut next = 0usize;
            for stream in listener.incoming() {
                let stream = match stream {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("brewricd: {what} accept failed: {e}");
                        continue;
                    }
                };
                let _ = stream.set_nonblocking(true);
                let _ = stream.set_nodelay(true);
                let shard = &shards[next % shards.len()];
                next += 1;
                let start = start.clone();
                let sent = shard.send_job_blocking(Box::new(move |ctx| {
                    match tokio::net::TcpStream::from_std(stream) {
                        Ok(s) => start(s, ctx.id),
                        Err(e) => eprintln!("brewricd: {what}: cannot adopt socket: {e}"),
                    }
                }));
                if !sent {
                    eprintln!("brewricd: shard {} is gone", shard.id);
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the {what} acceptor: {e}"))
}

/// Loads the recovered rows into the shards (a directory's rows go to shard
/// `dir mod shards`, so a changed `--shards` still finds them), moves
/// sequences past every value a row holds, and starts each shard's WAL.
fn replay(
    server: &Arc<Server>,
    cfg: &Config,
    manifest: &Manifest,
    recovered: recovery::Recovered,
    started: Instant,
) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let shards = &server.shards;
    let bytes: u64 = recovered.logs.iter().map(|l| l.bytes).sum();
    let records: usize = recovered.logs.iter().map(|l| l.records.len()).sum();
    advance_sequences(server, &recovered);
    let catalog = server.catalog.snapshot();
    let types = catalog.table_types();
    let time_columns: HashMap<u32, usize> = catalog
        .tables()
        .filter_map(|t| brewric::storage::flush::time_column(t).map(|c| (t.oid, c)))
        .collect();
    let segment_rows = load_segments(server, cfg, manifest, &types, &rt)?;
    rt.block_on(async {
        for (dir, ops) in recovered.ops {
            let shard = &shards[dir as usize % shards.len()];
            let types = types.clone();
            let time_columns = time_columns.clone();
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
                            recovery::ReplayOp::DropRanges { table, time, ranges } => {
                                storage.drop_ranges(table, time, &ranges);
                            }
                            recovery::ReplayOp::DropBefore { table, cutoff } => {
                                if let Some(time) = time_columns.get(&table) {
                                    storage.drop_before(table, *time, cutoff);
                                }
                            }
                        }
                    }
                })
                .await
                .map_err(|e| e.into_message())?;
        }
        // One failure for all the WALs: a failed sync on one shard stops writes on all.
        let wal_failure = std::sync::Arc::new(brewric::wal::WalFailure::default());
        for shard in shards.iter() {
            let id = shard.id as u32;
            let log = recovered.logs.iter().find(|l| l.shard == id);
            let existing = log.map(|l| l.segments.clone()).unwrap_or_default();
            // LSNs continue past both the log and the last checkpoint (whose
            // WAL segments may all have been deleted).
            let next_lsn = log
                .map_or(0, |l| l.next_lsn)
                .max(manifest.shards.get(&id).map_or(0, |c| c.lsn));
            let dir = brewric::wal::shard_dir(&cfg.data_dir, id);
            let failure = wal_failure.clone();
            shard
                .run(move |ctx| {
                    let ring = ctx.ring.borrow_mut().take();
                    Wal::start(&dir, id, existing, next_lsn, ring, failure).map(|wal| {
                        *ctx.wal.borrow_mut() = Some(wal);
                    })
                })
                .await
                .map_err(|e| e.into_message())?
                .map_err(|e| format!("cannot start the WAL: {e}"))?;
        }
        Ok::<(), String>(())
    })?;
    // WAL directories of shards that no longer exist (fewer --shards than
    // before): their rows were replayed into the remaining shards; the first
    // checkpoint writes them to segments and removes those directories.
    let orphans: HashMap<u32, u64> = recovered
        .logs
        .iter()
        .filter(|l| l.shard as usize >= shards.len())
        .map(|l| {
            (
                l.shard,
                l.next_lsn
                    .max(manifest.shards.get(&l.shard).map_or(0, |c| c.lsn)),
            )
        })
        .collect();
    let has_orphans = !orphans.is_empty();
    server
        .checkpoints
        .init(cfg.data_dir.clone(), manifest, orphans);
    if has_orphans {
        let s = server.clone();
        rt.block_on(shards[0].run_local(move |_| async move { checkpoint::checkpoint(&s).await }))
            .map_err(|e| e.into_message())?
            .map_err(|e| {
                format!(
                    "the checkpoint after a change of --shards failed: {}",
                    e.message
                )
            })?;
    }
    if segment_rows > 0 {
        eprintln!("brewricd: {segment_rows} rows in segment files");
    }
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

/// Opens the segment files the manifest lists onto their shards (directory
/// `d` goes to shard `d mod shards`), deletes segment files it does not list
/// (a flush that crashed before its manifest), and sets each shard's segment
/// directory. Returns the rows they hold.
fn load_segments(
    server: &Arc<Server>,
    cfg: &Config,
    manifest: &Manifest,
    types: &HashMap<u32, Vec<brewric::types::DataType>>,
    rt: &tokio::runtime::Runtime,
) -> Result<u64, String> {
    let shards = &server.shards;
    let listed: std::collections::HashSet<&str> =
        manifest.segments.iter().map(|s| s.as_str()).collect();
    let mut rows = 0u64;
    let mut max_id: HashMap<u32, u64> = HashMap::new();
    for rel in &manifest.segments {
        let dir: u32 = rel
            .strip_prefix("segments/shard-")
            .and_then(|r| r.split('/').next())
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| format!("checkpoint.json lists a strange segment path {rel:?}"))?;
        let seg = files::SegmentFile::open(&cfg.data_dir.join(rel), dir).map_err(|e| {
            format!("{e}. Brewric will not start: the segment holds acknowledged rows. Restore it from a backup.")
        })?;
        let e = max_id.entry(dir).or_default();
        *e = (*e).max(seg.id + 1);
        let Some(t) = types.get(&seg.table).cloned() else {
            continue;
        }; // a dropped table
        rows += seg.footer.rows;
        rt.block_on(shards[dir as usize % shards.len()].run(move |ctx| {
            ctx.storage
                .borrow_mut()
                .add_segment(&t, std::rc::Rc::new(seg))
        }))
        .map_err(|e| e.into_message())?;
    }
    if let Ok(dirs) = std::fs::read_dir(cfg.data_dir.join("segments")) {
        for d in dirs.flatten() {
            let dname = d.file_name().to_string_lossy().to_string();
            for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
                let fname = f.file_name().to_string_lossy().to_string();
                let rel = format!("segments/{dname}/{fname}");
                if !listed.contains(rel.as_str()) {
                    if let (Some(dir), Some((_, id))) = (
                        dname
                            .strip_prefix("shard-")
                            .and_then(|n| n.parse::<u32>().ok()),
                        files::parse_segment_file_name(&fname),
                    ) {
                        let e = max_id.entry(dir).or_default();
                        *e = (*e).max(id + 1);
                    }
                    eprintln!("brewricd: removing {rel}: no checkpoint lists it (a flush that did not finish)");
                    let _ = std::fs::remove_file(f.path());
                }
            }
        }
    }
    for shard in shards.iter() {
        let id = shard.id as u32;
        let next = manifest
            .shards
            .get(&id)
            .map_or(0, |c| c.next_segment)
            .max(max_id.get(&id).copied().unwrap_or(0));
        let (data_dir, cache) = (cfg.data_dir.clone(), cfg.cache_mb << 20);
        rt.block_on(shard.run(move |ctx| {
            let mut s = ctx.storage.borrow_mut();
            s.data_dir = Some(data_dir);
            s.dir = id;
            s.next_segment = next;
            s.cache = brewric::storage::cache::BlockCache::new(cache);
        }))
        .map_err(|e| e.into_message())?;
    }
    Ok(rows)
}

/// After a crash a sequence may lag values already in rows (it is saved with
/// the catalog, rows with the WAL): move each past the largest such value.
fn advance_sequences(server: &Server, recovered: &recovery::Recovered) {
    let catalog = server.catalog.snapshot();
    for db in catalog.databases.values() {
        for schema in db.schemas.values() {
            for table in schema.tables.values() {
                for (ci, col) in table.columns.iter().enumerate() {
                    let Some(name) = col.default_sequence() else {
                        continue;
                    };
                    let (sname, seq) = name.split_once('.').unwrap_or(("public", &name));
                    let Some(seq) = db.schemas.get(sname).and_then(|s| s.sequences.get(seq)) else {
                        continue;
                    };
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
