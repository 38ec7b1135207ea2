//! Numeric field values and timestamps, accepted exactly as InfluxDB 1.x's
//! `scanNumber` and `strconv` accept them: `-?digits` with `i` (int64) or
//! `u` (uint64) suffix, or a decimal float (`1`, `-1.5`, `.5`, `1.`,
//! `1.e+78`, `1E5`; no NaN, Inf, hex or `+` sign). Floats are converted
//! exactly (Clinger's fast path when the digits allow it, the standard
//! library's correctly rounded parser otherwise).
//! Must not: accept a spelling Go rejects, or word an error differently.

use super::scan::{eight_digits_value, is_eight_digits, read_word};

/// A parsed numeric field value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Number {
    Float(f64),
    Integer(i64),
    Unsigned(u64),
}

/// Why a numeric token was refused (each maps to one InfluxDB message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumberError {
    /// "invalid number"
    Invalid,
    /// "invalid float": passes Go's character scan but not `ParseFloat`
    /// (`1e400`, `1e`, `1e5.5`).
    InvalidFloat,
    /// "unable to parse integer N: value out of range"
    IntegerRange,
    /// "unable to parse unsigned N: value out of range"
    UnsignedRange,
}

/// Powers of ten exactly representable in an f64.
pub(super) const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Largest integer below which every integer is an exact f64.
pub(super) const MAX_EXACT_INT: u64 = 1 << 53;

/// Parses a whole numeric token (the bytes up to the value's terminator).
/// Classification follows Go's `scanNumber` byte by byte, so the error
/// chosen for a malformed token is the one InfluxDB gives.
pub(super) fn parse_number(tok: &[u8]) -> Result<Number, NumberError> {
    let Some(&first) = tok.first() else {
        return Err(NumberError::Invalid);
    };
    let negative = first == b'-';
    let mut is_int = false;
    let mut is_unsigned = false;
    let mut decimal = false;
    let mut scientific = false;
    for (j, &c) in tok.iter().enumerate() {
        if j == 0 && negative {
            continue;
        }
        if j > 0 && !(is_int || is_unsigned) {
            if c == b'i' {
                is_int = true;
                continue;
            }
            if c == b'u' {
                is_unsigned = true;
                continue;
            }
        }
        if c == b'.' {
            if decimal {
                return Err(NumberError::Invalid);
            }
            decimal = true;
        }
        if j > 0 && (c == b'e' || c == b'E') {
            scientific = true;
            continue;
        }
        if (c == b'+' || c == b'-') && j > 0 && matches!(tok[j - 1], b'e' | b'E') {
            continue;
        }
        if !(c.is_ascii_digit() || c == b'.') {
            return Err(NumberError::Invalid);
        }
    }
    if (is_int || is_unsigned) && (decimal || scientific) {
        return Err(NumberError::Invalid);
    }
    let numeric_digits =
        tok.len() - usize::from(is_int) - usize::from(decimal) - usize::from(negative);
    if numeric_digits == 0 {
        return Err(NumberError::Invalid);
    }
    if is_int || is_unsigned {
        let (body, suffix) = tok.split_at(tok.len() - 1);
        if suffix != [if is_int { b'i' } else { b'u' }] {
            return Err(NumberError::Invalid);
        }
        if is_unsigned {
            if negative {
                return Err(NumberError::Invalid);
            }
            return parse_u64(body)
                .map(Number::Unsigned)
                .ok_or(NumberError::UnsignedRange);
        }
        return parse_i64(body)
            .map(Number::Integer)
            .ok_or(NumberError::IntegerRange);
    }
    parse_go_float(tok)
        .map(Number::Float)
        .ok_or(NumberError::InvalidFloat)
}

