//! `SELECT bucket(time) AS b, aggregates … WHERE time < X GROUP BY b ORDER
//! BY b DESC LIMIT k` (TSBS's groupby-orderby-limit) aggregates only the
//! newest buckets instead of every row before X.
//!
//! `bucket` is time_bucket or date_trunc over the time column, with constant
//! other arguments: monotone, and a bucket's start is its own bucket. So with
//! T0 a bucket start, the rows with `time >= T0` are exactly the rows of the
//! buckets >= T0, complete; if the query restricted to them returns k groups,
//! no group outside can rank before them. The probe starts k buckets back
//! from the newest time the WHERE clause admits and reaches further back
//! (4× each round) when it returns fewer; after the last round, the query
//! runs as written.
//! Must not: apply when anything but the bucket is grouped or sorted on, or
//! without an upper time bound (NULL times would form the first group).

use std::rc::Rc;

use crate::error::DbResult;
use crate::exec::kernels::ScalarFunction;
use crate::exec::kernels::{BinaryOp, BinarySignature};
use crate::exec::operators::{build_without_probe, eval_const, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::exec::vector::Batch;
use crate::sql::plan::{Expr, Plan};
use crate::types::{DataType, Datum};

/// Probe rounds before the query runs unrestricted.
const ROUNDS: usize = 4;

/// Where in the plan the probe adds `time >= T0`, and how to find bucket starts.
pub struct NewestGroups {
    /// The Limit node as bound.
    plan: Plan,
    /// The bucket expression over the aggregate's input row.
    bucket: Expr,
    /// The time column in the aggregate's input row, and its type.
    time: usize,
    time_type: DataType,
    /// The newest time the WHERE clause admits.
    newest: i64,
    /// Groups the limit returns.
    rows: usize,
}

impl NewestGroups {
    /// The probe's plan for `limit` (a Limit node with `rows` rows, no
    /// offset), or None when the query is not of this shape.
    pub fn recognize(limit: &Plan, rows: usize, ctx: &QueryContext) -> Option<NewestGroups> {
        let Plan::Limit { input, offset: None, .. } = limit else { return None };
        let Plan::Sort { input: sorted, keys } = input.as_ref() else { return None };
        let [key] = keys.as_slice() else { return None };
        let Expr::Column(mut column, _) = key.expr else { return None };
        if !key.descending || rows == 0 {
            return None;
        }
        let mut plan = sorted.as_ref();
        if let Plan::Project { input, exprs, .. } = plan {
            let Some(Expr::Column(c, _)) = exprs.get(column) else { return None };
            column = *c;
            plan = input;
        }
        let Plan::Aggregate { input, group_by, .. } = plan else { return None };
        let ([bucket], 0) = (group_by.as_slice(), column) else { return None };
        let bucket = ctx.resolve(bucket);
        let (time, time_type) = bucketed_column(&bucket)?;
        let (filter, time_in_filter) = match input.as_ref() {
            Plan::Filter { input, predicate } if matches!(input.as_ref(), Plan::Scan { filter: None, .. }) => {
                (ctx.resolve(predicate), time)
            }
            Plan::Scan { filter: Some(f), projection, .. } => (ctx.resolve(f), *projection.get(time)?),
            _ => return None,
        };
        let newest = newest_admitted(&filter, time_in_filter)?;
        Some(NewestGroups { plan: limit.clone(), bucket, time, time_type, newest, rows })
    }

    /// The start of the bucket holding `t`.
    fn bucket_start(&self, t: i64, ctx: &QueryContext) -> DbResult<Option<i64>> {
        let at = self.bucket.clone().transform(&mut |e| match e {
            Expr::Column(c, _) if c == self.time => Expr::Literal(Datum::Int64(t), self.time_type),
            other => other,
        });
        Ok(match eval_const(&at, ctx)? {
            Datum::Int64(v) => Some(v),
            _ => None,
        })
    }

    /// The query with `time >= t0` added to the aggregate's input filter.
    fn restricted(&self, t0: i64) -> Plan {
        let mut plan = self.plan.clone();
        let mut node = &mut plan;
        loop {
            node = match node {
                Plan::Limit { input, .. } | Plan::Sort { input, .. } | Plan::Project { input, .. } => input,
                Plan::Aggregate { input, .. } => {
                    match input.as_mut() {
                        Plan::Filter { predicate, .. } => {
                            *predicate = Expr::and(predicate.clone(), self.at_least(self.time, t0));
                        }
                        Plan::Scan { filter: Some(f), projection, .. } => {
                            let column = projection[self.time];
                            *f = Expr::and(f.clone(), self.at_least(column, t0));
                        }
                        _ => {}
                    }
                    return plan;
                }
                _ => return plan,
            }
        }
    }

    fn at_least(&self, column: usize, t0: i64) -> Expr {
        Expr::Binary {
            sig: BinarySignature { op: BinaryOp::GtEq, left: self.time_type, right: self.time_type, result: DataType::Bool },
            left: Box::new(Expr::Column(column, self.time_type)),
            right: Box::new(Expr::Literal(Datum::Int64(t0), self.time_type)),
        }
    }
}

/// The time column a bucket expression reads: `time_bucket(width, col [,
/// constants])` or `date_trunc(unit, col [, zone])` of a timestamp column.
fn bucketed_column(bucket: &Expr) -> Option<(usize, DataType)> {
    let Expr::Func { sig, args } = bucket else { return None };
    let time_arg = match sig.func {
        ScalarFunction::TimeBucket | ScalarFunction::DateTrunc => 1,
        _ => return None,
    };
    let mut column = None;
    for (i, a) in args.iter().enumerate() {
        match a {
            Expr::Column(c, t) if i == time_arg && matches!(t, DataType::Timestamp | DataType::TimestampTz) => {
                column = Some((*c, *t))
            }
            Expr::Literal(..) if i != time_arg => {}
            _ => return None,
        }
    }
    column
}

/// The largest time `filter` admits through a conjunct `time < X` / `time <= X`.
fn newest_admitted(filter: &Expr, time: usize) -> Option<i64> {
    match filter {
        Expr::Binary { sig, left, right } if sig.op == BinaryOp::And => {
            match (newest_admitted(left, time), newest_admitted(right, time)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        Expr::Binary { sig, left, right } => {
            let (op, value) = match (left.as_ref(), right.as_ref()) {
                (Expr::Column(c, _), Expr::Literal(Datum::Int64(v), _)) if *c == time => (sig.op, *v),
                (Expr::Literal(Datum::Int64(v), _), Expr::Column(c, _)) if *c == time => match sig.op {
                    BinaryOp::Gt => (BinaryOp::Lt, *v),
                    BinaryOp::GtEq => (BinaryOp::LtEq, *v),
                    _ => return None,
                },
                _ => return None,
            };
            match op {
                BinaryOp::Lt => value.checked_sub(1),
                BinaryOp::LtEq => Some(value),
                _ => None,
            }
        }
        _ => None,
    }
}

enum State {
    Start,
    Rows(std::vec::IntoIter<Batch>),
}

pub struct NewestGroupsOp {
    ctx: Rc<QueryContext>,
    groups: NewestGroups,
    state: State,
}

impl NewestGroupsOp {
    pub fn new(ctx: &Rc<QueryContext>, groups: NewestGroups) -> NewestGroupsOp {
        NewestGroupsOp { ctx: ctx.clone(), groups, state: State::Start }
    }

    async fn run(&self) -> DbResult<Vec<Batch>> {
        let g = &self.groups;
        let mut steps = g.rows;
        let mut t0 = match g.bucket_start(g.newest, &self.ctx)? {
            Some(t) => t,
            None => return self.unrestricted().await,
        };
        let mut taken = 1;
        for _ in 0..ROUNDS {
            while taken < steps {
                t0 = match t0.checked_sub(1).map(|t| g.bucket_start(t, &self.ctx)).transpose()?.flatten() {
                    Some(t) if t < t0 => t,
                    _ => return self.unrestricted().await,
                };
                taken += 1;
            }
            let op = build_without_probe(&g.restricted(t0), &self.ctx)?;
            let rows = collect_op(op).await?;
            if rows.iter().map(|b| b.len).sum::<usize>() >= g.rows {
                return Ok(rows);
            }
            steps *= 4;
        }
        self.unrestricted().await
    }

    async fn unrestricted(&self) -> DbResult<Vec<Batch>> {
        collect_op(build_without_probe(&self.groups.plan, &self.ctx)?).await
    }
}

async fn collect_op(mut op: BoxedOperator) -> DbResult<Vec<Batch>> {
    let mut out = Vec::new();
    while let Some(b) = op.next().await? {
        out.push(b);
    }
    Ok(out)
}

impl Operator for NewestGroupsOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if let State::Start = self.state {
                let rows = self.run().await?;
                self.state = State::Rows(rows.into_iter());
            }
            match &mut self.state {
                State::Rows(rows) => Ok(rows.next()),
                State::Start => Ok(None),
            }
        })
    }
}
