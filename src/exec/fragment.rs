//! The part of a query that runs on every shard holding data: scan the
//! table's batches, filter, project, and optionally pre-aggregate, sending
//! the results back over a bounded channel.
//! Must not: see more than its own shard's data or any session state.

use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::catalog::TableId;
use crate::error::{DbError, DbResult};
use crate::exec::agg::{AggMode, HashAggregation};
use crate::exec::expr::{eval, filter_batch, EvalInputs, Value};
use crate::exec::vector::{Batch, Column};
use crate::exec::EvalContext;
use crate::runtime::{ShardContext, ShardHandle};
use crate::sql::plan::{AggCall, AggFunc, Expr};
use crate::storage::scan::{
    decode_group, groups_to_read, read_blocks, read_groups, Pruning, DATA_CORRUPTED,
};
use crate::storage::segment::column::{sum_f64_block, sum_i64_block, CachedBlock};
use crate::types::{DataType, Datum};
use rust_decimal::Decimal;
use crate::storage::table::{MemoryBlock, ScanSnapshot};

/// Batches in flight per fragment before the shard waits for the coordinator.
pub const FRAGMENT_CHANNEL_DEPTH: usize = 8;

#[derive(Debug, Clone)]
pub struct FragmentAggregate {
    pub group_by: Vec<Expr>,
    pub aggs: Vec<AggCall>,
}

/// A pushed-down scan. Expressions are shard-pure (see `Expr::is_shard_pure`).
#[derive(Debug, Clone)]
pub struct Fragment {
    pub table: TableId,
    pub projection: Vec<usize>,
    pub filter: Option<Expr>,
    pub aggregate: Option<FragmentAggregate>,
    pub eval: EvalContext,
    pub cancel: Arc<crate::exec::cancel::CancelFlag>,
    /// EXPLAIN ANALYZE: what the fragment read (segments, block groups, memtable rows).
    pub stats: Option<Arc<crate::exec::explain::ScanStats>>,
    /// `ORDER BY column … LIMIT n` above the scan: read the blocks most likely
    /// to hold the first rows first and stop once no unread block can (see
    /// `run_in_order`). Only without an aggregate.
    pub order_hint: Option<OrderHint>,
    /// Table columns holding the frame form (`storage/frames.rs`): a shard
    /// gives their values back as bytes before evaluating anything over them.
    pub frames: Vec<usize>,
}

/// The order the rows above a scan are sorted in, and how many are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrderHint {
    pub table: TableId,
    /// A table column of integers, dates or timestamps, in the projection.
    pub column: usize,
    pub descending: bool,
    pub nulls_first: bool,
    pub rows: usize,
}

/// Where the rows of an ordered read come from, and the best sort value
/// they can hold, as a rank (higher first; `i64::MAX` when unknown).
enum Source {
    Memory(usize),
    Group(usize, usize),
}

pub type FragmentSender = mpsc::Sender<DbResult<Batch>>;

impl Fragment {
    /// Starts this fragment on `shard`; results arrive on `tx`.
    pub async fn start(self, shard: &ShardHandle, tx: FragmentSender) -> DbResult<()> {
        shard
            .send_job(Box::new(move |ctx| {
                let snapshot = ctx.storage.borrow().scan(self.table);
                let ctx = ctx.clone();
                tokio::task::spawn_local(async move {
                    let result = self.run_snapshot(Some(&ctx), snapshot, &tx).await;
                    if let Err(e) = result {
                        let _ = tx.send(Err(e)).await;
                    }
                });
            }))
            .await
    }

    /// Runs the fragment over in-memory, full-width `batches` (a
    /// transaction's own rows), sending results on `tx`.
    pub async fn run(&self, batches: Vec<Batch>, tx: &FragmentSender) -> DbResult<()> {
        self.run_snapshot(
            None,
            ScanSnapshot {
                batches,
                ..Default::default()
            },
            tx,
        )
        .await
    }

