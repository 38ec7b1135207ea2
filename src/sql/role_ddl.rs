//! The role statements, in PostgreSQL's grammar:
//! `CREATE ROLE | USER | GROUP name [[WITH] option …]`,
//! `ALTER ROLE | USER name [WITH] option …`, `ALTER ROLE a RENAME TO b`,
//! `DROP ROLE | USER | GROUP [IF EXISTS] a, b`. sqlparser takes only part of
//! it (not PostgreSQL's CREATE/ALTER USER, CONNECTION LIMIT with a sign, …),
//! so this module recognizes them from the tokens before the general parser
//! runs, as `ingest_copy` does for its COPYs.
//! Must not: run anything (`session/roles.rs` does) or claim another statement.

use sqlparser::tokenizer::Token;

use crate::error::{DbError, DbResult};

/// One role option as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleOption {
    SuperUser(bool),
    CreateDb(bool),
    CreateRole(bool),
    Inherit(bool),
    Login(bool),
    Replication(bool),
    BypassRls(bool),
    ConnectionLimit(i64),
    /// `PASSWORD 'x'` (Some) or `PASSWORD NULL` (None).
    Password(Option<String>),
    ValidUntil(String),
    /// IN ROLE, ROLE, ADMIN, USER, SYSID: memberships are not kept; accepted.
    Ignored,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleStatement {
    Create {
        name: String,
        /// CREATE USER: LOGIN unless said otherwise.
        user: bool,
        options: Vec<RoleOption>,
    },
    Alter {
        name: String,
        options: Vec<RoleOption>,
    },
    Rename {
        name: String,
        to: String,
    },
    Drop {
        if_exists: bool,
        names: Vec<String>,
    },
}

