//! Vectorized expression evaluation: an `Expr` over a `Batch` gives a whole
//! column (or one scalar standing for every row). Operators, functions and
//! casts dispatch to `kernels` once per batch, never per row; only CASE
//! branches, subquery results, and the operands of AND/OR/COALESCE whose
//! whole-batch run failed (an error only the rows they reach may raise) are
//! assembled row by row.
//! Must not: run subqueries (operators compute them and pass the results in).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{DbError, DbResult};
use crate::exec::kernels::{self, BinaryOp};
use crate::exec::vector::{Batch, Bitmap, Column, ColumnData, ColumnRef};
use crate::exec::{EvalContext, Operand};
use crate::sql::plan::Expr;
use crate::types::{DataType, Datum};

/// The value of an expression over a batch.
#[derive(Debug, Clone)]
pub enum Value {
    Column(ColumnRef),
    Scalar(Datum, DataType),
}

impl Value {
    pub fn operand(&self) -> Operand<'_> {
        match self {
            Value::Column(c) => Operand::Column(c),
            Value::Scalar(d, t) => Operand::Scalar(d, *t),
        }
    }
    /// The value as a column of `len` rows.
    pub fn into_column(self, len: usize) -> ColumnRef {
        match self {
            Value::Column(c) => c,
            Value::Scalar(d, t) => Arc::new(Column::from_datum(t, &d, len)),
        }
    }
    pub fn datum(&self, row: usize) -> Datum {
        match self {
            Value::Column(c) => c.datum(row),
            Value::Scalar(d, _) => d.clone(),
        }
    }
}

/// Everything an expression may read besides its input batch.
pub struct EvalInputs<'a> {
    pub eval: &'a EvalContext,
    pub params: &'a [Datum],
    /// Rows of enclosing queries, outermost first.
    pub outer: &'a [Vec<Datum>],
    /// Results of the subqueries in the expression, by subquery id.
    pub subqueries: &'a HashMap<usize, Value>,
}

