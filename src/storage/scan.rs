//! Reading segments for a scan: prune block groups (and whole segments) by
//! the zone maps against the range predicates found in the filter, read the
//! needed columns' blocks that are not cached — adjacent blocks of a column
//! coalesced into one read, all reads of a window submitted together
//! through the shard's io_uring ring — and decode them straight into
//! executor batches holding only the needed columns.
//! Must not: evaluate the filter (the fragment does; pruning only skips
//! groups that cannot hold a matching row) or decode a block that fails its
//! checksum (that is SQLSTATE XX001 with the file and offset).

use std::rc::Rc;
use std::sync::Arc;

use super::cache::BlockKey;
use super::files::SegmentFile;
use super::segment::column::CachedBlock;
use super::segment::reader::{cache_block, decode_cached};
use super::segment::BlockMeta;
use crate::error::{DbError, DbResult};
use crate::exec::kernels::BinaryOp;
use crate::exec::vector::{Batch, Column};
use crate::runtime::storage_io::IoRequest;
use crate::runtime::ShardContext;
use crate::sql::plan::Expr;
use crate::types::{DataType, Datum};

pub const DATA_CORRUPTED: &str = "XX001";
/// Block groups read per window (a window's reads are submitted together).
const WINDOW_GROUPS: usize = 32;
/// Coalesced reads stop growing at this size.
const MAX_READ_BYTES: u64 = 4 << 20;

/// A closed range a column's values must fall in for a row to match.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Range {
    Int(i64, i64),
    Float(f64, f64),
}

/// Range predicates on columns (conjuncts of the filter), by table column.
#[derive(Debug, Clone, Default)]
pub struct Pruning {
    ranges: Vec<(usize, Range)>,
    /// `text_column = 'v'` / `IN ('v', …)`: the values a row's column must hold.
    texts: Vec<(usize, Vec<Vec<u8>>)>,
    /// `integer_column = v` / `IN (v, …)`: the same for integer columns.
    ints: Vec<(usize, Vec<i64>)>,
    /// Conjuncts that are exactly `column in [lo, hi]` on an integer-like
    /// column, and whether they are the whole filter: then a block whose
    /// zone lies inside every range (and has no NULLs there) matches whole.
    exact: Vec<(usize, i64, i64)>,
    only_exact: bool,
}

/// A range bound as a datum of column `c`'s type (timestamps, dates and integers).
fn int_datum(fields: &[crate::sql::plan::Field], c: usize, v: i64) -> Datum {
    match fields.get(c).map(|f| f.data_type) {
        Some(DataType::Int16) => Datum::Int16(v as i16),
        Some(DataType::Int32 | DataType::Date) => Datum::Int32(v as i32),
        _ => Datum::Int64(v),
    }
}

fn int_like(t: DataType) -> bool {
    matches!(
        t,
        DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Date
            | DataType::Timestamp
            | DataType::TimestampTz
    )
}

impl Pruning {
    /// Finds `column op literal` conjuncts (op: = < <= > >=, either side) and
    /// `column IN (literals)` in `filter`, whose columns index the table's columns.
    pub fn from_filter(filter: Option<&Expr>) -> Pruning {
        let mut p = Pruning::default();
        if let Some(f) = filter {
            p.only_exact = true;
            p.collect(f);
        }
        p
    }

