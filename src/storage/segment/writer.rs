//! Builds a segment file's bytes from a table's rows (already in the order
//! they are to be stored): header, column chunks (each column's blocks of
//! `BLOCK_ROWS` rows, in group order), the
//! footer (schema, block directory with statistics, series index, time
//! range) and the trailer.
//! Must not: reorder rows (the flush sorts them) or do I/O.

use super::column::encode_block;
use super::{
    BlockMeta, Footer, SegmentColumn, SeriesEntry, BLOCK_ROWS, END_MAGIC, GROUP_SPAN_NS, HEADER_BYTES,
    MAGIC, MIN_GROUP_ROWS, VERSION,
};
use std::borrow::Cow;

use crate::exec::vector::{Batch, Column, ColumnData};

/// A segment's rows, in stored order, handed over one column at a time: a
/// flush materializes each column only while it is encoded, instead of all
/// of a memtable's rows at once.
pub trait SegmentRows {
    fn row_count(&self) -> usize;
    fn column_count(&self) -> usize;
    /// Column `c`'s values, in stored order.
    fn column(&self, c: usize) -> Cow<'_, Column>;
    /// Column `c`'s values of rows `start..start + len` (one block's), in
    /// stored order, into `out` (a buffer reused from block to block; a
    /// source that must gather its rows gathers only these).
    fn rows_into(&self, c: usize, start: usize, len: usize, out: &mut Column);
    /// About the bytes the values take (sizes the output buffer).
    fn byte_size(&self) -> usize;
}

impl SegmentRows for Batch {
    fn row_count(&self) -> usize {
        self.len
    }
    fn column_count(&self) -> usize {
        self.columns.len()
    }
    fn column(&self, c: usize) -> Cow<'_, Column> {
        Cow::Borrowed(&self.columns[c])
    }
    fn rows_into(&self, c: usize, start: usize, len: usize, out: &mut Column) {
        self.columns[c].slice_into(start, len, out)
    }
    fn byte_size(&self) -> usize {
        Batch::byte_size(self)
    }
}

/// What a segment is about to hold.
#[derive(Debug, Clone)]
pub struct SegmentSpec {
    pub table: u32,
    pub shard: u32,
    pub segment: u64,
    pub columns: Vec<SegmentColumn>,
    /// Columns whose values form the series key (the rows are sorted by them).
    pub series_columns: Vec<usize>,
    pub time_column: Option<usize>,
}

