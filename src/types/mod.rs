//! SQL data types: their PostgreSQL identity (OID, name, typmod), their scalar
//! value (`Datum`) and their text/binary wire encodings.
//! Must not: know about plans, shards or sockets.

pub mod array;
pub mod binary;
pub mod record;
pub mod datetime;
pub mod datetime_format;
pub mod datum;
pub mod numeric;
pub mod text;
pub mod to_char;
pub mod zone;

pub use datum::{Datum, Interval};
pub use numeric::Numeric;
pub use zone::Zone;

/// A SQL type as the binder and executor see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    /// Arbitrary-precision numeric; values are `Numeric` (rust_decimal's 28 digits, NaN, ±Infinity).
    Numeric,
    Text,
    /// varchar(n); `None` is unbounded varchar.
    Varchar(Option<u32>),
    /// char(n) (bpchar); blank-padded to n.
    Bpchar(Option<u32>),
    Bytea,
    /// Days since 1970-01-01.
    Date,
    /// Nanoseconds since 1970-01-01 00:00:00 (no zone).
    Timestamp,
    /// Nanoseconds since 1970-01-01 00:00:00 UTC.
    TimestampTz,
    Interval,
    /// Stored as normalized JSON text.
    Jsonb,
    /// An array of the element type (any number of dimensions), held in
    /// PostgreSQL's binary array format (`types/array.rs`).
    Array(array::ArrayElem),
    /// An anonymous composite (`ROW(1, 'a')`), held in PostgreSQL's binary
    /// record format (`types/record.rs`).
    Record,
    /// PostgreSQL's `name` (a catalog identifier): text that reports OID 19.
    Name,
    /// PostgreSQL's one-byte `"char"` (pg_class.relkind): text that reports OID 18.
    Char,
    /// An object identifier (unsigned 32-bit), held as a bigint; it resolves
    /// and computes as bigint and reports OID 26.
    Oid,
    /// Untyped: a NULL literal or a string literal whose type is not yet decided.
    Unknown,
}

/// How values of a type lie in a column vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhysicalType {
    Bool,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Numeric,
    Bytes,
    Interval,
}

impl DataType {
    pub fn physical(self) -> PhysicalType {
        match self {
            DataType::Bool => PhysicalType::Bool,
            DataType::Int16 => PhysicalType::Int16,
            DataType::Int32 | DataType::Date => PhysicalType::Int32,
            DataType::Int64 | DataType::Timestamp | DataType::TimestampTz | DataType::Oid => {
                PhysicalType::Int64
            }
            DataType::Float32 => PhysicalType::Float32,
            DataType::Float64 => PhysicalType::Float64,
            DataType::Numeric => PhysicalType::Numeric,
            DataType::Text
            | DataType::Varchar(_)
            | DataType::Bpchar(_)
            | DataType::Bytea
            | DataType::Jsonb
            | DataType::Array(_)
            | DataType::Record
            | DataType::Name
            | DataType::Char
            | DataType::Unknown => PhysicalType::Bytes,
            DataType::Interval => PhysicalType::Interval,
        }
    }

    /// PostgreSQL type OID (pg_type.oid).
    pub fn oid(self) -> u32 {
        match self {
            DataType::Bool => 16,
            DataType::Bytea => 17,
            DataType::Int64 => 20,
            DataType::Int16 => 21,
            DataType::Int32 => 23,
            DataType::Text => 25,
            DataType::Float32 => 700,
            DataType::Float64 => 701,
            DataType::Unknown => 705,
            DataType::Bpchar(_) => 1042,
            DataType::Varchar(_) => 1043,
            DataType::Date => 1082,
            DataType::Timestamp => 1114,
            DataType::TimestampTz => 1184,
            DataType::Interval => 1186,
            DataType::Numeric => 1700,
            DataType::Jsonb => 3802,
            DataType::Array(e) => e.array_oid(),
            DataType::Record => 2249,
            DataType::Name => 19,
            DataType::Char => 18,
            DataType::Oid => 26,
        }
    }

