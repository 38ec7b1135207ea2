//! The COPYs in progress, behind `pg_stat_progress_copy`: one entry per COPY
//! from its start to its end, with counters its path updates as data goes by.
//!
//! Use from any COPY path (table COPY in `sql/session.rs`, ingest formats):
//!
//! ```ignore
//! let progress = server.copy_progress.begin(
//!     session.pid(), datid, &session.database, table.oid,
//!     CopyCommand::From, CopyIoType::Pipe, 0, // bytes_total: 0 = unknown (STDIN)
//! );
//! // per CopyData chunk / per file chunk read:
//! progress.add_bytes(chunk.len() as u64);
//! // per batch of rows decoded (or per message, whatever the path counts):
//! progress.add_tuples(rows as u64);
//! // decoding on other threads: hand each worker a `progress.counter()`.
//! drop(progress); // the COPY ended (done, failed or the connection went): the row goes
//! ```
//!
//! Updates are relaxed atomic adds on counters shared through an `Arc`: no
//! lock per chunk. Only `begin` and the guard's drop take the registry's lock.
//! Keep the guard inside the COPY's own state (so every way the COPY ends —
//! CopyDone, CopyFail, an error, a dropped connection, a panic — drops it),
//! and drop it before the COPY's CommandComplete is sent, so that a client
//! that saw the COPY finish no longer sees it in the view.
//! Must not: decide anything about the COPY; it only counts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// pg_stat_progress_copy.command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyCommand {
    From,
    To,
}

impl CopyCommand {
    pub fn as_str(self) -> &'static str {
        match self {
            CopyCommand::From => "COPY FROM",
            CopyCommand::To => "COPY TO",
        }
    }
}

/// pg_stat_progress_copy.type: where the data comes from or goes to.
/// STDIN and STDOUT are `Pipe`; a server-side file is `File`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyIoType {
    File,
    Program,
    Pipe,
    Callback,
}

impl CopyIoType {
    pub fn as_str(self) -> &'static str {
        match self {
            CopyIoType::File => "FILE",
            CopyIoType::Program => "PROGRAM",
            CopyIoType::Pipe => "PIPE",
            CopyIoType::Callback => "CALLBACK",
        }
    }
}

/// One COPY's identity and counters.
#[derive(Debug)]
struct CopyEntry {
    pid: i32,
    datid: u32,
    datname: String,
    command: CopyCommand,
    io_type: CopyIoType,
    relid: AtomicU32,
    bytes_processed: AtomicU64,
    bytes_total: AtomicU64,
    tuples_processed: AtomicU64,
    tuples_excluded: AtomicU64,
}

/// A row of pg_stat_progress_copy, read at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyProgressRow {
    pub pid: i32,
    pub datid: u32,
    pub datname: String,
    pub relid: u32,
    pub command: CopyCommand,
    pub io_type: CopyIoType,
    pub bytes_processed: u64,
    pub bytes_total: u64,
    pub tuples_processed: u64,
    pub tuples_excluded: u64,
}

type Entries = Arc<Mutex<BTreeMap<u64, Arc<CopyEntry>>>>;

/// The registry (`Server::copy_progress`).
#[derive(Default)]
pub struct CopyProgress {
    /// Keyed by a sequence number, so rows come out in the order COPYs began.
    entries: Entries,
    next_id: AtomicU64,
}

