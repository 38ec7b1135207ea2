//! GapFillOp: TimescaleDB's time_bucket_gapfill over an aggregate's rows.
//! Per partition (the other group-by values), every bucket in [start,
//! finish) that has no row gets one, with NULL aggregates; locf(e) columns
//! carry the previous real row's value into those rows, interpolate(e)
//! columns draw the line between the real rows on either side.
//! Must not: aggregate (its input is the aggregate's output), or sort by
//! anything but (partition, bucket) — ORDER BY runs above it.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use rust_decimal::prelude::FromPrimitive;
use rust_decimal::Decimal;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::agg::encode_key;
use crate::exec::expr::eval;
use crate::exec::operators::{drain, eval_const, BatchFuture, BoxedOperator, Operator, QueryContext};
use crate::exec::vector::{Batch, Column};
use crate::sql::plan::{Expr, GapFill, GapFillKind};
use crate::types::{DataType, Datum, Numeric};

/// More buckets than this in one partition is a mistake (a width of one
/// microsecond over a year), not a query: refused before memory runs out.
const MAX_BUCKETS: usize = 10_000_000;

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

pub struct GapFillOp {
    pub input: BoxedOperator,
    pub spec: Arc<GapFill>,
    pub input_types: Vec<DataType>,
    pub fill_types: Vec<DataType>,
    pub ctx: Rc<QueryContext>,
    pub done: bool,
}

/// One output row: a row of the input, or a bucket that had none.
#[derive(Clone)]
enum OutRow {
    Real(usize),
    Gap(Datum),
}

impl Operator for GapFillOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.done {
                return Ok(None);
            }
            self.done = true;
            let batch = drain(&mut self.input, &self.input_types, &self.ctx).await?;
            self.fill(&batch).map(Some)
        })
    }
}

impl GapFillOp {
    fn fill(&self, batch: &Batch) -> DbResult<Batch> {
        let spec = &self.spec;
        let buckets = self.buckets()?;
        let subqueries = HashMap::new();
        let cx = self.ctx.inputs(&subqueries);
        let sources = spec
            .fills
            .iter()
            .map(|(e, _)| eval(e, batch, &cx).map(|v| v.into_column(batch.len)))
            .collect::<DbResult<Vec<_>>>()?;

        // Partitions in order of first appearance, each sorted by bucket.
        let mut order: Vec<Vec<usize>> = Vec::new();
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut key = Vec::new();
        for row in 0..batch.len {
            key.clear();
            for &c in &spec.partitions {
                encode_key(&batch.columns[c], row, &mut key);
            }
            let slot = *index.entry(key.clone()).or_insert_with(|| {
                order.push(Vec::new());
                order.len() - 1
            });
            order[slot].push(row);
        }
        if order.is_empty() && spec.partitions.is_empty() {
            order.push(Vec::new());
        }
        let bucket_col = &batch.columns[spec.bucket];
        let mut rows: Vec<(Option<usize>, OutRow)> = Vec::new();
        for part in &mut order {
            part.sort_by(|&a, &b| bucket_col.datum(a).total_cmp(&bucket_col.datum(b)));
            let first = part.first().copied();
            self.ctx.charge(buckets.len() * 48)?;
            let (mut r, mut g) = (0, 0);
            while r < part.len() || g < buckets.len() {
                let real = part.get(r).map(|&i| bucket_col.datum(i));
                let out = match (real, buckets.get(g)) {
                    (Some(t), Some(b)) => match t.total_cmp(b) {
                        std::cmp::Ordering::Less => {
                            r += 1;
                            OutRow::Real(part[r - 1])
                        }
                        std::cmp::Ordering::Equal => {
                            r += 1;
                            g += 1;
                            OutRow::Real(part[r - 1])
                        }
                        std::cmp::Ordering::Greater => {
                            g += 1;
                            OutRow::Gap(b.clone())
                        }
                    },
                    (Some(_), None) => {
                        r += 1;
                        OutRow::Real(part[r - 1])
                    }
                    (None, Some(b)) => {
                        g += 1;
                        OutRow::Gap(b.clone())
                    }
                    (None, None) => break,
                };
                rows.push((first, out));
            }
        }

        let mut columns = Vec::with_capacity(self.input_types.len() + sources.len());
        for (c, &t) in self.input_types.iter().enumerate() {
            let values: Vec<Datum> = rows
                .iter()
                .map(|(first, row)| match row {
                    OutRow::Real(i) => batch.columns[c].datum(*i),
                    OutRow::Gap(b) if c == spec.bucket => b.clone(),
                    OutRow::Gap(_) if spec.partitions.contains(&c) => {
                        first.map_or(Datum::Null, |f| batch.columns[c].datum(f))
                    }
                    OutRow::Gap(_) => Datum::Null,
                })
                .collect();
            columns.push(Arc::new(Column::from_datums(t, &values)));
        }
        for (k, ((_, kind), source)) in spec.fills.iter().zip(&sources).enumerate() {
            let values = fill_column(*kind, &rows, source, bucket_col, self.fill_types[k]);
            columns.push(Arc::new(Column::from_datums(self.fill_types[k], &values)));
        }
        Ok(Batch::new(columns, rows.len()))
    }

