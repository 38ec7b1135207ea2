//! Calls of functions written in SQL (`CREATE FUNCTION … LANGUAGE sql`),
//! inlined as PostgreSQL inlines simple SQL functions: the call is replaced
//! by the body with its parameters standing for the (cast) arguments, then
//! bound in the caller's scope.
//! - A body that is one expression (`SELECT $1 + $2`, `RETURN a * 2`)
//!   becomes that expression.
//! - Any other body (FROM, WHERE, aggregates, …) becomes a scalar subquery
//!   `(SELECT … FROM (SELECT args) AS brewric_fn_args, LATERAL (body) … LIMIT 1)`:
//!   the first row of the body's result, NULL when it has none, as a SQL
//!   function returning a scalar does. The arguments are evaluated in the
//!   caller's scope, so a body's own columns never capture them.
//!
//! Must not: inline without bound: a function calling itself stops at
//! `MAX_INLINE_DEPTH`.

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::catalog::FunctionDef;
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels;
use crate::sql::plan::*;

use super::{AggContext, Binder, Scope};

/// How deeply SQL function bodies may inline into each other.
const MAX_INLINE_DEPTH: usize = 32;

fn body_error(def: &FunctionDef, message: impl std::fmt::Display) -> DbError {
    DbError::new(
        sqlstate::INVALID_FUNCTION_DEFINITION,
        format!("SQL function \"{}\": {message}", def.name),
    )
}

fn tokens(sql: &str) -> DbResult<Vec<TokenWithSpan>> {
    Tokenizer::new(&PostgreSqlDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| DbError::syntax(e.to_string()))
}

fn parse_query_tokens(tokens: Vec<TokenWithSpan>) -> DbResult<ast::Query> {
    let mut parser = Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(crate::sql::PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(tokens);
    let q = parser
        .parse_query()
        .map_err(|e| DbError::syntax(e.to_string()))?;
    // Nothing may follow the one statement but a semicolon.
    while parser.consume_token(&Token::SemiColon) {}
    if parser.peek_token().token != Token::EOF {
        return Err(DbError::unsupported(
            "SQL functions with more than one statement are not supported",
        ));
    }
    Ok(*q)
}

/// One expression's text parsed (PostgreSQL dialect).
pub(crate) fn parse_expr(sql: &str) -> DbResult<ast::Expr> {
    Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(crate::sql::PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| DbError::syntax(e.to_string()))
}

/// The single expression of a body that is `SELECT expr` and nothing else.
fn single_expression(q: &ast::Query) -> Option<&ast::Expr> {
    if q.with.is_some() || q.order_by.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return None;
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let plain = s.from.is_empty()
        && s.selection.is_none()
        && s.having.is_none()
        && s.distinct.is_none()
        && s.named_window.is_empty()
        && s.qualify.is_none()
        && matches!(&s.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    match s.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] | [ast::SelectItem::ExprWithAlias { expr: e, .. }]
            if plain && !super::contains_aggregate(e) =>
        {
            Some(e)
        }
        _ => None,
    }
}

/// The body's tokens with each parameter reference replaced by the tokens of
/// `replacement(i)`: `$n` always; bare parameter names when `names` (a name
/// neither qualified, nor qualifying, nor called).
fn substitute(
    body: Vec<TokenWithSpan>,
    def: &FunctionDef,
    names: bool,
    replacement: &dyn Fn(usize) -> String,
) -> DbResult<Vec<TokenWithSpan>> {
    let significant = |t: &TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
    let mut out = Vec::with_capacity(body.len());
    for (i, t) in body.iter().enumerate() {
        let param = match &t.token {
            Token::Placeholder(p) => {
                match p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if (1..=def.args.len()).contains(&n) => Some(n - 1),
                    _ => {
                        return Err(DbError::new(
                            sqlstate::UNDEFINED_PARAMETER,
                            format!("there is no parameter {p}"),
                        ));
                    }
                }
            }
            Token::Word(w) if names => {
                let name = if w.quote_style.is_some() {
                    w.value.clone()
                } else {
                    w.value.to_lowercase()
                };
                let prev = body[..i]
                    .iter()
                    .rev()
                    .find(|t| significant(t))
                    .map(|t| &t.token);
                let next = body[i + 1..]
                    .iter()
                    .find(|t| significant(t))
                    .map(|t| &t.token);
                let free = !matches!(prev, Some(Token::Period))
                    && !matches!(next, Some(Token::Period | Token::LParen));
                def.args
                    .iter()
                    .position(|(n, _)| free && n.as_deref() == Some(name.as_str()))
            }
            _ => None,
        };
        match param {
            Some(p) => {
                let mut spliced = tokens(&replacement(p))?;
                spliced.retain(|t| t.token != Token::EOF);
                out.extend(spliced);
            }
            None => out.push(t.clone()),
        }
    }
    Ok(out)
}

/// The column name the arguments table gives parameter `i`.
fn argument_column(def: &FunctionDef, i: usize) -> String {
    match &def.args[i].0 {
        Some(n) => crate::catalog::quote_ident(n),
        None => format!("brewric_p{}", i + 1),
    }
}

