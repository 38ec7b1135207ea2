//! PostgreSQL text format of every type: input (literals, text parameters,
//! COPY text) and output (simple-query results, text-format columns).
//! Owns: PostgreSQL 15's input grammars and error messages (bool, integers,
//! floats, numeric, strings with length limits, bytea hex/escape, date,
//! timestamp[tz] with fixed zone offsets, interval in postgres and ISO 8601
//! styles, jsonb normalization) and its default output styles (DateStyle ISO,
//! IntervalStyle postgres, extra_float_digits 1, bytea_output hex).
//! Must not: allocate per value on output (callers pass a reusable buffer).

use std::fmt::Write as _;
use std::io::Write as _;

use rust_decimal::Decimal;

use super::datetime::{
    self as dt, DateUnit, MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SEC,
    NANOS_PER_DAY, NANOS_PER_SEC,
};
use super::{DataType, Datum, FormatContext, Interval, Numeric, Zone};
use crate::error::{sqlstate, DbError, DbResult};

// ===========================================================================
// Entry points
// ===========================================================================

/// Parses PostgreSQL text input for `ty` (e.g. `'t'`, `' 42 '`, `'2026-01-01 00:00:00+00'`).
/// Errors: 22P02 invalid_text_representation, 22003 out of range, 22007/22008 datetime.
pub fn parse_text(ty: DataType, input: &str, ctx: &FormatContext) -> DbResult<Datum> {
    Ok(match ty {
        DataType::Bool => Datum::Bool(parse_bool(input)?),
        DataType::Int16 => {
            Datum::Int16(parse_int(input, ty, i16::MIN as i64, i16::MAX as i64)? as i16)
        }
        DataType::Int32 => {
            Datum::Int32(parse_int(input, ty, i32::MIN as i64, i32::MAX as i64)? as i32)
        }
        DataType::Int64 => Datum::Int64(parse_int(input, ty, i64::MIN, i64::MAX)?),
        DataType::Float32 => Datum::Float32(parse_float4(input)?),
        DataType::Float64 => Datum::Float64(parse_float8(input)?),
        DataType::Numeric => Datum::Numeric(parse_numeric(input)?),
        DataType::Text
        | DataType::Unknown
        | DataType::Varchar(_)
        | DataType::Bpchar(_)
        | DataType::Name
        | DataType::Char => Datum::Bytes(coerce_string(ty, input, false)?.into_bytes()),
        DataType::Oid => Datum::Int64(parse_oid(input)?),
        DataType::Bytea => Datum::Bytes(parse_bytea(input)?),
        DataType::Date => Datum::Int32(parse_date(input, ctx)?),
        DataType::Timestamp => Datum::Int64(parse_timestamp(input, ctx)?),
        DataType::TimestampTz => Datum::Int64(parse_timestamptz(input, ctx)?),
        DataType::Interval => Datum::Interval(parse_interval(input)?),
        DataType::Jsonb => Datum::Bytes(parse_jsonb(input)?.into_bytes()),
        DataType::Array(e) => Datum::Bytes(super::array::ArrayValue::parse_text(input, e, ctx)?.encode(e)),
        DataType::Record => {
            return Err(DbError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "input of anonymous composite types is not implemented",
            ))
        }
    })
}

/// Appends the PostgreSQL text output of `value` (not NULL) to `out`.
/// The datum's variant decides the encoding where `ty` does not (a mismatched
/// pair prints the datum as its own natural type rather than failing).
pub fn format_text(ty: DataType, value: &Datum, ctx: &FormatContext, out: &mut Vec<u8>) {
    match (ty, value) {
        (_, Datum::Null) => {}
        (DataType::Date, Datum::Int32(i32::MAX))
        | (DataType::Timestamp | DataType::TimestampTz, Datum::Int64(i64::MAX)) => {
            out.extend_from_slice(b"infinity")
        }
        (DataType::Date, Datum::Int32(i32::MIN))
        | (DataType::Timestamp | DataType::TimestampTz, Datum::Int64(i64::MIN)) => {
            out.extend_from_slice(b"-infinity")
        }
        (DataType::Date, Datum::Int32(days)) => format_date(*days as i64, out),
        (DataType::Timestamp, Datum::Int64(ns)) => format_timestamp(*ns, out),
        (DataType::TimestampTz, Datum::Int64(ns)) => {
            format_timestamptz(*ns, ctx.zone, out)
        }
        (DataType::Float32, Datum::Float32(v)) if ctx.extra_float_digits <= 0 => {
            format_float_precision(*v as f64, 6 + ctx.extra_float_digits, out)
        }
        (_, Datum::Float64(v)) if ctx.extra_float_digits <= 0 => {
            let digits = if ty == DataType::Float32 { 6 } else { 15 };
            format_float_precision(*v, digits + ctx.extra_float_digits, out)
        }
        (DataType::Bytea, Datum::Bytes(b)) => format_bytea(b, out),
        (DataType::Record, Datum::Bytes(b)) => super::record::format(b, ctx, out),
        (DataType::Array(e), Datum::Bytes(b)) => match super::array::ArrayValue::decode(b, e) {
            Ok(v) => v.format_text(e, ctx, out),
            Err(_) => out.extend_from_slice(b"{}"),
        },
        (DataType::Float32, Datum::Float64(v)) => format_float4(*v as f32, out),
        (_, Datum::Bool(b)) => out.push(if *b { b't' } else { b'f' }),
        (_, Datum::Int16(v)) => write_int(*v as i64, out),
        (_, Datum::Int32(v)) => write_int(*v as i64, out),
        (_, Datum::Int64(v)) => write_int(*v, out),
        (_, Datum::Float32(v)) => format_float4(*v, out),
        (_, Datum::Float64(v)) => format_float8(*v, out),
        (_, Datum::Numeric(d)) => format_numeric(d, out),
        (_, Datum::Bytes(b)) => out.extend_from_slice(b),
        (_, Datum::Interval(iv)) => format_interval(*iv, out),
    }
}

// ===========================================================================
// Shared helpers
// ===========================================================================

/// C `isspace` in the "C" locale, which PostgreSQL's input functions use.
fn is_pg_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn pg_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_ascii() && is_pg_space(c as u8))
}

fn invalid_syntax(type_name: &str, input: &str) -> DbError {
    DbError::invalid_text(type_name, input)
}

fn nul_byte_error() -> DbError {
    DbError::new("22021", "invalid byte sequence for encoding \"UTF8\": 0x00")
}

fn write_int(v: i64, out: &mut Vec<u8>) {
    let _ = write!(out, "{v}");
}

/// A fixed stack buffer that `core::fmt` can write into (no heap allocation).
struct StackBuf {
    buf: [u8; 64],
    len: usize,
}

impl StackBuf {
    fn new() -> Self {
        StackBuf {
            buf: [0; 64],
            len: 0,
        }
    }
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

// ===========================================================================
// bool
// ===========================================================================

/// PostgreSQL boolin: any unique prefix of true/false/yes/no, on/off, 1/0.
pub fn parse_bool(input: &str) -> DbResult<bool> {
    let lower = pg_trim(input).to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| lower.len() >= min && word.starts_with(lower.as_str());
    let value = match lower.as_bytes().first() {
        Some(b't') if prefix_of("true", 1) => Some(true),
        Some(b'f') if prefix_of("false", 1) => Some(false),
        Some(b'y') if prefix_of("yes", 1) => Some(true),
        Some(b'n') if prefix_of("no", 1) => Some(false),
        Some(b'o') if prefix_of("on", 2) => Some(true),
        Some(b'o') if prefix_of("off", 2) => Some(false),
        Some(b'1') if lower.len() == 1 => Some(true),
        Some(b'0') if lower.len() == 1 => Some(false),
        _ => None,
    };
    value.ok_or_else(|| invalid_syntax("boolean", input))
}

// ===========================================================================
// integers
// ===========================================================================

/// PostgreSQL 15 pg_strtoint16/32/64: spaces, sign, decimal digits, spaces.
fn parse_int(input: &str, ty: DataType, min: i64, max: i64) -> DbResult<i64> {
    let b = input.as_bytes();
    let mut i = 0;
    while i < b.len() && is_pg_space(b[i]) {
        i += 1;
    }
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let limit: i128 = if neg { -(min as i128) } else { max as i128 };
    let start = i;
    let mut acc: i128 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        acc = acc * 10 + (b[i] - b'0') as i128;
        if acc > limit {
            return Err(DbError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!(
                    "value \"{input}\" is out of range for type {}",
                    ty.input_name()
                ),
            ));
        }
        i += 1;
    }
    while i < b.len() && is_pg_space(b[i]) {
        i += 1;
    }
    if i == start || i != b.len() || !b[start].is_ascii_digit() {
        return Err(invalid_syntax(ty.input_name(), input));
    }
    Ok(if neg { -acc } else { acc } as i64)
}

// ===========================================================================
// floats
// ===========================================================================

/// NaN / Infinity spellings float8in accepts, case-insensitively.
fn float_special(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    match lower.as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "infinity" | "+infinity" | "inf" | "+inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Whether the mantissa of a decimal float literal has a non-zero digit.
fn mantissa_nonzero(s: &str) -> bool {
    s.bytes()
        .take_while(|c| !matches!(c, b'e' | b'E'))
        .any(|c| (b'1'..=b'9').contains(&c))
}

/// Only decimal float syntax (Rust's parser also takes words we handle apart).
fn looks_decimal(s: &str) -> bool {
    s.bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
}

fn parse_float_common<T: std::str::FromStr + Copy>(
    input: &str,
    type_name: &str,
    special: impl Fn(f64) -> T,
    is_inf: impl Fn(T) -> bool,
    is_zero: impl Fn(T) -> bool,
) -> DbResult<T> {
    let s = pg_trim(input);
    if let Some(v) = float_special(s) {
        return Ok(special(v));
    }
    let v: T = match s.parse::<T>() {
        Ok(v) if looks_decimal(s) && !s.is_empty() => v,
        _ => return Err(invalid_syntax(type_name, input)),
    };
    if is_inf(v) || (is_zero(v) && mantissa_nonzero(s)) {
        return Err(DbError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("\"{s}\" is out of range for type {type_name}"),
        ));
    }
    Ok(v)
}

/// float8in: decimal or exponent syntax, NaN, [+-]Infinity, [+-]inf.
pub fn parse_float8(input: &str) -> DbResult<f64> {
    parse_float_common(
        input,
        "double precision",
        |v| v,
        |v: f64| v.is_infinite(),
        |v: f64| v == 0.0,
    )
}

/// float4in: as float8in, rounded to single precision.
pub fn parse_float4(input: &str) -> DbResult<f32> {
    parse_float_common(
        input,
        "real",
        |v| v as f32,
        |v: f32| v.is_infinite(),
        |v: f32| v == 0.0,
    )
}

/// float8out (extra_float_digits = 1): the shortest digits that read back
/// exactly (PostgreSQL's Ryu: strictly inside the rounding interval, the
/// closest such, ties to even), in exponent form when the decimal exponent is
/// < -4 or >= 15: `1.5`, `1e+20`, `1.2345e-05`, `NaN`, `-Infinity`.
pub fn format_float8(v: f64, out: &mut Vec<u8>) {
    if !special_float(v.is_nan(), v.is_infinite(), v < 0.0, out) {
        let buf = shortest_digits(
            v,
            17,
            split_f64,
            |p, b| write!(b, "{:.*e}", p, v),
            |s| s.parse::<f64>().is_ok_and(|r| r == v),
        );
        layout_float(buf.as_bytes(), 15, out);
    }
}

/// float8out / float4out with `extra_float_digits <= 0`: C's `%.{precision}g`
/// (precision 15 + extra_float_digits for float8, 6 + it for float4), as
/// PostgreSQL 11 and older printed by default.
pub fn format_float_precision(v: f64, precision: i32, out: &mut Vec<u8>) {
    if special_float(v.is_nan(), v.is_infinite(), v < 0.0, out) {
        return;
    }
    let precision = precision.clamp(1, 17) as usize;
    let mut buf = String::with_capacity(32);
    let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("{:.*e}", precision - 1, v));
    // %g drops trailing zeros of the mantissa.
    let (mant, exp) = buf.split_once('e').unwrap_or((buf.as_str(), "0"));
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    let sci = format!("{mant}e{exp}");
    layout_float(sci.as_bytes(), precision as i32, out);
}

/// float4out: as float8out with single-precision digits and threshold 6.
pub fn format_float4(v: f32, out: &mut Vec<u8>) {
    if !special_float(v.is_nan(), v.is_infinite(), v < 0.0, out) {
        let buf = shortest_digits(
            v,
            9,
            split_f32,
            |p, b| write!(b, "{:.*e}", p, v),
            |s| s.parse::<f32>().is_ok_and(|r| r == v),
        );
        layout_float(buf.as_bytes(), 6, out);
    }
}

/// Finds PostgreSQL's shortest digits for a finite float: starting from the
/// length of Rust's shortest form (which may touch the rounding interval's
/// bounds, which Ryu as PostgreSQL builds it excludes), the correctly rounded
/// `p`-digit form for growing `p` until it reads back and lies strictly inside.
fn shortest_digits<T: Copy + std::fmt::LowerExp>(
    v: T,
    max_digits: usize,
    split: impl Fn(T) -> (u64, i32, bool),
    exact: impl Fn(usize, &mut StackBuf) -> std::fmt::Result,
    reads_back: impl Fn(&str) -> bool,
) -> StackBuf {
    let mut buf = StackBuf::new();
    let _ = write!(buf, "{v:e}");
    let (start_digits, _) = sci_parts(buf.as_bytes());
    let (mant, e2, lower_closer) = split(v);
    if mant == 0 {
        return buf;
    }
    for p in start_digits.max(1)..=max_digits {
        let mut cand = StackBuf::new();
        if exact(p - 1, &mut cand).is_err() {
            break;
        }
        let text = std::str::from_utf8(cand.as_bytes()).unwrap_or("");
        if reads_back(text) && !on_rounding_bound(cand.as_bytes(), mant, e2, lower_closer) {
            return cand;
        }
    }
    buf
}

