//! Array kernels: ARRAY[…] construction (nested arrays stack into more
//! dimensions), subscripts, and array_length / cardinality / array_ndims /
//! array_lower / array_upper / array_to_string, and concatenation (`||`,
//! array_cat, array_append, array_prepend), string_to_array. Values are decoded per row
//! from their held form (`types/array.rs`), except where the header is
//! enough: the dimension functions read it alone, and a subscript of a
//! packed array reads its one element in place.
//! Must not: resolve types (the binder builds these signatures).

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{Column, ColumnData};
use crate::exec::{EvalContext, Operand};
use crate::types::array::{packed_from_body, ArrayElem, ArrayHeader, ArrayValue, MAX_DIMS};
use crate::types::{DataType, Datum};

use super::common::prim;
use super::ScalarFunction as F;

fn elem_of(t: DataType) -> DbResult<ArrayElem> {
    match t {
        DataType::Array(e) => Ok(e),
        other => Err(DbError::internal(format!("array kernel over {}", other.name()))),
    }
}

/// Row `i`'s held array bytes, without copying them (None for NULL).
fn held_bytes(col: &Column, i: usize) -> Option<&[u8]> {
    match &col.data {
        ColumnData::Bytes(b) if col.is_valid(i) => Some(b.get(i)),
        _ => None,
    }
}

fn array_at(col: &Column, t: DataType, i: usize) -> DbResult<Option<ArrayValue>> {
    held_bytes(col, i).map(|b| ArrayValue::decode(b, elem_of(t)?)).transpose()
}

/// ARRAY[a, b, …]: elements of the result's element type, or arrays (one more dimension).
pub(crate) fn construct(result: DataType, arg_types: &[DataType], args: &[Operand], len: usize) -> DbResult<Column> {
    let elem = elem_of(result)?;
    let cols: Vec<_> = args.iter().map(|a| a.to_column(len)).collect();
    let nested = arg_types.first().is_some_and(|t| matches!(t, DataType::Array(_)));
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let value = if !nested {
            ArrayValue::of(cols.iter().map(|c| c.datum(i)).collect())
        } else {
            let mut dims: Option<Vec<usize>> = None;
            let mut elems = Vec::new();
            for (c, t) in cols.iter().zip(arg_types) {
                let Some(sub) = array_at(c, *t, i)? else { continue };
                match &dims {
                    None => dims = Some(sub.dims.clone()),
                    Some(d) if *d == sub.dims => {}
                    Some(_) => {
                        return Err(DbError::new(
                            "2202E",
                            "multidimensional arrays must have array expressions with matching dimensions",
                        ))
                    }
                }
                elems.extend(sub.elems);
            }
            match dims {
                Some(d) if !d.is_empty() => {
                    if d.len() + 1 > MAX_DIMS {
                        return Err(DbError::new(sqlstate::PROGRAM_LIMIT_EXCEEDED, "number of array dimensions exceeds the maximum allowed (6)"));
                    }
                    let mut dims = vec![elems.len() / d.iter().product::<usize>().max(1)];
                    dims.extend(d);
                    ArrayValue { dims, elems }
                }
                _ => ArrayValue::default(),
            }
        };
        out.push(Datum::Bytes(value.encode(elem)));
    }
    Ok(Column::from_datums(result, &out))
}

