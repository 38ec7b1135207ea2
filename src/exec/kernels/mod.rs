//! Vectorized kernels: operators, casts and scalar functions over columns,
//! plus PostgreSQL's operator / function / cast type resolution.
//!
//! This file owns the public API the binder and the expression evaluator
//! call (`resolve_*`, `eval_*`, `can_coerce`, `common_type`, `cast_*`) and
//! dispatches to the submodules:
//! - `resolve`: PostgreSQL's candidate selection over an operator / cast /
//!   function catalog (`func_select_candidate`, `select_common_type`);
//! - `common`: operand access, validity combination and the generic
//!   column/scalar loop drivers every kernel uses;
//! - `arith`, `compare`, `logic`, `like`, `cast`, `string`, `math`,
//!   `datetime`, `jsonb`, `array`: the kernels; `functions`: the
//!   scalar-function catalog and its evaluation.
//!
//! Must not: parse SQL, know about plans or storage, panic on any value,
//! or loop over `Datum`s on a hot path (types are dispatched once per call).
//! Calendar arithmetic lives in `crate::types::datetime` and text I/O in
//! `crate::types::text`; kernels call them, never reimplement them.

mod arith;
mod array;
mod cast;
mod common;
mod compare;
mod datetime;
mod functions;
mod jsonb;
mod like;
mod logic;
mod math;
mod resolve;
mod string;

use crate::error::DbResult;
use crate::exec::vector::Column;
use crate::exec::{EvalContext, Operand};
use crate::types::{DataType, Datum};

pub use functions::ScalarFunction;

/// A binary SQL operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Plus,
    Minus,
    Multiply,
    Divide,
    Modulo,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    /// `||`
    Concat,
    Like,
    NotLike,
    ILike,
    NotILike,
    /// `~`
    RegexMatch,
    /// `!~`
    RegexNotMatch,
    /// `~*`
    RegexIMatch,
    /// `!~*`
    RegexNotIMatch,
    And,
    Or,
    /// `->` (jsonb member by key or element by index)
    JsonGet,
    /// `->>` (the same as text)
    JsonGetText,
    /// `#>` (jsonb at a text[] path)
    JsonPath,
    /// `#>>` (the same as text)
    JsonPathText,
    /// `?` (key or string element exists)
    JsonExists,
    /// `?|` (any of a text[] exists)
    JsonExistsAny,
    /// `?&` (all of a text[] exist)
    JsonExistsAll,
}

impl BinaryOp {
    /// The operator's name in pg_operator (what error messages show).
    pub fn pg_name(self) -> &'static str {
        match self {
            BinaryOp::Plus => "+",
            BinaryOp::Minus => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::Concat => "||",
            BinaryOp::Like => "~~",
            BinaryOp::NotLike => "!~~",
            BinaryOp::ILike => "~~*",
            BinaryOp::NotILike => "!~~*",
            BinaryOp::RegexMatch => "~",
            BinaryOp::RegexNotMatch => "!~",
            BinaryOp::RegexIMatch => "~*",
            BinaryOp::RegexNotIMatch => "!~*",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::JsonGet => "->",
            BinaryOp::JsonGetText => "->>",
            BinaryOp::JsonPath => "#>",
            BinaryOp::JsonPathText => "#>>",
            BinaryOp::JsonExists => "?",
            BinaryOp::JsonExistsAny => "?|",
            BinaryOp::JsonExistsAll => "?&",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq
        )
    }
}

/// A prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
    Plus,
}

/// The types the operands must be cast to (the binder inserts the casts) and the result type.
///
/// `left`/`right` are the types the kernel runs on; every one of them is an
/// implicit coercion of the operand's type (`can_coerce(from, to, false)`),
/// so the binder's casts never need more. For `||` with a non-string operand
/// (PostgreSQL's `anynonarray || text`) the non-string side keeps its own
/// type and the kernel casts it to text (so `'a' || true` is `'atrue'`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinarySignature {
    pub op: BinaryOp,
    pub left: DataType,
    pub right: DataType,
    pub result: DataType,
}

