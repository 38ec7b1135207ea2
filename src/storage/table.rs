//! One shard's table data: per table, the memtable (rows as they arrive),
//! frozen memtables (being flushed, still scanned) and the segment files
//! that hold everything flushed. A scan takes a `ScanSnapshot` of all three
//! at one instant on the shard thread, so it sees each row exactly once
//! however a flush or TRUNCATE moves rows around while it runs.
//! Must not: be shared between shards or locked; only its shard thread
//! touches it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use super::cache::BlockCache;
use super::files::SegmentFile;
use super::last_rows::LastRowRegistry;
use super::memtable::{CompactBatch, Memtable};
use crate::catalog::TableId;
use crate::exec::vector::Batch;
use crate::types::DataType;

/// Default block cache bound per shard.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

#[derive(Debug)]
struct TableStore {
    types: Vec<DataType>,
    memtable: Memtable,
    memtable_bytes: usize,
    /// When the oldest row now in the memtable arrived.
    memtable_since: Option<Instant>,
    frozen: Vec<Frozen>,
    segments: Vec<Rc<SegmentFile>>,
    /// Bumped by TRUNCATE: a flush that froze rows of an older generation
    /// must not install its segments.
    generation: u64,
}

impl TableStore {
    /// See [`ShardStorage::widen_table`].
    fn widen(&mut self, keep: usize, types: &[DataType]) {
        let keep = keep.min(self.types.len()).min(types.len());
        self.types = types.to_vec();
        self.memtable.widen(keep, types);
        for f in &mut self.frozen {
            f.rows.sealed = super::memtable::widen_blocks(&f.rows.sealed, keep, types);
            if let Some(open) = &mut f.rows.open {
                open.columns.truncate(keep);
                *open = open.clone().padded_to(types);
            }
        }
    }

    /// Removes the memtable rows whose time (column `time`, not NULL)
    /// satisfies `goes`, returning how many went. The memtable is rebuilt
    /// only when a row goes.
    fn remove_memtable_rows(&mut self, time: usize, goes: impl Fn(i64) -> bool) -> u64 {
        let kept_rows = |b: &Batch| -> Option<Vec<u32>> {
            let col = b.columns.get(time)?;
            let crate::exec::vector::ColumnData::Int64(v) = &col.data else {
                return None;
            };
            let keep: Vec<u32> = (0..b.len).filter(|&i| !col.is_valid(i) || !goes(v[i])).map(|i| i as u32).collect();
            (keep.len() < b.len).then_some(keep)
        };
        let blocks = self.memtable.snapshot();
        let keeps: Vec<Option<Vec<u32>>> = blocks.iter().map(kept_rows).collect();
        if keeps.iter().all(Option::is_none) {
            return 0;
        }
        let before = self.memtable.row_count();
        self.memtable.truncate();
        self.memtable_bytes = 0;
        for (b, keep) in blocks.into_iter().zip(keeps) {
            let b = match keep {
                Some(keep) => b.take(&keep),
                None => b,
            };
            self.memtable.append(&b);
            self.memtable_bytes += b.byte_size();
        }
        (before - self.memtable.row_count()) as u64
    }

    fn new(types: &[DataType]) -> TableStore {
        TableStore {
            types: types.to_vec(),
            memtable: Memtable::new(types.to_vec()),
            memtable_bytes: 0,
            memtable_since: None,
            frozen: Vec::new(),
            segments: Vec::new(),
            generation: 0,
        }
    }
}

/// What a scan reads: segments first, then in-memory batches.
#[derive(Debug, Default)]
pub struct ScanSnapshot {
    pub types: Vec<DataType>,
    pub segments: Vec<Rc<SegmentFile>>,
    pub batches: Vec<Batch>,
    /// Frozen memtables' sealed blocks, then the memtable's, with their zones and postings.
    pub frozen_sealed: Vec<super::memtable::SealedBlocks>,
    pub sealed: super::memtable::SealedBlocks,
    /// `batches[memtable_from..]` (the open block) and `sealed` are the
    /// memtable's, whose distinct values per column `memtable_values` holds
    /// (see `memtable::DistinctValues`); earlier batches are frozen rows.
    pub memtable_from: usize,
    pub memtable_values: Option<Arc<super::memtable::DistinctValues>>,
}

