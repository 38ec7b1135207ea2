//! Columnar memtable: rows arrive as column batches and are kept as sealed
//! blocks of `BATCH_ROWS` rows (immutable, `Arc`-shared, handed to scans
//! without copying, each with the min/max of its integer and time columns
//! so scans skip blocks as they skip segment block groups) plus one open
//! block being filled.
//! Must not: interpret SQL or evaluate expressions.

use std::sync::Arc;

use crate::exec::vector::{Batch, BytesColumn, Column, ColumnData, ColumnRef, BATCH_ROWS};
use crate::types::DataType;

/// The values of one integer, date or timestamp column of a sealed block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnZone {
    /// Smallest and largest non-NULL value.
    pub min: i64,
    pub max: i64,
    pub has_nulls: bool,
}

/// Per column of a sealed block: its zone, or `None` for a column of
/// another type or with only NULLs.
pub type Zones = Vec<Option<ColumnZone>>;

/// The rows of a sealed block holding each value of a few-valued integer
/// column (a series key): `rows[starts[i]..starts[i + 1]]` hold `values[i]`.
/// A scan for one series gathers its rows instead of filtering the block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Postings {
    values: Vec<i64>,
    starts: Vec<u32>,
    rows: Vec<u16>,
}

impl Postings {
    fn build(values: impl Iterator<Item = Option<i64>>) -> Postings {
        let mut pairs: Vec<(i64, u16)> = values
            .enumerate()
            .filter_map(|(r, v)| v.map(|v| (v, r as u16)))
            .collect();
        pairs.sort_unstable();
        let mut p = Postings::default();
        for (v, r) in pairs {
            if p.values.last() != Some(&v) {
                p.values.push(v);
                p.starts.push(p.rows.len() as u32);
            }
            p.rows.push(r);
        }
        p.starts.push(p.rows.len() as u32);
        p
    }

    /// The rows (ascending) holding value `v`.
    pub fn rows_of(&self, v: i64) -> &[u16] {
        match self.values.binary_search(&v) {
            Ok(i) => &self.rows[self.starts[i] as usize..self.starts[i + 1] as usize],
            Err(_) => &[],
        }
    }
}

/// A batch whose variable-length columns that hold one value on every row
/// keep it once (an MCAP topic's covariance arrays and frame ids, which never
/// change within a recording: most of the bytes a recording's rows held).
/// Readers get rows through [`CompactBatch::columns`] and
/// [`CompactBatch::to_batch`], which spell such a column out again.
#[derive(Debug, Clone)]
pub struct CompactBatch {
    /// The columns; a column marked in `repeated` holds one row.
    batch: Batch,
    repeated: Vec<bool>,
}

/// Below this many rows a repeated value is kept as it is.
const MIN_REPEAT_ROWS: usize = 16;
/// Nor is a value shorter than this (a short text tag): spelling it out for
/// every scan would cost more than its bytes save. Covariance arrays are
/// 92 and 308 bytes.
const MIN_REPEAT_VALUE_BYTES: u32 = 32;

impl CompactBatch {
    /// `batch` with each column that repeats one value kept once.
    pub fn new(mut batch: Batch) -> CompactBatch {
        let mut repeated = vec![false; batch.columns.len()];
        if batch.len >= MIN_REPEAT_ROWS {
            for (c, flag) in batch.columns.iter_mut().zip(&mut repeated) {
                if let Some(one) = single_value(c) {
                    *c = Arc::new(one);
                    *flag = true;
                }
            }
        }
        CompactBatch { batch, repeated }
    }

    /// `batch` whose columns marked in `repeated` hold one value for every
    /// row (an MCAP decoder's batch); the others are checked for repeats as
    /// [`CompactBatch::new`] does. A mark on a column holding a value per
    /// row (one a caller filled with NULLs in its place) is dropped.
    pub fn from_repeated(batch: Batch, mut repeated: Vec<bool>) -> CompactBatch {
        repeated.resize(batch.columns.len(), false);
        for (c, flag) in batch.columns.iter().zip(&mut repeated) {
            let one = matches!(&c.data, ColumnData::Bytes(b) if b.len() == 1) && c.validity.is_none();
            *flag &= one && batch.len > 1;
        }
        let marked = CompactBatch { batch, repeated };
        if marked.len() < MIN_REPEAT_ROWS {
            // Too few rows to keep anything once: spelled out whole.
            return CompactBatch::new(marked.to_batch());
        }
        let CompactBatch { batch, repeated } = marked;
        let mut compact = CompactBatch::new(batch);
        for (flag, given) in compact.repeated.iter_mut().zip(repeated) {
            *flag |= given;
        }
        compact
    }