    fn collect(&mut self, e: &Expr) {
        match e {
            Expr::Binary { sig, left, right } if sig.op == BinaryOp::And => {
                self.collect(left);
                self.collect(right);
            }
            Expr::Binary { sig, left, right } => {
                let (col, lit, op) = match (left.as_ref(), right.as_ref()) {
                    (Expr::Column(c, t), Expr::Literal(d, lt)) => ((*c, *t), (d, *lt), sig.op),
                    (Expr::Literal(d, lt), Expr::Column(c, t)) => {
                        ((*c, *t), (d, *lt), flip(sig.op))
                    }
                    _ => {
                        self.only_exact = false;
                        return;
                    }
                };
                let range = range_of(col.1, lit.0, lit.1, op);
                if let Some(r) = range {
                    self.ranges.push((col.0, r));
                }
                match range {
                    Some(Range::Int(lo, hi)) => self.exact.push((col.0, lo, hi)),
                    _ => self.only_exact = false,
                }
                if let (BinaryOp::Eq, Some(v)) = (op, text_of(col.1, lit.0)) {
                    self.texts.push((col.0, vec![v]));
                }
                if let (BinaryOp::Eq, Some(Range::Int(v, _))) = (op, range) {
                    self.ints.push((col.0, vec![v]));
                }
            }
            Expr::InList {
                expr,
                list,
                negated: false,
                ..
            } => {
                self.only_exact = false;
                let Expr::Column(c, t) = expr.as_ref() else {
                    return;
                };
                let texts: Option<Vec<Vec<u8>>> = list
                    .iter()
                    .map(|item| {
                        if let Expr::Literal(d, _) = item {
                            text_of(*t, d)
                        } else {
                            None
                        }
                    })
                    .collect();
                if let Some(texts) = texts {
                    self.texts.push((*c, texts));
                    return;
                }
                let ints: Option<Vec<i64>> = list
                    .iter()
                    .map(|item| match item {
                        Expr::Literal(d, lt) => match range_of(*t, d, *lt, BinaryOp::Eq) {
                            Some(Range::Int(v, _)) => Some(v),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                if let Some(ints) = ints {
                    self.ints.push((*c, ints));
                }
                let mut acc: Option<Range> = None;
                for item in list {
                    let Expr::Literal(d, lt) = item else { return };
                    let Some(r) = range_of(*t, d, *lt, BinaryOp::Eq) else {
                        return;
                    };
                    acc = Some(match (acc, r) {
                        (None, r) => r,
                        (Some(Range::Int(a, b)), Range::Int(x, y)) => {
                            Range::Int(a.min(x), b.max(y))
                        }
                        (Some(Range::Float(a, b)), Range::Float(x, y)) => {
                            Range::Float(a.min(x), b.max(y))
                        }
                        _ => return,
                    });
                }
                if let Some(r) = acc {
                    self.ranges.push((*c, r));
                }
            }
            _ => self.only_exact = false,
        }
    }

    /// The ranges and values that prune, as text over `fields` (for EXPLAIN).
    pub fn describe(&self, fields: &[crate::sql::plan::Field], format: &crate::types::FormatContext) -> Vec<String> {
        let name = |c: usize| fields.get(c).map_or_else(|| format!("${c}"), |f| f.name.clone());
        let value = |c: usize, v: Datum| {
            let t = fields.get(c).map_or(DataType::Int64, |f| f.data_type);
            let mut buf = Vec::new();
            crate::types::text::format_text(t, &v, format, &mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        };
        let mut out = Vec::new();
        for (c, r) in &self.ranges {
            let (lo, hi) = match *r {
                Range::Int(a, b) => (
                    (a != i64::MIN).then(|| value(*c, int_datum(fields, *c, a))),
                    (b != i64::MAX).then(|| value(*c, int_datum(fields, *c, b))),
                ),
                Range::Float(a, b) => (
                    a.is_finite().then(|| a.to_string()),
                    b.is_finite().then(|| b.to_string()),
                ),
            };
            match (lo, hi) {
                (Some(l), Some(h)) if l == h => out.push(format!("{} = {l}", name(*c))),
                (Some(l), Some(h)) => out.push(format!("{} in [{l}, {h}]", name(*c))),
                (Some(l), None) => out.push(format!("{} >= {l}", name(*c))),
                (None, Some(h)) => out.push(format!("{} <= {h}", name(*c))),
                (None, None) => {}
            }
        }
        for (c, values) in &self.texts {
            let vs: Vec<String> = values.iter().map(|v| format!("'{}'", String::from_utf8_lossy(v))).collect();
            out.push(format!("{} in ({})", name(*c), vs.join(", ")));
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty() && self.texts.is_empty()
    }

    /// Block groups holding rows of series whose key matches the text
    /// predicates on series key columns (None: no such predicate applies).
    fn series_groups(&self, seg: &SegmentFile) -> Option<Vec<bool>> {
        let f = &seg.footer;
        let mut allowed: Option<Vec<bool>> = None;
        for (col, values) in &self.texts {
            let Some(pos) = f.series_columns.iter().position(|&k| k as usize == *col) else {
                continue;
            };
            let mut groups = vec![false; f.groups.len()];
            // Group `g` holds rows `starts[g] .. starts[g + 1]`.
            let starts: Vec<u64> = std::iter::once(0)
                .chain(f.groups.iter().scan(0u64, |end, (rows, _)| {
                    *end += *rows as u64;
                    Some(*end)
                }))
                .collect();
            let group_of = |row: u64| starts.partition_point(|&s| s <= row) - 1;
            for s in &f.series {
                let hit = s
                    .key
                    .get(pos)
                    .and_then(|k| k.as_deref())
                    .is_some_and(|k| values.iter().any(|v| v.as_slice() == k));
                if hit && s.rows > 0 {
                    let first = group_of(s.first_row as u64);
                    let last = group_of(s.first_row as u64 + s.rows as u64 - 1);
                    for g in groups.iter_mut().take(last + 1).skip(first) {
                        *g = true;
                    }
                }
            }
            allowed = Some(match allowed {
                None => groups,
                Some(a) => a.iter().zip(&groups).map(|(x, y)| *x && *y).collect(),
            });
        }
        allowed
    }

    /// Whether a memtable whose few-valued integer columns hold `values` may
    /// hold a matching row (false when an `=`/`IN` asks only for values it lacks).
    pub fn memtable_may_match(&self, values: &crate::storage::memtable::DistinctValues) -> bool {
        self.ints.iter().all(|(c, wanted)| match values.get(*c) {
            Some(Some(set)) => wanted.iter().any(|v| set.contains(v)),
            _ => true,
        })
    }

    /// The rows of an in-memory block that may match, from its postings
    /// for an `=`/`IN` column (ascending); `None` when no postings apply.
    pub fn posting_rows(&self, index: &crate::storage::memtable::BlockIndex) -> Option<Vec<u32>> {
        let mut best: Option<Vec<u32>> = None;
        for (c, wanted) in &self.ints {
            let Some(Some(p)) = index.postings.get(*c) else { continue };
            let mut rows: Vec<u32> = wanted.iter().flat_map(|v| p.rows_of(*v)).map(|&r| r as u32).collect();
            rows.sort_unstable();
            rows.dedup();
            if best.as_ref().is_none_or(|b| rows.len() < b.len()) {
                best = Some(rows);
            }
        }
        best
    }

    /// Whether an in-memory block with these zones may hold a matching row.
    pub fn zones_may_match(&self, zones: &[Option<super::memtable::ColumnZone>]) -> bool {
        self.ranges.iter().all(|(c, r)| match (zones.get(*c).copied().flatten(), r) {
            (Some(z), Range::Int(lo, hi)) => !(z.max < *lo || z.min > *hi),
            _ => true,
        })
    }

    /// Whether every row of an in-memory block with these zones matches the filter.
    pub fn zones_all_match(&self, zones: &[Option<super::memtable::ColumnZone>]) -> bool {
        self.only_exact
            && self.exact.iter().all(|&(c, lo, hi)| {
                matches!(zones.get(c).copied().flatten(), Some(z) if !z.has_nulls && lo <= z.min && z.max <= hi)
            })
    }

    /// Whether every row of block group `g` of `seg` matches the filter.
    pub fn group_all_match(&self, seg: &SegmentFile, g: usize) -> bool {
        let blocks = &seg.footer.groups[g].1;
        self.only_exact
            && self.exact.iter().all(|&(c, lo, hi)| {
                blocks.get(c).is_some_and(|b| {
                    let h = &b.header;
                    let float = h.encoding == super::segment::column::ENC_FLOAT64
                        || h.encoding == super::segment::column::ENC_FLOAT32;
                    h.nulls == 0 && h.has_zone_map() && !float && lo <= h.min && h.max <= hi
                })
            })
    }

    /// Whether block group `g` of `seg` may hold a matching row.
    pub fn group_may_match(&self, seg: &SegmentFile, g: usize) -> bool {
        let blocks = &seg.footer.groups[g].1;
        self.ranges.iter().all(|(c, r)| match blocks.get(*c) {
            Some(b) => block_may_match(b, *r),
            None => true,
        })
    }
}

/// The bytes of a text literal compared with a text/varchar column.
fn text_of(col_type: DataType, lit: &Datum) -> Option<Vec<u8>> {
    match (col_type, lit) {
        (DataType::Text | DataType::Varchar(_), Datum::Bytes(b)) => Some(b.clone()),
        _ => None,
    }
}

fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

fn range_of(col_type: DataType, lit: &Datum, lit_type: DataType, op: BinaryOp) -> Option<Range> {
    if int_like(col_type)
        && col_type.physical() == lit_type.physical()
        && (col_type == lit_type || !is_time(col_type))
    {
        let v = lit.as_i64()?;
        return Some(match op {
            BinaryOp::Eq => Range::Int(v, v),
            BinaryOp::Lt => Range::Int(i64::MIN, v.checked_sub(1)?),
            BinaryOp::LtEq => Range::Int(i64::MIN, v),
            BinaryOp::Gt => Range::Int(v.checked_add(1)?, i64::MAX),
            BinaryOp::GtEq => Range::Int(v, i64::MAX),
            _ => return None,
        });
    }
    if matches!(col_type, DataType::Float64 | DataType::Float32)
        && matches!(lit_type, DataType::Float64 | DataType::Float32)
    {
        let v = match lit {
            Datum::Float64(f) => *f,
            Datum::Float32(f) => *f as f64,
            _ => return None,
        };
        if v.is_nan() {
            return None;
        }
        // Strict bounds are kept closed: pruning only needs to be conservative.
        return Some(match op {
            BinaryOp::Eq => Range::Float(v, v),
            BinaryOp::Lt | BinaryOp::LtEq => Range::Float(f64::NEG_INFINITY, v),
            BinaryOp::Gt | BinaryOp::GtEq => Range::Float(v, f64::INFINITY),
            _ => return None,
        });
    }
    None
}

fn is_time(t: DataType) -> bool {
    matches!(
        t,
        DataType::Date | DataType::Timestamp | DataType::TimestampTz
    )
}

fn block_may_match(b: &BlockMeta, r: Range) -> bool {
    let h = &b.header;
    if h.nulls == h.rows {
        return false; // a comparison with NULL is never true
    }
    if !h.has_zone_map() {
        return true;
    }
    match r {
        Range::Int(lo, hi) => {
            if b.header.encoding == super::segment::column::ENC_FLOAT64
                || b.header.encoding == super::segment::column::ENC_FLOAT32
            {
                return true;
            }
            !(h.max < lo || h.min > hi)
        }
        Range::Float(lo, hi) => {
            let (min, max) = (f64::from_bits(h.min as u64), f64::from_bits(h.max as u64));
            !(max < lo || min > hi)
        }
    }
}

/// Reads and decodes block groups `groups` of `seg`, columns `columns`
/// (table column indexes), into batches holding those columns in that order.
pub async fn read_groups(
    ctx: &Rc<ShardContext>,
    seg: &Rc<SegmentFile>,
    groups: &[usize],
    columns: &[usize],
    types: &[DataType],
) -> DbResult<Vec<Batch>> {
    let blocks = read_blocks(ctx, seg, groups, columns).await?;
    groups
        .iter()
        .zip(&blocks)
        .map(|(&g, group)| decode_group(seg, g, group, columns, types))
        .collect()
}

/// Decodes one block group's cached blocks (`read_blocks`' order) into a
/// batch.
pub fn decode_group(
    seg: &SegmentFile,
    g: usize,
    blocks: &[Rc<CachedBlock>],
    columns: &[usize],
    types: &[DataType],
) -> DbResult<Batch> {
    let file_name = seg.path.display().to_string();
    let rows = seg.footer.groups[g].0 as usize;
    let mut cols = Vec::with_capacity(columns.len());
    for (block, &c) in blocks.iter().zip(columns) {
        let Some(meta) = seg.footer.groups[g].1.get(c) else {
            // A column added after the segment was written.
            cols.push(Arc::new(Column::from_datum(types[c], &Datum::Null, rows)));
            continue;
        };
        let col = decode_cached(&file_name, meta, block, types[c]).map_err(corrupt)?;
        cols.push(Arc::new(col));
    }
    Ok(Batch::new(cols, rows))
}

/// What a segment written before an `ALTER TABLE … ADD COLUMN` holds of
/// the added column in a group of `rows` rows: NULLs only (no zone map, no
/// sum; [`decode_group`] makes the column).
fn absent_block(rows: u32) -> CachedBlock {
    let header = super::segment::BlockHeader { rows, nulls: rows, ..Default::default() };
    CachedBlock { header, payload: Vec::new() }
}

fn corrupt(e: super::segment::SegmentError) -> DbError {
    DbError::new(DATA_CORRUPTED, e.to_string())
}

/// One read of contiguous blocks: (file offset, length, the blocks it holds as
/// (group index, column index, block)).
type CoalescedRead = (u64, u64, Vec<(usize, usize, BlockMeta)>);

/// The cached blocks of groups `groups` of `seg`, columns `columns`, read
/// (and cached) where missing: per group, one block per column in order.
pub async fn read_blocks(
    ctx: &Rc<ShardContext>,
    seg: &Rc<SegmentFile>,
    groups: &[usize],
    columns: &[usize],
) -> DbResult<Vec<Vec<Rc<CachedBlock>>>> {
    let file_name = seg.path.display().to_string();
    // 1. What is missing from the cache, coalesced into contiguous reads.
    let mut have: Vec<Vec<Option<Rc<CachedBlock>>>> = Vec::with_capacity(groups.len());
    let mut reads: Vec<CoalescedRead> = Vec::new();
    {
        let mut storage = ctx.storage.borrow_mut();
        for &g in groups {
            have.push(
                columns
                    .iter()
                    .map(|&c| {
                        if !seg.has_column(c) {
                            return Some(Rc::new(absent_block(seg.footer.groups[g].0)));
                        }
                        storage.cache.get(&BlockKey {
                            segment: seg.cache_key,
                            column: c as u32,
                            group: g as u32,
                        })
                    })
                    .collect(),
            );
        }
    }
    // Column-major layout: a column's blocks of consecutive groups are adjacent.
    for (ci, &c) in columns.iter().enumerate() {
        for (gi, &g) in groups.iter().enumerate() {
            if have[gi][ci].is_some() {
                continue;
            }
            let meta = seg.footer.groups[g].1[c];
            match reads.last_mut() {
                Some((off, len, parts))
                    if *off + *len == meta.offset && *len + meta.len as u64 <= MAX_READ_BYTES =>
                {
                    *len += meta.len as u64;
                    parts.push((gi, ci, meta));
                }
                _ => reads.push((meta.offset, meta.len as u64, vec![(gi, ci, meta)])),
            }
        }
    }
    if !reads.is_empty() {
        let requests = reads
            .iter()
            .map(|(off, len, _)| IoRequest::Read {
                file: Arc::clone(&seg.file),
                offset: *off,
                len: *len as usize,
            })
            .collect();
        let results = ctx.storage_io().submit(requests).await;
        let mut storage = ctx.storage.borrow_mut();
        for ((off, _, parts), res) in reads.into_iter().zip(results) {
            let bytes = res.map_err(|e| {
                DbError::new(
                    DATA_CORRUPTED,
                    format!("segment {file_name}: cannot read at byte {off}: {e}"),
                )
            })?;
            for (gi, ci, meta) in parts {
                let start = (meta.offset - off) as usize;
                let block = Rc::new(
                    cache_block(&file_name, &meta, &bytes[start..start + meta.len as usize])
                        .map_err(corrupt)?,
                );
                let key = BlockKey {
                    segment: seg.cache_key,
                    column: columns[ci] as u32,
                    group: groups[gi] as u32,
                };
                storage.cache.insert(key, block.clone());
                have[gi][ci] = Some(block);
            }
        }
    }
    have.into_iter()
        .map(|group| {
            group
                .into_iter()
                .map(|b| b.ok_or_else(|| DbError::internal("block missing after read")))
                .collect()
        })
        .collect()
}

/// The block groups of `seg` a scan with `pruning` must read, in windows.
pub fn groups_to_read(seg: &SegmentFile, pruning: &Pruning) -> Vec<Vec<usize>> {
    let series = pruning.series_groups(seg);
    let wanted: Vec<usize> = (0..seg.footer.groups.len())
        .filter(|&g| series.as_ref().is_none_or(|s| s[g]) && pruning.group_may_match(seg, g))
        .collect();
    wanted.chunks(WINDOW_GROUPS).map(|c| c.to_vec()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::BinarySignature;
    use crate::exec::vector::Column;
    use crate::storage::segment::writer::{write_segment, SegmentSpec};
    use crate::storage::segment::SegmentColumn;

    /// 3 hosts × 10,000 rows sorted by (host, time): 30,000 rows in 4 groups.
    fn segment() -> SegmentFile {
        hosts_segment(3, 10_000, 1_000_000_000)
    }

    /// `hosts` hosts × `per_host` rows `step_ns` apart, sorted by (host, time).
    fn hosts_segment(hosts: usize, per_host: usize, step_ns: i64) -> SegmentFile {
        let n = hosts * per_host;
        let host: Vec<Datum> = (0..n).map(|i| Datum::Bytes(format!("host_{}", i / per_host).into_bytes())).collect();
        let time: Vec<Datum> = (0..n).map(|i| Datum::Int64((i % per_host) as i64 * step_ns)).collect();
        let rows = crate::exec::vector::Batch::from_columns(vec![
            Column::from_datums(DataType::TimestampTz, &time),
            Column::from_datums(DataType::Text, &host),
        ]);
        let columns = vec![
            SegmentColumn { name: "time".into(), type_oid: DataType::TimestampTz.oid() },
            SegmentColumn { name: "hostname".into(), type_oid: DataType::Text.oid() },
        ];
        let spec = SegmentSpec { table: 1, shard: 0, segment: 0, columns, series_columns: vec![1], time_column: Some(0) };
        let (bytes, footer) = write_segment(&spec, &rows);
        let file = Arc::new(std::fs::File::open("/dev/null").unwrap());
        SegmentFile::from_written("/dev/null".into(), 0, file, footer, bytes.len() as u64, 1, 0)
    }

    #[test]
    fn a_few_hours_of_every_series_reads_only_the_groups_of_those_hours() {
        // TSBS's shape: a day every 10 s per host, block groups cut at 3-hour windows
        let seg = hosts_segment(3, 8_640, 10_000_000_000);
        // 8 windows of 3 h (1,080 rows) per host
        assert_eq!(seg.footer.groups.len(), 24);
        assert!(seg.footer.groups.iter().all(|(rows, _)| *rows == 1_080));
        let h = |x: i64| Datum::Int64(x * 3_600_000_000_000);
        let hours = |from: i64, to: i64| {
            let p = Pruning::from_filter(Some(&Expr::and(
                cmp(BinaryOp::GtEq, 0, DataType::TimestampTz, h(from)),
                cmp(BinaryOp::Lt, 0, DataType::TimestampTz, h(to)),
            )));
            let read = groups_to_read(&seg, &p).concat();
            let whole: Vec<usize> = read.iter().copied().filter(|&g| p.group_all_match(&seg, g)).collect();
            (read, whole)
        };
        // 06:00-12:00 is windows 2 and 3 of each host, both wholly inside
        assert_eq!(hours(6, 12), (vec![2, 3, 10, 11, 18, 19], vec![2, 3, 10, 11, 18, 19]));
        // 07:00-09:00 lies inside window 2: read, filtered
        assert_eq!(hours(7, 9), (vec![2, 10, 18], vec![]));
        // the series index maps a host onto its own groups (not 8192-row strides)
        let host = |name: &str| {
            let p = Pruning::from_filter(Some(&cmp(BinaryOp::Eq, 1, DataType::Text, Datum::Bytes(name.as_bytes().to_vec()))));
            groups_to_read(&seg, &p).concat()
        };
        assert_eq!(host("host_1"), (8..16).collect::<Vec<_>>());
        assert_eq!(host("host_2"), (16..24).collect::<Vec<_>>());
    }

    fn cmp(op: BinaryOp, col: usize, t: DataType, v: Datum) -> Expr {
        Expr::Binary {
            sig: BinarySignature { op, left: t, right: t, result: DataType::Bool },
            left: Box::new(Expr::Column(col, t)),
            right: Box::new(Expr::Literal(v, t)),
        }
    }

    fn groups(filter: Expr) -> Vec<usize> {
        groups_to_read(&segment(), &Pruning::from_filter(Some(&filter))).concat()
    }

    #[test]
    fn the_series_index_selects_the_groups_of_a_tag_value() {
        // host_1 is rows 10,000..20,000: groups 1 and 2 (8192-row groups).
        assert_eq!(groups(cmp(BinaryOp::Eq, 1, DataType::Text, Datum::Bytes(b"host_1".to_vec()))), vec![1, 2]);
        assert_eq!(groups(cmp(BinaryOp::Eq, 1, DataType::Text, Datum::Bytes(b"host_9".to_vec()))), Vec::<usize>::new());
        let list = Expr::InList {
            expr: Box::new(Expr::Column(1, DataType::Text)),
            list: vec![Expr::Literal(Datum::Bytes(b"host_0".to_vec()), DataType::Text)],
            eq: BinarySignature { op: BinaryOp::Eq, left: DataType::Text, right: DataType::Text, result: DataType::Bool },
            negated: false,
        };
        assert_eq!(groups(list), vec![0, 1]);
    }

    #[test]
    fn zone_maps_prune_groups_by_range() {
        // Within each host, time runs 0..10,000 s; group 3 (rows 24,576..30,000) holds host_2's times 4,576 s and up.
        let late = cmp(BinaryOp::Gt, 0, DataType::TimestampTz, Datum::Int64(9_990 * 1_000_000_000));
        assert_eq!(groups(late), vec![1, 2, 3]);
        let never = cmp(BinaryOp::Lt, 0, DataType::TimestampTz, Datum::Int64(-1));
        assert_eq!(groups(never), Vec::<usize>::new());
    }

    #[test]
    fn a_group_matches_whole_only_when_the_filter_is_ranges_its_zones_lie_within() {
        let seg = segment();
        let whole = |filter: Expr| -> Vec<bool> {
            let p = Pruning::from_filter(Some(&filter));
            (0..seg.footer.groups.len()).map(|g| p.group_all_match(&seg, g)).collect()
        };
        let ts = |s: i64| Datum::Int64(s * 1_000_000_000);
        // group 3 holds host_2's times 4,576..9,999 s; the others span 0..9,999 s
        let from = cmp(BinaryOp::GtEq, 0, DataType::TimestampTz, ts(4_576));
        assert_eq!(whole(from.clone()), vec![false, false, false, true]);
        assert_eq!(whole(cmp(BinaryOp::Gt, 0, DataType::TimestampTz, ts(4_576))), vec![false; 4]);
        let below = cmp(BinaryOp::Lt, 0, DataType::TimestampTz, ts(10_000));
        assert_eq!(whole(Expr::and(from.clone(), below.clone())), vec![false, false, false, true]);
        assert_eq!(whole(below.clone()), vec![true; 4]);
        // a conjunct that is not an exact range keeps the filter on every group
        let host = cmp(BinaryOp::Eq, 1, DataType::Text, Datum::Bytes(b"host_2".to_vec()));
        assert_eq!(whole(Expr::and(below, host)), vec![false; 4]);
    }
}
