//! Recovery at start: read every shard's WAL segments, cut a torn tail (a
//! write that never completed), refuse to start on damage in the middle of
//! a log, and turn the committed records into operations to replay into
//! the shards' memtables.
//!
//! Commit protocol (what recovery relies on): a statement or transaction
//! writes its rows as `Rows` records on each shard it touches. If it touched
//! one shard, its last record carries `FLAG_SELF_COMMITTED` and is the commit. If
//! it touched several, the coordinator writes a `Commit` record for the txn
//! on its own shard after every `Rows` record is durable, and acknowledges
//! only after that. So a `Rows` record applies iff it is self-committed or
//! some record commits its txn (a `Commit` record, or a self-committed one).
//! The writer ends every group it writes and syncs with a `GroupEnd` record:
//! damage followed by a valid `GroupEnd` is damage to acknowledged data.
//!
//! Checkpoints (`storage::checkpoint`): the manifest records, per shard
//! directory, the LSN below which every published row is in a durable
//! segment file, and the transactions that were logged below it but not yet
//! published then. Replay skips `Rows`, `Truncate`, `DropBefore` and `DropRanges` records below that LSN
//! unless their transaction is one of those; WAL segments entirely below
//! the bound (and below every such transaction's first record) are deleted
//! after the manifest is durable.
//! Must not: start serving or write new records.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::codec::{decode_batch, Reader};
use super::record::{
    decode_segment_header, read_all, Damage, RecordType, FLAG_SELF_COMMITTED, SEGMENT_HEADER_BYTES,
};
use crate::catalog::{Catalog, TableId};
use crate::exec::vector::Batch;
use crate::storage::files::Manifest;
use crate::storage::recordings::{self, RecordingRef};

/// A record read back, owning its payload.
#[derive(Debug, Clone)]
pub struct LoggedRecord {
    pub record_type: RecordType,
    pub flags: u8,
    pub lsn: u64,
    pub payload: Vec<u8>,
}

/// Everything one shard directory holds.
#[derive(Debug, Default)]
pub struct ShardLog {
    pub shard: u32,
    pub last_segment: Option<u64>,
    pub next_lsn: u64,
    pub records: Vec<LoggedRecord>,
    pub bytes: u64,
    /// Each segment file's number and the largest LSN in it (None: no records).
    pub segments: Vec<(u64, Option<u64>)>,
}

/// One replay step for a shard's storage.
pub enum ReplayOp {
    Append { table: TableId, batch: Batch },
    Truncate { table: TableId },
    DropBefore { table: TableId, cutoff: i64 },
    DropRanges { table: TableId, time: usize, ranges: Vec<(i64, i64)> },
}

/// What recovery found, for the log and for the shards.
pub struct Recovered {
    pub logs: Vec<ShardLog>,
    /// Replay steps by shard directory number, in log order.
    pub ops: HashMap<u32, Vec<ReplayOp>>,
    pub next_txn: u64,
    pub rows: usize,
    /// Kept recordings (`storage::recordings`) that live records reference.
    pub kept_recordings: HashSet<String>,
}

/// Reads the WAL of every shard under `data_dir/wal`. Errors are messages for the operator.
pub fn read_logs(data_dir: &Path) -> Result<Vec<ShardLog>, String> {
    let mut logs = Vec::new();
    for (shard, dir) in shard_dirs(&data_dir.join("wal"))? {
        logs.push(read_shard(shard, &dir)?);
    }
    Ok(logs)
}

/// Every kept recording a `RecordingRows` record in the WAL names, committed
/// or not, read while the server runs (nothing is changed on disk, unlike
/// recovery's reading). A torn record at the end of a shard's last segment
/// is a write in progress and ends the scan there; damage anywhere else, or
/// a segment that cannot be read, is an error (the caller then keeps every
/// file).
pub fn logged_recordings(data_dir: &Path) -> Result<HashSet<String>, String> {
    let mut names = HashSet::new();
    for (_, shard_dir) in shard_dirs(&data_dir.join("wal"))? {
        let segments = segment_files(&shard_dir)?;
        let count = segments.len();
        for (i, (_, path)) in segments.iter().enumerate() {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read WAL segment {}: {e}", path.display()))?;
            if header_unwritten(&bytes) {
                continue;
            }
            decode_segment_header(&bytes).map_err(|e| format!("WAL segment {}: {e}", path.display()))?;
            let (records, _, damage) = read_all(&bytes[SEGMENT_HEADER_BYTES..]);
            let damaged_inside = match damage {
                None => false,
                Some(Damage::TornTail { .. }) => i + 1 != count,
                Some(Damage::Corrupt { .. }) => true,
            };
            if damaged_inside {
                return Err(format!("WAL segment {} is damaged", path.display()));
            }
            for r in records.iter().filter(|r| r.record_type == RecordType::RecordingRows) {
                let mut rd = Reader::new(r.payload);
                rd.u64().map_err(|e| e.to_string())?;
                names.insert(RecordingRef::decode(&mut rd).map_err(|e| e.to_string())?.file);
            }
        }
    }
    Ok(names)
}

