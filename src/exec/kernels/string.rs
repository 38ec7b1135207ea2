//! String kernels: the `||` operator (text, bytea, jsonb) and the string
//! functions (lower, upper, initcap, length & co., substr, trim family,
//! replace, strpos, left, right, repeat, reverse, lpad, rpad, starts_with,
//! split_part, translate, md5, chr, ascii, to_hex, quote_ident,
//! quote_literal, concat, concat_ws) with PostgreSQL 15's semantics on
//! UTF-8 text (positions and lengths count characters; bytea counts bytes).
//! Case mapping is Unicode's (a UTF-8 locale's, not the C locale's ASCII-only one).
//! Must not: format non-text values itself (concat uses `format_text`, the
//! types' output functions), or allocate per row where a reused buffer does.

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{BytesColumn, Column};
use crate::exec::{EvalContext, Operand};
use crate::types::text::format_text;
use crate::types::DataType;

use super::cast::{char_count, char_prefix_len};
use super::common::{bytes, bytes_column, prim, prim_column, Arg, BArg, Nulls};
use super::compare::rtrim_blanks;
use super::BinarySignature;

/// 1 GB, PostgreSQL's limit on one value.
const MAX_VALUE_BYTES: usize = 1 << 30;

fn too_large() -> DbError {
    DbError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        "requested length too large",
    )
}

/// `a || b` for text, bytea and jsonb.
pub(crate) fn concat_op(
    sig: &BinarySignature,
    a: Operand,
    b: Operand,
    len: usize,
    nulls: Nulls,
    ctx: &EvalContext,
) -> DbResult<Column> {
    if sig.result == DataType::Jsonb {
        return super::jsonb::jsonb_concat(a, b, len, nulls, ctx);
    }
    // `anynonarray || text`: the other side becomes text through its cast to
    // text (so `'a' || true` is 'atrue', as in PostgreSQL).
    fn to_text<'a>(
        op: Operand<'a>,
        t: DataType,
        result: DataType,
        ctx: &EvalContext,
    ) -> DbResult<super::common::Held<'a>> {
        let target = if result == DataType::Bytea || t.is_string() {
            t
        } else {
            DataType::Text
        };
        super::common::Held::coerce(op, target, ctx)
    }
    let (ha, hb) = (
        to_text(a, sig.left, sig.result, ctx)?,
        to_text(b, sig.right, sig.result, ctx)?,
    );
    let (x, y) = (bytes(ha.operand(), len)?, bytes(hb.operand(), len)?);
    let mut out = BytesColumn::with_capacity(len, len * 16);
    match (x, y) {
        (BArg::Col(c), BArg::Const(s)) => {
            for i in 0..len {
                out.data.extend_from_slice(c.get(i));
                out.data.extend_from_slice(s);
                out.offsets.push(out.data.len() as u32);
            }
        }
        (x, y) => {
            for i in 0..len {
                out.data.extend_from_slice(x.get(i));
                out.data.extend_from_slice(y.get(i));
                out.offsets.push(out.data.len() as u32);
            }
        }
    }
    if out.data.len() > u32::MAX as usize {
        return Err(too_large());
    }
    Ok(bytes_column(sig.result, out, nulls))
}

// ---------------------------------------------------------------- helpers

/// Builds a text column row by row; `f` is only called on valid rows and
/// appends the row's value to the buffer.
pub(crate) fn build_bytes(
    ty: DataType,
    len: usize,
    nulls: Nulls,
    mut f: impl FnMut(usize, &mut Vec<u8>) -> DbResult<()>,
) -> DbResult<Column> {
    let mut out = BytesColumn::with_capacity(len, len * 8);
    for i in 0..len {
        if nulls.is_valid(i) {
            f(i, &mut out.data)?;
            if out.data.len() >= u32::MAX as usize {
                return Err(too_large());
            }
        }
        out.offsets.push(out.data.len() as u32);
    }
    Ok(bytes_column(ty, out, nulls))
}

fn build_prim<T: super::common::Prim>(
    ty: DataType,
    len: usize,
    nulls: Nulls,
    mut f: impl FnMut(usize) -> DbResult<T>,
) -> DbResult<Column> {
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        out.push(if nulls.is_valid(i) {
            f(i)?
        } else {
            T::default()
        });
    }
    Ok(prim_column(ty, out, nulls))
}

fn i32_arg<'a>(op: Operand<'a>, len: usize) -> DbResult<Arg<'a, i32>> {
    prim::<i32>(op, len)
}

/// The characters of `s` from 1-based character `from` (inclusive) to `to`
/// (exclusive), clamped to the string.
fn char_slice(s: &str, from: i64, to: Option<i64>) -> &str {
    let start = from.max(1) as usize - 1;
    let mut it = s.char_indices();
    let b0 = match it.nth(start) {
        Some((b, _)) => b,
        None => return "",
    };
    match to {
        None => &s[b0..],
        Some(e) => {
            let n = (e - 1) as usize - start;
            let rest = &s[b0..];
            let cut = rest.char_indices().nth(n).map_or(rest.len(), |(b, _)| b);
            &rest[..cut]
        }
    }
}

