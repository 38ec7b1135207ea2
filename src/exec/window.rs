//! The window operator: reads all its input, and for each window call sorts
//! the rows by (PARTITION BY, ORDER BY), walks each partition with its peer
//! groups and frames, and appends the call's result column. Output rows come
//! in the order of the last call's sort, as PostgreSQL returns them.
//! Aggregates over frames reuse `agg::Accumulator`: frames that only grow
//! (UNBOUNDED PRECEDING starts) are folded incrementally, others refolded.
//! Must not: bind or type-check calls (the binder did), or keep rows beyond
//! the statement (memory is charged to the query).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;

use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::agg::Accumulator;
use crate::exec::expr::{eval, EvalInputs};
use crate::exec::operators::{compare_key, drain, next_slice, subquery_values, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::exec::vector::{Batch, Column};
use crate::sql::plan::*;
use crate::types::{DataType, Datum, Numeric};

pub struct WindowOp {
    pub input: BoxedOperator,
    pub calls: Vec<WindowCall>,
    pub input_types: Vec<DataType>,
    pub ctx: Rc<QueryContext>,
    pub out: Option<(Batch, usize)>,
}

impl Operator for WindowOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.out.is_none() {
                let all = drain(&mut self.input, &self.input_types, &self.ctx).await?;
                let computed = self.compute(all).await?;
                self.out = Some((computed, 0));
            }
            Ok(next_slice(&mut self.out))
        })
    }
}

impl WindowOp {
    async fn compute(&self, all: Batch) -> DbResult<Batch> {
        let calls: Vec<WindowCall> = self.calls.iter().map(|c| resolve_call(c, &self.ctx)).collect();
        let mut exprs: Vec<&Expr> = Vec::new();
        for c in &calls {
            exprs.extend(c.args.iter());
            exprs.extend(c.filter.iter());
            exprs.extend(c.partition_by.iter());
            exprs.extend(c.order_by.iter().map(|k| &k.expr));
        }
        let subs = if all.len > 0 && exprs.iter().any(|e| e.has_subquery()) {
            subquery_values(&exprs, &all, &self.ctx).await?
        } else {
            HashMap::new()
        };
        let cx = self.ctx.inputs(&subs);
        let mut columns: Vec<Column> = Vec::new();
        let mut order: Option<Vec<u32>> = None;
        for call in &calls {
            let (col, perm) = evaluate_call(call, &all, &cx, &self.ctx)?;
            self.ctx.charge(col.byte_size())?;
            columns.push(col);
            order = Some(perm);
        }
        let mut out: Vec<_> = all.columns.clone();
        out.extend(columns.into_iter().map(std::sync::Arc::new));
        let batch = Batch::new(out, all.len);
        Ok(match order {
            Some(perm) => batch.take(&perm),
            None => batch,
        })
    }
}

/// The call with parameters and outer references replaced by their values.
fn resolve_call(c: &WindowCall, ctx: &QueryContext) -> WindowCall {
    let bound = |b: &FrameBound| match b {
        FrameBound::Preceding(e) => FrameBound::Preceding(ctx.resolve(e)),
        FrameBound::Following(e) => FrameBound::Following(ctx.resolve(e)),
        other => other.clone(),
    };
    WindowCall {
        func: c.func,
        args: c.args.iter().map(|e| ctx.resolve(e)).collect(),
        filter: c.filter.as_ref().map(|e| ctx.resolve(e)),
        partition_by: c.partition_by.iter().map(|e| ctx.resolve(e)).collect(),
        order_by: c
            .order_by
            .iter()
            .map(|k| SortKey {
                expr: ctx.resolve(&k.expr),
                descending: k.descending,
                nulls_first: k.nulls_first,
            })
            .collect(),
        frame: WindowFrame {
            units: c.frame.units,
            start: bound(&c.frame.start),
            end: bound(&c.frame.end),
        },
        result_type: c.result_type,
    }
}

