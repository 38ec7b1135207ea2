//! SQL front end and statement execution: parse (sqlparser, PostgreSQL
//! dialect), bind to a logical plan, and run statements for a session —
//! queries through `exec`, DDL against the catalog, DML to the shards,
//! transaction control and session settings.
//! Must not: speak the wire protocol (results go back as `StatementResult`).

pub mod bind;
pub mod continuous_aggregates;
pub mod fast_insert;
pub mod foreign_keys;
pub mod ingest_copy;
pub mod jobs;
pub mod optimize;
pub mod plan;
pub mod role_ddl;
pub mod series_times;
pub mod session;
pub mod unique;

pub use session::{Session, StatementResult, TxnState};

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use crate::error::{DbError, DbResult};

/// The tokens of `sql` without whitespace (None when it does not tokenize):
/// for the statements recognized before the general parser (`ingest_copy`, `role_ddl`).
pub fn significant_tokens(sql: &str) -> Option<Vec<sqlparser::tokenizer::Token>> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    Some(
        Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize()
            .ok()?
            .into_iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect(),
    )
}

/// Parses a query string into statements, with PostgreSQL's syntax-error shape.
pub fn parse(sql: &str) -> DbResult<Vec<sqlparser::ast::Statement>> {
    // PostgreSQL's CHECKPOINT, which sqlparser does not know: a statement
    // consisting of that word becomes `CALL checkpoint()`, which the session
    // runs as CHECKPOINT.
    if sql.len() >= 10
        && sql
            .as_bytes()
            .windows(10)
            .any(|w| w.eq_ignore_ascii_case(b"checkpoint"))
    {
        if let Some(rewritten) = rewrite_checkpoint(sql) {
            return parse_statements(&rewritten);
        }
    }
    // `CREATE INDEX … ON ONLY table`, which sqlparser does not know: without
    // partitioned tables, ONLY changes nothing.
    if sql.len() >= 4
        && sql
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"only"))
    {
        if let Some(rewritten) = rewrite_index_on_only(sql) {
            return parse_statements(&rewritten);
        }
    }
    let mentions = |word: &[u8]| sql.as_bytes().windows(word.len()).any(|w| w.eq_ignore_ascii_case(word));
    // PostgreSQL's ALTER SEQUENCE, which sqlparser does not know.
    if mentions(b"alter") && mentions(b"sequence") {
        if let Some(rewritten) = rewrite_alter_sequence(sql) {
            return parse_statements(&rewritten);
        }
    }
    // `CREATE MATERIALIZED VIEW … AS query WITH [NO] DATA`, whose ending
    // sqlparser does not take: WITH NO DATA becomes an option of the view.
    if mentions(b"materialized") && mentions(b"data") {
        if let Some(rewritten) = rewrite_materialized_view_data(sql) {
            return parse_statements(&rewritten);
        }
    }
    parse_statements(sql)
}