impl ScanSnapshot {
    /// How many blocks of rows are in memory: `batches`, then the frozen
    /// memtables' sealed blocks, then the memtable's.
    pub fn memory_blocks(&self) -> usize {
        self.batches.len() + self.frozen_sealed.iter().map(|s| s.len()).sum::<usize>() + self.sealed.len()
    }

    /// Memory block `i`: its rows, its index if sealed, and whether it is the memtable's.
    pub fn memory_block(&self, i: usize) -> (MemoryBlock<'_>, Option<&super::memtable::BlockIndex>, bool) {
        let Some(mut k) = i.checked_sub(self.batches.len()) else {
            return (MemoryBlock::Rows(&self.batches[i]), None, i >= self.memtable_from);
        };
        for frozen in &self.frozen_sealed {
            if k < frozen.len() {
                return (MemoryBlock::Sealed(&frozen[k]), Some(&frozen[k].index), false);
            }
            k -= frozen.len();
        }
        (MemoryBlock::Sealed(&self.sealed[k]), Some(&self.sealed[k].index), true)
    }
}

/// A block of rows in memory: a batch, or a memtable's sealed block (which
/// may keep a repeated value once; see `memtable::SealedBlock`).
#[derive(Debug, Clone, Copy)]
pub enum MemoryBlock<'a> {
    Rows(&'a Batch),
    Sealed(&'a super::memtable::SealedBlock),
}

impl MemoryBlock<'_> {
    /// The rows of the given columns, in that order.
    pub fn columns(&self, columns: &[usize]) -> Batch {
        match self {
            MemoryBlock::Rows(b) => Batch::new(columns.iter().map(|&c| b.columns[c].clone()).collect(), b.len),
            MemoryBlock::Sealed(s) => s.rows.columns(columns),
        }
    }

    /// Every column's rows.
    pub fn to_batch(&self) -> Batch {
        match self {
            MemoryBlock::Rows(b) => (*b).clone(),
            MemoryBlock::Sealed(s) => s.rows.to_batch(),
        }
    }
}

/// A table's rows taken out of its memtable for a flush.
/// A memtable being flushed: its rows, and for scans its sealed blocks
/// (with their zones and postings) and open block.
#[derive(Debug)]
struct Frozen {
    id: u64,
    /// The memtable's byte count when it was frozen.
    bytes: usize,
    rows: FrozenRows,
}

/// A frozen memtable's rows: its sealed blocks (shared with scans, which
/// also use their zones and postings) and a copy of its open block.
#[derive(Debug, Clone, Default)]
pub struct FrozenRows {
    pub sealed: super::memtable::SealedBlocks,
    pub open: Option<Batch>,
}

impl FrozenRows {
    pub fn row_count(&self) -> usize {
        self.sealed.iter().map(|b| b.len()).sum::<usize>() + self.open.as_ref().map_or(0, |b| b.len)
    }

    /// Every row as blocks, in order, a sealed block's repeated values still
    /// kept once (the flush spells them out a block of a segment at a time).
    pub fn blocks(&self) -> Vec<super::memtable::CompactBatch> {
        let sealed = self.sealed.iter().map(|b| b.rows.clone());
        sealed.chain(self.open.clone().map(super::memtable::CompactBatch::plain)).collect()
    }
}

#[derive(Debug, Clone)]
pub struct FrozenTable {
    pub table: TableId,
    pub types: Vec<DataType>,
    pub generation: u64,
    pub flush_id: u64,
    pub rows: FrozenRows,
}

/// One chunk of a table on one shard: see [`ShardStorage::chunk_facts`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkFact {
    pub table: TableId,
    /// The partition's number: its start is `partition × PARTITION_NS`.
    pub partition: i64,
    pub bytes: u64,
    pub in_memory: bool,
}

