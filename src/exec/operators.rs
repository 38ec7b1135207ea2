//! Physical operators run on the coordinating shard: each pulls batches from
//! its inputs (`Operator::next`). Scans and pre-aggregations are dispatched
//! to every shard as `Fragment`s; the rest (joins, sorts, set operations,
//! final aggregation) run here over the merged stream.
//! Must not: hold table data beyond what a query materializes, or block the
//! shard thread (long loops yield).

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::catalog::TableId;
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::constant_subqueries;
use crate::exec::agg::{encode_key, AggMode, HashAggregation};
use crate::exec::expr::{eval, filter_batch, EvalInputs, Value};
use crate::exec::fragment::{self, Fragment, FragmentAggregate, FRAGMENT_CHANNEL_DEPTH};
use crate::exec::vector::{Batch, Column, BATCH_ROWS};
use crate::exec::EvalContext;
use crate::server::Server;
use crate::sql::plan::*;
use crate::types::{DataType, Datum};

pub type BatchFuture<'a> = Pin<Box<dyn Future<Output = DbResult<Option<Batch>>> + 'a>>;

pub trait Operator {
    fn next(&mut self) -> BatchFuture<'_>;
}

pub type BoxedOperator = Box<dyn Operator>;

/// Runs `fut`, turning a panic (a bug) into an internal error (XX000) for the
/// statement instead of the loss of the connection; the panic hook has
/// already printed where it happened.
pub async fn contain_panic<T>(fut: impl Future<Output = DbResult<T>>) -> DbResult<T> {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(DbError::internal(format!("internal error while running the statement: {what}")))
        }
    }
}

/// The operator's next batch, with a panic contained (see `contain_panic`).
pub async fn next_contained(op: &mut BoxedOperator) -> DbResult<Option<Batch>> {
    contain_panic(op.next()).await
}

/// Per table, its time column and the time ranges a transaction rewrote.
pub type DroppedRanges = HashMap<TableId, (usize, Vec<(i64, i64)>)>;

/// A transaction's own rows and rewrites, shared by its session and its
/// statements (see the `QueryContext` fields of the same names).
pub struct TxnView {
    pub pending: Rc<RefCell<HashMap<TableId, Vec<Batch>>>>,
    pub replaced: Rc<RefCell<std::collections::HashSet<TableId>>>,
    pub dropped: Rc<RefCell<DroppedRanges>>,
}

/// What every operator of one statement shares.
pub struct QueryContext {
    pub server: Arc<Server>,
    pub eval: EvalContext,
    pub params: Vec<Datum>,
    /// Rows of enclosing queries (correlated subqueries), outermost first.
    pub outer: Vec<Vec<Datum>>,
    pub cancel: Arc<crate::exec::cancel::CancelFlag>,
    /// The session transaction's own uncommitted rows, by table.
    pub pending: Rc<RefCell<HashMap<TableId, Vec<Batch>>>>,
    /// Tables the transaction rewrote (DELETE/UPDATE in a block): their rows
    /// are all in `pending`, the shards' rows are not read.
    pub replaced: Rc<RefCell<std::collections::HashSet<TableId>>>,
    /// Tables whose days the transaction rewrote (DELETE/UPDATE by days in
    /// a block): their rows of those time ranges are in `pending`, the
    /// shards' rows there are not read.
    pub dropped: Rc<RefCell<DroppedRanges>>,
    /// Results of uncorrelated subqueries, computed once per statement.
    subquery_cache: RefCell<HashMap<usize, Value>>,
    /// The current round's rows of each recursive CTE, shared with children.
    pub work_tables: Rc<RefCell<HashMap<usize, Batch>>>,
    /// EXPLAIN ANALYZE: where operators and scans count rows and time.
    pub profile: Option<Rc<crate::exec::explain::Profile>>,
    /// Bytes the statement's materializing operators hold, shared with
    /// correlated-subquery children, and the most they may hold (53200 beyond).
    memory: Rc<std::cell::Cell<usize>>,
    pub memory_limit_bytes: usize,
    /// Set while building a subtree whose uncorrelated subqueries were just
    /// inlined (see `constant_subqueries.rs`): the ones left stay subqueries.
    pub(crate) subqueries_inlined: std::cell::Cell<bool>,
    /// Set while building the input of `ORDER BY column LIMIT n` over one scan.
    order_hint: std::cell::Cell<Option<fragment::OrderHint>>,
    /// Set while building the plans `newest_groups` runs (not probed again).
    probing: std::cell::Cell<bool>,
}

impl QueryContext {
    pub fn new(
        server: Arc<Server>,
        eval: EvalContext,
        params: Vec<Datum>,
        cancel: Arc<crate::exec::cancel::CancelFlag>,
        txn: TxnView,
        memory_limit_bytes: usize,
    ) -> Rc<QueryContext> {
        let TxnView { pending, replaced, dropped } = txn;
        Rc::new(QueryContext {
            server,
            eval,
            params,
            outer: vec![],
            cancel,
            pending,
            replaced,
            dropped,
            subquery_cache: Default::default(),
            work_tables: Default::default(),
            profile: None,
            memory: Default::default(),
            memory_limit_bytes,
            subqueries_inlined: Default::default(),
            order_hint: Default::default(),
            probing: Default::default(),
        })
    }

    /// Accounts `bytes` more held by an operator; 53200 past the statement's limit.
    pub fn charge(&self, bytes: usize) -> DbResult<()> {
        let used = self.memory.get().saturating_add(bytes);
        self.memory.set(used);
        if used > self.memory_limit_bytes {
            return Err(DbError::new(sqlstate::OUT_OF_MEMORY, "out of memory").with_detail(format!(
                "The statement needs more than its memory limit of {} MB (setting brewric.query_memory_limit).",
                self.memory_limit_bytes >> 20
            )));
        }
        Ok(())
    }

    pub fn release(&self, bytes: usize) {
        self.memory.set(self.memory.get().saturating_sub(bytes));
    }

    pub(crate) fn child(self: &Rc<Self>, row: Vec<Datum>) -> Rc<QueryContext> {
        let mut outer = self.outer.clone();
        outer.push(row);
        Rc::new(QueryContext {
            server: self.server.clone(),
            eval: self.eval.clone(),
            params: self.params.clone(),
            outer,
            cancel: self.cancel.clone(),
            pending: self.pending.clone(),
            replaced: self.replaced.clone(),
            dropped: self.dropped.clone(),
            subquery_cache: Default::default(),
            work_tables: self.work_tables.clone(),
            profile: self.profile.clone(),
            memory: self.memory.clone(),
            memory_limit_bytes: self.memory_limit_bytes,
            subqueries_inlined: Default::default(),
            order_hint: Default::default(),
            probing: Default::default(),
        })
    }

    /// Whether the statement's transaction holds rows of `table` the shards
    /// do not (its own writes, or a rewrite of the table).
    pub fn has_own_rows(&self, table: TableId) -> bool {
        self.replaced.borrow().contains(&table)
            || self.dropped.borrow().contains_key(&table)
            || self.pending.borrow().get(&table).is_some_and(|b| !b.is_empty())
    }

    pub fn check_cancel(&self) -> DbResult<()> {
        self.cancel.check()
    }

    /// What expression evaluation needs from the statement, with `subqueries`' values.
    pub fn inputs<'a>(&'a self, subqueries: &'a HashMap<usize, Value>) -> EvalInputs<'a> {
        EvalInputs {
            eval: &self.eval,
            params: &self.params,
            outer: &self.outer,
            subqueries,
        }
    }