/// `Some` when `sql` is one role statement (or a malformed one); `None`
/// leaves it to the general parser.
pub fn parse(sql: &str) -> Option<DbResult<RoleStatement>> {
    let head = sql.trim_start().as_bytes();
    let starts =
        |v: &str| head.len() > v.len() && head[..v.len()].eq_ignore_ascii_case(v.as_bytes());
    if !(starts("create") || starts("alter") || starts("drop")) {
        return None;
    }
    // Only the first few words decide; the rest is tokenized when they match.
    let words: Vec<&[u8]> = head
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .take(2)
        .collect();
    if !words.get(1).is_some_and(|w| {
        let w = w.to_ascii_lowercase();
        w == b"role" || w == b"user" || w == b"group"
    }) {
        return None;
    }
    let tokens = crate::sql::significant_tokens(sql)?;
    let is = |i: usize, k: &str| matches!(tokens.get(i), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    if !(is(0, "create") || is(0, "alter") || is(0, "drop"))
        || !(is(1, "role") || is(1, "user") || is(1, "group"))
    {
        return None;
    }
    // `CREATE USER MAPPING` and `ALTER GROUP … ADD USER` are other statements.
    if is(2, "mapping") || (is(0, "alter") && is(1, "group")) {
        return None;
    }
    let mut p = Parser { tokens, pos: 2 };
    Some(p.statement())
}

/// A query string of several statements among which is a role statement,
/// split into its statements (as text); None otherwise. The statements then
/// run one by one, each on its own (no implicit transaction: a role change
/// is published at once).
pub fn split(sql: &str) -> Option<Vec<String>> {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;
    if !sql.contains(';') {
        return None;
    }
    if !mentions_role_statement(&sql.to_ascii_lowercase()) {
        return None;
    }
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
        .tokenize_with_location()
        .ok()?;
    // Byte offset of each line's start (locations are 1-based line and character).
    let mut line_starts = vec![0usize];
    line_starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
    let offset = |line: u64, column: u64| -> Option<usize> {
        let start = *line_starts.get((line as usize).checked_sub(1)?)?;
        let skip = (column as usize).checked_sub(1)?;
        Some(match sql[start..].char_indices().nth(skip) {
            Some((i, _)) => start + i,
            None => sql.len(),
        })
    };
    let mut pieces = Vec::new();
    let mut from = 0;
    for t in &tokens {
        if t.token == Token::SemiColon {
            let at = offset(t.span.start.line, t.span.start.column)?;
            pieces.push(sql.get(from..at)?.to_string());
            from = at + 1;
        }
    }
    pieces.push(sql.get(from..)?.to_string());
    pieces.retain(|p| !p.trim().is_empty());
    (pieces.len() > 1 && pieces.iter().any(|p| parse(p).is_some())).then_some(pieces)
}

/// Whether `lower` has `create`, `alter` or `drop` followed by `role`,
/// `user` or `group` (a cheap look before tokenizing a long query string).
fn mentions_role_statement(lower: &str) -> bool {
    let bytes = lower.as_bytes();
    ["role", "user", "group"].iter().any(|noun| {
        lower.match_indices(noun).any(|(at, _)| {
            let before = lower[..at].trim_end_matches(|c: char| c.is_ascii_whitespace());
            let spaced = before.len() < at;
            let after_ok = bytes
                .get(at + noun.len())
                .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_');
            spaced
                && after_ok
                && ["create", "alter", "drop"]
                    .iter()
                    .any(|v| before.ends_with(v))
        })
    })
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn keyword(&self) -> Option<String> {
        match self.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
            _ => None,
        }
    }

    fn eat(&mut self, k: &str) -> bool {
        if self.keyword().as_deref() == Some(k) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error(&self) -> DbError {
        match self.peek() {
            None | Some(Token::EOF) | Some(Token::SemiColon) => {
                DbError::syntax("syntax error at end of input")
            }
            Some(t) => DbError::syntax(format!("syntax error at or near \"{t}\"")),
        }
    }

    fn expect(&mut self, k: &str) -> DbResult<()> {
        if self.eat(k) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// A role name: an identifier (folded to lower case unless quoted);
    /// CURRENT_USER / SESSION_USER / CURRENT_ROLE are returned as those words.
    fn name(&mut self) -> DbResult<String> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let name = if w.quote_style.is_some() {
                    w.value.clone()
                } else {
                    w.value.to_lowercase()
                };
                self.pos += 1;
                Ok(name)
            }
            _ => Err(self.error()),
        }
    }

    fn string(&mut self) -> DbResult<String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::EscapedStringLiteral(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error()),
        }
    }

    fn integer(&mut self) -> DbResult<i64> {
        let negative = matches!(self.peek(), Some(Token::Minus));
        if negative {
            self.pos += 1;
        }
        match self.peek() {
            Some(Token::Number(n, _)) => {
                let v: i64 = n.parse().map_err(|_| self.error())?;
                self.pos += 1;
                Ok(if negative { -v } else { v })
            }
            _ => Err(self.error()),
        }
    }

    fn end(&mut self) -> DbResult<()> {
        while matches!(self.peek(), Some(Token::SemiColon)) {
            self.pos += 1;
        }
        match self.peek() {
            None | Some(Token::EOF) => Ok(()),
            _ => Err(self.error()),
        }
    }

    fn statement(&mut self) -> DbResult<RoleStatement> {
        let verb = match &self.tokens[0] {
            Token::Word(w) => w.value.to_ascii_lowercase(),
            _ => String::new(),
        };
        let user =
            matches!(&self.tokens[1], Token::Word(w) if w.value.eq_ignore_ascii_case("user"));
        let stmt = match verb.as_str() {
            "create" => {
                let name = self.name()?;
                self.eat("with");
                RoleStatement::Create {
                    name,
                    user,
                    options: self.options()?,
                }
            }
            "alter" => {
                let name = self.name()?;
                if self.eat("rename") {
                    self.expect("to")?;
                    RoleStatement::Rename {
                        name,
                        to: self.name()?,
                    }
                } else if matches!(self.keyword().as_deref(), Some("set" | "reset" | "in")) {
                    return Err(DbError::unsupported(
                        "ALTER ROLE … SET/RESET (per-role settings) is not supported",
                    ));
                } else {
                    self.eat("with");
                    let options = self.options()?;
                    if options.is_empty() {
                        return Err(self.error());
                    }
                    RoleStatement::Alter { name, options }
                }
            }
            _ => {
                let if_exists = if self.eat("if") {
                    self.expect("exists")?;
                    true
                } else {
                    false
                };
                let mut names = vec![self.name()?];
                while matches!(self.peek(), Some(Token::Comma)) {
                    self.pos += 1;
                    names.push(self.name()?);
                }
                RoleStatement::Drop { if_exists, names }
            }
        };
        self.end()?;
        Ok(stmt)
    }

    fn name_list(&mut self) -> DbResult<()> {
        self.name()?;
        while matches!(self.peek(), Some(Token::Comma)) {
            self.pos += 1;
            self.name()?;
        }
        Ok(())
    }

    fn options(&mut self) -> DbResult<Vec<RoleOption>> {
        let mut out = Vec::new();
        while let Some(k) = self.keyword() {
            self.pos += 1;
            let flag = |yes: bool, make: fn(bool) -> RoleOption| make(yes);
            let option = match k.as_str() {
                "superuser" => flag(true, RoleOption::SuperUser),
                "nosuperuser" => flag(false, RoleOption::SuperUser),
                "createdb" => flag(true, RoleOption::CreateDb),
                "nocreatedb" => flag(false, RoleOption::CreateDb),
                "createrole" => flag(true, RoleOption::CreateRole),
                "nocreaterole" => flag(false, RoleOption::CreateRole),
                "inherit" => flag(true, RoleOption::Inherit),
                "noinherit" => flag(false, RoleOption::Inherit),
                "login" => flag(true, RoleOption::Login),
                "nologin" => flag(false, RoleOption::Login),
                "replication" => flag(true, RoleOption::Replication),
                "noreplication" => flag(false, RoleOption::Replication),
                "bypassrls" => flag(true, RoleOption::BypassRls),
                "nobypassrls" => flag(false, RoleOption::BypassRls),
                "connection" => {
                    self.expect("limit")?;
                    RoleOption::ConnectionLimit(self.integer()?)
                }
                "encrypted" | "unencrypted" | "password" => {
                    if k != "password" {
                        self.expect("password")?;
                        if k == "unencrypted" {
                            return Err(DbError::unsupported(
                                "UNENCRYPTED PASSWORD is no longer supported",
                            )
                            .with_hint("Remove UNENCRYPTED to store the password in encrypted form instead."));
                        }
                    }
                    if self.eat("null") {
                        RoleOption::Password(None)
                    } else {
                        RoleOption::Password(Some(self.string()?))
                    }
                }
                "valid" => {
                    self.expect("until")?;
                    RoleOption::ValidUntil(self.string()?)
                }
                "in" => {
                    if !self.eat("role") {
                        self.expect("group")?;
                    }
                    self.name_list()?;
                    RoleOption::Ignored
                }
                "role" | "admin" | "user" => {
                    self.name_list()?;
                    RoleOption::Ignored
                }
                "sysid" => {
                    self.integer()?;
                    RoleOption::Ignored
                }
                _ => {
                    self.pos -= 1;
                    return Err(self.error());
                }
            };
            out.push(option);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(sql: &str) -> RoleStatement {
        parse(sql).expect("recognized").expect("parsed")
    }

    #[test]
    fn role_statements() {
        assert_eq!(
            ok("CREATE USER Alice WITH PASSWORD 'x' CONNECTION LIMIT -1 NOSUPERUSER;"),
            RoleStatement::Create {
                name: "alice".into(),
                user: true,
                options: vec![
                    RoleOption::Password(Some("x".into())),
                    RoleOption::ConnectionLimit(-1),
                    RoleOption::SuperUser(false)
                ],
            }
        );
        assert_eq!(
            ok("create role \"Bob\" login encrypted password null in role x, y"),
            RoleStatement::Create {
                name: "Bob".into(),
                user: false,
                options: vec![
                    RoleOption::Login(true),
                    RoleOption::Password(None),
                    RoleOption::Ignored
                ],
            }
        );
        assert_eq!(
            ok("ALTER ROLE a RENAME TO b"),
            RoleStatement::Rename {
                name: "a".into(),
                to: "b".into()
            }
        );
        assert_eq!(
            ok("alter user a with nologin"),
            RoleStatement::Alter {
                name: "a".into(),
                options: vec![RoleOption::Login(false)]
            }
        );
        assert_eq!(
            ok("DROP ROLE IF EXISTS a, \"B\""),
            RoleStatement::Drop {
                if_exists: true,
                names: vec!["a".into(), "B".into()]
            }
        );
        assert_eq!(
            split("SET password_encryption = 'md5'; CREATE ROLE b PASSWORD 'it''s';").unwrap(),
            [
                "SET password_encryption = 'md5'",
                " CREATE ROLE b PASSWORD 'it''s'"
            ]
        );
        assert!(split("SELECT 1; SELECT 'role'").is_none());
        assert!(split("SELECT 1; CREATE TABLE users (a int)").is_none());
        assert!(mentions_role_statement("select 1;\ndrop\n  user x"));
        assert!(!mentions_role_statement(
            "create users; alter_role x; drop roles"
        ));
        assert!(parse("CREATE TABLE t (a int)").is_none());
        assert!(parse("ALTER TABLE t ADD b int").is_none());
        assert!(parse("DROP TABLE t").is_none());
        assert!(parse("CREATE USER MAPPING FOR x SERVER s").is_none());
        for bad in [
            "CREATE ROLE",
            "CREATE ROLE a BOGUS",
            "ALTER ROLE a",
            "DROP ROLE a b",
            "CREATE ROLE a PASSWORD 5",
            "CREATE ROLE a CONNECTION LIMIT x",
        ] {
            assert!(matches!(parse(bad), Some(Err(_))), "{bad}");
        }
    }
}
