//! COPY … FROM STDIN in PostgreSQL's text, CSV and binary formats: a
//! streaming parser that takes CopyData chunks of any size (a row may span
//! chunks) and fills column builders for the target columns, parsing each
//! field with its column type's text input function (binary: its receive
//! function). Errors name the line (row) and column, as PostgreSQL's CONTEXT
//! does: `COPY readings, line 3, column battery: "abc"`.
//! Must not: write anything (the session logs and publishes the batches).

use crate::catalog::TableDef;
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::{Batch, Column};
use crate::types::binary::decode_binary;
use crate::types::{DataType, Datum, FormatContext};

/// Rows gathered before a batch is handed to the session.
pub const COPY_BATCH_ROWS: usize = 8192;
/// The longest row accepted (a row is buffered whole until its end arrives).
pub const MAX_ROW_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    Text,
    Csv,
    Binary,
}

#[derive(Debug, Clone)]
pub struct CopyOptions {
    pub format: CopyFormat,
    pub delimiter: u8,
    pub null: String,
    pub header: bool,
    pub quote: u8,
    pub escape: u8,
    /// Columns whose quoted empty or NULL-spelled values are NULL too (CSV FORCE_NULL).
    pub force_null: Vec<String>,
}

impl CopyOptions {
    pub fn new(format: CopyFormat) -> CopyOptions {
        let csv = format == CopyFormat::Csv;
        CopyOptions {
            format,
            delimiter: if csv { b',' } else { b'\t' },
            null: if csv { String::new() } else { "\\N".into() },
            header: false,
            quote: b'"',
            escape: b'"',
            force_null: Vec::new(),
        }
    }
}

const BINARY_SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// The streaming parser of one COPY.
pub struct CopyReader {
    table_name: String,
    /// (column index in the table, name, type) of each field in order.
    targets: Vec<(usize, String, DataType)>,
    /// Types of all the table's columns (those not copied are filled with NULL).
    table_types: Vec<DataType>,
    options: CopyOptions,
    ctx: FormatContext,
    pending: Vec<u8>,
    builders: Vec<Column>,
    rows_in_batch: usize,
    /// 1-based line (text/CSV) or tuple (binary) number, for error messages.
    line: u64,
    pub rows: u64,
    header_done: bool,
    /// Binary: the file header was read. Text/binary: the end marker was seen.
    started: bool,
    finished: bool,
    force_null: Vec<bool>,
    /// Per copied column, the last timestamp text read (see `fields::LastTimestamp`).
    last_timestamps: Vec<super::fields::LastTimestamp>,
}