/// Evaluates `expr` over `batch`.
pub fn eval(expr: &Expr, batch: &Batch, cx: &EvalInputs) -> DbResult<Value> {
    let len = batch.len;
    match expr {
        Expr::Column(i, _) => batch
            .columns
            .get(*i)
            .cloned()
            .map(Value::Column)
            .ok_or_else(|| DbError::internal(format!("column {i} out of range"))),
        Expr::Literal(d, t) => Ok(Value::Scalar(d.clone(), *t)),
        Expr::Param(i, t) => {
            let d = cx.params.get(*i).cloned().unwrap_or(Datum::Null);
            Ok(Value::Scalar(d, *t))
        }
        Expr::Outer {
            level,
            index,
            data_type,
        } => {
            let row = cx
                .outer
                .len()
                .checked_sub(*level)
                .and_then(|l| cx.outer.get(l))
                .ok_or_else(|| DbError::internal("outer reference without an outer row"))?;
            Ok(Value::Scalar(
                row.get(*index).cloned().unwrap_or(Datum::Null),
                *data_type,
            ))
        }
        Expr::Binary { sig, left, right } => {
            // `x OR true`, `x AND false`: decided without x, as PostgreSQL's
            // planner folds them (an error x would raise does not happen).
            if let (BinaryOp::And | BinaryOp::Or, Expr::Literal(Datum::Bool(b), _)) = (sig.op, right.as_ref()) {
                if *b == (sig.op == BinaryOp::Or) {
                    return Ok(Value::Scalar(Datum::Bool(*b), DataType::Bool));
                }
            }
            let (l, r) = match sig.op {
                BinaryOp::And | BinaryOp::Or => {
                    let decisive = sig.op == BinaryOp::Or;
                    match eval(left, batch, cx) {
                        Ok(l) => {
                            let r = eval_beside(&l, decisive, right, batch, cx)?;
                            (l, r)
                        }
                        // The left side failed: PostgreSQL orders a WHERE
                        // clause's conditions by cost, so the right one may
                        // come first there. Its rows then decide which rows
                        // the left side must run on; an error stands only if
                        // a row needs it either way.
                        Err(e) if !left.has_side_effects() && !right.has_side_effects() => {
                            let Ok(r) = eval(right, batch, cx) else { return Err(e) };
                            let l = eval_beside(&r, decisive, left, batch, cx)?;
                            (l, r)
                        }
                        Err(e) => return Err(e),
                    }
                }
                _ => (eval(left, batch, cx)?, eval(right, batch, cx)?),
            };
            scalar_or_column(&l, &r, len, |n| {
                kernels::eval_binary(sig, l.operand(), r.operand(), n, cx.eval)
            })
        }
        Expr::Unary {
            op, arg_type, arg, ..
        } => {
            let a = eval(arg, batch, cx)?;
            scalar_or_column(&a, &a, len, |n| {
                kernels::eval_unary(*op, *arg_type, a.operand(), n)
            })
        }
        Expr::Func { sig, args } if matches!(sig.func, kernels::ScalarFunction::Coalesce) => {
            eval_coalesce(sig, args, batch, cx)
        }
        Expr::Func { sig, args } => {
            let vals = args
                .iter()
                .map(|a| eval(a, batch, cx))
                .collect::<DbResult<Vec<_>>>()?;
            apply_function(sig, &vals, len, cx)
        }
        Expr::Cast { expr, to } => {
            let v = eval(expr, batch, cx)?;
            match v {
                Value::Scalar(d, from) => Ok(Value::Scalar(
                    kernels::cast_datum(&d, from, *to, cx.eval)?,
                    *to,
                )),
                Value::Column(c) => Ok(Value::Column(Arc::new(kernels::cast_column(
                    &c, *to, cx.eval,
                )?))),
            }
        }
        Expr::IsNull { expr, negated } => {
            let v = eval(expr, batch, cx)?;
            Ok(match v {
                Value::Scalar(d, _) => {
                    Value::Scalar(Datum::Bool(d.is_null() != *negated), DataType::Bool)
                }
                Value::Column(c) => {
                    let bits: Vec<bool> = (0..c.len()).map(|i| c.is_valid(i) == *negated).collect();
                    Value::Column(Arc::new(Column::new(
                        DataType::Bool,
                        ColumnData::Bool(bits),
                        None,
                    )))
                }
            })
        }
        Expr::IsBool {
            expr,
            value,
            negated,
        } => {
            let v = eval(expr, batch, cx)?;
            let test = |d: Datum| Datum::Bool((d == Datum::Bool(*value)) != *negated);
            Ok(match v {
                Value::Scalar(d, _) => Value::Scalar(test(d), DataType::Bool),
                Value::Column(c) => {
                    let bits: Vec<bool> = match &c.data {
                        ColumnData::Bool(b) => (0..c.len())
                            .map(|i| (c.is_valid(i) && b[i] == *value) != *negated)
                            .collect(),
                        _ => return Err(DbError::internal("IS TRUE on a non-boolean column")),
                    };
                    Value::Column(Arc::new(Column::new(
                        DataType::Bool,
                        ColumnData::Bool(bits),
                        None,
                    )))
                }
            })
        }
        Expr::IsDistinct {
            left,
            right,
            eq,
            negated,
        } => {
            let l = eval(left, batch, cx)?;
            let r = eval(right, batch, cx)?;
            let n = if matches!((&l, &r), (Value::Scalar(..), Value::Scalar(..))) {
                1
            } else {
                len
            };
            let eqc = kernels::eval_binary(eq, l.operand(), r.operand(), n, cx.eval)?;
            let mut bits = Vec::with_capacity(n);
            for i in 0..n {
                let (ln, rn) = (l.datum(i).is_null(), r.datum(i).is_null());
                let same = if ln || rn {
                    ln && rn
                } else {
                    eqc.datum(i) == Datum::Bool(true)
                };
                bits.push(same == *negated);
            }
            let col = Column::new(DataType::Bool, ColumnData::Bool(bits), None);
            Ok(if n == 1 && len != 1 {
                Value::Scalar(col.datum(0), DataType::Bool)
            } else {
                Value::Column(Arc::new(col))
            })
        }
        Expr::Case {
            whens,
            otherwise,
            data_type,
        } => eval_case(whens, otherwise, *data_type, batch, cx),
        Expr::InList {
            expr,
            list,
            eq,
            negated,
        } => {
            let x = eval(expr, batch, cx)?;
            let or_sig = kernels::resolve_binary(BinaryOp::Or, DataType::Bool, DataType::Bool)?;
            let mut acc: Option<Value> = None;
            for item in list {
                // `x IN (a, b)` is `x = a OR x = b`: an item is compared only
                // on the rows no earlier item matched (see `eval_beside`).
                let pair = || Expr::Binary {
                    sig: *eq,
                    left: expr.clone(),
                    right: Box::new(item.clone()),
                };
                let hit = match &acc {
                    Some(prev) if item.has_side_effects() => eval_beside(prev, true, &pair(), batch, cx)?,
                    _ => match eval(item, batch, cx).and_then(|v| {
                        scalar_or_column(&x, &v, len, |n| kernels::eval_binary(eq, x.operand(), v.operand(), n, cx.eval))
                    }) {
                        Ok(hit) => hit,
                        Err(e) => match &acc {
                            Some(prev) => eval_beside(prev, true, &pair(), batch, cx)?,
                            None => return Err(e),
                        },
                    },
                };
                acc = Some(match acc {
                    None => hit,
                    Some(prev) => scalar_or_column(&prev, &hit, len, |n| {
                        kernels::eval_binary(&or_sig, prev.operand(), hit.operand(), n, cx.eval)
                    })?,
                });
            }
            let acc = acc.unwrap_or(Value::Scalar(Datum::Bool(false), DataType::Bool));
            if *negated {
                scalar_or_column(&acc, &acc, len, |n| {
                    kernels::eval_unary(kernels::UnaryOp::Not, DataType::Bool, acc.operand(), n)
                })
            } else {
                Ok(acc)
            }
        }
        Expr::Subquery(s) => cx
            .subqueries
            .get(&s.id)
            .cloned()
            .ok_or_else(|| DbError::internal("subquery result missing")),
        Expr::NumericTypmod {
            expr,
            precision,
            scale,
        } => {
            let v = eval(expr, batch, cx)?;
            match v {
                Value::Scalar(d, t) => Ok(Value::Scalar(
                    apply_numeric_typmod(&d, *precision, *scale)?,
                    t,
                )),
                Value::Column(c) => {
                    let ColumnData::Numeric(vals) = &c.data else {
                        return Err(DbError::internal("numeric typmod on a non-numeric column"));
                    };
                    let mut out = Vec::with_capacity(vals.len());
                    for (i, v) in vals.iter().enumerate() {
                        out.push(if c.is_valid(i) {
                            round_numeric(*v, *precision, *scale)?
                        } else {
                            *v
                        });
                    }
                    Ok(Value::Column(Arc::new(Column::new(
                        DataType::Numeric,
                        ColumnData::Numeric(out),
                        c.validity.clone(),
                    ))))
                }
            }
        }
        Expr::SignalBackend { pid, signal } => {
            let pids = eval(pid, batch, cx)?;
            let pids = pids.operand().to_column(len);
            let mut out = Column::with_capacity(DataType::Bool, len);
            for i in 0..len {
                out.push_datum(&match pids.datum(i) {
                    Datum::Null => Datum::Null,
                    d => {
                        let pid = d.as_i64().unwrap_or(0) as i32;
                        let sent = signal.server.signal_backend_as(&signal.caller, pid, signal.reason)?;
                        Datum::Bool(sent)
                    }
                });
            }
            Ok(Value::Column(Arc::new(out)))
        }
        Expr::SetVal { sequence, args } => {
            let values = eval(&args[0], batch, cx)?;
            let values = values.operand().to_column(len);
            let called = args.get(1).map(|c| eval(c, batch, cx)).transpose()?;
            let called = called.as_ref().map(|c| c.operand().to_column(len));
            let mut out = Column::with_capacity(DataType::Int64, len);
            for i in 0..len {
                let v = values.datum(i);
                let is_called = called.as_ref().map_or(Datum::Bool(true), |c| c.datum(i));
                let (Some(v), Datum::Bool(is_called)) = (v.as_i64(), is_called) else {
                    // setval is strict: a NULL argument sets nothing.
                    out.push_datum(&Datum::Null);
                    continue;
                };
                let saved = sequence.sequence.set_value(v, is_called)?;
                sequence.save(saved)?;
                if let (Some(session), true) = (&sequence.session, is_called) {
                    session.0.set(&sequence.sequence, v);
                }
                out.push_datum(&Datum::Int64(v));
            }
            Ok(Value::Column(Arc::new(out)))
        }
        Expr::NextVal(seq) => {
            let mut values = Vec::with_capacity(len);
            // The batch's values reach no one before the catalog covers them.
            let mut save = None;
            for _ in 0..len {
                let (v, need) = seq.sequence.next_value()?;
                values.push(v);
                save = need.or(save);
            }
            if let Some(need) = save {
                seq.save(need)?;
            }
            if let (Some(session), Some(&last)) = (&seq.session, values.last()) {
                session.0.handed_out(&seq.sequence, last);
            }
            Ok(Value::Column(Arc::new(Column::new(DataType::Int64, ColumnData::Int64(values), None))))
        }
        // Read once per batch: beside a nextval of the same sequence in one
        // statement, every row of a batch sees the batch's last value
        // (PostgreSQL, a row at a time, sees each row's).
        Expr::CurrVal(seq) => {
            let session = seq.session.as_ref().ok_or_else(|| DbError::internal("currval() outside a session"))?;
            Ok(Value::Scalar(Datum::Int64(session.0.current(&seq.sequence)?), DataType::Int64))
        }
        Expr::LastVal(session) => Ok(Value::Scalar(Datum::Int64(session.0.last()?), DataType::Int64)),
    }
}

