//! The scalar-function catalog (PostgreSQL 15's pg_proc rows among
//! Brewric's types, plus TimescaleDB's time_bucket and Brewric's epoch_ns),
//! function resolution (exact match, function-style casts, then
//! `func_select_candidate` over implicit coercions), the special forms with
//! common-type resolution (coalesce, greatest, least, nullif) and variadic
//! concat/concat_ws, and evaluation dispatch to the kernel files.
//! Must not: implement kernels for a type family (those live in string.rs,
//! math.rs, datetime.rs, cast.rs); this file only resolves and dispatches.

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::Column;
use crate::exec::{EvalContext, Operand};
use crate::types::{DataType, Datum};

use super::common::{bare_name, null_column, prim, prim_column, Held, Nulls};
use super::resolve::{
    self, base, select_candidate, Selected, B, BY, C, D, F8, I2, I4, I8, IV, N, OID, PT, T, TS, TZ,
};
use super::FunctionSignature;

/// A scalar function kernel. The resolved argument types in the signature
/// pick the type-specific loop (e.g. `Abs` on integer vs numeric).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarFunction {
    // text
    Lower,
    Upper,
    Initcap,
    CharLength,
    OctetLength,
    BitLength,
    Substr,
    Btrim,
    Ltrim,
    Rtrim,
    Replace,
    Strpos,
    Left,
    Right,
    Repeat,
    Reverse,
    Lpad,
    Rpad,
    StartsWith,
    SplitPart,
    Translate,
    /// ARRAY[…] (variadic; the binder builds its signature).
    ArrayConstruct,
    /// ROW(…) / (a, b): an anonymous record (variadic, not strict).
    RowConstruct,
    /// a[i][j]…: the array, then one integer per subscript.
    ArraySubscript,
    /// a[lo:hi]…: the array, the number of subscripts, a mask of the bounds
    /// given (bit 2k: the k-th subscript's lower bound, 2k+1: its upper),
    /// then those bounds.
    ArraySlice,
    ArrayLength,
    ArrayLower,
    ArrayUpper,
    ArrayNdims,
    Cardinality,
    ArrayToString,
    /// `||` over arrays, array_cat / array_append / array_prepend (not strict).
    ArrayCat,
    /// string_to_array(text, delimiter [, null string]) (not strict in the delimiter).
    StringToArray,
    /// format_type(type oid, typmod): the type's SQL name (not strict in the typmod).
    FormatType,
    /// to_date(text, template) and to_timestamp(text, template).
    ToDateFmt,
    ToTimestampFmt,
    ToChar,
    JustifyHours,
    JustifyDays,
    JustifyInterval,
    MakeInterval,
    Scale,
    /// like_escape(pattern, escape): the pattern with `\` as its escape character.
    LikeEscape,
    /// similar_to_escape(pattern [, escape]): a SIMILAR TO pattern as a regular expression.
    SimilarToEscape,
    Md5,
    Chr,
    Ascii,
    ToHex,
    SizePretty,
    QuoteIdent,
    QuoteLiteral,
    Concat,
    ConcatWs,
    Format,
    // math
    Abs,
    Sign,
    Round,
    Trunc,
    Ceil,
    Floor,
    Sqrt,
    Cbrt,
    Power,
    /// Integer `&`, `|`, `#`, `<<`, `>>` (bound from the operators, named by their symbols).
    BitAnd,
    BitOr,
    BitXor,
    ShiftLeft,
    ShiftRight,
    /// booleq / boolne.
    BoolEq,
    BoolNe,
    Exp,
    Ln,
    Log10,
    /// log(base, x)
    Log,
    Mod,
    Div,
    Pi,
    Random,
    Degrees,
    Radians,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    // conditional
    Coalesce,
    Greatest,
    Least,
    NullIf,
    // date / time
    DateTrunc,
    DatePart,
    Extract,
    TimeBucket,
    /// date_bin(stride, source, origin): time_bucket without months, PostgreSQL's errors.
    DateBin,
    /// timezone(zone, x) = `x AT TIME ZONE zone`: timestamptz → wall clock
    /// in the zone; timestamp → the instant of that wall clock in the zone.
    Timezone,
    ToTimestamp,
    Now,
    CurrentDate,
    LocalTimestamp,
    Age,
    MakeDate,
    EpochNs,
    /// A function-style cast (`int4(x)`, `text(x)`, `date(ts)`): the result type is the target.
    Cast,
}

use ScalarFunction as F;
const TEXT_ARRAY: DataType = DataType::Array(crate::types::array::ArrayElem::Text);

type Entry = (&'static str, F, &'static [PT], PT);

