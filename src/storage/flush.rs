//! Flushing a frozen memtable to segment files. A time-series table (one
//! with a designated time column, or a timestamp column named `time`) is
//! split by time partition (`PARTITION_NS`, one segment per partition per
//! flush) and sorted by (3-hour window, series, time), where the series key is the set of
//! low-cardinality integer/text/boolean columns found in the rows (e.g.
//! TSBS's `tags_id`, line protocol's tags): that is what makes tags cost
//! almost nothing and timestamps regular. Other tables keep arrival order
//! in one segment. Files are written and fsynced through the shard's
//! io_uring ring, then the directory is fsynced, before they are installed.
//! Must not: touch the WAL or the manifest (the checkpoint does, after every
//! shard's flush is durable).

use std::borrow::Cow;
use std::fs::OpenOptions;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::files::{segment_file_name, segments_dir, SegmentFile};
use super::segment::writer::{write_segment, SegmentRows, SegmentSpec};
use super::segment::column::CachedBlock;
use super::segment::reader::cache_block;
use super::segment::{SegmentColumn, GROUP_SPAN_NS};
use super::memtable::CompactBatch;
use super::table::FrozenTable;
use crate::catalog::TableDef;
use crate::exec::vector::{Batch, Column, ColumnData};
use crate::runtime::storage_io::StorageIo;
use crate::types::DataType;

/// Time partition width for time-series tables without their own interval: one day.
pub const PARTITION_NS: i64 = 86_400 * 1_000_000_000;

/// A series-key column has at most one distinct value per this many rows.
const SERIES_ROWS_PER_VALUE: usize = 16;

/// The table's time column: the designated one, else a timestamp column named `time`.
pub fn time_column(def: &TableDef) -> Option<usize> {
    def.time_column.or_else(|| {
        def.columns.iter().position(|c| {
            c.name == "time" && matches!(c.data_type, DataType::Timestamp | DataType::TimestampTz)
        })
    })
}

/// The series key an index declares: the leading column of an index on
/// `(column, time [DESC])` of a time-series table (TSBS's `(tags_id, "time" DESC)`).
/// Segments sort by it and the series index prunes by it, however many
/// distinct values one flush holds.
pub fn declared_series_key(def: &TableDef, indexes: &[Arc<crate::catalog::IndexDef>]) -> Option<usize> {
    let time = time_column(def)?;
    let bare = |key: &str| key.split_whitespace().next().unwrap_or(key).trim_matches('"').to_string();
    indexes.iter().find_map(|i| match i.keys.as_slice() {
        [lead, second, ..] if bare(second) == def.columns[time].name => {
            def.column_index(&bare(lead)).filter(|&c| c != time)
        }
        _ => None,
    })
}

/// A segment ready to write: its number, bytes and footer, and its blocks'
/// cache forms.
pub struct EncodedSegment {
    pub id: u64,
    pub bytes: Vec<u8>,
    pub footer: super::segment::Footer,
    pub cached: CachedBlocks,
}

/// Blocks in their cache form, as (column, block group, block).
pub type CachedBlocks = Vec<(u32, u32, CachedBlock)>;

/// Every block of a segment just encoded in its cache form: made here, off
/// the shard thread, so that the shard's cache holds a checkpoint's rows
/// from the start (they are the newest, the likeliest to be asked for; a
/// first read would otherwise pay the read, the checksum and the re-encoding
/// in the query). A block that does not verify is left out (it is read, and
/// reported, from the file like any other). None past `budget` bytes (a
/// cache form takes at least its stored bytes, and a shard's cache keeps
/// only what fits half of it: `ShardStorage::warm_cache`).
fn cache_forms(bytes: &[u8], footer: &super::segment::Footer, budget: usize) -> CachedBlocks {
    let mut out = Vec::new();
    if bytes.len() > budget {
        return out;
    }
    for (g, (_, blocks)) in footer.groups.iter().enumerate() {
        for (c, meta) in blocks.iter().enumerate() {
            let Some(stored) = bytes.get(meta.offset as usize..meta.offset as usize + meta.len as usize) else {
                continue;
            };
            if let Ok(block) = cache_block("new segment", meta, stored) {
                out.push((c as u32, g as u32, block));
            }
        }
    }
    out
}

/// Sorts, partitions and encodes `frozen` (pure CPU work), with the blocks'
/// cache forms for segments of at most `cache_budget` bytes. Segment ids are
/// taken from `ids`, a counter that the tables a checkpoint encodes at once
/// share: each id is unique on the shard, and a table's segments get
/// increasing ones.
pub fn encode_frozen(
    def: &TableDef,
    declared_series: Option<usize>,
    frozen: &FrozenTable,
    shard_dir: u32,
    ids: &AtomicU64,
    cache_budget: usize,
) -> Vec<EncodedSegment> {
    let mut next_id = || ids.fetch_add(1, Ordering::Relaxed);
    encode_blocks(def, declared_series, frozen.table, &frozen.types, &frozen.rows.blocks(), shard_dir, &mut next_id, cache_budget)
}

/// Sorts, partitions and encodes a table's rows (the merged rows of a
/// compaction); `declared_series` leads the series key (see `declared_series_key`).
pub fn encode_rows(
    def: &TableDef,
    declared_series: Option<usize>,
    table: u32,
    all: Batch,
    shard_dir: u32,
    next_id: &mut u64,
) -> Vec<EncodedSegment> {
    let types: Vec<DataType> = all.columns.iter().map(|c| c.data_type).collect();
    let mut take_id = || {
        let id = *next_id;
        *next_id += 1;
        id
    };
    let all = CompactBatch::plain(all);
    encode_blocks(def, declared_series, table, &types, std::slice::from_ref(&all), shard_dir, &mut take_id, 0)
}