    /// Runs the fragment over a shard's segments (pruned by the filter's
    /// ranges, only the needed columns read) and in-memory batches.
    async fn run_snapshot(
        &self,
        ctx: Option<&Rc<ShardContext>>,
        snap: ScanSnapshot,
        tx: &FragmentSender,
    ) -> DbResult<()> {
        let _report = PanicReport(tx.clone());
        let narrow = Narrowed::new(self);
        if let (Some(hint), None) = (self.order_hint, &self.aggregate) {
            if hint.table == self.table {
                if let Some(position) = self.projection.iter().position(|&c| c == hint.column) {
                    return self.run_in_order(ctx, snap, tx, &narrow, hint, position).await;
                }
            }
        }
        let mut agg = match &self.aggregate {
            Some(a) => Some(new_aggregation(a, AggMode::Partial)?),
            None => None,
        };
        let mut n = 0usize;
        let answers = match (&self.filter, &narrow.aggregate) {
            (None, Some(spec)) => block_answers(spec),
            _ => None,
        };
        let pruning = Pruning::from_filter(self.filter.as_ref());
        if let Some(ctx) = ctx {
            if let Some(stats) = &self.stats {
                use crate::exec::explain::ScanStats as S;
                S::add(&stats.shards, 1);
                for seg in &snap.segments {
                    let read: usize = groups_to_read(seg, &pruning).iter().map(|w| w.len()).sum();
                    S::add(&stats.segments, 1);
                    S::add(&stats.segments_read, (read > 0) as u64);
                    S::add(&stats.groups, seg.footer.groups.len() as u64);
                    S::add(&stats.groups_read, read as u64);
                }
            }
            for seg in &snap.segments {
                for window in groups_to_read(seg, &pruning) {
                    self.check_cancel()?;
                    if let (Some(answers), true) = (&answers, agg.is_some()) {
                        // Whole block groups answered from their blocks'
                        // headers and fused sums; the rest decoded.
                        let blocks = read_blocks(ctx, seg, &window, &narrow.columns).await?;
                        for (&g, group) in window.iter().zip(&blocks) {
                            let rows = seg.footer.groups[g].0 as usize;
                            match (group_state(answers, rows, group)?, agg.as_mut()) {
                                (Some(partial), Some(state)) => state.merge(&partial, 0)?,
                                _ => {
                                    let b = decode_group(seg, g, group, &narrow.columns, &snap.types)?;
                                    let whole = pruning.group_all_match(seg, g);
                                    if !self.consume(Some(ctx), &narrow, &b, whole, &mut agg, tx, &mut n).await? {
                                        return Ok(());
                                    }
                                }
                            }
                        }
                        continue;
                    }
                    let batches =
                        read_groups(ctx, seg, &window, &narrow.columns, &snap.types).await?;
                    for (&g, b) in window.iter().zip(&batches) {
                        let whole = pruning.group_all_match(seg, g);
                        if !self.consume(Some(ctx), &narrow, b, whole, &mut agg, tx, &mut n).await? {
                            return Ok(());
                        }
                    }
                }
            }
        }
        let skip_memtable = !memtable_may_match(&snap, &pruning);
        // A series' rows picked out of many blocks by their postings come a
        // few per block: gathered into one batch before the filter, not
        // filtered and sent a few rows at a time.
        let mut gathered: Vec<Batch> = Vec::new();
        let mut gathered_rows = 0usize;
        for i in 0..snap.memory_blocks() {
            self.check_cancel()?;
            let (batch, index, in_memtable) = snap.memory_block(i);
            if skip_memtable && in_memtable {
                continue;
            }
            let (mut rows, mut whole) = (None, false);
            if let Some(index) = index {
                if !pruning.zones_may_match(&index.zones) {
                    continue;
                }
                rows = pruning.posting_rows(index);
                whole = pruning.zones_all_match(&index.zones);
            }
            let b = narrow_block(batch, &narrow.columns, rows.as_deref());
            if b.len == 0 {
                continue;
            }
            if let Some(stats) = &self.stats {
                crate::exec::explain::ScanStats::add(&stats.rows_in_memory, b.len as u64);
            }
            let small = rows.is_some() && b.len < GATHER_ROWS;
            if small {
                gathered_rows += b.len;
                gathered.push(b.clone());
            }
            // Gathered pieces go on once there are enough, or before a larger
            // batch (rows stay in block order).
            if !gathered.is_empty() && (!small || gathered_rows >= GATHER_ROWS) {
                let all = concat_pieces(&std::mem::take(&mut gathered));
                gathered_rows = 0;
                if !self.consume(ctx, &narrow, &all, false, &mut agg, tx, &mut n).await? {
                    return Ok(());
                }
            }
            if !small && !self.consume(ctx, &narrow, &b, whole, &mut agg, tx, &mut n).await? {
                return Ok(());
            }
        }
        if !gathered.is_empty() {
            let all = concat_pieces(&gathered);
            if !self.consume(ctx, &narrow, &all, false, &mut agg, tx, &mut n).await? {
                return Ok(());
            }
        }
        if let (Some(state), Some(spec)) = (agg, &narrow.aggregate) {
            let _ = tx.send(state.finish(!spec.group_by.is_empty())).await;
        }
        Ok(())
    }