    /// Replaces parameters and outer references by their values, so the
    /// expression can run anywhere (on a shard, in a hash join).
    pub fn resolve(&self, e: &Expr) -> Expr {
        e.clone().transform(&mut |x| match x {
            Expr::Param(i, t) => {
                Expr::Literal(self.params.get(i).cloned().unwrap_or(Datum::Null), t)
            }
            Expr::Outer {
                level,
                index,
                data_type,
            } => {
                let v = self
                    .outer
                    .len()
                    .checked_sub(level)
                    .and_then(|l| self.outer.get(l))
                    .and_then(|r| r.get(index).cloned())
                    .unwrap_or(Datum::Null);
                Expr::Literal(v, data_type)
            }
            other => other,
        })
    }
}

/// Builds the operator tree of `plan` (each operator profiled under EXPLAIN ANALYZE).
pub fn build(plan: &Plan, ctx: &Rc<QueryContext>) -> DbResult<BoxedOperator> {
    let op = build_node(plan, ctx)?;
    Ok(match &ctx.profile {
        Some(profile) => profile.wrap(plan, op),
        None => op,
    })
}

fn scan_stats(ctx: &QueryContext, plan: &Plan) -> Option<Arc<crate::exec::explain::ScanStats>> {
    ctx.profile.as_ref().map(|p| p.scan_stats(plan))
}

/// Whether `plan` is a scan filter (under an aggregate, maybe) that can run on
/// the shards once its uncorrelated subqueries are constants.
fn has_constant_subqueries(plan: &Plan, ctx: &QueryContext) -> bool {
    if ctx.subqueries_inlined.get() {
        return false;
    }
    match plan {
        Plan::Filter { input, predicate } => {
            // WHERE's subquery conjuncts sit in a filter above the one the
            // optimizer placed over the scan: the two count as one.
            let (input, predicate) = match input.as_ref() {
                Plan::Filter { input: inner, predicate: p } => (inner.as_ref(), Expr::and(p.clone(), predicate.clone())),
                other => (other, predicate.clone()),
            };
            matches!(input, Plan::Scan { filter: None, .. })
                && constant_subqueries::only_constant_subqueries(&ctx.resolve(&predicate))
        }
        Plan::Aggregate { input, .. } => has_constant_subqueries(input, ctx),
        _ => false,
    }
}

fn build_node(plan: &Plan, ctx: &Rc<QueryContext>) -> DbResult<BoxedOperator> {
    if has_constant_subqueries(plan, ctx) {
        return Ok(Box::new(constant_subqueries::ConstantSubqueriesOp::new(plan.clone(), ctx)));
    }
    Ok(match plan {
        Plan::Scan {
            table,
            projection,
            filter,
            ..
        } => {
            let filter = filter.as_ref().map(|f| fold_constants(ctx.resolve(f), ctx));
            let scan = Box::new(ScanOp::new(ctx, table, projection.clone(), filter.clone(), None, scan_stats(ctx, plan)));
            last_row_lookup(ctx, table, projection, filter.as_ref(), scan)
        }
        Plan::Filter { input, predicate } => {
            let predicate = ctx.resolve(predicate);
            if let Plan::Scan {
                table,
                projection,
                filter: None,
                ..
            } = input.as_ref()
            {
                if predicate.is_shard_pure() {
                    // The filter runs on the shards, over the table's columns; the
                    // scan returns just the projection (and reads only what both need).
                    let pred = fold_constants(remap_columns(&predicate, projection), ctx);
                    let scan = Box::new(ScanOp::new(
                        ctx,
                        table,
                        projection.clone(),
                        Some(pred.clone()),
                        None,
                        scan_stats(ctx, plan),
                    ));
                    return Ok(last_row_lookup(ctx, table, projection, Some(&pred), scan));
                }
            }
            Box::new(FilterOp {
                input: build(input, ctx)?,
                predicate,
                ctx: ctx.clone(),
            })
        }
        Plan::Project { input, exprs, .. } => {
            let pruned = lateral_input_pruned(input, exprs.iter(), ctx);
            let input = pruned.as_ref().unwrap_or(input);
            let exprs = exprs.iter().map(|e| ctx.resolve(e)).collect();
            Box::new(ProjectOp {
                input: build(input, ctx)?,
                exprs,
                ctx: ctx.clone(),
            })
        }
        Plan::Values { rows, .. } => Box::new(ValuesOp {
            rows: rows.clone(),
            done: false,
            ctx: ctx.clone(),
        }),
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            ..
        } => {
            let read = group_by.iter().chain(aggs.iter().flat_map(|a| {
                a.arg.iter().chain(&a.filter).chain(&a.constant_arg).chain(a.order_by.iter().map(|k| &k.expr))
            }));
            let pruned = lateral_input_pruned(input, read, ctx);
            build_aggregate(pruned.as_ref().unwrap_or(input), group_by, aggs, ctx)?
        }
        Plan::Sort { input, keys } => Box::new(SortOp {
            input: build(input, ctx)?,
            keys: keys.clone(),
            out: None,
            ctx: ctx.clone(),
            keep: None,
        }),
        Plan::Limit {
            input,
            limit,
            offset,
        } => {
            let eval_count = |e: &Option<Expr>| -> DbResult<Option<i64>> {
                match e {
                    None => Ok(None),
                    Some(e) => match eval_const(&ctx.resolve(e), ctx)? {
                        Datum::Null => Ok(None),
                        d => {
                            let n = d.as_i64().unwrap_or(0);
                            if n < 0 {
                                return Err(DbError::new(
                                    sqlstate::INVALID_ROW_COUNT_IN_LIMIT,
                                    "LIMIT must not be negative",
                                ));
                            }
                            Ok(Some(n))
                        }
                    },
                }
            };
            let limit = eval_count(limit)?;
            let offset = eval_count(offset)?.unwrap_or(0);
            if let (Some(rows), false) = (limit, ctx.probing.get()) {
                let rows = usize::try_from(rows).unwrap_or(usize::MAX);
                if let Some(g) = crate::exec::newest_groups::NewestGroups::recognize(plan, rows, ctx) {
                    return Ok(Box::new(crate::exec::newest_groups::NewestGroupsOp::new(ctx, g)));
                }
            }
            let input_op: BoxedOperator = match (input.as_ref(), limit) {
                // ORDER BY … LIMIT: the sort keeps only the rows the limit can return.
                (
                    Plan::Sort {
                        input: sorted,
                        keys,
                    },
                    Some(l),
                ) => {
                    let keep = usize::try_from(l.saturating_add(offset)).ok();
                    ctx.order_hint.set(keep.and_then(|rows| scan_order_hint(sorted, keys, rows, ctx)));
                    let input = build(sorted, ctx);
                    ctx.order_hint.set(None);
                    Box::new(SortOp {
                        input: input?,
                        keys: keys.clone(),
                        out: None,
                        ctx: ctx.clone(),
                        keep,
                    })
                }
                _ => build(input, ctx)?,
            };
            Box::new(LimitOp {
                input: input_op,
                remaining: limit,
                skip: offset as u64,
            })
        }
        Plan::Distinct { input, on } => Box::new(DistinctOp {
            input: build(input, ctx)?,
            on: on.clone(),
            seen: Default::default(),
            ctx: ctx.clone(),
        }),
        Plan::Join {
            left,
            right,
            kind,
            on,
            ..
        } => Box::new(JoinOp::new(
            build(left, ctx)?,
            build(right, ctx)?,
            left.types(),
            right.types(),
            *kind,
            on.as_ref().map(|e| ctx.resolve(e)),
            ctx.clone(),
        )),
        Plan::TableFunction { calls, ordinality, .. } => Box::new(crate::exec::table_function::TableFunctionOp {
            calls: calls.clone(),
            ordinality: *ordinality,
            ctx: ctx.clone(),
            series: None,
            emitted: 0,
        }),
        Plan::Lateral {
            left,
            right,
            kind,
            on,
            unread_left,
            ..
        } => Box::new(crate::exec::lateral::LateralOp::new(
            build(left, ctx)?,
            right.as_ref().clone(),
            *kind,
            on.as_ref().map(|e| ctx.resolve(e)),
            right.types(),
            unread_left.clone(),
            ctx.clone(),
        )
        .with_latest(crate::exec::lateral::LatestPerRow::recognize(right, ctx))
        .with_unnest(crate::exec::lateral::UnnestPerBatch::recognize(right))),
        Plan::RecursiveCte {
            id,
            anchor,
            recursive,
            union_all,
            ..
        } => Box::new(crate::exec::recursive::RecursiveOp::new(
            *id,
            anchor.as_ref().clone(),
            recursive.as_ref().clone(),
            *union_all,
            ctx.clone(),
        )),
        Plan::WorkTable { id, fields } => {
            let rows = ctx.work_tables.borrow().get(id).cloned();
            let types: Vec<DataType> = fields.iter().map(|f| f.data_type).collect();
            Box::new(crate::exec::recursive::WorkTableOp {
                out: Some((rows.unwrap_or_else(|| Batch::empty(&types)), 0)),
            })
        }
        Plan::GapFill { input, gapfill, fields } => Box::new(crate::exec::gapfill::GapFillOp {
            input: build(input, ctx)?,
            spec: gapfill.clone(),
            input_types: input.types(),
            fill_types: fields[input.fields().len()..].iter().map(|f| f.data_type).collect(),
            ctx: ctx.clone(),
            done: false,
        }),
        Plan::Window { input, calls, .. } => Box::new(crate::exec::window::WindowOp {
            input: build(input, ctx)?,
            calls: calls.clone(),
            input_types: input.types(),
            ctx: ctx.clone(),
            out: None,
        }),
        Plan::SetOp {
            kind,
            all,
            left,
            right,
            ..
        } => Box::new(SetOpOp {
            left: build(left, ctx)?,
            right: Some(build(right, ctx)?),
            kind: *kind,
            all: *all,
            right_counts: HashMap::new(),
            seen: HashMap::new(),
            left_done: false,
            ctx: ctx.clone(),
        }),
    })
}

