//! COPY … TO STDOUT: rows encoded in PostgreSQL's text, CSV or binary COPY
//! format, for CopyData messages.
//! Must not: decide what rows to send (the session's operator does).

use bytes::BufMut;

use crate::exec::vector::Batch;
use crate::ingest::copy::{CopyFormat, CopyOptions};
use crate::types::binary::encode_binary;
use crate::types::text::format_text;
use crate::types::FormatContext;

/// The binary COPY header: signature, flags, header-extension length.
pub fn binary_header(out: &mut Vec<u8>) {
    out.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    out.put_u32(0);
    out.put_u32(0);
}

/// The binary COPY trailer (a field count of -1).
pub fn binary_trailer(out: &mut Vec<u8>) {
    out.put_i16(-1);
}

/// The CSV header line: the column names.
pub fn csv_header(names: &[String], o: &CopyOptions, out: &mut Vec<u8>) {
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push(o.delimiter);
        }
        csv_field(n.as_bytes(), o, true, out);
    }
    out.push(b'\n');
}

fn csv_field(v: &[u8], o: &CopyOptions, is_empty_text: bool, out: &mut Vec<u8>) {
    let needs_quotes = (v.is_empty() && is_empty_text)
        || v == o.null.as_bytes()
        || v.iter().any(|&b| {
            b == o.delimiter || b == o.quote || b == b'\n' || b == b'\r' || b == o.escape
        });
    if !needs_quotes {
        out.extend_from_slice(v);
        return;
    }
    out.push(o.quote);
    for &b in v {
        if b == o.quote || b == o.escape {
            out.push(o.escape);
        }
        out.push(b);
    }
    out.push(o.quote);
}

fn text_field(v: &[u8], delimiter: u8, out: &mut Vec<u8>) {
    for &b in v {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' if delimiter == b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            11 => out.extend_from_slice(b"\\v"),
            d if d == delimiter => {
                out.push(b'\\');
                out.push(d);
            }
            other => out.push(other),
        }
    }
}

/// Appends every row of `batch` in the COPY format of `o`, and each row's end
/// offset in `out` to `row_ends` (PostgreSQL sends one CopyData per row, and
/// clients such as psycopg's `Copy.rows()` read each message as one row).
pub fn encode_rows(
    batch: &Batch,
    o: &CopyOptions,
    ctx: &FormatContext,
    out: &mut Vec<u8>,
    row_ends: &mut Vec<usize>,
) {
    let mut scratch = Vec::with_capacity(32);
    for i in 0..batch.len {
        if o.format == CopyFormat::Binary {
            out.put_i16(batch.columns.len() as i16);
        }
        for (c, col) in batch.columns.iter().enumerate() {
            if o.format != CopyFormat::Binary && c > 0 {
                out.push(o.delimiter);
            }
            if !col.is_valid(i) {
                match o.format {
                    CopyFormat::Binary => out.put_i32(-1),
                    _ => out.extend_from_slice(o.null.as_bytes()),
                }
                continue;
            }
            scratch.clear();
            let d = col.datum(i);
            match o.format {
                CopyFormat::Binary => {
                    encode_binary(col.data_type, &d, &mut scratch);
                    out.put_i32(scratch.len() as i32);
                    out.extend_from_slice(&scratch);
                }
                CopyFormat::Text => {
                    format_text(col.data_type, &d, ctx, &mut scratch);
                    text_field(&scratch, o.delimiter, out);
                }
                CopyFormat::Csv => {
                    format_text(col.data_type, &d, ctx, &mut scratch);
                    csv_field(&scratch, o, true, out);
                }
            }
        }
        if o.format != CopyFormat::Binary {
            out.push(b'\n');
        }
        row_ends.push(out.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Column;
    use crate::ingest::copy::CopyReader;
    use crate::types::{DataType, Datum};

    #[test]
    fn what_copy_to_writes_copy_from_reads_back() {
        let rows = vec![
            vec![
                Datum::Int32(1),
                Datum::text("tab\there, \"quoted\"\nnewline\\"),
            ],
            vec![Datum::Null, Datum::text("")],
            vec![Datum::Int32(3), Datum::Null],
        ];
        let types = [DataType::Int32, DataType::Text];
        let cols = (0..2)
            .map(|c| {
                Column::from_datums(
                    types[c],
                    &rows.iter().map(|r| r[c].clone()).collect::<Vec<_>>(),
                )
            })
            .collect();
        let batch = Batch::from_columns(cols);
        let col = |n: &str, t| crate::catalog::ColumnDef {
            name: n.into(),
            data_type: t,
            not_null: false,
            default: None,
            numeric_typmod: None,
            series_tag: false,
            frame_refs: false,
            identity: None,
        };
        let table = crate::catalog::TableDef {
            oid: 1,
            name: "t".into(),
            schema: "public".into(),
            columns: vec![col("a", DataType::Int32), col("b", DataType::Text)],
            time_column: None,
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        };
        for format in [CopyFormat::Text, CopyFormat::Csv, CopyFormat::Binary] {
            let o = CopyOptions::new(format);
            let mut out = Vec::new();
            if format == CopyFormat::Binary {
                binary_header(&mut out);
            }
            encode_rows(&batch, &o, &FormatContext::default(), &mut out, &mut Vec::new());
            if format == CopyFormat::Binary {
                binary_trailer(&mut out);
            }
            let mut reader = CopyReader::new(&table, &[], o, FormatContext::default()).unwrap();
            let mut back = Vec::new();
            let mut emit = |b: Batch| {
                for i in 0..b.len {
                    back.push(b.row(i));
                }
                Ok(())
            };
            reader.feed(&out, &mut emit).unwrap();
            reader.finish(&mut emit).unwrap();
            assert_eq!(back, rows, "{format:?}: {}", String::from_utf8_lossy(&out));
        }
    }
}