    /// An ordered read: sources (memtable blocks, segment block groups) by the
    /// best value of the sort column they may hold, each read whole, until the
    /// `hint.rows`-th best value seen ranks above every unread source. The
    /// coordinator's sort and limit above still order and cut the rows.
    async fn run_in_order(
        &self,
        ctx: Option<&Rc<ShardContext>>,
        snap: ScanSnapshot,
        tx: &FragmentSender,
        narrow: &Narrowed,
        hint: OrderHint,
        position: usize,
    ) -> DbResult<()> {
        let pruning = Pruning::from_filter(self.filter.as_ref());
        // A value's rank: higher sorts first. NULLs rank first or last.
        let rank = |v: i64| if hint.descending { v } else { v.saturating_neg() };
        let null_rank = if hint.nulls_first { i64::MAX } else { i64::MIN };
        let mut sources: Vec<(i64, Source)> = Vec::new();
        let skip_memtable = !memtable_may_match(&snap, &pruning);
        for i in 0..snap.memory_blocks() {
            let (_, index, in_memtable) = snap.memory_block(i);
            if skip_memtable && in_memtable {
                continue;
            }
            let zone = match index {
                Some(index) => {
                    // Postings are looked at only for blocks actually read.
                    if !pruning.zones_may_match(&index.zones) {
                        continue;
                    }
                    index.zones.get(hint.column).copied().flatten()
                }
                _ => None,
            };
            let best = match zone {
                Some(z) if z.has_nulls && hint.nulls_first => i64::MAX,
                Some(z) => rank(if hint.descending { z.max } else { z.min }),
                None => i64::MAX,
            };
            sources.push((best, Source::Memory(i)));
        }
        if ctx.is_some() {
            for (s, seg) in snap.segments.iter().enumerate() {
                for g in groups_to_read(seg, &pruning).into_iter().flatten() {
                    let best = match seg.footer.groups[g].1.get(hint.column) {
                        Some(b) if b.header.nulls > 0 && hint.nulls_first => i64::MAX,
                        Some(b) if b.header.nulls == b.header.rows => null_rank,
                        Some(b) if b.header.has_zone_map() => {
                            rank(if hint.descending { b.header.max } else { b.header.min })
                        }
                        _ => i64::MAX,
                    };
                    sources.push((best, Source::Group(s, g)));
                }
            }
        }
        // Best first; among equals, in listing order (memory, the newest rows, first).
        // A heap: usually only the first few are ever taken.
        let mut order: std::collections::BinaryHeap<(i64, std::cmp::Reverse<usize>)> = sources
            .iter()
            .enumerate()
            .map(|(k, (best, _))| (*best, std::cmp::Reverse(k)))
            .collect();
        let mut top: Vec<i64> = Vec::with_capacity(hint.rows + 1);
        let mut n = 0usize;
        let mut segments_read = vec![false; snap.segments.len()];
        let (mut memory_rows, mut groups_read) = (0u64, 0u64);
        while let Some((best, std::cmp::Reverse(k))) = order.pop() {
            let source = &sources[k].1;
            self.check_cancel()?;
            if top.len() >= hint.rows && hint.rows > 0 && best < top[hint.rows - 1] {
                break;
            }
            let batches = match *source {
                Source::Memory(i) => {
                    let (batch, index, _) = snap.memory_block(i);
                    let rows = index.and_then(|index| pruning.posting_rows(index));
                    let b = narrow_block(batch, &narrow.columns, rows.as_deref());
                    memory_rows += b.len as u64;
                    vec![b]
                }
                Source::Group(s, g) => match ctx {
                    Some(ctx) => {
                        segments_read[s] = true;
                        groups_read += 1;
                        read_groups(ctx, &snap.segments[s], &[g], &narrow.columns, &snap.types).await?
                    }
                    None => Vec::new(),
                },
            };
            for b in batches.iter().flat_map(|b| frame_pieces(ctx, narrow, b)) {
                let out = self.narrow_rows(ctx, narrow, &b, false).await?;
                let col = &out.columns[position];
                for r in 0..out.len {
                    let v = if col.is_valid(r) {
                        rank(col.datum(r).as_i64().unwrap_or(0))
                    } else {
                        null_rank
                    };
                    let at = top.partition_point(|&x| x >= v);
                    if at < hint.rows {
                        top.insert(at, v);
                        top.truncate(hint.rows);
                    }
                }
                if out.len > 0 && tx.send(Ok(out)).await.is_err() {
                    return Ok(());
                }
                n += 1;
                if n.is_multiple_of(16) {
                    tokio::task::yield_now().await;
                }
            }
        }
        if let Some(stats) = &self.stats {
            use crate::exec::explain::ScanStats as S;
            S::add(&stats.shards, ctx.is_some() as u64);
            S::add(&stats.rows_in_memory, memory_rows);
            S::add(&stats.segments, snap.segments.len() as u64);
            S::add(&stats.segments_read, segments_read.iter().filter(|r| **r).count() as u64);
            S::add(&stats.groups, snap.segments.iter().map(|s| s.footer.groups.len() as u64).sum());
            S::add(&stats.groups_read, groups_read);
        }
        Ok(())
    }

