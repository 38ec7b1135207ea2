//! Camera frames and other large byte sequences of MCAP recordings, kept
//! out of column blocks: the stored form of a bytea column the catalog marks
//! `frame_refs`, and the shard-side reader that turns references back into
//! bytes when a query reads the column.
//!
//! Every value of such a column is stored tagged:
//! - `0x00`, then the bytes: a value held inline (a small one, a recording
//!   read from a stream, anything SQL wrote);
//! - `0x01`, then a reference into a recording kept in the data directory
//!   (`recordings.rs`): the kept file's name (u8 length + bytes), the chunk
//!   record's file offset (u64 LE; `u64::MAX` when the bytes lie in the file
//!   verbatim), the bytes' offset (u64 LE: in the chunk's uncompressed
//!   records, else in the file) and their length (u32 LE).
//!
//! Writes put values in this form ([`store_inline`] for SQL's writes,
//! [`store_decoded`] for an MCAP ingest and its recovery); a shard's scan
//! gives them back as bytes ([`FrameReader::resolve`], io_uring reads of the
//! kept file, the chunk decompressed and its CRC checked) before any
//! expression sees them. Only storage ever sees the tags.
//!
//! Must not: decide which values become references (the decoder's
//! threshold does) or keep a kept file alive (the catalog's `frame_files`
//! does, see `Catalog::frame_files`).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::error::{DbError, DbResult};
use crate::exec::vector::{Batch, BytesColumn, Column, ColumnData};
use crate::ingest::mcap::{chunk_record_at, BlobRef, ChunkBuffer, Location, ReaderOptions};
use crate::runtime::storage_io::StorageIo;
use crate::storage::recordings::kept_path;
use crate::storage::scan::DATA_CORRUPTED;

/// The tag of a value held inline.
pub const INLINE: u8 = 0;
/// The tag of a reference into a kept recording.
pub const REFERENCE: u8 = 1;
/// A reference's chunk offset when the bytes lie in the file verbatim.
pub const NO_CHUNK: u64 = u64::MAX;

/// Byte sequences longer than this are stored as references when the
/// recording is kept (Image.data, CompressedImage.data, PointCloud2.data);
/// shorter ones inline, where a reference would save little.
pub const FRAME_THRESHOLD: usize = 4096;

/// A stored value, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredFrame<'a> {
    Inline(&'a [u8]),
    Reference(FrameRef<'a>),
}

/// Where a referenced value's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRef<'a> {
    /// The kept file's name in `recordings/`.
    pub file: &'a str,
    /// The chunk record's file offset, or [`NO_CHUNK`].
    pub chunk: u64,
    /// In the chunk's uncompressed records, or in the file.
    pub offset: u64,
    pub len: u32,
}

impl FrameRef<'_> {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(REFERENCE);
        out.push(self.file.len() as u8);
        out.extend_from_slice(self.file.as_bytes());
        out.extend_from_slice(&self.chunk.to_le_bytes());
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
    }
}

/// Reads one stored value. An empty value (never written by this module)
/// reads as empty bytes.
pub fn read_stored(value: &[u8]) -> Result<StoredFrame<'_>, String> {
    let Some((&tag, rest)) = value.split_first() else { return Ok(StoredFrame::Inline(&[])) };
    match tag {
        INLINE => Ok(StoredFrame::Inline(rest)),
        REFERENCE => {
            let bad = || format!("a frame reference of {} bytes is malformed", value.len());
            let (&name_len, rest) = rest.split_first().ok_or_else(bad)?;
            let name_len = name_len as usize;
            if rest.len() != name_len + 20 {
                return Err(bad());
            }
            let file = std::str::from_utf8(&rest[..name_len]).map_err(|_| bad())?;
            let u64_at = |at: usize| u64::from_le_bytes(rest[at..at + 8].try_into().unwrap_or_default());
            let len = u32::from_le_bytes(rest[name_len + 16..name_len + 20].try_into().unwrap_or_default());
            Ok(StoredFrame::Reference(FrameRef { file, chunk: u64_at(name_len), offset: u64_at(name_len + 8), len }))
        }
        other => Err(format!("a stored frame value has the unknown tag {other}")),
    }
}