    /// The buckets from start's bucket up to finish (exclusive, or inclusive
    /// when WHERE said `time <= finish`).
    fn buckets(&self) -> DbResult<Vec<Datum>> {
        let spec = &self.spec;
        let value = |e: &Expr, what: &str| -> DbResult<Datum> {
            let d = eval_const(&self.ctx.resolve(e), &self.ctx)?;
            if d.is_null() {
                return Err(DbError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid time_bucket_gapfill argument: {what} cannot be NULL"),
                ));
            }
            Ok(d)
        };
        let start = value(&spec.start, "start")?;
        let finish = value(&spec.finish, "finish")?;
        let width = value(&spec.width, "bucket_width")?;
        let ty = self.input_types[spec.bucket];
        let step = Step::of(ty, &width)?;
        let calendar = spec.zoned || matches!(&width, Datum::Interval(iv) if iv.months != 0);
        let mut out = Vec::new();
        let mut t = self.bucket_of(&start, ty)?;
        loop {
            let past = match t.total_cmp(&finish) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => !spec.finish_inclusive,
                std::cmp::Ordering::Greater => true,
            };
            if past || t.is_null() {
                break;
            }
            if out.len() >= MAX_BUCKETS {
                return Err(DbError::new(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    format!("time_bucket_gapfill would create more than {MAX_BUCKETS} buckets"),
                ));
            }
            out.push(t.clone());
            if out.len() % 4096 == 0 {
                self.ctx.check_cancel()?;
                self.ctx.charge(4096 * 32)?;
            }
            // Fixed widths: the next bucket starts exactly one width later.
            // Months and time zones move by the calendar: the bucket of
            // t + width (a month counted as 31 days) is the next one.
            if !calendar {
                t = step.advance(&t, 1);
                continue;
            }
            let mut next = self.bucket_of(&step.advance(&t, 1), ty)?;
            if next.total_cmp(&t) != std::cmp::Ordering::Greater {
                next = self.bucket_of(&step.advance(&t, 2), ty)?;
            }
            t = next;
        }
        Ok(out)
    }

    fn bucket_of(&self, v: &Datum, ty: DataType) -> DbResult<Datum> {
        let subqueries = HashMap::new();
        let cx = self.ctx.inputs(&subqueries);
        let one = Batch::new(vec![Arc::new(Column::from_datums(ty, std::slice::from_ref(v)))], 1);
        Ok(eval(&self.ctx.resolve(&self.spec.bucket_of), &one, &cx)?.datum(0))
    }
}

/// How far one bucket width moves a value of the bucket's type.
enum Step {
    Int(i64),
    Nanos(i64),
    Days(i64),
}

impl Step {
    fn of(ty: DataType, width: &Datum) -> DbResult<Step> {
        let positive = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(DbError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    "invalid time_bucket_gapfill argument: bucket_width must be greater than 0",
                ))
            }
        };
        match (ty, width) {
            (DataType::Int16 | DataType::Int32 | DataType::Int64, w) => {
                let w = w.as_i64().unwrap_or(0);
                positive(w > 0)?;
                Ok(Step::Int(w))
            }
            (_, Datum::Interval(iv)) => {
                // A month counts 31 days here: the bucket function then lands on the month's start.
                let ns = (iv.months as i64 * 31 + iv.days as i64)
                    .saturating_mul(NANOS_PER_DAY)
                    .saturating_add(iv.micros.saturating_mul(1000));
                positive(ns > 0)?;
                Ok(if ty == DataType::Date {
                    Step::Days(((ns + NANOS_PER_DAY - 1) / NANOS_PER_DAY).max(1))
                } else {
                    Step::Nanos(ns)
                })
            }
            _ => Err(DbError::internal("time_bucket_gapfill width of an unexpected type")),
        }
    }

    fn advance(&self, t: &Datum, times: i64) -> Datum {
        match (self, t) {
            // In i64, saturating, then clamped to the column's width: a cast
            // of the step first would wrap.
            (Step::Int(w), Datum::Int16(v)) => Datum::Int16(clamp_add(*v as i64, w.saturating_mul(times), i16::MIN as i64, i16::MAX as i64) as i16),
            (Step::Int(w), Datum::Int32(v)) => Datum::Int32(clamp_add(*v as i64, w.saturating_mul(times), i32::MIN as i64, i32::MAX as i64) as i32),
            (Step::Int(w), Datum::Int64(v)) => Datum::Int64(v.saturating_add(w.saturating_mul(times))),
            (Step::Nanos(ns), Datum::Int64(v)) => Datum::Int64(v.saturating_add(ns.saturating_mul(times))),
            (Step::Days(d), Datum::Int32(v)) => Datum::Int32(clamp_add(*v as i64, d.saturating_mul(times), i32::MIN as i64, i32::MAX as i64) as i32),
            _ => Datum::Null,
        }
    }
}

