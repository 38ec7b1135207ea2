//! Anonymous composite values (`ROW(1, 'a b', NULL)`, type `record`): held in
//! PostgreSQL's binary record format (the field count, then per field its
//! type OID and length — -1 for NULL — and binary value), which the binary
//! wire format sends as is; the text form is `(1,"a b",)`.
//! Must not: name fields (anonymous records have none).

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::binary::{decode_binary, encode_binary};
use crate::types::text::format_text;
use crate::types::{DataType, Datum, FormatContext};

fn malformed() -> DbError {
    DbError::new(sqlstate::INVALID_BINARY_REPRESENTATION, "malformed record")
}

/// A record of `fields` (type and value each).
pub fn encode(fields: &[(DataType, Datum)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(fields.len() as i32).to_be_bytes());
    let mut buf = Vec::new();
    for (t, v) in fields {
        out.extend_from_slice(&(t.oid() as i32).to_be_bytes());
        if v.is_null() {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        buf.clear();
        encode_binary(*t, v, &mut buf);
        out.extend_from_slice(&(buf.len() as i32).to_be_bytes());
        out.extend_from_slice(&buf);
    }
    out
}

/// The fields of a record in binary form.
pub fn decode(bytes: &[u8]) -> DbResult<Vec<(DataType, Datum)>> {
    let mut pos = 0;
    let word = |pos: &mut usize| -> DbResult<i32> {
        let b = bytes.get(*pos..*pos + 4).ok_or_else(malformed)?;
        *pos += 4;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let n = word(&mut pos)?;
    if n < 0 || n as usize > bytes.len() {
        return Err(malformed());
    }
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let oid = word(&mut pos)? as u32;
        // A record inside a record would recurse without bound: refused.
        let t = DataType::from_oid(oid).filter(|t| *t != DataType::Record).ok_or_else(malformed)?;
        let len = word(&mut pos)?;
        if len < 0 {
            out.push((t, Datum::Null));
            continue;
        }
        let b = bytes.get(pos..pos + len as usize).ok_or_else(malformed)?;
        pos += len as usize;
        out.push((t, decode_binary(t, b)?));
    }
    Ok(out)
}

/// PostgreSQL's record_out: `(1,"a b",)`; a field is quoted when empty or
/// holding a quote, backslash, parenthesis, comma or blank.
pub fn format(bytes: &[u8], ctx: &FormatContext, out: &mut Vec<u8>) {
    let Ok(fields) = decode(bytes) else {
        out.extend_from_slice(b"()");
        return;
    };
    out.push(b'(');
    for (i, (t, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if v.is_null() {
            continue;
        }
        let mut text = Vec::new();
        format_text(*t, v, ctx, &mut text);
        let quote = text.is_empty()
            // isspace(): ASCII whitespace and the vertical tab.
            || text.iter().any(|&c| matches!(c, b'"' | b'\\' | b'(' | b')' | b',' | b'\x0b') || c.is_ascii_whitespace());
        if !quote {
            out.extend_from_slice(&text);
            continue;
        }
        out.push(b'"');
        for &c in &text {
            if c == b'"' || c == b'\\' {
                out.push(c);
            }
            out.push(c);
        }
        out.push(b'"');
    }
    out.push(b')');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_print_as_postgresql_does() {
        let r = encode(&[(DataType::Int32, Datum::Int32(1)), (DataType::Text, Datum::text("a b")), (DataType::Text, Datum::Null)]);
        let mut out = Vec::new();
        format(&r, &FormatContext::default(), &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "(1,\"a b\",)");
        assert_eq!(decode(&r).unwrap().len(), 3);
        assert!(decode(&r[..r.len() - 1]).is_err());
    }
}
