//! The MCAP recordings Brewric keeps in its data directory
//! (`recordings/`), and the WAL's references into them.
//!
//! A recording copied from a server file is not logged row by row: the file
//! is kept (a hard link, or a copy where linking is refused) and fsynced,
//! and each shard that took rows logs one `RecordingRows` record naming the
//! kept file, the chunks it decoded and the table each decoded layout table
//! fills. Recovery decodes those chunks again with the same decoder
//! (`ingest::mcap`) and gets the same rows ([`expand`]). The decoded rows
//! of a recording are ~3.5× its compressed bytes; logging them was most of
//! an ingest's cost.
//!
//! A kept file is needed until the rows its references stand for are in
//! segment files, and for as long as a table's camera frames are references
//! into it (`frames.rs`; the table's `frame_files` in the catalog); at
//! start, files neither a live WAL record nor a table names are deleted
//! ([`remove_unreferenced`]), and after each checkpoint those that no
//! running ingest pins either ([`KeptPins`], [`unpinned_unframed`],
//! [`remove_unlogged`]).
//!
//! Must not: decide which chunks go to which shard or write WAL records
//! (the session does), or trust a reference read back from disk: a kept
//! file whose size changed, a chunk that is gone or fails its CRC, a column
//! whose type no longer matches, is an error naming the file.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::catalog::TableId;
use crate::exec::vector::{Batch, Bitmap, Column};
use crate::ingest::mcap::{Channels, ChunkBuffer, DecodeOptions, Decoder, IndexedFile, ReaderOptions};
use crate::types::{DataType, Datum};
use crate::wal::codec::{CodecError, Reader};

/// The data directory's folder of kept recordings.
pub const DIR: &str = "recordings";

/// Where kept file `name` lives.
pub fn kept_path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(DIR).join(name)
}

/// A fresh name for a file kept in `recordings/`.
pub fn new_kept_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{stamp:016x}-{:04x}.mcap", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Keeps `source` in the data directory as `name` (see `new_kept_name`): a
/// hard link when the file system allows one, else a copy; the file and the
/// folder are fsynced, so a reference to it may be logged. On failure
/// nothing is left under `name`.
///
/// A hard link shares the user's file: deleting or replacing theirs is fine,
/// rewriting it in place would change Brewric's copy too (recovery then
/// refuses it: its size or its chunks' CRCs no longer match).
pub fn keep_file(data_dir: &Path, source: &Path, name: &str) -> io::Result<()> {
    let dir = data_dir.join(DIR);
    std::fs::create_dir_all(&dir)?;
    let dest = dir.join(name);
    let kept = std::fs::hard_link(source, &dest)
        .or_else(|_| std::fs::copy(source, &dest).map(|_| ()))
        .and_then(|_| std::fs::File::open(&dest))
        .and_then(|f| f.sync_all())
        .and_then(|_| crate::wal::sync_dir(&dir));
    if kept.is_err() {
        let _ = std::fs::remove_file(&dest);
    }
    kept
}

/// Whether `name` is a plain file name (what a kept file is called): not
/// empty, no separator, not hidden — never a path out of `recordings/`.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['/', '\\']) && !name.starts_with('.')
}

/// Removes a kept file whose recording did not commit.
pub fn forget_file(data_dir: &Path, name: &str) {
    let _ = std::fs::remove_file(kept_path(data_dir, name));
}

/// The names of kept files whose ingest is still running: kept (or about to
/// be) but not yet named by a durable WAL record or the catalog. A
/// checkpoint leaves them alone ([`unpinned_unframed`]).
#[derive(Default)]
pub struct KeptPins(Arc<Mutex<HashSet<String>>>);

/// One running ingest's hold on its kept file's name; released on drop.
pub struct KeptPin {
    pins: Arc<Mutex<HashSet<String>>>,
    name: String,
}

impl KeptPins {
    /// Pins `name` until the returned guard is dropped.
    pub fn pin(&self, name: &str) -> KeptPin {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string());
        KeptPin { pins: self.0.clone(), name: name.to_string() }
    }

    fn names(&self) -> HashSet<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for KeptPin {
    fn drop(&mut self) {
        self.pins.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.name);
    }
}