/// (significant digit count, decimal exponent) of a `{:e}` string.
fn sci_parts(sci: &[u8]) -> (usize, i32) {
    let epos = sci.iter().position(|&c| c == b'e').unwrap_or(sci.len());
    let digits = sci[..epos].iter().filter(|c| c.is_ascii_digit()).count();
    let exp = std::str::from_utf8(sci.get(epos + 1..).unwrap_or(b"0"))
        .ok()
        .and_then(|s| s.parse().ok());
    (digits, exp.unwrap_or(0))
}

/// |v| = mant × 2^e2; the flag says the next-lower float is closer (a power of two).
fn split_f64(v: f64) -> (u64, i32, bool) {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    if exp == 0 {
        (frac, -1074, false)
    } else {
        (frac | 1 << 52, exp - 1075, frac == 0 && exp > 1)
    }
}

fn split_f32(v: f32) -> (u64, i32, bool) {
    let bits = v.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = (bits & ((1 << 23) - 1)) as u64;
    if exp == 0 {
        (frac, -149, false)
    } else {
        (frac | 1 << 23, exp - 150, frac == 0 && exp > 1)
    }
}

/// Whether the decimal in `sci` equals one of the two rounding-interval bounds
/// of mant × 2^e2 (half-way to the neighbouring floats), exactly.
fn on_rounding_bound(sci: &[u8], mant: u64, e2: i32, lower_closer: bool) -> bool {
    let (n, exp) = sci_parts(sci);
    let epos = sci.iter().position(|&c| c == b'e').unwrap_or(sci.len());
    let d = sci[..epos]
        .iter()
        .filter(|c| c.is_ascii_digit())
        .fold(0u64, |a, &c| a * 10 + (c - b'0') as u64);
    let k = exp - (n as i32 - 1);
    let m = mant as u128;
    let upper = (2 * m + 1, e2 - 1);
    let lower = if lower_closer {
        (4 * m - 1, e2 - 2)
    } else {
        (2 * m - 1, e2 - 1)
    };
    decimal_equals_dyadic(d, k, upper.0, upper.1) || decimal_equals_dyadic(d, k, lower.0, lower.1)
}

/// d × 10^k == odd × 2^t, exactly (`odd` is odd).
fn decimal_equals_dyadic(d: u64, k: i32, odd: u128, t: i32) -> bool {
    if d == 0 {
        return false;
    }
    let a = d.trailing_zeros() as i32;
    let d_odd = (d >> a) as u128;
    if a + k != t {
        return false;
    }
    let pow5 = |n: i32| 5u128.checked_pow(n.unsigned_abs());
    if k >= 0 {
        pow5(k).and_then(|p| d_odd.checked_mul(p)) == Some(odd)
    } else {
        pow5(k).and_then(|p| odd.checked_mul(p)) == Some(d_odd)
    }
}

fn special_float(nan: bool, inf: bool, neg: bool, out: &mut Vec<u8>) -> bool {
    if nan {
        out.extend_from_slice(b"NaN");
    } else if inf {
        out.extend_from_slice(if neg { b"-Infinity" } else { b"Infinity" });
    }
    nan || inf
}

/// Re-lays Rust's shortest `{:e}` output ("-1.2345e-5") the way PostgreSQL's
/// Ryu-based float output does ("-1.2345e-05", "0.0001", "123456789012345").
fn layout_float(sci: &[u8], threshold: i32, out: &mut Vec<u8>) {
    let (neg, body) = match sci.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, sci),
    };
    let epos = body.iter().position(|&c| c == b'e').unwrap_or(body.len());
    let (mant, exp_part) = body.split_at(epos);
    let exp: i32 = std::str::from_utf8(exp_part.get(1..).unwrap_or(b"0"))
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut digits = [0u8; 40];
    let mut n = 0;
    for &c in mant.iter().filter(|c| c.is_ascii_digit()) {
        if n < digits.len() {
            digits[n] = c;
            n += 1;
        }
    }
    let digits = &digits[..n.max(1)];
    if neg {
        out.push(b'-');
    }
    if exp < -4 || exp >= threshold {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        for i in 0..int_len {
            out.push(*digits.get(i).unwrap_or(&b'0'));
        }
        if digits.len() > int_len {
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    } else {
        out.extend_from_slice(b"0.");
        for _ in 0..(-exp - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(digits);
    }
}

// ===========================================================================
// numeric
// ===========================================================================

/// 2^96 - 1, the largest mantissa rust_decimal holds.
const MAX_MANTISSA: u128 = (1u128 << 96) - 1;

pub(crate) fn numeric_overflow() -> DbError {
    DbError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

/// numeric_in: `[+-]digits[.digits][e[+-]digits]`; the scale is kept as
/// written ('1.50' has scale 2). Values beyond 28 fractional digits are
/// rounded half away from zero; integer parts beyond rust_decimal's 96-bit
/// mantissa fail with 22003. NaN, [+-]Infinity and [+-]inf (any case) are
/// numeric's special values.
pub fn parse_numeric(input: &str) -> DbResult<Numeric> {
    let s = pg_trim(input);
    if let Some(special) = Numeric::parse_special(s) {
        return Ok(special);
    }
    let num = scan_decimal_literal(s.as_bytes()).filter(|n| n.end == s.len());
    let num = num.ok_or_else(|| invalid_syntax("numeric", input))?;
    let mut digits = Vec::with_capacity(num.int_digits.len() + num.frac_digits.len());
    digits.extend_from_slice(num.int_digits);
    digits.extend_from_slice(num.frac_digits);
    let scale = num.frac_digits.len() as i64 - num.exponent;
    decimal_from_digits(&digits, scale, num.negative)
        .map(Numeric::Finite)
        .ok_or_else(numeric_overflow)
}

/// The parts of a decimal literal `[+-]digits[.digits][e[+-]digits]`.
struct DecimalLiteral<'a> {
    negative: bool,
    int_digits: &'a [u8],
    frac_digits: &'a [u8],
    exponent: i64,
    /// Byte offset just past the literal.
    end: usize,
}

/// Scans a decimal literal at the start of `b` (no surrounding spaces).
/// None when there is no digit or the exponent is malformed or beyond ±131071.
fn scan_decimal_literal(b: &[u8]) -> Option<DecimalLiteral<'_>> {
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if matches!(b.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &b[int_start..i];
    let mut frac_digits: &[u8] = &[];
    if b.get(i) == Some(&b'.') {
        i += 1;
        let fs = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = &b[fs..i];
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    let mut exponent = 0i64;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let eneg = b.get(i) == Some(&b'-');
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let es = i;
        while i < b.len() && b[i].is_ascii_digit() {
            exponent = (exponent * 10 + (b[i] - b'0') as i64).min(1 << 40);
            i += 1;
        }
        if i == es || exponent > 131_071 {
            return None;
        }
        if eneg {
            exponent = -exponent;
        }
    }
    Some(DecimalLiteral {
        negative,
        int_digits,
        frac_digits,
        exponent,
        end: i,
    })
}

/// Builds a Decimal from ASCII digits meaning `int(digits) × 10^-scale`,
/// rounding half away from zero to at most 28 fractional digits (fewer when
/// the 96-bit mantissa needs it). None when the integer part does not fit.
/// Zero never carries a sign (PostgreSQL has no negative zero numeric).
pub(crate) fn decimal_from_digits(digits: &[u8], scale: i64, negative: bool) -> Option<Decimal> {
    let Some(start) = digits.iter().position(|&c| c != b'0') else {
        return Decimal::try_from_i128_with_scale(0, scale.clamp(0, 28) as u32).ok();
    };
    let digits = &digits[start..];
    let int_len = digits.len() as i64 - scale;
    if int_len > 29 {
        return None;
    }
    let make = |m: u128, sc: u32| {
        let m = m as i128;
        Decimal::try_from_i128_with_scale(if negative { -m } else { m }, sc).ok()
    };
    if scale <= 0 {
        let mut m: u128 = 0;
        for &c in digits {
            m = m * 10 + (c - b'0') as u128;
        }
        for _ in 0..(-scale) {
            m *= 10;
        }
        return if m <= MAX_MANTISSA { make(m, 0) } else { None };
    }
    let mut keep = scale.min(28).min(29 - int_len);
    loop {
        let kept = int_len + keep;
        let mut m: u128 = 0;
        for &c in digits.iter().take(kept.max(0) as usize) {
            m = m * 10 + (c - b'0') as u128;
        }
        let next = if kept >= 0 {
            digits.get(kept as usize).copied().unwrap_or(b'0')
        } else {
            b'0'
        };
        if next >= b'5' {
            m += 1;
        }
        if m <= MAX_MANTISSA {
            return make(m, keep.max(0) as u32);
        }
        if keep <= 0 {
            return None;
        }
        keep -= 1;
    }
}

/// numeric_out: the value with exactly its scale ('1.50'), never '-0'.
pub fn format_numeric(n: &Numeric, out: &mut Vec<u8>) {
    let Numeric::Finite(d) = n else {
        let _ = write!(out, "{n}");
        return;
    };
    if d.is_zero() && d.is_sign_negative() {
        let mut z = *d;
        z.set_sign_positive(true);
        let _ = write!(out, "{z}");
    } else {
        let _ = write!(out, "{d}");
    }
}

// ===========================================================================
// strings
// ===========================================================================

/// Applies a varchar(n)/char(n) length to `s`, as PostgreSQL's input functions
/// (explicit = false: excess characters must all be spaces, else 22001) or an
/// explicit cast (explicit = true: silently truncates). char(n) pads with
/// spaces to n characters. Other types return `s` unchanged. NUL is rejected.
/// oidin: an unsigned 32-bit integer; like PostgreSQL, a negative value
/// down to -2^31 wraps (`'-1'::oid` is 4294967295).
pub fn parse_oid(input: &str) -> DbResult<i64> {
    let v = parse_int(input, DataType::Oid, i32::MIN as i64, u32::MAX as i64)?;
    Ok(if v < 0 { v + (1i64 << 32) } else { v })
}

pub fn coerce_string(ty: DataType, s: &str, explicit: bool) -> DbResult<String> {
    if s.as_bytes().contains(&0) {
        return Err(nul_byte_error());
    }
    let (limit, name) = match ty {
        DataType::Varchar(Some(n)) => (n as usize, "character varying"),
        DataType::Bpchar(Some(n)) => (n as usize, "character"),
        // name keeps 63 bytes (NAMEDATALEN - 1) and "char" one byte, cut at a character boundary.
        DataType::Name | DataType::Char => {
            let max = if ty == DataType::Name { 63 } else { 1 };
            let mut cut = s.len().min(max);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            return Ok(s[..cut].to_string());
        }
        _ => return Ok(s.to_string()),
    };
    let cut = s
        .char_indices()
        .nth(limit)
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if !explicit && s[cut..].bytes().any(|c| c != b' ') {
        return Err(DbError::new(
            sqlstate::STRING_DATA_RIGHT_TRUNCATION,
            format!("value too long for type {name}({limit})"),
        ));
    }
    let mut kept = s[..cut].to_string();
    if matches!(ty, DataType::Bpchar(_)) {
        let chars = kept.chars().count();
        kept.extend(std::iter::repeat_n(' ', limit.saturating_sub(chars)));
    }
    Ok(kept)
}

// ===========================================================================
// bytea
// ===========================================================================

/// byteain: `\x` hex format (whitespace allowed between byte pairs) or the
/// traditional escape format (`\\` and `\ooo` octal).
pub fn parse_bytea(input: &str) -> DbResult<Vec<u8>> {
    let b = input.as_bytes();
    if b.len() >= 2 && b[0] == b'\\' && b[1] == b'x' {
        return parse_bytea_hex(input, &b[2..]);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if let Some(v) = octal_escape(&b[i + 1..]) {
            out.push(v);
            i += 4;
        } else {
            return Err(DbError::new(
                sqlstate::INVALID_TEXT_REPRESENTATION,
                "invalid input syntax for type bytea",
            ));
        }
    }
    Ok(out)
}

/// `ooo` with the first digit 0-3 and the others 0-7.
fn octal_escape(b: &[u8]) -> Option<u8> {
    match b {
        [a @ b'0'..=b'3', c @ b'0'..=b'7', d @ b'0'..=b'7', ..] => {
            Some((a - b'0') * 64 + (c - b'0') * 8 + (d - b'0'))
        }
        _ => None,
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn parse_bytea_hex(input: &str, hex: &[u8]) -> DbResult<Vec<u8>> {
    let mut out = Vec::with_capacity(hex.len() / 2);
    let mut i = 0;
    let bad_digit = |at: usize| {
        let rest = &input[input.len() - hex.len() + at..];
        let ch: String = rest.chars().take(1).collect();
        DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("invalid hexadecimal digit: \"{ch}\""),
        )
    };
    while i < hex.len() {
        let c = hex[i];
        if matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let hi = hex_value(c).ok_or_else(|| bad_digit(i))?;
        let Some(&c2) = hex.get(i + 1) else {
            return Err(DbError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "invalid hexadecimal data: odd number of digits",
            ));
        };
        let lo = hex_value(c2).ok_or_else(|| bad_digit(i + 1))?;
        out.push(hi << 4 | lo);
        i += 2;
    }
    Ok(out)
}

/// byteaout with bytea_output = hex: `\x` then two lower-case digits a byte.
pub fn format_bytea(b: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 + 2 * b.len());
    out.extend_from_slice(b"\\x");
    for &c in b {
        out.push(HEX[(c >> 4) as usize]);
        out.push(HEX[(c & 15) as usize]);
    }
}

// ===========================================================================
// date / timestamp / timestamptz input
// ===========================================================================

/// Why a date/time string was rejected (PostgreSQL's DTERR_* codes).
#[derive(Debug, Clone, Copy, PartialEq)]
enum DtErr {
    BadFormat,
    FieldOverflow,
    /// Field overflow that a different DateStyle might have avoided.
    MdFieldOverflow,
    TzOverflow,
    /// A zone name ('Mars/Olympus') the tz database does not have.
    UnknownZone,
}

