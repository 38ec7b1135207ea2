//! `Numeric`: the value of a SQL `numeric` — a finite decimal (rust_decimal's
//! 28 digits) or one of PostgreSQL's special values NaN, Infinity and -Infinity
//! (PostgreSQL 14+). Owns the value's order (NaN above +Infinity above every
//! finite value, NaN equal to itself, as PostgreSQL sorts and groups), its text
//! spellings on input, and its 16-byte storage form.
//! Must not: do arithmetic — the kernels own PostgreSQL's rules for specials
//! (`exec/kernels/arith.rs`, `math.rs`, `cast.rs`).

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// One numeric value.
#[derive(Clone, Copy)]
pub enum Numeric {
    Finite(Decimal),
    NaN,
    Infinity,
    NegInfinity,
}

impl Default for Numeric {
    fn default() -> Self {
        Numeric::ZERO
    }
}

impl From<Decimal> for Numeric {
    fn from(d: Decimal) -> Self {
        Numeric::Finite(d)
    }
}

/// Storage markers in the low (unused) flag bits of rust_decimal's 16-byte
/// form: a finite value always has them zero, so old data reads unchanged.
const STORED_NAN: u8 = 1;
const STORED_INFINITY: u8 = 2;
const STORED_NEG_INFINITY: u8 = 3;

impl Numeric {
    pub const ZERO: Numeric = Numeric::Finite(Decimal::ZERO);

    /// The decimal when the value is finite.
    #[inline]
    pub fn finite(self) -> Option<Decimal> {
        match self {
            Numeric::Finite(d) => Some(d),
            _ => None,
        }
    }

    #[inline]
    pub fn is_special(self) -> bool {
        !matches!(self, Numeric::Finite(_))
    }

    #[inline]
    pub fn is_nan(self) -> bool {
        matches!(self, Numeric::NaN)
    }

    /// -1, 0 or 1; NaN has no sign (0), as PostgreSQL's numeric_sign_internal
    /// is never asked about it.
    pub fn signum(self) -> i32 {
        match self {
            Numeric::Finite(d) if d.is_zero() => 0,
            Numeric::Finite(d) if d.is_sign_negative() => -1,
            Numeric::Finite(_) | Numeric::Infinity => 1,
            Numeric::NegInfinity => -1,
            Numeric::NaN => 0,
        }
    }

    /// An infinity with the given sign (non-negative → +Infinity).
    pub fn infinity(sign: i32) -> Numeric {
        if sign < 0 {
            Numeric::NegInfinity
        } else {
            Numeric::Infinity
        }
    }

    /// Display scale: digits after the point (specials have none).
    #[inline]
    pub fn scale(self) -> u32 {
        self.finite().map_or(0, |d| d.scale())
    }

    pub fn to_f64(self) -> f64 {
        match self {
            Numeric::Finite(d) => d.to_f64().unwrap_or(0.0),
            Numeric::NaN => f64::NAN,
            Numeric::Infinity => f64::INFINITY,
            Numeric::NegInfinity => f64::NEG_INFINITY,
        }
    }

    /// A special value's input spelling (PostgreSQL's numeric_in: NaN,
    /// [+-]Infinity and [+-]inf, any case, after trimming); None otherwise.
    pub fn parse_special(text: &str) -> Option<Numeric> {
        let t = text.trim();
        let (sign, rest) = match t.as_bytes().first() {
            Some(b'+') => (1, &t[1..]),
            Some(b'-') => (-1, &t[1..]),
            _ => (0, t),
        };
        if sign == 0 && rest.eq_ignore_ascii_case("nan") {
            return Some(Numeric::NaN);
        }
        if rest.eq_ignore_ascii_case("infinity") || rest.eq_ignore_ascii_case("inf") {
            return Some(Numeric::infinity(sign));
        }
        None
    }

    /// The 16-byte form used by the WAL and segments.
    pub fn serialize(self) -> [u8; 16] {
        let marker = match self {
            Numeric::Finite(d) => return d.serialize(),
            Numeric::NaN => STORED_NAN,
            Numeric::Infinity => STORED_INFINITY,
            Numeric::NegInfinity => STORED_NEG_INFINITY,
        };
        let mut out = [0u8; 16];
        out[0] = marker;
        out
    }

