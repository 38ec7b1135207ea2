//! PostgreSQL binary format (send/recv) of every type, big-endian:
//! bool (1 byte), int2/int4/int8, float4/float8 (IEEE bits), numeric
//! (base-10000 digits: ndigits, weight, sign, dscale), text types (raw UTF-8),
//! bytea (raw), date (int4 days since 2000-01-01), timestamp[tz] (int8 µs
//! since 2000-01-01), interval (int8 µs, int4 days, int4 months), jsonb
//! (version byte 1, then the text form).
//! Must not: trust lengths or contents of client bytes (every decoder checks
//! the exact length and ranges and never panics).

use rust_decimal::Decimal;

use super::datetime::{self as dt, NANOS_PER_MICRO, PG_EPOCH_DAYS, PG_EPOCH_MICROS};
use super::text::{self, decimal_from_digits, numeric_overflow};
use super::{DataType, Datum, Interval};
use crate::error::{sqlstate, DbError, DbResult};

/// numeric sign words.
const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;
/// Largest dscale a numeric header can carry.
const NUMERIC_DSCALE_MASK: u16 = 0x3FFF;
/// Most base-10000 digits numeric_recv accepts (NUMERIC_MAX_PRECISION + NUMERIC_MAX_RESULT_SCALE).
const NUMERIC_MAX_NDIGITS: usize = 3000;

fn bad_format() -> DbError {
    DbError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "incorrect binary data format")
}

fn bad_numeric(what: &str) -> DbError {
    DbError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("invalid {what} in external \"numeric\" value"))
}

/// Exactly N bytes, else 22P03.
fn exact<const N: usize>(bytes: &[u8]) -> DbResult<[u8; N]> {
    bytes.try_into().map_err(|_| bad_format())
}

/// Decodes a binary-format parameter / COPY field of type `ty`. Errors: 22P03.
pub fn decode_binary(ty: DataType, bytes: &[u8]) -> DbResult<Datum> {
    Ok(match ty {
        DataType::Bool => Datum::Bool(exact::<1>(bytes)?[0] != 0),
        DataType::Int16 => Datum::Int16(i16::from_be_bytes(exact(bytes)?)),
        DataType::Int32 => Datum::Int32(i32::from_be_bytes(exact(bytes)?)),
        DataType::Int64 => Datum::Int64(i64::from_be_bytes(exact(bytes)?)),
        DataType::Float32 => Datum::Float32(f32::from_be_bytes(exact(bytes)?)),
        DataType::Float64 => Datum::Float64(f64::from_be_bytes(exact(bytes)?)),
        DataType::Numeric => Datum::Numeric(decode_numeric(bytes)?),
        DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) | DataType::Unknown => {
            Datum::Bytes(text::coerce_string(ty, utf8(bytes)?, false)?.into_bytes())
        }
        DataType::Bytea => Datum::Bytes(bytes.to_vec()),
        DataType::Date => Datum::Int32(decode_date(bytes)?),
        DataType::Timestamp | DataType::TimestampTz => Datum::Int64(decode_timestamp(bytes)?),
        DataType::Interval => Datum::Interval(decode_interval(bytes)?),
        DataType::Jsonb => Datum::Bytes(decode_jsonb(bytes)?.into_bytes()),
    })
}