/// All tables' rows on one shard.
#[derive(Debug)]
pub struct ShardStorage {
    tables: HashMap<TableId, TableStore>,
    pub cache: BlockCache,
    /// Segments no longer live, deleted once a manifest without them is durable.
    retired: Vec<Rc<SegmentFile>>,
    /// The data directory (None: in-memory only, as in unit tests).
    pub data_dir: Option<PathBuf>,
    /// The latest row per series, shared by all shards (`last_rows.rs`):
    /// told of every row this shard makes visible or removes.
    pub last_rows: Arc<LastRowRegistry>,
    /// Where this shard's memtable bytes (frozen included) are published
    /// after every change, for the memtable limit of writes.
    memory_gauge: Arc<std::sync::atomic::AtomicUsize>,
    /// This shard's segment directory number and next segment id.
    pub dir: u32,
    pub next_segment: u64,
    next_flush: u64,
}

impl Default for ShardStorage {
    fn default() -> Self {
        ShardStorage {
            tables: HashMap::new(),
            cache: BlockCache::new(DEFAULT_CACHE_BYTES),
            retired: Vec::new(),
            data_dir: None,
            last_rows: Arc::default(),
            memory_gauge: Arc::default(),
            dir: 0,
            next_segment: 0,
            next_flush: 0,
        }
    }
}

impl ShardStorage {
    /// Empty storage that tells `last_rows` of its rows (the server's registry).
    pub fn feeding(last_rows: Arc<LastRowRegistry>) -> ShardStorage {
        ShardStorage { last_rows, ..ShardStorage::default() }
    }

    /// The same storage, publishing its memtable bytes to `gauge`.
    pub fn publishing_memory(self, gauge: Arc<std::sync::atomic::AtomicUsize>) -> ShardStorage {
        ShardStorage { memory_gauge: gauge, ..self }
    }

    /// Bytes of rows held in memory: memtables and frozen memtables not yet
    /// replaced by their segments.
    pub fn memory_bytes(&self) -> usize {
        self.tables
            .values()
            .map(|t| t.memtable_bytes + t.frozen.iter().map(|f| f.bytes).sum::<usize>())
            .sum()
    }

    fn publish_memory(&self) {
        self.memory_gauge.store(self.memory_bytes(), std::sync::atomic::Ordering::Relaxed);
    }

    /// The table's store, made with `types` if it has none; a store
    /// narrower than `types` (a writer that saw a column added before this
    /// shard did) takes the added columns first.
    fn table_mut(&mut self, table: TableId, types: &[DataType]) -> &mut TableStore {
        let t = self.tables.entry(table).or_insert_with(|| TableStore::new(types));
        if t.types.len() < types.len() {
            t.widen(t.types.len(), types);
        }
        t
    }

    /// Gives `table` the columns `types`: its columns `keep..` read NULL on
    /// every row this shard holds (an `ALTER TABLE … ADD COLUMN`, or, with
    /// `keep` past `types`' end, the undoing of one whose catalog change
    /// failed). Memtable and frozen blocks take a NULL column each; segment
    /// files stay as they are (a scan reads NULL for a column a segment
    /// lacks).
    pub fn widen_table(&mut self, table: TableId, keep: usize, types: &[DataType]) {
        self.last_rows.forget_rows(table);
        if let Some(t) = self.tables.get_mut(&table) {
            t.widen(keep, types);
        }
    }

    /// Appends a batch of the table's columns; one lacking the last ones
    /// (written before an ADD COLUMN) reads NULL there.
    pub fn append(&mut self, table: TableId, types: &[DataType], batch: &Batch) {
        let wider: Vec<DataType>;
        let types = if batch.columns.len() > types.len() {
            wider = batch.columns.iter().map(|c| c.data_type).collect();
            &wider[..]
        } else {
            types
        };
        let t = self.table_mut(table, types);
        let batch = batch.clone().padded_to(&t.types);
        t.memtable.append(&batch);
        self.last_rows.absorb(table, &batch);
        self.count_appended(table, batch.byte_size());
    }

    /// Appends rows already compacted (see `memtable::CompactBatch`).
    pub fn append_compact(&mut self, table: TableId, types: &[DataType], rows: CompactBatch) {
        if self.last_rows.tracks(table) {
            let width = self.table_mut(table, types).types.clone();
            self.last_rows.absorb(table, &rows.to_batch().padded_to(&width));
        }
        let bytes = rows.byte_size();
        self.table_mut(table, types).memtable.append_compact(rows);
        self.count_appended(table, bytes);
    }