/// [`encode_rows`] over rows held in blocks (a frozen memtable's). Only the
/// time and series-key columns are gathered whole, to order the rows; every
/// other column is gathered (and permuted) one segment block at a time as it
/// is encoded, so a flush needs memory for one block, not a second copy of
/// the table — nor a spelled-out copy of the values a memtable block keeps
/// once (an MCAP topic's covariance arrays: most of a recording's bytes).
#[allow(clippy::too_many_arguments)] // the table's description, its rows, and where segments go
fn encode_blocks(
    def: &TableDef,
    declared_series: Option<usize>,
    table: u32,
    types: &[DataType],
    blocks: &[CompactBatch],
    shard_dir: u32,
    next_id: &mut dyn FnMut() -> u64,
    cache_budget: usize,
) -> Vec<EncodedSegment> {
    let len: usize = blocks.iter().map(CompactBatch::len).sum();
    if len == 0 {
        return Vec::new();
    }
    // The rows' own columns: rows frozen before an ADD COLUMN lack the
    // catalog's last ones, and the segment then lacks them too.
    let columns: Vec<SegmentColumn> = types
        .iter()
        .enumerate()
        .map(|(i, t)| SegmentColumn {
            name: def.columns.get(i).map_or_else(String::new, |c| c.name.clone()),
            type_oid: t.oid(),
        })
        .collect();
    let time = time_column(def).filter(|&t| t < types.len());
    let mut out = Vec::new();
    let parts: Vec<(Option<Vec<u32>>, Vec<usize>)> = match time {
        None => vec![(None, Vec::new())],
        Some(t) => {
            let declared = declared_series.filter(|&k| k < types.len() && k != t);
            let series = series_columns(blocks, types, t, declared);
            let time_values = gather_column(blocks, types[t], t);
            let keys: Vec<Column> = series.iter().map(|&c| gather_column(blocks, types[c], c)).collect();
            partition_and_sort(&time_values, &keys.iter().collect::<Vec<_>>())
                .into_iter()
                .map(|p| {
                    // Rows that arrived in order (an MCAP recording's, a
                    // sorted COPY's) are written as they are.
                    let in_order = p.len() == len && p.iter().enumerate().all(|(i, &r)| r as usize == i);
                    ((!in_order).then_some(p), series.clone())
                })
                .collect()
        }
    };
    for (perm, series) in parts {
        let id = next_id();
        let spec = SegmentSpec {
            table,
            shard: shard_dir,
            segment: id,
            columns: columns.clone(),
            series_columns: series,
            time_column: time,
        };
        let rows = BlockRows {
            blocks,
            types,
            perm: perm.as_deref(),
            len: perm.as_ref().map_or(len, Vec::len),
            starts: blocks
                .iter()
                .scan(0, |next, b| {
                    let start = *next;
                    *next += b.len();
                    Some(start)
                })
                .collect(),
        };
        let (bytes, footer) = write_segment(&spec, &rows);
        let cached = cache_forms(&bytes, &footer, cache_budget);
        out.push(EncodedSegment { id, bytes, footer, cached });
    }
    out
}

/// One column's values across `blocks`, in block order.
fn gather_column(blocks: &[CompactBatch], data_type: DataType, c: usize) -> Column {
    let mut col = Column::with_capacity(data_type, 0);
    gather_into(&mut col, blocks, c);
    col
}

/// Appends column `c` of every block to `out`, its buffers grown once to
/// the size they need.
fn gather_into(out: &mut Column, blocks: &[CompactBatch], c: usize) {
    let rows = blocks.iter().map(CompactBatch::len).sum();
    let bytes = blocks
        .iter()
        .map(|b| match b.stored_column(c) {
            (col, true) => col.variable_bytes() * b.len(),
            (col, false) => col.variable_bytes(),
        })
        .sum();
    out.reserve(rows, bytes);
    for b in blocks {
        b.append_rows(c, 0, b.len(), out);
    }
}

/// A segment's rows: `blocks` in order, or the rows `perm` lists (indexes
/// into the blocks' concatenation).
struct BlockRows<'a> {
    blocks: &'a [CompactBatch],
    types: &'a [DataType],
    perm: Option<&'a [u32]>,
    len: usize,
    /// Where each block starts in the blocks' concatenation.
    starts: Vec<usize>,
}

