//! Set-returning functions as a row source (`Plan::TableFunction`):
//! generate_series over integers, numeric and timestamps, streamed a batch
//! at a time (a series may be longer than memory; LIMIT or cancel stop it).
//! Several calls run side by side, the shorter padded with NULLs.
//! Must not: evaluate subqueries (the binder refuses them in arguments).

use std::collections::HashMap;
use std::rc::Rc;

use rust_decimal::Decimal;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::expr::eval;
use crate::exec::operators::{BatchFuture, Operator, QueryContext};
use crate::exec::vector::{Batch, Column, ColumnData, BATCH_ROWS};
use crate::sql::plan::{TableFunc, TableFuncCall};
use crate::types::datetime::timestamp_add_interval_in_zone;
use crate::types::array::{ArrayElem, ArrayHeader, ArrayValue};
use crate::types::datum::Interval;
use crate::types::{DataType, Datum, Zone};

pub struct TableFunctionOp {
    pub calls: Vec<TableFuncCall>,
    pub ordinality: bool,
    pub ctx: Rc<QueryContext>,
    pub series: Option<Vec<Series>>,
    pub emitted: i64,
}

/// The state of one call: the next value and how to get the one after.
pub enum Series {
    Done,
    /// Values computed up front (generate_subscripts), the next at `next`.
    Values { values: Vec<Datum>, next: usize },
    /// unnest: the array's elements as one column (a packed array's read
    /// from its element bytes without a `Datum` each); emitted in slices.
    Column { column: Column, next: usize },
    Int { next: i128, stop: i128, step: i128, data_type: DataType },
    Numeric { next: Decimal, stop: Decimal, step: Decimal },
    /// Timestamps (ns), stepped on the wall clock of the session zone (timestamptz) or UTC.
    Timestamp { next: i64, stop: i64, step: Interval, forward: bool, zone: Zone },
}

/// Appends the elements of held array `bytes` to `column` (of the element
/// type), in row-major order: a packed array's straight from its
/// little-endian element bytes, without a `Datum` each; any other decoded.
pub(crate) fn append_elements(bytes: &[u8], elem: ArrayElem, column: &mut Column) -> DbResult<()> {
    fn le<const N: usize, T>(out: &mut Vec<T>, body: &[u8], f: impl Fn([u8; N]) -> T) {
        out.extend(body.as_chunks::<N>().0.iter().map(|b| f(*b)));
    }
    let Some(body) = ArrayHeader::read(bytes)?.packed_body(bytes, elem) else {
        for v in &ArrayValue::decode(bytes, elem)?.elems {
            column.push_datum(v);
        }
        return Ok(());
    };
    let before = column.data.len();
    match (elem, &mut column.data) {
        (ArrayElem::Bool, ColumnData::Bool(v)) => v.extend(body.iter().map(|&b| b != 0)),
        (ArrayElem::Int16, ColumnData::Int16(v)) => le(v, body, i16::from_le_bytes),
        (ArrayElem::Int32 | ArrayElem::Date, ColumnData::Int32(v)) => le(v, body, i32::from_le_bytes),
        (ArrayElem::Int64 | ArrayElem::Timestamp | ArrayElem::TimestampTz, ColumnData::Int64(v)) => {
            le(v, body, i64::from_le_bytes)
        }
        (ArrayElem::Float32, ColumnData::Float32(v)) => le(v, body, f32::from_le_bytes),
        (ArrayElem::Float64, ColumnData::Float64(v)) => le(v, body, f64::from_le_bytes),
        _ => return Err(DbError::internal(format!("a packed {elem:?} array into a {:?} column", column.data_type))),
    }
    if let Some(validity) = column.validity.as_mut() {
        for _ in before..column.data.len() {
            validity.push(true);
        }
    }
    Ok(())
}

fn zero_step() -> DbError {
    DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "step size cannot equal zero")
}

impl Series {
    fn start(call: &TableFuncCall, ctx: &QueryContext) -> DbResult<Series> {
        let empty = HashMap::new();
        let cx = ctx.inputs(&empty);
        let one = Batch::new(vec![], 1);
        let mut args = Vec::new();
        for a in &call.args {
            args.push(eval(&ctx.resolve(a), &one, &cx)?.datum(0));
        }
        if args.iter().any(|a| a.is_null()) {
            return Ok(Series::Done);
        }
        match call.func {
            TableFunc::GenerateSeries => Self::generate_series(&args, call.result_type, ctx),
            TableFunc::Unnest | TableFunc::GenerateSubscripts => {
                let (Some(DataType::Array(elem)), Datum::Bytes(bytes)) = (call.args.first().map(|a| a.data_type()), &args[0]) else {
                    return Ok(Series::Done);
                };
                if call.func == TableFunc::Unnest {
                    let mut column = Column::with_capacity(elem.data_type(), 0);
                    append_elements(bytes, elem, &mut column)?;
                    return Ok(Series::Column { column, next: 0 });
                }
                let header = ArrayHeader::read(bytes)?;
                let dims = header.dims();
                let dim = args[1].as_i64().unwrap_or(0);
                let reverse = matches!(args.get(2), Some(Datum::Bool(true)));
                let n = if dim >= 1 && (dim as usize) <= dims.len() { dims[dim as usize - 1] } else { 0 };
                let mut values: Vec<Datum> = (1..=n as i32).map(Datum::Int32).collect();
                if reverse {
                    values.reverse();
                }
                Ok(Series::Values { values, next: 0 })
            }
        }
    }

