//! Arithmetic kernels: + - * / % on smallint/integer/bigint (wrapping op
//! over the whole vector plus an OR-ed overflow flag, errors reported only
//! for non-NULL rows), real/double precision (PostgreSQL's overflow,
//! underflow and division-by-zero checks), numeric (rust_decimal with
//! PostgreSQL's division result scale, and its rules for NaN and ±Infinity),
//! and unary minus. Date, timestamp
//! and interval arithmetic is delegated to `datetime`.
//! Must not: resolve types (the signature says what both sides are), or
//! report an error for a NULL row.

use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::{DbError, DbResult};
use crate::exec::vector::Column;
use crate::exec::{EvalContext, Operand};
use crate::types::{DataType, Numeric};

use super::common::{
    float_overflow, float_underflow, int_out_of_range, map1, map1_checked, map1_try, map2,
    map2_checked, map2_try, numeric_overflow, prim, prim_column, Arg, Nulls, Prim,
};
use super::{BinaryOp, BinarySignature};

/// Integer operations the kernels need, per width.
pub(crate) trait IntOps: Prim + PartialEq {
    const ZERO: Self;
    const MINUS_ONE: Self;
    fn ovf_add(self, b: Self) -> (Self, bool);
    fn ovf_sub(self, b: Self) -> (Self, bool);
    fn ovf_mul(self, b: Self) -> (Self, bool);
    fn ovf_div(self, b: Self) -> (Self, bool);
    fn ovf_neg(self) -> (Self, bool);
    fn wrap_rem(self, b: Self) -> Self;
}

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl IntOps for $t {
            const ZERO: Self = 0;
            const MINUS_ONE: Self = -1;
            #[inline(always)] fn ovf_add(self, b: Self) -> (Self, bool) { self.overflowing_add(b) }
            #[inline(always)] fn ovf_sub(self, b: Self) -> (Self, bool) { self.overflowing_sub(b) }
            #[inline(always)] fn ovf_mul(self, b: Self) -> (Self, bool) { self.overflowing_mul(b) }
            #[inline(always)] fn ovf_div(self, b: Self) -> (Self, bool) { self.overflowing_div(b) }
            #[inline(always)] fn ovf_neg(self) -> (Self, bool) { self.overflowing_neg() }
            #[inline(always)] fn wrap_rem(self, b: Self) -> Self { self.wrapping_rem(b) }
        }
    )*};
}
int_ops!(i16, i32, i64);

fn int_arith<T: IntOps>(
    op: BinaryOp,
    ty: DataType,
    a: Arg<T>,
    b: Arg<T>,
    len: usize,
    nulls: &Nulls,
) -> DbResult<Vec<T>> {
    let range = |_: T, _: T| int_out_of_range(ty);
    match op {
        BinaryOp::Plus => map2_checked(a, b, len, nulls, T::ovf_add, range),
        BinaryOp::Minus => map2_checked(a, b, len, nulls, T::ovf_sub, range),
        BinaryOp::Multiply => map2_checked(a, b, len, nulls, T::ovf_mul, range),
        BinaryOp::Divide => {
            if let Arg::Const(d) = b {
                if d != T::ZERO && d != T::MINUS_ONE {
                    return Ok(map2(a, b, len, |x, y| x.ovf_div(y).0));
                }
            }
            map2_checked(
                a,
                b,
                len,
                nulls,
                |x, y| {
                    if y == T::ZERO {
                        (T::ZERO, true)
                    } else {
                        x.ovf_div(y)
                    }
                },
                |_, y| {
                    if y == T::ZERO {
                        DbError::division_by_zero()
                    } else {
                        int_out_of_range(ty)
                    }
                },
            )
        }
        BinaryOp::Modulo => map2_checked(
            a,
            b,
            len,
            nulls,
            |x, y| {
                if y == T::ZERO {
                    (T::ZERO, true)
                } else {
                    (x.wrap_rem(y), false)
                }
            },
            |_, _| DbError::division_by_zero(),
        ),
        _ => Err(DbError::internal("not an arithmetic operator")),
    }
}