/// `sql` with each `CREATE MATERIALIZED VIEW …` ending in `WITH [NO] DATA`
/// without that ending; for NO DATA the view's options gain
/// `session::materialized_views::NO_DATA_OPTION` (in its `WITH (…)`
/// list, made if there is none).
fn rewrite_materialized_view_data(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let word = |t: &Token, k: &str| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let option = session::materialized_views::NO_DATA_OPTION;
    let mut out = String::with_capacity(sql.len() + 64);
    let mut changed = false;
    for statement in tokens.split_inclusive(|t| matches!(t, Token::SemiColon)) {
        let at: Vec<usize> = (0..statement.len())
            .filter(|&i| !matches!(statement[i], Token::Whitespace(_) | Token::SemiColon))
            .collect();
        let starts = at.len() > 6
            && word(&statement[at[0]], "create")
            && word(&statement[at[1]], "materialized")
            && word(&statement[at[2]], "view");
        let n = at.len();
        let no_data = n > 3 && word(&statement[at[n - 3]], "with") && word(&statement[at[n - 2]], "no") && word(&statement[at[n - 1]], "data");
        let data = n > 2 && word(&statement[at[n - 2]], "with") && word(&statement[at[n - 1]], "data");
        if !starts || !(no_data || data) {
            statement.iter().for_each(|t| out.push_str(&t.to_string()));
            continue;
        }
        let cut = at[n - if no_data { 3 } else { 2 }];
        // The view's options come before its first AS outside parentheses.
        let (mut depth, mut as_at, mut with_at) = (0i32, None, None);
        for (i, t) in statement.iter().enumerate().take(cut) {
            match t {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                t if depth == 0 && word(t, "with") && with_at.is_none() => with_at = Some(i),
                t if depth == 0 && word(t, "as") => {
                    as_at = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let as_at = as_at?;
        let options_open = with_at
            .filter(|&w| w < as_at)
            .and_then(|w| (w + 1..as_at).find(|&i| matches!(statement[i], Token::LParen)));
        for (i, t) in statement.iter().enumerate() {
            if i >= cut && !matches!(t, Token::SemiColon) {
                continue;
            }
            if no_data && options_open.is_none() && i == as_at {
                out.push_str(&format!("WITH ({option}) "));
            }
            out.push_str(&t.to_string());
            if no_data && options_open == Some(i) {
                out.push_str(&format!("{option}, "));
            }
        }
        changed = true;
    }
    changed.then_some(out)
}

/// The procedure an `ALTER SEQUENCE` statement is rewritten to call (a
/// quoted name no unquoted call can reach): `CALL "…"(name text, if_exists,
/// restart, restart value or NULL, the other options as text)`; the session
/// parses the options as CREATE SEQUENCE's.
pub const ALTER_SEQUENCE_CALL: &str = "brewric alter sequence";

/// `sql` with each `ALTER SEQUENCE [IF EXISTS] name options` statement
/// replaced by a call of [`ALTER_SEQUENCE_CALL`]; `RESTART [[WITH] n]`
/// comes out of the options (CREATE SEQUENCE has no such option).
fn rewrite_alter_sequence(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let word = |t: &Token, k: &str| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let significant = |t: &Token| !matches!(t, Token::Whitespace(_));
    let quoted = |text: &str| format!("'{}'", text.replace('\'', "''"));
    let mut out = String::with_capacity(sql.len() + 64);
    let mut changed = false;
    for statement in tokens.split_inclusive(|t| matches!(t, Token::SemiColon)) {
        let at: Vec<usize> = (0..statement.len()).filter(|&i| significant(&statement[i])).collect();
        let is_alter_sequence = at.len() >= 3 && word(&statement[at[0]], "alter") && word(&statement[at[1]], "sequence");
        if !is_alter_sequence {
            statement.iter().for_each(|t| out.push_str(&t.to_string()));
            continue;
        }
        let mut k = 2;
        let if_exists = at.len() > k + 2 && word(&statement[at[k]], "if") && word(&statement[at[k + 1]], "exists");
        if if_exists {
            k += 2;
        }
        // name: word (. word)*
        let mut name = String::new();
        loop {
            let t = &statement[*at.get(k)?];
            if !matches!(t, Token::Word(_)) {
                return None;
            }
            name.push_str(&t.to_string());
            if at.get(k + 1).is_some_and(|&i| matches!(statement[i], Token::Period)) {
                name.push('.');
                k += 2;
            } else {
                k += 1;
                break;
            }
        }
        // The options' tokens, RESTART [[WITH] [-]n] taken out.
        let mut rest = String::new();
        let (mut restart, mut restart_value) = (false, None::<String>);
        let mut i = at.get(k).copied().unwrap_or(statement.len());
        while i < statement.len() {
            let t = &statement[i];
            if matches!(t, Token::SemiColon) {
                break;
            }
            if word(t, "restart") && !restart {
                restart = true;
                let next = |from: usize| (from..statement.len()).find(|&j| significant(&statement[j]));
                let mut j = next(i + 1);
                let with = j.is_some_and(|j| word(&statement[j], "with"));
                if with {
                    j = j.and_then(|j| next(j + 1));
                }
                let mut value = String::new();
                if let Some(m) = j.filter(|&j| matches!(statement[j], Token::Minus | Token::Plus)) {
                    value.push_str(&statement[m].to_string());
                    j = next(m + 1);
                }
                match j.map(|j| &statement[j]) {
                    Some(Token::Number(n, _)) => {
                        value.push_str(n);
                        restart_value = Some(value);
                        i = j? + 1;
                    }
                    _ if value.is_empty() && !with => i = j.unwrap_or(statement.len()),
                    _ => return None,
                }
                continue;
            }
            rest.push_str(&t.to_string());
            i += 1;
        }
        statement[..at[0]].iter().for_each(|t| out.push_str(&t.to_string()));
        out.push_str(&format!(
            "CALL \"{ALTER_SEQUENCE_CALL}\"({}, {if_exists}, {restart}, {}, {})",
            quoted(&name),
            restart_value.unwrap_or_else(|| "NULL".into()),
            quoted(rest.trim())
        ));
        if statement.last().is_some_and(|t| matches!(t, Token::SemiColon)) {
            out.push(';');
        }
        changed = true;
    }
    changed.then_some(out)
}

/// `sql` without the `ONLY` of `CREATE [UNIQUE] INDEX … ON ONLY table`.
fn rewrite_index_on_only(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let word = |t: &Token, k: &str| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let significant = |t: &Token| !matches!(t, Token::Whitespace(_));
    let mut out = String::with_capacity(sql.len());
    let mut changed = false;
    // Significant words of the current statement so far.
    let mut words: Vec<&Token> = Vec::new();
    for t in &tokens {
        if significant(t) {
            let in_create_index = words.first().is_some_and(|w| word(w, "create"))
                && words.iter().any(|w| word(w, "index"));
            if in_create_index && word(t, "only") && words.last().is_some_and(|w| word(w, "on")) {
                changed = true;
                continue;
            }
            if matches!(t, Token::SemiColon) {
                words.clear();
            } else {
                words.push(t);
            }
        }
        out.push_str(&t.to_string());
    }
    changed.then_some(out)
}

/// `sql` with each statement that is just `CHECKPOINT` replaced by `CALL checkpoint()`.
fn rewrite_checkpoint(sql: &str) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize().ok()?;
    let significant = |t: &Token| !matches!(t, Token::Whitespace(_));
    let mut out = String::with_capacity(sql.len() + 16);
    let mut at_start = true;
    let mut changed = false;
    for (i, t) in tokens.iter().enumerate() {
        if at_start && significant(t) {
            if let Token::Word(w) = t {
                let next = tokens[i + 1..].iter().find(|t| significant(t));
                if w.quote_style.is_none()
                    && w.value.eq_ignore_ascii_case("checkpoint")
                    && matches!(next, None | Some(Token::SemiColon))
                {
                    out.push_str("CALL checkpoint()");
                    changed = true;
                    at_start = false;
                    continue;
                }
            }
        }
        if significant(t) {
            at_start = matches!(t, Token::SemiColon);
        }
        out.push_str(&t.to_string());
    }
    changed.then_some(out)
}

fn parse_statements(sql: &str) -> DbResult<Vec<sqlparser::ast::Statement>> {
    Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .or_else(|e| {
            parse_with_dollar_strings_as_literals(sql)
                .or_else(|| parse_create_table_as_names(sql))
                .or_else(|| parse_identity_sequence_name(sql))
                .ok_or(e)
        })
        .map_err(|e| syntax_error(sql, &e.to_string()))
}

/// sqlparser takes a dollar-quoted string only where it expects an
/// expression; PostgreSQL takes one wherever a string literal may stand
/// (`COMMENT ON … IS $$…$$`). When a statement failed to parse, it is parsed
/// again with each dollar-quoted string as an ordinary string literal.
fn parse_with_dollar_strings_as_literals(sql: &str) -> Option<Vec<sqlparser::ast::Statement>> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    if !sql.contains('$') {
        return None;
    }
    let mut tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().ok()?;
    let mut changed = false;
    for t in &mut tokens {
        if let Token::DollarQuotedString(d) = &t.token {
            t.token = Token::SingleQuotedString(d.value.clone());
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .ok()
}

/// `CREATE TABLE name (a, b) AS query`: sqlparser wants a type after each
/// column name, which PostgreSQL's CREATE TABLE AS does not take. When a
/// statement failed to parse, a list of bare names right before `AS` is
/// parsed again with a placeholder type after each (the session takes only
/// the names; the query's result decides the types).
fn parse_create_table_as_names(sql: &str) -> Option<Vec<sqlparser::ast::Statement>> {
    use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().ok()?;
    let significant: Vec<usize> = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let word = |i: usize, k: &str| matches!(&tokens[i].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let (&first, _) = significant.split_first()?;
    let table = significant.iter().position(|&i| word(i, "table"))?;
    if !word(first, "create") || significant[..table].iter().any(|&i| matches!(tokens[i].token, Token::LParen)) {
        return None;
    }
    let open = table + significant[table..].iter().position(|&i| matches!(tokens[i].token, Token::LParen))?;
    // ( name [, name]* ) AS
    let mut names = Vec::new();
    let mut k = open + 1;
    loop {
        let &i = significant.get(k)?;
        if !matches!(tokens[i].token, Token::Word(_)) {
            return None;
        }
        names.push(i);
        match significant.get(k + 1).map(|&j| &tokens[j].token) {
            Some(Token::Comma) => k += 2,
            Some(Token::RParen) => break,
            _ => return None,
        }
    }
    if !significant.get(k + 2).is_some_and(|&i| word(i, "as")) {
        return None;
    }
    let placeholder = sqlparser::tokenizer::Word { value: "text".into(), quote_style: None, keyword: sqlparser::keywords::Keyword::TEXT };
    let mut out = Vec::with_capacity(tokens.len() + 2 * names.len());
    for (i, t) in tokens.into_iter().enumerate() {
        let location = t.span;
        out.push(t);
        if names.contains(&i) {
            out.push(sqlparser::tokenizer::TokenWithSpan::new(Token::Whitespace(Whitespace::Space), location));
            out.push(sqlparser::tokenizer::TokenWithSpan::new(Token::Word(placeholder.clone()), location));
        }
    }
    Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(out)
        .parse_statements()
        .ok()
        .filter(|stmts| stmts.iter().any(|s| matches!(s, sqlparser::ast::Statement::CreateTable(ct) if ct.query.is_some())))
}

/// `ALTER TABLE t ALTER COLUMN c ADD GENERATED … AS IDENTITY (SEQUENCE NAME
/// s …)`, as pg_dump writes an identity column: sqlparser does not take
/// `SEQUENCE NAME`. When a statement failed to parse, it is parsed again
/// without it, and the name rides in the identity's options as
/// `SequenceOptions::OwnedBy` (which sqlparser never gives an identity
/// column, so the session reads it there as the sequence's name).
fn parse_identity_sequence_name(sql: &str) -> Option<Vec<sqlparser::ast::Statement>> {
    use sqlparser::ast::{AlterColumnOperation, AlterTableOperation, Ident, ObjectName, ObjectNamePart, SequenceOptions, Statement};
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().ok()?;
    let at: Vec<usize> = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let word = |k: usize, w: &str| at.get(k).is_some_and(|&i| matches!(&tokens[i].token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w)));
    if !(word(0, "alter") && word(1, "table")) {
        return None;
    }
    let start = (0..at.len()).find(|&k| word(k, "sequence") && word(k + 1, "name"))?;
    // The name: word (. word)*
    let mut parts = Vec::new();
    let mut k = start + 2;
    loop {
        let Token::Word(w) = &tokens[*at.get(k)?].token else { return None };
        parts.push(ObjectNamePart::Identifier(Ident { value: w.value.clone(), quote_style: w.quote_style, span: sqlparser::tokenizer::Span::empty() }));
        if at.get(k + 1).is_some_and(|&i| matches!(tokens[i].token, Token::Period)) {
            k += 2;
        } else {
            break;
        }
    }
    let (from, to) = (at[start], at[k]);
    let kept: Vec<_> = tokens.into_iter().enumerate().filter(|(i, _)| *i < from || *i > to).map(|(_, t)| t).collect();
    let mut stmts = Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(kept)
        .parse_statements()
        .ok()?;
    let [Statement::AlterTable(alter)] = stmts.as_mut_slice() else { return None };
    let options = alter.operations.iter_mut().find_map(|op| match op {
        AlterTableOperation::AlterColumn { op: AlterColumnOperation::AddGenerated { sequence_options, .. }, .. } => {
            Some(sequence_options.get_or_insert_with(Vec::new))
        }
        _ => None,
    })?;
    options.push(SequenceOptions::OwnedBy(Some(ObjectName(parts))));
    Some(stmts)
}

/// How deeply expressions may nest (sqlparser's default of 50 refuses nesting
/// PostgreSQL accepts). Binding and evaluation recurse as deep; the shard
/// threads' stacks (`SHARD_STACK_BYTES`) are sized for it.
pub const PARSER_RECURSION_LIMIT: usize = 1000;

/// Turns a sqlparser message ("... at Line: 1, Column: 8") into 42601 with a caret position.
fn syntax_error(sql: &str, message: &str) -> DbError {
    let mut position = None;
    if let Some(idx) = message.find("Line: ") {
        let rest = &message[idx + 6..];
        let line: usize = rest
            .split(',')
            .next()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let col: usize = rest
            .split("Column: ")
            .nth(1)
            .and_then(|s| {
                s.trim_end_matches(|c: char| !c.is_ascii_digit())
                    .parse()
                    .ok()
            })
            .unwrap_or(1);
        let offset: usize = sql
            .lines()
            .take(line.saturating_sub(1))
            .map(|l| l.chars().count() + 1)
            .sum();
        position = Some((offset + col) as u32);
    }
    let near = message
        .split("found: ")
        .nth(1)
        .map(|s| s.split(" at Line").next().unwrap_or(s).trim().to_string());
    let text = match near {
        Some(tok) if tok == "EOF" => "syntax error at end of input".to_string(),
        Some(tok) => format!("syntax error at or near \"{tok}\""),
        None => format!(
            "syntax error: {}",
            message.trim_start_matches("sql parser error: ")
        ),
    };
    if text == "syntax error at end of input" {
        position = Some(sql.chars().count() as u32 + 1);
    }
    let mut err = DbError::syntax(text);
    if let Some(p) = position {
        err = err.with_position(p);
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_materialized_views_with_no_data_becomes_an_option() {
        let opts = |sql: &str| match parse(sql).unwrap().as_slice() {
            [sqlparser::ast::Statement::CreateView(cv)] => cv.options.to_string(),
            other => panic!("{other:?}"),
        };
        let o = opts("CREATE MATERIALIZED VIEW v WITH (timescaledb.continuous) AS SELECT 1 AS a GROUP BY a WITH NO DATA");
        assert!(o.contains("brewric.with_no_data") && o.contains("timescaledb.continuous"), "{o}");
        let o = opts("create materialized view v (x) as select 1 with no data;");
        assert!(o.contains("brewric.with_no_data"), "{o}");
        let o = opts("CREATE MATERIALIZED VIEW v WITH (timescaledb.continuous) AS SELECT 1 WITH DATA");
        assert!(!o.contains("brewric.with_no_data"), "{o}");
        // A query mentioning those words elsewhere is left alone.
        assert!(parse("SELECT 'materialized data'").is_ok());
    }

    #[test]
    fn alter_sequence_becomes_a_call_with_restart_taken_out_of_the_options() {
        let out = rewrite_alter_sequence(
            "SELECT 1; ALTER SEQUENCE IF EXISTS \"My\".s INCREMENT BY 2 RESTART WITH -5 CACHE 3; alter sequence q restart",
        )
        .unwrap();
        assert_eq!(
            out,
            "SELECT 1; CALL \"brewric alter sequence\"('\"My\".s', true, true, -5, 'INCREMENT BY 2  CACHE 3'); \
             CALL \"brewric alter sequence\"('q', false, true, NULL, '')"
        );
        assert_eq!(rewrite_alter_sequence("CREATE SEQUENCE s; SELECT sequence FROM t"), None);
        // RESTART WITH needs its value; a name with a quote stays one string.
        assert_eq!(rewrite_alter_sequence("ALTER SEQUENCE s RESTART WITH"), None);
        let quoted = rewrite_alter_sequence("ALTER SEQUENCE \"it's\" OWNED BY NONE").unwrap();
        assert_eq!(quoted, "CALL \"brewric alter sequence\"('\"it''s\"', false, false, NULL, 'OWNED BY NONE')");
        assert!(matches!(parse(&quoted).unwrap().as_slice(), [sqlparser::ast::Statement::Call(_)]));
    }
}
