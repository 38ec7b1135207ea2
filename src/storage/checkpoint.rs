//! The checkpoint protocol: memtables become segment files and the WAL is
//! truncated behind them, without losing or duplicating a row at any crash
//! point. Run by `CHECKPOINT` and by the background flusher (memtable size
//! or age), one checkpoint at a time, across all shards together:
//!
//! 1. Freeze. With the commit gate held exclusively — so no multi-shard
//!    transaction is between its Commit record and the publication of its
//!    rows — every shard moves its memtables to a frozen list (still
//!    scanned) and notes its WAL's next LSN and its in-flight transactions
//!    (logged here, not yet published or aborted) with their first LSNs.
//! 2. Flush. Each shard sorts and encodes its frozen rows and writes the
//!    segment files through its io_uring ring, fsyncs them and their
//!    directory, and installs them in place of the frozen rows.
//! 3. Manifest. `checkpoint.json` is replaced atomically: per WAL
//!    directory the frozen LSN and the in-flight transactions, and every
//!    live segment. Recovery loads those segments and replays only records
//!    at or above the LSN, or of those transactions.
//! 4. Truncate. Each WAL deletes its segments whose records all lie below
//!    the frozen LSN and below its in-flight transactions' first records;
//!    segment files retired (TRUNCATE, DROP) are deleted. The freeze asked
//!    each WAL to start a new segment; one whose shard wrote nothing since
//!    does so now (`Wal::roll_now`), so its old segment goes too.
//! 5. Kept recordings. MCAP files kept in `recordings/` that no running
//!    ingest pins, no table's frames name and no WAL record left on disk
//!    names are deleted (`recordings::unpinned_unframed`, `remove_unlogged`).
//!
//! Why all shards at once: a multi-shard transaction's Commit record lives
//! in one shard's WAL while its rows live in others'; truncating one WAL
//! alone could drop a Commit record that another shard's replay still needs.
//! Must not: run two checkpoints at once (`serial`), or hold the commit gate
//! beyond the freeze.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::files::{Manifest, ShardCheckpoint};
use super::flush::{declared_series_key, encode_frozen, write_segments};
use crate::error::{DbError, DbResult};
use crate::server::Server;
use crate::wal::io_error;
use futures::StreamExt;

/// The server-wide state of checkpoints.
#[derive(Default)]
pub struct Checkpoints {
    /// Held shared by a multi-shard commit from its Commit record until its
    /// rows are published everywhere; exclusively by a checkpoint's freeze.
    pub gate: tokio::sync::RwLock<()>,
    serial: tokio::sync::Mutex<()>,
    pub data_dir: OnceLock<PathBuf>,
    state: Mutex<CheckpointState>,
    /// The memtable limit of writes (see [`wait_for_memtable_room`]).
    pub memtable_limit: MemtableLimit,
}

/// The most bytes all shards' memtables (frozen ones included) may hold
/// before writes wait for the flush: flushing runs at lower priority than
/// ingest (`storage::background`), so without a bound a machine ingesting
/// flat out would grow its memtables until memory ran out.
#[derive(Default)]
pub struct MemtableLimit {
    /// Bytes; 0: no limit (set once at start).
    bytes: std::sync::atomic::AtomicUsize,
    /// Wakes the background flusher at once when a write waits.
    flush_wanted: tokio::sync::Notify,
    /// Writes that had to wait, for the log and tests.
    stalls: std::sync::atomic::AtomicU64,
    last_logged: Mutex<Option<Instant>>,
}

