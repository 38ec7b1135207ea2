//! WITH RECURSIVE (`Plan::RecursiveCte`): emits the anchor's rows, then runs
//! the recursive term once per round over the previous round's rows (the
//! `WorkTable`), emitting each round as it is produced, so a LIMIT above
//! stops an unbounded recursion. UNION drops rows already emitted.
//! Must not: keep rounds beyond the current one and the UNION's seen set.

use std::rc::Rc;

use hashbrown::HashSet;

use crate::exec::agg::encode_key;
use crate::exec::operators::{collect, next_slice, BatchFuture, Operator, QueryContext};
use crate::exec::vector::Batch;
use crate::sql::plan::Plan;
use crate::types::DataType;

pub struct RecursiveOp {
    id: usize,
    anchor: Plan,
    recursive: Plan,
    union_all: bool,
    types: Vec<DataType>,
    ctx: Rc<QueryContext>,
    /// Rows emitted so far (UNION only), as encoded keys.
    seen: HashSet<Vec<u8>>,
    /// The last round's rows; None before the anchor ran.
    round: Option<Batch>,
    out: Option<(Batch, usize)>,
}

impl RecursiveOp {
    pub fn new(id: usize, anchor: Plan, recursive: Plan, union_all: bool, ctx: Rc<QueryContext>) -> RecursiveOp {
        let types = anchor.types();
        RecursiveOp {
            id,
            anchor,
            recursive,
            union_all,
            types,
            ctx,
            seen: HashSet::new(),
            round: None,
            out: None,
        }
    }

    /// `rows` without those already emitted (and without repeats) under UNION.
    fn new_rows(&mut self, rows: Batch) -> crate::error::DbResult<Batch> {
        if self.union_all {
            return Ok(rows);
        }
        let mut keep = Vec::new();
        let mut key = Vec::new();
        for i in 0..rows.len {
            key.clear();
            for c in &rows.columns {
                encode_key(c, i, &mut key);
            }
            if self.seen.insert(key.clone()) {
                self.ctx.charge(key.len() + 32)?;
                keep.push(i as u32);
            }
        }
        Ok(rows.take(&keep))
    }
}

impl Operator for RecursiveOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            loop {
                if let Some(b) = next_slice(&mut self.out) {
                    return Ok(Some(b));
                }
                self.ctx.check_cancel()?;
                let produced = match self.round.take() {
                    None => collect(&self.anchor, &self.ctx).await?,
                    Some(previous) => {
                        if previous.len == 0 {
                            self.ctx.work_tables.borrow_mut().remove(&self.id);
                            return Ok(None);
                        }
                        self.ctx.work_tables.borrow_mut().insert(self.id, previous);
                        collect(&self.recursive, &self.ctx).await?
                    }
                };
                let rows = self.new_rows(Batch::concat(&self.types, &produced))?;
                self.round = Some(rows.clone());
                self.out = Some((rows, 0));
            }
        })
    }
}

/// The rows of the recursive CTE's current round.
pub struct WorkTableOp {
    pub out: Option<(Batch, usize)>,
}

impl Operator for WorkTableOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move { Ok(next_slice(&mut self.out)) })
    }
}