/// The kept files in `recordings/`, by name.
fn kept_names(data_dir: &Path) -> HashSet<String> {
    let Ok(entries) = std::fs::read_dir(data_dir.join(DIR)) else { return HashSet::new() };
    entries.flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect()
}

/// While the server runs, after a checkpoint truncated the WAL, step 1 of 2:
/// the kept files that no running ingest pins and no table's frames name
/// (`frame_files`, read after the pins). Step 2, [`remove_unlogged`], drops
/// those no WAL record still on disk names.
///
/// Why this order is safe: an ingest pins its name before the file exists
/// and unpins only after the catalog names it for its frames and its
/// references are durable in the WAL. A file listed here either was pinned
/// when the pins are read, or its ingest had finished by then, so the
/// catalog and the WAL read afterwards show it; a file kept after the
/// listing is not a candidate at all.
pub fn unpinned_unframed(data_dir: &Path, pins: &KeptPins, frame_files: impl FnOnce() -> HashSet<String>) -> Vec<String> {
    let present = kept_names(data_dir);
    if present.is_empty() {
        return Vec::new();
    }
    let pinned = pins.names();
    let framed = frame_files();
    present.into_iter().filter(|n| !pinned.contains(n) && !framed.contains(n)).collect()
}

/// Step 2 of removing unneeded kept files: deletes the `candidates` (from
/// [`unpinned_unframed`]) that no WAL record names (`logged`, read now; an
/// `Err` keeps every file). Returns the names deleted (shards' frame readers
/// may hold them open: `FrameReader::forget`).
pub fn remove_unlogged(
    data_dir: &Path,
    candidates: &[String],
    logged: impl FnOnce() -> Result<HashSet<String>, String>,
) -> Vec<String> {
    if candidates.is_empty() {
        return Vec::new();
    }
    let Ok(logged) = logged() else { return Vec::new() };
    candidates
        .iter()
        .filter(|n| !logged.contains(*n))
        .filter(|n| std::fs::remove_file(kept_path(data_dir, n)).is_ok())
        .cloned()
        .collect()
}

/// Deletes the kept files not in `referenced` (those live WAL records or
/// tables' frame references name): their rows are in segment files, or their
/// ingest never committed. Run at start, before any ingest.
pub fn remove_unreferenced(data_dir: &Path, referenced: &HashSet<String>) {
    for name in kept_names(data_dir).difference(referenced) {
        let _ = std::fs::remove_file(kept_path(data_dir, name));
    }
}

/// Which table one decoded layout table fills: for each of the table's
/// columns, the layout column that holds its values (None: NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingTarget {
    pub channel: u16,
    pub layout_table: u16,
    pub table: TableId,
    pub sources: Vec<Option<usize>>,
}

/// A `RecordingRows` WAL record's payload after its txn id: the rows of the
/// named chunks of a kept recording, decoded into the targets' tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingRef {
    /// The kept file's name in `recordings/`.
    pub file: String,
    /// Its size when the reference was logged.
    pub file_bytes: u64,
    /// The recording's name (the `recording` column's value).
    pub recording: String,
    /// File offsets of the chunk records this shard decoded, in the order it
    /// decoded them.
    pub chunks: Vec<u64>,
    pub targets: Vec<RecordingTarget>,
    /// Byte sequences longer than this were stored as frame references
    /// (`frames.rs`) into the kept file; `None`: every value inline.
    pub frame_threshold: Option<u32>,
}

const NO_SOURCE: u16 = u16::MAX;