/// `ORDER BY c [DESC] LIMIT rows` where `sorted` is one scan (projected to
/// plain columns) whose whole filter runs on the shards, and `c` one of its
/// integer, date or timestamp columns: the hint its fragments read in order
/// with. A filter left to the coordinator would drop rows after the
/// fragment stopped, so then there is no hint.
fn scan_order_hint(sorted: &Plan, keys: &[SortKey], rows: usize, ctx: &QueryContext) -> Option<fragment::OrderHint> {
    let pure = |e: &Expr| ctx.resolve(e).is_shard_pure();
    let [key] = keys else { return None };
    let Expr::Column(mut column, _) = key.expr else { return None };
    let mut plan = sorted;
    loop {
        match plan {
            Plan::Project { input, exprs, .. } => match exprs.get(column) {
                Some(Expr::Column(c, _)) => {
                    column = *c;
                    plan = input;
                }
                _ => return None,
            },
            Plan::Filter { input, predicate } => {
                if !pure(predicate) || !matches!(input.as_ref(), Plan::Scan { filter: None, .. }) {
                    return None;
                }
                plan = input;
            }
            Plan::Scan { table, projection, filter, .. } => {
                if filter.as_ref().is_some_and(|f| !pure(f)) {
                    return None;
                }
                let c = *projection.get(column)?;
                let ordered = matches!(
                    table.columns.get(c)?.data_type,
                    DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date | DataType::Timestamp | DataType::TimestampTz
                );
                return ordered.then_some(fragment::OrderHint {
                    table: table.oid,
                    column: c,
                    descending: key.descending,
                    nulls_first: key.nulls_first,
                    rows,
                });
            }
            _ => return None,
        }
    }
}

/// `scan` (of `projection` of `table`, rows matching `filter`, over the
/// table's columns), or — when the sort above is `ORDER BY time DESC LIMIT 1`
/// (`order_hint`) and the filter is `series = constant` on the table's
/// declared series key — a lookup in the last-row index that falls back to
/// `scan` when the index cannot answer (`exec/last_row.rs`).
fn last_row_lookup(
    ctx: &Rc<QueryContext>,
    table: &Arc<crate::catalog::TableDef>,
    projection: &[usize],
    filter: Option<&Expr>,
    scan: BoxedOperator,
) -> BoxedOperator {
    use crate::storage::last_rows::{LastRowSpec, SeriesValue};
    let found = || -> Option<(LastRowSpec, SeriesValue)> {
        let hint = ctx.order_hint.get()?;
        if hint.table != table.oid || hint.rows != 1 || !hint.descending || !hint.nulls_first {
            return None;
        }
        let Some(Expr::Binary { sig, left, right }) = filter else { return None };
        let (column, value) = match (left.as_ref(), right.as_ref()) {
            (Expr::Column(c, _), Expr::Literal(d, _)) | (Expr::Literal(d, _), Expr::Column(c, _)) => (*c, d),
            _ => return None,
        };
        if sig.op != crate::exec::kernels::BinaryOp::Eq {
            return None;
        }
        let spec = LastRowSpec::declared(table, &ctx.server.catalog.snapshot().indexes_on(table))?;
        if column != spec.series || hint.column != spec.time {
            return None;
        }
        // The value compares as stored only if it is of the column's kind.
        let integer = matches!(table.columns[spec.series].data_type, DataType::Int16 | DataType::Int32 | DataType::Int64);
        match value {
            Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_) if integer => {}
            Datum::Bytes(_) if !integer => {}
            _ => return None,
        }
        Some((spec, SeriesValue::of(value)?))
    };
    let Some((spec, key)) = found() else { return scan };
    Box::new(crate::exec::last_row::LastRowOp::new(ctx, table.clone(), spec, key, projection.to_vec(), scan))
}

/// Every row of every column of `table`, in no particular order (whatever
/// sort is being built above): what builds the last-row index.
pub(crate) fn full_scan(ctx: &Rc<QueryContext>, table: &crate::catalog::TableDef) -> BoxedOperator {
    let mut scan = ScanOp::new(ctx, table, (0..table.columns.len()).collect(), None, None, None);
    scan.fragment.order_hint = None;
    Box::new(scan)
}

/// `expr` over a table's full row, given that it was bound over `projection` of it.
fn remap_columns(expr: &Expr, projection: &[usize]) -> Expr {
    expr.clone().transform(&mut |e| match e {
        Expr::Column(i, t) => Expr::Column(projection.get(i).copied().unwrap_or(i), t),
        other => other,
    })
}

/// `time IS NULL OR NOT (time in one of ranges)` over a table's columns:
/// the shard rows a transaction that rewrote those days still reads.
fn outside_ranges(time: usize, t: DataType, ranges: &[(i64, i64)]) -> Expr {
    use crate::exec::kernels::{BinaryOp, BinarySignature};
    let column = || Box::new(Expr::Column(time, t));
    let compare = |op, v: i64| Expr::Binary {
        sig: BinarySignature { op, left: t, right: t, result: DataType::Bool },
        left: column(),
        right: Box::new(Expr::Literal(Datum::Int64(v), t)),
    };
    let or = |a: Expr, b: Expr| Expr::Binary {
        sig: BinarySignature { op: BinaryOp::Or, left: DataType::Bool, right: DataType::Bool, result: DataType::Bool },
        left: Box::new(a),
        right: Box::new(b),
    };
    let mut outside = Expr::IsNull { expr: column(), negated: false };
    let mut beside = None;
    for &(lo, hi) in ranges {
        let this = or(compare(BinaryOp::Lt, lo), compare(BinaryOp::GtEq, hi));
        beside = Some(match beside {
            Some(b) => Expr::and(b, this),
            None => this,
        });
    }
    if let Some(b) = beside {
        outside = or(outside, b);
    }
    outside
}

