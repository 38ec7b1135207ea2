//! The part of a query that runs on every shard holding data: scan the
//! table's batches, filter, project, and optionally pre-aggregate, sending
//! the results back over a bounded channel.
//! Must not: see more than its own shard's data or any session state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::catalog::TableId;
use crate::error::{DbError, DbResult};
use crate::exec::agg::{AggMode, HashAggregation};
use crate::exec::expr::{eval, filter_batch, EvalInputs, Value};
use crate::exec::vector::{Batch, Column};
use crate::exec::EvalContext;
use crate::runtime::ShardHandle;
use crate::sql::plan::{AggCall, Expr};

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
    pub cancel: Arc<AtomicBool>,
}

pub type FragmentSender = mpsc::Sender<DbResult<Batch>>;

impl Fragment {
    /// Starts this fragment on `shard`; results arrive on `tx`.
    pub async fn start(self, shard: &ShardHandle, tx: FragmentSender) -> DbResult<()> {
        shard
            .send_job(Box::new(move |ctx| {
                let batches = ctx.storage.borrow().snapshot(self.table);
                tokio::task::spawn_local(async move {
                    let result = self.run(batches, &tx).await;
                    if let Err(e) = result {
                        let _ = tx.send(Err(e)).await;
                    }
                });
            }))
            .await
    }

    /// Runs the fragment over `batches`, sending results on `tx`.
    pub async fn run(&self, batches: Vec<Batch>, tx: &FragmentSender) -> DbResult<()> {
        let mut agg = match &self.aggregate {
            Some(a) => Some(new_aggregation(a, AggMode::Partial)?),
            None => None,
        };
        for (n, batch) in batches.into_iter().enumerate() {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(DbError::canceled());
            }
            let out = self.process(&batch)?;
            match (&mut agg, &self.aggregate) {
                (Some(state), Some(spec)) => update_aggregation(state, spec, &out, &self.eval)?,
                _ => {
                    if out.len > 0 && tx.send(Ok(out)).await.is_err() {
                        return Ok(()); // the coordinator stopped reading (LIMIT, error)
                    }
                }
            }
            if n % 16 == 15 {
                tokio::task::yield_now().await;
            }
        }
        if let (Some(state), Some(spec)) = (agg, &self.aggregate) {
            let _ = tx.send(state.finish(!spec.group_by.is_empty())).await;
        }
        Ok(())
    }

    /// Filter then project one batch.
    pub fn process(&self, batch: &Batch) -> DbResult<Batch> {
        let empty = Default::default();
        let cx = EvalInputs { eval: &self.eval, params: &[], outer: &[], subqueries: &empty };
        let filtered = match &self.filter {
            Some(f) => filter_batch(f, batch, &cx)?,
            None => batch.clone(),
        };
        let cols = self.projection.iter().map(|&i| filtered.columns[i].clone()).collect();
        Ok(Batch::new(cols, filtered.len))
    }
}

pub fn new_aggregation(spec: &FragmentAggregate, mode: AggMode) -> DbResult<HashAggregation> {
    let keys = spec.group_by.iter().map(|e| e.data_type()).collect();
    let aggs: Vec<_> = spec
        .aggs
        .iter()
        .map(|a| (a.func, a.arg.as_ref().map_or(a.result_type, |e| e.data_type()), a.result_type, a.distinct))
        .collect();
    HashAggregation::new(mode, keys, &aggs)
}

/// Evaluates group keys, aggregate arguments and FILTER masks over raw rows
/// and folds them into `state`.
pub fn update_aggregation(state: &mut HashAggregation, spec: &FragmentAggregate, batch: &Batch, eval_ctx: &EvalContext) -> DbResult<()> {
    let empty = Default::default();
    let cx = EvalInputs { eval: eval_ctx, params: &[], outer: &[], subqueries: &empty };
    update_aggregation_with(state, spec, batch, &cx)
}

pub fn update_aggregation_with(state: &mut HashAggregation, spec: &FragmentAggregate, batch: &Batch, cx: &EvalInputs) -> DbResult<()> {
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
                    Value::Column(c) => (0..batch.len).map(|i| c.datum(i) == crate::types::Datum::Bool(true)).collect(),
                })
            }
            None => None,
        };
        args.push((arg, mask));
    }
    let key_refs: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
    let arg_refs: Vec<(Option<&Column>, Option<Vec<bool>>)> =
        args.iter().map(|(a, m)| (a.as_deref(), m.clone())).collect();
    state.update(&key_refs, batch.len, &arg_refs)
}
