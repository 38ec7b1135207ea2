//! InfluxDB line protocol: bytes in, one column batch per measurement out.
//!
//! Owns the grammar and the error texts of InfluxDB 1.x (`models/points.go`):
//! measurement, tags, fields and timestamp; escapes; quoted strings that may
//! span newlines; comments, blank lines and the whitespace Go tolerates; one
//! trailing CR stripped; Go's number, boolean and timestamp syntax;
//! precision scaling with overflow checks; and the messages a client expects
//! (`unable to parse '<line>': missing tag value`). It also rejects what a
//! table cannot hold (a column named `time`, an unsigned value above
//! `i64::MAX`, a field whose type conflicts with what this parse or the
//! caller's [`ColumnTypes`] already fixed) so a caller gets only lines it can
//! store. Lines are parsed whole into a scratch first: a bad line is never
//! partly applied, and the good ones are kept (HTTP partial-write semantics)
//! unless [`ParseOptions::stop_at_first_error`] is set. Input may arrive in
//! chunks: an unterminated last line is left for the next call.
//!
//! Where this differs from Go on purpose: one escape rule for every name
//! (`\,` `\=` `\ ` `\\` stand for the byte, any other backslash is kept, so
//! `\\` is one backslash as in the InfluxDB docs' table); a newline outside a
//! quoted string always ends the line (Go lets a backslash escape it);
//! bytes after a string's closing quote are "invalid field format"; an
//! unescaped `=` anywhere in a tag value is "invalid tag format"; `Inf` is
//! "invalid number"; a NUL inside a name or value, and invalid UTF-8
//! anywhere in a line, reject the line (text columns cannot hold them).
//!
//! Must not: touch the catalog, shards, the WAL or any I/O. Knowledge of
//! existing tables comes only through [`ColumnTypes`]; what to do with the
//! batches (create tables, add columns, write) is the caller's business.
//!
//! Speed: steady-state lines do no hashing (the previous line's measurement
//! and the column slot of its i-th tag and field are tried first, matched in
//! place against the input), integers and timestamps are parsed eight digits
//! at a time, floats through Clinger's exact fast path, UTF-8 is validated
//! once per chunk, and validity bitmaps are filled lazily while a column has
//! no NULL. No `unsafe`.

mod batch;
mod number;
mod parser;
mod scan;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::exec::vector::{Bitmap, BytesColumn, ColumnData};

pub use batch::{FieldColumn, MeasurementBatch, TagColumn};

/// The unit of the timestamps in the input (`precision=` of the write APIs).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Precision {
    #[default]
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Minutes,
    Hours,
}

impl Precision {
    /// InfluxDB 1.x `/write?precision=`: `n`, `ns`, `u`, `us`, `ms`, `s`,
    /// `m`, `h`.
    pub fn parse_v1(s: &str) -> Option<Precision> {
        Some(match s {
            "n" | "ns" => Precision::Nanoseconds,
            "u" | "us" => Precision::Microseconds,
            "ms" => Precision::Milliseconds,
            "s" => Precision::Seconds,
            "m" => Precision::Minutes,
            "h" => Precision::Hours,
            _ => return None,
        })
    }

    /// InfluxDB 2.x `/api/v2/write?precision=`: `ns`, `us`, `ms`, `s`.
    pub fn parse_v2(s: &str) -> Option<Precision> {
        Some(match s {
            "ns" => Precision::Nanoseconds,
            "us" => Precision::Microseconds,
            "ms" => Precision::Milliseconds,
            "s" => Precision::Seconds,
            _ => return None,
        })
    }

    /// Nanoseconds per unit.
    pub fn nanos(self) -> i64 {
        match self {
            Precision::Nanoseconds => 1,
            Precision::Microseconds => 1_000,
            Precision::Milliseconds => 1_000_000,
            Precision::Seconds => 1_000_000_000,
            Precision::Minutes => 60_000_000_000,
            Precision::Hours => 3_600_000_000_000,
        }
    }
}

/// The type of a field value, as line protocol spells it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum FieldKind {
    Float,
    Integer,
    Unsigned,
    String,
    Boolean,
}

impl FieldKind {
    /// InfluxDB's name for the type, as used in conflict messages.
    pub fn name(self) -> &'static str {
        match self {
            FieldKind::Float => "float",
            FieldKind::Integer => "integer",
            FieldKind::Unsigned => "unsigned",
            FieldKind::String => "string",
            FieldKind::Boolean => "boolean",
        }
    }
}

/// What an existing table already says a column is, so conflicting lines
/// are rejected while parsing.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum KnownColumn {
    /// A tag: lines must use it as a tag.
    Tag,
    /// A field of this kind: lines must use it as a field of this kind.
    Field(FieldKind),
    /// A text column, which takes a tag or a string field alike; the first
    /// use in a parse fixes which (a batch cannot hold it as both).
    Text,
    /// A column no line protocol value can be written to, named by its type
    /// (e.g. `timestamptz`): any use of it rejects the line.
    Other(String),
}

/// The caller's knowledge of existing tables. Asked at most once per
/// (measurement, column) that a parse (one [`ParsedLines`]) meets and has
/// not yet created; the answer is cached.
pub trait ColumnTypes {
    fn lookup(&mut self, measurement: &str, column: &str) -> Option<KnownColumn>;
}

/// Nothing is known: every column takes the type of its first occurrence.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoKnownColumns;

