//! The vectorized executor: column vectors, expression evaluation, kernels
//! and the physical operators that run plans over batches.
//! Must not: parse SQL, touch sockets, or own table data (storage does).

pub mod agg;
pub mod cancel;
pub mod constant_subqueries;
pub mod explain;
pub mod expr;
pub mod fragment;
pub mod gapfill;
pub mod kernels;
pub mod last_row;
pub mod lateral;
pub mod newest_groups;
pub mod operators;
pub mod recursive;
pub mod table_function;
pub mod vector;
pub mod window;

use crate::types::{DataType, Datum, FormatContext};
use vector::Column;

/// An argument of a kernel: a whole column, or one value standing for every
/// row (a literal or parameter), so `x > 5` never materializes a column of 5s.
#[derive(Debug, Clone, Copy)]
pub enum Operand<'a> {
    Column(&'a Column),
    Scalar(&'a Datum, DataType),
}

impl<'a> Operand<'a> {
    pub fn data_type(&self) -> DataType {
        match self {
            Operand::Column(c) => c.data_type,
            Operand::Scalar(_, t) => *t,
        }
    }
    /// Materializes the operand as a column of `len` rows (for kernels
    /// without a scalar fast path).
    pub fn to_column(&self, len: usize) -> std::borrow::Cow<'a, Column> {
        match self {
            Operand::Column(c) => std::borrow::Cow::Borrowed(c),
            Operand::Scalar(d, t) => std::borrow::Cow::Owned(Column::from_datum(*t, d, len)),
        }
    }
}

/// Per-statement facts kernels may need.
#[derive(Debug, Clone, Default)]
pub struct EvalContext {
    pub format: FormatContext,
    /// now() / CURRENT_TIMESTAMP: the statement's start, ns since the Unix epoch.
    pub statement_time_ns: i64,
}