    fn check_cancel(&self) -> DbResult<()> {
        self.cancel.check()
    }

    /// One narrow batch filtered (unless every row is known to match:
    /// `whole`) and projected; frame columns read back as bytes on a shard
    /// (after the filter when it does not read them, so only matching rows'
    /// frames are read).
    async fn narrow_rows(&self, ctx: Option<&Rc<ShardContext>>, narrow: &Narrowed, batch: &Batch, whole: bool) -> DbResult<Batch> {
        let ctx = match ctx {
            Some(ctx) if !narrow.frames.is_empty() => ctx,
            _ => return if whole { Ok(narrow.project(batch)) } else { narrow.process(&self.eval, batch) },
        };
        let filter_first = !whole && !narrow.filter_reads_frames;
        let mut rows = if filter_first { narrow.filter(&self.eval, batch)? } else { batch.clone() };
        let data_dir = ctx.storage.borrow().data_dir.clone();
        for &c in &narrow.frames {
            let values = ctx.frames.resolve(&ctx.io, data_dir.as_deref(), &rows.columns[c]).await?;
            rows.columns[c] = Arc::new(values);
        }
        if !whole && !filter_first {
            rows = narrow.filter(&self.eval, &rows)?;
        }
        Ok(narrow.project(&rows))
    }

    /// Filters (unless every row is known to match: `whole`), projects and
    /// aggregates or sends one narrow batch; false when the coordinator
    /// stopped reading (LIMIT, error).
    #[allow(clippy::too_many_arguments)]
    async fn consume(
        &self,
        ctx: Option<&Rc<ShardContext>>,
        narrow: &Narrowed,
        batch: &Batch,
        whole: bool,
        agg: &mut Option<HashAggregation>,
        tx: &FragmentSender,
        n: &mut usize,
    ) -> DbResult<bool> {
        for piece in frame_pieces(ctx, narrow, batch) {
            let out = self.narrow_rows(ctx, narrow, &piece, whole).await?;
            match (&mut *agg, &narrow.aggregate) {
                (Some(state), Some(spec)) => update_aggregation(state, spec, &out, &self.eval)?,
                _ => {
                    if out.len > 0 && tx.send(Ok(out)).await.is_err() {
                        return Ok(false);
                    }
                }
            }
        }
        *n += 1;
        if (*n).is_multiple_of(16) {
            tokio::task::yield_now().await;
        }
        Ok(true)
    }
}

/// `batch` whole, or — when a shard reads frame columns back — in pieces of
/// `frames::ROWS_PER_READ` rows, so that no more frames are read (and held)
/// at once than those pieces' rows.
fn frame_pieces(ctx: Option<&Rc<ShardContext>>, narrow: &Narrowed, batch: &Batch) -> Vec<Batch> {
    use crate::storage::frames::ROWS_PER_READ;
    if ctx.is_none() || narrow.frames.is_empty() || batch.len <= ROWS_PER_READ {
        return vec![batch.clone()];
    }
    (0..batch.len)
        .step_by(ROWS_PER_READ)
        .map(|start| {
            let n = ROWS_PER_READ.min(batch.len - start);
            Batch::new(batch.columns.iter().map(|c| Arc::new(c.slice(start, n))).collect(), n)
        })
        .collect()
}

