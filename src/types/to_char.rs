//! to_char(timestamp | timestamptz | date | interval, template): PostgreSQL's
//! datetime template patterns written out — YYYY YYY YY Y Y,YYY, IYYY IYY IY
//! I, CC, MM, Q, WW W IW, DDD DD D ID IDDD, J, HH24 HH12 HH, MI, SS, SSSS(S),
//! MS, US, FF1–FF6, AM/PM and A.M./P.M. (either case), AD/BC and A.D./B.C.,
//! MONTH/Month/month, MON/Mon/mon, DAY/Day/day, DY/Dy/dy, RM/rm, TZ/tz, OF,
//! TZH, TZM; the FM prefix (no padding), the TH/th suffix (ordinal), FX and
//! TM accepted and ignored; "quoted" text and `\"`; anything else copied.
//! Numeric fields are matched in upper or lower case only, as in
//! PostgreSQL's keyword table, so `Yyyy` is literal text.
//!
//! Must not: read values back (that is `datetime_format`).

use std::fmt::Write;

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::datetime::{day_of_week, days_from_civil, iso_year_week, DateTimeParts};
use crate::types::Interval;

const MONTHS: [&str; 12] = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
];
const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const ROMAN: [&str; 12] = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"];

/// What a template is applied to.
pub enum ToCharInput<'a> {
    /// Calendar fields (local time for a timestamptz), with the zone's
    /// abbreviation and offset (seconds east) for a timestamptz.
    Moment { parts: DateTimeParts, zone: Option<(&'a str, i32)> },
    Interval(Interval),
}

/// The calendar-like fields a template reads, as PostgreSQL's `struct
/// pg_tm` holds them (an interval's may be negative and its hours unbounded).
struct Fields {
    /// The year as printed: positive, BC years counted back from 1 for a
    /// moment; an interval's whole years.
    year: i64,
    bc: bool,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
    day_of_year: i64,
    /// None for an interval.
    days_since_epoch: Option<i64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Case {
    Upper,
    Capital,
    Lower,
}

fn with_case(name: &str, case: Case) -> String {
    match case {
        Case::Upper => name.to_uppercase(),
        Case::Capital => name.to_string(),
        Case::Lower => name.to_lowercase(),
    }
}

fn not_for_interval() -> DbError {
    DbError::new(sqlstate::INVALID_DATETIME_FORMAT, "invalid format specification for an interval value")
        .with_hint("Intervals are not tied to specific calendar dates.")
}

/// The patterns, longest first where one is a prefix of another.
const PATTERNS: [&str; 57] = [
    "Y,YYY", "YYYY", "YYY", "YY", "Y", "IYYY", "IYY", "IY", "IDDD", "ID", "IW", "I", "CC", "MONTH", "Month", "MON",
    "Mon", "MM", "MI", "MS", "Q", "WW", "W", "DAY", "Day", "DDD", "DD", "DY", "Dy", "D", "J", "HH24", "HH12", "HH",
    "SSSSS", "SSSS", "SS", "US", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "A.M.", "P.M.", "AM", "PM", "A.D.",
    "B.C.", "AD", "BC", "RM", "TZH", "TZM", "TZ", "OF",
];

/// The pattern at the start of `rest`, as written (upper case, its lower
/// case twin, or the capitalized name patterns), with its case.
fn pattern_at(rest: &str) -> Option<(&'static str, Case, usize)> {
    for p in PATTERNS {
        let n = p.len();
        let Some(head) = rest.get(..n) else { continue };
        // `Month`, `Mon`, `Day`, `Dy`: the capitalized spellings, which have
        // no lower-case twin of their own (`month` is MONTH's).
        let capitalized = p.chars().nth(1).is_some_and(|c| c.is_ascii_lowercase());
        if head == p {
            return Some((p, if capitalized { Case::Capital } else { Case::Upper }, n));
        }
        if !capitalized && head == p.to_ascii_lowercase() {
            return Some((p, Case::Lower, n));
        }
    }
    None
}

fn ordinal(n: i64, upper: bool) -> &'static str {
    let suffix = match (n.abs() % 100, n.abs() % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    match (upper, suffix) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        (true, _) => "TH",
    }
}

/// Writes `value` in `template` to `out`. Errors: a calendar pattern (a
/// month or day name, a weekday) applied to an interval, 22007.
pub fn to_char(input: &ToCharInput, template: &str, out: &mut String) -> DbResult<()> {
    let (f, zone) = match input {
        ToCharInput::Moment { parts, zone } => {
            let (y, bc) = if parts.year <= 0 { (1 - parts.year, true) } else { (parts.year, false) };
            let fields = Fields {
                year: y,
                bc,
                month: parts.month as i64,
                day: parts.day as i64,
                hour: parts.hour as i64,
                minute: parts.minute as i64,
                second: parts.second as i64,
                micros: (parts.nanos / 1000) as i64,
                day_of_year: civil_day_of_year(parts),
                days_since_epoch: Some(parts.days),
            };
            (fields, *zone)
        }
        ToCharInput::Interval(iv) => {
            let time = iv.micros;
            let fields = Fields {
                year: (iv.months / 12) as i64,
                bc: false,
                month: (iv.months % 12) as i64,
                day: iv.days as i64,
                hour: time / 3_600_000_000,
                minute: time % 3_600_000_000 / 60_000_000,
                second: time % 60_000_000 / 1_000_000,
                micros: time % 1_000_000,
                day_of_year: (iv.months as i64) * 30 + iv.days as i64,
                days_since_epoch: None,
            };
            (fields, None)
        }
    };
    let interval = f.days_since_epoch.is_none();
    let mut rest = template;
    while !rest.is_empty() {
        let mut fill = false;
        loop {
            let prefix = rest.get(..2).map(str::to_ascii_uppercase);
            match prefix.as_deref() {
                Some("FM") => fill = true,
                Some("FX") | Some("TM") => {}
                _ => break,
            }
            rest = &rest[2..];
        }
        if let Some(tail) = rest.strip_prefix('"') {
            // A quoted literal; `\"` is a quote inside it.
            let mut chars = tail.char_indices();
            let mut end = tail.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            out.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            rest = &tail[end.min(tail.len())..];
            continue;
        }
        if let Some(tail) = rest.strip_prefix("\\\"") {
            out.push('"');
            rest = tail;
            continue;
        }
        let Some((pattern, case, n)) = pattern_at(rest) else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        rest = &rest[n..];
        // A number and its zero-padded width; negative interval fields take
        // one more column for the sign, as PostgreSQL prints them.
        let number = |v: i64, width: usize, out: &mut String| {
            let width = if fill { 0 } else if v < 0 { width + 1 } else { width };
            let _ = write!(out, "{v:0width$}");
            v
        };
        let upper = case != Case::Lower;
        let calendar_only = || if interval { Err(not_for_interval()) } else { Ok(()) };
        let printed: Option<i64> = match pattern {
            "Y,YYY" => {
                let _ = write!(out, "{},{:03}", f.year / 1000, f.year % 1000);
                Some(f.year)
            }
            "YYYY" => Some(number(f.year, 4, out)),
            "YYY" => Some(number(f.year % 1000, 3, out)),
            "YY" => Some(number(f.year % 100, 2, out)),
            "Y" => Some(number(f.year % 10, 1, out)),
            "IYYY" | "IYY" | "IY" | "I" | "IW" | "IDDD" | "ID" | "D" | "W" | "WW" | "J" => {
                calendar_only()?;
                let days = f.days_since_epoch.unwrap_or(0);
                let (iso_year, iso_week) = iso_year_week(days);
                let iso_year = if iso_year <= 0 { 1 - iso_year } else { iso_year };
                let iso_dow = (day_of_week(days) + 6) % 7 + 1;
                Some(match pattern {
                    "IYYY" => number(iso_year, 4, out),
                    "IYY" => number(iso_year % 1000, 3, out),
                    "IY" => number(iso_year % 100, 2, out),
                    "I" => number(iso_year % 10, 1, out),
                    "IW" => number(iso_week, 2, out),
                    "IDDD" => number((iso_week - 1) * 7 + iso_dow as i64, 3, out),
                    "ID" => number(iso_dow as i64, 1, out),
                    "D" => number(day_of_week(days) as i64 + 1, 1, out),
                    "W" => number((f.day - 1) / 7 + 1, 1, out),
                    "WW" => number((f.day_of_year - 1) / 7 + 1, 2, out),
                    _ => number(days + 2_440_588, 1, out),
                })
            }
            "CC" => {
                let cc = if interval {
                    f.year / 100
                } else if f.bc {
                    -((f.year + 99) / 100)
                } else {
                    (f.year + 99) / 100
                };
                Some(number(cc, 2, out))
            }
            "MM" => Some(number(f.month, 2, out)),
            "Q" => Some(number((f.month - 1).max(0) / 3 + 1, 1, out)),
            "DDD" => Some(number(f.day_of_year, 3, out)),
            "DD" => Some(number(f.day, 2, out)),
            "HH24" => Some(number(f.hour, 2, out)),
            "HH12" | "HH" => {
                let h = f.hour % 12;
                Some(number(if h == 0 { 12 } else { h }, 2, out))
            }
            "MI" => Some(number(f.minute, 2, out)),
            "SS" => Some(number(f.second, 2, out)),
            "SSSS" | "SSSSS" => Some(number((f.hour * 60 + f.minute) * 60 + f.second, 1, out)),
            "MS" => Some(number(f.micros / 1000, 3, out)),
            "US" => Some(number(f.micros, 6, out)),
            "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
                let digits = (pattern.as_bytes()[2] - b'0') as u32;
                let scaled = f.micros / 10i64.pow(6 - digits);
                let digits = digits as usize;
                let _ = write!(out, "{scaled:0digits$}");
                Some(scaled)
            }
            "AM" | "PM" | "A.M." | "P.M." => {
                let pm = f.hour.rem_euclid(24) >= 12;
                out.push_str(&marker(if pm { "P.M." } else { "A.M." }, pattern.len() == 4, upper));
                None
            }
            "AD" | "BC" | "A.D." | "B.C." => {
                out.push_str(&marker(if f.bc { "B.C." } else { "A.D." }, pattern.len() == 4, upper));
                None
            }
            "MONTH" | "Month" | "MON" | "Mon" => {
                calendar_only()?;
                let name = MONTHS[(f.month as usize).clamp(1, 12) - 1];
                write_name(name, pattern.len() == 3, case, fill, out);
                None
            }
            "DAY" | "Day" | "DY" | "Dy" => {
                calendar_only()?;
                let name = DAYS[day_of_week(f.days_since_epoch.unwrap_or(0)) as usize];
                write_name(name, pattern.len() == 2, case, fill, out);
                None
            }
            "RM" => {
                if (1..=12).contains(&f.month) || !interval {
                    let r = ROMAN[(f.month as usize).clamp(1, 12) - 1];
                    let r = if upper { r.to_string() } else { r.to_lowercase() };
                    if fill {
                        out.push_str(&r);
                    } else {
                        let _ = write!(out, "{r:<4}");
                    }
                }
                None
            }
            "TZ" => {
                if let Some((abbrev, _)) = zone {
                    out.push_str(&if upper { abbrev.to_uppercase() } else { abbrev.to_lowercase() });
                }
                None
            }
            "OF" | "TZH" | "TZM" => {
                // A timestamp without time zone prints a zero offset (and no
                // abbreviation), as PostgreSQL does.
                if !interval {
                    let offset = zone.map_or(0, |(_, offset)| offset);
                    let (sign, abs) = (if offset < 0 { '-' } else { '+' }, offset.unsigned_abs());
                    let (h, m) = (abs / 3600, abs / 60 % 60);
                    match pattern {
                        "OF" if m != 0 => {
                            let _ = write!(out, "{sign}{h:02}:{m:02}");
                        }
                        "OF" | "TZH" => {
                            let _ = write!(out, "{sign}{h:02}");
                        }
                        _ => {
                            let _ = write!(out, "{m:02}");
                        }
                    }
                }
                None
            }
            _ => None,
        };
        // The ordinal suffix after a number.
        if let Some(v) = printed {
            let suffix = rest.get(..2);
            if suffix == Some("TH") || suffix == Some("th") {
                out.push_str(ordinal(v, suffix == Some("TH")));
                rest = &rest[2..];
            }
        }
    }
    Ok(())
}