    pub fn from_oid(oid: u32) -> Option<DataType> {
        Some(match oid {
            16 => DataType::Bool,
            17 => DataType::Bytea,
            20 => DataType::Int64,
            21 => DataType::Int16,
            23 => DataType::Int32,
            25 => DataType::Text,
            700 => DataType::Float32,
            701 => DataType::Float64,
            705 => DataType::Unknown,
            1042 => DataType::Bpchar(None),
            1043 => DataType::Varchar(None),
            1082 => DataType::Date,
            1114 => DataType::Timestamp,
            1184 => DataType::TimestampTz,
            1186 => DataType::Interval,
            1700 => DataType::Numeric,
            3802 => DataType::Jsonb,
            2249 => DataType::Record,
            19 => DataType::Name,
            18 => DataType::Char,
            26 => DataType::Oid,
            other => DataType::Array(array::ArrayElem::from_array_oid(other)?),
        })
    }

    /// pg_type.typlen: fixed byte width on the wire, -1 for variable length.
    pub fn type_len(self) -> i16 {
        match self {
            DataType::Bool => 1,
            DataType::Int16 => 2,
            DataType::Int32 | DataType::Float32 | DataType::Date | DataType::Oid => 4,
            DataType::Char => 1,
            DataType::Name => 64,
            DataType::Int64 | DataType::Float64 | DataType::Timestamp | DataType::TimestampTz => 8,
            DataType::Interval => 16,
            DataType::Unknown => -2,
            _ => -1,
        }
    }

    /// atttypmod as PostgreSQL reports it (-1 when none).
    pub fn type_modifier(self) -> i32 {
        match self {
            DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) => n as i32 + 4,
            _ => -1,
        }
    }

    /// The name `format_type` and error messages use.
    pub fn name(self) -> String {
        match self {
            DataType::Bool => "boolean".into(),
            DataType::Int16 => "smallint".into(),
            DataType::Int32 => "integer".into(),
            DataType::Int64 => "bigint".into(),
            DataType::Float32 => "real".into(),
            DataType::Float64 => "double precision".into(),
            DataType::Numeric => "numeric".into(),
            DataType::Text => "text".into(),
            DataType::Varchar(None) => "character varying".into(),
            DataType::Varchar(Some(n)) => format!("character varying({n})"),
            DataType::Bpchar(None) => "bpchar".into(),
            DataType::Bpchar(Some(n)) => format!("character({n})"),
            DataType::Bytea => "bytea".into(),
            DataType::Date => "date".into(),
            DataType::Timestamp => "timestamp without time zone".into(),
            DataType::TimestampTz => "timestamp with time zone".into(),
            DataType::Interval => "interval".into(),
            DataType::Jsonb => "jsonb".into(),
            DataType::Array(e) => format!("{}[]", e.data_type().name()),
            DataType::Record => "record".into(),
            DataType::Name => "name".into(),
            DataType::Char => "\"char\"".into(),
            DataType::Oid => "oid".into(),
            DataType::Unknown => "unknown".into(),
        }
    }

    /// The short name used in input-syntax errors ("invalid input syntax for type integer").
    pub fn input_name(self) -> &'static str {
        match self {
            DataType::Bool => "boolean",
            DataType::Int16 => "smallint",
            DataType::Int32 => "integer",
            DataType::Int64 => "bigint",
            DataType::Float32 => "real",
            DataType::Float64 => "double precision",
            DataType::Numeric => "numeric",
            DataType::Text | DataType::Unknown => "text",
            DataType::Varchar(_) => "character varying",
            DataType::Bpchar(_) => "character",
            DataType::Bytea => "bytea",
            DataType::Date => "date",
            DataType::Timestamp => "timestamp",
            DataType::TimestampTz => "timestamp with time zone",
            DataType::Interval => "interval",
            DataType::Jsonb => "json",
            DataType::Array(_) => "array",
            DataType::Record => "record",
            DataType::Name => "name",
            DataType::Char => "\"char\"",
            DataType::Oid => "oid",
        }
    }

    /// pg_type.typcategory.
    pub fn category(self) -> char {
        use DataType::*;
        match self {
            Bool => 'B',
            Int16 | Int32 | Int64 | Float32 | Float64 | Numeric | Oid => 'N',
            Text | Varchar(_) | Bpchar(_) | Name | Char => 'S',
            Bytea | Jsonb => 'U',
            Date | Timestamp | TimestampTz => 'D',
            Interval => 'T',
            Array(_) => 'A',
            Record => 'P',
            Unknown => 'X',
        }
    }

    /// pg_type.typispreferred.
    pub fn preferred(self) -> bool {
        matches!(
            self,
            DataType::Bool
                | DataType::Float64
                | DataType::Text
                | DataType::TimestampTz
                | DataType::Interval
        )
    }

    pub fn is_string(self) -> bool {
        matches!(
            self,
            DataType::Text
                | DataType::Varchar(_)
                | DataType::Bpchar(_)
                | DataType::Name
                | DataType::Char
                | DataType::Unknown
        )
    }

    pub fn is_integer(self) -> bool {
        matches!(self, DataType::Int16 | DataType::Int32 | DataType::Int64)
    }

    pub fn is_numeric_family(self) -> bool {
        matches!(
            self,
            DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Float32
                | DataType::Float64
                | DataType::Numeric
        )
    }

    /// Same type ignoring length modifiers (varchar(10) ~ varchar).
    /// Same type up to a length modifier (varchar(n) and varchar); arrays
    /// only of the same element type (`Array(e)` carries no modifier).
    pub fn same_family(self, other: DataType) -> bool {
        match (self, other) {
            (DataType::Array(a), DataType::Array(b)) => a == b,
            _ => std::mem::discriminant(&self) == std::mem::discriminant(&other),
        }
    }
}