/// A memtable block's `columns` (table column indexes), only `rows` of it when given.
/// Turns a panic in a fragment into an error its coordinator receives: the
/// coordinator reads until every sender is gone, so a fragment that died
/// silently would look like one that found no more rows.
struct PanicReport(FragmentSender);

impl Drop for PanicReport {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let tx = self.0.clone();
            // Fragments run as local tasks (on a shard, or the session's
            // LocalSet for a transaction's own rows): so does the report.
            tokio::task::spawn_local(async move {
                let _ = tx
                    .send(Err(DbError::internal("a scan fragment failed unexpectedly (see the server log)")))
                    .await;
            });
        }
    }
}

/// Pieces of narrowed blocks as one batch (the column types are the
/// pieces' own: a transaction's own rows come without the snapshot's types).
fn concat_pieces(pieces: &[Batch]) -> Batch {
    let types: Vec<DataType> = pieces.first().map_or(Vec::new(), |b| b.columns.iter().map(|c| c.data_type).collect());
    Batch::concat(&types, pieces)
}

/// Memory-block pieces picked by postings are gathered up to this many rows
/// before they are filtered and sent on.
const GATHER_ROWS: usize = 1024;

fn narrow_block(block: MemoryBlock<'_>, columns: &[usize], rows: Option<&[u32]>) -> Batch {
    let narrow = block.columns(columns);
    match rows {
        Some(rows) if rows.len() < narrow.len => narrow.take(rows),
        _ => narrow,
    }
}

/// Whether the snapshot's memtable may hold a row the filter wants.
fn memtable_may_match(snap: &ScanSnapshot, pruning: &Pruning) -> bool {
    snap.memtable_values.as_ref().is_none_or(|v| pruning.memtable_may_match(v))
}

/// How one aggregate (without GROUP BY, filter, FILTER or DISTINCT) takes
/// its partial state from a whole block group without decoding it; the
/// column is the narrowed scan's.
#[derive(Debug, Clone, Copy)]
enum BlockAnswer {
    /// count(*): the group's row count.
    CountStar,
    /// count(col): rows minus the block's NULLs.
    Count(usize),
    /// sum / avg of a float8 or integer column: the block's fused sum.
    Sum(usize, DataType),
    Avg(usize, DataType),
    /// min / max of a float8 or integer column: the block's zone map.
    Min(usize, DataType),
    Max(usize, DataType),
}

/// The block answers of every aggregate of `spec`, or `None` when one of
/// them needs the rows.
fn block_answers(spec: &FragmentAggregate) -> Option<Vec<BlockAnswer>> {
    if !spec.group_by.is_empty() {
        return None;
    }
    let numeric = |t: DataType| {
        matches!(
            t,
            DataType::Float64 | DataType::Int16 | DataType::Int32 | DataType::Int64
        )
    };
    spec.aggs
        .iter()
        .map(|call| {
            if call.distinct || call.filter.is_some() {
                return None;
            }
            let column = match &call.arg {
                Some(Expr::Column(i, t)) => Some((*i, *t)),
                Some(_) => return None,
                None => None,
            };
            Some(match (call.func, column) {
                (AggFunc::CountStar, _) => BlockAnswer::CountStar,
                (AggFunc::Count, Some((i, _))) => BlockAnswer::Count(i),
                (AggFunc::Sum, Some((i, t))) if numeric(t) => BlockAnswer::Sum(i, t),
                (AggFunc::Avg, Some((i, t))) if numeric(t) => BlockAnswer::Avg(i, t),
                (AggFunc::Min, Some((i, t))) if numeric(t) => BlockAnswer::Min(i, t),
                (AggFunc::Max, Some((i, t))) if numeric(t) => BlockAnswer::Max(i, t),
                _ => return None,
            })
        })
        .collect()
}

