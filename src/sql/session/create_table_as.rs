//! `CREATE TABLE … AS query [WITH [NO] DATA]` and `SELECT … INTO table`:
//! a table with the columns the query returns (their names, or the names
//! listed after the table's; their types, `unknown` as text), then filled by
//! `INSERT INTO table query` — so rows are written as any INSERT writes them
//! (one atomic write; inside a block, kept with the block's rows). The
//! command tag is PostgreSQL's `SELECT n`. Outside a block the new table is
//! listed as an unfinished write's until its rows are committed, so a crash
//! in between leaves no empty table behind; an INSERT that fails drops it.
//! Must not: decide column types itself (the binder's result fields do).

use super::*;
use crate::catalog::{quote_ident, ProvisionalKind};

impl Session {
    pub(super) async fn create_table_as(
        &mut self,
        ct: &ast::CreateTable,
        query: &ast::Query,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        let parts = object_name_parts(&ct.name);
        let (schema, name) = match parts.as_slice() {
            [t] => (self.creation_schema()?, t.clone()),
            [s, t] => (s.clone(), t.clone()),
            _ => return Err(DbError::syntax(format!("improper table name: {}", ct.name))),
        };
        if ct.if_not_exists && self.relation_exists(&schema, &name)? {
            self.notice(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists, skipping"));
            return Ok(StatementResult::Command("CREATE TABLE AS".into()));
        }
        let (_, fields) = self.describe(&Statement::Query(Box::new(query.clone())), param_types)?;
        let fields = fields.unwrap_or_default();
        if ct.columns.len() > fields.len() {
            return Err(DbError::new(sqlstate::SYNTAX_ERROR, "too many column names were specified"));
        }
        let mut columns: Vec<(String, DataType)> = Vec::with_capacity(fields.len());
        for (i, f) in fields.iter().enumerate() {
            let column = ct.columns.get(i).map_or_else(|| f.name.clone(), |c| ident_name(&c.name));
            if columns.iter().any(|(n, _)| *n == column) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{column}\" specified more than once"),
                ));
            }
            let data_type = match f.data_type {
                DataType::Unknown => DataType::Text,
                DataType::Record => {
                    return Err(DbError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("column \"{column}\" has pseudo-type record"),
                    ))
                }
                t => t,
            };
            columns.push((column, data_type));
        }
        let table = format!("{}.{}", quote_ident(&schema), quote_ident(&name));
        let column_list: Vec<String> = columns.iter().map(|(n, t)| format!("{} {}", quote_ident(n), t.name())).collect();
        let create = format!("CREATE TABLE {table} ({})", column_list.join(", "));
        let Some(Statement::CreateTable(create)) = crate::sql::parse(&create)?.into_iter().next() else {
            return Err(DbError::internal("CREATE TABLE AS: the table's definition did not parse"));
        };
        self.create_table(&create)?;
        if ct.with_data.is_some_and(|w| !w.data) {
            return Ok(StatementResult::Command("CREATE TABLE AS".into()));
        }
        let listing = (self.txn == TxnState::Idle).then(|| self.server.catalog.allocate_oid());
        if let Some(id) = listing {
            self.list_ingest_created(id, &schema, &[(ProvisionalKind::Table, &name)]);
        }
        let inserted = self.fill_created_table(&table, query, params, param_types).await;
        if let Some(id) = listing {
            if inserted.is_err() {
                // The statement fails whole: the table goes with it.
                if let Ok(stmts) = crate::sql::parse(&format!("DROP TABLE IF EXISTS {table}")) {
                    for stmt in stmts {
                        let _ = Box::pin(self.execute(&stmt, vec![], &[])).await;
                    }
                }
                self.notices.clear();
            }
            self.forget_unfinished_ingest(id);
        }
        Ok(StatementResult::Command(format!("SELECT {}", inserted?)))
    }

    /// `INSERT INTO table query`; returns the rows written.
    async fn fill_created_table(
        &mut self,
        table: &str,
        query: &ast::Query,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<u64> {
        let insert = format!("INSERT INTO {table} {query}");
        let Some(Statement::Insert(insert)) = crate::sql::parse(&insert)?.into_iter().next() else {
            return Err(DbError::internal("CREATE TABLE AS: the INSERT did not parse"));
        };
        match self.insert(&insert, params, param_types).await? {
            StatementResult::Command(tag) => Ok(tag.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)),
            _ => Ok(0),
        }
    }

    /// `SELECT … INTO [TEMPORARY | UNLOGGED] [TABLE] name …`: CREATE TABLE
    /// name AS the same query without its INTO clause.
    pub(super) async fn select_into(
        &mut self,
        query: &ast::Query,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        let into = match query.body.as_ref() {
            ast::SetExpr::Select(select) => select.into.as_ref(),
            _ => None,
        };
        let Some(into) = into else { return Err(DbError::internal("SELECT … INTO without INTO")) };
        let name = match into.targets.as_slice() {
            [ast::Expr::Identifier(i)] => ast::ObjectName::from(vec![i.clone()]),
            [ast::Expr::CompoundIdentifier(parts)] => ast::ObjectName::from(parts.clone()),
            _ => return Err(DbError::syntax(format!("SELECT … INTO {into} names no table"))),
        };
        let mut plain = query.clone();
        if let ast::SetExpr::Select(s) = plain.body.as_mut() {
            s.into = None;
        }
        let sql = format!("CREATE TABLE {name} AS {plain}");
        let Some(Statement::CreateTable(ct)) = crate::sql::parse(&sql)?.into_iter().next() else {
            return Err(DbError::internal("SELECT … INTO: the CREATE TABLE did not parse"));
        };
        let Some(q) = &ct.query else { return Err(DbError::internal("SELECT … INTO: no query")) };
        let q = q.clone();
        self.create_table_as(&ct, &q, params, param_types).await
    }
}
