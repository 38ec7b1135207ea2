//! Casts between Brewric's types with PostgreSQL 15's semantics: numeric
//! types among each other (float -> int rounds half to even like rint,
//! numeric -> int half away from zero, 22003 on range; float -> numeric
//! keeps 15 / 6 significant digits as float8_numeric / float4_numeric do),
//! bool <-> integer, bool -> text ('true'/'false'), date / timestamp /
//! timestamptz (the session's UTC offset from `ctx.format`), jsonb scalars
//! to bool and numbers, string types among each other (bpchar loses its
//! padding, varchar(n)/char(n) truncate, char(n) pads), and every other
//! pair through the types' text I/O (`crate::types::text`).
//! Must not: reimplement text parsing or formatting of any type (call
//! parse_text / format_text), or raise 22001 (assignment-length errors are
//! `check_string_length`'s, called by whoever does assignment).

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{BytesColumn, Column};
use crate::exec::{EvalContext, Operand};
use crate::types::text::{format_text, parse_text};
use crate::types::{DataType, Datum, Numeric};

use super::common::{
    bare_name, bytes, bytes_column, float_overflow, float_underflow, int_out_of_range, map1,
    map1_checked, map1_try, null_column, numeric_overflow, prim, prim_column, same_representation,
    Arg, BArg, Nulls,
};
use super::compare::rtrim_blanks;
use super::datetime;

fn cannot_cast(from: DataType, to: DataType) -> DbError {
    DbError::new(
        sqlstate::CANNOT_COERCE,
        format!("cannot cast type {} to {}", bare_name(from), bare_name(to)),
    )
}

/// Casts one value (constants, parameters): a one-row `cast_column`.
pub(crate) fn cast_datum(
    value: &Datum,
    from: DataType,
    to: DataType,
    ctx: &EvalContext,
) -> DbResult<Datum> {
    if value.is_null() {
        return Ok(Datum::Null);
    }
    let col = Column::from_datum(from, value, 1);
    if col.datum(0).is_null() {
        return Err(DbError::internal(format!(
            "value {value:?} is not of type {}",
            from.name()
        )));
    }
    Ok(cast_column(&col, to, ctx)?.datum(0))
}

fn is_str(t: DataType) -> bool {
    matches!(
        t,
        DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) | DataType::Unknown
    )
}

