//! jsonb operator kernels: `jsonb || jsonb` and `jsonb - text` /
//! `jsonb - integer`, over the normalized jsonb text the types layer stores.
//! Values are split into a small tree that keeps every scalar's text as it
//! is (numbers never pass through a float), edited, written back and
//! re-normalized by the jsonb input function.
//! Must not: define jsonb's text format (parse_text / format_text own it).

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{BytesColumn, Column};
use crate::exec::{EvalContext, Operand};
use crate::types::text::parse_text;
use crate::types::{DataType, Datum};

use super::common::{bytes, bytes_column, prim, Nulls};

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
        _ => Err(DbError::invalid_text("json", &String::from_utf8_lossy(s))),
    }
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
}