/// PostgreSQL's substring start/length rules: returns (from, exclusive end) in
/// 1-based positions, or None for the empty result; 22011 on a negative length.
fn substr_bounds(start: i64, count: Option<i64>) -> DbResult<Option<(i64, Option<i64>)>> {
    match count {
        None => Ok(Some((start, None))),
        Some(c) if c < 0 => Err(DbError::new(
            "22011",
            "negative substring length not allowed",
        )),
        Some(c) => {
            let end = start + c;
            if end <= 1 || end <= start.max(1) {
                Ok(None)
            } else {
                Ok(Some((start, Some(end))))
            }
        }
    }
}

// ---------------------------------------------------------------- functions

/// Text functions by name; `ty` are the resolved argument types.
pub(crate) fn eval_string(
    func: super::ScalarFunction,
    types: &[DataType],
    args: &[Operand],
    len: usize,
    nulls: Nulls,
) -> DbResult<Column> {
    use super::ScalarFunction as F;
    let t = DataType::Text;
    let s = || bytes(args[0], len);
    let bytea = types.first() == Some(&DataType::Bytea);
    let bpchar = matches!(types.first(), Some(DataType::Bpchar(_)));
    match func {
        F::Lower => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                let v = a.get_str(i);
                if v.is_ascii() {
                    o.extend(v.bytes().map(|b| b.to_ascii_lowercase()));
                } else {
                    o.extend_from_slice(v.to_lowercase().as_bytes());
                }
                Ok(())
            })
        }
        F::Upper => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                let v = a.get_str(i);
                if v.is_ascii() {
                    o.extend(v.bytes().map(|b| b.to_ascii_uppercase()));
                } else {
                    o.extend_from_slice(v.to_uppercase().as_bytes());
                }
                Ok(())
            })
        }
        F::Initcap => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                let mut prev_alnum = false;
                let mut tmp = [0u8; 4];
                for c in a.get_str(i).chars() {
                    if prev_alnum {
                        for l in c.to_lowercase() {
                            o.extend_from_slice(l.encode_utf8(&mut tmp).as_bytes());
                        }
                    } else {
                        for u in c.to_uppercase() {
                            o.extend_from_slice(u.encode_utf8(&mut tmp).as_bytes());
                        }
                    }
                    prev_alnum = c.is_alphanumeric();
                }
                Ok(())
            })
        }
        F::CharLength => {
            let a = s()?;
            build_prim(DataType::Int32, len, nulls, |i| {
                let v = a.get(i);
                Ok(if bytea {
                    v.len() as i32
                } else if bpchar {
                    char_count(rtrim_blanks(v)) as i32
                } else {
                    char_count(v) as i32
                })
            })
        }
        F::OctetLength => {
            let a = s()?;
            build_prim(DataType::Int32, len, nulls, |i| Ok(a.get(i).len() as i32))
        }
        F::BitLength => {
            let a = s()?;
            build_prim(DataType::Int32, len, nulls, |i| {
                Ok(a.get(i).len() as i32 * 8)
            })
        }
        F::Substr => {
            let a = s()?;
            let from = i32_arg(args[1], len)?;
            let count = match args.get(2) {
                Some(c) => Some(i32_arg(*c, len)?),
                None => None,
            };
            build_bytes(types[0], len, nulls, |i, o| {
                let bounds = substr_bounds(from.get(i) as i64, count.map(|c| c.get(i) as i64))?;
                let Some((f, e)) = bounds else { return Ok(()) };
                if bytea {
                    let v = a.get(i);
                    let st = (f.max(1) as usize - 1).min(v.len());
                    let en = e
                        .map_or(v.len(), |e| ((e - 1) as usize).min(v.len()))
                        .max(st);
                    o.extend_from_slice(&v[st..en]);
                } else {
                    o.extend_from_slice(char_slice(a.get_str(i), f, e).as_bytes());
                }
                Ok(())
            })
        }
        F::Btrim | F::Ltrim | F::Rtrim => {
            let a = s()?;
            let set = match args.get(1) {
                Some(c) => Some(bytes(*c, len)?),
                None => None,
            };
            let (left, right) = (func != F::Rtrim, func != F::Ltrim);
            build_bytes(types[0], len, nulls, |i, o| {
                if bytea {
                    let v = a.get(i);
                    let chars = set.map_or(&b" "[..], |c| c.get(i));
                    let mut st = 0;
                    let mut en = v.len();
                    while left && st < en && chars.contains(&v[st]) {
                        st += 1;
                    }
                    while right && en > st && chars.contains(&v[en - 1]) {
                        en -= 1;
                    }
                    o.extend_from_slice(&v[st..en]);
                } else {
                    let v = a.get_str(i);
                    let chars = set.map_or(" ", |c| c.get_str(i));
                    let pat = |c: char| chars.contains(c);
                    let r = match (left, right) {
                        (true, true) => v.trim_matches(pat),
                        (true, false) => v.trim_start_matches(pat),
                        _ => v.trim_end_matches(pat),
                    };
                    o.extend_from_slice(r.as_bytes());
                }
                Ok(())
            })
        }
        F::Replace => {
            let (a, from, to) = (s()?, bytes(args[1], len)?, bytes(args[2], len)?);
            build_bytes(t, len, nulls, |i, o| {
                let (v, f) = (a.get_str(i), from.get_str(i));
                if f.is_empty() {
                    o.extend_from_slice(v.as_bytes());
                } else {
                    o.extend_from_slice(v.replace(f, to.get_str(i)).as_bytes());
                }
                Ok(())
            })
        }
        F::Strpos => {
            let (a, sub) = (s()?, bytes(args[1], len)?);
            build_prim(DataType::Int32, len, nulls, |i| {
                if bytea {
                    let (v, n) = (a.get(i), sub.get(i));
                    if n.is_empty() {
                        return Ok(1);
                    }
                    return Ok(v
                        .windows(n.len())
                        .position(|w| w == n)
                        .map_or(0, |p| p as i32 + 1));
                }
                let (v, n) = (a.get_str(i), sub.get_str(i));
                Ok(match v.find(n) {
                    Some(b) => char_count(&v.as_bytes()[..b]) as i32 + 1,
                    None => 0,
                })
            })
        }
        F::Left | F::Right => {
            let (a, n) = (s()?, i32_arg(args[1], len)?);
            build_bytes(t, len, nulls, |i, o| {
                let v = a.get(i);
                let total = char_count(v) as i64;
                let n = n.get(i) as i64;
                let keep = if n >= 0 {
                    n.min(total)
                } else {
                    (total + n).max(0)
                };
                let part = if func == F::Left {
                    &v[..char_prefix_len(v, keep as usize)]
                } else {
                    &v[char_prefix_len(v, (total - keep) as usize)..]
                };
                o.extend_from_slice(part);
                Ok(())
            })
        }
        F::Repeat => {
            let (a, n) = (s()?, i32_arg(args[1], len)?);
            build_bytes(t, len, nulls, |i, o| {
                let (v, n) = (a.get(i), n.get(i).max(0) as usize);
                if v.len().saturating_mul(n) > MAX_VALUE_BYTES {
                    return Err(too_large());
                }
                for _ in 0..n {
                    o.extend_from_slice(v);
                }
                Ok(())
            })
        }
        F::Reverse => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                let mut tmp = [0u8; 4];
                for c in a.get_str(i).chars().rev() {
                    o.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                Ok(())
            })
        }
        F::Lpad | F::Rpad => {
            let (a, n) = (s()?, i32_arg(args[1], len)?);
            let fill = match args.get(2) {
                Some(f) => Some(bytes(*f, len)?),
                None => None,
            };
            build_bytes(t, len, nulls, |i, o| {
                let v = a.get(i);
                let target = n.get(i).max(0) as usize;
                let fill = fill.map_or(&b" "[..], |f| f.get(i));
                let have = char_count(v);
                if have >= target || fill.is_empty() {
                    o.extend_from_slice(&v[..char_prefix_len(v, target)]);
                    return Ok(());
                }
                if target.saturating_mul(4) > MAX_VALUE_BYTES {
                    return Err(too_large());
                }
                let fill_s = std::str::from_utf8(fill).unwrap_or(" ");
                let pad: String = fill_s.chars().cycle().take(target - have).collect();
                if func == F::Lpad {
                    o.extend_from_slice(pad.as_bytes());
                    o.extend_from_slice(v);
                } else {
                    o.extend_from_slice(v);
                    o.extend_from_slice(pad.as_bytes());
                }
                Ok(())
            })
        }
        F::StartsWith => {
            let (a, p) = (s()?, bytes(args[1], len)?);
            build_prim(DataType::Bool, len, nulls, |i| {
                Ok(a.get(i).starts_with(p.get(i)))
            })
        }
        F::SplitPart => {
            let (a, d, n) = (s()?, bytes(args[1], len)?, i32_arg(args[2], len)?);
            build_bytes(t, len, nulls, |i, o| {
                let (v, delim, n) = (a.get_str(i), d.get_str(i), n.get(i));
                if n == 0 {
                    return Err(DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "field position must not be zero",
                    ));
                }
                let part = if delim.is_empty() {
                    if n == 1 || n == -1 {
                        Some(v)
                    } else {
                        None
                    }
                } else if v.is_empty() {
                    None
                } else if n > 0 {
                    v.split(delim).nth(n as usize - 1)
                } else {
                    let parts: Vec<&str> = v.split(delim).collect();
                    let k = (-(n as i64)) as usize;
                    if k <= parts.len() {
                        Some(parts[parts.len() - k])
                    } else {
                        None
                    }
                };
                if let Some(p) = part {
                    o.extend_from_slice(p.as_bytes());
                }
                Ok(())
            })
        }
        F::LikeEscape => {
            let (a, esc) = (s()?, bytes(args[1], len)?);
            build_bytes(t, len, nulls, |i, o| {
                o.extend_from_slice(like_escape(a.get_str(i), esc.get_str(i))?.as_bytes());
                Ok(())
            })
        }
        F::SimilarToEscape => {
            let a = s()?;
            let esc = match args.get(1) {
                Some(e) => Some(bytes(*e, len)?),
                None => None,
            };
            build_bytes(t, len, nulls, |i, o| {
                let e = esc.as_ref().map_or("\\", |e| e.get_str(i));
                o.extend_from_slice(similar_to_regex(a.get_str(i), e)?.as_bytes());
                Ok(())
            })
        }
        F::Translate => {
            let (a, from, to) = (s()?, bytes(args[1], len)?, bytes(args[2], len)?);
            build_bytes(t, len, nulls, |i, o| {
                let from: Vec<char> = from.get_str(i).chars().collect();
                let to: Vec<char> = to.get_str(i).chars().collect();
                let mut tmp = [0u8; 4];
                for c in a.get_str(i).chars() {
                    match from.iter().position(|&f| f == c) {
                        Some(k) => {
                            if let Some(r) = to.get(k) {
                                o.extend_from_slice(r.encode_utf8(&mut tmp).as_bytes());
                            }
                        }
                        None => o.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes()),
                    }
                }
                Ok(())
            })
        }
        F::Md5 => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                let d = md5(a.get(i));
                for b in d {
                    o.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                Ok(())
            })
        }
        F::Chr => {
            let n = i32_arg(args[0], len)?;
            build_bytes(t, len, nulls, |i, o| {
                let v = n.get(i);
                if v < 0 {
                    return Err(DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "character number must be positive",
                    ));
                }
                if v == 0 {
                    return Err(DbError::new(
                        sqlstate::PROGRAM_LIMIT_EXCEEDED,
                        "null character not permitted",
                    ));
                }
                if v > 0x10ffff {
                    return Err(DbError::new(
                        sqlstate::PROGRAM_LIMIT_EXCEEDED,
                        format!("requested character too large for encoding: {v}"),
                    ));
                }
                let c = char::from_u32(v as u32).ok_or_else(|| {
                    DbError::new(
                        sqlstate::PROGRAM_LIMIT_EXCEEDED,
                        format!("requested character not valid for encoding: {v}"),
                    )
                })?;
                let mut tmp = [0u8; 4];
                o.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                Ok(())
            })
        }
        F::Ascii => {
            let a = s()?;
            build_prim(DataType::Int32, len, nulls, |i| {
                Ok(a.get_str(i).chars().next().map_or(0, |c| c as i32))
            })
        }
        F::ToHex => build_bytes(t, len, nulls, {
            let is64 = types[0] == DataType::Int64;
            let (a32, a64) = if is64 {
                (None, Some(prim::<i64>(args[0], len)?))
            } else {
                (Some(prim::<i32>(args[0], len)?), None)
            };
            move |i, o| {
                let s = match (a32, a64) {
                    (Some(a), _) => format!("{:x}", a.get(i) as u32),
                    (_, Some(a)) => format!("{:x}", a.get(i) as u64),
                    _ => String::new(),
                };
                o.extend_from_slice(s.as_bytes());
                Ok(())
            }
        }),
        F::SizePretty => build_bytes(t, len, nulls, {
            let a = prim::<i64>(args[0], len)?;
            move |i, o| {
                o.extend_from_slice(size_pretty(a.get(i)).as_bytes());
                Ok(())
            }
        }),
        F::QuoteIdent => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                o.extend_from_slice(crate::catalog::quote_ident(a.get_str(i)).as_bytes());
                Ok(())
            })
        }
        F::QuoteLiteral => {
            let a = s()?;
            build_bytes(t, len, nulls, |i, o| {
                o.extend_from_slice(quote_literal(a.get_str(i)).as_bytes());
                Ok(())
            })
        }
        other => Err(DbError::internal(format!(
            "{other:?} is not a string function"
        ))),
    }
}

