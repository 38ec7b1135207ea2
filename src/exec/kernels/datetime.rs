//! Date / timestamp / interval kernels: the operators (date ± int,
//! date - date, date/timestamp/timestamptz ± interval, timestamp -
//! timestamp, interval ± interval, interval * / float8), the casts among
//! date, timestamp and timestamptz (session time zone), and the calendar
//! functions (date_trunc, date_part, extract, time_bucket, to_timestamp,
//! now & co., age, make_date, epoch_ns).
//! Must not: do calendar arithmetic itself — every field computation goes
//! through `crate::types::datetime`; this file only loops and dispatches.


use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::Column;
use crate::exec::{EvalContext, Operand};
use crate::types::datetime as dt;
use crate::types::Interval as Iv;
use crate::types::{DataType, Interval, Zone};

use super::common::{bytes, map1_try, map2_try, prim, prim_column, Arg, Nulls};
use super::{BinaryOp, BinarySignature};




/// Session-local wall clock of a timestamptz as a timestamp (±infinity stay).
fn tz_to_local(ns: i64, zone: Zone) -> DbResult<i64> {
    if !ts_finite(ns) {
        return Ok(ns);
    }
    match i64::try_from(zone.utc_to_local(ns as i128)) {
        Ok(r) if ts_finite(r) => Ok(r),
        _ => Err(dt::timestamp_out_of_range()),
    }
}

/// A session-local timestamp as a timestamptz (±infinity stay).
fn local_to_tz(ns: i64, zone: Zone) -> DbResult<i64> {
    if !ts_finite(ns) {
        return Ok(ns);
    }
    match i64::try_from(zone.local_to_utc(ns as i128)) {
        Ok(r) if ts_finite(r) => Ok(r),
        _ => Err(dt::timestamp_out_of_range()),
    }
}

/// ±infinity are stored as the type's extreme values (PostgreSQL's DATE_NOBEGIN/NOEND).
#[inline]
fn date_finite(d: i32) -> bool {
    d != i32::MIN && d != i32::MAX
}

/// TIMESTAMP_NOBEGIN / TIMESTAMP_NOEND are i64::MIN / i64::MAX.
#[inline]
pub(crate) fn ts_finite(t: i64) -> bool {
    t != i64::MIN && t != i64::MAX
}

/// date -> timestamp (local midnight), keeping ±infinity.
fn date_to_ts(d: i32) -> DbResult<i64> {
    match d {
        i32::MIN => Ok(i64::MIN),
        i32::MAX => Ok(i64::MAX),
        d => dt::date_to_timestamp_ns(d),
    }
}

/// timestamp -> date, keeping ±infinity.
fn ts_to_date(t: i64) -> DbResult<i32> {
    match t {
        i64::MIN => Ok(i32::MIN),
        i64::MAX => Ok(i32::MAX),
        t => dt::timestamp_ns_to_date(t),
    }
}

fn date_plus_days(d: i32, n: i32) -> DbResult<i32> {
    if !date_finite(d) {
        return Ok(d);
    }
    let r = d.checked_add(n).ok_or_else(dt::date_out_of_range)?;
    dt::checked_date(r as i64)
}

fn date_minus_date(x: i32, y: i32) -> DbResult<i32> {
    if !date_finite(x) || !date_finite(y) {
        return Err(DbError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite dates",
        ));
    }
    x.checked_sub(y).ok_or_else(dt::date_out_of_range)
}