/// One group's partial aggregate state (one row, `Accumulator::emit_state`
/// layout) from its cached blocks, or `None` when a block cannot answer
/// (NULLs in a summed column, no fused sum for its encoding, no zone map).
fn group_state(
    answers: &[BlockAnswer],
    rows: usize,
    blocks: &[Rc<CachedBlock>],
) -> DbResult<Option<Batch>> {
    let corrupt = |e: String| DbError::new(DATA_CORRUPTED, format!("segment block: {e}"));
    let one = |t: DataType, d: Datum| Arc::new(Column::from_datums(t, &[d]));
    let count = |n: usize| one(DataType::Int64, Datum::Int64(n as i64));
    // The sum of column `i`'s block as a state value: float8 or numeric.
    let sum = |i: usize, t: DataType| -> DbResult<Option<(DataType, Datum)>> {
        let b = &blocks[i];
        Ok(if t == DataType::Float64 {
            sum_f64_block(&b.header, &b.payload)
                .map_err(corrupt)?
                .map(|s| (DataType::Float64, Datum::Float64(s)))
        } else {
            sum_i64_block(&b.header, &b.payload)
                .map_err(corrupt)?
                .map(|s| (DataType::Numeric, Datum::Numeric(Decimal::from(s).into())))
        })
    };
    let bound = |i: usize, t: DataType, min: bool| -> Option<Datum> {
        let h = &blocks[i].header;
        if !h.has_zone_map() || h.nulls as usize == rows {
            return None;
        }
        let v = if min { h.min } else { h.max };
        Some(match t {
            DataType::Float64 => Datum::Float64(f64::from_bits(v as u64)),
            DataType::Int16 => Datum::Int16(v as i16),
            DataType::Int32 => Datum::Int32(v as i32),
            _ => Datum::Int64(v),
        })
    };
    let mut cols = Vec::new();
    for a in answers {
        match *a {
            BlockAnswer::CountStar => cols.push(count(rows)),
            BlockAnswer::Count(i) => cols.push(count(rows - blocks[i].header.nulls as usize)),
            BlockAnswer::Sum(i, t) | BlockAnswer::Avg(i, t) => {
                let Some((st, s)) = sum(i, t)? else {
                    return Ok(None);
                };
                cols.push(one(st, s));
                if let BlockAnswer::Avg(..) = a {
                    cols.push(count(rows));
                }
            }
            BlockAnswer::Min(i, t) | BlockAnswer::Max(i, t) => {
                let Some(d) = bound(i, t, matches!(a, BlockAnswer::Min(..))) else {
                    return Ok(None);
                };
                cols.push(one(t, d));
            }
        }
    }
    Ok(Some(Batch::new(cols, 1)))
}

/// The input columns a shard-side aggregate reads: its group keys', its
/// arguments' and its FILTERs' (EXPLAIN names them too).
pub(crate) fn aggregate_inputs(group_by: &[Expr], aggs: &[AggCall], out: &mut Vec<usize>) {
    for e in group_by.iter().chain(aggs.iter().flat_map(|a| a.arg.iter().chain(&a.filter))) {
        e.columns_used(out);
    }
}

/// The fragment over only the columns it reads: `columns` (table column
/// indexes, ascending) and the filter and projection renumbered onto them.
struct Narrowed {
    columns: Vec<usize>,
    filter: Option<Expr>,
    projection: Vec<usize>,
    aggregate: Option<FragmentAggregate>,
    /// Positions (in the narrow batch) of columns in the frame form.
    frames: Vec<usize>,
    filter_reads_frames: bool,
}

impl Narrowed {
    fn new(f: &Fragment) -> Narrowed {
        let mut used: Vec<usize> = Vec::new();
        if let Some(filter) = &f.filter {
            filter.columns_used(&mut used);
        }
        match &f.aggregate {
            // An aggregate reads its own inputs; the scan's projection is then
            // only the columns it references.
            Some(a) => aggregate_inputs(&a.group_by, &a.aggs, &mut used),
            None => used.extend(&f.projection),
        }
        used.sort_unstable();
        used.dedup();
        let remap = |e: &Expr| {
            e.clone().transform(&mut |x| match x {
                Expr::Column(i, t) => Expr::Column(used.binary_search(&i).unwrap_or(0), t),
                other => other,
            })
        };
        let filter = f.filter.as_ref().map(remap);
        let (projection, aggregate) = match &f.aggregate {
            Some(a) => (
                (0..used.len()).collect(),
                Some(FragmentAggregate {
                    group_by: a.group_by.iter().map(remap).collect(),
                    aggs: a
                        .aggs
                        .iter()
                        .map(|c| AggCall {
                            arg: c.arg.as_ref().map(remap),
                            filter: c.filter.as_ref().map(remap),
                            ..c.clone()
                        })
                        .collect(),
                }),
            ),
            None => (
                f.projection
                    .iter()
                    .map(|&i| used.binary_search(&i).unwrap_or(0))
                    .collect(),
                None,
            ),
        };
        let frames: Vec<usize> =
            used.iter().enumerate().filter(|(_, c)| f.frames.contains(c)).map(|(i, _)| i).collect();
        let filter_reads_frames = f.filter.as_ref().is_some_and(|e| {
            let mut reads = false;
            e.clone().transform(&mut |x| {
                if let Expr::Column(i, _) = &x {
                    reads |= f.frames.contains(i);
                }
                x
            });
            reads
        });
        Narrowed {
            columns: used,
            filter,
            projection,
            aggregate,
            frames,
            filter_reads_frames,
        }
    }