/// A resolved scalar function call: the kernel, the types the arguments must
/// be cast to, and the result type.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSignature {
    pub func: ScalarFunction,
    pub args: Vec<DataType>,
    pub result: DataType,
}

/// Resolves `left op right` the way PostgreSQL's `oper_select_candidate` does.
/// Errors: 42883 operator does not exist, 42725 operator is not unique,
/// 42804 argument of AND/OR must be type boolean.
pub fn resolve_binary(op: BinaryOp, left: DataType, right: DataType) -> DbResult<BinarySignature> {
    resolve::resolve_binary(op, left, right)
}

/// Evaluates a resolved binary operator over `len` rows. Operands whose type
/// differs from the signature are cast here (defensively; the binder should
/// already have inserted the casts).
pub fn eval_binary(
    sig: &BinarySignature,
    left: Operand,
    right: Operand,
    len: usize,
    ctx: &EvalContext,
) -> DbResult<Column> {
    match sig.op {
        BinaryOp::And | BinaryOp::Or => {
            let l = common::Held::coerce(left, DataType::Bool, ctx)?;
            let r = common::Held::coerce(right, DataType::Bool, ctx)?;
            return logic::and_or(sig.op == BinaryOp::And, l.operand(), r.operand(), len);
        }
        _ => {}
    }
    let l = common::Held::coerce(left, sig.left, ctx)?;
    let r = common::Held::coerce(right, sig.right, ctx)?;
    let (l, r) = (l.operand(), r.operand());
    let nulls = common::Nulls::of2(&l, &r, len)?;
    if nulls.all_null() {
        return Ok(common::null_column(sig.result, len));
    }
    match sig.op {
        BinaryOp::Eq
        | BinaryOp::NotEq
        | BinaryOp::Lt
        | BinaryOp::LtEq
        | BinaryOp::Gt
        | BinaryOp::GtEq => compare::compare(sig.op, sig.left, l, r, len, nulls),
        BinaryOp::Plus
        | BinaryOp::Minus
        | BinaryOp::Multiply
        | BinaryOp::Divide
        | BinaryOp::Modulo => arith::arith(sig, l, r, len, nulls, ctx),
        BinaryOp::Concat => string::concat_op(sig, l, r, len, nulls, ctx),
        BinaryOp::Like | BinaryOp::NotLike | BinaryOp::ILike | BinaryOp::NotILike => {
            like::like_op(sig.op, sig.left, l, r, len, nulls)
        }
        BinaryOp::RegexMatch
        | BinaryOp::RegexNotMatch
        | BinaryOp::RegexIMatch
        | BinaryOp::RegexNotIMatch => like::regex_op(sig.op, l, r, len, nulls),
        BinaryOp::JsonGet
        | BinaryOp::JsonGetText
        | BinaryOp::JsonPath
        | BinaryOp::JsonPathText
        | BinaryOp::JsonExists
        | BinaryOp::JsonExistsAny
        | BinaryOp::JsonExistsAll => jsonb::jsonb_access(sig, l, r, len, nulls),
        BinaryOp::And | BinaryOp::Or => Err(crate::error::DbError::internal("unreachable AND/OR")),
    }
}

/// Resolves a prefix operator: (the type the argument must be cast to, the result type).
/// `NOT` requires boolean (42804 "argument of NOT must be type boolean, not type integer").
pub fn resolve_unary(op: UnaryOp, arg: DataType) -> DbResult<(DataType, DataType)> {
    resolve::resolve_unary(op, arg)
}

/// Evaluates a resolved prefix operator; `arg_type` is the resolved argument type.
pub fn eval_unary(op: UnaryOp, arg_type: DataType, arg: Operand, len: usize) -> DbResult<Column> {
    let ctx = EvalContext::default();
    let held = common::Held::coerce(arg, arg_type, &ctx)?;
    let arg = held.operand();
    match op {
        UnaryOp::Not => logic::not(arg, len),
        UnaryOp::Neg => arith::negate(arg_type, arg, len),
        UnaryOp::Plus => Ok(arg.to_column(len).into_owned()),
    }
}