/// `column` (bytea) with every valid value tagged inline.
fn tag_inline(column: &Column) -> Column {
    let ColumnData::Bytes(values) = &column.data else { return column.clone() };
    let mut out = BytesColumn::with_capacity(values.len(), values.data.len() + values.len());
    for r in 0..values.len() {
        if column.is_valid(r) {
            out.data.push(INLINE);
            out.data.extend_from_slice(values.get(r));
        }
        out.offsets.push(out.data.len() as u32);
    }
    Column::new(column.data_type, ColumnData::Bytes(out), column.validity.clone())
}

/// SQL's rows for a table whose `frames` columns hold the frame form: those
/// columns' values tagged inline.
pub fn store_inline(frames: &[bool], batches: Vec<Batch>) -> Vec<Batch> {
    if !frames.iter().any(|&f| f) {
        return batches;
    }
    batches
        .into_iter()
        .map(|b| {
            let columns = b
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| if frames.get(i).copied().unwrap_or(false) { Arc::new(tag_inline(c)) } else { c.clone() })
                .collect();
            Batch::new(columns, b.len)
        })
        .collect()
}

/// A decoded layout table's rows (already a batch of the table's columns,
/// `sources` naming each one's layout column) in the stored form: each
/// `frames` column's values inline, except those the decoder left in the
/// recording (`blobs`, this layout table's only, in row order), which become
/// references into kept file `file`.
pub fn store_decoded(
    batch: Batch,
    frames: &[bool],
    sources: &[Option<usize>],
    blobs: &[BlobRef],
    file: Option<&str>,
) -> Result<Batch, String> {
    if !frames.iter().any(|&f| f) {
        return match blobs.first() {
            None => Ok(batch),
            Some(_) => Err("the recording's large values were left in the file, but the table stores bytes inline".into()),
        };
    }
    let len = batch.len;
    let mut columns = Vec::with_capacity(batch.columns.len());
    for (i, column) in batch.columns.into_iter().enumerate() {
        if !frames.get(i).copied().unwrap_or(false) {
            columns.push(column);
            continue;
        }
        let ColumnData::Bytes(values) = &column.data else {
            columns.push(column);
            continue;
        };
        let source = sources.get(i).copied().flatten();
        let mut refs = blobs.iter().filter(|b| Some(b.column) == source).peekable();
        let mut out = BytesColumn::with_capacity(values.len(), values.data.len() + values.len());
        for r in 0..values.len() {
            match refs.peek() {
                Some(blob) if blob.row == r => {
                    let file = file.ok_or("a large value was left in a recording that is not kept")?;
                    // Bytes lying verbatim in the file (an uncompressed chunk) are read
                    // where they lie; others from their decompressed chunk.
                    let (chunk, offset) = match (blob.file_offset, blob.in_chunk) {
                        (Some(offset), _) => (NO_CHUNK, offset),
                        (None, Some((chunk, offset))) => (chunk, offset),
                        (None, None) => return Err("a large value was left in the recording without its position".into()),
                    };
                    let len = u32::try_from(blob.len).map_err(|_| format!("a value of {} bytes is too large", blob.len))?;
                    FrameRef { file, chunk, offset, len }.encode(&mut out.data);
                    refs.next();
                }
                _ if column.is_valid(r) => {
                    out.data.push(INLINE);
                    out.data.extend_from_slice(values.get(r));
                }
                _ => {}
            }
            out.offsets.push(out.data.len() as u32);
        }
        if refs.next().is_some() {
            return Err("a large value's row is past the batch's rows".into());
        }
        columns.push(Arc::new(Column::new(column.data_type, ColumnData::Bytes(out), column.validity.clone())));
    }
    Ok(Batch::new(columns, len))
}

/// Rows whose frames a scan reads back at a time: the batch a shard sends
/// stays small however large the frames are, and a LIMIT above stops the
/// reading after the piece it needed.
pub const ROWS_PER_READ: usize = 64;

/// Decompressed chunks kept per shard: frames of one query usually come from
/// a few neighbouring chunks.
const CACHED_CHUNKS: usize = 8;

/// A decompressed chunk: (file, chunk offset, uncompressed records).
type CachedChunk = (String, u64, Arc<[u8]>);

