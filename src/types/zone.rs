//! Time zones: the session TimeZone and the zones written in literals and
//! `AT TIME ZONE`, either a fixed offset or a named IANA zone (chrono-tz's
//! embedded tz database, so results do not depend on the host's tzdata).
//! Owns: reading a TimeZone setting as PostgreSQL does, the UTC offset in
//! force at an instant, and PostgreSQL's rule for a local wall-clock time
//! that a transition skips or repeats.
//! Must not: do calendar arithmetic (that is `types::datetime`) or know SQL.

use chrono::{Offset, TimeZone};
use chrono_tz::Tz;

const NANOS_PER_SEC: i128 = 1_000_000_000;
/// Seconds of a day: transitions are looked for within a day of an instant.
const DAY_SECS: i64 = 86_400;
/// Beyond this, chrono cannot place an instant (±262,000 years); timestamps
/// end in 2262 and dates in 5874897, so far values use the boundary's offset.
const MAX_CHRONO_SECS: i64 = 8_000_000_000_000;

/// A zone timestamptz values are seen from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// Seconds east of UTC, the same at every instant.
    Fixed(i32),
    /// An IANA zone with its history of offsets (daylight saving time).
    Named(Tz),
}

impl Default for Zone {
    fn default() -> Self {
        Zone::UTC
    }
}

impl Zone {
    pub const UTC: Zone = Zone::Fixed(0);

    /// A TimeZone setting read as PostgreSQL reads it: UTC's names; a plain
    /// number of hours east (`SET TIME ZONE -7`, `'5.5'`); a zone of the tz
    /// database by name, case-insensitively (`america/new_york`); otherwise a
    /// POSIX zone, whose offset counts hours *west*: `'+02:00'` is UTC−2,
    /// `'<+02>-02'` and `'GMT-2'` are UTC+2. None for what is none of these.
    pub fn from_setting(setting: &str) -> Option<Zone> {
        let t = setting.trim().trim_matches('\'');
        if is_utc_name(t) {
            return Some(Zone::UTC);
        }
        if let Ok(hours) = t.parse::<f64>() {
            let secs = (hours * 3600.0).round();
            return (hours.is_finite() && secs.abs() <= MAX_OFFSET_SECS as f64)
                .then_some(Zone::Fixed(secs as i32));
        }
        Zone::from_name(t).or_else(|| posix_offset(t).map(Zone::Fixed))
    }

    /// A zone of the tz database by name, case-insensitively.
    pub fn from_name(name: &str) -> Option<Zone> {
        Tz::from_str_insensitive(name).ok().map(Zone::Named)
    }

    /// A zone abbreviation of PostgreSQL's Default set (`est`, `cest`),
    /// lowercase: a fixed offset, as in PostgreSQL.
    pub fn from_abbreviation(lower: &str) -> Option<Zone> {
        abbreviation_offset(lower).map(Zone::Fixed)
    }

    /// The zone of `AT TIME ZONE` / `timezone(zone, …)`, as PostgreSQL's
    /// timestamptz_zone reads it: an abbreviation (any case), a tz database
    /// name, or a POSIX zone (`'UTC+3'` is three hours *west*).
    pub fn from_at_time_zone(name: &str) -> Option<Zone> {
        Zone::from_abbreviation(&name.to_ascii_lowercase())
            .or_else(|| Zone::from_name(name))
            .or_else(|| posix_offset(name).map(Zone::Fixed))
    }