/// `concat(...)` / `concat_ws(sep, ...)`: each non-NULL argument through its
/// type's output function; NULL arguments are skipped (a NULL separator makes NULL).
pub(crate) fn concat_fn(
    with_sep: bool,
    types: &[DataType],
    args: &[Operand],
    len: usize,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let cols: Vec<std::borrow::Cow<Column>> = args.iter().map(|a| a.to_column(len)).collect();
    let (sep_nulls, first) = if with_sep {
        match args.first() {
            Some(a) => (Nulls::of(a, len)?, 1),
            None => (Nulls::AllValid, 0),
        }
    } else {
        (Nulls::AllValid, 0)
    };
    let sep = if with_sep {
        Some(bytes(args[0], len)?)
    } else {
        None
    };
    let mut out = BytesColumn::with_capacity(len, len * 16);
    for i in 0..len {
        if !sep_nulls.is_valid(i) {
            out.push(b"");
            continue;
        }
        let mut wrote = false;
        for (k, c) in cols.iter().enumerate().skip(first) {
            if !c.is_valid(i) {
                continue;
            }
            if wrote {
                if let Some(s) = sep {
                    out.data.extend_from_slice(s.get(i));
                }
            }
            push_value_text(c, types.get(k).copied().unwrap_or(c.data_type), i, ctx, &mut out.data);
            wrote = true;
        }
        out.offsets.push(out.data.len() as u32);
    }
    Ok(bytes_column(DataType::Text, out, sep_nulls))
}