/// `a[i]`, `a[i][j]`, …: the element, NULL when out of bounds or not every dimension is indexed.
pub(crate) fn subscript(result: DataType, arg_types: &[DataType], args: &[Operand], len: usize) -> DbResult<Column> {
    let cols: Vec<_> = args.iter().map(|a| a.to_column(len)).collect();
    let elem = elem_of(arg_types[0])?;
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        if let Some(bytes) = held_bytes(&cols[0], i) {
            if let Some(d) = packed_subscript(bytes, elem, &cols[1..], i)? {
                out.push(d);
                continue;
            }
        }
        let Some(v) = array_at(&cols[0], arg_types[0], i)? else {
            out.push(Datum::Null);
            continue;
        };
        let idx: Option<Vec<i64>> = cols[1..].iter().map(|c| c.datum(i).as_i64()).collect();
        let value = match idx {
            Some(idx) if idx.len() == v.dims.len() => {
                let mut pos = 0usize;
                let mut inside = true;
                for (k, (&x, &d)) in idx.iter().zip(&v.dims).enumerate() {
                    if x < 1 || x as usize > d {
                        inside = false;
                        break;
                    }
                    let stride: usize = v.dims[k + 1..].iter().product();
                    pos += (x as usize - 1) * stride;
                }
                if inside {
                    v.elems.get(pos).cloned().unwrap_or(Datum::Null)
                } else {
                    Datum::Null
                }
            }
            _ => Datum::Null,
        };
        out.push(value);
    }
    Ok(Column::from_datums(result, &out))
}

/// `a[lo:hi]…` (PostgreSQL's array_get_slice): per dimension, the elements
/// from `lo` (omitted or below 1: the first) to `hi` (omitted or past the
/// end: the last), dimensions beyond the subscripts whole; an empty array
/// when a range is empty or there are more subscripts than dimensions, NULL
/// when a bound is NULL. The slice's lower bounds are 1. A packed array's
/// elements are copied as bytes, undecoded.
pub(crate) fn slice(result: DataType, args: &[Operand], len: usize) -> DbResult<Column> {
    let elem = elem_of(result)?;
    if len == 0 {
        return Ok(Column::from_datums(result, &[]));
    }
    let [array, count, given, bound_args @ ..] = args else {
        return Err(DbError::internal("array slice without its shape"));
    };
    // The shape is the binder's constants: one value for every row.
    let count = (prim::<i64>(*count, len)?.get(0) as usize).min(MAX_DIMS);
    let given = prim::<i64>(*given, len)?.get(0);
    let array = array.to_column(len);
    let bound_cols: Vec<_> = bound_args.iter().map(|a| a.to_column(len)).collect();
    let empty = ArrayValue::default().encode(elem);
    let mut out = Vec::with_capacity(len);
    'rows: for i in 0..len {
        let Some(bytes) = held_bytes(&array, i) else {
            out.push(Datum::Null);
            continue;
        };
        // Each subscript's (lower, upper), None where omitted.
        let mut bounds = [(None, None); MAX_DIMS];
        let mut next = 0;
        for (k, (lower, upper)) in bounds.iter_mut().enumerate().take(count) {
            for (bit, slot) in [(2 * k, lower), (2 * k + 1, upper)] {
                if given >> bit & 1 == 1 {
                    let Some(x) = bound_cols.get(next).and_then(|c| c.datum(i).as_i64()) else {
                        out.push(Datum::Null);
                        continue 'rows;
                    };
                    *slot = Some(x);
                    next += 1;
                }
            }
        }
        let header = ArrayHeader::read(bytes)?;
        let dims = header.dims();
        if dims.is_empty() || dims.len() < count {
            out.push(Datum::Bytes(empty.clone()));
            continue;
        }
        let mut ranges = [(0usize, 0usize); MAX_DIMS];
        for (k, &d) in dims.iter().enumerate() {
            let (lower, upper) = bounds[k];
            let lo = lower.map_or(1, |x| x.max(1));
            let hi = upper.map_or(d as i64, |x| x.min(d as i64));
            if lo > hi {
                out.push(Datum::Bytes(empty.clone()));
                continue 'rows;
            }
            ranges[k] = (lo as usize - 1, hi as usize);
        }
        let ranges = &ranges[..dims.len()];
        let result_dims: Vec<usize> = ranges.iter().map(|(lo, hi)| hi - lo).collect();
        let mismatch = || DbError::internal("array elements do not match its dimensions");
        if let (Some(body), Some(width)) = (header.packed_body(bytes, elem), elem.packed_width()) {
            let mut picked = Vec::with_capacity(result_dims.iter().product::<usize>() * width);
            for (start, end) in row_major_runs(dims, ranges) {
                picked.extend_from_slice(body.get(start * width..end * width).ok_or_else(mismatch)?);
            }
            out.push(Datum::Bytes(packed_from_body(&result_dims, elem, &picked)));
        } else {
            let v = ArrayValue::decode(bytes, elem)?;
            let mut elems = Vec::with_capacity(result_dims.iter().product());
            for (start, end) in row_major_runs(dims, ranges) {
                elems.extend_from_slice(v.elems.get(start..end).ok_or_else(mismatch)?);
            }
            out.push(Datum::Bytes(ArrayValue { dims: result_dims, elems }.encode(elem)));
        }
    }
    Ok(Column::from_datums(result, &out))
}

