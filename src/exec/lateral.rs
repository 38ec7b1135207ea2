//! The lateral join (`Plan::Lateral`): for each left row, runs the right
//! plan with that row as its outer row, pairs the row with each result
//! (filtered by ON), and for LEFT keeps an unmatched row with NULLs.
//! Must not: reorder left rows (output follows the left input).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::exec::expr::filter_batch;
use crate::exec::operators::{collect, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::exec::vector::{Batch, Column};
use crate::sql::plan::{Expr, JoinKind, Plan};
use crate::types::{DataType, Datum};

pub struct LateralOp {
    pub left: BoxedOperator,
    pub right: Plan,
    pub kind: JoinKind,
    pub on: Option<Expr>,
    pub right_types: Vec<DataType>,
    pub ctx: Rc<QueryContext>,
}

impl Operator for LateralOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            while let Some(lb) = self.left.next().await? {
                let mut parts = Vec::new();
                for i in 0..lb.len {
                    self.ctx.check_cancel()?;
                    let child = self.ctx.child(lb.row(i));
                    let rows = collect(&self.right, &child).await?;
                    let right = Batch::concat(&self.right_types, &rows);
                    let mut joined = self.pair(&lb, i, &right);
                    if let Some(on) = &self.on {
                        let empty = HashMap::new();
                        joined = filter_batch(on, &joined, &self.ctx.inputs(&empty))?;
                    }
                    if joined.len == 0 && self.kind == JoinKind::Left {
                        let nulls = Batch::from_columns(
                            self.right_types.iter().map(|t| Column::from_datum(*t, &Datum::Null, 1)).collect(),
                        );
                        joined = self.pair(&lb, i, &nulls);
                    }
                    if joined.len > 0 {
                        self.ctx.charge(joined.byte_size())?;
                        parts.push(joined);
                    }
                }
                if !parts.is_empty() {
                    let types: Vec<DataType> = parts[0].columns.iter().map(|c| c.data_type).collect();
                    let out = Batch::concat(&types, &parts);
                    for p in &parts {
                        self.ctx.release(p.byte_size());
                    }
                    return Ok(Some(out));
                }
            }
            Ok(None)
        })
    }
}

impl LateralOp {
    /// Left row `i` repeated beside every row of `right`.
    fn pair(&self, left: &Batch, i: usize, right: &Batch) -> Batch {
        let repeated = left.take(&vec![i as u32; right.len]);
        let mut columns: Vec<Arc<Column>> = repeated.columns;
        columns.extend(right.columns.iter().cloned());
        Batch::new(columns, right.len)
    }
}