/// pg_proc rows by name (aliases as PostgreSQL defines them: ceiling, pow,
/// character_length, substring, position; trim is btrim, as the parser makes it).
const CATALOG: &[Entry] = &[
    ("lower", F::Lower, &[T], T),
    ("upper", F::Upper, &[T], T),
    ("initcap", F::Initcap, &[T], T),
    ("length", F::CharLength, &[T], I4),
    ("length", F::CharLength, &[C], I4),
    ("length", F::CharLength, &[BY], I4),
    ("char_length", F::CharLength, &[T], I4),
    ("char_length", F::CharLength, &[C], I4),
    ("character_length", F::CharLength, &[T], I4),
    ("character_length", F::CharLength, &[C], I4),
    ("octet_length", F::OctetLength, &[T], I4),
    ("octet_length", F::OctetLength, &[C], I4),
    ("octet_length", F::OctetLength, &[BY], I4),
    ("bit_length", F::BitLength, &[T], I4),
    ("bit_length", F::BitLength, &[BY], I4),
    ("substr", F::Substr, &[T, I4], T),
    ("substr", F::Substr, &[T, I4, I4], T),
    ("substr", F::Substr, &[BY, I4], BY),
    ("substr", F::Substr, &[BY, I4, I4], BY),
    ("substring", F::Substr, &[T, I4], T),
    ("substring", F::Substr, &[T, I4, I4], T),
    ("substring", F::Substr, &[BY, I4], BY),
    ("substring", F::Substr, &[BY, I4, I4], BY),
    ("btrim", F::Btrim, &[T], T),
    ("btrim", F::Btrim, &[T, T], T),
    ("btrim", F::Btrim, &[BY, BY], BY),
    ("trim", F::Btrim, &[T], T),
    ("trim", F::Btrim, &[T, T], T),
    ("ltrim", F::Ltrim, &[T], T),
    ("ltrim", F::Ltrim, &[T, T], T),
    ("ltrim", F::Ltrim, &[BY, BY], BY),
    ("rtrim", F::Rtrim, &[T], T),
    ("rtrim", F::Rtrim, &[T, T], T),
    ("rtrim", F::Rtrim, &[BY, BY], BY),
    ("replace", F::Replace, &[T, T, T], T),
    ("strpos", F::Strpos, &[T, T], I4),
    ("position", F::Strpos, &[T, T], I4),
    ("position", F::Strpos, &[BY, BY], I4),
    ("left", F::Left, &[T, I4], T),
    ("right", F::Right, &[T, I4], T),
    ("repeat", F::Repeat, &[T, I4], T),
    ("reverse", F::Reverse, &[T], T),
    ("lpad", F::Lpad, &[T, I4], T),
    ("lpad", F::Lpad, &[T, I4, T], T),
    ("rpad", F::Rpad, &[T, I4], T),
    ("rpad", F::Rpad, &[T, I4, T], T),
    ("starts_with", F::StartsWith, &[T, T], B),
    ("split_part", F::SplitPart, &[T, T, I4], T),
    ("string_to_array", F::StringToArray, &[T, T], PT::T(TEXT_ARRAY)),
    ("string_to_array", F::StringToArray, &[T, T, T], PT::T(TEXT_ARRAY)),
    ("translate", F::Translate, &[T, T, T], T),
    ("like_escape", F::LikeEscape, &[T, T], T),
    ("format_type", F::FormatType, &[OID, I4], T),
    ("similar_to_escape", F::SimilarToEscape, &[T], T),
    ("similar_to_escape", F::SimilarToEscape, &[T, T], T),
    ("md5", F::Md5, &[T], T),
    ("md5", F::Md5, &[BY], T),
    ("chr", F::Chr, &[I4], T),
    ("ascii", F::Ascii, &[T], I4),
    ("to_hex", F::ToHex, &[I4], T),
    ("to_hex", F::ToHex, &[I8], T),
    ("pg_size_pretty", F::SizePretty, &[I8], T),
    ("quote_ident", F::QuoteIdent, &[T], T),
    ("quote_literal", F::QuoteLiteral, &[T], T),
    // math
    ("abs", F::Abs, &[I8], I8),
    ("abs", F::Abs, &[F8], F8),
    ("abs", F::Abs, &[I4], I4),
    ("abs", F::Abs, &[N], N),
    ("abs", F::Abs, &[resolve::F4], resolve::F4),
    ("abs", F::Abs, &[I2], I2),
    ("sign", F::Sign, &[F8], F8),
    ("sign", F::Sign, &[N], N),
    ("round", F::Round, &[F8], F8),
    ("round", F::Round, &[N], N),
    ("round", F::Round, &[N, I4], N),
    ("scale", F::Scale, &[N], I4),
    ("trunc", F::Trunc, &[F8], F8),
    ("trunc", F::Trunc, &[N], N),
    ("trunc", F::Trunc, &[N, I4], N),
    ("ceil", F::Ceil, &[F8], F8),
    ("ceil", F::Ceil, &[N], N),
    ("ceiling", F::Ceil, &[F8], F8),
    ("ceiling", F::Ceil, &[N], N),
    ("floor", F::Floor, &[F8], F8),
    ("floor", F::Floor, &[N], N),
    ("sqrt", F::Sqrt, &[F8], F8),
    ("sqrt", F::Sqrt, &[N], N),
    ("cbrt", F::Cbrt, &[F8], F8),
    ("power", F::Power, &[F8, F8], F8),
    ("power", F::Power, &[N, N], N),
    ("pow", F::Power, &[F8, F8], F8),
    ("pow", F::Power, &[N, N], N),
    ("&", F::BitAnd, &[I2, I2], I2),
    ("&", F::BitAnd, &[I4, I4], I4),
    ("&", F::BitAnd, &[I8, I8], I8),
    ("|", F::BitOr, &[I2, I2], I2),
    ("|", F::BitOr, &[I4, I4], I4),
    ("|", F::BitOr, &[I8, I8], I8),
    ("#", F::BitXor, &[I2, I2], I2),
    ("#", F::BitXor, &[I4, I4], I4),
    ("#", F::BitXor, &[I8, I8], I8),
    ("<<", F::ShiftLeft, &[I2, I4], I2),
    ("<<", F::ShiftLeft, &[I4, I4], I4),
    ("<<", F::ShiftLeft, &[I8, I4], I8),
    (">>", F::ShiftRight, &[I2, I4], I2),
    (">>", F::ShiftRight, &[I4, I4], I4),
    (">>", F::ShiftRight, &[I8, I4], I8),
    ("booleq", F::BoolEq, &[B, B], B),
    ("boolne", F::BoolNe, &[B, B], B),
    ("exp", F::Exp, &[F8], F8),
    ("exp", F::Exp, &[N], N),
    ("ln", F::Ln, &[F8], F8),
    ("ln", F::Ln, &[N], N),
    ("log", F::Log10, &[F8], F8),
    ("log", F::Log10, &[N], N),
    ("log", F::Log, &[N, N], N),
    ("log10", F::Log10, &[F8], F8),
    ("log10", F::Log10, &[N], N),
    ("mod", F::Mod, &[I8, I8], I8),
    ("mod", F::Mod, &[I4, I4], I4),
    ("mod", F::Mod, &[N, N], N),
    ("mod", F::Mod, &[I2, I2], I2),
    ("div", F::Div, &[N, N], N),
    ("pi", F::Pi, &[], F8),
    ("random", F::Random, &[], F8),
    ("degrees", F::Degrees, &[F8], F8),
    ("radians", F::Radians, &[F8], F8),
    ("sin", F::Sin, &[F8], F8),
    ("cos", F::Cos, &[F8], F8),
    ("tan", F::Tan, &[F8], F8),
    ("asin", F::Asin, &[F8], F8),
    ("acos", F::Acos, &[F8], F8),
    ("atan", F::Atan, &[F8], F8),
    ("atan2", F::Atan2, &[F8, F8], F8),
    // date / time
    ("date_trunc", F::DateTrunc, &[T, TS], TS),
    ("date_trunc", F::DateTrunc, &[T, TZ], TZ),
    ("date_trunc", F::DateTrunc, &[T, IV], IV),
    ("date_part", F::DatePart, &[T, D], F8),
    ("date_part", F::DatePart, &[T, TS], F8),
    ("date_part", F::DatePart, &[T, TZ], F8),
    ("date_part", F::DatePart, &[T, IV], F8),
    ("extract", F::Extract, &[T, D], N),
    ("extract", F::Extract, &[T, TS], N),
    ("extract", F::Extract, &[T, TZ], N),
    ("extract", F::Extract, &[T, IV], N),
    ("date_bin", F::DateBin, &[IV, TS, TS], TS),
    ("date_bin", F::DateBin, &[IV, TZ, TZ], TZ),
    ("timezone", F::Timezone, &[T, TZ], TS),
    ("timezone", F::Timezone, &[T, TS], TZ),
    ("timezone", F::Timezone, &[IV, TZ], TS),
    ("timezone", F::Timezone, &[IV, TS], TZ),
    ("time_bucket", F::TimeBucket, &[IV, TS], TS),
    ("time_bucket", F::TimeBucket, &[IV, TZ], TZ),
    ("time_bucket", F::TimeBucket, &[IV, D], D),
    ("time_bucket", F::TimeBucket, &[IV, TS, TS], TS),
    ("time_bucket", F::TimeBucket, &[IV, TZ, TZ], TZ),
    ("time_bucket", F::TimeBucket, &[IV, TS, IV], TS),
    ("time_bucket", F::TimeBucket, &[IV, TZ, IV], TZ),
    ("time_bucket", F::TimeBucket, &[IV, TZ, T], TZ),
    ("time_bucket", F::TimeBucket, &[IV, TZ, T, TZ], TZ),
    ("time_bucket", F::TimeBucket, &[IV, TZ, T, TZ, IV], TZ),
    ("time_bucket", F::TimeBucket, &[I2, I2], I2),
    ("time_bucket", F::TimeBucket, &[I4, I4], I4),
    ("time_bucket", F::TimeBucket, &[I8, I8], I8),
    ("time_bucket", F::TimeBucket, &[I2, I2, I2], I2),
    ("time_bucket", F::TimeBucket, &[I4, I4, I4], I4),
    ("time_bucket", F::TimeBucket, &[I8, I8, I8], I8),
    ("to_timestamp", F::ToTimestamp, &[F8], TZ),
    ("to_timestamp", F::ToTimestampFmt, &[T, T], TZ),
    ("to_date", F::ToDateFmt, &[T, T], D),
    ("to_char", F::ToChar, &[TS, T], T),
    ("to_char", F::ToChar, &[TZ, T], T),
    ("to_char", F::ToChar, &[IV, T], T),
    ("justify_hours", F::JustifyHours, &[IV], IV),
    ("justify_days", F::JustifyDays, &[IV], IV),
    ("justify_interval", F::JustifyInterval, &[IV], IV),
    ("make_interval", F::MakeInterval, &[I4, I4, I4, I4, I4, I4, F8], IV),
    ("now", F::Now, &[], TZ),
    ("current_timestamp", F::Now, &[], TZ),
    ("statement_timestamp", F::Now, &[], TZ),
    ("transaction_timestamp", F::Now, &[], TZ),
    ("clock_timestamp", F::Now, &[], TZ),
    ("current_date", F::CurrentDate, &[], D),
    ("localtimestamp", F::LocalTimestamp, &[], TS),
    ("age", F::Age, &[TZ], IV),
    ("age", F::Age, &[TZ, TZ], IV),
    ("age", F::Age, &[TS], IV),
    ("age", F::Age, &[TS, TS], IV),
    ("make_date", F::MakeDate, &[I4, I4, I4], D),
    ("epoch_ns", F::EpochNs, &[TZ], I8),
];