/// The call of `def` with arguments `args` (SQL text) as an expression to bind.
pub fn inline_call(def: &FunctionDef, args: &[String]) -> DbResult<ast::Expr> {
    let body = tokens(&def.body)?;
    let parsed = parse_query_tokens(body.clone())?;
    let cast_arg = |i: usize| format!("CAST(({}) AS {})", args[i], def.args[i].1.name());
    if single_expression(&parsed).is_some() {
        let q = parse_query_tokens(substitute(body, def, true, &cast_arg)?)?;
        let e = single_expression(&q).ok_or_else(|| body_error(def, "body changed shape"))?;
        return parse_expr(&format!("CAST(({e}) AS {})", def.returns.name()));
    }
    let q = parse_query_tokens(substitute(body, def, false, &|i| {
        format!("brewric_fn_args.{}", argument_column(def, i))
    })?)?;
    let (values, columns): (Vec<String>, Vec<String>) = if def.args.is_empty() {
        (vec!["1".into()], vec!["brewric_none".into()])
    } else {
        (0..def.args.len())
            .map(|i| (cast_arg(i), argument_column(def, i)))
            .unzip()
    };
    parse_expr(&format!(
        "(SELECT CAST(brewric_fn_body.brewric_result AS {}) \
         FROM (SELECT {}) AS brewric_fn_args({}) \
         CROSS JOIN LATERAL ({q}) AS brewric_fn_body(brewric_result) LIMIT 1)",
        def.returns.name(),
        values.join(", "),
        columns.join(", "),
    ))
}

impl Binder<'_> {
    /// The SQL functions named by `parts` the search path reaches.
    fn sql_functions(&self, parts: &[String]) -> Vec<std::sync::Arc<FunctionDef>> {
        let (schemas, name): (Vec<String>, &String) = match parts {
            [n] => (self.search_path.clone(), n),
            [s, n] => (vec![s.clone()], n),
            [d, s, n] if *d == self.db.name => (vec![s.clone()], n),
            _ => return Vec::new(),
        };
        schemas
            .iter()
            .filter_map(|s| self.db.schemas.get(s))
            .filter_map(|s| s.functions.get(name))
            .flatten()
            .cloned()
            .collect()
    }

    /// A call of a SQL function, inlined and bound; `None` when no SQL
    /// function of that name takes these arguments (a built-in may).
    pub(super) fn bind_sql_function_call(
        &mut self,
        parts: &[String],
        f: &ast::Function,
        scope: &Scope,
        mut agg: Option<&mut AggContext>,
    ) -> DbResult<Option<Expr>> {
        let candidates = self.sql_functions(parts);
        if candidates.is_empty() {
            return Ok(None);
        }
        let arg_asts: Vec<&ast::Expr> = match &f.args {
            ast::FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Ok(x),
                    other => Err(DbError::unsupported(format!(
                        "argument {other} of a SQL function"
                    ))),
                })
                .collect::<DbResult<_>>()?,
            ast::FunctionArguments::None => vec![],
            ast::FunctionArguments::Subquery(_) => return Ok(None),
        };
        let mut types = Vec::with_capacity(arg_asts.len());
        for a in &arg_asts {
            types.push(self.bind_expr(a, scope, agg.as_deref_mut())?.data_type());
        }
        // The candidate every argument coerces to, preferring the most exact matches.
        let chosen = candidates
            .iter()
            .filter(|c| c.args.len() == types.len())
            .filter(|c| {
                types
                    .iter()
                    .zip(c.arg_types())
                    .all(|(a, p)| kernels::can_coerce(*a, p, false))
            })
            .max_by_key(|c| {
                types
                    .iter()
                    .zip(c.arg_types())
                    .filter(|(a, p)| **a == *p)
                    .count()
            })
            .cloned();
        let Some(def) = chosen else {
            return Ok(None);
        };
        if self.inline_depth >= MAX_INLINE_DEPTH {
            return Err(DbError::new(
                "54001",
                format!(
                    "SQL function \"{}\" calls itself too deeply to be inlined",
                    def.name
                ),
            ));
        }
        let args: Vec<String> = arg_asts.iter().map(|a| a.to_string()).collect();
        let inlined = inline_call(&def, &args)?;
        self.inline_depth += 1;
        let bound = self.bind_expr(&inlined, scope, agg);
        self.inline_depth -= 1;
        Ok(Some(bound?))
    }

    /// Checks a new function's body: it must bind with NULL arguments, return
    /// one column, and give a type that casts to the declared return type.
    pub fn check_sql_function(&mut self, def: &FunctionDef) -> DbResult<()> {
        let nulls: Vec<String> = def.args.iter().map(|_| "NULL".to_string()).collect();
        let q = parse_query_tokens(substitute(tokens(&def.body)?, def, true, &|i| {
            format!("CAST({} AS {})", nulls[i], def.args[i].1.name())
        })?)?;
        let plan = self.bind_query(&q)?;
        let fields: Vec<_> = plan.fields().iter().filter(|f| !f.hidden).collect();
        if fields.len() != 1 {
            return Err(DbError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                format!(
                    "return type mismatch in function declared to return {}",
                    def.returns.name()
                ),
            )
            .with_detail("Final statement must return exactly one column."));
        }
        let actual = fields[0].data_type;
        if !kernels::can_coerce(actual, def.returns, true) {
            return Err(DbError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                format!(
                    "return type mismatch in function declared to return {}",
                    def.returns.name()
                ),
            )
            .with_detail(format!("Actual return type is {}.", actual.name())));
        }
        Ok(())
    }
}
