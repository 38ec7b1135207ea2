//! Binding of array expressions: `ARRAY[…]` (elements brought to a common
//! type; arrays of arrays stack into more dimensions), subscripts `a[i][j]`,
//! and the functions over any array (array_length, cardinality, array_ndims,
//! array_lower, array_upper, array_to_string), whose signatures are built
//! here since the function table has no polymorphic `anyarray`.
//! Must not: evaluate (kernels/array.rs does).

use std::sync::Arc;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels::{self, FunctionSignature, ScalarFunction};
use crate::sql::plan::*;
use crate::types::array::{ArrayElem, MAX_DIMS};
use crate::types::{DataType, Datum};

use super::Binder;

/// One `[…]` of a subscripted expression, bound.
pub(super) enum ArraySubscript {
    Index(Expr),
    /// `[lower:upper]`, a bound omitted when `None`.
    Slice(Option<Expr>, Option<Expr>),
}

fn call(func: ScalarFunction, args: Vec<Expr>, result: DataType) -> Expr {
    let sig = FunctionSignature {
        func,
        args: args.iter().map(|a| a.data_type()).collect(),
        result,
    };
    Expr::Func { sig: Arc::new(sig), args }
}

impl Binder<'_> {
    /// `ARRAY[e, …]` over bound elements.
    pub(super) fn bind_array_constructor(&mut self, elems: Vec<Expr>) -> DbResult<Expr> {
        if elems.is_empty() {
            return Err(DbError::new(sqlstate::INDETERMINATE_DATATYPE, "cannot determine type of empty array")
                .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."));
        }
        let types: Vec<DataType> = elems.iter().map(|e| e.data_type()).collect();
        let mut t = kernels::common_type(&types, "ARRAY")?;
        if t == DataType::Unknown {
            t = DataType::Text;
        }
        let array = match t {
            DataType::Array(_) => t,
            other => match ArrayElem::of(other) {
                Some(e) => DataType::Array(e),
                None => return Err(DbError::unsupported(format!("arrays of {}", other.name()))),
            },
        };
        let elems = elems
            .into_iter()
            .map(|e| self.coerce(e, t, "ARRAY"))
            .collect::<DbResult<Vec<_>>>()?;
        Ok(call(ScalarFunction::ArrayConstruct, elems, array))
    }

    /// `ROW(a, b, …)` and `(a, b, …)`: an anonymous record (untyped literals become text).
    pub(super) fn bind_row_constructor(&mut self, fields: Vec<Expr>) -> DbResult<Expr> {
        let fields = fields
            .into_iter()
            .map(|f| if f.data_type() == DataType::Unknown { self.coerce(f, DataType::Text, "ROW") } else { Ok(f) })
            .collect::<DbResult<Vec<_>>>()?;
        Ok(call(ScalarFunction::RowConstruct, fields, DataType::Record))
    }

    /// `a[i][j]…`: an element; or, when some subscript is a slice
    /// (`a[lo:hi]`, either bound omitted), a slice, every subscript then
    /// a slice (`[i]` standing for `[1:i]`, as in PostgreSQL).
    pub(super) fn bind_array_subscript(&mut self, array: Expr, subscripts: Vec<ArraySubscript>) -> DbResult<Expr> {
        let array_type = array.data_type();
        let DataType::Array(e) = array_type else {
            return Err(DbError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", array_type.name()),
            ));
        };
        if subscripts.len() > MAX_DIMS {
            return Err(DbError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("number of array dimensions ({}) exceeds the maximum allowed ({MAX_DIMS})", subscripts.len()),
            ));
        }
        let mut args = vec![array];
        if subscripts.iter().all(|s| matches!(s, ArraySubscript::Index(_))) {
            for s in subscripts {
                if let ArraySubscript::Index(i) = s {
                    args.push(self.coerce_subscript(i)?);
                }
            }
            return Ok(call(ScalarFunction::ArraySubscript, args, e.data_type()));
        }
        // How many subscripts, which bounds are given, then those bounds.
        let count = subscripts.len() as i64;
        let mut given = 0i64;
        let mut bounds = Vec::new();
        for (k, s) in subscripts.into_iter().enumerate() {
            let (lower, upper) = match s {
                ArraySubscript::Index(i) => (None, Some(i)),
                ArraySubscript::Slice(lower, upper) => (lower, upper),
            };
            for (bit, b) in [(2 * k, lower), (2 * k + 1, upper)] {
                if let Some(b) = b {
                    given |= 1 << bit;
                    bounds.push(self.coerce_subscript(b)?);
                }
            }
        }
        args.push(Expr::Literal(Datum::Int64(count), DataType::Int64));
        args.push(Expr::Literal(Datum::Int64(given), DataType::Int64));
        args.extend(bounds);
        Ok(call(ScalarFunction::ArraySlice, args, array_type))
    }

    /// A subscript as an integer, by assignment rules as PostgreSQL's
    /// (`a[1.7]` is `a[2]`; bigint out of range fails when evaluated).
    fn coerce_subscript(&mut self, e: Expr) -> DbResult<Expr> {
        let from = e.data_type();
        if from == DataType::Int32 || matches!(e, Expr::Param(_, DataType::Unknown) | Expr::Literal(_, DataType::Unknown)) {
            return self.coerce(e, DataType::Int32, "array subscript");
        }
        if kernels::can_coerce(from, DataType::Int32, true) {
            return Ok(Expr::Cast { expr: Box::new(e), to: DataType::Int32 });
        }
        Err(DbError::new(sqlstate::DATATYPE_MISMATCH, "array subscript must have type integer"))
    }

    /// `l || r` where one side is an array: arrays joined, or an element appended/prepended.
    /// An untyped literal beside an array is read as that array type, as PostgreSQL does.
    pub(super) fn bind_array_concat(&mut self, name: &str, l: Expr, r: Expr) -> DbResult<Expr> {
        let (lt, rt) = (l.data_type(), r.data_type());
        let (l, r, array) = match (lt, rt) {
            (DataType::Array(_), DataType::Array(_)) | (DataType::Array(_), DataType::Unknown) => {
                let r = self.coerce(r, lt, name)?;
                (l, r, lt)
            }
            (DataType::Unknown, DataType::Array(_)) => (self.coerce(l, rt, name)?, r, rt),
            (DataType::Array(e), _) => (l, self.coerce(r, e.data_type(), name)?, lt),
            (_, DataType::Array(e)) => (self.coerce(l, e.data_type(), name)?, r, rt),
            _ => return Err(DbError::internal("array concatenation without an array")),
        };
        Ok(call(ScalarFunction::ArrayCat, vec![l, r], array))
    }

    /// The functions over any array; None when `name` is not one of them.
    pub(super) fn bind_array_function(&mut self, name: &str, args: &[Expr]) -> DbResult<Option<Expr>> {
        let func = match name {
            "array_length" => ScalarFunction::ArrayLength,
            "array_lower" => ScalarFunction::ArrayLower,
            "array_upper" => ScalarFunction::ArrayUpper,
            "array_ndims" => ScalarFunction::ArrayNdims,
            "cardinality" => ScalarFunction::Cardinality,
            "array_to_string" => ScalarFunction::ArrayToString,
            "array_cat" | "array_append" | "array_prepend" if args.len() == 2 => {
                let wanted = match name {
                    "array_cat" => [true, true],
                    "array_append" => [true, false],
                    _ => [false, true],
                };
                let ok = args
                    .iter()
                    .zip(wanted)
                    .all(|(a, array)| matches!(a.data_type(), DataType::Array(_) | DataType::Unknown) || !array);
                if !ok || !args.iter().any(|a| matches!(a.data_type(), DataType::Array(_))) {
                    let types: Vec<String> = args.iter().map(|a| a.data_type().name()).collect();
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", types.join(", ")),
                    )
                    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
                }
                // array_append/array_prepend take an element beside the array, even an untyped literal.
                let mut args = args.to_vec();
                for k in 0..2 {
                    if let (false, DataType::Array(e)) = (wanted[k], args[1 - k].data_type()) {
                        args[k] = self.coerce(args[k].clone(), e.data_type(), name)?;
                    }
                }
                return self.bind_array_concat(name, args[0].clone(), args[1].clone()).map(Some);
            }
            _ => return Ok(None),
        };
        let wanted = match func {
            ScalarFunction::ArrayNdims | ScalarFunction::Cardinality => 1..=1,
            ScalarFunction::ArrayToString => 2..=3,
            _ => 2..=2,
        };
        let types: Vec<String> = args.iter().map(|a| a.data_type().name()).collect();
        let no_function = || {
            DbError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {name}({}) does not exist", types.join(", ")))
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
        };
        if !wanted.contains(&args.len()) || !matches!(args[0].data_type(), DataType::Array(_)) {
            return Err(no_function());
        }
        let mut bound = vec![args[0].clone()];
        for a in &args[1..] {
            let t = if func == ScalarFunction::ArrayToString { DataType::Text } else { DataType::Int32 };
            bound.push(self.coerce(a.clone(), t, name)?);
        }
        let result = if func == ScalarFunction::ArrayToString { DataType::Text } else { DataType::Int32 };
        Ok(Some(call(func, bound, result)))
    }
}