impl ColumnTypes for NoKnownColumns {
    fn lookup(&mut self, _measurement: &str, _column: &str) -> Option<KnownColumn> {
        None
    }
}

impl<F: FnMut(&str, &str) -> Option<KnownColumn>> ColumnTypes for F {
    fn lookup(&mut self, measurement: &str, column: &str) -> Option<KnownColumn> {
        self(measurement, column)
    }
}

/// How to read one chunk of input.
#[derive(Clone, Debug)]
pub struct ParseOptions {
    pub precision: Precision,
    /// Time of lines without a timestamp, in ns (server time, already
    /// truncated to `precision` by the caller).
    pub default_time_ns: i64,
    /// Stop at the first bad line (it is recorded in `errors`; `consumed`
    /// is its start) instead of recording it and going on.
    pub stop_at_first_error: bool,
    /// 1-based number of the input's first line (physical lines: a newline
    /// inside a quoted string counts).
    pub first_line_number: u64,
    /// Absolute byte offset of the input's first byte.
    pub first_byte_offset: u64,
}

/// Errors kept in `ParsedLines::errors`; later ones are only counted in
/// `lines_failed` (a body of a million bad lines must not hold a million
/// messages).
pub const MAX_ERRORS_KEPT: usize = 1000;

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            precision: Precision::Nanoseconds,
            default_time_ns: 0,
            stop_at_first_error: false,
            first_line_number: 1,
            first_byte_offset: 0,
        }
    }
}

impl ParseOptions {
    /// Options to continue after `out`'s last call (same settings, line
    /// number and byte offset where it stopped).
    pub fn continuing(&self, out: &ParsedLines) -> ParseOptions {
        ParseOptions {
            first_line_number: out.next_line_number,
            first_byte_offset: out.next_byte_offset,
            ..self.clone()
        }
    }
}

/// The longest line text an error keeps.
pub const ERROR_TEXT_MAX: usize = 256;

/// One rejected line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// Line number where the rejected line starts.
    pub line: u64,
    /// Absolute byte offset of the problem.
    pub offset: u64,
    /// InfluxDB's reason text, e.g. `missing tag value`.
    pub message: String,
    /// The line (from its first non-blank byte, without the line end),
    /// cut to [`ERROR_TEXT_MAX`] bytes, invalid UTF-8 replaced.
    pub text: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unable to parse '{}': {}", self.text, self.message)
    }
}

impl std::error::Error for LineError {}

/// Everything parsed so far. Reuse one value across the chunks of one
/// stream: batches grow, counters add up, and `consumed`,
/// `next_line_number`, `next_byte_offset` and `stopped_at_error` describe the
/// last call.
#[derive(Debug, Default)]
pub struct ParsedLines {
    /// One batch per measurement, in order of first appearance.
    pub measurements: Vec<MeasurementBatch>,
    /// The rejected lines, the first [`MAX_ERRORS_KEPT`] of them.
    pub errors: Vec<LineError>,
    /// Rows appended.
    pub lines_ok: u64,
    /// Lines rejected (including those beyond `max_errors`).
    pub lines_failed: u64,
    /// Non-blank, non-comment lines seen (`lines_ok + lines_failed`).
    pub lines_seen: u64,
    /// Bytes of the last call's input consumed; the rest (an unterminated
    /// line when not final, or the bad line when stopping at an error) must
    /// be fed again, with more bytes after it.
    pub consumed: usize,
    /// Number of the first line not consumed.
    pub next_line_number: u64,
    /// Absolute offset of the first byte not consumed.
    pub next_byte_offset: u64,
    /// The last call stopped at a bad line (`stop_at_first_error`).
    pub stopped_at_error: bool,
    state: parser::State,
}

impl ParsedLines {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the batches (and the errors), leaving the counters and stream
    /// position; later lines start new batches.
    pub fn take_measurements(&mut self) -> Vec<MeasurementBatch> {
        self.state.forget_batches();
        std::mem::take(&mut self.measurements)
    }

    /// The batch of `name`, if any line of it was accepted.
    pub fn measurement(&self, name: &str) -> Option<&MeasurementBatch> {
        self.measurements.iter().find(|m| m.name == name)
    }
}

/// Parses `input` and appends its rows to `out` (see the module doc).
/// `is_final`: no more input follows, so an unterminated last line is a line;
/// otherwise it is left unconsumed for the next call.
pub fn parse_lines(
    input: &[u8],
    is_final: bool,
    options: &ParseOptions,
    known: &mut dyn ColumnTypes,
    out: &mut ParsedLines,
) {
    parser::run(input, is_final, options, known, out);
}

/// A NULL-filled column of `rows` values for a field of `kind`.
fn null_field_data(kind: FieldKind, rows: usize) -> ColumnData {
    match kind {
        FieldKind::Float => ColumnData::Float64(vec![0.0; rows]),
        FieldKind::Integer | FieldKind::Unsigned => ColumnData::Int64(vec![0; rows]),
        FieldKind::Boolean => ColumnData::Bool(vec![false; rows]),
        FieldKind::String => ColumnData::Bytes(null_bytes(rows)),
    }
}

fn null_bytes(rows: usize) -> BytesColumn {
    BytesColumn {
        offsets: vec![0; rows + 1],
        data: Vec::new(),
    }
}

fn null_validity(rows: usize) -> Bitmap {
    Bitmap::new_unset(rows)
}
