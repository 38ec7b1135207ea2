//! brewricd: parse the configuration, start the shards, accept connections.

use std::io::Write;
use std::sync::{Arc, OnceLock};

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

fn run(cfg: Config) -> std::io::Result<()> {
    std::fs::create_dir_all(&cfg.data_dir)?;
    let listener = std::net::TcpListener::bind(&cfg.listen)?;
    let server_cell: Arc<OnceLock<Arc<Server>>> = Arc::new(OnceLock::new());
    let cell = server_cell.clone();
    let spawner: SessionSpawner = Arc::new(move |stream, _ctx| {
        if let Some(server) = cell.get() {
            tokio::task::spawn_local(brewric::wire::serve(stream, server.clone()));
        }
    });
    let shards = start_shards(cfg.shards, spawner)?;
    let server = Arc::new(Server::new(shards.clone(), cfg.query_memory_mb << 20));
    let _ = server_cell.set(server);
    let addr = listener.local_addr()?;
    println!("brewricd listening on {addr}");
    eprintln!("brewricd: {} shards, data in {}", cfg.shards, cfg.data_dir.display());
    std::io::stdout().flush()?;
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