fn dt_error(kind: DtErr, type_name: &str, input: &str) -> DbError {
    match kind {
        DtErr::BadFormat => DbError::new(
            sqlstate::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type {type_name}: \"{input}\""),
        ),
        DtErr::FieldOverflow => field_overflow(input),
        DtErr::MdFieldOverflow => {
            field_overflow(input).with_hint("Perhaps you need a different \"datestyle\" setting.")
        }
        DtErr::TzOverflow => DbError::new(
            "22009",
            format!("time zone displacement out of range: \"{input}\""),
        ),
        DtErr::UnknownZone => {
            let name = input
                .split_whitespace()
                .find(|w| w.contains('/') && w.bytes().any(|b| b.is_ascii_alphabetic()))
                .unwrap_or(input);
            DbError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("time zone \"{}\" not recognized", name.to_ascii_lowercase()),
            )
        }
    }
}

fn field_overflow(input: &str) -> DbError {
    DbError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{input}\""),
    )
}

/// A date/time literal split into its local date, time of day and zone.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DateTimeFields {
    days: i64,
    /// Nanoseconds since local midnight (may reach 24:00:00).
    time_ns: i64,
    /// The zone the literal names ('+05:30', 'EST', 'Europe/Paris'), if any.
    zone: Option<Zone>,
}

/// The special words date/timestamp input accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum SpecialWord {
    Epoch,
    Now,
    /// Midnight `n` days from today (today = 0, tomorrow = 1, yesterday = -1).
    Today(i64),
    /// `infinity` / `-infinity` (true): stored as the type's extreme value, as PostgreSQL does.
    Infinity(bool),
}

fn special_word(s: &str) -> Option<SpecialWord> {
    Some(match s.to_ascii_lowercase().as_str() {
        "epoch" => SpecialWord::Epoch,
        "now" => SpecialWord::Now,
        "today" => SpecialWord::Today(0),
        "tomorrow" => SpecialWord::Today(1),
        "yesterday" => SpecialWord::Today(-1),
        "infinity" | "+infinity" => SpecialWord::Infinity(false),
        "-infinity" => SpecialWord::Infinity(true),
        _ => return None,
    })
}

/// Current UTC time in ns since the epoch.
fn now_utc_ns() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Local "now" in a zone, truncated to microseconds like PostgreSQL.
fn now_local_ns(zone: Zone) -> i64 {
    let ns = i64::try_from(zone.utc_to_local(now_utc_ns() as i128)).unwrap_or(i64::MAX);
    ns - ns.rem_euclid(1000)
}

/// date_in: ISO 'YYYY-MM-DD' (also with a time part, 'YYYYMMDD', 'MM/DD/YYYY',
/// ' BC'), 'epoch', 'today', 'tomorrow', 'yesterday', 'now'.
pub fn parse_date(input: &str, ctx: &FormatContext) -> DbResult<i32> {
    let s = pg_trim(input);
    let days = match special_word(s) {
        Some(SpecialWord::Epoch) => 0,
        Some(SpecialWord::Now) | Some(SpecialWord::Today(0)) => {
            now_local_ns(ctx.zone).div_euclid(NANOS_PER_DAY)
        }
        Some(SpecialWord::Today(n)) => {
            now_local_ns(ctx.zone).div_euclid(NANOS_PER_DAY) + n
        }
        Some(SpecialWord::Infinity(neg)) => return Ok(if neg { i32::MIN } else { i32::MAX }),
        None => {
            parse_datetime_fields(s)
                .map_err(|e| dt_error(e, "date", input))?
                .days
        }
    };
    dt::checked_date(days).map_err(|_| {
        DbError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date out of range: \"{input}\""),
        )
    })
}

fn timestamp_range_error(input: &str) -> DbError {
    DbError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("timestamp out of range: \"{input}\""),
    )
}

/// timestamp_in: as timestamptz_in, but a zone in the literal is ignored.
pub fn parse_timestamp(input: &str, ctx: &FormatContext) -> DbResult<i64> {
    parse_timestamp_common(input, ctx, DataType::Timestamp)
}

/// timestamptz_in: 'YYYY-MM-DD[ |T]HH:MM[:SS[.f]]' with an optional zone
/// ('Z', 'UTC', '+05', '+05:30', '-0800', a few fixed abbreviations); without
/// one the session offset applies. Sub-microsecond digits round to µs.
pub fn parse_timestamptz(input: &str, ctx: &FormatContext) -> DbResult<i64> {
    parse_timestamp_common(input, ctx, DataType::TimestampTz)
}

fn parse_timestamp_common(input: &str, ctx: &FormatContext, ty: DataType) -> DbResult<i64> {
    let s = pg_trim(input);
    let with_tz = ty == DataType::TimestampTz;
    let zone = ctx.zone;
    let ns: i128 = match special_word(s) {
        Some(SpecialWord::Epoch) => 0,
        Some(SpecialWord::Now) if with_tz => now_utc_ns() as i128,
        Some(SpecialWord::Now) => zone.utc_to_local(now_utc_ns() as i128),
        Some(SpecialWord::Today(n)) => {
            let midnight = (now_local_ns(zone).div_euclid(NANOS_PER_DAY) + n) as i128
                * NANOS_PER_DAY as i128;
            if with_tz {
                zone.local_to_utc(midnight)
            } else {
                midnight
            }
        }
        Some(SpecialWord::Infinity(neg)) => return Ok(if neg { i64::MIN } else { i64::MAX }),
        None => {
            let type_name = ty.input_name();
            let f = parse_datetime_fields(s).map_err(|e| dt_error(e, type_name, input))?;
            if !(dt::MIN_DATE_DAYS as i64..dt::END_DATE_DAYS as i64).contains(&f.days) {
                return Err(timestamp_range_error(input));
            }
            let local = f.days as i128 * NANOS_PER_DAY as i128 + f.time_ns as i128;
            match (with_tz, f.zone) {
                (false, _) => local,
                (true, Some(z)) => z.local_to_utc(local),
                (true, None) => zone.local_to_utc(local),
            }
        }
    };
    i64::try_from(ns).map_err(|_| timestamp_range_error(input))
}

/// A byte cursor over a date/time literal.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn skip_spaces(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(is_pg_space) {
            self.i += 1;
        }
        self.i - start
    }
    fn run(&mut self, pred: impl Fn(u8) -> bool) -> &'a [u8] {
        let start = self.i;
        while self.peek().is_some_and(&pred) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }
    fn digits(&mut self) -> &'a [u8] {
        self.run(|c| c.is_ascii_digit())
    }
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }
}

/// Value of a digit run; None when it is empty or exceeds i64.
fn digits_value(d: &[u8]) -> Option<i64> {
    if d.is_empty() {
        return None;
    }
    d.iter().try_fold(0i64, |acc, &c| {
        acc.checked_mul(10)?.checked_add((c - b'0') as i64)
    })
}

/// Parses `date [T|space time] [zone] [BC|AD]` (already trimmed).
fn parse_datetime_fields(s: &str) -> Result<DateTimeFields, DtErr> {
    let mut c = Cursor {
        s: s.as_bytes(),
        i: 0,
    };
    let (year, month, day, md_ambiguous) = parse_date_part(&mut c)?;
    let had_t = c.eat(b'T') || c.eat(b't');
    let had_space = c.skip_spaces() > 0;
    let mut time_ns = 0;
    if c.peek().is_some_and(|b| b.is_ascii_digit()) && (had_t || had_space) {
        time_ns = parse_time_part(&mut c)?;
    } else if had_t {
        return Err(DtErr::BadFormat);
    }
    c.skip_spaces();
    let zone = parse_zone(&mut c)?;
    c.skip_spaces();
    let bc = parse_era(&mut c);
    c.skip_spaces();
    if !c.done() {
        return Err(DtErr::BadFormat);
    }
    let year = match (bc, year) {
        (_, 0) => return Err(DtErr::FieldOverflow),
        (true, y) => 1 - y,
        (false, y) => y,
    };
    let overflow = if md_ambiguous || !(1..=12).contains(&month) {
        DtErr::MdFieldOverflow
    } else {
        DtErr::FieldOverflow
    };
    let month = u32::try_from(month).map_err(|_| overflow)?;
    let day = u32::try_from(day).map_err(|_| DtErr::FieldOverflow)?;
    let days = dt::checked_days_from_civil(year, month, day).ok_or(if month > 12 {
        overflow
    } else {
        DtErr::FieldOverflow
    })?;
    Ok(DateTimeFields {
        days,
        time_ns,
        zone,
    })
}

/// `Y-M-D`, `Y/M/D` (year of 3+ digits), `M/D/Y` or `M-D-Y` (year of 3+
/// digits, DateStyle MDY) or `YYYYMMDD`. Returns (year, month, day, whether
/// the field order was a guess).
fn parse_date_part(c: &mut Cursor) -> Result<(i64, i64, i64, bool), DtErr> {
    let first = c.digits();
    let value = |d: &[u8]| digits_value(d).ok_or(DtErr::FieldOverflow);
    if first.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let sep = match c.peek() {
        Some(s @ (b'-' | b'/')) => s,
        _ if first.len() == 8 => {
            let v = value(first)?;
            return Ok((v / 10_000, v / 100 % 100, v % 100, false));
        }
        _ => return Err(DtErr::BadFormat),
    };
    c.i += 1;
    let second = c.digits();
    if second.is_empty() || !c.eat(sep) {
        return Err(DtErr::BadFormat);
    }
    let third = c.digits();
    if third.is_empty() {
        return Err(DtErr::BadFormat);
    }
    if first.len() >= 3 {
        Ok((value(first)?, value(second)?, value(third)?, false))
    } else if third.len() >= 3 {
        Ok((value(third)?, value(first)?, value(second)?, true))
    } else {
        Err(DtErr::MdFieldOverflow)
    }
}

/// `H:MM[:SS[.fraction]]`: nanoseconds since midnight, the fraction rounded to
/// microseconds as PostgreSQL does (rint of the double value).
fn parse_time_part(c: &mut Cursor) -> Result<i64, DtErr> {
    let value = |d: &[u8]| digits_value(d).ok_or(DtErr::FieldOverflow);
    let hour = value(c.digits())?;
    if !c.eat(b':') {
        return Err(DtErr::BadFormat);
    }
    let minute_digits = c.digits();
    if minute_digits.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let minute = value(minute_digits)?;
    let (mut second, mut micros) = (0, 0);
    if c.eat(b':') {
        second = value(c.digits())?;
        if c.peek() == Some(b'.') {
            let start = c.i;
            c.i += 1;
            c.digits();
            micros = fraction_to_micros(&c.s[start..c.i]).ok_or(DtErr::BadFormat)?;
        }
    }
    let is_24 = hour == 24 && minute == 0 && second == 0 && micros == 0;
    if !(0..24).contains(&hour) && !is_24 || minute > 59 || second > 60 {
        return Err(DtErr::FieldOverflow);
    }
    Ok(((hour * 60 + minute) * 60 + second) * NANOS_PER_SEC + micros * 1000)
}

/// `.ddd` as whole microseconds: rint(strtod(".ddd") * 1e6); '.' alone is 0.
fn fraction_to_micros(frac: &[u8]) -> Option<i64> {
    if frac == b"." {
        return Some(0);
    }
    let s = std::str::from_utf8(frac).ok()?;
    let f: f64 = s.parse().ok()?;
    Some((f * 1_000_000.0).round_ties_even() as i64)
}

/// A zone suffix: 'Z', a numeric offset (east of UTC), a known fixed
/// abbreviation or a tz database name ('Europe/Paris', 'EST5EDT');
/// leaves 'BC'/'AD' for `parse_era`.
fn parse_zone(c: &mut Cursor) -> Result<Option<Zone>, DtErr> {
    match c.peek() {
        Some(b'+' | b'-') => parse_numeric_zone(c).map(|off| Some(Zone::Fixed(off))),
        Some(ch) if ch.is_ascii_alphabetic() => {
            let start = c.i;
            let word =
                c.run(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'+' | b'-'));
            let lower = String::from_utf8_lossy(word).to_ascii_lowercase();
            if lower == "bc" || lower == "ad" {
                c.i = start;
                return Ok(None);
            }
            if let Some(zone) = Zone::from_abbreviation(&lower) {
                return Ok(Some(zone));
            }
            if let Some(zone) = Zone::from_name(&lower) {
                return Ok(Some(zone));
            }
            Err(if lower.contains('/') {
                DtErr::UnknownZone
            } else {
                DtErr::BadFormat
            })
        }
        _ => Ok(None),
    }
}

/// PostgreSQL's DecodeTimezone: `±H`, `±HH`, `±HHMM`, `±HH:MM`, `±HH:MM:SS`.
fn parse_numeric_zone(c: &mut Cursor) -> Result<i32, DtErr> {
    let neg = c.peek() == Some(b'-');
    c.i += 1;
    let hour_digits = c.digits();
    if hour_digits.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let mut hour = digits_value(hour_digits).ok_or(DtErr::TzOverflow)?;
    let (mut min, mut sec) = (0, 0);
    if c.eat(b':') {
        min = digits_value(c.digits()).unwrap_or(0);
        if c.eat(b':') {
            sec = digits_value(c.digits()).unwrap_or(0);
        }
    } else if hour_digits.len() > 2 {
        min = hour % 100;
        hour /= 100;
    }
    if hour > 15 || min >= 60 || sec >= 60 {
        return Err(DtErr::TzOverflow);
    }
    let secs = ((hour * 60 + min) * 60 + sec) as i32;
    Ok(if neg { -secs } else { secs })
}

/// An optional 'BC' / 'AD' suffix; true for BC.
fn parse_era(c: &mut Cursor) -> bool {
    let rest = &c.s[c.i..];
    let word = |w: &[u8]| rest.len() >= 2 && rest[..2].eq_ignore_ascii_case(w);
    if word(b"bc") || word(b"ad") {
        let bc = word(b"bc");
        c.i += 2;
        return bc;
    }
    false
}

// ===========================================================================
// date / timestamp / timestamptz output
// ===========================================================================

/// 'YYYY-MM-DD', years before 1 AD as 'YYYY-MM-DD BC'.
pub fn format_date(days: i64, out: &mut Vec<u8>) {
    let (y, m, d) = dt::civil_from_days(days);
    let bc = write_ymd(y, m, d, out);
    if bc {
        out.extend_from_slice(b" BC");
    }
}