/// Session settings the type encodings depend on.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatContext {
    /// The session TimeZone: timestamptz values are shown and read in it.
    pub zone: Zone,
    /// The session's extra_float_digits: 1 (default) prints the shortest exact
    /// form; 0 or less prints 15 + it significant digits (6 + it for real).
    pub extra_float_digits: i32,
}

impl Default for FormatContext {
    fn default() -> Self {
        FormatContext {
            zone: Zone::UTC,
            extra_float_digits: 1,
        }
    }
}

/// PostgreSQL's format_type(oid, typmod): the SQL name of a type OID with its
/// modifier (`character varying(10)`, `numeric(10,2)`, `integer[]`), `???` for
/// an unknown OID.
pub fn format_type(oid: i64, typmod: Option<i64>) -> String {
    let array_of = |elem: u32| format!("{}[]", format_type(elem as i64, None));
    let typmod = typmod.filter(|&m| m >= 0);
    let name = match oid {
        16 => "boolean",
        17 => "bytea",
        18 => "\"char\"",
        19 => "name",
        20 => "bigint",
        21 => "smallint",
        23 => "integer",
        25 => "text",
        26 => "oid",
        114 => "json",
        700 => "real",
        701 => "double precision",
        1042 => {
            return match typmod {
                Some(m) if m >= 4 => format!("character({})", m - 4),
                _ => "character".into(),
            }
        }
        1043 => {
            return match typmod {
                Some(m) if m >= 4 => format!("character varying({})", m - 4),
                _ => "character varying".into(),
            }
        }
        1082 => "date",
        1114 => "timestamp without time zone",
        1184 => "timestamp with time zone",
        1186 => "interval",
        1700 => {
            return match typmod {
                Some(m) if m >= 4 => format!("numeric({},{})", (m - 4) >> 16, (m - 4) & 0xffff),
                _ => "numeric".into(),
            }
        }
        2205 => "regclass",
        2206 => "regtype",
        3802 => "jsonb",
        1000 => return array_of(16),
        1001 => return array_of(17),
        1005 => return array_of(21),
        1007 => return array_of(23),
        1009 => return array_of(25),
        1014 => return array_of(1042),
        1015 => return array_of(1043),
        1016 => return array_of(20),
        1021 => return array_of(700),
        1022 => return array_of(701),
        1115 => return array_of(1114),
        1182 => return array_of(1082),
        1185 => return array_of(1184),
        1187 => return array_of(1186),
        1231 => return array_of(1700),
        3807 => return array_of(3802),
        _ => "???",
    };
    name.to_string()
}
