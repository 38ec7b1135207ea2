//! Arrays (`integer[]`, `text[]`, `double precision[][]`, …): their element
//! types, and their values in three forms.
//!
//! - Held (in columns, the WAL and segments): PostgreSQL's binary array
//!   format (ndim, flags, element OID, per dimension its length and lower
//!   bound 1, then each element as a length — -1 for NULL — and its binary
//!   encoding), except that an array of fixed-width elements without NULLs
//!   is *packed*: flags word [`FLAG_PACKED`] and the elements follow as
//!   their values little-endian, with no length words (see
//!   [`ArrayElem::packed_width`]). The packed form is canonical — every
//!   encoder here writes it whenever it applies — because arrays hash and
//!   group by their bytes, and equal bytes answer `=` without decoding
//!   ([`equal_held`]; `<` is element by element, [`compare_held`]). Why: a laser scan's `real[]` took 8 bytes per
//!   element in PostgreSQL's form and takes 4 packed; CDR's little-endian
//!   sequences are copied as they are.
//! - Sent and received as binary on the wire: PostgreSQL's form exactly
//!   ([`ArrayValue::encode_pg`], [`ArrayValue::decode_pg`], which refuses
//!   the packed flag: it is never a client's to send).
//! - Text: `{1,2,NULL}` with PostgreSQL's quoting.
//!
//! Must not: know about plans or columns (kernels work on decoded values).

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::binary::{decode_binary, encode_binary};
use crate::types::text::{format_text, parse_text};
use crate::types::{DataType, Datum, FormatContext};

/// Most dimensions an array may have (PostgreSQL's MAXDIM).
pub const MAX_DIMS: usize = 6;

/// The type of an array's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayElem {
    Bool,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Numeric,
    Text,
    Varchar,
    Bytea,
    Date,
    Timestamp,
    TimestampTz,
    Interval,
    Jsonb,
}

/// Every element type.
pub const ALL: [ArrayElem; 15] = [
    ArrayElem::Bool,
    ArrayElem::Int16,
    ArrayElem::Int32,
    ArrayElem::Int64,
    ArrayElem::Float32,
    ArrayElem::Float64,
    ArrayElem::Numeric,
    ArrayElem::Text,
    ArrayElem::Varchar,
    ArrayElem::Bytea,
    ArrayElem::Date,
    ArrayElem::Timestamp,
    ArrayElem::TimestampTz,
    ArrayElem::Interval,
    ArrayElem::Jsonb,
];

/// Flags word of a packed array (PostgreSQL's flags are 0 and 1: has NULLs).
pub const FLAG_PACKED: i32 = 2;

/// Byte offset of the flags word in every form.
const FLAGS_AT: usize = 4;

impl ArrayElem {
    /// Bytes per element in the packed form: the element's value as Brewric
    /// holds it (a `Datum`), little-endian — booleans one byte 0/1, dates
    /// i32 days, timestamps i64 nanoseconds since 1970 (so nanoseconds
    /// survive, as they do in a timestamptz column). None for variable-width
    /// elements (and intervals and numerics), which are never packed.
    pub fn packed_width(self) -> Option<usize> {
        Some(match self {
            ArrayElem::Bool => 1,
            ArrayElem::Int16 => 2,
            ArrayElem::Int32 | ArrayElem::Float32 | ArrayElem::Date => 4,
            ArrayElem::Int64 | ArrayElem::Float64 | ArrayElem::Timestamp | ArrayElem::TimestampTz => 8,
            _ => return None,
        })
    }

    /// The element type for arrays of `t` (varchar(n) and char(n) lose their length).
    pub fn of(t: DataType) -> Option<ArrayElem> {
        Some(match t {
            DataType::Bool => ArrayElem::Bool,
            DataType::Int16 => ArrayElem::Int16,
            DataType::Int32 => ArrayElem::Int32,
            DataType::Int64 => ArrayElem::Int64,
            DataType::Float32 => ArrayElem::Float32,
            DataType::Float64 => ArrayElem::Float64,
            DataType::Numeric => ArrayElem::Numeric,
            DataType::Text | DataType::Bpchar(_) | DataType::Name | DataType::Char | DataType::Unknown => {
                ArrayElem::Text
            }
            DataType::Oid => ArrayElem::Int64,
            DataType::Varchar(_) => ArrayElem::Varchar,
            DataType::Bytea => ArrayElem::Bytea,
            DataType::Date => ArrayElem::Date,
            DataType::Timestamp => ArrayElem::Timestamp,
            DataType::TimestampTz => ArrayElem::TimestampTz,
            DataType::Interval => ArrayElem::Interval,
            DataType::Jsonb => ArrayElem::Jsonb,
            DataType::Array(e) => e,
            DataType::Record => return None,
        })
    }

    pub fn data_type(self) -> DataType {
        match self {
            ArrayElem::Bool => DataType::Bool,
            ArrayElem::Int16 => DataType::Int16,
            ArrayElem::Int32 => DataType::Int32,
            ArrayElem::Int64 => DataType::Int64,
            ArrayElem::Float32 => DataType::Float32,
            ArrayElem::Float64 => DataType::Float64,
            ArrayElem::Numeric => DataType::Numeric,
            ArrayElem::Text => DataType::Text,
            ArrayElem::Varchar => DataType::Varchar(None),
            ArrayElem::Bytea => DataType::Bytea,
            ArrayElem::Date => DataType::Date,
            ArrayElem::Timestamp => DataType::Timestamp,
            ArrayElem::TimestampTz => DataType::TimestampTz,
            ArrayElem::Interval => DataType::Interval,
            ArrayElem::Jsonb => DataType::Jsonb,
        }
    }

