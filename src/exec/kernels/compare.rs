//! Comparison kernels (=, <>, <, <=, >, >=) for every type, both sides of
//! one type (the resolver widens cross-type operators first): integers,
//! date/timestamps, PostgreSQL float order (NaN equals NaN and sorts above
//! everything, -0 = +0), numeric by value (NaN above Infinity, equal to itself), intervals by 30-day-month totals,
//! bytes in C-collation byte order, bpchar ignoring trailing blanks, arrays
//! element by element as PostgreSQL orders them.
//! Must not: cast or resolve types, or compare NULL slots meaningfully (the
//! result's validity comes from the inputs').

use crate::error::{DbError, DbResult};
use crate::exec::vector::Column;
use crate::exec::Operand;
use crate::types::array::{compare_held, equal_held, ArrayElem};
use crate::types::{DataType, Interval, Numeric};

use super::common::{bytes, map2, prim, prim_column, Arg, BArg, Nulls, Prim};
use super::BinaryOp;

/// Order with PostgreSQL semantics for one value type.
pub(crate) trait PgOrd: Prim {
    fn eq_(a: Self, b: Self) -> bool;
    fn lt_(a: Self, b: Self) -> bool;
    fn le_(a: Self, b: Self) -> bool;
}

macro_rules! natural_ord {
    ($($t:ty),*) => {$(
        impl PgOrd for $t {
            #[inline(always)] fn eq_(a: Self, b: Self) -> bool { a == b }
            #[inline(always)] fn lt_(a: Self, b: Self) -> bool { a < b }
            #[inline(always)] fn le_(a: Self, b: Self) -> bool { a <= b }
        }
    )*};
}
natural_ord!(bool, i16, i32, i64, Numeric);

macro_rules! float_ord {
    ($($t:ty),*) => {$(
        impl PgOrd for $t {
            #[inline(always)]
            fn eq_(a: Self, b: Self) -> bool { a == b || (a.is_nan() && b.is_nan()) }
            #[inline(always)]
            fn lt_(a: Self, b: Self) -> bool { !a.is_nan() && (b.is_nan() || a < b) }
            #[inline(always)]
            fn le_(a: Self, b: Self) -> bool { b.is_nan() || a <= b }
        }
    )*};
}
float_ord!(f32, f64);

impl PgOrd for Interval {
    #[inline(always)]
    fn eq_(a: Self, b: Self) -> bool {
        a.total_micros() == b.total_micros()
    }
    #[inline(always)]
    fn lt_(a: Self, b: Self) -> bool {
        a.total_micros() < b.total_micros()
    }
    #[inline(always)]
    fn le_(a: Self, b: Self) -> bool {
        a.total_micros() <= b.total_micros()
    }
}

/// One comparison over fixed-width operands; one tight loop per operator.
pub(crate) fn cmp_prim<T: PgOrd>(op: BinaryOp, a: Arg<T>, b: Arg<T>, len: usize) -> Vec<bool> {
    match op {
        BinaryOp::Eq => map2(a, b, len, T::eq_),
        BinaryOp::NotEq => map2(a, b, len, |x, y| !T::eq_(x, y)),
        BinaryOp::Lt => map2(a, b, len, T::lt_),
        BinaryOp::LtEq => map2(a, b, len, T::le_),
        BinaryOp::Gt => map2(a, b, len, |x, y| T::lt_(y, x)),
        _ => map2(a, b, len, |x, y| T::le_(y, x)),
    }
}

/// `s` without trailing blanks (bpchar comparison semantics).
#[inline]
pub(crate) fn rtrim_blanks(s: &[u8]) -> &[u8] {
    let mut n = s.len();
    while n > 0 && s[n - 1] == b' ' {
        n -= 1;
    }
    &s[..n]
}

#[inline(always)]
fn bytes_loop(a: BArg, b: BArg, len: usize, f: impl Fn(&[u8], &[u8]) -> bool) -> Vec<bool> {
    match (a, b) {
        (BArg::Col(x), BArg::Const(q)) => (0..len).map(|i| f(x.get(i), q)).collect(),
        (BArg::Const(p), BArg::Col(y)) => (0..len).map(|i| f(p, y.get(i))).collect(),
        (BArg::Const(p), BArg::Const(q)) => vec![f(p, q); len],
        (a, b) => (0..len).map(|i| f(a.get(i), b.get(i))).collect(),
    }
}