/// The shard directories (`shard-<n>`) of a WAL folder, by shard number;
/// none when there is no WAL folder yet. A folder that cannot be listed is
/// an error, never skipped: its records may be acknowledged writes.
fn shard_dirs(wal_dir: &Path) -> Result<Vec<(u32, std::path::PathBuf)>, String> {
    let listing_error = |e: std::io::Error| format!("cannot read WAL directory {}: {e}", wal_dir.display());
    let entries = match std::fs::read_dir(wal_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(listing_error(e)),
    };
    let mut dirs: Vec<(u32, std::path::PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(listing_error)?;
        if let Some(n) = entry.file_name().to_string_lossy().strip_prefix("shard-").and_then(|n| n.parse().ok()) {
            dirs.push((n, entry.path()));
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// A shard directory's segment files (`<hex number>.wal`), in order.
fn segment_files(dir: &Path) -> Result<Vec<(u64, std::path::PathBuf)>, String> {
    let listing_error = |e: std::io::Error| format!("cannot read WAL directory {}: {e}", dir.display());
    let mut segments: Vec<(u64, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(listing_error)? {
        let entry = entry.map_err(listing_error)?;
        let name = entry.file_name().to_string_lossy().to_string();
        if let Some(n) = name.strip_suffix(".wal").and_then(|n| u64::from_str_radix(n, 16).ok()) {
            segments.push((n, entry.path()));
        }
    }
    segments.sort();
    Ok(segments)
}

/// Whether a segment file's header was never written: shorter than a
/// header, or (the file sized before its header reached the disk) zeros.
fn header_unwritten(bytes: &[u8]) -> bool {
    bytes.get(..SEGMENT_HEADER_BYTES).is_none_or(|h| h.iter().all(|&b| b == 0))
}

fn read_shard(shard: u32, dir: &Path) -> Result<ShardLog, String> {
    let segments = segment_files(dir)?;
    let mut log = ShardLog {
        shard,
        ..Default::default()
    };
    let count = segments.len();
    for (i, (number, path)) in segments.into_iter().enumerate() {
        let last = i + 1 == count;
        let bytes = std::fs::read(&path)
            .map_err(|e| format!("cannot read WAL segment {}: {e}", path.display()))?;
        log.bytes += bytes.len() as u64;
        log.last_segment = Some(number);
        if header_unwritten(&bytes) {
            // A crash while creating the segment: nothing in it was ever
            // acknowledged. It goes, so that the WAL can create a segment
            // of that number again.
            if last {
                eprintln!(
                    "brewricd: recovery: {} has no complete header; removing it",
                    path.display()
                );
                std::fs::remove_file(&path)
                    .map_err(|e| format!("cannot remove WAL segment {}: {e}", path.display()))?;
                continue;
            }
            return Err(format!(
                "WAL segment {} is truncated inside its header",
                path.display()
            ));
        }
        let header = decode_segment_header(&bytes)
            .map_err(|e| format!("WAL segment {}: {e}", path.display()))?;
        if header.segment != number {
            return Err(format!(
                "WAL segment {} says it is segment {}",
                path.display(),
                header.segment
            ));
        }
        let body = &bytes[SEGMENT_HEADER_BYTES..];
        let (records, end, damage) = read_all(body);
        log.segments
            .push((number, records.iter().map(|r| r.lsn).max()));
        for r in records {
            log.next_lsn = log.next_lsn.max(r.lsn + 1);
            log.records.push(LoggedRecord {
                record_type: r.record_type,
                flags: r.flags,
                lsn: r.lsn,
                payload: r.payload.to_vec(),
            });
        }
        match damage {
            None => {}
            Some(Damage::TornTail { offset, reason }) if last => {
                let at = SEGMENT_HEADER_BYTES + offset;
                eprintln!(
                    "brewricd: recovery: {}: torn record at byte {at} ({reason}); the unfinished write is cut off (it was never acknowledged)",
                    path.display()
                );
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
                f.set_len(at as u64)
                    .and_then(|_| f.sync_all())
                    .map_err(|e| format!("cannot truncate {}: {e}", path.display()))?;
                let _ = end;
            }
            Some(Damage::TornTail { offset, reason })
            | Some(Damage::Corrupt { offset, reason }) => {
                return Err(format!(
                    "WAL segment {} is damaged at byte {} ({reason}) and valid data follows it. Brewric will not start: skipping the damage would lose acknowledged writes. Restore the file from a backup, or move the shard's WAL directory away to start without its data.",
                    path.display(),
                    SEGMENT_HEADER_BYTES + offset
                ));
            }
        }
    }
    Ok(log)
}

/// Which records apply, decoded against the catalog's table types; rows of
/// tables that no longer exist are skipped. `shards` is the current shard count.
pub fn plan_replay(
    logs: Vec<ShardLog>,
    catalog: &Catalog,
    manifest: &Manifest,
    data_dir: &Path,
) -> Result<Recovered, String> {
    let types = catalog.table_types();
    let frames = catalog.table_frame_columns();
    let mut committed = HashSet::new();
    let mut next_txn = manifest.next_txn.max(1);
    for log in &logs {
        for r in &log.records {
            let txn = Reader::new(&r.payload)
                .u64()
                .map_err(|e| format!("shard {} LSN {}: {e}", log.shard, r.lsn))?;
            next_txn = next_txn.max(txn + 1);
            if r.record_type == RecordType::Commit || r.flags & FLAG_SELF_COMMITTED != 0 {
                committed.insert(txn);
            }
        }
    }
    let mut ops: HashMap<u32, Vec<ReplayOp>> = HashMap::new();
    let mut rows = 0;
    let mut kept_recordings = HashSet::new();
    for log in &logs {
        let out = ops.entry(log.shard).or_default();
        let checkpoint = manifest.shards.get(&log.shard).cloned().unwrap_or_default();
        for r in &log.records {
            let fail =
                |e: super::codec::CodecError| format!("shard {} LSN {}: {e}", log.shard, r.lsn);
            let mut rd = Reader::new(&r.payload);
            let txn = rd.u64().map_err(fail)?;
            // Below the checkpoint, only rows that were not yet published then are replayed.
            let flushed = r.lsn < checkpoint.lsn && !checkpoint.pending.contains(&txn);
            let applies = committed.contains(&txn) && !flushed;
            match r.record_type {
                RecordType::Commit | RecordType::GroupEnd => {}
                RecordType::Rows | RecordType::Truncate | RecordType::DropBefore | RecordType::DropRanges if !applies => {}
                RecordType::RecordingRows => {
                    let reference = RecordingRef::decode(&mut rd).map_err(fail)?;
                    if committed.contains(&txn) {
                        kept_recordings.insert(reference.file.clone());
                    }
                    if !applies {
                        continue;
                    }
                    let batches = recordings::expand(data_dir, &reference, &types, &frames)
                        .map_err(|e| format!("shard {} LSN {}: {e}", log.shard, r.lsn))?;
                    for (table, batch) in batches {
                        rows += batch.len;
                        out.push(ReplayOp::Append { table, batch });
                    }
                }
                RecordType::Rows => {
                    let table = rd.u32().map_err(fail)?;
                    let Some(t) = types.get(&table) else { continue };
                    let batch = decode_batch(&mut rd, t).map_err(fail)?;
                    rows += batch.len;
                    out.push(ReplayOp::Append { table, batch });
                }
                RecordType::DropBefore => {
                    let table = rd.u32().map_err(fail)?;
                    let cutoff = rd.u64().map_err(fail)? as i64;
                    out.push(ReplayOp::DropBefore { table, cutoff });
                }
                RecordType::Truncate => {
                    let table = rd.u32().map_err(fail)?;
                    out.push(ReplayOp::Truncate { table });
                }
                RecordType::DropRanges => {
                    let table = rd.u32().map_err(fail)?;
                    let time = rd.u32().map_err(fail)? as usize;
                    let n = rd.u32().map_err(fail)?;
                    let mut ranges = Vec::new();
                    for _ in 0..n {
                        let lo = rd.u64().map_err(fail)? as i64;
                        let hi = rd.u64().map_err(fail)? as i64;
                        ranges.push((lo, hi));
                    }
                    out.push(ReplayOp::DropRanges { table, time, ranges });
                }
            }
        }
    }
    Ok(Recovered {
        logs,
        ops,
        next_txn,
        rows,
        kept_recordings,
    })
}