impl MemtableLimit {
    pub fn set(&self, bytes: usize) {
        self.bytes.store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn bytes(&self) -> usize {
        self.bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many writes waited for the flush since the server started.
    pub fn stalls(&self) -> u64 {
        self.stalls.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// How long a write waits for the flush to bring memtables under their
/// limit before it fails: a flush that cannot write (a full disk) must not
/// hang writers forever.
const MEMTABLE_WAIT: Duration = Duration::from_secs(120);

/// Returns once all shards' memtables hold at most the limit's bytes,
/// waking the flusher and waiting for it when they hold more (a write calls
/// this before it adds rows). A server without a data directory has nothing
/// to flush to and no limit.
pub async fn wait_for_memtable_room(server: &Server) -> DbResult<()> {
    let limit = &server.checkpoints.memtable_limit;
    let bytes = limit.bytes();
    if bytes == 0 || server.checkpoints.data_dir.get().is_none() {
        return Ok(());
    }
    let held = || {
        server
            .shards
            .iter()
            .map(|s| s.memtable_bytes.load(std::sync::atomic::Ordering::Relaxed))
            .sum::<usize>()
    };
    if held() <= bytes {
        return Ok(());
    }
    limit.stalls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    {
        let mut last = limit.last_logged.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
            *last = Some(Instant::now());
            eprintln!(
                "brewricd: memtables hold {} MiB, above the {} MiB limit (--memtable-limit-mb): writes wait for the flush",
                held() >> 20,
                bytes >> 20
            );
        }
    }
    let start = Instant::now();
    while held() > bytes {
        limit.flush_wanted.notify_one();
        if start.elapsed() > MEMTABLE_WAIT {
            return Err(DbError::new(
                crate::error::sqlstate::OUT_OF_MEMORY,
                format!(
                    "memtables hold {} MiB, above the {} MiB limit, and the flush has not made room for {} s",
                    held() >> 20,
                    bytes >> 20,
                    MEMTABLE_WAIT.as_secs()
                ),
            )
            .with_hint("Check the server log for failing checkpoints (a full disk?), or raise --memtable-limit-mb."));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

#[derive(Default)]
struct CheckpointState {
    number: u64,
    /// WAL directories of shards beyond the current shard count (the server
    /// was restarted with fewer shards): replayed at start, then flushed by
    /// the first checkpoint, with their next LSN.
    orphans: HashMap<u32, u64>,
    next_segment: HashMap<u32, u64>,
    /// The manifest last written (compaction and retention rewrite it with a
    /// new segment list; its WAL bounds stay true for them).
    last: Option<Manifest>,
}

/// What one checkpoint did.
#[derive(Debug, Default, Clone)]
pub struct CheckpointStats {
    pub rows: u64,
    pub segments: usize,
    pub bytes: u64,
    pub wal_segments_removed: usize,
    /// Kept recording files deleted (nothing needed them any more).
    pub recordings_removed: usize,
}

impl Checkpoints {
    /// Called once at start with what recovery found.
    pub fn init(&self, data_dir: PathBuf, manifest: &Manifest, orphans: HashMap<u32, u64>) {
        let _ = self.data_dir.set(data_dir);
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.number = manifest.checkpoint;
        st.orphans = orphans;
        st.last =
            (!manifest.segments.is_empty() || manifest.checkpoint > 0).then(|| manifest.clone());
        st.next_segment = manifest
            .shards
            .iter()
            .map(|(d, s)| (*d, s.next_segment))
            .collect();
    }
}

/// Per shard: what the freeze noted.
struct Frozen {
    lsn: u64,
    in_flight: HashMap<u64, u64>,
}

/// Runs one checkpoint (see the module doc). Without a data directory
/// (in-memory servers in tests) it does nothing.
pub async fn checkpoint(server: &Server) -> DbResult<CheckpointStats> {
    let cps = &server.checkpoints;
    let Some(data_dir) = cps.data_dir.get().cloned() else {
        return Ok(CheckpointStats::default());
    };
    let _serial = cps.serial.lock().await;
    crate::failpoint::pause("checkpoint-before-freeze").await;

    // 1. Freeze every shard under the exclusive commit gate.
    let mut frozen = Vec::with_capacity(server.shards.len());
    {
        let _gate = cps.gate.write().await;
        for shard in &server.shards {
            frozen.push(
                shard
                    .run(|ctx| {
                        let lsn = ctx.wal.borrow().as_ref().map_or(0, |w| {
                            w.roll_segment();
                            w.next_lsn()
                        });
                        let tables = ctx.storage.borrow_mut().freeze();
                        (
                            Frozen {
                                lsn,
                                in_flight: ctx.in_flight.borrow().clone(),
                            },
                            tables,
                        )
                    })
                    .await?,
            );
        }
    }

    crate::failpoint::pause("checkpoint-after-freeze").await;

    // The catalog after the freeze: every table with frozen rows is in it
    // unless it was dropped since. (One read before the freeze missed tables
    // created meanwhile, and the flush then dropped their frozen rows as a
    // dropped table's, while the WAL holding them was truncated.)
    let catalog = server.catalog.snapshot();

    // 2. Flush on every shard at once.
    let mut flushes = Vec::new();
    let shards = server.shards.len().max(1);
    for (shard, (_, tables)) in server.shards.iter().zip(frozen.iter_mut()) {
        let tables = std::mem::take(tables);
        let catalog = catalog.clone();
        let data_dir = data_dir.clone();
        flushes.push(shard.run_local(move |ctx| async move {
            let mut stats = CheckpointStats::default();
            let mut failure = None;
            let (dir, cache_budget, ids) = {
                let s = ctx.storage.borrow();
                (s.dir, s.cache.limit() / 2, Arc::new(AtomicU64::new(s.next_segment)))
            };
            // Sorting and encoding is CPU work: off the shard thread, so
            // queries and writes on this shard go on meanwhile, and at lower
            // priority, as the rows are durable and queryable already.
            // Several tables are encoded at once (`at_once` below), and each
            // is written (through this shard's ring) while the next ones
            // encode: a shard flushing many tables (an MCAP fleet's topics)
            // uses more than one core.
            let encodings = tables.iter().map(|t| {
                let encode = catalog.table_by_oid(t.table).cloned().map(|def| {
                    let (job, ids) = (t.clone(), ids.clone());
                    let declared = declared_series_key(&def, &catalog.indexes_on(&def));
                    move || encode_frozen(&def, declared, &job, dir, &ids, cache_budget)
                });
                async move {
                    match encode {
                        Some(encode) => Some(super::background::run(encode).await),
                        None => None,
                    }
                }
            });
            // Shards share the pool: beyond their share of its threads,
            // encodings queued by one shard would only hold more encoded
            // segments in memory. Two at least, so that one encodes while
            // the one before it is written.
            let at_once = (super::background::threads() / shards).max(2);
            let mut encoded = futures::stream::iter(encodings).buffered(at_once);
            for t in &tables {
                // After a failure nothing more is written: the remaining
                // tables go back to the memtables below.
                let encoding = match failure {
                    Some(_) => None,
                    None => match encoded.next().await {
                        Some(encoding) => encoding,
                        // One encoding per table: never, but a table must
                        // not be taken for a dropped one (its rows discarded).
                        None => {
                            let e = std::io::Error::other("the flush lost a table's encoding");
                            failure = Some(io_error("write a segment file", &e));
                            None
                        }
                    },
                };
                let written = match encoding {
                    // The table was dropped (or this or an earlier one failed).
                    None => None,
                    Some(Ok(segments)) => {
                        stats.rows += t.rows.row_count() as u64;
                        match write_segments(ctx.storage_io(), &data_dir, dir, t.table, segments).await {
                            Ok(segs) => Some(segs),
                            Err(e) => {
                                failure = Some(io_error("write a segment file", &e));
                                None
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let e = std::io::Error::other(format!("segment encoding failed: {e}"));
                        failure = Some(io_error("write a segment file", &e));
                        None
                    }
                };
                let mut storage = ctx.storage.borrow_mut();
                match written {
                    Some(segs) => {
                        stats.segments += segs.len();
                        stats.bytes += segs.iter().map(|(s, _)| s.bytes).sum::<u64>();
                        let segs = segs
                            .into_iter()
                            .map(|(seg, cached)| {
                                storage.warm_cache(&seg, cached);
                                seg
                            })
                            .collect();
                        storage.install(t, segs);
                    }
                    None if failure.is_some() => storage.refreeze_failed(t),
                    // The table was dropped: its frozen rows go with it.
                    None => {
                        storage.install(t, Vec::new());
                    }
                }
            }
            drop(encoded);
            ctx.storage.borrow_mut().next_segment = ids.load(Ordering::Relaxed);
            match failure {
                Some(e) => Err(e),
                None => Ok(stats),
            }
        }));
    }
    let mut stats = CheckpointStats::default();
    let mut failure = None;
    for f in flushes {
        match f.await.and_then(|r| r) {
            Ok(s) => {
                stats.rows += s.rows;
                stats.segments += s.segments;
                stats.bytes += s.bytes;
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    if let Some(e) = failure {
        // Nothing is truncated: the WAL still holds every row; the frozen rows
        // went back to the memtables and the next checkpoint writes them again.
        return Err(e);
    }

    // 3. The manifest.
    let mut manifest = Manifest {
        next_txn: server.peek_next_txn(),
        ..Default::default()
    };
    let mut bounds = Vec::with_capacity(server.shards.len());
    // Segments retired before the live lists were taken: absent from this
    // manifest, so deleted once it is durable (later ones wait for the next).
    let mut retired = Vec::new();
    for (shard, (f, _)) in server.shards.iter().zip(&frozen) {
        let (segments, next_segment, retired_paths) = shard_segments(shard).await?;
        manifest.segments.extend(segments);
        retired.extend(retired_paths);
        let pending: BTreeSet<u64> = f.in_flight.keys().copied().collect();
        manifest.shards.insert(
            shard.id as u32,
            ShardCheckpoint {
                lsn: f.lsn,
                pending,
                next_segment,
            },
        );
        bounds.push(f.in_flight.values().copied().fold(f.lsn, u64::min));
    }
    let orphans = {
        let mut st = cps.state.lock().unwrap_or_else(|p| p.into_inner());
        st.number += 1;
        manifest.checkpoint = st.number;
        // Segment ids of directories no shard writes to any more stay reserved.
        for (d, n) in &st.next_segment {
            manifest
                .shards
                .entry(*d)
                .or_insert_with(|| ShardCheckpoint {
                    next_segment: *n,
                    ..Default::default()
                });
        }
        for (d, lsn) in &st.orphans {
            let e = manifest.shards.entry(*d).or_default();
            e.lsn = *lsn;
        }
        st.orphans.clone()
    };
    publish_manifest(server, &data_dir, manifest, retired).await?;

    // 4. Truncate the WALs and delete retired segment files.
    for (shard, bound) in server.shards.iter().zip(bounds) {
        let removed = shard
            .run_local(move |ctx| async move {
                let Some(wal) = ctx.wal.borrow().clone() else { return Ok(0) };
                // A shard that wrote nothing since the freeze rolls now. If
                // that write fails the WAL refuses writes anyway, and its
                // segment simply stays.
                if let Some(rolled) = wal.roll_now() {
                    let _ = rolled.await;
                }
                wal.remove_segments_below(bound)
            })
            .await?
            .map_err(|e| io_error("remove WAL segments", &e))?;
        stats.wal_segments_removed += removed;
    }
    for dir in orphans.keys() {
        let _ = std::fs::remove_dir_all(crate::wal::shard_dir(&data_dir, *dir));
    }
    cps.state
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .orphans
        .clear();
    // 5. Kept recordings nothing names any more (their tables dropped, their
    // rows in segments now) go, as at start; the WAL is read off the shards.
    let candidates = super::recordings::unpinned_unframed(&data_dir, &server.kept_pins, || {
        server.catalog.snapshot().frame_files()
    });
    if !candidates.is_empty() {
        let dir = data_dir.clone();
        let removed = tokio::task::spawn_blocking(move || {
            super::recordings::remove_unlogged(&dir, &candidates, || crate::wal::recovery::logged_recordings(&dir))
        })
        .await
        .unwrap_or_default();
        stats.recordings_removed = removed.len();
        if !removed.is_empty() {
            let removed = std::sync::Arc::new(removed);
            for shard in &server.shards {
                let removed = removed.clone();
                shard.run(move |ctx| ctx.frames.forget(&removed)).await?;
            }
        }
    }
    Ok(stats)
}

/// Rewrites the last checkpoint's manifest with the shards' current live
/// segments (after a compaction or a retention drop changed them; the WAL
/// bounds it records stay true, as those change no row's presence in the
/// WAL's terms), then deletes the segment files that were retired before it.
/// Call with `serial` held. Without an earlier checkpoint there is nothing
/// on disk to rewrite.
pub(crate) async fn rewrite_manifest(server: &Server) -> DbResult<()> {
    let cps = &server.checkpoints;
    let Some(data_dir) = cps.data_dir.get().cloned() else {
        return Ok(());
    };
    let Some(mut manifest) = cps
        .state
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .last
        .clone()
    else {
        return Ok(());
    };
    manifest.segments.clear();
    let mut retired = Vec::new();
    for shard in &server.shards {
        let (segments, next_segment, retired_paths) = shard_segments(shard).await?;
        manifest.segments.extend(segments);
        retired.extend(retired_paths);
        manifest
            .shards
            .entry(shard.id as u32)
            .or_default()
            .next_segment = next_segment;
    }
    manifest.checkpoint = {
        let mut st = cps.state.lock().unwrap_or_else(|p| p.into_inner());
        st.number += 1;
        st.number
    };
    publish_manifest(server, &data_dir, manifest, retired).await
}

/// A shard's live segment files (manifest names), its next segment id, and
/// the paths of segments retired so far — taken together, so every retired
/// one is absent from the list.
async fn shard_segments(shard: &crate::runtime::ShardHandle) -> DbResult<(Vec<String>, u64, Vec<PathBuf>)> {
    shard
        .run(|ctx| {
            let mut s = ctx.storage.borrow_mut();
            let retired = s.take_retired().iter().map(|r| r.path.clone()).collect();
            let live = s.live_segments().iter().map(|s| s.manifest_path()).collect();
            (live, s.next_segment, retired)
        })
        .await
}

/// Saves `manifest` durably (off the shard thread), makes it the last one,
/// then deletes the segment files `retired` (none of which it lists).
async fn publish_manifest(server: &Server, data_dir: &std::path::Path, mut manifest: Manifest, retired: Vec<PathBuf>) -> DbResult<()> {
    manifest.segments.sort();
    let (dir, m) = (data_dir.to_path_buf(), manifest.clone());
    tokio::task::spawn_blocking(move || m.save(&dir))
        .await
        .map_err(|e| DbError::internal(e.to_string()))?
        .map_err(|e| io_error("write the checkpoint manifest", &e))?;
    crate::failpoint::hit("checkpoint-after-manifest");
    server.checkpoints.state.lock().unwrap_or_else(|p| p.into_inner()).last = Some(manifest);
    for path in retired {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// For a write that swaps out time partitions (`ShardStorage::drop_ranges`):
/// once the memtables have room, the checkpoint lock, so that no flush holds
/// rows of those partitions frozen until the write is settled.
pub(crate) async fn hold_off_flushes(server: &Server) -> DbResult<tokio::sync::MutexGuard<'_, ()>> {
    wait_for_memtable_room(server).await?;
    Ok(serial(server).await)
}

/// The lock that serialises checkpoints, compactions and retention drops.
pub(crate) async fn serial(server: &Server) -> tokio::sync::MutexGuard<'_, ()> {
    server.checkpoints.serial.lock().await
}

/// Memtables that held at least this many bytes (all shards together) and
/// took no rows for a poll interval are flushed then.
const IDLE_FLUSH_MIN_BYTES: usize = 16 << 20;

/// Flush thresholds of the background flusher.
#[derive(Debug, Clone, Copy)]
pub struct FlushPolicy {
    /// A shard whose memtables hold more than this many bytes triggers a checkpoint.
    pub memtable_bytes: usize,
    /// Rows older than this in a memtable trigger a checkpoint.
    pub max_age: Duration,
}

/// The background flusher: checks every shard's memtables twice a second
/// and runs a checkpoint when one is too big or too old, when rows stopped
/// arriving at memtables holding at least `IDLE_FLUSH_MIN_BYTES`, or at once
/// when a write waits on the memtable limit. Runs until the
/// server stops (spawn it on a shard's LocalSet).
pub async fn run_flusher(server: std::sync::Arc<Server>, policy: FlushPolicy) {
    // Each shard's memtable bytes at the last look: unchanged across a look
    // means no rows arrived for the poll interval.
    let mut idle: Vec<usize> = vec![usize::MAX; server.shards.len()];
    loop {
        let limit = &server.checkpoints.memtable_limit;
        let waited = tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(500)) => false,
            _ = limit.flush_wanted.notified() => true,
        };
        // A write waiting on the memtable limit wants a checkpoint now.
        let mut due = waited;
        let mut all_idle = true;
        let mut idle_bytes = 0;
        for (i, shard) in server.shards.iter().enumerate() {
            if let Ok((bytes, oldest)) = shard
                .run(|ctx| ctx.storage.borrow().memtable_pressure())
                .await
            {
                if bytes > policy.memtable_bytes
                    || oldest.is_some_and(|t| Instant::now().duration_since(t) > policy.max_age)
                {
                    due = true;
                }
                all_idle &= idle.get(i) == Some(&bytes);
                idle_bytes += bytes;
                if let Some(last) = idle.get_mut(i) {
                    *last = bytes;
                }
            }
        }
        // Rows that stopped arriving (a bulk load finished) are flushed
        // without waiting for their age: a series' rows are contiguous in a
        // segment but a few per block across a memtable, so selective
        // queries read segments several times faster.
        if all_idle && idle_bytes >= IDLE_FLUSH_MIN_BYTES {
            due = true;
        }
        if due {
            if let Err(e) = checkpoint(&server).await {
                eprintln!(
                    "brewricd: background checkpoint failed: {} (will retry)",
                    e.message
                );
                tokio::time::sleep(Duration::from_secs(5)).await;
                continue;
            }
            // A checkpoint adds a segment per table and partition: merge when enough piled up.
            if super::compaction::due(&server).await {
                if let Err(e) = super::compaction::compact(&server).await {
                    eprintln!(
                        "brewricd: background compaction failed: {} (will retry)",
                        e.message
                    );
                }
            }
        }
    }
}
