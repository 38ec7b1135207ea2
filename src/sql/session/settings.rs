//! The settings (GUCs) Brewric knows, as PostgreSQL 15 describes them: each
//! one's canonical name, boot value, unit, category, description, context,
//! type and allowed values (`SETTINGS`), and the rules that turn a value a
//! client gives (SET, set_config(), a startup parameter) into the value
//! SHOW prints — or into PostgreSQL's error for it. SHOW ALL and
//! `pg_catalog.pg_settings` are computed from this table and a session's
//! values; `statement_timeout_ms` and `query_memory_limit_bytes` read the
//! values other modules act on.
//! Must not: hold a session's state (the values, their sources and RESET's
//! values live in `Session`; functions here take them as arguments) or
//! act on a value (arming timers, sizing memory is the caller's).
//!
//! A session's values are kept by lower-case name in the form SHOW prints
//! them (`5s`, `4MB`, `on`); pg_settings' `setting` column shows integers
//! in their base unit (`5000` with unit `ms`), as PostgreSQL does.

use std::collections::BTreeMap;

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::Zone;

/// A setting's type, as pg_settings.vartype shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    Bool,
    Integer,
    Real,
    String,
    Enum,
}

impl VarType {
    pub fn as_str(self) -> &'static str {
        match self {
            VarType::Bool => "bool",
            VarType::Integer => "integer",
            VarType::Real => "real",
            VarType::String => "string",
            VarType::Enum => "enum",
        }
    }
}

/// One setting, as pg_settings describes it.
#[derive(Debug)]
pub struct Setting {
    /// PostgreSQL's spelling (`DateStyle`, `TimeZone`); names match case-insensitively.
    pub name: &'static str,
    /// The value before anything sets it, as pg_settings.boot_val shows it
    /// (integers in the base unit).
    pub boot: &'static str,
    /// The base unit of an integer (`ms`, `s`, `kB`, `8kB`).
    pub unit: Option<&'static str>,
    pub category: &'static str,
    pub short_desc: &'static str,
    pub extra_desc: Option<&'static str>,
    /// Who may change it and when: `user`, `superuser`, `internal`, `postmaster`.
    pub context: &'static str,
    pub vartype: VarType,
    pub min: Option<&'static str>,
    pub max: Option<&'static str>,
    pub enumvals: &'static [&'static str],
    /// Left out of SHOW ALL and pg_settings (PostgreSQL's GUC_NO_SHOW_ALL).
    pub hidden: bool,
}

/// Where a setting's current value came from, as pg_settings.source shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Default,
    /// A startup-packet parameter.
    Client,
    /// SET, SET LOCAL or set_config().
    Session,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Client => "client",
            Source::Session => "session",
        }
    }
}

/// Where each of a session's values came from (absent: `Default`) and the
/// values and sources RESET returns to (pg_settings' `reset_val`).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    pub sources: BTreeMap<String, Source>,
    pub reset: BTreeMap<String, String>,
    pub reset_sources: BTreeMap<String, Source>,
}

impl Provenance {
    pub fn source(&self, key: &str) -> Source {
        self.sources.get(key).copied().unwrap_or(Source::Default)
    }
}

/// A session's settings as pg_settings and SHOW ALL read them.
#[derive(Clone, Copy)]
pub struct SessionSettings<'a> {
    pub values: &'a BTreeMap<String, String>,
    pub provenance: &'a Provenance,
}

/// The setting called `name` (any case).
pub fn lookup(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Settings SHOW ALL and pg_settings list, in PostgreSQL's order (by name, case-insensitively).
pub fn listed() -> impl Iterator<Item = &'static Setting> {
    SETTINGS.iter().filter(|s| !s.hidden)
}

/// Every setting's boot value, keyed by lower-case name, as SHOW prints it:
/// the values a session starts with.
pub fn default_settings() -> BTreeMap<String, String> {
    SETTINGS
        .iter()
        .map(|s| (s.name.to_lowercase(), shown(s, s.boot)))
        .collect()
}

/// The name SHOW heads its column with: the canonical name of a known
/// setting, else the name as written, in lower case.
pub fn show_header(name: &str) -> String {
    lookup(name).map_or_else(|| name.to_lowercase(), |s| s.name.to_string())
}

/// Brewric's own prefix: a `brewric.` name it does not know is an error,
/// as for a prefix an extension reserved in PostgreSQL.
const RESERVED_PREFIX: &str = "brewric";

/// Whether `key` (lower case) names a custom setting (`my.var`): such
/// placeholders are accepted with any value and left out of SHOW ALL.
/// A reserved prefix is 42602.
pub fn check_placeholder(key: &str) -> DbResult<bool> {
    let Some((prefix, _)) = key.split_once('.') else {
        return Ok(false);
    };
    if prefix == RESERVED_PREFIX {
        return Err(DbError::new(
            "42602",
            format!("invalid configuration parameter name \"{key}\""),
        )
        .with_detail(format!("\"{prefix}\" is a reserved prefix.")));
    }
    Ok(true)
}