/// Casts a whole column; conversions are dispatched once per call.
pub(crate) fn cast_column(col: &Column, to: DataType, ctx: &EvalContext) -> DbResult<Column> {
    use DataType::*;
    let from = col.data_type;
    let len = col.len();
    if same_representation(from, to) {
        return Ok(col.clone().with_type(to));
    }
    if !super::resolve::can_cast_explicit(from, to) {
        return Err(cannot_cast(from, to));
    }
    let op = Operand::Column(col);
    let nulls = Nulls::of(&op, len)?;
    if nulls.all_null() {
        return Ok(null_column(to, len));
    }
    match (from, to) {
        // ---- integers, floats, numeric
        (Int16 | Int32 | Int64, Int16 | Int32 | Int64 | Float32 | Float64 | Numeric)
        | (Float32 | Float64, Int16 | Int32 | Int64 | Float32 | Float64 | Numeric)
        | (Numeric, Int16 | Int32 | Int64 | Float32 | Float64) => {
            numeric_cast(from, to, op, len, nulls)
        }
        (Bool, Int32) => Ok(prim_column(
            to,
            map1(prim::<bool>(op, len)?, len, |b| b as i32),
            nulls,
        )),
        (Int32, Bool) => Ok(prim_column(
            to,
            map1(prim::<i32>(op, len)?, len, |v| v != 0),
            nulls,
        )),
        // ---- calendar
        (Date | Timestamp | TimestampTz, Date | Timestamp | TimestampTz) => {
            datetime::cast_datetime(from, to, op, len, nulls, ctx.format.zone)
        }
        // ---- jsonb scalars
        (Jsonb, Bool | Int16 | Int32 | Int64 | Float32 | Float64 | Numeric) => {
            jsonb_cast(to, op, len, nulls, ctx)
        }
        // ---- arrays element by element
        (Array(a), Array(b)) => {
            let mut out = Vec::with_capacity(len);
            for i in 0..len {
                out.push(match col.datum(i) {
                    Datum::Bytes(raw) => {
                        let v = crate::types::array::ArrayValue::decode(&raw, a)?;
                        let elems = v
                            .elems
                            .iter()
                            .map(|e| cast_datum(e, a.data_type(), b.data_type(), ctx))
                            .collect::<DbResult<Vec<_>>>()?;
                        Datum::Bytes(crate::types::array::ArrayValue { dims: v.dims, elems }.encode(b))
                    }
                    _ => Datum::Null,
                });
            }
            Ok(Column::from_datums(to, &out))
        }
        // ---- to a string type
        // ---- oid: integers wrap into 0..2^32 as PostgreSQL's int4/int8 → oid do
        (Int16 | Int32 | Int64, Oid) => {
            let v = int_arg(from, op, len)?;
            let mut out = Vec::with_capacity(len);
            for (i, x) in v.into_iter().enumerate() {
                if !nulls.is_valid(i) {
                    out.push(0);
                } else if x < i32::MIN as i64 || x > u32::MAX as i64 {
                    return Err(DbError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "OID out of range"));
                } else {
                    out.push(if x < 0 { x + (1i64 << 32) } else { x });
                }
            }
            Ok(prim_column(to, out, nulls))
        }
        (Oid, Int32) => Ok(prim_column(
            to,
            map1(prim::<i64>(op, len)?, len, |v| v as u32 as i32),
            nulls,
        )),
        (_, Text | Varchar(_) | Bpchar(_) | Name | Char) => {
            let src = bytes_or_format(from, col, len, &nulls, ctx)?;
            let mut out = BytesColumn::with_capacity(len, src.data.len());
            for i in 0..len {
                let mut v = src.get(i);
                if matches!(from, Bpchar(_)) {
                    v = rtrim_blanks(v);
                }
                push_with_typmod(&mut out, v, to);
            }
            Ok(bytes_column(to, out, nulls))
        }
        // ---- from a string type: the target's input function
        (f, _) if is_str(f) => {
            let s = bytes(op, len)?;
            parse_column(to, s, len, &nulls, ctx)
        }
        _ => Err(cannot_cast(from, to)),
    }
}

/// The text form of every row (string sources as they are, bool as
/// 'true'/'false' as booltext does, anything else through format_text).
fn bytes_or_format(
    from: DataType,
    col: &Column,
    len: usize,
    nulls: &Nulls,
    ctx: &EvalContext,
) -> DbResult<BytesColumn> {
    if let crate::exec::vector::ColumnData::Bytes(b) = &col.data {
        if is_str(from) {
            return Ok(b.clone());
        }
    }
    let mut out = BytesColumn::with_capacity(len, len * 8);
    if from == DataType::Bool {
        let v = prim::<bool>(Operand::Column(col), len)?;
        for i in 0..len {
            out.push(if !nulls.is_valid(i) {
                b""
            } else if v.get(i) {
                b"true"
            } else {
                b"false"
            });
        }
        return Ok(out);
    }
    for i in 0..len {
        if nulls.is_valid(i) {
            format_text(from, &col.datum(i), &ctx.format, &mut out.data);
        }
        out.offsets.push(out.data.len() as u32);
    }
    Ok(out)
}