impl CopyReader {
    pub fn new(
        table: &TableDef,
        columns: &[String],
        options: CopyOptions,
        ctx: FormatContext,
    ) -> DbResult<CopyReader> {
        let mut targets = Vec::new();
        if columns.is_empty() {
            for (i, c) in table.columns.iter().enumerate() {
                targets.push((i, c.name.clone(), c.data_type));
            }
        } else {
            for name in columns {
                let i = table.column_index(name).ok_or_else(|| {
                    DbError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{name}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    )
                })?;
                if targets.iter().any(|t: &(usize, String, DataType)| t.0 == i) {
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("column \"{name}\" specified more than once"),
                    ));
                }
                targets.push((i, name.clone(), table.columns[i].data_type));
            }
        }
        for f in &options.force_null {
            if !targets.iter().any(|t| &t.1 == f) {
                return Err(DbError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    format!("FORCE_NULL column \"{f}\" not referenced by COPY"),
                ));
            }
        }
        let force_null = targets
            .iter()
            .map(|t| options.force_null.contains(&t.1))
            .collect();
        let builders = targets
            .iter()
            .map(|t| Column::with_capacity(t.2, COPY_BATCH_ROWS))
            .collect();
        let targets_len = targets.len();
        Ok(CopyReader {
            table_name: table.name.clone(),
            table_types: table.column_types(),
            targets,
            options,
            ctx,
            pending: Vec::new(),
            builders,
            rows_in_batch: 0,
            line: 0,
            rows: 0,
            header_done: false,
            started: false,
            finished: false,
            force_null,
            last_timestamps: (0..targets_len).map(|_| Default::default()).collect(),
        })
    }

    fn context(&self, column: Option<usize>, value: Option<&str>) -> String {
        let mut c = format!("COPY {}, line {}", self.table_name, self.line);
        if let Some(k) = column {
            c += &format!(", column {}", self.targets[k].1);
        }
        if let Some(v) = value {
            c += &format!(": \"{v}\"");
        }
        c
    }

    fn bad(&self, code: &'static str, message: impl Into<String>) -> DbError {
        DbError::new(code, message).with_where(self.context(None, None))
    }

    /// Feeds one CopyData chunk; complete batches are passed to `emit`.
    pub fn feed(
        &mut self,
        chunk: &[u8],
        emit: &mut dyn FnMut(Batch) -> DbResult<()>,
    ) -> DbResult<()> {
        if self.finished {
            return Ok(()); // data after the end marker is ignored, as PostgreSQL does
        }
        self.pending.extend_from_slice(chunk);
        let consumed = match self.options.format {
            CopyFormat::Text => self.parse_text_rows(emit)?,
            CopyFormat::Csv => self.parse_csv_rows(emit, false)?,
            CopyFormat::Binary => self.parse_binary_rows(emit)?,
        };
        self.pending.drain(..consumed);
        if self.pending.len() > MAX_ROW_BYTES {
            return Err(self.bad(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("COPY row is longer than {} bytes", MAX_ROW_BYTES),
            ));
        }
        Ok(())
    }

    /// The end of the data (CopyDone): parses what is left and emits the last batch.
    pub fn finish(&mut self, emit: &mut dyn FnMut(Batch) -> DbResult<()>) -> DbResult<()> {
        if !self.finished && !self.pending.is_empty() {
            match self.options.format {
                CopyFormat::Text => {
                    // A last line without a newline still counts.
                    self.pending.push(b'\n');
                    let n = self.parse_text_rows(emit)?;
                    self.pending.drain(..n);
                }
                CopyFormat::Csv => {
                    let n = self.parse_csv_rows(emit, true)?;
                    self.pending.drain(..n);
                }
                CopyFormat::Binary => {
                    return Err(self.bad(
                        sqlstate::BAD_COPY_FILE_FORMAT,
                        "unexpected EOF in COPY data",
                    ));
                }
            }
        }
        if self.options.format == CopyFormat::Binary
            && !self.started
            && self.pending.is_empty()
            && self.rows == 0
            && !self.finished
        {
            // An empty binary COPY without even a header: nothing to load.
        }
        self.flush(emit)
    }

    fn flush(&mut self, emit: &mut dyn FnMut(Batch) -> DbResult<()>) -> DbResult<()> {
        if self.rows_in_batch == 0 {
            return Ok(());
        }
        let fresh: Vec<Column> = self
            .targets
            .iter()
            .map(|t| Column::with_capacity(t.2, COPY_BATCH_ROWS))
            .collect();
        let filled = std::mem::replace(&mut self.builders, fresh);
        let rows = self.rows_in_batch;
        self.rows_in_batch = 0;
        // Full-width rows: columns not in the COPY list are NULL.
        let mut cols: Vec<Option<Column>> = (0..self.table_types.len()).map(|_| None).collect();
        for (c, t) in filled.into_iter().zip(&self.targets) {
            cols[t.0] = Some(c);
        }
        let cols = cols
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                c.unwrap_or_else(|| Column::from_datum(self.table_types[i], &Datum::Null, rows))
            })
            .collect();
        emit(Batch::from_columns(cols))
    }

    fn end_row(&mut self, emit: &mut dyn FnMut(Batch) -> DbResult<()>) -> DbResult<()> {
        self.rows += 1;
        self.rows_in_batch += 1;
        if self.rows_in_batch >= COPY_BATCH_ROWS {
            self.flush(emit)?;
        }
        Ok(())
    }

    fn push_text_field(&mut self, k: usize, value: Option<&[u8]>) -> DbResult<()> {
        super::fields::push_text_value(&mut self.builders[k], value, &self.ctx, &mut self.last_timestamps[k]).map_err(|e| {
            let shown = value.map(String::from_utf8_lossy);
            let ctx = self.context(Some(k), shown.as_deref());
            e.with_where(ctx)
        })
    }

    fn field_count_error(&self, got: usize) -> DbError {
        if got < self.targets.len() {
            let missing = &self.targets[got].1;
            self.bad(
                sqlstate::BAD_COPY_FILE_FORMAT,
                format!("missing data for column \"{missing}\""),
            )
        } else {
            self.bad(
                sqlstate::BAD_COPY_FILE_FORMAT,
                "extra data after last expected column",
            )
        }
    }

    /// Text format: one row per line, fields split by the delimiter, `\N` is
    /// NULL, backslash escapes. Returns the bytes consumed.
    fn parse_text_rows(&mut self, emit: &mut dyn FnMut(Batch) -> DbResult<()>) -> DbResult<usize> {
        let mut start = 0;
        let data = std::mem::take(&mut self.pending);
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(self.targets.len());
        let result = (|| {
            while let Some(nl) = data[start..].iter().position(|&b| b == b'\n') {
                let mut line = &data[start..start + nl];
                start += nl + 1;
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                self.line += 1;
                if line == b"\\." {
                    self.finished = true;
                    break;
                }
                if self.options.header && !self.header_done {
                    self.header_done = true;
                    continue;
                }
                split_text_line(line, self.options.delimiter, &mut spans);
                if spans.len() != self.targets.len() {
                    return Err(self.field_count_error(spans.len()));
                }
                for (k, &(a, b)) in spans.iter().enumerate() {
                    let raw = &line[a..b];
                    if raw == self.options.null.as_bytes() {
                        self.push_text_field(k, None)?;
                    } else if raw.contains(&b'\\') {
                        let value = unescape_text(raw)
                            .map_err(|m| self.bad(sqlstate::BAD_COPY_FILE_FORMAT, m))?;
                        self.push_text_field(k, Some(&value))?;
                    } else {
                        self.push_text_field(k, Some(raw))?;
                    }
                }
                self.end_row(emit)?;
            }
            Ok(())
        })();
        self.pending = data;
        result.map(|_| {
            if self.finished {
                self.pending.len()
            } else {
                start
            }
        })
    }

    /// CSV: quoted fields may hold delimiters, quotes (doubled or escaped) and
    /// newlines; an unquoted field equal to the NULL string is NULL.
    fn parse_csv_rows(
        &mut self,
        emit: &mut dyn FnMut(Batch) -> DbResult<()>,
        at_end: bool,
    ) -> DbResult<usize> {
        let data = std::mem::take(&mut self.pending);
        let mut start = 0;
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(self.targets.len());
        let result = (|| {
            loop {
                // The common line, with no quote character and a newline: fields
                // are slices of the data, parsed in place.
                if let Some(nl) = memchr_newline(&data[start..]) {
                    let line = &data[start..start + nl];
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    // One pass: the delimiters' positions, and whether a quote
                    // makes the line one for the full CSV reader.
                    spans.clear();
                    let (delimiter, quote) = (self.options.delimiter, self.options.quote);
                    let mut a = 0;
                    let mut quoted = false;
                    for (i, &c) in line.iter().enumerate() {
                        if c == delimiter {
                            spans.push((a, i));
                            a = i + 1;
                        } else if c == quote {
                            quoted = true;
                            break;
                        }
                    }
                    spans.push((a, line.len()));
                    let plain = !quoted && line != b"\\." && (self.header_done || !self.options.header);
                    if plain {
                        self.line += 1;
                        if spans.len() != self.targets.len() {
                            return Err(self.field_count_error(spans.len()));
                        }
                        for (k, &(a, b)) in spans.iter().enumerate() {
                            let raw = &line[a..b];
                            let is_null = raw == self.options.null.as_bytes()
                                || (self.force_null[k] && raw.is_empty());
                            self.push_text_field(k, if is_null { None } else { Some(raw) })?;
                        }
                        start += nl + 1;
                        self.end_row(emit)?;
                        if start >= data.len() {
                            break;
                        }
                        continue;
                    }
                }
                let Some((fields, next)) = split_csv_record(&data[start..], &self.options, at_end)
                else {
                    break;
                };
                let lines = data[start..start + next]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    .max(1);
                let first_line = self.line + 1;
                self.line += lines as u64;
                let raw_line = &data[start..start + next];
                start += next;
                if raw_line == b"\\.\n" || raw_line == b"\\.\r\n" || raw_line == b"\\." {
                    self.finished = true;
                    break;
                }
                if self.options.header && !self.header_done {
                    self.header_done = true;
                    continue;
                }
                let saved_line = self.line;
                self.line = first_line;
                if fields.len() != self.targets.len() {
                    return Err(self.field_count_error(fields.len()));
                }
                for (k, (raw, quoted)) in fields.into_iter().enumerate() {
                    let null = self.options.null.as_bytes();
                    let is_null = (!quoted && raw == null)
                        || (self.force_null[k] && (raw == null || raw.is_empty()));
                    self.push_text_field(k, if is_null { None } else { Some(&raw) })?;
                }
                self.line = saved_line;
                self.end_row(emit)?;
                if start >= data.len() {
                    break;
                }
            }
            Ok(())
        })();
        self.pending = data;
        result.map(|_| {
            if self.finished {
                self.pending.len()
            } else {
                start
            }
        })
    }

    /// Binary: the PGCOPY header, then tuples of (i16 field count, per field
    /// i32 length or -1 for NULL, then the bytes), ended by a count of -1.
    fn parse_binary_rows(
        &mut self,
        emit: &mut dyn FnMut(Batch) -> DbResult<()>,
    ) -> DbResult<usize> {
        let data = std::mem::take(&mut self.pending);
        let mut pos = 0;
        let result = (|| {
            if !self.started {
                if data.len() < 19 {
                    return Ok(());
                }
                if &data[..11] != BINARY_SIGNATURE {
                    return Err(self.bad(
                        sqlstate::BAD_COPY_FILE_FORMAT,
                        "COPY file signature not recognized",
                    ));
                }
                let ext = u32::from_be_bytes([data[15], data[16], data[17], data[18]]) as usize;
                if data.len() < 19 + ext {
                    return Ok(());
                }
                pos = 19 + ext;
                self.started = true;
            }
            loop {
                if data.len() < pos + 2 {
                    break;
                }
                let count = i16::from_be_bytes([data[pos], data[pos + 1]]);
                if count == -1 {
                    self.finished = true;
                    pos = data.len();
                    break;
                }
                // Find the whole tuple before decoding any of it.
                let mut p = pos + 2;
                let mut spans = Vec::with_capacity(count.max(0) as usize);
                let mut complete = true;
                for _ in 0..count.max(0) {
                    if data.len() < p + 4 {
                        complete = false;
                        break;
                    }
                    let len = i32::from_be_bytes([data[p], data[p + 1], data[p + 2], data[p + 3]]);
                    p += 4;
                    if len < -1 {
                        return Err(self.bad(
                            sqlstate::BAD_COPY_FILE_FORMAT,
                            format!("invalid field length {len}"),
                        ));
                    }
                    if len == -1 {
                        spans.push(None);
                        continue;
                    }
                    let len = len as usize;
                    if len > MAX_ROW_BYTES {
                        return Err(
                            self.bad(sqlstate::PROGRAM_LIMIT_EXCEEDED, "COPY field too long")
                        );
                    }
                    if data.len() < p + len {
                        complete = false;
                        break;
                    }
                    spans.push(Some((p, len)));
                    p += len;
                }
                if !complete {
                    break;
                }
                self.line += 1;
                if count as usize != self.targets.len() {
                    return Err(self.bad(
                        sqlstate::BAD_COPY_FILE_FORMAT,
                        format!(
                            "row field count is {count}, expected {}",
                            self.targets.len()
                        ),
                    ));
                }
                for (k, span) in spans.into_iter().enumerate() {
                    let d = match span {
                        None => Datum::Null,
                        Some((at, len)) => decode_binary(self.targets[k].2, &data[at..at + len])
                            .map_err(|e| {
                                let ctx = self.context(Some(k), None);
                                e.with_where(ctx)
                            })?,
                    };
                    self.builders[k].push_datum(&d);
                }
                self.end_row(emit)?;
                pos = p;
            }
            Ok(())
        })();
        self.pending = data;
        result.map(|_| pos)
    }
}

