//! The server: the catalog, the shard handles, the registry that lets a
//! CancelRequest (which arrives on a new connection, maybe on another shard)
//! find the query to cancel, and the registries behind the statistics views:
//! connected sessions (`activity.rs`, pg_stat_activity) and COPYs in progress
//! (`copy_progress.rs`, pg_stat_progress_copy); who may connect and how
//! (`Access`: authentication mode, TLS, `--max-connections`), the live
//! session counts behind the connection limits (`connections.rs`), the
//! failed-login delays (`auth::FailedLogins`) and the tables running
//! recording ingests write to (`ingest_targets.rs`).
//! Must not: hold table data (shards do) or session state (sessions do; the
//! registries only describe them).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub mod activity;
pub mod connections;
pub mod copy_progress;
pub mod ingest_targets;
pub mod job_runs;

use crate::catalog::CatalogStore;
use crate::exec::cancel::{CancelFlag, StopReason};
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
    /// pid → how to stop the session's running statement or end the session.
    signals: Mutex<HashMap<i32, SignalTarget>>,
    /// The checkpoint protocol's shared state (commit gate, manifest number).
    pub checkpoints: Checkpoints,
    /// Writers of rows hold it shared; statements that rewrite a table's rows
    /// (DELETE, UPDATE, TRUNCATE) hold it alone, so that no acknowledged row
    /// lands between their read and their rewrite.
    pub rewrites: Arc<tokio::sync::RwLock<()>>,
    /// The key sets that enforce UNIQUE and PRIMARY KEY (`sql/unique.rs`).
    pub unique_keys: crate::sql::unique::UniqueKeySets,
    /// Keys open transactions hold on either side of foreign keys.
    pub foreign_key_holds: Arc<crate::sql::foreign_keys::ForeignKeyHolds>,
    /// The latest time per series of line-protocol tables (`sql/series_times.rs`).
    pub series_times: crate::sql::series_times::SeriesTimes,
    /// Connected wire sessions (pg_stat_activity), keyed by pid.
    pub activities: activity::Activities,
    /// COPYs in progress (pg_stat_progress_copy); see `copy_progress.rs` for how a COPY path reports.
    pub copy_progress: copy_progress::CopyProgress,
    /// Authentication mode, TLS and connection limit (`--auth`, `--tls-*`, `--max-connections`).
    pub access: Access,
    /// Sessions counted against the connection limits.
    pub connections: connections::Connections,
    /// Failed logins per client address: the growing delay before each answer.
    pub failed_logins: crate::auth::FailedLogins,
    /// The latest row per series, fed by every shard (`storage/last_rows.rs`).
    pub last_rows: Arc<crate::storage::last_rows::LastRowRegistry>,
    /// Tables running recording ingests write to (`ingest_targets.rs`).
    pub ingest_targets: Arc<ingest_targets::IngestTargets>,
    /// Kept recording files whose ingest is still running (`storage::recordings`).
    pub kept_pins: crate::storage::recordings::KeptPins,
    /// TimescaleDB jobs' run history and next starts (`timescaledb_information.job_stats`).
    pub job_runs: job_runs::JobRuns,
}

/// How clients connect: the wire layer's policy, set from the configuration.
#[derive(Clone)]
pub struct Access {
    pub auth: crate::config::AuthMode,
    /// Set: SSLRequest is answered 'S' and the handshake runs.
    pub tls: Option<crate::wire::tls::TlsConfig>,
    /// Clear connections from other hosts than this one are refused.
    pub tls_required: bool,
    pub max_connections: usize,
}

