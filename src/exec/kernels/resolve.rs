//! PostgreSQL 15 type resolution: the cast table (implicit / assignment /
//! explicit, pg_cast plus automatic I/O conversions), type categories and
//! preferred types, the operator catalog (the pg_operator rows among
//! Brewric's types), `func_select_candidate` (shared with function
//! resolution), `select_common_type`, and the mapping of a chosen catalog
//! operator to the types its kernel runs on.
//! Must not: evaluate anything, or invent resolution rules PostgreSQL does
//! not have; differences from PostgreSQL are listed where they are made.

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::array::ArrayElem;
use crate::types::DataType;

use super::common::bare_name;
use super::{BinaryOp, BinarySignature, UnaryOp};

/// A parameter type of a catalog entry: a concrete type or a pseudo-type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PT {
    T(DataType),
    /// `anynonarray` (every Brewric type).
    AnyNonArray,
}

pub(crate) const B: PT = PT::T(DataType::Bool);
pub(crate) const I2: PT = PT::T(DataType::Int16);
pub(crate) const I4: PT = PT::T(DataType::Int32);
pub(crate) const I8: PT = PT::T(DataType::Int64);
pub(crate) const F4: PT = PT::T(DataType::Float32);
pub(crate) const F8: PT = PT::T(DataType::Float64);
pub(crate) const N: PT = PT::T(DataType::Numeric);
pub(crate) const T: PT = PT::T(DataType::Text);
pub(crate) const C: PT = PT::T(DataType::Bpchar(None));
pub(crate) const BY: PT = PT::T(DataType::Bytea);
pub(crate) const D: PT = PT::T(DataType::Date);
pub(crate) const TS: PT = PT::T(DataType::Timestamp);
pub(crate) const TZ: PT = PT::T(DataType::TimestampTz);
pub(crate) const IV: PT = PT::T(DataType::Interval);
pub(crate) const J: PT = PT::T(DataType::Jsonb);
pub(crate) const TA: PT = PT::T(DataType::Array(ArrayElem::Text));
pub(crate) const ANY: PT = PT::AnyNonArray;
pub(crate) const NM: PT = PT::T(DataType::Name);
pub(crate) const CH: PT = PT::T(DataType::Char);
pub(crate) const OID: PT = PT::T(DataType::Oid);

/// The type with its length modifier dropped (resolution works on type OIDs).
pub(crate) fn base(t: DataType) -> DataType {
    match t {
        DataType::Varchar(_) => DataType::Varchar(None),
        DataType::Bpchar(_) => DataType::Bpchar(None),
        t => t,
    }
}

/// pg_type.typcategory.
pub(crate) fn category(t: DataType) -> char {
    t.category()
}

/// pg_type.typispreferred.
pub(crate) fn preferred(t: DataType) -> bool {
    t.preferred()
}

fn pt_category(p: PT) -> (char, bool) {
    match p {
        PT::T(t) => (category(t), preferred(t)),
        PT::AnyNonArray => ('P', false),
    }
}

/// pg_cast (plus length-coercion and I/O-conversion casts) restricted to Brewric's types.
/// Returns the weakest context the cast is allowed in: 'i' implicit, 'a' assignment, 'e' explicit.
fn cast_context(from: DataType, to: DataType) -> Option<char> {
    use DataType::*;
    let (from, to) = (base(from), base(to));
    if from == to {
        return Some('i');
    }
    if from == Unknown {
        return Some('i');
    }
    let c = match (from, to) {
        (Int16, Int32 | Int64 | Float32 | Float64 | Numeric) => 'i',
        (Int32, Int64 | Float32 | Float64 | Numeric) => 'i',
        (Int64, Float32 | Float64 | Numeric) => 'i',
        (Numeric, Float32 | Float64) => 'i',
        (Float32, Float64) => 'i',
        (Text | Varchar(_) | Bpchar(_), Text | Varchar(_) | Bpchar(_)) => 'i',
        (Date, Timestamp | TimestampTz) => 'i',
        (Timestamp, TimestampTz) => 'i',
        (Int32 | Int64, Int16) | (Int64, Int32) => 'a',
        (Float32 | Float64, Int16 | Int32 | Int64 | Numeric) => 'a',
        (Float64, Float32) => 'a',
        (Numeric, Int16 | Int32 | Int64) => 'a',
        (Timestamp, Date) | (TimestampTz, Date | Timestamp) => 'a',
        (Bool, Int32) | (Int32, Bool) => 'e',
        (Text | Varchar(_) | Bpchar(_), Name) | (Name | Char, Text) => 'i',
        (Name, Varchar(_) | Bpchar(_)) | (Char, Varchar(_) | Bpchar(_)) | (Text | Varchar(_) | Bpchar(_), Char) => 'a',
        (Int16 | Int32 | Int64, Oid) => 'i',
        (Oid, Int32 | Int64) => 'a',
        // An array casts as its elements do (PostgreSQL's array_coerce).
        (Array(a), Array(b)) => return cast_context(a.data_type(), b.data_type()),
        (Jsonb, Bool | Int16 | Int32 | Int64 | Float32 | Float64 | Numeric) => 'e',
        // Automatic I/O conversion casts: to a string type is assignment, from one explicit.
        (_, Text | Varchar(_) | Bpchar(_)) => 'a',
        (Text | Varchar(_) | Bpchar(_), _) => 'e',
        _ => return None,
    };
    Some(c)
}

