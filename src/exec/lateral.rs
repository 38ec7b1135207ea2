//! The lateral join (`Plan::Lateral`): for each left row, runs the right
//! plan with that row as its outer row, pairs the row with each result
//! (filtered by ON), and for LEFT keeps an unmatched row with NULLs. The
//! right side streams (one batch at a time), so `SELECT generate_series(1,
//! 1e10) LIMIT 5` reads five rows, not ten billion.
//! When the right side is one series' latest row (`WHERE series = outer.col
//! ORDER BY time DESC LIMIT 1`, TSBS's lastpoint), a whole left batch is
//! answered from the last-row index at once (`LatestPerRow`), not a plan
//! per row; while the index cannot answer, rows go the per-row way (whose
//! `LastRowOp` builds the index). When the right side is `unnest` of a left
//! column, a left batch is unnested at once (`UnnestPerBatch`).
//! Must not: reorder left rows (output follows the left input).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::exec::expr::filter_batch;
use crate::exec::operators::{build, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::catalog::TableDef;
use crate::error::{DbError, DbResult};
use crate::exec::table_function::append_elements;
use crate::exec::vector::{Batch, Bitmap, Column, ColumnData, BATCH_ROWS};
use crate::sql::plan::{Expr, JoinKind, Plan, TableFunc, TableFuncCall};
use crate::types::array::ArrayElem;
use crate::storage::last_rows::{LastRowSpec, Lookup, SeriesValue};
use crate::types::{DataType, Datum};

/// A right side that is the latest row of the series named by a left column.
pub struct LatestPerRow {
    table: Arc<TableDef>,
    spec: LastRowSpec,
    /// The left column holding the series value.
    key: usize,
    /// The right side's columns, as table columns.
    projection: Vec<usize>,
}

impl LatestPerRow {
    /// `right` as `[Project] → Limit 1 → Sort [time DESC] → [Project] →
    /// Filter (series = outer column) → Scan` (projects of plain columns)
    /// over a table whose declared series key is `series`, or None.
    pub fn recognize(right: &Plan, ctx: &QueryContext) -> Option<LatestPerRow> {
        let (right, outer_columns) = peel_columns(right)?;
        let Plan::Limit { input, limit: Some(limit), offset: None } = right else { return None };
        if crate::exec::operators::eval_const(&ctx.resolve(limit), ctx).ok()?.as_i64() != Some(1) {
            return None;
        }
        let Plan::Sort { input, keys } = input.as_ref() else { return None };
        let (input, inner_columns) = peel_columns(input)?;
        let ([key], Plan::Filter { input, predicate }) = (keys.as_slice(), input) else { return None };
        let Plan::Scan { table, projection, filter: None, .. } = input.as_ref() else { return None };
        // a column of the sort's input, as a table column
        let table_column = |j: usize| -> Option<usize> {
            let scan_position = match &inner_columns {
                Some(cols) => *cols.get(j)?,
                None => j,
            };
            projection.get(scan_position).copied()
        };
        let Expr::Column(sorted, _) = key.expr else { return None };
        let spec = LastRowSpec::declared(table, &ctx.server.catalog.snapshot().indexes_on(table))?;
        if !key.descending || !key.nulls_first || table_column(sorted) != Some(spec.time) {
            return None;
        }
        let Expr::Binary { sig, left, right } = predicate else { return None };
        let (column, outer) = match (left.as_ref(), right.as_ref()) {
            (Expr::Column(c, ct), Expr::Outer { level: 1, index, data_type })
            | (Expr::Outer { level: 1, index, data_type }, Expr::Column(c, ct)) => {
                (*projection.get(*c)?, (*index, *ct == *data_type))
            }
            _ => return None,
        };
        if sig.op != crate::exec::kernels::BinaryOp::Eq || !outer.1 {
            return None;
        }
        let width = inner_columns.as_ref().map_or(projection.len(), |c| c.len());
        let outputs: Vec<usize> = outer_columns.unwrap_or_else(|| (0..width).collect());
        let projection = outputs.into_iter().map(table_column).collect::<Option<Vec<usize>>>()?;
        (column == spec.series).then(|| LatestPerRow {
            table: table.clone(),
            spec,
            key: outer.0,
            projection,
        })
    }
}

/// A right side that is `unnest(<left column>)` [WITH ORDINALITY]: a left
/// batch is unnested rows at a time — each row's elements appended to one
/// column (a packed array's straight from its bytes), the row's index
/// repeated beside them — instead of a plan built and run per left row.
pub struct UnnestPerBatch {
    /// The left column holding the arrays.
    column: usize,
    elem: ArrayElem,
    ordinality: bool,
    /// The function's columns (elements, ordinality) a projection above it
    /// picks, None when there is none.
    outputs: Option<Vec<usize>>,
}

impl UnnestPerBatch {
    /// `right` as `TableFunction [unnest(outer column)]`, or None.
    pub fn recognize(right: &Plan) -> Option<UnnestPerBatch> {
        let (right, outputs) = peel_columns(right)?;
        let Plan::TableFunction { calls, ordinality, .. } = right else { return None };
        let [TableFuncCall { func: TableFunc::Unnest, args, result_type }] = calls.as_slice() else { return None };
        let [Expr::Outer { level: 1, index, data_type: DataType::Array(elem) }] = args.as_slice() else { return None };
        let width = 1 + usize::from(*ordinality);
        if elem.data_type() != *result_type || outputs.as_ref().is_some_and(|o| o.iter().any(|&c| c >= width)) {
            return None;
        }
        Some(UnnestPerBatch { column: *index, elem: *elem, ordinality: *ordinality, outputs })
    }

    /// Unnests `left`'s rows from `start` until about a batch of elements is
    /// out: the left row of each output row, the output (elements
    /// [, ordinality]) and the row to go on from. With `keep_empty` (a LEFT
    /// join) a row without elements (NULL or empty array) gives one row of
    /// NULLs.
    fn expand(&self, left: &Batch, start: usize, keep_empty: bool) -> DbResult<(Vec<u32>, Batch, usize)> {
        let arrays = left.columns.get(self.column).ok_or_else(|| DbError::internal("unnest column out of range"))?;
        let ColumnData::Bytes(held) = &arrays.data else {
            return Err(DbError::internal("unnest of a column that holds no arrays"));
        };
        let mut rows = Vec::new();
        let mut elements = Column::with_capacity(self.elem.data_type(), BATCH_ROWS);
        let mut ordinals: Vec<i64> = Vec::new();
        let mut i = start;
        while i < left.len && rows.len() < BATCH_ROWS {
            let before = elements.len();
            if arrays.is_valid(i) {
                append_elements(held.get(i), self.elem, &mut elements)?;
            }
            let n = elements.len() - before;
            rows.extend(std::iter::repeat_n(i as u32, n));
            if self.ordinality {
                ordinals.extend(1..=n as i64);
            }
            if n == 0 && keep_empty {
                rows.push(i as u32);
                elements.push_datum(&Datum::Null);
                if self.ordinality {
                    ordinals.push(0);
                }
            }
            i += 1;
        }
        let mut columns = vec![elements];
        if self.ordinality {
            // Ordinal 0 marks a LEFT join's row of NULLs: its ordinality is NULL too.
            let valid: Vec<bool> = ordinals.iter().map(|&o| o != 0).collect();
            let validity = valid.contains(&false).then(|| Bitmap::from_bools(&valid));
            columns.push(Column::new(DataType::Int64, ColumnData::Int64(ordinals), validity));
        }
        let columns: Vec<Arc<Column>> = columns.into_iter().map(Arc::new).collect();
        let picked = match &self.outputs {
            Some(outputs) => outputs.iter().map(|&c| columns[c].clone()).collect(),
            None => columns,
        };
        let n = rows.len();
        Ok((rows, Batch::new(picked, n), i))
    }
}

/// A plan under a projection of plain columns, and those columns (None: no
/// projection); None when a projection computes anything.
fn peel_columns(plan: &Plan) -> Option<(&Plan, Option<Vec<usize>>)> {
    match plan {
        Plan::Project { input, exprs, .. } => {
            let columns: Option<Vec<usize>> =
                exprs.iter().map(|e| if let Expr::Column(c, _) = e { Some(*c) } else { None }).collect();
            Some((input.as_ref(), Some(columns?)))
        }
        other => Some((other, None)),
    }
}

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
    /// The right side answered per left batch from the last-row index.
    latest: Option<LatestPerRow>,
    /// The right side unnests a left column, a left batch at a time.
    unnest: Option<UnnestPerBatch>,
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
            latest: None,
            unnest: None,
        }
    }

    /// Unnests a left column a batch at a time (`UnnestPerBatch::recognize`).
    /// Not for a LEFT join with a condition: which rows stay unmatched is
    /// known only per row.
    pub fn with_unnest(mut self, unnest: Option<UnnestPerBatch>) -> LateralOp {
        let unconditional = matches!(self.on, None | Some(Expr::Literal(Datum::Bool(true), _)));
        if self.kind == JoinKind::Inner || unconditional {
            self.unnest = unnest;
        }
        self
    }

    /// The next output of the batch-at-a-time unnest: left rows beside their
    /// elements, filtered by ON.
    async fn next_unnested(&mut self) -> DbResult<Option<Batch>> {
        let Some(unnest) = self.unnest.as_ref() else { return Ok(None) };
        loop {
            self.ctx.check_cancel()?;
            let (left, start) = match self.current.take() {
                Some(current) => current,
                None => match self.left.next().await? {
                    None => return Ok(None),
                    Some(b) => (b, 0),
                },
            };
            if start >= left.len {
                continue;
            }
            let (rows, right, end) = unnest.expand(&left, start, self.kind == JoinKind::Left)?;
            let mut joined = self.pair_rows(&left, &rows, &right);
            if end < left.len {
                self.current = Some((left, end));
            }
            if let Some(on) = &self.on {
                joined = filter_batch(on, &joined, &self.ctx.inputs(&HashMap::new()))?;
            }
            if joined.len > 0 {
                return Ok(Some(joined));
            }
        }
    }

    /// Answers the right side from the last-row index (`LatestPerRow::recognize`).
    pub fn with_latest(mut self, latest: Option<LatestPerRow>) -> LateralOp {
        self.latest = latest;
        self
    }

    /// The left batch joined with each row's latest row, or None when the
    /// index cannot answer for every row (then the rows go one by one).
    fn join_latest(&self, left: &Batch) -> Option<Batch> {
        let lp = self.latest.as_ref()?;
        let oid = lp.table.oid;
        if self.ctx.has_own_rows(oid) {
            return None;
        }
        let keys = left.columns.get(lp.key)?;
        let width = lp.table.columns.len();
        let nulls = vec![Datum::Null; width];
        let (mut indices, mut rows) = (Vec::with_capacity(left.len), Vec::with_capacity(left.len));
        for i in 0..left.len {
            let found = match keys.datum(i) {
                Datum::Null => None,
                d => match self.ctx.server.last_rows.lookup(oid, lp.spec, &SeriesValue::of(&d)?) {
                    Lookup::Row(Some(row)) if row.len() == width => Some(row),
                    Lookup::Row(None) => None,
                    _ => return None,
                },
            };
            match found {
                Some(row) => rows.push(row),
                None if self.kind == JoinKind::Left => rows.push(nulls.clone()),
                None => continue,
            }
            indices.push(i as u32);
        }
        let right = Batch::new(
            lp.projection
                .iter()
                .map(|&c| {
                    let values: Vec<Datum> = rows.iter().map(|r| r[c].clone()).collect();
                    Arc::new(Column::from_datums(lp.table.columns[c].data_type, &values))
                })
                .collect(),
            indices.len(),
        );
        Some(self.pair_rows(left, &indices, &right))
    }

    /// Left row `i` repeated beside every row of `right`.
    fn pair(&self, left: &Batch, i: usize, right: &Batch) -> Batch {
        self.pair_rows(left, &vec![i as u32; right.len], right)
    }

    /// Left rows `indices` beside the rows of `right`, one for one.
    fn pair_rows(&self, left: &Batch, indices: &[u32], right: &Batch) -> Batch {
        let mut columns: Vec<Arc<Column>> = left
            .columns
            .iter()
            .enumerate()
            .map(|(c, column)| {
                Arc::new(if self.unread_left.contains(&c) {
                    Column::from_datum(column.data_type, &Datum::Null, right.len)
                } else {
                    column.take(indices)
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
            if self.unnest.is_some() {
                return self.next_unnested().await;
            }
            loop {
                self.ctx.check_cancel()?;
                if self.current.is_none() {
                    match self.left.next().await? {
                        None => return Ok(None),
                        Some(b) if b.len == 0 => continue,
                        Some(b) => {
                            if let Some(mut joined) = self.join_latest(&b) {
                                if let Some(on) = &self.on {
                                    joined = filter_batch(on, &joined, &self.ctx.inputs(&HashMap::new()))?;
                                }
                                if joined.len > 0 {
                                    return Ok(Some(joined));
                                }
                                continue;
                            }
                            self.current = Some((b, 0));
                        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::array::ArrayValue;

    fn unnest_of(elem: ArrayElem, ordinality: bool) -> UnnestPerBatch {
        let call = TableFuncCall {
            func: TableFunc::Unnest,
            args: vec![Expr::Outer { level: 1, index: 0, data_type: DataType::Array(elem) }],
            result_type: elem.data_type(),
        };
        let right = Plan::TableFunction { calls: vec![call], ordinality, fields: vec![] };
        UnnestPerBatch::recognize(&right).expect("an unnest of an outer column")
    }

    fn arrays(elem: ArrayElem, values: &[Option<ArrayValue>]) -> Batch {
        let datums: Vec<Datum> = values
            .iter()
            .map(|v| v.as_ref().map_or(Datum::Null, |a| Datum::Bytes(a.encode(elem))))
            .collect();
        Batch::from_columns(vec![Column::from_datums(DataType::Array(elem), &datums)])
    }

    /// Packed, NULL-holding, NULL and empty arrays expand as the per-row
    /// function does: each element beside its row, a LEFT join's row of NULLs
    /// for a row without elements, ordinals per row.
    #[test]
    fn a_batch_unnests_as_each_row_would() {
        let ints = |v: &[Option<i32>]| Some(ArrayValue::of(v.iter().map(|x| x.map_or(Datum::Null, Datum::Int32)).collect()));
        let left = arrays(ArrayElem::Int32, &[ints(&[Some(1), Some(2)]), None, ints(&[]), ints(&[Some(7), None])]);
        let unnest = unnest_of(ArrayElem::Int32, true);
        let (rows, out, end) = unnest.expand(&left, 0, false).expect("inner");
        assert_eq!((rows, end), (vec![0, 0, 3, 3], 4));
        assert_eq!(out.columns[0].datum(2), Datum::Int32(7));
        assert_eq!(out.columns[0].datum(3), Datum::Null);
        assert_eq!((0..4).map(|i| out.columns[1].datum(i)).collect::<Vec<_>>(), [1, 2, 1, 2].map(Datum::Int64));
        let (rows, out, _) = unnest.expand(&left, 1, true).expect("left");
        assert_eq!(rows, vec![1, 2, 3, 3]);
        assert_eq!((0..4).map(|i| out.columns[1].datum(i)).collect::<Vec<_>>(), [Datum::Null, Datum::Null, Datum::Int64(1), Datum::Int64(2)]);
        assert_eq!(out.columns[0].datum(1), Datum::Null);
    }

    /// Output stops near a batch and goes on from the next left row.
    #[test]
    fn a_long_expansion_continues_from_the_next_row() {
        let n = BATCH_ROWS * 2 / 3;
        let big = ArrayValue::of((0..n).map(|x| Datum::Float64(x as f64)).collect());
        let left = arrays(ArrayElem::Float64, &[Some(big.clone()), Some(big.clone()), Some(big)]);
        let unnest = unnest_of(ArrayElem::Float64, false);
        let (rows, out, end) = unnest.expand(&left, 0, false).expect("first");
        assert_eq!((rows.len(), out.len, end), (2 * n, 2 * n, 2));
        assert_eq!(out.columns[0].datum(n + 1), Datum::Float64(1.0));
        let (rows, _, end) = unnest.expand(&left, end, false).expect("rest");
        assert_eq!((rows.len(), end), (n, 3));
    }
}