    /// pg_type OID of the array type (`_int4` is 1007).
    pub fn array_oid(self) -> u32 {
        match self {
            ArrayElem::Bool => 1000,
            ArrayElem::Int16 => 1005,
            ArrayElem::Int32 => 1007,
            ArrayElem::Int64 => 1016,
            ArrayElem::Float32 => 1021,
            ArrayElem::Float64 => 1022,
            ArrayElem::Numeric => 1231,
            ArrayElem::Text => 1009,
            ArrayElem::Varchar => 1015,
            ArrayElem::Bytea => 1001,
            ArrayElem::Date => 1182,
            ArrayElem::Timestamp => 1115,
            ArrayElem::TimestampTz => 1185,
            ArrayElem::Interval => 1187,
            ArrayElem::Jsonb => 3807,
        }
    }

    pub fn from_array_oid(oid: u32) -> Option<ArrayElem> {
        ALL.iter().copied().find(|e| e.array_oid() == oid)
    }
}

/// A decoded array: its dimensions (empty for `{}`) and elements in row-major order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArrayValue {
    pub dims: Vec<usize>,
    pub elems: Vec<Datum>,
}

/// ndim, flags, element OID, then each dimension's length and lower bound 1.
fn write_header(out: &mut Vec<u8>, dims: &[usize], flags: i32, elem: ArrayElem) {
    out.extend_from_slice(&(dims.len() as i32).to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&(elem.data_type().oid() as i32).to_be_bytes());
    for d in dims {
        out.extend_from_slice(&(*d as i32).to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes());
    }
}

/// Appends `value`'s packed element; false when the datum is not of the
/// element's kind (the caller then writes PostgreSQL's form).
fn push_packed(elem: ArrayElem, value: &Datum, out: &mut Vec<u8>) -> bool {
    match (elem, value) {
        (ArrayElem::Bool, Datum::Bool(b)) => out.push(*b as u8),
        (ArrayElem::Float32, Datum::Float32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (ArrayElem::Float32, Datum::Float64(v)) => out.extend_from_slice(&(*v as f32).to_le_bytes()),
        (ArrayElem::Float64, Datum::Float64(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (ArrayElem::Float64, Datum::Float32(v)) => out.extend_from_slice(&(*v as f64).to_le_bytes()),
        (ArrayElem::Int16, Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_)) => {
            out.extend_from_slice(&(value.as_i64().unwrap_or(0) as i16).to_le_bytes())
        }
        (ArrayElem::Int32 | ArrayElem::Date, Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_)) => {
            out.extend_from_slice(&(value.as_i64().unwrap_or(0) as i32).to_le_bytes())
        }
        (
            ArrayElem::Int64 | ArrayElem::Timestamp | ArrayElem::TimestampTz,
            Datum::Int16(_) | Datum::Int32(_) | Datum::Int64(_),
        ) => out.extend_from_slice(&value.as_i64().unwrap_or(0).to_le_bytes()),
        _ => return false,
    }
    true
}

/// One packed element (`b` is exactly the element's width).
fn packed_datum(elem: ArrayElem, b: &[u8]) -> Datum {
    let word = || -> [u8; 8] {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        w
    };
    match elem {
        ArrayElem::Bool => Datum::Bool(b[0] != 0),
        ArrayElem::Int16 => Datum::Int16(i16::from_le_bytes([b[0], b[1]])),
        ArrayElem::Int32 | ArrayElem::Date => Datum::Int32(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ArrayElem::Float32 => Datum::Float32(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ArrayElem::Float64 => Datum::Float64(f64::from_le_bytes(word())),
        _ => Datum::Int64(i64::from_le_bytes(word())),
    }
}

/// An array's dimensions, read from its header alone (either form): what
/// `array_length`, `cardinality` and subscripts need, without decoding the
/// elements.
#[derive(Debug, Clone, Copy)]
pub struct ArrayHeader {
    ndim: usize,
    dims: [usize; MAX_DIMS],
    packed: bool,
    /// Offset of the first element.
    body: usize,
}

impl ArrayHeader {
    pub fn read(bytes: &[u8]) -> DbResult<ArrayHeader> {
        let word = |at: usize, what: &str| -> DbResult<i32> {
            let b = bytes.get(at..at + 4).ok_or_else(|| malformed(what))?;
            Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let ndim = word(0, "dimensions")?;
        if !(0..=MAX_DIMS as i32).contains(&ndim) {
            return Err(malformed("number of dimensions"));
        }
        let mut dims = [0usize; MAX_DIMS];
        for (k, d) in dims.iter_mut().enumerate().take(ndim as usize) {
            let len = word(12 + 8 * k, "dimension length")?;
            *d = usize::try_from(len).map_err(|_| malformed("negative dimension"))?;
        }
        Ok(ArrayHeader { ndim: ndim as usize, dims, packed: word(FLAGS_AT, "flags")? == FLAG_PACKED, body: 12 + 8 * ndim as usize })
    }

    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.ndim]
    }

    /// Elements in all (PostgreSQL's `cardinality`).
    pub fn count(&self) -> usize {
        if self.ndim == 0 {
            0
        } else {
            // Saturating: a header claiming more elements than memory holds
            // then fails every bounds check instead of wrapping.
            self.dims().iter().fold(1usize, |n, &d| n.saturating_mul(d))
        }
    }

    /// The element bytes of a packed array (count × width, each
    /// little-endian); None when the array is not packed or its bytes do
    /// not hold exactly its elements.
    pub fn packed_body<'a>(&self, bytes: &'a [u8], elem: ArrayElem) -> Option<&'a [u8]> {
        let width = elem.packed_width().filter(|_| self.packed)?;
        bytes.get(self.body..).filter(|b| Some(b.len()) == self.count().checked_mul(width))
    }

    /// Element `pos` (row-major) of a packed array, read in place; None when
    /// the array is not packed (or `pos` lies outside its bytes).
    pub fn packed_element(&self, bytes: &[u8], elem: ArrayElem, pos: usize) -> Option<Datum> {
        let width = elem.packed_width().filter(|_| self.packed)?;
        let at = self.body.checked_add(pos.checked_mul(width)?)?;
        bytes.get(at..at.checked_add(width)?).map(|b| packed_datum(elem, b))
    }
}