/// Number of characters in UTF-8 text.
#[inline]
pub(crate) fn char_count(s: &[u8]) -> usize {
    s.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// Byte length of the first `n` characters.
#[inline]
pub(crate) fn char_prefix_len(s: &[u8], n: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in s.iter().enumerate() {
        if (b & 0xC0) != 0x80 {
            if seen == n {
                return i;
            }
            seen += 1;
        }
    }
    s.len()
}

/// Appends `v` adjusted to the target's length modifier: varchar(n) and
/// char(n) truncate to n characters, char(n) pads with blanks to n.
pub(crate) fn push_with_typmod(out: &mut BytesColumn, v: &[u8], to: DataType) {
    match to {
        DataType::Varchar(Some(n)) => {
            let cut = char_prefix_len(v, n as usize);
            out.push(&v[..cut]);
        }
        DataType::Bpchar(Some(n)) => {
            let n = n as usize;
            let cut = char_prefix_len(v, n);
            out.data.extend_from_slice(&v[..cut]);
            let have = char_count(&v[..cut]);
            out.data
                .extend(std::iter::repeat_n(b' ', n.saturating_sub(have)));
            out.offsets.push(out.data.len() as u32);
        }
        // name keeps 63 bytes, "char" one (PostgreSQL cuts bytes, at a character boundary).
        DataType::Name | DataType::Char => {
            let max = if to == DataType::Name { 63 } else { 1 };
            let mut cut = v.len().min(max);
            while cut > 0 && cut < v.len() && (v[cut] & 0xC0) == 0x80 {
                cut -= 1;
            }
            out.push(&v[..cut]);
        }
        _ => out.push(v),
    }
}

/// Assignment-cast length check (22001), as varchar(n) / bpchar(n) input do.
pub(crate) fn check_string_length(col: &Column, to: DataType) -> DbResult<()> {
    let n = match to {
        DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) => n as usize,
        _ => return Ok(()),
    };
    let crate::exec::vector::ColumnData::Bytes(b) = &col.data else {
        return Ok(());
    };
    for i in 0..col.len() {
        if !col.is_valid(i) {
            continue;
        }
        let mut v = b.get(i);
        if matches!(col.data_type, DataType::Bpchar(_)) {
            v = rtrim_blanks(v);
        }
        if v.len() > n && char_count(v) > n {
            let cut = char_prefix_len(v, n);
            if v[cut..].iter().any(|&c| c != b' ') {
                return Err(DbError::new(
                    sqlstate::STRING_DATA_RIGHT_TRUNCATION,
                    format!("value too long for type {}", to.name()),
                ));
            }
        }
    }
    Ok(())
}

/// The target's input function over every valid row.
fn parse_column(
    to: DataType,
    s: BArg,
    len: usize,
    nulls: &Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let mut out = Column::with_capacity(to, len);
    for i in 0..len {
        if !nulls.is_valid(i) {
            out.push_null();
            continue;
        }
        let v = parse_text(to, s.get_str(i), &ctx.format)?;
        out.push_datum(&v);
    }
    if out.len() != len {
        return Err(DbError::internal("cast produced a short column"));
    }
    Ok(out)
}

// ---------------------------------------------------------------- numbers

/// rint() for f64 (round half to even).
#[inline]
pub(crate) fn rint(x: f64) -> f64 {
    x.round_ties_even()
}

fn float_to_int<F: Copy>(to: DataType, x: F, as_f64: fn(F) -> f64) -> (i64, bool) {
    let r = rint(as_f64(x));
    let (lo, hi) = match to {
        DataType::Int16 => (i16::MIN as f64, -(i16::MIN as f64)),
        DataType::Int32 => (i32::MIN as f64, -(i32::MIN as f64)),
        _ => (i64::MIN as f64, -(i64::MIN as f64)),
    };
    if r.is_nan() || r < lo || r >= hi {
        (0, true)
    } else {
        (r as i64, false)
    }
}

/// float8_numeric / float4_numeric: `%.{digits}g`, then parsed as numeric;
/// NaN and ±Infinity map to numeric's own.
pub(crate) fn float_to_numeric(x: f64, digits: usize) -> DbResult<Numeric> {
    if x.is_nan() {
        return Ok(Numeric::NaN);
    }
    if x.is_infinite() {
        return Ok(Numeric::infinity(if x < 0.0 { -1 } else { 1 }));
    }
    float_to_decimal(x, digits).map(Numeric::Finite)
}