/// The stretches `(start, end)` of row-major positions whose index in each
/// dimension `k` lies in `ranges[k]` (0-based, end exclusive, none empty),
/// in order: one per index of the outer dimensions, the last one's range
/// contiguous within it.
fn row_major_runs<'a>(dims: &'a [usize], ranges: &'a [(usize, usize)]) -> impl Iterator<Item = (usize, usize)> + 'a {
    let last = dims.len() - 1;
    let mut outer: Option<Vec<usize>> = Some(ranges[..last].iter().map(|r| r.0).collect());
    std::iter::from_fn(move || {
        let idx = outer.as_mut()?;
        let base = idx.iter().zip(dims).fold(0, |p, (&x, &d)| p * d + x) * dims[last];
        let run = (base + ranges[last].0, base + ranges[last].1);
        // The next outer index, odometer-wise; none after the last.
        let mut k = last;
        loop {
            if k == 0 {
                outer = None;
                break;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < ranges[k].1 {
                break;
            }
            idx[k] = ranges[k].0;
        }
        Some(run)
    })
}

/// `a[i]…` read from the header and, for a packed array, its one element
/// in place: NULL when an index is NULL or out of bounds or not every
/// dimension is indexed; None for an element of an array that is not packed
/// (the caller decodes it).
fn packed_subscript(bytes: &[u8], elem: ArrayElem, index_cols: &[std::borrow::Cow<'_, Column>], i: usize) -> DbResult<Option<Datum>> {
    let header = ArrayHeader::read(bytes)?;
    let dims = header.dims();
    if index_cols.len() != dims.len() {
        return Ok(Some(Datum::Null));
    }
    let mut pos = 0usize;
    for (c, &d) in index_cols.iter().zip(dims) {
        match c.datum(i).as_i64() {
            Some(x) if x >= 1 && x as usize <= d => match pos.checked_mul(d).and_then(|p| p.checked_add(x as usize - 1)) {
                Some(p) => pos = p,
                None => return Ok(None),
            },
            _ => return Ok(Some(Datum::Null)),
        }
    }
    Ok(header.packed_element(bytes, elem, pos))
}

/// The array functions over one array argument (and a dimension or separators).
pub(crate) fn array_function(
    func: F,
    arg_types: &[DataType],
    args: &[Operand],
    len: usize,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let cols: Vec<_> = args.iter().map(|a| a.to_column(len)).collect();
    let result = if func == F::ArrayToString { DataType::Text } else { DataType::Int32 };
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        if func != F::ArrayToString {
            // The dimension functions need the header only.
            let Some(bytes) = held_bytes(&cols[0], i) else {
                out.push(Datum::Null);
                continue;
            };
            let header = ArrayHeader::read(bytes)?;
            let dims = header.dims();
            let dim = cols.get(1).and_then(|c| c.datum(i).as_i64());
            let in_dim = dim.filter(|&d| d >= 1 && (d as usize) <= dims.len()).map(|d| dims[d as usize - 1]);
            out.push(match func {
                F::Cardinality => Datum::Int32(header.count() as i32),
                F::ArrayNdims => match dims.len() {
                    0 => Datum::Null,
                    n => Datum::Int32(n as i32),
                },
                F::ArrayLength | F::ArrayUpper => in_dim.map_or(Datum::Null, |n| Datum::Int32(n as i32)),
                F::ArrayLower => in_dim.map_or(Datum::Null, |_| Datum::Int32(1)),
                _ => return Err(DbError::internal(format!("{func:?} is not an array function"))),
            });
            continue;
        }
        let Some(v) = array_at(&cols[0], arg_types[0], i)? else {
            out.push(Datum::Null);
            continue;
        };
        let d = match func {
            F::ArrayToString => {
                let sep = match cols[1].datum(i) {
                    Datum::Bytes(b) => b,
                    _ => {
                        out.push(Datum::Null);
                        continue;
                    }
                };
                let null_text = cols.get(2).and_then(|c| match c.datum(i) {
                    Datum::Bytes(b) => Some(b),
                    _ => None,
                });
                let elem = elem_of(arg_types[0])?.data_type();
                let mut text = Vec::new();
                let mut first = true;
                for e in &v.elems {
                    let piece = match (e, &null_text) {
                        (Datum::Null, None) => continue,
                        (Datum::Null, Some(n)) => n.clone(),
                        (e, _) => {
                            let mut b = Vec::new();
                            crate::types::text::format_text(elem, e, &ctx.format, &mut b);
                            b
                        }
                    };
                    if !first {
                        text.extend_from_slice(&sep);
                    }
                    first = false;
                    text.extend_from_slice(&piece);
                }
                Datum::Bytes(text)
            }
            _ => return Err(DbError::internal(format!("{func:?} is not an array function"))),
        };
        out.push(d);
    }
    Ok(Column::from_datums(result, &out))
}

/// `a || b`, array_cat, array_append, array_prepend: the operands joined along
/// the first dimension. An operand whose type is not an array is one element;
/// a NULL array operand leaves the other (an element then becomes `{e}`).
pub(crate) fn concat(result: DataType, arg_types: &[DataType], args: &[Operand], len: usize) -> DbResult<Column> {
    let elem = elem_of(result)?;
    let cols: Vec<_> = args.iter().map(|a| a.to_column(len)).collect();
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let mut sides = Vec::with_capacity(2);
        for (c, t) in cols.iter().zip(arg_types) {
            sides.push(match t {
                DataType::Array(_) => array_at(c, *t, i)?.map(|a| (a, true)),
                _ => Some((ArrayValue { dims: vec![], elems: vec![c.datum(i)] }, false)),
            });
        }
        let value = match (sides.swap_remove(0), sides.pop().flatten()) {
            (None, None) => None,
            (Some((a, true)), None) | (None, Some((a, true))) => Some(a),
            (Some((e, false)), None) | (None, Some((e, false))) => Some(ArrayValue::of(e.elems)),
            (Some(a), Some(b)) => Some(join_arrays(a, b)?),
        };
        out.push(value.map_or(Datum::Null, |v| Datum::Bytes(v.encode(elem))));
    }
    Ok(Column::from_datums(result, &out))
}