/// Implicit (assignment=false) / assignment (assignment=true) cast allowed?
pub(crate) fn can_coerce(from: DataType, to: DataType, assignment: bool) -> bool {
    if to == DataType::Unknown {
        return from == DataType::Unknown;
    }
    match cast_context(from, to) {
        Some('i') => true,
        Some('a') => assignment,
        _ => false,
    }
}

pub(crate) fn can_cast_explicit(from: DataType, to: DataType) -> bool {
    if to == DataType::Unknown {
        return from == DataType::Unknown;
    }
    cast_context(from, to).is_some()
}

fn pt_accepts(input: DataType, p: PT) -> bool {
    match p {
        PT::T(t) => can_coerce(input, t, false),
        PT::AnyNonArray => true,
    }
}

fn pt_is(input: DataType, p: PT) -> bool {
    matches!(p, PT::T(t) if t == input)
}

/// What candidate selection found.
pub(crate) enum Selected {
    One(usize),
    NotFound,
    Ambiguous,
}

/// PostgreSQL's `func_match_argtypes` + `func_select_candidate` over
/// `cands` (each a parameter list) for `inputs` (base types).
pub(crate) fn select_candidate(inputs: &[DataType], cands: &[&[PT]]) -> Selected {
    let nargs = inputs.len();
    // Candidates the inputs can be coerced to implicitly.
    let mut live: Vec<usize> = (0..cands.len())
        .filter(|&k| {
            cands[k].len() == nargs && inputs.iter().zip(cands[k]).all(|(&i, &p)| pt_accepts(i, p))
        })
        .collect();
    match live.len() {
        0 => return Selected::NotFound,
        1 => return Selected::One(live[0]),
        _ => {}
    }
    let unknown = |i: usize| inputs[i] == DataType::Unknown;

    // Most exact matches.
    let keep_best = |live: &mut Vec<usize>, score: &dyn Fn(usize) -> usize| {
        let best = live.iter().map(|&k| score(k)).max().unwrap_or(0);
        live.retain(|&k| score(k) == best);
    };
    keep_best(&mut live, &|k| {
        (0..nargs)
            .filter(|&i| !unknown(i) && pt_is(inputs[i], cands[k][i]))
            .count()
    });
    if live.len() == 1 {
        return Selected::One(live[0]);
    }
    // Exact matches or preferred types (of the input's category) where coercion is needed.
    keep_best(&mut live, &|k| {
        (0..nargs)
            .filter(|&i| {
                !unknown(i)
                    && (pt_is(inputs[i], cands[k][i])
                        || matches!(cands[k][i], PT::T(t) if preferred(t) && category(t) == category(inputs[i])))
            })
            .count()
    });
    if live.len() == 1 {
        return Selected::One(live[0]);
    }
    let nunknowns = (0..nargs).filter(|&i| unknown(i)).count();
    if nunknowns == 0 {
        return Selected::Ambiguous;
    }
    // Resolve unknown inputs by the categories the candidates accept there.
    let mut slot_cat = vec![' '; nargs];
    let mut slot_pref = vec![false; nargs];
    let mut resolved = true;
    for i in 0..nargs {
        if !unknown(i) {
            continue;
        }
        let mut conflict = false;
        let mut first = true;
        for &k in &live {
            let (cat, pref) = pt_category(cands[k][i]);
            if first {
                slot_cat[i] = cat;
                slot_pref[i] = pref;
                first = false;
            } else if cat == slot_cat[i] {
                slot_pref[i] |= pref;
            } else if cat == 'S' {
                slot_cat[i] = cat;
                slot_pref[i] = pref;
            } else {
                conflict = true;
            }
        }
        if conflict && slot_cat[i] != 'S' {
            resolved = false;
            break;
        }
    }
    if resolved {
        let kept: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&k| {
                (0..nargs).all(|i| {
                    if !unknown(i) {
                        return true;
                    }
                    let (cat, pref) = pt_category(cands[k][i]);
                    cat == slot_cat[i] && (!slot_pref[i] || pref)
                })
            })
            .collect();
        if kept.len() == 1 {
            return Selected::One(kept[0]);
        }
        if !kept.is_empty() {
            live = kept;
        }
    }
    // Last gasp: all known inputs of one type; assume the unknowns are that type too.
    if nunknowns < nargs {
        let mut known: Option<DataType> = None;
        let mut same = true;
        for &t in inputs.iter().filter(|&&t| t != DataType::Unknown) {
            match known {
                None => known = Some(t),
                Some(k) if k != t => same = false,
                _ => {}
            }
        }
        if let (true, Some(kt)) = (same, known) {
            let fits: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&k| cands[k].iter().all(|&p| pt_accepts(kt, p)))
                .collect();
            if fits.len() == 1 {
                return Selected::One(fits[0]);
            }
        }
    }
    Selected::Ambiguous
}

