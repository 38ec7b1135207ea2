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
use super::{DataType, Datum, Interval, Numeric};
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
    DbError::new(
        sqlstate::INVALID_BINARY_REPRESENTATION,
        "incorrect binary data format",
    )
}

fn bad_numeric(what: &str) -> DbError {
    DbError::new(
        sqlstate::INVALID_BINARY_REPRESENTATION,
        format!("invalid {what} in external \"numeric\" value"),
    )
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
        DataType::Oid => Datum::Int64(u32::from_be_bytes(exact(bytes)?) as i64),
        DataType::Text
        | DataType::Varchar(_)
        | DataType::Bpchar(_)
        | DataType::Name
        | DataType::Char
        | DataType::Unknown => {
            Datum::Bytes(text::coerce_string(ty, utf8(bytes)?, false)?.into_bytes())
        }
        DataType::Bytea => Datum::Bytes(bytes.to_vec()),
        DataType::Date => Datum::Int32(decode_date(bytes)?),
        DataType::Timestamp | DataType::TimestampTz => Datum::Int64(decode_timestamp(bytes)?),
        DataType::Interval => Datum::Interval(decode_interval(bytes)?),
        DataType::Jsonb => Datum::Bytes(decode_jsonb(bytes)?.into_bytes()),
        // Checked, and held in the canonical (packed where it applies) form.
        DataType::Array(e) => Datum::Bytes(super::array::ArrayValue::decode_pg(bytes, e)?.encode(e)),
        DataType::Record => Datum::Bytes(super::record::encode(&super::record::decode(bytes)?)),
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
        (DataType::Int64, Datum::Int16(_) | Datum::Int32(_)) => {
            out.extend_from_slice(&value.as_i64().unwrap_or(0).to_be_bytes())
        }
        (DataType::Int32 | DataType::Date, Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_)) => {
            let v = value.as_i64().unwrap_or(0);
            if ty == DataType::Date {
                encode_date(v as i32, out)
            } else {
                out.extend_from_slice(&(v as i32).to_be_bytes())
            }
        }
        (DataType::Oid, Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_)) => {
            out.extend_from_slice(&(value.as_i64().unwrap_or(0) as u32).to_be_bytes())
        }
        (DataType::Timestamp | DataType::TimestampTz, Datum::Int64(ns)) => {
            encode_timestamp(*ns, out)
        }
        (DataType::Float32, Datum::Float64(v)) => out.extend_from_slice(&(*v as f32).to_be_bytes()),
        (DataType::Float64, Datum::Float32(v)) => out.extend_from_slice(&(*v as f64).to_be_bytes()),
        (DataType::Array(e), Datum::Bytes(b)) => super::array::write_pg_binary(b, e, out),
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
        let bad: Vec<String> = bytes[at..]
            .iter()
            .take(2)
            .map(|b| format!("0x{b:02x}"))
            .collect();
        DbError::new(
            "22021",
            format!(
                "invalid byte sequence for encoding \"UTF8\": {}",
                bad.join(" ")
            ),
        )
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
    if pg_days == i32::MAX || pg_days == i32::MIN {
        return Ok(pg_days); // ±infinity: the same sentinels as PostgreSQL
    }
    dt::checked_date(pg_days as i64 + PG_EPOCH_DAYS as i64)
}

