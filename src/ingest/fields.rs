//! One text field of ingested data straight into its column: the common
//! spellings of integers, floats, booleans, timestamps and text are parsed
//! from the bytes into the column's vector, without a `String` or `Datum`
//! per value; anything else goes through the type's full text input
//! function (`types::text::parse_text`), which also words every error.
//! Must not: accept a spelling the full input function would refuse, or
//! read a value differently from it (the tests hold the two side by side).

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{Column, ColumnData};
use crate::types::datetime::NANOS_PER_SEC;
use crate::types::text::parse_text;
use crate::types::{DataType, FormatContext, Zone};

/// The last timestamp text a column read and its value: consecutive rows of
/// time-series data often carry the same timestamp (TSBS writes every host's
/// point for one instant in a row).
#[derive(Default)]
pub struct LastTimestamp {
    raw: Vec<u8>,
    value: i64,
}

/// Appends `raw` (None: NULL) to `col` as a value of the column's type.
pub fn push_text_value(
    col: &mut Column,
    raw: Option<&[u8]>,
    ctx: &FormatContext,
    last: &mut LastTimestamp,
) -> DbResult<()> {
    let Some(raw) = raw else {
        col.push_null();
        return Ok(());
    };
    let pushed = match (&mut col.data, col.data_type) {
        (ColumnData::Int64(v), DataType::Int64) => plain_integer(raw).map(|x| v.push(x)),
        (ColumnData::Int32(v), DataType::Int32) => {
            plain_integer(raw).and_then(|x| i32::try_from(x).ok()).map(|x| v.push(x))
        }
        (ColumnData::Int16(v), DataType::Int16) => {
            plain_integer(raw).and_then(|x| i16::try_from(x).ok()).map(|x| v.push(x))
        }
        (ColumnData::Float64(v), DataType::Float64) => exact_f64(raw)
            .or_else(|| plain_float(raw).and_then(|s| s.parse().ok()))
            .map(|x| v.push(x)),
        (ColumnData::Float32(v), DataType::Float32) => exact_f32(raw)
            .or_else(|| plain_float(raw).and_then(|s| s.parse().ok()))
            .map(|x| v.push(x)),
        (ColumnData::Bool(v), DataType::Bool) => match raw {
            b"t" | b"true" => {
                v.push(true);
                Some(())
            }
            b"f" | b"false" => {
                v.push(false);
                Some(())
            }
            _ => None,
        },
        (ColumnData::Int64(v), DataType::TimestampTz | DataType::Timestamp) => {
            if !last.raw.is_empty() && last.raw == raw {
                v.push(last.value);
                Some(())
            } else {
                let zone = (col.data_type == DataType::TimestampTz).then_some(ctx.zone);
                plain_timestamp(raw, zone).map(|x| {
                    last.raw.clear();
                    last.raw.extend_from_slice(raw);
                    last.value = x;
                    v.push(x)
                })
            }
        }
        (ColumnData::Bytes(v), DataType::Text | DataType::Varchar(None)) => {
            // Bad UTF-8 and NULs go to the general path, which words their errors.
            if std::str::from_utf8(raw).is_ok() && !raw.contains(&0) {
                v.push(raw);
                Some(())
            } else {
                None
            }
        }
        _ => None,
    };
    match pushed {
        Some(()) => {
            if let Some(validity) = &mut col.validity {
                validity.push(true);
            }
            Ok(())
        }
        None => {
            let text = std::str::from_utf8(raw).map_err(|_| {
                DbError::new(
                    sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                    "invalid byte sequence for encoding \"UTF8\"",
                )
            })?;
            let value = parse_text(col.data_type, text, ctx)?;
            col.push_datum(&value);
            Ok(())
        }
    }
}

