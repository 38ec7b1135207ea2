//! The line parser: finds each line, parses it whole into a scratch of
//! borrowed tokens (syntax, in InfluxDB 1.x's order of checks), validates it
//! against the batch and the caller's known columns (semantics), and only
//! then appends it. A failed line is resynchronised by structure
//! (`scan::find_line_end`), so line boundaries never depend on where a
//! chunk was cut.
//! Must not: apply any part of a line that fails, or call the caller's
//! `ColumnTypes` twice for one (measurement, column).

use std::borrow::Cow;

use hashbrown::HashMap;

use super::batch::{
    push_field_value, push_tag_value, truncate_field, truncate_tag, FieldValue, MeasurementBatch,
    PositionEntry, Slot,
};
use super::number::{parse_number, parse_timestamp_digits, Number, NumberError, EXACT_POW10};
use super::scan::{
    at_line_end, class, cr_ends_line, find_closing_quote, find_line_end, leading_digits_in_word,
    scan_name, scan_name_fast, scan_plain, skip_whitespace, take_digits, unescape_name_into,
    MEASUREMENT_STOP, NAME_STOP, POW10_U64, TIMESTAMP_END, VALUE_END,
};
use crate::exec::vector::ColumnData;

use super::{
    ColumnTypes, FieldKind, KnownColumn, LineError, ParseOptions, ParsedLines, ERROR_TEXT_MAX,
    MAX_ERRORS_KEPT,
};

/// Longest series key + field key InfluxDB accepts.
const MAX_KEY_LENGTH: usize = 65535;
/// Go's `MinNanoTime` and `MaxNanoTime`.
const MIN_NANO_TIME: i64 = i64::MIN + 2;
const MAX_NANO_TIME: i64 = i64::MAX - 1;

const MISSING_MEASUREMENT: &str = "missing measurement";
const MISSING_FIELDS: &str = "missing fields";
const MISSING_TAG_KEY: &str = "missing tag key";
const MISSING_TAG_VALUE: &str = "missing tag value";
const INVALID_TAG_FORMAT: &str = "invalid tag format";
const DUPLICATE_TAGS: &str = "duplicate tags";
const MISSING_FIELD_KEY: &str = "missing field key";
const MISSING_FIELD_VALUE: &str = "missing field value";
const INVALID_FIELD_FORMAT: &str = "invalid field format";
const UNBALANCED_QUOTES: &str = "unbalanced quotes";
const INVALID_NUMBER: &str = "invalid number";
const INVALID_FLOAT: &str = "invalid float";
const INVALID_BOOLEAN: &str = "invalid boolean";
const BAD_TIMESTAMP: &str = "bad timestamp";
const TIME_OUTSIDE_RANGE: &str = "time outside range -9223372036854775806 - 9223372036854775806";
const POINT_IS_INVALID: &str = "point is invalid";

/// Parser state kept across calls in `ParsedLines`.
#[derive(Debug, Default)]
pub(super) struct State {
    batch_by_name: HashMap<Box<[u8]>, usize>,
    /// Index of the batch of the last accepted line (may be stale: checked).
    last_batch: usize,
    /// `measurement \0 column` -> the caller's answer, for columns not yet
    /// created (a NUL cannot occur in a name).
    known_cache: HashMap<Box<[u8]>, Option<KnownColumn>>,
}

impl State {
    pub fn forget_batches(&mut self) {
        self.batch_by_name.clear();
        self.known_cache.clear();
        self.last_batch = usize::MAX;
    }

    /// Makes the name index and every batch consistent with what the caller
    /// may have done to `out.measurements` since the last call.
    fn prepare(&mut self, batches: &mut [MeasurementBatch]) {
        let in_step = self.batch_by_name.len() == batches.len()
            && batches
                .iter()
                .enumerate()
                .all(|(i, m)| self.batch_by_name.get(m.name.as_bytes()) == Some(&i));
        if !in_step {
            self.batch_by_name.clear();
            for (i, m) in batches.iter().enumerate() {
                self.batch_by_name
                    .entry(m.name.as_bytes().into())
                    .or_insert(i);
            }
            self.last_batch = usize::MAX;
        }
        for m in batches.iter_mut() {
            m.ensure_consistent();
        }
    }
}

/// A token as it appears in the input; `escaped`: it contains a backslash
/// and its value must be unescaped.
#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    raw: &'a [u8],
    escaped: bool,
}

impl<'a> Tok<'a> {
    /// The token's value: the raw bytes, or unescaped into `buf`.
    #[inline]
    fn value<'b>(&self, buf: &'b mut Vec<u8>) -> &'b [u8]
    where
        'a: 'b,
    {
        if self.escaped {
            buf.clear();
            unescape_name_into(self.raw, buf);
            buf
        } else {
            self.raw
        }
    }

    fn value_string(&self) -> String {
        let mut buf = Vec::new();
        let v = self.value(&mut buf);
        String::from_utf8_lossy(v).into_owned()
    }
}

struct TagTok<'a> {
    key: Tok<'a>,
    value: Tok<'a>,
    /// Where the value starts in the input.
    value_at: usize,
    at: usize,
    slot: Slot,
}

struct FieldTok<'a> {
    key: Tok<'a>,
    value: FieldValue<'a>,
    at: usize,
    slot: Slot,
}

/// A line whose syntax is valid.
struct Line<'a> {
    measurement: Tok<'a>,
    measurement_at: usize,
    batch: Option<usize>,
    content_end: usize,
    next: usize,
    terminated: bool,
    time: i64,
    newlines: u64,
    /// Every tag and field matched the position caches.
    cache_hit: bool,
    /// A value's kind differs from its column's, or an unsigned value is
    /// too large: run the full checks.
    needs_checks: bool,
}

/// A line `fast_line` appended.
struct FastLine {
    content_end: usize,
    next: usize,
    time: i64,
    newlines: u64,
    /// Some written column keeps an explicit validity bitmap.
    validity_due: bool,
}

/// Why a line was refused, and where.
struct Fail {
    at: usize,
    message: Cow<'static, str>,
}

#[inline]
fn fail(at: usize, message: &'static str) -> Fail {
    Fail {
        at,
        message: Cow::Borrowed(message),
    }
}

fn fail_owned(at: usize, message: String) -> Fail {
    Fail {
        at,
        message: Cow::Owned(message),
    }
}