    pub fn len(&self) -> usize {
        self.batch.len
    }

    pub fn is_empty(&self) -> bool {
        self.batch.len == 0
    }

    /// Whether some column is kept as one value.
    pub fn is_compact(&self) -> bool {
        self.repeated.contains(&true)
    }

    /// Bytes held (a repeated value counted once).
    pub fn byte_size(&self) -> usize {
        self.batch.byte_size()
    }

    /// A batch none of whose columns is kept once (an open block's rows).
    pub fn plain(batch: Batch) -> CompactBatch {
        let repeated = vec![false; batch.columns.len()];
        CompactBatch { batch, repeated }
    }

    /// Column `c` as it is held, and whether it holds one value standing
    /// for every row (then it has one row and no NULLs).
    pub fn stored_column(&self, c: usize) -> (&Column, bool) {
        (&self.batch.columns[c], self.repeated[c])
    }

    /// Appends column `c`'s rows `from..from + n` to `out` (a value kept
    /// once written out `n` times).
    pub fn append_rows(&self, c: usize, from: usize, n: usize, out: &mut Column) {
        match self.stored_column(c) {
            (col, true) => out.extend_repeated(col, 0, n),
            (col, false) if n == 1 => out.push_row(col, from),
            (col, false) => out.extend_range(col, from, n),
        }
    }

    /// Bytes the rows take spelled out.
    pub fn spelled_byte_size(&self) -> usize {
        let once: usize = (0..self.batch.columns.len())
            .filter(|&c| self.repeated[c])
            .map(|c| self.batch.columns[c].byte_size() * self.batch.len.saturating_sub(1))
            .sum();
        self.batch.byte_size() + once
    }

    /// Column `c`'s rows (shared unless kept as one repeated value).
    pub fn column(&self, c: usize) -> ColumnRef {
        let col = &self.batch.columns[c];
        if self.repeated[c] {
            Arc::new(col.repeat_first(self.batch.len))
        } else {
            col.clone()
        }
    }

    /// The rows of the given columns, in that order.
    pub fn columns(&self, columns: &[usize]) -> Batch {
        Batch::new(columns.iter().map(|&c| self.column(c)).collect(), self.batch.len)
    }

    /// The rows with columns `keep..` replaced by NULL columns of
    /// `types[keep..]` (an `ALTER TABLE … ADD COLUMN`: see [`Memtable::widen`]).
    pub fn widened(&self, keep: usize, types: &[DataType]) -> CompactBatch {
        let len = self.batch.len;
        let mut columns = self.batch.columns.clone();
        let mut repeated = self.repeated.clone();
        columns.truncate(keep);
        repeated.truncate(keep);
        // Not `Batch::padded_to`: a column kept once holds one row.
        let missing = types.get(columns.len()..).unwrap_or(&[]);
        columns.extend(missing.iter().map(|&t| Arc::new(Column::from_datum(t, &crate::types::Datum::Null, len))));
        repeated.resize(columns.len(), false);
        CompactBatch { batch: Batch { columns, len }, repeated }
    }

    /// Every column's rows.
    pub fn to_batch(&self) -> Batch {
        if !self.is_compact() {
            return self.batch.clone();
        }
        Batch::new((0..self.batch.columns.len()).map(|c| self.column(c)).collect(), self.batch.len)
    }
}

/// A sealed block and what a scan knows of it without reading it.
#[derive(Debug)]
pub struct SealedBlock {
    pub rows: CompactBatch,
    pub index: Arc<BlockIndex>,
}