/// A scan filter with its constant subexpressions computed once
/// (`now() - interval '1 hour'`, `timestamptz '…' + interval '1 day'`): the
/// zone maps prune on `column op literal` only. `random()` stays (a value
/// per row); a subexpression whose evaluation fails stays as it is, so its
/// error comes, as before, only if a row reaches it.
pub(crate) fn fold_constants(e: Expr, ctx: &QueryContext) -> Expr {
    let literal = |e: &Expr| matches!(e, Expr::Literal(..));
    e.transform(&mut |x| {
        let constant = match &x {
            Expr::Binary { left, right, .. } | Expr::IsDistinct { left, right, .. } => literal(left) && literal(right),
            Expr::Unary { arg, .. } => literal(arg),
            Expr::Cast { expr, .. } | Expr::NumericTypmod { expr, .. } | Expr::IsNull { expr, .. } | Expr::IsBool { expr, .. } => {
                literal(expr)
            }
            Expr::Func { sig, args } => {
                !crate::exec::expr::sig_is_volatile(sig) && args.iter().all(literal)
            }
            _ => false,
        };
        if !constant {
            return x;
        }
        let empty = HashMap::new();
        match eval(&x, &Batch::new(vec![], 1), &ctx.inputs(&empty)) {
            Ok(Value::Scalar(d, t)) => Expr::Literal(d, t),
            Ok(Value::Column(c)) if c.len() == 1 => Expr::Literal(c.datum(0), c.data_type),
            _ => x,
        }
    })
}

pub(crate) fn eval_const(e: &Expr, ctx: &QueryContext) -> DbResult<Datum> {
    let empty = HashMap::new();
    let cx = ctx.inputs(&empty);
    let one = Batch::new(vec![], 1);
    Ok(eval(e, &one, &cx)?.datum(0))
}

/// `plan`'s operators, built without `newest_groups`' probe at the top (the
/// probe's own plans).
pub(crate) fn build_without_probe(plan: &Plan, ctx: &Rc<QueryContext>) -> DbResult<BoxedOperator> {
    ctx.probing.set(true);
    let op = build(plan, ctx);
    ctx.probing.set(false);
    op
}

/// Runs `plan` to completion and returns all its rows.
pub async fn collect(plan: &Plan, ctx: &Rc<QueryContext>) -> DbResult<Vec<Batch>> {
    let mut op = build(plan, ctx)?;
    let mut out = Vec::new();
    while let Some(b) = op.next().await? {
        out.push(b);
    }
    Ok(out)
}

// ------------------------------------------------------------------ scan

struct ScanOp {
    ctx: Rc<QueryContext>,
    fragment: Fragment,
    /// The table's column types (the transaction's own rows written before
    /// an ADD COLUMN lack the last ones).
    types: Vec<DataType>,
    rx: Option<mpsc::Receiver<DbResult<Batch>>>,
}

impl ScanOp {
    fn new(
        ctx: &Rc<QueryContext>,
        table: &crate::catalog::TableDef,
        projection: Vec<usize>,
        filter: Option<Expr>,
        aggregate: Option<FragmentAggregate>,
        stats: Option<Arc<crate::exec::explain::ScanStats>>,
    ) -> ScanOp {
        let frames = table.frame_columns().iter().enumerate().filter(|(_, &f)| f).map(|(c, _)| c).collect();
        let types = table.column_types();
        let table = table.oid;
        // The order a sort above asked for (see `scan_order_hint`), for this table's scan only.
        let order_hint = ctx.order_hint.get().filter(|h| h.table == table && aggregate.is_none());
        let fragment = Fragment {
            table,
            projection,
            filter,
            aggregate,
            stats,
            eval: ctx.eval.clone(),
            cancel: ctx.cancel.clone(),
            order_hint,
            frames,
        };
        ScanOp {
            ctx: ctx.clone(),
            fragment,
            types,
            rx: None,
        }
    }

    async fn start(&mut self) -> DbResult<()> {
        let (tx, rx) = mpsc::channel(FRAGMENT_CHANNEL_DEPTH * self.ctx.server.shards.len().max(1));
        // A table the transaction rewrote is read from its own rows only;
        // one whose days it rewrote, from the shards outside those days.
        if !self.ctx.replaced.borrow().contains(&self.fragment.table) {
            let mut fragment = self.fragment.clone();
            if let Some((time, ranges)) = self.ctx.dropped.borrow().get(&self.fragment.table) {
                let outside = outside_ranges(*time, self.types[*time], ranges);
                fragment.filter = Some(match fragment.filter.take() {
                    Some(f) => Expr::and(f, outside),
                    None => outside,
                });
            }
            for shard in &self.ctx.server.shards {
                fragment.clone().start(shard, tx.clone()).await?;
            }
        }
        // The transaction's own rows are scanned here, like one more shard.
        let pending: Vec<Batch> = self
            .ctx
            .pending
            .borrow()
            .get(&self.fragment.table)
            .map(|rows| rows.iter().map(|b| b.clone().padded_to(&self.types)).collect())
            .unwrap_or_default();
        if !pending.is_empty() {
            let local = self.fragment.clone();
            let tx = tx.clone();
            tokio::task::spawn_local(async move {
                if let Err(e) = local.run(pending, &tx).await {
                    let _ = tx.send(Err(e)).await;
                }
            });
        }
        self.rx = Some(rx);
        Ok(())
    }
}

impl Operator for ScanOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.rx.is_none() {
                self.start().await?;
            }
            self.ctx.check_cancel()?;
            match self.rx.as_mut() {
                Some(rx) => match rx.recv().await {
                    Some(r) => r.map(Some),
                    None => Ok(None),
                },
                None => Ok(None),
            }
        })
    }
}

// ------------------------------------------------------------------ aggregate

/// `input` with the lateral columns the reading expressions leave unread
/// blanked (`optimize::prune_lateral_left`). Not under EXPLAIN ANALYZE, whose
/// profile is keyed by the plan's own nodes.
fn lateral_input_pruned<'a>(input: &Plan, read: impl Iterator<Item = &'a Expr>, ctx: &QueryContext) -> Option<Plan> {
    if ctx.profile.is_some() || !matches!(input, Plan::Lateral { .. } | Plan::Filter { .. }) {
        return None;
    }
    let mut used = Vec::new();
    for e in read {
        if e.has_subquery() {
            return None;
        }
        e.columns_used(&mut used);
    }
    crate::sql::optimize::prune_lateral_left(input, &used)
}