/// Float operations with PostgreSQL's checks (float.h's float8_pl & co.).
pub(crate) trait FloatOps:
    Prim
    + PartialEq
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    fn inf(self) -> bool;
    fn nan(self) -> bool;
}
impl FloatOps for f32 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn inf(self) -> bool {
        self.is_infinite()
    }
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
}
impl FloatOps for f64 {
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn inf(self) -> bool {
        self.is_infinite()
    }
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
}

#[inline(always)]
fn fadd<T: FloatOps>(x: T, y: T) -> (T, bool) {
    let r = x + y;
    (r, r.inf() && !x.inf() && !y.inf())
}
#[inline(always)]
fn fsub<T: FloatOps>(x: T, y: T) -> (T, bool) {
    let r = x - y;
    (r, r.inf() && !x.inf() && !y.inf())
}
#[inline(always)]
fn fmul<T: FloatOps>(x: T, y: T) -> (T, bool) {
    let r = x * y;
    (
        r,
        (r.inf() && !x.inf() && !y.inf()) || (r == T::ZERO && x != T::ZERO && y != T::ZERO),
    )
}
#[inline(always)]
fn fdiv<T: FloatOps>(x: T, y: T) -> (T, bool) {
    let zero_div = y == T::ZERO && !x.nan();
    let r = if zero_div { T::ZERO } else { x / y };
    (
        r,
        zero_div || (r.inf() && !x.inf()) || (r == T::ZERO && x != T::ZERO && !y.inf()),
    )
}

fn float_arith<T: FloatOps>(
    op: BinaryOp,
    a: Arg<T>,
    b: Arg<T>,
    len: usize,
    nulls: &Nulls,
) -> DbResult<Vec<T>> {
    let mul_err = |x: T, y: T| {
        let r = x * y;
        if r.inf() {
            float_overflow()
        } else {
            float_underflow()
        }
    };
    let div_err = |x: T, y: T| {
        if y == T::ZERO {
            DbError::division_by_zero()
        } else if (x / y).inf() {
            float_overflow()
        } else {
            float_underflow()
        }
    };
    match op {
        BinaryOp::Plus => map2_checked(a, b, len, nulls, fadd, |_, _| float_overflow()),
        BinaryOp::Minus => map2_checked(a, b, len, nulls, fsub, |_, _| float_overflow()),
        BinaryOp::Multiply => map2_checked(a, b, len, nulls, fmul, mul_err),
        BinaryOp::Divide => map2_checked(a, b, len, nulls, fdiv, div_err),
        _ => Err(DbError::internal("no float modulo operator")),
    }
}

/// Weight (base-10000 digit position) and first base-10000 digit of |d|, as
/// PostgreSQL's NumericVar would hold them.
fn weight_and_first_digit(d: Decimal) -> (i32, u128) {
    let m = d.mantissa().unsigned_abs();
    if m == 0 {
        return (0, 0);
    }
    let ndigits = m.checked_ilog10().unwrap_or(0) as i32 + 1;
    let exp = ndigits - 1 - d.scale() as i32;
    let weight = exp.div_euclid(4);
    let shift = d.scale() as i32 + 4 * weight;
    let first = if shift >= 0 {
        m / 10u128.pow(shift as u32)
    } else {
        m * 10u128.pow((-shift) as u32)
    };
    (weight, first)
}

/// PostgreSQL's `select_div_scale` (NUMERIC_MIN_SIG_DIGITS = 16), capped at rust_decimal's 28.
pub(crate) fn div_scale(a: Decimal, b: Decimal) -> u32 {
    let (w1, f1) = weight_and_first_digit(a);
    let (w2, f2) = weight_and_first_digit(b);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    let rscale = (16 - qweight * 4)
        .max(a.scale() as i32)
        .max(b.scale() as i32)
        .max(0);
    rscale.min(28) as u32
}