/// A shard's reader of referenced frames: open kept files and the chunks
/// decompressed last. Used only on its shard's thread.
#[derive(Default)]
pub struct FrameReader {
    files: RefCell<HashMap<String, Arc<File>>>,
    /// Newest last.
    chunks: RefCell<VecDeque<CachedChunk>>,
}

impl FrameReader {
    /// A bytea `column` in the stored form, as its bytes.
    pub async fn resolve(&self, io: &StorageIo, data_dir: Option<&Path>, column: &Column) -> DbResult<Column> {
        let ColumnData::Bytes(values) = &column.data else { return Ok(column.clone()) };
        let mut out = BytesColumn::with_capacity(values.len(), values.data.len());
        for r in 0..values.len() {
            if column.is_valid(r) {
                match read_stored(values.get(r)).map_err(corrupted)? {
                    StoredFrame::Inline(bytes) => out.data.extend_from_slice(bytes),
                    StoredFrame::Reference(frame) => {
                        let dir = data_dir.ok_or_else(|| corrupted("a frame reference in a server without a data directory".into()))?;
                        self.read_frame(io, dir, &frame, &mut out.data).await?;
                    }
                }
            }
            let end = u32::try_from(out.data.len())
                .map_err(|_| DbError::new("54000", "the frames of one batch of rows exceed 4 GiB"))?;
            out.offsets.push(end);
        }
        Ok(Column::new(column.data_type, ColumnData::Bytes(out), column.validity.clone()))
    }

    async fn read_frame(&self, io: &StorageIo, dir: &Path, frame: &FrameRef<'_>, out: &mut Vec<u8>) -> DbResult<()> {
        let fail = |what: String| {
            DbError::new(DATA_CORRUPTED, format!("could not read a frame of kept recording \"{}\": {what}", frame.file))
        };
        let file = self.file(dir, frame.file)?;
        let len = frame.len as usize;
        if frame.chunk == NO_CHUNK {
            let bytes = io.read(file, frame.offset, len).await.map_err(|e| fail(e.to_string()))?;
            if bytes.len() != len {
                return Err(fail(format!("{} bytes at offset {} run past the end of the file", len, frame.offset)));
            }
            out.extend_from_slice(&bytes);
            return Ok(());
        }
        let records = self.chunk(io, file, frame.file, frame.chunk).await.map_err(fail)?;
        let bytes = usize::try_from(frame.offset)
            .ok()
            .and_then(|from| records.get(from..from.checked_add(len)?))
            .ok_or_else(|| {
                fail(format!(
                    "{len} bytes at offset {} are not inside the {} bytes of the chunk at offset {}",
                    frame.offset,
                    records.len(),
                    frame.chunk
                ))
            })?;
        out.extend_from_slice(bytes);
        Ok(())
    }

    /// Closes kept files that were deleted (`recordings::remove_unlogged`),
    /// so that their disk space comes back, and drops their cached chunks.
    pub fn forget(&self, names: &[String]) {
        let mut files = self.files.borrow_mut();
        for name in names {
            files.remove(name);
        }
        self.chunks.borrow_mut().retain(|(f, _, _)| !names.contains(f));
    }

    fn file(&self, dir: &Path, name: &str) -> DbResult<Arc<File>> {
        if let Some(f) = self.files.borrow().get(name) {
            return Ok(f.clone());
        }
        if !crate::storage::recordings::is_plain_name(name) {
            return Err(corrupted(format!("a frame reference names the file {name:?}")));
        }
        let path = kept_path(dir, name);
        let file = File::open(&path).map(Arc::new).map_err(|e| {
            DbError::new("58P01", format!("could not open kept recording \"{}\": {e}", path.display()))
        })?;
        self.files.borrow_mut().insert(name.to_string(), file.clone());
        Ok(file)
    }