fn ts_minus_ts(x: i64, y: i64) -> DbResult<Iv> {
    if !ts_finite(x) || !ts_finite(y) {
        return Err(DbError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    Ok(dt::timestamp_diff(x, y))
}

/// `ts + iv` in a zone; an infinite timestamp stays infinite.
fn ts_plus(t: i64, iv: Iv, zone: Zone) -> DbResult<i64> {
    if !ts_finite(t) {
        return Ok(t);
    }
    dt::timestamp_add_interval_in_zone(t, iv, zone)
}

fn ts_minus(t: i64, iv: Iv, zone: Zone) -> DbResult<i64> {
    if !ts_finite(t) {
        return Ok(t);
    }
    dt::timestamp_add_interval_in_zone(t, dt::interval_neg(iv)?, zone)
}

pub(crate) fn interval_negate(iv: Interval) -> DbResult<Interval> {
    dt::interval_neg(iv)
}

/// The operators on dates, timestamps and intervals.
pub(crate) fn datetime_arith(
    sig: &BinarySignature,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    use BinaryOp::*;
    use DataType::*;
    let zone = ctx.format.zone;
    let utc = Zone::UTC;
    let res = sig.result;
    macro_rules! go {
        ($f:expr) => {{
            let v = map2_try(prim(a, len)?, prim(b, len)?, len, &nulls, $f)?;
            Ok(prim_column(res, v, nulls))
        }};
    }
    match (sig.op, sig.left, sig.right) {
        (Plus, Date, Int32) => go!(|d: i32, n: i32| date_plus_days(d, n)),
        (Plus, Int32, Date) => go!(|n: i32, d: i32| date_plus_days(d, n)),
        (Minus, Date, Int32) => go!(|d: i32, n: i32| date_plus_days(
            d,
            n.checked_neg().ok_or_else(dt::date_out_of_range)?
        )),
        (Minus, Date, Date) => go!(date_minus_date),
        (Plus, Date, Interval) => go!(|d: i32, iv: Iv| ts_plus(date_to_ts(d)?, iv, utc)),
        (Plus, Interval, Date) => go!(|iv: Iv, d: i32| ts_plus(date_to_ts(d)?, iv, utc)),
        (Minus, Date, Interval) => go!(|d: i32, iv: Iv| ts_minus(date_to_ts(d)?, iv, utc)),
        (Plus, Timestamp, Interval) => go!(|t: i64, iv: Iv| ts_plus(t, iv, utc)),
        (Plus, Interval, Timestamp) => go!(|iv: Iv, t: i64| ts_plus(t, iv, utc)),
        (Minus, Timestamp, Interval) => go!(|t: i64, iv: Iv| ts_minus(t, iv, utc)),
        (Plus, TimestampTz, Interval) => go!(|t: i64, iv: Iv| ts_plus(t, iv, zone)),
        (Plus, Interval, TimestampTz) => go!(|iv: Iv, t: i64| ts_plus(t, iv, zone)),
        (Minus, TimestampTz, Interval) => go!(|t: i64, iv: Iv| ts_minus(t, iv, zone)),
        (Minus, Timestamp, Timestamp) | (Minus, TimestampTz, TimestampTz) => go!(ts_minus_ts),
        (Plus, Interval, Interval) => go!(dt::interval_add),
        (Minus, Interval, Interval) => go!(dt::interval_sub),
        (Multiply, Interval, Float64) => go!(dt::interval_mul),
        (Multiply, Float64, Interval) => go!(|f: f64, iv: Iv| dt::interval_mul(iv, f)),
        (Divide, Interval, Float64) => go!(dt::interval_div),
        (op, l, r) => Err(DbError::internal(format!(
            "no kernel for {} {} {}",
            l.name(),
            op.pg_name(),
            r.name()
        ))),
    }
}

/// Casts among date, timestamp and timestamptz.
pub(crate) fn cast_datetime(
    from: DataType,
    to: DataType,
    op: Operand,
    len: usize,
    nulls: Nulls,
    zone: Zone,
) -> DbResult<Column> {
    use DataType::*;
    macro_rules! go {
        ($t:ty, $f:expr) => {{
            let v = map1_try(prim::<$t>(op, len)?, len, &nulls, $f)?;
            Ok(prim_column(to, v, nulls))
        }};
    }
    match (from, to) {
        (Date, Timestamp) => go!(i32, date_to_ts),
        (Date, TimestampTz) => go!(i32, |d| local_to_tz(date_to_ts(d)?, zone)),
        (Timestamp, Date) => go!(i64, ts_to_date),
        (TimestampTz, Date) => go!(i64, |t| ts_to_date(tz_to_local(t, zone)?)),
        (Timestamp, TimestampTz) => go!(i64, |t| local_to_tz(t, zone)),
        (TimestampTz, Timestamp) => go!(i64, |t| tz_to_local(t, zone)),
        _ => Ok(op.to_column(len).into_owned().with_type(to)),
    }
}

// ---------------------------------------------------------------- functions

/// `date_trunc(field, ts | tstz)`: a timestamptz is truncated in the session zone.
pub(crate) fn date_trunc(
    ty: DataType,
    field: Operand,
    v: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let f = bytes(field, len)?;
    let zone = if ty == DataType::TimestampTz {
        ctx.format.zone
    } else {
        Zone::UTC
    };
    let vals: Arg<i64> = prim(v, len)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        out.push(if !nulls.is_valid(i) {
            0
        } else if !ts_finite(vals.get(i)) {
            // PostgreSQL still checks the unit, then returns ±infinity unchanged.
            dt::date_trunc_in_zone(ty, f.get_str(i), 0, Zone::UTC)?;
            vals.get(i)
        } else {
            dt::date_trunc_in_zone(ty, f.get_str(i), vals.get(i), zone)?
        });
    }
    Ok(prim_column(ty, out, nulls))
}

/// `timezone(zone, x)` / `x AT TIME ZONE zone` with the zone as text (an
/// abbreviation, a tz database name, a POSIX zone) or as an interval (hours
/// east of UTC, no days or months). A timestamptz becomes the wall clock in
/// that zone (a timestamp); a timestamp is read as that wall clock (a
/// timestamptz). ±infinity stay.
pub(crate) fn at_time_zone(
    types: &[DataType],
    zone: Operand,
    v: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    let to_local = types[1] == DataType::TimestampTz;
    let vals: Arg<i64> = prim(v, len)?;
    let mut out = Vec::with_capacity(len);
    let mut zones = ZonesByName::default();
    let (texts, intervals) = match types[0] {
        DataType::Interval => (None, Some(prim::<Interval>(zone, len)?)),
        _ => (Some(bytes(zone, len)?), None),
    };
    for i in 0..len {
        let t = vals.get(i);
        if !nulls.is_valid(i) || !ts_finite(t) {
            out.push(t);
            continue;
        }
        let z = match (&texts, &intervals) {
            (Some(texts), _) => zones.get(texts.get_str(i))?,
            (_, Some(ivs)) => interval_zone(ivs.get(i))?,
            _ => unreachable!("a zone is text or an interval"),
        };
        out.push(if to_local { tz_to_local(t, z)? } else { local_to_tz(t, z)? });
    }
    let result = if to_local { DataType::Timestamp } else { DataType::TimestampTz };
    Ok(prim_column(result, out, nulls))
}

/// An interval used as a zone: its whole seconds east of UTC (timestamptz_izone).
fn interval_zone(iv: Interval) -> DbResult<Zone> {
    if iv.months != 0 || iv.days != 0 {
        let mut text = Vec::new();
        crate::types::text::format_interval(iv, &mut text);
        return Err(DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "interval time zone \"{}\" must not include months or days",
                String::from_utf8_lossy(&text)
            ),
        ));
    }
    let secs = iv.micros / dt::MICROS_PER_SEC;
    i32::try_from(secs)
        .map(Zone::Fixed)
        .map_err(|_| DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "interval time zone out of range"))
}