impl SegmentRows for BlockRows<'_> {
    fn row_count(&self) -> usize {
        self.len
    }
    fn column_count(&self) -> usize {
        self.types.len()
    }
    fn column(&self, c: usize) -> Cow<'_, Column> {
        // One block's column as it is stored, unless it keeps one value for all rows.
        let one = match self.blocks {
            [one] => match one.stored_column(c) {
                (col, false) => Some(col),
                (_, true) => None,
            },
            _ => None,
        };
        match (one, self.perm) {
            (Some(col), None) => Cow::Borrowed(col),
            (Some(col), Some(perm)) => Cow::Owned(col.take(perm)),
            (None, None) => Cow::Owned(gather_column(self.blocks, self.types[c], c)),
            (None, Some(perm)) => Cow::Owned(gather_column(self.blocks, self.types[c], c).take(perm)),
        }
    }
    fn rows_into(&self, c: usize, start: usize, len: usize, out: &mut Column) {
        let data_type = self.types[c];
        if out.data_type != data_type {
            *out = Column::with_capacity(data_type, len);
        }
        out.clear();
        // The block holding row `i` of the blocks' concatenation.
        let block_of = |i: usize| self.starts.partition_point(|&s| s <= i) - 1;
        match self.perm {
            None => {
                let (mut at, end) = (start, start + len);
                let mut b = block_of(start);
                while at < end {
                    let block = &self.blocks[b];
                    let from = at - self.starts[b];
                    let n = (block.len() - from).min(end - at);
                    block.append_rows(c, from, n, out);
                    at += n;
                    b += 1;
                }
            }
            Some(perm) => {
                out.reserve(len, 0);
                // Rows that stay in arrival order (one recording's messages,
                // one host's points) come as runs of consecutive indices:
                // each run is copied as a range, not row by row.
                let rows = &perm[start..start + len];
                let mut k = 0;
                while k < rows.len() {
                    let i = rows[k] as usize;
                    let b = block_of(i);
                    let block = &self.blocks[b];
                    let from = i - self.starts[b];
                    let room = block.len() - from;
                    let mut n = 1;
                    while n < room && k + n < rows.len() && rows[k + n] as usize == i + n {
                        n += 1;
                    }
                    block.append_rows(c, from, n, out);
                    k += n;
                }
            }
        }
    }
    fn byte_size(&self) -> usize {
        let total: usize = self.blocks.iter().map(CompactBatch::len).sum();
        let bytes: usize = self.blocks.iter().map(CompactBatch::spelled_byte_size).sum();
        bytes / total.max(1) * self.len
    }
}

/// A segment up to this size is written by one write of its own buffer
/// (Linux writes at most ~2 GiB per call).
const ONE_WRITE_MAX_BYTES: usize = 1 << 30;

/// Writes encoded segments durably (each file written and fsynced through
/// `io`, then the directory fsynced) and opens them.
pub async fn write_segments(
    io: &StorageIo,
    data_dir: &std::path::Path,
    shard_dir: u32,
    table: u32,
    segments: Vec<EncodedSegment>,
) -> std::io::Result<Vec<(Rc<SegmentFile>, CachedBlocks)>> {
    let dir = segments_dir(data_dir, shard_dir);
    std::fs::create_dir_all(&dir)?;
    let mut out = Vec::new();
    for seg in segments {
        let path = dir.join(segment_file_name(table, seg.id));
        let file = Arc::new(
            OpenOptions::new()
                .create_new(true)
                .read(true)
                .write(true)
                .open(&path)?,
        );
        let len = seg.bytes.len() as u64;
        if seg.bytes.len() <= ONE_WRITE_MAX_BYTES {
            // The segment's own buffer goes to the ring: no copy.
            io.write(file.clone(), 0, seg.bytes).await?;
        } else {
            // Beyond what one write takes: 8 MiB writes, eight submitted
            // together, their copies reused wave after wave instead of a
            // second copy of the whole segment existing at once.
            let mut off = 0usize;
            while off < seg.bytes.len() {
                let mut requests = Vec::new();
                while off < seg.bytes.len() && requests.len() < 8 {
                    let end = (off + (8 << 20)).min(seg.bytes.len());
                    requests.push(crate::runtime::storage_io::IoRequest::Write {
                        file: file.clone(),
                        offset: off as u64,
                        data: seg.bytes[off..end].to_vec(),
                    });
                    off = end;
                }
                for r in io.submit(requests).await {
                    r?;
                }
            }
        }
        crate::failpoint::hit("flush-after-segment-write");
        if crate::failpoint::error("segment-write-fails", || true) {
            return Err(std::io::Error::other("injected by failpoint segment-write-fails"));
        }
        io.fsync(file.clone()).await?;
        out.push((
            Rc::new(SegmentFile::from_written(path, shard_dir, file, seg.footer, len, table, seg.id)),
            seg.cached,
        ));
    }
    crate::wal::sync_dir(&dir)?;
    crate::failpoint::hit("flush-after-segment-sync");
    Ok(out)
}

/// The series key: the declared key column first, then low-cardinality
/// columns, fewest distinct values first, each only while the key's
/// distinct combinations still leave runs of [`SERIES_ROWS_PER_VALUE`] rows
/// on average (a message counter repeating across recordings has few values
/// per recording but makes every row its own series).
fn series_columns(blocks: &[CompactBatch], types: &[DataType], time: usize, declared: Option<usize>) -> Vec<usize> {
    let len: usize = blocks.iter().map(CompactBatch::len).sum();
    let limit = (len / SERIES_ROWS_PER_VALUE).max(1);
    let mut candidates = low_cardinality_columns(blocks, types, time, limit);
    candidates.retain(|&c| Some(c) != declared);
    let mut chosen: Vec<usize> = declared.into_iter().collect();
    if candidates.is_empty() {
        return chosen;
    }
    // Per row, a hash of its key so far.
    let mut row_keys: Vec<u64> = vec![0; len];
    if let Some(k) = declared {
        hash_into(&mut row_keys, blocks, k);
    }
    let mut next = row_keys.clone();
    for c in candidates {
        next.copy_from_slice(&row_keys);
        hash_into(&mut next, blocks, c);
        let mut seen = hashbrown::HashSet::new();
        let few = next.iter().all(|&h| {
            seen.insert(h);
            seen.len() <= limit
        });
        if few {
            std::mem::swap(&mut row_keys, &mut next);
            chosen.push(c);
        }
    }
    chosen
}