/// The error for a name that is neither a setting nor a placeholder.
pub fn unrecognized(name: &str) -> DbError {
    DbError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

/// Whether this session may change `s` with SET: 55P02 for `internal` and
/// `postmaster` settings, 42501 for a `superuser` one without superuser.
pub fn check_context(s: &Setting, superuser: bool) -> DbResult<()> {
    match s.context {
        "internal" => Err(DbError::new(
            "55P02",
            format!("parameter \"{}\" cannot be changed", s.name),
        )),
        "postmaster" => Err(DbError::new(
            "55P02",
            format!(
                "parameter \"{}\" cannot be changed without restarting the server",
                s.name
            ),
        )),
        "superuser" if !superuser => Err(DbError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            format!("permission denied to set parameter \"{}\"", s.name),
        )),
        _ => Ok(()),
    }
}

/// Settings whose SET takes a list (`SET search_path TO a, b`); those
/// with `quote` have each item quoted as an identifier where it needs it.
pub fn list_input(s: &Setting) -> Option<bool> {
    match s.name {
        "search_path" | "temp_tablespaces" => Some(true),
        "DateStyle" => Some(false),
        _ => None,
    }
}

fn invalid(s: &Setting, value: &str) -> DbError {
    DbError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"{}\": \"{value}\"", s.name),
    )
}

/// `value`, given by a client for `s`, checked and written as SHOW prints
/// it; `current` is the session's value now (DateStyle keeps the half
/// that `value` leaves out).
pub fn canonical_value(s: &Setting, value: &str, current: Option<&str>) -> DbResult<String> {
    match s.vartype {
        VarType::Bool => {
            let v = parse_bool(value).ok_or_else(|| {
                DbError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("parameter \"{}\" requires a Boolean value", s.name),
                )
            })?;
            if s.name == "default_with_oids" && v {
                return Err(DbError::unsupported("tables declared WITH OIDS are not supported"));
            }
            Ok(on_off(v).into())
        }
        VarType::Integer => {
            let n = parse_int(s, value)?;
            Ok(shown_int(s, n))
        }
        VarType::Real => {
            let v: f64 = value.trim().parse().map_err(|_| invalid(s, value))?;
            if !v.is_finite() {
                return Err(invalid(s, value));
            }
            let min = s.min.and_then(|m| m.parse::<f64>().ok()).unwrap_or(f64::MIN);
            let max = s.max.and_then(|m| m.parse::<f64>().ok()).unwrap_or(f64::MAX);
            if v < min || v > max {
                return Err(out_of_range(s, &format_g(v)));
            }
            Ok(format_g(v))
        }
        VarType::Enum => {
            let t = value.trim();
            if let Some(v) = s.enumvals.iter().find(|e| e.eq_ignore_ascii_case(t)) {
                return Ok(v.to_string());
            }
            // on/off settings take every Boolean spelling (hidden values in PostgreSQL).
            if s.enumvals.contains(&"on") {
                if let Some(b) = parse_bool(t) {
                    return Ok(on_off(b).into());
                }
            }
            Err(invalid(s, value).with_hint(format!("Available values: {}.", s.enumvals.join(", "))))
        }
        VarType::String => match s.name {
            "TimeZone" => canonical_time_zone(value).ok_or_else(|| {
                invalid(s, value)
            }),
            "DateStyle" => canonical_date_style(s, value, current.unwrap_or(s.boot)),
            "client_encoding" => {
                let norm: String = value
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect::<String>()
                    .to_lowercase();
                match norm.as_str() {
                    "utf8" | "unicode" => Ok("UTF8".into()),
                    "sqlascii" => Ok("SQL_ASCII".into()),
                    _ => Err(invalid(s, value).with_hint("Brewric sends and reads UTF8 only.")),
                }
            }
            _ => Ok(value.to_string()),
        },
    }
}

fn on_off(v: bool) -> &'static str {
    if v {
        "on"
    } else {
        "off"
    }
}

/// PostgreSQL's parse_bool, which is boolin's: a prefix of true/false/yes/no,
/// on, off (at least `of`), 1 or 0, in any case.
pub fn parse_bool(value: &str) -> Option<bool> {
    crate::types::text::parse_bool(value).ok()
}

/// Units of one family: (name, size in the smallest unit of the family),
/// largest first, as PostgreSQL prints them.
const TIME_UNITS: &[(&str, f64)] = &[
    ("d", 86_400_000_000.0),
    ("h", 3_600_000_000.0),
    ("min", 60_000_000.0),
    ("s", 1_000_000.0),
    ("ms", 1_000.0),
    ("us", 1.0),
];
const MEMORY_UNITS: &[(&str, f64)] = &[
    ("TB", 1_099_511_627_776.0),
    ("GB", 1_073_741_824.0),
    ("MB", 1_048_576.0),
    ("kB", 1_024.0),
    ("B", 1.0),
];

