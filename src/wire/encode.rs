//! Result rows in PostgreSQL's DataRow layout, text or binary per column.

use bytes::{BufMut, BytesMut};

use crate::exec::vector::Batch;
use crate::types::{binary::encode_binary, text::format_text, FormatContext};

/// Appends row `i` of `batch` (each value as i32 length + bytes, -1 for NULL).
pub fn encode_row(
    batch: &Batch,
    i: usize,
    formats: &[i16],
    ctx: &FormatContext,
    out: &mut BytesMut,
) {
    let mut scratch = Vec::with_capacity(32);
    for (c, col) in batch.columns.iter().enumerate() {
        if !col.is_valid(i) {
            out.put_i32(-1);
            continue;
        }
        let format = match formats.len() {
            0 => 0,
            1 => formats[0],
            _ => formats.get(c).copied().unwrap_or(0),
        };
        scratch.clear();
        let d = col.datum(i);
        if format == 1 {
            encode_binary(col.data_type, &d, &mut scratch);
        } else {
            format_text(col.data_type, &d, ctx, &mut scratch);
        }
        out.put_i32(scratch.len() as i32);
        out.put_slice(&scratch);
    }
}