/// Row `i` of `c` (of SQL type `ty`) as its text output: text-like bytes as
/// they are, everything else through its output function.
fn push_value_text(c: &Column, ty: DataType, i: usize, ctx: &EvalContext, out: &mut Vec<u8>) {
    match &c.data {
        crate::exec::vector::ColumnData::Bytes(b) if ty != DataType::Bytea && ty != DataType::Jsonb => {
            out.extend_from_slice(b.get(i))
        }
        _ => format_text(ty, &c.datum(i), &ctx.format, out),
    }
}

/// `format(fmt, args…)`: PostgreSQL's `%[n$][-][width]{s|I|L}` and `%%`;
/// width may be `*` or `*n$` (an argument; negative left-justifies). `%s`
/// writes NULL as nothing, `%L` as `NULL`, `%I` refuses it (22004). A NULL
/// format gives NULL.
pub(crate) fn format_fn(types: &[DataType], args: &[Operand], len: usize, ctx: &EvalContext) -> DbResult<Column> {
    let cols: Vec<std::borrow::Cow<Column>> = args.iter().map(|a| a.to_column(len)).collect();
    let nulls = Nulls::of(&args[0], len)?;
    let fmt = bytes(args[0], len)?;
    let mut out = BytesColumn::with_capacity(len, len * 16);
    let mut value = Vec::new();
    let mut text = String::new();
    for i in 0..len {
        text.clear();
        if nulls.is_valid(i) {
            // The argument's text, or None for NULL.
            let arg_text = |k: usize, value: &mut Vec<u8>| -> DbResult<Option<String>> {
                let c = cols.get(k).ok_or_else(|| DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "too few arguments for format()"))?;
                if !c.is_valid(i) {
                    return Ok(None);
                }
                value.clear();
                push_value_text(c, types.get(k).copied().unwrap_or(c.data_type), i, ctx, value);
                Ok(Some(String::from_utf8_lossy(value).into_owned()))
            };
            write_format(fmt.get_str(i), &mut text, |k| arg_text(k, &mut value))?;
        }
        out.push(text.as_bytes());
    }
    Ok(bytes_column(DataType::Text, out, nulls))
}