fn float_to_decimal(x: f64, digits: usize) -> DbResult<Decimal> {
    if x == 0.0 {
        return Ok(Decimal::ZERO);
    }
    let s = format!("{:.*e}", digits - 1, x);
    let (mant, exp) = s
        .split_once('e')
        .ok_or_else(|| DbError::internal("float formatting"))?;
    let exp: i32 = exp
        .parse()
        .map_err(|_| DbError::internal("float formatting"))?;
    let neg = mant.starts_with('-');
    let mut ds: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    while ds.len() > 1 && ds.ends_with('0') {
        ds.pop();
    }
    let mut m: i128 = ds
        .parse()
        .map_err(|_| DbError::internal("float formatting"))?;
    let mut scale = ds.len() as i32 - 1 - exp;
    if scale < 0 {
        for _ in 0..(-scale) {
            m = m.checked_mul(10).ok_or_else(numeric_overflow)?;
        }
        scale = 0;
    }
    if scale > 28 {
        let k = scale - 28;
        if k > 30 {
            return Ok(Decimal::ZERO);
        }
        let p = 10i128.pow(k as u32);
        m = (m + p / 2) / p;
        scale = 28;
    }
    if neg {
        m = -m;
    }
    Decimal::try_from_i128_with_scale(m, scale as u32).map_err(|_| numeric_overflow())
}

/// numeric -> float through its decimal text (correctly rounded, as PostgreSQL's strtod).
pub(crate) fn numeric_to_f64(d: Numeric) -> f64 {
    match d {
        Numeric::Finite(d) => d.to_string().parse().unwrap_or(0.0),
        special => special.to_f64(),
    }
}

fn numeric_to_f32(d: Numeric) -> f32 {
    match d {
        Numeric::Finite(d) => d.to_string().parse().unwrap_or(0.0),
        special => special.to_f64() as f32,
    }
}

fn numeric_to_int(to: DataType, d: Numeric) -> DbResult<i64> {
    let d = match d {
        Numeric::Finite(d) => d,
        special => {
            let what = if special.is_nan() { "NaN" } else { "infinity" };
            return Err(DbError::unsupported(format!("cannot convert {what} to {}", to.name())));
        }
    };
    let r = d.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
    let v = match to {
        DataType::Int16 => r.to_i16().map(i64::from),
        DataType::Int32 => r.to_i32().map(i64::from),
        _ => r.to_i64(),
    };
    v.ok_or_else(|| int_out_of_range(to))
}

fn out_int(to: DataType, v: Vec<i64>, nulls: Nulls) -> Column {
    match to {
        DataType::Int16 => prim_column(to, v.into_iter().map(|x| x as i16).collect(), nulls),
        DataType::Int32 => prim_column(to, v.into_iter().map(|x| x as i32).collect(), nulls),
        _ => prim_column(to, v, nulls),
    }
}

fn int_arg<'a>(from: DataType, op: Operand<'a>, len: usize) -> DbResult<Vec<i64>> {
    Ok(match from {
        DataType::Int16 => map1(prim::<i16>(op, len)?, len, i64::from),
        DataType::Int32 => map1(prim::<i32>(op, len)?, len, i64::from),
        _ => map1(prim::<i64>(op, len)?, len, |x| x),
    })
}