/// Mixes column `c`'s value of each row (over the blocks' concatenation) into `keys`.
fn hash_into(keys: &mut [u64], blocks: &[CompactBatch], c: usize) {
    let hasher = hashbrown::DefaultHashBuilder::default();
    let mut r = 0;
    for b in blocks {
        let (col, once) = b.stored_column(c);
        let value_of = |i: usize| match (&col.data, col.is_valid(i)) {
            (_, false) => u64::MAX,
            (ColumnData::Bytes(v), true) => std::hash::BuildHasher::hash_one(&hasher, v.get(i)),
            (_, true) => int_key(col, i) as u64,
        };
        // A value the block keeps once is hashed once for all its rows.
        let once_value = once.then(|| value_of(0));
        for row in 0..b.len() {
            let value = once_value.unwrap_or_else(|| value_of(row));
            keys[r] = (keys[r].rotate_left(5) ^ value).wrapping_mul(0x517c_c1b7_2722_0a95);
            r += 1;
        }
    }
}

/// Columns with between 2 and `limit` distinct values, fewest first.
/// Times, blobs, documents and arrays are never series tags; hashing them
/// was a tenth of an MCAP flush (every message's covariance arrays).
fn low_cardinality_columns(blocks: &[CompactBatch], types: &[DataType], time: usize, limit: usize) -> Vec<usize> {
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (i, data_type) in types.iter().enumerate() {
        if i == time
            || matches!(
                data_type,
                DataType::Timestamp | DataType::TimestampTz | DataType::Bytea | DataType::Jsonb | DataType::Array(_)
            )
        {
            continue;
        }
        let Some(first) = blocks.first() else { continue };
        // A column a block keeps once counts its one value there.
        let distinct = match &first.stored_column(i).0.data {
            ColumnData::Int16(_)
            | ColumnData::Int32(_)
            | ColumnData::Int64(_)
            | ColumnData::Bool(_)
            | ColumnData::Bytes(_) => count_distinct(blocks.iter().map(|b| b.stored_column(i).0), limit),
            _ => None,
        };
        if let Some(d) = distinct {
            if d > 1 {
                found.push((d, i));
            }
        }
    }
    found.sort_unstable();
    found.into_iter().map(|(_, i)| i).collect()
}

/// Distinct values over the pieces of a column (NULL counted once), or
/// None once above `limit`.
fn count_distinct<'a>(pieces: impl Iterator<Item = &'a Column>, limit: usize) -> Option<usize> {
    let mut seen: hashbrown::HashSet<Option<&[u8]>> = hashbrown::HashSet::new();
    let mut ints: hashbrown::HashSet<Option<i64>> = hashbrown::HashSet::new();
    for col in pieces {
        for r in 0..col.len() {
            let valid = col.is_valid(r);
            let n = match &col.data {
                ColumnData::Bytes(b) => {
                    seen.insert(valid.then(|| b.get(r)));
                    seen.len()
                }
                _ => {
                    ints.insert(valid.then(|| int_key(col, r)));
                    ints.len()
                }
            };
            if n > limit {
                return None;
            }
        }
    }
    Some(seen.len().max(ints.len()))
}

fn int_key(col: &Column, r: usize) -> i64 {
    match &col.data {
        ColumnData::Int16(v) => v[r] as i64,
        ColumnData::Int32(v) => v[r] as i64,
        ColumnData::Int64(v) => v[r],
        ColumnData::Bool(v) => v[r] as i64,
        _ => 0,
    }
}