    /// The tz database's spelling of a named zone (`America/New_York`).
    pub fn name(self) -> Option<&'static str> {
        match self {
            Zone::Named(tz) => Some(tz.name()),
            Zone::Fixed(_) => None,
        }
    }

    /// Seconds east of UTC in force at an instant (ns since 1970 UTC).
    #[inline]
    pub fn offset_at_utc(self, utc_ns: i128) -> i32 {
        match self {
            Zone::Fixed(off) => off,
            Zone::Named(tz) => named_offset_at(tz, utc_ns.div_euclid(NANOS_PER_SEC) as i64),
        }
    }

    /// Seconds east of UTC for a local wall-clock time (ns since 1970 on the
    /// local clock), by PostgreSQL's rule: a time a transition repeats (clocks
    /// going back) takes the offset in force after it; a time a transition
    /// skips (clocks going forward) is read with the offset in force before it,
    /// so `02:30` on a spring-forward night in New York becomes `03:30-04`.
    pub fn offset_at_local(self, local_ns: i128) -> i32 {
        let tz = match self {
            Zone::Fixed(off) => return off,
            Zone::Named(tz) => tz,
        };
        let local = local_ns.div_euclid(NANOS_PER_SEC) as i64;
        let before = named_offset_at(tz, local.saturating_sub(DAY_SECS));
        let after = named_offset_at(tz, local.saturating_add(DAY_SECS));
        let fits = |off: i32| named_offset_at(tz, local.saturating_sub(off as i64)) == off;
        if fits(after) {
            after
        } else {
            // fits(before), or a skipped time: either way the earlier offset
            before
        }
    }

    /// The zone's abbreviation in force at an instant, as to_char's TZ
    /// prints it: the tz database's (`EST`, `CEST`, `+0545`), `UTC` for UTC,
    /// the `%z` form for any other fixed offset.
    pub fn abbreviation_at(self, utc_ns: i128) -> String {
        use chrono_tz::OffsetName;
        match self {
            Zone::Fixed(0) => "UTC".to_string(),
            Zone::Fixed(off) => numeric_abbreviation(off),
            Zone::Named(tz) => {
                let secs = (utc_ns.div_euclid(NANOS_PER_SEC) as i64).clamp(-MAX_CHRONO_SECS, MAX_CHRONO_SECS);
                let Some(at) = chrono::DateTime::from_timestamp(secs, 0) else {
                    return numeric_abbreviation(self.offset_at_utc(utc_ns));
                };
                let off = tz.offset_from_utc_datetime(&at.naive_utc());
                off.abbreviation().map_or_else(|| numeric_abbreviation(off.fix().local_minus_utc()), str::to_string)
            }
        }
    }

    /// The local wall clock of an instant.
    #[inline]
    pub fn utc_to_local(self, utc_ns: i128) -> i128 {
        utc_ns + self.offset_at_utc(utc_ns) as i128 * NANOS_PER_SEC
    }

    /// The instant of a local wall-clock time (see `offset_at_local`).
    #[inline]
    pub fn local_to_utc(self, local_ns: i128) -> i128 {
        local_ns - self.offset_at_local(local_ns) as i128 * NANOS_PER_SEC
    }
}

/// Fixed-offset zone abbreviations from PostgreSQL's Default set.
fn abbreviation_offset(lower: &str) -> Option<i32> {
    let hours: f64 = match lower {
        "z" | "zulu" | "utc" | "gmt" | "ut" | "wet" => 0.0,
        "west" | "bst" | "cet" => 1.0,
        "cest" | "eet" => 2.0,
        "eest" | "msk" => 3.0,
        "jst" | "kst" => 9.0,
        "aest" => 10.0,
        "aedt" => 11.0,
        "nzst" => 12.0,
        "nzdt" => 13.0,
        "hst" => -10.0,
        "akst" => -9.0,
        "akdt" | "pst" => -8.0,
        "pdt" | "mst" => -7.0,
        "mdt" | "cst" => -6.0,
        "cdt" | "est" => -5.0,
        "edt" => -4.0,
        _ => return None,
    };
    Some((hours * 3600.0) as i32)
}

/// One zone of the tz database as pg_timezone_names shows it.
pub struct ZoneAt {
    pub name: &'static str,
    /// The abbreviation in force (`EST`, `+0545`).
    pub abbrev: String,
    pub utc_offset_secs: i32,
    pub is_dst: bool,
}

/// Every zone of the tz database with its offset at an instant.
pub fn zones_at(utc_ns: i128) -> Vec<ZoneAt> {
    use chrono_tz::{OffsetComponents, OffsetName};
    let secs = (utc_ns.div_euclid(NANOS_PER_SEC) as i64).clamp(-MAX_CHRONO_SECS, MAX_CHRONO_SECS);
    let Some(at) = chrono::DateTime::from_timestamp(secs, 0) else {
        return Vec::new();
    };
    chrono_tz::TZ_VARIANTS
        .iter()
        .map(|tz| {
            let off = tz.offset_from_utc_datetime(&at.naive_utc());
            ZoneAt {
                name: tz.name(),
                abbrev: off.abbreviation().map_or_else(
                    || numeric_abbreviation(off.fix().local_minus_utc()),
                    str::to_string,
                ),
                utc_offset_secs: off.fix().local_minus_utc(),
                is_dst: !off.dst_offset().is_zero(),
            }
        })
        .collect()
}

/// The tz database's `%z` name for an offset without a letter abbreviation:
/// `+05`, `+0545`, `-03`.
fn numeric_abbreviation(offset_secs: i32) -> String {
    let sign = if offset_secs < 0 { '-' } else { '+' };
    let (h, m) = (offset_secs.abs() / 3600, offset_secs.abs() / 60 % 60);
    match m {
        0 => format!("{sign}{h:02}"),
        _ => format!("{sign}{h:02}{m:02}"),
    }
}

/// The largest offset PostgreSQL accepts: 15:59:59.
const MAX_OFFSET_SECS: i32 = 15 * 3600 + 59 * 60 + 59;

/// UTC's names, spelled as SHOW TimeZone prints them.
const UTC_NAMES: [&str; 6] = ["UTC", "GMT", "Zulu", "Universal", "Etc/UTC", "Etc/GMT"];

/// How SHOW spells `t` when it is one of UTC's names (any case).
pub fn utc_name(t: &str) -> Option<&'static str> {
    UTC_NAMES.iter().find(|n| n.eq_ignore_ascii_case(t)).copied()
}