fn numeric_cast(
    from: DataType,
    to: DataType,
    op: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    use DataType::*;
    match (from, to) {
        (Int16 | Int32 | Int64, _) => {
            let v = int_arg(from, op, len)?;
            let a = Arg::Col(&v);
            match to {
                Int16 | Int32 => {
                    let (lo, hi) = if to == Int16 {
                        (i16::MIN as i64, i16::MAX as i64)
                    } else {
                        (i32::MIN as i64, i32::MAX as i64)
                    };
                    let r = map1_checked(
                        a,
                        len,
                        &nulls,
                        |x| (x, x < lo || x > hi),
                        |_| int_out_of_range(to),
                    )?;
                    Ok(out_int(to, r, nulls))
                }
                Int64 => Ok(prim_column(to, v, nulls)),
                Float32 => Ok(prim_column(to, map1(a, len, |x| x as f32), nulls)),
                Float64 => Ok(prim_column(to, map1(a, len, |x| x as f64), nulls)),
                _ => Ok(prim_column(to, map1(a, len, |x| crate::types::Numeric::Finite(Decimal::from(x))), nulls)),
            }
        }
        (Float32, _) => {
            let a = prim::<f32>(op, len)?;
            match to {
                Int16 | Int32 | Int64 => {
                    let f32_as_f64 = |x: f32| x as f64;
                    // rint on the float4 value itself, as ftoi4 does.
                    let r = map1_checked(
                        a,
                        len,
                        &nulls,
                        |x| float_to_int(to, x, f32_as_f64),
                        |_| int_out_of_range(to),
                    )?;
                    Ok(out_int(to, r, nulls))
                }
                Float64 => Ok(prim_column(to, map1(a, len, |x| x as f64), nulls)),
                _ => Ok(prim_column(
                    to,
                    map1_try(a, len, &nulls, |x| float_to_numeric(x as f64, 6))?,
                    nulls,
                )),
            }
        }
        (Float64, _) => {
            let a = prim::<f64>(op, len)?;
            match to {
                Int16 | Int32 | Int64 => {
                    let r = map1_checked(
                        a,
                        len,
                        &nulls,
                        |x| float_to_int(to, x, |y| y),
                        |_| int_out_of_range(to),
                    )?;
                    Ok(out_int(to, r, nulls))
                }
                Float32 => {
                    let r = map1_checked(
                        a,
                        len,
                        &nulls,
                        |x| {
                            let r = x as f32;
                            (
                                r,
                                (r.is_infinite() && !x.is_infinite()) || (r == 0.0 && x != 0.0),
                            )
                        },
                        |x| {
                            if (x as f32).is_infinite() {
                                float_overflow()
                            } else {
                                float_underflow()
                            }
                        },
                    )?;
                    Ok(prim_column(to, r, nulls))
                }
                _ => Ok(prim_column(
                    to,
                    map1_try(a, len, &nulls, |x| float_to_numeric(x, 15))?,
                    nulls,
                )),
            }
        }
        (Numeric, _) => {
            let a = prim::<crate::types::Numeric>(op, len)?;
            match to {
                Int16 | Int32 | Int64 => {
                    let r = map1_try(a, len, &nulls, |d| numeric_to_int(to, d))?;
                    Ok(out_int(to, r, nulls))
                }
                Float32 => Ok(prim_column(to, map1(a, len, numeric_to_f32), nulls)),
                _ => Ok(prim_column(to, map1(a, len, numeric_to_f64), nulls)),
            }
        }
        _ => Err(cannot_cast(from, to)),
    }
}

// ---------------------------------------------------------------- jsonb

fn jsonb_kind(s: &str) -> &'static str {
    match s.trim_start().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't') | Some(b'f') => "boolean",
        Some(b'n') => "null",
        _ => "numeric",
    }
}