fn cmp_bytes_with(
    op: BinaryOp,
    a: BArg,
    b: BArg,
    len: usize,
    norm: fn(&[u8]) -> &[u8],
) -> Vec<bool> {
    match op {
        BinaryOp::Eq => bytes_loop(a, b, len, |x, y| norm(x) == norm(y)),
        BinaryOp::NotEq => bytes_loop(a, b, len, |x, y| norm(x) != norm(y)),
        BinaryOp::Lt => bytes_loop(a, b, len, |x, y| norm(x) < norm(y)),
        BinaryOp::LtEq => bytes_loop(a, b, len, |x, y| norm(x) <= norm(y)),
        BinaryOp::Gt => bytes_loop(a, b, len, |x, y| norm(x) > norm(y)),
        _ => bytes_loop(a, b, len, |x, y| norm(x) >= norm(y)),
    }
}

/// Arrays in PostgreSQL's order, element by element (`types::array::compare_held`).
fn cmp_arrays(op: BinaryOp, a: BArg, b: BArg, len: usize, elem: ArrayElem) -> Vec<bool> {
    match op {
        BinaryOp::Eq => bytes_loop(a, b, len, |x, y| equal_held(x, y, elem)),
        BinaryOp::NotEq => bytes_loop(a, b, len, |x, y| !equal_held(x, y, elem)),
        BinaryOp::Lt => bytes_loop(a, b, len, |x, y| compare_held(x, y, elem).is_lt()),
        BinaryOp::LtEq => bytes_loop(a, b, len, |x, y| compare_held(x, y, elem).is_le()),
        BinaryOp::Gt => bytes_loop(a, b, len, |x, y| compare_held(x, y, elem).is_gt()),
        _ => bytes_loop(a, b, len, |x, y| compare_held(x, y, elem).is_ge()),
    }
}

fn ident(s: &[u8]) -> &[u8] {
    s
}