/// Two operands of `||` (each an array, or an element when the flag is false), joined.
fn join_arrays((a, a_array): (ArrayValue, bool), (b, b_array): (ArrayValue, bool)) -> DbResult<ArrayValue> {
    let one_dim = |v: &ArrayValue| v.dims.len() <= 1;
    if !a_array || !b_array {
        let array = if a_array { &a } else { &b };
        if !one_dim(array) {
            return Err(DbError::new(
                sqlstate::DATA_EXCEPTION,
                "argument must be empty or one-dimensional array",
            ));
        }
        let mut elems = a.elems;
        elems.extend(b.elems);
        return Ok(ArrayValue::of(elems));
    }
    if a.dims.is_empty() {
        return Ok(b);
    }
    if b.dims.is_empty() {
        return Ok(a);
    }
    let dims = if a.dims.len() == b.dims.len() && a.dims[1..] == b.dims[1..] {
        let mut d = a.dims.clone();
        d[0] += b.dims[0];
        d
    } else if a.dims.len() == b.dims.len() + 1 && a.dims[1..] == b.dims[..] {
        let mut d = a.dims.clone();
        d[0] += 1;
        d
    } else if b.dims.len() == a.dims.len() + 1 && b.dims[1..] == a.dims[..] {
        let mut d = b.dims.clone();
        d[0] += 1;
        d
    } else {
        return Err(DbError::new("2202E", "cannot concatenate incompatible arrays").with_detail(format!(
            "Arrays of {} and {} dimensions are not compatible for concatenation.",
            a.dims.len(),
            b.dims.len()
        )));
    };
    let mut elems = a.elems;
    elems.extend(b.elems);
    Ok(ArrayValue { dims, elems })
}

