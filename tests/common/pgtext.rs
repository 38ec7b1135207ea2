//! Render values received in PostgreSQL's *binary* format as the text that
//! PostgreSQL itself prints for them (DateStyle ISO, IntervalStyle postgres,
//! TimeZone UTC, extra_float_digits 1), so that results fetched over the
//! extended protocol can be compared with the same expected text as results
//! fetched over the simple protocol.

use std::error::Error;

use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

type BoxError = Box<dyn Error + Sync + Send>;

/// The raw bytes of one non-NULL value, whatever its type.
#[derive(Debug, Clone, Copy)]
pub struct Raw<'a>(pub &'a [u8]);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Raw(raw))
    }
    fn accepts(_ty: &Type) -> bool {
        true
    }
}

/// A parameter sent as the given raw bytes in binary format, for types that
/// tokio-postgres cannot encode without optional features (date, numeric,
/// interval, jsonb).
#[derive(Debug, Clone)]
pub struct RawParam(pub Vec<u8>);

impl ToSql for RawParam {
    fn to_sql(&self, _ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }
    fn accepts(_ty: &Type) -> bool {
        true
    }
    fn to_sql_checked(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        self.to_sql(ty, out)
    }
}

pub mod oid {
    pub const BOOL: u32 = 16;
    pub const BYTEA: u32 = 17;
    pub const CHAR: u32 = 18;
    pub const NAME: u32 = 19;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const REGPROC: u32 = 24;
    pub const TEXT: u32 = 25;
    pub const OID: u32 = 26;
    pub const JSON: u32 = 114;
    pub const XML: u32 = 142;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const UNKNOWN: u32 = 705;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const DATE: u32 = 1082;
    pub const TIME: u32 = 1083;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const INTERVAL: u32 = 1186;
    pub const NUMERIC: u32 = 1700;
    pub const REGCLASS: u32 = 2205;
    pub const REGTYPE: u32 = 2206;
    pub const UUID: u32 = 2950;
    pub const JSONB: u32 = 3802;
}

/// Text-like types whose binary form is their UTF-8 text.
pub fn is_text_like(oid: u32) -> bool {
    matches!(
        oid,
        oid::TEXT
            | oid::VARCHAR
            | oid::BPCHAR
            | oid::NAME
            | oid::UNKNOWN
            | oid::JSON
            | oid::XML
            | oid::CHAR
    )
}

fn need(raw: &[u8], n: usize, what: &str) -> Result<(), String> {
    if raw.len() != n {
        Err(format!(
            "binary {what} must be {n} bytes, got {}",
            raw.len()
        ))
    } else {
        Ok(())
    }
}