fn format_error(message: &str) -> DbError {
    DbError::new(sqlstate::INVALID_PARAMETER_VALUE, message.to_string())
}

/// Writes `fmt` with its specifiers replaced; `arg(k)` is argument k's text
/// (k ≥ 1; None for NULL).
fn write_format(fmt: &str, out: &mut String, mut arg: impl FnMut(usize) -> DbResult<Option<String>>) -> DbResult<()> {
    let unterminated = || {
        format_error("unterminated format() type specifier").with_hint("For a single \"%\" use \"%%\".")
    };
    let mut chars = fmt.chars().peekable();
    let mut next_arg = 1usize;
    // Digits, then whether a `$` follows (consumed).
    fn number(chars: &mut std::iter::Peekable<std::str::Chars>) -> DbResult<Option<usize>> {
        let mut n: Option<usize> = None;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            chars.next();
            n = Some(n.unwrap_or(0).checked_mul(10).and_then(|v| v.checked_add(d as usize)).filter(|&v| v <= i32::MAX as usize)
                .ok_or_else(|| format_error("number is out of range"))?);
        }
        Ok(n)
    }
    let position = |n: usize| {
        if n == 0 {
            Err(format_error("format specifies argument 0, but arguments are numbered from 1"))
        } else {
            Ok(n)
        }
    };
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // %[n$][-][width|*[n$]]type
        let mut argpos = None;
        let mut left = false;
        let mut width: Option<i64> = None;
        let lead = number(&mut chars)?;
        match (lead, chars.peek()) {
            (Some(n), Some('$')) => {
                chars.next();
                argpos = Some(position(n)?);
            }
            (Some(n), _) => width = Some(n as i64),
            (None, _) => {}
        }
        if width.is_none() {
            while chars.peek() == Some(&'-') {
                chars.next();
                left = true;
            }
            if chars.peek() == Some(&'*') {
                chars.next();
                let star = match number(&mut chars)? {
                    Some(n) if chars.peek() == Some(&'$') => {
                        // The value is then the argument after the width's.
                        chars.next();
                        next_arg = position(n)? + 1;
                        n
                    }
                    Some(_) => return Err(format_error("width argument position must be ended by \"$\"")),
                    None => {
                        next_arg += 1;
                        next_arg - 1
                    }
                };
                let w = arg(star)?.map_or(Ok(0), |t| {
                    t.trim().parse::<i64>().map_err(|_| {
                        DbError::new(sqlstate::INVALID_TEXT_REPRESENTATION, format!("invalid input syntax for type integer: \"{t}\""))
                    })
                })?;
                width = Some(w);
            } else {
                width = number(&mut chars)?.map(|n| n as i64);
            }
        }
        let kind = chars.next().ok_or_else(unterminated)?;
        let k = match argpos {
            Some(n) => {
                next_arg = n + 1;
                n
            }
            None => {
                next_arg += 1;
                next_arg - 1
            }
        };
        let piece = match kind {
            's' => arg(k)?.unwrap_or_default(),
            'I' => match arg(k)? {
                Some(v) => crate::catalog::quote_ident(&v),
                None => return Err(DbError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "null values cannot be formatted as an SQL identifier")),
            },
            'L' => match arg(k)? {
                Some(v) => quote_literal(&v),
                None => "NULL".to_string(),
            },
            other => {
                return Err(format_error(&format!("unrecognized format() type specifier \"{other}\""))
                    .with_hint("For a single \"%\" use \"%%\"."))
            }
        };
        let w = width.unwrap_or(0);
        let (left, w) = (left || w < 0, w.unsigned_abs() as usize);
        let pad = w.saturating_sub(piece.chars().count());
        if !left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(&piece);
        if left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    Ok(())
}