/// Appends the binary encoding of `value` (not NULL) to `out`.
/// The width follows `ty` (an Int32 datum sent as int8 is widened); a datum
/// that does not fit `ty` is sent in its own natural encoding.
pub fn encode_binary(ty: DataType, value: &Datum, out: &mut Vec<u8>) {
    match (ty, value) {
        (_, Datum::Null) => {}
        (DataType::Int16, Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_)) => {
            out.extend_from_slice(&(value.as_i64().unwrap_or(0) as i16).to_be_bytes())
        }
        (DataType::Int32 | DataType::Date, Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_)) => {
            let v = value.as_i64().unwrap_or(0);
            if ty == DataType::Date {
                encode_date(v as i32, out)
            } else {
                out.extend_from_slice(&(v as i32).to_be_bytes())
            }
        }
        (DataType::Timestamp | DataType::TimestampTz, Datum::Int64(ns)) => encode_timestamp(*ns, out),
        (DataType::Float32, Datum::Float64(v)) => out.extend_from_slice(&(*v as f32).to_be_bytes()),
        (DataType::Float64, Datum::Float32(v)) => out.extend_from_slice(&(*v as f64).to_be_bytes()),
        (DataType::Jsonb, Datum::Bytes(b)) => {
            out.push(1);
            out.extend_from_slice(b);
        }
        (_, Datum::Bool(b)) => out.push(*b as u8),
        (_, Datum::Int16(v)) => out.extend_from_slice(&v.to_be_bytes()),
        (_, Datum::Int32(v)) => out.extend_from_slice(&v.to_be_bytes()),
        (_, Datum::Int64(v)) => out.extend_from_slice(&v.to_be_bytes()),
        (_, Datum::Float32(v)) => out.extend_from_slice(&v.to_be_bytes()),
        (_, Datum::Float64(v)) => out.extend_from_slice(&v.to_be_bytes()),
        (_, Datum::Numeric(d)) => encode_numeric(d, out),
        (_, Datum::Bytes(b)) => out.extend_from_slice(b),
        (_, Datum::Interval(iv)) => encode_interval(*iv, out),
    }
}

// ---------------------------------------------------------------------------
// text, jsonb
// ---------------------------------------------------------------------------

fn utf8(bytes: &[u8]) -> DbResult<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let bad: Vec<String> = bytes[at..].iter().take(2).map(|b| format!("0x{b:02x}")).collect();
        DbError::new("22021", format!("invalid byte sequence for encoding \"UTF8\": {}", bad.join(" ")))
    })
}

/// jsonb_recv: version byte 1, then jsonb text (normalized like jsonb_in).
fn decode_jsonb(bytes: &[u8]) -> DbResult<String> {
    match bytes.split_first() {
        Some((1, rest)) => text::parse_jsonb(utf8(rest)?),
        Some((v, _)) => Err(DbError::new(
            sqlstate::INVALID_BINARY_REPRESENTATION,
            format!("unsupported jsonb version number {v}"),
        )),
        None => Err(bad_format()),
    }
}

// ---------------------------------------------------------------------------
// date, timestamp, interval
// ---------------------------------------------------------------------------

fn decode_date(bytes: &[u8]) -> DbResult<i32> {
    let pg_days = i32::from_be_bytes(exact(bytes)?);
    dt::checked_date(pg_days as i64 + PG_EPOCH_DAYS as i64)
}