/// jsonb -> bool / number: the jsonb must be a scalar of that kind (22023 otherwise).
fn jsonb_cast(
    to: DataType,
    op: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let s = bytes(op, len)?;
    let want = if to == DataType::Bool {
        "boolean"
    } else {
        "numeric"
    };
    let mut nums: Vec<Numeric> = Vec::with_capacity(len);
    let mut bools: Vec<bool> = Vec::with_capacity(len);
    for i in 0..len {
        if !nulls.is_valid(i) {
            nums.push(Numeric::ZERO);
            bools.push(false);
            continue;
        }
        let t = s.get_str(i).trim();
        let kind = jsonb_kind(t);
        if kind != want {
            return Err(DbError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("cannot cast jsonb {kind} to type {}", to.name()),
            ));
        }
        if to == DataType::Bool {
            bools.push(t.starts_with('t'));
            nums.push(Numeric::ZERO);
        } else {
            let d = t
                .parse::<Decimal>()
                .or_else(|_| Decimal::from_scientific(t))
                .map_err(|_| DbError::invalid_text("numeric", t))?;
            nums.push(Numeric::Finite(d));
            bools.push(false);
        }
    }
    if to == DataType::Bool {
        return Ok(prim_column(to, bools, nulls));
    }
    let n = prim_column(DataType::Numeric, nums, nulls);
    cast_column(&n, to, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn cast1(v: Datum, from: DataType, to: DataType) -> DbResult<Datum> {
        cast_datum(&v, from, to, &EvalContext::default())
    }

    #[test]
    fn numeric_casts_as_postgres() {
        use DataType::*;
        assert_eq!(
            cast1(Datum::Float64(2.5), Float64, Int32).unwrap(),
            Datum::Int32(2)
        );
        assert_eq!(
            cast1(Datum::Float64(3.5), Float64, Int32).unwrap(),
            Datum::Int32(4)
        );
        assert_eq!(
            cast1(Datum::Float64(-2.5), Float64, Int32).unwrap(),
            Datum::Int32(-2)
        );
        assert_eq!(
            cast1(Datum::Float32(3.5), Float32, Int16).unwrap(),
            Datum::Int16(4)
        );
        let n = |s: &str| Datum::Numeric(Decimal::from_str(s).unwrap().into());
        assert_eq!(cast1(n("-2.5"), Numeric, Int32).unwrap(), Datum::Int32(-3));
        assert_eq!(cast1(n("2.5"), Numeric, Int64).unwrap(), Datum::Int64(3));
        let e = cast1(Datum::Int32(40000), Int32, Int16).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22003", "smallint out of range")
        );
        let e = cast1(Datum::Float64(3e9), Float64, Int32).unwrap_err();
        assert_eq!(e.message, "integer out of range");
        assert_eq!(
            cast1(Datum::Float64(f64::NAN), Float64, Int64)
                .unwrap_err()
                .message,
            "bigint out of range"
        );
        let e = cast1(Datum::Float64(1e300), Float64, Float32).unwrap_err();
        assert_eq!(e.message, "value out of range: overflow");
        assert_eq!(
            cast1(Datum::Float64(1.0 / 3.0), Float64, Numeric).unwrap(),
            n("0.333333333333333")
        );
        assert_eq!(
            cast1(Datum::Float64(1e10), Float64, Numeric).unwrap(),
            n("10000000000")
        );
        assert_eq!(
            cast1(Datum::Float32(0.1), Float32, Numeric).unwrap(),
            n("0.1")
        );
        assert_eq!(
            cast1(Datum::Float32(1234567.0), Float32, Numeric).unwrap(),
            n("1234570")
        );
        assert_eq!(
            cast1(Datum::Float64(2.5), Float64, Numeric)
                .unwrap()
                .clone(),
            n("2.5")
        );
        assert_eq!(
            cast1(n("0.1"), Numeric, Float64).unwrap(),
            Datum::Float64(0.1)
        );
        assert_eq!(
            cast1(Datum::Int64(i64::MAX), Int64, Numeric).unwrap(),
            n("9223372036854775807")
        );
        assert_eq!(
            cast1(Datum::Bool(true), Bool, Int32).unwrap(),
            Datum::Int32(1)
        );
        assert_eq!(
            cast1(Datum::Int32(-3), Int32, Bool).unwrap(),
            Datum::Bool(true)
        );
        let e = cast1(Datum::Int32(1), Int32, Date).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42846", "cannot cast type integer to date")
        );
        assert_eq!(cast1(Datum::Null, Int32, Int16).unwrap(), Datum::Null);
    }

    #[test]
    fn string_casts_and_lengths() {
        use DataType::*;
        assert_eq!(
            cast1(Datum::Bool(true), Bool, Text).unwrap(),
            Datum::text("true")
        );
        assert_eq!(
            cast1(Datum::text("abcdef"), Text, Varchar(Some(3))).unwrap(),
            Datum::text("abc")
        );
        assert_eq!(
            cast1(Datum::text("ab"), Text, Bpchar(Some(4))).unwrap(),
            Datum::text("ab  ")
        );
        assert_eq!(
            cast1(Datum::text("ab  "), Bpchar(Some(4)), Text).unwrap(),
            Datum::text("ab")
        );
        assert_eq!(
            cast1(Datum::text("éèà"), Text, Varchar(Some(2))).unwrap(),
            Datum::text("éè")
        );
        assert_eq!(
            cast1(Datum::text("x"), Unknown, Text).unwrap(),
            Datum::text("x")
        );
        let col = Column::from_datums(
            Text,
            &[Datum::text("abcd"), Datum::text("ab   "), Datum::Null],
        );
        let e = check_string_length(&col, Varchar(Some(3))).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22001", "value too long for type character varying(3)")
        );
        let ok = Column::from_datums(Text, &[Datum::text("ab   "), Datum::Null]);
        assert!(check_string_length(&ok, Bpchar(Some(3))).is_ok());
        assert!(check_string_length(&ok, Text).is_ok());
    }

    #[test]
    fn datetime_casts() {
        use DataType::*;
        let day = 86_400_000_000_000i64;
        assert_eq!(
            cast1(Datum::Int32(1), Date, Timestamp).unwrap(),
            Datum::Int64(day)
        );
        assert_eq!(
            cast1(Datum::Int64(-1), Timestamp, Date).unwrap(),
            Datum::Int32(-1)
        );
        let ctx = EvalContext {
            format: crate::types::FormatContext {
                zone: crate::types::Zone::Fixed(3600),
                ..Default::default()
            },
            statement_time_ns: 0,
        };
        // Local midnight at +01:00 is 23:00 UTC the day before.
        let r = cast_datum(&Datum::Int32(1), Date, TimestampTz, &ctx).unwrap();
        assert_eq!(r, Datum::Int64(day - 3_600_000_000_000));
        let r = cast_datum(&Datum::Int64(day - 1), TimestampTz, Date, &ctx).unwrap();
        assert_eq!(r, Datum::Int32(1));
        let r = cast_datum(&Datum::Int64(0), TimestampTz, Timestamp, &ctx).unwrap();
        assert_eq!(r, Datum::Int64(3_600_000_000_000));
        let e = cast1(Datum::Int32(200_000), Date, Timestamp).unwrap_err();
        assert_eq!(e.code, "22008");
    }

    #[test]
    fn jsonb_scalars() {
        use DataType::*;
        assert_eq!(
            cast1(Datum::text("1.50"), Jsonb, Numeric).unwrap(),
            Datum::Numeric(Decimal::from_str("1.50").unwrap().into())
        );
        assert_eq!(
            cast1(Datum::text("2.5"), Jsonb, Int32).unwrap(),
            Datum::Int32(3)
        );
        assert_eq!(
            cast1(Datum::text("true"), Jsonb, Bool).unwrap(),
            Datum::Bool(true)
        );
        let e = cast1(Datum::text("\"a\""), Jsonb, Int32).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22023", "cannot cast jsonb string to type integer")
        );
    }

    #[test]
    fn column_casts_match_row_casts() {
        use super::super::tests::{datum_eq, rand_column};
        let pairs = [
            (DataType::Int64, DataType::Int16),
            (DataType::Int16, DataType::Int64),
            (DataType::Int32, DataType::Float64),
            (DataType::Float64, DataType::Int32),
            (DataType::Float64, DataType::Float32),
            (DataType::Numeric, DataType::Int32),
            (DataType::Int32, DataType::Numeric),
            (DataType::Float32, DataType::Float64),
        ];
        let ctx = EvalContext::default();
        for (k, (from, to)) in pairs.into_iter().enumerate() {
            for trial in 0..6u64 {
                let col = rand_column(from, 64, k as u64 * 100 + trial, trial % 2 == 0);
                let whole = cast_column(&col, to, &ctx);
                let rows: Vec<DbResult<Datum>> = (0..col.len())
                    .map(|i| cast_datum(&col.datum(i), from, to, &ctx))
                    .collect();
                match whole {
                    Ok(c) => {
                        for (i, r) in rows.iter().enumerate() {
                            let r = r
                                .as_ref()
                                .expect("row cast failed but column cast succeeded");
                            assert!(
                                datum_eq(&c.datum(i), r),
                                "{from:?}->{to:?} row {i}: {:?} vs {:?}",
                                c.datum(i),
                                r
                            );
                        }
                    }
                    Err(e) => {
                        let first = rows
                            .iter()
                            .find_map(|r| r.as_ref().err())
                            .expect("column cast failed but rows did not");
                        assert_eq!(first.code, e.code);
                    }
                }
            }
        }
    }
}
