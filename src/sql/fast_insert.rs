//! The fast path for the most common write: one
//! `INSERT INTO t [(cols)] VALUES (literal, …), …` statement whose values are
//! all plain literals. A hand-written scanner reads the values straight into
//! column builders (parsing each literal with the target column's text input
//! function, as the general path does for untyped literals), skipping the SQL
//! parser's per-value AST allocations.
//! Must not: change meaning. Anything the scanner does not fully understand —
//! expressions, casts, E'' strings, DEFAULT, RETURNING, ON CONFLICT, several
//! statements — makes it decline (`None`), and the general path runs instead.

use crate::catalog::TableDef;
use crate::error::DbResult;
use crate::exec::vector::Column;
use crate::types::text::parse_text;
use crate::types::{DataType, Datum, FormatContext};

/// The table and column list of a recognised INSERT, and where its VALUES start.
#[derive(Debug, PartialEq)]
pub struct InsertHeader {
    /// `[schema.]table`, folded as identifiers are.
    pub table: Vec<String>,
    /// The column list; `None` = all columns in order.
    pub columns: Option<Vec<String>>,
    /// Byte offset just after the VALUES keyword.
    values_at: usize,
}

/// One literal of a VALUES row.
#[derive(Debug, PartialEq)]
enum Literal<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    Str(std::borrow::Cow<'a, str>),
}

struct Scanner<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    /// Skips whitespace and comments; `None` on an unterminated block comment.
    fn skip_space(&mut self) -> Option<()> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'-') if self.bytes().get(self.pos + 1) == Some(&b'-') => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.bytes().get(self.pos + 1) == Some(&b'*') => {
                    let end = self.src[self.pos + 2..].find("*/")?;
                    self.pos += end + 4;
                }
                _ => return Some(()),
            }
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> Option<&'a str> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
        {
            self.pos += 1;
        }
        (self.pos > start && !self.bytes()[start].is_ascii_digit())
            .then(|| &self.src[start..self.pos])
    }

    fn keyword(&mut self, kw: &str) -> Option<()> {
        self.skip_space()?;
        let w = self.word()?;
        w.eq_ignore_ascii_case(kw).then_some(())
    }

    /// An identifier: unquoted (folded to lower case) or "quoted" ("" escapes).
    fn identifier(&mut self) -> Option<String> {
        self.skip_space()?;
        if self.eat(b'"') {
            let mut out = String::new();
            loop {
                let rest = &self.src[self.pos..];
                let q = rest.find('"')?;
                out.push_str(&rest[..q]);
                self.pos += q + 1;
                if self.eat(b'"') {
                    out.push('"');
                } else {
                    break;
                }
            }
            return (!out.is_empty()).then_some(out);
        }
        let w = self.word()?;
        Some(w.to_ascii_lowercase())
    }

    fn literal(&mut self) -> Option<Literal<'a>> {
        self.skip_space()?;
        match self.peek()? {
            b'\'' => {
                self.pos += 1;
                let start = self.pos;
                let mut owned: Option<String> = None;
                loop {
                    let rest = &self.src[self.pos..];
                    let q = rest.find('\'')?;
                    self.pos += q + 1;
                    if self.peek() == Some(b'\'') {
                        // '' is one quote: switch to an owned copy.
                        let s = owned.get_or_insert_with(String::new);
                        s.push_str(&rest[..q]);
                        s.push('\'');
                        self.pos += 1;
                    } else {
                        return Some(Literal::Str(match owned {
                            Some(mut s) => {
                                s.push_str(&rest[..q]);
                                std::borrow::Cow::Owned(s)
                            }
                            None => std::borrow::Cow::Borrowed(&self.src[start..self.pos - 1]),
                        }));
                    }
                }
            }
            b'0'..=b'9' | b'.' | b'-' | b'+' => {
                let start = self.pos;
                if matches!(self.peek(), Some(b'-' | b'+')) {
                    self.pos += 1;
                }
                let digits_start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'.') {
                    self.pos += 1;
                }
                if self.pos == digits_start {
                    return None;
                }
                if matches!(self.peek(), Some(b'e' | b'E')) {
                    self.pos += 1;
                    if matches!(self.peek(), Some(b'-' | b'+')) {
                        self.pos += 1;
                    }
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                }
                Some(Literal::Number(&self.src[start..self.pos]))
            }
            _ => {
                let w = self.word()?;
                if w.eq_ignore_ascii_case("null") {
                    Some(Literal::Null)
                } else if w.eq_ignore_ascii_case("true") {
                    Some(Literal::Bool(true))
                } else if w.eq_ignore_ascii_case("false") {
                    Some(Literal::Bool(false))
                } else {
                    None
                }
            }
        }
    }
}