/// Writes 'YYYY-MM-DD' with the BC-adjusted year; returns whether it is BC.
fn write_ymd(y: i64, m: u32, d: u32, out: &mut Vec<u8>) -> bool {
    let bc = y <= 0;
    let shown = if bc { 1 - y } else { y };
    let _ = write!(out, "{shown:04}-{m:02}-{d:02}");
    bc
}

/// ' HH:MM:SS[.ffffff]' with trailing zeros of the fraction trimmed.
fn write_time(p: &dt::DateTimeParts, out: &mut Vec<u8>) {
    let _ = write!(out, " {:02}:{:02}:{:02}", p.hour, p.minute, p.second);
    write_fraction((p.nanos / 1000) as u64, out);
}

/// '.ffffff' trimmed of trailing zeros; nothing for 0.
fn write_fraction(micros: u64, out: &mut Vec<u8>) {
    if micros == 0 {
        return;
    }
    let mut digits = [0u8; 6];
    let mut v = micros;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
    }
    let len = 6 - digits.iter().rev().take_while(|&&c| c == b'0').count();
    out.push(b'.');
    out.extend_from_slice(&digits[..len]);
}

/// timestamp_out: 'YYYY-MM-DD HH:MM:SS[.ffffff]' (ns truncated to µs).
pub fn format_timestamp(ns: i64, out: &mut Vec<u8>) {
    let p = dt::split_timestamp(ns);
    let bc = write_ymd(p.year, p.month, p.day, out);
    write_time(&p, out);
    if bc {
        out.extend_from_slice(b" BC");
    }
}

/// timestamptz_out: the wall clock in `zone`, then the offset in force there
/// ('+00', '+05:30', '-08').
pub fn format_timestamptz(ns: i64, zone: Zone, out: &mut Vec<u8>) {
    let utc_offset_secs = zone.offset_at_utc(ns as i128);
    let p = dt::split_timestamp_in_zone(ns, Zone::Fixed(utc_offset_secs));
    let bc = write_ymd(p.year, p.month, p.day, out);
    write_time(&p, out);
    write_zone_offset(utc_offset_secs, out);
    if bc {
        out.extend_from_slice(b" BC");
    }
}

/// '+HH', '+HH:MM' or '+HH:MM:SS' (PostgreSQL's EncodeTimezone).
pub fn write_zone_offset(utc_offset_secs: i32, out: &mut Vec<u8>) {
    let abs = utc_offset_secs.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    out.push(if utc_offset_secs < 0 { b'-' } else { b'+' });
    let _ = write!(out, "{h:02}");
    if s != 0 {
        let _ = write!(out, ":{m:02}:{s:02}");
    } else if m != 0 {
        let _ = write!(out, ":{m:02}");
    }
}

// ===========================================================================
// interval output
// ===========================================================================

/// interval_out, IntervalStyle postgres: '1 year 2 mons 3 days 04:05:06.5',
/// '-1 days +01:00:00', '00:00:00'.
pub fn format_interval(iv: Interval, out: &mut Vec<u8>) {
    let (year, mon) = (iv.months as i64 / 12, iv.months as i64 % 12);
    let hour = iv.micros / MICROS_PER_HOUR;
    let min = iv.micros % MICROS_PER_HOUR / MICROS_PER_MINUTE;
    let sec = iv.micros % MICROS_PER_MINUTE / MICROS_PER_SEC;
    let fsec = iv.micros % MICROS_PER_SEC;
    let mut is_zero = true;
    let mut is_before = false;
    add_interval_part(year, "year", &mut is_zero, &mut is_before, out);
    add_interval_part(mon, "mon", &mut is_zero, &mut is_before, out);
    add_interval_part(iv.days as i64, "day", &mut is_zero, &mut is_before, out);
    if is_zero || iv.micros != 0 {
        let minus = iv.micros < 0;
        if !is_zero {
            out.push(b' ');
        }
        if minus {
            out.push(b'-');
        } else if is_before {
            out.push(b'+');
        }
        let _ = write!(
            out,
            "{:02}:{:02}:{:02}",
            hour.unsigned_abs(),
            min.unsigned_abs(),
            sec.unsigned_abs()
        );
        write_fraction(fsec.unsigned_abs(), out);
    }
}

fn add_interval_part(
    value: i64,
    unit: &str,
    is_zero: &mut bool,
    is_before: &mut bool,
    out: &mut Vec<u8>,
) {
    if value == 0 {
        return;
    }
    if !*is_zero {
        out.push(b' ');
    }
    if *is_before && value > 0 {
        out.push(b'+');
    }
    let _ = write!(out, "{value} {unit}");
    if value != 1 {
        out.push(b's');
    }
    *is_before = value < 0;
    *is_zero = false;
}

// ===========================================================================
// interval input
// ===========================================================================

/// Why an interval string was rejected.
#[derive(Debug, Clone, Copy, PartialEq)]
enum IvErr {
    BadFormat,
    FieldOverflow,
    OutOfRange,
}

fn interval_error(kind: IvErr, input: &str) -> DbError {
    match kind {
        IvErr::BadFormat => DbError::new(
            sqlstate::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type interval: \"{input}\""),
        ),
        IvErr::FieldOverflow => DbError::new(
            "22015",
            format!("interval field value out of range: \"{input}\""),
        ),
        IvErr::OutOfRange => dt::interval_out_of_range(),
    }
}

/// interval_in: PostgreSQL style ('1 year 2 mons 3 days 04:05:06.5',
/// '@ 1 day ago', '1.5 hours', '1-2', '-04:05:06') and ISO 8601
/// ('P1Y2M3DT4H5M6S', 'PT10S', 'P0002-06-07T01:30:00').
pub fn parse_interval(input: &str) -> DbResult<Interval> {
    let s = pg_trim(input);
    match decode_postgres_interval(s) {
        Err(IvErr::BadFormat) => decode_iso8601_interval(s),
        other => other,
    }
    .map_err(|e| interval_error(e, input))
}

/// PostgreSQL's pg_itm_in: interval fields gathered while decoding.
#[derive(Debug, Default)]
struct ItmIn {
    usec: i64,
    mday: i32,
    mon: i32,
    year: i32,
}

impl ItmIn {
    fn add_usec(&mut self, v: i64) -> Result<(), IvErr> {
        self.usec = self.usec.checked_add(v).ok_or(IvErr::FieldOverflow)?;
        Ok(())
    }

    /// Whole units of `scale` µs plus a fraction of one.
    fn adjust_micros(&mut self, val: i64, fval: f64, scale: i64) -> Result<(), IvErr> {
        self.add_usec(val.checked_mul(scale).ok_or(IvErr::FieldOverflow)?)?;
        self.adjust_fract_micros(fval, scale)
    }

    /// A fraction of `scale` µs, rounded (halves toward zero, as PostgreSQL).
    fn adjust_fract_micros(&mut self, frac: f64, scale: i64) -> Result<(), IvErr> {
        if frac == 0.0 {
            return Ok(());
        }
        let f = frac * scale as f64;
        let mut usec = f as i64;
        let rest = f - usec as f64;
        if rest > 0.5 {
            usec += 1;
        } else if rest < -0.5 {
            usec -= 1;
        }
        self.add_usec(usec)
    }

    /// A fraction of `scale` days: whole days, the rest as µs.
    fn adjust_fract_days(&mut self, frac: f64, scale: i32) -> Result<(), IvErr> {
        if frac == 0.0 {
            return Ok(());
        }
        let f = frac * scale as f64;
        let extra = f as i32;
        self.mday = self.mday.checked_add(extra).ok_or(IvErr::FieldOverflow)?;
        self.adjust_fract_micros(f - extra as f64, MICROS_PER_DAY)
    }

    fn adjust_days(&mut self, val: i64, scale: i32) -> Result<(), IvErr> {
        let d = i32::try_from(val)
            .ok()
            .and_then(|v| v.checked_mul(scale))
            .ok_or(IvErr::FieldOverflow)?;
        self.mday = self.mday.checked_add(d).ok_or(IvErr::FieldOverflow)?;
        Ok(())
    }

    fn adjust_months(&mut self, val: i64) -> Result<(), IvErr> {
        let m = i32::try_from(val).map_err(|_| IvErr::FieldOverflow)?;
        self.mon = self.mon.checked_add(m).ok_or(IvErr::FieldOverflow)?;
        Ok(())
    }

    fn adjust_years(&mut self, val: i64, scale: i32) -> Result<(), IvErr> {
        let y = i32::try_from(val)
            .ok()
            .and_then(|v| v.checked_mul(scale))
            .ok_or(IvErr::FieldOverflow)?;
        self.year = self.year.checked_add(y).ok_or(IvErr::FieldOverflow)?;
        Ok(())
    }

    /// A fraction of `scale` years as whole (rounded) months.
    fn adjust_fract_years(&mut self, frac: f64, scale: i32) -> Result<(), IvErr> {
        let months = (frac * scale as f64 * 12.0).round_ties_even();
        let months = if months.abs() < 2e9 {
            months as i32
        } else {
            return Err(IvErr::FieldOverflow);
        };
        self.mon = self.mon.checked_add(months).ok_or(IvErr::FieldOverflow)?;
        Ok(())
    }

    fn negate(&mut self) -> Result<(), IvErr> {
        self.usec = self.usec.checked_neg().ok_or(IvErr::FieldOverflow)?;
        self.mday = self.mday.checked_neg().ok_or(IvErr::FieldOverflow)?;
        self.mon = self.mon.checked_neg().ok_or(IvErr::FieldOverflow)?;
        self.year = self.year.checked_neg().ok_or(IvErr::FieldOverflow)?;
        Ok(())
    }

    fn finish(&self) -> Result<Interval, IvErr> {
        let months = self
            .year
            .checked_mul(12)
            .and_then(|m| m.checked_add(self.mon));
        Ok(Interval {
            months: months.ok_or(IvErr::OutOfRange)?,
            days: self.mday,
            micros: self.usec,
        })
    }
}

/// One field of a postgres-style interval string.
#[derive(Debug)]
enum IvField<'a> {
    /// 'hh:mm[:ss[.f]]' or 'mm:ss.f'; `signed` when written with '+'/'-'.
    Time {
        neg: bool,
        signed: bool,
        body: &'a str,
    },
    /// A number, possibly signed: '5', '1.5', '.5', '1-2' (years-months).
    Number { neg: bool, body: &'a str },
    /// A lower-cased word: a unit, 'ago'.
    Word(String),
}

/// PostgreSQL's ParseDateTime, reduced to what interval input needs.
fn tokenize_interval(s: &str) -> Result<Vec<IvField<'_>>, IvErr> {
    let b = s.as_bytes();
    let mut fields = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_pg_space(c) || (c.is_ascii_punctuation() && !matches!(c, b'+' | b'-' | b'.')) {
            i += 1;
        } else if c.is_ascii_digit() || c == b'.' {
            let end = scan_number_field(b, i);
            fields.push(number_or_time(false, false, &s[i..end]));
            i = end;
        } else if c == b'+' || c == b'-' {
            i += 1;
            while i < b.len() && is_pg_space(b[i]) {
                i += 1;
            }
            if !b.get(i).is_some_and(|d| d.is_ascii_digit()) {
                return Err(IvErr::BadFormat);
            }
            let mut end = i;
            while end < b.len() && (b[end].is_ascii_digit() || matches!(b[end], b':' | b'.' | b'-'))
            {
                end += 1;
            }
            fields.push(number_or_time(c == b'-', true, &s[i..end]));
            i = end;
        } else if c.is_ascii_alphabetic() {
            let mut end = i;
            while end < b.len() && b[end].is_ascii_alphabetic() {
                end += 1;
            }
            fields.push(IvField::Word(s[i..end].to_ascii_lowercase()));
            i = end;
        } else {
            return Err(IvErr::BadFormat);
        }
    }
    Ok(fields)
}

fn number_or_time<'a>(neg: bool, signed: bool, body: &'a str) -> IvField<'a> {
    if body.contains(':') {
        IvField::Time { neg, signed, body }
    } else {
        IvField::Number { neg, body }
    }
}

/// End of an unsigned numeric field: digits then a time (':'), a fraction
/// ('.') or a date-like run ('-' or '/' followed by digits).
fn scan_number_field(b: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    match b.get(i) {
        Some(b':') => {
            while i < b.len() && (b[i].is_ascii_digit() || matches!(b[i], b':' | b'.')) {
                i += 1;
            }
        }
        Some(&d @ (b'-' | b'/' | b'.'))
            if d == b'.' || b.get(i + 1).is_some_and(|c| c.is_ascii_digit()) =>
        {
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == d) {
                i += 1;
            }
        }
        _ => {}
    }
    i
}

/// Bits of PostgreSQL's field masks (DTK_M), to reject repeated units.
mod fmask {
    pub const MICROSECOND: u32 = 1;
    pub const MILLISECOND: u32 = 2;
    pub const SECOND: u32 = 4;
    pub const MINUTE: u32 = 8;
    pub const HOUR: u32 = 16;
    pub const DAY: u32 = 32;
    pub const WEEK: u32 = 64;
    pub const MONTH: u32 = 128;
    pub const YEAR: u32 = 256;
    pub const DECADE: u32 = 512;
    pub const CENTURY: u32 = 1024;
    pub const MILLENNIUM: u32 = 2048;
    pub const ALL_SECS: u32 = SECOND | MILLISECOND | MICROSECOND;
    pub const TIME: u32 = HOUR | MINUTE | ALL_SECS;
}

/// The unit a number field takes (PostgreSQL reads fields right to left).
#[derive(Debug, Clone, Copy, PartialEq)]
enum IvUnit {
    /// No unit seen yet: a bare number means seconds.
    Unset,
    /// Right after 'ago': a number here is an error.
    Invalid,
    Unit(DateUnit),
}

