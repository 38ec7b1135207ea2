//! PostgreSQL's datetime templates for to_date(text, fmt) and
//! to_timestamp(text, fmt): YYYY YYY YY Y, MM, DD, DDD, HH24 HH12 HH, MI, SS,
//! MS, US, Mon/MON/mon, Month/MONTH/month, Dy/DY/Day, AM/PM (A.M./P.M.), "text"
//! literals, and any other character as a separator. As in PostgreSQL (not
//! FX mode), separators in the input are skipped loosely and a number field
//! takes the digits up to the next non-digit (its own width when the next
//! field follows without a separator). Negative years and year 0 are BC.
//! Must not: format values (to_char's direction: `to_char.rs`).

use crate::error::{sqlstate, DbError, DbResult};

const MONTHS: [&str; 12] = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
];
const DAYS: [&str; 7] = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

/// The fields a template read.
#[derive(Debug, Default, Clone, Copy)]
pub struct TemplateFields {
    pub year: Option<i64>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    pub day_of_year: Option<u32>,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanos: u32,
    pub pm: Option<bool>,
    pub hour12: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number { field: Field, width: usize },
    MonthName { full: bool },
    DayName { full: bool },
    Meridiem { dotted: bool },
    Literal(String),
    Separator(char),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Field {
    Year,
    Month,
    Day,
    DayOfYear,
    Hour24,
    Hour12,
    Minute,
    Second,
    Millis,
    Micros,
}

fn bad_format(msg: String) -> DbError {
    DbError::new(sqlstate::INVALID_DATETIME_FORMAT, msg)
}

fn tokens(fmt: &str) -> Vec<Token> {
    let upper = fmt.to_ascii_uppercase();
    let (f, u) = (fmt.as_bytes(), upper.as_bytes());
    let mut out = Vec::new();
    let mut i = 0;
    let starts = |i: usize, p: &str| u[i..].starts_with(p.as_bytes());
    while i < f.len() {
        let number = |field, width| Token::Number { field, width };
        let (tok, n) = if starts(i, "YYYY") {
            (number(Field::Year, 4), 4)
        } else if starts(i, "YYY") {
            (number(Field::Year, 3), 3)
        } else if starts(i, "YY") {
            (number(Field::Year, 2), 2)
        } else if starts(i, "HH24") {
            (number(Field::Hour24, 2), 4)
        } else if starts(i, "HH12") {
            (number(Field::Hour12, 2), 4)
        } else if starts(i, "HH") {
            (number(Field::Hour12, 2), 2)
        } else if starts(i, "MONTH") {
            (Token::MonthName { full: true }, 5)
        } else if starts(i, "MON") {
            (Token::MonthName { full: false }, 3)
        } else if starts(i, "MI") {
            (number(Field::Minute, 2), 2)
        } else if starts(i, "MM") {
            (number(Field::Month, 2), 2)
        } else if starts(i, "MS") {
            (number(Field::Millis, 3), 2)
        } else if starts(i, "DDD") {
            (number(Field::DayOfYear, 3), 3)
        } else if starts(i, "DAY") {
            (Token::DayName { full: true }, 3)
        } else if starts(i, "DD") {
            (number(Field::Day, 2), 2)
        } else if starts(i, "DY") {
            (Token::DayName { full: false }, 2)
        } else if starts(i, "SS") {
            (number(Field::Second, 2), 2)
        } else if starts(i, "US") {
            (number(Field::Micros, 6), 2)
        } else if starts(i, "A.M.") || starts(i, "P.M.") {
            (Token::Meridiem { dotted: true }, 4)
        } else if starts(i, "AM") || starts(i, "PM") {
            (Token::Meridiem { dotted: false }, 2)
        } else if starts(i, "Y") {
            (number(Field::Year, 1), 1)
        } else if f[i] == b'"' {
            let end = fmt[i + 1..].find('"').map_or(f.len(), |e| i + 1 + e);
            (Token::Literal(fmt[i + 1..end].to_string()), end + 1 - i)
        } else {
            let c = fmt[i..].chars().next().unwrap_or(' ');
            (Token::Separator(c), c.len_utf8())
        };
        out.push(tok);
        i += n.min(f.len() - i).max(1);
    }
    out
}

/// Reads `input` by the template `fmt`.
pub fn parse_template(input: &str, fmt: &str) -> DbResult<TemplateFields> {
    let toks = tokens(fmt);
    let s: Vec<char> = input.chars().collect();
    let mut pos = 0;
    let mut out = TemplateFields::default();
    let skip_separators = |pos: &mut usize| {
        while *pos < s.len() && !s[*pos].is_alphanumeric() && s[*pos] != '-' {
            *pos += 1;
        }
    };
    for (k, tok) in toks.iter().enumerate() {
        let next_is_field = matches!(toks.get(k + 1), Some(Token::Number { .. }));
        match tok {
            Token::Separator(_) => {
                // A separator in the template skips separators (and blanks) in the input.
                while pos < s.len() && !s[pos].is_alphanumeric() {
                    pos += 1;
                }
            }
            Token::Literal(text) => {
                pos = (pos + text.chars().count()).min(s.len());
            }
            Token::Number { field, width } => {
                while pos < s.len() && s[pos].is_whitespace() {
                    pos += 1;
                }
                let negative = *field == Field::Year && s.get(pos) == Some(&'-');
                if negative {
                    pos += 1;
                }
                let start = pos;
                // Next to another number field the width decides; else every digit.
                let limit = if next_is_field { *width } else { usize::MAX };
                while pos < s.len() && s[pos].is_ascii_digit() && pos - start < limit {
                    pos += 1;
                }
                if pos == start {
                    let found: String = s[start..].iter().take_while(|c| c.is_alphanumeric()).collect();
                    return Err(bad_format(format!(
                        "invalid value \"{found}\" for \"{}\"",
                        field_name(*field)
                    ))
                    .with_detail("Value must be an integer."));
                }
                let digits: String = s[start..pos].iter().collect();
                let v: i64 = digits.parse().ok().filter(|&v| v <= i32::MAX as i64).ok_or_else(|| {
                    DbError::new(
                        sqlstate::DATETIME_FIELD_OVERFLOW,
                        format!("value for \"{}\" in source string is out of range", field_name(*field)),
                    )
                    .with_detail("Value must be in the range -2147483648 to 2147483647.")
                })?;
                let small = |max: i64| -> DbResult<u32> {
                    if v > max {
                        return Err(DbError::new(
                            sqlstate::DATETIME_FIELD_OVERFLOW,
                            format!("date/time field value out of range: \"{input}\""),
                        ));
                    }
                    Ok(v as u32)
                };
                match field {
                    Field::Year => {
                        let y = match width {
                            2 if digits.len() <= 2 => if v < 70 { 2000 + v } else { 1900 + v },
                            3 if digits.len() <= 3 => 2000 + v,
                            _ => v,
                        };
                        out.year = Some(if negative { -y } else { y });
                    }
                    Field::Month => out.month = Some(small(99)?),
                    Field::Day => out.day = Some(small(99)?),
                    Field::DayOfYear => out.day_of_year = Some(small(999)?),
                    Field::Hour24 => out.hour = small(99)?,
                    Field::Hour12 => {
                        out.hour = small(99)?;
                        out.hour12 = true;
                    }
                    Field::Minute => out.minute = small(99)?,
                    Field::Second => out.second = small(99)?,
                    Field::Millis => out.nanos = (v as u32).saturating_mul(1_000_000),
                    Field::Micros => out.nanos = (v as u32).saturating_mul(1_000),
                }
            }
            Token::MonthName { full } => {
                skip_separators(&mut pos);
                let rest: String = s[pos..].iter().collect::<String>().to_lowercase();
                let found = MONTHS.iter().position(|m| {
                    if *full {
                        rest.starts_with(m)
                    } else {
                        rest.starts_with(&m[..3])
                    }
                });
                let Some(m) = found else {
                    let bad: String = s[pos..].iter().take_while(|c| c.is_alphabetic()).collect();
                    return Err(bad_format(format!("invalid value \"{bad}\" for \"{}\"", if *full { "Month" } else { "Mon" })));
                };
                pos += if *full { MONTHS[m].len() } else { 3 };
                out.month = Some(m as u32 + 1);
            }
            Token::DayName { full } => {
                skip_separators(&mut pos);
                let rest: String = s[pos..].iter().collect::<String>().to_lowercase();
                match DAYS.iter().find(|d| if *full { rest.starts_with(*d) } else { rest.starts_with(&d[..3]) }) {
                    Some(d) => pos += if *full { d.len() } else { 3 },
                    None => return Err(bad_format("invalid value for \"Day\"".into())),
                }
            }
            Token::Meridiem { dotted } => {
                skip_separators(&mut pos);
                let n = if *dotted { 4 } else { 2 };
                let word: String = s[pos.min(s.len())..(pos + n).min(s.len())].iter().collect::<String>().to_ascii_uppercase();
                let (am, pm, name) = if *dotted { ("A.M.", "P.M.", "P.M.") } else { ("AM", "PM", "AM") };
                out.pm = match word.as_str() {
                    w if w == am => Some(false),
                    w if w == pm => Some(true),
                    _ => return Err(bad_format(format!("invalid value \"{word}\" for \"{name}\""))),
                };
                pos = (pos + n).min(s.len());
            }
        }
    }
    Ok(out)
}

fn field_name(f: Field) -> &'static str {
    match f {
        Field::Year => "YYYY",
        Field::Month => "MM",
        Field::Day => "DD",
        Field::DayOfYear => "DDD",
        Field::Hour24 => "HH24",
        Field::Hour12 => "HH12",
        Field::Minute => "MI",
        Field::Second => "SS",
        Field::Millis => "MS",
        Field::Micros => "US",
    }
}