    /// The uncompressed records of the chunk at `offset` of kept file `name`.
    async fn chunk(&self, io: &StorageIo, file: Arc<File>, name: &str, offset: u64) -> Result<Arc<[u8]>, String> {
        let cached = self.chunks.borrow().iter().find(|(f, o, _)| f == name && *o == offset).map(|(_, _, c)| c.clone());
        if let Some(records) = cached {
            return Ok(records);
        }
        let options = ReaderOptions::default();
        let header = io.read(file.clone(), offset, 9).await.map_err(|e| e.to_string())?;
        if header.len() != 9 || header[0] != 0x06 {
            return Err(format!("no chunk record at offset {offset}"));
        }
        let length = u64::from_le_bytes(header[1..9].try_into().unwrap_or_default());
        if length > options.max_chunk_bytes {
            return Err(format!("the chunk at offset {offset} claims {length} bytes"));
        }
        let body_at = offset.checked_add(9).ok_or_else(|| format!("no chunk record at offset {offset}"))?;
        let body = io.read(file, body_at, length as usize).await.map_err(|e| e.to_string())?;
        if body.len() as u64 != length {
            return Err(format!("the chunk at offset {offset} runs past the end of the file"));
        }
        let record = chunk_record_at(&body, offset).map_err(|e| e.to_string())?;
        let mut buffer = ChunkBuffer::new();
        let records: Arc<[u8]> =
            buffer.records(&record, Location::File(offset), &options).map_err(|e| e.to_string())?.into();
        let mut chunks = self.chunks.borrow_mut();
        if chunks.len() >= CACHED_CHUNKS {
            chunks.pop_front();
        }
        chunks.push_back((name.to_string(), offset, records.clone()));
        Ok(records)
    }
}

fn corrupted(detail: String) -> DbError {
    DbError::new(DATA_CORRUPTED, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{DataType, Datum};

    fn bytea(values: &[Option<&[u8]>]) -> Column {
        let datums: Vec<Datum> = values.iter().map(|v| v.map_or(Datum::Null, |b| Datum::Bytes(b.to_vec()))).collect();
        Column::from_datums(DataType::Bytea, &datums)
    }

    #[test]
    fn a_reference_reads_back_as_written_and_every_cut_is_an_error() {
        let r = FrameRef { file: "0001-0000.mcap", chunk: 4096, offset: 31, len: 9216 };
        let mut bytes = Vec::new();
        r.encode(&mut bytes);
        assert_eq!(read_stored(&bytes), Ok(StoredFrame::Reference(r)));
        for len in 1..bytes.len() {
            assert!(read_stored(&bytes[..len]).is_err(), "cut at {len}");
        }
        assert_eq!(read_stored(&[INLINE, 7, 8]), Ok(StoredFrame::Inline(&[7, 8])));
        assert!(read_stored(&[9, 1]).is_err());
    }

    #[test]
    fn inline_values_keep_their_bytes_and_nulls() {
        let c = bytea(&[Some(b"ab"), None, Some(b"")]);
        let b = store_inline(&[false, true], vec![Batch::from_columns(vec![bytea(&[None, None, None]), c])]);
        let stored = &b[0].columns[1];
        let ColumnData::Bytes(v) = &stored.data else { panic!() };
        assert_eq!(v.get(0), &[INLINE, b'a', b'b']);
        assert!(!stored.is_valid(1));
        assert_eq!(v.get(2), &[INLINE]);
        // The column not marked is untouched.
        assert!(Arc::ptr_eq(&b[0].columns[0], &b[0].columns[0]));
    }

    #[test]
    fn decoded_rows_become_references_where_the_decoder_left_bytes() {
        let c = bytea(&[Some(b"small"), Some(b""), None]);
        let blob = BlobRef { table: 0, column: 0, row: 1, offset: 40, len: 9000, file_offset: None, in_chunk: Some((100, 77)) };
        let b = store_decoded(Batch::from_columns(vec![c]), &[true], &[Some(0)], &[blob], Some("k.mcap")).unwrap();
        let ColumnData::Bytes(v) = &b.columns[0].data else { panic!() };
        assert_eq!(read_stored(v.get(0)), Ok(StoredFrame::Inline(b"small")));
        assert_eq!(
            read_stored(v.get(1)),
            Ok(StoredFrame::Reference(FrameRef { file: "k.mcap", chunk: 100, offset: 77, len: 9000 }))
        );
        assert!(!b.columns[0].is_valid(2));
        // A blob without a kept file, or for a table storing inline, is refused.
        let c = bytea(&[Some(b"")]);
        let blob = BlobRef { row: 0, ..blob };
        assert!(store_decoded(Batch::from_columns(vec![c.clone()]), &[true], &[Some(0)], &[blob], None).is_err());
        assert!(store_decoded(Batch::from_columns(vec![c]), &[false], &[Some(0)], &[blob], Some("k")).is_err());
    }
}