/// Splits a text-format line on the delimiter (a backslash escapes the next
/// byte) into `spans`, (start, end) of each field.
fn split_text_line(line: &[u8], delimiter: u8, spans: &mut Vec<(usize, usize)>) {
    spans.clear();
    let mut start = 0;
    let mut i = 0;
    while i < line.len() {
        if line[i] == b'\\' {
            i += 2;
            continue;
        }
        if line[i] == delimiter {
            spans.push((start, i));
            start = i + 1;
        }
        i += 1;
    }
    spans.push((start.min(line.len()), line.len()));
}

/// Text-format escapes: \b \f \n \r \t \v, \\, octal \ooo, hex \xhh; any other
/// escaped byte stands for itself.
fn unescape_text(raw: &[u8]) -> Result<Vec<u8>, String> {
    if !raw.contains(&b'\\') {
        return Ok(raw.to_vec());
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let Some(&e) = raw.get(i + 1) else {
            return Err("unterminated backslash escape in COPY data".into());
        };
        i += 2;
        match e {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                for _ in 0..2 {
                    match raw.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + (d - b'0') as u32;
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match raw.get(i).and_then(|d| (*d as char).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            i += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    out.push(b'x');
                } else {
                    out.push(v as u8);
                }
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// Position of the first `\n` (memchr-speed scan).
fn memchr_newline(data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| b == b'\n')
}

/// One CSV record from the start of `data`: its fields (bytes, quoted?) and
/// the bytes it spans including the newline. `None` when incomplete (unless
/// `at_end`, where the end of data ends the record).
#[allow(clippy::type_complexity)]
fn split_csv_record(
    data: &[u8],
    o: &CopyOptions,
    at_end: bool,
) -> Option<(Vec<(Vec<u8>, bool)>, usize)> {
    if data.is_empty() {
        return None;
    }
    let mut fields = Vec::new();
    let mut field = Vec::new();
    let mut quoted = false;
    let mut in_quotes = false;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if in_quotes {
            if b == o.escape && o.escape != o.quote && data.get(i + 1) == Some(&o.quote) {
                field.push(o.quote);
                i += 2;
                continue;
            }
            if b == o.quote {
                if data.get(i + 1) == Some(&o.quote) && o.escape == o.quote {
                    field.push(o.quote);
                    i += 2;
                    continue;
                }
                if i + 1 == data.len() && !at_end {
                    return None; // cannot tell a closing quote from a doubled one yet
                }
                in_quotes = false;
                i += 1;
                continue;
            }
            field.push(b);
            i += 1;
            continue;
        }
        if b == o.quote {
            in_quotes = true;
            quoted = true;
            i += 1;
        } else if b == o.delimiter {
            fields.push((std::mem::take(&mut field), quoted));
            quoted = false;
            i += 1;
        } else if b == b'\n' || b == b'\r' {
            let end = if b == b'\r' && data.get(i + 1) == Some(&b'\n') {
                i + 2
            } else {
                i + 1
            };
            if b == b'\r' && i + 1 == data.len() && !at_end {
                return None;
            }
            fields.push((field, quoted));
            return Some((fields, end));
        } else {
            field.push(b);
            i += 1;
        }
    }
    if at_end && !in_quotes {
        fields.push((field, quoted));
        return Some((fields, data.len()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ColumnDef;

    fn table() -> TableDef {
        let col = |n: &str, t| ColumnDef {
            name: n.into(),
            data_type: t,
            not_null: false,
            default: None,
            numeric_typmod: None,
            series_tag: false,
            frame_refs: false,
            identity: None,
        };
        TableDef {
            oid: 1,
            name: "readings".into(),
            schema: "public".into(),
            columns: vec![
                col("id", DataType::Int32),
                col("robot", DataType::Text),
                col("battery", DataType::Float64),
            ],
            time_column: None,
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        }
    }

    fn load(
        format: CopyFormat,
        chunks: &[&[u8]],
        options: impl Fn(&mut CopyOptions),
    ) -> DbResult<Vec<Vec<Datum>>> {
        let mut o = CopyOptions::new(format);
        options(&mut o);
        let mut r = CopyReader::new(&table(), &[], o, FormatContext::default())?;
        let mut rows = Vec::new();
        let mut emit = |b: Batch| {
            for i in 0..b.len {
                rows.push(b.row(i));
            }
            Ok(())
        };
        for c in chunks {
            r.feed(c, &mut emit)?;
        }
        r.finish(&mut emit)?;
        Ok(rows)
    }

    #[test]
    fn text_rows_split_anywhere_across_chunks() {
        let data = b"1\tr\\t1\t97.5\n2\t\\N\t-1\n3\tx\\\\y\t0\n";
        let whole = load(CopyFormat::Text, &[data], |_| {}).unwrap();
        assert_eq!(whole.len(), 3);
        assert_eq!(
            whole[0],
            vec![Datum::Int32(1), Datum::text("r\t1"), Datum::Float64(97.5)]
        );
        assert_eq!(whole[1][1], Datum::Null);
        assert_eq!(whole[2][1], Datum::text("x\\y"));
        for cut in 1..data.len() {
            assert_eq!(
                load(CopyFormat::Text, &[&data[..cut], &data[cut..]], |_| {}).unwrap(),
                whole,
                "cut {cut}"
            );
        }
    }

    #[test]
    fn csv_quotes_newlines_header_and_nulls() {
        let data = b"id,robot,battery\n1,\"a,\"\"b\"\"\nc\",2.5\n2,,3\n3,\"\",4\n";
        let rows = load(CopyFormat::Csv, &[data], |o| o.header = true).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0][1], Datum::text("a,\"b\"\nc"));
        assert_eq!(rows[1][1], Datum::Null);
        assert_eq!(rows[2][1], Datum::text(""));
        for cut in 1..data.len() {
            assert_eq!(
                load(CopyFormat::Csv, &[&data[..cut], &data[cut..]], |o| o
                    .header =
                    true)
                .unwrap(),
                rows,
                "cut {cut}"
            );
        }
    }

    #[test]
    fn binary_rows_and_bad_input() {
        let mut data = BINARY_SIGNATURE.to_vec();
        data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        data.extend_from_slice(&3i16.to_be_bytes());
        data.extend_from_slice(&4i32.to_be_bytes());
        data.extend_from_slice(&7i32.to_be_bytes());
        data.extend_from_slice(&(-1i32).to_be_bytes());
        data.extend_from_slice(&8i32.to_be_bytes());
        data.extend_from_slice(&1.5f64.to_be_bytes());
        let no_trailer = data.clone();
        data.extend_from_slice(&(-1i16).to_be_bytes());
        let rows = load(CopyFormat::Binary, &[&data], |_| {}).unwrap();
        assert_eq!(
            rows,
            vec![vec![Datum::Int32(7), Datum::Null, Datum::Float64(1.5)]]
        );
        // pgx sends no trailer before CopyDone
        assert_eq!(
            load(CopyFormat::Binary, &[&no_trailer], |_| {}).unwrap(),
            rows
        );
        for cut in 1..data.len() {
            assert_eq!(
                load(CopyFormat::Binary, &[&data[..cut], &data[cut..]], |_| {}).unwrap(),
                rows,
                "cut {cut}"
            );
        }
        assert!(load(CopyFormat::Binary, &[b"PGCOPY\n-not-a-signature-"], |_| {}).is_err());
        // every truncation is an error or a shorter load, never a panic
        for cut in 0..data.len() {
            let _ = load(CopyFormat::Binary, &[&data[..cut]], |_| {});
        }
    }

    #[test]
    fn errors_name_the_line_and_column() {
        let e = load(CopyFormat::Text, &[b"1\ta\t1\n2\tb\tabc\n"], |_| {}).unwrap_err();
        assert_eq!(e.code, "22P02");
        assert_eq!(
            e.where_.as_deref(),
            Some("COPY readings, line 2, column battery: \"abc\"")
        );
        let e = load(CopyFormat::Text, &[b"1\ta\n"], |_| {}).unwrap_err();
        assert_eq!(e.message, "missing data for column \"battery\"");
        let e = load(CopyFormat::Csv, &[b"1,a,2,3\n"], |_| {}).unwrap_err();
        assert_eq!(e.message, "extra data after last expected column");
    }
}