/// One pg_operator row: operator, left, right, result.
type OpRow = (BinaryOp, PT, PT, PT);

const CMP_PAIRS: &[(PT, PT)] = &[
    (B, B),
    (BY, BY),
    (I8, I8),
    (I8, I2),
    (I8, I4),
    (I2, I8),
    (I2, I2),
    (I2, I4),
    (I4, I8),
    (I4, I2),
    (I4, I4),
    (T, T),
    (F4, F4),
    (F4, F8),
    (F8, F4),
    (F8, F8),
    (C, C),
    (D, D),
    (D, TS),
    (D, TZ),
    (TS, D),
    (TS, TS),
    (TS, TZ),
    (TZ, D),
    (TZ, TS),
    (TZ, TZ),
    (IV, IV),
    (N, N),
    (J, J),
    (NM, NM),
    (NM, T),
    (T, NM),
    (CH, CH),
    (OID, OID),
];

/// The integer and float cross-type pairs of +, -, *, / with their results.
const NUM_ARITH: &[(PT, PT, PT)] = &[
    (I8, I8, I8),
    (I8, I2, I8),
    (I8, I4, I8),
    (I2, I8, I8),
    (I2, I2, I2),
    (I2, I4, I4),
    (I4, I8, I8),
    (I4, I2, I4),
    (I4, I4, I4),
    (F4, F4, F4),
    (F4, F8, F8),
    (F8, F4, F8),
    (F8, F8, F8),
    (N, N, N),
];

