//! Math function kernels: abs, sign, round, trunc, ceil, floor, sqrt, cbrt,
//! power, exp, ln, log, log10, mod, div, pi, random, degrees, radians and
//! the trigonometric functions, on the types PostgreSQL defines them for
//! (float8 with rint-style half-even rounding; numeric with half-away-from-
//! zero rounding and PostgreSQL's result scales, approximated within
//! rust_decimal's 28 digits).
//! Must not: resolve types (the signature says float8 vs numeric), or
//! report an error for a NULL row.

use std::cell::Cell;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, MathematicalOps, RoundingStrategy};

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::Column;
use crate::exec::Operand;
use crate::types::{DataType, Numeric as Num};

use super::arith::{with_scale, IntOps};
use super::common::{
    float_overflow, float_underflow, int_out_of_range, map1, map1_checked, map1_try, map2_try,
    numeric_overflow, prim, prim_column, Nulls,
};
use super::ScalarFunction as F;

const LOG_ERR: &str = "2201E";
const POWER_ERR: &str = "2201F";

fn log_zero() -> DbError {
    DbError::new(LOG_ERR, "cannot take logarithm of zero")
}
fn log_negative() -> DbError {
    DbError::new(LOG_ERR, "cannot take logarithm of a negative number")
}
fn sqrt_negative() -> DbError {
    DbError::new(POWER_ERR, "cannot take square root of a negative number")
}
fn input_out_of_range() -> DbError {
    DbError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "input is out of range",
    )
}

/// Checks a float8 function result as PostgreSQL's float_overflow/underflow checks do.
fn checked_f(r: f64, x: f64, allow_zero: bool) -> DbResult<f64> {
    if r.is_infinite() && !x.is_infinite() {
        return Err(float_overflow());
    }
    if r == 0.0 && !allow_zero {
        return Err(float_underflow());
    }
    Ok(r)
}

