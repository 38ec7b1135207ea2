//! Calendar arithmetic for date, timestamp, timestamptz and interval, with
//! PostgreSQL's rules (proleptic Gregorian calendar, 30-day months for
//! interval comparison, months/days/micros kept apart in intervals).
//! Representation: date = days since 1970-01-01 (i32); timestamp and
//! timestamptz = ns since 1970-01-01 00:00:00 UTC (i64); see `DataType`.
//! Owns: civil-date conversion, broken-down timestamps, `timestamp ± interval`,
//! `timestamp - timestamp`, `date_trunc`, `extract`, `time_bucket` and interval
//! arithmetic (`+`, unary `-`, `* float`, `/ float`, `justify_*`).
//! Time zones: functions that PostgreSQL evaluates in the session time zone
//! have an `_in_zone` form taking a `Zone` (fixed offset or IANA zone).
//! Must not: depend on the executor; callers in `exec::kernels` use these.

use rust_decimal::Decimal;

use super::{DataType, Datum, Interval, Zone};
use crate::error::{sqlstate, DbError, DbResult};

pub const NANOS_PER_MICRO: i64 = 1_000;
pub const NANOS_PER_SEC: i64 = 1_000_000_000;
pub const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SEC;
pub const MICROS_PER_SEC: i64 = 1_000_000;
pub const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SEC;
pub const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;
/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's binary epoch).
pub const PG_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS as i64 * MICROS_PER_DAY;
/// Julian day number of 1970-01-01.
pub const UNIX_EPOCH_JULIAN: i64 = 2_440_588;
/// First day PostgreSQL's date accepts: 4714-11-24 BC (Julian day 0).
pub const MIN_DATE_DAYS: i32 = -(UNIX_EPOCH_JULIAN as i32);
/// One past the last day PostgreSQL's date accepts: 5874898-01-01.
pub const END_DATE_DAYS: i32 = (2_147_483_494 - UNIX_EPOCH_JULIAN) as i32;
/// TimescaleDB's default `time_bucket` origin: Monday 2000-01-03 00:00:00.
pub const DEFAULT_BUCKET_ORIGIN_NS: i64 = (PG_EPOCH_DAYS as i64 + 2) * NANOS_PER_DAY;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

pub fn timestamp_out_of_range() -> DbError {
    DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

pub fn date_out_of_range() -> DbError {
    DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range")
}

pub fn interval_out_of_range() -> DbError {
    DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

fn unit_not_supported(unit: &str, ty: DataType) -> DbError {
    DbError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("unit \"{unit}\" not supported for type {}", ty.name()),
    )
}

fn unit_not_recognized(unit: &str, ty: DataType) -> DbError {
    DbError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("unit \"{unit}\" not recognized for type {}", ty.name()),
    )
}

// ---------------------------------------------------------------------------
// Civil calendar
// ---------------------------------------------------------------------------

/// Days since 1970-01-01 of the proleptic Gregorian date `y-m-d` (astronomical
/// years: 0 is 1 BC). Month and day are not validated; out-of-range results saturate.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let (m, d) = (m as i128, d as i128);
    let y = y as i128 - if m <= 2 { 1 } else { 0 };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// (year, month, day) of a day number (days since 1970-01-01); astronomical years.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days as i128 + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y as i64, m, d)
}

pub fn is_leap_year(y: i64) -> bool {
    y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0)
}

/// Days in month `m` (1..=12) of year `y`; 0 for an invalid month.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Day of week, 0 = Sunday … 6 = Saturday (PostgreSQL `dow`).
pub fn day_of_week(days: i64) -> u32 {
    (days as i128 + 4).rem_euclid(7) as u32
}

/// Day of week, 0 = Monday … 6 = Sunday.
fn weekday_from_monday(days: i64) -> i64 {
    (days as i128 + 3).rem_euclid(7) as i64
}

/// Monday of ISO week 1 of year `y` (the week holding January 4th).
fn iso_week1_monday(y: i64) -> i64 {
    let jan4 = days_from_civil(y, 1, 4);
    jan4 - weekday_from_monday(jan4)
}

/// ISO 8601 (year, week number) of a day.
pub fn iso_year_week(days: i64) -> (i64, i64) {
    let (y, _, _) = civil_from_days(days);
    let mut year = y;
    let mut start = iso_week1_monday(y);
    if days < start {
        year = y - 1;
        start = iso_week1_monday(year);
    } else {
        let next = iso_week1_monday(y + 1);
        if days >= next {
            year = y + 1;
            start = next;
        }
    }
    (year, (days - start) / 7 + 1)
}

/// Validates a civil date and returns its day number, or None when the month
/// or day does not exist.
pub fn checked_days_from_civil(y: i64, m: u32, d: u32) -> Option<i64> {
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

// ---------------------------------------------------------------------------
// Broken-down timestamps
// ---------------------------------------------------------------------------

/// A timestamp split into calendar fields (astronomical year).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTimeParts {
    /// Days since 1970-01-01 of the date part.
    pub days: i64,
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Nanoseconds within the second.
    pub nanos: u32,
}

impl DateTimeParts {
    /// Nanoseconds since midnight.
    pub fn time_of_day_ns(&self) -> i64 {
        ((self.hour as i64 * 60 + self.minute as i64) * 60 + self.second as i64) * NANOS_PER_SEC
            + self.nanos as i64
    }
}

/// Splits a (local) nanosecond count into calendar fields, flooring toward -∞.
fn split_local_ns(ns: i128) -> DateTimeParts {
    let day = NANOS_PER_DAY as i128;
    let days = ns.div_euclid(day) as i64;
    let tod = ns.rem_euclid(day) as i64;
    let (year, month, d) = civil_from_days(days);
    let secs = tod / NANOS_PER_SEC;
    DateTimeParts {
        days,
        year,
        month,
        day: d,
        hour: (secs / 3600) as u32,
        minute: (secs / 60 % 60) as u32,
        second: (secs % 60) as u32,
        nanos: (tod % NANOS_PER_SEC) as u32,
    }
}

/// Calendar fields of a timestamp (no zone applied).
pub fn split_timestamp(ts_ns: i64) -> DateTimeParts {
    split_local_ns(ts_ns as i128)
}

/// Calendar fields of a timestamptz seen from a zone.
pub fn split_timestamp_in_zone(ts_ns: i64, zone: Zone) -> DateTimeParts {
    split_local_ns(zone.utc_to_local(ts_ns as i128))
}

/// `days * NANOS_PER_DAY + time_of_day_ns` as i64, or 22008 timestamp out of range.
pub fn compose_timestamp(days: i64, time_of_day_ns: i64) -> DbResult<i64> {
    let ns = days as i128 * NANOS_PER_DAY as i128 + time_of_day_ns as i128;
    i64::try_from(ns).map_err(|_| timestamp_out_of_range())
}