fn build_aggregate(
    input: &Plan,
    group_by: &[Expr],
    aggs: &[AggCall],
    ctx: &Rc<QueryContext>,
) -> DbResult<BoxedOperator> {
    let spec = FragmentAggregate {
        group_by: group_by.iter().map(|e| ctx.resolve(e)).collect(),
        aggs: aggs
            .iter()
            .map(|a| AggCall {
                arg: a.arg.as_ref().map(|e| ctx.resolve(e)),
                filter: a.filter.as_ref().map(|e| ctx.resolve(e)),
                constant_arg: a.constant_arg.as_ref().map(|e| ctx.resolve(e)),
                ..a.clone()
            })
            .collect(),
    };
    let pushable = spec.group_by.iter().all(|e| e.is_shard_pure())
        && spec.aggs.iter().all(|a| {
            !a.distinct
                && !a.func.collects_values()
                && a.arg.as_ref().is_none_or(|e| e.is_shard_pure())
                && a.filter.as_ref().is_none_or(|e| e.is_shard_pure())
        });
    let scan = match input {
        Plan::Scan {
            table,
            projection,
            filter,
            ..
        } => Some((table, projection, filter.clone())),
        Plan::Filter { input, predicate } => match input.as_ref() {
            Plan::Scan {
                table,
                projection,
                filter: None,
                ..
            } => Some((table, projection, Some(predicate.clone()))),
            _ => None,
        },
        _ => None,
    };
    if let (true, Some((table, projection, filter))) = (pushable, scan) {
        let filter = filter.map(|f| ctx.resolve(&f));
        if filter.as_ref().is_none_or(|f| f.is_shard_pure()) {
            let all: Vec<usize> = (0..table.columns.len()).collect();
            let remap = |e: &Expr| remap_columns(e, projection);
            let shard_spec = FragmentAggregate {
                group_by: spec.group_by.iter().map(remap).collect(),
                aggs: spec
                    .aggs
                    .iter()
                    .map(|a| AggCall {
                        arg: a.arg.as_ref().map(remap),
                        filter: a.filter.as_ref().map(remap),
                        ..a.clone()
                    })
                    .collect(),
            };
            let filter = filter.map(|f| fold_constants(remap(&f), ctx));
            let scan = ScanOp::new(ctx, table, all, filter, Some(shard_spec), scan_stats(ctx, input));
            return Ok(Box::new(AggregateOp {
                input: Box::new(scan),
                spec,
                mode: AggMode::Final,
                done: false,
                ctx: ctx.clone(),
            }));
        }
    }
    Ok(Box::new(AggregateOp {
        input: build(input, ctx)?,
        spec,
        mode: AggMode::Single,
        done: false,
        ctx: ctx.clone(),
    }))
}

struct AggregateOp {
    input: BoxedOperator,
    spec: FragmentAggregate,
    /// Final: the input is partial states from shards; Single: raw rows.
    mode: AggMode,
    done: bool,
    ctx: Rc<QueryContext>,
}

impl Operator for AggregateOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.done {
                return Ok(None);
            }
            self.done = true;
            let mut state: HashAggregation = fragment::new_aggregation(&self.spec, self.mode)?;
            let keys = self.spec.group_by.len();
            let mut charged_groups = 0usize;
            while let Some(batch) = self.input.next().await? {
                self.ctx.check_cancel()?;
                // Each group costs its key, its states and a hash table slot; charge growth.
                let groups = state.groups.len();
                if groups > charged_groups {
                    self.ctx
                        .charge((groups - charged_groups) * (64 + 16 * self.spec.aggs.len()))?;
                    charged_groups = groups;
                }
                if self.mode == AggMode::Final {
                    state.merge(&batch, keys)?;
                } else {
                    let empty = HashMap::new();
                    let cx = self.ctx.inputs(&empty);
                    fragment::update_aggregation_with(&mut state, &self.spec, &batch, &cx)?;
                }
            }
            let out = state.finish(keys > 0)?;
            Ok(if out.len == 0 { None } else { Some(out) })
        })
    }
}

// ------------------------------------------------------------------ filter / project / values

/// Computes the subqueries an expression contains, for this batch.
pub(crate) async fn subquery_values(
    exprs: &[&Expr],
    batch: &Batch,
    ctx: &Rc<QueryContext>,
) -> DbResult<HashMap<usize, Value>> {
    let mut subs = Vec::new();
    for e in exprs {
        e.walk(&mut |x| {
            if let Expr::Subquery(s) = x {
                subs.push(s.clone());
            }
        });
    }
    let mut out = HashMap::new();
    for s in subs {
        let value = if !s.correlated {
            let cached = ctx.subquery_cache.borrow().get(&s.id).cloned();
            match cached {
                Some(v) if !matches!(s.kind, SubqueryKind::In { .. }) => v,
                _ => {
                    let v = run_subquery(&s, batch, None, ctx).await?;
                    if !matches!(s.kind, SubqueryKind::In { .. }) {
                        ctx.subquery_cache.borrow_mut().insert(s.id, v.clone());
                    }
                    v
                }
            }
        } else {
            let mut col = Column::with_capacity(s.data_type, batch.len);
            for i in 0..batch.len {
                let child = ctx.child(batch.row(i));
                let one = batch.slice(i, 1);
                let v = run_subquery(&s, &one, Some(&child), ctx).await?;
                col.push_datum(&v.datum(0));
            }
            Value::Column(Arc::new(col))
        };
        out.insert(s.id, value);
    }
    Ok(out)
}

/// One subquery's value over `batch` (uncorrelated) or one row (correlated).
async fn run_subquery(
    s: &Subquery,
    batch: &Batch,
    child: Option<&Rc<QueryContext>>,
    ctx: &Rc<QueryContext>,
) -> DbResult<Value> {
    let run_ctx = child.unwrap_or(ctx);
    let rows = collect(&s.plan, run_ctx).await?;
    let total: usize = rows.iter().map(|b| b.len).sum();
    match s.kind {
        SubqueryKind::Exists => Ok(Value::Scalar(Datum::Bool(total > 0), DataType::Bool)),
        SubqueryKind::Array => {
            let DataType::Array(elem) = s.data_type else {
                return Err(DbError::internal("ARRAY subquery without an array type"));
            };
            let values: Vec<Datum> = rows.iter().flat_map(|b| (0..b.len).map(move |i| b.columns[0].datum(i))).collect();
            let array = crate::types::array::ArrayValue::of(values);
            Ok(Value::Scalar(Datum::Bytes(array.encode(elem)), s.data_type))
        }
        SubqueryKind::Scalar => {
            if total > 1 {
                return Err(DbError::new(
                    sqlstate::CARDINALITY_VIOLATION,
                    "more than one row returned by a subquery used as an expression",
                ));
            }
            let d = rows
                .iter()
                .find(|b| b.len > 0)
                .map_or(Datum::Null, |b| b.columns[0].datum(0));
            Ok(Value::Scalar(d, s.data_type))
        }
        SubqueryKind::In { negated } => {
            let (Some(left), Some(eq)) = (&s.left, &s.eq) else {
                return Err(DbError::internal("IN subquery without operand"));
            };
            let empty = HashMap::new();
            let cx = run_ctx.inputs(&empty);
            let lv = eval(left, batch, &cx)?.into_column(batch.len);
            let lv = crate::exec::kernels::cast_column(&lv, eq.left, &ctx.eval)?;
            let mut set = hashbrown::HashSet::new();
            let mut has_null = false;
            let mut key = Vec::new();
            for b in &rows {
                let c = crate::exec::kernels::cast_column(&b.columns[0], eq.right, &ctx.eval)?;
                for i in 0..b.len {
                    if !c.is_valid(i) {
                        has_null = true;
                        continue;
                    }
                    key.clear();
                    encode_key(&c, i, &mut key);
                    set.insert(key.clone());
                }
            }
            let mut out = Column::with_capacity(DataType::Bool, batch.len);
            for i in 0..batch.len {
                let d = if !lv.is_valid(i) {
                    if set.is_empty() && !has_null {
                        Datum::Bool(negated)
                    } else {
                        Datum::Null
                    }
                } else {
                    key.clear();
                    encode_key(&lv, i, &mut key);
                    if set.contains(&key) {
                        Datum::Bool(!negated)
                    } else if has_null {
                        Datum::Null
                    } else {
                        Datum::Bool(negated)
                    }
                };
                out.push_datum(&d);
            }
            Ok(Value::Column(Arc::new(out)))
        }
    }
}