/// quote_literal: `'…'` with quotes doubled; `E'…'` with backslashes
/// doubled when there are any.
pub(crate) fn quote_literal(v: &str) -> String {
    let mut o = String::with_capacity(v.len() + 2);
    if v.contains('\\') {
        o.push('E');
    }
    o.push('\'');
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            o.push(c);
        }
        o.push(c);
    }
    o.push('\'');
    o
}

/// MD5 (RFC 1321).
pub(crate) fn md5(input: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64)
        .map(|i| ((i as f64 + 1.0).sin().abs() * 4294967296.0) as u32)
        .collect();
    let (mut a0, mut b0, mut c0, mut d0) =
        (0x67452301u32, 0xefcdab89u32, 0x98badcfeu32, 0x10325476u32);
    let mut msg = input.to_vec();
    let bit_len = (input.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    for chunk in msg.chunks(64) {
        let m: Vec<u32> = chunk
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    let mut out = [0u8; 16];
    out[..4].copy_from_slice(&a0.to_le_bytes());
    out[4..8].copy_from_slice(&b0.to_le_bytes());
    out[8..12].copy_from_slice(&c0.to_le_bytes());
    out[12..].copy_from_slice(&d0.to_le_bytes());
    out
}

/// PostgreSQL's pg_size_pretty(bigint): bytes below 10 kB, then kB, MB, GB,
/// TB, PB, each unit while the value stays below 10240 of it (rounded half
/// away from zero at each step, as PostgreSQL's half_rounded does).
pub fn size_pretty(bytes: i64) -> String {
    let mut size = bytes;
    if size.unsigned_abs() < 10 * 1024 {
        return format!("{size} bytes");
    }
    let half_rounded = |x: i64| (x + if x < 0 { -1 } else { 1 }) / 2;
    // PostgreSQL shifts by 9 bits first (keeping one bit for rounding), then by 10.
    size >>= 9;
    for unit in ["kB", "MB", "GB", "TB"] {
        if size.unsigned_abs() < 20 * 1024 - 1 {
            return format!("{} {unit}", half_rounded(size));
        }
        size >>= 10;
    }
    format!("{} PB", half_rounded(size))
}

/// One escape character, or none for `''`; 22025 for a longer string.
fn escape_char(esc: &str) -> DbResult<Option<char>> {
    let mut chars = esc.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Ok(None),
        (Some(c), None) => Ok(Some(c)),
        _ => Err(DbError::new(sqlstate::INVALID_ESCAPE_SEQUENCE, "invalid escape string")
            .with_hint("Escape string must be empty or one character.")),
    }
}