/// Compares two operands of type `ty` (both sides already of that type).
pub(crate) fn compare(
    op: BinaryOp,
    ty: DataType,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    use DataType::*;
    fn go<T: PgOrd>(op: BinaryOp, a: Operand, b: Operand, len: usize) -> DbResult<Vec<bool>> {
        Ok(cmp_prim::<T>(op, prim(a, len)?, prim(b, len)?, len))
    }
    let out = match ty {
        Bool => go::<bool>(op, a, b, len)?,
        Int16 => go::<i16>(op, a, b, len)?,
        Int32 | Date => go::<i32>(op, a, b, len)?,
        Int64 | Timestamp | TimestampTz | Oid => go::<i64>(op, a, b, len)?,
        Float32 => go::<f32>(op, a, b, len)?,
        Float64 => go::<f64>(op, a, b, len)?,
        Numeric => go::<crate::types::Numeric>(op, a, b, len)?,
        Interval => go::<crate::types::Interval>(op, a, b, len)?,
        Bpchar(_) => cmp_bytes_with(op, bytes(a, len)?, bytes(b, len)?, len, rtrim_blanks),
        Array(e) => cmp_arrays(op, bytes(a, len)?, bytes(b, len)?, len, e),
        Text | Varchar(_) | Name | Char | Bytea | Jsonb | Record | Unknown => {
            cmp_bytes_with(op, bytes(a, len)?, bytes(b, len)?, len, ident)
        }
    };
    if out.len() != len {
        return Err(DbError::internal("comparison length mismatch"));
    }
    Ok(prim_column(DataType::Bool, out, nulls))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_binary_against_reference, rand_column};
    use super::*;
    use crate::exec::EvalContext;
    use crate::types::Datum;
    use std::cmp::Ordering;

    fn reference(op: BinaryOp, ord: Ordering) -> bool {
        match op {
            BinaryOp::Eq => ord == Ordering::Equal,
            BinaryOp::NotEq => ord != Ordering::Equal,
            BinaryOp::Lt => ord == Ordering::Less,
            BinaryOp::LtEq => ord != Ordering::Greater,
            BinaryOp::Gt => ord == Ordering::Greater,
            _ => ord != Ordering::Less,
        }
    }

    #[test]
    fn every_type_matches_row_reference() {
        let ops = [
            BinaryOp::Eq,
            BinaryOp::NotEq,
            BinaryOp::Lt,
            BinaryOp::LtEq,
            BinaryOp::Gt,
            BinaryOp::GtEq,
        ];
        let types = [
            DataType::Bool,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::Float32,
            DataType::Float64,
            DataType::Numeric,
            DataType::Text,
            DataType::Bytea,
            DataType::Date,
            DataType::TimestampTz,
            DataType::Interval,
        ];
        for (seed, ty) in types.iter().enumerate() {
            for op in ops {
                check_binary_against_reference(op, *ty, *ty, seed as u64 * 31 + 7, |a, b| {
                    Some(Datum::Bool(reference(op, a.total_cmp(b))))
                });
            }
        }
    }

    #[test]
    fn float_nan_and_zero() {
        let a = Column::from_datums(
            DataType::Float64,
            &[
                Datum::Float64(f64::NAN),
                Datum::Float64(-0.0),
                Datum::Float64(1.0),
                Datum::Float64(f64::NAN),
            ],
        );
        let b = Column::from_datums(
            DataType::Float64,
            &[
                Datum::Float64(f64::NAN),
                Datum::Float64(0.0),
                Datum::Float64(f64::NAN),
                Datum::Float64(f64::INFINITY),
            ],
        );
        let sig = super::super::resolve_binary(BinaryOp::Eq, DataType::Float64, DataType::Float64)
            .unwrap();
        let ctx = EvalContext::default();
        let eq = super::super::eval_binary(&sig, Operand::Column(&a), Operand::Column(&b), 4, &ctx)
            .unwrap();
        assert_eq!(
            (0..4).map(|i| eq.datum(i)).collect::<Vec<_>>(),
            vec![
                Datum::Bool(true),
                Datum::Bool(true),
                Datum::Bool(false),
                Datum::Bool(false)
            ]
        );
        let sig = super::super::resolve_binary(BinaryOp::Gt, DataType::Float64, DataType::Float64)
            .unwrap();
        let gt = super::super::eval_binary(&sig, Operand::Column(&a), Operand::Column(&b), 4, &ctx)
            .unwrap();
        assert_eq!(gt.datum(3), Datum::Bool(true));
        assert_eq!(gt.datum(2), Datum::Bool(false));
    }

    #[test]
    fn bpchar_ignores_trailing_blanks_and_text_is_bytewise() {
        let a = Column::from_datums(
            DataType::Bpchar(Some(4)),
            &[Datum::text("ab  "), Datum::text("B   ")],
        );
        let b = Datum::text("ab");
        let out = compare(
            BinaryOp::Eq,
            DataType::Bpchar(None),
            Operand::Column(&a),
            Operand::Scalar(&b, DataType::Bpchar(None)),
            2,
            Nulls::AllValid,
        )
        .unwrap();
        assert_eq!(out.datum(0), Datum::Bool(true));
        // C collation: 'B' < 'a'.
        let t = Column::from_datums(DataType::Text, &[Datum::text("B"), Datum::text("a")]);
        let s = Datum::text("a");
        let lt = compare(
            BinaryOp::Lt,
            DataType::Text,
            Operand::Column(&t),
            Operand::Scalar(&s, DataType::Text),
            2,
            Nulls::AllValid,
        )
        .unwrap();
        assert_eq!(lt.datum(0), Datum::Bool(true));
        assert_eq!(lt.datum(1), Datum::Bool(false));
        let _ = rand_column;
    }

    #[test]
    fn date_vs_timestamp_widens() {
        let ctx = EvalContext::default();
        let sig = super::super::resolve_binary(BinaryOp::Lt, DataType::Date, DataType::Timestamp)
            .unwrap();
        let d = Datum::Int32(1);
        let ts = Datum::Int64(86_400_000_000_000 + 1);
        let r = super::super::eval_binary(
            &sig,
            Operand::Scalar(&d, DataType::Date),
            Operand::Scalar(&ts, DataType::Timestamp),
            1,
            &ctx,
        )
        .unwrap();
        assert_eq!(r.datum(0), Datum::Bool(true));
    }
}