/// Two held arrays of `elem` in PostgreSQL's order (its `array_cmp`):
/// element by element in row-major order, each by its type's order (NULL
/// above every value, NaN above every other float, -0 equal to 0); when one
/// array runs out first, the one with fewer elements is less, then the one
/// with fewer dimensions, then the smaller dimension lengths. Bytes that do
/// not decode (never written by Brewric) compare as bytes.
pub fn compare_held(a: &[u8], b: &[u8], elem: ArrayElem) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if a == b {
        return Ordering::Equal;
    }
    let (Ok(ha), Ok(hb)) = (ArrayHeader::read(a), ArrayHeader::read(b)) else {
        return a.cmp(b);
    };
    let elements = match (ha.packed_body(a, elem), hb.packed_body(b, elem), elem.packed_width()) {
        // Both packed: element by element in place, no decoding.
        (Some(x), Some(y), Some(width)) => x
            .chunks_exact(width)
            .zip(y.chunks_exact(width))
            .map(|(p, q)| packed_datum(elem, p).total_cmp(&packed_datum(elem, q)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal),
        _ => match (ArrayValue::decode(a, elem), ArrayValue::decode(b, elem)) {
            (Ok(x), Ok(y)) => x
                .elems
                .iter()
                .zip(&y.elems)
                .map(|(p, q)| p.total_cmp(q))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal),
            _ => return a.cmp(b),
        },
    };
    elements
        .then(ha.count().cmp(&hb.count()))
        .then(ha.ndim.cmp(&hb.ndim))
        .then_with(|| ha.dims().cmp(hb.dims()))
}

/// Whether two held arrays of `elem` are equal as PostgreSQL's `=` says.
/// The held form is canonical, so equal bytes are equal arrays, and for
/// most element types different bytes are different arrays; floats (-0
/// and 0), numerics (1.0 and 1.00) and intervals ('1 day' and '24 hours')
/// can be equal in different bytes.
pub fn equal_held(a: &[u8], b: &[u8], elem: ArrayElem) -> bool {
    a == b
        || (matches!(elem, ArrayElem::Float32 | ArrayElem::Float64 | ArrayElem::Numeric | ArrayElem::Interval)
            && compare_held(a, b, elem).is_eq())
}

/// Whether held array bytes are in the packed form.
pub fn is_packed(bytes: &[u8]) -> bool {
    bytes.get(FLAGS_AT..FLAGS_AT + 4) == Some(&FLAG_PACKED.to_be_bytes()[..])
}