fn encode_date(days: i32, out: &mut Vec<u8>) {
    if days == i32::MAX || days == i32::MIN {
        out.extend_from_slice(&days.to_be_bytes());
        return;
    }
    let pg_days =
        (days as i64 - PG_EPOCH_DAYS as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    out.extend_from_slice(&pg_days.to_be_bytes());
}

fn decode_timestamp(bytes: &[u8]) -> DbResult<i64> {
    let pg_micros = i64::from_be_bytes(exact(bytes)?);
    if pg_micros == i64::MAX || pg_micros == i64::MIN {
        return Ok(pg_micros); // ±infinity
    }
    let ns = (pg_micros as i128 + PG_EPOCH_MICROS as i128) * NANOS_PER_MICRO as i128;
    i64::try_from(ns).map_err(|_| dt::timestamp_out_of_range())
}

/// µs since 2000-01-01; nanoseconds are truncated toward -∞ (as text output does).
pub(crate) fn encode_timestamp(ns: i64, out: &mut Vec<u8>) {
    if ns == i64::MAX || ns == i64::MIN {
        out.extend_from_slice(&ns.to_be_bytes());
        return;
    }
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
fn decode_numeric(b: &[u8]) -> DbResult<Numeric> {
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
        NUMERIC_NAN => return Ok(Numeric::NaN),
        NUMERIC_PINF => return Ok(Numeric::Infinity),
        NUMERIC_NINF => return Ok(Numeric::NegInfinity),
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
        digits.extend_from_slice(&[
            b'0' + (d / 1000) as u8,
            b'0' + (d / 100 % 10) as u8,
            b'0' + (d / 10 % 10) as u8,
            b'0' + (d % 10) as u8,
        ]);
    }
    let scale = 4 * (ndigits as i64 - 1 - weight);
    digits_at_dscale(digits, scale, dscale as i64, sign == NUMERIC_NEG).map(Numeric::Finite)
}

/// Truncates `digits × 10^-scale` to `dscale` fractional digits (trunc_var),
/// pads it to min(dscale, 28) and builds the Decimal.
fn digits_at_dscale(
    mut digits: Vec<u8>,
    scale: i64,
    dscale: i64,
    negative: bool,
) -> DbResult<Decimal> {
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
/// weight of the first group, dscale = the decimal's scale; the specials are
/// a bare header with their sign word.
fn encode_numeric(n: &Numeric, out: &mut Vec<u8>) {
    let sign = match n {
        Numeric::Finite(_) => None,
        Numeric::NaN => Some(NUMERIC_NAN),
        Numeric::Infinity => Some(NUMERIC_PINF),
        Numeric::NegInfinity => Some(NUMERIC_NINF),
    };
    let (Numeric::Finite(d), None) = (n, sign) else {
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&sign.unwrap_or(NUMERIC_NAN).to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        return;
    };
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
    let sign = if d.is_sign_negative() {
        NUMERIC_NEG
    } else {
        NUMERIC_POS
    };
    header(n - low, weight, sign, out);
    for g in groups[low..n].iter().rev() {
        out.extend_from_slice(&g.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::FormatContext;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|c| format!("{c:02x}")).collect()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn enc(ty: DataType, d: &Datum) -> Vec<u8> {
        let mut out = Vec::new();
        encode_binary(ty, d, &mut out);
        out
    }

    fn num(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    /// Expected bytes are PostgreSQL 15's numeric_send output.
    const NUMERIC_SEND: [(&str, &str); 13] = [
        ("0", "0000000000000000"),
        ("0.00", "0000000000000002"),
        ("1.50", "000200000000000200011388"),
        ("-1.50", "000200004000000200011388"),
        ("12345.6789", "0003000100000004000109291a85"),
        ("0.0001", "0001ffff000000040001"),
        ("-0.00012", "0002ffff40000005000107d0"),
        ("100000000", "00010002000000000001"),
        ("100000000000000000000", "00010005000000000001"),
        (
            "79228162514264337593543950335",
            "00080007000000000007240c0659059210f1172f112b014f",
        ),
        ("0.0000000000000000000000000001", "0001fff90000001c0001"),
        (
            "123456789.123456789",
            "0006000200000009000109291a8504d2162e2328",
        ),
        ("10000", "00010001000000000001"),
    ];

    #[test]
    fn numeric_matches_postgres() {
        for (text, bytes) in NUMERIC_SEND {
            let d = num(text);
            assert_eq!(
                hex(&enc(DataType::Numeric, &Datum::Numeric(d.into()))),
                bytes,
                "{text}"
            );
            let back = decode_binary(DataType::Numeric, &unhex(bytes)).unwrap();
            let Datum::Numeric(b) = back else { panic!() };
            assert_eq!(b.to_string(), d.to_string(), "{text}");
        }
    }

    #[test]
    fn numeric_decode_edges() {
        let dec = |h: &str| decode_binary(DataType::Numeric, &unhex(h));
        let show = |h: &str| match dec(h).unwrap() {
            Datum::Numeric(d) => d.to_string(),
            _ => unreachable!(),
        };
        // Digits below dscale are truncated (1.5806 and -1.5678 sent with dscale 2).
        assert_eq!(show("0002000000000002000116ae"), "1.58");
        assert_eq!(show("00020000400000020001162e"), "-1.56");
        // dscale above the digits pads with zeros; above 28 it is capped.
        assert_eq!(show("00010000000000050001"), "1.00000");
        assert_eq!(
            show("00010000000000280001"),
            "1.0000000000000000000000000000"
        );
        // Negative zero has no sign.
        assert_eq!(show("0000000040000003"), "0.000");
        assert_eq!(dec("0001000000000000").unwrap_err().code, "22P03");
        assert_eq!(
            dec("00010000000000002710").unwrap_err().message,
            "invalid digit in external \"numeric\" value"
        );
        assert_eq!(
            dec("00010000123400000001").unwrap_err().message,
            "invalid sign in external \"numeric\" value"
        );
        // numeric_send's special values: sign word C000 / D000 / F000, no digits.
        assert_eq!(show("00000000c0000000"), "NaN");
        assert_eq!(show("00000000d0000000"), "Infinity");
        assert_eq!(show("00000000f0000000"), "-Infinity");
        for special in [Numeric::NaN, Numeric::Infinity, Numeric::NegInfinity] {
            let bytes = enc(DataType::Numeric, &Datum::Numeric(special));
            assert_eq!(decode_binary(DataType::Numeric, &bytes).unwrap(), Datum::Numeric(special));
        }
        assert_eq!(
            dec("000100004000ffff0001").unwrap_err().message,
            "invalid scale in external \"numeric\" value"
        );
        assert_eq!(dec("00017fff000000000001").unwrap_err().code, "22003");
        assert_eq!(
            dec("00018000000000000001").unwrap().natural_type(),
            DataType::Numeric
        );
        assert_eq!(
            dec("0bb9000000000000").unwrap_err().message,
            "invalid length in external \"numeric\" value"
        );
        assert_eq!(dec("").unwrap_err().code, "22P03");
    }

    #[test]
    fn fixed_width_round_trips() {
        let cases = [
            (DataType::Bool, Datum::Bool(true), "01"),
            (DataType::Int16, Datum::Int16(-2), "fffe"),
            (DataType::Int32, Datum::Int32(258), "00000102"),
            (DataType::Int64, Datum::Int64(-1), "ffffffffffffffff"),
            (DataType::Float32, Datum::Float32(1.5), "3fc00000"),
            (DataType::Float64, Datum::Float64(-2.0), "c000000000000000"),
            (DataType::Date, Datum::Int32(PG_EPOCH_DAYS + 1), "00000001"),
            (DataType::Date, Datum::Int32(0), "ffffd533"),
            (DataType::Timestamp, Datum::Int64(0), "fffca2fec4c82000"),
            (
                DataType::TimestampTz,
                Datum::Int64(PG_EPOCH_MICROS * 1000 + 1_000),
                "0000000000000001",
            ),
            (
                DataType::Interval,
                Datum::Interval(Interval {
                    months: 14,
                    days: 3,
                    micros: 14_706_500_000,
                }),
                "000000036c9361a0000000030000000e",
            ),
        ];
        for (ty, d, h) in cases {
            let bytes = enc(ty, &d);
            assert_eq!(hex(&bytes), h, "{ty:?}");
            assert_eq!(decode_binary(ty, &bytes).unwrap(), d, "{ty:?}");
        }
    }

    #[test]
    fn widening_and_truncation() {
        assert_eq!(
            hex(&enc(DataType::Int64, &Datum::Int32(7))),
            "0000000000000007"
        );
        assert_eq!(hex(&enc(DataType::Int16, &Datum::Int64(7))), "0007");
        assert_eq!(
            hex(&enc(DataType::Float64, &Datum::Float32(1.5))),
            "3ff8000000000000"
        );
        // ns below a microsecond are dropped toward -infinity.
        assert_eq!(
            enc(
                DataType::Timestamp,
                &Datum::Int64(PG_EPOCH_MICROS * 1000 + 999)
            ),
            vec![0; 8]
        );
        assert_eq!(
            hex(&enc(
                DataType::Timestamp,
                &Datum::Int64(PG_EPOCH_MICROS * 1000 - 1)
            )),
            "ffffffffffffffff"
        );
        assert_eq!(
            decode_binary(DataType::Bool, &[7]).unwrap(),
            Datum::Bool(true)
        );
    }

    #[test]
    fn wrong_lengths_and_ranges() {
        for (ty, n) in [
            (DataType::Bool, 2),
            (DataType::Int16, 4),
            (DataType::Int32, 2),
            (DataType::Int64, 4),
            (DataType::Float32, 8),
            (DataType::Float64, 0),
            (DataType::Date, 8),
            (DataType::Timestamp, 4),
            (DataType::Interval, 12),
        ] {
            let e = decode_binary(ty, &vec![0; n]).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                ("22P03", "incorrect binary data format"),
                "{ty:?}"
            );
        }
        assert_eq!(
            decode_binary(DataType::Timestamp, &(i64::MAX - 1).to_be_bytes())
                .unwrap_err()
                .code,
            "22008"
        );
        assert_eq!(
            decode_binary(DataType::Date, &(i32::MAX - 1).to_be_bytes())
                .unwrap_err()
                .code,
            "22008"
        );
        // ±infinity travel as PostgreSQL's sentinels
        assert_eq!(
            decode_binary(DataType::Timestamp, &i64::MAX.to_be_bytes()).unwrap(),
            Datum::Int64(i64::MAX)
        );
        assert_eq!(
            decode_binary(DataType::Date, &i32::MIN.to_be_bytes()).unwrap(),
            Datum::Int32(i32::MIN)
        );
    }

    #[test]
    fn text_and_jsonb() {
        assert_eq!(
            decode_binary(DataType::Text, "héllo".as_bytes()).unwrap(),
            Datum::text("héllo")
        );
        let e = decode_binary(DataType::Varchar(None), &[b'a', 0xff]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22021", "invalid byte sequence for encoding \"UTF8\": 0xff")
        );
        assert_eq!(
            decode_binary(DataType::Text, b"a\0").unwrap_err().code,
            "22021"
        );
        assert_eq!(
            decode_binary(DataType::Bpchar(Some(3)), b"a").unwrap(),
            Datum::text("a  ")
        );
        assert_eq!(
            decode_binary(DataType::Varchar(Some(1)), b"ab")
                .unwrap_err()
                .code,
            "22001"
        );
        assert_eq!(
            decode_binary(DataType::Bytea, &[0, 255]).unwrap(),
            Datum::Bytes(vec![0, 255])
        );
        let j = decode_binary(DataType::Jsonb, b"\x01{\"b\":1,\"a\":[1e2]}").unwrap();
        assert_eq!(j, Datum::text("{\"a\": [100], \"b\": 1}"));
        assert_eq!(
            enc(DataType::Jsonb, &j),
            b"\x01{\"a\": [100], \"b\": 1}".to_vec()
        );
        assert_eq!(
            decode_binary(DataType::Jsonb, b"\x02{}")
                .unwrap_err()
                .message,
            "unsupported jsonb version number 2"
        );
        assert_eq!(
            decode_binary(DataType::Jsonb, b"").unwrap_err().code,
            "22P03"
        );
        assert_eq!(
            decode_binary(DataType::Jsonb, b"\x01{").unwrap_err().code,
            "22P02"
        );
    }

    #[test]
    fn numeric_round_trips_every_scale() {
        let ctx = FormatContext::default();
        for text in [
            "0.1",
            "-7",
            "1e-28",
            "99999.99990",
            "-0.0000000001",
            "123456789012345678901234567.8",
            "5e27",
        ] {
            let Datum::Numeric(Numeric::Finite(d)) =
                crate::types::text::parse_text(DataType::Numeric, text, &ctx).unwrap()
            else {
                panic!()
            };
            for scale in 0..=28u32 {
                let mut r = d;
                r.rescale(scale);
                let back = decode_binary(
                    DataType::Numeric,
                    &enc(DataType::Numeric, &Datum::Numeric(r.into())),
                )
                .unwrap();
                assert_eq!(back, Datum::Numeric(r.into()), "{text} @ {scale}");
                let Datum::Numeric(b) = back else { panic!() };
                assert_eq!(b.scale(), r.scale());
            }
        }
    }

    /// Deterministic random byte strings through every decoder: no panics.
    #[test]
    fn no_panics_on_random_bytes() {
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
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..50_000 {
            let len = (next() % 24) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if next() % 3 == 0 && bytes.len() >= 8 {
                // A numeric header with a consistent length and random fields.
                let nd = (bytes.len() - 8) / 2;
                bytes[0] = 0;
                bytes[1] = nd as u8;
                bytes[5] = 0;
                bytes.truncate(8 + 2 * nd);
            }
            for ty in types {
                if let Ok(d) = decode_binary(ty, &bytes) {
                    let mut out = Vec::new();
                    encode_binary(ty, &d, &mut out);
                }
            }
        }
    }
}
