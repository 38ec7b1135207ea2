//! Arrays (`integer[]`, `text[]`, `double precision[][]`, …): their element
//! types, and their values. A value is held as PostgreSQL's binary array
//! format (ndim, has-nulls flag, element OID, per dimension its length and
//! lower bound 1, then each element as a length — -1 for NULL — and its
//! binary encoding), which is also what the binary wire format sends; the
//! text form is `{1,2,NULL}` with PostgreSQL's quoting.
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

impl ArrayElem {
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

fn malformed(what: &str) -> DbError {
    DbError::new(sqlstate::INVALID_BINARY_REPRESENTATION, format!("malformed array: {what}"))
}

impl ArrayValue {
    /// A one-dimensional array of `elems`.
    pub fn of(elems: Vec<Datum>) -> ArrayValue {
        let dims = if elems.is_empty() { vec![] } else { vec![elems.len()] };
        ArrayValue { dims, elems }
    }

    /// PostgreSQL's binary array format.
    pub fn encode(&self, elem: ArrayElem) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + self.elems.len() * 8);
        out.extend_from_slice(&(self.dims.len() as i32).to_be_bytes());
        out.extend_from_slice(&(self.elems.iter().any(|e| e.is_null()) as i32).to_be_bytes());
        out.extend_from_slice(&(elem.data_type().oid() as i32).to_be_bytes());
        for d in &self.dims {
            out.extend_from_slice(&(*d as i32).to_be_bytes());
            out.extend_from_slice(&1i32.to_be_bytes());
        }
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

    /// Reads PostgreSQL's binary array format (as held and as clients send it).
    pub fn decode(bytes: &[u8], elem: ArrayElem) -> DbResult<ArrayValue> {
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
        let _has_nulls = word!("flags")?;
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
        if ndim == 0 {
            count = 0;
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
        let s: Vec<char> = input.trim().chars().collect();
        if s.first() != Some(&'{') {
            return Err(bad("Array value must start with \"{\" or dimension information."));
        }
        let mut p = TextParser { s: &s, pos: 0, items: Vec::new(), dims: Vec::new(), leaf_depth: None };
        p.level(0).map_err(|d| bad(&d))?;
        if p.s[p.pos..].iter().any(|c| !c.is_whitespace()) {
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
            || text.iter().any(|&c| matches!(c, b'{' | b'}' | b',' | b'"' | b'\\' | b' ' | b'\t' | b'\n' | b'\r'));
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
        while self.pos < self.s.len() && self.s[self.pos].is_whitespace() {
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

    /// A quoted or bare element; bare `NULL` (any case) is NULL.
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
        while let Some(&c) = self.s.get(self.pos) {
            match c {
                ',' | '}' => break,
                '{' | '"' => return Err(format!("Unexpected \"{c}\" character.")),
                '\\' => {
                    self.pos += 1;
                    let n = *self.s.get(self.pos).ok_or("Unexpected end of input.")?;
                    text.push(n);
                }
                _ => text.push(c),
            }
            self.pos += 1;
        }
        let text = text.trim_end().to_string();
        if text.eq_ignore_ascii_case("NULL") {
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