    fn generate_series(args: &[Datum], t: DataType, ctx: &QueryContext) -> DbResult<Series> {
        Ok(match t {
            DataType::Numeric => {
                // PostgreSQL's generate_series_step_numeric refuses NaN and infinities.
                let num = |d: &Datum, what: &str| -> DbResult<Decimal> {
                    match d {
                        Datum::Numeric(v) => v.finite().ok_or_else(|| {
                            let kind = if v.is_nan() { "NaN" } else { "infinity" };
                            DbError::new(
                                crate::error::sqlstate::INVALID_PARAMETER_VALUE,
                                format!("{what} cannot be {kind}"),
                            )
                        }),
                        other => Ok(Decimal::from(other.as_i64().unwrap_or(0))),
                    }
                };
                let step = match args.get(2) {
                    Some(d) => num(d, "step size")?,
                    None => Decimal::ONE,
                };
                if step.is_zero() {
                    return Err(zero_step());
                }
                Series::Numeric {
                    next: num(&args[0], "start value")?,
                    stop: num(&args[1], "stop value")?,
                    step,
                }
            }
            DataType::Timestamp | DataType::TimestampTz => {
                let ts = |d: &Datum| d.as_i64().unwrap_or(0);
                let Some(Datum::Interval(step)) = args.get(2) else {
                    return Err(DbError::internal("generate_series over timestamps without an interval step"));
                };
                let total = step.total_micros();
                if total == 0 {
                    return Err(zero_step());
                }
                Series::Timestamp {
                    next: ts(&args[0]),
                    stop: ts(&args[1]),
                    step: *step,
                    forward: total > 0,
                    zone: if t == DataType::TimestampTz { ctx.eval.format.zone } else { Zone::UTC },
                }
            }
            _ => {
                let int = |d: &Datum| d.as_i64().unwrap_or(0) as i128;
                let step = args.get(2).map_or(1, int);
                if step == 0 {
                    return Err(zero_step());
                }
                Series::Int {
                    next: int(&args[0]),
                    stop: int(&args[1]),
                    step,
                    data_type: t,
                }
            }
        })
    }

    /// The next value, or None when the series is over.
    fn next_value(&mut self) -> DbResult<Option<Datum>> {
        let out = match self {
            Series::Done => None,
            Series::Values { values, next } => {
                let v = values.get(*next).cloned();
                *next += 1;
                v
            }
            Series::Column { column, next } => {
                let v = (*next < column.len()).then(|| column.datum(*next));
                *next += 1;
                v
            }
            Series::Int { next, stop, step, data_type } => {
                if (*step > 0 && *next > *stop) || (*step < 0 && *next < *stop) {
                    None
                } else {
                    let v = *next;
                    *next += *step;
                    Some(match data_type {
                        DataType::Int64 => Datum::Int64(v as i64),
                        _ => Datum::Int32(v as i32),
                    })
                }
            }
            Series::Numeric { next, stop, step } => {
                if (step.is_sign_positive() && *next > *stop) || (step.is_sign_negative() && *next < *stop) {
                    None
                } else {
                    let v = *next;
                    match next.checked_add(*step) {
                        Some(n) => *next = n,
                        None => *self = Series::Done,
                    }
                    Some(Datum::Numeric(v.into()))
                }
            }
            Series::Timestamp {
                next,
                stop,
                step,
                forward,
                zone,
            } => {
                if (*forward && *next > *stop) || (!*forward && *next < *stop) {
                    None
                } else {
                    let v = *next;
                    match timestamp_add_interval_in_zone(*next, *step, *zone) {
                        Ok(n) => *next = n,
                        // Past the end of the timestamp range: the series ends here.
                        Err(_) => *self = Series::Done,
                    }
                    Some(Datum::Int64(v))
                }
            }
        };
        if out.is_none() {
            *self = Series::Done;
        }
        Ok(out)
    }
}

impl Operator for TableFunctionOp {
    fn next(&mut self) -> BatchFuture<'_> {
        Box::pin(async move {
            if self.series.is_none() {
                let series = self.calls.iter().map(|c| Series::start(c, &self.ctx)).collect::<DbResult<Vec<_>>>()?;
                self.series = Some(series);
            }
            self.ctx.check_cancel()?;
            let Some(series) = self.series.as_mut() else {
                return Ok(None);
            };
            // (columns, rows so far, whether the batch is already whole)
            let (mut columns, mut rows, whole) = match series.as_mut_slice() {
                // One unnest of a packed array: its column, a slice at a time.
                [Series::Column { column, next }] => {
                    let n = column.len().saturating_sub(*next).min(BATCH_ROWS);
                    let slice = column.slice(*next, n);
                    *next += n;
                    (vec![slice], n, true)
                }
                _ => (self.calls.iter().map(|c| Column::with_capacity(c.result_type, BATCH_ROWS)).collect::<Vec<_>>(), 0, false),
            };
            let mut values = Vec::with_capacity(series.len());
            while !whole && rows < BATCH_ROWS {
                let mut any = false;
                values.clear();
                for s in series.iter_mut() {
                    let v = s.next_value()?;
                    any |= v.is_some();
                    values.push(v.unwrap_or(Datum::Null));
                }
                if !any {
                    break;
                }
                for (c, v) in columns.iter_mut().zip(&values) {
                    c.push_datum(v);
                }
                rows += 1;
            }
            if rows == 0 {
                return Ok(None);
            }
            if self.ordinality {
                let first = self.emitted + 1;
                let n: Vec<Datum> = (0..rows as i64).map(|i| Datum::Int64(first + i)).collect();
                columns.push(Column::from_datums(DataType::Int64, &n));
            }
            self.emitted += rows as i64;
            Ok(Some(Batch::from_columns(columns)))
        })
    }
}