/// Type names usable as function-style casts (`int4(x)`), as PostgreSQL's parser knows them.
fn cast_target(name: &str) -> Option<DataType> {
    use DataType::*;
    Some(match name {
        "bool" | "boolean" => Bool,
        "int2" | "smallint" => Int16,
        "int4" | "int" | "integer" => Int32,
        "int8" | "bigint" => Int64,
        "float4" | "real" => Float32,
        "float8" => Float64,
        "numeric" | "decimal" => Numeric,
        "text" => Text,
        "varchar" => Varchar(None),
        "bpchar" => Bpchar(None),
        "bytea" => Bytea,
        "date" => Date,
        "timestamp" => Timestamp,
        "timestamptz" => TimestampTz,
        "interval" => Interval,
        "jsonb" => Jsonb,
        _ => return None,
    })
}

fn pt_type(p: PT) -> DataType {
    match p {
        PT::T(t) => t,
        PT::AnyNonArray => DataType::Text,
    }
}

fn signature_text(name: &str, args: &[DataType]) -> String {
    let list: Vec<String> = args.iter().map(|&t| bare_name(t)).collect();
    // EXTRACT(... FROM ...) is sugar for pg_catalog.extract, and PostgreSQL's messages say so.
    let name = if name == "extract" {
        "pg_catalog.extract"
    } else {
        name
    };
    format!("{name}({})", list.join(", "))
}