/// Rounds (half away from zero) or pads `d` to exactly `scale` digits when it fits.
pub(crate) fn with_scale(d: Decimal, scale: u32) -> Decimal {
    let mut r = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
    if r.scale() < scale {
        r.rescale(scale);
    }
    r
}

/// `a / b` for finite numerics with PostgreSQL's result scale.
fn decimal_div(a: Decimal, b: Decimal) -> DbResult<Decimal> {
    if b.is_zero() {
        return Err(DbError::division_by_zero());
    }
    let q = a.checked_div(b).ok_or_else(numeric_overflow)?;
    Ok(with_scale(q, div_scale(a, b)))
}

/// `a + b` (PostgreSQL's numeric_add: NaN absorbs, Infinity + -Infinity is NaN).
pub(crate) fn numeric_add(a: Numeric, b: Numeric) -> DbResult<Numeric> {
    use Numeric::*;
    Ok(match (a, b) {
        (Finite(x), Finite(y)) => Finite(min_scale(
            x.checked_add(y).ok_or_else(numeric_overflow)?,
            x.scale().max(y.scale()),
        )),
        (NaN, _) | (_, NaN) | (Infinity, NegInfinity) | (NegInfinity, Infinity) => NaN,
        (Infinity | NegInfinity, _) => a,
        (_, inf) => inf,
    })
}

/// `a - b` (numeric_sub: Infinity - Infinity is NaN).
pub(crate) fn numeric_sub(a: Numeric, b: Numeric) -> DbResult<Numeric> {
    use Numeric::*;
    Ok(match (a, b) {
        (Finite(x), Finite(y)) => Finite(min_scale(
            x.checked_sub(y).ok_or_else(numeric_overflow)?,
            x.scale().max(y.scale()),
        )),
        (NaN, _) | (_, NaN) | (Infinity, Infinity) | (NegInfinity, NegInfinity) => NaN,
        (Infinity | NegInfinity, _) => a,
        (_, inf) => Numeric::infinity(-inf.signum()),
    })
}

/// `a * b` (numeric_mul: Infinity times zero is NaN, signs multiply).
pub(crate) fn numeric_mul(a: Numeric, b: Numeric) -> DbResult<Numeric> {
    use Numeric::*;
    Ok(match (a, b) {
        (Finite(x), Finite(y)) => Finite(min_scale(
            x.checked_mul(y).ok_or_else(numeric_overflow)?,
            x.scale() + y.scale(),
        )),
        (NaN, _) | (_, NaN) => NaN,
        _ if a.signum() == 0 || b.signum() == 0 => NaN,
        _ => Numeric::infinity(a.signum() * b.signum()),
    })
}

/// `a / b` with PostgreSQL's result scale (numeric_div: NaN absorbs before the
/// zero check, ±Infinity / ±Infinity is NaN, a finite value over Infinity is 0).
pub(crate) fn numeric_div(a: Numeric, b: Numeric) -> DbResult<Numeric> {
    numeric_quotient(a, b, decimal_div)
}

/// The shared special-value rules of `/` and div(); `finite` divides two finite values.
pub(crate) fn numeric_quotient(
    a: Numeric,
    b: Numeric,
    finite: impl Fn(Decimal, Decimal) -> DbResult<Decimal>,
) -> DbResult<Numeric> {
    use Numeric::*;
    Ok(match (a, b) {
        (Finite(x), Finite(y)) => Finite(finite(x, y)?),
        (NaN, _) | (_, NaN) => NaN,
        (Infinity | NegInfinity, Infinity | NegInfinity) => NaN,
        (Infinity | NegInfinity, _) if b.signum() == 0 => {
            return Err(DbError::division_by_zero())
        }
        (Infinity | NegInfinity, _) => Numeric::infinity(a.signum() * b.signum()),
        (Finite(_), _) => Numeric::ZERO,
    })
}

