//! Builds a segment file's bytes from a table's rows (already in the order
//! they are to be stored): header, column chunks (each column's blocks of
//! `BLOCK_ROWS` rows, in group order), the
//! footer (schema, block directory with statistics, series index, time
//! range) and the trailer.
//! Must not: reorder rows (the flush sorts them) or do I/O.

use super::column::encode_block;
use super::{
    BlockMeta, Footer, SegmentColumn, SeriesEntry, BLOCK_ROWS, END_MAGIC, HEADER_BYTES, MAGIC,
    VERSION,
};
use crate::exec::vector::{Batch, Column, ColumnData};

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

/// Encodes `rows` (one batch of any length) as a segment.
pub fn write_segment(spec: &SegmentSpec, rows: &Batch) -> (Vec<u8>, Footer) {
    let mut out = Vec::with_capacity(rows.byte_size() / 4 + 4096);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // flags
    out.extend_from_slice(&spec.table.to_le_bytes());
    out.extend_from_slice(&spec.shard.to_le_bytes());
    out.extend_from_slice(&spec.segment.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_BYTES);

    // Column-major: each column's blocks lie together (a column chunk), so a
    // scan that needs a few columns reads a few contiguous ranges.
    let group_rows: Vec<usize> = (0..rows.len.div_ceil(BLOCK_ROWS))
        .map(|g| BLOCK_ROWS.min(rows.len - g * BLOCK_ROWS))
        .collect();
    let mut blocks: Vec<Vec<BlockMeta>> =
        vec![Vec::with_capacity(rows.columns.len()); group_rows.len()];
    for col in &rows.columns {
        for (g, &n) in group_rows.iter().enumerate() {
            let start = g * BLOCK_ROWS;
            let part = if start == 0 && n == rows.len {
                (**col).clone()
            } else {
                col.slice(start, n)
            };
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

    let (time_min, time_max) = match spec.time_column {
        Some(t) => time_range(&rows.columns[t]),
        None => (0, 0),
    };
    let footer = Footer {
        columns: spec.columns.clone(),
        groups,
        series_columns: spec.series_columns.iter().map(|&c| c as u16).collect(),
        series: series_index(rows, &spec.series_columns),
        time_column: spec.time_column.map(|t| t as u16),
        time_min,
        time_max,
        rows: rows.len as u64,
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
fn series_index(rows: &Batch, key_columns: &[usize]) -> Vec<SeriesEntry> {
    if key_columns.is_empty() || rows.len == 0 {
        return Vec::new();
    }
    let key_of = |r: usize| -> Vec<Option<Vec<u8>>> {
        key_columns
            .iter()
            .map(|&c| key_bytes(&rows.columns[c], r))
            .collect()
    };
    let mut out = Vec::new();
    let mut current = key_of(0);
    let mut first = 0usize;
    for r in 1..rows.len {
        let same = key_columns
            .iter()
            .zip(&current)
            .all(|(&c, k)| key_bytes(&rows.columns[c], r).as_deref() == k.as_deref());
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
        rows: (rows.len - first) as u32,
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