    pub fn deserialize(bytes: [u8; 16]) -> Numeric {
        match bytes[0] {
            STORED_NAN => Numeric::NaN,
            STORED_INFINITY => Numeric::Infinity,
            STORED_NEG_INFINITY => Numeric::NegInfinity,
            _ => Numeric::Finite(Decimal::deserialize(bytes)),
        }
    }

    /// Rank of the value's class in PostgreSQL's order.
    fn class(self) -> u8 {
        match self {
            Numeric::NegInfinity => 0,
            Numeric::Finite(_) => 1,
            Numeric::Infinity => 2,
            Numeric::NaN => 3,
        }
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Numeric::Finite(a), Numeric::Finite(b)) => a.cmp(b),
            _ => self.class().cmp(&other.class()),
        }
    }
}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.class().hash(state);
        if let Numeric::Finite(d) = self {
            // rust_decimal hashes the normalized value: 1.0 and 1.00 alike.
            d.hash(state);
        }
    }
}

/// Debug shows the value as text (`12.50`, `NaN`): the storage-format tests'
/// golden renderings are written that way.
impl std::fmt::Debug for Numeric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Numeric::Finite(d) => d.fmt(f),
            special => std::fmt::Display::fmt(special, f),
        }
    }
}

impl std::fmt::Display for Numeric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Numeric::Finite(d) => d.fmt(f),
            Numeric::NaN => f.write_str("NaN"),
            Numeric::Infinity => f.write_str("Infinity"),
            Numeric::NegInfinity => f.write_str("-Infinity"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn n(s: &str) -> Numeric {
        Numeric::parse_special(s).unwrap_or_else(|| Numeric::Finite(Decimal::from_str(s).unwrap()))
    }

    #[test]
    fn order_puts_nan_above_infinity_above_finite_values() {
        let mut v = [n("NaN"), n("1.5"), n("-inf"), n("Infinity"), n("-7"), n("nan")];
        v.sort();
        let shown: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(shown, ["-Infinity", "-7", "1.5", "Infinity", "NaN", "NaN"]);
        assert_eq!(n("NaN"), n("nan"));
        assert_eq!(n("1.0"), n("1.00"));
    }

    #[test]
    fn special_spellings_follow_numeric_in() {
        for (text, want) in [
            ("NaN", Some(Numeric::NaN)),
            ("  nan ", Some(Numeric::NaN)),
            ("+NaN", None),
            ("-NaN", None),
            ("Infinity", Some(Numeric::Infinity)),
            ("+inf", Some(Numeric::Infinity)),
            ("-INFINITY", Some(Numeric::NegInfinity)),
            ("-inf", Some(Numeric::NegInfinity)),
            ("infinit", None),
            ("1", None),
        ] {
            let got = Numeric::parse_special(text);
            assert_eq!(got.map(|v| v.to_string()), want.map(|v| v.to_string()), "{text:?}");
        }
    }

    #[test]
    fn storage_form_round_trips_and_reads_plain_decimals() {
        for v in [n("NaN"), n("Infinity"), n("-Infinity"), n("0"), n("-12.3400"), n("79228162514264337593543950335")] {
            let back = Numeric::deserialize(v.serialize());
            assert_eq!(back.to_string(), v.to_string());
        }
        let d = Decimal::from_str("-4.25").unwrap();
        assert_eq!(Numeric::deserialize(d.serialize()), Numeric::Finite(d));
    }

    #[test]
    fn equal_values_hash_alike() {
        use std::collections::hash_map::DefaultHasher;
        let h = |v: Numeric| {
            let mut s = DefaultHasher::new();
            v.hash(&mut s);
            s.finish()
        };
        assert_eq!(h(n("1.0")), h(n("1.000")));
        assert_eq!(h(n("NaN")), h(n("nan")));
        assert_ne!(h(n("Infinity")), h(n("-Infinity")));
    }
}
