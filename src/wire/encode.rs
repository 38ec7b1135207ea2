//! Result rows in PostgreSQL's DataRow layout, text or binary per column.

use bytes::{BufMut, BytesMut};

use crate::exec::vector::{Batch, Column, ColumnData};
use crate::types::binary::{encode_binary, encode_timestamp};
use crate::types::{text::format_text, DataType, FormatContext};

/// Appends row `i` of `batch` (each value as i32 length + bytes, -1 for NULL).
pub fn encode_row(
    batch: &Batch,
    i: usize,
    formats: &[i16],
    ctx: &FormatContext,
    out: &mut BytesMut,
) {
    let mut scratch = Vec::new();
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
        if encode_plain_value(col, i, format == 1, &mut scratch, out) {
            continue;
        }
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

/// Writes a non-NULL value straight from its column, without making a
/// `Datum` (which copies text): the binary forms of fixed-width numbers,
/// timestamps and text, and text as text. The bytes are those
/// `encode_binary`/`format_text` write (test: `plain_values_encode_as_their_datums_do`).
/// False, having written nothing, for every other type and form.
fn encode_plain_value(col: &Column, i: usize, binary: bool, scratch: &mut Vec<u8>, out: &mut BytesMut) -> bool {
    let mut put = |bytes: &[u8]| {
        out.put_i32(bytes.len() as i32);
        out.put_slice(bytes);
    };
    match (col.data_type, &col.data, binary) {
        (DataType::Text | DataType::Varchar(_) | DataType::Name, ColumnData::Bytes(b), _)
        | (DataType::Bytea, ColumnData::Bytes(b), true) => put(b.get(i)),
        (DataType::Bool, ColumnData::Bool(v), true) => put(&[v[i] as u8]),
        (DataType::Int16, ColumnData::Int16(v), true) => put(&v[i].to_be_bytes()),
        (DataType::Int32, ColumnData::Int32(v), true) => put(&v[i].to_be_bytes()),
        (DataType::Int64, ColumnData::Int64(v), true) => put(&v[i].to_be_bytes()),
        (DataType::Float32, ColumnData::Float32(v), true) => put(&v[i].to_be_bytes()),
        (DataType::Float64, ColumnData::Float64(v), true) => put(&v[i].to_be_bytes()),
        (DataType::Timestamp | DataType::TimestampTz, ColumnData::Int64(v), true) => {
            scratch.clear();
            encode_timestamp(v[i], scratch);
            put(scratch);
        }
        (DataType::Jsonb, ColumnData::Bytes(b), true) => {
            // jsonb's binary form: version 1, then the text
            let v = b.get(i);
            out.put_i32(v.len() as i32 + 1);
            out.put_u8(1);
            out.put_slice(v);
        }
        _ => return false,
    }
    true
}

/// About the bytes one row of `batch` takes as a DataRow body (a starting
/// capacity: the buffer grows past it when the values are longer).
pub fn row_capacity(batch: &Batch) -> usize {
    batch
        .columns
        .iter()
        .map(|c| {
            4 + match &c.data {
                ColumnData::Bool(_) => 1,
                ColumnData::Int16(_) => 2,
                ColumnData::Int32(_) | ColumnData::Float32(_) => 4,
                ColumnData::Int64(_) | ColumnData::Float64(_) => 8,
                _ => 16,
            }
        })
        .sum::<usize>()
        + 8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    #[test]
    fn plain_values_encode_as_their_datums_do() {
        let ctx = FormatContext::default();
        let cols = vec![
            Column::from_datums(DataType::Text, &[Datum::Bytes(b"host_1".to_vec()), Datum::Bytes(Vec::new())]),
            Column::from_datums(DataType::Varchar(Some(4)), &[Datum::Bytes(b"ab".to_vec()), Datum::Null]),
            Column::from_datums(DataType::Bytea, &[Datum::Bytes(vec![0, 255]), Datum::Bytes(vec![7])]),
            Column::from_datums(DataType::Jsonb, &[Datum::Bytes(b"{\"a\": 1}".to_vec()), Datum::Null]),
            Column::from_datums(DataType::Bool, &[Datum::Bool(true), Datum::Bool(false)]),
            Column::from_datums(DataType::Int16, &[Datum::Int16(-3), Datum::Int16(i16::MAX)]),
            Column::from_datums(DataType::Int32, &[Datum::Int32(7), Datum::Int32(i32::MIN)]),
            Column::from_datums(DataType::Int64, &[Datum::Int64(-1), Datum::Int64(1 << 40)]),
            Column::from_datums(DataType::Float32, &[Datum::Float32(1.5), Datum::Float32(f32::NAN)]),
            Column::from_datums(DataType::Float64, &[Datum::Float64(-0.0), Datum::Float64(f64::INFINITY)]),
            Column::from_datums(DataType::TimestampTz, &[Datum::Int64(1_451_606_400_123_456_789), Datum::Int64(i64::MAX)]),
            Column::from_datums(DataType::Timestamp, &[Datum::Int64(-1), Datum::Int64(0)]),
            Column::from_datums(DataType::Date, &[Datum::Int32(1), Datum::Int32(-1)]),
        ];
        let batch = Batch::from_columns(cols);
        for format in [0i16, 1] {
            for i in 0..2 {
                let mut fast = BytesMut::new();
                encode_row(&batch, i, &[format], &ctx, &mut fast);
                // the reference: every value through its Datum
                let mut slow = BytesMut::new();
                for col in &batch.columns {
                    if !col.is_valid(i) {
                        slow.put_i32(-1);
                        continue;
                    }
                    let mut v = Vec::new();
                    if format == 1 {
                        encode_binary(col.data_type, &col.datum(i), &mut v);
                    } else {
                        format_text(col.data_type, &col.datum(i), &ctx, &mut v);
                    }
                    slow.put_i32(v.len() as i32);
                    slow.put_slice(&v);
                }
                assert_eq!(fast, slow, "row {i}, format {format}");
            }
        }
    }
}