const OTHER_OPS: &[OpRow] = &[
    (BinaryOp::Plus, I4, D, D),
    (BinaryOp::Plus, D, I4, D),
    (BinaryOp::Plus, D, IV, TS),
    (BinaryOp::Plus, TS, IV, TS),
    (BinaryOp::Plus, TZ, IV, TZ),
    (BinaryOp::Plus, IV, D, TS),
    (BinaryOp::Plus, IV, TS, TS),
    (BinaryOp::Plus, IV, TZ, TZ),
    (BinaryOp::Plus, IV, IV, IV),
    (BinaryOp::Minus, D, I4, D),
    (BinaryOp::Minus, D, D, I4),
    (BinaryOp::Minus, D, IV, TS),
    (BinaryOp::Minus, TS, TS, IV),
    (BinaryOp::Minus, TS, IV, TS),
    (BinaryOp::Minus, TZ, TZ, IV),
    (BinaryOp::Minus, TZ, IV, TZ),
    (BinaryOp::Minus, IV, IV, IV),
    (BinaryOp::Minus, J, T, J),
    (BinaryOp::Minus, J, I4, J),
    (BinaryOp::Multiply, F8, IV, IV),
    (BinaryOp::Multiply, IV, F8, IV),
    (BinaryOp::Divide, IV, F8, IV),
    (BinaryOp::Modulo, I8, I8, I8),
    (BinaryOp::Modulo, I2, I2, I2),
    (BinaryOp::Modulo, I4, I4, I4),
    (BinaryOp::Modulo, N, N, N),
    (BinaryOp::Concat, BY, BY, BY),
    (BinaryOp::Concat, T, T, T),
    (BinaryOp::Concat, T, ANY, T),
    (BinaryOp::Concat, ANY, T, T),
    (BinaryOp::Concat, J, J, J),
    (BinaryOp::Like, BY, BY, B),
    (BinaryOp::Like, T, T, B),
    (BinaryOp::Like, C, T, B),
    (BinaryOp::NotLike, BY, BY, B),
    (BinaryOp::NotLike, T, T, B),
    (BinaryOp::NotLike, C, T, B),
    (BinaryOp::ILike, T, T, B),
    (BinaryOp::ILike, C, T, B),
    (BinaryOp::NotILike, T, T, B),
    (BinaryOp::NotILike, C, T, B),
    (BinaryOp::RegexMatch, T, T, B),
    (BinaryOp::RegexMatch, C, T, B),
    (BinaryOp::RegexNotMatch, T, T, B),
    (BinaryOp::RegexNotMatch, C, T, B),
    (BinaryOp::RegexIMatch, T, T, B),
    (BinaryOp::RegexIMatch, C, T, B),
    (BinaryOp::RegexNotIMatch, T, T, B),
    (BinaryOp::RegexNotIMatch, C, T, B),
    (BinaryOp::JsonGet, J, T, J),
    (BinaryOp::JsonGet, J, I4, J),
    (BinaryOp::JsonGetText, J, T, T),
    (BinaryOp::JsonGetText, J, I4, T),
    (BinaryOp::JsonPath, J, TA, J),
    (BinaryOp::JsonPathText, J, TA, T),
    (BinaryOp::JsonExists, J, T, B),
    (BinaryOp::JsonExistsAny, J, TA, B),
    (BinaryOp::JsonExistsAll, J, TA, B),
];

/// The catalog rows of one operator as (left, right, result).
fn operator_rows(op: BinaryOp) -> Vec<(PT, PT, PT)> {
    let mut rows = Vec::new();
    if op.is_comparison() {
        rows.extend(CMP_PAIRS.iter().map(|&(l, r)| (l, r, B)));
    }
    if matches!(
        op,
        BinaryOp::Plus | BinaryOp::Minus | BinaryOp::Multiply | BinaryOp::Divide
    ) {
        rows.extend_from_slice(NUM_ARITH);
    }
    rows.extend(
        OTHER_OPS
            .iter()
            .filter(|r| r.0 == op)
            .map(|&(_, l, r, res)| (l, r, res)),
    );
    rows
}

fn pt_type(p: PT) -> DataType {
    match p {
        PT::T(t) => t,
        PT::AnyNonArray => DataType::Unknown,
    }
}

fn int_rank(t: DataType) -> u8 {
    match t {
        DataType::Int16 => 1,
        DataType::Int32 => 2,
        DataType::Int64 => 3,
        DataType::Float32 => 4,
        DataType::Float64 => 5,
        DataType::Date => 1,
        DataType::Timestamp => 2,
        DataType::TimestampTz => 3,
        _ => 0,
    }
}

/// Maps a chosen catalog operator to the types its kernel runs on: PostgreSQL's
/// cross-type integer/float/datetime operators widen both sides first (same
/// results); for `anynonarray || text` the non-text side keeps its type.
fn kernel_types(
    op: BinaryOp,
    l: PT,
    r: PT,
    res: PT,
    inputs: (DataType, DataType),
) -> BinarySignature {
    let (mut lt, mut rt) = (pt_type(l), pt_type(r));
    // The `anynonarray` side keeps its own type (an unknown literal is text);
    // the `||` kernel casts it to text itself, as `anytextcat` does.
    let own = |t: DataType| {
        if t == DataType::Unknown {
            DataType::Text
        } else {
            t
        }
    };
    if matches!(l, PT::AnyNonArray) {
        lt = own(inputs.0);
    }
    if matches!(r, PT::AnyNonArray) {
        rt = own(inputs.1);
    }
    let num = |t: DataType| {
        matches!(
            t,
            DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Float32
                | DataType::Float64
        )
    };
    let dt = |t: DataType| {
        matches!(
            t,
            DataType::Date | DataType::Timestamp | DataType::TimestampTz
        )
    };
    // name, "char" and text compare as text; oid as the bigint it is held in.
    let held = |t: DataType| match t {
        DataType::Name | DataType::Char => DataType::Text,
        DataType::Oid => DataType::Int64,
        t => t,
    };
    if op.is_comparison() {
        (lt, rt) = (held(lt), held(rt));
    }
    if lt != rt && ((num(lt) && num(rt)) || (op.is_comparison() && dt(lt) && dt(rt))) {
        let w = if int_rank(lt) >= int_rank(rt) { lt } else { rt };
        lt = w;
        rt = w;
    }
    BinarySignature {
        op,
        left: lt,
        right: rt,
        result: pt_type(res),
    }
}