/// `[-]digits` with at most 18 digits (no overflow possible in i64).
fn plain_integer(raw: &[u8]) -> Option<i64> {
    let (neg, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (d - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

/// `[-]digits[.digits]` (at most 17 characters, so the value cannot
/// overflow or underflow) as text, for Rust's correctly rounded parse, which
/// reads it exactly as float8in / float4in do.
fn plain_float(raw: &[u8]) -> Option<&str> {
    let body = raw.strip_prefix(b"-").unwrap_or(raw);
    if body.is_empty() || body.len() > 17 || body[0] == b'.' || body[body.len() - 1] == b'.' {
        return None;
    }
    let mut dots = 0;
    for &c in body {
        if c == b'.' {
            dots += 1;
        } else if !c.is_ascii_digit() {
            return None;
        }
    }
    if dots > 1 {
        return None;
    }
    // ASCII digits, '-' and '.' only: valid UTF-8.
    std::str::from_utf8(raw).ok()
}

/// Powers of ten exact in an f64 (and, up to 1e10, in an f32).
const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/// `[-]digits[.digits]` as (negative, all digits as an integer, digit count,
/// digits after the point), or None for anything else.
fn decimal_parts(raw: &[u8]) -> Option<(bool, u64, usize, usize)> {
    let (neg, body) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    let mut mantissa: u64 = 0;
    let (mut digits, mut fraction, mut seen_point) = (0usize, 0usize, false);
    for &c in body {
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if c.is_ascii_digit() {
            digits += 1;
            if digits > 19 {
                return None;
            }
            mantissa = mantissa * 10 + (c - b'0') as u64;
            fraction += seen_point as usize;
        } else {
            return None;
        }
    }
    // "1." and ".5" are valid input, but rare: the full reader takes them.
    if digits == 0 || body.first() == Some(&b'.') || body.last() == Some(&b'.') {
        return None;
    }
    Some((neg, mantissa, digits, fraction))
}

/// Clinger's fast path: with at most 15 digits the mantissa and 10^fraction
/// are exact doubles, so one correctly rounded division gives the correctly
/// rounded value of the decimal, which is what float8in returns.
fn exact_f64(raw: &[u8]) -> Option<f64> {
    let (neg, mantissa, digits, fraction) = decimal_parts(raw)?;
    if digits > 15 {
        return None;
    }
    let v = mantissa as f64 / POW10[fraction];
    Some(if neg { -v } else { v })
}

/// The same for float4in: at most 7 digits (below 2^24) and 10^10.
fn exact_f32(raw: &[u8]) -> Option<f32> {
    let (neg, mantissa, digits, fraction) = decimal_parts(raw)?;
    if digits > 7 || fraction > 10 {
        return None;
    }
    let v = mantissa as f32 / POW10[fraction] as f32;
    Some(if neg { -v } else { v })
}

fn two_digits(b: &[u8]) -> Option<u32> {
    match b {
        [a, c] if a.is_ascii_digit() && c.is_ascii_digit() => Some(((a - b'0') * 10 + (c - b'0')) as u32),
        _ => None,
    }
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` (a `T` may join date and time) with, for
/// timestamptz, an optional zone `Z`, `±HH`, `±HH:MM` or `±HHMM` (a space
/// before it allowed): nanoseconds since 1970 in UTC (timestamptz; no zone
/// means the session's) or as written (timestamp, whose input ignores a
/// zone). `None` for anything else, including dates outside 1677..2262.
fn plain_timestamp(raw: &[u8], session_zone: Option<Zone>) -> Option<i64> {
    if raw.len() < 19 || raw[4] != b'-' || raw[7] != b'-' || !matches!(raw[10], b' ' | b'T') || raw[13] != b':' || raw[16] != b':' {
        return None;
    }
    let year = two_digits(&raw[0..2])? * 100 + two_digits(&raw[2..4])?;
    let (month, day) = (two_digits(&raw[5..7])?, two_digits(&raw[8..10])?);
    let (hour, minute, second) = (two_digits(&raw[11..13])?, two_digits(&raw[14..16])?, two_digits(&raw[17..19])?);
    if !(1678..=2261).contains(&year) || !(1..=12).contains(&month) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let month_days = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day == 0 || day > month_days {
        return None;
    }
    let mut rest = &raw[19..];
    let mut frac_ns: i64 = 0;
    if let Some(f) = rest.strip_prefix(b".") {
        let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > 9 {
            return None;
        }
        for (i, &d) in f[..n].iter().enumerate() {
            frac_ns += (d - b'0') as i64 * 10i64.pow(8 - i as u32);
        }
        // PostgreSQL keeps microseconds: the fraction rounds half away from zero to 6 digits.
        frac_ns = (frac_ns + 500) / 1_000 * 1_000;
        rest = &f[n..];
    }
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let written_offset: Option<i64> = match rest {
        [] => None,
        b"Z" | b"z" => Some(0),
        [sign @ (b'+' | b'-'), zone @ ..] => {
            let (h, m) = match zone {
                [_, _] => (two_digits(zone)?, 0),
                [a, b, b':', c, d] => (two_digits(&[*a, *b])?, two_digits(&[*c, *d])?),
                [a, b, c, d] => (two_digits(&[*a, *b])?, two_digits(&[*c, *d])?),
                _ => return None,
            };
            if h > 15 || m > 59 {
                return None;
            }
            let o = (h * 3600 + m * 60) as i64;
            Some(if *sign == b'-' { -o } else { o })
        }
        _ => return None,
    };
    let days = days_in_range(year as i64, month as i64, day as i64);
    let secs = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64;
    let local = secs as i128 * NANOS_PER_SEC as i128 + frac_ns as i128;
    // timestamp (without zone) ignores a written zone, as its input function does.
    let ns = match (session_zone, written_offset) {
        (None, _) => local,
        (Some(_), Some(off)) => local - off as i128 * NANOS_PER_SEC as i128,
        (Some(zone), None) => zone.local_to_utc(local),
    };
    i64::try_from(ns).ok()
}

/// `days_from_civil` for years 1678..2261, in i64 arithmetic.
fn days_in_range(y: i64, m: i64, d: i64) -> i64 {
    let y = y - (m <= 2) as i64;
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::datetime::days_from_civil;
    use crate::types::Datum;

    /// The fast path and the full input function give the same value (or both refuse).
    fn same_as_input_function(ty: DataType, text: &str, ctx: &FormatContext) {
        let mut fast = Column::with_capacity(ty, 1);
        let fast_result = push_text_value(&mut fast, Some(text.as_bytes()), ctx, &mut LastTimestamp::default());
        let full = parse_text(ty, text, ctx);
        match (fast_result, full) {
            (Ok(()), Ok(v)) => assert!(fast.datum(0).total_cmp(&v).is_eq(), "{ty:?} {text:?}: {:?} vs {v:?}", fast.datum(0)),
            (Err(a), Err(b)) => assert_eq!(a.code, b.code, "{ty:?} {text:?}"),
            (a, b) => panic!("{ty:?} {text:?}: fast {a:?}, input function {b:?}"),
        }
    }

    #[test]
    fn fast_paths_read_values_as_the_input_functions_do() {
        let utc = FormatContext::default();
        let plus2 = FormatContext {
            zone: Zone::Fixed(7200),
            ..FormatContext::default()
        };
        for t in ["0", "-1", "42", "32767", "32768", "-32768", "-32769", "2147483648", "999999999999999999", "9223372036854775807", "1e3", " 7", "7 ", "", "-", "+5", "0x10", "١"] {
            for ty in [DataType::Int16, DataType::Int32, DataType::Int64] {
                same_as_input_function(ty, t, &utc);
            }
        }
        for t in ["0", "58", "-0", "-12.5", "3.14159265358979", "0.1", "1.", ".5", "1e5", "NaN", "inf", "1.2.3", "12345678901234567890", " 1", "--1"] {
            same_as_input_function(DataType::Float64, t, &utc);
            same_as_input_function(DataType::Float32, t, &utc);
        }
        for t in ["t", "f", "true", "false", "yes", "T", "x"] {
            same_as_input_function(DataType::Bool, t, &utc);
        }
        for t in [
            "2016-01-01 00:00:10+00",
            "2016-01-01 05:17:33.123456 +0000",
            "2016-01-01T05:17:33.1234567Z",
            "2016-02-29 23:59:59.9999995-03:30",
            "2015-02-29 00:00:00",
            "2016-13-01 00:00:00",
            "1677-06-01 00:00:00",
            "2262-06-01 00:00:00",
            "2016-01-01 24:00:00",
            "2016-01-01 12:00:00+1530",
            "2016-01-01 12:00:00 PST",
            "2016-01-01",
            "epoch",
            "2016-01-01 00:00:00.",
        ] {
            for ctx in [&utc, &plus2] {
                same_as_input_function(DataType::TimestampTz, t, ctx);
                same_as_input_function(DataType::Timestamp, t, ctx);
            }
        }
        for t in ["host_0", "", "é", "a\u{0}b"] {
            same_as_input_function(DataType::Text, t, &utc);
        }
    }

    #[test]
    fn generated_timestamps_and_numbers_match_the_input_functions() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let fixed = FormatContext {
            zone: Zone::Fixed(-5 * 3600),
            ..FormatContext::default()
        };
        let new_york = FormatContext {
            zone: Zone::from_name("America/New_York").expect("a tz database zone"),
            ..FormatContext::default()
        };
        for round in 0..10_000 {
            let ctx = if round % 2 == 0 { &fixed } else { &new_york };
            let frac = match next(4) {
                0 => String::new(),
                k => format!(".{:0width$}", next(10u64.pow(3 * k as u32)), width = 3 * k as usize),
            };
            let zone = ["", "+00", " +0000", "Z", "-07:30", "+0530", "+14"][next(7) as usize];
            let t = format!(
                "{:04}-{:02}-{:02}{}{:02}:{:02}:{:02}{frac}{zone}",
                1680 + next(580),
                1 + next(12),
                1 + next(31),
                if next(2) == 0 { ' ' } else { 'T' },
                next(24),
                next(60),
                next(60)
            );
            same_as_input_function(DataType::TimestampTz, &t, ctx);
            same_as_input_function(DataType::Timestamp, &t, ctx);
            let n = format!("{}{}.{}", if next(2) == 0 { "-" } else { "" }, next(1_000_000), next(100_000));
            same_as_input_function(DataType::Float64, &n, ctx);
            same_as_input_function(DataType::Float32, &n, ctx);
            same_as_input_function(DataType::Int64, &next(u64::MAX >> 1).to_string(), ctx);
        }
    }

    #[test]
    fn days_in_range_is_days_from_civil() {
        for y in 1678..2262 {
            for m in 1..=12 {
                for d in [1, 15, 28] {
                    assert_eq!(days_in_range(y, m, d), days_from_civil(y, m as u32, d as u32), "{y}-{m}-{d}");
                }
            }
        }
    }

    #[test]
    fn a_repeated_timestamp_reads_its_own_value() {
        let ctx = FormatContext::default();
        let mut c = Column::with_capacity(DataType::TimestampTz, 3);
        let mut last = LastTimestamp::default();
        for t in ["2016-01-01 00:00:10+00", "2016-01-01 00:00:10+00", "2016-01-01 00:00:20+00"] {
            push_text_value(&mut c, Some(t.as_bytes()), &ctx, &mut last).unwrap();
        }
        assert_eq!(c.datum(0), c.datum(1));
        assert_eq!(c.datum(2), Datum::Int64(c.datum(0).as_i64().unwrap() + 10_000_000_000));
    }

    #[test]
    fn nulls_and_validity_follow_pushes() {
        let ctx = FormatContext::default();
        let mut c = Column::with_capacity(DataType::Int64, 3);
        let mut last = LastTimestamp::default();
        push_text_value(&mut c, Some(b"1"), &ctx, &mut last).unwrap();
        push_text_value(&mut c, None, &ctx, &mut last).unwrap();
        push_text_value(&mut c, Some(b"3"), &ctx, &mut last).unwrap();
        assert_eq!(c.datum(0), Datum::Int64(1));
        assert_eq!(c.datum(1), Datum::Null);
        assert_eq!(c.datum(2), Datum::Int64(3));
    }
}