/// Midnight of a date as a timestamp (22008 when outside 1677..2262).
pub fn date_to_timestamp_ns(days: i32) -> DbResult<i64> {
    (days as i64)
        .checked_mul(NANOS_PER_DAY)
        .ok_or_else(timestamp_out_of_range)
}

/// The date holding a timestamp (floor toward -∞).
pub fn timestamp_ns_to_date(ns: i64) -> DbResult<i32> {
    i32::try_from(ns.div_euclid(NANOS_PER_DAY)).map_err(|_| date_out_of_range())
}

/// Checks a day number lies in PostgreSQL's date range (4714-11-24 BC .. 5874897-12-31).
pub fn checked_date(days: i64) -> DbResult<i32> {
    if days < MIN_DATE_DAYS as i64 || days >= END_DATE_DAYS as i64 {
        return Err(date_out_of_range());
    }
    Ok(days as i32)
}

fn to_i64_ts(ns: i128) -> DbResult<i64> {
    i64::try_from(ns).map_err(|_| timestamp_out_of_range())
}

// ---------------------------------------------------------------------------
// timestamp ± interval, timestamp - timestamp
// ---------------------------------------------------------------------------

/// Adds whole months to a local timestamp, clamping the day to the month's end.
fn add_months_local(ns: i128, months: i32) -> i128 {
    let p = split_local_ns(ns);
    let total = p.year as i128 * 12 + (p.month as i128 - 1) + months as i128;
    let year = total.div_euclid(12) as i64;
    let month = (total.rem_euclid(12) + 1) as u32;
    let day = p.day.min(days_in_month(year, month));
    days_from_civil(year, month, day) as i128 * NANOS_PER_DAY as i128 + p.time_of_day_ns() as i128
}

/// `ts + iv` (months by calendar, clamping the day of month; then days; then micros).
pub fn timestamp_add_interval(ts_ns: i64, iv: Interval) -> DbResult<i64> {
    timestamp_add_interval_in_zone(ts_ns, iv, Zone::UTC)
}

/// `timestamptz + iv` as PostgreSQL's timestamptz_pl_interval: months, then
/// days, each added to the wall clock in `zone` (so `+ '1 day'` keeps the
/// time of day across a daylight-saving change), then the time part to the
/// instant itself.
pub fn timestamp_add_interval_in_zone(ts_ns: i64, iv: Interval, zone: Zone) -> DbResult<i64> {
    let mut utc = ts_ns as i128;
    if iv.months != 0 {
        let local = add_months_local(zone.utc_to_local(utc), iv.months);
        utc = to_i64_ts(zone.local_to_utc(local))? as i128;
    }
    if iv.days != 0 {
        let local = zone.utc_to_local(utc) + iv.days as i128 * NANOS_PER_DAY as i128;
        utc = to_i64_ts(zone.local_to_utc(local))? as i128;
    }
    to_i64_ts(utc + iv.micros as i128 * NANOS_PER_MICRO as i128)
}

/// `ts - iv`.
pub fn timestamp_sub_interval(ts_ns: i64, iv: Interval) -> DbResult<i64> {
    timestamp_add_interval(ts_ns, interval_neg(iv)?)
}

/// `a - b` for timestamps, as PostgreSQL: days and a time part (no months),
/// split as `justify_hours` does (both parts carry the sign of the difference).
pub fn timestamp_diff(a_ns: i64, b_ns: i64) -> Interval {
    let micros = (a_ns as i128 - b_ns as i128) / NANOS_PER_MICRO as i128;
    let days = micros / MICROS_PER_DAY as i128;
    let rest = micros % MICROS_PER_DAY as i128;
    Interval {
        months: 0,
        days: days as i32,
        micros: rest as i64,
    }
}

// ---------------------------------------------------------------------------
// Interval arithmetic
// ---------------------------------------------------------------------------

/// `a + b`, field by field; 22008 interval out of range on overflow.
pub fn interval_add(a: Interval, b: Interval) -> DbResult<Interval> {
    Ok(Interval {
        months: a
            .months
            .checked_add(b.months)
            .ok_or_else(interval_out_of_range)?,
        days: a
            .days
            .checked_add(b.days)
            .ok_or_else(interval_out_of_range)?,
        micros: a
            .micros
            .checked_add(b.micros)
            .ok_or_else(interval_out_of_range)?,
    })
}

/// `a - b`, field by field.
pub fn interval_sub(a: Interval, b: Interval) -> DbResult<Interval> {
    interval_add(a, interval_neg(b)?)
}

/// `-a`; 22008 when a field is the most negative value.
pub fn interval_neg(a: Interval) -> DbResult<Interval> {
    Ok(Interval {
        months: a.months.checked_neg().ok_or_else(interval_out_of_range)?,
        days: a.days.checked_neg().ok_or_else(interval_out_of_range)?,
        micros: a.micros.checked_neg().ok_or_else(interval_out_of_range)?,
    })
}

/// PostgreSQL's TSROUND: rounds to 6 fractional digits to hide float noise.
fn ts_round(x: f64) -> f64 {
    (x * 1_000_000.0).round_ties_even() / 1_000_000.0
}

/// `x` truncated toward zero as i32, when it is a finite value in range.
fn f64_to_i32(x: f64) -> DbResult<i32> {
    if x.is_nan() || x < i32::MIN as f64 || x >= -(i32::MIN as f64) {
        return Err(interval_out_of_range());
    }
    Ok(x as i32)
}

fn f64_to_i64(x: f64) -> DbResult<i64> {
    if x.is_nan() || x < i64::MIN as f64 || x >= -(i64::MIN as f64) {
        return Err(interval_out_of_range());
    }
    Ok(x as i64)
}

/// Scales an interval as PostgreSQL's interval_mul/interval_div do: whole
/// months and days stay, fractions cascade down (30-day months, 24-hour days).
fn interval_scale(month_f: f64, day_f: f64, time_f: f64) -> DbResult<Interval> {
    let months = f64_to_i32(month_f)?;
    let mut days = f64_to_i32(day_f)?;
    let month_remainder_days = ts_round((month_f - months as f64) * 30.0);
    let mut sec_remainder = ts_round(
        (day_f - days as f64 + month_remainder_days - month_remainder_days.trunc()) * 86_400.0,
    );
    if sec_remainder.abs() >= 86_400.0 {
        let extra = (sec_remainder / 86_400.0).trunc();
        days = days
            .checked_add(f64_to_i32(extra)?)
            .ok_or_else(interval_out_of_range)?;
        sec_remainder -= extra * 86_400.0;
    }
    days = days
        .checked_add(f64_to_i32(month_remainder_days)?)
        .ok_or_else(interval_out_of_range)?;
    let micros = f64_to_i64((time_f + sec_remainder * 1_000_000.0).round_ties_even())?;
    Ok(Interval {
        months,
        days,
        micros,
    })
}