fn dpow(x: f64, y: f64) -> DbResult<f64> {
    if x == 0.0 && y < 0.0 {
        return Err(DbError::new(
            POWER_ERR,
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.floor() != y && !y.is_nan() {
        return Err(DbError::new(
            POWER_ERR,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if x.is_nan() || y.is_nan() {
        return Ok(if x == 1.0 || y == 0.0 { 1.0 } else { f64::NAN });
    }
    let r = x.powf(y);
    if r.is_infinite() && !x.is_infinite() && !y.is_infinite() {
        return Err(float_overflow());
    }
    if r == 0.0 && x != 0.0 && !y.is_infinite() {
        return Err(float_underflow());
    }
    Ok(r)
}

fn dln(x: f64, base10: bool) -> DbResult<f64> {
    if x == 0.0 {
        return Err(log_zero());
    }
    if x < 0.0 {
        return Err(log_negative());
    }
    let r = if base10 { x.log10() } else { x.ln() };
    checked_f(r, x, true)
}

/// Decimal weight (10^w place of the most significant digit) of |d|; 0 for 0.
fn dec_weight(d: Decimal) -> i32 {
    let m = d.mantissa().unsigned_abs();
    if m == 0 {
        return 0;
    }
    m.ilog10() as i32 - d.scale() as i32
}

/// Base-10000 weight of |d|, as PostgreSQL's NumericVar.weight.
fn nbase_weight(d: Decimal) -> i32 {
    if d.is_zero() {
        0
    } else {
        dec_weight(d).div_euclid(4)
    }
}

/// PostgreSQL's estimate_ln_dweight.
fn ln_dweight(d: Decimal) -> i32 {
    if d <= Decimal::ZERO {
        return 0;
    }
    let (lo, hi) = (Decimal::new(9, 1), Decimal::new(11, 1));
    if d >= lo && d <= hi {
        let x = d - Decimal::ONE;
        if x.is_zero() {
            0
        } else {
            dec_weight(x)
        }
    } else {
        let l = d.to_f64().unwrap_or(1.0).ln();
        if l == 0.0 {
            0
        } else {
            l.abs().log10() as i32
        }
    }
}

fn final_scale(r: Decimal, rscale: i32, min_scales: &[u32]) -> Decimal {
    let mut s = rscale;
    for &m in min_scales {
        s = s.max(m as i32);
    }
    with_scale(r, s.clamp(0, 28) as u32)
}

fn numeric_ln(d: Decimal) -> DbResult<Decimal> {
    if d.is_zero() {
        return Err(log_zero());
    }
    if d.is_sign_negative() {
        return Err(log_negative());
    }
    let r = d.checked_ln().ok_or_else(numeric_overflow)?;
    Ok(final_scale(r, 16 - ln_dweight(d), &[d.scale()]))
}

fn numeric_log(base: Decimal, x: Decimal) -> DbResult<Decimal> {
    for v in [base, x] {
        if v.is_zero() {
            return Err(log_zero());
        }
        if v.is_sign_negative() {
            return Err(log_negative());
        }
    }
    let lb = base.checked_ln().ok_or_else(numeric_overflow)?;
    if lb.is_zero() {
        return Err(DbError::division_by_zero());
    }
    let lx = x.checked_ln().ok_or_else(numeric_overflow)?;
    let r = if base == Decimal::TEN {
        x.checked_log10().ok_or_else(numeric_overflow)?
    } else {
        lx.checked_div(lb).ok_or_else(numeric_overflow)?
    };
    let rscale = 16 - (ln_dweight(x) - ln_dweight(base));
    Ok(final_scale(r, rscale, &[base.scale(), x.scale()]))
}

fn numeric_exp(d: Decimal) -> DbResult<Decimal> {
    let r = d.checked_exp().ok_or_else(numeric_overflow)?;
    let w = (d.to_f64().unwrap_or(0.0) * std::f64::consts::LOG10_E) as i32;
    Ok(final_scale(r, 16 - w, &[d.scale()]))
}

fn numeric_sqrt(d: Decimal) -> DbResult<Decimal> {
    if d.is_sign_negative() && !d.is_zero() {
        return Err(sqrt_negative());
    }
    let r = d.sqrt().ok_or_else(numeric_overflow)?;
    let sweight = (nbase_weight(d) + 1) * 4 / 2 - 1;
    Ok(final_scale(r, 16 - sweight, &[d.scale()]))
}

fn numeric_power(x: Decimal, y: Decimal) -> DbResult<Decimal> {
    if x.is_zero() && y.is_sign_negative() && !y.is_zero() {
        return Err(DbError::new(
            POWER_ERR,
            "zero raised to a negative power is undefined",
        ));
    }
    let integral = y.fract().is_zero();
    if x.is_sign_negative() && !x.is_zero() && !integral {
        return Err(DbError::new(
            POWER_ERR,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if integral {
        let e = y.to_i64().ok_or_else(numeric_overflow)?;
        let r = if e >= 0 {
            x.checked_powi(e).ok_or_else(numeric_overflow)?
        } else {
            let p = x.checked_powi(-e).ok_or_else(numeric_overflow)?;
            Decimal::ONE.checked_div(p).ok_or_else(numeric_overflow)?
        };
        return Ok(final_scale(r, 16, &[x.scale(), y.scale()]));
    }
    let r = x.checked_powd(y).ok_or_else(numeric_overflow)?;
    let est =
        x.to_f64().unwrap_or(1.0).ln() * y.to_f64().unwrap_or(0.0) * std::f64::consts::LOG10_E;
    Ok(final_scale(r, 16 - est as i32, &[x.scale(), y.scale()]))
}

/// ln / log10 of NaN or ±Infinity (numeric_ln: -Infinity is negative).
fn ln_special(x: Num) -> DbResult<Num> {
    if x.signum() < 0 {
        Err(log_negative())
    } else {
        Ok(x)
    }
}

/// log(base, x) when either is NaN or ±Infinity (PostgreSQL's numeric_log).
fn numeric_log_special(base: Num, x: Num) -> DbResult<Num> {
    if base.is_nan() || x.is_nan() {
        return Ok(Num::NaN);
    }
    if base.signum() < 0 || x.signum() < 0 {
        return Err(log_negative());
    }
    if base.signum() == 0 || x.signum() == 0 {
        return Err(log_zero());
    }
    Ok(match (base, x) {
        // log(Inf, Inf) is Inf / Inf.
        (Num::Infinity, Num::Infinity) => Num::NaN,
        (Num::Infinity, _) => Num::ZERO,
        _ => Num::Infinity,
    })
}

/// power(x, y) when either is NaN or ±Infinity (PostgreSQL's numeric_power,
/// which follows POSIX pow()).
fn numeric_power_special(x: Num, y: Num) -> DbResult<Num> {
    let one = Num::Finite(Decimal::ONE);
    if x.is_nan() {
        return Ok(if y.signum() == 0 && !y.is_nan() { one } else { Num::NaN });
    }
    if y.is_nan() {
        return Ok(if x == one { one } else { Num::NaN });
    }
    let (sx, sy) = (x.signum(), y.signum());
    if sx == 0 && sy < 0 {
        return Err(DbError::new(POWER_ERR, "zero raised to a negative power is undefined"));
    }
    let y_integral = y.finite().is_none_or(|d| d.fract().is_zero());
    if sx < 0 && !y_integral {
        return Err(DbError::new(
            POWER_ERR,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if let Num::Finite(base) = x {
        // y is ±Infinity.
        let abs = base.abs();
        if abs == Decimal::ONE {
            return Ok(one);
        }
        let grows = abs > Decimal::ONE;
        return Ok(if grows == (y == Num::Infinity) { Num::Infinity } else { Num::ZERO });
    }
    if sy == 0 {
        return Ok(one);
    }
    if sy < 0 {
        return Ok(Num::ZERO);
    }
    if x == Num::Infinity {
        return Ok(Num::Infinity);
    }
    // -Infinity to a positive power: negative for odd integers.
    let odd = y.finite().is_some_and(|d| (d % Decimal::TWO).abs() == Decimal::ONE);
    Ok(if odd { Num::NegInfinity } else { Num::Infinity })
}

/// round(numeric, s) / trunc(numeric, s), with negative s rounding left of the point.
pub(crate) fn numeric_round(d: Decimal, s: i32, strategy: RoundingStrategy) -> DbResult<Decimal> {
    if s >= 0 {
        return Ok(with_scale(
            d.round_dp_with_strategy(s.min(28) as u32, strategy),
            s.min(28) as u32,
        ));
    }
    if s < -28 {
        return Ok(Decimal::ZERO);
    }
    let p = Decimal::from_i128_with_scale(10i128.pow((-s) as u32), 0);
    let q = d
        .checked_div(p)
        .ok_or_else(numeric_overflow)?
        .round_dp_with_strategy(0, strategy);
    let mut r = q.checked_mul(p).ok_or_else(numeric_overflow)?;
    r.rescale(0);
    Ok(r)
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// random(): xorshift64* seeded from the clock, uniform in [0, 1).
pub(crate) fn random_f64() -> f64 {
    RNG.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x9E3779B97F4A7C15);
            x = t ^ 0x9E3779B97F4A7C15 ^ (&s as *const _ as u64);
            if x == 0 {
                x = 1;
            }
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// Evaluates a math function whose argument types are `types`.
pub(crate) fn eval_math(
    func: F,
    types: &[DataType],
    args: &[Operand],
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    use DataType::*;
    let ty = types.first().copied().unwrap_or(Float64);
    macro_rules! f1 {
        ($f:expr) => {{
            let v = map1_try(prim::<f64>(args[0], len)?, len, &nulls, $f)?;
            Ok(prim_column(Float64, v, nulls))
        }};
    }
    // Numeric kernels: `$f` on finite values, `$special` when the value is NaN or ±Infinity.
    macro_rules! n1 {
        ($special:expr, $f:expr) => {{
            let v = map1_try(prim::<Num>(args[0], len)?, len, &nulls, |x: Num| match x {
                Num::Finite(d) => ($f)(d).map(Num::Finite),
                s => ($special)(s),
            })?;
            Ok(prim_column(Numeric, v, nulls))
        }};
    }
    macro_rules! f2 {
        ($f:expr) => {{
            let v = map2_try(
                prim::<f64>(args[0], len)?,
                prim::<f64>(args[1], len)?,
                len,
                &nulls,
                $f,
            )?;
            Ok(prim_column(Float64, v, nulls))
        }};
    }
    macro_rules! n2 {
        ($special:expr, $f:expr) => {{
            let v = map2_try(
                prim::<Num>(args[0], len)?,
                prim::<Num>(args[1], len)?,
                len,
                &nulls,
                |x: Num, y: Num| match (x, y) {
                    (Num::Finite(a), Num::Finite(b)) => ($f)(a, b).map(Num::Finite),
                    _ => ($special)(x, y),
                },
            )?;
            Ok(prim_column(Numeric, v, nulls))
        }};
    }
    let unchanged = |x: Num| Ok(x);
    fn abs_int<T: IntOps + PartialOrd>(
        ty: DataType,
        a: Operand,
        len: usize,
        nulls: Nulls,
    ) -> DbResult<Column> {
        let v = map1_checked(
            prim::<T>(a, len)?,
            len,
            &nulls,
            |x| if x < T::ZERO { x.ovf_neg() } else { (x, false) },
            |_| int_out_of_range(ty),
        )?;
        Ok(prim_column(ty, v, nulls))
    }
    /// `&`, `|`, `#` over one integer type; shifts take an int4 count (PostgreSQL
    /// shifts by the count modulo the width, as the hardware does).
    fn bits<T: super::common::Prim + Copy + Default + std::ops::BitAnd<Output = T> + std::ops::BitOr<Output = T> + std::ops::BitXor<Output = T>>(
        func: F,
        ty: DataType,
        args: &[Operand],
        len: usize,
        nulls: Nulls,
        shift: impl Fn(T, i32, bool) -> T,
    ) -> DbResult<Column> {
        let v = match func {
            F::ShiftLeft | F::ShiftRight => {
                let left = func == F::ShiftLeft;
                map2_try(prim::<T>(args[0], len)?, prim::<i32>(args[1], len)?, len, &nulls, |x, n| Ok(shift(x, n, left)))?
            }
            _ => map2_try(prim::<T>(args[0], len)?, prim::<T>(args[1], len)?, len, &nulls, |x, y| {
                Ok(match func {
                    F::BitAnd => x & y,
                    F::BitOr => x | y,
                    _ => x ^ y,
                })
            })?,
        };
        Ok(prim_column(ty, v, nulls))
    }
    match (func, ty) {
        (F::BitAnd | F::BitOr | F::BitXor | F::ShiftLeft | F::ShiftRight, Int16) => {
            bits::<i16>(func, ty, args, len, nulls, |x, n, l| if l { x.wrapping_shl(n as u32) } else { x.wrapping_shr(n as u32) })
        }
        (F::BitAnd | F::BitOr | F::BitXor | F::ShiftLeft | F::ShiftRight, Int32) => {
            bits::<i32>(func, ty, args, len, nulls, |x, n, l| if l { x.wrapping_shl(n as u32) } else { x.wrapping_shr(n as u32) })
        }
        (F::BitAnd | F::BitOr | F::BitXor | F::ShiftLeft | F::ShiftRight, Int64) => {
            bits::<i64>(func, ty, args, len, nulls, |x, n, l| if l { x.wrapping_shl(n as u32) } else { x.wrapping_shr(n as u32) })
        }
        (F::BoolEq | F::BoolNe, Bool) => {
            let ne = func == F::BoolNe;
            let v = map2_try(prim::<bool>(args[0], len)?, prim::<bool>(args[1], len)?, len, &nulls, |x, y| Ok((x == y) != ne))?;
            Ok(prim_column(Bool, v, nulls))
        }
        (F::Abs, Int16) => abs_int::<i16>(ty, args[0], len, nulls),
        (F::Abs, Int32) => abs_int::<i32>(ty, args[0], len, nulls),
        (F::Abs, Int64) => abs_int::<i64>(ty, args[0], len, nulls),
        (F::Abs, Float32) => Ok(prim_column(
            ty,
            map1(prim::<f32>(args[0], len)?, len, f32::abs),
            nulls,
        )),
        (F::Abs, Float64) => Ok(prim_column(
            ty,
            map1(prim::<f64>(args[0], len)?, len, f64::abs),
            nulls,
        )),
        (F::Abs, Numeric) => n1!(|x: Num| Ok(if x.is_nan() { x } else { Num::Infinity }), |d: Decimal| Ok(d.abs())),
        (F::Sign, Float64) => f1!(|x: f64| Ok(if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        })),
        (F::Sign, Numeric) => n1!(
            |x: Num| Ok(if x.is_nan() { x } else { Num::Finite(Decimal::from(x.signum())) }),
            |d: Decimal| Ok(Decimal::from(Num::Finite(d).signum()))
        ),
        (F::Round, Float64) => Ok(prim_column(
            Float64,
            map1(prim::<f64>(args[0], len)?, len, f64::round_ties_even),
            nulls,
        )),
        (F::Trunc, Float64) => Ok(prim_column(
            Float64,
            map1(prim::<f64>(args[0], len)?, len, f64::trunc),
            nulls,
        )),
        (F::Ceil, Float64) => Ok(prim_column(
            Float64,
            map1(prim::<f64>(args[0], len)?, len, f64::ceil),
            nulls,
        )),
        (F::Floor, Float64) => Ok(prim_column(
            Float64,
            map1(prim::<f64>(args[0], len)?, len, f64::floor),
            nulls,
        )),
        (F::Round | F::Trunc, Numeric) => {
            let strategy = if func == F::Round {
                RoundingStrategy::MidpointAwayFromZero
            } else {
                RoundingStrategy::ToZero
            };
            if args.len() == 2 {
                let v = map2_try(
                    prim::<Num>(args[0], len)?,
                    prim::<i32>(args[1], len)?,
                    len,
                    &nulls,
                    |x, s| match x {
                        Num::Finite(d) => numeric_round(d, s, strategy).map(Num::Finite),
                        special => Ok(special),
                    },
                )?;
                Ok(prim_column(Numeric, v, nulls))
            } else {
                n1!(unchanged, |d: Decimal| numeric_round(d, 0, strategy))
            }
        }
        (F::Ceil, Numeric) => n1!(unchanged, |d: Decimal| Ok(d.ceil())),
        (F::Floor, Numeric) => n1!(unchanged, |d: Decimal| Ok(d.floor())),
        (F::Sqrt, Float64) => f1!(|x: f64| if x < 0.0 {
            Err(sqrt_negative())
        } else {
            Ok(x.sqrt())
        }),
        (F::Sqrt, Numeric) => n1!(|x: Num| if x.signum() < 0 { Err(sqrt_negative()) } else { Ok(x) }, numeric_sqrt),
        (F::Cbrt, Float64) => f1!(|x: f64| Ok(x.cbrt())),
        (F::Power, Float64) => f2!(dpow),
        (F::Power, Numeric) => n2!(numeric_power_special, numeric_power),
        (F::Exp, Float64) => f1!(|x: f64| {
            let r = x.exp();
            if r.is_infinite() && !x.is_infinite() {
                Err(float_overflow())
            } else if r == 0.0 && !x.is_infinite() {
                Err(float_underflow())
            } else {
                Ok(r)
            }
        }),
        (F::Exp, Numeric) => n1!(|x: Num| Ok(if x.signum() < 0 { Num::ZERO } else { x }), numeric_exp),
        (F::Ln, Float64) => f1!(|x: f64| dln(x, false)),
        (F::Ln, Numeric) => n1!(ln_special, numeric_ln),
        (F::Log10, Float64) => f1!(|x: f64| dln(x, true)),
        (F::Log10, Numeric) => n1!(ln_special, |d: Decimal| numeric_log(Decimal::TEN, d)),
        (F::Log, Numeric) => n2!(numeric_log_special, numeric_log),
        (F::Mod, Int16 | Int32 | Int64 | Numeric) => {
            let sig = super::BinarySignature {
                op: super::BinaryOp::Modulo,
                left: ty,
                right: ty,
                result: ty,
            };
            super::arith::arith(
                &sig,
                args[0],
                args[1],
                len,
                nulls,
                &crate::exec::EvalContext::default(),
            )
        }
        (F::Div, Numeric) => {
            let v = map2_try(prim::<Num>(args[0], len)?, prim::<Num>(args[1], len)?, len, &nulls, |x, y| {
                super::arith::numeric_quotient(x, y, |a, b| {
                    if b.is_zero() {
                        return Err(DbError::division_by_zero());
                    }
                    Ok(a.checked_div(b).ok_or_else(numeric_overflow)?.trunc())
                })
            })?;
            Ok(prim_column(Numeric, v, nulls))
        }
        (F::Degrees, Float64) => f1!(|x: f64| checked_f(x.to_degrees(), x, true)),
        (F::Radians, Float64) => f1!(|x: f64| checked_f(x.to_radians(), x, true)),
        (F::Sin, Float64) => f1!(|x: f64| if x.is_infinite() {
            Err(input_out_of_range())
        } else {
            Ok(x.sin())
        }),
        (F::Cos, Float64) => f1!(|x: f64| if x.is_infinite() {
            Err(input_out_of_range())
        } else {
            Ok(x.cos())
        }),
        (F::Tan, Float64) => f1!(|x: f64| if x.is_infinite() {
            Err(input_out_of_range())
        } else {
            Ok(x.tan())
        }),
        (F::Asin, Float64) => f1!(|x: f64| if !(-1.0..=1.0).contains(&x) {
            Err(input_out_of_range())
        } else {
            Ok(x.asin())
        }),
        (F::Acos, Float64) => f1!(|x: f64| if !(-1.0..=1.0).contains(&x) {
            Err(input_out_of_range())
        } else {
            Ok(x.acos())
        }),
        (F::Atan, Float64) => f1!(|x: f64| Ok(x.atan())),
        (F::Atan2, Float64) => f2!(|y: f64, x: f64| Ok(y.atan2(x))),
        (f, t) => Err(DbError::internal(format!(
            "no math kernel {f:?}({})",
            t.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::call;
    use super::*;
    use crate::types::Datum;

    fn n(s: &str) -> (Datum, DataType) {
        (
            Datum::Numeric(crate::types::text::parse_numeric(s).unwrap()),
            DataType::Numeric,
        )
    }
    fn f(v: f64) -> (Datum, DataType) {
        (Datum::Float64(v), DataType::Float64)
    }
    fn i(v: i32) -> (Datum, DataType) {
        (Datum::Int32(v), DataType::Int32)
    }
    fn show(d: Datum) -> String {
        match d {
            Datum::Numeric(x) => x.to_string(),
            Datum::Float64(x) => format!("{x}"),
            Datum::Int32(x) => x.to_string(),
            Datum::Int16(x) => x.to_string(),
            other => format!("{other:?}"),
        }
    }
    fn c(name: &str, args: &[(Datum, DataType)]) -> String {
        show(call(name, args).unwrap())
    }

    #[test]
    fn postgres_math_results() {
        assert_eq!(c("round", &[n("1234.5678"), i(-2)]), "1200");
        assert_eq!(c("round", &[n("1.5"), i(3)]), "1.500");
        assert_eq!(c("round", &[n("-2.5")]), "-3");
        assert_eq!(c("round", &[f(2.5)]), "2");
        assert_eq!(c("round", &[f(-0.5)]), "-0");
        assert_eq!(c("round", &[i(5)]), "5"); // round(integer) -> round(double precision)
        assert_eq!(c("trunc", &[n("-1.59"), i(1)]), "-1.5");
        assert_eq!(c("ceil", &[n("-1.5")]), "-1");
        assert_eq!(c("floor", &[n("-1.5")]), "-2");
        assert_eq!(c("ceiling", &[f(1.2)]), "2");
        assert_eq!(c("sign", &[n("-2.5")]), "-1");
        assert_eq!(c("div", &[i(7), i(-2)]), "-3");
        assert_eq!(c("mod", &[i(-7), i(2)]), "-1");
        assert_eq!(c("abs", &[(Datum::Int16(-3), DataType::Int16)]), "3");
        let e = call("abs", &[i(i32::MIN)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22003", "integer out of range")
        );
        assert_eq!(c("sqrt", &[n("2.0")]), "1.414213562373095");
        assert_eq!(c("sqrt", &[n("16")]), "4.000000000000000");
        assert_eq!(c("sqrt", &[n("10000000000")]), "100000.00000000000");
        assert_eq!(c("sqrt", &[n("0.0001")]), "0.01000000000000000");
        assert_eq!(c("sqrt", &[i(2)]), "1.4142135623730951");
        assert_eq!(call("sqrt", &[i(-1)]).unwrap_err().code, "2201F");
        assert_eq!(c("ln", &[n("2.0")]), "0.6931471805599453");
        assert_eq!(c("ln", &[n("10")]), "2.3025850929940457");
        assert_eq!(c("exp", &[n("1.0")]), "2.7182818284590452");
        assert_eq!(c("exp", &[n("10")]), "22026.465794806717");
        assert_eq!(c("log", &[n("100")]), "2.0000000000000000");
        assert_eq!(c("log", &[n("2")]), "0.3010299956639812");
        assert_eq!(c("log", &[n("2.0"), n("8")]), "3.0000000000000000");
        assert_eq!(c("power", &[n("2"), n("10")]), "1024.0000000000000000");
        assert_eq!(c("power", &[n("2.5"), n("0.5")]), "1.5811388300841897");
        // PostgreSQL (glibc cbrt) prints 3.0000000000000004; Rust's cbrt is exact here.
        assert!((call("cbrt", &[f(27.0)]).unwrap().as_i64().is_none()));
        assert_eq!(
            c("degrees", &[(call("pi", &[]).unwrap(), DataType::Float64)]),
            "180"
        );
        let e = call("ln", &[f(0.0)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("2201E", "cannot take logarithm of zero")
        );
        assert_eq!(
            call("ln", &[n("-1")]).unwrap_err().message,
            "cannot take logarithm of a negative number"
        );
        assert_eq!(
            call("power", &[f(0.0), f(-1.0)]).unwrap_err().message,
            "zero raised to a negative power is undefined"
        );
        assert_eq!(call("pow", &[f(-1.0), f(0.5)]).unwrap_err().code, "2201F");
        assert_eq!(
            call("exp", &[f(1000.0)]).unwrap_err().message,
            "value out of range: overflow"
        );
        assert_eq!(
            call("asin", &[f(2.0)]).unwrap_err().message,
            "input is out of range"
        );
        let r = call("random", &[]).unwrap();
        assert!(matches!(r, Datum::Float64(x) if (0.0..1.0).contains(&x)));
        let e = call("round", &[f(1.5), i(1)]).unwrap_err();
        assert_eq!(
            e.message,
            "function round(double precision, integer) does not exist"
        );
    }
}