/// `date_trunc(field, interval)`: PostgreSQL's interval_trunc (fields split
/// as interval2itm does, truncated toward zero from the unit down).
pub(crate) fn interval_trunc(field: &str, iv: Iv) -> DbResult<Iv> {
    use dt::DateUnit as U;
    let lower = field.to_ascii_lowercase();
    let unit = dt::lookup_interval_unit(&lower).ok_or_else(|| {
        DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("unit \"{lower}\" not recognized for type interval"),
        )
    })?;
    let (mut year, mut mon, mut mday) = (iv.months / 12, iv.months % 12, iv.days);
    let mut t = iv.micros;
    let mut hour = t / dt::MICROS_PER_HOUR;
    t -= hour * dt::MICROS_PER_HOUR;
    let mut min = t / dt::MICROS_PER_MINUTE;
    t -= min * dt::MICROS_PER_MINUTE;
    let mut sec = t / dt::MICROS_PER_SEC;
    let mut usec = t - sec * dt::MICROS_PER_SEC;
    let rank = match unit {
        U::Millennium => 9,
        U::Century => 8,
        U::Decade => 7,
        U::Year => 6,
        U::Quarter => 5,
        U::Month => 4,
        U::Day => 3,
        U::Hour => 2,
        U::Minute => 1,
        U::Second => 0,
        U::Millisecond => {
            usec = usec / 1000 * 1000;
            -1
        }
        U::Microsecond => -1,
        _ => {
            let e = DbError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("unit \"{lower}\" not supported for type interval"),
            );
            return Err(if unit == U::Week {
                e.with_detail("Months usually have fractional weeks.")
            } else {
                e
            });
        }
    };
    if rank >= 9 {
        year = year / 1000 * 1000;
    }
    if rank >= 8 {
        year = year / 100 * 100;
    }
    if rank >= 7 {
        year = year / 10 * 10;
    }
    if rank >= 6 {
        mon = 0;
    }
    if rank >= 5 {
        mon = 3 * (mon / 3);
    }
    if rank >= 4 {
        mday = 0;
    }
    if rank >= 3 {
        hour = 0;
    }
    if rank >= 2 {
        min = 0;
    }
    if rank >= 1 {
        sec = 0;
    }
    if rank >= 0 {
        usec = 0;
    }
    let months = year
        .checked_mul(12)
        .and_then(|y| y.checked_add(mon))
        .ok_or_else(dt::interval_out_of_range)?;
    let micros = ((hour * 60 + min) * 60 + sec) * dt::MICROS_PER_SEC + usec;
    Ok(Iv {
        months,
        days: mday,
        micros,
    })
}

/// `date_trunc(field, interval)` over a column.
pub(crate) fn date_trunc_interval(
    field: Operand,
    v: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    let f = bytes(field, len)?;
    let vals: Arg<Iv> = prim(v, len)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        out.push(if nulls.is_valid(i) {
            interval_trunc(f.get_str(i), vals.get(i))?
        } else {
            Iv::default()
        });
    }
    Ok(prim_column(DataType::Interval, out, nulls))
}