/// A month or day name: its first three letters, or whole and blank-padded
/// to 9 characters unless in fill mode, in the pattern's case.
fn write_name(name: &str, abbreviated: bool, case: Case, fill: bool, out: &mut String) {
    if abbreviated {
        out.push_str(&with_case(&name[..3], case));
    } else if fill {
        out.push_str(&with_case(name, case));
    } else {
        let _ = write!(out, "{:<9}", with_case(name, case));
    }
}

/// A meridiem or era marker (`dotted` "A.M.", else "AM") in the pattern's case.
fn marker(dotted_form: &str, dotted: bool, upper: bool) -> String {
    let text = if dotted { dotted_form.to_string() } else { dotted_form.replace('.', "") };
    if upper {
        text
    } else {
        text.to_lowercase()
    }
}

/// Day of the year (1-based) of a moment's date.
fn civil_day_of_year(parts: &DateTimeParts) -> i64 {
    parts.days - days_from_civil(parts.year, 1, 1) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::datetime::split_timestamp;

    fn moment(ts: &str, template: &str) -> String {
        let ns = crate::types::text::parse_timestamp(ts, &Default::default()).unwrap();
        let mut out = String::new();
        to_char(&ToCharInput::Moment { parts: split_timestamp(ns), zone: Some(("UTC", 0)) }, template, &mut out).unwrap();
        out
    }

    /// Expected values from PostgreSQL 15.
    #[test]
    fn datetime_patterns_print_as_postgresql() {
        let t = "2024-02-29 13:04:05.123456";
        assert_eq!(moment(t, "YYYY-MM-DD HH24:MI:SS.US"), "2024-02-29 13:04:05.123456");
        assert_eq!(moment(t, "Day, DD Month YYYY HH12:MI AM"), "Thursday , 29 February  2024 01:04 PM");
        assert_eq!(moment(t, "FMDay, FMDD FMMonth YYYY"), "Thursday, 29 February 2024");
        assert_eq!(moment(t, "Dy Mon dy mon DY MON"), "Thu Feb thu feb THU FEB");
        assert_eq!(moment(t, "DDD D ID IW IYYY WW W Q CC J"), "060 5 4 09 2024 09 5 1 21 2460370");
        assert_eq!(moment(t, "DDth FMDDth ddth \"quoted DD\" Yyyy"), "29th 29th 29th quoted DD 4024");
        assert_eq!(moment(t, "MS FF1 FF3 SSSS a.m. rm RM"), "123 1 123 47045 p.m. ii   II  ");
        assert_eq!(moment(t, "TZ tz OF Y,YYY YYY YY Y"), "UTC utc +00 2,024 024 24 4");
        assert_eq!(moment("2024-01-01 00:00:00", "HH HH12 hh24 FMHH24 FMMM AD"), "12 12 00 0 1 AD");
        assert_eq!(moment("2021-01-03 00:00:00", "IYYY-IW-ID DDD"), "2020-53-7 003");
        // Only TH/th is a suffix; the D in 2ND is the day of the week.
        assert_eq!(moment("2024-01-02 00:00:00", "DDst 1ST 2ND 3RD 11TH"), "02st 1ST 2N3 3R3 11TH");
    }

    #[test]
    fn interval_fields_and_calendar_patterns_refused() {
        let iv = Interval { months: 14, days: 3, micros: -((26 * 60 + 5) * 60 + 7) * 1_000_000 };
        let mut out = String::new();
        to_char(&ToCharInput::Interval(iv), "YYYY MM DD HH24:MI:SS", &mut out).unwrap();
        assert_eq!(out, "0001 02 03 -26:-05:-07");
        let e = to_char(&ToCharInput::Interval(iv), "Month", &mut String::new()).unwrap_err();
        assert_eq!(e.code, sqlstate::INVALID_DATETIME_FORMAT);
    }
}