fn no_operator(op: &str, left: Option<DataType>, right: DataType) -> DbError {
    let text = match left {
        Some(l) => format!(
            "operator does not exist: {} {op} {}",
            bare_name(l),
            bare_name(right)
        ),
        None => format!("operator does not exist: {op} {}", bare_name(right)),
    };
    DbError::new(sqlstate::UNDEFINED_FUNCTION, text)
        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

fn ambiguous_operator(op: &str, left: Option<DataType>, right: DataType) -> DbError {
    let text = match left {
        Some(l) => format!(
            "operator is not unique: {} {op} {}",
            bare_name(l),
            bare_name(right)
        ),
        None => format!("operator is not unique: {op} {}", bare_name(right)),
    };
    DbError::new(sqlstate::AMBIGUOUS_FUNCTION, text).with_hint(
        "Could not choose a best candidate operator. You might need to add explicit type casts.",
    )
}

fn require_bool(t: DataType, what: &str) -> DbResult<()> {
    if t == DataType::Bool || t == DataType::Unknown {
        Ok(())
    } else {
        Err(DbError::datatype_mismatch(format!(
            "argument of {what} must be type boolean, not type {}",
            bare_name(t)
        )))
    }
}

pub(crate) fn resolve_binary(
    op: BinaryOp,
    left: DataType,
    right: DataType,
) -> DbResult<BinarySignature> {
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        let w = if op == BinaryOp::And { "AND" } else { "OR" };
        require_bool(left, w)?;
        require_bool(right, w)?;
        return Ok(BinarySignature {
            op,
            left: DataType::Bool,
            right: DataType::Bool,
            result: DataType::Bool,
        });
    }
    if let (DataType::Record, DataType::Record | DataType::Unknown) | (DataType::Unknown, DataType::Record) = (left, right) {
        if op.is_comparison() {
            return Ok(BinarySignature {
                op,
                left: DataType::Record,
                right: DataType::Record,
                result: DataType::Bool,
            });
        }
    }
    // pg_operator has json twins of `->`, `->>`, `#>`, `#>>` (json is jsonb
    // here), so in PostgreSQL an untyped left operand matches both: ambiguous.
    if matches!(
        op,
        BinaryOp::JsonGet | BinaryOp::JsonGetText | BinaryOp::JsonPath | BinaryOp::JsonPathText
    ) && base(left) == DataType::Unknown
    {
        return Err(ambiguous_operator(op.pg_name(), Some(left), right));
    }
    if let (DataType::Array(_), _) | (_, DataType::Array(_)) = (left, right) {
        // Operators the catalog lists with an array operand (`jsonb #> text[]`).
        let takes_array = operator_rows(op)
            .iter()
            .any(|&(a, b, _)| [a, b].iter().any(|p| matches!(p, PT::T(DataType::Array(_)))));
        if takes_array {
            return resolve_listed(op, left, right);
        }
        // Arrays compare with arrays of the same element type (an untyped literal becomes one).
        let t = if let DataType::Array(_) = left { left } else { right };
        let other = if t == left { right } else { left };
        if op.is_comparison() && (other == t || other == DataType::Unknown) {
            return Ok(BinarySignature {
                op,
                left: t,
                right: t,
                result: DataType::Bool,
            });
        }
        return Err(no_operator(op.pg_name(), Some(left), right));
    }
    resolve_listed(op, left, right)
}

/// `left op right` among the operator's catalog rows: an exact match, else
/// PostgreSQL's candidate selection.
fn resolve_listed(op: BinaryOp, left: DataType, right: DataType) -> DbResult<BinarySignature> {
    let (l, r) = (base(left), base(right));
    let rows = operator_rows(op);
    // binary_oper_exact: an unknown side is assumed to be the other side's type.
    let (el, er) = match (l, r) {
        (DataType::Unknown, x) if x != DataType::Unknown => (x, x),
        (x, DataType::Unknown) if x != DataType::Unknown => (x, x),
        p => p,
    };
    let found = match rows
        .iter()
        .position(|&(a, b, _)| pt_is(el, a) && pt_is(er, b))
    {
        Some(k) => k,
        None => {
            let params: Vec<[PT; 2]> = rows.iter().map(|&(a, b, _)| [a, b]).collect();
            let cands: Vec<&[PT]> = params.iter().map(|p| &p[..]).collect();
            match select_candidate(&[l, r], &cands) {
                Selected::One(k) => k,
                Selected::NotFound => return Err(no_operator(op.pg_name(), Some(left), right)),
                Selected::Ambiguous => {
                    return Err(ambiguous_operator(op.pg_name(), Some(left), right))
                }
            }
        }
    };
    let (a, b, res) = rows[found];
    Ok(kernel_types(op, a, b, res, (left, right)))
}