/// A family of units (name, size in the family's smallest unit).
type UnitFamily = &'static [(&'static str, f64)];

/// A base unit's family and its size in the family's smallest unit.
fn base_unit(unit: &str) -> Option<(UnitFamily, f64, &'static str)> {
    Some(match unit {
        "ms" => (TIME_UNITS, 1_000.0, "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\"."),
        "s" => (TIME_UNITS, 1_000_000.0, "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\"."),
        "min" => (TIME_UNITS, 60_000_000.0, "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\"."),
        "kB" => (MEMORY_UNITS, 1_024.0, "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\"."),
        "8kB" => (MEMORY_UNITS, 8_192.0, "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\"."),
        _ => return None,
    })
}

fn out_of_range(s: &Setting, shown_value: &str) -> DbError {
    DbError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!(
            "{shown_value} is outside the valid range for parameter \"{}\" ({} .. {})",
            s.name,
            s.min.unwrap_or(""),
            s.max.unwrap_or("")
        ),
    )
}

/// An integer setting's value in its base unit, read as PostgreSQL's
/// parse_int does: a number (decimal, `0x` hex, or with a fraction or
/// exponent, rounded), then an optional unit of the setting's family.
fn parse_int(s: &Setting, value: &str) -> DbResult<i64> {
    let t = value.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_hexdigit() || matches!(c, '.' | '+' | '-' | 'x' | 'X')))
        .unwrap_or(t.len());
    // A unit may start with a hex digit (`d`, `B`): take the longest number that parses.
    let (number, unit) = (0..=split)
        .rev()
        .find_map(|i| parse_number(&t[..i]).map(|n| (n, t[i..].trim())))
        .ok_or_else(|| invalid(s, value))?;
    let mut n = number;
    if !unit.is_empty() {
        let hint = s.unit.and_then(base_unit);
        let Some((family, base, hint)) = hint else {
            return Err(invalid(s, value));
        };
        let Some((_, size)) = family.iter().find(|(u, _)| *u == unit) else {
            return Err(invalid(s, value).with_hint(hint));
        };
        n = n * size / base;
    }
    let n = n.round_ties_even();
    if !(i32::MIN as f64..=i32::MAX as f64).contains(&n) {
        return Err(invalid(s, value).with_hint("Value exceeds integer range."));
    }
    let n = n as i64;
    let min = s.min.and_then(|m| m.parse::<i64>().ok()).unwrap_or(i32::MIN as i64);
    let max = s.max.and_then(|m| m.parse::<i64>().ok()).unwrap_or(i32::MAX as i64);
    if n < min || n > max {
        let unit = s.unit.map(|u| format!(" {u}")).unwrap_or_default();
        return Err(out_of_range(s, &format!("{n}{unit}")));
    }
    Ok(n)
}