/// UTC's names, and ISO 8601's `Z`.
fn is_utc_name(t: &str) -> bool {
    t.eq_ignore_ascii_case("z") || utc_name(t).is_some()
}

fn named_offset_at(tz: Tz, utc_secs: i64) -> i32 {
    let secs = utc_secs.clamp(-MAX_CHRONO_SECS, MAX_CHRONO_SECS);
    match chrono::DateTime::from_timestamp(secs, 0) {
        Some(at) => tz.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc(),
        None => 0,
    }
}

/// A POSIX zone's standard offset east of UTC: an abbreviation (`<...>` or
/// letters), then `[+-]h[:mm[:ss]]` counted west of UTC.
fn posix_offset(t: &str) -> Option<i32> {
    let rest = match t.strip_prefix('<') {
        Some(r) => &r[r.find('>')? + 1..],
        None => t.trim_start_matches(|c: char| c.is_ascii_alphabetic()),
    };
    let (sign, rest) = match rest.as_bytes().first()? {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        b'0'..=b'9' => (1, rest),
        _ => return None,
    };
    let mut parts = rest.split(':');
    let h: i32 = parts.next()?.parse().ok()?;
    let m: i32 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    let sec: i32 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    if parts.next().is_some() || h > 15 || m > 59 || sec > 59 {
        return None;
    }
    Some(-sign * (h * 3600 + m * 60 + sec))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i32 = 3600;

    fn ns(secs: i64) -> i128 {
        secs as i128 * NANOS_PER_SEC
    }

    /// Seconds since 1970 of a UTC date and time.
    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        chrono::NaiveDate::from_ymd_opt(y, mo, d)
            .and_then(|day| day.and_hms_opt(h, mi, 0))
            .map(|t| t.and_utc().timestamp())
            .expect("valid date")
    }

    #[test]
    fn settings_read_as_postgresql_reads_them() {
        assert_eq!(Zone::from_setting("UTC"), Some(Zone::UTC));
        assert_eq!(Zone::from_setting("-7"), Some(Zone::Fixed(-7 * H)));
        assert_eq!(Zone::from_setting("5.5"), Some(Zone::Fixed(5 * H + 1800)));
        assert_eq!(Zone::from_setting("+02:00"), Some(Zone::Fixed(-2 * H)));
        assert_eq!(Zone::from_setting("<+02>-02"), Some(Zone::Fixed(2 * H)));
        assert_eq!(Zone::from_setting("GMT-2"), Some(Zone::Fixed(2 * H)));
        let ny = Zone::from_setting("america/new_york").expect("a tz name");
        assert_eq!(ny.name(), Some("America/New_York"));
        assert_eq!(Zone::from_setting("Etc/GMT+5").and_then(Zone::name), Some("Etc/GMT+5"));
        assert_eq!(Zone::from_setting("Europe/Nowhere"), None);
        assert_eq!(Zone::from_setting("16"), None);
    }

    #[test]
    fn offsets_follow_daylight_saving_time() {
        let ny = Zone::from_name("America/New_York").expect("zone");
        assert_eq!(ny.offset_at_utc(ns(at(2024, 1, 15, 12, 0))), -5 * H);
        assert_eq!(ny.offset_at_utc(ns(at(2024, 7, 1, 12, 0))), -4 * H);
        let kathmandu = Zone::from_name("Asia/Kathmandu").expect("zone");
        assert_eq!(kathmandu.offset_at_utc(ns(at(2024, 7, 1, 12, 0))), 5 * H + 45 * 60);
    }

    #[test]
    fn skipped_and_repeated_local_times_follow_postgresql() {
        let ny = Zone::from_name("America/New_York").expect("zone");
        // 2024-03-10 02:30 does not exist: read with EST, so 07:30Z
        assert_eq!(ny.local_to_utc(ns(at(2024, 3, 10, 2, 30))), ns(at(2024, 3, 10, 7, 30)));
        // 2024-11-03 01:30 happens twice: the later one (EST), 06:30Z
        assert_eq!(ny.local_to_utc(ns(at(2024, 11, 3, 1, 30))), ns(at(2024, 11, 3, 6, 30)));
        // ordinary times on either side of a transition
        assert_eq!(ny.local_to_utc(ns(at(2024, 3, 10, 1, 59))), ns(at(2024, 3, 10, 6, 59)));
        assert_eq!(ny.local_to_utc(ns(at(2024, 3, 10, 3, 0))), ns(at(2024, 3, 10, 7, 0)));
        assert_eq!(ny.local_to_utc(ns(at(2024, 11, 3, 2, 0))), ns(at(2024, 11, 3, 7, 0)));
        for secs in [at(2024, 3, 9, 23, 0), at(2024, 7, 4, 9, 15), at(2024, 11, 3, 8, 0)] {
            assert_eq!(ny.local_to_utc(ny.utc_to_local(ns(secs))), ns(secs));
        }
    }
}
