//! Uncorrelated subqueries in a scan's filter run before the scan and
//! become constants: `x IN (SELECT …)` a list of literals, a scalar subquery
//! its value, EXISTS a boolean. The filter is then shard-pure, so it runs on
//! the shards and its ranges and values prune segments, block groups and
//! series — TSBS's `tags_id IN (SELECT id FROM tags WHERE hostname IN …)`
//! becomes a series filter — and an aggregate above it is partial on the
//! shards again. The operator runs the subqueries on its first pull, then
//! builds the rewritten plan and hands its rows on.
//! Must not: rewrite a correlated subquery (its value differs per row), or
//! inline an IN list so long that comparing against it costs more than the
//! scan it saves (`MAX_INLINED_VALUES`).

use std::rc::Rc;

use super::operators::{build, collect, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels;
use crate::sql::plan::{Expr, Plan, Subquery, SubqueryKind};
use crate::types::{DataType, Datum};

/// IN lists up to this many values are inlined; a longer one stays a subquery.
const MAX_INLINED_VALUES: usize = 1_000;

/// Whether `e` is shard-pure except for uncorrelated subqueries (each of
/// which this module can turn into a constant).
pub fn only_constant_subqueries(e: &Expr) -> bool {
    let mut any = false;
    let mut ok = true;
    e.walk(&mut |x| match x {
        Expr::Subquery(s) if !s.correlated => any = true,
        Expr::Subquery(_) | Expr::Outer { .. } | Expr::Param(..) | Expr::NextVal(_) | Expr::CurrVal(_) | Expr::LastVal(_) | Expr::SetVal { .. } | Expr::SignalBackend { .. } => ok = false,
        _ => {}
    });
    any && ok
}

/// The subtree `plan`, built once its filter's subqueries are constants.
pub struct ConstantSubqueriesOp {
    plan: Option<Plan>,
    ctx: Rc<QueryContext>,
    inner: Option<BoxedOperator>,
}

impl ConstantSubqueriesOp {
    pub fn new(plan: Plan, ctx: &Rc<QueryContext>) -> ConstantSubqueriesOp {
        ConstantSubqueriesOp {
            plan: Some(plan),
            ctx: ctx.clone(),
            inner: None,
        }
    }
}

impl Operator for ConstantSubqueriesOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.inner.is_none() {
                let plan = self.plan.take().ok_or_else(|| DbError::internal("subquery scan built twice"))?;
                let plan = inline_scan_filter(plan, &self.ctx).await?;
                self.ctx.subqueries_inlined.set(true);
                let built = build(&plan, &self.ctx);
                self.ctx.subqueries_inlined.set(false);
                self.inner = Some(built?);
            }
            match self.inner.as_mut() {
                Some(op) => op.next().await,
                None => Ok(None),
            }
        })
    }
}

/// `plan` (a Filter over a Scan, possibly under an Aggregate) with the
/// filter's uncorrelated subqueries replaced by their values.
async fn inline_scan_filter(plan: Plan, ctx: &Rc<QueryContext>) -> DbResult<Plan> {
    Ok(match plan {
        Plan::Filter { input, predicate } => {
            let predicate = inline_subqueries(predicate, ctx).await?;
            match *input {
                // One filter over the scan, with the optimizer's conjuncts first.
                Plan::Filter { input: scan, predicate: inner } => Plan::Filter {
                    input: scan,
                    predicate: Expr::and(inner, predicate),
                },
                other => Plan::Filter {
                    input: Box::new(other),
                    predicate,
                },
            }
        }
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            fields,
        } => Plan::Aggregate {
            input: Box::new(Box::pin(inline_scan_filter(*input, ctx)).await?),
            group_by,
            aggs,
            fields,
        },
        other => other,
    })
}

/// `e` with each uncorrelated subquery replaced by its value.
async fn inline_subqueries(e: Expr, ctx: &Rc<QueryContext>) -> DbResult<Expr> {
    let mut subqueries: Vec<Subquery> = Vec::new();
    e.walk(&mut |x| {
        if let Expr::Subquery(s) = x {
            if !s.correlated && !subqueries.iter().any(|k| k.id == s.id) {
                subqueries.push(s.clone());
            }
        }
    });
    let mut values: Vec<(usize, Expr)> = Vec::new();
    for s in &subqueries {
        if let Some(v) = constant_of(s, ctx).await? {
            values.push((s.id, v));
        }
    }
    Ok(e.transform(&mut |x| match x {
        Expr::Subquery(s) => match values.iter().find(|(id, _)| *id == s.id) {
            Some((_, v)) => v.clone(),
            None => Expr::Subquery(s),
        },
        other => other,
    }))
}

/// The constant a subquery stands for, or `None` to leave it as it is.
async fn constant_of(s: &Subquery, ctx: &Rc<QueryContext>) -> DbResult<Option<Expr>> {
    let rows = collect(&s.plan, ctx).await?;
    let total: usize = rows.iter().map(|b| b.len).sum();
    Ok(Some(match s.kind {
        SubqueryKind::Exists => Expr::Literal(Datum::Bool(total > 0), DataType::Bool),
        SubqueryKind::Scalar => {
            if total > 1 {
                return Err(DbError::new(
                    sqlstate::CARDINALITY_VIOLATION,
                    "more than one row returned by a subquery used as an expression",
                ));
            }
            let v = rows.iter().find(|b| b.len > 0).map_or(Datum::Null, |b| b.columns[0].datum(0));
            Expr::Literal(v, s.data_type)
        }
        SubqueryKind::In { negated } => {
            let (Some(left), Some(eq)) = (&s.left, &s.eq) else {
                return Ok(None);
            };
            if total > MAX_INLINED_VALUES {
                return Ok(None);
            }
            if total == 0 {
                // Nothing to match: IN is false and NOT IN true, even for a NULL operand.
                return Ok(Some(Expr::Literal(Datum::Bool(negated), DataType::Bool)));
            }
            let mut list = Vec::with_capacity(total);
            for b in &rows {
                let col = kernels::cast_column(&b.columns[0], eq.right, &ctx.eval)?;
                for i in 0..b.len {
                    list.push(Expr::Literal(col.datum(i), eq.right));
                }
            }
            let left = if left.data_type() == eq.left {
                (**left).clone()
            } else {
                Expr::Cast {
                    expr: left.clone(),
                    to: eq.left,
                }
            };
            Expr::InList {
                expr: Box::new(left),
                list,
                eq: *eq,
                negated,
            }
        }
        SubqueryKind::Array => return Ok(None),
    }))
}