impl RecordingRef {
    /// file (u16 length + UTF-8), file_bytes (u64), recording (u16 length +
    /// UTF-8), chunk count (u32) and offsets (u64 each), target count (u32),
    /// then per target channel (u16), layout table (u16), table oid (u32),
    /// source count (u16) and sources (u16 each, 0xFFFF = NULL); then the
    /// frame threshold (u32, 0 = none; absent in records written before it
    /// existed, which read as none).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let text = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u16).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        text(out, &self.file);
        out.extend_from_slice(&self.file_bytes.to_le_bytes());
        text(out, &self.recording);
        out.extend_from_slice(&(self.chunks.len() as u32).to_le_bytes());
        for c in &self.chunks {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out.extend_from_slice(&(self.targets.len() as u32).to_le_bytes());
        for t in &self.targets {
            out.extend_from_slice(&t.channel.to_le_bytes());
            out.extend_from_slice(&t.layout_table.to_le_bytes());
            out.extend_from_slice(&t.table.to_le_bytes());
            out.extend_from_slice(&(t.sources.len() as u16).to_le_bytes());
            for s in &t.sources {
                let s = s.map_or(NO_SOURCE, |s| s as u16);
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.frame_threshold.unwrap_or(0).to_le_bytes());
    }

    pub fn decode(r: &mut Reader) -> Result<RecordingRef, CodecError> {
        fn text(r: &mut Reader) -> Result<String, CodecError> {
            let len = r.u16()? as usize;
            let bytes = r.take(len)?;
            String::from_utf8(bytes.to_vec()).map_err(|_| r.fail("a name that is not UTF-8"))
        }
        let file = text(r)?;
        if !is_plain_name(&file) {
            return Err(r.fail(format!("kept recording name {file:?} is not a plain file name")));
        }
        let file_bytes = r.u64()?;
        let recording = text(r)?;
        let count = r.u32()? as usize;
        if count > r.remaining() / 8 {
            return Err(r.fail("more chunks than the record holds"));
        }
        let chunks = (0..count).map(|_| r.u64()).collect::<Result<_, _>>()?;
        let count = r.u32()? as usize;
        if count > r.remaining() / 10 {
            return Err(r.fail("more targets than the record holds"));
        }
        let mut targets = Vec::with_capacity(count);
        for _ in 0..count {
            let channel = r.u16()?;
            let layout_table = r.u16()?;
            let table = r.u32()?;
            let n = r.u16()? as usize;
            let sources = (0..n)
                .map(|_| r.u16().map(|s| (s != NO_SOURCE).then_some(s as usize)))
                .collect::<Result<_, _>>()?;
            targets.push(RecordingTarget { channel, layout_table, table, sources });
        }
        let frame_threshold = match r.remaining() {
            0 => None,
            _ => Some(r.u32()?).filter(|&t| t > 0),
        };
        Ok(RecordingRef { file, file_bytes, recording, chunks, targets, frame_threshold })
    }
}

/// One decoded layout table's columns as a batch of a table's columns:
/// each table column takes its source layout column, or NULLs. A source
/// column the decoder kept once (`TableBatch::repeated`) stays one value
/// long: such a batch goes to `CompactBatch::from_repeated` with the marks,
/// or is spelled out before it is read as rows.
pub fn table_batch(types: &[DataType], sources: &[Option<usize>], columns: Vec<Column>, rows: usize) -> Batch {
    let mut layout_columns: Vec<Option<Column>> = columns.into_iter().map(Some).collect();
    let columns: Vec<Column> = sources
        .iter()
        .zip(types)
        .map(|(source, &t)| {
            source
                .and_then(|s| layout_columns.get_mut(s).and_then(Option::take))
                .unwrap_or_else(|| null_column(t, rows))
        })
        .collect();
    // Not `Batch::new`: its check that every column holds `rows` values
    // does not hold for a column kept once.
    Batch { columns: columns.into_iter().map(std::sync::Arc::new).collect(), len: rows }
}

fn null_column(data_type: DataType, rows: usize) -> Column {
    let mut c = Column::from_datum(data_type, &Datum::Null, rows);
    if c.validity.is_none() {
        c.validity = Some(Bitmap::new_unset(rows));
    }
    c
}

/// The rows `reference` stands for: its chunks of the kept file decoded
/// again, each layout table's rows as a batch of its target table, in the
/// stored form (`frames` names each table's frame columns). Targets whose
/// table `types` lacks (dropped since) are skipped.
pub fn expand(
    data_dir: &Path,
    reference: &RecordingRef,
    types: &HashMap<TableId, Vec<DataType>>,
    frames: &HashMap<TableId, Vec<bool>>,
) -> Result<Vec<(TableId, Batch)>, String> {
    let path = kept_path(data_dir, &reference.file);
    let fail = |what: String| format!("kept recording {}: {what}", path.display());
    let file = std::fs::File::open(&path).map_err(|e| fail(format!("cannot open: {e}")))?;
    // SAFETY: the mapping is only read, and nothing else writes the kept
    // file while the server starts (a hard link's other name could be
    // rewritten by its owner; its size is checked below, and chunk CRCs are
    // checked as the chunks are read).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| fail(format!("cannot map: {e}")))?;
    if map.len() as u64 != reference.file_bytes {
        return Err(fail(format!(
            "{} bytes, but {} were ingested (the file was changed after it was kept)",
            map.len(),
            reference.file_bytes
        )));
    }
    let reader = ReaderOptions::default();
    let indexed = IndexedFile::open(&map, &reader)
        .map_err(|e| fail(e.to_string()))?
        .ok_or_else(|| fail("its summary is gone".to_string()))?;
    let options = DecodeOptions {
        recording: reference.recording.clone(),
        blob_threshold: reference.frame_threshold.map(|t| t as usize),
    };
    let channels = Channels::from_indexed(&indexed, options).map_err(|e| fail(e.to_string()))?;
    let by_offset: HashMap<u64, usize> = indexed.chunks.iter().enumerate().map(|(i, c)| (c.offset, i)).collect();
    let targets: HashMap<(u16, usize), &RecordingTarget> = reference
        .targets
        .iter()
        .map(|t| ((t.channel, t.layout_table as usize), t))
        .collect();
    let mut decoder = Decoder::new(channels);
    // Cut as the ingest cut them, so the memtable keeps them as blocks.
    decoder.cut_batches_at(crate::exec::vector::BATCH_ROWS, crate::storage::memtable::BLOCK_MAX_BYTES);
    let mut buffer = ChunkBuffer::new();
    for offset in &reference.chunks {
        let chunk = by_offset
            .get(offset)
            .map(|&i| &indexed.chunks[i])
            .ok_or_else(|| fail(format!("no chunk at offset {offset}")))?;
        for record in indexed.chunk_records(chunk, &mut buffer).map_err(|e| fail(e.to_string()))? {
            let record = record.map_err(|e| fail(e.to_string()))?;
            decoder.record(&record).map_err(|e| fail(e.to_string()))?;
        }
    }
    let mut out = Vec::new();
    for topic in decoder.take_batches() {
        let channel = topic.plan.channel_id;
        for mut table_batch_rows in topic.tables {
            if table_batch_rows.rows == 0 {
                continue;
            }
            // The memtable keeps repeated values once again as it seals blocks.
            table_batch_rows.spell_out();
            let blobs: Vec<_> = topic.blobs.iter().filter(|b| b.table == table_batch_rows.table).copied().collect();
            let target = targets
                .get(&(channel, table_batch_rows.table))
                .ok_or_else(|| fail(format!("channel {channel} has rows but no table to go to")))?;
            let Some(table_types) = types.get(&target.table) else { continue };
            if target.sources.len() > table_types.len() {
                return Err(fail(format!("table {} has other columns than when it was ingested", target.table)));
            }
            // Columns added since (ALTER TABLE … ADD COLUMN) read NULL.
            let mut sources = target.sources.clone();
            sources.resize(table_types.len(), None);
            for (source, &t) in sources.iter().zip(table_types) {
                let found = source.and_then(|s| table_batch_rows.columns.get(s)).map(|c| c.data_type);
                if source.is_some() && found != Some(t) {
                    return Err(fail(format!("table {}'s column types changed since it was ingested", target.table)));
                }
            }
            let batch = table_batch(table_types, &sources, table_batch_rows.columns, table_batch_rows.rows);
            let table_frames = frames.get(&target.table).map_or(&[][..], |f| f.as_slice());
            let batch = super::frames::store_decoded(batch, table_frames, &sources, &blobs, Some(&reference.file))
                .map_err(|e| fail(format!("table {}: {e}", target.table)))?;
            out.push((target.table, batch));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_server_removes_only_kept_files_nothing_pins_frames_or_logs() {
        let data_dir = std::env::temp_dir().join(format!("brewric-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data_dir);
        std::fs::create_dir_all(data_dir.join(DIR)).unwrap();
        for name in ["pinned", "framed", "logged", "dropped"] {
            std::fs::write(kept_path(&data_dir, name), name).unwrap();
        }
        let pins = KeptPins::default();
        let pin = pins.pin("pinned");
        let framed = || HashSet::from(["framed".to_string()]);
        let mut candidates = unpinned_unframed(&data_dir, &pins, framed);
        candidates.sort();
        assert_eq!(candidates, ["dropped", "logged"]);
        // A WAL that cannot be read keeps everything.
        assert!(remove_unlogged(&data_dir, &candidates, || Err("damaged".into())).is_empty());
        assert_eq!(remove_unlogged(&data_dir, &candidates, || Ok(HashSet::from(["logged".to_string()]))), ["dropped"]);
        let mut left: Vec<String> = kept_names(&data_dir).into_iter().collect();
        left.sort();
        assert_eq!(left, ["framed", "logged", "pinned"]);
        // Unpinned (its ingest ended), a file nothing else names goes too.
        drop(pin);
        let candidates = unpinned_unframed(&data_dir, &pins, framed);
        assert_eq!(remove_unlogged(&data_dir, &candidates, || Ok(HashSet::from(["logged".to_string()]))), ["pinned"]);
        let _ = std::fs::remove_dir_all(&data_dir);
    }

    #[test]
    fn a_reference_reads_back_as_written() {
        let r = RecordingRef {
            file: "0001-0000.mcap".into(),
            file_bytes: 12345,
            recording: "robot01".into(),
            chunks: vec![8, 4096, 1 << 40],
            targets: vec![
                RecordingTarget { channel: 1, layout_table: 0, table: 16400, sources: vec![Some(0), None, Some(2)] },
                RecordingTarget { channel: 7, layout_table: 1, table: 16401, sources: vec![] },
            ],
            frame_threshold: Some(4096),
        };
        let mut bytes = Vec::new();
        r.encode(&mut bytes);
        assert_eq!(RecordingRef::decode(&mut Reader::new(&bytes)).unwrap(), r);
        // Every cut short is an error, never a panic — but a record of the
        // first format, without the threshold, reads as one without frames.
        let first_format = bytes.len() - 4;
        for len in (0..bytes.len()).filter(|&l| l != first_format) {
            assert!(RecordingRef::decode(&mut Reader::new(&bytes[..len])).is_err(), "cut at {len}");
        }
        let old = RecordingRef::decode(&mut Reader::new(&bytes[..first_format])).unwrap();
        assert_eq!(old, RecordingRef { frame_threshold: None, ..r });
    }

    #[test]
    fn a_reference_naming_a_path_is_refused() {
        for name in ["../catalog.json", "a/b.mcap", ".hidden", ""] {
            let r = RecordingRef {
                file: name.into(),
                file_bytes: 0,
                recording: "r".into(),
                chunks: vec![],
                targets: vec![],
                frame_threshold: None,
            };
            let mut bytes = Vec::new();
            r.encode(&mut bytes);
            assert!(RecordingRef::decode(&mut Reader::new(&bytes)).is_err(), "{name}");
        }
    }

    #[test]
    fn table_batch_fills_missing_columns_with_nulls() {
        let source = Column::from_datums(DataType::Int64, &[Datum::Int64(1), Datum::Int64(2)]);
        let b = table_batch(&[DataType::Text, DataType::Int64], &[None, Some(0)], vec![source], 2);
        assert_eq!(b.len, 2);
        assert!(b.columns[0].validity.as_ref().is_some_and(|v| !v.get(0) && !v.get(1)));
        assert_eq!(b.columns[1].data_type, DataType::Int64);
    }
}
