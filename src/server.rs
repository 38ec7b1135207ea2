//! The server: the catalog, the shard handles, and the registry that lets a
//! CancelRequest (which arrives on a new connection, maybe on another shard)
//! find the query to cancel.
//! Must not: hold table data (shards do) or session state (sessions do).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::catalog::CatalogStore;
use crate::runtime::ShardHandle;
use crate::storage::checkpoint::Checkpoints;

pub struct Server {
    pub catalog: CatalogStore,
    pub shards: Vec<ShardHandle>,
    /// Default per-statement memory limit (`--query-memory-mb`).
    pub query_memory_limit_bytes: usize,
    /// Transaction ids written in WAL records (recovery continues after the largest seen).
    next_txn: AtomicU64,
    next_pid: AtomicI32,
    next_shard: AtomicUsize,
    /// pid → (secret, cancel flag of the session's running statement).
    cancels: Mutex<HashMap<i32, (i32, Arc<AtomicBool>)>>,
    /// The checkpoint protocol's shared state (commit gate, manifest number).
    pub checkpoints: Checkpoints,
    /// Writers of rows hold it shared; statements that rewrite a table's rows
    /// (DELETE, UPDATE, TRUNCATE) hold it alone, so that no acknowledged row
    /// lands between their read and their rewrite.
    pub rewrites: Arc<tokio::sync::RwLock<()>>,
    /// The key sets that enforce UNIQUE and PRIMARY KEY (`sql/unique.rs`).
    pub unique_keys: crate::sql::unique::UniqueKeySets,
    /// The latest time per series of line-protocol tables (`sql/series_times.rs`).
    pub series_times: crate::sql::series_times::SeriesTimes,
}

impl Server {
    pub fn new(
        catalog: CatalogStore,
        shards: Vec<ShardHandle>,
        query_memory_limit_bytes: usize,
        next_txn: u64,
    ) -> Server {
        Server {
            catalog,
            shards,
            query_memory_limit_bytes,
            next_txn: AtomicU64::new(next_txn),
            next_pid: AtomicI32::new(1000),
            next_shard: AtomicUsize::new(0),
            cancels: Mutex::new(HashMap::new()),
            checkpoints: Checkpoints::default(),
            rewrites: Arc::new(tokio::sync::RwLock::new(())),
            unique_keys: Default::default(),
            series_times: Default::default(),
        }
    }

    /// Forgets what writes derive from a table's rows (unique key sets, series
    /// times): its rows changed in ways those do not follow (rebuilt by a scan
    /// at the next write).
    pub fn forget_derived_write_state(&self, table: crate::catalog::TableId) {
        self.unique_keys.forget_table(table);
        self.series_times.forget_table(table);
    }

    /// Registers a session; returns its (pid, secret) for BackendKeyData.
    pub fn register_session(&self, cancel: Arc<AtomicBool>) -> (i32, i32) {
        let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
        let secret = random_secret(pid);
        self.cancels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(pid, (secret, cancel));
        (pid, secret)
    }

    pub fn unregister_session(&self, pid: i32) {
        self.cancels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&pid);
    }

    /// Handles a CancelRequest: sets the flag when pid and secret match.
    pub fn cancel(&self, pid: i32, secret: i32) {
        let map = self.cancels.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, flag)) = map.get(&pid) {
            if *s == secret {
                flag.store(true, Ordering::Relaxed);
            }
        }
    }

    pub fn next_txn(&self) -> u64 {
        self.next_txn.fetch_add(1, Ordering::Relaxed)
    }

    /// The next transaction id, without taking it (saved by checkpoints).
    pub fn peek_next_txn(&self) -> u64 {
        self.next_txn.load(Ordering::Relaxed)
    }

    /// The shard that receives the next rows of a small insert (round-robin).
    pub fn next_shard(&self) -> usize {
        self.next_shard.fetch_add(1, Ordering::Relaxed) % self.shards.len().max(1)
    }
}

fn random_secret(pid: i32) -> i32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i32(pid);
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish() as i32
}