/// Recognises `INSERT INTO name [(col, …)] VALUES` at the start of `sql`.
pub fn parse_header(sql: &str) -> Option<InsertHeader> {
    let mut s = Scanner { src: sql, pos: 0 };
    s.keyword("insert")?;
    s.keyword("into")?;
    let mut table = vec![s.identifier()?];
    while {
        s.skip_space()?;
        s.eat(b'.')
    } {
        table.push(s.identifier()?);
    }
    if table.len() > 2 {
        return None;
    }
    s.skip_space()?;
    let columns = if s.eat(b'(') {
        let mut cols = vec![s.identifier()?];
        loop {
            s.skip_space()?;
            if s.eat(b')') {
                break;
            }
            if !s.eat(b',') {
                return None;
            }
            cols.push(s.identifier()?);
        }
        Some(cols)
    } else {
        None
    };
    s.keyword("values")?;
    Some(InsertHeader {
        table,
        columns,
        values_at: s.pos,
    })
}

/// Builds one target column from literals, as the general path would type them.
struct ColumnBuilder {
    column: Column,
    data_type: DataType,
}

impl ColumnBuilder {
    /// `Ok(None)`: this literal needs the general path (e.g. a number into a
    /// boolean column, whose error message the binder produces).
    fn push(&mut self, lit: &Literal, ctx: &FormatContext) -> DbResult<Option<()>> {
        let t = self.data_type;
        let d = match lit {
            Literal::Null => Datum::Null,
            Literal::Str(s) => parse_text(t, s, ctx)?,
            Literal::Bool(b) if t == DataType::Bool => Datum::Bool(*b),
            // A number is a typed literal (int4, int8 or numeric) cast to the column;
            // anything out of the ordinary (overflow, rounding) is left to the general path,
            // whose messages are the cast's.
            Literal::Number(n) => match number_datum(t, n) {
                Some(d) => d,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        self.column.push_datum(&d);
        Ok(Some(()))
    }
}

fn number_datum(t: DataType, n: &str) -> Option<Datum> {
    let integral = !n.contains(['.', 'e', 'E']);
    match t {
        DataType::Int16 if integral => n.parse::<i16>().ok().map(Datum::Int16),
        DataType::Int32 if integral => n.parse::<i32>().ok().map(Datum::Int32),
        DataType::Int64 if integral => n.parse::<i64>().ok().map(Datum::Int64),
        DataType::Float64 => n
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Datum::Float64),
        DataType::Float32 => n
            .parse::<f32>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Datum::Float32),
        DataType::Numeric => parse_text(t, n, &FormatContext::default()).ok(),
        _ => None,
    }
}