/// A LIKE pattern with escape character `esc` rewritten to use `\` (PostgreSQL's like_escape).
pub(crate) fn like_escape(pattern: &str, esc: &str) -> DbResult<String> {
    let esc = escape_char(esc)?;
    if esc == Some('\\') {
        return Ok(pattern.to_string());
    }
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == esc {
            match chars.next() {
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => {
                    return Err(DbError::new(sqlstate::INVALID_ESCAPE_SEQUENCE, "LIKE pattern must not end with escape character"))
                }
            }
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// A SIMILAR TO pattern as an anchored regular expression (PostgreSQL's
/// similar_to_escape): `%` → `.*`, `_` → `.`, the escape character quotes the
/// next one, and escape-double-quote marks the substring part (a group).
pub(crate) fn similar_to_regex(pattern: &str, esc: &str) -> DbResult<String> {
    let esc = escape_char(esc)?;
    let mut out = String::from("^(?:");
    let mut quotes = 0;
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if Some(c) == esc && !in_class {
            match chars.next() {
                Some('"') => {
                    quotes += 1;
                    match quotes {
                        1 => out.push_str(")("),
                        2 => out.push_str(")(?:"),
                        _ => {
                            return Err(DbError::new(
                                sqlstate::INVALID_ESCAPE_SEQUENCE,
                                "SQL regular expression may not contain more than two escape-double-quote separators",
                            ))
                        }
                    }
                }
                Some(n) => {
                    if !n.is_alphanumeric() {
                        out.push('\\');
                    }
                    out.push(n);
                }
                None => {
                    return Err(DbError::new(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "SIMILAR TO pattern must not end with escape character",
                    ))
                }
            }
            continue;
        }
        if in_class {
            if c == ']' {
                in_class = false;
            }
            if c == '\\' {
                out.push('\\');
            }
            out.push(c);
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            '.' | '^' | '$' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
    out.push_str(")$");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::call;
    use super::*;
    use crate::types::Datum;

    fn txt(s: &str) -> (Datum, DataType) {
        (Datum::text(s), DataType::Unknown)
    }
    fn int(v: i32) -> (Datum, DataType) {
        (Datum::Int32(v), DataType::Int32)
    }
    fn s(d: Datum) -> String {
        d.as_str().unwrap_or("<not text>").to_string()
    }

    #[test]
    fn postgres_string_results() {
        assert_eq!(s(call("lower", &[txt("HeLLo É")]).unwrap()), "hello é");
        assert_eq!(s(call("upper", &[txt("abc")]).unwrap()), "ABC");
        assert_eq!(
            s(call("initcap", &[txt("hELLO wORLD-foo_bar 3x")]).unwrap()),
            "Hello World-Foo_Bar 3x"
        );
        assert_eq!(call("length", &[txt("héllo")]).unwrap(), Datum::Int32(5));
        assert_eq!(
            call("octet_length", &[txt("héllo")]).unwrap(),
            Datum::Int32(6)
        );
        assert_eq!(
            call(
                "length",
                &[(Datum::text("ab  "), DataType::Bpchar(Some(4)))]
            )
            .unwrap(),
            Datum::Int32(2)
        );
        assert_eq!(
            call(
                "octet_length",
                &[(Datum::text("ab  "), DataType::Bpchar(Some(4)))]
            )
            .unwrap(),
            Datum::Int32(4)
        );
        assert_eq!(s(call("substr", &[txt("hello"), int(2)]).unwrap()), "ello");
        assert_eq!(
            s(call("substr", &[txt("hello"), int(0), int(3)]).unwrap()),
            "he"
        );
        assert_eq!(
            s(call("substring", &[txt("hello"), int(-1), int(3)]).unwrap()),
            "h"
        );
        assert_eq!(
            s(call("substr", &[txt("héllo"), int(2), int(2)]).unwrap()),
            "él"
        );
        assert_eq!(s(call("substr", &[txt("hello"), int(10)]).unwrap()), "");
        let e = call("substr", &[txt("hello"), int(0), int(-1)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22011", "negative substring length not allowed")
        );
        assert_eq!(s(call("btrim", &[txt("xxaxx"), txt("x")]).unwrap()), "a");
        assert_eq!(s(call("ltrim", &[txt("  a ")]).unwrap()), "a ");
        assert_eq!(s(call("rtrim", &[txt("  a ")]).unwrap()), "  a");
        assert_eq!(s(call("trim", &[txt("  a ")]).unwrap()), "a");
        assert_eq!(
            s(call("replace", &[txt("abcabc"), txt("b"), txt("XY")]).unwrap()),
            "aXYcaXYc"
        );
        assert_eq!(
            call("strpos", &[txt("héllo"), txt("llo")]).unwrap(),
            Datum::Int32(3)
        );
        assert_eq!(
            call("position", &[txt("abc"), txt("")]).unwrap(),
            Datum::Int32(1)
        );
        assert_eq!(
            call("strpos", &[txt("abc"), txt("z")]).unwrap(),
            Datum::Int32(0)
        );
        assert_eq!(s(call("left", &[txt("hello"), int(-2)]).unwrap()), "hel");
        assert_eq!(s(call("right", &[txt("hello"), int(-2)]).unwrap()), "llo");
        assert_eq!(s(call("right", &[txt("hello"), int(2)]).unwrap()), "lo");
        assert_eq!(s(call("repeat", &[txt("ab"), int(3)]).unwrap()), "ababab");
        assert_eq!(s(call("repeat", &[txt("x"), int(-1)]).unwrap()), "");
        assert_eq!(s(call("reverse", &[txt("héllo")]).unwrap()), "olléh");
        assert_eq!(
            s(call("lpad", &[txt("hi"), int(5), txt("ab")]).unwrap()),
            "abahi"
        );
        assert_eq!(s(call("rpad", &[txt("hi"), int(5)]).unwrap()), "hi   ");
        assert_eq!(s(call("lpad", &[txt("hello"), int(3)]).unwrap()), "hel");
        assert_eq!(
            s(call("lpad", &[txt("hi"), int(5), txt("")]).unwrap()),
            "hi"
        );
        assert_eq!(
            call("starts_with", &[txt("hello"), txt("he")]).unwrap(),
            Datum::Bool(true)
        );
        assert_eq!(
            s(call("split_part", &[txt("a,b,c"), txt(","), int(2)]).unwrap()),
            "b"
        );
        assert_eq!(
            s(call("split_part", &[txt("a,b,c"), txt(","), int(-1)]).unwrap()),
            "c"
        );
        assert_eq!(
            s(call("split_part", &[txt("a,b,c"), txt(","), int(5)]).unwrap()),
            ""
        );
        let e = call("split_part", &[txt("a,b"), txt(","), int(0)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22023", "field position must not be zero")
        );
        assert_eq!(
            s(call("translate", &[txt("12345"), txt("143"), txt("ax")]).unwrap()),
            "a2x5"
        );
        assert_eq!(
            s(call("md5", &[txt("abc")]).unwrap()),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        assert_eq!(
            s(call("md5", &[txt("")]).unwrap()),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
        assert_eq!(s(call("chr", &[int(233)]).unwrap()), "é");
        assert_eq!(
            call("chr", &[int(0)]).unwrap_err().message,
            "null character not permitted"
        );
        assert_eq!(call("chr", &[int(-1)]).unwrap_err().code, "22023");
        assert_eq!(
            call("chr", &[int(55296)]).unwrap_err().message,
            "requested character not valid for encoding: 55296"
        );
        assert_eq!(call("ascii", &[txt("é")]).unwrap(), Datum::Int32(233));
        assert_eq!(call("ascii", &[txt("")]).unwrap(), Datum::Int32(0));
        assert_eq!(s(call("to_hex", &[int(-1)]).unwrap()), "ffffffff");
        assert_eq!(
            s(call("to_hex", &[(Datum::Int64(255), DataType::Int64)]).unwrap()),
            "ff"
        );
        assert_eq!(s(call("quote_ident", &[txt("Foo")]).unwrap()), "\"Foo\"");
        assert_eq!(s(call("quote_ident", &[txt("foo_1")]).unwrap()), "foo_1");
        assert_eq!(
            s(call("quote_literal", &[txt("a'b\\c")]).unwrap()),
            "E'a''b\\\\c'"
        );
        assert_eq!(
            call("lower", &[(Datum::Null, DataType::Text)]).unwrap(),
            Datum::Null
        );
        let e = call("lower", &[int(1)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42883", "function lower(integer) does not exist")
        );
    }

    #[test]
    fn concat_operator_shapes() {
        use super::super::tests::eval_bin;
        let r = eval_bin(
            super::super::BinaryOp::Concat,
            (Datum::text("a"), DataType::Unknown),
            (Datum::text("b"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(r, Datum::text("ab"));
        let r = eval_bin(
            super::super::BinaryOp::Concat,
            (Datum::text("ab  "), DataType::Bpchar(Some(4))),
            (Datum::text("x"), DataType::Unknown),
        )
        .unwrap();
        assert_eq!(r, Datum::text("abx"));
        let r = eval_bin(
            super::super::BinaryOp::Concat,
            (Datum::text("x"), DataType::Text),
            (Datum::Null, DataType::Text),
        )
        .unwrap();
        assert_eq!(r, Datum::Null);
        let r = eval_bin(
            super::super::BinaryOp::Concat,
            (Datum::Bytes(vec![1]), DataType::Bytea),
            (Datum::Bytes(vec![2]), DataType::Bytea),
        )
        .unwrap();
        assert_eq!(r, Datum::Bytes(vec![1, 2]));
    }

    #[test]
    fn concat_skips_nulls() {
        let r = call(
            "concat",
            &[txt("a"), (Datum::Null, DataType::Int32), txt("b")],
        )
        .unwrap();
        assert_eq!(s(r), "ab");
        let r = call(
            "concat_ws",
            &[txt(","), txt("a"), (Datum::Null, DataType::Text), txt("b")],
        )
        .unwrap();
        assert_eq!(s(r), "a,b");
        let r = call("concat_ws", &[(Datum::Null, DataType::Text), txt("a")]).unwrap();
        assert_eq!(r, Datum::Null);
        let r = call(
            "concat",
            &[(Datum::text("ab  "), DataType::Bpchar(Some(4))), txt("x")],
        )
        .unwrap();
        assert_eq!(s(r), "ab  x");
    }
}