impl Default for Access {
    fn default() -> Access {
        Access {
            auth: crate::config::AuthMode::LocalTrust,
            tls: None,
            tls_required: false,
            max_connections: crate::config::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

impl Server {
    /// `last_rows` is the registry the shards were started with (`start_shards`).
    pub fn new(
        catalog: CatalogStore,
        shards: Vec<ShardHandle>,
        query_memory_limit_bytes: usize,
        next_txn: u64,
        last_rows: Arc<crate::storage::last_rows::LastRowRegistry>,
    ) -> Server {
        Server {
            catalog,
            shards,
            query_memory_limit_bytes,
            next_txn: AtomicU64::new(next_txn),
            next_pid: AtomicI32::new(1000),
            next_shard: AtomicUsize::new(0),
            signals: Mutex::new(HashMap::new()),
            checkpoints: Checkpoints::default(),
            rewrites: Arc::new(tokio::sync::RwLock::new(())),
            unique_keys: Default::default(),
            foreign_key_holds: Default::default(),
            series_times: Default::default(),
            activities: Default::default(),
            copy_progress: Default::default(),
            access: Access::default(),
            connections: Default::default(),
            failed_logins: Default::default(),
            last_rows,
            ingest_targets: Default::default(),
            kept_pins: Default::default(),
            job_runs: Default::default(),
        }
    }

    /// The server with `access` as its connection policy.
    pub fn with_access(mut self, access: Access) -> Server {
        self.access = access;
        self
    }

    /// Forgets what writes derive from a table's rows (unique key sets, series
    /// times): its rows changed in ways those do not follow (rebuilt by a scan
    /// at the next write).
    pub fn forget_derived_write_state(&self, table: crate::catalog::TableId) {
        self.unique_keys.forget_table(table);
        self.series_times.forget_table(table);
    }

    /// Registers a wire session once its startup succeeded: a pid and secret
    /// for BackendKeyData (the cancel registry) and its pg_stat_activity
    /// entry. Both stay until the returned registration is dropped.
    pub fn register_session(
        self: &Arc<Self>,
        cancel: Arc<CancelFlag>,
        info: activity::SessionInfo,
    ) -> SessionRegistration {
        let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
        let secret = random_secret(pid);
        let terminated = Arc::new(tokio::sync::Notify::new());
        self.signals.lock().unwrap_or_else(|p| p.into_inner()).insert(
            pid,
            SignalTarget { secret, cancel, terminated: terminated.clone() },
        );
        let activity = self.activities.insert(pid, info);
        SessionRegistration {
            server: self.clone(),
            pid,
            secret,
            activity,
            terminated,
            slot: None,
        }
    }

    fn unregister_session(&self, pid: i32) {
        self.signals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&pid);
        self.activities.remove(pid);
    }

    /// Handles a CancelRequest: cancels the running statement when pid and secret match.
    pub fn cancel(&self, pid: i32, secret: i32) {
        let map = self.signals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(target) = map.get(&pid) {
            if target.secret == secret {
                target.cancel.raise(StopReason::UserRequest);
            }
        }
    }

    /// pg_cancel_backend / pg_terminate_backend: stops the session's running
    /// statement, and for a termination wakes the session (idle or not) to
    /// close its connection. False when no session has that pid.
    pub fn signal_backend(&self, pid: i32, reason: StopReason) -> bool {
        let map = self.signals.lock().unwrap_or_else(|p| p.into_inner());
        let Some(target) = map.get(&pid) else {
            return false;
        };
        target.cancel.raise(reason);
        if reason == StopReason::Terminate {
            target.terminated.notify_one();
        }
        true
    }

    /// `signal_backend` on behalf of role `caller`, with PostgreSQL 15's rule:
    /// a superuser signals anyone; other roles only sessions of their own
    /// role, never a superuser's (42501).
    pub fn signal_backend_as(&self, caller: &str, pid: i32, reason: StopReason) -> crate::error::DbResult<bool> {
        let Some(target) = self.activities.get(pid) else {
            return Ok(false);
        };
        let catalog = self.catalog.snapshot();
        let superuser = |name: &str| catalog.role(name).is_some_and(|r| r.superuser);
        if !superuser(caller) {
            let terminate = reason == StopReason::Terminate;
            let message = if superuser(&target.usename) {
                Some(if terminate {
                    "must be a superuser to terminate superuser process"
                } else {
                    "must be a superuser to cancel superuser query"
                })
            } else if target.usename != caller {
                Some(if terminate {
                    "must be a member of the role whose process is being terminated or member of pg_signal_backend"
                } else {
                    "must be a member of the role whose query is being canceled or member of pg_signal_backend"
                })
            } else {
                None
            };
            if let Some(message) = message {
                return Err(crate::error::DbError::new(
                    crate::error::sqlstate::INSUFFICIENT_PRIVILEGE,
                    message,
                ));
            }
        }
        Ok(self.signal_backend(pid, reason))
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

/// How another session or a CancelRequest reaches a wire session.
struct SignalTarget {
    secret: i32,
    cancel: Arc<CancelFlag>,
    terminated: Arc<tokio::sync::Notify>,
}

/// A wire session's place in the cancel registry and in pg_stat_activity.
/// Held by the session (`Session::attach_registration`), so that however the
/// session ends — Terminate, a dropped connection, a panic unwinding its
/// task — dropping it takes the session out of both.
pub struct SessionRegistration {
    server: Arc<Server>,
    pid: i32,
    secret: i32,
    activity: Arc<activity::SessionActivity>,
    /// Notified by pg_terminate_backend.
    terminated: Arc<tokio::sync::Notify>,
    /// The session's place under the connection limits (None for sessions
    /// that are not counted).
    slot: Option<connections::ConnectionSlot>,
}

impl SessionRegistration {
    /// The process id of BackendKeyData, pg_backend_pid() and the views' pid columns.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    pub fn secret(&self) -> i32 {
        self.secret
    }

    pub fn activity(&self) -> &activity::SessionActivity {
        &self.activity
    }

    /// Wakes (once) when pg_terminate_backend names this session.
    pub fn terminated(&self) -> Arc<tokio::sync::Notify> {
        self.terminated.clone()
    }

    /// Keeps the session's connection slot until the registration goes.
    pub fn hold(&mut self, slot: connections::ConnectionSlot) {
        self.slot = Some(slot);
    }
}

impl Drop for SessionRegistration {
    fn drop(&mut self) {
        self.server.unregister_session(self.pid);
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