    /// Filter then project one batch.
    fn process(&self, eval: &EvalContext, batch: &Batch) -> DbResult<Batch> {
        Ok(self.project(&self.filter(eval, batch)?))
    }

    /// The rows of one batch that pass the filter.
    fn filter(&self, eval: &EvalContext, batch: &Batch) -> DbResult<Batch> {
        let empty = Default::default();
        let cx = EvalInputs {
            eval,
            params: &[],
            outer: &[],
            subqueries: &empty,
        };
        match &self.filter {
            Some(f) => filter_batch(f, batch, &cx),
            None => Ok(batch.clone()),
        }
    }

    /// Project one batch whose rows all pass the filter.
    fn project(&self, batch: &Batch) -> Batch {
        let cols = self.projection.iter().map(|&i| batch.columns[i].clone()).collect();
        Batch::new(cols, batch.len)
    }
}

pub fn new_aggregation(spec: &FragmentAggregate, mode: AggMode) -> DbResult<HashAggregation> {
    let keys = spec.group_by.iter().map(|e| e.data_type()).collect();
    let aggs: Vec<_> = spec
        .aggs
        .iter()
        .map(|a| {
            (
                a.func,
                a.arg.as_ref().map_or(a.result_type, |e| e.data_type()),
                a.result_type,
                a.distinct,
            )
        })
        .collect();
    let mut state = HashAggregation::new(mode, keys, &aggs)?;
    for (k, a) in spec.aggs.iter().enumerate() {
        if let Some(Expr::Literal(d, _)) = &a.constant_arg {
            state.set_constant(k, d.clone());
        }
    }
    Ok(state)
}

/// Evaluates group keys, aggregate arguments and FILTER masks over raw rows
/// and folds them into `state`.
pub fn update_aggregation(
    state: &mut HashAggregation,
    spec: &FragmentAggregate,
    batch: &Batch,
    eval_ctx: &EvalContext,
) -> DbResult<()> {
    let empty = Default::default();
    let cx = EvalInputs {
        eval: eval_ctx,
        params: &[],
        outer: &[],
        subqueries: &empty,
    };
    update_aggregation_with(state, spec, batch, &cx)
}

pub fn update_aggregation_with(
    state: &mut HashAggregation,
    spec: &FragmentAggregate,
    batch: &Batch,
    cx: &EvalInputs,
) -> DbResult<()> {
    if batch.len == 0 && !spec.group_by.is_empty() {
        return Ok(());
    }
    let keys: Vec<Arc<Column>> = spec
        .group_by
        .iter()
        .map(|e| eval(e, batch, cx).map(|v| v.into_column(batch.len)))
        .collect::<DbResult<_>>()?;
    let mut args = Vec::with_capacity(spec.aggs.len());
    for a in &spec.aggs {
        let arg = match &a.arg {
            Some(e) => Some(eval(e, batch, cx)?.into_column(batch.len)),
            None => None,
        };
        let mask = match &a.filter {
            Some(f) => {
                let m = eval(f, batch, cx)?;
                Some(match m {
                    Value::Scalar(d, _) => vec![d == crate::types::Datum::Bool(true); batch.len],
                    Value::Column(c) => (0..batch.len)
                        .map(|i| c.datum(i) == crate::types::Datum::Bool(true))
                        .collect(),
                })
            }
            None => None,
        };
        args.push((arg, mask));
    }
    let key_refs: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
    let arg_refs: Vec<(Option<&Column>, Option<Vec<bool>>)> = args
        .iter()
        .map(|(a, m)| (a.as_deref(), m.clone()))
        .collect();
    state.update(&key_refs, batch.len, &arg_refs)
}