/// `to_char(x, template)` for a timestamp, timestamptz (seen in the session
/// zone, whose abbreviation and offset TZ and OF print) or interval.
pub(crate) fn to_char(
    ty: DataType,
    value: Operand,
    template: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    use crate::types::to_char::{to_char as write_template, ToCharInput};
    let templates = bytes(template, len)?;
    let mut out = crate::exec::vector::BytesColumn::with_capacity(len, len * 16);
    let mut text = String::new();
    let zone = ctx.format.zone;
    if ty == DataType::Interval {
        let ivs: Arg<Iv> = prim(value, len)?;
        for i in 0..len {
            text.clear();
            if nulls.is_valid(i) {
                write_template(&ToCharInput::Interval(ivs.get(i)), templates.get_str(i), &mut text)?;
            }
            out.push(text.as_bytes());
        }
        return Ok(super::common::bytes_column(DataType::Text, out, nulls));
    }
    let ts: Arg<i64> = prim(value, len)?;
    // ±infinity: NULL, as PostgreSQL's to_char returns.
    let printed: Vec<bool> = (0..len).map(|i| nulls.is_valid(i) && ts_finite(ts.get(i))).collect();
    for (i, &printed) in printed.iter().enumerate() {
        text.clear();
        if printed {
            let t = ts.get(i);
            if ty == DataType::TimestampTz {
                let offset = zone.offset_at_utc(t as i128);
                let abbrev = zone.abbreviation_at(t as i128);
                let parts = dt::split_timestamp_in_zone(t, Zone::Fixed(offset));
                write_template(&ToCharInput::Moment { parts, zone: Some((&abbrev, offset)) }, templates.get_str(i), &mut text)?;
            } else {
                let parts = dt::split_timestamp(t);
                write_template(&ToCharInput::Moment { parts, zone: None }, templates.get_str(i), &mut text)?;
            }
        }
        out.push(text.as_bytes());
    }
    let nulls = Nulls::Mask(crate::exec::vector::Bitmap::from_bools(&printed));
    Ok(super::common::bytes_column(DataType::Text, out, nulls))
}

/// `extract(field FROM x)` (numeric) and `date_part(field, x)` (float8).
pub(crate) fn extract(
    as_float: bool,
    ty: DataType,
    field: Operand,
    v: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let f = bytes(field, len)?;
    let zone = ctx.format.zone;
    let mut out: Vec<crate::types::Numeric> = Vec::with_capacity(len);
    // date_part(text, date) is `date_part($1, $2::timestamp)` in PostgreSQL;
    // extract(field FROM date) has its own, stricter, unit list.
    let (ty, vcol) = if as_float && ty == DataType::Date {
        let ts = super::cast::cast_column(&v.to_column(len), DataType::Timestamp, ctx)?;
        (DataType::Timestamp, std::borrow::Cow::Owned(ts))
    } else {
        (ty, v.to_column(len))
    };
    for i in 0..len {
        if !nulls.is_valid(i) {
            out.push(crate::types::Numeric::ZERO);
            continue;
        }
        out.push(dt::extract_field_in_zone(f.get_str(i), ty, &vcol.datum(i), zone)?.into());
    }
    if as_float {
        let fl: Vec<f64> = out
            .iter()
            .map(|d| super::cast::numeric_to_f64(*d))
            .collect();
        Ok(prim_column(DataType::Float64, fl, nulls))
    } else {
        Ok(prim_column(DataType::Numeric, out, nulls))
    }
}

/// `time_bucket(width interval, ts | tstz | date [, origin])`.
pub(crate) fn time_bucket(
    types: &[DataType],
    args: &[Operand],
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let ty = types[1];
    match types.get(2) {
        Some(DataType::Interval) => return time_bucket_with_offset(ty, args, len, nulls, ctx),
        Some(DataType::Text | DataType::Varchar(_)) => {
            return time_bucket_in_zone(args, len, nulls)
        }
        _ => {}
    }
    let w: Arg<Interval> = prim(args[0], len)?;
    let origin: Option<Arg<i64>> = match args.get(2) {
        Some(o) => Some(prim(*o, len)?),
        None => None,
    };
    if ty == DataType::Date {
        let d: Arg<i32> = prim(args[1], len)?;
        let v = map2_try(w, d, len, &nulls, |w, d| {
            if !date_finite(d) {
                return Ok(d);
            }
            let ts = dt::date_to_timestamp_ns(d)?;
            dt::timestamp_ns_to_date(dt::time_bucket(w, ts, None)?)
        })?;
        return Ok(prim_column(ty, v, nulls));
    }
    let t: Arg<i64> = prim(args[1], len)?;
    let mut out = Vec::with_capacity(len);
    // Rows come in runs within one bucket (a series' times ascend): the last
    // fixed-width bucket [start, end) answers without a division.
    let mut last: Option<(Interval, Option<i64>, i64, i64)> = None;
    for i in 0..len {
        let v = t.get(i);
        out.push(if !nulls.is_valid(i) {
            0
        } else if !ts_finite(v) {
            v
        } else {
            let (width, origin) = (w.get(i), origin.map(|o| o.get(i)));
            match last {
                Some((lw, lo, start, end)) if lw == width && lo == origin && v >= start && v < end => start,
                _ => {
                    let start = dt::time_bucket(width, v, origin)?;
                    let period = width.days as i128 * dt::NANOS_PER_DAY as i128 + width.micros as i128 * dt::NANOS_PER_MICRO as i128;
                    last = match i64::try_from(start as i128 + period) {
                        Ok(end) if width.months == 0 => Some((width, origin, start, end)),
                        _ => None,
                    };
                    start
                }
            }
        });
    }
    Ok(prim_column(ty, out, nulls))
}