struct FilterOp {
    input: BoxedOperator,
    predicate: Expr,
    ctx: Rc<QueryContext>,
}

impl Operator for FilterOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            while let Some(batch) = self.input.next().await? {
                self.ctx.check_cancel()?;
                let subs = if self.predicate.has_subquery() {
                    subquery_values(&[&self.predicate], &batch, &self.ctx).await?
                } else {
                    HashMap::new()
                };
                let cx = self.ctx.inputs(&subs);
                let out = filter_batch(&self.predicate, &batch, &cx)?;
                if out.len > 0 {
                    return Ok(Some(out));
                }
            }
            Ok(None)
        })
    }
}

struct ProjectOp {
    input: BoxedOperator,
    exprs: Vec<Expr>,
    ctx: Rc<QueryContext>,
}

impl Operator for ProjectOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            let Some(batch) = self.input.next().await? else {
                return Ok(None);
            };
            let subs = if self.exprs.iter().any(|e| e.has_subquery()) {
                let refs: Vec<&Expr> = self.exprs.iter().collect();
                subquery_values(&refs, &batch, &self.ctx).await?
            } else {
                HashMap::new()
            };
            let cx = self.ctx.inputs(&subs);
            let cols = self
                .exprs
                .iter()
                .map(|e| eval(e, &batch, &cx).map(|v| v.into_column(batch.len)))
                .collect::<DbResult<Vec<_>>>()?;
            Ok(Some(Batch::new(cols, batch.len)))
        })
    }
}

struct ValuesOp {
    rows: Vec<Vec<Expr>>,
    done: bool,
    ctx: Rc<QueryContext>,
}

impl Operator for ValuesOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.done {
                return Ok(None);
            }
            self.done = true;
            // No rows, no batch: a batch without columns would not have the
            // plan's width, and a filter or projection above that evaluates
            // it (one with a subquery does) would ask for a missing column.
            if self.rows.is_empty() {
                return Ok(None);
            }
            let width = self.rows.first().map_or(0, |r| r.len());
            if width == 0 {
                return Ok(Some(Batch::new(vec![], self.rows.len())));
            }
            let one = Batch::new(vec![], 1);
            let mut cols: Vec<Column> = self.rows[0]
                .iter()
                .map(|e| Column::with_capacity(e.data_type(), self.rows.len()))
                .collect();
            let any_subquery = self.rows.iter().flatten().any(|e| e.has_subquery());
            let no_subqueries = HashMap::new();
            for row in &self.rows {
                let subs = if any_subquery {
                    let exprs: Vec<&Expr> = row.iter().collect();
                    subquery_values(&exprs, &one, &self.ctx).await?
                } else {
                    HashMap::new()
                };
                let subs = if any_subquery { &subs } else { &no_subqueries };
                let cx = self.ctx.inputs(subs);
                for (c, e) in cols.iter_mut().zip(row) {
                    match e {
                        // Literals (most of a multi-row INSERT) need no evaluation.
                        Expr::Literal(d, _) => c.push_datum(d),
                        _ => c.push_datum(&eval(e, &one, &cx)?.datum(0)),
                    }
                }
            }
            Ok(Some(Batch::from_columns(cols)))
        })
    }
}

// ------------------------------------------------------------------ limit / distinct / sort

struct LimitOp {
    input: BoxedOperator,
    remaining: Option<i64>,
    skip: u64,
}

impl Operator for LimitOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            loop {
                if self.remaining == Some(0) {
                    return Ok(None);
                }
                let Some(mut batch) = self.input.next().await? else {
                    return Ok(None);
                };
                if self.skip > 0 {
                    let s = (self.skip as usize).min(batch.len);
                    self.skip -= s as u64;
                    batch = batch.slice(s, batch.len - s);
                }
                if let Some(r) = self.remaining.as_mut() {
                    if batch.len as i64 > *r {
                        batch = batch.slice(0, *r as usize);
                    }
                    *r -= batch.len as i64;
                }
                if batch.len > 0 {
                    return Ok(Some(batch));
                }
            }
        })
    }
}

fn row_key(batch: &Batch, i: usize, out: &mut Vec<u8>) {
    out.clear();
    for c in &batch.columns {
        encode_key(c, i, out);
    }
}

struct DistinctOp {
    input: BoxedOperator,
    /// DISTINCT ON: the key columns (all columns when None).
    on: Option<Vec<usize>>,
    seen: hashbrown::HashSet<Vec<u8>>,
    ctx: Rc<QueryContext>,
}

impl Operator for DistinctOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            let mut key = Vec::new();
            while let Some(batch) = self.input.next().await? {
                let mut keep = Vec::new();
                for i in 0..batch.len {
                    match &self.on {
                        None => row_key(&batch, i, &mut key),
                        Some(cols) => {
                            key.clear();
                            for &c in cols {
                                encode_key(&batch.columns[c], i, &mut key);
                            }
                        }
                    }
                    if self.seen.insert(key.clone()) {
                        self.ctx.charge(key.len() + 32)?;
                        keep.push(i as u32);
                    }
                }
                if !keep.is_empty() {
                    return Ok(Some(batch.take(&keep)));
                }
            }
            Ok(None)
        })
    }
}

/// Drains an operator into one batch, charging the statement's memory.
pub(crate) async fn drain(op: &mut BoxedOperator, types: &[DataType], ctx: &QueryContext) -> DbResult<Batch> {
    let mut all = Vec::new();
    while let Some(b) = op.next().await? {
        ctx.check_cancel()?;
        ctx.charge(b.byte_size())?;
        all.push(b);
    }
    Ok(if all.len() == 1 {
        all.pop().unwrap_or_else(|| Batch::empty(types))
    } else {
        Batch::concat(types, &all)
    })
}

/// Compares row `a` with row `b` of one key column, PostgreSQL's way for
/// ORDER BY: NULLs last ascending (first descending) unless told otherwise,
/// NaN above every other float.
pub(crate) fn compare_key(col: &Column, key: &SortKey, a: usize, b: usize) -> std::cmp::Ordering {
    use crate::exec::vector::ColumnData as D;
    use std::cmp::Ordering::*;
    match (col.is_valid(a), col.is_valid(b)) {
        (false, false) => return Equal,
        (false, true) => return if key.nulls_first { Less } else { Greater },
        (true, false) => return if key.nulls_first { Greater } else { Less },
        _ => {}
    }
    let ord = match &col.data {
        D::Bool(v) => v[a].cmp(&v[b]),
        D::Int16(v) => v[a].cmp(&v[b]),
        D::Int32(v) => v[a].cmp(&v[b]),
        D::Int64(v) => v[a].cmp(&v[b]),
        D::Float32(v) => crate::types::datum::pg_float_cmp(v[a] as f64, v[b] as f64),
        D::Float64(v) => crate::types::datum::pg_float_cmp(v[a], v[b]),
        D::Numeric(v) => v[a].cmp(&v[b]),
        D::Bytes(v) => match col.data_type {
            DataType::Array(e) => crate::types::array::compare_held(v.get(a), v.get(b), e),
            _ => v.get(a).cmp(v.get(b)),
        },
        D::Interval(v) => v[a].cmp(&v[b]),
    };
    if key.descending {
        ord.reverse()
    } else {
        ord
    }
}