/// `interval * factor` with PostgreSQL's spill of fractional months/days.
pub fn interval_mul(iv: Interval, factor: f64) -> DbResult<Interval> {
    interval_scale(
        iv.months as f64 * factor,
        iv.days as f64 * factor,
        iv.micros as f64 * factor,
    )
}

/// `interval / divisor`; 22012 division by zero.
pub fn interval_div(iv: Interval, divisor: f64) -> DbResult<Interval> {
    if divisor == 0.0 {
        return Err(DbError::division_by_zero());
    }
    interval_scale(
        iv.months as f64 / divisor,
        iv.days as f64 / divisor,
        iv.micros as f64 / divisor,
    )
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)`; seconds
/// rounded to microseconds. Overflow is 22008 (PostgreSQL 15 wraps around
/// silently; 16 checks, as here).
pub fn make_interval(fields: [i32; 6], secs: f64) -> DbResult<Interval> {
    let [years, months, weeks, days, hours, mins] = fields.map(i64::from);
    let month = years.checked_mul(12).and_then(|m| m.checked_add(months)).and_then(|m| i32::try_from(m).ok());
    let day = weeks.checked_mul(7).and_then(|d| d.checked_add(days)).and_then(|d| i32::try_from(d).ok());
    let secs_us = (secs * 1_000_000.0).round_ties_even();
    let time = (secs_us.is_finite() && secs_us.abs() < 9.2e18)
        .then_some(secs_us as i64)
        .and_then(|s| hours.checked_mul(MICROS_PER_HOUR).and_then(|h| mins.checked_mul(60_000_000).and_then(|m| h.checked_add(m))).and_then(|t| t.checked_add(s)));
    match (month, day, time) {
        (Some(months), Some(days), Some(micros)) => Ok(Interval { months, days, micros }),
        _ => Err(interval_out_of_range()),
    }
}

/// `justify_hours`: moves whole 24-hour periods of the time part into days.
pub fn justify_hours(iv: Interval) -> DbResult<Interval> {
    let extra = i32::try_from(iv.micros / MICROS_PER_DAY).map_err(|_| interval_out_of_range())?;
    let mut micros = iv.micros % MICROS_PER_DAY;
    let mut days = iv
        .days
        .checked_add(extra)
        .ok_or_else(interval_out_of_range)?;
    if days > 0 && micros < 0 {
        micros += MICROS_PER_DAY;
        days -= 1;
    } else if days < 0 && micros > 0 {
        micros -= MICROS_PER_DAY;
        days += 1;
    }
    Ok(Interval {
        months: iv.months,
        days,
        micros,
    })
}

/// `justify_days`: moves whole 30-day periods into months.
pub fn justify_days(iv: Interval) -> DbResult<Interval> {
    let mut months = iv
        .months
        .checked_add(iv.days / 30)
        .ok_or_else(interval_out_of_range)?;
    let mut days = iv.days % 30;
    if months > 0 && days < 0 {
        days += 30;
        months -= 1;
    } else if months < 0 && days > 0 {
        days -= 30;
        months += 1;
    }
    Ok(Interval {
        months,
        days,
        micros: iv.micros,
    })
}

/// `justify_interval`: justify_hours then justify_days with consistent signs.
pub fn justify_interval(iv: Interval) -> DbResult<Interval> {
    let (mut months, mut days, mut micros) = (iv.months, iv.days, iv.micros);
    if (days > 0 && micros > 0) || (days < 0 && micros < 0) {
        months = months
            .checked_add(days / 30)
            .ok_or_else(interval_out_of_range)?;
        days %= 30;
    }
    // |micros / day| < 1.1e8, and |days| < 30 or of the other sign: no overflow.
    days += (micros / MICROS_PER_DAY) as i32;
    micros %= MICROS_PER_DAY;
    months = months
        .checked_add(days / 30)
        .ok_or_else(interval_out_of_range)?;
    days %= 30;
    if months > 0 && (days < 0 || (days == 0 && micros < 0)) {
        days += 30;
        months -= 1;
    } else if months < 0 && (days > 0 || (days == 0 && micros > 0)) {
        days -= 30;
        months += 1;
    }
    if days > 0 && micros < 0 {
        micros += MICROS_PER_DAY;
        days -= 1;
    } else if days < 0 && micros > 0 {
        micros -= MICROS_PER_DAY;
        days += 1;
    }
    Ok(Interval {
        months,
        days,
        micros,
    })
}

// ---------------------------------------------------------------------------
// Units (PostgreSQL's deltatktbl / datetktbl)
// ---------------------------------------------------------------------------

/// A date/time unit as `date_trunc`, `extract` and interval input name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateUnit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
    // Only known to extract (PostgreSQL's datetktbl):
    Epoch,
    Dow,
    Isodow,
    Doy,
    Isoyear,
    Julian,
}

/// Looks a unit up as PostgreSQL's DecodeUnits does: lower-cased, compared on
/// its first 10 characters (so 'microseconds' matches 'microsecon').
pub fn lookup_interval_unit(name: &str) -> Option<DateUnit> {
    use DateUnit::*;
    let lower = name.to_ascii_lowercase();
    let key = truncate_token(&lower);
    Some(match key {
        "c" | "cent" | "centuries" | "century" => Century,
        "d" | "day" | "days" => Day,
        "dec" | "decade" | "decades" | "decs" => Decade,
        "h" | "hour" | "hours" | "hr" | "hrs" => Hour,
        "m" | "min" | "mins" | "minute" | "minutes" => Minute,
        "microsecon" | "us" | "usec" | "usecond" | "useconds" | "usecs" => Microsecond,
        "mil" | "millennia" | "millennium" | "mils" => Millennium,
        "millisecon" | "ms" | "msec" | "msecond" | "mseconds" | "msecs" => Millisecond,
        "mon" | "mons" | "month" | "months" => Month,
        "qtr" | "quarter" => Quarter,
        "s" | "sec" | "second" | "seconds" | "secs" => Second,
        "timezone" => Timezone,
        "timezone_h" => TimezoneHour,
        "timezone_m" => TimezoneMinute,
        "w" | "week" | "weeks" => Week,
        "y" | "year" | "years" | "yr" | "yrs" => Year,
        _ => return None,
    })
}

/// Units `extract` knows: DecodeUnits, then the special words of datetktbl.
fn lookup_extract_unit(name: &str) -> Option<DateUnit> {
    if let Some(u) = lookup_interval_unit(name) {
        return Some(u);
    }
    let lower = name.to_ascii_lowercase();
    Some(match truncate_token(&lower) {
        "epoch" => DateUnit::Epoch,
        "dow" => DateUnit::Dow,
        "isodow" => DateUnit::Isodow,
        "doy" => DateUnit::Doy,
        "isoyear" => DateUnit::Isoyear,
        "j" | "jd" | "julian" => DateUnit::Julian,
        _ => return None,
    })
}

/// First 10 bytes (PostgreSQL's TOKMAXLEN), on a char boundary.
fn truncate_token(s: &str) -> &str {
    let mut end = s.len().min(10);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

// ---------------------------------------------------------------------------
// date_trunc
// ---------------------------------------------------------------------------

/// `date_trunc(field, ts)`: field is 'microseconds' … 'millennium' (case-insensitive). 22023 otherwise.
pub fn date_trunc(field: &str, ts_ns: i64) -> DbResult<i64> {
    date_trunc_in_zone(DataType::TimestampTz, field, ts_ns, Zone::UTC)
}

/// `date_trunc` for a timestamp (`ty` = Timestamp, zone UTC) or a timestamptz
/// truncated on the wall clock of `zone`. As PostgreSQL, a unit of a day or
/// more takes the offset in force at the truncated time; a smaller one keeps
/// the value's own offset. `ty` only names the type in errors.
pub fn date_trunc_in_zone(ty: DataType, field: &str, ts_ns: i64, zone: Zone) -> DbResult<i64> {
    let lower = field.to_ascii_lowercase();
    let unit = lookup_interval_unit(&lower).ok_or_else(|| unit_not_recognized(&lower, ty))?;
    let off = zone.offset_at_utc(ts_ns as i128);
    let local = ts_ns as i128 + off as i128 * NANOS_PER_SEC as i128;
    let truncated = truncate_local(unit, local).ok_or_else(|| unit_not_supported(&lower, ty))?;
    let off = match unit {
        DateUnit::Microsecond
        | DateUnit::Millisecond
        | DateUnit::Second
        | DateUnit::Minute
        | DateUnit::Hour => off,
        _ => zone.offset_at_local(truncated),
    };
    to_i64_ts(truncated - off as i128 * NANOS_PER_SEC as i128)
}

fn floor_to(ns: i128, unit_ns: i64) -> i128 {
    ns.div_euclid(unit_ns as i128) * unit_ns as i128
}

fn truncate_local(unit: DateUnit, local: i128) -> Option<i128> {
    use DateUnit::*;
    let p = split_local_ns(local);
    let at = |y: i64, m: u32| days_from_civil(y, m, 1) as i128 * NANOS_PER_DAY as i128;
    Some(match unit {
        Microsecond => floor_to(local, NANOS_PER_MICRO),
        Millisecond => floor_to(local, 1_000_000),
        Second => floor_to(local, NANOS_PER_SEC),
        Minute => floor_to(local, 60 * NANOS_PER_SEC),
        Hour => floor_to(local, 3600 * NANOS_PER_SEC),
        Day => floor_to(local, NANOS_PER_DAY),
        Week => (p.days - weekday_from_monday(p.days)) as i128 * NANOS_PER_DAY as i128,
        Month => at(p.year, p.month),
        Quarter => at(p.year, (p.month - 1) / 3 * 3 + 1),
        Year => at(p.year, 1),
        Decade => at(decade_start(p.year), 1),
        Century => at(century_start(p.year), 1),
        Millennium => at(millennium_start(p.year), 1),
        _ => return None,
    })
}

fn decade_start(y: i64) -> i64 {
    if y > 0 {
        y / 10 * 10
    } else {
        -((8 - (y - 1)) / 10) * 10
    }
}

fn century_start(y: i64) -> i64 {
    if y > 0 {
        (y + 99) / 100 * 100 - 99
    } else {
        -((99 - (y - 1)) / 100) * 100 + 1
    }
}

fn millennium_start(y: i64) -> i64 {
    if y > 0 {
        (y + 999) / 1000 * 1000 - 999
    } else {
        -((999 - (y - 1)) / 1000) * 1000 + 1
    }
}

// ---------------------------------------------------------------------------
// extract
// ---------------------------------------------------------------------------

/// `extract(field FROM value)` for date/timestamp/timestamptz/interval values, as numeric
/// (PostgreSQL 14+ returns numeric). `date_part` is this cast to double precision.
pub fn extract_field(field: &str, ty: DataType, value: &Datum) -> DbResult<Decimal> {
    extract_field_in_zone(field, ty, value, Zone::UTC)
}

/// `extract` with timestamptz fields seen from the session zone
/// (`timezone`, `timezone_hour`, `timezone_minute` report its offset then).
pub fn extract_field_in_zone(
    field: &str,
    ty: DataType,
    value: &Datum,
    zone: Zone,
) -> DbResult<Decimal> {
    let lower = field.to_ascii_lowercase();
    let unit = lookup_extract_unit(&lower).ok_or_else(|| unit_not_recognized(&lower, ty))?;
    let result = match (ty, value) {
        (DataType::Date, Datum::Int32(days)) => extract_date(unit, *days as i64),
        (DataType::Timestamp, Datum::Int64(ns)) => extract_timestamp(unit, *ns, None),
        (DataType::TimestampTz, Datum::Int64(ns)) => {
            extract_timestamp(unit, *ns, Some(zone.offset_at_utc(*ns as i128)))
        }
        (DataType::Interval, Datum::Interval(iv)) => extract_interval(unit, *iv),
        _ => {
            return Err(DbError::datatype_mismatch(format!(
                "extract is not defined for type {}",
                ty.name()
            )))
        }
    };
    result.ok_or_else(|| unit_not_supported(&lower, ty))
}

fn int_dec(v: i64) -> Decimal {
    Decimal::from(v)
}

/// `v / 10^scale` as a numeric with exactly `scale` digits (int64_div_fast_to_numeric).
fn scaled_dec(v: i128, scale: u32) -> Option<Decimal> {
    Decimal::try_from_i128_with_scale(v, scale).ok()
}

fn year_field(y: i64) -> i64 {
    if y > 0 {
        y
    } else {
        y - 1
    }
}

fn decade_field(y: i64) -> i64 {
    if y >= 0 {
        y / 10
    } else {
        -((8 - (y - 1)) / 10)
    }
}

fn century_field(y: i64) -> i64 {
    if y > 0 {
        (y + 99) / 100
    } else {
        -((99 - (y - 1)) / 100)
    }
}

fn millennium_field(y: i64) -> i64 {
    if y > 0 {
        (y + 999) / 1000
    } else {
        -((999 - (y - 1)) / 1000)
    }
}

/// Fields that depend only on the calendar date (shared by date and timestamp).
fn extract_calendar(unit: DateUnit, days: i64) -> Option<i64> {
    use DateUnit::*;
    let (y, m, d) = civil_from_days(days);
    Some(match unit {
        Day => d as i64,
        Month => m as i64,
        Quarter => (m as i64 - 1) / 3 + 1,
        Week => iso_year_week(days).1,
        Year => year_field(y),
        Decade => decade_field(y),
        Century => century_field(y),
        Millennium => millennium_field(y),
        Isoyear => {
            let iy = iso_year_week(days).0;
            if iy <= 0 {
                iy - 1
            } else {
                iy
            }
        }
        Dow => day_of_week(days) as i64,
        Isodow => match day_of_week(days) {
            0 => 7,
            x => x as i64,
        },
        Doy => days - days_from_civil(y, 1, 1) + 1,
        _ => return None,
    })
}

fn extract_date(unit: DateUnit, days: i64) -> Option<Decimal> {
    match unit {
        DateUnit::Julian => Some(int_dec(days + UNIX_EPOCH_JULIAN)),
        DateUnit::Epoch => Some(int_dec(days * 86_400)),
        _ => extract_calendar(unit, days).map(int_dec),
    }
}

fn extract_timestamp(unit: DateUnit, ts_ns: i64, offset: Option<i32>) -> Option<Decimal> {
    use DateUnit::*;
    let p = split_timestamp_in_zone(ts_ns, Zone::Fixed(offset.unwrap_or(0)));
    let sec_us = p.second as i128 * MICROS_PER_SEC as i128 + (p.nanos / 1000) as i128;
    match unit {
        Microsecond => Some(Decimal::from(sec_us as i64)),
        Millisecond => scaled_dec(sec_us, 3),
        Second => scaled_dec(sec_us, 6),
        Minute => Some(int_dec(p.minute as i64)),
        Hour => Some(int_dec(p.hour as i64)),
        Epoch => scaled_dec((ts_ns as i128).div_euclid(NANOS_PER_MICRO as i128), 6),
        Timezone => offset.map(|o| int_dec(o as i64)),
        TimezoneHour => offset.map(|o| int_dec(o as i64 / 3600)),
        TimezoneMinute => offset.map(|o| int_dec(o as i64 / 60 % 60)),
        Julian => None,
        _ => extract_calendar(unit, p.days).map(int_dec),
    }
}

fn extract_interval(unit: DateUnit, iv: Interval) -> Option<Decimal> {
    use DateUnit::*;
    let years = iv.months as i64 / 12;
    let months = iv.months as i64 % 12;
    let hours = iv.micros / MICROS_PER_HOUR;
    let minutes = iv.micros % MICROS_PER_HOUR / MICROS_PER_MINUTE;
    let sec_us = (iv.micros % MICROS_PER_MINUTE) as i128;
    match unit {
        Microsecond => Some(Decimal::from(sec_us as i64)),
        Millisecond => scaled_dec(sec_us, 3),
        Second => scaled_dec(sec_us, 6),
        Minute => Some(int_dec(minutes)),
        Hour => Some(int_dec(hours)),
        Day => Some(int_dec(iv.days as i64)),
        Month => Some(int_dec(months)),
        Quarter => Some(int_dec(months / 3 + 1)),
        Year => Some(int_dec(years)),
        Decade => Some(int_dec(years / 10)),
        Century => Some(int_dec(years / 100)),
        Millennium => Some(int_dec(years / 1000)),
        Epoch => scaled_dec(interval_epoch_micros(iv), 6),
        _ => None,
    }
}

/// An interval's length in nanoseconds, a month counted as 30 days (as
/// drop_chunks and TimescaleDB's policies count them), saturating.
pub fn interval_nanos_30_day_months(iv: Interval) -> i64 {
    let micros = iv.micros as i128 + (iv.days as i128 + iv.months as i128 * 30) * 86_400_000_000;
    (micros * 1000).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Microseconds of an interval with 365.25-day years and 30-day months.
fn interval_epoch_micros(iv: Interval) -> i128 {
    let m = iv.months as i128;
    let quarter_days = 1461 * (m / 12) + 120 * (m % 12) + 4 * iv.days as i128;
    quarter_days * (86_400 / 4) * MICROS_PER_SEC as i128 + iv.micros as i128
}

// ---------------------------------------------------------------------------
// time_bucket
// ---------------------------------------------------------------------------

/// TimescaleDB `time_bucket(width, ts [, origin])`: the start of the bucket holding `ts`.
/// Buckets are aligned to `origin_ns` (default 2000-01-03 00:00:00 UTC, a Monday, as TimescaleDB).
/// Month widths bucket by calendar months counted from the origin's month
/// (default 2000-01) and return the bucket's first day at midnight.
pub fn time_bucket(width: Interval, ts_ns: i64, origin_ns: Option<i64>) -> DbResult<i64> {
    if width.months != 0 {
        return time_bucket_months(width, ts_ns, origin_ns);
    }
    let period = width.days as i128 * MICROS_PER_DAY as i128 + width.micros as i128;
    if period <= 0 {
        return Err(period_not_positive());
    }
    let period_ns = period * NANOS_PER_MICRO as i128;
    let origin = origin_ns.unwrap_or(DEFAULT_BUCKET_ORIGIN_NS) as i128;
    let bucket = (ts_ns as i128 - origin).div_euclid(period_ns) * period_ns + origin;
    to_i64_ts(bucket)
}

fn period_not_positive() -> DbError {
    DbError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        "period must be greater than 0",
    )
}

fn time_bucket_months(width: Interval, ts_ns: i64, origin_ns: Option<i64>) -> DbResult<i64> {
    if width.days != 0 || width.micros != 0 {
        return Err(DbError::unsupported(
            "month intervals cannot have day or time component",
        ));
    }
    if width.months <= 0 {
        return Err(period_not_positive());
    }
    let month_index = |ns: i64| {
        let (y, m, _) = civil_from_days(ns.div_euclid(NANOS_PER_DAY));
        y as i128 * 12 + m as i128 - 1
    };
    let origin = origin_ns.map(month_index).unwrap_or(2000 * 12);
    let period = width.months as i128;
    let bucket = (month_index(ts_ns) - origin).div_euclid(period) * period + origin;
    let year = bucket.div_euclid(12);
    let year = i64::try_from(year).map_err(|_| timestamp_out_of_range())?;
    let days = days_from_civil(year, (bucket.rem_euclid(12) + 1) as u32, 1);
    compose_timestamp(days, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(y: i64, m: u32, d: u32, h: u32, mi: u32, s: u32) -> i64 {
        let days = days_from_civil(y, m, d);
        days * NANOS_PER_DAY + ((h as i64 * 60 + mi as i64) * 60 + s as i64) * NANOS_PER_SEC
    }

    fn iv(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    #[test]
    fn civil_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), PG_EPOCH_DAYS as i64);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(19_388), (2023, 1, 31));
        assert_eq!(civil_from_days(MIN_DATE_DAYS as i64), (-4713, 11, 24));
        assert_eq!(civil_from_days(END_DATE_DAYS as i64), (5_874_898, 1, 1));
        for d in [-800_000i64, -1, 0, 59, 60, 11_016, 2_932_896, 100_000_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        // Extreme inputs neither panic nor wrap.
        let _ = civil_from_days(i64::MIN);
        let _ = civil_from_days(i64::MAX);
        let _ = days_from_civil(i64::MAX, u32::MAX, u32::MAX);
        let _ = days_from_civil(i64::MIN, 0, 0);
    }

    #[test]
    fn calendar_checks() {
        assert!(
            is_leap_year(2000) && is_leap_year(2024) && !is_leap_year(1900) && !is_leap_year(2023)
        );
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(checked_days_from_civil(2023, 2, 29), None);
        assert_eq!(checked_days_from_civil(2023, 13, 1), None);
        assert_eq!(day_of_week(0), 4); // Thursday
        assert_eq!(iso_year_week(days_from_civil(2021, 1, 1)), (2020, 53));
        assert_eq!(iso_year_week(days_from_civil(2024, 12, 30)), (2025, 1));
        assert_eq!(iso_year_week(days_from_civil(2026, 1, 31)), (2026, 5));
    }

    #[test]
    fn date_timestamp_conversions() {
        assert_eq!(date_to_timestamp_ns(1).unwrap(), NANOS_PER_DAY);
        assert_eq!(date_to_timestamp_ns(200_000).unwrap_err().code, "22008");
        assert_eq!(timestamp_ns_to_date(-1).unwrap(), -1);
        assert_eq!(timestamp_ns_to_date(NANOS_PER_DAY).unwrap(), 1);
        assert!(timestamp_ns_to_date(i64::MIN).is_ok());
        assert_eq!(
            checked_date(END_DATE_DAYS as i64).unwrap_err().message,
            "date out of range"
        );
    }

    #[test]
    fn add_interval_months_clamp() {
        let t = ts(2026, 1, 31, 10, 0, 0);
        assert_eq!(
            timestamp_add_interval(t, iv(1, 0, 0)).unwrap(),
            ts(2026, 2, 28, 10, 0, 0)
        );
        assert_eq!(
            timestamp_add_interval(ts(2024, 1, 31, 0, 0, 0), iv(1, 0, 0)).unwrap(),
            ts(2024, 2, 29, 0, 0, 0)
        );
        assert_eq!(
            timestamp_add_interval(t, iv(-13, 1, 3_600_000_000)).unwrap(),
            ts(2025, 1, 1, 11, 0, 0)
        );
        assert_eq!(timestamp_add_interval(t, iv(0, 0, -1)).unwrap(), t - 1000);
        assert_eq!(
            timestamp_add_interval(i64::MAX, iv(0, 1, 0))
                .unwrap_err()
                .code,
            "22008"
        );
        assert_eq!(
            timestamp_add_interval(0, iv(i32::MAX, i32::MAX, i64::MAX))
                .unwrap_err()
                .code,
            "22008"
        );
        assert_eq!(
            timestamp_add_interval(i64::MIN, iv(i32::MIN, i32::MIN, i64::MIN))
                .unwrap_err()
                .code,
            "22008"
        );
        assert_eq!(
            timestamp_sub_interval(t, iv(1, 0, 0)).unwrap(),
            ts(2025, 12, 31, 10, 0, 0)
        );
    }

    #[test]
    fn add_interval_at_offset_counts_months_locally() {
        // 2026-01-30 20:00 UTC is 2026-01-31 01:30 at +05:30; plus one month is
        // 2026-02-28 01:30 local = 2026-02-27 20:00 UTC.
        let t = ts(2026, 1, 30, 20, 0, 0);
        let got = timestamp_add_interval_in_zone(t, iv(1, 0, 0), Zone::Fixed(19_800)).unwrap();
        assert_eq!(got, ts(2026, 2, 27, 20, 0, 0));
    }

    #[test]
    fn diff_as_justify_hours() {
        let a = ts(2026, 1, 3, 12, 0, 0);
        let b = ts(2026, 1, 1, 0, 0, 0);
        assert_eq!(timestamp_diff(a, b), iv(0, 2, 12 * MICROS_PER_HOUR));
        assert_eq!(timestamp_diff(b, a), iv(0, -2, -12 * MICROS_PER_HOUR));
        assert_eq!(timestamp_diff(i64::MAX, i64::MIN).days, 213_503);
    }

    #[test]
    fn interval_arith() {
        assert_eq!(interval_add(iv(1, 2, 3), iv(4, 5, 6)).unwrap(), iv(5, 7, 9));
        assert_eq!(
            interval_add(iv(i32::MAX, 0, 0), iv(1, 0, 0))
                .unwrap_err()
                .message,
            "interval out of range"
        );
        assert_eq!(interval_neg(iv(1, -2, 3)).unwrap(), iv(-1, 2, -3));
        assert!(interval_neg(iv(0, 0, i64::MIN)).is_err());
        assert_eq!(interval_sub(iv(1, 1, 1), iv(1, 1, 1)).unwrap(), iv(0, 0, 0));
    }

    #[test]
    fn interval_mul_div_cascade() {
        // PostgreSQL: interval '1 mon' * 1.5 = '1 mon 15 days'
        assert_eq!(interval_mul(iv(1, 0, 0), 1.5).unwrap(), iv(1, 15, 0));
        // '1 day' * 1.5 = '1 day 12:00:00'
        assert_eq!(
            interval_mul(iv(0, 1, 0), 1.5).unwrap(),
            iv(0, 1, 12 * MICROS_PER_HOUR)
        );
        // '1 hour' * 2.5
        assert_eq!(
            interval_mul(iv(0, 0, MICROS_PER_HOUR), 2.5).unwrap(),
            iv(0, 0, 9_000_000_000)
        );
        // '1 mon' / 7 = '4 days 06:51:25.6896' (PostgreSQL's TSROUND at work)
        assert_eq!(
            interval_div(iv(1, 0, 0), 7.0).unwrap(),
            iv(0, 4, 24_685_689_600)
        );
        // '1 mon 1 day' * 0.3 = '9 days 07:12:00'; '1 mon' * (1.0/3) = '10 days'
        assert_eq!(
            interval_mul(iv(1, 1, 0), 0.3).unwrap(),
            iv(0, 9, 26_400_000_000 - 480_000_000)
        );
        assert_eq!(interval_mul(iv(1, 0, 0), 1.0 / 3.0).unwrap(), iv(0, 10, 0));
        // '1 year 1 day' * -0.5 = '-6 mons -12:00:00'
        assert_eq!(
            interval_mul(iv(12, 1, 0), -0.5).unwrap(),
            iv(-6, 0, -12 * MICROS_PER_HOUR)
        );
        assert_eq!(interval_div(iv(1, 0, 0), 0.0).unwrap_err().code, "22012");
        assert_eq!(
            interval_mul(iv(1, 0, 0), f64::NAN).unwrap_err().code,
            "22008"
        );
        assert_eq!(
            interval_mul(iv(1, 0, 0), f64::INFINITY).unwrap_err().code,
            "22008"
        );
        assert_eq!(
            interval_mul(iv(i32::MAX, 0, 0), 2.0).unwrap_err().code,
            "22008"
        );
        assert_eq!(
            interval_mul(iv(0, 0, i64::MAX), 2.0).unwrap_err().code,
            "22008"
        );
    }

    #[test]
    fn justify() {
        assert_eq!(
            justify_hours(iv(0, 0, 27 * MICROS_PER_HOUR)).unwrap(),
            iv(0, 1, 3 * MICROS_PER_HOUR)
        );
        assert_eq!(justify_days(iv(0, 35, 0)).unwrap(), iv(1, 5, 0));
        assert_eq!(justify_interval(iv(1, -1, 0)).unwrap(), iv(0, 29, 0));
        assert_eq!(
            justify_interval(iv(0, 0, -MICROS_PER_HOUR)).unwrap(),
            iv(0, 0, -MICROS_PER_HOUR)
        );
        assert_eq!(
            justify_interval(iv(1, 0, -MICROS_PER_HOUR)).unwrap(),
            iv(0, 29, 23 * MICROS_PER_HOUR)
        );
        assert_eq!(
            justify_interval(iv(-1, 0, MICROS_PER_HOUR)).unwrap(),
            iv(0, -29, -23 * MICROS_PER_HOUR)
        );
        assert!(justify_interval(iv(i32::MAX, i32::MAX, i64::MAX)).is_err());
        assert!(justify_interval(iv(i32::MIN, i32::MIN, i64::MIN)).is_err());
        assert!(justify_hours(iv(0, i32::MAX, i64::MAX)).is_err());
    }

    #[test]
    fn trunc_fields() {
        let t = ts(2026, 5, 14, 13, 47, 21) + 123_456_789;
        let tr = |f: &str| date_trunc(f, t).unwrap();
        assert_eq!(tr("microseconds"), t - 789);
        assert_eq!(tr("milliseconds"), t - 456_789);
        assert_eq!(tr("second"), ts(2026, 5, 14, 13, 47, 21));
        assert_eq!(tr("MINUTE"), ts(2026, 5, 14, 13, 47, 0));
        assert_eq!(tr("hour"), ts(2026, 5, 14, 13, 0, 0));
        assert_eq!(tr("day"), ts(2026, 5, 14, 0, 0, 0));
        assert_eq!(tr("week"), ts(2026, 5, 11, 0, 0, 0));
        assert_eq!(tr("month"), ts(2026, 5, 1, 0, 0, 0));
        assert_eq!(tr("quarter"), ts(2026, 4, 1, 0, 0, 0));
        assert_eq!(tr("year"), ts(2026, 1, 1, 0, 0, 0));
        assert_eq!(tr("decade"), ts(2020, 1, 1, 0, 0, 0));
        assert_eq!(tr("century"), ts(2001, 1, 1, 0, 0, 0));
        assert_eq!(tr("millennium"), ts(2001, 1, 1, 0, 0, 0));
        assert_eq!(
            date_trunc("century", ts(2000, 6, 1, 0, 0, 0)).unwrap(),
            ts(1901, 1, 1, 0, 0, 0)
        );
        assert_eq!(date_trunc("second", -1).unwrap(), -NANOS_PER_SEC);
    }

    #[test]
    fn trunc_errors_and_offset() {
        let e = date_trunc("x", 0).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "22023",
                "unit \"x\" not recognized for type timestamp with time zone"
            )
        );
        let e = date_trunc("dow", 0).unwrap_err();
        assert_eq!(e.code, "22023");
        let e = date_trunc("timezone", 0).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "0A000",
                "unit \"timezone\" not supported for type timestamp with time zone"
            )
        );
        let e = date_trunc_in_zone(DataType::Timestamp, "Foo", 0, Zone::UTC).unwrap_err();
        assert_eq!(
            e.message,
            "unit \"foo\" not recognized for type timestamp without time zone"
        );
        // Day boundaries at +05:30: 2026-01-01 20:00 UTC is 2026-01-02 01:30 local.
        let t = ts(2026, 1, 1, 20, 0, 0);
        assert_eq!(
            date_trunc_in_zone(DataType::TimestampTz, "day", t, Zone::Fixed(19_800)).unwrap(),
            ts(2026, 1, 1, 18, 30, 0)
        );
        // Truncating below the representable range fails cleanly.
        assert_eq!(date_trunc("year", i64::MIN).unwrap_err().code, "22008");
    }

    fn ex(field: &str, ty: DataType, v: Datum) -> String {
        extract_field(field, ty, &v).unwrap().to_string()
    }

    #[test]
    fn extract_timestamp_fields() {
        let t = Datum::Int64(ts(2020, 1, 1, 1, 2, 6) + 500_000_000);
        let ty = DataType::Timestamp;
        assert_eq!(ex("second", ty, t.clone()), "6.500000");
        assert_eq!(ex("milliseconds", ty, t.clone()), "6500.000");
        assert_eq!(ex("microseconds", ty, t.clone()), "6500000");
        assert_eq!(ex("epoch", ty, t.clone()), "1577840526.500000");
        assert_eq!(ex("minute", ty, t.clone()), "2");
        assert_eq!(ex("hour", ty, t.clone()), "1");
        assert_eq!(ex("day", ty, t.clone()), "1");
        assert_eq!(ex("month", ty, t.clone()), "1");
        assert_eq!(ex("year", ty, t.clone()), "2020");
        assert_eq!(ex("quarter", ty, t.clone()), "1");
        assert_eq!(ex("dow", ty, t.clone()), "3");
        assert_eq!(ex("isodow", ty, t.clone()), "3");
        assert_eq!(ex("doy", ty, t.clone()), "1");
        assert_eq!(ex("week", ty, t.clone()), "1");
        assert_eq!(ex("decade", ty, t.clone()), "202");
        assert_eq!(ex("century", ty, t.clone()), "21");
        assert_eq!(ex("millennium", ty, t.clone()), "3");
        assert_eq!(ex("isoyear", ty, t.clone()), "2020");
        let e = extract_field("timezone", ty, &t).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "0A000",
                "unit \"timezone\" not supported for type timestamp without time zone"
            )
        );
        let e = extract_field("today", ty, &t).unwrap_err();
        assert_eq!(e.code, "22023");
    }

    #[test]
    fn extract_timestamptz_at_offset() {
        let t = Datum::Int64(ts(2020, 1, 1, 22, 0, 0));
        let f = |field: &str| {
            extract_field_in_zone(field, DataType::TimestampTz, &t, Zone::Fixed(19_800))
                .unwrap()
                .to_string()
        };
        assert_eq!(f("hour"), "3");
        assert_eq!(f("day"), "2");
        assert_eq!(f("timezone"), "19800");
        assert_eq!(f("timezone_hour"), "5");
        assert_eq!(f("timezone_minute"), "30");
        assert_eq!(f("epoch"), "1577916000.000000");
    }

    #[test]
    fn extract_date_fields() {
        let d = |y, m, dd| Datum::Int32(days_from_civil(y, m, dd) as i32);
        let ty = DataType::Date;
        assert_eq!(ex("epoch", ty, d(2020, 1, 1)), "1577836800");
        assert_eq!(ex("julian", ty, d(2020, 1, 1)), "2458850");
        assert_eq!(ex("century", ty, d(2000, 1, 1)), "20");
        assert_eq!(ex("millennium", ty, d(2001, 1, 1)), "3");
        assert_eq!(ex("decade", ty, d(2019, 1, 1)), "201");
        assert_eq!(ex("isoyear", ty, d(2021, 1, 1)), "2020");
        assert_eq!(ex("week", ty, d(2021, 1, 1)), "53");
        assert_eq!(ex("year", ty, d(0, 1, 1)), "-1");
        assert_eq!(ex("doy", ty, d(2024, 12, 31)), "366");
        assert_eq!(ex("isodow", ty, d(2026, 2, 1)), "7");
        let e = extract_field("hour", ty, &d(2020, 1, 1)).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("0A000", "unit \"hour\" not supported for type date")
        );
        let e = extract_field("foo", ty, &d(2020, 1, 1)).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22023", "unit \"foo\" not recognized for type date")
        );
    }

    #[test]
    fn extract_interval_fields() {
        let v = Datum::Interval(iv(
            14,
            3,
            4 * MICROS_PER_HOUR + 5 * MICROS_PER_MINUTE + 6_500_000,
        ));
        let ty = DataType::Interval;
        assert_eq!(ex("year", ty, v.clone()), "1");
        assert_eq!(ex("month", ty, v.clone()), "2");
        assert_eq!(ex("day", ty, v.clone()), "3");
        assert_eq!(ex("hour", ty, v.clone()), "4");
        assert_eq!(ex("minute", ty, v.clone()), "5");
        assert_eq!(ex("second", ty, v.clone()), "6.500000");
        assert_eq!(ex("milliseconds", ty, v.clone()), "6500.000");
        assert_eq!(ex("microseconds", ty, v.clone()), "6500000");
        assert_eq!(ex("quarter", ty, v.clone()), "1");
        let one = Datum::Interval(iv(13, 1, MICROS_PER_SEC));
        assert_eq!(ex("epoch", ty, one), "34236001.000000");
        assert_eq!(ex("quarter", ty, Datum::Interval(iv(-5, 0, 0))), "0");
        assert_eq!(
            ex("hour", ty, Datum::Interval(iv(0, 0, 25 * MICROS_PER_HOUR))),
            "25"
        );
        let e = extract_field("dow", ty, &Datum::Interval(iv(0, 1, 0))).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("0A000", "unit \"dow\" not supported for type interval")
        );
        let extreme = Datum::Interval(iv(i32::MIN, i32::MIN, i64::MIN));
        assert!(extract_field("epoch", ty, &extreme).is_ok());
        assert!(extract_field("second", ty, &extreme).is_ok());
    }

    #[test]
    fn bucket_fixed_width() {
        let t = ts(2026, 5, 14, 13, 47, 21);
        let h = iv(0, 0, MICROS_PER_HOUR);
        assert_eq!(time_bucket(h, t, None).unwrap(), ts(2026, 5, 14, 13, 0, 0));
        assert_eq!(
            time_bucket(iv(0, 7, 0), t, None).unwrap(),
            ts(2026, 5, 11, 0, 0, 0)
        );
        assert_eq!(
            time_bucket(iv(0, 0, 15 * MICROS_PER_MINUTE), t, None).unwrap(),
            ts(2026, 5, 14, 13, 45, 0)
        );
        // Negative times floor too.
        assert_eq!(time_bucket(h, -1, None).unwrap(), -3600 * NANOS_PER_SEC);
        // Custom origin.
        let origin = ts(2026, 1, 1, 0, 30, 0);
        assert_eq!(
            time_bucket(h, t, Some(origin)).unwrap(),
            ts(2026, 5, 14, 13, 30, 0)
        );
        assert_eq!(time_bucket(iv(0, 0, 0), t, None).unwrap_err().code, "22023");
        assert_eq!(
            time_bucket(iv(0, -1, 0), t, None).unwrap_err().message,
            "period must be greater than 0"
        );
        assert_eq!(
            time_bucket(iv(0, 1, 0), i64::MIN, None).unwrap_err().code,
            "22008"
        );
    }

    #[test]
    fn bucket_months() {
        let t = ts(2026, 5, 14, 13, 47, 21);
        assert_eq!(
            time_bucket(iv(1, 0, 0), t, None).unwrap(),
            ts(2026, 5, 1, 0, 0, 0)
        );
        assert_eq!(
            time_bucket(iv(3, 0, 0), t, None).unwrap(),
            ts(2026, 4, 1, 0, 0, 0)
        );
        assert_eq!(
            time_bucket(iv(12, 0, 0), t, None).unwrap(),
            ts(2026, 1, 1, 0, 0, 0)
        );
        assert_eq!(
            time_bucket(iv(5, 0, 0), ts(1999, 12, 31, 0, 0, 0), None).unwrap(),
            ts(1999, 8, 1, 0, 0, 0)
        );
        let origin = ts(2026, 2, 15, 0, 0, 0);
        assert_eq!(
            time_bucket(iv(3, 0, 0), t, Some(origin)).unwrap(),
            ts(2026, 5, 1, 0, 0, 0)
        );
        assert_eq!(time_bucket(iv(1, 1, 0), t, None).unwrap_err().code, "0A000");
        assert_eq!(
            time_bucket(iv(-1, 0, 0), t, None).unwrap_err().code,
            "22023"
        );
        assert!(time_bucket(iv(i32::MAX, 0, 0), i64::MIN, Some(i64::MAX)).is_err());
    }
}