/// `a % b` (numeric_mod: Infinity % nonzero is NaN, finite % Infinity is the finite value).
pub(crate) fn numeric_rem(a: Numeric, b: Numeric) -> DbResult<Numeric> {
    use Numeric::*;
    Ok(match (a, b) {
        (Finite(x), Finite(y)) => {
            if y.is_zero() {
                return Err(DbError::division_by_zero());
            }
            Finite(min_scale(
                x.checked_rem(y).ok_or_else(numeric_overflow)?,
                x.scale().max(y.scale()),
            ))
        }
        (NaN, _) | (_, NaN) => NaN,
        (Infinity | NegInfinity, _) if b.signum() == 0 => {
            return Err(DbError::division_by_zero())
        }
        (Infinity | NegInfinity, _) => NaN,
        (Finite(_), _) => a,
    })
}

/// Unary minus: Infinity and -Infinity trade places, NaN stays.
pub(crate) fn numeric_neg(a: Numeric) -> Numeric {
    match a {
        Numeric::Finite(x) => Numeric::Finite(-x),
        Numeric::NaN => Numeric::NaN,
        Numeric::Infinity => Numeric::NegInfinity,
        Numeric::NegInfinity => Numeric::Infinity,
    }
}

/// Pads `d` to at least `scale` fractional digits (PostgreSQL's display
/// scale survives zero results: 0 * 1.50 is 0.00), within rust_decimal's 28.
#[inline]
pub(crate) fn min_scale(mut d: Decimal, scale: u32) -> Decimal {
    let s = scale.min(28);
    if d.scale() < s {
        d.rescale(s);
    }
    d
}

fn numeric_arith(
    op: BinaryOp,
    a: Arg<Numeric>,
    b: Arg<Numeric>,
    len: usize,
    nulls: &Nulls,
) -> DbResult<Vec<Numeric>> {
    match op {
        BinaryOp::Plus => map2_try(a, b, len, nulls, numeric_add),
        BinaryOp::Minus => map2_try(a, b, len, nulls, numeric_sub),
        BinaryOp::Multiply => map2_try(a, b, len, nulls, numeric_mul),
        BinaryOp::Divide => map2_try(a, b, len, nulls, numeric_div),
        BinaryOp::Modulo => map2_try(a, b, len, nulls, numeric_rem),
        _ => Err(DbError::internal("not an arithmetic operator")),
    }
}

/// Evaluates + - * / % for a resolved signature.
pub(crate) fn arith(
    sig: &BinarySignature,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    use DataType::*;
    let op = sig.op;
    match (sig.left, sig.right) {
        (Int16, Int16) => {
            let v = int_arith::<i16>(op, Int16, prim(a, len)?, prim(b, len)?, len, &nulls)?;
            Ok(prim_column(Int16, v, nulls))
        }
        (Int32, Int32) => {
            let v = int_arith::<i32>(op, Int32, prim(a, len)?, prim(b, len)?, len, &nulls)?;
            Ok(prim_column(Int32, v, nulls))
        }
        (Int64, Int64) => {
            let v = int_arith::<i64>(op, Int64, prim(a, len)?, prim(b, len)?, len, &nulls)?;
            Ok(prim_column(Int64, v, nulls))
        }
        (Float32, Float32) => {
            let v = float_arith::<f32>(op, prim(a, len)?, prim(b, len)?, len, &nulls)?;
            Ok(prim_column(Float32, v, nulls))
        }
        (Float64, Float64) => {
            let v = float_arith::<f64>(op, prim(a, len)?, prim(b, len)?, len, &nulls)?;
            Ok(prim_column(Float64, v, nulls))
        }
        (Numeric, Numeric) => {
            let v = numeric_arith(op, prim(a, len)?, prim(b, len)?, len, &nulls)?;
            Ok(prim_column(Numeric, v, nulls))
        }
        (Jsonb, _) => super::jsonb::jsonb_delete(sig.right, a, b, len, nulls, ctx),
        _ => super::datetime::datetime_arith(sig, a, b, len, nulls, ctx),
    }
}