/// PostgreSQL's DecodeInterval (IntervalStyle postgres, no typmod range).
fn decode_postgres_interval(s: &str) -> Result<Interval, IvErr> {
    let fields = tokenize_interval(s)?;
    let mut itm = ItmIn::default();
    let mut unit = IvUnit::Unset;
    let (mut seen, mut is_before) = (0u32, false);
    for field in fields.iter().rev() {
        let mask = match field {
            IvField::Time { neg, signed, body } => {
                let usec = match decode_interval_time(body) {
                    Err(IvErr::FieldOverflow) if *signed => return Err(IvErr::BadFormat),
                    other => other?,
                };
                itm.add_usec(if *neg { -usec } else { usec })?;
                unit = IvUnit::Unit(DateUnit::Day);
                fmask::TIME
            }
            IvField::Number { neg, body } => {
                decode_interval_number(*neg, body, &mut unit, &mut itm)?
            }
            IvField::Word(w) if w == "ago" => {
                is_before = true;
                unit = IvUnit::Invalid;
                0
            }
            IvField::Word(w) => {
                unit = IvUnit::Unit(dt::lookup_interval_unit(w).ok_or(IvErr::BadFormat)?);
                0
            }
        };
        if mask & seen != 0 {
            return Err(IvErr::BadFormat);
        }
        seen |= mask;
    }
    if seen == 0 {
        return Err(IvErr::BadFormat);
    }
    if is_before {
        itm.negate()?;
    }
    itm.finish()
}

/// Leading digits as i64 (strtoi64): (value, rest). No digits gives 0.
fn leading_int(s: &str) -> Result<(i64, &str), IvErr> {
    let end = s
        .bytes()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    let v = if end == 0 {
        0
    } else {
        digits_value(&s.as_bytes()[..end]).ok_or(IvErr::FieldOverflow)?
    };
    Ok((v, &s[end..]))
}

/// strtod of a '.ddd' tail that must be consumed entirely.
fn parse_fraction(s: &str) -> Result<f64, IvErr> {
    if s.len() < 2 || !s[1..].bytes().all(|c| c.is_ascii_digit()) {
        return Err(IvErr::BadFormat);
    }
    s.parse::<f64>().map_err(|_| IvErr::BadFormat)
}

fn decode_interval_number(
    neg: bool,
    body: &str,
    unit: &mut IvUnit,
    itm: &mut ItmIn,
) -> Result<u32, IvErr> {
    if *unit == IvUnit::Unset {
        *unit = IvUnit::Unit(DateUnit::Second);
    }
    let (mut val, rest) = leading_int(body)?;
    if neg {
        val = -val;
    }
    let mut fval = 0.0;
    if let Some(months) = rest.strip_prefix('-') {
        let (m, tail) = leading_int(months)?;
        if m >= 12 || months.is_empty() || !months.as_bytes()[0].is_ascii_digit() {
            return Err(IvErr::FieldOverflow);
        }
        if !tail.is_empty() {
            return Err(IvErr::BadFormat);
        }
        *unit = IvUnit::Unit(DateUnit::Month);
        val = val
            .checked_mul(12)
            .and_then(|v| v.checked_add(if neg { -m } else { m }))
            .ok_or(IvErr::FieldOverflow)?;
    } else if rest.starts_with('.') {
        fval = parse_fraction(rest)?;
        if neg {
            fval = -fval;
        }
    } else if !rest.is_empty() {
        return Err(IvErr::BadFormat);
    }
    let IvUnit::Unit(u) = *unit else {
        return Err(IvErr::BadFormat);
    };
    apply_interval_unit(u, val, fval, unit, itm)
}

/// Adds `val.fval` units of `u`; returns the field mask it fills.
fn apply_interval_unit(
    u: DateUnit,
    val: i64,
    fval: f64,
    unit: &mut IvUnit,
    itm: &mut ItmIn,
) -> Result<u32, IvErr> {
    use DateUnit::*;
    Ok(match u {
        Microsecond => {
            itm.adjust_micros(val, fval, 1)?;
            fmask::MICROSECOND
        }
        Millisecond => {
            itm.adjust_micros(val, fval, 1000)?;
            fmask::MILLISECOND
        }
        Second => {
            itm.adjust_micros(val, fval, MICROS_PER_SEC)?;
            if fval == 0.0 {
                fmask::SECOND
            } else {
                fmask::ALL_SECS
            }
        }
        Minute => {
            itm.adjust_micros(val, fval, MICROS_PER_MINUTE)?;
            fmask::MINUTE
        }
        Hour => {
            itm.adjust_micros(val, fval, MICROS_PER_HOUR)?;
            *unit = IvUnit::Unit(Day);
            fmask::HOUR
        }
        Day => {
            itm.adjust_days(val, 1)?;
            itm.adjust_fract_micros(fval, MICROS_PER_DAY)?;
            fmask::DAY
        }
        Week => {
            itm.adjust_days(val, 7)?;
            itm.adjust_fract_days(fval, 7)?;
            fmask::WEEK
        }
        Month => {
            itm.adjust_months(val)?;
            itm.adjust_fract_days(fval, 30)?;
            fmask::MONTH
        }
        Year | Decade | Century | Millennium => {
            let (scale, mask) = match u {
                Year => (1, fmask::YEAR),
                Decade => (10, fmask::DECADE),
                Century => (100, fmask::CENTURY),
                _ => (1000, fmask::MILLENNIUM),
            };
            itm.adjust_years(val, scale)?;
            itm.adjust_fract_years(fval, scale)?;
            mask
        }
        _ => return Err(IvErr::BadFormat),
    })
}

/// PostgreSQL's DecodeTime for intervals: 'h:mm', 'h:mm:ss[.f]' or 'mm:ss.f'
/// (hours unbounded), as microseconds.
fn decode_interval_time(body: &str) -> Result<i64, IvErr> {
    let (mut hour, rest) = leading_int(body)?;
    let rest = rest.strip_prefix(':').ok_or(IvErr::BadFormat)?;
    let (mut min, rest) = leading_int(rest)?;
    let (mut sec, mut fsec) = (0i64, 0i64);
    if rest.starts_with('.') {
        fsec = fractional_second(rest)?;
        sec = min;
        min = hour;
        hour = 0;
    } else if let Some(r) = rest.strip_prefix(':') {
        let (s, tail) = leading_int(r)?;
        sec = s;
        if tail.starts_with('.') {
            fsec = fractional_second(tail)?;
        } else if !tail.is_empty() {
            return Err(IvErr::BadFormat);
        }
    } else if !rest.is_empty() {
        return Err(IvErr::BadFormat);
    }
    if !(0..=59).contains(&min) || !(0..=60).contains(&sec) || !(0..=MICROS_PER_SEC).contains(&fsec)
    {
        return Err(IvErr::FieldOverflow);
    }
    let total = hour
        .checked_mul(MICROS_PER_HOUR)
        .and_then(|h| h.checked_add(min * MICROS_PER_MINUTE + sec * MICROS_PER_SEC + fsec));
    total.ok_or(IvErr::FieldOverflow)
}

/// ParseFractionalSecond: rint(strtod(".ddd") * 1e6).
fn fractional_second(s: &str) -> Result<i64, IvErr> {
    let f = parse_fraction(s)?;
    Ok((f * 1_000_000.0).round_ties_even() as i64)
}

/// One ISO 8601 number: (integer part, fraction, bytes consumed).
fn iso_number(b: &[u8]) -> Result<(i64, f64, usize), IvErr> {
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'.'))
    {
        return Err(IvErr::BadFormat);
    }
    let lit = scan_decimal_literal(b).ok_or(IvErr::BadFormat)?;
    let text = std::str::from_utf8(&b[..lit.end]).map_err(|_| IvErr::BadFormat)?;
    let val: f64 = text.parse().map_err(|_| IvErr::BadFormat)?;
    if val.is_nan() || val.abs() > 1.0e15 {
        return Err(IvErr::FieldOverflow);
    }
    let ipart = val.trunc();
    Ok((ipart as i64, val - ipart, lit.end))
}