fn clamp_add(v: i64, step: i64, min: i64, max: i64) -> i64 {
    v.saturating_add(step).clamp(min, max)
}

/// A locf / interpolate column: real rows keep their value, gap rows get
/// the previous real row's (locf) or the line between the real rows on
/// either side of them in their partition (interpolate; NULL at the ends).
fn fill_column(
    kind: GapFillKind,
    rows: &[(Option<usize>, OutRow)],
    source: &Column,
    bucket: &Column,
    ty: DataType,
) -> Vec<Datum> {
    let mut out = Vec::with_capacity(rows.len());
    let mut start = 0;
    while start < rows.len() {
        // One partition: the rows sharing `first`.
        let part = rows[start].0;
        let end = start + rows[start..].iter().take_while(|(f, _)| *f == part).count();
        let real: Vec<(usize, usize)> = rows[start..end]
            .iter()
            .enumerate()
            .filter_map(|(k, (_, r))| match r {
                OutRow::Real(i) => Some((k, *i)),
                OutRow::Gap(_) => None,
            })
            .collect();
        let mut next_real = 0;
        for (k, (_, row)) in rows[start..end].iter().enumerate() {
            while next_real < real.len() && real[next_real].0 < k {
                next_real += 1;
            }
            let before = next_real.checked_sub(1).map(|j| real[j].1);
            let value = match row {
                OutRow::Real(i) => source.datum(*i),
                OutRow::Gap(t) => match kind {
                    GapFillKind::Locf => before.map_or(Datum::Null, |i| source.datum(i)),
                    GapFillKind::Interpolate => {
                        let after = real.get(next_real).map(|&(_, i)| i);
                        match (before, after) {
                            (Some(a), Some(b)) => interpolate(
                                (&bucket.datum(a), &source.datum(a)),
                                (&bucket.datum(b), &source.datum(b)),
                                t,
                                ty,
                            ),
                            _ => Datum::Null,
                        }
                    }
                },
            };
            out.push(value);
        }
        start = end;
    }
    out
}

fn position(t: &Datum) -> Option<f64> {
    t.as_i64().map(|v| v as f64)
}

/// y at `t` on the line through (t0, y0) and (t1, y1), in the value's type
/// (integers rounded half away from zero); NULL when either end is.
fn interpolate(p0: (&Datum, &Datum), p1: (&Datum, &Datum), t: &Datum, ty: DataType) -> Datum {
    let (Some(t0), Some(t1), Some(x)) = (position(p0.0), position(p1.0), position(t)) else {
        return Datum::Null;
    };
    let (Some(y0), Some(y1)) = (p0.1.as_f64(), p1.1.as_f64()) else {
        return Datum::Null;
    };
    let y = if t1 == t0 { y0 } else { y0 + (y1 - y0) * (x - t0) / (t1 - t0) };
    match ty {
        DataType::Float64 => Datum::Float64(y),
        DataType::Float32 => Datum::Float32(y as f32),
        DataType::Int16 => Datum::Int16(y.round() as i16),
        DataType::Int32 => Datum::Int32(y.round() as i32),
        DataType::Int64 => Datum::Int64(y.round() as i64),
        DataType::Numeric => Decimal::from_f64(y).map_or(Datum::Null, |d| Datum::Numeric(Numeric::Finite(d))),
        _ => Datum::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_saturate_at_the_column_width_instead_of_wrapping() {
        assert_eq!(Step::Int(100_000).advance(&Datum::Int16(30_000), 1), Datum::Int16(i16::MAX));
        assert_eq!(Step::Int(-100_000).advance(&Datum::Int16(0), 1), Datum::Int16(i16::MIN));
        assert_eq!(Step::Int(1 << 40).advance(&Datum::Int32(5), 3), Datum::Int32(i32::MAX));
        assert_eq!(Step::Days(1 << 33).advance(&Datum::Int32(0), 1), Datum::Int32(i32::MAX));
        assert_eq!(Step::Int(7).advance(&Datum::Int16(10), 3), Datum::Int16(31));
        assert_eq!(Step::Nanos(i64::MAX).advance(&Datum::Int64(1), 2), Datum::Int64(i64::MAX));
    }
}