fn parse_number(t: &str) -> Option<f64> {
    if t.is_empty() {
        return None;
    }
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        let v = i64::from_str_radix(hex, 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// An integer in its base unit as SHOW prints it: in the largest unit that
/// divides it exactly (`5000` ms is `5s`, `90000` ms `90s`); 0 and negative
/// values bare.
fn shown_int(s: &Setting, n: i64) -> String {
    let Some((family, base, _)) = s.unit.and_then(base_unit) else {
        return n.to_string();
    };
    if n <= 0 {
        return n.to_string();
    }
    for (name, size) in family.iter() {
        let multiplier = size / base;
        if multiplier <= 1.0 || n % (multiplier as i64) == 0 {
            return format!("{}{name}", (n as f64 / multiplier).round_ties_even() as i64);
        }
    }
    n.to_string()
}

/// A value (as SHOW prints it, or a boot value) in pg_settings' form:
/// integers in the base unit, without the unit.
pub fn raw_setting(s: &Setting, shown_value: &str) -> String {
    match s.vartype {
        VarType::Integer => parse_int(s, shown_value).map_or_else(|_| shown_value.to_string(), |n| n.to_string()),
        _ => shown_value.to_string(),
    }
}

/// A raw value (pg_settings' form) as SHOW prints it.
fn shown(s: &Setting, raw: &str) -> String {
    match s.vartype {
        VarType::Integer => parse_int(s, raw).map_or_else(|_| raw.to_string(), |n| shown_int(s, n)),
        _ => raw.to_string(),
    }
}

/// C's `%g`: six significant digits, exponent form outside 1e-4 .. 1e6.
fn format_g(v: f64) -> String {
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp) as usize;
        trim(&format!("{v:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    }
}

/// A TimeZone value as PostgreSQL shows it: UTC's names in their canonical
/// spelling, a number of hours as a POSIX zone (`-7` → `<-07>+07`), a tz
/// database name in its own spelling (`america/new_york` →
/// `America/New_York`), POSIX zones as given. None for an unknown zone.
fn canonical_time_zone(value: &str) -> Option<String> {
    let zone = Zone::from_setting(value)?;
    let offset = match zone {
        Zone::Fixed(off) => off,
        Zone::Named(tz) => return Some(tz.name().to_string()),
    };
    let t = value.trim();
    if let Some(name) = crate::types::zone::utc_name(t) {
        return Some(name.to_string());
    }
    if t.parse::<f64>().is_ok() {
        let sign = if offset < 0 { '-' } else { '+' };
        let (h, m, sec) = (offset.abs() / 3600, offset.abs() / 60 % 60, offset.abs() % 60);
        let hm = match (m, sec) {
            (0, 0) => format!("{h:02}"),
            (_, 0) => format!("{h:02}:{m:02}"),
            _ => format!("{h:02}:{m:02}:{sec:02}"),
        };
        let west = if offset < 0 { '+' } else { '-' };
        return Some(format!("<{sign}{hm}>{west}{hm}"));
    }
    Some(t.to_string())
}

/// DateStyle as PostgreSQL's check_datestyle reads it: an output style
/// (ISO, SQL, Postgres, German) and/or a field order (YMD, DMY/Euro, MDY/US),
/// each kept from `current` when left out. Brewric writes dates in ISO only.
fn canonical_date_style(s: &Setting, value: &str, current: &str) -> DbResult<String> {
    let mut parts = current.split(',').map(str::trim);
    let (mut style, mut order) = (
        parts.next().unwrap_or("ISO").to_string(),
        parts.next().unwrap_or("MDY").to_string(),
    );
    let (mut have_style, mut have_order) = (None::<&str>, None::<&str>);
    let conflict = || invalid(s, value).with_detail("Conflicting \"datestyle\" specifications.");
    for word in value.split([',', ' ']).map(str::trim).filter(|w| !w.is_empty()) {
        let lower = word.to_ascii_lowercase();
        let (new_style, new_order) = match lower.as_str() {
            "iso" => (Some("ISO"), None),
            "sql" => (Some("SQL"), None),
            "postgres" => (Some("Postgres"), None),
            "german" => (Some("German"), None),
            "ymd" => (None, Some("YMD")),
            "dmy" | "euro" | "european" => (None, Some("DMY")),
            "mdy" | "us" | "noneuro" | "noneuropean" => (None, Some("MDY")),
            "default" => (Some("ISO"), Some("MDY")),
            _ => {
                return Err(invalid(s, value)
                    .with_detail(format!("Unrecognized key word: \"{word}\".")))
            }
        };
        if let Some(st) = new_style {
            if have_style.is_some_and(|h| h != st) {
                return Err(conflict());
            }
            have_style = Some(st);
        }
        if let Some(o) = new_order {
            if have_order.is_some_and(|h| h != o) {
                return Err(conflict());
            }
            have_order = Some(o);
        }
    }
    if let Some(st) = have_style {
        style = st.to_string();
        if st == "German" && have_order.is_none() {
            order = "DMY".into();
        }
    }
    if let Some(o) = have_order {
        order = o.to_string();
    }
    if style != "ISO" {
        return Err(DbError::unsupported(format!("DateStyle \"{style}\" is not supported yet"))
            .with_hint("Brewric writes dates in the ISO style only."));
    }
    Ok(format!("{style}, {order}"))
}

/// The session's statement_timeout in milliseconds (0: none).
pub fn statement_timeout_ms(settings: &BTreeMap<String, String>) -> u64 {
    settings
        .get("statement_timeout")
        .and_then(|v| lookup("statement_timeout").and_then(|s| parse_int(s, v).ok()))
        .map_or(0, |ms| ms.max(0) as u64)
}

/// The session's brewric.query_memory_limit in bytes (None: not readable).
pub fn query_memory_limit_bytes(settings: &BTreeMap<String, String>) -> Option<usize> {
    let s = lookup("brewric.query_memory_limit")?;
    let kb = parse_int(s, settings.get("brewric.query_memory_limit")?).ok()?;
    usize::try_from(kb).ok()?.checked_mul(1024)
}

/// brewric.query_memory_limit's value for a server default of `bytes`, as SHOW prints it.
pub fn query_memory_limit_value(bytes: usize) -> String {
    lookup("brewric.query_memory_limit").map_or_else(String::new, |s| {
        shown_int(s, i64::try_from(bytes / 1024).unwrap_or(i32::MAX as i64).min(i32::MAX as i64))
    })
}

/// SHOW ALL's rows: name, value, description of every listed setting.
pub fn show_all(values: &BTreeMap<String, String>) -> Vec<[String; 3]> {
    listed()
        .map(|s| {
            let key = s.name.to_lowercase();
            let value = values.get(&key).cloned().unwrap_or_else(|| shown(s, s.boot));
            [s.name.to_string(), value, s.short_desc.to_string()]
        })
        .collect()
}

/// The settings a session sees: every one this module knows, in
/// PostgreSQL's order (by name, case-insensitively). Names with a `.` that
/// are not here are placeholders (`check_placeholder`).
pub static SETTINGS: &[Setting] = &[
    Setting {
        name: "application_name",
        boot: "",
        unit: None,
        category: "Reporting and Logging / What to Log",
        short_desc: "Sets the application name to be reported in statistics and logs.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "array_nulls",
        boot: "on",
        unit: None,
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "Enable input of NULL elements in arrays.",
        extra_desc: Some("When turned on, unquoted NULL in an array input value means a null value; otherwise it is taken literally."),
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "backslash_quote",
        boot: "safe_encoding",
        unit: None,
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "Sets whether \"\\'\" is allowed in string literals.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["safe_encoding", "on", "off"],
        hidden: false,
    },
    Setting {
        name: "block_size",
        boot: "8192",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the size of a disk block.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Integer,
        min: Some("8192"),
        max: Some("8192"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "brewric.query_memory_limit",
        boot: "4194304",
        unit: Some("kB"),
        category: "Resource Usage / Memory",
        short_desc: "Sets the maximum memory one statement's sorts, joins, set operations and aggregates may hold.",
        extra_desc: Some("Brewric's setting; the server's --query-memory-mb sets its default. A statement that needs more fails with SQLSTATE 53200."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("64"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "bytea_output",
        boot: "hex",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the output format for bytea.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["escape", "hex"],
        hidden: false,
    },
    Setting {
        name: "check_function_bodies",
        boot: "on",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Check routine bodies during CREATE FUNCTION and CREATE PROCEDURE.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "client_encoding",
        boot: "UTF8",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the client's character set encoding.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "client_min_messages",
        boot: "notice",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the message levels that are sent to the client.",
        extra_desc: Some("Each level includes all the levels that follow it. The later the level, the fewer messages are sent."),
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"],
        hidden: false,
    },
    Setting {
        name: "cursor_tuple_fraction",
        boot: "0.1",
        unit: None,
        category: "Query Tuning / Other Planner Options",
        short_desc: "Sets the planner's estimate of the fraction of a cursor's rows that will be retrieved.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Real,
        min: Some("0"),
        max: Some("1"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "DateStyle",
        boot: "ISO, MDY",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the display format for date and time values.",
        extra_desc: Some("Also controls interpretation of ambiguous date inputs."),
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "default_table_access_method",
        boot: "heap",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the default table access method for new tables.",
        extra_desc: None,
        context: "user",
        // PostgreSQL's only built-in method, which pg_dump sets (tables here are Brewric's own format).
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["heap"],
        hidden: false,
    },
    Setting {
        name: "default_tablespace",
        boot: "",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the default tablespace to create tables and indexes in.",
        extra_desc: Some("An empty string selects the database's default tablespace."),
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "default_text_search_config",
        boot: "pg_catalog.english",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets default text search configuration.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "default_transaction_deferrable",
        boot: "off",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the default deferrable status of new transactions.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "default_transaction_isolation",
        boot: "read committed",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the transaction isolation level of each new transaction.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["serializable", "repeatable read", "read committed", "read uncommitted"],
        hidden: false,
    },
    Setting {
        name: "default_transaction_read_only",
        boot: "off",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the default read-only status of new transactions.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "default_with_oids",
        boot: "off",
        unit: None,
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "WITH OIDS is no longer supported; this can only be false.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: true,
    },
    Setting {
        name: "effective_cache_size",
        boot: "524288",
        unit: Some("8kB"),
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's assumption about the total size of the data caches.",
        extra_desc: Some("That is, the total size of the caches (kernel cache and shared buffers) used for PostgreSQL data files. This is measured in disk pages, which are normally 8 kB each."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("1"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_bitmapscan",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of bitmap-scan plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_hashagg",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of hashed aggregation plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_hashjoin",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of hash join plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_indexonlyscan",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of index-only-scan plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_indexscan",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of index-scan plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_material",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of materialization.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_mergejoin",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of merge join plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_nestloop",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of nested-loop join plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_seqscan",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of sequential-scan plans.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "enable_sort",
        boot: "on",
        unit: None,
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of explicit sort steps.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "escape_string_warning",
        boot: "on",
        unit: None,
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "Warn about backslash escapes in ordinary string literals.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "extra_float_digits",
        boot: "1",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the number of digits displayed for floating-point values.",
        extra_desc: Some("This affects real, double precision, and geometric data types. A zero or negative parameter value is added to the standard number of digits (FLT_DIG or DBL_DIG as appropriate). Any value greater than zero selects precise output mode."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("-15"),
        max: Some("3"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "geqo",
        boot: "on",
        unit: None,
        category: "Query Tuning / Genetic Query Optimizer",
        short_desc: "Enables genetic query optimization.",
        extra_desc: Some("This algorithm attempts to do planning without exhaustive searching."),
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "idle_in_transaction_session_timeout",
        boot: "0",
        unit: Some("ms"),
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed idle time between queries, when in a transaction.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "idle_session_timeout",
        boot: "0",
        unit: Some("ms"),
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed idle time between queries, when not in a transaction.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "in_hot_standby",
        boot: "off",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows whether hot standby is currently active.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "integer_datetimes",
        boot: "on",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows whether datetimes are integer based.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "IntervalStyle",
        boot: "postgres",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the display format for interval values.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["postgres", "postgres_verbose", "sql_standard", "iso_8601"],
        hidden: false,
    },
    Setting {
        name: "is_superuser",
        boot: "on",
        unit: None,
        category: "Ungrouped",
        short_desc: "Shows whether the current user is a superuser.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: true,
    },
    Setting {
        name: "jit",
        boot: "on",
        unit: None,
        category: "Query Tuning / Other Planner Options",
        short_desc: "Allow JIT compilation.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lc_collate",
        boot: "C.UTF-8",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the collation order locale.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lc_ctype",
        boot: "C.UTF-8",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the character classification and case conversion locale.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lc_messages",
        boot: "C.UTF-8",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the language in which messages are displayed.",
        extra_desc: None,
        context: "superuser",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lc_monetary",
        boot: "C.UTF-8",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the locale for formatting monetary amounts.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lc_numeric",
        boot: "C.UTF-8",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the locale for formatting numbers.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lc_time",
        boot: "C.UTF-8",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the locale for formatting date and time values.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "lock_timeout",
        boot: "0",
        unit: Some("ms"),
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed duration of any wait for a lock.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "log_min_duration_statement",
        boot: "-1",
        unit: Some("ms"),
        category: "Reporting and Logging / When to Log",
        short_desc: "Sets the minimum execution time above which all statements will be logged.",
        extra_desc: Some("Zero prints all queries. -1 turns this feature off."),
        context: "superuser",
        vartype: VarType::Integer,
        min: Some("-1"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "log_statement",
        boot: "none",
        unit: None,
        category: "Reporting and Logging / What to Log",
        short_desc: "Sets the type of statements logged.",
        extra_desc: None,
        context: "superuser",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["none", "ddl", "mod", "all"],
        hidden: false,
    },
    Setting {
        name: "maintenance_work_mem",
        boot: "65536",
        unit: Some("kB"),
        category: "Resource Usage / Memory",
        short_desc: "Sets the maximum memory to be used for maintenance operations.",
        extra_desc: Some("This includes operations such as VACUUM and CREATE INDEX."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("1024"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "max_connections",
        boot: "100",
        unit: None,
        category: "Connections and Authentication / Connection Settings",
        short_desc: "Sets the maximum number of concurrent connections.",
        extra_desc: None,
        context: "postmaster",
        vartype: VarType::Integer,
        min: Some("1"),
        max: Some("262143"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "max_function_args",
        boot: "100",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the maximum number of function arguments.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Integer,
        min: Some("100"),
        max: Some("100"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "max_identifier_length",
        boot: "63",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the maximum identifier length.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Integer,
        min: Some("63"),
        max: Some("63"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "max_index_keys",
        boot: "32",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the maximum number of index keys.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Integer,
        min: Some("32"),
        max: Some("32"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "max_parallel_workers_per_gather",
        boot: "2",
        unit: None,
        category: "Resource Usage / Asynchronous Behavior",
        short_desc: "Sets the maximum number of parallel processes per executor node.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("1024"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "password_encryption",
        boot: "scram-sha-256",
        unit: None,
        category: "Connections and Authentication / Authentication",
        short_desc: "Chooses the algorithm for encrypting passwords.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["md5", "scram-sha-256"],
        hidden: false,
    },
    Setting {
        name: "plan_cache_mode",
        boot: "auto",
        unit: None,
        category: "Query Tuning / Other Planner Options",
        short_desc: "Controls the planner's selection of custom or generic plan.",
        extra_desc: Some("Prepared statements can have custom and generic plans, and the planner will attempt to choose which is better.  This can be set to override the default behavior."),
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["auto", "force_generic_plan", "force_custom_plan"],
        hidden: false,
    },
    Setting {
        name: "quote_all_identifiers",
        boot: "off",
        unit: None,
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "When generating SQL fragments, quote all identifiers.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "random_page_cost",
        boot: "4",
        unit: None,
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's estimate of the cost of a nonsequentially fetched disk page.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Real,
        min: Some("0"),
        max: Some("1.79769e+308"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "row_security",
        boot: "on",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Enable row security.",
        extra_desc: Some("When enabled, row security will be applied to all users."),
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "search_path",
        boot: "\"$user\", public",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the schema search order for names that are not schema-qualified.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "server_encoding",
        boot: "UTF8",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the server (database) character set encoding.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "server_version",
        boot: crate::SERVER_VERSION,
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the server version.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "server_version_num",
        boot: "150000",
        unit: None,
        category: "Preset Options",
        short_desc: "Shows the server version as an integer.",
        extra_desc: None,
        context: "internal",
        vartype: VarType::Integer,
        min: Some("150000"),
        max: Some("150000"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "session_replication_role",
        boot: "origin",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the session's behavior for triggers and rewrite rules.",
        extra_desc: None,
        context: "superuser",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["origin", "replica", "local"],
        hidden: false,
    },
    Setting {
        name: "standard_conforming_strings",
        boot: "on",
        unit: None,
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "Causes '...' strings to treat backslashes literally.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "statement_timeout",
        boot: "0",
        unit: Some("ms"),
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed duration of any statement.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "synchronous_commit",
        boot: "on",
        unit: None,
        category: "Write-Ahead Log / Settings",
        short_desc: "Sets the current transaction's synchronization level.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["local", "remote_write", "remote_apply", "on", "off"],
        hidden: false,
    },
    Setting {
        name: "tcp_keepalives_count",
        boot: "0",
        unit: None,
        category: "Connections and Authentication / Connection Settings",
        short_desc: "Maximum number of TCP keepalive retransmits.",
        extra_desc: Some("Number of consecutive keepalive retransmits that can be lost before a connection is considered dead. A value of 0 uses the system default."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "tcp_keepalives_idle",
        boot: "0",
        unit: Some("s"),
        category: "Connections and Authentication / Connection Settings",
        short_desc: "Time between issuing TCP keepalives.",
        extra_desc: Some("A value of 0 uses the system default."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "tcp_keepalives_interval",
        boot: "0",
        unit: Some("s"),
        category: "Connections and Authentication / Connection Settings",
        short_desc: "Time between TCP keepalive retransmits.",
        extra_desc: Some("A value of 0 uses the system default."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("0"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "temp_buffers",
        boot: "1024",
        unit: Some("8kB"),
        category: "Resource Usage / Memory",
        short_desc: "Sets the maximum number of temporary buffers used by each session.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Integer,
        min: Some("100"),
        max: Some("1073741823"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "temp_tablespaces",
        boot: "",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the tablespace(s) to use for temporary tables and sort files.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "TimeZone",
        boot: "UTC",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the time zone for displaying and interpreting time stamps.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "timezone_abbreviations",
        boot: "Default",
        unit: None,
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Selects a file of time zone abbreviations.",
        extra_desc: None,
        context: "user",
        vartype: VarType::String,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "trace_notify",
        boot: "off",
        unit: None,
        category: "Developer Options",
        short_desc: "Generates debugging output for LISTEN and NOTIFY.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "transaction_deferrable",
        boot: "off",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Whether to defer a read-only serializable transaction until it can be executed with no possible serialization failures.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "transaction_isolation",
        boot: "read committed",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the current transaction's isolation level.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["serializable", "repeatable read", "read committed", "read uncommitted"],
        hidden: false,
    },
    Setting {
        name: "transaction_read_only",
        boot: "off",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the current transaction's read-only status.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Bool,
        min: None,
        max: None,
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "work_mem",
        boot: "4096",
        unit: Some("kB"),
        category: "Resource Usage / Memory",
        short_desc: "Sets the maximum memory to be used for query workspaces.",
        extra_desc: Some("This much memory can be used by each internal sort operation and hash table before switching to temporary disk files."),
        context: "user",
        vartype: VarType::Integer,
        min: Some("64"),
        max: Some("2147483647"),
        enumvals: &[],
        hidden: false,
    },
    Setting {
        name: "xmloption",
        boot: "content",
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets whether XML data in implicit parsing and serialization operations is to be considered as documents or content fragments.",
        extra_desc: None,
        context: "user",
        vartype: VarType::Enum,
        min: None,
        max: None,
        enumvals: &["content", "document"],
        hidden: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str, value: &str) -> DbResult<String> {
        let s = lookup(name).ok_or_else(|| unrecognized(name))?;
        canonical_value(s, value, None)
    }

    #[test]
    fn the_table_is_in_postgres_order_and_its_defaults_read_back() {
        for w in SETTINGS.windows(2) {
            assert!(w[0].name.to_lowercase() < w[1].name.to_lowercase(), "{} / {}", w[0].name, w[1].name);
        }
        for s in SETTINGS {
            let value = shown(s, s.boot);
            assert_eq!(canonical_value(s, &value, Some(&value)).ok().as_deref(), Some(value.as_str()), "{}", s.name);
            assert_eq!(raw_setting(s, &value), s.boot, "{}", s.name);
        }
    }

    /// Each (setting, value given, value shown) of `cases`.
    fn check_shown(cases: &[(&str, &str, &str)]) {
        for (name, value, want) in cases {
            let got = set(name, value).map_err(|e| e.into_message());
            assert_eq!(got.as_deref(), Ok(*want), "SET {name} = {value}");
        }
    }

    #[test]
    fn integers_are_shown_in_the_largest_exact_unit() {
        check_shown(&[
            ("statement_timeout", "5000", "5s"),
            ("statement_timeout", "100ms", "100ms"),
            ("statement_timeout", " 1min ", "1min"),
            ("statement_timeout", "90s", "90s"),
            ("statement_timeout", "1.5min", "90s"),
            ("statement_timeout", "3600000", "1h"),
            ("statement_timeout", "1e3", "1s"),
            ("statement_timeout", "0x10", "16ms"),
            ("statement_timeout", "1.5", "2ms"),
            ("statement_timeout", "0", "0"),
            ("work_mem", "1024", "1MB"),
            ("work_mem", "1536kB", "1536kB"),
            ("temp_buffers", "1024", "8MB"),
            ("log_min_duration_statement", "-1", "-1"),
            ("brewric.query_memory_limit", "1MB", "1MB"),
        ]);
        let mut values = BTreeMap::new();
        values.insert("statement_timeout".to_string(), "90s".to_string());
        values.insert("brewric.query_memory_limit".to_string(), "1MB".to_string());
        assert_eq!(statement_timeout_ms(&values), 90_000);
        assert_eq!(query_memory_limit_bytes(&values), Some(1 << 20));
        assert_eq!(statement_timeout_ms(&BTreeMap::new()), 0);
        assert_eq!(query_memory_limit_value(4096 << 20), "4GB");
    }

    #[test]
    fn bad_values_get_postgres_errors() {
        const TIME_UNITS_HINT: &str = "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".";
        // (setting, value, its message, detail or hint)
        for (name, value, want) in [
            ("statement_timeout", "abc", "invalid value for parameter \"statement_timeout\": \"abc\""),
            ("statement_timeout", "5 parsecs", TIME_UNITS_HINT),
            ("statement_timeout", "-5", "-5 ms is outside the valid range for parameter \"statement_timeout\" (0 .. 2147483647)"),
            ("statement_timeout", "2147483648", "Value exceeds integer range."),
            ("extra_float_digits", "4", "4 is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)"),
            ("work_mem", "1xB", "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\"."),
            ("enable_seqscan", "maybe", "parameter \"enable_seqscan\" requires a Boolean value"),
            ("enable_seqscan", "o", "parameter \"enable_seqscan\" requires a Boolean value"),
            ("bytea_output", "foo", "Available values: escape, hex."),
            ("random_page_cost", "-1", "-1 is outside the valid range for parameter \"random_page_cost\" (0 .. 1.79769e+308)"),
            ("DateStyle", "iso, sql", "Conflicting \"datestyle\" specifications."),
        ] {
            let e = set(name, value).expect_err(name);
            let got = [Some(e.message.as_str()), e.detail.as_deref(), e.hint.as_deref()];
            assert!(got.contains(&Some(want)), "SET {name} = {value}: {got:?}");
        }
        assert!(set("statement_timeout", "abc").is_err_and(|e| e.hint.is_none()));
        assert!(check_placeholder("brewric.nope").is_err());
        assert!(check_placeholder("my.var").is_ok_and(|p| p));
        assert!(check_placeholder("plain").is_ok_and(|p| !p));
    }

    #[test]
    fn other_types_are_canonical() {
        check_shown(&[
            ("enable_seqscan", "Y", "on"),
            ("enable_seqscan", "of", "off"),
            ("enable_seqscan", "TRUE", "on"),
            ("enable_seqscan", "0", "off"),
            ("enable_seqscan", "ye", "on"),
            ("bytea_output", "HEX", "hex"),
            ("synchronous_commit", "true", "on"),
            ("random_page_cost", "1.23456789", "1.23457"),
            ("random_page_cost", "1e10", "1e+10"),
            ("random_page_cost", "4", "4"),
            ("cursor_tuple_fraction", "0.0001", "0.0001"),
            ("TimeZone", "utc", "UTC"),
            ("TimeZone", "-7", "<-07>+07"),
            ("TimeZone", "5.5", "<+05:30>-05:30"),
            ("TimeZone", "+02:00", "+02:00"),
            ("DateStyle", "iso", "ISO, MDY"),
            ("DateStyle", "ymd, ISO", "ISO, YMD"),
            ("client_encoding", "unicode", "UTF8"),
        ]);
        let datestyle = lookup("datestyle").expect("DateStyle");
        assert_eq!(canonical_value(datestyle, "dmy", Some("ISO, YMD")).ok().as_deref(), Some("ISO, DMY"));
        assert_eq!(show_header("datestyle"), "DateStyle");
        assert_eq!(show_header("My.Var"), "my.var");
        assert!(show_all(&default_settings()).iter().all(|[n, ..]| n != "is_superuser"));
    }
}