/// Per time partition (ascending), the row order sorted by (time window of
/// `GROUP_SPAN_NS`, series, time): the writer then cuts block groups at the
/// windows, so a group's time zone map spans a few hours and holds several
/// series' runs. Sorting by series alone put a series' whole day in a group,
/// and a query over a few hours of every series (TSBS's double-groupby,
/// high-cpu-all, groupby-orderby-limit) decoded the whole day; groups cut
/// into one series' few hours instead cost ~1 byte/row of block headers.
fn partition_and_sort(tcol: &Column, series: &[&Column]) -> Vec<Vec<u32>> {
    let ColumnData::Int64(ts) = &tcol.data else {
        return vec![(0..tcol.len() as u32).collect()];
    };
    // Sort keys: each series column as an order-preserving u64 rank (NULLs last).
    let ranks: Vec<Vec<u64>> = series.iter().map(|c| rank_column(c)).collect();
    let part_of = |r: usize| {
        if tcol.is_valid(r) {
            ts[r].div_euclid(PARTITION_NS)
        } else {
            i64::MIN
        }
    };
    let window_of = |r: usize| {
        if tcol.is_valid(r) {
            ts[r].div_euclid(GROUP_SPAN_NS)
        } else {
            i64::MIN
        }
    };
    // A day is a whole number of windows, so window order is also day order.
    let windows: Vec<i64> = (0..tcol.len()).map(window_of).collect();
    let time_key = |r: usize| (!tcol.is_valid(r), ts[r]);
    let order = |a: usize, b: usize| {
        windows[a]
            .cmp(&windows[b])
            .then_with(|| {
                for r in &ranks {
                    let o = r[a].cmp(&r[b]);
                    if o.is_ne() {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            })
            .then_with(|| time_key(a).cmp(&time_key(b)))
    };
    let mut idx: Vec<u32> = (0..tcol.len() as u32).collect();
    // Rows often arrive in order already (one recording's messages).
    let sorted = (1..idx.len()).all(|r| order(r - 1, r).is_le());
    if !sorted {
        match ranks.as_slice() {
            // One series column: sort plain keys; the row number last keeps
            // equal keys in arrival order, as the stable sort below does.
            [series] => {
                let mut keys: Vec<(i64, u64, (bool, i64), u32)> =
                    idx.iter().map(|&r| (windows[r as usize], series[r as usize], time_key(r as usize), r)).collect();
                keys.sort_unstable();
                idx = keys.into_iter().map(|k| k.3).collect();
            }
            _ => idx.sort_by(|&a, &b| order(a as usize, b as usize)),
        }
    }
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut last = None;
    for i in idx {
        let p = part_of(i as usize);
        if last != Some(p) {
            out.push(Vec::new());
            last = Some(p);
        }
        if let Some(cur) = out.last_mut() {
            cur.push(i);
        }
    }
    out
}

fn rank_column(col: &Column) -> Vec<u64> {
    match &col.data {
        ColumnData::Bytes(b) => {
            // Series columns hold few values: number them in one hashing
            // pass (consecutive equal values skip the map), then rank the
            // distinct values, instead of sorting every row's value.
            let mut ids: hashbrown::HashMap<&[u8], u32> = hashbrown::HashMap::new();
            let mut row_ids: Vec<u32> = Vec::with_capacity(b.len());
            let mut last: Option<(&[u8], u32)> = None;
            for r in 0..b.len() {
                if !col.is_valid(r) {
                    row_ids.push(u32::MAX);
                    continue;
                }
                let v = b.get(r);
                let id = match last {
                    Some((prev, id)) if prev == v => id,
                    _ => {
                        let next = ids.len() as u32;
                        let id = *ids.entry(v).or_insert(next);
                        last = Some((v, id));
                        id
                    }
                };
                row_ids.push(id);
            }
            let mut distinct: Vec<(&[u8], u32)> = ids.into_iter().collect();
            distinct.sort_unstable();
            let mut rank = vec![0u64; distinct.len()];
            for (position, (_, id)) in distinct.iter().enumerate() {
                rank[*id as usize] = position as u64;
            }
            row_ids
                .into_iter()
                .map(|id| if id == u32::MAX { u64::MAX } else { rank[id as usize] })
                .collect()
        }
        _ => (0..col.len())
            .map(|r| {
                if col.is_valid(r) {
                    (int_key(col, r) as u64) ^ (1 << 63)
                } else {
                    u64::MAX
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ColumnDef;
    use crate::types::Datum;

    #[test]
    fn a_counter_repeating_across_recordings_does_not_join_the_series_key() {
        // 24 recordings × 32 messages: each column alone has few values, the
        // pair one per row.
        let (recordings, counters): (Vec<Datum>, Vec<Datum>) =
            (0..24 * 32).map(|i| (Datum::text(format!("robot{:02}", i / 32)), Datum::Int64((i % 32) as i64))).unzip();
        let time: Vec<Datum> = (0..24 * 32).map(|i| Datum::Int64(i as i64)).collect();
        let block = Batch::from_columns(vec![
            Column::from_datums(DataType::TimestampTz, &time),
            Column::from_datums(DataType::Text, &recordings),
            Column::from_datums(DataType::Int64, &counters),
        ]);
        let types = [DataType::TimestampTz, DataType::Text, DataType::Int64];
        let block = CompactBatch::plain(block);
        assert_eq!(series_columns(std::slice::from_ref(&block), &types, 0, None), vec![1]);
        // A declared key leads, and the rest must still leave runs.
        assert_eq!(series_columns(&[block], &types, 0, Some(2)), vec![2]);
    }

    #[test]
    fn an_array_column_is_never_a_series_tag() {
        // Two distinct arrays, each over a long run of rows: few values, yet no tag.
        let arrays: Vec<Datum> = (0..1024)
            .map(|i| {
                let v = crate::types::array::ArrayValue::of(vec![Datum::Float64((i / 512) as f64)]);
                Datum::Bytes(v.encode(crate::types::array::ArrayElem::Float64))
            })
            .collect();
        let tags: Vec<Datum> = (0..1024).map(|i| Datum::text(format!("robot{}", i / 512))).collect();
        let time: Vec<Datum> = (0..1024).map(|i| Datum::Int64(i as i64)).collect();
        let array_type = DataType::Array(crate::types::array::ArrayElem::Float64);
        let types = [DataType::TimestampTz, array_type, DataType::Text];
        let block = Batch::from_columns(vec![
            Column::from_datums(DataType::TimestampTz, &time),
            Column::from_datums(array_type, &arrays),
            Column::from_datums(DataType::Text, &tags),
        ]);
        assert_eq!(series_columns(&[CompactBatch::plain(block)], &types, 0, None), vec![2]);
    }

    #[test]
    fn a_block_of_rows_is_gathered_across_blocks_in_order_and_permuted() {
        let text = |from: usize, n: usize| {
            let values: Vec<Datum> =
                (from..from + n).map(|i| if i % 5 == 4 { Datum::Null } else { Datum::text(format!("v{i}")) }).collect();
            CompactBatch::plain(Batch::from_columns(vec![Column::from_datums(DataType::Text, &values)]))
        };
        let blocks = vec![text(0, 3), text(3, 0), text(3, 7), text(10, 1), text(11, 5)];
        let whole = gather_column(&blocks, DataType::Text, 0);
        let types = [DataType::Text];
        let perm: Vec<u32> = (0..16).rev().chain([4, 0, 15]).collect();
        // Runs of consecutive rows, some crossing from one block into the next.
        let runs: Vec<u32> = (5..14).chain(0..5).chain(14..16).chain([1, 2, 3, 9, 10, 11]).collect();
        for perm in [None, Some(&perm[..]), Some(&runs[..])] {
            let rows = BlockRows {
                blocks: &blocks,
                types: &types,
                perm,
                len: perm.map_or(16, <[u32]>::len),
                starts: vec![0, 3, 3, 10, 11],
            };
            let expected = perm.map_or_else(|| whole.clone(), |p| whole.take(p));
            let mut out = Column::from_datums(DataType::Int64, &[Datum::Int64(1)]);
            for (start, len) in [(0, 0), (0, 3), (2, 9), (3, 7), (0, rows.len), (rows.len - 1, 1)] {
                rows.rows_into(0, start, len, &mut out);
                assert_eq!(out, expected.slice(start, len), "perm {} rows {start}+{len}", perm.is_some());
            }
        }
    }

    /// An MCAP-like block of `rows` rows from `start`: time, a recording tag
    /// (two values across blocks), a covariance array that never changes
    /// (kept once in a memtable block), one that changes in the second half
    /// of the rows, and a reading.
    fn recording_block(start: usize, rows: usize) -> Batch {
        let array = |v: f64| {
            let value = crate::types::array::ArrayValue::of((0..9).map(|k| Datum::Float64(v + k as f64)).collect());
            Datum::Bytes(value.encode(crate::types::array::ArrayElem::Float64))
        };
        let covariance = DataType::Array(crate::types::array::ArrayElem::Float64);
        let range = start..start + rows;
        Batch::from_columns(vec![
            Column::from_datums(DataType::TimestampTz, &range.clone().map(|i| Datum::Int64(i as i64 * 1000)).collect::<Vec<_>>()),
            Column::from_datums(DataType::Text, &range.clone().map(|i| Datum::text(format!("robot{}", i / 96))).collect::<Vec<_>>()),
            Column::from_datums(covariance, &range.clone().map(|_| array(0.5)).collect::<Vec<_>>()),
            Column::from_datums(covariance, &range.clone().map(|i| array(if i < 96 { 0.25 } else { 1.0 })).collect::<Vec<_>>()),
            Column::from_datums(DataType::Float64, &range.map(|i| Datum::Float64(i as f64 / 7.0)).collect::<Vec<_>>()),
        ])
    }

    #[test]
    fn values_kept_once_are_flushed_as_the_rows_spelled_out() {
        let blocks: Vec<Batch> = [(0, 40), (40, 8), (48, 80), (128, 64)].iter().map(|&(s, n)| recording_block(s, n)).collect();
        let compact: Vec<CompactBatch> = blocks.iter().cloned().map(CompactBatch::new).collect();
        // (A block of 8 rows is too short to keep anything once.)
        assert!(compact.iter().all(|b| b.is_compact() == (b.len() >= 16)), "blocks keep the fixed covariance once");
        assert!(compact[0].stored_column(3).1 && !compact[2].stored_column(3).1, "the changing one only where it does not");
        let spelled: Vec<CompactBatch> = blocks.iter().cloned().map(CompactBatch::plain).collect();
        let types: Vec<DataType> = blocks[0].columns.iter().map(|c| c.data_type).collect();
        assert_eq!(series_columns(&compact, &types, 0, None), series_columns(&spelled, &types, 0, None));
        for (c, &data_type) in types.iter().enumerate() {
            assert_eq!(gather_column(&compact, data_type, c), gather_column(&spelled, data_type, c), "column {c}");
        }
        // The whole flush: the same segments, byte for byte, and their cache forms.
        let def = TableDef {
            oid: 1,
            name: "imu".into(),
            schema: "fleet".into(),
            columns: ["log_time", "recording", "orientation_covariance", "angular_velocity_covariance", "x"]
                .iter()
                .zip(&types)
                .map(|(n, t)| ColumnDef::plain(*n, *t))
                .collect(),
            time_column: Some(0),
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        };
        let encode = |blocks: &[CompactBatch]| {
            let mut next = 0;
            let mut take_id = || {
                next += 1;
                next
            };
            encode_blocks(&def, None, 1, &types, blocks, 0, &mut take_id, usize::MAX)
        };
        let (from_compact, from_spelled) = (encode(&compact), encode(&spelled));
        assert_eq!(from_compact.len(), from_spelled.len());
        for (a, b) in from_compact.iter().zip(&from_spelled) {
            assert_eq!(a.bytes, b.bytes);
            assert_eq!(a.cached.len(), b.cached.len());
        }
        // A permuted flush (rows out of time order) as well.
        let shuffled: Vec<Batch> = [(128, 64), (0, 40), (48, 80), (40, 8)].iter().map(|&(s, n)| recording_block(s, n)).collect();
        let compact: Vec<CompactBatch> = shuffled.iter().cloned().map(CompactBatch::new).collect();
        let spelled: Vec<CompactBatch> = shuffled.into_iter().map(CompactBatch::plain).collect();
        let (from_compact, from_spelled) = (encode(&compact), encode(&spelled));
        assert_eq!(from_compact.iter().map(|s| &s.bytes).collect::<Vec<_>>(), from_spelled.iter().map(|s| &s.bytes).collect::<Vec<_>>());
    }

    #[test]
    fn any_blocks_flush_the_same_whether_their_repeats_are_kept_once_or_spelled_out() {
        // Seeded cases: blocks of random sizes, times in order (runs copied
        // as ranges) or not (a permuted flush), a repeated array in some
        // blocks and not others, NULLs.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        let array_type = DataType::Array(crate::types::array::ArrayElem::Float64);
        let types = [DataType::TimestampTz, DataType::Text, array_type, DataType::Text, DataType::Float64];
        let def = TableDef {
            oid: 1,
            name: "t".into(),
            schema: "s".into(),
            columns: ["time", "tag", "matrix", "note", "x"].iter().zip(&types).map(|(n, t)| ColumnDef::plain(*n, *t)).collect(),
            time_column: Some(0),
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        };
        let array = |v: u64| {
            let value = crate::types::array::ArrayValue::of((0..6).map(|k| Datum::Float64((v * 10 + k) as f64)).collect());
            Datum::Bytes(value.encode(crate::types::array::ArrayElem::Float64))
        };
        let mut kept_once = 0;
        for case in 0..40 {
            // Half the cases arrive in time order (flushed as they are), half not.
            let in_order = case % 2 == 0;
            let mut clock = 0i64;
            let blocks: Vec<Batch> = (0..1 + next(5))
                .map(|_| {
                    let rows = 1 + next(300) as usize;
                    let fixed = next(3) > 0;
                    let matrix = next(4);
                    // One robot per block, as a recording's batches are: long runs
                    // of one series, copied as ranges by the writer.
                    let robot = next(3);
                    let mut columns: Vec<Vec<Datum>> = vec![Vec::new(); types.len()];
                    for _ in 0..rows {
                        clock += 1 + next(GROUP_SPAN_NS as u64 / 100) as i64;
                        let time = if in_order { clock } else { next(4 * GROUP_SPAN_NS as u64) as i64 };
                        columns[0].push(Datum::Int64(time));
                        columns[1].push(Datum::text(format!("robot{robot}")));
                        columns[2].push(array(if fixed { matrix } else { next(4) }));
                        columns[3].push(if next(5) == 0 { Datum::Null } else { Datum::text("n".repeat(next(40) as usize)) });
                        columns[4].push(Datum::Float64(next(1000) as f64 / 8.0));
                    }
                    Batch::from_columns(columns.iter().zip(&types).map(|(v, t)| Column::from_datums(*t, v)).collect())
                })
                .collect();
            let compact: Vec<CompactBatch> = blocks.iter().cloned().map(CompactBatch::new).collect();
            kept_once += compact.iter().filter(|b| b.is_compact()).count();
            let spelled: Vec<CompactBatch> = blocks.into_iter().map(CompactBatch::plain).collect();
            let encode = |blocks: &[CompactBatch]| {
                let mut id = 0;
                let mut take_id = || {
                    id += 1;
                    id
                };
                encode_blocks(&def, None, 1, &types, blocks, 0, &mut take_id, 0).into_iter().map(|s| s.bytes).collect::<Vec<_>>()
            };
            assert_eq!(encode(&compact), encode(&spelled), "case {case}");
        }
        assert!(kept_once > 20, "the cases keep values once in {kept_once} blocks");
    }

    /// A `cpu(time timestamptz, tags_id int)` table holding `batch`, frozen for a flush.
    fn cpu_table(time_column: Option<usize>, batch: Batch) -> (TableDef, FrozenTable) {
        let types = vec![DataType::TimestampTz, DataType::Int32];
        let def = TableDef {
            oid: 1,
            name: "cpu".into(),
            schema: "public".into(),
            columns: ["time", "tags_id"]
                .iter()
                .zip(&types)
                .map(|(n, t)| ColumnDef::plain(*n, *t))
                .collect(),
            time_column,
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        };
        let frozen = FrozenTable {
            table: 1,
            types,
            generation: 0,
            flush_id: 0,
            rows: super::super::table::FrozenRows { sealed: Default::default(), open: Some(batch) },
        };
        (def, frozen)
    }

    #[test]
    fn rows_sort_by_window_then_series_then_time_keeping_arrival_order_among_equals() {
        // The order partition_and_sort promises, as one stable sort.
        fn reference(time: &Column, series: &[&Column]) -> Vec<u32> {
            let ColumnData::Int64(ts) = &time.data else { unreachable!() };
            let ranks: Vec<Vec<u64>> = series.iter().map(|c| rank_column(c)).collect();
            let key = |r: usize| {
                let valid = time.is_valid(r);
                let window = if valid { ts[r].div_euclid(GROUP_SPAN_NS) } else { i64::MIN };
                (window, ranks.iter().map(|k| k[r]).collect::<Vec<_>>(), !valid, ts[r])
            };
            let mut idx: Vec<u32> = (0..time.len() as u32).collect();
            idx.sort_by_key(|&r| key(r as usize));
            idx
        }
        let hour = 3_600_000_000_000i64;
        let mut seed = 7u64;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for case in 0..3 {
            let n = 500;
            let times: Vec<Datum> = (0..n)
                .map(|i| match case {
                    // Already in order: one series, rising time.
                    0 => Datum::Int64(i as i64 * hour / 10),
                    _ if next(20) == 0 => Datum::Null,
                    // Repeated times, across windows and a day boundary.
                    _ => Datum::Int64(20 * hour + (next(12) as i64) * hour / 2),
                })
                .collect();
            let hosts: Vec<Datum> = (0..n)
                .map(|_| if case == 0 { Datum::text("h") } else if next(15) == 0 { Datum::Null } else { Datum::text(format!("h{}", next(4))) })
                .collect();
            let racks: Vec<Datum> = (0..n).map(|_| Datum::Int64(next(3) as i64)).collect();
            let time = Column::from_datums(DataType::TimestampTz, &times);
            let host = Column::from_datums(DataType::Text, &hosts);
            let rack = Column::from_datums(DataType::Int64, &racks);
            for series in [vec![&host], vec![&rack, &host]] {
                let parts = partition_and_sort(&time, &series);
                let expected = reference(&time, &series);
                assert_eq!(parts.concat(), expected, "case {case}, {} series columns", series.len());
                // Each part is one day (NULL times their own part).
                let ColumnData::Int64(ts) = &time.data else { unreachable!() };
                for part in &parts {
                    let days: std::collections::HashSet<Option<i64>> = part
                        .iter()
                        .map(|&r| time.is_valid(r as usize).then(|| ts[r as usize].div_euclid(PARTITION_NS)))
                        .collect();
                    assert_eq!(days.len(), 1, "case {case}");
                }
            }
        }
    }

    #[test]
    fn text_ranks_follow_byte_order_with_nulls_last() {
        let values = ["robot02", "robot01", "robot01", "", "robot10"];
        let mut datums: Vec<Datum> = values.iter().map(|v| Datum::text(*v)).collect();
        datums.insert(2, Datum::Null);
        let col = Column::from_datums(DataType::Text, &datums);
        // "" < robot01 < robot02 < robot10; the NULL after every value.
        assert_eq!(rank_column(&col), vec![2, 1, u64::MAX, 1, 0, 3]);
    }

    #[test]
    fn time_series_rows_are_partitioned_and_sorted_by_series_then_time_with_their_cache_forms() {
        let day = PARTITION_NS;
        // 3 hosts, rows arriving by time then host, spanning two days.
        let mut t = Vec::new();
        let mut h = Vec::new();
        for i in 0..200i64 {
            for host in [2, 0, 1] {
                t.push(Datum::Int64(day - 100 * 1_000_000_000 + i * 1_000_000_000));
                h.push(Datum::Int32(host));
            }
        }
        let types = [DataType::TimestampTz, DataType::Int32];
        let batch = Batch::from_columns(vec![
            Column::from_datums(types[0], &t),
            Column::from_datums(types[1], &h),
        ]);
        let (def, frozen) = cpu_table(None, batch);
        let ids = AtomicU64::new(5);
        let segs = encode_frozen(&def, None, &frozen, 0, &ids, usize::MAX);
        assert_eq!(segs.len(), 2, "two days, two partitions");
        assert_eq!(ids.load(Ordering::Relaxed), 7);
        assert_eq!((segs[0].id, segs[1].id), (5, 6));
        assert_eq!(segs[0].footer.rows, 300);
        assert_eq!(segs[0].footer.series_columns, vec![1]);
        assert_eq!(segs[0].footer.series.len(), 3);
        assert_eq!(
            segs[0].footer.series[0].key,
            vec![Some(0i64.to_le_bytes().to_vec())]
        );
        assert!(segs[0].footer.time_max < day && segs[1].footer.time_min >= day);
        // each block comes with its cache form, which decodes as the file's block does
        for seg in &segs {
            let blocks: usize = seg.footer.groups.iter().map(|(_, b)| b.len()).sum();
            assert_eq!(seg.cached.len(), blocks);
            for (c, g, block) in &seg.cached {
                let meta = &seg.footer.groups[*g as usize].1[*c as usize];
                let stored = &seg.bytes[meta.offset as usize..(meta.offset + meta.len as u64) as usize];
                let t = types[*c as usize];
                let from_file = super::super::segment::reader::decode_block_bytes("t", meta, stored, t).unwrap();
                let from_cache = super::super::segment::reader::decode_cached("t", meta, block, t).unwrap();
                assert_eq!(format!("{from_file:?}"), format!("{from_cache:?}"));
            }
        }
        // a segment larger than the cache's budget makes none, nor does a compaction's output
        assert!(encode_frozen(&def, None, &frozen, 0, &ids, 100).iter().all(|s| s.cached.is_empty()));
        let mut next = 9;
        let merged = encode_rows(&def, None, 1, Batch::from_columns(vec![Column::from_datums(types[0], &t), Column::from_datums(types[1], &h)]), 0, &mut next);
        assert_eq!((merged[0].id, next), (9, 11));
        assert!(merged.iter().all(|s| s.cached.is_empty()));
    }

    fn index(keys: &[&str]) -> Arc<crate::catalog::IndexDef> {
        Arc::new(crate::catalog::IndexDef {
            oid: 2,
            name: "i".into(),
            table: "cpu".into(),
            unique: false,
            primary: false,
            constraint: false,
            method: "btree".into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            include: vec![],
            predicate: None,
        })
    }

    #[test]
    fn an_index_on_column_and_time_declares_the_series_key() {
        // 40 rows of 40 hosts: too many distinct values for the key to be inferred.
        let types = [DataType::TimestampTz, DataType::Int32];
        let t: Vec<Datum> = (0..40).map(|i| Datum::Int64(i * 1_000_000_000)).collect();
        let h: Vec<Datum> = (0..40).map(|i| Datum::Int32(39 - i)).collect();
        let batch = Batch::from_columns(vec![Column::from_datums(types[0], &t), Column::from_datums(types[1], &h)]);
        let (def, frozen) = cpu_table(Some(0), batch);
        assert_eq!(declared_series_key(&def, &[index(&["tags_id", "\"time\" DESC"])]), Some(1));
        assert_eq!(declared_series_key(&def, &[index(&["tags_id"])]), None);
        assert_eq!(declared_series_key(&def, &[index(&["\"time\" DESC", "tags_id"])]), None);
        let ids = AtomicU64::new(0);
        let inferred = encode_frozen(&def, None, &frozen, 0, &ids, usize::MAX);
        assert!(inferred[0].footer.series_columns.is_empty());
        let declared = encode_frozen(&def, Some(1), &frozen, 0, &ids, usize::MAX);
        assert_eq!(declared[0].footer.series_columns, vec![1]);
        assert_eq!(declared[0].footer.series.len(), 40);
        assert_eq!(declared[0].footer.series[0].key, vec![Some(0i64.to_le_bytes().to_vec())]);
    }
}
