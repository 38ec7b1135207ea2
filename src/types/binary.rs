//! PostgreSQL binary format (send/recv) of every type.
//! Must not: trust lengths or contents of client bytes.

use crate::error::DbResult;
use super::{DataType, Datum};

/// Decodes a binary-format parameter / COPY field of type `ty`. Errors: 22P03.
pub fn decode_binary(ty: DataType, bytes: &[u8]) -> DbResult<Datum> {
    let _ = (ty, bytes);
    Err(crate::error::DbError::unsupported("binary input not written yet"))
}

/// Appends the binary encoding of `value` (not NULL) to `out`.
pub fn encode_binary(ty: DataType, value: &Datum, out: &mut Vec<u8>) {
    let _ = (ty, value, out);
}