/// TimescaleDB's `time_bucket(width, ts, "offset" interval)`: buckets shifted
/// by the offset (`ts - offset` bucketed, then `+ offset`).
fn time_bucket_with_offset(
    ty: DataType,
    args: &[Operand],
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let zone = if ty == DataType::TimestampTz { ctx.format.zone } else { Zone::UTC };
    let (w, t, offset): (Arg<Interval>, Arg<i64>, Arg<Interval>) =
        (prim(args[0], len)?, prim(args[1], len)?, prim(args[2], len)?);
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let v = t.get(i);
        out.push(if !nulls.is_valid(i) || !ts_finite(v) {
            v
        } else {
            let shifted = ts_minus(v, offset.get(i), zone)?;
            ts_plus(dt::time_bucket(w.get(i), shifted, None)?, offset.get(i), zone)?
        });
    }
    Ok(prim_column(ty, out, nulls))
}

/// TimescaleDB's `time_bucket(width, ts, timezone [, origin [, "offset"]])`:
/// buckets on the wall clock of the zone (a day starts at local midnight,
/// also across daylight-saving changes): the timestamptz and the origin are
/// read in the zone, bucketed as timestamps, and the bucket's start read back
/// in the zone. The zone is read as `AT TIME ZONE` reads it.
pub(crate) fn time_bucket_in_zone(
    args: &[Operand],
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    let w: Arg<Interval> = prim(args[0], len)?;
    let t: Arg<i64> = prim(args[1], len)?;
    let names = bytes(args[2], len)?;
    // origin and offset: per row, None where NULL (TimescaleDB's default)
    let optional = |at: usize| -> DbResult<Option<Nulls>> {
        match args.get(at) {
            None => Ok(None),
            Some(op) => Nulls::of(op, len).map(|n| (!n.all_null()).then_some(n)),
        }
    };
    let (origin_valid, offset_valid) = (optional(3)?, optional(4)?);
    let origin: Option<(Arg<i64>, Nulls)> = match origin_valid {
        Some(n) => Some((prim(args[3], len)?, n)),
        None => None,
    };
    let offset: Option<(Arg<Interval>, Nulls)> = match offset_valid {
        Some(n) => Some((prim(args[4], len)?, n)),
        None => None,
    };
    let mut zones = ZonesByName::default();
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let v = t.get(i);
        if !nulls.is_valid(i) || !ts_finite(v) {
            out.push(v);
            continue;
        }
        let zone = zones.get(names.get_str(i))?;
        let mut local = tz_to_local(v, zone)?;
        let origin_local = match &origin {
            Some((o, valid)) if valid.is_valid(i) => Some(tz_to_local(o.get(i), zone)?),
            _ => None,
        };
        let offset = match &offset {
            Some((off, valid)) if valid.is_valid(i) => Some(off.get(i)),
            _ => None,
        };
        if let Some(off) = offset {
            local = ts_minus(local, off, Zone::UTC)?;
        }
        let mut bucket = dt::time_bucket(w.get(i), local, origin_local)?;
        if let Some(off) = offset {
            bucket = ts_plus(bucket, off, Zone::UTC)?;
        }
        out.push(local_to_tz(bucket, zone)?);
    }
    Ok(prim_column(DataType::TimestampTz, out, nulls))
}

/// Zones by their text, for a column of them: nearly always one constant,
/// so the last name's zone is kept and each run of one name is resolved once.
#[derive(Default)]
struct ZonesByName {
    last: Option<(String, Zone)>,
}

impl ZonesByName {
    fn get(&mut self, name: &str) -> DbResult<Zone> {
        match &self.last {
            Some((n, z)) if n == name => Ok(*z),
            _ => {
                let z = zone_named(name)?;
                self.last = Some((name.to_string(), z));
                Ok(z)
            }
        }
    }
}

/// The zone a text argument names (`AT TIME ZONE`'s reading), or 22023.
fn zone_named(name: &str) -> DbResult<Zone> {
    Zone::from_at_time_zone(name).ok_or_else(|| {
        DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("time zone \"{name}\" not recognized"),
        )
    })
}

/// PostgreSQL's date_bin(stride, source, origin) over timestamps: the start
/// of the stride-wide bin holding `source`, bins aligned on `origin`.
pub(crate) fn date_bin(ty: DataType, args: &[Operand], len: usize, nulls: Nulls) -> DbResult<Column> {
    let stride: Arg<Interval> = prim(args[0], len)?;
    let source: Arg<i64> = prim(args[1], len)?;
    let origin: Arg<i64> = prim(args[2], len)?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        if !nulls.is_valid(i) {
            out.push(0);
            continue;
        }
        let w = stride.get(i);
        if w.months != 0 {
            return Err(DbError::unsupported("timestamps cannot be binned into intervals containing months or years"));
        }
        if w.days as i128 * 86_400_000_000 + w.micros as i128 <= 0 {
            return Err(DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "stride must be greater than zero"));
        }
        let (t, o) = (source.get(i), origin.get(i));
        if !ts_finite(t) || !ts_finite(o) {
            return Err(DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range"));
        }
        out.push(dt::time_bucket(w, t, Some(o))?);
    }
    Ok(prim_column(ty, out, nulls))
}