/// A function over its evaluated arguments: once when every argument is a
/// scalar (the result stays scalar), else over the batch.
fn apply_function(sig: &kernels::FunctionSignature, vals: &[Value], len: usize, cx: &EvalInputs) -> DbResult<Value> {
    let ops: Vec<Operand> = vals.iter().map(|v| v.operand()).collect();
    let all_scalar = vals.iter().all(|v| matches!(v, Value::Scalar(..))) && !sig_is_volatile(sig);
    let col = kernels::eval_function(sig, &ops, if all_scalar { 1 } else { len }, cx.eval)?;
    Ok(if all_scalar {
        Value::Scalar(col.datum(0), sig.result)
    } else {
        Value::Column(Arc::new(col))
    })
}

/// Functions whose value differs per row even with constant arguments.
pub(crate) fn sig_is_volatile(sig: &kernels::FunctionSignature) -> bool {
    matches!(sig.func, kernels::ScalarFunction::Random)
}

/// Runs a kernel over one row when every input is a scalar (and keeps the
/// result scalar), otherwise over the whole batch.
fn scalar_or_column(
    a: &Value,
    b: &Value,
    len: usize,
    kernel: impl FnOnce(usize) -> DbResult<Column>,
) -> DbResult<Value> {
    if matches!((a, b), (Value::Scalar(..), Value::Scalar(..))) {
        let col = kernel(1)?;
        Ok(Value::Scalar(col.datum(0), col.data_type))
    } else {
        Ok(Value::Column(Arc::new(kernel(len)?)))
    }
}