/// Where each sorted row's partition and peer group begin and end.
struct Layout {
    /// Sorted position → original row.
    perm: Vec<u32>,
    /// Start of each partition, in sorted positions, plus `n` at the end.
    partitions: Vec<usize>,
    /// Per sorted position: its peer group's [start, end).
    peer_start: Vec<usize>,
    peer_end: Vec<usize>,
    /// Per sorted position: its peer group's number within the partition.
    group_of: Vec<usize>,
}

fn layout(partition: &[Column], order: &[Column], keys: &[SortKey], n: usize) -> Layout {
    let asc = SortKey {
        expr: Expr::null(),
        descending: false,
        nulls_first: false,
    };
    let mut perm: Vec<u32> = (0..n as u32).collect();
    perm.sort_by(|&a, &b| {
        for col in partition {
            let o = compare_key(col, &asc, a as usize, b as usize);
            if o != Ordering::Equal {
                return o;
            }
        }
        for (col, key) in order.iter().zip(keys) {
            let o = compare_key(col, key, a as usize, b as usize);
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    let same = |cols: &[Column], a: usize, b: usize| {
        cols.iter().all(|c| compare_key(c, &asc, perm[a] as usize, perm[b] as usize) == Ordering::Equal)
    };
    let mut partitions = vec![0];
    let mut peer_start = vec![0; n];
    let mut group_of = vec![0; n];
    for j in 1..n {
        if !same(partition, j - 1, j) {
            partitions.push(j);
            peer_start[j] = j;
            group_of[j] = 0;
        } else if !same(order, j - 1, j) {
            peer_start[j] = j;
            group_of[j] = group_of[j - 1] + 1;
        } else {
            peer_start[j] = peer_start[j - 1];
            group_of[j] = group_of[j - 1];
        }
    }
    partitions.push(n);
    let mut peer_end = vec![n; n];
    for j in (0..n.saturating_sub(1)).rev() {
        peer_end[j] = if peer_start[j + 1] == j + 1 { j + 1 } else { peer_end[j + 1] };
    }
    Layout {
        perm,
        partitions,
        peer_start,
        peer_end,
        group_of,
    }
}

/// A RANGE frame's ORDER BY values, as numbers that grow along the sort
/// (negated for DESC), for `value ± offset` searches.
enum RangeKeys {
    Int(Vec<Option<i128>>),
    Float(Vec<Option<f64>>),
    Dec(Vec<Option<Numeric>>),
}

fn frame_offset(e: &Expr, ctx: &QueryContext, which: &str) -> DbResult<Datum> {
    let empty = HashMap::new();
    let cx = ctx.inputs(&empty);
    let one = Batch::new(vec![], 1);
    let d = eval(e, &one, &cx)?.datum(0);
    if d.is_null() {
        return Err(DbError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, format!("frame {which} offset must not be null")));
    }
    Ok(d)
}

fn negative_offset() -> DbError {
    DbError::new(sqlstate::INVALID_WINDOW_FRAME_OFFSET, "invalid preceding or following size in window function")
}

/// ROWS/GROUPS offsets as counts.
fn count_offset(b: &FrameBound, ctx: &QueryContext, which: &str) -> DbResult<usize> {
    let (FrameBound::Preceding(e) | FrameBound::Following(e)) = b else {
        return Ok(0);
    };
    let v = frame_offset(e, ctx, which)?.as_i64().unwrap_or(0);
    if v < 0 {
        return Err(DbError::new(sqlstate::INVALID_WINDOW_FRAME_OFFSET, format!("frame {which} offset must not be negative")));
    }
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

fn range_keys(col: &Column, key: &SortKey, offsets: [&FrameBound; 2], ctx: &QueryContext) -> DbResult<(RangeKeys, [Option<Datum>; 2])> {
    let mut offs = [None, None];
    for (i, b) in offsets.iter().enumerate() {
        if let FrameBound::Preceding(e) | FrameBound::Following(e) = b {
            offs[i] = Some(frame_offset(e, ctx, if i == 0 { "starting" } else { "ending" })?);
        }
    }
    let sign: i8 = if key.descending { -1 } else { 1 };
    let n = col.len();
    let get = |i: usize| col.datum(i);
    let offset_type = offs.iter().flatten().next().map(|d| match d {
        Datum::Float32(_) | Datum::Float64(_) => 'f',
        Datum::Numeric(_) => 'd',
        _ => 'i',
    });
    let keys = match (col.data_type, offset_type) {
        (DataType::Float32 | DataType::Float64, _) | (_, Some('f')) => RangeKeys::Float(
            (0..n).map(|i| get(i).as_f64().map(|v| v * sign as f64)).collect(),
        ),
        (DataType::Numeric, _) | (_, Some('d')) => RangeKeys::Dec(
            (0..n)
                .map(|i| match get(i) {
                    Datum::Numeric(d) if sign < 0 => Some(crate::exec::kernels::numeric_neg(d)),
                    Datum::Numeric(d) => Some(d),
                    other => other.as_i64().map(|v| Numeric::Finite(Decimal::from(v) * Decimal::from(sign))),
                })
                .collect(),
        ),
        (DataType::Date, _) => RangeKeys::Int(
            (0..n).map(|i| get(i).as_i64().map(|d| d as i128 * 86_400_000_000_000 * sign as i128)).collect(),
        ),
        (DataType::Interval, _) => RangeKeys::Int(
            (0..n)
                .map(|i| match get(i) {
                    Datum::Interval(v) => Some(v.total_micros() * 1000 * sign as i128),
                    _ => None,
                })
                .collect(),
        ),
        _ => RangeKeys::Int((0..n).map(|i| get(i).as_i64().map(|v| v as i128 * sign as i128)) .collect()),
    };
    for d in offs.iter().flatten() {
        let negative = match d {
            Datum::Float32(v) => *v < 0.0 || v.is_nan(),
            Datum::Float64(v) => *v < 0.0 || v.is_nan(),
            Datum::Numeric(v) => v.signum() < 0 || v.is_nan(),
            Datum::Interval(v) => v.total_micros() < 0,
            other => other.as_i64().is_some_and(|v| v < 0),
        };
        if negative {
            return Err(negative_offset());
        }
        if let Datum::Interval(v) = d {
            if v.months != 0 && matches!(col.data_type, DataType::Date | DataType::Timestamp | DataType::TimestampTz) {
                return Err(DbError::unsupported("RANGE offsets with months over timestamps"));
            }
        }
    }
    Ok((keys, offs))
}

impl RangeKeys {
    /// First position in `[from, to)` whose key is `>= target` (or `> target` when `strict`),
    /// where target = key[j] + delta (delta = ±offset); positions with NULL keys are skipped by the caller.
    fn search(&self, j: usize, offset: &Datum, add: bool, from: usize, to: usize, strict: bool) -> usize {
        fn part<T: PartialOrd + Copy>(v: &[Option<T>], from: usize, to: usize, target: T, strict: bool) -> usize {
            from + v[from..to].partition_point(|k| match k {
                Some(k) => {
                    if strict {
                        *k <= target
                    } else {
                        *k < target
                    }
                }
                None => true,
            })
        }
        match self {
            RangeKeys::Int(v) => {
                let off: i128 = match offset {
                    Datum::Interval(iv) => iv.total_micros() * 1000,
                    d => d.as_i64().unwrap_or(0) as i128,
                };
                let base = v[j].unwrap_or(0);
                let target = if add { base.saturating_add(off) } else { base.saturating_sub(off) };
                part(v, from, to, target, strict)
            }
            RangeKeys::Float(v) => {
                let off = offset.as_f64().unwrap_or(0.0);
                let base = v[j].unwrap_or(0.0);
                let target = if add { base + off } else { base - off };
                part(v, from, to, target, strict)
            }
            RangeKeys::Dec(v) => {
                let off = match offset {
                    Datum::Numeric(d) => *d,
                    d => Numeric::Finite(d.as_f64().and_then(Decimal::from_f64).unwrap_or_default()),
                };
                let base = v[j].unwrap_or_default();
                let moved = if add {
                    crate::exec::kernels::numeric_add(base, off)
                } else {
                    crate::exec::kernels::numeric_sub(base, off)
                };
                // Past rust_decimal's range the frame reaches the partition's end.
                let target = moved.unwrap_or_else(|_| Numeric::infinity(if add == (off.signum() >= 0) { 1 } else { -1 }));
                part(v, from, to, target, strict)
            }
        }
    }

    fn is_null(&self, j: usize) -> bool {
        match self {
            RangeKeys::Int(v) => v[j].is_none(),
            RangeKeys::Float(v) => v[j].is_none(),
            RangeKeys::Dec(v) => v[j].is_none(),
        }
    }
}

/// Computes frames `[start, end)` in sorted positions.
struct Frames<'a> {
    frame: &'a WindowFrame,
    layout: &'a Layout,
    counts: [usize; 2],
    range: Option<(RangeKeys, [Option<Datum>; 2])>,
    /// Per partition index: the start position of each of its peer groups.
    groups: Vec<usize>,
}

impl Frames<'_> {
    /// The frame of sorted row `j` in partition `[a, b)`.
    fn of(&self, j: usize, a: usize, b: usize) -> (usize, usize) {
        let s = self.bound(&self.frame.start, 0, j, a, b, true);
        let e = self.bound(&self.frame.end, 1, j, a, b, false);
        (s, e.max(s))
    }

    fn bound(&self, bound: &FrameBound, which: usize, j: usize, a: usize, b: usize, is_start: bool) -> usize {
        let l = self.layout;
        let k = self.counts[which];
        match (bound, self.frame.units) {
            (FrameBound::UnboundedPreceding, _) => a,
            (FrameBound::UnboundedFollowing, _) => b,
            (FrameBound::CurrentRow, FrameUnits::Rows) => {
                if is_start {
                    j
                } else {
                    j + 1
                }
            }
            (FrameBound::CurrentRow, _) => {
                if is_start {
                    l.peer_start[j]
                } else {
                    l.peer_end[j]
                }
            }
            (FrameBound::Preceding(_), FrameUnits::Rows) => {
                let p = j.saturating_sub(k).max(a);
                if is_start {
                    p
                } else if j < a + k {
                    a
                } else {
                    j - k + 1
                }
            }
            (FrameBound::Following(_), FrameUnits::Rows) => {
                let p = j.saturating_add(k).min(b);
                if is_start {
                    p
                } else {
                    j.saturating_add(k).saturating_add(1).min(b)
                }
            }
            (FrameBound::Preceding(_) | FrameBound::Following(_), FrameUnits::Groups) => {
                let g = l.group_of[j] as i64;
                let target = if matches!(bound, FrameBound::Preceding(_)) { g - k as i64 } else { g.saturating_add(k as i64) };
                let groups = &self.groups;
                if is_start {
                    if target < 0 {
                        a
                    } else {
                        groups.get(target as usize).copied().unwrap_or(b)
                    }
                } else if target < 0 {
                    a
                } else {
                    groups.get(target as usize + 1).copied().unwrap_or(b)
                }
            }
            (FrameBound::Preceding(_) | FrameBound::Following(_), FrameUnits::Range) => {
                let Some((keys, offs)) = &self.range else {
                    return if is_start { a } else { b };
                };
                if keys.is_null(j) {
                    return if is_start { l.peer_start[j] } else { l.peer_end[j] };
                }
                let Some(off) = &offs[which] else { return a };
                // The non-NULL keys of the partition: NULLs sit at one end.
                let (mut from, mut to) = (a, b);
                while from < to && keys.is_null(from) {
                    from += 1;
                }
                while to > from && keys.is_null(to - 1) {
                    to -= 1;
                }
                let add = matches!(bound, FrameBound::Following(_));
                keys.search(j, off, add, from, to, !is_start)
            }
        }
    }
}

fn evaluate_call(call: &WindowCall, all: &Batch, cx: &EvalInputs, ctx: &QueryContext) -> DbResult<(Column, Vec<u32>)> {
    let n = all.len;
    let col = |e: &Expr| -> DbResult<Column> { Ok(eval(e, all, cx)?.into_column(n).as_ref().clone()) };
    let partition = call.partition_by.iter().map(&col).collect::<DbResult<Vec<_>>>()?;
    let order = call.order_by.iter().map(|k| col(&k.expr)).collect::<DbResult<Vec<_>>>()?;
    let layout = layout(&partition, &order, &call.order_by, n);
    ctx.check_cancel()?;
    let perm = &layout.perm;
    let args = call.args.iter().map(|e| Ok(col(e)?.take(perm))).collect::<DbResult<Vec<_>>>()?;
    let mask: Option<Vec<bool>> = match &call.filter {
        Some(f) => {
            let c = col(f)?.take(perm);
            Some((0..n).map(|i| matches!(c.datum(i), Datum::Bool(true))).collect())
        }
        None => None,
    };
    let frames_needed = matches!(
        call.func,
        WindowFunc::Aggregate(_) | WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue
    );
    let mut frames = Frames {
        frame: &call.frame,
        layout: &layout,
        counts: [0, 0],
        range: None,
        groups: Vec::new(),
    };
    if frames_needed {
        if call.frame.units != FrameUnits::Range {
            frames.counts = [
                count_offset(&call.frame.start, ctx, "starting")?,
                count_offset(&call.frame.end, ctx, "ending")?,
            ];
        } else if let ([key], [key_col]) = (call.order_by.as_slice(), order.as_slice()) {
            let has_offset = matches!(call.frame.start, FrameBound::Preceding(_) | FrameBound::Following(_))
                || matches!(call.frame.end, FrameBound::Preceding(_) | FrameBound::Following(_));
            if has_offset {
                frames.range = Some(range_keys(&key_col.take(perm), key, [&call.frame.start, &call.frame.end], ctx)?);
            }
        }
    }

    let mut sorted: Vec<Datum> = Vec::with_capacity(n);
    for w in layout.partitions.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a == b {
            continue; // no rows at all
        }
        ctx.check_cancel()?;
        if call.frame.units == FrameUnits::Groups {
            frames.groups = (a..b).filter(|&j| layout.peer_start[j] == j).collect();
        }
        partition_values(call, &args, mask.as_deref(), &layout, &mut frames, a, b, &mut sorted)?;
    }
    // Back to input order.
    let mut values = vec![Datum::Null; n];
    for (pos, v) in sorted.into_iter().enumerate() {
        values[layout.perm[pos] as usize] = v;
    }
    Ok((Column::from_datums(call.result_type, &values), layout.perm))
}