/// Held array bytes as PostgreSQL's binary array format, appended to `out`
/// (the packed form expanded; anything else is already in that form).
pub fn write_pg_binary(bytes: &[u8], elem: ArrayElem, out: &mut Vec<u8>) {
    if !is_packed(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    // Booleans, integers and floats are sent as their held values
    // big-endian: each element's bytes reversed behind its length word, no
    // Datum in between. Dates and timestamps change epoch and unit on the
    // wire, so they go through the element encoder.
    let same_value_on_the_wire = matches!(
        elem,
        ArrayElem::Bool | ArrayElem::Int16 | ArrayElem::Int32 | ArrayElem::Int64 | ArrayElem::Float32 | ArrayElem::Float64
    );
    if let (true, Ok(header), Some(width)) = (same_value_on_the_wire, ArrayHeader::read(bytes), elem.packed_width()) {
        if let Some(body) = header.packed_body(bytes, elem) {
            out.extend_from_slice(&bytes[..FLAGS_AT]);
            out.extend_from_slice(&0i32.to_be_bytes()); // no NULLs
            out.extend_from_slice(&bytes[FLAGS_AT + 4..header.body]);
            out.reserve(body.len() + 4 * header.count());
            let len = (width as i32).to_be_bytes();
            for element in body.chunks_exact(width) {
                out.extend_from_slice(&len);
                out.extend(element.iter().rev());
            }
            return;
        }
    }
    match ArrayValue::decode(bytes, elem) {
        Ok(v) => out.extend_from_slice(&v.encode_pg(elem)),
        Err(_) => out.extend_from_slice(bytes),
    }
}

/// A column's array values (its `offsets` and `data`) with every value that
/// has a packed form but is held in PostgreSQL's (written before the packed
/// form existed: older segments and WAL records) rewritten packed, so that
/// byte comparisons see one form. None when no value needs it — the usual
/// case, found by reading each value's flags word.
pub fn repack_values(offsets: &[u32], data: &[u8], elem: ArrayElem) -> Option<(Vec<u32>, Vec<u8>)> {
    elem.packed_width()?;
    let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
    let n = offsets.len().saturating_sub(1);
    // Flags 0 (no NULLs) with at least one dimension: PostgreSQL's form of a packable array.
    let needs = |b: &[u8]| b.len() > 12 && b.get(FLAGS_AT..FLAGS_AT + 4) == Some(&[0u8; 4][..]);
    if !(0..n).any(|i| needs(value(i))) {
        return None;
    }
    let mut out_offsets = Vec::with_capacity(offsets.len());
    let mut out = Vec::with_capacity(data.len());
    out_offsets.push(0);
    for i in 0..n {
        let b = value(i);
        match needs(b).then(|| ArrayValue::decode(b, elem)) {
            Some(Ok(v)) => out.extend_from_slice(&v.encode(elem)),
            _ => out.extend_from_slice(b),
        }
        out_offsets.push(out.len() as u32);
    }
    Some((out_offsets, out))
}

fn malformed(what: &str) -> DbError {
    DbError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("malformed array: {what}"))
}

/// A packed array of `dims` whose elements are `body` (count × width bytes,
/// each little-endian, as [`ArrayHeader::packed_body`] reads them).
pub fn packed_from_body(dims: &[usize], elem: ArrayElem, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + 8 * dims.len() + body.len());
    write_header(&mut out, dims, FLAG_PACKED, elem);
    out.extend_from_slice(body);
    out
}

impl ArrayValue {
    /// A one-dimensional array of `elems`.
    pub fn of(elems: Vec<Datum>) -> ArrayValue {
        let dims = if elems.is_empty() { vec![] } else { vec![elems.len()] };
        ArrayValue { dims, elems }
    }

    /// The held form: packed when the elements have a fixed width and none
    /// is NULL, else PostgreSQL's binary array format.
    pub fn encode(&self, elem: ArrayElem) -> Vec<u8> {
        if let Some(width) = elem.packed_width() {
            if !self.dims.is_empty() && self.elems.iter().all(|e| !e.is_null()) {
                let mut out = Vec::with_capacity(12 + 8 * self.dims.len() + self.elems.len() * width);
                write_header(&mut out, &self.dims, FLAG_PACKED, elem);
                if self.elems.iter().all(|e| push_packed(elem, e, &mut out)) {
                    return out;
                }
            }
        }
        self.encode_pg(elem)
    }