/// The right side of AND (`decisive` false) or OR (true) beside its
/// evaluated left side `left`. A row the left side decides never raises the
/// right side's error, as in PostgreSQL, where `x <> 0 AND 1 / x > 1` is
/// safe: the right side runs over the whole batch first (the vectorized
/// path, almost always right); only if that fails, or if it has side
/// effects, does it run on just the rows the left side leaves open. Rows the
/// left side decides get `decisive`, which does not change the result.
fn eval_beside(left: &Value, decisive: bool, right: &Expr, batch: &Batch, cx: &EvalInputs) -> DbResult<Value> {
    let decided = |d: &Datum| *d == Datum::Bool(decisive);
    let whole_batch_error = if right.has_side_effects() {
        None
    } else {
        match eval(right, batch, cx) {
            Ok(v) => return Ok(v),
            Err(e) => Some(e),
        }
    };
    let open: Vec<u32> = match left {
        Value::Scalar(d, _) if decided(d) => Vec::new(),
        Value::Scalar(..) => (0..batch.len as u32).collect(),
        Value::Column(c) => (0..batch.len as u32).filter(|&i| !decided(&c.datum(i as usize))).collect(),
    };
    if open.len() == batch.len {
        return match whole_batch_error {
            Some(e) => Err(e),
            None => eval(right, batch, cx),
        };
    }
    let mut out = vec![Datum::Bool(decisive); batch.len];
    if !open.is_empty() {
        let v = eval_on_rows(right, batch, &open, cx)?;
        for (j, &row) in open.iter().enumerate() {
            out[row as usize] = v.datum(j);
        }
    }
    Ok(Value::Column(Arc::new(Column::from_datums(DataType::Bool, &out))))
}