impl CopyProgress {
    /// Registers a COPY; its row shows until the returned guard is dropped.
    /// `relid`: the target (FROM) or source (TO) table's OID, 0 when there is
    /// none yet (set it later with `set_relid`) or it is a query (COPY (…) TO).
    /// `bytes_total`: the input's size when known (a file), else 0.
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &self,
        pid: i32,
        datid: u32,
        datname: &str,
        relid: u32,
        command: CopyCommand,
        io_type: CopyIoType,
        bytes_total: u64,
    ) -> CopyProgressGuard {
        let entry = Arc::new(CopyEntry {
            pid,
            datid,
            datname: datname.to_string(),
            command,
            io_type,
            relid: AtomicU32::new(relid),
            bytes_processed: AtomicU64::new(0),
            bytes_total: AtomicU64::new(bytes_total),
            tuples_processed: AtomicU64::new(0),
            tuples_excluded: AtomicU64::new(0),
        });
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.entries).insert(id, entry.clone());
        CopyProgressGuard {
            id,
            entries: self.entries.clone(),
            counter: CopyProgressCounter(entry),
        }
    }

    /// The COPYs in progress now, in the order they began.
    pub fn snapshot(&self) -> Vec<CopyProgressRow> {
        lock(&self.entries)
            .values()
            .map(|e| CopyProgressRow {
                pid: e.pid,
                datid: e.datid,
                datname: e.datname.clone(),
                relid: e.relid.load(Ordering::Relaxed),
                command: e.command,
                io_type: e.io_type,
                bytes_processed: e.bytes_processed.load(Ordering::Relaxed),
                bytes_total: e.bytes_total.load(Ordering::Relaxed),
                tuples_processed: e.tuples_processed.load(Ordering::Relaxed),
                tuples_excluded: e.tuples_excluded.load(Ordering::Relaxed),
            })
            .collect()
    }
}

fn lock(entries: &Entries) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<CopyEntry>>> {
    entries.lock().unwrap_or_else(|p| p.into_inner())
}

/// A COPY's counters without its registration: `Clone + Send + Sync`, for
/// decoding workers on other threads. Updating it after the guard is gone
/// is harmless (the row is no longer shown).
#[derive(Debug, Clone)]
pub struct CopyProgressCounter(Arc<CopyEntry>);

impl CopyProgressCounter {
    /// Bytes of input read (COPY FROM) or output sent (COPY TO).
    pub fn add_bytes(&self, n: u64) {
        self.0.bytes_processed.fetch_add(n, Ordering::Relaxed);
    }

    /// Rows (or, for message formats, records) taken or sent.
    pub fn add_tuples(&self, n: u64) {
        self.0.tuples_processed.fetch_add(n, Ordering::Relaxed);
    }

    /// Rows skipped by a WHERE clause of COPY FROM.
    pub fn add_excluded(&self, n: u64) {
        self.0.tuples_excluded.fetch_add(n, Ordering::Relaxed);
    }

    /// The table, once known (0: none, or several).
    pub fn set_relid(&self, oid: u32) {
        self.0.relid.store(oid, Ordering::Relaxed);
    }

    /// The input's size, once known (0: unknown).
    pub fn set_bytes_total(&self, n: u64) {
        self.0.bytes_total.store(n, Ordering::Relaxed);
    }
}

/// A COPY's registration: the `CopyProgressCounter` methods update its row
/// (through `Deref`); dropping it removes the row.
#[derive(Debug)]
pub struct CopyProgressGuard {
    id: u64,
    entries: Entries,
    counter: CopyProgressCounter,
}

impl CopyProgressGuard {
    /// A handle on the counters for another thread (see `CopyProgressCounter`).
    pub fn counter(&self) -> CopyProgressCounter {
        self.counter.clone()
    }
}

impl std::ops::Deref for CopyProgressGuard {
    type Target = CopyProgressCounter;
    fn deref(&self) -> &CopyProgressCounter {
        &self.counter
    }
}

impl Drop for CopyProgressGuard {
    fn drop(&mut self) {
        lock(&self.entries).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_counters_and_go_with_the_guard() {
        let p = CopyProgress::default();
        let g = p.begin(1000, 5, "db", 0, CopyCommand::From, CopyIoType::Pipe, 0);
        g.add_bytes(10);
        let worker = g.counter();
        std::thread::spawn(move || worker.add_tuples(3)).join().unwrap();
        g.add_bytes(5);
        g.set_relid(42);
        let rows = p.snapshot();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].relid, rows[0].bytes_processed, rows[0].tuples_processed), (42, 15, 3));
        assert_eq!(rows[0].command.as_str(), "COPY FROM");
        assert_eq!(rows[0].io_type.as_str(), "PIPE");
        drop(g);
        assert!(p.snapshot().is_empty());
    }
}