/// The order of `batch`'s rows under `keys` (stable, as ties keep input order).
fn sort_permutation(batch: &Batch, keys: &[SortKey], ctx: &QueryContext) -> DbResult<Vec<u32>> {
    let empty = HashMap::new();
    let cx = ctx.inputs(&empty);
    let key_cols = keys
        .iter()
        .map(|k| eval(&k.expr, batch, &cx).map(|v| v.into_column(batch.len)))
        .collect::<DbResult<Vec<_>>>()?;
    let mut idx: Vec<u32> = (0..batch.len as u32).collect();
    idx.sort_by(|&a, &b| {
        for (col, key) in key_cols.iter().zip(keys) {
            let ord = compare_key(col, key, a as usize, b as usize);
            if ord != std::cmp::Ordering::Equal {
                return ord;
            }
        }
        std::cmp::Ordering::Equal
    });
    Ok(idx)
}

/// The next batch of a fully computed result and its read position.
pub(crate) fn next_slice(out: &mut Option<(Batch, usize)>) -> Option<Batch> {
    let (all, pos) = out.as_mut()?;
    if *pos >= all.len {
        return None;
    }
    let n = BATCH_ROWS.min(all.len - *pos);
    let b = all.slice(*pos, n);
    *pos += n;
    Some(b)
}

struct SortOp {
    input: BoxedOperator,
    keys: Vec<SortKey>,
    out: Option<(Batch, usize)>,
    ctx: Rc<QueryContext>,
    /// For ORDER BY … LIMIT k: keep only the first k rows while reading (top-k).
    keep: Option<usize>,
}

impl SortOp {
    fn sorted_prefix(&self, all: &Batch) -> DbResult<Batch> {
        let mut idx = sort_permutation(all, &self.keys, &self.ctx)?;
        if let Some(k) = self.keep {
            idx.truncate(k);
        }
        Ok(all.take(&idx))
    }
}

impl Operator for SortOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.out.is_none() {
                let mut parts: Vec<Batch> = Vec::new();
                let mut buffered = 0usize;
                let mut types = None;
                while let Some(b) = self.input.next().await? {
                    self.ctx.check_cancel()?;
                    let t = types
                        .get_or_insert_with(|| {
                            b.columns.iter().map(|c| c.data_type).collect::<Vec<_>>()
                        })
                        .clone();
                    buffered += b.len;
                    self.ctx.charge(b.byte_size())?;
                    parts.push(b);
                    // Top-k: once the buffer is well past k rows, keep only the best k.
                    if let Some(k) = self.keep {
                        if buffered > (4 * k).max(4 * BATCH_ROWS) {
                            let all = Batch::concat(&t, &parts);
                            let best = self.sorted_prefix(&all)?;
                            self.ctx
                                .release(all.byte_size().saturating_sub(best.byte_size()));
                            buffered = best.len;
                            parts = vec![best];
                        }
                    }
                }
                let Some(types) = types else { return Ok(None) };
                let all = Batch::concat(&types, &parts);
                self.out = Some((self.sorted_prefix(&all)?, 0));
            }
            Ok(next_slice(&mut self.out))
        })
    }
}

// ------------------------------------------------------------------ joins

struct JoinOp {
    left: BoxedOperator,
    right: Option<BoxedOperator>,
    left_types: Vec<DataType>,
    right_types: Vec<DataType>,
    kind: JoinKind,
    on: Option<Expr>,
    /// Equi-join keys: (expression over left, expression over right).
    equi: Vec<(Expr, Expr)>,
    residual: Option<Expr>,
    build: Option<Batch>,
    table: HashMap<Vec<u8>, Vec<u32>>,
    right_matched: Vec<bool>,
    finished: bool,
    /// The probe batch being joined and the next of its rows to join.
    probing: Option<(Batch, usize)>,
    ctx: Rc<QueryContext>,
}

/// Row pairs a join produces per step before it yields to the shard's other
/// tasks (cancel requests and sessions sharing the thread).
const JOIN_PAIRS_PER_STEP: usize = 16 * BATCH_ROWS;

impl JoinOp {
    fn new(
        left: BoxedOperator,
        right: BoxedOperator,
        left_types: Vec<DataType>,
        right_types: Vec<DataType>,
        kind: JoinKind,
        on: Option<Expr>,
        ctx: Rc<QueryContext>,
    ) -> JoinOp {
        let split = left_types.len();
        let (equi, residual) = match &on {
            Some(e) if !e.has_subquery() => split_equi(e, split),
            _ => (vec![], on.clone()),
        };
        JoinOp {
            left,
            right: Some(right),
            left_types,
            right_types,
            kind,
            on,
            equi,
            residual,
            build: None,
            table: HashMap::new(),
            right_matched: vec![],
            finished: false,
            probing: None,
            ctx,
        }
    }

    async fn build_side(&mut self) -> DbResult<()> {
        let Some(mut right) = self.right.take() else {
            return Ok(());
        };
        let b = drain(&mut right, &self.right_types, &self.ctx).await?;
        if !self.equi.is_empty() {
            let empty = HashMap::new();
            let cx = self.ctx.inputs(&empty);
            let cols = self
                .equi
                .iter()
                .map(|(_, r)| eval(r, &b, &cx).map(|v| v.into_column(b.len)))
                .collect::<DbResult<Vec<_>>>()?;
            let mut key = Vec::new();
            for i in 0..b.len {
                key.clear();
                if cols.iter().any(|c| !c.is_valid(i)) {
                    continue; // NULL never equals anything
                }
                for c in &cols {
                    encode_key(c, i, &mut key);
                }
                self.table.entry(key.clone()).or_default().push(i as u32);
            }
        }
        self.right_matched = vec![false; b.len];
        self.build = Some(b);
        Ok(())
    }

    fn null_batch(types: &[DataType], len: usize) -> Vec<Arc<Column>> {
        types
            .iter()
            .map(|t| Arc::new(Column::from_datum(*t, &Datum::Null, len)))
            .collect()
    }

    /// Joins probe rows `start..` of `lb` until about `JOIN_PAIRS_PER_STEP`
    /// pairs are produced; returns the output and the next row to probe.
    fn probe(&mut self, lb: &Batch, start: usize) -> DbResult<(Batch, usize)> {
        let Some(rb) = self.build.as_ref() else {
            return Err(DbError::internal("join without build side"));
        };
        // Every pair of one probe row stays in one step (outer joins need that).
        let rows_per_step = if self.equi.is_empty() {
            (JOIN_PAIRS_PER_STEP / rb.len.max(1)).max(1)
        } else {
            BATCH_ROWS
        };
        let end = (start + rows_per_step).min(lb.len);
        let lb = &lb.slice(start, end - start);
        let empty = HashMap::new();
        let cx = self.ctx.inputs(&empty);
        let mut li = Vec::new();
        let mut ri = Vec::new();
        if !self.equi.is_empty() {
            let cols = self
                .equi
                .iter()
                .map(|(l, _)| eval(l, lb, &cx).map(|v| v.into_column(lb.len)))
                .collect::<DbResult<Vec<_>>>()?;
            let mut key = Vec::new();
            for i in 0..lb.len {
                if cols.iter().any(|c| !c.is_valid(i)) {
                    continue;
                }
                key.clear();
                for c in &cols {
                    encode_key(c, i, &mut key);
                }
                if let Some(rows) = self.table.get(&key) {
                    for &r in rows {
                        li.push(i as u32);
                        ri.push(r);
                    }
                }
            }
        } else {
            for i in 0..lb.len as u32 {
                for r in 0..rb.len as u32 {
                    li.push(i);
                    ri.push(r);
                }
            }
        }
        let mut pairs = Batch::new(
            lb.take(&li)
                .columns
                .into_iter()
                .chain(rb.take(&ri).columns)
                .collect(),
            li.len(),
        );
        if let Some(res) = &self.residual {
            let v = eval(res, &pairs, &cx)?.into_column(pairs.len);
            let sel = crate::exec::expr::selection(&v)?;
            li = sel.iter().map(|&s| li[s as usize]).collect();
            ri = sel.iter().map(|&s| ri[s as usize]).collect();
            pairs = pairs.take(&sel);
        }
        for &r in &ri {
            self.right_matched[r as usize] = true;
        }
        if matches!(self.kind, JoinKind::Left | JoinKind::Full) {
            let mut matched = vec![false; lb.len];
            for &l in &li {
                matched[l as usize] = true;
            }
            let unmatched: Vec<u32> = (0..lb.len as u32)
                .filter(|&i| !matched[i as usize])
                .collect();
            if !unmatched.is_empty() {
                let extra = Batch::new(
                    lb.take(&unmatched)
                        .columns
                        .into_iter()
                        .chain(Self::null_batch(&self.right_types, unmatched.len()))
                        .collect(),
                    unmatched.len(),
                );
                let types: Vec<DataType> = self
                    .left_types
                    .iter()
                    .chain(&self.right_types)
                    .copied()
                    .collect();
                pairs = Batch::concat(&types, &[pairs, extra]);
            }
        }
        Ok((pairs, end))
    }
}

