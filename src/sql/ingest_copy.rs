//! The COPY statements of Brewric's own ingest formats:
//! `COPY <schema> FROM STDIN | '<path>' [WITH] (FORMAT line_protocol | mcap, option 'value', …)`.
//! Their target is a schema (which receives one table per measurement or
//! topic), not a table, and their options (PRECISION, RECORDING) are not
//! PostgreSQL's, so sqlparser cannot take them; this module recognizes them
//! from the tokens before the general parser runs.
//! Must not: run anything (the session does) or claim a COPY of another format.

use sqlparser::tokenizer::{Token, Word};

use crate::error::{sqlstate, DbError, DbResult};

/// Which of Brewric's ingest formats a COPY reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngestFormat {
    LineProtocol,
    Mcap,
}

impl IngestFormat {
    fn from_name(name: &str) -> Option<IngestFormat> {
        match name.to_ascii_lowercase().as_str() {
            "line_protocol" => Some(IngestFormat::LineProtocol),
            "mcap" => Some(IngestFormat::Mcap),
            _ => None,
        }
    }
}

/// A parsed `COPY <schema> FROM … WITH (FORMAT line_protocol | mcap …)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestCopy {
    /// The schema receiving the tables.
    pub schema: String,
    /// `None` = FROM STDIN; else the server-side file.
    pub path: Option<String>,
    pub format: IngestFormat,
    /// The other options, lower-cased names with their values, in order.
    pub options: Vec<(String, String)>,
}

impl IngestCopy {
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `Some` when `sql` is one COPY statement in an ingest format (or a
/// malformed one that names such a format); `None` leaves it to the general parser.
pub fn parse(sql: &str) -> Option<DbResult<IngestCopy>> {
    let head = sql.trim_start();
    if head.len() < 4 || !head.as_bytes()[..4].eq_ignore_ascii_case(b"copy") {
        return None;
    }
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("line_protocol") && !lower.contains("mcap") {
        return None;
    }
    let tokens = crate::sql::significant_tokens(sql)?;
    let format = tokens.windows(2).find_map(|w| match (&w[0], &w[1]) {
        (Token::Word(k), Token::Word(v)) if is_keyword(k, "format") => IngestFormat::from_name(&v.value),
        (Token::Word(k), Token::SingleQuotedString(v)) if is_keyword(k, "format") => IngestFormat::from_name(v),
        _ => None,
    })?;
    Some(parse_tokens(&tokens, format))
}

fn is_keyword(w: &Word, k: &str) -> bool {
    w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k)
}

fn syntax(message: impl Into<String>) -> DbError {
    DbError::new(sqlstate::SYNTAX_ERROR, message)
}

fn parse_tokens(tokens: &[Token], format: IngestFormat) -> DbResult<IngestCopy> {
    let mut i = 0usize;
    let next = |i: &mut usize| {
        let t = tokens.get(*i).cloned().unwrap_or(Token::EOF);
        *i += 1;
        t
    };
    let expect_word = |t: Token, k: &str| match t {
        Token::Word(w) if is_keyword(&w, k) => Ok(()),
        other => Err(syntax(format!("syntax error at or near \"{other}\": expected {}", k.to_uppercase()))),
    };
    expect_word(next(&mut i), "copy")?;
    let schema = match next(&mut i) {
        Token::Word(w) if w.quote_style.is_some() => w.value,
        Token::Word(w) => w.value.to_lowercase(),
        other => return Err(syntax(format!("syntax error at or near \"{other}\": expected a schema name"))),
    };
    if matches!(tokens.get(i), Some(Token::Period)) {
        return Err(syntax(
            "COPY … FORMAT line_protocol/mcap names a schema, which receives one table per measurement or topic",
        ));
    }
    if matches!(tokens.get(i), Some(Token::LParen)) {
        return Err(syntax("COPY … FORMAT line_protocol/mcap takes no column list: its input names the columns"));
    }
    let from = next(&mut i);
    if matches!(&from, Token::Word(w) if is_keyword(w, "to")) {
        return Err(DbError::unsupported("COPY TO in line_protocol or mcap format is not supported"));
    }
    expect_word(from, "from")?;
    let path = match next(&mut i) {
        Token::Word(w) if is_keyword(&w, "stdin") => None,
        Token::SingleQuotedString(p) => Some(p),
        other => return Err(syntax(format!("syntax error at or near \"{other}\": expected STDIN or a file name"))),
    };
    if matches!(tokens.get(i), Some(Token::Word(w)) if is_keyword(w, "with")) {
        i += 1;
    }
    if next(&mut i) != Token::LParen {
        return Err(syntax("expected ( after WITH"));
    }
    let mut options = Vec::new();
    loop {
        let name = match next(&mut i) {
            Token::Word(w) => w.value.to_lowercase(),
            other => return Err(syntax(format!("syntax error at or near \"{other}\": expected an option name"))),
        };
        let value = match next(&mut i) {
            Token::Word(w) => w.value,
            Token::SingleQuotedString(s) => s,
            Token::Number(n, _) => n,
            other => return Err(syntax(format!("syntax error at or near \"{other}\": expected a value for {name}"))),
        };
        if name != "format" {
            options.push((name, value));
        }
        match next(&mut i) {
            Token::Comma => continue,
            Token::RParen => break,
            other => return Err(syntax(format!("syntax error at or near \"{other}\": expected , or )"))),
        }
    }
    if matches!(tokens.get(i), Some(Token::SemiColon)) {
        i += 1;
    }
    if let Some(t) = tokens.get(i).filter(|t| **t != Token::EOF) {
        return Err(syntax(format!(
            "syntax error at or near \"{t}\": a COPY in line_protocol or mcap format must be sent alone"
        )));
    }
    Ok(IngestCopy {
        schema,
        path,
        format,
        options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_line_protocol_copy_with_options() {
        let c = parse("COPY public FROM STDIN WITH (FORMAT line_protocol, PRECISION 's');").unwrap().unwrap();
        assert_eq!(c.schema, "public");
        assert_eq!(c.path, None);
        assert_eq!(c.format, IngestFormat::LineProtocol);
        assert_eq!(c.option("precision"), Some("s"));
        let c = parse("copy \"Fleet\" from '/data/r1.mcap' (format mcap, recording 'r1')").unwrap().unwrap();
        assert_eq!(c.schema, "Fleet");
        assert_eq!(c.path.as_deref(), Some("/data/r1.mcap"));
        assert_eq!(c.format, IngestFormat::Mcap);
        assert_eq!(c.option("recording"), Some("r1"));
    }

    #[test]
    fn leaves_other_copies_to_the_general_parser() {
        assert!(parse("COPY cpu FROM STDIN WITH (FORMAT csv)").is_none());
        assert!(parse("COPY lp_table FROM STDIN").is_none());
        assert!(parse("SELECT 'line_protocol'").is_none());
    }

    #[test]
    fn rejects_malformed_ingest_copies() {
        for bad in [
            "COPY public.cpu FROM STDIN (FORMAT line_protocol)",
            "COPY public (a) FROM STDIN (FORMAT line_protocol)",
            "COPY public FROM STDIN (FORMAT line_protocol, PRECISION)",
            "COPY public FROM STDIN (FORMAT line_protocol); SELECT 1",
            "COPY public TO STDOUT (FORMAT line_protocol)",
        ] {
            assert!(parse(bad).unwrap().is_err(), "{bad}");
        }
    }
}