/// Render a binary value of the type with OID `oid` as PostgreSQL's text output.
pub fn binary_to_text(oid: u32, raw: &[u8]) -> Result<String, String> {
    Ok(match oid {
        oid::BOOL => {
            need(raw, 1, "bool")?;
            match raw[0] {
                0 => "f".into(),
                1 => "t".into(),
                b => return Err(format!("binary bool byte {b} is neither 0 nor 1")),
            }
        }
        oid::INT2 => {
            need(raw, 2, "int2")?;
            i16::from_be_bytes(raw.try_into().unwrap()).to_string()
        }
        oid::INT4 => {
            need(raw, 4, "int4")?;
            i32::from_be_bytes(raw.try_into().unwrap()).to_string()
        }
        oid::INT8 => {
            need(raw, 8, "int8")?;
            i64::from_be_bytes(raw.try_into().unwrap()).to_string()
        }
        oid::OID | oid::REGPROC | oid::REGCLASS | oid::REGTYPE => {
            need(raw, 4, "oid")?;
            u32::from_be_bytes(raw.try_into().unwrap()).to_string()
        }
        oid::FLOAT4 => {
            need(raw, 4, "float4")?;
            float4_text(f32::from_be_bytes(raw.try_into().unwrap()))
        }
        oid::FLOAT8 => {
            need(raw, 8, "float8")?;
            float8_text(f64::from_be_bytes(raw.try_into().unwrap()))
        }
        oid::NUMERIC => numeric_text(raw)?,
        oid::BYTEA => bytea_text(raw),
        oid::JSONB => {
            if raw.first() != Some(&1) {
                return Err(format!(
                    "binary jsonb must start with version byte 1, got {:?}",
                    raw.first()
                ));
            }
            utf8(&raw[1..])?
        }
        oid::DATE => {
            need(raw, 4, "date")?;
            date_text(i32::from_be_bytes(raw.try_into().unwrap()))
        }
        oid::TIME => {
            need(raw, 8, "time")?;
            let us = i64::from_be_bytes(raw.try_into().unwrap());
            time_text(us)
        }
        oid::TIMESTAMP => {
            need(raw, 8, "timestamp")?;
            timestamp_text(i64::from_be_bytes(raw.try_into().unwrap()), false)
        }
        oid::TIMESTAMPTZ => {
            need(raw, 8, "timestamptz")?;
            timestamp_text(i64::from_be_bytes(raw.try_into().unwrap()), true)
        }
        oid::INTERVAL => {
            need(raw, 16, "interval")?;
            let us = i64::from_be_bytes(raw[0..8].try_into().unwrap());
            let days = i32::from_be_bytes(raw[8..12].try_into().unwrap());
            let months = i32::from_be_bytes(raw[12..16].try_into().unwrap());
            interval_text(months, days, us)
        }
        oid::UUID => {
            need(raw, 16, "uuid")?;
            let h: String = raw.iter().map(|b| format!("{b:02x}")).collect();
            format!(
                "{}-{}-{}-{}-{}",
                &h[0..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..32]
            )
        }
        o if is_text_like(o) => utf8(raw)?,
        o if array_element(o).is_some() => array_text(raw)?,
        2249 => record_text(raw)?,
        o => return Err(format!("no binary-to-text conversion for type OID {o}")),
    })
}

/// PostgreSQL's binary record (field count, then OID, length, value per field) as record_out prints it.
fn record_text(raw: &[u8]) -> Result<String, String> {
    let word = |at: usize| -> Result<i32, String> {
        raw.get(at..at + 4)
            .map(|b| i32::from_be_bytes(b.try_into().unwrap()))
            .ok_or_else(|| "binary record cut short".to_string())
    };
    let n = word(0)?;
    let mut pos = 4;
    let mut parts = Vec::new();
    for _ in 0..n {
        let oid = word(pos)? as u32;
        let len = word(pos + 4)?;
        pos += 8;
        if len < 0 {
            parts.push(String::new());
            continue;
        }
        let bytes = raw.get(pos..pos + len as usize).ok_or("binary record field cut short")?;
        pos += len as usize;
        let text = binary_to_text(oid, bytes)?;
        let quote = text.is_empty() || text.chars().any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || c.is_whitespace());
        parts.push(if quote { format!("\"{}\"", text.replace('"', "\"\"").replace('\\', "\\\\")) } else { text });
    }
    Ok(format!("({})", parts.join(",")))
}

/// The element OID of a built-in array type OID (`_int4` → int4).
fn array_element(array_oid: u32) -> Option<u32> {
    Some(match array_oid {
        1000 => 16,
        1001 => 17,
        1005 => 21,
        1007 => 23,
        1009 => 25,
        1014 => 1042,
        1015 => 1043,
        1016 => 20,
        1021 => 700,
        1022 => 701,
        1115 => 1114,
        1182 => 1082,
        1185 => 1184,
        1187 => 1186,
        1231 => 1700,
        3807 => 3802,
        _ => return None,
    })
}

