//! jsonb operator kernels over the normalized jsonb text the types layer
//! stores. Editing (`jsonb || jsonb`, `jsonb - text`, `jsonb - integer`):
//! values are split into a small tree that keeps every scalar's text as it
//! is (numbers never pass through a float), edited, written back and
//! re-normalized by the jsonb input function. Reading (`->`, `->>`, `#>`,
//! `#>>`, `?`, `?|`, `?&`): the stored text is walked in place, without a
//! tree; a `->`/`#>` result is the member's slice of that text (already
//! normalized), a `->>`/`#>>` result is a string unescaped or any other
//! value's text, JSON null becoming SQL NULL.
//! Must not: define jsonb's text format (parse_text / format_text own it).

use std::borrow::Cow;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{Bitmap, BytesColumn, Column, ColumnData};
use crate::exec::{EvalContext, Operand};
use crate::types::array::{ArrayElem, ArrayValue};
use crate::types::text::parse_text;
use crate::types::{DataType, Datum};

use super::common::{bytes, bytes_column, prim, prim_column, BArg, Nulls};
use super::{BinaryOp, BinarySignature};

/// A JSON value with scalars kept as their source text.
#[derive(Debug, Clone, PartialEq)]
enum J {
    /// Members as (key as written, including quotes; value).
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Scalar(String),
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn string_end(&self, mut i: usize) -> Option<usize> {
        // self.s[i] is the opening quote.
        i += 1;
        while i < self.s.len() {
            match self.s[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    fn value(&mut self, depth: usize) -> Option<J> {
        if depth > 1000 {
            return None;
        }
        self.ws();
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Some(J::Obj(members));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return None;
                    }
                    let end = self.string_end(self.i)?;
                    let key = std::str::from_utf8(&self.s[self.i..end]).ok()?.to_string();
                    self.i = end;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return None;
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    members.push((key, v));
                    self.ws();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(J::Obj(members));
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Some(J::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(J::Arr(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                let end = self.string_end(self.i)?;
                let raw = std::str::from_utf8(&self.s[self.i..end]).ok()?.to_string();
                self.i = end;
                Some(J::Scalar(raw))
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && !matches!(
                        self.s[self.i],
                        b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
                if self.i == start {
                    return None;
                }
                Some(J::Scalar(
                    std::str::from_utf8(&self.s[start..self.i])
                        .ok()?
                        .to_string(),
                ))
            }
        }
    }
}

fn parse(s: &[u8]) -> DbResult<J> {
    let mut p = P { s, i: 0 };
    let v = p.value(0);
    p.ws();
    match v {
        Some(v) if p.i == s.len() => Ok(v),
        _ => Err(malformed(s)),
    }
}

/// A stored value that is not the JSON its type promises.
fn malformed(s: &[u8]) -> DbError {
    DbError::invalid_text("json", &String::from_utf8_lossy(s))
}

fn write(v: &J, out: &mut String) {
    match v {
        J::Scalar(s) => out.push_str(s),
        J::Arr(items) => {
            out.push('[');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write(it, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (k, (key, val)) in members.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push_str(": ");
                write(val, out);
            }
            out.push('}');
        }
    }
}

/// The text of a JSON string literal (quotes included), unescaped.
fn decode(raw: &str) -> String {
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    let mut pending_high: Option<u32> = None;
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let Ok(u) = u32::from_str_radix(&hex, 16) else {
                    continue;
                };
                if (0xD800..0xDC00).contains(&u) {
                    pending_high = Some(u);
                    continue;
                }
                let cp = match pending_high.take() {
                    Some(h) if (0xDC00..0xE000).contains(&u) => {
                        0x10000 + ((h - 0xD800) << 10) + (u - 0xDC00)
                    }
                    _ => u,
                };
                out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
            }
            Some(o) => out.push(o),
            None => {}
        }
    }
    out
}

fn is_string(v: &J) -> bool {
    matches!(v, J::Scalar(s) if s.starts_with('"'))
}

/// PostgreSQL's jsonb concatenation.
fn concat(l: J, r: J) -> J {
    match (l, r) {
        (J::Obj(mut a), J::Obj(b)) => {
            for (k, v) in b {
                let dk = decode(&k);
                a.retain(|(x, _)| decode(x) != dk);
                a.push((k, v));
            }
            J::Obj(a)
        }
        (J::Arr(mut a), J::Arr(b)) => {
            a.extend(b);
            J::Arr(a)
        }
        (J::Arr(mut a), b) => {
            a.push(b);
            J::Arr(a)
        }
        (a, J::Arr(b)) => {
            let mut v = vec![a];
            v.extend(b);
            J::Arr(v)
        }
        (a, b) => J::Arr(vec![a, b]),
    }
}

fn scalar_delete() -> DbError {
    DbError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        "cannot delete from scalar",
    )
}