impl TemplateFields {
    /// The date read: days since 1970-01-01 (year 0 and negative years are BC:
    /// 0 → 1 BC, -1 → 1 BC as PostgreSQL reads them, -n → n BC).
    pub fn days(&self) -> DbResult<i64> {
        let year = match self.year.unwrap_or(1) {
            0 => 0,
            y if y < 0 => y + 1,
            y => y,
        };
        let out_of_range = || {
            DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date/time field value out of range")
        };
        // PostgreSQL's dates end in 5874897 AD; farther years cannot be counted in days safely.
        if year.abs() > 5_874_897 {
            return Err(DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range"));
        }
        if let Some(doy) = self.day_of_year {
            if !(1..=366).contains(&doy) {
                return Err(out_of_range());
            }
            return Ok(super::datetime::days_from_civil(year, 1, 1) + doy as i64 - 1);
        }
        let (m, d) = (self.month.unwrap_or(1), self.day.unwrap_or(1));
        if !(1..=12).contains(&m) || d < 1 || d > super::datetime::days_in_month(year, m) {
            return Err(out_of_range());
        }
        Ok(super::datetime::days_from_civil(year, m, d))
    }

    /// Nanoseconds since midnight.
    pub fn time_ns(&self) -> DbResult<i64> {
        let mut hour = self.hour;
        if self.hour12 || self.pm.is_some() {
            if !(1..=12).contains(&hour) {
                return Err(DbError::new(
                    sqlstate::INVALID_DATETIME_FORMAT,
                    format!("hour \"{hour}\" is invalid for the 12-hour clock"),
                ));
            }
            hour %= 12;
            if self.pm == Some(true) {
                hour += 12;
            }
        }
        if hour > 24 || self.minute > 59 || self.second > 60 {
            return Err(DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date/time field value out of range"));
        }
        Ok(((hour as i64 * 60 + self.minute as i64) * 60 + self.second as i64) * 1_000_000_000 + self.nanos as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::datetime::days_from_civil;

    fn date(s: &str, f: &str) -> i64 {
        parse_template(s, f).and_then(|t| t.days()).unwrap()
    }

    #[test]
    fn templates_read_dates_as_postgresql_does() {
        let xmas = days_from_civil(2022, 12, 25);
        for (s, f) in [
            ("2022-12-25", "YYYY-MM-DD"),
            ("2022/12/25", "YYYY/MM/DD"),
            ("12/25/2022", "MM/DD/YYYY"),
            ("25-12-2022", "DD-MM-YYYY"),
            ("2022.12.25", "YYYY.MM.DD"),
            ("2022-Dec-25", "YYYY-Mon-DD"),
            ("Dec/25/2022", "Mon/DD/YYYY"),
            ("20221225", "YYYYMMDD"),
            ("25 December 2022", "DD Month YYYY"),
            ("2022-12-25 15:24:33", "YYYY-MM-DD HH24:MI:SS"),
        ] {
            assert_eq!(date(s, f), xmas, "{s} / {f}");
        }
        assert_eq!(date("2022-2-5", "YYYY-MM-DD"), days_from_civil(2022, 2, 5));
        assert_eq!(date("0000-12-25", "YYYY-MM-DD"), days_from_civil(0, 12, 25));
        assert_eq!(date("-0001-12-25", "YYYY-MM-DD"), days_from_civil(0, 12, 25));
        assert_eq!(date("-2022-12-25", "YYYY-MM-DD"), days_from_civil(-2021, 12, 25));
    }

    #[test]
    fn short_inputs_are_errors_not_panics() {
        for (s, f) in [("PM", "P.M.YYYY"), ("1 PM", "HH P.M. Mon"), ("", "YYYY-MM-DD Mon Day"), ("x", "A.M.A.M.")] {
            let _ = parse_template(s, f).and_then(|t| t.days());
        }
    }

    #[test]
    fn times_and_errors() {
        let t = parse_template("2022-12-25 03:04:05 PM", "YYYY-MM-DD HH12:MI:SS AM").unwrap();
        assert_eq!(t.time_ns().unwrap(), ((15 * 60 + 4) * 60 + 5) * 1_000_000_000);
        let t = parse_template("10:11:12.345", "HH24:MI:SS.MS").unwrap();
        assert_eq!(t.time_ns().unwrap() % 1_000_000_000, 345_000_000);
        assert!(parse_template("2022-13-01", "YYYY-MM-DD").unwrap().days().is_err());
        assert!(parse_template("2022-xx-01", "YYYY-MM-DD").is_err());
        assert!(parse_template("2022-Foo-01", "YYYY-Mon-DD").is_err());
    }
}