/// Digits of an ISO field's integer part (ignoring a leading '-').
fn iso_integer_width(b: &[u8]) -> usize {
    let b = b.strip_prefix(b"-").unwrap_or(b);
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// PostgreSQL's DecodeISO8601Interval: designators ('P1Y2M3DT4H5M6S') or the
/// alternative format ('P0002-06-07T01:30:00', 'P00020607T013000').
fn decode_iso8601_interval(s: &str) -> Result<Interval, IvErr> {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b'P' {
        return Err(IvErr::BadFormat);
    }
    let mut itm = ItmIn::default();
    let mut i = 1;
    let (mut datepart, mut havefield) = (true, false);
    while i < b.len() {
        if b[i] == b'T' {
            datepart = false;
            havefield = false;
            i += 1;
            continue;
        }
        let field_start = i;
        let (val, fval, used) = iso_number(&b[i..])?;
        i += used;
        let unit = b.get(i).copied();
        i += 1;
        let step = if datepart {
            iso_date_field(&mut itm, b, &mut i, field_start, unit, val, fval, havefield)?
        } else {
            iso_time_field(&mut itm, b, &mut i, field_start, unit, val, fval, havefield)?
        };
        match step {
            IsoStep::Done => return itm.finish(),
            IsoStep::TimePart => {
                datepart = false;
                havefield = false;
            }
            IsoStep::Next => havefield = true,
        }
    }
    itm.finish()
}

enum IsoStep {
    Next,
    TimePart,
    Done,
}

/// One field before 'T': nY, nM, nW, nD, or the alternative date format.
#[allow(clippy::too_many_arguments)]
fn iso_date_field(
    itm: &mut ItmIn,
    b: &[u8],
    i: &mut usize,
    field_start: usize,
    unit: Option<u8>,
    val: i64,
    fval: f64,
    havefield: bool,
) -> Result<IsoStep, IvErr> {
    let ov = |r: Result<(), IvErr>| r.map_err(|_| IvErr::FieldOverflow);
    match unit {
        Some(b'Y') => {
            ov(itm.adjust_years(val, 1))?;
            ov(itm.adjust_fract_years(fval, 1))?;
        }
        Some(b'M') => {
            ov(itm.adjust_months(val))?;
            ov(itm.adjust_fract_days(fval, 30))?;
        }
        Some(b'W') => {
            ov(itm.adjust_days(val, 7))?;
            ov(itm.adjust_fract_days(fval, 7))?;
        }
        Some(b'D') => {
            ov(itm.adjust_days(val, 1))?;
            ov(itm.adjust_fract_micros(fval, MICROS_PER_DAY))?;
        }
        None | Some(b'T') if iso_integer_width(&b[field_start..]) == 8 && !havefield => {
            ov(itm.adjust_years(val / 10_000, 1))?;
            ov(itm.adjust_months(val / 100 % 100))?;
            ov(itm.adjust_days(val % 100, 1))?;
            ov(itm.adjust_fract_micros(fval, MICROS_PER_DAY))?;
            return Ok(if unit.is_none() {
                IsoStep::Done
            } else {
                IsoStep::TimePart
            });
        }
        None | Some(b'T') | Some(b'-') => {
            return iso_alternative_date(itm, b, i, unit, val, fval, havefield)
        }
        _ => return Err(IvErr::BadFormat),
    }
    Ok(IsoStep::Next)
}

/// 'YYYY-MM-DD' after 'P' (each part may carry a fraction).
fn iso_alternative_date(
    itm: &mut ItmIn,
    b: &[u8],
    i: &mut usize,
    unit: Option<u8>,
    val: i64,
    fval: f64,
    havefield: bool,
) -> Result<IsoStep, IvErr> {
    if havefield {
        return Err(IvErr::BadFormat);
    }
    itm.adjust_years(val, 1)
        .and_then(|_| itm.adjust_fract_years(fval, 1))
        .map_err(|_| IvErr::FieldOverflow)?;
    match unit {
        None => return Ok(IsoStep::Done),
        Some(b'T') => return Ok(IsoStep::TimePart),
        _ => {}
    }
    let (val, fval, used) = iso_number(b.get(*i..).unwrap_or(&[]))?;
    *i += used;
    itm.adjust_months(val)
        .and_then(|_| itm.adjust_fract_days(fval, 30))
        .map_err(|_| IvErr::FieldOverflow)?;
    match b.get(*i) {
        None => return Ok(IsoStep::Done),
        Some(b'T') => {
            *i += 1;
            return Ok(IsoStep::TimePart);
        }
        Some(b'-') => *i += 1,
        _ => return Err(IvErr::BadFormat),
    }
    let (val, fval, used) = iso_number(b.get(*i..).unwrap_or(&[]))?;
    *i += used;
    itm.adjust_days(val, 1)
        .and_then(|_| itm.adjust_fract_micros(fval, MICROS_PER_DAY))
        .map_err(|_| IvErr::FieldOverflow)?;
    match b.get(*i) {
        None => Ok(IsoStep::Done),
        Some(b'T') => {
            *i += 1;
            Ok(IsoStep::TimePart)
        }
        _ => Err(IvErr::BadFormat),
    }
}

/// One field after 'T': nH, nM, nS, or the alternative time format.
#[allow(clippy::too_many_arguments)]
fn iso_time_field(
    itm: &mut ItmIn,
    b: &[u8],
    i: &mut usize,
    field_start: usize,
    unit: Option<u8>,
    val: i64,
    fval: f64,
    havefield: bool,
) -> Result<IsoStep, IvErr> {
    let ov = |r: Result<(), IvErr>| r.map_err(|_| IvErr::FieldOverflow);
    match unit {
        Some(b'H') => ov(itm.adjust_micros(val, fval, MICROS_PER_HOUR))?,
        Some(b'M') => ov(itm.adjust_micros(val, fval, MICROS_PER_MINUTE))?,
        Some(b'S') => ov(itm.adjust_micros(val, fval, MICROS_PER_SEC))?,
        None if iso_integer_width(&b[field_start..]) == 6 && !havefield => {
            ov(itm.adjust_micros(val / 10_000, 0.0, MICROS_PER_HOUR))?;
            ov(itm.adjust_micros(val / 100 % 100, 0.0, MICROS_PER_MINUTE))?;
            ov(itm.adjust_micros(val % 100, 0.0, MICROS_PER_SEC))?;
            ov(itm.adjust_fract_micros(fval, 1))?;
            return Ok(IsoStep::Done);
        }
        None | Some(b':') => {
            if havefield {
                return Err(IvErr::BadFormat);
            }
            ov(itm.adjust_micros(val, fval, MICROS_PER_HOUR))?;
            if unit.is_none() {
                return Ok(IsoStep::Done);
            }
            for (k, scale) in [MICROS_PER_MINUTE, MICROS_PER_SEC].into_iter().enumerate() {
                let (val, fval, used) = iso_number(b.get(*i..).unwrap_or(&[]))?;
                *i += used;
                ov(itm.adjust_micros(val, fval, scale))?;
                match b.get(*i) {
                    None => return Ok(IsoStep::Done),
                    Some(b':') if k == 0 => *i += 1,
                    _ => return Err(IvErr::BadFormat),
                }
            }
            return Err(IvErr::BadFormat);
        }
        _ => return Err(IvErr::BadFormat),
    }
    Ok(IsoStep::Next)
}

// ===========================================================================
// jsonb
// ===========================================================================

/// Deepest nesting jsonb input accepts (guards the parser's recursion).
const MAX_JSON_DEPTH: usize = 512;

/// A parsed JSON value; numbers hold PostgreSQL's numeric text form.
#[derive(Debug)]
enum Json {
    Null,
    Bool(bool),
    Number(String),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// jsonb_in: validates JSON and returns jsonb's canonical text: ", " and ": "
/// separators, object keys ordered by (length, bytes) with the last duplicate
/// kept, numbers in numeric form ('1e2' → 100, '1.50' stays), strings
/// re-escaped as PostgreSQL does.
pub fn parse_jsonb(input: &str) -> DbResult<String> {
    let mut p = JsonParser {
        s: input.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.skip_ws();
    let value = p.value()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(p.token_error());
    }
    let mut out = String::with_capacity(input.len());
    write_json(&value, &mut out);
    Ok(out)
}

fn json_error(detail: String) -> DbError {
    DbError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type json",
    )
    .with_detail(detail)
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl JsonParser<'_> {
    fn skip_ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// End of the token at the cursor as PostgreSQL's lexer cuts it: a run of
    /// alphanumerics (after an optional '-'), or else one character.
    fn token_end(&self) -> usize {
        let is_tok = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        let start = if self.s.get(self.i) == Some(&b'-') {
            self.i + 1
        } else {
            self.i
        };
        let mut end = start;
        while end < self.s.len() && is_tok(self.s[end]) {
            end += 1;
        }
        if end == self.i {
            end += 1;
            while end < self.s.len() && (self.s[end] & 0xC0) == 0x80 {
                end += 1;
            }
        }
        end.min(self.s.len())
    }

    /// 'Token "…" is invalid.' for the token at the cursor.
    fn token_error(&self) -> DbError {
        if self.i >= self.s.len() {
            return json_error("The input string ended unexpectedly.".into());
        }
        let token = String::from_utf8_lossy(&self.s[self.i..self.token_end()]).into_owned();
        json_error(format!("Token \"{token}\" is invalid."))
    }

    fn expect_found(&self, what: &str) -> DbError {
        match self.s.get(self.i) {
            None => json_error("The input string ended unexpectedly.".into()),
            Some(&c) if c.is_ascii_punctuation() => {
                json_error(format!("Expected {what}, but found \"{}\".", c as char))
            }
            Some(_) => self.token_error(),
        }
    }

    fn value(&mut self) -> DbResult<Json> {
        match self.s.get(self.i) {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't' | b'f' | b'n') => self.keyword(),
            _ => Err(self.expect_found("JSON value")),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> DbResult<Json>) -> DbResult<Json> {
        if self.depth >= MAX_JSON_DEPTH {
            return Err(DbError::new("54001", "stack depth limit exceeded"));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn keyword(&mut self) -> DbResult<Json> {
        let end = self.s[self.i..]
            .iter()
            .position(|c| !c.is_ascii_alphanumeric())
            .map_or(self.s.len(), |k| self.i + k);
        let v = match &self.s[self.i..end] {
            b"true" => Json::Bool(true),
            b"false" => Json::Bool(false),
            b"null" => Json::Null,
            _ => return Err(self.token_error()),
        };
        self.i = end;
        Ok(v)
    }

    fn number(&mut self) -> DbResult<Json> {
        let b = &self.s[self.i..];
        let glued = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80;
        match scan_decimal_literal(b) {
            Some(l) if json_number_shape(&b[..l.end]) && !b.get(l.end).is_some_and(glued) => {
                self.i += l.end;
                Ok(Json::Number(numeric_text(&l)))
            }
            _ => Err(self.token_error()),
        }
    }

    fn array(&mut self) -> DbResult<Json> {
        self.i += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.expect_found("\",\" or \"]\"")),
            }
        }
    }

    fn object(&mut self) -> DbResult<Json> {
        self.i += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.expect_found("string"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(self.expect_found("\":\""));
            }
            self.i += 1;
            self.skip_ws();
            members.push((key, self.value()?));
            self.skip_ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Json::Object(normalize_members(members)));
                }
                _ => return Err(self.expect_found("\",\" or \"}\"")),
            }
        }
    }

    /// A string literal at the cursor (on '"'), unescaped.
    fn string(&mut self) -> DbResult<String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err(json_error("The input string ended unexpectedly.".into()));
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => self.escape(&mut out)?,
                c if c < 0x20 => {
                    return Err(json_error(format!(
                        "Character with value 0x{c:02x} must be escaped."
                    )));
                }
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| json_error("Invalid UTF-8 in string.".into()))
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> DbResult<()> {
        let Some(&c) = self.s.get(self.i) else {
            return Err(json_error("The input string ended unexpectedly.".into()));
        };
        self.i += 1;
        let simple = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => return self.unicode_escape(out),
            _ => {
                let ch = String::from_utf8_lossy(&self.s[self.i - 1..self.i]).into_owned();
                return Err(json_error(format!(
                    "Escape sequence \"\\{ch}\" is invalid."
                )));
            }
        };
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self) -> DbResult<u32> {
        let digits = self
            .s
            .get(self.i..self.i + 4)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit));
        let Some(digits) = digits else {
            return Err(json_error(
                "\"\\u\" must be followed by four hexadecimal digits.".into(),
            ));
        };
        self.i += 4;
        Ok(digits
            .iter()
            .fold(0u32, |acc, &d| acc * 16 + hex_value(d).unwrap_or(0) as u32))
    }

    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> DbResult<()> {
        let first = self.hex4()?;
        let code = match first {
            0 => {
                return Err(DbError::new("22P05", "unsupported Unicode escape sequence")
                    .with_detail("\\u0000 cannot be converted to text."))
            }
            0xD800..=0xDBFF => {
                let low_follows = self.s.get(self.i..self.i + 2) == Some(b"\\u");
                if !low_follows {
                    return Err(json_error(
                        "Unicode low surrogate must follow a high surrogate.".into(),
                    ));
                }
                self.i += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(json_error(
                        "Unicode low surrogate must follow a high surrogate.".into(),
                    ));
                }
                0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(json_error(
                    "Unicode low surrogate must follow a high surrogate.".into(),
                ));
            }
            c => c,
        };
        let ch = char::from_u32(code).unwrap_or('\u{FFFD}');
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        Ok(())
    }
}

/// JSON's number grammar: '-'? ('0' | [1-9][0-9]*) ('.' [0-9]+)? ([eE][+-]?[0-9]+)?
fn json_number_shape(b: &[u8]) -> bool {
    let b = b.strip_prefix(b"-").unwrap_or(b);
    let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if int_len == 0 || (int_len > 1 && b[0] == b'0') {
        return false;
    }
    match b.get(int_len) {
        Some(b'.') => b.get(int_len + 1).is_some_and(|c| c.is_ascii_digit()),
        _ => true,
    }
}

/// numeric_out of a literal, without rust_decimal's limits: the scale is
/// max(0, fraction digits - exponent); leading zeros go; zero has no sign.
fn numeric_text(l: &DecimalLiteral) -> String {
    let digits: Vec<u8> = l.int_digits.iter().chain(l.frac_digits).copied().collect();
    let point = l.int_digits.len() as i64 + l.exponent;
    let mut int_part: Vec<u8> = if point <= 0 {
        Vec::new()
    } else {
        let p = point as usize;
        let mut v: Vec<u8> = digits.iter().take(p).copied().collect();
        v.resize(p.max(v.len()), b'0');
        v
    };
    let frac_part: Vec<u8> = if point < 0 {
        std::iter::repeat_n(b'0', (-point) as usize)
            .chain(digits.iter().copied())
            .collect()
    } else {
        digits.get(point as usize..).unwrap_or(&[]).to_vec()
    };
    let lead = int_part.iter().take_while(|&&c| c == b'0').count();
    int_part.drain(..lead);
    let zero = digits.iter().all(|&c| c == b'0');
    let mut s = String::with_capacity(int_part.len() + frac_part.len() + 3);
    if l.negative && !zero {
        s.push('-');
    }
    if int_part.is_empty() {
        s.push('0');
    }
    s.push_str(std::str::from_utf8(&int_part).unwrap_or(""));
    if !frac_part.is_empty() {
        s.push('.');
        s.push_str(std::str::from_utf8(&frac_part).unwrap_or(""));
    }
    s
}

/// jsonb object order: keys by (length, bytes); a repeated key keeps its last value.
fn normalize_members(mut members: Vec<(String, Json)>) -> Vec<(String, Json)> {
    members.sort_by(|a, b| (a.0.len(), a.0.as_bytes()).cmp(&(b.0.len(), b.0.as_bytes())));
    let mut out: Vec<(String, Json)> = Vec::with_capacity(members.len());
    for m in members {
        match out.last_mut() {
            Some(last) if last.0 == m.0 => *last = m,
            _ => out.push(m),
        }
    }
    out
}

fn write_json(v: &Json, out: &mut String) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(n),
        Json::Str(s) => write_json_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (k, (key, item)) in members.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_json_string(key, out);
                out.push_str(": ");
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