fn encode_date(days: i32, out: &mut Vec<u8>) {
    let pg_days = (days as i64 - PG_EPOCH_DAYS as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    out.extend_from_slice(&pg_days.to_be_bytes());
}

fn decode_timestamp(bytes: &[u8]) -> DbResult<i64> {
    let pg_micros = i64::from_be_bytes(exact(bytes)?);
    let ns = (pg_micros as i128 + PG_EPOCH_MICROS as i128) * NANOS_PER_MICRO as i128;
    i64::try_from(ns).map_err(|_| dt::timestamp_out_of_range())
}

/// µs since 2000-01-01; nanoseconds are truncated toward -∞ (as text output does).
fn encode_timestamp(ns: i64, out: &mut Vec<u8>) {
    let pg_micros = ns.div_euclid(NANOS_PER_MICRO) - PG_EPOCH_MICROS;
    out.extend_from_slice(&pg_micros.to_be_bytes());
}

fn decode_interval(bytes: &[u8]) -> DbResult<Interval> {
    let b: [u8; 16] = exact(bytes)?;
    let (micros, rest) = b.split_at(8);
    let (days, months) = rest.split_at(4);
    Ok(Interval {
        micros: i64::from_be_bytes(exact(micros)?),
        days: i32::from_be_bytes(exact(days)?),
        months: i32::from_be_bytes(exact(months)?),
    })
}

fn encode_interval(iv: Interval, out: &mut Vec<u8>) {
    out.extend_from_slice(&iv.micros.to_be_bytes());
    out.extend_from_slice(&iv.days.to_be_bytes());
    out.extend_from_slice(&iv.months.to_be_bytes());
}

// ---------------------------------------------------------------------------
// numeric
// ---------------------------------------------------------------------------

fn be_u16(b: &[u8], at: usize) -> DbResult<u16> {
    let pair = b.get(at..at + 2).ok_or_else(bad_format)?;
    Ok(u16::from_be_bytes(exact(pair)?))
}

/// numeric_recv: header (ndigits, weight, sign, dscale) and base-10000
/// digits; digits below dscale are truncated as PostgreSQL does, then the
/// value is rounded to rust_decimal's 28 fractional digits if it must be.
fn decode_numeric(b: &[u8]) -> DbResult<Decimal> {
    let ndigits = be_u16(b, 0)? as usize;
    let weight = be_u16(b, 2)? as i16 as i64;
    let sign = be_u16(b, 4)?;
    let dscale = be_u16(b, 6)?;
    if ndigits > NUMERIC_MAX_NDIGITS {
        return Err(bad_numeric("length"));
    }
    if b.len() != 8 + 2 * ndigits {
        return Err(bad_format());
    }
    match sign {
        NUMERIC_POS | NUMERIC_NEG => {}
        NUMERIC_NAN | NUMERIC_PINF | NUMERIC_NINF => {
            return Err(DbError::unsupported("numeric NaN and Infinity are not supported"))
        }
        _ => return Err(bad_numeric("sign")),
    }
    if dscale & NUMERIC_DSCALE_MASK != dscale {
        return Err(bad_numeric("scale"));
    }
    let mut digits = Vec::with_capacity(4 * ndigits);
    for k in 0..ndigits {
        let d = be_u16(b, 8 + 2 * k)?;
        if d >= 10_000 {
            return Err(bad_numeric("digit"));
        }
        digits.extend_from_slice(&[b'0' + (d / 1000) as u8, b'0' + (d / 100 % 10) as u8, b'0' + (d / 10 % 10) as u8, b'0' + (d % 10) as u8]);
    }
    let scale = 4 * (ndigits as i64 - 1 - weight);
    digits_at_dscale(digits, scale, dscale as i64, sign == NUMERIC_NEG)
}

/// Truncates `digits × 10^-scale` to `dscale` fractional digits (trunc_var),
/// pads it to min(dscale, 28) and builds the Decimal.
fn digits_at_dscale(mut digits: Vec<u8>, scale: i64, dscale: i64, negative: bool) -> DbResult<Decimal> {
    let mut scale = scale;
    if scale > dscale {
        let drop = (scale - dscale).min(digits.len() as i64) as usize;
        digits.truncate(digits.len() - drop);
        scale = dscale;
    }
    let significant = digits.iter().skip_while(|&&c| c == b'0').count() as i64;
    if significant - scale > 29 {
        return Err(numeric_overflow());
    }
    let target = dscale.min(28);
    if significant == 0 {
        digits.clear();
    } else if scale < target {
        digits.resize(digits.len() + (target - scale) as usize, b'0');
        scale = target;
    }
    if significant == 0 {
        scale = target;
    }
    decimal_from_digits(&digits, scale, negative).ok_or_else(numeric_overflow)
}

/// numeric_send: base-10000 digits without leading or trailing zero groups,
/// weight of the first group, dscale = the decimal's scale.
fn encode_numeric(d: &Decimal, out: &mut Vec<u8>) {
    let scale = d.scale();
    let mut m = d.mantissa().unsigned_abs();
    let header = |n: usize, weight: i16, sign: u16, out: &mut Vec<u8>| {
        out.extend_from_slice(&(n as u16).to_be_bytes());
        out.extend_from_slice(&weight.to_be_bytes());
        out.extend_from_slice(&sign.to_be_bytes());
        out.extend_from_slice(&(scale as u16).to_be_bytes());
    };
    if m == 0 {
        header(0, 0, NUMERIC_POS, out);
        return;
    }
    let pad = (4 - scale % 4) % 4;
    m *= 10u128.pow(pad);
    let frac_groups = ((scale + pad) / 4) as i16;
    let mut groups = [0u16; 12];
    let mut n = 0;
    while m > 0 && n < groups.len() {
        groups[n] = (m % 10_000) as u16;
        m /= 10_000;
        n += 1;
    }
    let low = groups[..n].iter().position(|&g| g != 0).unwrap_or(0);
    let weight = n as i16 - 1 - frac_groups;
    let sign = if d.is_sign_negative() { NUMERIC_NEG } else { NUMERIC_POS };
    header(n - low, weight, sign, out);
    for g in groups[low..n].iter().rev() {
        out.extend_from_slice(&g.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
}
