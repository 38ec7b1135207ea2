//! Calendar arithmetic for date, timestamp, timestamptz and interval, with
//! PostgreSQL's rules (proleptic Gregorian calendar, 30-day months for
//! interval comparison, months/days/micros kept apart in intervals).
//! Representation: date = days since 1970-01-01 (i32); timestamp and
//! timestamptz = ns since 1970-01-01 00:00:00 UTC (i64); see `DataType`.
//! Must not: depend on the executor; callers in `exec::kernels` use these.

use rust_decimal::Decimal;

use crate::error::{DbError, DbResult};
use super::{DataType, Datum, Interval};

pub const NANOS_PER_MICRO: i64 = 1_000;
pub const NANOS_PER_SEC: i64 = 1_000_000_000;
pub const NANOS_PER_DAY: i64 = 86_400 * NANOS_PER_SEC;

/// `ts + iv` (months by calendar, clamping the day of month; then days; then micros).
pub fn timestamp_add_interval(ts_ns: i64, iv: Interval) -> DbResult<i64> {
    let _ = (ts_ns, iv);
    Err(DbError::unsupported("timestamp + interval"))
}

/// `a - b` for timestamps, as PostgreSQL: days and a time part (no months).
pub fn timestamp_diff(a_ns: i64, b_ns: i64) -> Interval {
    let _ = (a_ns, b_ns);
    Interval::default()
}

/// `date_trunc(field, ts)`: field is 'microseconds' … 'millennium' (case-insensitive). 22023 otherwise.
pub fn date_trunc(field: &str, ts_ns: i64) -> DbResult<i64> {
    let _ = (field, ts_ns);
    Err(DbError::unsupported("date_trunc"))
}

/// `extract(field FROM value)` for date/timestamp/timestamptz/interval values, as numeric
/// (PostgreSQL 14+ returns numeric). `date_part` is this cast to double precision.
pub fn extract_field(field: &str, ty: DataType, value: &Datum) -> DbResult<Decimal> {
    let _ = (field, ty, value);
    Err(DbError::unsupported("extract"))
}

/// TimescaleDB `time_bucket(width, ts [, origin])`: the start of the bucket holding `ts`.
/// Buckets are aligned to `origin_ns` (default 2000-01-03 00:00:00 UTC, a Monday, as TimescaleDB).
pub fn time_bucket(width: Interval, ts_ns: i64, origin_ns: Option<i64>) -> DbResult<i64> {
    let _ = (width, ts_ns, origin_ns);
    Err(DbError::unsupported("time_bucket"))
}

/// `interval * factor` with PostgreSQL's spill of fractional months/days.
pub fn interval_mul(iv: Interval, factor: f64) -> DbResult<Interval> {
    let _ = (iv, factor);
    Err(DbError::unsupported("interval * number"))
}