fn no_function(name: &str, args: &[DataType]) -> DbError {
    DbError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {} does not exist", signature_text(name, args)))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

/// Resolves a function by lower-case name and argument types.
pub(crate) fn resolve_function(name: &str, args: &[DataType]) -> DbResult<FunctionSignature> {
    let sig = |func, args: Vec<DataType>, result| Ok(FunctionSignature { func, args, result });
    match name {
        "coalesce" | "greatest" | "least" => {
            if args.is_empty() {
                return Err(no_function(name, args));
            }
            let t = resolve::common_type(args, &name.to_ascii_uppercase())?;
            let func = match name {
                "coalesce" => F::Coalesce,
                "greatest" => F::Greatest,
                _ => F::Least,
            };
            return sig(func, vec![t; args.len()], t);
        }
        "nullif" => {
            if args.len() != 2 {
                return Err(no_function(name, args));
            }
            let s = resolve::resolve_binary(super::BinaryOp::Eq, args[0], args[1])?;
            return sig(F::NullIf, vec![s.left, s.right], s.left);
        }
        "format" => {
            if args.is_empty() || !can_be(args[0], DataType::Text) {
                return Err(no_function(name, args));
            }
            let a: Vec<DataType> = args.iter().map(|&t| if t == DataType::Unknown { DataType::Text } else { t }).collect();
            return sig(F::Format, a, DataType::Text);
        }
        "concat" | "concat_ws" => {
            if args.is_empty() || (name == "concat_ws" && !can_be(args[0], DataType::Text)) {
                return Err(no_function(name, args));
            }
            let mut a: Vec<DataType> = args
                .iter()
                .map(|&t| {
                    if t == DataType::Unknown {
                        DataType::Text
                    } else {
                        t
                    }
                })
                .collect();
            if name == "concat_ws" {
                a[0] = DataType::Text;
            }
            return sig(
                if name == "concat" {
                    F::Concat
                } else {
                    F::ConcatWs
                },
                a,
                DataType::Text,
            );
        }
        _ => {}
    }
    let entries: Vec<&Entry> = CATALOG.iter().filter(|e| e.0 == name).collect();
    let inputs: Vec<DataType> = args.iter().map(|&t| base(t)).collect();
    // Exact match.
    if let Some(e) = entries.iter().find(|e| {
        e.2.len() == inputs.len()
            && e.2
                .iter()
                .zip(&inputs)
                .all(|(p, &i)| matches!(p, PT::T(t) if *t == i))
    }) {
        return sig(e.1, e.2.iter().map(|&p| pt_type(p)).collect(), pt_type(e.3));
    }
    // Function-style cast.
    if let (Some(target), [from]) = (cast_target(name), args) {
        if resolve::can_cast_explicit(*from, target) {
            return sig(F::Cast, vec![*from], target);
        }
    }
    let params: Vec<&[PT]> = entries.iter().map(|e| e.2).collect();
    match select_candidate(&inputs, &params) {
        Selected::One(k) => {
            let e = entries[k];
            sig(e.1, e.2.iter().map(|&p| pt_type(p)).collect(), pt_type(e.3))
        }
        Selected::NotFound => Err(no_function(name, args)),
        Selected::Ambiguous => Err(DbError::new(
            sqlstate::AMBIGUOUS_FUNCTION,
            format!("function {} is not unique", signature_text(name, args)),
        )
        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")),
    }
}

fn can_be(from: DataType, to: DataType) -> bool {
    resolve::can_coerce(from, to, false)
}

/// Evaluates a resolved function.
pub(crate) fn eval_function(
    sig: &FunctionSignature,
    args: &[Operand],
    len: usize,
    ctx: &EvalContext,
) -> DbResult<Column> {
    if args.len() != sig.args.len() {
        return Err(DbError::internal(format!(
            "{:?} resolved for {} arguments, called with {}",
            sig.func,
            sig.args.len(),
            args.len()
        )));
    }
    let held: Vec<Held> = args
        .iter()
        .zip(&sig.args)
        .map(|(a, &t)| Held::coerce(*a, t, ctx))
        .collect::<DbResult<_>>()?;
    let ops: Vec<Operand> = held.iter().map(|h| h.operand()).collect();
    let types = &sig.args[..];
    match sig.func {
        F::Coalesce => return coalesce(sig.result, &ops, len),
        F::Greatest | F::Least => return extreme(sig.func == F::Greatest, sig.result, &ops, len),
        F::NullIf => return nullif(sig, &ops, len, ctx),
        F::ArrayConstruct => return super::array::construct(sig.result, types, &ops, len),
        F::RowConstruct => {
            let cols: Vec<_> = ops.iter().map(|o| o.to_column(len)).collect();
            let rows: Vec<Datum> = (0..len)
                .map(|i| {
                    let fields: Vec<(DataType, Datum)> = cols.iter().zip(types).map(|(c, t)| (*t, c.datum(i))).collect();
                    Datum::Bytes(crate::types::record::encode(&fields))
                })
                .collect();
            return Ok(Column::from_datums(DataType::Record, &rows));
        }
        F::ArraySubscript => return super::array::subscript(sig.result, types, &ops, len),
        F::ArraySlice => return super::array::slice(sig.result, &ops, len),
        F::ArrayCat => return super::array::concat(sig.result, types, &ops, len),
        F::StringToArray => return super::array::string_to_array(&ops, len),
        F::ArrayLength | F::ArrayLower | F::ArrayUpper | F::ArrayNdims | F::Cardinality | F::ArrayToString => {
            return super::array::array_function(sig.func, types, &ops, len, ctx)
        }
        F::FormatType => {
            let (oids, typmods) = (ops[0].to_column(len), ops[1].to_column(len));
            let names: Vec<Datum> = (0..len)
                .map(|i| match oids.datum(i).as_i64() {
                    None => Datum::Null,
                    Some(oid) => Datum::text(crate::types::format_type(oid, typmods.datum(i).as_i64())),
                })
                .collect();
            return Ok(Column::from_datums(DataType::Text, &names));
        }
        F::Format => return super::string::format_fn(types, &ops, len, ctx),
        F::Concat | F::ConcatWs => {
            return super::string::concat_fn(sig.func == F::ConcatWs, types, &ops, len, ctx)
        }
        F::Pi => {
            return Ok(prim_column(
                DataType::Float64,
                vec![std::f64::consts::PI; len],
                Nulls::AllValid,
            ))
        }
        F::Random => {
            let v: Vec<f64> = (0..len).map(|_| super::math::random_f64()).collect();
            return Ok(prim_column(DataType::Float64, v, Nulls::AllValid));
        }
        F::Now => {
            return Ok(prim_column(
                DataType::TimestampTz,
                vec![ctx.statement_time_ns; len],
                Nulls::AllValid,
            ))
        }
        F::CurrentDate => {
            return Ok(prim_column(
                DataType::Date,
                vec![super::datetime::current_date(ctx)?; len],
                Nulls::AllValid,
            ))
        }
        F::LocalTimestamp => {
            return Ok(prim_column(
                DataType::Timestamp,
                vec![super::datetime::local_timestamp(ctx)?; len],
                Nulls::AllValid,
            ))
        }
        F::Cast => return super::cast::cast_column(&ops[0].to_column(len), sig.result, ctx),
        // time_bucket(width, ts, timezone, origin [, offset]): a NULL origin
        // or offset means TimescaleDB's default, not a NULL bucket.
        F::TimeBucket if types.len() > 3 => {
            let nulls = Nulls::of_all(&ops[..3], len)?;
            if nulls.all_null() {
                return Ok(null_column(sig.result, len));
            }
            return super::datetime::time_bucket_in_zone(&ops, len, nulls);
        }
        _ => {}
    }
    let nulls = Nulls::of_all(&ops, len)?;
    if nulls.all_null() {
        return Ok(null_column(sig.result, len));
    }
    use ScalarFunction::*;
    match sig.func {
        Lower | Upper | Initcap | CharLength | OctetLength | BitLength | Substr | Btrim | Ltrim
        | Rtrim | Replace | Strpos | Left | Right | Repeat | Reverse | Lpad | Rpad | StartsWith
        | SplitPart | Translate | LikeEscape | SimilarToEscape | Md5 | Chr | Ascii | ToHex | SizePretty | QuoteIdent
        | QuoteLiteral => super::string::eval_string(sig.func, types, &ops, len, nulls),
        Abs | Sign | Round | Trunc | Ceil | Floor | Sqrt | Cbrt | Power | Exp | Ln | Log10
        | Log | Mod | Div | Degrees | Radians | Sin | Cos | Tan | Asin | Acos | Atan | Atan2
        | BitAnd | BitOr | BitXor | ShiftLeft | ShiftRight | BoolEq | BoolNe => {
            super::math::eval_math(sig.func, types, &ops, len, nulls)
        }
        DateTrunc if types[1] == DataType::Interval => {
            super::datetime::date_trunc_interval(ops[0], ops[1], len, nulls)
        }
        DateTrunc => super::datetime::date_trunc(types[1], ops[0], ops[1], len, nulls, ctx),
        Timezone => super::datetime::at_time_zone(types, ops[0], ops[1], len, nulls),
        DatePart | Extract => super::datetime::extract(
            sig.func == DatePart,
            types[1],
            ops[0],
            ops[1],
            len,
            nulls,
            ctx,
        ),
        DateBin => super::datetime::date_bin(types[1], &ops, len, nulls),
        TimeBucket => match types[0] {
            DataType::Interval => super::datetime::time_bucket(types, &ops, len, nulls, ctx),
            t => int_time_bucket(t, &ops, len, nulls),
        },
        ToDateFmt | ToTimestampFmt => {
            let (text, fmt) = (super::common::bytes(ops[0], len)?, super::common::bytes(ops[1], len)?);
            let zone = ctx.format.zone;
            let mut out = Vec::with_capacity(len);
            for i in 0..len {
                if !nulls.is_valid(i) {
                    out.push(0i64);
                    continue;
                }
                let input = text.get_str(i);
                let t = crate::types::datetime_format::parse_template(input, fmt.get_str(i))?;
                let in_range = |r: DbResult<i64>| {
                    r.map_err(|e| match e.code {
                        sqlstate::DATETIME_FIELD_OVERFLOW => DbError::new(e.code, format!("{}: \"{input}\"", e.message)),
                        _ => e,
                    })
                };
                let days = in_range(t.days())?;
                let value = if sig.func == ToDateFmt {
                    Some(days)
                } else {
                    let time = in_range(t.time_ns())?;
                    days.checked_mul(86_400_000_000_000)
                        .and_then(|ns| ns.checked_add(time))
                        .and_then(|local| i64::try_from(zone.local_to_utc(local as i128)).ok())
                };
                out.push(value.ok_or_else(|| DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range"))?);
            }
            if sig.func == ToDateFmt {
                let days: Vec<i32> = out
                    .into_iter()
                    .map(|d| i32::try_from(d).map_err(|_| DbError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range")))
                    .collect::<DbResult<_>>()?;
                return Ok(prim_column(DataType::Date, days, nulls));
            }
            Ok(prim_column(DataType::TimestampTz, out, nulls))
        }
        ToChar => super::datetime::to_char(types[0], ops[0], ops[1], len, nulls, ctx),
        JustifyHours | JustifyDays | JustifyInterval => {
            let justify = match sig.func {
                JustifyHours => crate::types::datetime::justify_hours,
                JustifyDays => crate::types::datetime::justify_days,
                _ => crate::types::datetime::justify_interval,
            };
            let v = super::common::map1_try(prim::<crate::types::Interval>(ops[0], len)?, len, &nulls, justify)?;
            Ok(prim_column(DataType::Interval, v, nulls))
        }
        MakeInterval => {
            let ints: Vec<super::common::Arg<i32>> = ops[..6].iter().map(|&o| prim::<i32>(o, len)).collect::<DbResult<_>>()?;
            let secs = prim::<f64>(ops[6], len)?;
            let mut v = Vec::with_capacity(len);
            for i in 0..len {
                v.push(if nulls.is_valid(i) {
                    let f: Vec<i32> = ints.iter().map(|a| a.get(i)).collect();
                    crate::types::datetime::make_interval([f[0], f[1], f[2], f[3], f[4], f[5]], secs.get(i))?
                } else {
                    crate::types::Interval::default()
                });
            }
            Ok(prim_column(DataType::Interval, v, nulls))
        }
        Scale => {
            let values = prim::<crate::types::Numeric>(ops[0], len)?;
            let v = super::common::map1(values, len, |n| n.scale() as i32);
            // NaN and ±Infinity have no scale: NULL, as in PostgreSQL.
            let finite: Vec<bool> = (0..len).map(|i| nulls.is_valid(i) && !values.get(i).is_special()).collect();
            Ok(prim_column(DataType::Int32, v, Nulls::Mask(crate::exec::vector::Bitmap::from_bools(&finite))))
        }
        ToTimestamp => {
            let v = super::common::map1_try(
                prim::<f64>(ops[0], len)?,
                len,
                &nulls,
                super::datetime::to_timestamp,
            )?;
            Ok(prim_column(DataType::TimestampTz, v, nulls))
        }
        Age => {
            let zone = if types[0] == DataType::TimestampTz {
                ctx.format.zone
            } else {
                crate::types::Zone::UTC
            };
            let a = prim::<i64>(ops[0], len)?;
            let v = if ops.len() == 2 {
                super::common::map2_try(a, prim::<i64>(ops[1], len)?, len, &nulls, |x, y| {
                    super::datetime::age(x, y, zone)
                })?
            } else {
                super::common::map1_try(a, len, &nulls, |x| {
                    super::datetime::age_from_today(types[0], x, ctx)
                })?
            };
            Ok(prim_column(DataType::Interval, v, nulls))
        }
        MakeDate => {
            let (y, m, d) = (
                prim::<i32>(ops[0], len)?,
                prim::<i32>(ops[1], len)?,
                prim::<i32>(ops[2], len)?,
            );
            let mut out = Vec::with_capacity(len);
            for i in 0..len {
                out.push(if nulls.is_valid(i) {
                    super::datetime::make_date(y.get(i), m.get(i), d.get(i))?
                } else {
                    0
                });
            }
            Ok(prim_column(DataType::Date, out, nulls))
        }
        EpochNs => {
            let v = super::common::map1(prim::<i64>(ops[0], len)?, len, |x| x);
            Ok(prim_column(DataType::Int64, v, nulls))
        }
        f => Err(DbError::internal(format!("no kernel for {f:?}"))),
    }
}

fn int_time_bucket(ty: DataType, ops: &[Operand], len: usize, nulls: Nulls) -> DbResult<Column> {
    fn go<T: super::common::Prim + Into<i64>>(
        ty: DataType,
        ops: &[Operand],
        len: usize,
        nulls: Nulls,
        min: i64,
        max: i64,
        back: fn(i64) -> T,
    ) -> DbResult<Column> {
        let w = prim::<T>(ops[0], len)?;
        let t = prim::<T>(ops[1], len)?;
        let o = match ops.get(2) {
            Some(o) => Some(prim::<T>(*o, len)?),
            None => None,
        };
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            out.push(if nulls.is_valid(i) {
                let off = o.map_or(0, |o| o.get(i).into());
                back(super::datetime::int_bucket(
                    w.get(i).into(),
                    t.get(i).into(),
                    off,
                    min,
                    max,
                )?)
            } else {
                T::default()
            });
        }
        Ok(prim_column(ty, out, nulls))
    }
    match ty {
        DataType::Int16 => go::<i16>(ty, ops, len, nulls, i16::MIN as i64, i16::MAX as i64, |v| {
            v as i16
        }),
        DataType::Int32 => go::<i32>(ty, ops, len, nulls, i32::MIN as i64, i32::MAX as i64, |v| {
            v as i32
        }),
        _ => go::<i64>(ty, ops, len, nulls, i64::MIN, i64::MAX, |v| v),
    }
}

/// COALESCE: per row, the first non-NULL argument.
fn coalesce(ty: DataType, ops: &[Operand], len: usize) -> DbResult<Column> {
    let cols: Vec<std::borrow::Cow<Column>> = ops.iter().map(|o| o.to_column(len)).collect();
    // Fast path: the first argument has no NULLs.
    if let Some(first) = cols.first() {
        if first.validity.is_none() && first.len() == len {
            return Ok(first.as_ref().clone().with_type(ty));
        }
    }
    let mut out = Column::with_capacity(ty, len);
    for i in 0..len {
        let v = cols
            .iter()
            .find(|c| c.is_valid(i))
            .map_or(Datum::Null, |c| c.datum(i));
        out.push_datum(&v);
    }
    Ok(out)
}

/// GREATEST / LEAST: NULLs are ignored; NULL only when every argument is.
fn extreme(greatest: bool, ty: DataType, ops: &[Operand], len: usize) -> DbResult<Column> {
    let cols: Vec<std::borrow::Cow<Column>> = ops.iter().map(|o| o.to_column(len)).collect();
    let bpchar = matches!(ty, DataType::Bpchar(_));
    let mut out = Column::with_capacity(ty, len);
    for i in 0..len {
        let mut best: Option<Datum> = None;
        for c in &cols {
            if !c.is_valid(i) {
                continue;
            }
            let v = c.datum(i);
            best = Some(match best {
                None => v,
                Some(b) => {
                    let ord = match (&v, &b, bpchar) {
                        (Datum::Bytes(x), Datum::Bytes(y), true) => {
                            super::compare::rtrim_blanks(x).cmp(super::compare::rtrim_blanks(y))
                        }
                        _ => v.total_cmp_as(&b, ty),
                    };
                    let better = if greatest {
                        ord == std::cmp::Ordering::Greater
                    } else {
                        ord == std::cmp::Ordering::Less
                    };
                    if better {
                        v
                    } else {
                        b
                    }
                }
            });
        }
        out.push_datum(&best.unwrap_or(Datum::Null));
    }
    Ok(out)
}

/// NULLIF(a, b): NULL when a = b, else a.
fn nullif(
    sig: &FunctionSignature,
    ops: &[Operand],
    len: usize,
    ctx: &EvalContext,
) -> DbResult<Column> {
    let bsig = super::BinarySignature {
        op: super::BinaryOp::Eq,
        left: sig.args[0],
        right: sig.args[1],
        result: DataType::Bool,
    };
    let eq = super::eval_binary(&bsig, ops[0], ops[1], len, ctx)?;
    let a = ops[0].to_column(len);
    let mut out = Column::with_capacity(sig.result, len);
    for i in 0..len {
        let same = eq.is_valid(i) && eq.datum(i) == Datum::Bool(true);
        out.push_datum(&if same { Datum::Null } else { a.datum(i) });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::call;
    use super::*;
    use DataType::*;

    fn r(name: &str, args: &[DataType]) -> (F, Vec<DataType>, DataType) {
        let s = resolve_function(name, args).unwrap();
        (s.func, s.args, s.result)
    }

    #[test]
    fn resolution_as_postgres() {
        assert_eq!(r("round", &[Int32]), (F::Round, vec![Float64], Float64));
        assert_eq!(r("round", &[Numeric]), (F::Round, vec![Numeric], Numeric));
        assert_eq!(r("round", &[Unknown]), (F::Round, vec![Float64], Float64));
        assert_eq!(
            r("round", &[Int32, Int32]),
            (F::Round, vec![Numeric, Int32], Numeric)
        );
        assert_eq!(r("abs", &[Int16]), (F::Abs, vec![Int16], Int16));
        assert_eq!(r("sqrt", &[Int64]), (F::Sqrt, vec![Float64], Float64));
        assert_eq!(r("length", &[Unknown]), (F::CharLength, vec![Text], Int32));
        assert_eq!(
            r("length", &[Varchar(Some(4))]),
            (F::CharLength, vec![Text], Int32)
        );
        assert_eq!(
            r("length", &[Bpchar(Some(4))]),
            (F::CharLength, vec![Bpchar(None)], Int32)
        );
        assert_eq!(r("substring", &[Text, Int16]).0, F::Substr);
        assert!(resolve_function("substring", &[Text, Int64]).is_err());
        assert_eq!(
            r("time_bucket", &[Unknown, Timestamp]),
            (F::TimeBucket, vec![Interval, Timestamp], Timestamp)
        );
        assert_eq!(r("time_bucket", &[Unknown, TimestampTz]).2, TimestampTz);
        assert_eq!(r("time_bucket", &[Int32, Int32]).2, Int32);
        assert_eq!(r("date_trunc", &[Unknown, TimestampTz]).2, TimestampTz);
        assert_eq!(r("date_trunc", &[Unknown, Date]).2, TimestampTz);
        assert_eq!(r("date_trunc", &[Unknown, Interval]).2, Interval);
        let e = resolve_function("date_trunc", &[Unknown, Unknown]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "42725",
                "function date_trunc(unknown, unknown) is not unique"
            )
        );
        assert_eq!(r("extract", &[Text, Date]).2, Numeric);
        assert_eq!(r("date_part", &[Unknown, Timestamp]).2, Float64);
        assert_eq!(
            r("coalesce", &[Int32, Numeric]),
            (F::Coalesce, vec![Numeric, Numeric], Numeric)
        );
        assert_eq!(r("greatest", &[Int32, Int64]).2, Int64);
        assert_eq!(
            r("nullif", &[Int32, Numeric]),
            (F::NullIf, vec![Numeric, Numeric], Numeric)
        );
        assert_eq!(
            r("concat", &[Unknown, Bool, Int32]),
            (F::Concat, vec![Text, Bool, Int32], Text)
        );
        assert_eq!(r("int4", &[Text]), (F::Cast, vec![Text], Int32));
        assert_eq!(r("now", &[]).2, TimestampTz);
        assert_eq!(
            r("mod", &[Int16, Int32]),
            (F::Mod, vec![Int32, Int32], Int32)
        );
        let e = resolve_function("nosuch", &[Int32]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42883", "function nosuch(integer) does not exist")
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("No function matches the given name and argument types. You might need to add explicit type casts.")
        );
        let e = resolve_function("coalesce", &[Int32, Text]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("42804", "COALESCE types integer and text cannot be matched")
        );
        let e = resolve_function("lower", &[Varchar(Some(3)), Int32]).unwrap_err();
        assert_eq!(
            e.message,
            "function lower(character varying, integer) does not exist"
        );
    }

    #[test]
    fn conditional_functions() {
        let n = (Datum::Null, Int32);
        assert_eq!(
            call(
                "coalesce",
                &[
                    n.clone(),
                    (Datum::Int32(2), Int32),
                    (Datum::Int32(3), Int32)
                ]
            )
            .unwrap(),
            Datum::Int32(2)
        );
        assert_eq!(
            call("coalesce", &[n.clone(), n.clone()]).unwrap(),
            Datum::Null
        );
        assert_eq!(
            call(
                "greatest",
                &[
                    (Datum::Int32(1), Int32),
                    n.clone(),
                    (Datum::Int64(5), Int64)
                ]
            )
            .unwrap(),
            Datum::Int64(5)
        );
        assert_eq!(
            call(
                "least",
                &[
                    (Datum::Int32(1), Int32),
                    n.clone(),
                    (Datum::Int32(-5), Int32)
                ]
            )
            .unwrap(),
            Datum::Int32(-5)
        );
        assert_eq!(
            call("greatest", &[n.clone(), n.clone()]).unwrap(),
            Datum::Null
        );
        assert_eq!(
            call(
                "nullif",
                &[(Datum::Int32(1), Int32), (Datum::Int32(1), Int32)]
            )
            .unwrap(),
            Datum::Null
        );
        assert_eq!(
            call(
                "nullif",
                &[(Datum::Int32(1), Int32), (Datum::Int32(2), Int32)]
            )
            .unwrap(),
            Datum::Int32(1)
        );
        assert_eq!(
            call("nullif", &[(Datum::Int32(1), Int32), n]).unwrap(),
            Datum::Int32(1)
        );
    }

    #[test]
    fn datetime_functions() {
        let day = crate::types::datetime::NANOS_PER_DAY;
        let ts = (Datum::Int64(day + 3_723_000_000_000), Timestamp); // 1970-01-02 01:02:03
        let f = |s: &str| (Datum::text(s), Unknown);
        assert_eq!(
            call("date_trunc", &[f("day"), ts.clone()]).unwrap(),
            Datum::Int64(day)
        );
        assert_eq!(
            call(
                "time_bucket",
                &[(Datum::Int32(10), Int32), (Datum::Int32(-3), Int32)]
            )
            .unwrap(),
            Datum::Int32(-10)
        );
        assert_eq!(
            call("to_timestamp", &[(Datum::Float64(1.5), Float64)]).unwrap(),
            Datum::Int64(1_500_000_000)
        );
        assert_eq!(
            call("epoch_ns", &[(Datum::Int64(42), TimestampTz)]).unwrap(),
            Datum::Int64(42)
        );
        assert_eq!(
            call(
                "make_date",
                &[
                    (Datum::Int32(1970), Int32),
                    (Datum::Int32(1), Int32),
                    (Datum::Int32(3), Int32)
                ]
            )
            .unwrap(),
            Datum::Int32(2)
        );
        let iv = crate::types::Interval {
            months: 0,
            days: 0,
            micros: 3_600_000_000,
        };
        let r = call("time_bucket", &[(Datum::Interval(iv), Interval), ts]).unwrap();
        assert_eq!(r, Datum::Int64(day + 3_600_000_000_000));
        let ctx_now = call("now", &[]).unwrap();
        assert_eq!(ctx_now, Datum::Int64(0));
    }
}