    /// PostgreSQL's binary array format (what the binary wire format sends).
    pub fn encode_pg(&self, elem: ArrayElem) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + self.elems.len() * 8);
        write_header(&mut out, &self.dims, self.elems.iter().any(|e| e.is_null()) as i32, elem);
        let t = elem.data_type();
        let mut buf = Vec::new();
        for e in &self.elems {
            if e.is_null() {
                out.extend_from_slice(&(-1i32).to_be_bytes());
                continue;
            }
            buf.clear();
            encode_binary(t, e, &mut buf);
            out.extend_from_slice(&(buf.len() as i32).to_be_bytes());
            out.extend_from_slice(&buf);
        }
        out
    }

    /// Reads the held form: packed, or PostgreSQL's binary array format.
    pub fn decode(bytes: &[u8], elem: ArrayElem) -> DbResult<ArrayValue> {
        Self::decode_flags(bytes, elem, true)
    }

    /// Reads PostgreSQL's binary array format as a client sends it (flags 0
    /// or 1; the packed flag is refused).
    pub fn decode_pg(bytes: &[u8], elem: ArrayElem) -> DbResult<ArrayValue> {
        Self::decode_flags(bytes, elem, false)
    }

    fn decode_flags(bytes: &[u8], elem: ArrayElem, packed_allowed: bool) -> DbResult<ArrayValue> {
        let mut pos = 0;
        fn read_word(bytes: &[u8], pos: &mut usize, what: &str) -> DbResult<i32> {
            let b = bytes.get(*pos..*pos + 4).ok_or_else(|| malformed(what))?;
            *pos += 4;
            Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        }
        macro_rules! word {
            ($what:expr) => {
                read_word(bytes, &mut pos, $what)
            };
        }
        let ndim = word!("dimensions")?;
        if !(0..=MAX_DIMS as i32).contains(&ndim) {
            return Err(malformed("number of dimensions"));
        }
        let flags = word!("flags")?;
        let packed = match flags {
            0 | 1 => None,
            FLAG_PACKED if packed_allowed => Some(elem.packed_width().ok_or_else(|| malformed("packed elements of variable width"))?),
            _ => return Err(malformed("invalid flags")),
        };
        let _oid = word!("element type")?;
        let mut dims = Vec::with_capacity(ndim as usize);
        let mut count: usize = 1;
        for _ in 0..ndim {
            let len = word!("dimension length")?;
            let _lower = word!("lower bound")?;
            if len < 0 {
                return Err(malformed("negative dimension"));
            }
            count = count.checked_mul(len as usize).filter(|&c| c <= bytes.len()).ok_or_else(|| malformed("too many elements"))?;
            dims.push(len as usize);
        }
        if ndim == 0 || count == 0 {
            // No elements: the empty array, whatever dimensions were sent
            // (PostgreSQL's array_recv does the same).
            count = 0;
            dims.clear();
        }
        if let Some(width) = packed {
            let body = bytes.get(pos..).filter(|b| b.len() == count * width).ok_or_else(|| malformed("packed elements"))?;
            let elems = body.chunks_exact(width).map(|b| packed_datum(elem, b)).collect();
            return Ok(ArrayValue { dims, elems });
        }
        let t = elem.data_type();
        let mut elems = Vec::with_capacity(count);
        for _ in 0..count {
            let len = word!("element length")?;
            if len < 0 {
                elems.push(Datum::Null);
                continue;
            }
            let b = bytes.get(pos..pos + len as usize).ok_or_else(|| malformed("element"))?;
            pos += len as usize;
            elems.push(decode_binary(t, b)?);
        }
        Ok(ArrayValue { dims, elems })
    }

    /// PostgreSQL's text form: `{1,2,3}`, `{{1,2},{3,4}}`, `{}`, strings quoted where needed.
    pub fn format_text(&self, elem: ArrayElem, ctx: &FormatContext, out: &mut Vec<u8>) {
        if self.dims.is_empty() {
            out.extend_from_slice(b"{}");
            return;
        }
        let t = elem.data_type();
        let mut next = 0;
        format_level(&self.dims, &self.elems, &mut next, t, ctx, out);
    }

    /// Parses `{…}` text (22P02 with PostgreSQL's "malformed array literal" message).
    pub fn parse_text(input: &str, elem: ArrayElem, ctx: &FormatContext) -> DbResult<ArrayValue> {
        let bad = |detail: &str| {
            DbError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("malformed array literal: \"{input}\""))
                .with_detail(detail.to_string())
        };
        let s: Vec<char> = input.trim_matches(is_array_space).chars().collect();
        if s.first() == Some(&'[') {
            // Lower bounds other than 1 are not kept (see README, Known gaps):
            // refused rather than silently moved to 1.
            return Err(DbError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("array dimension decorations are not supported: \"{input}\""),
            )
            .with_hint("Write the array without \"[lower:upper]=\"; its lower bound is then 1."));
        }
        if s.first() != Some(&'{') {
            return Err(bad("Array value must start with \"{\" or dimension information."));
        }
        let mut p = TextParser { s: &s, pos: 0, items: Vec::new(), dims: Vec::new(), leaf_depth: None };
        p.level(0).map_err(|d| bad(&d))?;
        if p.s[p.pos..].iter().any(|&c| !is_array_space(c)) {
            return Err(bad("Junk after closing right brace."));
        }
        let t = elem.data_type();
        let mut elems = Vec::with_capacity(p.items.len());
        for item in p.items {
            elems.push(match item {
                None => Datum::Null,
                Some(text) => parse_text(t, &text, ctx)?,
            });
        }
        let dims: Vec<usize> = if elems.is_empty() { vec![] } else { p.dims.into_iter().map(|d| d.unwrap_or(0)).collect() };
        if !elems.is_empty() && dims.iter().product::<usize>() != elems.len() {
            return Err(bad("Multidimensional arrays must have sub-arrays with matching dimensions."));
        }
        Ok(ArrayValue { dims, elems })
    }
}

/// The blanks array_in skips around elements and braces (PostgreSQL's
/// `array_isspace`: ASCII only, so a no-break space is part of a value).
fn is_array_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn format_level(dims: &[usize], elems: &[Datum], next: &mut usize, t: DataType, ctx: &FormatContext, out: &mut Vec<u8>) {
    out.push(b'{');
    for i in 0..dims[0] {
        if i > 0 {
            out.push(b',');
        }
        if dims.len() > 1 {
            format_level(&dims[1..], elems, next, t, ctx, out);
            continue;
        }
        let e = elems.get(*next).cloned().unwrap_or(Datum::Null);
        *next += 1;
        if e.is_null() {
            out.extend_from_slice(b"NULL");
            continue;
        }
        let mut text = Vec::new();
        format_text(t, &e, ctx, &mut text);
        let needs_quotes = text.is_empty()
            || text.eq_ignore_ascii_case(b"NULL")
            || text.iter().any(|&c| matches!(c, b'{' | b'}' | b',' | b'"' | b'\\') || is_array_space(c as char));
        if needs_quotes {
            out.push(b'"');
            for &c in &text {
                if c == b'"' || c == b'\\' {
                    out.push(b'\\');
                }
                out.push(c);
            }
            out.push(b'"');
        } else {
            out.extend_from_slice(&text);
        }
    }
    out.push(b'}');
}

struct TextParser<'a> {
    s: &'a [char],
    pos: usize,
    items: Vec<Option<String>>,
    /// Length of each dimension, as first seen.
    dims: Vec<Option<usize>>,
    /// The depth every element stands at (all the same, as dimensions require).
    leaf_depth: Option<usize>,
}

