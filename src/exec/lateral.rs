//! The lateral join (`Plan::Lateral`): for each left row, runs the right
//! plan with that row as its outer row, pairs the row with each result
//! (filtered by ON), and for LEFT keeps an unmatched row with NULLs. The
//! right side streams (one batch at a time), so `SELECT generate_series(1,
//! 1e10) LIMIT 5` reads five rows, not ten billion.
//! Must not: reorder left rows (output follows the left input).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::exec::expr::filter_batch;
use crate::exec::operators::{build, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::exec::vector::{Batch, Column};
use crate::sql::plan::{Expr, JoinKind, Plan};
use crate::types::{DataType, Datum};

pub struct LateralOp {
    left: BoxedOperator,
    right: Plan,
    kind: JoinKind,
    on: Option<Expr>,
    right_types: Vec<DataType>,
    /// Left columns nothing above reads: paired as NULLs, not repeated.
    unread_left: Vec<usize>,
    ctx: Rc<QueryContext>,
    /// The left batch being expanded and the row within it.
    current: Option<(Batch, usize)>,
    /// The right side's rows for the current left row, as they come.
    right_rows: Option<BoxedOperator>,
    /// Whether the current left row has been paired with any right row yet.
    matched: bool,
}

impl LateralOp {
    pub fn new(
        left: BoxedOperator,
        right: Plan,
        kind: JoinKind,
        on: Option<Expr>,
        right_types: Vec<DataType>,
        unread_left: Vec<usize>,
        ctx: Rc<QueryContext>,
    ) -> LateralOp {
        LateralOp {
            left,
            right,
            kind,
            on,
            right_types,
            unread_left,
            ctx,
            current: None,
            right_rows: None,
            matched: false,
        }
    }

    /// Left row `i` repeated beside every row of `right`.
    fn pair(&self, left: &Batch, i: usize, right: &Batch) -> Batch {
        let indices = vec![i as u32; right.len];
        let mut columns: Vec<Arc<Column>> = left
            .columns
            .iter()
            .enumerate()
            .map(|(c, column)| {
                Arc::new(if self.unread_left.contains(&c) {
                    Column::from_datum(column.data_type, &Datum::Null, right.len)
                } else {
                    column.take(&indices)
                })
            })
            .collect();
        columns.extend(right.columns.iter().cloned());
        Batch::new(columns, right.len)
    }

    /// Moves to the next left row (the next batch's first when this one is done).
    fn advance(&mut self) {
        self.right_rows = None;
        if let Some((b, i)) = self.current.as_mut() {
            *i += 1;
            if *i >= b.len {
                self.current = None;
            }
        }
    }
}

impl Operator for LateralOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            loop {
                self.ctx.check_cancel()?;
                if self.current.is_none() {
                    match self.left.next().await? {
                        None => return Ok(None),
                        Some(b) if b.len == 0 => continue,
                        Some(b) => self.current = Some((b, 0)),
                    }
                }
                let Some((lb, i)) = self.current.clone() else { continue };
                if self.right_rows.is_none() {
                    let child = self.ctx.child(lb.row(i));
                    self.right_rows = Some(build(&self.right, &child)?);
                    self.matched = false;
                }
                let produced = match self.right_rows.as_mut() {
                    Some(op) => op.next().await?,
                    None => None,
                };
                match produced {
                    Some(rb) => {
                        let mut joined = self.pair(&lb, i, &rb);
                        if let Some(on) = &self.on {
                            let empty = HashMap::new();
                            joined = filter_batch(on, &joined, &self.ctx.inputs(&empty))?;
                        }
                        if joined.len > 0 {
                            self.matched = true;
                            return Ok(Some(joined));
                        }
                    }
                    None => {
                        let unmatched = self.kind == JoinKind::Left && !self.matched;
                        self.advance();
                        if unmatched {
                            let nulls = Batch::from_columns(
                                self.right_types.iter().map(|t| Column::from_datum(*t, &Datum::Null, 1)).collect(),
                            );
                            return Ok(Some(self.pair(&lb, i, &nulls)));
                        }
                    }
                }
            }
        })
    }
}