/// Encodes `rows` (any number) as a segment.
pub fn write_segment(spec: &SegmentSpec, rows: &impl SegmentRows) -> (Vec<u8>, Footer) {
    let len = rows.row_count();
    // Room for the values uncompressed: growing the buffer by doubling would
    // copy the segment written so far into fresh memory each time (capacity
    // never written is never touched).
    let mut out = Vec::with_capacity(rows.byte_size() + 4096);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // flags
    out.extend_from_slice(&spec.table.to_le_bytes());
    out.extend_from_slice(&spec.shard.to_le_bytes());
    out.extend_from_slice(&spec.segment.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_BYTES);

    // Column-major: each column's blocks lie together (a column chunk), so a
    // scan that needs a few columns reads a few contiguous ranges.
    let time_values = spec.time_column.map(|t| rows.column(t));
    let group_rows = time_values.as_deref().map_or_else(|| fixed_group_rows(len), time_group_rows);
    let mut blocks: Vec<Vec<BlockMeta>> =
        vec![Vec::with_capacity(rows.column_count()); group_rows.len()];
    // One block's values at a time, in a buffer reused across blocks.
    let mut part = Column::new(crate::types::DataType::Int64, ColumnData::Int64(Vec::new()), None);
    for c in 0..rows.column_count() {
        let mut start = 0;
        for (g, &n) in group_rows.iter().enumerate() {
            rows.rows_into(c, start, n, &mut part);
            start += n;
            let offset = out.len() as u64;
            let header = encode_block(&part, &mut out);
            blocks[g].push(BlockMeta {
                offset,
                len: (out.len() as u64 - offset) as u32,
                header,
            });
        }
    }
    let groups: Vec<(u32, Vec<BlockMeta>)> =
        group_rows.iter().map(|&n| n as u32).zip(blocks).collect();

    let (time_min, time_max) = time_values.as_deref().map_or((0, 0), time_range);
    let key_columns: Vec<Cow<'_, Column>> = spec.series_columns.iter().map(|&c| rows.column(c)).collect();
    let footer = Footer {
        columns: spec.columns.clone(),
        groups,
        series_columns: spec.series_columns.iter().map(|&c| c as u16).collect(),
        series: series_index(len, &key_columns),
        time_column: spec.time_column.map(|t| t as u16),
        time_min,
        time_max,
        rows: len as u64,
    };
    let footer_offset = out.len() as u64;
    encode_footer(&footer, &mut out);
    let footer_len = (out.len() as u64 - footer_offset) as u32;
    let crc = crc32fast::hash(&out[footer_offset as usize..]);
    out.extend_from_slice(&footer_offset.to_le_bytes());
    out.extend_from_slice(&footer_len.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(END_MAGIC);
    (out, footer)
}

/// Groups of `BLOCK_ROWS` rows (the last one shorter).
fn fixed_group_rows(len: usize) -> Vec<usize> {
    (0..len.div_ceil(BLOCK_ROWS)).map(|g| BLOCK_ROWS.min(len - g * BLOCK_ROWS)).collect()
}

/// Group sizes over times in stored order: a group ends at `BLOCK_ROWS`
/// rows, or at a row whose `GROUP_SPAN_NS` window differs from the previous
/// row's once it holds `MIN_GROUP_ROWS` (NULL times are in window `i64::MIN`,
/// whatever their slot holds).
fn time_group_rows(col: &Column) -> Vec<usize> {
    let ColumnData::Int64(ts) = &col.data else {
        return fixed_group_rows(col.len());
    };
    let window = |r: usize| if col.is_valid(r) { ts[r].div_euclid(GROUP_SPAN_NS) } else { i64::MIN };
    let mut out = Vec::new();
    let mut start = 0;
    for r in 1..ts.len() {
        let rows = r - start;
        if rows == BLOCK_ROWS || (rows >= MIN_GROUP_ROWS && window(r) != window(r - 1)) {
            out.push(rows);
            start = r;
        }
    }
    if start < ts.len() {
        out.push(ts.len() - start);
    }
    out
}

fn time_range(col: &Column) -> (i64, i64) {
    let ColumnData::Int64(v) = &col.data else {
        return (0, 0);
    };
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (i, &t) in v.iter().enumerate() {
        if col.is_valid(i) {
            lo = lo.min(t);
            hi = hi.max(t);
        }
    }
    if lo > hi {
        (0, 0)
    } else {
        (lo, hi)
    }
}

/// Whether row `row` of `col` holds the key value `key` (as [`key_bytes`]
/// writes it), without building the row's key.
fn same_key(col: &Column, row: usize, key: Option<&[u8]>) -> bool {
    let Some(key) = key else { return !col.is_valid(row) };
    if !col.is_valid(row) {
        return false;
    }
    match &col.data {
        ColumnData::Bool(v) => key == [v[row] as u8],
        ColumnData::Int16(v) => key == (v[row] as i64).to_le_bytes(),
        ColumnData::Int32(v) => key == (v[row] as i64).to_le_bytes(),
        ColumnData::Int64(v) => key == v[row].to_le_bytes(),
        ColumnData::Bytes(b) => key == b.get(row),
        _ => key_bytes(col, row).as_deref() == Some(key),
    }
}

/// The bytes of a series key value, as the footer stores them.
pub fn key_bytes(col: &Column, row: usize) -> Option<Vec<u8>> {
    if !col.is_valid(row) {
        return None;
    }
    Some(match &col.data {
        ColumnData::Bool(v) => vec![v[row] as u8],
        ColumnData::Int16(v) => (v[row] as i64).to_le_bytes().to_vec(),
        ColumnData::Int32(v) => (v[row] as i64).to_le_bytes().to_vec(),
        ColumnData::Int64(v) => v[row].to_le_bytes().to_vec(),
        ColumnData::Bytes(b) => b.get(row).to_vec(),
        _ => format!("{:?}", col.datum(row)).into_bytes(),
    })
}

/// Runs of equal series keys (rows are sorted by them).
fn series_index(len: usize, key_columns: &[Cow<'_, Column>]) -> Vec<SeriesEntry> {
    if key_columns.is_empty() || len == 0 {
        return Vec::new();
    }
    let key_of = |r: usize| -> Vec<Option<Vec<u8>>> { key_columns.iter().map(|c| key_bytes(c, r)).collect() };
    let mut out = Vec::new();
    let mut current = key_of(0);
    let mut first = 0usize;
    for r in 1..len {
        let same = key_columns.iter().zip(&current).all(|(c, k)| same_key(c, r, k.as_deref()));
        if !same {
            out.push(SeriesEntry {
                first_row: first as u32,
                rows: (r - first) as u32,
                key: std::mem::replace(&mut current, key_of(r)),
            });
            first = r;
        }
    }
    out.push(SeriesEntry {
        first_row: first as u32,
        rows: (len - first) as u32,
        key: current,
    });
    out
}

fn put_bytes16(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len().min(u16::MAX as usize);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&b[..n]);
}

pub fn encode_footer(f: &Footer, out: &mut Vec<u8>) {
    out.extend_from_slice(&(f.columns.len() as u32).to_le_bytes());
    for c in &f.columns {
        out.extend_from_slice(&c.type_oid.to_le_bytes());
        put_bytes16(out, c.name.as_bytes());
    }
    out.extend_from_slice(&(f.groups.len() as u32).to_le_bytes());
    for (rows, blocks) in &f.groups {
        out.extend_from_slice(&rows.to_le_bytes());
        for b in blocks {
            out.extend_from_slice(&b.offset.to_le_bytes());
            out.extend_from_slice(&b.len.to_le_bytes());
            b.header.encode(out);
        }
    }
    out.extend_from_slice(&(f.series_columns.len() as u16).to_le_bytes());
    for c in &f.series_columns {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out.extend_from_slice(&(f.series.len() as u32).to_le_bytes());
    for s in &f.series {
        out.extend_from_slice(&s.first_row.to_le_bytes());
        out.extend_from_slice(&s.rows.to_le_bytes());
        for k in &s.key {
            match k {
                None => out.extend_from_slice(&u32::MAX.to_le_bytes()),
                Some(b) => {
                    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                    out.extend_from_slice(b);
                }
            }
        }
    }
    out.extend_from_slice(&f.time_column.unwrap_or(u16::MAX).to_le_bytes());
    out.extend_from_slice(&f.time_min.to_le_bytes());
    out.extend_from_slice(&f.time_max.to_le_bytes());
    out.extend_from_slice(&f.rows.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Bitmap;
    use crate::types::DataType;

    #[test]
    fn time_series_groups_end_where_the_time_leaves_a_window_once_they_hold_enough_rows() {
        let hour = 3_600_000_000_000i64;
        let col = |ts: Vec<i64>| Column::new(DataType::TimestampTz, ColumnData::Int64(ts), None);
        // two series of 6 h every 10 s: each cut into its two 3-hour windows
        let day: Vec<i64> = (0..2).flat_map(|_| (0..2160).map(|i| i * 10_000_000_000)).collect();
        assert_eq!(time_group_rows(&col(day)), vec![1080; 4]);
        // a window of fewer than MIN_GROUP_ROWS rows joins the next one
        let sparse: Vec<i64> = (0..1800).map(|i| i * 3 * hour / 600).collect();
        assert_eq!(time_group_rows(&col(sparse)), vec![1200, 600]);
        // one window of 20,000 rows: BLOCK_ROWS at most
        let dense: Vec<i64> = (0..20_000).map(|i| i * 1_000).collect();
        assert_eq!(time_group_rows(&col(dense)), vec![8192, 8192, 3616]);
        // NULL times form a window of their own, whatever their slots hold
        let validity = Bitmap::from_bools(&(0..2048).map(|i| i < 1024).collect::<Vec<_>>());
        let nulls = Column::new(DataType::TimestampTz, ColumnData::Int64(vec![0; 2048]), Some(validity));
        assert_eq!(time_group_rows(&nulls), vec![1024, 1024]);
    }
}
