//! The registry of connected wire sessions behind `pg_stat_activity`: one
//! entry per session from the end of its startup to its end, holding what
//! the view shows (database, user, client address, and the current state,
//! query and its start times). The wire layer reports each statement's start
//! and each ReadyForQuery (`Session::report_active` / `report_ready`); a
//! query of the view copies the entries out (`Activities::snapshot`).
//! Must not: hold anything a statement needs to run (the registry only
//! describes sessions), or be updated per row: updates are per statement.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What a session is doing, as pg_stat_activity's `state` column names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendState {
    Active,
    Idle,
    IdleInTransaction,
    IdleInTransactionAborted,
}

impl BackendState {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendState::Active => "active",
            BackendState::Idle => "idle",
            BackendState::IdleInTransaction => "idle in transaction",
            BackendState::IdleInTransactionAborted => "idle in transaction (aborted)",
        }
    }
}

/// The parts of an entry that change per statement (under the entry's own lock).
#[derive(Debug, Clone)]
pub struct ActivityState {
    pub state: BackendState,
    /// The current statement's text, or the last one's while idle ("" before the first).
    pub query: String,
    pub application_name: String,
    /// Times in ns since the Unix epoch (microsecond precision, as PostgreSQL's).
    pub query_start_ns: Option<i64>,
    /// The start of the open transaction (a block's BEGIN, or the running
    /// statement outside a block); None while idle outside a transaction.
    pub xact_start_ns: Option<i64>,
    pub state_change_ns: i64,
}

/// One connected session's entry.
#[derive(Debug)]
pub struct SessionActivity {
    pub pid: i32,
    pub datid: u32,
    pub datname: String,
    pub usename: String,
    /// The peer's IP address and port; None when unknown.
    pub client_addr: Option<String>,
    pub client_port: Option<i32>,
    pub backend_start_ns: i64,
    state: Mutex<ActivityState>,
}

/// PostgreSQL's default track_activity_query_size: the text shown is at most
/// this many bytes less one (its terminating NUL).
const TRACK_ACTIVITY_QUERY_SIZE: usize = 1024;

impl SessionActivity {
    /// A copy of the changing part (the lock is held only to clone it).
    pub fn state(&self) -> ActivityState {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A statement starts: `active` with its text. The transaction starts
    /// with it unless one is already open.
    pub fn report_active(&self, query: &str, application_name: &str) {
        // PostgreSQL keeps track_activity_query_size (1024) bytes of the text:
        // a bulk INSERT's megabytes are not copied per statement.
        let mut end = query.len().min(TRACK_ACTIVITY_QUERY_SIZE - 1);
        while !query.is_char_boundary(end) {
            end -= 1;
        }
        let query = &query[..end];
        let now = now_ns();
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.state = BackendState::Active;
        if s.query != query {
            s.query = query.to_string();
        }
        if s.application_name != application_name {
            s.application_name = application_name.to_string();
        }
        s.query_start_ns = Some(now);
        s.xact_start_ns.get_or_insert(now);
        s.state_change_ns = now;
    }

    /// The session waits for the client (ReadyForQuery): `state` follows its
    /// transaction; the last query's text and start stay, as in PostgreSQL.
    pub fn report_idle(&self, state: BackendState, application_name: &str) {
        let now = now_ns();
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.state = state;
        if s.application_name != application_name {
            s.application_name = application_name.to_string();
        }
        if state == BackendState::Idle {
            s.xact_start_ns = None;
        }
        s.state_change_ns = now;
    }
}

/// What a session is registered with (see `Server::register_session`).
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    pub datid: u32,
    pub datname: String,
    pub usename: String,
    pub application_name: String,
    pub client_addr: Option<std::net::SocketAddr>,
    /// When the connection was accepted, ns since the Unix epoch.
    pub backend_start_ns: i64,
}

/// pid → entry of every registered session.
#[derive(Default)]
pub struct Activities {
    sessions: Mutex<BTreeMap<i32, Arc<SessionActivity>>>,
}

impl Activities {
    pub(super) fn insert(&self, pid: i32, info: SessionInfo) -> Arc<SessionActivity> {
        let entry = Arc::new(SessionActivity {
            pid,
            datid: info.datid,
            datname: info.datname,
            usename: info.usename,
            client_addr: info.client_addr.map(|a| a.ip().to_string()),
            client_port: info.client_addr.map(|a| a.port() as i32),
            backend_start_ns: info.backend_start_ns,
            state: Mutex::new(ActivityState {
                state: BackendState::Idle,
                query: String::new(),
                application_name: info.application_name,
                query_start_ns: None,
                xact_start_ns: None,
                state_change_ns: now_ns(),
            }),
        });
        self.lock().insert(pid, entry.clone());
        entry
    }

    pub(super) fn remove(&self, pid: i32) {
        self.lock().remove(&pid);
    }

    /// The session with that pid, if connected.
    pub fn get(&self, pid: i32) -> Option<Arc<SessionActivity>> {
        self.lock().get(&pid).cloned()
    }

    /// Every registered session, in pid order (the entries are shared; read
    /// their state with `SessionActivity::state`).
    pub fn snapshot(&self) -> Vec<Arc<SessionActivity>> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<i32, Arc<SessionActivity>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Now, ns since the Unix epoch, at microsecond precision (PostgreSQL's).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64 * 1000)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_start_follows_statements_and_blocks() {
        let a = Activities::default();
        let e = a.insert(7, SessionInfo::default());
        assert_eq!(e.state().state, BackendState::Idle);
        e.report_active("BEGIN", "app");
        let begun = e.state().xact_start_ns;
        assert!(begun.is_some());
        e.report_idle(BackendState::IdleInTransaction, "app");
        e.report_active("SELECT 1", "app");
        let s = e.state();
        assert_eq!(s.xact_start_ns, begun, "a block's transaction starts at BEGIN");
        assert_eq!(s.query, "SELECT 1");
        e.report_idle(BackendState::Idle, "app");
        let s = e.state();
        assert_eq!((s.state, s.xact_start_ns, s.query.as_str()), (BackendState::Idle, None, "SELECT 1"));
        assert_eq!(a.snapshot().len(), 1);
        a.remove(7);
        assert!(a.snapshot().is_empty());
    }

    #[test]
    fn query_text_is_cut_at_track_activity_query_size_on_a_char_boundary() {
        let a = Activities::default();
        let e = a.insert(8, SessionInfo::default());
        let long = format!("INSERT INTO t VALUES {}", "('é'),".repeat(500));
        e.report_active(&long, "");
        let shown = e.state().query;
        assert!(shown.len() <= 1023 && shown.len() >= 1020, "{}", shown.len());
        assert!(long.starts_with(&shown));
    }
}