/// Reads the VALUES rows of a recognised INSERT into full-width columns of
/// `table` (columns not listed are NULL). `Ok(None)`: decline, use the general path.
pub fn read_rows(
    sql: &str,
    header: &InsertHeader,
    table: &TableDef,
    ctx: &FormatContext,
) -> DbResult<Option<Vec<Column>>> {
    let targets: Vec<usize> = match &header.columns {
        None => (0..table.columns.len()).collect(),
        Some(cols) => {
            let mut idx = Vec::with_capacity(cols.len());
            for c in cols {
                match table.column_index(c) {
                    Some(i) if !idx.contains(&i) => idx.push(i),
                    _ => return Ok(None),
                }
            }
            idx
        }
    };
    // A value for a GENERATED ALWAYS identity column is refused by the general path.
    if targets.iter().any(|&i| table.columns[i].identity == Some(crate::catalog::Identity::Always)) {
        return Ok(None);
    }
    // Columns left out get their DEFAULT (sequences, now()): only the general path evaluates those.
    if table
        .columns
        .iter()
        .enumerate()
        .any(|(i, c)| !targets.contains(&i) && c.default.is_some())
    {
        return Ok(None);
    }
    let mut builders: Vec<ColumnBuilder> = targets
        .iter()
        .map(|&i| ColumnBuilder {
            column: Column::with_capacity(table.columns[i].data_type, 1024),
            data_type: table.columns[i].data_type,
        })
        .collect();
    let mut s = Scanner {
        src: sql,
        pos: header.values_at,
    };
    let mut rows = 0usize;
    loop {
        s.skip_space();
        if !s.eat(b'(') {
            return Ok(None);
        }
        for (k, b) in builders.iter_mut().enumerate() {
            if k > 0 {
                s.skip_space();
                if !s.eat(b',') {
                    return Ok(None);
                }
            }
            let Some(lit) = s.literal() else {
                return Ok(None);
            };
            if b.push(&lit, ctx)?.is_none() {
                return Ok(None);
            }
        }
        s.skip_space();
        if !s.eat(b')') {
            return Ok(None);
        }
        rows += 1;
        s.skip_space();
        if s.eat(b',') {
            continue;
        }
        s.eat(b';');
        s.skip_space();
        if s.pos != sql.len() {
            return Ok(None); // RETURNING, ON CONFLICT, another statement
        }
        break;
    }
    let mut out: Vec<Column> = table
        .columns
        .iter()
        .map(|c| Column::with_capacity(c.data_type, 0))
        .collect();
    for (b, &i) in builders.into_iter().zip(&targets) {
        out[i] = b.column;
    }
    for (i, c) in table.columns.iter().enumerate() {
        if !targets.contains(&i) {
            out[i] = Column::from_datum(c.data_type, &Datum::Null, rows);
        }
    }
    Ok(Some(out))
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
                col("ts", DataType::TimestampTz),
                col("robot", DataType::Text),
                col("battery", DataType::Float64),
                col("ok", DataType::Bool),
            ],
            time_column: None,
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        }
    }

    fn read(sql: &str) -> DbResult<Option<Vec<Column>>> {
        match parse_header(sql) {
            Some(h) => read_rows(sql, &h, &table(), &FormatContext::default()),
            None => Ok(None),
        }
    }

    #[test]
    fn recognises_plain_multi_row_inserts() {
        let h = parse_header("insert INTO public.\"Readings\" (ts, robot) values (").unwrap();
        assert_eq!(h.table, vec!["public".to_string(), "Readings".to_string()]);
        assert_eq!(h.columns, Some(vec!["ts".to_string(), "robot".to_string()]));
        let cols = read("INSERT INTO readings VALUES ('2026-01-01 00:00:00+00', 'r''1', 97.5, true), -- c\n (NULL, 'r2', -1e3, false);")
            .unwrap()
            .unwrap();
        assert_eq!(cols[1].datum(0), Datum::text("r'1"));
        assert_eq!(cols[2].datum(1), Datum::Float64(-1000.0));
        assert_eq!(cols[0].datum(1), Datum::Null);
        assert_eq!(cols[3].datum(1), Datum::Bool(false));
        let cols = read("INSERT INTO readings (robot) VALUES ('x')")
            .unwrap()
            .unwrap();
        assert_eq!((cols[0].len(), cols[0].datum(0)), (1, Datum::Null));
    }

    #[test]
    fn declines_what_it_does_not_understand() {
        for sql in [
            "INSERT INTO readings VALUES (now(), 'r', 1, true)",
            "INSERT INTO readings VALUES ('2026-01-01', 'r', 1, true) RETURNING *",
            "INSERT INTO readings VALUES ('2026-01-01', 'r', 1, true); SELECT 1",
            "INSERT INTO readings VALUES ('2026-01-01', 'r', DEFAULT, true)",
            "INSERT INTO readings VALUES ('2026-01-01', 'r', 1, 1)",
            "INSERT INTO readings VALUES ('2026-01-01', E'r', 1, true)",
            "INSERT INTO readings VALUES ('2026-01-01', 'r', 1)",
            "INSERT INTO readings (nope) VALUES (1)",
            "INSERT INTO readings SELECT 1",
            "INSERT INTO readings VALUES ('unterminated",
        ] {
            assert!(read(sql).unwrap().is_none(), "{sql}");
        }
    }

    #[test]
    fn bad_literals_fail_like_the_general_path() {
        let e = read("INSERT INTO readings VALUES ('2026-13-01', 'r', 1, true)").unwrap_err();
        assert_eq!(e.code, "22008");
        let e = read("INSERT INTO readings VALUES ('2026-01-01', 'r', 'abc', true)").unwrap_err();
        assert_eq!(
            e.message,
            "invalid input syntax for type double precision: \"abc\""
        );
    }
}