fn delete_key(v: J, key: &str) -> DbResult<J> {
    match v {
        J::Obj(m) => Ok(J::Obj(
            m.into_iter().filter(|(k, _)| decode(k) != key).collect(),
        )),
        J::Arr(items) => Ok(J::Arr(
            items
                .into_iter()
                .filter(|it| !(is_string(it) && matches!(it, J::Scalar(s) if decode(s) == key)))
                .collect(),
        )),
        J::Scalar(_) => Err(scalar_delete()),
    }
}

fn delete_index(v: J, idx: i32) -> DbResult<J> {
    match v {
        J::Arr(mut items) => {
            let n = items.len() as i64;
            let i = if idx < 0 { n + idx as i64 } else { idx as i64 };
            if (0..n).contains(&i) {
                items.remove(i as usize);
            }
            Ok(J::Arr(items))
        }
        J::Obj(_) => Err(DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "cannot delete from object using integer index",
        )),
        J::Scalar(_) => Err(scalar_delete()),
    }
}

fn normalized(v: &J, ctx: &EvalContext, out: &mut BytesColumn) -> DbResult<()> {
    let mut text = String::new();
    write(v, &mut text);
    match parse_text(DataType::Jsonb, &text, &ctx.format)? {
        Datum::Bytes(b) => out.push(&b),
        _ => out.push(text.as_bytes()),
    }
    Ok(())
}

/// `jsonb || jsonb`.
pub(crate) fn jsonb_concat(
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let (x, y) = (bytes(a, len)?, bytes(b, len)?);
    let mut out = BytesColumn::with_capacity(len, len * 16);
    for i in 0..len {
        if !nulls.is_valid(i) {
            out.push(b"");
            continue;
        }
        let merged = concat(parse(x.get(i))?, parse(y.get(i))?);
        normalized(&merged, ctx, &mut out)?;
    }
    Ok(bytes_column(DataType::Jsonb, out, nulls))
}

/// `jsonb - text` (key or string element) and `jsonb - integer` (array index).
pub(crate) fn jsonb_delete(
    right: DataType,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let x = bytes(a, len)?;
    let mut out = BytesColumn::with_capacity(len, len * 16);
    if right == DataType::Int32 {
        let idx = prim::<i32>(b, len)?;
        for i in 0..len {
            if !nulls.is_valid(i) {
                out.push(b"");
                continue;
            }
            normalized(&delete_index(parse(x.get(i))?, idx.get(i))?, ctx, &mut out)?;
        }
    } else {
        let key = bytes(b, len)?;
        for i in 0..len {
            if !nulls.is_valid(i) {
                out.push(b"");
                continue;
            }
            normalized(
                &delete_key(parse(x.get(i))?, key.get_str(i))?,
                ctx,
                &mut out,
            )?;
        }
    }
    Ok(bytes_column(DataType::Jsonb, out, nulls))
}