/// string_to_array(text, delimiter [, null string]): the pieces between
/// delimiters; a NULL delimiter splits into characters, an empty one keeps the
/// text whole; pieces equal to the null string are NULL; '' gives `{}`.
pub(crate) fn string_to_array(args: &[Operand], len: usize) -> DbResult<Column> {
    let cols: Vec<_> = args.iter().map(|a| a.to_column(len)).collect();
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let text = cols[0].datum(i);
        let Some(text) = text.as_str() else {
            out.push(Datum::Null);
            continue;
        };
        let delimiter = cols[1].datum(i);
        let null_string = cols.get(2).map(|c| c.datum(i));
        let null_string = null_string.as_ref().and_then(|d| d.as_str());
        let pieces: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            match delimiter.as_str() {
                None => text.char_indices().map(|(k, c)| &text[k..k + c.len_utf8()]).collect(),
                Some("") => vec![text],
                Some(d) => text.split(d).collect(),
            }
        };
        let elems = pieces
            .into_iter()
            .map(|p| if Some(p) == null_string { Datum::Null } else { Datum::text(p) })
            .collect();
        out.push(Datum::Bytes(ArrayValue::of(elems).encode(ArrayElem::Text)));
    }
    Ok(Column::from_datums(DataType::Array(ArrayElem::Text), &out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrays held packed and the same arrays held in PostgreSQL's form
    /// (as older segments hold them), NULL, empty and two-dimensional.
    fn arrays() -> (DataType, Column) {
        let elem = ArrayElem::Float32;
        let line = ArrayValue::of((1..=5).map(|x| Datum::Float32(x as f32 / 2.0)).collect());
        let grid = ArrayValue { dims: vec![2, 3], elems: (1..=6).map(|x| Datum::Float32(x as f32)).collect() };
        let values = vec![
            Datum::Bytes(line.encode(elem)),
            Datum::Bytes(line.encode_pg(elem)),
            Datum::Null,
            Datum::Bytes(ArrayValue::default().encode(elem)),
            Datum::Bytes(grid.encode(elem)),
            Datum::Bytes(grid.encode_pg(elem)),
        ];
        let t = DataType::Array(elem);
        (t, Column::from_datums(t, &values))
    }

    /// Slices of packed arrays (copied as bytes) equal those of the same
    /// arrays in PostgreSQL's form (decoded), and what PostgreSQL answers.
    #[test]
    fn packed_slices_equal_decoded_ones() {
        let (t, col) = arrays();
        // Subscripts as (lower, upper), None where omitted, and the 2×3 grid's slice.
        type Bounds = (Option<i64>, Option<i64>);
        let cases: [(&[Bounds], &str); 6] = [
            (&[(Some(2), Some(3))], "{{4,5,6}}"),
            (&[(None, None)], "{{1,2,3},{4,5,6}}"),
            (&[(None, Some(1)), (Some(2), None)], "{{2,3}}"),
            (&[(Some(1), Some(2)), (Some(2), Some(2))], "{{2},{5}}"),
            (&[(Some(0), Some(9)), (Some(-1), Some(1))], "{{1},{4}}"),
            (&[(Some(3), Some(4))], "{}"),
        ];
        let fmt = crate::types::FormatContext::default();
        for (subs, want) in cases {
            let mut given = 0i64;
            let mut bounds = Vec::new();
            for (k, (lo, hi)) in subs.iter().enumerate() {
                for (bit, b) in [(2 * k, lo), (2 * k + 1, hi)] {
                    if let Some(b) = b {
                        given |= 1 << bit;
                        bounds.push(Datum::Int32(*b as i32));
                    }
                }
            }
            let (count, given) = (Datum::Int64(subs.len() as i64), Datum::Int64(given));
            let mut ops = vec![Operand::Column(&col), Operand::Scalar(&count, DataType::Int64), Operand::Scalar(&given, DataType::Int64)];
            ops.extend(bounds.iter().map(|b| Operand::Scalar(b, DataType::Int32)));
            let got = slice(t, &ops, col.len()).unwrap();
            assert_eq!(got.datum(0), got.datum(1), "{subs:?} on the line");
            assert_eq!(got.datum(2), Datum::Null, "{subs:?} of NULL");
            assert_eq!(got.datum(4), got.datum(5), "{subs:?} on the grid");
            let Datum::Bytes(grid) = got.datum(4) else { panic!("{subs:?}: a grid slice") };
            let mut text = Vec::new();
            ArrayValue::decode(&grid, ArrayElem::Float32).unwrap().format_text(ArrayElem::Float32, &fmt, &mut text);
            assert_eq!(String::from_utf8(text).unwrap(), want, "{subs:?}");
            // A batch of no rows (a filter left none) is no rows.
            assert_eq!(slice(t, &ops, 0).unwrap().len(), 0);
        }
    }

    /// The header-only dimension functions against the decoded arrays.
    #[test]
    fn dimension_functions_read_the_header_as_decoding_would() {
        let (t, col) = arrays();
        let ctx = EvalContext::default();
        for dim in [0i32, 1, 2, 3] {
            let d = Datum::Int32(dim);
            for func in [F::ArrayLength, F::ArrayUpper, F::ArrayLower, F::Cardinality, F::ArrayNdims] {
                let got = array_function(func, &[t, DataType::Int32], &[Operand::Column(&col), Operand::Scalar(&d, DataType::Int32)], col.len(), &ctx).unwrap();
                for i in 0..col.len() {
                    let want = match array_at(&col, t, i).unwrap() {
                        None => Datum::Null,
                        Some(v) => {
                            let n = usize::try_from(dim).ok().filter(|&k| k >= 1 && k <= v.dims.len()).map(|k| v.dims[k - 1]);
                            match func {
                                F::Cardinality => Datum::Int32(v.elems.len() as i32),
                                F::ArrayNdims if v.dims.is_empty() => Datum::Null,
                                F::ArrayNdims => Datum::Int32(v.dims.len() as i32),
                                F::ArrayLower => n.map_or(Datum::Null, |_| Datum::Int32(1)),
                                _ => n.map_or(Datum::Null, |n| Datum::Int32(n as i32)),
                            }
                        }
                    };
                    assert_eq!(got.datum(i), want, "{func:?} dim {dim} row {i}");
                }
            }
        }
    }

    /// Subscripts of packed arrays (read in place) equal those of the same
    /// arrays in PostgreSQL's form (decoded), in and out of bounds.
    #[test]
    fn packed_subscripts_equal_decoded_ones() {
        let (t, col) = arrays();
        for (a, b) in [(0, 1), (4, 5)] {
            for idx in [vec![1i64], vec![3], vec![6], vec![0], vec![2, 3], vec![3, 1], vec![1, 4]] {
                let idx: Vec<Datum> = idx.into_iter().map(Datum::Int64).collect();
                let mut ops = vec![Operand::Column(&col)];
                ops.extend(idx.iter().map(|d| Operand::Scalar(d, DataType::Int64)));
                let mut types = vec![t];
                types.extend(idx.iter().map(|_| DataType::Int64));
                let got = subscript(DataType::Float32, &types, &ops, col.len()).unwrap();
                assert_eq!(got.datum(a), got.datum(b), "{idx:?}");
            }
        }
        let d = Datum::Int64(3);
        let got = subscript(DataType::Float32, &[t, DataType::Int64], &[Operand::Column(&col), Operand::Scalar(&d, DataType::Int64)], col.len()).unwrap();
        assert_eq!(got.datum(0), Datum::Float32(1.5));
        assert_eq!(got.datum(2), Datum::Null);
    }
}