/// COALESCE evaluates an argument only for the rows still NULL after the
/// ones before it (PostgreSQL's rule: `coalesce(x, 1 / 0)` is fine while x
/// has values). As with AND, every argument first runs over the whole batch
/// and the kernel picks; the row-by-row walk happens only when that fails
/// or an argument has side effects.
fn eval_coalesce(sig: &kernels::FunctionSignature, args: &[Expr], batch: &Batch, cx: &EvalInputs) -> DbResult<Value> {
    let Some((first, rest)) = args.split_first() else {
        return Err(DbError::internal("coalesce without arguments"));
    };
    let first = eval(first, batch, cx)?;
    // No NULL in the first argument: the others are not needed at all.
    match &first {
        Value::Scalar(d, _) if !d.is_null() => return Ok(Value::Scalar(d.clone(), sig.result)),
        Value::Column(c) if c.validity.is_none() && c.data_type == sig.result => return Ok(first),
        _ => {}
    }
    if !rest.iter().any(Expr::has_side_effects) {
        let whole_batch = rest.iter().map(|a| eval(a, batch, cx)).collect::<DbResult<Vec<_>>>();
        if let Ok(mut vals) = whole_batch {
            vals.insert(0, first);
            return apply_function(sig, &vals, batch.len, cx);
        }
    }
    let mut out: Vec<Datum> = (0..batch.len).map(|i| first.datum(i)).collect();
    let mut open: Vec<u32> = (0..batch.len as u32).filter(|&i| out[i as usize].is_null()).collect();
    for a in rest {
        if open.is_empty() {
            break;
        }
        let v = eval_on_rows(a, batch, &open, cx)?;
        let mut still = Vec::new();
        for (j, &row) in open.iter().enumerate() {
            match v.datum(j) {
                Datum::Null => still.push(row),
                d => out[row as usize] = d,
            }
        }
        open = still;
    }
    Ok(Value::Column(Arc::new(Column::from_datums(sig.result, &out))))
}

/// CASE evaluates each branch only on the rows that reach it, so
/// `CASE WHEN x = 0 THEN 0 ELSE 1 / x END` never divides by zero.
fn eval_case(
    whens: &[(Expr, Expr)],
    otherwise: &Expr,
    data_type: DataType,
    batch: &Batch,
    cx: &EvalInputs,
) -> DbResult<Value> {
    let mut out: Vec<Datum> = vec![Datum::Null; batch.len];
    let mut remaining: Vec<u32> = (0..batch.len as u32).collect();
    for (cond, then) in whens {
        if remaining.is_empty() {
            break;
        }
        let c = eval_on_rows(cond, batch, &remaining, cx)?.into_column(remaining.len());
        let mut hit = Vec::new();
        let mut miss = Vec::new();
        for (j, &row) in remaining.iter().enumerate() {
            if c.datum(j) == Datum::Bool(true) {
                hit.push(row);
            } else {
                miss.push(row);
            }
        }
        if !hit.is_empty() {
            let v = eval_on_rows(then, batch, &hit, cx)?;
            for (j, &row) in hit.iter().enumerate() {
                out[row as usize] = v.datum(j);
            }
        }
        remaining = miss;
    }
    if !remaining.is_empty() {
        let v = eval_on_rows(otherwise, batch, &remaining, cx)?;
        for (j, &row) in remaining.iter().enumerate() {
            out[row as usize] = v.datum(j);
        }
    }
    Ok(Value::Column(Arc::new(Column::from_datums(
        data_type, &out,
    ))))
}