/// TimescaleDB's integer `time_bucket(width, ts [, offset])` (TIME_BUCKET macro).
pub(crate) fn int_bucket(width: i64, ts: i64, offset: i64, min: i64, max: i64) -> DbResult<i64> {
    if width <= 0 {
        return Err(DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "period must be greater than 0",
        ));
    }
    let mut ts = ts;
    let mut offset = offset;
    if offset != 0 {
        offset %= width;
        if (offset > 0 && ts < min + offset) || (offset < 0 && ts > max + offset) {
            return Err(dt::timestamp_out_of_range());
        }
        ts -= offset;
    }
    let mut result = (ts / width) * width;
    if ts < 0 && ts % width != 0 {
        if result < min + width {
            return Err(dt::timestamp_out_of_range());
        }
        result -= width;
    }
    match result.checked_add(offset) {
        Some(r) if (min..=max).contains(&r) => Ok(r),
        _ => Err(dt::timestamp_out_of_range()),
    }
}

/// `to_timestamp(double precision)`: seconds since the Unix epoch, rounded to microseconds.
pub(crate) fn to_timestamp(secs: f64) -> DbResult<i64> {
    if secs.is_nan() {
        return Err(DbError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "timestamp cannot be NaN",
        ));
    }
    if secs.is_infinite() {
        return Ok(if secs > 0.0 { i64::MAX } else { i64::MIN });
    }
    let pg_epoch_secs = dt::PG_EPOCH_DAYS as f64 * 86_400.0;
    let micros = ((secs - pg_epoch_secs) * 1_000_000.0).round_ties_even();
    if !micros.is_finite() || micros.abs() > 9.2e15 {
        return Err(DbError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("timestamp out of range: \"{}\"", crate_float_g(secs)),
        ));
    }
    let micros = micros as i64 + dt::PG_EPOCH_MICROS;
    micros
        .checked_mul(dt::NANOS_PER_MICRO)
        .ok_or_else(dt::timestamp_out_of_range)
}

/// C's `%g` (6 significant digits), as PostgreSQL prints the value in this error.
fn crate_float_g(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    let sci = format!("{x:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.abs())
    } else {
        trim(&format!("{x:.*}", (5 - exp) as usize))
    }
}

/// `age(a, b)`: the symbolic difference in years, months, days and time, as
/// PostgreSQL's timestamp_age (fields borrowed from the earlier month's length).
pub(crate) fn age(a_ns: i64, b_ns: i64, zone: Zone) -> DbResult<Interval> {
    if !ts_finite(a_ns) || !ts_finite(b_ns) {
        return Err(dt::timestamp_out_of_range());
    }
    let p1 = dt::split_timestamp_in_zone(a_ns, zone);
    let p2 = dt::split_timestamp_in_zone(b_ns, zone);
    let mut fsec = (p1.nanos / 1000) as i64 - (p2.nanos / 1000) as i64;
    let mut sec = p1.second as i64 - p2.second as i64;
    let mut min = p1.minute as i64 - p2.minute as i64;
    let mut hour = p1.hour as i64 - p2.hour as i64;
    let mut mday = p1.day as i64 - p2.day as i64;
    let mut mon = p1.month as i64 - p2.month as i64;
    let mut year = p1.year - p2.year;
    let flip = a_ns < b_ns;
    if flip {
        fsec = -fsec;
        sec = -sec;
        min = -min;
        hour = -hour;
        mday = -mday;
        mon = -mon;
        year = -year;
    }
    while fsec < 0 {
        fsec += 1_000_000;
        sec -= 1;
    }
    while sec < 0 {
        sec += 60;
        min -= 1;
    }
    while min < 0 {
        min += 60;
        hour -= 1;
    }
    while hour < 0 {
        hour += 24;
        mday -= 1;
    }
    while mday < 0 {
        let (y, m) = if flip {
            (p1.year, p1.month)
        } else {
            (p2.year, p2.month)
        };
        mday += dt::days_in_month(y, m) as i64;
        mon -= 1;
    }
    while mon < 0 {
        mon += 12;
        year -= 1;
    }
    if flip {
        fsec = -fsec;
        sec = -sec;
        min = -min;
        hour = -hour;
        mday = -mday;
        mon = -mon;
        year = -year;
    }
    let months = year
        .checked_mul(12)
        .and_then(|y| y.checked_add(mon))
        .and_then(|m| i32::try_from(m).ok());
    let months = months.ok_or_else(dt::interval_out_of_range)?;
    let micros = ((hour * 60 + min) * 60 + sec) * 1_000_000 + fsec;
    Ok(Interval {
        months,
        days: mday as i32,
        micros,
    })
}

/// Midnight of the statement's local date, as a local timestamp.
pub(crate) fn local_midnight(ctx: &EvalContext) -> DbResult<i64> {
    let local = tz_to_local(ctx.statement_time_ns, ctx.format.zone)?;
    let d = dt::timestamp_ns_to_date(local)?;
    dt::date_to_timestamp_ns(d)
}

/// `current_date`.
pub(crate) fn current_date(ctx: &EvalContext) -> DbResult<i32> {
    dt::timestamp_ns_to_date(tz_to_local(
        ctx.statement_time_ns,
        ctx.format.zone,
    )?)
}