impl TextParser<'_> {
    fn skip_blanks(&mut self) {
        while self.pos < self.s.len() && is_array_space(self.s[self.pos]) {
            self.pos += 1;
        }
    }

    /// One `{…}` at nesting `depth`; its element count is checked against the dimension.
    fn level(&mut self, depth: usize) -> Result<(), String> {
        if depth >= MAX_DIMS {
            return Err("Too many dimensions.".into());
        }
        self.pos += 1; // '{'
        let mut count = 0;
        let mut nested: Option<bool> = None;
        loop {
            self.skip_blanks();
            match self.s.get(self.pos) {
                None => return Err("Unexpected end of input.".into()),
                Some('}') if count == 0 => {
                    self.pos += 1;
                    break;
                }
                Some('{') => {
                    if nested == Some(false) {
                        return Err("Unexpected \"{\" character.".into());
                    }
                    nested = Some(true);
                    self.level(depth + 1)?;
                }
                Some(_) => {
                    if nested == Some(true) {
                        return Err("Unexpected array element.".into());
                    }
                    nested = Some(false);
                    match self.leaf_depth {
                        None => self.leaf_depth = Some(depth),
                        Some(d) if d == depth => {}
                        Some(_) => return Err("Multidimensional arrays must have sub-arrays with matching dimensions.".into()),
                    }
                    let item = self.element()?;
                    self.items.push(item);
                }
            }
            count += 1;
            self.skip_blanks();
            match self.s.get(self.pos) {
                Some(',') => self.pos += 1,
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err("Unexpected end of input.".into()),
            }
        }
        if self.dims.len() <= depth {
            self.dims.resize(depth + 1, None);
        }
        match self.dims[depth] {
            None => self.dims[depth] = Some(count),
            Some(d) if d == count => {}
            Some(_) => return Err("Multidimensional arrays must have sub-arrays with matching dimensions.".into()),
        }
        Ok(())
    }

    /// A quoted or bare element; bare `NULL` (any case, nothing escaped) is
    /// NULL. A bare element ends before its unescaped trailing blanks.
    fn element(&mut self) -> Result<Option<String>, String> {
        let mut text = String::new();
        if self.s.get(self.pos) == Some(&'"') {
            self.pos += 1;
            loop {
                match self.s.get(self.pos) {
                    None => return Err("Unexpected end of input.".into()),
                    Some('"') => {
                        self.pos += 1;
                        return Ok(Some(text));
                    }
                    Some('\\') => {
                        self.pos += 1;
                        let c = *self.s.get(self.pos).ok_or("Unexpected end of input.")?;
                        text.push(c);
                        self.pos += 1;
                    }
                    Some(&c) => {
                        text.push(c);
                        self.pos += 1;
                    }
                }
            }
        }
        // The text up to its last character that is not an unescaped blank.
        let mut kept = 0;
        let mut escaped = false;
        while let Some(&c) = self.s.get(self.pos) {
            match c {
                ',' | '}' => break,
                '{' | '"' => return Err(format!("Unexpected \"{c}\" character.")),
                '\\' => {
                    self.pos += 1;
                    let n = *self.s.get(self.pos).ok_or("Unexpected end of input.")?;
                    text.push(n);
                    kept = text.len();
                    escaped = true;
                }
                c if is_array_space(c) => text.push(c),
                _ => {
                    text.push(c);
                    kept = text.len();
                }
            }
            self.pos += 1;
        }
        text.truncate(kept);
        if !escaped && text.eq_ignore_ascii_case("NULL") {
            return Ok(None);
        }
        Ok(Some(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> FormatContext {
        FormatContext::default()
    }

    fn round_trip(text: &str, elem: ArrayElem) -> String {
        let v = ArrayValue::parse_text(text, elem, &ctx()).unwrap();
        let back = ArrayValue::decode(&v.encode(elem), elem).unwrap();
        assert_eq!(back, v, "{text}");
        let mut out = Vec::new();
        back.format_text(elem, &ctx(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_and_binary_forms_round_trip() {
        assert_eq!(round_trip("{1,2,3}", ArrayElem::Int32), "{1,2,3}");
        assert_eq!(round_trip(" { 1 , NULL ,3 } ", ArrayElem::Int64), "{1,NULL,3}");
        assert_eq!(round_trip("{{1,2},{3,4}}", ArrayElem::Int16), "{{1,2},{3,4}}");
        assert_eq!(round_trip("{}", ArrayElem::Text), "{}");
        assert_eq!(round_trip(r#"{a,"b c","",NULL,"NULL","q\"x",x\,y}"#, ArrayElem::Text), r#"{a,"b c","",NULL,"NULL","q\"x","x,y"}"#);
        assert_eq!(round_trip("{1.5,-0.25}", ArrayElem::Float64), "{1.5,-0.25}");
    }

    /// A binary array with a zero-length dimension is the empty array, as
    /// array_recv makes it (its text form reads back the same).
    #[test]
    fn a_binary_array_without_elements_is_the_empty_array() {
        let mut wire = Vec::new();
        for word in [2i32, 0, 23, 0, 1, 3, 1] {
            wire.extend_from_slice(&word.to_be_bytes());
        }
        let v = ArrayValue::decode_pg(&wire, ArrayElem::Int32).unwrap();
        assert_eq!(v, ArrayValue::parse_text("{}", ArrayElem::Int32, &ctx()).unwrap());
    }

    /// array_in's rules for what is a blank and what is NULL: only ASCII
    /// blanks around elements, an escaped blank is part of the value, an
    /// escaped or quoted NULL is the text NULL; blanks inside a value are
    /// quoted on output so that it reads back.
    #[test]
    fn blanks_escapes_and_null_follow_array_in() {
        let ctx = FormatContext::default();
        let texts = |input: &str| {
            let v = ArrayValue::parse_text(input, ArrayElem::Text, &ctx).unwrap();
            v.elems.iter().map(|d| match d {
                Datum::Null => None,
                Datum::Bytes(b) => Some(String::from_utf8(b.clone()).unwrap()),
                other => panic!("{other:?}"),
            }).collect::<Vec<_>>()
        };
        assert_eq!(texts("{ a b ,c\\ }"), [Some("a b".into()), Some("c ".into())]);
        assert_eq!(texts("{NULL,\\NULL,\"NULL\",null }"), [None, Some("NULL".into()), Some("NULL".into()), None]);
        assert_eq!(texts("{\u{a0}x\u{a0}}"), [Some("\u{a0}x\u{a0}".into())]);
        assert_eq!(texts("\u{b}{\u{c}x\u{b}}\u{c}"), [Some("x".into())]);
        let decorated = ArrayValue::parse_text("[0:1]={1,2}", ArrayElem::Text, &ctx).unwrap_err();
        assert_eq!(decorated.code, sqlstate::FEATURE_NOT_SUPPORTED);
        assert_eq!(round_trip("{\"\u{c}b\",\"a\u{b}\"}", ArrayElem::Text), "{\"\u{c}b\",\"a\u{b}\"}");
    }

    /// Fixed-width arrays without NULLs are held packed; everything else in
    /// PostgreSQL's form; clients see PostgreSQL's form only.
    #[test]
    fn fixed_width_arrays_are_held_packed_and_sent_in_postgres_form() {
        let cases: Vec<(ArrayElem, Vec<Datum>, usize)> = vec![
            (ArrayElem::Bool, vec![Datum::Bool(true), Datum::Bool(false)], 1),
            (ArrayElem::Int16, vec![Datum::Int16(-3), Datum::Int16(i16::MAX)], 2),
            (ArrayElem::Int32, vec![Datum::Int32(i32::MIN), Datum::Int32(7)], 4),
            (ArrayElem::Date, vec![Datum::Int32(-1), Datum::Int32(20000)], 4),
            (ArrayElem::Int64, vec![Datum::Int64(-1), Datum::Int64(1 << 40)], 8),
            (ArrayElem::Float32, vec![Datum::Float32(1.5), Datum::Float32(-0.25)], 4),
            (ArrayElem::Float64, vec![Datum::Float64(f64::INFINITY), Datum::Float64(0.1)], 8),
            (ArrayElem::TimestampTz, vec![Datum::Int64(1_500_000_000), Datum::Int64(-1_000)], 8),
        ];
        for (elem, elems, width) in cases {
            let v = ArrayValue { dims: vec![2], elems };
            let held = v.encode(elem);
            assert!(is_packed(&held), "{elem:?}");
            assert_eq!(held.len(), 20 + 2 * width, "{elem:?}: no length words");
            assert_eq!(ArrayValue::decode(&held, elem).unwrap(), v, "{elem:?}");
            // The wire form is PostgreSQL's, and reads back (from a client) to the same held bytes.
            let mut wire = Vec::new();
            write_pg_binary(&held, elem, &mut wire);
            assert_eq!(wire, v.encode_pg(elem), "{elem:?}");
            assert!(!is_packed(&wire));
            assert_eq!(ArrayValue::decode_pg(&wire, elem).unwrap().encode(elem), held, "{elem:?}");
            // A client may not send the packed form.
            assert!(ArrayValue::decode_pg(&held, elem).is_err(), "{elem:?}");
            // A packed value cut short is malformed, not a panic.
            assert!(ArrayValue::decode(&held[..held.len() - 1], elem).is_err(), "{elem:?}");
        }
        // Held timestamps keep nanoseconds (the wire's microseconds cannot).
        let ns = ArrayValue::of(vec![Datum::Int64(1_500_000_007)]);
        assert_eq!(ArrayValue::decode(&ns.encode(ArrayElem::TimestampTz), ArrayElem::TimestampTz).unwrap(), ns);
        // NULLs, empty arrays and variable-width elements keep PostgreSQL's form.
        let with_null = ArrayValue::of(vec![Datum::Int32(1), Datum::Null]);
        assert!(!is_packed(&with_null.encode(ArrayElem::Int32)));
        assert_eq!(with_null.encode(ArrayElem::Int32), with_null.encode_pg(ArrayElem::Int32));
        assert_eq!(ArrayValue::of(vec![]).encode(ArrayElem::Int32), ArrayValue::of(vec![]).encode_pg(ArrayElem::Int32));
        let text = ArrayValue::of(vec![Datum::text("a")]);
        assert_eq!(text.encode(ArrayElem::Text), text.encode_pg(ArrayElem::Text));
        // Multi-dimensional arrays pack row-major.
        let grid = ArrayValue { dims: vec![2, 2], elems: (1..=4).map(Datum::Int16).collect() };
        assert_eq!(ArrayValue::decode(&grid.encode(ArrayElem::Int16), ArrayElem::Int16).unwrap(), grid);
        let mut wire = Vec::new();
        write_pg_binary(&grid.encode(ArrayElem::Int16), ArrayElem::Int16, &mut wire);
        assert_eq!(wire, grid.encode_pg(ArrayElem::Int16));
    }

    /// A header claiming more elements than its bytes hold (or than memory
    /// could) fails the bounds checks instead of overflowing.
    #[test]
    fn a_header_claiming_huge_dimensions_is_refused_not_overflowed() {
        let mut bytes = Vec::new();
        write_header(&mut bytes, &[i32::MAX as usize, i32::MAX as usize, i32::MAX as usize], FLAG_PACKED, ArrayElem::Float64);
        bytes.extend_from_slice(&1.0f64.to_le_bytes());
        let header = ArrayHeader::read(&bytes).unwrap();
        assert_eq!(header.count(), usize::MAX);
        assert_eq!(header.packed_body(&bytes, ArrayElem::Float64), None);
        assert_eq!(header.packed_element(&bytes, ArrayElem::Float64, usize::MAX / 4), None);
        assert!(ArrayValue::decode(&bytes, ArrayElem::Float64).is_err());
    }

    /// Values held before the packed form existed are rewritten packed;
    /// packed values, NULL-holding and empty arrays are left as they are.
    #[test]
    fn values_in_postgres_form_are_repacked_on_read() {
        let elem = ArrayElem::Float64;
        let a = ArrayValue::of(vec![Datum::Float64(1.0), Datum::Float64(2.5)]);
        let b = ArrayValue::of(vec![Datum::Float64(3.0), Datum::Null]);
        let empty = ArrayValue::of(vec![]);
        let values = [a.encode_pg(elem), a.encode(elem), b.encode_pg(elem), empty.encode_pg(elem)];
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in &values {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        let (new_offsets, new_data) = repack_values(&offsets, &data, elem).expect("one value needs repacking");
        let got: Vec<&[u8]> = new_offsets.windows(2).map(|w| &new_data[w[0] as usize..w[1] as usize]).collect();
        assert_eq!(got, [&a.encode(elem)[..], &a.encode(elem)[..], &values[2][..], &values[3][..]]);
        // Already canonical: nothing to do.
        assert_eq!(repack_values(&new_offsets, &new_data, elem), None);
        assert_eq!(repack_values(&offsets, &data, ArrayElem::Text), None);
    }

    /// The order of held arrays is PostgreSQL's, whichever form holds them:
    /// packed arrays compared in place agree with the same arrays in
    /// PostgreSQL's form compared decoded, and with the list of arrays as
    /// PostgreSQL sorts them.
    #[test]
    fn arrays_order_element_by_element_in_either_form() {
        let ints = |v: &[i64]| ArrayValue::of(v.iter().map(|&x| Datum::Int64(x)).collect());
        let square = ArrayValue { dims: vec![2, 2], elems: [1, 2, 3, 4].map(Datum::Int64).to_vec() };
        // Ascending, as PostgreSQL 15 orders these bigint[] values.
        let sorted = [
            ints(&[]),
            ints(&[-256, 5]),
            ints(&[-1]),
            ints(&[1]),
            ints(&[1, 2]),
            ints(&[1, 2, 3, 4]),
            square,
            ArrayValue::of(vec![Datum::Int64(1), Datum::Null]),
            ints(&[2]),
            ints(&[256]),
        ];
        let elem = ArrayElem::Int64;
        for (i, a) in sorted.iter().enumerate() {
            for (j, b) in sorted.iter().enumerate() {
                let (packed, pg) = ((a.encode(elem), b.encode(elem)), (a.encode_pg(elem), b.encode_pg(elem)));
                for (x, y) in [&packed, &pg, &(packed.0.clone(), pg.1.clone())] {
                    assert_eq!(compare_held(x, y, elem), i.cmp(&j), "{a:?} vs {b:?}");
                }
                // Held values are canonical (repacked on read), so `=` meets one form only.
                for (x, y) in [&packed, &pg] {
                    assert_eq!(equal_held(x, y, elem), i == j, "{a:?} = {b:?}");
                }
            }
        }
        // Equal values in different bytes.
        let zero = |z: f64| ArrayValue::of(vec![Datum::Float64(z)]).encode(ArrayElem::Float64);
        assert_ne!(zero(-0.0), zero(0.0));
        assert!(equal_held(&zero(-0.0), &zero(0.0), ArrayElem::Float64));
        assert!(compare_held(&zero(f64::NAN), &zero(f64::INFINITY), ArrayElem::Float64).is_gt());
    }

    #[test]
    fn malformed_literals_are_refused() {
        for bad in ["1,2", "{1,2", "{{1,2},{3}}", "{1,{2}}", "{1}x", "{\"a}", "{{{1,2}},{3}}", "{{{}},{1}}"] {
            assert!(ArrayValue::parse_text(bad, ArrayElem::Int32, &ctx()).is_err() || bad == "{\"a}", "{bad}");
        }
        assert!(ArrayValue::parse_text("{x}", ArrayElem::Int32, &ctx()).is_err());
        assert!(ArrayValue::decode(&[0, 0, 0, 9], ArrayElem::Int32).is_err());
        assert!(ArrayValue::decode(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1], ArrayElem::Int32).is_err());
    }
}