/// PostgreSQL's binary array format as its text output (`{1,NULL,"a b"}`, nested braces per dimension).
fn array_text(raw: &[u8]) -> Result<String, String> {
    let word = |at: usize| -> Result<i32, String> {
        raw.get(at..at + 4)
            .map(|b| i32::from_be_bytes(b.try_into().unwrap()))
            .ok_or_else(|| "binary array cut short".to_string())
    };
    let ndim = word(0)?;
    let elem = word(8)? as u32;
    if ndim == 0 {
        return Ok("{}".into());
    }
    let dims: Vec<usize> = (0..ndim as usize).map(|d| word(12 + 8 * d).map(|n| n as usize)).collect::<Result<_, _>>()?;
    let mut pos = 12 + 8 * ndim as usize;
    let mut items = Vec::new();
    for _ in 0..dims.iter().product::<usize>() {
        let len = word(pos)?;
        pos += 4;
        if len < 0 {
            items.push("NULL".to_string());
            continue;
        }
        let bytes = raw.get(pos..pos + len as usize).ok_or("binary array element cut short")?;
        pos += len as usize;
        let text = binary_to_text(elem, bytes)?;
        let quote = text.is_empty()
            || text.eq_ignore_ascii_case("null")
            || text.chars().any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
        items.push(if quote { format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")) } else { text });
    }
    fn nest(dims: &[usize], items: &mut std::vec::IntoIter<String>) -> String {
        let parts: Vec<String> = (0..dims[0])
            .map(|_| if dims.len() > 1 { nest(&dims[1..], items) } else { items.next().unwrap_or_default() })
            .collect();
        format!("{{{}}}", parts.join(","))
    }
    Ok(nest(&dims, &mut items.into_iter()))
}

fn utf8(raw: &[u8]) -> Result<String, String> {
    String::from_utf8(raw.to_vec()).map_err(|e| format!("invalid UTF-8 in text value: {e}"))
}

/// bytea in PostgreSQL's default hex output format.
pub fn bytea_text(raw: &[u8]) -> String {
    let mut s = String::with_capacity(2 + raw.len() * 2);
    s.push_str("\\x");
    for b in raw {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// float8 as PostgreSQL prints it with extra_float_digits = 1 (the default):
/// the shortest digits that round-trip, in fixed notation when the decimal
/// exponent is in [-4, 15), otherwise as `d.ddde+XX`.
pub fn float8_text(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    shortest_text(&format!("{v:e}"), 15)
}

/// float4 as PostgreSQL prints it (fixed notation for exponents in [-4, 6)).
pub fn float4_text(v: f32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    shortest_text(&format!("{v:e}"), 6)
}

/// `sci` is Rust's shortest round-trip `{:e}` form, e.g. `-1.25e-7`, `1e15`, `0e0`.
fn shortest_text(sci: &str, max_fixed_exp: i32) -> String {
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent");
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if neg { "-" } else { "" };
    if digits == "0" {
        return format!("{sign}0");
    }
    if exp < -4 || exp >= max_fixed_exp {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.abs());
    }
    let n = digits.len() as i32;
    if exp >= 0 {
        if n <= exp + 1 {
            format!("{sign}{digits}{}", "0".repeat((exp + 1 - n) as usize))
        } else {
            let split = (exp + 1) as usize;
            format!("{sign}{}.{}", &digits[..split], &digits[split..])
        }
    } else {
        format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
    }
}

/// numeric from PostgreSQL's binary form: ndigits, weight, sign, dscale (i16
/// each) then ndigits base-10000 digits.
pub fn numeric_text(raw: &[u8]) -> Result<String, String> {
    if raw.len() < 8 {
        return Err(format!(
            "binary numeric shorter than its header: {} bytes",
            raw.len()
        ));
    }
    let rd = |i: usize| i16::from_be_bytes([raw[i], raw[i + 1]]);
    let ndigits = rd(0);
    let weight = rd(2) as i32;
    let sign = u16::from_be_bytes([raw[4], raw[5]]);
    let dscale = u16::from_be_bytes([raw[6], raw[7]]) as i32;
    match sign {
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        0x0000 | 0x4000 => {}
        s => return Err(format!("binary numeric has bad sign word {s:#06x}")),
    }
    if ndigits < 0 || raw.len() != 8 + 2 * ndigits as usize {
        return Err(format!(
            "binary numeric with {ndigits} digits must be {} bytes, got {}",
            8 + 2 * ndigits.max(0) as usize,
            raw.len()
        ));
    }
    let digits: Vec<i32> = (0..ndigits as usize)
        .map(|i| rd(8 + 2 * i) as i32)
        .collect();
    if let Some(d) = digits.iter().find(|d| !(0..10000).contains(*d)) {
        return Err(format!("binary numeric digit {d} out of range 0..9999"));
    }
    let digit = |i: i32| -> i32 {
        if i >= 0 && (i as usize) < digits.len() {
            digits[i as usize]
        } else {
            0
        }
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for i in 0..=weight {
            if i == 0 {
                s.push_str(&digit(i).to_string());
            } else {
                s.push_str(&format!("{:04}", digit(i)));
            }
        }
    }
    if dscale > 0 {
        s.push('.');
        let mut frac = String::new();
        let mut i = weight + 1;
        while (frac.len() as i32) < dscale {
            frac.push_str(&format!("{:04}", digit(i)));
            i += 1;
        }
        frac.truncate(dscale as usize);
        s.push_str(&frac);
    }
    Ok(s)
}

/// Days since 2000-01-01 → (astronomical year, month, day), proleptic Gregorian.
fn civil_from_pg_days(days: i64) -> (i64, u32, u32) {
    // days since 1970-01-01
    let z = days + 10957 + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// "YYYY-MM-DD" plus whether the year is BC.
fn ymd(days: i64) -> (String, bool) {
    let (y, m, d) = civil_from_pg_days(days);
    if y <= 0 {
        (format!("{:04}-{m:02}-{d:02}", 1 - y), true)
    } else {
        (format!("{y:04}-{m:02}-{d:02}"), false)
    }
}

pub fn date_text(days: i32) -> String {
    if days == i32::MAX {
        return "infinity".into();
    }
    if days == i32::MIN {
        return "-infinity".into();
    }
    let (s, bc) = ymd(days as i64);
    if bc {
        format!("{s} BC")
    } else {
        s
    }
}

/// "HH:MM:SS[.ffffff]" with trailing fractional zeros trimmed.
fn hms(us_of_day: i64) -> String {
    let secs = us_of_day / 1_000_000;
    let frac = us_of_day % 1_000_000;
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        let f = format!("{frac:06}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

pub fn time_text(us: i64) -> String {
    hms(us)
}

/// timestamp / timestamptz (rendered in UTC, as `+00`) from microseconds since
/// 2000-01-01 00:00:00.
pub fn timestamp_text(us: i64, tz: bool) -> String {
    if us == i64::MAX {
        return "infinity".into();
    }
    if us == i64::MIN {
        return "-infinity".into();
    }
    let day = us.div_euclid(86_400_000_000);
    let rem = us.rem_euclid(86_400_000_000);
    let (date, bc) = ymd(day);
    let mut s = format!("{date} {}", hms(rem));
    if tz {
        s.push_str("+00");
    }
    if bc {
        s.push_str(" BC");
    }
    s
}

/// timestamptz (µs since 2000-01-01 UTC) on the clock of a tz database zone,
/// with the offset in force there as PostgreSQL's EncodeTimezone writes it.
#[allow(dead_code)]
pub fn timestamptz_text_in(us: i64, tz: chrono_tz::Tz) -> String {
    use chrono::{Offset, TimeZone};
    if us == i64::MAX || us == i64::MIN {
        return timestamp_text(us, false);
    }
    let unix_secs = us.div_euclid(1_000_000) + 946_684_800;
    let offset = chrono::DateTime::from_timestamp(unix_secs, 0)
        .map_or(0, |at| tz.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc());
    let local = timestamp_text(us + offset as i64 * 1_000_000, false);
    let (when, bc) = match local.strip_suffix(" BC") {
        Some(w) => (w.to_string(), " BC"),
        None => (local, ""),
    };
    let abs = offset.unsigned_abs();
    let sign = if offset < 0 { '-' } else { '+' };
    let zone = match (abs / 60 % 60, abs % 60) {
        (0, 0) => format!("{sign}{:02}", abs / 3600),
        (m, 0) => format!("{sign}{:02}:{m:02}", abs / 3600),
        (m, s) => format!("{sign}{:02}:{m:02}:{s:02}", abs / 3600),
    };
    format!("{when}{zone}{bc}")
}

/// interval in IntervalStyle `postgres`, as PostgreSQL's EncodeInterval prints it.
pub fn interval_text(months: i32, days: i32, us: i64) -> String {
    let years = months / 12;
    let mons = months % 12;
    let mut out = String::new();
    let mut is_zero = true;
    let mut is_before = false;
    fn part(out: &mut String, value: i64, unit: &str, is_zero: &mut bool, is_before: &mut bool) {
        if value == 0 {
            return;
        }
        out.push_str(&format!(
            "{}{}{} {}{}",
            if !*is_zero { " " } else { "" },
            if *is_before && value > 0 { "+" } else { "" },
            value,
            unit,
            if value != 1 { "s" } else { "" }
        ));
        *is_before = value < 0;
        *is_zero = false;
    }
    part(&mut out, years as i64, "year", &mut is_zero, &mut is_before);
    part(&mut out, mons as i64, "mon", &mut is_zero, &mut is_before);
    part(&mut out, days as i64, "day", &mut is_zero, &mut is_before);
    let hour = us / 3_600_000_000;
    let rem = us % 3_600_000_000;
    let min = rem / 60_000_000;
    let rem = rem % 60_000_000;
    let sec = rem / 1_000_000;
    let fsec = rem % 1_000_000;
    if is_zero || hour != 0 || min != 0 || sec != 0 || fsec != 0 {
        let minus = hour < 0 || min < 0 || sec < 0 || fsec < 0;
        out.push_str(&format!(
            "{}{}{:02}:{:02}:{:02}",
            if is_zero { "" } else { " " },
            if minus {
                "-"
            } else if is_before {
                "+"
            } else {
                ""
            },
            hour.abs(),
            min.abs(),
            sec.abs()
        ));
        if fsec != 0 {
            let f = format!("{:06}", fsec.abs());
            out.push('.');
            out.push_str(f.trim_end_matches('0'));
        }
    }
    out
}

/// PostgreSQL's text for numeric `text` (e.g. "12.50") encoded in binary form;
/// used to send numeric parameters.
pub fn numeric_binary(text: &str) -> Vec<u8> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let int = int.trim_start_matches('0');
    let dscale = frac.len();
    // pad the integer part on the left and the fraction on the right to
    // multiples of 4 digits
    let int_pad = (4 - int.len() % 4) % 4;
    let frac_pad = (4 - frac.len() % 4) % 4;
    let int_s = format!("{}{}", "0".repeat(int_pad), int);
    let frac_s = format!("{}{}", frac, "0".repeat(frac_pad));
    let mut groups: Vec<i16> = Vec::new();
    for c in int_s.as_bytes().chunks(4) {
        groups.push(std::str::from_utf8(c).unwrap().parse().unwrap());
    }
    let int_groups = groups.len() as i16;
    for c in frac_s.as_bytes().chunks(4) {
        groups.push(std::str::from_utf8(c).unwrap().parse().unwrap());
    }
    let mut weight = int_groups - 1;
    // strip leading zero groups (adjusting the weight) and trailing zero groups
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    let mut out = Vec::new();
    out.extend_from_slice(&(groups.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    let sign: u16 = if neg && !groups.is_empty() { 0x4000 } else { 0 };
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&(dscale as u16).to_be_bytes());
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    out
}

/// A date as days since 2000-01-01 (for binary date parameters).
pub fn pg_days(year: i64, month: u32, day: u32) -> i32 {
    // days_from_civil, relative to 2000-01-01
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146097 + doe - 719468 - 10957) as i32
}