const NEG_TYPES: &[PT] = &[I8, I2, I4, F4, F8, IV, N];
const UPLUS_TYPES: &[PT] = &[I8, I2, I4, F4, F8, N];

pub(crate) fn resolve_unary(op: UnaryOp, arg: DataType) -> DbResult<(DataType, DataType)> {
    let (name, list) = match op {
        UnaryOp::Not => {
            require_bool(arg, "NOT")?;
            return Ok((DataType::Bool, DataType::Bool));
        }
        UnaryOp::Neg => ("-", NEG_TYPES),
        UnaryOp::Plus => ("+", UPLUS_TYPES),
    };
    let a = base(arg);
    if let Some(p) = list.iter().find(|&&p| pt_is(a, p)) {
        let t = pt_type(*p);
        return Ok((t, t));
    }
    let params: Vec<[PT; 1]> = list.iter().map(|&p| [p]).collect();
    let cands: Vec<&[PT]> = params.iter().map(|p| &p[..]).collect();
    match select_candidate(&[a], &cands) {
        Selected::One(k) => {
            let t = pt_type(list[k]);
            Ok((t, t))
        }
        Selected::NotFound => Err(no_operator(name, None, arg)),
        Selected::Ambiguous => Err(ambiguous_operator(name, None, arg)),
    }
}

/// PostgreSQL's `select_common_type` followed by the per-input coercibility
/// check of `coerce_to_common_type`.
pub(crate) fn common_type(types: &[DataType], context: &str) -> DbResult<DataType> {
    let Some(&first) = types.first() else {
        return Ok(DataType::Text);
    };
    let mut ptype = base(first);
    if types.iter().all(|&t| base(t) == ptype) && ptype != DataType::Unknown {
        return Ok(with_typmod(ptype, types));
    }
    let mut pcat = category(ptype);
    let mut ppref = preferred(ptype);
    for &t in &types[1..] {
        let n = base(t);
        if n == DataType::Unknown || n == ptype {
            continue;
        }
        if ptype == DataType::Unknown {
            ptype = n;
            pcat = category(n);
            ppref = preferred(n);
        } else if category(n) != pcat {
            return Err(DbError::datatype_mismatch(format!(
                "{context} types {} and {} cannot be matched",
                bare_name(ptype),
                bare_name(n)
            )));
        } else if !ppref && can_coerce(ptype, n, false) && !can_coerce(n, ptype, false) {
            ptype = n;
            pcat = category(n);
            ppref = preferred(n);
        }
    }
    if ptype == DataType::Unknown {
        return Ok(DataType::Text);
    }
    for &t in types {
        if !can_coerce(t, ptype, false) {
            return Err(DbError::new(
                sqlstate::CANNOT_COERCE,
                format!(
                    "{context} could not convert type {} to {}",
                    bare_name(t),
                    bare_name(ptype)
                ),
            ));
        }
    }
    Ok(with_typmod(ptype, types))
}