/// Unary minus.
pub(crate) fn negate(ty: DataType, a: Operand, len: usize) -> DbResult<Column> {
    use DataType::*;
    let nulls = Nulls::of(&a, len)?;
    if nulls.all_null() {
        return Ok(super::common::null_column(ty, len));
    }
    fn ints<T: IntOps>(ty: DataType, a: Operand, len: usize, nulls: Nulls) -> DbResult<Column> {
        let v = map1_checked(prim::<T>(a, len)?, len, &nulls, T::ovf_neg, |_| {
            int_out_of_range(ty)
        })?;
        Ok(prim_column(ty, v, nulls))
    }
    match ty {
        Int16 => ints::<i16>(ty, a, len, nulls),
        Int32 => ints::<i32>(ty, a, len, nulls),
        Int64 => ints::<i64>(ty, a, len, nulls),
        Float32 => Ok(prim_column(
            ty,
            map1(prim::<f32>(a, len)?, len, |x| -x),
            nulls,
        )),
        Float64 => Ok(prim_column(
            ty,
            map1(prim::<f64>(a, len)?, len, |x| -x),
            nulls,
        )),
        Numeric => Ok(prim_column(
            ty,
            map1(prim::<crate::types::Numeric>(a, len)?, len, numeric_neg),
            nulls,
        )),
        Interval => {
            let v = map1_try(prim(a, len)?, len, &nulls, super::datetime::interval_negate)?;
            Ok(prim_column(ty, v, nulls))
        }
        _ => Err(DbError::internal(format!(
            "no unary minus for {}",
            ty.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check_binary_against_reference, d, eval_bin};
    use super::*;
    use crate::types::Datum;
    use std::str::FromStr;

    fn int_ref(ty: DataType, op: BinaryOp, a: i64, b: i64) -> Result<Datum, &'static str> {
        let (lo, hi) = match ty {
            DataType::Int16 => (i16::MIN as i128, i16::MAX as i128),
            DataType::Int32 => (i32::MIN as i128, i32::MAX as i128),
            _ => (i64::MIN as i128, i64::MAX as i128),
        };
        let (a, b) = (a as i128, b as i128);
        let r = match op {
            BinaryOp::Plus => a + b,
            BinaryOp::Minus => a - b,
            BinaryOp::Multiply => a * b,
            BinaryOp::Divide => {
                if b == 0 {
                    return Err("22012");
                }
                a / b
            }
            _ => {
                if b == 0 {
                    return Err("22012");
                }
                a % b
            }
        };
        if r < lo || r > hi {
            return Err("22003");
        }
        Ok(match ty {
            DataType::Int16 => Datum::Int16(r as i16),
            DataType::Int32 => Datum::Int32(r as i32),
            _ => Datum::Int64(r as i64),
        })
    }

    #[test]
    fn integer_kernels_match_reference() {
        let ops = [
            BinaryOp::Plus,
            BinaryOp::Minus,
            BinaryOp::Multiply,
            BinaryOp::Divide,
            BinaryOp::Modulo,
        ];
        for (k, ty) in [DataType::Int16, DataType::Int32, DataType::Int64]
            .into_iter()
            .enumerate()
        {
            for op in ops {
                check_binary_against_reference(op, ty, ty, 100 + k as u64, |a, b| {
                    int_ref(ty, op, a.as_i64()?, b.as_i64()?).ok()
                });
            }
        }
    }

    #[test]
    fn float_and_numeric_kernels_match_reference() {
        let ops = [
            BinaryOp::Plus,
            BinaryOp::Minus,
            BinaryOp::Multiply,
            BinaryOp::Divide,
        ];
        for op in ops {
            check_binary_against_reference(op, DataType::Float64, DataType::Float64, 7, |a, b| {
                let (Datum::Float64(x), Datum::Float64(y)) = (a, b) else {
                    return None;
                };
                let (r, bad) = match op {
                    BinaryOp::Plus => fadd(*x, *y),
                    BinaryOp::Minus => fsub(*x, *y),
                    BinaryOp::Multiply => fmul(*x, *y),
                    _ => fdiv(*x, *y),
                };
                (!bad).then_some(Datum::Float64(r))
            });
            check_binary_against_reference(op, DataType::Numeric, DataType::Numeric, 9, |a, b| {
                let (Datum::Numeric(x), Datum::Numeric(y)) = (a, b) else {
                    return None;
                };
                let (Some(x), Some(y)) = (x.finite(), y.finite()) else {
                    return None;
                };
                let r = match op {
                    BinaryOp::Plus => x.checked_add(y).map(Numeric::Finite),
                    BinaryOp::Minus => x.checked_sub(y).map(Numeric::Finite),
                    BinaryOp::Multiply => x.checked_mul(y).map(Numeric::Finite),
                    _ => numeric_div(x.into(), y.into()).ok(),
                };
                r.map(Datum::Numeric)
            });
        }
    }

    #[test]
    fn postgres_exact_results_and_errors() {
        use DataType::*;
        assert_eq!(
            eval_bin(BinaryOp::Divide, (d::i32(7), Int32), (d::i32(2), Int32)).unwrap(),
            d::i32(3)
        );
        assert_eq!(
            eval_bin(BinaryOp::Divide, (d::i32(-7), Int32), (d::i32(2), Int32)).unwrap(),
            d::i32(-3)
        );
        assert_eq!(
            eval_bin(BinaryOp::Modulo, (d::i32(-7), Int32), (d::i32(2), Int32)).unwrap(),
            d::i32(-1)
        );
        assert_eq!(
            eval_bin(
                BinaryOp::Modulo,
                (d::i32(i32::MIN), Int32),
                (d::i32(-1), Int32)
            )
            .unwrap(),
            d::i32(0)
        );
        let e = eval_bin(
            BinaryOp::Plus,
            (d::i32(i32::MAX), Int32),
            (d::i32(1), Int32),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22003", "integer out of range")
        );
        let e = eval_bin(
            BinaryOp::Multiply,
            (Datum::Int16(300), Int16),
            (Datum::Int16(300), Int16),
        )
        .unwrap_err();
        assert_eq!(e.message, "smallint out of range");
        let e = eval_bin(
            BinaryOp::Minus,
            (Datum::Int64(i64::MIN), Int64),
            (Datum::Int64(1), Int64),
        )
        .unwrap_err();
        assert_eq!(e.message, "bigint out of range");
        let e = eval_bin(
            BinaryOp::Divide,
            (d::i32(i32::MIN), Int32),
            (d::i32(-1), Int32),
        )
        .unwrap_err();
        assert_eq!(e.message, "integer out of range");
        let e = eval_bin(BinaryOp::Divide, (d::i32(1), Int32), (d::i32(0), Int32)).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("22012", "division by zero"));
        let e = eval_bin(
            BinaryOp::Divide,
            (Datum::Float64(1.0), Float64),
            (Datum::Float64(0.0), Float64),
        )
        .unwrap_err();
        assert_eq!(e.code, "22012");
        let e = eval_bin(
            BinaryOp::Multiply,
            (Datum::Float64(1e300), Float64),
            (Datum::Float64(1e300), Float64),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22003", "value out of range: overflow")
        );
        let e = eval_bin(
            BinaryOp::Multiply,
            (Datum::Float64(1e-300), Float64),
            (Datum::Float64(1e-300), Float64),
        )
        .unwrap_err();
        assert_eq!(e.message, "value out of range: underflow");
        // NaN / 0 is NaN in PostgreSQL.
        let r = eval_bin(
            BinaryOp::Divide,
            (Datum::Float64(f64::NAN), Float64),
            (Datum::Float64(0.0), Float64),
        )
        .unwrap();
        assert!(matches!(r, Datum::Float64(x) if x.is_nan()));
        // int + float8 -> float8; int + numeric -> numeric.
        assert_eq!(
            eval_bin(
                BinaryOp::Plus,
                (d::i32(1), Int32),
                (Datum::Float64(0.5), Float64)
            )
            .unwrap(),
            Datum::Float64(1.5)
        );
        let r = eval_bin(
            BinaryOp::Plus,
            (d::i32(1), Int32),
            (d::num("0.50"), Numeric),
        )
        .unwrap();
        assert_eq!(r, d::num("1.50"));
        assert_eq!(
            r.clone(),
            Datum::Numeric(Decimal::from_str("1.50").unwrap().into())
        );
    }

    #[test]
    fn numeric_division_scale_as_postgres() {
        let div = |a: &str, b: &str| {
            numeric_div(Decimal::from_str(a).unwrap().into(), Decimal::from_str(b).unwrap().into())
                .unwrap()
                .to_string()
        };
        assert_eq!(div("1", "3"), "0.33333333333333333333");
        assert_eq!(div("10", "4"), "2.5000000000000000");
        assert_eq!(div("2", "3"), "0.66666666666666666667");
        assert_eq!(div("100", "7"), "14.2857142857142857");
        assert_eq!(div("10000", "7"), "1428.5714285714285714");
        assert_eq!(div("99999", "7"), "14285.571428571429");
        assert_eq!(div("1", "30000"), "0.000033333333333333333333");
        assert_eq!(div("123456789012", "7"), "17636684144.57142857");
        assert_eq!(div("0.001", "7"), "0.00014285714285714286");
        assert_eq!(div("7", "0.001"), "7000.0000000000000000");
        assert_eq!(div("1.000", "8"), "0.12500000000000000000");
        assert_eq!(div("12345678", "3"), "4115226.000000000000");
        assert_eq!(div("0.5", "0.25"), "2.0000000000000000");
        assert_eq!(div("-1", "3"), "-0.33333333333333333333");
        assert_eq!(
            numeric_div(Decimal::ONE.into(), Numeric::ZERO).unwrap_err().code,
            "22012"
        );
    }

    #[test]
    fn overflow_on_null_rows_is_ignored() {
        use crate::exec::vector::Bitmap;
        let a = Column::new(
            DataType::Int32,
            crate::exec::vector::ColumnData::Int32(vec![i32::MAX, 1]),
            Some(Bitmap::from_bools(&[false, true])),
        );
        let one = Datum::Int32(1);
        let sig =
            super::super::resolve_binary(BinaryOp::Plus, DataType::Int32, DataType::Int32).unwrap();
        let r = super::super::eval_binary(
            &sig,
            Operand::Column(&a),
            Operand::Scalar(&one, DataType::Int32),
            2,
            &EvalContext::default(),
        )
        .unwrap();
        assert_eq!(r.datum(0), Datum::Null);
        assert_eq!(r.datum(1), Datum::Int32(2));
        // Division by a zero that sits in a NULL slot is no error either.
        let z = Column::new(
            DataType::Int32,
            crate::exec::vector::ColumnData::Int32(vec![0, 2]),
            Some(Bitmap::from_bools(&[false, true])),
        );
        let sig = super::super::resolve_binary(BinaryOp::Divide, DataType::Int32, DataType::Int32)
            .unwrap();
        let r = super::super::eval_binary(
            &sig,
            Operand::Scalar(&one, DataType::Int32),
            Operand::Column(&z),
            2,
            &EvalContext::default(),
        )
        .unwrap();
        assert_eq!(r.datum(1), Datum::Int32(0));
    }

    #[test]
    fn negation() {
        let e = negate(
            DataType::Int32,
            Operand::Scalar(&Datum::Int32(i32::MIN), DataType::Int32),
            1,
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22003", "integer out of range")
        );
        let c = negate(
            DataType::Int64,
            Operand::Scalar(&Datum::Int64(5), DataType::Int64),
            2,
        )
        .unwrap();
        assert_eq!(c.datum(1), Datum::Int64(-5));
        let c = negate(
            DataType::Int16,
            Operand::Scalar(&Datum::Null, DataType::Int16),
            2,
        )
        .unwrap();
        assert_eq!(c.datum(0), Datum::Null);
    }
}