enum Outcome {
    /// The line runs past the input and more may follow.
    Incomplete,
    Done {
        next: usize,
        newlines: u64,
        error: Option<(Fail, usize)>, // and the line's content end
    },
}

struct Parser<'a, 'k> {
    b: &'a [u8],
    is_final: bool,
    options: &'a ParseOptions,
    known: &'k mut dyn ColumnTypes,
    tags: Vec<TagTok<'a>>,
    fields: Vec<FieldTok<'a>>,
    /// Columns of this line found by hash rather than by position.
    tag_misses: Vec<u32>,
    field_misses: Vec<u32>,
    key_buf: Vec<u8>,
    other_buf: Vec<u8>,
    /// First invalid UTF-8 byte at or after `checked_from`, or `usize::MAX`.
    utf8_bad: usize,
    /// First NUL byte at or after `checked_from`, or `usize::MAX`.
    nul_at: usize,
    checked_from: usize,
}

#[cfg(test)]
thread_local! {
    /// Tests turn the fast path off to compare it with the general path.
    pub(super) static FAST_PATH: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

#[inline(always)]
fn fast_path_enabled() -> bool {
    #[cfg(test)]
    return FAST_PATH.with(|f| f.get());
    #[cfg(not(test))]
    true
}

/// Parses `input` into `out` (see `parse_lines`).
pub(super) fn run(
    input: &[u8],
    is_final: bool,
    options: &ParseOptions,
    known: &mut dyn ColumnTypes,
    out: &mut ParsedLines,
) {
    out.state.prepare(&mut out.measurements);
    out.consumed = 0;
    out.stopped_at_error = false;
    let b = input;
    let mut parser = Parser {
        b,
        is_final,
        options,
        known,
        tags: Vec::new(),
        fields: Vec::new(),
        tag_misses: Vec::new(),
        field_misses: Vec::new(),
        key_buf: Vec::new(),
        other_buf: Vec::new(),
        utf8_bad: usize::MAX,
        nul_at: usize::MAX,
        checked_from: 0,
    };
    parser.recheck_bytes(0);
    let mut pos = 0usize;
    let mut line_no = options.first_line_number;
    loop {
        let s = skip_whitespace(b, pos);
        let Some(&c) = b.get(s) else {
            if is_final {
                pos = b.len();
            }
            break;
        };
        match c {
            b'\n' => {
                pos = s + 1;
                line_no += 1;
                continue;
            }
            b'\r' if cr_ends_line(b, s) => {
                if s + 1 >= b.len() {
                    if is_final {
                        pos = b.len();
                    }
                    break;
                }
                pos = s + 2;
                line_no += 1;
                continue;
            }
            b'#' => match memchr::memchr(b'\n', &b[s..]) {
                Some(k) => {
                    pos = s + k + 1;
                    line_no += 1;
                    continue;
                }
                None => {
                    if is_final {
                        pos = b.len();
                    }
                    break;
                }
            },
            _ => {}
        }
        if let Some(m) = out
            .measurements
            .get_mut(out.state.last_batch)
            .filter(|_| fast_path_enabled())
        {
            if let Some((next, newlines)) = parser.fast_line(m, s, line_no) {
                out.lines_seen += 1;
                out.lines_ok += 1;
                pos = next;
                line_no += 1 + newlines;
                continue;
            }
        }
        match parser.line(&mut out.state, &mut out.measurements, s, line_no) {
            Outcome::Incomplete => break,
            Outcome::Done {
                next,
                newlines,
                error,
            } => {
                out.lines_seen += 1;
                match error {
                    None => out.lines_ok += 1,
                    Some((f, content_end)) => {
                        out.lines_failed += 1;
                        if out.errors.len() < MAX_ERRORS_KEPT || options.stop_at_first_error {
                            out.errors
                                .push(line_error(b, s, content_end, f, line_no, options));
                        }
                        if options.stop_at_first_error {
                            out.stopped_at_error = true;
                            break;
                        }
                    }
                }
                pos = next;
                line_no += 1 + newlines;
            }
        }
    }
    out.consumed = pos;
    out.next_line_number = line_no;
    out.next_byte_offset = options.first_byte_offset + pos as u64;
    for m in &mut out.measurements {
        m.sync_validity();
    }
}

fn line_error(
    b: &[u8],
    start: usize,
    content_end: usize,
    f: Fail,
    line: u64,
    options: &ParseOptions,
) -> LineError {
    let mut cut = content_end.min(start + ERROR_TEXT_MAX);
    if cut < content_end {
        // Back off to a character boundary.
        let floor = cut.saturating_sub(3).max(start);
        while cut > floor && b.get(cut).is_some_and(|&c| c & 0xC0 == 0x80) {
            cut -= 1;
        }
    }
    LineError {
        line,
        offset: options.first_byte_offset + f.at as u64,
        message: f.message.into_owned(),
        text: String::from_utf8_lossy(&b[start..cut]).into_owned(),
    }
}

#[inline]
fn value_ends(b: &[u8], i: usize) -> bool {
    match b.get(i) {
        None => true,
        Some(&c) => class(c) & VALUE_END != 0 && (c != b'\r' || cr_ends_line(b, i)),
    }
}

fn parse_bool(tok: &[u8]) -> Option<bool> {
    match tok {
        b"t" | b"T" | b"true" | b"True" | b"TRUE" => Some(true),
        b"f" | b"F" | b"false" | b"False" | b"FALSE" => Some(false),
        _ => None,
    }
}

/// A numeric field value at `p` (first byte a digit, `-` or `.`): the
/// common shapes (`58i`, `42u`, `0.123`, `17`) directly, anything else
/// through Go's full classification. Returns the value and its end.
#[inline]
fn parse_number_at(b: &[u8], p: usize) -> Result<(FieldValue<'static>, usize), Fail> {
    let negative = b.get(p) == Some(&b'-');
    let digits_start = p + usize::from(negative);
    let mut v: u64 = 0;
    let q = take_digits(b, digits_start, &mut v);
    let int_digits = q - digits_start;
    if int_digits <= 15 {
        match b.get(q) {
            Some(b'i') if int_digits > 0 && value_ends(b, q + 1) => {
                let x = v as i64;
                return Ok((FieldValue::Integer(if negative { -x } else { x }), q + 1));
            }
            Some(b'u') if int_digits > 0 && !negative && value_ends(b, q + 1) => {
                return Ok((FieldValue::Unsigned(v), q + 1));
            }
            Some(b'.') => {
                let frac_start = q + 1;
                let mut m = v;
                let e = take_digits(b, frac_start, &mut m);
                let frac_digits = e - frac_start;
                let all = int_digits + frac_digits;
                if (1..=15).contains(&all) && value_ends(b, e) {
                    // Both exact (< 2^53, 10^k with k <= 15): one rounding.
                    let x = m as f64 / EXACT_POW10[frac_digits];
                    return Ok((FieldValue::Float(if negative { -x } else { x }), e));
                }
            }
            _ if int_digits > 0 && value_ends(b, q) => {
                let x = v as f64;
                return Ok((FieldValue::Float(if negative { -x } else { x }), q));
            }
            _ => {}
        }
    }
    let end = scan_plain(b, p, VALUE_END);
    let tok = &b[p..end];
    match parse_number(tok) {
        Ok(Number::Float(x)) => Ok((FieldValue::Float(x), end)),
        Ok(Number::Integer(x)) => Ok((FieldValue::Integer(x), end)),
        Ok(Number::Unsigned(x)) => Ok((FieldValue::Unsigned(x), end)),
        Err(e) => Err(match e {
            NumberError::Invalid => fail(p, INVALID_NUMBER),
            NumberError::InvalidFloat => fail(p, INVALID_FLOAT),
            NumberError::IntegerRange => fail_owned(
                p,
                format!(
                    "unable to parse integer {}: value out of range",
                    String::from_utf8_lossy(&tok[..tok.len().saturating_sub(1)])
                ),
            ),
            NumberError::UnsignedRange => fail_owned(
                p,
                format!(
                    "unable to parse unsigned {}: value out of range",
                    String::from_utf8_lossy(&tok[..tok.len().saturating_sub(1)])
                ),
            ),
        }),
    }
}

/// A numeric field value whose column kind is known: integers of up to 7
/// digits and floats of up to 7+7 digits straight from two words, anything
/// else through `parse_number_at`. None: not a valid number.
#[inline(always)]
fn fast_number(b: &[u8], p: usize, kind: FieldKind) -> Option<(FieldValue<'static>, usize)> {
    let negative = b.get(p) == Some(&b'-');
    let q = p + usize::from(negative);
    if let Some((n, v)) = leading_digits_in_word(b, q) {
        if n < 8 {
            let after = q + n;
            match (kind, b.get(after)) {
                (FieldKind::Integer, Some(b'i')) if n > 0 && value_ends(b, after + 1) => {
                    let x = v as i64;
                    return Some((
                        FieldValue::Integer(if negative { -x } else { x }),
                        after + 1,
                    ));
                }
                (FieldKind::Float, Some(b'.')) => {
                    if let Some((f, fv)) = leading_digits_in_word(b, after + 1) {
                        let end = after + 1 + f;
                        if f < 8 && n + f > 0 && value_ends(b, end) {
                            let m = v * POW10_U64[f] + fv;
                            let x = m as f64 / EXACT_POW10[f];
                            return Some((FieldValue::Float(if negative { -x } else { x }), end));
                        }
                    }
                }
                (FieldKind::Float, _) if n > 0 && value_ends(b, after) => {
                    let x = v as f64;
                    return Some((FieldValue::Float(if negative { -x } else { x }), after));
                }
                _ => {}
            }
        }
    }
    parse_number_at(b, p).ok()
}

/// Byte offset of `part` (a subslice of `whole`) in `whole`.
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

impl<'a> Parser<'a, '_> {
    /// The steady state: a line with the previous accepted line's
    /// measurement and, position by position, its tag and field keys, every
    /// value valid and of its column's kind. It is appended straight into
    /// the columns. Anything else (a miss, any error, a line that is not
    /// complete yet) undoes what it appended and returns None, and the
    /// general path parses the line: that path alone decides about lines
    /// this one declines, so both give the same result.
    #[inline]
    fn fast_line(
        &self,
        m: &mut MeasurementBatch,
        start: usize,
        line_no: u64,
    ) -> Option<(usize, u64)> {
        let rows = m.rows;
        let mut tags_written = 0;
        let mut fields_written = 0;
        let Some(line) = self.fast_line_values(m, start, &mut tags_written, &mut fields_written)
        else {
            let MeasurementBatch {
                tags,
                fields,
                index,
                ..
            } = m;
            for e in index.tag_pos.iter().take(tags_written).flatten() {
                if let Some(col) = tags.get_mut(e.slot as usize) {
                    truncate_tag(col, rows);
                }
            }
            for e in index.field_pos.iter().take(fields_written).flatten() {
                if let Some(col) = fields.get_mut(e.slot as usize) {
                    truncate_field(col, rows);
                }
            }
            return None;
        };
        if line.validity_due {
            let MeasurementBatch {
                tags,
                fields,
                index,
                ..
            } = m;
            for e in index.tag_pos.iter().take(tags_written).flatten() {
                if !index.tag_meta[e.slot as usize].lazy_valid {
                    tags[e.slot as usize].validity.push(true);
                }
            }
            for e in index.field_pos.iter().take(fields_written).flatten() {
                if !index.field_meta[e.slot as usize].lazy_valid {
                    fields[e.slot as usize].validity.push(true);
                }
            }
        }
        m.finish_row(line.time, line_no, tags_written + fields_written);
        m.index.text_bound += line.content_end - start;
        Some((line.next, line.newlines))
    }

    /// The parse-and-append part of `fast_line`: None as soon as the line
    /// is not a steady-state line, with `tags_written` and `fields_written`
    /// saying how many leading positions it appended to.
    #[inline(always)]
    fn fast_line_values(
        &self,
        m: &mut MeasurementBatch,
        start: usize,
        tags_written: &mut usize,
        fields_written: &mut usize,
    ) -> Option<FastLine> {
        let b = self.b;
        let MeasurementBatch {
            tags,
            fields,
            index,
            ..
        } = m;
        let name = index.name_matcher.as_ref()?;
        if !name.matches(b, start) {
            return None;
        }
        let mut p = start + name.len();
        let validity_due = index.non_lazy > 0;
        // Tags.
        if b.get(p) == Some(&b',') {
            p += 1;
            loop {
                let e = index.tag_pos.get(*tags_written)?.as_ref()?;
                if !e.matcher.matches(b, p) {
                    return None;
                }
                p += e.matcher.len();
                let (end, escaped) = scan_name_fast(b, p);
                let stop = b.get(end).copied();
                if end == p || !matches!(stop, Some(b',' | b' ')) {
                    return None;
                }
                push_tag_value(tags.get_mut(e.slot as usize)?, b, p, end - p, escaped);
                *tags_written += 1;
                p = end + 1;
                if stop == Some(b' ') {
                    break;
                }
            }
        } else if b.get(p) == Some(&b' ') {
            p += 1;
        } else {
            return None;
        }
        // `p` is just past the space that ends the key section.
        let key_length = p - 1 - start;
        // Fields.
        p = skip_whitespace(b, p);
        let mut longest_field_key = 0;
        let mut newlines = 0u64;
        loop {
            let e = index.field_pos.get(*fields_written)?.as_ref()?;
            if !e.matcher.matches(b, p) {
                return None;
            }
            longest_field_key = longest_field_key.max(e.matcher.len() - 1);
            p += e.matcher.len();
            let col = fields.get_mut(e.slot as usize)?;
            let first = b.get(p).copied().unwrap_or(b'\n');
            if first.is_ascii_digit() || first == b'-' || first == b'.' {
                // Numbers go straight into their vector.
                let (v, end) = fast_number(b, p, e.kind)?;
                if v.kind() != e.kind {
                    return None;
                }
                match (&mut col.data, v) {
                    (ColumnData::Int64(d), FieldValue::Integer(x)) => d.push(x),
                    (ColumnData::Float64(d), FieldValue::Float(x)) => d.push(x),
                    (ColumnData::Int64(d), FieldValue::Unsigned(x)) => {
                        d.push(i64::try_from(x).ok()?)
                    }
                    _ => return None,
                }
                p = end;
            } else {
                let value = match first {
                    b'"' => {
                        let close = find_closing_quote(b, p + 1)?;
                        let raw = &b[p + 1..close];
                        let escaped = memchr::memchr(b'\\', raw).is_some();
                        if memchr::memchr(b'\n', raw).is_some() {
                            newlines += memchr::memchr_iter(b'\n', raw).count() as u64;
                        }
                        p = close + 1;
                        FieldValue::Str { raw, escaped }
                    }
                    b't' | b'T' | b'f' | b'F' => {
                        let end = scan_plain(b, p, VALUE_END);
                        let v = parse_bool(&b[p..end])?;
                        p = end;
                        FieldValue::Boolean(v)
                    }
                    _ => return None,
                };
                if value.kind() != e.kind || !push_field_value(col, &value) {
                    return None;
                }
            }
            *fields_written += 1;
            match b.get(p) {
                Some(b',') => p += 1,
                Some(b' ') => break,
                _ if at_line_end(b, p) => break,
                _ => return None,
            }
        }
        if key_length + 4 + longest_field_key > MAX_KEY_LENGTH {
            return None;
        }
        // Timestamp.
        let mut time = self.options.default_time_ns;
        if b.get(p) == Some(&b' ') {
            p = skip_whitespace(b, p);
            if !at_line_end(b, p) {
                let (ts, end) = self.timestamp(p).ok()?;
                time = ts;
                p = end;
                while b.get(p) == Some(&b' ') {
                    p += 1;
                }
                if !at_line_end(b, p) {
                    return None;
                }
            }
        }
        let next = match b.get(p) {
            Some(b'\n') => p + 1,
            Some(b'\r') if b.get(p + 1) == Some(&b'\n') => p + 2,
            Some(_) if self.is_final => p + 1,
            None if self.is_final => p,
            _ => return None,
        };
        if self.utf8_bad < p
            || self.nul_at < p
            || index.text_bound + (p - start) > u32::MAX as usize
        {
            return None;
        }
        Some(FastLine {
            content_end: p,
            next,
            time,
            newlines,
            validity_due,
        })
    }

    /// Finds the first invalid UTF-8 byte and the first NUL at or after `from`.
    fn recheck_bytes(&mut self, from: usize) {
        let rest = self.b.get(from..).unwrap_or(&[]);
        self.utf8_bad = match std::str::from_utf8(rest) {
            Ok(_) => usize::MAX,
            Err(e) => from + e.valid_up_to(),
        };
        self.nul_at = memchr::memchr(0, rest).map_or(usize::MAX, |k| from + k);
        self.checked_from = from;
    }

    /// Parses, checks and appends the line whose first non-blank byte is `s`.
    fn line(
        &mut self,
        state: &mut State,
        batches: &mut Vec<MeasurementBatch>,
        s: usize,
        line_no: u64,
    ) -> Outcome {
        if (self.utf8_bad < s || self.nul_at < s) && self.checked_from < s {
            self.recheck_bytes(s);
        }
        match self.syntax(state, batches, s) {
            Ok(line) => {
                if !line.terminated && !self.is_final {
                    return Outcome::Incomplete;
                }
                let checked = self
                    .check_bytes(&line)
                    .and_then(|()| self.check_and_append(state, batches, &line, line_no));
                match checked {
                    Ok(()) => Outcome::Done {
                        next: line.next,
                        newlines: line.newlines,
                        error: None,
                    },
                    Err(f) => Outcome::Done {
                        next: line.next,
                        newlines: line.newlines,
                        error: Some((f, line.content_end)),
                    },
                }
            }
            Err(f) => {
                let b = self.b;
                let (content_end, next) = match find_line_end(b, s) {
                    Some(nl) => (nl, nl + 1),
                    None if !self.is_final => return Outcome::Incomplete,
                    None => (b.len(), b.len()),
                };
                let content_end = if content_end > s && b[content_end - 1] == b'\r' {
                    content_end - 1
                } else {
                    content_end
                };
                let newlines = memchr::memchr_iter(b'\n', &b[s..content_end]).count() as u64;
                let f = if self.utf8_bad < content_end {
                    self.utf8_fail()
                } else {
                    f
                };
                Outcome::Done {
                    next,
                    newlines,
                    error: Some((f, content_end)),
                }
            }
        }
    }

    fn utf8_fail(&self) -> Fail {
        let b = self.b;
        let at = self.utf8_bad;
        let rest = b.get(at..).unwrap_or(&[]);
        let len = match std::str::from_utf8(rest) {
            Err(e) => e.error_len().unwrap_or(rest.len().min(4)),
            Ok(_) => 1,
        };
        let bytes: Vec<String> = rest
            .iter()
            .take(len.max(1))
            .map(|c| format!("0x{c:02x}"))
            .collect();
        fail_owned(
            at,
            format!(
                "invalid byte sequence for encoding \"UTF8\": {}",
                bytes.join(" ")
            ),
        )
    }

    /// Invalid UTF-8 anywhere in the line, or a NUL inside a name or value
    /// (text columns cannot hold it; between sections it is whitespace).
    fn check_bytes(&self, line: &Line<'a>) -> Result<(), Fail> {
        if self.utf8_bad < line.content_end {
            return Err(self.utf8_fail());
        }
        if self.nul_at < line.content_end {
            let b = self.b;
            let nul_in = |raw: &[u8]| memchr::memchr(0, raw).map(|k| offset_in(b, raw) + k);
            let mut found = nul_in(line.measurement.raw);
            for t in &self.tags {
                found = found
                    .or_else(|| nul_in(t.key.raw))
                    .or_else(|| nul_in(t.value.raw));
            }
            for f in &self.fields {
                found = found.or_else(|| nul_in(f.key.raw));
                if let FieldValue::Str { raw, .. } = f.value {
                    found = found.or_else(|| nul_in(raw));
                }
            }
            if let Some(at) = found {
                return Err(fail(
                    at,
                    "invalid byte sequence for encoding \"UTF8\": 0x00",
                ));
            }
        }
        Ok(())
    }

    /// The syntax of one line, in Go's order of checks, into `self.tags` and
    /// `self.fields`. Resolves columns against the batch (without creating
    /// any) as it goes: through the position caches when the line has the
    /// previous one's shape, by hash otherwise.
    fn syntax(
        &mut self,
        state: &State,
        batches: &[MeasurementBatch],
        start: usize,
    ) -> Result<Line<'a>, Fail> {
        let b = self.b;
        self.tags.clear();
        self.fields.clear();
        self.tag_misses.clear();
        self.field_misses.clear();
        let mut cache_hit = true;
        let mut needs_checks = false;

        // Measurement: the last line's, matched in place, or scanned.
        let mut p;
        let measurement;
        let mut batch: Option<&MeasurementBatch> = None;
        let mut batch_index = None;
        let last = batches.get(state.last_batch);
        let hit = last
            .and_then(|m| m.index.name_matcher.as_ref().map(|k| (m, k)))
            .and_then(|(m, k)| {
                (k.matches(b, start) && matches!(b.get(start + k.len()), Some(b',' | b' ')))
                    .then_some((m, k.len()))
            });
        if let Some((m, n)) = hit {
            measurement = Tok {
                raw: &b[start..start + n],
                escaped: false,
            };
            p = start + n;
            batch = Some(m);
            batch_index = Some(state.last_batch);
        } else {
            if b.get(start) == Some(&b',') {
                return Err(fail(start, MISSING_MEASUREMENT));
            }
            let (end, escaped) = scan_name(b, start, MEASUREMENT_STOP);
            measurement = Tok {
                raw: &b[start..end],
                escaped,
            };
            p = end;
            cache_hit = false;
            if let Some(&i) = state
                .batch_by_name
                .get(measurement.value(&mut self.key_buf))
            {
                batch = batches.get(i);
                batch_index = batch.map(|_| i);
            }
        }
        let no_positions: &[Option<PositionEntry>] = &[];
        let (tag_pos, field_pos) = batch.map_or((no_positions, no_positions), |m| {
            (&m.index.tag_pos[..], &m.index.field_pos[..])
        });

        // Tags.
        let mut duplicate_at = None;
        let mut unmatched_tags = 0usize;
        match b.get(p) {
            Some(b',') => {
                p += 1;
                loop {
                    let key_at = p;
                    let position = self.tags.len();
                    let cached = match tag_pos.get(position) {
                        Some(Some(e)) if e.matcher.matches(b, p) => Some(e),
                        _ => None,
                    };
                    let (key, slot) = if let Some(e) = cached {
                        // Entries of one cache are distinct columns: only an
                        // earlier miss can repeat this one.
                        if !self.tag_misses.is_empty() && self.tag_misses.contains(&e.slot) {
                            duplicate_at.get_or_insert(key_at);
                        }
                        p += e.matcher.len();
                        (
                            Tok {
                                raw: &b[key_at..p - 1],
                                escaped: false,
                            },
                            Slot::Tag(e.slot),
                        )
                    } else {
                        cache_hit = false;
                        let (end, escaped) = scan_name(b, p, NAME_STOP);
                        if end == p {
                            return Err(fail(p, MISSING_TAG_KEY));
                        }
                        if b.get(end) != Some(&b'=') {
                            return Err(fail(end, MISSING_TAG_VALUE));
                        }
                        let key = Tok {
                            raw: &b[p..end],
                            escaped,
                        };
                        p = end + 1;
                        let slot =
                            batch.map_or(Slot::New, |m| m.lookup(key.value(&mut self.key_buf)));
                        match slot {
                            Slot::Tag(s) => {
                                if self.tags.iter().any(|t| t.slot == slot) {
                                    duplicate_at.get_or_insert(key_at);
                                }
                                self.tag_misses.push(s);
                            }
                            _ => unmatched_tags += 1,
                        }
                        (key, slot)
                    };
                    let (end, escaped) = scan_name(b, p, NAME_STOP);
                    let stop = b.get(end).copied();
                    if stop == Some(b'=') {
                        return Err(fail(end, INVALID_TAG_FORMAT));
                    }
                    if end == p {
                        return Err(fail(p, MISSING_TAG_VALUE));
                    }
                    self.tags.push(TagTok {
                        key,
                        value: Tok {
                            raw: &b[p..end],
                            escaped,
                        },
                        value_at: p,
                        at: key_at,
                        slot,
                    });
                    p = end;
                    match stop {
                        Some(b',') => p += 1,
                        Some(b' ') => break,
                        _ => return Err(fail(end, MISSING_FIELDS)),
                    }
                }
            }
            Some(b' ') => {}
            _ => return Err(fail(p, MISSING_FIELDS)),
        }
        if let Some(at) = duplicate_at {
            return Err(fail(at, DUPLICATE_TAGS));
        }
        if unmatched_tags >= 2 {
            self.check_unmatched_tag_duplicates()?;
        }
        let key_length = p - start;
        if key_length > MAX_KEY_LENGTH {
            return Err(fail_owned(
                start,
                format!("max key length exceeded: {key_length} > {MAX_KEY_LENGTH}"),
            ));
        }

        // Fields.
        p = skip_whitespace(b, p);
        if at_line_end(b, p) {
            return Err(fail(p, MISSING_FIELDS));
        }
        let mut key_too_long: Option<(usize, usize)> = None;
        let mut unmatched_fields = 0usize;
        let mut newlines = 0u64;
        let mut position = 0usize;
        loop {
            let key_at = p;
            let cached = match field_pos.get(position) {
                Some(Some(e)) if e.matcher.matches(b, p) => Some(e),
                _ => None,
            };
            let (key, slot, known_kind) = if let Some(e) = cached {
                p += e.matcher.len();
                let key = Tok {
                    raw: &b[key_at..p - 1],
                    escaped: false,
                };
                (key, Slot::Field(e.slot), Some(e.kind))
            } else {
                cache_hit = false;
                let (end, escaped) = scan_name(b, p, NAME_STOP);
                if b.get(end) != Some(&b'=') {
                    return Err(fail(end, INVALID_FIELD_FORMAT));
                }
                if end == p {
                    return Err(fail(p, MISSING_FIELD_KEY));
                }
                let key = Tok {
                    raw: &b[p..end],
                    escaped,
                };
                p = end + 1;
                let slot = batch.map_or(Slot::New, |m| m.lookup(key.value(&mut self.key_buf)));
                let kind = match (slot, batch) {
                    (Slot::Field(s), Some(m)) => m.fields.get(s as usize).map(|f| f.kind),
                    _ => None,
                };
                (key, slot, kind)
            };
            let series_key = key_length + 4 + key.raw.len();
            if series_key > MAX_KEY_LENGTH && key_too_long.is_none() {
                key_too_long = Some((series_key, key_at));
            }

            let value = match b.get(p) {
                Some(&c) if c.is_ascii_digit() || c == b'-' || c == b'.' => {
                    let (v, end) = parse_number_at(b, p)?;
                    p = end;
                    if let FieldValue::Unsigned(u) = v {
                        needs_checks |= u > i64::MAX as u64;
                    }
                    v
                }
                Some(b'"') => {
                    let Some(close) = find_closing_quote(b, p + 1) else {
                        return Err(fail(p, UNBALANCED_QUOTES));
                    };
                    let raw = &b[p + 1..close];
                    let escaped = memchr::memchr(b'\\', raw).is_some();
                    if memchr::memchr(b'\n', raw).is_some() {
                        newlines += memchr::memchr_iter(b'\n', raw).count() as u64;
                    }
                    p = close + 1;
                    FieldValue::Str { raw, escaped }
                }
                None | Some(b'\n' | b',' | b' ') => return Err(fail(p, MISSING_FIELD_VALUE)),
                Some(b'\r') if cr_ends_line(b, p) => return Err(fail(p, MISSING_FIELD_VALUE)),
                // NaN and Inf are numbers InfluxDB does not store.
                Some(b'N' | b'n' | b'I' | b'i') => return Err(fail(p, INVALID_NUMBER)),
                Some(_) => {
                    let end = scan_plain(b, p, VALUE_END);
                    let Some(v) = parse_bool(&b[p..end]) else {
                        return Err(fail(p, INVALID_BOOLEAN));
                    };
                    p = end;
                    FieldValue::Boolean(v)
                }
            };
            if let Some(kind) = known_kind {
                needs_checks |= kind != value.kind();
            }

            match slot {
                Slot::Field(s) if cached.is_some() => {
                    // Entries of one cache are distinct: only an earlier miss
                    // can repeat this column.
                    if !self.field_misses.is_empty() && self.field_misses.contains(&s) {
                        self.replace_field(slot, value, key_at);
                    } else {
                        self.fields.push(FieldTok {
                            key,
                            value,
                            at: key_at,
                            slot,
                        });
                    }
                }
                Slot::Field(s) => {
                    if self.fields.iter().any(|f| f.slot == slot) {
                        // A repeated field key: the last value wins.
                        self.replace_field(slot, value, key_at);
                    } else {
                        self.fields.push(FieldTok {
                            key,
                            value,
                            at: key_at,
                            slot,
                        });
                    }
                    self.field_misses.push(s);
                }
                _ => {
                    unmatched_fields += 1;
                    self.fields.push(FieldTok {
                        key,
                        value,
                        at: key_at,
                        slot,
                    });
                }
            }
            position += 1;

            match b.get(p) {
                Some(b',') => p += 1,
                Some(b' ') => break,
                _ if at_line_end(b, p) => break,
                _ => return Err(fail(p, INVALID_FIELD_FORMAT)),
            }
        }
        if unmatched_fields >= 2 {
            self.merge_unmatched_field_duplicates();
        }
        if let Some((size, at)) = key_too_long {
            return Err(fail_owned(
                at,
                format!("max key length exceeded: {size} > {MAX_KEY_LENGTH}"),
            ));
        }

        // Timestamp.
        let mut time = self.options.default_time_ns;
        if b.get(p) == Some(&b' ') {
            p = skip_whitespace(b, p);
            if !at_line_end(b, p) {
                let (ts, end) = self.timestamp(p)?;
                time = ts;
                p = end;
                while b.get(p) == Some(&b' ') {
                    p += 1;
                }
                if !at_line_end(b, p) {
                    return Err(fail(p, POINT_IS_INVALID));
                }
            }
        }

        let (next, terminated) = match b.get(p) {
            Some(b'\n') => (p + 1, true),
            Some(b'\r') if b.get(p + 1) == Some(&b'\n') => (p + 2, true),
            Some(_) => (p + 1, false),
            None => (p, false),
        };
        Ok(Line {
            measurement,
            measurement_at: start,
            batch: batch_index,
            content_end: p,
            next,
            terminated,
            time,
            newlines,
            cache_hit,
            needs_checks,
        })
    }

    /// A repeated field key: the later value replaces the earlier one.
    #[cold]
    fn replace_field(&mut self, slot: Slot, value: FieldValue<'a>, at: usize) {
        if let Some(earlier) = self.fields.iter_mut().find(|f| f.slot == slot) {
            earlier.value = value;
            earlier.at = at;
        }
    }

    /// The timestamp at `p`, scaled to ns; returns it and its end.
    #[inline]
    fn timestamp(&self, p: usize) -> Result<(i64, usize), Fail> {
        let b = self.b;
        let multiplier = self.options.precision.nanos();
        let negative = b.get(p) == Some(&b'-');
        let digits_start = p + usize::from(negative);
        let mut v: u64 = 0;
        let end = take_digits(b, digits_start, &mut v);
        let digits = end - digits_start;
        let raw =
            if (1..=19).contains(&digits) && (b.get(end) == Some(&b' ') || at_line_end(b, end)) {
                // At most 19 digits: no u64 overflow.
                if negative {
                    (v <= i64::MAX as u64 + 1).then(|| (v as i64).wrapping_neg())
                } else {
                    i64::try_from(v).ok()
                }
            } else {
                let end = scan_plain(b, p, TIMESTAMP_END);
                let tok = &b[p..end];
                for (k, &c) in tok.iter().enumerate() {
                    if !(c.is_ascii_digit() || (k == 0 && c == b'-')) {
                        return Err(fail(p + k, BAD_TIMESTAMP));
                    }
                }
                if tok.len() == usize::from(negative) {
                    return Err(fail(p, BAD_TIMESTAMP));
                }
                parse_timestamp_digits(tok)
            };
        let ns = raw
            .and_then(|t| t.checked_mul(multiplier))
            .filter(|t| (MIN_NANO_TIME..=MAX_NANO_TIME).contains(t))
            .ok_or_else(|| fail(p, TIME_OUTSIDE_RANGE))?;
        Ok((ns, end.max(scan_plain(b, end, TIMESTAMP_END))))
    }

    /// Duplicate keys among tags not matched to an existing tag column.
    #[cold]
    fn check_unmatched_tag_duplicates(&mut self) -> Result<(), Fail> {
        let n = self.tags.len();
        for j in 1..n {
            if matches!(self.tags[j].slot, Slot::Tag(_)) {
                continue;
            }
            let kj = self.tags[j].key.value(&mut self.key_buf).to_vec();
            for i in 0..j {
                if matches!(self.tags[i].slot, Slot::Tag(_)) {
                    continue;
                }
                if self.tags[i].key.value(&mut self.other_buf) == &kj[..] {
                    return Err(fail(self.tags[j].at, DUPLICATE_TAGS));
                }
            }
        }
        Ok(())
    }

    /// Repeated keys among fields not matched to an existing field column:
    /// the last value wins (kept at the first one's position).
    #[cold]
    fn merge_unmatched_field_duplicates(&mut self) {
        let mut j = 1;
        while j < self.fields.len() {
            if matches!(self.fields[j].slot, Slot::Field(_)) {
                j += 1;
                continue;
            }
            let kj = self.fields[j].key.value(&mut self.key_buf).to_vec();
            let mut earlier = None;
            for i in 0..j {
                if !matches!(self.fields[i].slot, Slot::Field(_))
                    && self.fields[i].key.value(&mut self.other_buf) == &kj[..]
                {
                    earlier = Some(i);
                    break;
                }
            }
            if let Some(i) = earlier {
                let later = self.fields.remove(j);
                self.fields[i].value = later.value;
                self.fields[i].at = later.at;
            } else {
                j += 1;
            }
        }
    }

    /// The caller's answer for a column not yet in the batch, asked once.
    fn known_column(
        &mut self,
        state: &mut State,
        measurement: &str,
        column: &str,
    ) -> Option<KnownColumn> {
        self.other_buf.clear();
        self.other_buf.extend_from_slice(measurement.as_bytes());
        self.other_buf.push(0);
        self.other_buf.extend_from_slice(column.as_bytes());
        if let Some(answer) = state.known_cache.get(&self.other_buf[..]) {
            return answer.clone();
        }
        let answer = self.known.lookup(measurement, column);
        state
            .known_cache
            .insert(self.other_buf.as_slice().into(), answer.clone());
        answer
    }

    /// Semantic checks (reserved names, unsigned range, type conflicts with
    /// the batch and the caller's tables), then appends the row. A line
    /// whose columns all exist with the right kinds (the steady state) goes
    /// straight to appending.
    fn check_and_append(
        &mut self,
        state: &mut State,
        batches: &mut Vec<MeasurementBatch>,
        line: &Line<'a>,
        line_no: u64,
    ) -> Result<(), Fail> {
        if let Some(bi) = line.batch {
            let resolved = line.cache_hit
                || (self.tags.iter().all(|t| matches!(t.slot, Slot::Tag(_)))
                    && self.fields.iter().all(|f| matches!(f.slot, Slot::Field(_))));
            let line_len = line.content_end - line.measurement_at;
            if resolved
                && !line.needs_checks
                && batches[bi].index.text_bound + line_len <= u32::MAX as usize
            {
                self.append(batches, bi, line, line_no);
                state.last_batch = bi;
                return Ok(());
            }
        }
        self.check_and_append_slow(state, batches, line, line_no)
    }

    fn type_conflict(&self, f: &FieldTok<'a>, measurement: &str, is: &str, was: &str) -> Fail {
        fail_owned(
            f.at,
            format!(
                "field type conflict: input field \"{}\" on measurement \"{}\" is type {}, already exists as type {}",
                f.key.value_string(),
                measurement,
                is,
                was
            ),
        )
    }

    #[cold]
    fn check_and_append_slow(
        &mut self,
        state: &mut State,
        batches: &mut Vec<MeasurementBatch>,
        line: &Line<'a>,
        line_no: u64,
    ) -> Result<(), Fail> {
        let mut name_buf = Vec::new();
        let name_bytes = line.measurement.value(&mut name_buf);
        let name = std::str::from_utf8(name_bytes)
            .map_err(|_| {
                fail(
                    line.measurement_at,
                    "invalid byte sequence for encoding \"UTF8\"",
                )
            })?
            .to_owned();
        let existing = line.batch.map(|i| &batches[i]);

        // Tags.
        let mut new_tag_keys: Vec<String> = Vec::new();
        let tags = std::mem::take(&mut self.tags);
        let checked = (|| {
            for t in &tags {
                let key = t.key.value_string();
                match t.slot {
                    Slot::Tag(s) => {
                        if let Some(m) = existing {
                            if m.tag_bytes(s) + t.value.raw.len() > u32::MAX as usize {
                                return Err(too_much_text(t.at));
                            }
                        }
                    }
                    Slot::Field(s) => {
                        let kind = existing.map_or(FieldKind::Float, |m| m.fields[s as usize].kind);
                        return Err(tag_is_field(t.at, &key, &name, kind));
                    }
                    Slot::New => {
                        if key == "time" {
                            return Err(fail_owned(
                                t.at,
                                format!("invalid tag key: input tag \"time\" on measurement \"{name}\" is invalid"),
                            ));
                        }
                        match self.known_column(state, &name, &key) {
                            Some(KnownColumn::Field(kind)) => return Err(tag_is_field(t.at, &key, &name, kind)),
                            Some(KnownColumn::Other(type_name)) => {
                                return Err(fail_owned(
                                    t.at,
                                    format!("column type conflict: input tag \"{key}\" on measurement \"{name}\" is text, already exists as type {type_name}"),
                                ))
                            }
                            Some(KnownColumn::Tag | KnownColumn::Text) | None => {}
                        }
                        new_tag_keys.push(key);
                    }
                }
            }
            Ok(())
        })();
        self.tags = tags;
        checked?;

        // Fields.
        let mut new_field_keys: Vec<String> = Vec::new();
        let fields = std::mem::take(&mut self.fields);
        let checked = (|| {
            for f in &fields {
                let kind = f.value.kind();
                let key = f.key.value_string();
                if let FieldValue::Unsigned(u) = f.value {
                    if u > i64::MAX as u64 {
                        return Err(unsigned_range(f.at, u));
                    }
                }
                match f.slot {
                    Slot::Field(s) => {
                        if let Some(m) = existing {
                            let col = &m.fields[s as usize];
                            if col.kind != kind {
                                return Err(self.type_conflict(
                                    f,
                                    &name,
                                    kind.name(),
                                    col.kind.name(),
                                ));
                            }
                            if let FieldValue::Str { raw, .. } = f.value {
                                if m.field_bytes(s) + raw.len() > u32::MAX as usize {
                                    return Err(too_much_text(f.at));
                                }
                            }
                        }
                    }
                    Slot::Tag(_) => return Err(field_is_tag(f.at, &key, &name)),
                    Slot::New => {
                        if key == "time" {
                            return Err(fail_owned(
                                f.at,
                                format!("invalid field name: input field \"time\" on measurement \"{name}\" is invalid"),
                            ));
                        }
                        if new_tag_keys.contains(&key) {
                            return Err(field_is_tag(f.at, &key, &name));
                        }
                        match self.known_column(state, &name, &key) {
                            Some(KnownColumn::Tag) => return Err(field_is_tag(f.at, &key, &name)),
                            // An existing column's SQL type cannot tell integer from unsigned
                            // (both bigint): either is taken into it.
                            Some(KnownColumn::Field(was)) if was != kind && !(is_integer(was) && is_integer(kind)) => {
                                return Err(self.type_conflict(f, &name, kind.name(), was.name()));
                            }
                            Some(KnownColumn::Text) if kind != FieldKind::String => {
                                return Err(self.type_conflict(
                                    f,
                                    &name,
                                    kind.name(),
                                    FieldKind::String.name(),
                                ));
                            }
                            Some(KnownColumn::Other(type_name)) => {
                                return Err(self.type_conflict(f, &name, kind.name(), &type_name));
                            }
                            Some(KnownColumn::Field(_) | KnownColumn::Text) | None => {}
                        }
                        new_field_keys.push(key);
                    }
                }
            }
            Ok(())
        })();
        self.fields = fields;
        checked?;

        // Accepted: create what is missing (with room for as many more
        // lines of this length as the input holds), then append.
        let line_len = line.content_end - line.measurement_at + 1;
        let more_rows = ((self.b.len() - line.measurement_at) / line_len).clamp(1, 1 << 20);
        let bi = match line.batch {
            Some(i) => i,
            None => {
                let i = batches.len();
                batches.push(MeasurementBatch::new(name.clone(), more_rows));
                state.batch_by_name.insert(name.as_bytes().into(), i);
                i
            }
        };
        let m = &mut batches[bi];
        let mut new_tags = new_tag_keys.into_iter();
        for t in &mut self.tags {
            if t.slot == Slot::New {
                let key = new_tags.next().unwrap_or_default();
                t.slot = Slot::Tag(m.add_tag(key, more_rows, t.value.raw.len()));
            }
        }
        let mut new_fields = new_field_keys.into_iter();
        for f in &mut self.fields {
            if f.slot == Slot::New {
                let key = new_fields.next().unwrap_or_default();
                f.slot = Slot::Field(m.add_field(key, f.value.kind(), more_rows));
            }
        }
        self.append(batches, bi, line, line_no);
        state.last_batch = bi;
        Ok(())
    }

    /// Appends the checked line (every slot resolved) to batch `bi`, and
    /// makes its shape the batch's position caches.
    #[inline]
    fn append(
        &mut self,
        batches: &mut [MeasurementBatch],
        bi: usize,
        line: &Line<'a>,
        line_no: u64,
    ) {
        let b = self.b;
        let m = &mut batches[bi];
        for t in &self.tags {
            if let Slot::Tag(s) = t.slot {
                m.push_tag(s, b, t.value_at, t.value.raw.len(), t.value.escaped);
            }
        }
        for f in &self.fields {
            if let Slot::Field(s) = f.slot {
                m.push_field(s, &f.value);
            }
        }
        m.finish_row(line.time, line_no, self.tags.len() + self.fields.len());
        m.index.text_bound += line.content_end - line.measurement_at;
        if !line.cache_hit {
            let tag_pos: Vec<_> = self.tags.iter().map(|t| m.position_entry(t.slot)).collect();
            let field_pos: Vec<_> = self
                .fields
                .iter()
                .map(|f| m.position_entry(f.slot))
                .collect();
            m.index.tag_pos = tag_pos;
            m.index.field_pos = field_pos;
        }
    }
}

fn unsigned_range(at: usize, u: u64) -> Fail {
    fail_owned(
        at,
        format!("unsigned value {u} out of range for bigint (max 9223372036854775807)"),
    )
}

fn too_much_text(at: usize) -> Fail {
    fail(at, "text column exceeds 4 GiB in one batch")
}

fn tag_is_field(at: usize, key: &str, measurement: &str, kind: FieldKind) -> Fail {
    fail_owned(
        at,
        format!(
            "tag/field conflict: input tag \"{key}\" on measurement \"{measurement}\" already exists as a field of type {}",
            kind.name()
        ),
    )
}

fn field_is_tag(at: usize, key: &str, measurement: &str) -> Fail {
    fail_owned(
        at,
        format!("tag/field conflict: input field \"{key}\" on measurement \"{measurement}\" already exists as a tag"),
    )
}

/// Integer or unsigned: the kinds a bigint column holds.
fn is_integer(kind: FieldKind) -> bool {
    matches!(kind, FieldKind::Integer | FieldKind::Unsigned)
}