/// `select_common_typmod`: keep a length modifier only when every input of the type has the same one.
fn with_typmod(ptype: DataType, types: &[DataType]) -> DataType {
    let mut mods = types
        .iter()
        .filter(|&&t| t != DataType::Unknown)
        .copied();
    let Some(first) = mods.next() else {
        return ptype;
    };
    if base(first) == ptype && mods.all(|t| t == first) {
        first
    } else {
        ptype
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataType::*;

    fn sig(op: BinaryOp, l: DataType, r: DataType) -> (DataType, DataType, DataType) {
        let s = resolve_binary(op, l, r).unwrap();
        (s.left, s.right, s.result)
    }

    #[test]
    fn arithmetic_promotion_as_postgres() {
        assert_eq!(sig(BinaryOp::Plus, Int32, Int32), (Int32, Int32, Int32));
        assert_eq!(sig(BinaryOp::Plus, Int32, Int64), (Int64, Int64, Int64));
        assert_eq!(sig(BinaryOp::Plus, Int16, Int16), (Int16, Int16, Int16));
        assert_eq!(sig(BinaryOp::Plus, Int16, Int32), (Int32, Int32, Int32));
        assert_eq!(
            sig(BinaryOp::Plus, Int32, Float64),
            (Float64, Float64, Float64)
        );
        assert_eq!(
            sig(BinaryOp::Plus, Int32, Numeric),
            (Numeric, Numeric, Numeric)
        );
        assert_eq!(
            sig(BinaryOp::Plus, Numeric, Float64),
            (Float64, Float64, Float64)
        );
        // PostgreSQL: real + integer and real + numeric are double precision.
        assert_eq!(sig(BinaryOp::Plus, Float32, Int32).2, Float64);
        assert_eq!(sig(BinaryOp::Plus, Float32, Numeric).2, Float64);
        assert_eq!(sig(BinaryOp::Plus, Float32, Float32).2, Float32);
        assert_eq!(sig(BinaryOp::Divide, Int32, Int32).2, Int32);
        assert_eq!(sig(BinaryOp::Modulo, Int16, Int32), (Int32, Int32, Int32));
        assert_eq!(sig(BinaryOp::Plus, Int32, Unknown), (Int32, Int32, Int32));
        assert_eq!(
            sig(BinaryOp::Multiply, Interval, Int32),
            (Interval, Float64, Interval)
        );
    }

    #[test]
    fn comparisons_as_postgres() {
        assert_eq!(sig(BinaryOp::Eq, Int32, Unknown), (Int32, Int32, Bool));
        assert_eq!(sig(BinaryOp::Eq, Int32, Numeric), (Numeric, Numeric, Bool));
        assert_eq!(sig(BinaryOp::Eq, Float64, Int32), (Float64, Float64, Bool));
        assert_eq!(
            sig(BinaryOp::Lt, Date, Timestamp),
            (Timestamp, Timestamp, Bool)
        );
        assert_eq!(
            sig(BinaryOp::Lt, Timestamp, TimestampTz),
            (TimestampTz, TimestampTz, Bool)
        );
        assert_eq!(
            sig(BinaryOp::Eq, Varchar(Some(3)), Text),
            (Text, Text, Bool)
        );
        assert_eq!(sig(BinaryOp::Eq, Bpchar(Some(3)), Text), (Text, Text, Bool));
        assert_eq!(
            sig(BinaryOp::Eq, Bpchar(Some(3)), Unknown),
            (Bpchar(None), Bpchar(None), Bool)
        );
        assert_eq!(
            sig(BinaryOp::Gt, TimestampTz, Unknown),
            (TimestampTz, TimestampTz, Bool)
        );
        let e = resolve_binary(BinaryOp::Eq, Text, Int32).unwrap_err();
        assert_eq!(e.code, "42883");
        assert_eq!(e.message, "operator does not exist: text = integer");
        assert!(e.hint.as_deref().unwrap().starts_with("No operator matches"));
    }

    #[test]
    fn datetime_operators() {
        assert_eq!(sig(BinaryOp::Plus, Date, Int32), (Date, Int32, Date));
        assert_eq!(sig(BinaryOp::Minus, Date, Date), (Date, Date, Int32));
        assert_eq!(
            sig(BinaryOp::Plus, Date, Interval),
            (Date, Interval, Timestamp)
        );
        assert_eq!(
            sig(BinaryOp::Minus, Timestamp, Timestamp),
            (Timestamp, Timestamp, Interval)
        );
        assert_eq!(
            sig(BinaryOp::Minus, Timestamp, Date),
            (Timestamp, Timestamp, Interval)
        );
        assert_eq!(
            sig(BinaryOp::Plus, TimestampTz, Unknown),
            (TimestampTz, Interval, TimestampTz)
        );
        // PostgreSQL: now() - '...' is timestamptz - timestamptz (the literal adopts the other side's type).
        assert_eq!(sig(BinaryOp::Minus, TimestampTz, Unknown).2, Interval);
        assert_eq!(sig(BinaryOp::Minus, TimestampTz, Interval).2, TimestampTz);
    }

    #[test]
    fn concat_and_like() {
        assert_eq!(sig(BinaryOp::Concat, Unknown, Unknown), (Text, Text, Text));
        assert_eq!(sig(BinaryOp::Concat, Text, Int32), (Text, Int32, Text));
        assert_eq!(sig(BinaryOp::Concat, Unknown, Int32), (Text, Int32, Text));
        assert_eq!(sig(BinaryOp::Concat, Int32, Unknown), (Int32, Text, Text));
        assert_eq!(sig(BinaryOp::Concat, Bool, Text), (Bool, Text, Text));
        assert_eq!(sig(BinaryOp::Concat, Bytea, Bytea), (Bytea, Bytea, Bytea));
        assert_eq!(
            sig(BinaryOp::Concat, Text, Varchar(None)),
            (Text, Text, Text)
        );
        assert_eq!(
            resolve_binary(BinaryOp::Concat, Int32, Int32)
                .unwrap_err()
                .code,
            "42883"
        );
        assert_eq!(
            sig(BinaryOp::Like, Varchar(Some(4)), Unknown),
            (Text, Text, Bool)
        );
        assert_eq!(
            sig(BinaryOp::Like, Bpchar(Some(4)), Unknown),
            (Bpchar(None), Text, Bool)
        );
        assert_eq!(sig(BinaryOp::RegexMatch, Text, Unknown), (Text, Text, Bool));
    }

    #[test]
    fn unary_and_boolean() {
        assert_eq!(resolve_unary(UnaryOp::Neg, Int32).unwrap(), (Int32, Int32));
        assert_eq!(
            resolve_unary(UnaryOp::Neg, Interval).unwrap(),
            (Interval, Interval)
        );
        let e = resolve_unary(UnaryOp::Neg, Unknown).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42725", "operator is not unique: - unknown")
        );
        let e = resolve_unary(UnaryOp::Not, Int32).unwrap_err();
        assert_eq!(
            e.message,
            "argument of NOT must be type boolean, not type integer"
        );
        let e = resolve_binary(BinaryOp::And, Int32, Bool).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "42804",
                "argument of AND must be type boolean, not type integer"
            )
        );
        assert!(resolve_binary(BinaryOp::Or, Unknown, Bool).is_ok());
        let e = resolve_unary(UnaryOp::Neg, Bool).unwrap_err();
        assert_eq!(e.message, "operator does not exist: - boolean");
    }

    #[test]
    fn coercion_table() {
        assert!(can_coerce(Int16, Int64, false));
        assert!(can_coerce(Int64, Numeric, false));
        assert!(can_coerce(Numeric, Float64, false));
        assert!(!can_coerce(Float64, Int32, false));
        assert!(can_coerce(Float64, Int32, true));
        assert!(can_coerce(Date, TimestampTz, false));
        assert!(!can_coerce(TimestampTz, Date, false));
        assert!(can_coerce(Int32, Text, true));
        assert!(!can_coerce(Int32, Text, false));
        assert!(!can_coerce(Text, Int32, true));
        assert!(can_cast_explicit(Text, Int32));
        assert!(can_cast_explicit(Bool, Int32));
        assert!(!can_cast_explicit(Bool, Int64));
        assert!(!can_cast_explicit(Int32, Date));
        assert!(can_coerce(Unknown, Interval, false));
        assert!(can_coerce(Varchar(Some(3)), Bpchar(Some(5)), false));
    }

    #[test]
    fn common_types_as_postgres() {
        assert_eq!(common_type(&[Int32, Numeric], "COALESCE").unwrap(), Numeric);
        assert_eq!(
            common_type(&[Varchar(Some(3)), Varchar(Some(5))], "CASE").unwrap(),
            Varchar(None)
        );
        assert_eq!(
            common_type(&[Varchar(Some(3)), Varchar(Some(3))], "CASE").unwrap(),
            Varchar(Some(3))
        );
        assert_eq!(common_type(&[Unknown, Unknown], "UNION").unwrap(), Text);
        assert_eq!(common_type(&[Int32, Int64], "GREATEST").unwrap(), Int64);
        assert_eq!(
            common_type(&[Float32, Numeric], "COALESCE").unwrap(),
            Float32
        );
        assert_eq!(
            common_type(&[TimestampTz, Date], "COALESCE").unwrap(),
            TimestampTz
        );
        assert_eq!(
            common_type(&[Date, Timestamp], "COALESCE").unwrap(),
            Timestamp
        );
        assert_eq!(common_type(&[Unknown, Int32], "VALUES").unwrap(), Int32);
        let e = common_type(&[Int32, Text], "UNION").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42804", "UNION types integer and text cannot be matched")
        );
        let e = common_type(&[Jsonb, Bytea], "UNION").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42846", "UNION could not convert type bytea to jsonb")
        );
    }
}
