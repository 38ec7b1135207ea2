//! PostgreSQL text format of every type: input (literals, text parameters,
//! COPY text) and output (simple-query results, text-format columns).
//! Must not: allocate per value on output (callers pass a reusable buffer).

use crate::error::DbResult;
use super::{DataType, Datum, FormatContext};

/// Parses PostgreSQL text input for `ty` (e.g. `'t'`, `' 42 '`, `'2026-01-01 00:00:00+00'`).
/// Errors: 22P02 invalid_text_representation, 22003 out of range, 22007/22008 datetime.
pub fn parse_text(ty: DataType, input: &str, ctx: &FormatContext) -> DbResult<Datum> {
    let _ = (ty, input, ctx);
    Err(crate::error::DbError::unsupported("text input not written yet"))
}

/// Appends the PostgreSQL text output of `value` (not NULL) to `out`.
pub fn format_text(ty: DataType, value: &Datum, ctx: &FormatContext, out: &mut Vec<u8>) {
    let _ = (ty, value, ctx, out);
}
