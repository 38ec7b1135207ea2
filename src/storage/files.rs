//! Where a shard's durable table data lives on disk: the segment files
//! (`<data>/segments/shard-NNN/<table oid>-<segment id>.seg`), opened as
//! `SegmentFile` handles, and the checkpoint manifest (`checkpoint.json`)
//! that says which segments are live and where each shard's WAL replay
//! starts. The manifest is replaced atomically (write, fsync, rename,
//! directory fsync); a segment file is deleted only after a manifest that no
//! longer lists it is durable.
//! Must not: decide what to flush or when (see `checkpoint`).

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::segment::reader::{parse_footer, parse_header, parse_trailer};
use super::segment::{Footer, SegmentError, TRAILER_BYTES};
use crate::catalog::TableId;

pub const MANIFEST: &str = "checkpoint.json";

pub fn segments_dir(data_dir: &Path, shard_dir: u32) -> PathBuf {
    data_dir
        .join("segments")
        .join(format!("shard-{shard_dir:03}"))
}

pub fn segment_file_name(table: TableId, id: u64) -> String {
    format!("{table}-{id:016x}.seg")
}

/// `(table, id)` from a segment file name.
pub fn parse_segment_file_name(name: &str) -> Option<(TableId, u64)> {
    let stem = name.strip_suffix(".seg")?;
    let (t, id) = stem.split_once('-')?;
    Some((t.parse().ok()?, u64::from_str_radix(id, 16).ok()?))
}

/// An open, validated segment: its descriptor and parsed footer.
#[derive(Debug)]
pub struct SegmentFile {
    pub table: TableId,
    pub id: u64,
    /// The shard directory holding it.
    pub dir: u32,
    pub path: PathBuf,
    pub file: Arc<File>,
    pub footer: Footer,
    pub bytes: u64,
    /// A process-wide unique key for the block cache.
    pub cache_key: u64,
}

static NEXT_CACHE_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl SegmentFile {
    /// Whether the segment holds table column `c` (one added by `ALTER
    /// TABLE … ADD COLUMN` after it was written reads NULL on its rows).
    pub fn has_column(&self, c: usize) -> bool {
        c < self.footer.columns.len()
    }

    /// Opens and validates a segment (header, trailer, footer checksum).
    pub fn open(path: &Path, dir: u32) -> Result<SegmentFile, SegmentError> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| SegmentError::new(&name, 0, format!("cannot read: {e}"));
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut head = [0u8; super::segment::HEADER_BYTES];
        file.read_exact_at(&mut head, 0)
            .map_err(|_| SegmentError::new(&name, 0, "shorter than a segment header"))?;
        let header = parse_header(&name, &head)?;
        let mut tail = [0u8; TRAILER_BYTES];
        file.read_exact_at(&mut tail, len.saturating_sub(TRAILER_BYTES as u64))
            .map_err(io)?;
        let (offset, flen, crc) = parse_trailer(&name, len, &tail)?;
        let mut footer = vec![0u8; flen as usize];
        file.read_exact_at(&mut footer, offset).map_err(io)?;
        let footer = parse_footer(&name, offset, &footer, crc)?;
        let cache_key = NEXT_CACHE_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(SegmentFile {
            table: header.table,
            id: header.segment,
            dir,
            path: path.to_path_buf(),
            file: Arc::new(file),
            footer,
            bytes: len,
            cache_key,
        })
    }

    /// A segment this process just wrote (its footer is already known).
    pub fn from_written(
        path: PathBuf,
        dir: u32,
        file: Arc<File>,
        footer: Footer,
        bytes: u64,
        table: TableId,
        id: u64,
    ) -> SegmentFile {
        let cache_key = NEXT_CACHE_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SegmentFile {
            table,
            id,
            dir,
            path,
            file,
            footer,
            bytes,
            cache_key,
        }
    }

    /// The manifest's name for it (relative to the data directory).
    pub fn manifest_path(&self) -> String {
        format!(
            "segments/shard-{:03}/{}",
            self.dir,
            segment_file_name(self.table, self.id)
        )
    }
}

/// One WAL directory's replay boundary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShardCheckpoint {
    /// Records at or above this LSN are replayed.
    pub lsn: u64,
    /// Transactions whose records below `lsn` had not been published when
    /// the memtables were frozen: their records are replayed too.
    pub pending: BTreeSet<u64>,
    /// The next segment id this directory hands out.
    pub next_segment: u64,
}

/// The checkpoint manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub checkpoint: u64,
    pub next_txn: u64,
    pub shards: HashMap<u32, ShardCheckpoint>,
    /// Live segment files, relative to the data directory.
    pub segments: Vec<String>,
}

impl Manifest {
    pub fn load(data_dir: &Path) -> Result<Manifest, String> {
        let path = data_dir.join(MANIFEST);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is damaged: {e}", path.display()))?;
        if v.get("format").and_then(|f| f.as_u64()) != Some(1) {
            return Err(format!("{}: unknown format", path.display()));
        }
        let num = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        let mut m = Manifest {
            checkpoint: num(&v, "checkpoint"),
            next_txn: num(&v, "next_txn"),
            ..Default::default()
        };
        for s in v
            .get("shards")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
        {
            let pending = s
                .get("pending")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_u64())
                .collect();
            m.shards.insert(
                num(s, "dir") as u32,
                ShardCheckpoint {
                    lsn: num(s, "lsn"),
                    pending,
                    next_segment: num(s, "next_segment"),
                },
            );
        }
        for s in v
            .get("segments")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(p) = s.as_str() {
                m.segments.push(p.to_string());
            }
        }
        Ok(m)
    }

    /// Writes the manifest atomically and durably.
    pub fn save(&self, data_dir: &Path) -> std::io::Result<()> {
        let mut dirs: Vec<_> = self.shards.iter().collect();
        dirs.sort_by_key(|(d, _)| **d);
        let shards: Vec<serde_json::Value> = dirs
            .into_iter()
            .map(|(d, s)| serde_json::json!({"dir": d, "lsn": s.lsn, "pending": s.pending, "next_segment": s.next_segment}))
            .collect();
        let doc = serde_json::json!({
            "format": 1,
            "checkpoint": self.checkpoint,
            "next_txn": self.next_txn,
            "shards": shards,
            "segments": self.segments,
        });
        let tmp = data_dir.join(format!("{MANIFEST}.tmp"));
        let mut f = File::create(&tmp)?;
        f.write_all(
            serde_json::to_string_pretty(&doc)
                .unwrap_or_default()
                .as_bytes(),
        )?;
        f.sync_all()?;
        drop(f);
        crate::failpoint::hit("checkpoint-before-manifest-rename");
        std::fs::rename(&tmp, data_dir.join(MANIFEST))?;
        crate::wal::sync_dir(data_dir)
    }
}