/// `localtimestamp`.
pub(crate) fn local_timestamp(ctx: &EvalContext) -> DbResult<i64> {
    tz_to_local(ctx.statement_time_ns, ctx.format.zone)
}

/// `age(x)` = `age(current_date at midnight, x)`, for timestamp (local) or timestamptz.
pub(crate) fn age_from_today(ty: DataType, x: i64, ctx: &EvalContext) -> DbResult<Interval> {
    let midnight = local_midnight(ctx)?;
    if ty == DataType::TimestampTz {
        age(
            local_to_tz(midnight, ctx.format.zone)?,
            x,
            ctx.format.zone,
        )
    } else {
        age(midnight, x, Zone::UTC)
    }
}

/// `make_date(year, month, day)`; 22008 "date field value out of range: y-m-d".
pub(crate) fn make_date(y: i32, m: i32, d: i32) -> DbResult<i32> {
    let bad = || {
        DbError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {y}-{m:02}-{d:02}"),
        )
    };
    if y == 0 || !(1..=12).contains(&m) || d < 1 {
        return Err(bad());
    }
    // Negative years are BC: -1 is 1 BC (astronomical 0).
    let astro = if y < 0 { y as i64 + 1 } else { y as i64 };
    let days = dt::checked_days_from_civil(astro, m as u32, d as u32).ok_or_else(bad)?;
    dt::checked_date(days)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Column;
    use crate::types::Datum;

    const DAY: i64 = dt::NANOS_PER_DAY;

    #[test]
    fn time_bucket_over_runs_matches_each_value_bucketed_alone() {
        // ascending runs with jumps back (series after series), negative
        // times, bucket edges, a month width (no run shortcut) and an origin
        let mut times = Vec::new();
        let mut t = -3 * DAY - 7;
        for k in 0..4000i64 {
            t += (k * 7_919_113) % 90_000_000_000;
            times.push(if k % 1000 == 999 { t - 5 * DAY } else { t });
        }
        times.extend([0, 1, -1, 3_600_000_000_000, 3_599_999_999_999]);
        let column = Column::from_datums(DataType::TimestampTz, &times.iter().map(|&v| Datum::Int64(v)).collect::<Vec<_>>());
        let ctx = EvalContext::default();
        for width in [
            Interval { months: 0, days: 0, micros: 60_000_000 },
            Interval { months: 0, days: 1, micros: 3_600_000_000 },
            Interval { months: 2, days: 0, micros: 0 },
        ] {
            for origin in [None, Some(DAY / 3)] {
                let w = Datum::Interval(width);
                let o = origin.map(Datum::Int64);
                let mut args = vec![Operand::Scalar(&w, DataType::Interval), Operand::Column(&column)];
                let mut types = vec![DataType::Interval, DataType::TimestampTz];
                if let Some(o) = &o {
                    args.push(Operand::Scalar(o, DataType::TimestampTz));
                    types.push(DataType::TimestampTz);
                }
                let got = time_bucket(&types, &args, times.len(), Nulls::AllValid, &ctx).unwrap();
                for (i, &v) in times.iter().enumerate() {
                    assert_eq!(got.datum(i), Datum::Int64(dt::time_bucket(width, v, origin).unwrap()), "{width:?} {origin:?} {v}");
                }
            }
        }
    }

    #[test]
    fn age_as_postgres() {
        // age('2001-04-10', '1957-06-13') = 43 years 9 mons 27 days
        let a = dt::days_from_civil(2001, 4, 10) * DAY;
        let b = dt::days_from_civil(1957, 6, 13) * DAY;
        let r = age(a, b, Zone::UTC).unwrap();
        assert_eq!(
            r,
            Interval {
                months: 43 * 12 + 9,
                days: 27,
                micros: 0
            }
        );
        let r = age(b, a, Zone::UTC).unwrap();
        assert_eq!(
            r,
            Interval {
                months: -(43 * 12 + 9),
                days: -27,
                micros: 0
            }
        );
        // age('2024-03-01', '2024-01-31 12:00') = 1 mon 12:00:00 (borrows January's 31 days)
        let a = dt::days_from_civil(2024, 3, 1) * DAY;
        let b = dt::days_from_civil(2024, 1, 31) * DAY + 12 * 3_600_000_000_000;
        let r = age(a, b, Zone::UTC).unwrap();
        assert_eq!(
            r,
            Interval {
                months: 1,
                days: 0,
                micros: 12 * 3_600_000_000
            }
        );
    }

    #[test]
    fn interval_trunc_as_postgres() {
        let iv = |months, days, micros| Iv {
            months,
            days,
            micros,
        };
        let h = dt::MICROS_PER_HOUR;
        assert_eq!(
            interval_trunc("hour", iv(0, 1, 2 * h + 30 * 60_000_000 + 15_000_000)).unwrap(),
            iv(0, 1, 2 * h)
        );
        assert_eq!(interval_trunc("month", iv(17, 3, 5)).unwrap(), iv(17, 0, 0));
        assert_eq!(
            interval_trunc("quarter", iv(17, 0, 0)).unwrap(),
            iv(15, 0, 0)
        );
        assert_eq!(
            interval_trunc("decade", iv(180, 0, 0)).unwrap(),
            iv(120, 0, 0)
        );
        assert_eq!(
            interval_trunc("second", iv(0, 0, -1_500_000)).unwrap(),
            iv(0, 0, -1_000_000)
        );
        assert_eq!(
            interval_trunc("millisecond", iv(0, 0, 1_234_560)).unwrap(),
            iv(0, 0, 1_234_000)
        );
        assert_eq!(
            interval_trunc("day", iv(0, -1, -2 * h)).unwrap(),
            iv(0, -1, 0)
        );
        let e = interval_trunc("week", iv(0, 10, 0)).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("0A000", "unit \"week\" not supported for type interval")
        );
        assert_eq!(
            interval_trunc("foo", iv(0, 10, 0)).unwrap_err().code,
            "22023"
        );
    }

    #[test]
    fn infinity_as_postgres() {
        use crate::exec::vector::Column;
        use crate::types::Datum;
        let ctx = EvalContext::default();
        let run = |op, l: (Datum, DataType), r: (Datum, DataType)| {
            let sig = super::super::resolve_binary(op, l.1, r.1).unwrap();
            super::super::eval_binary(
                &sig,
                Operand::Scalar(&l.0, l.1),
                Operand::Scalar(&r.0, r.1),
                1,
                &ctx,
            )
            .map(|c| c.datum(0))
        };
        let inf_d = (Datum::Int32(i32::MAX), DataType::Date);
        let inf_ts = (Datum::Int64(i64::MAX), DataType::Timestamp);
        let iv = (
            Datum::Interval(Iv {
                months: 1,
                days: 0,
                micros: 0,
            }),
            DataType::Interval,
        );
        assert_eq!(
            run(
                BinaryOp::Plus,
                inf_d.clone(),
                (Datum::Int32(1), DataType::Int32)
            )
            .unwrap(),
            Datum::Int32(i32::MAX)
        );
        assert_eq!(
            run(BinaryOp::Plus, inf_d.clone(), iv.clone()).unwrap(),
            Datum::Int64(i64::MAX)
        );
        assert_eq!(
            run(
                BinaryOp::Minus,
                (Datum::Int64(i64::MIN), DataType::TimestampTz),
                iv.clone()
            )
            .unwrap(),
            Datum::Int64(i64::MIN)
        );
        let e = run(
            BinaryOp::Minus,
            inf_d.clone(),
            (Datum::Int32(0), DataType::Date),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22008", "cannot subtract infinite dates")
        );
        let e = run(
            BinaryOp::Minus,
            inf_ts.clone(),
            (Datum::Int64(0), DataType::Timestamp),
        )
        .unwrap_err();
        assert_eq!(e.message, "cannot subtract infinite timestamps");
        let c = Column::from_datums(DataType::Date, &[Datum::Int32(i32::MIN)]);
        let r = super::super::cast_column(
            &c,
            DataType::TimestampTz,
            &EvalContext {
                format: crate::types::FormatContext {
                    zone: Zone::Fixed(3600),
                    ..Default::default()
                },
                statement_time_ns: 0,
            },
        )
        .unwrap();
        assert_eq!(r.datum(0), Datum::Int64(i64::MIN));
        assert_eq!(to_timestamp(f64::INFINITY).unwrap(), i64::MAX);
    }

    #[test]
    fn integer_time_bucket() {
        assert_eq!(int_bucket(10, 23, 0, i64::MIN, i64::MAX).unwrap(), 20);
        assert_eq!(int_bucket(10, -3, 0, i64::MIN, i64::MAX).unwrap(), -10);
        assert_eq!(int_bucket(10, 23, 5, i64::MIN, i64::MAX).unwrap(), 15);
        assert_eq!(
            int_bucket(0, 23, 0, i64::MIN, i64::MAX)
                .unwrap_err()
                .message,
            "period must be greater than 0"
        );
    }

    #[test]
    fn to_timestamp_rounds_to_micros() {
        assert_eq!(to_timestamp(0.0).unwrap(), 0);
        assert_eq!(to_timestamp(1.5).unwrap(), 1_500_000_000);
        assert_eq!(to_timestamp(1e-7).unwrap(), 0);
        assert_eq!(
            to_timestamp(f64::NAN).unwrap_err().message,
            "timestamp cannot be NaN"
        );
        let e = to_timestamp(1e20).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22008", "timestamp out of range: \"1e+20\"")
        );
        assert_eq!(crate_float_g(123456789.0), "1.23457e+08");
        assert_eq!(crate_float_g(0.0001234), "0.0001234");
        assert_eq!(crate_float_g(-2.5), "-2.5");
    }

    #[test]
    fn make_date_checks() {
        assert_eq!(make_date(1970, 1, 2).unwrap(), 1);
        assert_eq!(
            make_date(2023, 2, 30).unwrap_err().message,
            "date field value out of range: 2023-02-30"
        );
    }
}