impl SealedBlock {
    /// The block with columns `keep..` replaced by NULL columns of
    /// `types[keep..]`; such columns have no zone and no postings.
    pub fn widened(&self, keep: usize, types: &[DataType]) -> SealedBlock {
        let mut index = (*self.index).clone();
        index.zones.truncate(keep);
        index.zones.resize(types.len(), None);
        index.postings.truncate(keep);
        index.postings.resize(types.len(), None);
        SealedBlock {
            rows: self.rows.widened(keep, types),
            index: Arc::new(index),
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// `col` as one row when it is a variable-length column without NULLs
/// whose rows all hold the same bytes.
fn single_value(col: &Column) -> Option<Column> {
    let ColumnData::Bytes(b) = &col.data else { return None };
    if col.validity.is_some() || b.len() < 2 {
        return None;
    }
    let width = b.offsets[1] - b.offsets[0];
    if width < MIN_REPEAT_VALUE_BYTES {
        return None;
    }
    // Equal lengths first (cheap), then the bytes.
    if b.offsets.windows(2).any(|w| w[1] - w[0] != width) {
        return None;
    }
    let first = b.get(0);
    if !(1..b.len()).all(|i| b.get(i) == first) {
        return None;
    }
    let mut one = BytesColumn::with_capacity(1, first.len());
    one.push(first);
    Some(Column::new(col.data_type, ColumnData::Bytes(one), None))
}

/// Whether a batch of `rows` rows holding `bytes` bytes is about a block's
/// size (a COPY's or an MCAP topic's batch).
fn is_block_sized(rows: usize, bytes: usize) -> bool {
    let near_a_block = rows >= BATCH_ROWS / 2 || bytes >= BLOCK_MAX_BYTES / 2;
    near_a_block && rows <= BATCH_ROWS && bytes <= 2 * BLOCK_MAX_BYTES
}

/// The sealed blocks, shared whole with scans: taking a snapshot is one
/// reference, and an append copies the list of pointers only while a scan
/// still holds the old one.
pub type SealedBlocks = Arc<Vec<Arc<SealedBlock>>>;

/// What a scan knows about a sealed block without reading it.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockIndex {
    pub zones: Zones,
    /// Per column: postings when the memtable tracks its distinct values.
    pub postings: Vec<Option<Postings>>,
}

/// A memtable's first integer column keeps the set of its distinct values up
/// to this many (a series key such as TSBS's tags_id); past it, no set.
const MAX_TRACKED_VALUES: usize = 4096;

/// Per column: every non-NULL value the memtable holds, when an integer
/// column has few distinct values; `None` otherwise. A scan whose filter
/// asks for values a shard never received skips its whole memtable (rows
/// of a series all live on one shard).
pub type DistinctValues = Vec<Option<hashbrown::HashSet<i64>>>;

fn index_of(batch: &Batch, tracked: &DistinctValues) -> Arc<BlockIndex> {
    let postings = batch
        .columns
        .iter()
        .zip(tracked)
        .map(|(c, t)| {
            t.as_ref()?;
            let value = |i: usize, v: i64| c.is_valid(i).then_some(v);
            Some(match &c.data {
                ColumnData::Int16(v) => Postings::build(v.iter().enumerate().map(|(i, &x)| value(i, x as i64))),
                ColumnData::Int32(v) => Postings::build(v.iter().enumerate().map(|(i, &x)| value(i, x as i64))),
                ColumnData::Int64(v) => Postings::build(v.iter().enumerate().map(|(i, &x)| value(i, x))),
                _ => return None,
            })
        })
        .collect();
    Arc::new(BlockIndex {
        zones: zones_of(batch),
        postings,
    })
}

fn zones_of(batch: &Batch) -> Zones {
    fn range<T: Copy + Into<i64>>(v: &[T], col: &Column) -> Option<ColumnZone> {
        let mut out: Option<(i64, i64)> = None;
        for (i, &x) in v.iter().enumerate() {
            if col.is_valid(i) {
                let x: i64 = x.into();
                out = Some(match out {
                    None => (x, x),
                    Some((lo, hi)) => (lo.min(x), hi.max(x)),
                });
            }
        }
        out.map(|(min, max)| ColumnZone {
            min,
            max,
            has_nulls: col.null_count() > 0,
        })
    }
    batch
        .columns
        .iter()
        .map(|c| match &c.data {
            ColumnData::Int16(v) => range(v, c),
            ColumnData::Int32(v) => range(v, c),
            ColumnData::Int64(v) => range(v, c),
            _ => None,
        })
        .collect()
}

/// `blocks` with columns `keep..` replaced by NULL columns of `types[keep..]`
/// (see [`Memtable::widen`]).
pub fn widen_blocks(blocks: &SealedBlocks, keep: usize, types: &[DataType]) -> SealedBlocks {
    Arc::new(blocks.iter().map(|b| Arc::new(b.widened(keep, types))).collect())
}

/// A block is sealed once its values reach this many bytes, however few its rows.
pub const BLOCK_MAX_BYTES: usize = 8 << 20;

/// The rows of one table on one shard.
#[derive(Debug)]
pub struct Memtable {
    types: Vec<DataType>,
    sealed: SealedBlocks,
    distinct: Arc<DistinctValues>,
    open: Vec<Column>,
    open_rows: usize,
}

impl Memtable {
    pub fn new(types: Vec<DataType>) -> Memtable {
        // Only the first integer column is a series-key candidate (as routing
        // picks it: TSBS's tags_id); tracking every integer column would build
        // postings for measurement values (line protocol's integer fields) too.
        let first_int = types
            .iter()
            .position(|t| matches!(t, DataType::Int16 | DataType::Int32 | DataType::Int64));
        let distinct = Arc::new(
            (0..types.len())
                .map(|i| (Some(i) == first_int).then(Default::default))
                .collect(),
        );
        let open = types
            .iter()
            .map(|t| Column::with_capacity(*t, BATCH_ROWS))
            .collect();
        Memtable {
            types,
            sealed: Default::default(),
            distinct,
            open,
            open_rows: 0,
        }
    }

    pub fn row_count(&self) -> usize {
        self.sealed.iter().map(|b| b.len()).sum::<usize>() + self.open_rows
    }

    /// Gives the memtable the columns `types`: its columns `keep..` become
    /// NULL columns of `types[keep..]` in every block (an `ALTER TABLE …
    /// ADD COLUMN` adds columns holding NULL on every row already there;
    /// `keep` below the memtable's width undoes one whose catalog change
    /// failed). Costs a NULL column per block, never a copy of the rows.
    pub fn widen(&mut self, keep: usize, types: &[DataType]) {
        let keep = keep.min(self.types.len()).min(types.len());
        self.types = types.to_vec();
        self.open.truncate(keep);
        for &t in &types[keep..] {
            let mut col = Column::with_capacity(t, BATCH_ROWS);
            col.extend(&Column::from_datum(t, &crate::types::Datum::Null, self.open_rows));
            self.open.push(col);
        }
        let distinct = Arc::make_mut(&mut self.distinct);
        distinct.truncate(keep);
        distinct.resize(types.len(), None);
        self.sealed = widen_blocks(&self.sealed, keep, types);
    }

    /// Appends a batch of the table's columns (one lacking the last ones,
    /// written before an ADD COLUMN, reads NULL there).
    pub fn append(&mut self, batch: &Batch) {
        if batch.columns.len() < self.types.len() {
            return self.append(&batch.clone().padded_to(&self.types));
        }
        debug_assert_eq!(batch.columns.len(), self.types.len());
        self.track_distinct(batch);
        // Rows of this batch that make a block: BATCH_ROWS, fewer when rows
        // are large (camera frames, scans), so that a block stays near
        // BLOCK_MAX_BYTES instead of growing to gigabytes by doubling.
        let bytes = batch.byte_size();
        let row_bytes = (bytes / batch.len.max(1)).max(1);
        let block_rows = (BLOCK_MAX_BYTES / row_bytes).clamp(1, BATCH_ROWS);
        if is_block_sized(batch.len, bytes) {
            self.seal_whole(CompactBatch::new(batch.clone()));
            return;
        }
        let mut offset = 0;
        while offset < batch.len {
            let remaining = batch.len - offset;
            if self.open_rows == 0 && remaining >= block_rows {
                // A block's worth arriving at an empty open block is sealed as
                // it comes (shared when it is the whole batch), not copied in.
                let piece = if block_rows == batch.len { batch.clone() } else { batch.slice(offset, block_rows) };
                self.seal(piece);
                offset += block_rows;
                continue;
            }
            let take = (BATCH_ROWS - self.open_rows).min(remaining).min(block_rows);
            for (open, src) in self.open.iter_mut().zip(&batch.columns) {
                if offset == 0 && take == src.len() {
                    open.extend(src);
                } else {
                    open.extend(&src.slice(offset, take));
                }
            }
            self.open_rows += take;
            offset += take;
            if self.open_rows == BATCH_ROWS || self.open.iter().map(Column::value_bytes).sum::<usize>() >= BLOCK_MAX_BYTES {
                self.seal_open();
            }
        }
    }

    fn seal_open(&mut self) {
        let fresh = self
            .types
            .iter()
            .map(|t| Column::with_capacity(*t, BATCH_ROWS))
            .collect();
        let full = std::mem::replace(&mut self.open, fresh);
        let block = Batch::new(full.into_iter().map(Arc::new).collect(), self.open_rows);
        self.seal(block);
        self.open_rows = 0;
    }

    /// Seals `batch` as a block, its repeated values kept once.
    fn seal(&mut self, batch: Batch) {
        self.seal_rows(CompactBatch::new(batch));
    }

    /// Seals rows already compacted. Zones and postings read integer
    /// columns only, which a compact batch holds whole.
    fn seal_rows(&mut self, rows: CompactBatch) {
        let index = index_of(&rows.batch, &self.distinct);
        Arc::make_mut(&mut self.sealed).push(Arc::new(SealedBlock { rows, index }));
    }

    /// A block-sized batch arriving becomes a block as it is, shared:
    /// cutting it to the exact block size would copy every value. Rows
    /// already open are sealed first, as a smaller block: copying them and
    /// the batch into a fresh block instead would leave the open block
    /// partly filled again, so every later batch would be copied too.
    fn seal_whole(&mut self, rows: CompactBatch) {
        if self.open_rows > 0 {
            self.seal_open();
        }
        self.seal_rows(rows);
    }

    /// Appends rows already compacted (an MCAP batch, compacted as it came):
    /// a batch of about a block's size is sealed as it is, others are
    /// spelled out and appended.
    pub fn append_compact(&mut self, rows: CompactBatch) {
        let rows = match rows.batch.columns.len() < self.types.len() {
            true => rows.widened(rows.batch.columns.len(), &self.types),
            false => rows,
        };
        if !is_block_sized(rows.len(), rows.byte_size()) {
            self.append(&rows.to_batch());
            return;
        }
        debug_assert_eq!(rows.batch.columns.len(), self.types.len());
        self.track_distinct(&rows.batch);
        self.seal_whole(rows);
    }

    /// The sealed blocks (shared) and a copy of the open block's rows.
    pub fn scan_parts(&self) -> (SealedBlocks, Option<Batch>) {
        let open = (self.open_rows > 0).then(|| {
            Batch::new(self.open.iter().map(|c| Arc::new(c.clone())).collect(), self.open_rows)
        });
        (self.sealed.clone(), open)
    }

    fn track_distinct(&mut self, batch: &Batch) {
        if self.distinct.iter().all(Option::is_none) {
            return;
        }
        let distinct = Arc::make_mut(&mut self.distinct);
        for (slot, col) in distinct.iter_mut().zip(&batch.columns) {
            let Some(set) = slot else { continue };
            let mut add = |v: i64, i: usize| {
                if col.is_valid(i) {
                    set.insert(v);
                }
            };
            match &col.data {
                ColumnData::Int16(v) => v.iter().enumerate().for_each(|(i, &x)| add(x as i64, i)),
                ColumnData::Int32(v) => v.iter().enumerate().for_each(|(i, &x)| add(x as i64, i)),
                ColumnData::Int64(v) => v.iter().enumerate().for_each(|(i, &x)| add(x, i)),
                _ => {}
            }
            if set.len() > MAX_TRACKED_VALUES {
                *slot = None;
            }
        }
    }

    /// The distinct values of the memtable's few-valued integer columns.
    pub fn distinct_values(&self) -> Arc<DistinctValues> {
        self.distinct.clone()
    }

    /// All rows as batches: sealed blocks shared, the open block copied.
    pub fn snapshot(&self) -> Vec<Batch> {
        let (sealed, open) = self.scan_parts();
        sealed.iter().map(|b| b.rows.to_batch()).chain(open).collect()
    }

    pub fn truncate(&mut self) {
        *self = Memtable::new(self.types.clone());
    }

    /// Takes every row out (for a flush), leaving the memtable empty.
    pub fn take_all(&mut self) -> Vec<Batch> {
        let rows = self.snapshot();
        self.truncate();
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    /// A value long enough to be kept once when it repeats.
    const LONG: &str = "a value longer than 32 bytes, as a covariance array is";

    fn ints(n: usize, start: i64) -> Batch {
        let v: Vec<Datum> = (0..n as i64).map(|i| Datum::Int64(start + i)).collect();
        Batch::from_columns(vec![Column::from_datums(DataType::Int64, &v)])
    }

    #[test]
    fn a_column_repeating_one_value_is_kept_once_and_read_back_whole() {
        let n = BATCH_ROWS;
        let text = |i: usize| Datum::text(if i == 7 { "other" } else { LONG });
        let same: Vec<Datum> = (0..n).map(|_| Datum::text(LONG)).collect();
        let differs: Vec<Datum> = (0..n).map(text).collect();
        let with_null: Vec<Datum> = (0..n).map(|i| if i == 3 { Datum::Null } else { Datum::text("x") }).collect();
        let types = vec![DataType::Int64, DataType::Text, DataType::Text, DataType::Text];
        let ints: Vec<Datum> = (0..n as i64).map(Datum::Int64).collect();
        let batch = Batch::from_columns(vec![
            Column::from_datums(DataType::Int64, &ints),
            Column::from_datums(DataType::Text, &same),
            Column::from_datums(DataType::Text, &differs),
            Column::from_datums(DataType::Text, &with_null),
        ]);
        let mut m = Memtable::new(types);
        m.append(&batch);
        let (sealed, _) = m.scan_parts();
        assert_eq!(sealed.len(), 1);
        let block = &sealed[0];
        assert_eq!(block.rows.repeated, vec![false, true, false, false]);
        assert_eq!(block.rows.batch.columns[1].len(), 1, "kept once");
        for c in 0..4 {
            assert_eq!(*block.rows.column(c), *batch.columns[c], "column {c} reads back whole");
        }
        let narrow = block.rows.columns(&[1, 0]);
        assert_eq!(narrow.len, n);
        assert_eq!(*narrow.columns[0], *batch.columns[1]);
        let snap = m.snapshot();
        assert_eq!(snap.len(), 1);
        assert_eq!(snap[0].row(n - 1), batch.row(n - 1));
        assert_eq!(m.row_count(), n);
    }

    #[test]
    fn compacted_rows_seal_as_they_are_and_small_ones_are_spelled_out() {
        let rows = |n: usize, start: i64| {
            let ints: Vec<Datum> = (start..start + n as i64).map(Datum::Int64).collect();
            let same: Vec<Datum> = (0..n).map(|_| Datum::text(LONG)).collect();
            let short: Vec<Datum> = (0..n).map(|_| Datum::text("odom")).collect();
            Batch::from_columns(vec![
                Column::from_datums(DataType::Int64, &ints),
                Column::from_datums(DataType::Text, &same),
                Column::from_datums(DataType::Text, &short),
            ])
        };
        let types = [DataType::Int64, DataType::Text, DataType::Text];
        let mut m = Memtable::new(types.to_vec());
        m.append_compact(CompactBatch::new(rows(100, 0)));
        m.append_compact(CompactBatch::new(rows(BATCH_ROWS, 100)));
        let (sealed, open) = m.scan_parts();
        assert_eq!(sealed.len(), 2, "the open rows sealed first, then the batch as it came");
        assert_eq!(sealed[1].rows.repeated, vec![false, true, false], "a short value is kept on every row");
        assert_eq!(sealed[1].rows.batch.columns[1].len(), 1);
        assert!(open.is_none());
        assert_eq!(m.row_count(), 100 + BATCH_ROWS);
        let all = Batch::concat(&types, &m.snapshot());
        assert_eq!(all, Batch::concat(&types, &[rows(100 + BATCH_ROWS, 0)]));
    }

    #[test]
    fn a_batch_marked_repeated_by_its_maker_is_kept_as_marked() {
        let one = |n: usize| {
            let ints: Vec<Datum> = (0..n as i64).map(Datum::Int64).collect();
            // Not `Batch::new`, which checks every column holds `n` values.
            Batch {
                columns: vec![
                    Arc::new(Column::from_datums(DataType::Int64, &ints)),
                    Arc::new(Column::from_datums(DataType::Text, &[Datum::text(LONG)])),
                    Arc::new(Column::from_datums(DataType::Text, &vec![Datum::text(LONG); n])),
                ],
                len: n,
            }
        };
        let whole = |n: usize| {
            let ints: Vec<Datum> = (0..n as i64).map(Datum::Int64).collect();
            Batch::from_columns(vec![
                Column::from_datums(DataType::Int64, &ints),
                Column::from_datums(DataType::Text, &vec![Datum::text(LONG); n]),
                Column::from_datums(DataType::Text, &vec![Datum::text(LONG); n]),
            ])
        };
        let big = CompactBatch::from_repeated(one(100), vec![false, true, false]);
        assert_eq!(big.repeated, vec![false, true, true], "the marked column as it came, the other found");
        assert_eq!(big.to_batch(), whole(100));
        let marked_wrongly = CompactBatch::from_repeated(whole(100), vec![true, false, false]);
        assert_eq!(marked_wrongly.repeated, vec![false, true, true], "a mark on a column of 100 values is dropped");
        assert_eq!(marked_wrongly.to_batch(), whole(100));
        let small = CompactBatch::from_repeated(one(5), vec![false, true, false]);
        assert!(!small.is_compact(), "a few rows are spelled out");
        assert_eq!(small.to_batch(), whole(5));
    }

    #[test]
    fn appends_split_into_blocks_and_keep_order() {
        let mut m = Memtable::new(vec![DataType::Int64]);
        m.append(&ints(1000, 0));
        m.append(&ints(BATCH_ROWS * 2, 1000));
        m.append(&ints(5, 1000 + 2 * BATCH_ROWS as i64));
        let snap = m.snapshot();
        assert!(snap.iter().all(|b| b.len <= BATCH_ROWS));
        let all: Vec<Datum> = snap
            .iter()
            .flat_map(|b| (0..b.len).map(move |i| b.columns[0].datum(i)))
            .collect();
        assert_eq!(all.len(), 1005 + 2 * BATCH_ROWS);
        assert_eq!(m.row_count(), all.len());
        for (i, d) in all.iter().enumerate() {
            assert_eq!(*d, Datum::Int64(i as i64));
        }
    }

    #[test]
    fn sealed_blocks_carry_the_range_of_their_integer_columns() {
        let mut m = Memtable::new(vec![DataType::Int64]);
        m.append(&ints(BATCH_ROWS + 10, 100));
        let (sealed, open) = m.scan_parts();
        assert_eq!(sealed.len(), 1);
        assert_eq!(open.map(|b| b.len), Some(10));
        let zone = ColumnZone {
            min: 100,
            max: 100 + BATCH_ROWS as i64 - 1,
            has_nulls: false,
        };
        assert_eq!(sealed[0].index.zones, vec![Some(zone)]);
    }

    #[test]
    fn large_rows_make_smaller_blocks_in_order() {
        let frame = |i: usize| Datum::Bytes(vec![i as u8; 1 << 20]);
        let mut m = Memtable::new(vec![DataType::Int64, DataType::Bytea]);
        for (start, n) in [(0usize, 3usize), (3, 40), (43, 1)] {
            let ids: Vec<Datum> = (start..start + n).map(|i| Datum::Int64(i as i64)).collect();
            let frames: Vec<Datum> = (start..start + n).map(frame).collect();
            m.append(&Batch::from_columns(vec![
                Column::from_datums(DataType::Int64, &ids),
                Column::from_datums(DataType::Bytea, &frames),
            ]));
        }
        let snap = m.snapshot();
        assert!(snap.iter().all(|b| b.byte_size() <= 2 * BLOCK_MAX_BYTES), "blocks stay near the byte limit");
        let ids: Vec<Datum> = snap.iter().flat_map(|b| (0..b.len).map(move |i| b.columns[0].datum(i))).collect();
        assert_eq!(ids, (0..44).map(Datum::Int64).collect::<Vec<_>>());
        assert_eq!(snap.iter().flat_map(|b| (0..b.len).map(move |i| b.columns[1].datum(i))).nth(17), Some(frame(17)));
        assert_eq!(m.row_count(), 44);
    }

    #[test]
    fn a_batch_of_about_a_block_is_kept_as_one_without_a_copy() {
        let mut m = Memtable::new(vec![DataType::Int64]);
        let batch = ints(BATCH_ROWS * 3 / 4, 0);
        m.append(&batch);
        let (sealed, open) = m.scan_parts();
        assert_eq!((sealed.len(), open.map(|b| b.len)), (1, None));
        assert!(Arc::ptr_eq(&sealed[0].rows.column(0), &batch.columns[0]), "shared, not copied");
        // A small batch still goes to the open block; the next block-sized
        // one seals it as a small block and is kept as it is too, so that
        // one misaligned batch does not make every later one a copy.
        let n = BATCH_ROWS * 3 / 4;
        m.append(&ints(10, n as i64));
        let next = ints(n, n as i64 + 10);
        m.append(&next);
        let (sealed, open) = m.scan_parts();
        assert_eq!((sealed.len(), open.map(|b| b.len)), (3, None));
        assert_eq!(sealed[1].len(), 10);
        assert!(Arc::ptr_eq(&sealed[2].rows.column(0), &next.columns[0]), "shared, not copied");
        let all: Vec<Datum> = m.snapshot().iter().flat_map(|b| (0..b.len).map(move |i| b.columns[0].datum(i))).collect();
        assert_eq!(all.len(), 2 * n + 10);
        assert!(all.iter().enumerate().all(|(i, d)| *d == Datum::Int64(i as i64)), "rows in order");
    }

    #[test]
    fn postings_list_the_rows_of_each_value_of_a_few_valued_column() {
        let mut m = Memtable::new(vec![DataType::Int64]);
        let v: Vec<Datum> = (0..BATCH_ROWS as i64).map(|i| if i % 100 == 0 { Datum::Null } else { Datum::Int64(i % 7) }).collect();
        m.append(&Batch::from_columns(vec![Column::from_datums(DataType::Int64, &v)]));
        let (sealed, _) = m.scan_parts();
        let p = sealed[0].index.postings[0].as_ref().unwrap();
        let expected: Vec<u16> = (0..BATCH_ROWS as u16).filter(|i| i % 100 != 0 && i % 7 == 3).collect();
        assert_eq!(p.rows_of(3), expected.as_slice());
        assert!(p.rows_of(9).is_empty());
    }

    #[test]
    fn widening_adds_null_columns_to_every_block_and_narrow_appends_read_null() {
        let n = BATCH_ROWS;
        let ints: Vec<Datum> = (0..n as i64).map(Datum::Int64).collect();
        let same: Vec<Datum> = (0..n).map(|_| Datum::text(LONG)).collect();
        let narrow = |rows: usize| {
            Batch::from_columns(vec![
                Column::from_datums(DataType::Int64, &ints[..rows]),
                Column::from_datums(DataType::Text, &same[..rows]),
            ])
        };
        let mut m = Memtable::new(vec![DataType::Int64, DataType::Text]);
        m.append(&narrow(n)); // a sealed block keeping the text once
        m.append(&narrow(10)); // open rows
        let wide = vec![DataType::Int64, DataType::Text, DataType::Float64, DataType::Text];
        m.widen(2, &wide);
        // Written before the widening, and after it by a writer that bound the narrower table.
        m.append(&narrow(5));
        let nulls = |t: DataType, rows: usize| Column::from_datum(t, &Datum::Null, rows);
        let (sealed, open) = m.scan_parts();
        assert_eq!(sealed.len(), 1);
        assert_eq!(sealed[0].rows.repeated, vec![false, true, false, false], "the kept-once column stays so");
        assert_eq!(sealed[0].index.zones.len(), 4);
        assert_eq!(*sealed[0].rows.column(1), *narrow(n).columns[1]);
        assert_eq!(*sealed[0].rows.column(2), nulls(DataType::Float64, n));
        assert_eq!(*sealed[0].rows.column(3), nulls(DataType::Text, n));
        let open = open.expect("open rows");
        assert_eq!((open.len, open.columns.len()), (15, 4));
        assert_eq!(*open.columns[2], nulls(DataType::Float64, 15));
        // A later batch holding the new columns appends as it is.
        let full = Batch::from_columns(vec![
            Column::from_datums(DataType::Int64, &[Datum::Int64(1)]),
            Column::from_datums(DataType::Text, &[Datum::text("a")]),
            Column::from_datums(DataType::Float64, &[Datum::Float64(2.5)]),
            Column::from_datums(DataType::Text, &[Datum::text("b")]),
        ]);
        m.append(&full);
        let open = m.scan_parts().1.expect("open rows");
        assert_eq!(open.row(15), full.row(0));
        // Undoing it (the catalog change failed): back to two columns.
        m.widen(2, &wide[..2]);
        let (sealed, open) = m.scan_parts();
        assert_eq!(sealed[0].rows.to_batch(), narrow(n));
        assert_eq!(open.map(|b| b.columns.len()), Some(2));
    }
}