/// `expr` over some rows of `batch` (a CASE branch's). The subqueries'
/// per-row results were computed for the whole batch: they are taken by the
/// same rows, so that row j of the result is row `rows[j]`'s.
fn eval_on_rows(expr: &Expr, batch: &Batch, rows: &[u32], cx: &EvalInputs) -> DbResult<Value> {
    let sub = batch.take(rows);
    if !cx.subqueries.values().any(|v| matches!(v, Value::Column(_))) {
        return eval(expr, &sub, cx);
    }
    let subqueries: HashMap<usize, Value> = cx
        .subqueries
        .iter()
        .map(|(id, v)| {
            let v = match v {
                Value::Column(c) => Value::Column(Arc::new(c.take(rows))),
                scalar => scalar.clone(),
            };
            (*id, v)
        })
        .collect();
    let sub_cx = EvalInputs {
        eval: cx.eval,
        params: cx.params,
        outer: cx.outer,
        subqueries: &subqueries,
    };
    eval(expr, &sub, &sub_cx)
}

/// The rows of `batch` for which `predicate` is true (not false, not NULL).
pub fn filter_batch(predicate: &Expr, batch: &Batch, cx: &EvalInputs) -> DbResult<Batch> {
    let v = eval(predicate, batch, cx)?;
    match v {
        Value::Scalar(Datum::Bool(true), _) => Ok(batch.clone()),
        Value::Scalar(..) => Ok(batch.take(&[])),
        Value::Column(c) => {
            let sel = selection(&c)?;
            if sel.len() == batch.len {
                Ok(batch.clone())
            } else {
                Ok(batch.take(&sel))
            }
        }
    }
}

/// Indices of rows where a boolean column is true and valid.
pub fn selection(c: &Column) -> DbResult<Vec<u32>> {
    let ColumnData::Bool(bits) = &c.data else {
        return Err(DbError::internal("filter on a non-boolean column"));
    };
    let mut sel = Vec::with_capacity(bits.len());
    match &c.validity {
        None => {
            for (i, &b) in bits.iter().enumerate() {
                if b {
                    sel.push(i as u32);
                }
            }
        }
        Some(v) => {
            for (i, &b) in bits.iter().enumerate() {
                if b && v.get(i) {
                    sel.push(i as u32);
                }
            }
        }
    }
    Ok(sel)
}

/// A boolean mask as a bitmap (used by aggregate FILTER clauses).
pub fn true_mask(c: &Column) -> DbResult<Bitmap> {
    let sel = selection(c)?;
    let mut b = Bitmap::new_unset(c.len());
    for i in sel {
        b.set(i as usize);
    }
    Ok(b)
}

fn apply_numeric_typmod(d: &Datum, precision: u32, scale: u32) -> DbResult<Datum> {
    match d {
        Datum::Numeric(v) => Ok(Datum::Numeric(round_numeric(*v, precision, scale)?)),
        other => Ok(other.clone()),
    }
}

/// numeric(p, s): round half away from zero to `s` digits, then require
/// fewer than `p - s` integer digits (22003 otherwise), as PostgreSQL does.
pub fn round_numeric(
    v: crate::types::Numeric,
    precision: u32,
    scale: u32,
) -> DbResult<crate::types::Numeric> {
    let v = match v {
        crate::types::Numeric::Finite(d) => d,
        crate::types::Numeric::NaN => return Ok(v),
        _ => {
            return Err(DbError::new(crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow")
                .with_detail(format!("A field with precision {precision}, scale {scale} cannot hold an infinite value.")))
        }
    };
    let mut r = v.round_dp_with_strategy(
        scale.min(28),
        rust_decimal::RoundingStrategy::MidpointAwayFromZero,
    );
    let int_digits = r.trunc().abs().to_string().trim_start_matches('0').len() as u32;
    if int_digits > precision - scale {
        return Err(DbError::new(crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(format!(
            "A field with precision {precision}, scale {scale} must round to an absolute value less than {}.",
            if precision == scale { "1".to_string() } else { format!("10^{}", precision - scale) }
        )));
    }
    r.rescale(scale.min(28));
    Ok(crate::types::Numeric::Finite(r))
}
