//! `Datum`: one SQL value outside a column vector — constants, parameters,
//! the single values of scalar subqueries and the rows of catalog tables.
//! Must not: be used inside per-row loops of the executor (columns are).

use std::cmp::Ordering;

use super::{DataType, Numeric};

/// PostgreSQL interval: months, days and microseconds are kept apart, as PostgreSQL does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl Interval {
    /// Comparable total, with PostgreSQL's 30-day months and 24-hour days.
    pub fn total_micros(&self) -> i128 {
        const DAY: i128 = 86_400_000_000;
        self.months as i128 * 30 * DAY + self.days as i128 * DAY + self.micros as i128
    }
}

impl PartialOrd for Interval {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Interval {
    fn cmp(&self, other: &Self) -> Ordering {
        self.total_micros().cmp(&other.total_micros())
    }
}

/// One typed SQL value. The variant follows `DataType::physical()`; the exact
/// SQL type travels beside it (in the column or expression that holds it).
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    Null,
    Bool(bool),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Float32(f32),
    Float64(f64),
    Numeric(Numeric),
    /// text, varchar, bpchar, jsonb (UTF-8) and bytea (raw bytes).
    Bytes(Vec<u8>),
    Interval(Interval),
}

impl Datum {
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    pub fn text(s: impl Into<String>) -> Datum {
        Datum::Bytes(s.into().into_bytes())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Datum::Bytes(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Datum::Int16(v) => Some(*v as i64),
            Datum::Int32(v) => Some(*v as i64),
            Datum::Int64(v) => Some(*v),
            _ => None,
        }
    }

    /// Any number as a float (numeric rounded).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Datum::Float32(v) => Some(*v as f64),
            Datum::Float64(v) => Some(*v),
            Datum::Numeric(d) => Some(d.to_f64()),
            other => other.as_i64().map(|v| v as f64),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Datum::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Total order used by ORDER BY, DISTINCT and grouping on values of the
    /// same type: NULLs sort last, NaN sorts above every other float (as in PostgreSQL).
    pub fn total_cmp(&self, other: &Datum) -> Ordering {
        match (self, other) {
            (Datum::Null, Datum::Null) => Ordering::Equal,
            (Datum::Null, _) => Ordering::Greater,
            (_, Datum::Null) => Ordering::Less,
            (Datum::Bool(a), Datum::Bool(b)) => a.cmp(b),
            (Datum::Int16(a), Datum::Int16(b)) => a.cmp(b),
            (Datum::Int32(a), Datum::Int32(b)) => a.cmp(b),
            (Datum::Int64(a), Datum::Int64(b)) => a.cmp(b),
            (Datum::Float32(a), Datum::Float32(b)) => pg_float_cmp(*a as f64, *b as f64),
            (Datum::Float64(a), Datum::Float64(b)) => pg_float_cmp(*a, *b),
            (Datum::Numeric(a), Datum::Numeric(b)) => a.cmp(b),
            (Datum::Bytes(a), Datum::Bytes(b)) => a.cmp(b),
            (Datum::Interval(a), Datum::Interval(b)) => a.cmp(b),
            // Mixed integer widths can meet in catalog rows; compare as i64.
            (a, b) => match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => Ordering::Equal,
            },
        }
    }

    /// `total_cmp` for two values of type `ty`: arrays element by element
    /// (`array::compare_held`), whose held bytes do not order as values do.
    pub fn total_cmp_as(&self, other: &Datum, ty: DataType) -> Ordering {
        match (self, other, ty) {
            (Datum::Bytes(a), Datum::Bytes(b), DataType::Array(e)) => super::array::compare_held(a, b, e),
            _ => self.total_cmp(other),
        }
    }

    /// The natural type of a datum when nothing else says (catalog rows, tests).
    pub fn natural_type(&self) -> DataType {
        match self {
            Datum::Null => DataType::Unknown,
            Datum::Bool(_) => DataType::Bool,
            Datum::Int16(_) => DataType::Int16,
            Datum::Int32(_) => DataType::Int32,
            Datum::Int64(_) => DataType::Int64,
            Datum::Float32(_) => DataType::Float32,
            Datum::Float64(_) => DataType::Float64,
            Datum::Numeric(_) => DataType::Numeric,
            Datum::Bytes(_) => DataType::Text,
            Datum::Interval(_) => DataType::Interval,
        }
    }
}

/// PostgreSQL float order: -0 == +0, NaN equal to itself and above everything.
pub fn pg_float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}