    /// Counts `bytes` appended to `table`'s memtable (its flush age starts).
    fn count_appended(&mut self, table: TableId, bytes: usize) {
        if let Some(t) = self.tables.get_mut(&table) {
            t.memtable_bytes += bytes;
            t.memtable_since.get_or_insert_with(Instant::now);
        }
        self.memory_gauge.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Adds a segment found at start (recovery) or written by a flush.
    pub fn add_segment(&mut self, types: &[DataType], segment: Rc<SegmentFile>) {
        self.table_mut(segment.table, types).segments.push(segment);
    }

    pub fn scan(&self, table: TableId) -> ScanSnapshot {
        let Some(t) = self.tables.get(&table) else {
            return ScanSnapshot::default();
        };
        // Frozen memtables keep their sealed blocks' zones and postings while they are flushed.
        let mut batches: Vec<Batch> = t.frozen.iter().filter_map(|f| f.rows.open.clone()).collect();
        let frozen_sealed = t.frozen.iter().map(|f| f.rows.sealed.clone()).collect();
        let memtable_from = batches.len();
        let (sealed, open) = t.memtable.scan_parts();
        batches.extend(open);
        ScanSnapshot {
            types: t.types.clone(),
            segments: t.segments.clone(),
            batches,
            frozen_sealed,
            sealed,
            memtable_from,
            memtable_values: Some(t.memtable.distinct_values()),
        }
    }

    /// Every row in memory (memtable and frozen), for tests and callers that
    /// do not read segments.
    pub fn snapshot(&self, table: TableId) -> Vec<Batch> {
        let snap = self.scan(table);
        (0..snap.memory_blocks()).map(|i| snap.memory_block(i).0.to_batch()).collect()
    }

    pub fn drop_table(&mut self, table: TableId) {
        self.last_rows.drop_table(table);
        if let Some(t) = self.tables.remove(&table) {
            self.retire(t.segments);
        }
        self.publish_memory();
    }

    pub fn truncate(&mut self, table: TableId) {
        self.last_rows.forget_rows(table);
        if let Some(t) = self.tables.get_mut(&table) {
            t.memtable.truncate();
            t.memtable_bytes = 0;
            t.memtable_since = None;
            t.frozen.clear();
            t.generation += 1;
            let old = std::mem::take(&mut t.segments);
            self.retire(old);
        }
        self.publish_memory();
    }

    fn retire(&mut self, segments: Vec<Rc<SegmentFile>>) {
        for s in &segments {
            self.cache.forget_segment(s.cache_key);
        }
        self.retired.extend(segments);
    }

    /// Bytes of rows held in memtables and when the oldest arrived.
    pub fn memtable_pressure(&self) -> (usize, Option<Instant>) {
        let bytes = self.tables.values().map(|t| t.memtable_bytes).sum();
        let oldest = self.tables.values().filter_map(|t| t.memtable_since).min();
        (bytes, oldest)
    }

    /// Moves every non-empty memtable into the frozen list (still scanned)
    /// and returns the rows to flush.
    pub fn freeze(&mut self) -> Vec<FrozenTable> {
        let mut out = Vec::new();
        let mut ids: Vec<TableId> = self.tables.keys().copied().collect();
        ids.sort_unstable();
        for table in ids {
            let flush_id = self.next_flush;
            let Some(t) = self.tables.get_mut(&table) else {
                continue;
            };
            if t.memtable.row_count() == 0 {
                continue;
            }
            let (sealed, open) = t.memtable.scan_parts();
            t.memtable.truncate();
            let rows = FrozenRows { sealed, open };
            let bytes = std::mem::take(&mut t.memtable_bytes);
            t.memtable_since = None;
            t.frozen.push(Frozen {
                id: flush_id,
                bytes,
                rows: rows.clone(),
            });
            out.push(FrozenTable {
                table,
                types: t.types.clone(),
                generation: t.generation,
                flush_id,
                rows,
            });
            self.next_flush += 1;
        }
        out
    }

    /// Puts a segment's blocks, in their cache form, into the block cache,
    /// unless they would take more than half of it (a flush that large would
    /// only push out blocks more likely to be read).
    pub fn warm_cache(&mut self, seg: &SegmentFile, blocks: super::flush::CachedBlocks) {
        let bytes: usize = blocks.iter().map(|(_, _, b)| b.size()).sum();
        if bytes > self.cache.limit() / 2 {
            return;
        }
        for (column, group, block) in blocks {
            let key = super::cache::BlockKey { segment: seg.cache_key, column, group };
            self.cache.insert(key, Rc::new(block));
        }
    }

    /// Replaces a frozen memtable by the segments written from it; if the
    /// table was truncated or dropped meanwhile, the segments are retired
    /// instead. Returns whether they were installed.
    ///
    /// (Callers first hand each new segment's cache forms to `warm_cache`.)
    pub fn install(&mut self, frozen: &FrozenTable, segments: Vec<Rc<SegmentFile>>) -> bool {
        match self.tables.get_mut(&frozen.table) {
            Some(t) if t.generation == frozen.generation => {
                t.frozen.retain(|f| f.id != frozen.flush_id);
                t.segments.extend(segments);
                self.publish_memory();
                true
            }
            _ => {
                self.retire(segments);
                false
            }
        }
    }

    /// A flush that failed: its rows go back to being scanned from memory
    /// (they stay frozen; the next checkpoint writes them again).
    pub fn refreeze_failed(&mut self, frozen: &FrozenTable) {
        if let Some(t) = self.tables.get_mut(&frozen.table) {
            if t.generation == frozen.generation {
                if let Some(pos) = t.frozen.iter().position(|f| f.id == frozen.flush_id) {
                    // Back as the blocks they were: a value a block kept once stays kept once.
                    for b in t.frozen.remove(pos).rows.blocks() {
                        t.memtable_bytes += b.byte_size();
                        t.memtable.append_compact(b);
                    }
                    t.memtable_since.get_or_insert_with(Instant::now);
                }
            }
        }
        self.publish_memory();
    }

    /// Sets of segments worth merging: per table and time partition, the
    /// oldest `max` when there are at least `min`.
    pub fn compaction_candidates(
        &self,
        min: usize,
        max: usize,
    ) -> Vec<(TableId, Vec<Rc<SegmentFile>>)> {
        let mut out = Vec::new();
        let mut tables: Vec<_> = self.tables.iter().collect();
        tables.sort_by_key(|(id, _)| **id);
        for (id, t) in tables {
            let mut by_partition: std::collections::BTreeMap<i64, Vec<Rc<SegmentFile>>> =
                Default::default();
            for seg in &t.segments {
                let part = match seg.footer.time_column {
                    Some(_) => seg.footer.time_min.div_euclid(super::flush::PARTITION_NS),
                    None => i64::MIN,
                };
                by_partition.entry(part).or_default().push(seg.clone());
            }
            for (_, mut segs) in by_partition {
                if segs.len() >= min {
                    segs.sort_by_key(|s| s.id);
                    segs.truncate(max);
                    out.push((*id, segs));
                }
            }
        }
        out
    }

    /// Replaces segments `old` of `table` by `new` (a compaction's output),
    /// unless one of them is gone (TRUNCATE, DROP, retention meanwhile): then
    /// `new` is retired instead. Returns whether it was installed.
    pub fn replace_segments(
        &mut self,
        table: TableId,
        old: &[u64],
        new: Vec<Rc<SegmentFile>>,
    ) -> bool {
        let Some(t) = self.tables.get_mut(&table) else {
            self.retire(new);
            return false;
        };
        if !old.iter().all(|id| t.segments.iter().any(|s| s.id == *id)) {
            self.retire(new);
            return false;
        }
        let (gone, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut t.segments)
            .into_iter()
            .partition(|s| old.contains(&s.id));
        t.segments = keep;
        t.segments.extend(new);
        self.retire(gone);
        true
    }

    /// Retention: removes the rows of `table` whose time (column `time`) is
    /// before `cutoff` — whole segments (each lies within one partition, and
    /// callers align `cutoff` to a partition boundary) and memtable rows.
    /// Returns the segments and rows dropped. Not during a flush (callers hold
    /// the checkpoint lock, so nothing is frozen).
    pub fn drop_before(&mut self, table: TableId, time: usize, cutoff: i64) -> (usize, u64) {
        self.last_rows.drop_before(table, cutoff);
        let Some(t) = self.tables.get_mut(&table) else {
            return (0, 0);
        };
        let (gone, keep): (Vec<_>, Vec<_>) =
            std::mem::take(&mut t.segments).into_iter().partition(|s| {
                s.footer.time_column.is_some() && s.footer.rows > 0 && s.footer.time_max < cutoff
            });
        t.segments = keep;
        let mut rows: u64 = gone.iter().map(|s| s.footer.rows).sum();
        rows += t.remove_memtable_rows(time, |ts| ts < cutoff);
        let n = gone.len();
        self.retire(gone);
        self.publish_memory();
        (n, rows)
    }

    /// Whether `table`'s rows with a time (column `time`) in `ranges` can be
    /// removed by [`ShardStorage::drop_ranges`]: every segment was written
    /// with that time column, so each lies within one time partition (or
    /// holds only NULL times) and is either inside a partition-aligned range
    /// or outside it. A segment written before the table had its time column
    /// (create_hypertable of a table with rows) spans any times: no.
    pub fn ranges_droppable(&self, table: TableId, time: usize, ranges: &[(i64, i64)]) -> bool {
        let aligned = |v: i64| v.rem_euclid(super::flush::PARTITION_NS) == 0;
        // A segment of only NULL times says (0, 0): no range may hold time 0.
        if ranges.iter().any(|&(lo, hi)| lo >= hi || !aligned(lo) || !aligned(hi) || (lo <= 0 && 0 < hi)) {
            return false;
        }
        let Some(t) = self.tables.get(&table) else {
            return true;
        };
        t.segments.iter().all(|s| s.footer.rows == 0 || s.footer.time_column == Some(time as u16))
    }

    /// A DELETE's or UPDATE's removal of the rows of `table` whose time
    /// (column `time`) lies in one of `ranges` (partition-aligned, checked
    /// by [`ShardStorage::ranges_droppable`]): the segments inside them and
    /// the memtable's rows there; the statement writes the rows it keeps of
    /// those partitions again. Returns the rows removed. Not during a flush:
    /// the caller holds the checkpoint lock, so nothing is frozen (a frozen
    /// row would come back in the flush's segment).
    pub fn drop_ranges(&mut self, table: TableId, time: usize, ranges: &[(i64, i64)]) -> u64 {
        self.last_rows.forget_rows(table);
        let Some(t) = self.tables.get_mut(&table) else {
            return 0;
        };
        debug_assert!(t.frozen.is_empty(), "drop_ranges during a flush");
        let inside = |ts: i64| ranges.iter().any(|&(lo, hi)| lo <= ts && ts < hi);
        let (gone, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut t.segments).into_iter().partition(|s| {
            s.footer.time_column == Some(time as u16)
                && s.footer.rows > 0
                && inside(s.footer.time_min)
                && inside(s.footer.time_max)
        });
        t.segments = keep;
        let mut rows: u64 = gone.iter().map(|s| s.footer.rows).sum();
        rows += t.remove_memtable_rows(time, inside);
        self.retire(gone);
        self.publish_memory();
        rows
    }

    /// Per time-series table (`time_columns`: table → its time column) and
    /// time partition holding rows on this shard: the bytes of its segment
    /// files, and whether rows of it are still in memory (not yet in a
    /// compressed segment). What TimescaleDB calls chunks.
    pub fn chunk_facts(&self, time_columns: &HashMap<TableId, usize>) -> Vec<ChunkFact> {
        let mut out: std::collections::BTreeMap<(TableId, i64), ChunkFact> = Default::default();
        for (&table, &time) in time_columns {
            let Some(t) = self.tables.get(&table) else { continue };
            for s in &t.segments {
                if s.footer.rows == 0 || s.footer.time_column.is_none() {
                    continue;
                }
                let partition = s.footer.time_min.div_euclid(super::flush::PARTITION_NS);
                let fact = out.entry((table, partition)).or_insert(ChunkFact { table, partition, bytes: 0, in_memory: false });
                fact.bytes += s.bytes;
            }
            let (sealed, open) = t.memtable.scan_parts();
            let frozen = t.frozen.iter().flat_map(|f| f.rows.sealed.iter().map(|b| b.rows.column(time)).chain(f.rows.open.as_ref().map(|b| b.columns[time].clone())));
            let columns = sealed.iter().map(|b| b.rows.column(time)).chain(open.map(|b| b.columns[time].clone())).chain(frozen);
            for col in columns {
                let crate::exec::vector::ColumnData::Int64(values) = &col.data else { continue };
                let mut last = None;
                for (i, &v) in values.iter().enumerate() {
                    let partition = v.div_euclid(super::flush::PARTITION_NS);
                    if last == Some(partition) || !col.is_valid(i) {
                        continue;
                    }
                    last = Some(partition);
                    out.entry((table, partition)).or_insert(ChunkFact { table, partition, bytes: 0, in_memory: true }).in_memory = true;
                }
            }
        }
        out.into_values().collect()
    }

    /// Every live segment of this shard.
    pub fn live_segments(&self) -> Vec<Rc<SegmentFile>> {
        self.tables
            .values()
            .flat_map(|t| t.segments.iter().cloned())
            .collect()
    }

    /// Segments retired so far (to delete once the next manifest is durable).
    pub fn take_retired(&mut self) -> Vec<Rc<SegmentFile>> {
        std::mem::take(&mut self.retired)
    }

    /// Bytes on disk of a table's segments on this shard.
    pub fn table_bytes(&self, table: TableId) -> u64 {
        self.tables
            .get(&table)
            .map_or(0, |t| t.segments.iter().map(|s| s.bytes).sum())
    }

    /// Row count of a table on this shard (segments + memory).
    pub fn row_count(&self, table: TableId) -> u64 {
        self.tables.get(&table).map_or(0, |t| {
            t.segments.iter().map(|s| s.footer.rows).sum::<u64>()
                + t.frozen.iter().map(|f| f.rows.row_count() as u64).sum::<u64>()
                + t.memtable.row_count() as u64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Column;
    use crate::storage::memtable::CompactBatch;
    use crate::types::Datum;

    /// Every row in memory as (key, note), in key order.
    fn rows_of(storage: &ShardStorage, table: TableId) -> Vec<(Datum, Datum)> {
        let mut rows: Vec<(Datum, Datum)> = storage
            .snapshot(table)
            .iter()
            .flat_map(|b| (0..b.len).map(move |r| (b.columns[0].datum(r), b.columns[1].datum(r))))
            .collect();
        rows.sort_by_key(|(key, _)| match key {
            Datum::Int64(k) => *k,
            _ => i64::MIN,
        });
        rows
    }

    #[test]
    fn a_failed_flush_puts_the_rows_back_as_the_blocks_they_were() {
        let types = vec![DataType::Int64, DataType::Text];
        let note = Datum::text("n".repeat(40));
        let block = |keys: std::ops::Range<i64>| {
            let n = keys.end - keys.start;
            Batch::from_columns(vec![
                Column::from_datums(DataType::Int64, &keys.map(Datum::Int64).collect::<Vec<_>>()),
                Column::from_datums(DataType::Text, &vec![note.clone(); n as usize]),
            ])
        };
        let mut storage = ShardStorage::default();
        storage.append_compact(1, &types, CompactBatch::new(block(0..2048)));
        storage.append(1, &types, &block(2048..2051));
        let before = rows_of(&storage, 1);
        assert_eq!(before.len(), 2051);
        let held = storage.memtable_pressure().0;
        let frozen = storage.freeze();
        assert_eq!(frozen.len(), 1);
        storage.refreeze_failed(&frozen[0]);
        assert_eq!(rows_of(&storage, 1), before, "the same rows, back in the memtable");
        assert_eq!(storage.memtable_pressure().0, held, "counted as the bytes they hold, as when they came");
        let snap = storage.scan(1);
        assert!(snap.frozen_sealed.is_empty(), "nothing left frozen");
        assert!(snap.sealed.iter().any(|b| b.rows.is_compact()), "the note is still kept once in its block");
    }
}