/// PostgreSQL's escape_json.
fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> FormatContext {
        FormatContext::default()
    }

    fn at(offset: i32) -> FormatContext {
        FormatContext {
            zone: Zone::Fixed(offset),
            ..Default::default()
        }
    }

    /// Parses then formats, as a psql round trip would show it.
    fn show_in(ty: DataType, input: &str, c: &FormatContext) -> String {
        let d = parse_text(ty, input, c).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        let mut out = Vec::new();
        format_text(ty, &d, c, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn show(ty: DataType, input: &str) -> String {
        show_in(ty, input, &ctx())
    }

    fn err(ty: DataType, input: &str) -> (&'static str, String) {
        let e = parse_text(ty, input, &ctx()).unwrap_err();
        let e = e.into_fields();
        (e.code, e.message)
    }

    fn fmt(ty: DataType, d: Datum) -> String {
        let mut out = Vec::new();
        format_text(ty, &d, &ctx(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bool_input() {
        for t in ["t", " TRUE ", "yes", "y", "on", "1", "tr", "Tru"] {
            assert_eq!(show(DataType::Bool, t), "t", "{t}");
        }
        for f in ["f", "false", "no", "n", "off", "of", "0", "\tFALSE\n"] {
            assert_eq!(show(DataType::Bool, f), "f", "{f}");
        }
        for bad in ["", "o", "truex", "2", "yess", "-1"] {
            assert_eq!(
                err(DataType::Bool, bad),
                (
                    "22P02",
                    format!("invalid input syntax for type boolean: \"{bad}\"")
                )
            );
        }
    }

    #[test]
    fn integer_input() {
        assert_eq!(show(DataType::Int32, " 42 "), "42");
        assert_eq!(show(DataType::Int32, "+7"), "7");
        assert_eq!(show(DataType::Int32, "-2147483648"), "-2147483648");
        assert_eq!(show(DataType::Int16, "32767"), "32767");
        assert_eq!(
            show(DataType::Int64, "-9223372036854775808"),
            "-9223372036854775808"
        );
        assert_eq!(
            err(DataType::Int32, "abc"),
            (
                "22P02",
                "invalid input syntax for type integer: \"abc\"".into()
            )
        );
        assert_eq!(
            err(DataType::Int32, "99999999999"),
            (
                "22003",
                "value \"99999999999\" is out of range for type integer".into()
            )
        );
        assert_eq!(err(DataType::Int32, "99999999999x").0, "22003");
        assert_eq!(err(DataType::Int32, "2147483648").0, "22003");
        assert_eq!(
            err(DataType::Int16, "-32769"),
            (
                "22003",
                "value \"-32769\" is out of range for type smallint".into()
            )
        );
        assert_eq!(
            err(DataType::Int64, "9223372036854775808").1,
            "value \"9223372036854775808\" is out of range for type bigint"
        );
        for bad in ["", " ", "-", "- 7", "1.5", "12 3", "1e3", "0x10"] {
            assert_eq!(err(DataType::Int32, bad).0, "22P02", "{bad:?}");
        }
    }

    #[test]
    fn float8_output() {
        let cases = [
            ("1.5", "1.5"),
            ("0.1", "0.1"),
            ("1e20", "1e+20"),
            ("1.2345e-5", "1.2345e-05"),
            ("1e15", "1e+15"),
            ("123456789012345", "123456789012345"),
            ("1234567890123456", "1.234567890123456e+15"),
            ("0.0001", "0.0001"),
            ("0.00001", "1e-05"),
            ("100", "100"),
            ("-0", "-0"),
            ("3.141592653589793", "3.141592653589793"),
            ("1e-310", "1e-310"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            (" NaN ", "NaN"),
            ("-Infinity", "-Infinity"),
            ("inf", "Infinity"),
            (".5", "0.5"),
            ("1E+05", "100000"),
            // Ryu ties go to even; bounds of the rounding interval are excluded.
            ("9374675106287.562", "9374675106287.562"),
            ("5.0565398149973984e16", "5.0565398149973984e+16"),
        ];
        for (input, want) in cases {
            assert_eq!(show(DataType::Float64, input), want, "{input}");
        }
    }

    #[test]
    fn float4_output() {
        let cases = [
            ("1.5", "1.5"),
            ("1e6", "1e+06"),
            ("100000", "100000"),
            ("1234567", "1.234567e+06"),
            ("0.1", "0.1"),
            ("3.14159265", "3.1415927"),
            ("1e-40", "1e-40"),
            ("0.00001", "1e-05"),
            ("40766792", "4.0766792e+07"),
            ("3881756.25", "3.8817562e+06"),
        ];
        for (input, want) in cases {
            assert_eq!(show(DataType::Float32, input), want, "{input}");
        }
    }

    #[test]
    fn float_errors() {
        assert_eq!(
            err(DataType::Float64, "1e400"),
            (
                "22003",
                "\"1e400\" is out of range for type double precision".into()
            )
        );
        assert_eq!(
            err(DataType::Float64, " -1e400 ").1,
            "\"-1e400\" is out of range for type double precision"
        );
        assert_eq!(err(DataType::Float64, "1e-400").0, "22003");
        assert_eq!(
            err(DataType::Float32, "1e39"),
            ("22003", "\"1e39\" is out of range for type real".into())
        );
        assert_eq!(err(DataType::Float32, "1e-46").0, "22003");
        assert_eq!(
            err(DataType::Float64, "abc"),
            (
                "22P02",
                "invalid input syntax for type double precision: \"abc\"".into()
            )
        );
        assert_eq!(err(DataType::Float64, "").0, "22P02");
        assert_eq!(
            err(DataType::Float32, "1.5x").1,
            "invalid input syntax for type real: \"1.5x\""
        );
    }

    #[test]
    fn numeric_input_output() {
        let cases = [
            ("1.50", "1.50"),
            ("-0", "0"),
            ("-0.00", "0.00"),
            ("1e5", "100000"),
            ("1.5e-3", "0.0015"),
            ("  12.3400  ", "12.3400"),
            (".5", "0.5"),
            ("5.", "5"),
            ("+3", "3"),
            ("123e-2", "1.23"),
            (
                "-12345678901234567890.123456789",
                "-12345678901234567890.123456789",
            ),
            (
                "79228162514264337593543950335",
                "79228162514264337593543950335",
            ),
            ("1e28", "10000000000000000000000000000"),
            // Beyond 28 fractional digits: rounded half away from zero.
            (
                "0.1234567890123456789012345678901",
                "0.1234567890123456789012345679",
            ),
            (
                "-0.00000000000000000000000000005",
                "-0.0000000000000000000000000001",
            ),
            ("1e-30", "0.0000000000000000000000000000"),
        ];
        for (input, want) in cases {
            assert_eq!(show(DataType::Numeric, input), want, "{input}");
        }
        assert_eq!(
            err(DataType::Numeric, "abc"),
            (
                "22P02",
                "invalid input syntax for type numeric: \"abc\"".into()
            )
        );
        for bad in ["", "1e", "1.2.3", ".", "-", "1e5x", "e5"] {
            assert_eq!(err(DataType::Numeric, bad).0, "22P02", "{bad:?}");
        }
        assert_eq!(
            err(DataType::Numeric, "79228162514264337593543950336"),
            ("22003", "value overflows numeric format".into())
        );
        assert_eq!(err(DataType::Numeric, "1e1000").0, "22003");
        for (input, shown) in [
            ("NaN", "NaN"),
            (" nan ", "NaN"),
            ("Infinity", "Infinity"),
            ("+inf", "Infinity"),
            ("-INFINITY", "-Infinity"),
            ("-inf", "-Infinity"),
        ] {
            assert_eq!(show(DataType::Numeric, input), shown, "{input:?}");
        }
        for bad in ["+NaN", "-nan", "infin", "Infinity1"] {
            assert_eq!(err(DataType::Numeric, bad).0, "22P02", "{bad:?}");
        }
        assert_eq!(err(DataType::Numeric, "1e999999999999").0, "22P02");
    }

    #[test]
    fn decimal_from_digits_edges() {
        let d = |digits: &str, scale: i64| {
            decimal_from_digits(digits.as_bytes(), scale, false).map(|d| d.to_string())
        };
        assert_eq!(d("000", 2).as_deref(), Some("0.00"));
        assert_eq!(
            d("5", 29).as_deref(),
            Some("0.0000000000000000000000000001")
        );
        assert_eq!(
            d("4", 29).as_deref(),
            Some("0.0000000000000000000000000000")
        );
        assert_eq!(
            d("99999999999999999999999999999", 1).as_deref(),
            Some("10000000000000000000000000000")
        );
        assert_eq!(
            d("1", -28).as_deref(),
            Some("10000000000000000000000000000")
        );
        assert_eq!(d("1", -29), None);
        assert_eq!(
            d("7922816251426433759354395033", -1).as_deref(),
            Some("79228162514264337593543950330")
        );
        assert_eq!(d("7922816251426433759354395034", -1), None);
        assert_eq!(
            d(&"9".repeat(200), 190).as_deref(),
            Some("10000000000.000000000000000000")
        );
    }

    #[test]
    fn string_lengths() {
        assert_eq!(show(DataType::Text, "hello"), "hello");
        assert_eq!(show(DataType::Unknown, " x "), " x ");
        assert_eq!(show(DataType::Varchar(Some(3)), "abc  "), "abc");
        assert_eq!(show(DataType::Varchar(Some(3)), "ab"), "ab");
        assert_eq!(show(DataType::Varchar(Some(3)), "ééé "), "ééé");
        assert_eq!(show(DataType::Bpchar(Some(3)), "a"), "a  ");
        assert_eq!(show(DataType::Bpchar(Some(3)), "abc   "), "abc");
        assert_eq!(show(DataType::Bpchar(None), "a "), "a ");
        assert_eq!(
            err(DataType::Varchar(Some(3)), "abcd"),
            (
                "22001",
                "value too long for type character varying(3)".into()
            )
        );
        assert_eq!(
            err(DataType::Bpchar(Some(3)), "abcd"),
            ("22001", "value too long for type character(3)".into())
        );
        assert_eq!(err(DataType::Text, "a\0b").0, "22021");
        assert_eq!(
            coerce_string(DataType::Varchar(Some(2)), "abcd", true).unwrap(),
            "ab"
        );
        assert_eq!(
            coerce_string(DataType::Bpchar(Some(0)), "", false).unwrap(),
            ""
        );
    }

    #[test]
    fn bytea_formats() {
        assert_eq!(show(DataType::Bytea, "\\x0a0B"), "\\x0a0b");
        assert_eq!(show(DataType::Bytea, "\\x 0a 0b"), "\\x0a0b");
        assert_eq!(show(DataType::Bytea, "\\x"), "\\x");
        assert_eq!(show(DataType::Bytea, "abc\\\\def"), "\\x6162635c646566");
        assert_eq!(show(DataType::Bytea, "a\\001b"), "\\x610162");
        assert_eq!(show(DataType::Bytea, "é"), "\\xc3a9");
        assert_eq!(
            err(DataType::Bytea, "\\x0a0"),
            (
                "22023",
                "invalid hexadecimal data: odd number of digits".into()
            )
        );
        assert_eq!(
            err(DataType::Bytea, "\\x0g"),
            ("22023", "invalid hexadecimal digit: \"g\"".into())
        );
        assert_eq!(
            err(DataType::Bytea, "\\xé0").1,
            "invalid hexadecimal digit: \"é\""
        );
        assert_eq!(
            err(DataType::Bytea, "a\\9"),
            ("22P02", "invalid input syntax for type bytea".into())
        );
        assert_eq!(err(DataType::Bytea, "a\\").0, "22P02");
        assert_eq!(err(DataType::Bytea, "\\400").0, "22P02");
        assert_eq!(err(DataType::Bytea, "\\X0a").0, "22P02");
    }

    #[test]
    fn timestamptz_input() {
        let tz = DataType::TimestampTz;
        let cases = [
            ("2026-01-31 10:00:00+05:30", "2026-01-31 04:30:00+00"),
            ("2026-01-31 10:00:00-0800", "2026-01-31 18:00:00+00"),
            ("2026-01-31 10:00:00 UTC", "2026-01-31 10:00:00+00"),
            ("2026-01-31 10:00:00 +05", "2026-01-31 05:00:00+00"),
            ("2026-01-31T10:00:00Z", "2026-01-31 10:00:00+00"),
            ("2026-01-31 10:00:00 zulu", "2026-01-31 10:00:00+00"),
            ("2026-01-31 10:00:00 EST", "2026-01-31 15:00:00+00"),
            ("2026-01-31 10:00:00+053", "2026-01-31 09:07:00+00"),
            ("2026-01-31 10:00:00 +15:59:59", "2026-01-30 18:00:01+00"),
            (
                "2026-01-31 10:00:00.1234565",
                "2026-01-31 10:00:00.123456+00",
            ),
            (
                "2026-01-31 10:00:00.1234575",
                "2026-01-31 10:00:00.123458+00",
            ),
            ("2026-01-31 10:00:00.9999995", "2026-01-31 10:00:01+00"),
            ("2026-01-31 23:59:59.9999999", "2026-02-01 00:00:00+00"),
            ("2026-01-31 24:00:00", "2026-02-01 00:00:00+00"),
            ("2026-01-31 10:00:60", "2026-01-31 10:01:00+00"),
            ("2026-1-5 1:2:3", "2026-01-05 01:02:03+00"),
            ("2026-01-31 10:00", "2026-01-31 10:00:00+00"),
            ("20260131", "2026-01-31 00:00:00+00"),
            ("2026/01/31", "2026-01-31 00:00:00+00"),
            ("01/31/2026", "2026-01-31 00:00:00+00"),
            ("  2026-01-31   10:00:00  ", "2026-01-31 10:00:00+00"),
            ("2026-01-31 10:00:00.", "2026-01-31 10:00:00+00"),
            ("2026-01-31 10:00:00.5Z", "2026-01-31 10:00:00.5+00"),
            ("epoch", "1970-01-01 00:00:00+00"),
            ("1677-09-21 00:12:44", "1677-09-21 00:12:44+00"),
            ("2262-04-11 23:47:16", "2262-04-11 23:47:16+00"),
        ];
        for (input, want) in cases {
            assert_eq!(show(tz, input), want, "{input}");
        }
    }

    #[test]
    fn timestamp_errors() {
        let tz = DataType::TimestampTz;
        assert_eq!(
            err(tz, "2026-01-31 24:00:01"),
            (
                "22008",
                "date/time field value out of range: \"2026-01-31 24:00:01\"".into()
            )
        );
        assert_eq!(err(tz, "2026-01-31 10:60:00").0, "22008");
        assert_eq!(err(tz, "2026-02-30").0, "22008");
        let e = parse_text(tz, "2026-13-01", &ctx()).unwrap_err();
        assert_eq!(
            (e.code, e.hint.as_deref()),
            (
                "22008",
                Some("Perhaps you need a different \"datestyle\" setting.")
            )
        );
        assert_eq!(err(tz, "26-01-31").0, "22008");
        assert_eq!(err(tz, "0000-01-01").0, "22008");
        assert_eq!(
            err(tz, "2026-01-31T10"),
            (
                "22007",
                "invalid input syntax for type timestamp with time zone: \"2026-01-31T10\"".into()
            )
        );
        assert_eq!(err(tz, "2026-01-31 10").0, "22007");
        assert_eq!(err(tz, "garbage").0, "22007");
        assert_eq!(err(tz, "").0, "22007");
        assert_eq!(err(tz, "2026-01-31 10:00:00 junk").0, "22007");
        assert_eq!(err(tz, "2026-01-31 10:00:00 XYZ").0, "22007");
        assert_eq!(
            err(tz, "2026-01-31 10:00:00 +16"),
            (
                "22009",
                "time zone displacement out of range: \"2026-01-31 10:00:00 +16\"".into()
            )
        );
        assert_eq!(show(tz, "2026-01-31 10:00:00 Europe/Paris"), "2026-01-31 09:00:00+00");
        assert_eq!(show(tz, "2026-07-31 10:00:00 europe/paris"), "2026-07-31 08:00:00+00");
        assert_eq!(
            err(tz, "2026-01-31 10:00:00 Mars/Olympus"),
            ("22023", "time zone \"mars/olympus\" not recognized".into())
        );
        assert_eq!(
            show(DataType::Timestamp, "2026-01-31 10:00:00 Europe/Paris"),
            "2026-01-31 10:00:00"
        );
        assert_eq!(
            show(DataType::Date, "2026-01-31 America/New_York"),
            "2026-01-31"
        );
        assert_eq!(show(tz, "infinity"), "infinity");
        assert_eq!(show(tz, " -Infinity "), "-infinity");
        assert_eq!(
            err(tz, "1677-09-21 00:12:43"),
            (
                "22008",
                "timestamp out of range: \"1677-09-21 00:12:43\"".into()
            )
        );
        assert_eq!(err(tz, "2262-04-11 23:47:17").0, "22008");
        assert_eq!(
            err(DataType::Timestamp, "x").1,
            "invalid input syntax for type timestamp: \"x\""
        );
    }

    #[test]
    fn timestamp_without_zone() {
        let ts = DataType::Timestamp;
        assert_eq!(show(ts, "2026-01-31T10:00:00Z"), "2026-01-31 10:00:00");
        assert_eq!(show(ts, "2026-01-31 10:00:00+05:30"), "2026-01-31 10:00:00");
        assert_eq!(
            show(ts, "1969-12-31 23:59:59.999999"),
            "1969-12-31 23:59:59.999999"
        );
        assert_eq!(show(ts, "1970-01-01"), "1970-01-01 00:00:00");
        assert_eq!(
            show_in(ts, "2026-01-31 10:00:00", &at(19_800)),
            "2026-01-31 10:00:00"
        );
        assert_eq!(fmt(ts, Datum::Int64(1_500)), "1970-01-01 00:00:00.000001");
        assert_eq!(fmt(ts, Datum::Int64(-1)), "1969-12-31 23:59:59.999999");
        assert_eq!(
            fmt(ts, Datum::Int64(i64::MIN + 1)),
            "1677-09-21 00:12:43.145224"
        );
        assert_eq!(
            fmt(ts, Datum::Int64(i64::MAX - 1)),
            "2262-04-11 23:47:16.854775"
        );
        // the extremes are PostgreSQL's ±infinity sentinels
        assert_eq!(fmt(ts, Datum::Int64(i64::MIN)), "-infinity");
        assert_eq!(fmt(ts, Datum::Int64(i64::MAX)), "infinity");
    }

    #[test]
    fn timestamptz_session_offset() {
        let tz = DataType::TimestampTz;
        let kolkata = at(19_800);
        assert_eq!(
            show_in(tz, "2026-01-31 10:00:00", &kolkata),
            "2026-01-31 10:00:00+05:30"
        );
        assert_eq!(
            show_in(tz, "2026-01-31 10:00:00+00", &kolkata),
            "2026-01-31 15:30:00+05:30"
        );
        assert_eq!(
            show_in(tz, "2026-01-31", &kolkata),
            "2026-01-31 00:00:00+05:30"
        );
        assert_eq!(show_in(tz, "epoch", &kolkata), "1970-01-01 05:30:00+05:30");
        assert_eq!(
            show_in(tz, "2026-01-31 10:00:00.25Z", &at(-28_800)),
            "2026-01-31 02:00:00.25-08"
        );
        let d = parse_text(tz, "2026-01-31 10:00:00Z", &ctx()).unwrap();
        let mut out = Vec::new();
        format_text(tz, &d, &at(3_723), &mut out);
        assert_eq!(out, b"2026-01-31 11:02:03+01:02:03");
    }

    #[test]
    fn special_words() {
        let now = parse_text(DataType::TimestampTz, "now", &ctx()).unwrap();
        let today = parse_text(DataType::TimestampTz, " Today ", &ctx()).unwrap();
        let (Datum::Int64(n), Datum::Int64(t)) = (now, today) else {
            panic!()
        };
        assert!(n >= t && n - t < NANOS_PER_DAY);
        let Datum::Int32(d) = parse_text(DataType::Date, "tomorrow", &ctx()).unwrap() else {
            panic!()
        };
        assert_eq!(d as i64, t / NANOS_PER_DAY + 1);
        assert_eq!(show(DataType::Date, "epoch"), "1970-01-01");
        assert_eq!(show(DataType::Date, "-infinity"), "-infinity");
    }

    #[test]
    fn date_input_output() {
        let d = DataType::Date;
        assert_eq!(show(d, "2026-01-31"), "2026-01-31");
        assert_eq!(show(d, "2026-01-31 10:00:00"), "2026-01-31");
        assert_eq!(show(d, "2026-01-31T10:00:00Z"), "2026-01-31");
        assert_eq!(show(d, "5874897-12-31"), "5874897-12-31");
        assert_eq!(show(d, "4714-11-24 BC"), "4714-11-24 BC");
        assert_eq!(show(d, "0001-01-01 BC"), "0001-01-01 BC");
        assert_eq!(show(d, "12026-01-31"), "12026-01-31");
        assert_eq!(show(d, "2026-01-31 bc"), "2026-01-31 BC");
        assert_eq!(
            err(d, "5874898-01-01"),
            ("22008", "date out of range: \"5874898-01-01\"".into())
        );
        assert_eq!(err(d, "4714-11-23 BC").0, "22008");
        assert_eq!(
            err(d, "2026-02-30"),
            (
                "22008",
                "date/time field value out of range: \"2026-02-30\"".into()
            )
        );
        assert_eq!(
            err(d, "x"),
            ("22007", "invalid input syntax for type date: \"x\"".into())
        );
        assert_eq!(err(d, "2026-01-31 25:00:00").0, "22008");
        assert_eq!(err(d, "99999999999999999999-01-01").0, "22008");
        assert_eq!(err(d, "2026-01-").0, "22007");
        assert_eq!(fmt(d, Datum::Int32(-1)), "1969-12-31");
        assert!(!fmt(d, Datum::Int32(i32::MIN)).is_empty());
        assert!(!fmt(d, Datum::Int32(i32::MAX)).is_empty());
    }

    #[test]
    fn interval_postgres_style_input() {
        let iv = DataType::Interval;
        let cases = [
            (
                "1 year 2 mons 3 days 04:05:06.5",
                "1 year 2 mons 3 days 04:05:06.5",
            ),
            ("1 day", "1 day"),
            ("2 hours 30 minutes", "02:30:00"),
            ("-1 day", "-1 days"),
            ("1.5 hours", "01:30:00"),
            ("1.5 days", "1 day 12:00:00"),
            ("1.5 months", "1 mon 15 days"),
            ("1.5 years", "1 year 6 mons"),
            ("0.5 weeks", "3 days 12:00:00"),
            ("1 week 1 day", "8 days"),
            ("@ 1 day ago", "-1 days"),
            ("@ 1 day 2 hours ago", "-1 days -02:00:00"),
            ("1 days ago 2 hours", "-1 days -02:00:00"),
            ("04:05:06", "04:05:06"),
            ("-04:05:06", "-04:05:06"),
            ("1 02:03:04", "1 day 02:03:04"),
            ("1 +02:03", "1 day 02:03:00"),
            ("1 day 2", "1 day 00:00:02"),
            ("1 2 hours", "1 day 02:00:00"),
            ("10", "00:00:10"),
            ("1.5", "00:00:01.5"),
            ("-1.5", "-00:00:01.5"),
            ("1-2", "1 year 2 mons"),
            ("-1-2", "-1 years -2 mons"),
            ("3 decades", "30 years"),
            ("2 centuries 1 millennium", "1200 years"),
            ("1.5 ms", "00:00:00.0015"),
            ("100 us", "00:00:00.0001"),
            ("1.0000005 seconds", "00:00:01"),
            ("1 mon -1 hour", "1 mon -01:00:00"),
            ("1day", "1 day"),
            ("2h30m", "02:30:00"),
            ("1 y 2 mon 3 d 4 h 5 m 6 s", "1 year 2 mons 3 days 04:05:06"),
            ("100:00:00", "100:00:00"),
            ("12:30.5", "00:12:30.5"),
            ("1:2", "01:02:00"),
            ("1 day -01:00:00", "1 day -01:00:00"),
            ("-1 days +01:00:00", "-1 days +01:00:00"),
            ("0", "00:00:00"),
            ("1 yEaRs", "1 year"),
            ("+1 day", "1 day"),
            ("- 1 day", "-1 days"),
            ("1 microsecondsxyz", "00:00:00.000001"),
            ("9223372036854775807 us", "2562047788:00:54.775807"),
        ];
        for (input, want) in cases {
            assert_eq!(show(iv, input), want, "{input}");
        }
    }

    #[test]
    fn interval_iso8601_input() {
        let iv = DataType::Interval;
        let cases = [
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("PT10S", "00:00:10"),
            ("P1W", "7 days"),
            ("PT1.5S", "00:00:01.5"),
            ("P0.5Y", "6 mons"),
            ("P-1D", "-1 days"),
            ("P1Y2M3DT4H5M6.5S", "1 year 2 mons 3 days 04:05:06.5"),
            ("P0002-06-07T01:30:00", "2 years 6 mons 7 days 01:30:00"),
            ("P00020607T013000", "2 years 6 mons 7 days 01:30:00"),
            ("PT1H30M", "01:30:00"),
        ];
        for (input, want) in cases {
            assert_eq!(show(iv, input), want, "{input}");
        }
        assert_eq!(err(iv, "p1d").0, "22007");
        assert_eq!(err(iv, "P1X").0, "22007");
        assert_eq!(err(iv, "P").0, "22007");
    }

    #[test]
    fn interval_errors() {
        let iv = DataType::Interval;
        for bad in [
            "1 ago",
            "1 day 2 days",
            "1 quarter",
            " ",
            "abc",
            "1e3 seconds",
            "1 hour 02:00:00",
            "- x",
        ] {
            assert_eq!(
                err(iv, bad),
                (
                    "22007",
                    format!("invalid input syntax for type interval: \"{bad}\"")
                ),
                "{bad}"
            );
        }
        assert_eq!(
            err(iv, "25:61:00"),
            (
                "22015",
                "interval field value out of range: \"25:61:00\"".into()
            )
        );
        assert_eq!(err(iv, "2147483648 days").0, "22015");
        assert_eq!(err(iv, "2147483647 days 1 day").0, "22015");
        assert_eq!(err(iv, "99999999999999999999 days").0, "22015");
        assert_eq!(
            err(iv, "178956971 years"),
            ("22008", "interval out of range".into())
        );
        assert_eq!(err(iv, "-9223372036854775808 us").0, "22015");
    }

    #[test]
    fn interval_output() {
        let f = |months, days, micros| {
            fmt(
                DataType::Interval,
                Datum::Interval(Interval {
                    months,
                    days,
                    micros,
                }),
            )
        };
        assert_eq!(f(0, 0, 0), "00:00:00");
        assert_eq!(f(14, 3, 14_706_500_000), "1 year 2 mons 3 days 04:05:06.5");
        assert_eq!(f(0, -1, 0), "-1 days");
        assert_eq!(f(0, 1, -3_600_000_000), "1 day -01:00:00");
        assert_eq!(f(3, 0, 0), "3 mons");
        assert_eq!(f(1, 0, 0), "1 mon");
        assert_eq!(f(-13, -1, 0), "-1 years -1 mons -1 days");
        assert_eq!(f(-12, 1, 1), "-1 years +1 day 00:00:00.000001");
        assert_eq!(f(0, 0, -500_000), "-00:00:00.5");
        assert_eq!(
            f(i32::MIN, i32::MIN, i64::MIN),
            "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808"
        );
    }

    #[test]
    fn jsonb_normalization() {
        let j = DataType::Jsonb;
        assert_eq!(
            show(
                j,
                r#"{"b": [1, 2.50, 1e2, -0, 1E-2, 0.0e5], "a": 1, "aa": {"x": null}, "a": "dup", "c": "\u00e9\n\u0001/\""}"#
            ),
            r#"{"a": "dup", "b": [1, 2.50, 100, 0, 0.01, 0], "c": "é\n\u0001/\"", "aa": {"x": null}}"#
        );
        assert_eq!(
            show(j, r#"{"bb":1,"a":2,"c":{"z":1,"yy":2}}"#),
            r#"{"a": 2, "c": {"z": 1, "yy": 2}, "bb": 1}"#
        );
        assert_eq!(show(j, "[]"), "[]");
        assert_eq!(show(j, "{}"), "{}");
        assert_eq!(show(j, "  true "), "true");
        assert_eq!(show(j, "[{}, []]"), "[{}, []]");
        assert_eq!(show(j, "-0.0"), "0.0");
        assert_eq!(show(j, "1.5e1"), "15");
        assert_eq!(show(j, "12e-1"), "1.2");
        assert_eq!(show(j, "100e-2"), "1.00");
        assert_eq!(show(j, "0.00001"), "0.00001");
        assert_eq!(
            show(j, "123456789012345678901234567890123"),
            "123456789012345678901234567890123"
        );
        assert_eq!(show(j, r#""\ud83d\ude00""#), "\"😀\"");
        assert_eq!(show(j, r#""\b\f\t\/""#), r#""\b\f\t/""#);
    }

    #[test]
    fn jsonb_errors() {
        let j = DataType::Jsonb;
        let detail = |input: &str| {
            let e = parse_text(j, input, &ctx()).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                ("22P02", "invalid input syntax for type json"),
                "{input}"
            );
            e.detail.clone().unwrap_or_default()
        };
        assert_eq!(detail("01"), "Token \"01\" is invalid.");
        assert_eq!(detail("1x"), "Token \"1x\" is invalid.");
        assert_eq!(detail("tru"), "Token \"tru\" is invalid.");
        assert_eq!(detail(r#"{"a":1,}"#), "Expected string, but found \"}\".");
        assert_eq!(detail("[1,]"), "Expected JSON value, but found \"]\".");
        assert_eq!(detail(""), "The input string ended unexpectedly.");
        assert_eq!(
            detail(r#""\ud83d""#),
            "Unicode low surrogate must follow a high surrogate."
        );
        for bad in [
            "[1 2]",
            "\"abc",
            "{\"a\":1}x",
            "\"\\q\"",
            "\"a\tb\"",
            "1.",
            "-",
            ".5",
            "+1",
            "[1,2]]",
            "{\"a\" 1}",
            "nul",
        ] {
            detail(bad);
        }
        let e = parse_text(j, r#""\u0000""#, &ctx()).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22P05", "unsupported Unicode escape sequence")
        );
        let deep = "[".repeat(5000) + &"]".repeat(5000);
        assert_eq!(parse_text(j, &deep, &ctx()).unwrap_err().code, "54001");
    }

    #[test]
    fn format_mismatched_datums() {
        assert_eq!(fmt(DataType::Int64, Datum::Int32(5)), "5");
        assert_eq!(fmt(DataType::Text, Datum::Bool(true)), "t");
        assert_eq!(fmt(DataType::Float32, Datum::Float64(0.1)), "0.1");
        assert_eq!(
            fmt(DataType::Numeric, Datum::Numeric(Decimal::new(-0, 2).into())),
            "0.00"
        );
        assert_eq!(fmt(DataType::Bool, Datum::Null), "");
    }

    /// Deterministic pseudo-random inputs through every parser: errors are
    /// fine, panics are not.
    #[test]
    fn no_panics_on_junk() {
        let alphabet: Vec<char> = "0123456789 :.-+eETZPYMWDHSx\\'\"{}[],@ábc\u{1F600}\t/aAgo"
            .chars()
            .collect();
        let types = [
            DataType::Bool,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::Float32,
            DataType::Float64,
            DataType::Numeric,
            DataType::Text,
            DataType::Varchar(Some(2)),
            DataType::Bpchar(Some(3)),
            DataType::Bytea,
            DataType::Date,
            DataType::Timestamp,
            DataType::TimestampTz,
            DataType::Interval,
            DataType::Jsonb,
            DataType::Unknown,
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let c = at(-3_600);
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let s: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            for ty in types {
                if let Ok(d) = parse_text(ty, &s, &c) {
                    let mut out = Vec::new();
                    format_text(ty, &d, &c, &mut out);
                }
            }
        }
    }
}