/// `digits` (ASCII digits only, at least one) as a u64; None on overflow.
fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// `-?digits` as an i64; None on overflow or a malformed body.
pub(super) fn parse_i64(body: &[u8]) -> Option<i64> {
    let (negative, digits) = match body.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, body),
    };
    let magnitude = parse_u64(digits)?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseFloat` on a decimal token:
/// `-? (digits [. digits*] | . digits) ([eE] [+-]? digits)?`, finite only.
pub(super) fn parse_go_float(tok: &[u8]) -> Option<f64> {
    let mut i = 0;
    let negative = tok.first() == Some(&b'-');
    if negative {
        i = 1;
    }
    let mut mantissa: u64 = 0;
    let mut significant = 0usize; // digits accumulated into `mantissa`
    let mut dropped = false; // a nonzero digit did not fit
    let mut exp10: i64 = 0;
    let mut int_digits = 0usize;
    while let Some(&c) = tok.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        int_digits += 1;
        accumulate(
            c,
            &mut mantissa,
            &mut significant,
            &mut dropped,
            &mut exp10,
            false,
        );
        i += 1;
    }
    let mut frac_digits = 0usize;
    if tok.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&c) = tok.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            frac_digits += 1;
            accumulate(
                c,
                &mut mantissa,
                &mut significant,
                &mut dropped,
                &mut exp10,
                true,
            );
            i += 1;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(tok.get(i), Some(b'e' | b'E')) {
        i += 1;
        let mut exp_negative = false;
        if let Some(&s @ (b'+' | b'-')) = tok.get(i) {
            exp_negative = s == b'-';
            i += 1;
        }
        let exp_start = i;
        let mut e: i64 = 0;
        while let Some(&c) = tok.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            e = (e * 10 + (c - b'0') as i64).min(1_000_000_000);
            i += 1;
        }
        if i == exp_start {
            return None;
        }
        exp10 += if exp_negative { -e } else { e };
    }
    if i != tok.len() {
        return None;
    }
    let value = if !dropped && mantissa <= MAX_EXACT_INT && (-22..=22).contains(&exp10) {
        // Clinger: both operands exact, one correctly rounded operation.
        let m = mantissa as f64;
        if exp10 >= 0 {
            m * EXACT_POW10[exp10 as usize]
        } else {
            m / EXACT_POW10[(-exp10) as usize]
        }
    } else {
        // The token is ASCII by construction; std's parser is correctly rounded.
        std::str::from_utf8(tok).ok()?.parse::<f64>().ok()?.abs()
    };
    if !value.is_finite() {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// Adds one digit to a float's mantissa while it has room (19 digits);
/// past that, integer digits scale the exponent and nonzero digits mark the
/// mantissa as inexact.
#[inline]
fn accumulate(
    c: u8,
    mantissa: &mut u64,
    significant: &mut usize,
    dropped: &mut bool,
    exp10: &mut i64,
    fraction: bool,
) {
    let d = (c - b'0') as u64;
    if *significant < 19 {
        if *significant > 0 || d != 0 {
            *significant += 1;
        }
        *mantissa = *mantissa * 10 + d;
        if fraction {
            *exp10 -= 1;
        }
    } else {
        if d != 0 {
            *dropped = true;
        }
        if !fraction {
            *exp10 += 1;
        }
    }
}

/// A timestamp token (`-?digits`, checked by the caller to hold only those
/// bytes) as an i64; None when it does not fit.
#[inline]
pub(super) fn parse_timestamp_digits(tok: &[u8]) -> Option<i64> {
    let (negative, digits) = match tok.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, tok),
    };
    if digits.is_empty() {
        return None;
    }
    if digits.len() > 19 {
        return parse_i64(tok);
    }
    let mut v: u64 = 0;
    let mut i = 0;
    while let Some(w) = read_word(digits, i) {
        if !is_eight_digits(w) {
            return None;
        }
        v = v * 100_000_000 + eight_digits_value(w);
        i += 8;
    }
    for &c in &digits[i..] {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u64;
    }
    if negative {
        (v <= i64::MAX as u64 + 1).then(|| (v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Result<Number, NumberError> {
        parse_number(s.as_bytes())
    }

    #[test]
    fn go_number_classification() {
        use Number::*;
        use NumberError::*;
        assert_eq!(num("1"), Ok(Float(1.0)));
        assert_eq!(num("1i"), Ok(Integer(1)));
        assert_eq!(num("-9223372036854775808i"), Ok(Integer(i64::MIN)));
        assert_eq!(num("9223372036854775807i"), Ok(Integer(i64::MAX)));
        assert_eq!(num("18446744073709551615u"), Ok(Unsigned(u64::MAX)));
        assert_eq!(num("1.e+78"), Ok(Float(1e78)));
        assert_eq!(num("1E5"), Ok(Float(1e5)));
        assert_eq!(num(".5"), Ok(Float(0.5)));
        assert_eq!(num("1."), Ok(Float(1.0)));
        assert!(matches!(num("-0.0"), Ok(Float(z)) if z == 0.0 && z.is_sign_negative()));
        for bad in [
            "1.2.3", "1-2", "-", "0x10", "1.5i", "1e3i", "9i10", "-1u", ".", "-.", "1iu", "1u5",
            "nan", "+5", "1+2", "--1", "1ii",
        ] {
            assert_eq!(num(bad), Err(Invalid), "{bad}");
        }
        for bad in [
            "1e400", "1e", "1e+", "-e5", "1e5e5", "1e5.5", ".e5", "-1e400",
        ] {
            assert_eq!(num(bad), Err(InvalidFloat), "{bad}");
        }
        assert_eq!(num("9223372036854775808i"), Err(IntegerRange));
        assert_eq!(num("-9223372036854775809i"), Err(IntegerRange));
        assert_eq!(num("18446744073709551616u"), Err(UnsignedRange));
    }

    #[test]
    fn floats_round_like_std() {
        for s in [
            "0.1",
            "0.123",
            "3.141592653589793",
            "123456789012345678901234567890",
            "1e-320",
            "2.2250738585072014e-308",
            "9007199254740993",
            "0.000000000000000000000000001",
            "1.7976931348623157e308",
            "4.9e-324",
            "12345678901234567890.123e-5",
            "1e22",
            "1e23",
            "0.30000000000000004",
            "100000000000000000000000",
            "-1.5e-7",
        ] {
            let ours = parse_go_float(s.as_bytes()).unwrap();
            let std: f64 = s.parse().unwrap();
            assert_eq!(ours.to_bits(), std.to_bits(), "{s}");
        }
        assert_eq!(parse_go_float(b"1e-400"), Some(0.0));
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            parse_timestamp_digits(b"1465839830100400200"),
            Some(1465839830100400200)
        );
        assert_eq!(parse_timestamp_digits(b"-1"), Some(-1));
        assert_eq!(
            parse_timestamp_digits(b"9223372036854775807"),
            Some(i64::MAX)
        );
        assert_eq!(
            parse_timestamp_digits(b"-9223372036854775808"),
            Some(i64::MIN)
        );
        assert_eq!(parse_timestamp_digits(b"9223372036854775808"), None);
        assert_eq!(parse_timestamp_digits(b"99999999999999999999"), None);
        assert_eq!(parse_timestamp_digits(b"-"), None);
        assert_eq!(parse_timestamp_digits(b"12345678a"), None);
    }
}