#[allow(clippy::too_many_arguments)]
fn partition_values(
    call: &WindowCall,
    args: &[Column],
    mask: Option<&[bool]>,
    layout: &Layout,
    frames: &mut Frames,
    a: usize,
    b: usize,
    out: &mut Vec<Datum>,
) -> DbResult<()> {
    let rows = b - a;
    match call.func {
        WindowFunc::RowNumber => out.extend((1..=rows).map(|r| Datum::Int64(r as i64))),
        WindowFunc::Rank => out.extend((a..b).map(|j| Datum::Int64((layout.peer_start[j] - a + 1) as i64))),
        WindowFunc::DenseRank => out.extend((a..b).map(|j| Datum::Int64(layout.group_of[j] as i64 + 1))),
        WindowFunc::PercentRank => out.extend((a..b).map(|j| {
            Datum::Float64(if rows > 1 { (layout.peer_start[j] - a) as f64 / (rows - 1) as f64 } else { 0.0 })
        })),
        WindowFunc::CumeDist => out.extend((a..b).map(|j| Datum::Float64((layout.peer_end[j] - a) as f64 / rows as f64))),
        WindowFunc::Ntile => {
            let buckets = match args[0].datum(a) {
                Datum::Null => {
                    out.extend((a..b).map(|_| Datum::Null));
                    return Ok(());
                }
                d => d.as_i64().unwrap_or(0),
            };
            if buckets <= 0 {
                return Err(DbError::new(sqlstate::INVALID_ARGUMENT_FOR_NTILE, "argument of ntile must be greater than zero"));
            }
            let k = buckets as usize;
            let per = rows / k;
            let extra = rows % k;
            for r in 0..rows {
                let bucket = if per == 0 {
                    r + 1
                } else if r < extra * (per + 1) {
                    r / (per + 1) + 1
                } else {
                    (r - extra * (per + 1)) / per + extra + 1
                };
                out.push(Datum::Int32(bucket as i32));
            }
        }
        WindowFunc::Lag | WindowFunc::Lead => {
            for j in a..b {
                let offset = match args.get(1) {
                    Some(c) => match c.datum(j) {
                        Datum::Null => {
                            out.push(Datum::Null);
                            continue;
                        }
                        d => d.as_i64().unwrap_or(0),
                    },
                    None => 1,
                };
                let offset = if call.func == WindowFunc::Lag { -offset } else { offset };
                let target = j as i64 + offset;
                if target >= a as i64 && target < b as i64 {
                    out.push(args[0].datum(target as usize));
                } else {
                    out.push(args.get(2).map_or(Datum::Null, |c| c.datum(j)));
                }
            }
        }
        WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
            for j in a..b {
                let (s, e) = frames.of(j, a, b);
                let v = match call.func {
                    WindowFunc::FirstValue if s < e => args[0].datum(s),
                    WindowFunc::LastValue if s < e => args[0].datum(e - 1),
                    WindowFunc::NthValue => match args[1].datum(j) {
                        Datum::Null => Datum::Null,
                        d => {
                            let k = d.as_i64().unwrap_or(0);
                            if k <= 0 {
                                return Err(DbError::new(
                                    sqlstate::INVALID_ARGUMENT_FOR_NTH_VALUE,
                                    "argument of nth_value must be greater than zero",
                                ));
                            }
                            let p = s.saturating_add(k as usize - 1);
                            if p < e {
                                args[0].datum(p)
                            } else {
                                Datum::Null
                            }
                        }
                    },
                    _ => Datum::Null,
                };
                out.push(v);
            }
        }
        WindowFunc::Aggregate(func) => {
            let arg = args.first();
            let arg_type = arg.map_or(DataType::Int64, |c| c.data_type);
            let fold = |acc: &mut Accumulator, from: usize, to: usize| -> DbResult<()> {
                if to <= from {
                    return Ok(());
                }
                let ids = vec![0u32; to - from];
                let slice = arg.map(|c| c.slice(from, to - from));
                acc.update(&ids, 1, slice.as_ref(), mask.map(|m| &m[from..to]))
            };
            // (frame start, frame end folded so far, accumulator)
            let mut running: Option<(usize, usize, Accumulator)> = None;
            let mut last: Option<(usize, usize, Datum)> = None;
            for j in a..b {
                let (s, e) = frames.of(j, a, b);
                if let Some((ls, le, d)) = &last {
                    if *ls == s && *le == e {
                        out.push(d.clone());
                        continue;
                    }
                }
                let value = match running.as_mut() {
                    Some((rs, re, acc)) if *rs == s && e >= *re => {
                        fold(acc, *re, e)?;
                        *re = e;
                        acc.finish(1)?.datum(0)
                    }
                    _ => {
                        let mut acc = Accumulator::new(func, arg_type, call.result_type)?;
                        fold(&mut acc, s, e)?;
                        let d = acc.finish(1)?.datum(0);
                        running = Some((s, e, acc));
                        d
                    }
                };
                last = Some((s, e, value.clone()));
                out.push(value);
            }
        }
    }
    Ok(())
}