/// Implicit (assignment=false) / assignment (assignment=true) cast allowed?
/// Explicit casts use `can_cast_explicit`.
pub fn can_coerce(from: DataType, to: DataType, assignment: bool) -> bool {
    resolve::can_coerce(from, to, assignment)
}

/// Are values of `from` held exactly as `to` holds them (a cast is a relabel)?
pub fn same_representation(from: DataType, to: DataType) -> bool {
    common::same_representation(from, to)
}

/// Is `CAST(x AS to)` allowed for a value of type `from` (pg_cast plus I/O conversions)?
pub fn can_cast_explicit(from: DataType, to: DataType) -> bool {
    resolve::can_cast_explicit(from, to)
}

/// PostgreSQL's rule for UNION/CASE/COALESCE/IN/VALUES columns: the common
/// type, or 42804 "X types a and b cannot be matched" (`context` is the word,
/// e.g. "UNION", "CASE", "COALESCE").
pub fn common_type(types: &[DataType], context: &str) -> DbResult<DataType> {
    resolve::common_type(types, context)
}

/// Casts a column to `to`. Casts to varchar(n)/char(n) truncate silently (the
/// explicit-cast rule); callers doing assignment call `check_string_length`
/// on the input first to raise 22001 as PostgreSQL does.
pub fn cast_column(col: &Column, to: DataType, ctx: &EvalContext) -> DbResult<Column> {
    cast::cast_column(col, to, ctx)
}

/// Casts one value (constants, parameters).
pub fn cast_datum(
    value: &Datum,
    from: DataType,
    to: DataType,
    ctx: &EvalContext,
) -> DbResult<Datum> {
    cast::cast_datum(value, from, to, ctx)
}

/// Assignment-cast length check for varchar(n)/char(n) targets: 22001
/// "value too long for type character varying(n)" when a valid value of
/// `col` (a string column) is longer than n characters, unless the excess is
/// all spaces (PostgreSQL then truncates silently). Other targets: Ok.
pub fn check_string_length(col: &Column, to: DataType) -> DbResult<()> {
    cast::check_string_length(col, to)
}

/// `a / b` for numeric with PostgreSQL's result scale (select_div_scale,
/// capped at rust_decimal's 28 digits); 22012 on a zero divisor. For avg().
pub fn numeric_div(a: crate::types::Numeric, b: crate::types::Numeric) -> DbResult<crate::types::Numeric> {
    arith::numeric_div(a, b)
}

/// `a - b` for numeric with PostgreSQL's rules for NaN and ±Infinity. For RANGE frames.
pub fn numeric_sub(a: crate::types::Numeric, b: crate::types::Numeric) -> DbResult<crate::types::Numeric> {
    arith::numeric_sub(a, b)
}

/// Unary minus on numeric (±Infinity trade places). For descending RANGE frames.
pub fn numeric_neg(a: crate::types::Numeric) -> crate::types::Numeric {
    arith::numeric_neg(a)
}

/// `a + b` for numeric with PostgreSQL's rules for NaN and ±Infinity. For sum().
pub fn numeric_add(a: crate::types::Numeric, b: crate::types::Numeric) -> DbResult<crate::types::Numeric> {
    arith::numeric_add(a, b)
}

/// Resolves a scalar function call by lower-case name (no schema) and argument types.
/// Errors: 42883 "function f(integer) does not exist" (with PostgreSQL's hint),
/// 42725 "function f(unknown) is not unique", 42804 for COALESCE/GREATEST/LEAST mismatches.
pub fn resolve_function(name: &str, args: &[DataType]) -> DbResult<FunctionSignature> {
    functions::resolve_function(name, args)
}

/// Evaluates a resolved function over `len` rows.
pub fn eval_function(
    sig: &FunctionSignature,
    args: &[Operand],
    len: usize,
    ctx: &EvalContext,
) -> DbResult<Column> {
    functions::eval_function(sig, args, len, ctx)
}

#[cfg(test)]
mod tests;
