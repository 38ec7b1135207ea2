//! Segment files: the immutable, compressed, checksummed column store a
//! shard's memtable is flushed into (byte layout: storage-format/SPEC.md,
//! "Segment files"). A segment holds one table's rows of one shard, cut
//! into block groups of up to `BLOCK_ROWS` rows; each column of a group is
//! one block (header with encoding, counts, zone map and CRC, then the
//! encoded values). The footer carries the schema, every block's location
//! and statistics (so pruning needs no block read), the series index and
//! the time range; the trailer locates and checksums the footer.
//!
//! `writer` builds a segment's bytes from column batches; `reader` parses a
//! footer and decodes blocks; `column` maps each column type to its codec.
//! Must not: do I/O (the shard's storage reads and writes the bytes through
//! its io_uring ring) or trust the bytes it parses: every malformed or
//! damaged input is a `SegmentError`, never a panic or a wrong value.

pub mod column;
pub mod reader;
pub mod writer;

/// File magic at offset 0.
pub const MAGIC: &[u8; 8] = b"BRWRCSEG";
/// Trailer magic, the last 8 bytes of a segment.
pub const END_MAGIC: &[u8; 8] = b"BRWRCEND";
/// Format version written by this build; readers accept `1..=VERSION`.
/// Version 3 is version 2's layout with block groups of any size up to
/// `BLOCK_ROWS` (cut at time windows): a version-2 reader assumed 8192-row
/// strides when it mapped a series to groups, so it must refuse them.
/// Version 4 is version 3's layout whose array values may be packed
/// (`types::array`): a version-3 reader would misread them. Arrays of
/// older files are repacked as they are read (`exec::vector::repack_arrays`).
pub const VERSION: u32 = 4;
pub const HEADER_BYTES: usize = 32;
pub const BLOCK_HEADER_BYTES: usize = 40;
pub const TRAILER_BYTES: usize = 24;
/// Rows per block group. A block decodes straight into one executor batch
/// (scans of segments hand out batches of up to this many rows, larger than
/// the memtable's `BATCH_ROWS`: per-block headers then cost ~0.005 bytes per
/// row and value, and each operator call covers more rows).
pub const BLOCK_ROWS: usize = 8192;
/// A segment with a time column cuts its block groups where the time moves
/// to another `GROUP_SPAN_NS` window, once a group holds `MIN_GROUP_ROWS`.
/// The flush sorts a time-series table's rows by (window, series, time), so
/// a group holds a few series' hours: its time zone map spans at most a
/// window, and a query over a few hours of every series skips the groups
/// outside its window and passes the ones inside it whole.
pub const GROUP_SPAN_NS: i64 = 3 * 3600 * 1_000_000_000;
pub const MIN_GROUP_ROWS: usize = 1024;

/// Block header flag bits.
pub const FLAG_VALIDITY: u8 = 1;
pub const FLAG_ZSTD: u8 = 2;
pub const FLAG_ZONE_MAP: u8 = 4;

/// A damaged or malformed segment: which file, where, and what was wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("segment {file}: {what} (at byte {offset})")]
pub struct SegmentError {
    pub file: String,
    pub offset: u64,
    pub what: String,
}

impl SegmentError {
    pub fn new(file: &str, offset: u64, what: impl Into<String>) -> SegmentError {
        SegmentError {
            file: file.to_string(),
            offset,
            what: what.into(),
        }
    }
}

/// The 32-byte file header.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentHeader {
    pub version: u32,
    pub table: u32,
    pub shard: u32,
    pub segment: u64,
}

/// One block's header (40 bytes on disk, repeated in the footer).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BlockHeader {
    pub encoding: u8,
    pub flags: u8,
    pub rows: u32,
    pub nulls: u32,
    /// Payload bytes as stored (after the optional zstd stage).
    pub stored_len: u32,
    /// Payload bytes before the zstd stage (equal to `stored_len` without it).
    pub raw_len: u32,
    pub crc: u32,
    /// Zone map: the smallest and largest non-NULL value as i64 (integers,
    /// dates, timestamps, booleans) or f64 bits (floats; NaN-free blocks
    /// only). Meaningful only with `FLAG_ZONE_MAP`.
    pub min: i64,
    pub max: i64,
}

impl BlockHeader {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.encoding);
        out.push(self.flags);
        out.extend_from_slice(&0u16.to_le_bytes());
        for v in [
            self.rows,
            self.nulls,
            self.stored_len,
            self.raw_len,
            self.crc,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.min.to_le_bytes());
        out.extend_from_slice(&self.max.to_le_bytes());
    }

    pub fn decode(b: &[u8; BLOCK_HEADER_BYTES]) -> BlockHeader {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let i64_at = |i: usize| i64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        BlockHeader {
            encoding: b[0],
            flags: b[1],
            rows: u32_at(4),
            nulls: u32_at(8),
            stored_len: u32_at(12),
            raw_len: u32_at(16),
            crc: u32_at(20),
            min: i64_at(24),
            max: i64_at(32),
        }
    }

    pub fn has_zone_map(&self) -> bool {
        self.flags & FLAG_ZONE_MAP != 0
    }
}

/// Where a block lies in the file and what its header says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockMeta {
    pub offset: u64,
    /// Header plus payload.
    pub len: u32,
    pub header: BlockHeader,
}

/// A column as the segment records it.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentColumn {
    pub name: String,
    /// PostgreSQL type OID.
    pub type_oid: u32,
}

/// One series: rows `first_row .. first_row + rows` share the key values.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesEntry {
    pub first_row: u32,
    pub rows: u32,
    /// One value per key column: its bytes (integers as 8 LE bytes, text as
    /// UTF-8), `None` for NULL.
    pub key: Vec<Option<Vec<u8>>>,
}

/// Everything the footer holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Footer {
    pub columns: Vec<SegmentColumn>,
    /// Per block group: its row count and one block per column.
    pub groups: Vec<(u32, Vec<BlockMeta>)>,
    pub series_columns: Vec<u16>,
    pub series: Vec<SeriesEntry>,
    pub time_column: Option<u16>,
    pub time_min: i64,
    pub time_max: i64,
    pub rows: u64,
}

impl Footer {
    /// Bytes of the file the blocks of `column` occupy.
    pub fn column_bytes(&self, column: usize) -> u64 {
        self.groups
            .iter()
            .filter_map(|(_, b)| b.get(column))
            .map(|b| b.len as u64)
            .sum()
    }
}