/// Splits `a = b AND …` into equi-join keys (left-only = right-only) and the rest.
fn split_equi(on: &Expr, split: usize) -> (Vec<(Expr, Expr)>, Option<Expr>) {
    let mut conjuncts = Vec::new();
    flatten_and(on, &mut conjuncts);
    let mut equi = Vec::new();
    let mut rest: Option<Expr> = None;
    for c in conjuncts {
        if let Expr::Binary { sig, left, right } = &c {
            if sig.op == crate::exec::kernels::BinaryOp::Eq {
                let side = |e: &Expr| {
                    let mut cols = Vec::new();
                    e.columns_used(&mut cols);
                    if cols.is_empty() || !e.is_shard_pure() {
                        None
                    } else if cols.iter().all(|&i| i < split) {
                        Some(true)
                    } else if cols.iter().all(|&i| i >= split) {
                        Some(false)
                    } else {
                        None
                    }
                };
                let shift = |e: &Expr| {
                    e.clone().transform(&mut |x| match x {
                        Expr::Column(i, t) => Expr::Column(i - split, t),
                        o => o,
                    })
                };
                match (side(left), side(right)) {
                    (Some(true), Some(false)) => {
                        equi.push(((**left).clone(), shift(right)));
                        continue;
                    }
                    (Some(false), Some(true)) => {
                        equi.push(((**right).clone(), shift(left)));
                        continue;
                    }
                    _ => {}
                }
            }
        }
        rest = Some(match rest {
            None => c,
            Some(r) => and(r, c),
        });
    }
    (equi, rest)
}

fn and(a: Expr, b: Expr) -> Expr {
    let sig = crate::exec::kernels::BinarySignature {
        op: crate::exec::kernels::BinaryOp::And,
        left: DataType::Bool,
        right: DataType::Bool,
        result: DataType::Bool,
    };
    Expr::Binary {
        sig,
        left: Box::new(a),
        right: Box::new(b),
    }
}

fn flatten_and(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Binary { sig, left, right } if sig.op == crate::exec::kernels::BinaryOp::And => {
            flatten_and(left, out);
            flatten_and(right, out);
        }
        other => out.push(other.clone()),
    }
}

impl Operator for JoinOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.build.is_none() {
                self.build_side().await?;
            }
            let _ = &self.on;
            loop {
                let (lb, start) = match self.probing.take() {
                    Some(p) => p,
                    None => match self.left.next().await? {
                        Some(b) => (b, 0),
                        None => break,
                    },
                };
                self.ctx.check_cancel()?;
                let (out, next) = self.probe(&lb, start)?;
                if next < lb.len {
                    self.probing = Some((lb, next));
                }
                tokio::task::yield_now().await;
                if out.len > 0 {
                    return Ok(Some(out));
                }
            }
            if !self.finished && matches!(self.kind, JoinKind::Right | JoinKind::Full) {
                self.finished = true;
                let unmatched: Vec<u32> = (0..self.right_matched.len() as u32)
                    .filter(|&i| !self.right_matched[i as usize])
                    .collect();
                if let (false, Some(rb)) = (unmatched.is_empty(), self.build.as_ref()) {
                    let cols = Self::null_batch(&self.left_types, unmatched.len())
                        .into_iter()
                        .chain(rb.take(&unmatched).columns)
                        .collect();
                    return Ok(Some(Batch::new(cols, unmatched.len())));
                }
            }
            Ok(None)
        })
    }
}

// ------------------------------------------------------------------ set operations

struct SetOpOp {
    left: BoxedOperator,
    right: Option<BoxedOperator>,
    kind: SetOpKind,
    all: bool,
    right_counts: HashMap<Vec<u8>, i64>,
    seen: HashMap<Vec<u8>, i64>,
    left_done: bool,
    ctx: Rc<QueryContext>,
}

impl Operator for SetOpOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            let mut key = Vec::new();
            if self.kind == SetOpKind::Union {
                loop {
                    let next = if !self.left_done {
                        match self.left.next().await? {
                            Some(b) => Some(b),
                            None => {
                                self.left_done = true;
                                continue;
                            }
                        }
                    } else {
                        match self.right.as_mut() {
                            Some(r) => r.next().await?,
                            None => None,
                        }
                    };
                    let Some(b) = next else { return Ok(None) };
                    if self.all {
                        return Ok(Some(b));
                    }
                    let mut keep = Vec::new();
                    for i in 0..b.len {
                        row_key(&b, i, &mut key);
                        if self.seen.insert(key.clone(), 1).is_none() {
                            self.ctx.charge(key.len() + 40)?;
                            keep.push(i as u32);
                        }
                    }
                    if !keep.is_empty() {
                        return Ok(Some(b.take(&keep)));
                    }
                }
            }
            if let Some(mut r) = self.right.take() {
                while let Some(b) = r.next().await? {
                    self.ctx.charge(b.byte_size())?;
                    for i in 0..b.len {
                        row_key(&b, i, &mut key);
                        *self.right_counts.entry(key.clone()).or_default() += 1;
                    }
                }
            }
            while let Some(b) = self.left.next().await? {
                let mut keep = Vec::new();
                for i in 0..b.len {
                    row_key(&b, i, &mut key);
                    let emitted = self.seen.entry(key.clone()).or_default();
                    let in_right = self.right_counts.get(&key).copied().unwrap_or(0);
                    let take = match (self.kind, self.all) {
                        (SetOpKind::Intersect, false) => in_right > 0 && *emitted == 0,
                        (SetOpKind::Intersect, true) => *emitted < in_right,
                        (SetOpKind::Except, false) => in_right == 0 && *emitted == 0,
                        (SetOpKind::Except, true) => {
                            // Each right row cancels one left row.
                            if let Some(c) = self.right_counts.get_mut(&key) {
                                if *c > 0 {
                                    *c -= 1;
                                    continue;
                                }
                            }
                            true
                        }
                        (SetOpKind::Union, _) => true,
                    };
                    if take {
                        *emitted += 1;
                        keep.push(i as u32);
                    }
                }
                if !keep.is_empty() {
                    return Ok(Some(b.take(&keep)));
                }
            }
            Ok(None)
        })
    }
}