// ---------------------------------------------------------------- field and path access

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while matches!(s.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// End (exclusive) of the string literal whose opening quote is at `i`.
fn string_end(s: &[u8], mut i: usize) -> DbResult<usize> {
    if s.get(i) != Some(&b'"') {
        return Err(malformed(s));
    }
    i += 1;
    while let Some(&c) = s.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err(malformed(s))
}

/// End (exclusive) of the value that starts at `i`: a string, a container
/// (brackets counted outside strings, no recursion) or a bare scalar.
fn value_end(s: &[u8], i: usize) -> DbResult<usize> {
    match s.get(i) {
        None => Err(malformed(s)),
        Some(b'"') => string_end(s, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut k = i;
            while let Some(&c) = s.get(k) {
                match c {
                    b'"' => {
                        k = string_end(s, k)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(k + 1);
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            Err(malformed(s))
        }
        Some(_) => {
            let mut k = i;
            while !matches!(
                s.get(k),
                None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                k += 1;
            }
            Ok(k)
        }
    }
}

/// The members of an object (key with its quotes, value) or the elements of
/// an array (empty key, value), read from the stored text in place.
struct Items<'a> {
    s: &'a [u8],
    i: usize,
    object: bool,
    done: bool,
}

impl<'a> Items<'a> {
    /// Over `v`, an object or array (its opening bracket first).
    fn of(v: &'a [u8]) -> Items<'a> {
        Items {
            s: v,
            i: 1,
            object: v.first() == Some(&b'{'),
            done: false,
        }
    }

    fn step(&mut self) -> DbResult<Option<(&'a [u8], &'a [u8])>> {
        let s = self.s;
        let mut i = skip_ws(s, self.i);
        if matches!(s.get(i), Some(b'}' | b']')) {
            return Ok(None);
        }
        let mut key: &'a [u8] = &[];
        if self.object {
            let end = string_end(s, i)?;
            key = &s[i..end];
            i = skip_ws(s, end);
            if s.get(i) != Some(&b':') {
                return Err(malformed(s));
            }
            i = skip_ws(s, i + 1);
        }
        let end = value_end(s, i)?;
        let value = &s[i..end];
        i = skip_ws(s, end);
        match s.get(i) {
            Some(b',') => i += 1,
            Some(b'}' | b']') => {}
            _ => return Err(malformed(s)),
        }
        self.i = i;
        Ok(Some((key, value)))
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = DbResult<(&'a [u8], &'a [u8])>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step().transpose();
        self.done = !matches!(r, Some(Ok(_)));
        r
    }
}

/// What a stored value is, by its first byte.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Object,
    Array,
    String,
    Null,
    /// A number or a boolean.
    Other,
}

fn kind(v: &[u8]) -> Kind {
    match v.first() {
        Some(b'{') => Kind::Object,
        Some(b'[') => Kind::Array,
        Some(b'"') => Kind::String,
        Some(b'n') => Kind::Null,
        _ => Kind::Other,
    }
}

/// The text of a string literal (quotes included), unescaped; borrowed when it has no escapes.
fn unquoted(raw: &[u8]) -> Cow<'_, [u8]> {
    let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or(&[]);
    if !inner.contains(&b'\\') {
        return Cow::Borrowed(inner);
    }
    Cow::Owned(decode(&String::from_utf8_lossy(raw)).into_bytes())
}

/// Is the string literal `raw` (quotes included) the text `key`?
fn string_is(raw: &[u8], key: &[u8]) -> bool {
    *unquoted(raw) == *key
}

/// `v -> key`: the member's value; None when `v` is no object or lacks the key.
fn field<'a>(v: &'a [u8], key: &[u8]) -> DbResult<Option<&'a [u8]>> {
    if kind(v) != Kind::Object {
        return Ok(None);
    }
    for item in Items::of(v) {
        let (k, value) = item?;
        if string_is(k, key) {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// Element `idx` of an array (a negative index counts from the end); None
/// when `v` is no array or the index is outside it.
fn element(v: &[u8], idx: i64) -> DbResult<Option<&[u8]>> {
    if kind(v) != Kind::Array {
        return Ok(None);
    }
    let idx = if idx < 0 {
        let mut n = 0i64;
        for item in Items::of(v) {
            item?;
            n += 1;
        }
        idx + n
    } else {
        idx
    };
    if idx < 0 {
        return Ok(None);
    }
    Items::of(v)
        .nth(idx as usize)
        .transpose()
        .map(|found| found.map(|(_, value)| value))
}

/// `jsonb -> integer` on a whole value: a scalar at the top level counts as
/// a one-element array (PostgreSQL stores it as one), so `'"s"' -> 0` is `"s"`.
fn top_element(v: &[u8], idx: i32) -> DbResult<Option<&[u8]>> {
    match kind(v) {
        Kind::Object => Ok(None),
        Kind::Array => element(v, idx as i64),
        _ => Ok((idx == 0 || idx == -1).then_some(v)),
    }
}

/// A path step as an array index, read as C's strtol does (leading white
/// space, a sign, decimal digits to the end, within int4); None otherwise.
fn path_index(step: &[u8]) -> Option<i64> {
    let t = step
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .map_or(&[][..], |k| &step[k..]);
    let (negative, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        n = n.checked_mul(10)?.checked_add((d - b'0') as i64)?;
        if n > 1 << 31 {
            return None;
        }
    }
    let n = if negative { -n } else { n };
    i32::try_from(n).ok().map(i64::from)
}

/// `v #> path` (PostgreSQL's jsonb_get_element): objects take a step as a
/// key, arrays as an index; a scalar, a missing member or a step that is
/// not an index of an array ends in None. An empty path is `v` itself.
fn walk<'a>(v: &'a [u8], path: &[Option<Vec<u8>>]) -> DbResult<Option<&'a [u8]>> {
    let mut cur = v;
    for step in path {
        let Some(step) = step else { return Ok(None) };
        let next = match kind(cur) {
            Kind::Object => field(cur, step)?,
            Kind::Array => match path_index(step) {
                Some(i) => element(cur, i)?,
                None => None,
            },
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

/// `?`: an object's key, a string element of an array, or the string itself at the top level.
fn exists(v: &[u8], key: &[u8]) -> DbResult<bool> {
    match kind(v) {
        Kind::Object => Ok(field(v, key)?.is_some()),
        Kind::Array => {
            for item in Items::of(v) {
                let (_, e) = item?;
                if kind(e) == Kind::String && string_is(e, key) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Kind::String => Ok(string_is(v, key)),
        _ => Ok(false),
    }
}

/// The elements of a text[] value, None for a NULL element.
fn text_array(b: &[u8]) -> DbResult<Vec<Option<Vec<u8>>>> {
    Ok(ArrayValue::decode(b, ArrayElem::Text)?
        .elems
        .into_iter()
        .map(|d| match d {
            Datum::Bytes(b) => Some(b),
            _ => None,
        })
        .collect())
}

/// A text[] operand: decoded once when it is a constant, per row otherwise.
struct TextArrays<'a> {
    arg: BArg<'a>,
    constant: Option<Vec<Option<Vec<u8>>>>,
}

impl<'a> TextArrays<'a> {
    fn new(op: Operand<'a>, len: usize) -> DbResult<TextArrays<'a>> {
        let arg = bytes(op, len)?;
        let constant = match (arg, op) {
            (BArg::Const(b), Operand::Scalar(d, _)) if !d.is_null() => Some(text_array(b)?),
            _ => None,
        };
        Ok(TextArrays { arg, constant })
    }

    fn get(&self, i: usize) -> DbResult<Cow<'_, [Option<Vec<u8>>]>> {
        Ok(match &self.constant {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(text_array(self.arg.get(i))?),
        })
    }
}

/// `->`, `->>`, `#>`, `#>>` over a batch: `pick` finds the result's slice of
/// row i's value (None: SQL NULL). For the text forms a string is unescaped
/// and JSON null is SQL NULL.
fn extract<'a>(
    docs: BArg<'a>,
    len: usize,
    nulls: &Nulls,
    as_text: bool,
    mut pick: impl FnMut(&'a [u8], usize) -> DbResult<Option<&'a [u8]>>,
) -> DbResult<Column> {
    let mut out = BytesColumn::with_capacity(len, len * 8);
    let mut valid = Bitmap::new_set(len);
    for i in 0..len {
        let found = if nulls.is_valid(i) {
            pick(docs.get(i), i)?
        } else {
            None
        };
        match found {
            Some(v) if !as_text => out.push(v),
            Some(v) if kind(v) == Kind::String => out.push(&unquoted(v)),
            Some(v) if kind(v) != Kind::Null => out.push(v),
            _ => {
                out.push(b"");
                valid.unset(i);
            }
        }
    }
    let ty = if as_text { DataType::Text } else { DataType::Jsonb };
    let validity = (!valid.all_set()).then_some(valid);
    Ok(Column::new(ty, ColumnData::Bytes(out), validity))
}

/// `?|` (any of `keys` exists) or `?&` (all do); NULL keys are skipped.
fn exists_among(v: &[u8], keys: &[Option<Vec<u8>>], all: bool) -> DbResult<bool> {
    for key in keys.iter().flatten() {
        if exists(v, key)? != all {
            return Ok(!all);
        }
    }
    Ok(all)
}

/// `?`, `?|`, `?&` over a batch: `test` answers for row i's value.
fn test_rows<'a>(
    docs: BArg<'a>,
    len: usize,
    nulls: Nulls,
    mut test: impl FnMut(&'a [u8], usize) -> DbResult<bool>,
) -> DbResult<Column> {
    let mut out = vec![false; len];
    for (i, o) in out.iter_mut().enumerate() {
        *o = nulls.is_valid(i) && test(docs.get(i), i)?;
    }
    Ok(prim_column(DataType::Bool, out, nulls))
}

/// `jsonb -> text|integer`, `jsonb ->> text|integer`, `jsonb #> text[]`,
/// `jsonb #>> text[]`, `jsonb ? text`, `jsonb ?| text[]`, `jsonb ?& text[]`.
pub(crate) fn jsonb_access(
    sig: &BinarySignature,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    let docs = bytes(a, len)?;
    let as_text = matches!(sig.op, BinaryOp::JsonGetText | BinaryOp::JsonPathText);
    match sig.op {
        BinaryOp::JsonExists => {
            let keys = bytes(b, len)?;
            test_rows(docs, len, nulls, |v, i| exists(v, keys.get(i)))
        }
        BinaryOp::JsonExistsAny | BinaryOp::JsonExistsAll => {
            let all = sig.op == BinaryOp::JsonExistsAll;
            let keys = TextArrays::new(b, len)?;
            test_rows(docs, len, nulls, |v, i| exists_among(v, &keys.get(i)?, all))
        }
        BinaryOp::JsonPath | BinaryOp::JsonPathText => {
            let paths = TextArrays::new(b, len)?;
            extract(docs, len, &nulls, as_text, |v, i| walk(v, &paths.get(i)?))
        }
        _ if sig.right == DataType::Int32 => {
            let idx = prim::<i32>(b, len)?;
            extract(docs, len, &nulls, as_text, |v, i| top_element(v, idx.get(i)))
        }
        _ => {
            let keys = bytes(b, len)?;
            extract(docs, len, &nulls, as_text, |v, i| field(v, keys.get(i)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::eval_bin;
    use super::super::BinaryOp;
    use super::*;

    fn j(s: &str) -> (Datum, DataType) {
        (Datum::text(s), DataType::Jsonb)
    }
    fn s(d: Datum) -> String {
        d.as_str().unwrap_or("<?>").to_string()
    }

    #[test]
    fn concat_and_delete_as_postgres() {
        let r = eval_bin(
            BinaryOp::Concat,
            j("{\"a\": 1.50, \"b\": 2}"),
            j("{\"b\": 12345678901234567890}"),
        )
        .unwrap();
        assert_eq!(s(r), "{\"a\": 1.50, \"b\": 12345678901234567890}");
        assert_eq!(
            s(eval_bin(BinaryOp::Concat, j("[1, 2]"), j("[3]")).unwrap()),
            "[1, 2, 3]"
        );
        assert_eq!(
            s(eval_bin(BinaryOp::Concat, j("[1]"), j("{\"a\": 1}")).unwrap()),
            "[1, {\"a\": 1}]"
        );
        assert_eq!(
            s(eval_bin(BinaryOp::Concat, j("1"), j("\"x\"")).unwrap()),
            "[1, \"x\"]"
        );
        let r = eval_bin(
            BinaryOp::Minus,
            j("{\"a\": 1, \"b\": 2}"),
            (Datum::text("a"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(s(r), "{\"b\": 2}");
        let r = eval_bin(
            BinaryOp::Minus,
            j("[\"a\", \"b\", 1]"),
            (Datum::text("a"), DataType::Text),
        )
        .unwrap();
        assert_eq!(s(r), "[\"b\", 1]");
        let r = eval_bin(
            BinaryOp::Minus,
            j("[1, 2, 3]"),
            (Datum::Int32(-1), DataType::Int32),
        )
        .unwrap();
        assert_eq!(s(r), "[1, 2]");
        let e = eval_bin(
            BinaryOp::Minus,
            j("{\"a\": 1}"),
            (Datum::Int32(0), DataType::Int32),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22023", "cannot delete from object using integer index")
        );
        let e = eval_bin(BinaryOp::Minus, j("5"), (Datum::text("a"), DataType::Text)).unwrap_err();
        assert_eq!(e.message, "cannot delete from scalar");
        assert_eq!(decode("\"a\\u00e9\\n\""), "aé\n");
    }

    fn path(steps: &[&str]) -> Vec<Option<Vec<u8>>> {
        steps.iter().map(|s| Some(s.as_bytes().to_vec())).collect()
    }
    fn found(r: DbResult<Option<&[u8]>>) -> Option<String> {
        r.unwrap().map(|v| String::from_utf8_lossy(v).into_owned())
    }

    #[test]
    fn path_walk_finds_members_and_elements() {
        let doc = br#"{"a": [1, {"c": true, "d": "x,]}"}], "b": {"e": null}, "\"q": 2}"#;
        assert_eq!(found(walk(doc, &path(&["a", "1", "c"]))).as_deref(), Some("true"));
        assert_eq!(
            found(walk(doc, &path(&["a", "1"]))).as_deref(),
            Some(r#"{"c": true, "d": "x,]}"}"#)
        );
        assert_eq!(found(walk(doc, &path(&["a", "-1", "d"]))).as_deref(), Some(r#""x,]}""#));
        assert_eq!(found(walk(doc, &path(&["a", "-2"]))).as_deref(), Some("1"));
        assert_eq!(found(walk(doc, &path(&["a", "-3"]))), None);
        assert_eq!(found(walk(doc, &path(&["a", "2"]))), None);
        assert_eq!(found(walk(doc, &path(&["a", "x"]))), None);
        assert_eq!(found(walk(doc, &path(&["a", " +0"]))).as_deref(), Some("1"));
        assert_eq!(found(walk(doc, &path(&["a", "0", "z"]))), None);
        assert_eq!(found(walk(doc, &path(&["b", "e"]))).as_deref(), Some("null"));
        assert_eq!(found(walk(doc, &path(&["b", "f"]))), None);
        // Keys compare unescaped.
        assert_eq!(found(walk(doc, &path(&["\"q"]))).as_deref(), Some("2"));
        assert_eq!(found(walk(doc, &path(&[]))).map(|s| s.len()), Some(doc.len()));
        // A NULL step, or any step into a scalar, finds nothing.
        assert_eq!(found(walk(doc, &[Some(b"a".to_vec()), None])), None);
        assert_eq!(found(walk(b"\"s\"", &path(&["0"]))), None);
        // Nested containers and escaped quotes inside strings are skipped whole.
        let deep = br#"[[1, [2, "]\"["]], {"k": [3]}, 4]"#;
        assert_eq!(found(element(deep, 2)).as_deref(), Some("4"));
        assert_eq!(found(element(deep, -3)).as_deref(), Some(r#"[1, [2, "]\"["]]"#));
        assert_eq!(found(element(b"[]", 0)), None);
        assert_eq!(found(element(b"[]", -1)), None);
        assert_eq!(found(field(b"{}", b"a")), None);
        // A scalar is a one-element array for `->` by index only.
        assert_eq!(found(top_element(b"\"s\"", 0)).as_deref(), Some("\"s\""));
        assert_eq!(found(top_element(b"\"s\"", -1)).as_deref(), Some("\"s\""));
        assert_eq!(found(top_element(b"\"s\"", 1)), None);
        assert_eq!(found(top_element(b"{\"a\": 1}", 0)), None);
        // Damaged text is an error, never a panic.
        assert!(walk(br#"{"a": [1, 2"#, &path(&["a", "1"])).is_err());
        assert!(walk(br#"{"a"#, &path(&["a"])).is_err());
    }

    #[test]
    fn path_steps_read_as_strtol() {
        assert_eq!(path_index(b"12"), Some(12));
        assert_eq!(path_index(b"-1"), Some(-1));
        assert_eq!(path_index(b" \t+7"), Some(7));
        assert_eq!(path_index(b"2147483647"), Some(2147483647));
        assert_eq!(path_index(b"-2147483648"), Some(-2147483648));
        assert_eq!(path_index(b"2147483648"), None);
        assert_eq!(path_index(b"99999999999999999999999"), None);
        assert_eq!(path_index(b""), None);
        assert_eq!(path_index(b"-"), None);
        assert_eq!(path_index(b"1 "), None);
        assert_eq!(path_index(b"0x1"), None);
    }

    #[test]
    fn field_and_path_operators_as_postgres() {
        let text = |v: &str| (Datum::text(v), DataType::Unknown);
        let get = |op, doc: &str, k: (Datum, DataType)| eval_bin(op, j(doc), k).unwrap();
        let int = |n: i32| (Datum::Int32(n), DataType::Int32);
        assert_eq!(s(get(BinaryOp::JsonGet, r#"{"a": {"b": "x"}}"#, text("a"))), r#"{"b": "x"}"#);
        assert_eq!(s(get(BinaryOp::JsonGetText, r#"{"a": {"b": "x\"y"}}"#, text("a"))), r#"{"b": "x\"y"}"#);
        assert_eq!(s(get(BinaryOp::JsonGetText, r#"{"b": "x\"y\u00e9"}"#, text("b"))), "x\"yé");
        assert_eq!(s(get(BinaryOp::JsonGet, "[1, 2, 3]", int(1))), "2");
        assert_eq!(s(get(BinaryOp::JsonGet, "[1, 2, 3]", int(-1))), "3");
        assert_eq!(get(BinaryOp::JsonGetText, "[1, 2, 3]", int(5)), Datum::Null);
        assert_eq!(get(BinaryOp::JsonGetText, r#"{"a": null}"#, text("a")), Datum::Null);
        assert_eq!(s(get(BinaryOp::JsonGet, r#"{"a": null}"#, text("a"))), "null");
        assert_eq!(get(BinaryOp::JsonGetText, r#""s""#, text("a")), Datum::Null);
        assert_eq!(s(get(BinaryOp::JsonGetText, r#""s""#, int(0))), "s");
        assert_eq!(s(get(BinaryOp::JsonGetText, "[1.50]", int(0))), "1.50");
        let p = |v: &str| (Datum::text(v), DataType::Unknown);
        assert_eq!(s(get(BinaryOp::JsonPath, r#"{"a": [1, {"c": true}]}"#, p("{a,1,c}"))), "true");
        assert_eq!(
            s(get(BinaryOp::JsonPathText, r#"{"a": [1, {"c": true}]}"#, p("{a,1}"))),
            r#"{"c": true}"#
        );
        assert_eq!(get(BinaryOp::JsonPathText, r#"{"a": [1]}"#, p("{a,NULL}")), Datum::Null);
        assert_eq!(s(get(BinaryOp::JsonPathText, r#""s""#, p("{}"))), "s");
        assert_eq!(get(BinaryOp::JsonPathText, "null", p("{}")), Datum::Null);
        let has = |op, doc: &str, k: &str| get(op, doc, text(k));
        assert_eq!(has(BinaryOp::JsonExists, r#"{"a": 1}"#, "a"), Datum::Bool(true));
        assert_eq!(has(BinaryOp::JsonExists, r#"["a", 1]"#, "a"), Datum::Bool(true));
        assert_eq!(has(BinaryOp::JsonExists, "[1]", "1"), Datum::Bool(false));
        assert_eq!(has(BinaryOp::JsonExists, r#""foo""#, "foo"), Datum::Bool(true));
        assert_eq!(has(BinaryOp::JsonExistsAny, r#"{"a": 1}"#, "{b,a}"), Datum::Bool(true));
        assert_eq!(has(BinaryOp::JsonExistsAll, r#"{"a": 1}"#, "{b,a}"), Datum::Bool(false));
        assert_eq!(has(BinaryOp::JsonExistsAll, r#"{"a": 1}"#, "{a,NULL}"), Datum::Bool(true));
        assert_eq!(has(BinaryOp::JsonExistsAll, r#"{"a": 1}"#, "{}"), Datum::Bool(true));
        assert_eq!(has(BinaryOp::JsonExistsAny, r#"{"a": 1}"#, "{}"), Datum::Bool(false));
        let e = eval_bin(BinaryOp::JsonGet, j("{}"), (Datum::Bool(true), DataType::Bool)).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42883", "operator does not exist: jsonb -> boolean")
        );
        let e = eval_bin(BinaryOp::JsonGet, text("{}"), text("a")).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42725", "operator is not unique: unknown -> unknown")
        );
    }
}
