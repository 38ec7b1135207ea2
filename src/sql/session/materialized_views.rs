//! Materialized views, the session's side. PostgreSQL's (`CREATE
//! MATERIALIZED VIEW v AS query [WITH [NO] DATA]`, `REFRESH MATERIALIZED
//! VIEW [CONCURRENTLY] v [WITH [NO] DATA]`: a table holding the query's rows,
//! replaced whole by a refresh inside the session's transaction) and
//! TimescaleDB's continuous aggregates: `CREATE
//! MATERIALIZED VIEW v [(cols)] WITH (timescaledb.continuous [, …]) AS
//! SELECT time_bucket(width, time) …, aggregates FROM hypertable … GROUP BY …
//! [WITH [NO] DATA]` — the query checked to bucket the hypertable's time
//! column, a table `v` made with the query's columns (a hypertable on the
//! bucket, so retention policies reach it), registered with the query, then
//! filled unless WITH NO DATA —; `DROP MATERIALIZED VIEW`; `CALL
//! refresh_continuous_aggregate(v, start, end)`. Queries read `v` as the
//! table it is (TimescaleDB's `materialized_only = true`).
//! Must not: refresh buckets itself (`sql/continuous_aggregates.rs` does).

use std::sync::Arc;

use sqlparser::ast;

use super::*;
use crate::catalog::timescale::ContinuousAggregate;
use crate::catalog::quote_ident;

/// The option `sql::parse` adds for a trailing `WITH NO DATA`, which
/// sqlparser does not take after a view's query.
pub const NO_DATA_OPTION: &str = "brewric.with_no_data";

/// What a continuous aggregate's query buckets by: the select item holding
/// `time_bucket(width, time)`, its width, and the time argument as written.
struct Bucketing {
    column: usize,
    width: crate::types::Interval,
    time_expr: ast::Expr,
}

fn invalid_query(message: impl Into<String>) -> DbError {
    DbError::new(sqlstate::FEATURE_NOT_SUPPORTED, message)
}

/// The literal text of an argument such as `'1 day'` or `INTERVAL '1 day'`.
fn literal_text(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        ast::Expr::Interval(iv) => literal_text(&iv.value),
        ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => literal_text(expr),
        _ => None,
    }
}

/// Finds the time_bucket select item of a continuous aggregate's SELECT.
fn bucketing(select: &ast::Select) -> DbResult<Bucketing> {
    for (i, item) in select.projection.iter().enumerate() {
        let expr = match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        let ast::Expr::Function(f) = expr else { continue };
        if !f.name.to_string().eq_ignore_ascii_case("time_bucket") {
            continue;
        }
        let args: Vec<&ast::Expr> = match &f.args {
            ast::FunctionArguments::List(l) => l
                .args
                .iter()
                .filter_map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        if args.len() != 2 {
            return Err(invalid_query(
                "continuous aggregate view must bucket with time_bucket(width, time) (no origin, offset or time zone)",
            ));
        }
        let width = literal_text(args[0])
            .ok_or_else(|| invalid_query("the bucket width of a continuous aggregate must be a constant interval"))?;
        let width = crate::types::text::parse_interval(&width)?;
        return Ok(Bucketing { column: i, width, time_expr: args[1].clone() });
    }
    Err(invalid_query("continuous aggregate view must include a valid time bucket function"))
}

impl Session {
    pub(super) async fn create_materialized_view(&mut self, cv: &ast::CreateView) -> DbResult<StatementResult> {
        let mut continuous = false;
        let mut with_data = true;
        let options = match &cv.options {
            ast::CreateTableOptions::With(o) | ast::CreateTableOptions::Options(o) => o.as_slice(),
            _ => &[],
        };
        for option in options {
            let (key, value) = super::jobs::storage_option(option)?;
            let on = super::jobs::option_bool(value.as_deref()).ok_or_else(|| {
                DbError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for {key}"))
            });
            match key.as_str() {
                "timescaledb.continuous" => continuous = on?,
                k if k == NO_DATA_OPTION => with_data = false,
                "timescaledb.materialized_only" if !on.clone()? => {
                    return Err(DbError::unsupported(
                        "real-time aggregation (timescaledb.materialized_only = false): a continuous aggregate answers from its buckets",
                    ))
                }
                "timescaledb.materialized_only" | "timescaledb.create_group_indexes" | "timescaledb.finalized" => {}
                other => return Err(DbError::unsupported(format!("CREATE MATERIALIZED VIEW … WITH ({other})"))),
            }
        }
        if !continuous {
            return self.create_plain_materialized_view(cv, with_data).await;
        }
        if self.txn != TxnState::Idle {
            return Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "CREATE MATERIALIZED VIEW … WITH (timescaledb.continuous) cannot run inside a transaction block",
            ));
        }
        let (schema, name) = self.creation_target(&cv.name, "relation")?;
        if self.relation_exists(&schema, &name)? {
            if cv.if_not_exists {
                self.notice(sqlstate::DUPLICATE_TABLE, format!("continuous aggregate \"{name}\" already exists, skipping"));
                return Ok(StatementResult::Command("CREATE MATERIALIZED VIEW".into()));
            }
            return Err(DbError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
        }
        let ast::SetExpr::Select(select) = cv.query.body.as_ref() else {
            return Err(invalid_query("invalid continuous aggregate query: it must be one SELECT"));
        };
        if matches!(&select.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty()) {
            return Err(invalid_query("invalid continuous aggregate query: it must have a GROUP BY with the time bucket"));
        }
        let bucketing = bucketing(select)?;
        let source = match select.from.as_slice() {
            [ast::TableWithJoins { relation: ast::TableFactor::Table { name, .. }, joins }] if joins.is_empty() => {
                self.lookup_table(name)?
            }
            _ => return Err(invalid_query("invalid continuous aggregate query: it must read one hypertable")),
        };
        let time_name = match &bucketing.time_expr {
            ast::Expr::Identifier(i) => ident_name(i),
            ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
            _ => String::new(),
        };
        let source_time = source.time_column.and_then(|c| source.columns.get(c));
        match source_time {
            None => {
                return Err(DbError::new("TS001", format!("table \"{}\" is not a hypertable", source.name)));
            }
            Some(c) if c.name != time_name => {
                return Err(invalid_query(format!(
                    "time_bucket of a continuous aggregate must bucket the time column \"{}\" of \"{}\"",
                    c.name, source.name
                )))
            }
            Some(_) => {}
        }
        // The table holding the buckets.
        self.create_view_table(cv, &schema, &name).await?;
        let made = self.server.catalog.update_database(&self.database, |db| {
            let s = db.schemas.get_mut(&schema).ok_or_else(|| DbError::internal("schema vanished"))?;
            let t = s.tables.get_mut(&name).ok_or_else(|| DbError::internal("continuous aggregate table vanished"))?;
            let t = Arc::make_mut(t);
            t.time_column = Some(bucketing.column);
            let oid = t.oid;
            db.timescale.continuous.insert(
                oid,
                ContinuousAggregate {
                    query: cv.query.to_string(),
                    source: source.oid,
                    bucket_column: bucketing.column,
                    bucket_width: bucketing.width,
                    time_expr: bucketing.time_expr.to_string(),
                },
            );
            Ok(oid)
        })?;
        if with_data {
            let refreshed =
                crate::sql::continuous_aggregates::refresh(&self.server, &self.database, made, (None, None), self.shard).await;
            if let Err(e) = refreshed {
                let _ = self.drop_continuous_aggregate_table(made).await;
                return Err(e);
            }
        }
        Ok(StatementResult::Command("CREATE MATERIALIZED VIEW".into()))
    }

    /// `CREATE MATERIALIZED VIEW v AS query`: the table made as CREATE TABLE
    /// … AS makes it, the query registered, then filled unless WITH NO DATA.
    async fn create_plain_materialized_view(&mut self, cv: &ast::CreateView, with_data: bool) -> DbResult<StatementResult> {
        let (schema, name) = self.creation_target(&cv.name, "relation")?;
        if cv.if_not_exists && self.relation_exists(&schema, &name)? {
            self.notice(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists, skipping"));
            return Ok(StatementResult::Command("CREATE MATERIALIZED VIEW".into()));
        }
        let oid = self.create_view_table(cv, &schema, &name).await?;
        self.server.catalog.update_database(&self.database, |db| {
            db.materialized_views
                .insert(oid, crate::catalog::MaterializedView { query: cv.query.to_string(), populated: false });
            Ok(())
        })?;
        if with_data {
            if let Err(e) = self.refresh_materialized_view_rows(oid, true).await {
                if self.txn == TxnState::Idle {
                    let _ = self.drop_continuous_aggregate_table(oid).await;
                }
                return Err(e);
            }
        }
        Ok(StatementResult::Command("CREATE MATERIALIZED VIEW".into()))
    }

    /// The table of a materialized view, made with the query's columns (no rows); its OID.
    async fn create_view_table(&mut self, cv: &ast::CreateView, schema: &str, name: &str) -> DbResult<u32> {
        let columns = match cv.columns.is_empty() {
            true => String::new(),
            false => format!("({})", cv.columns.iter().map(|c| quote_ident(&ident_name(&c.name))).collect::<Vec<_>>().join(", ")),
        };
        let create = format!("CREATE TABLE {}.{} {columns} AS {} WITH NO DATA", quote_ident(schema), quote_ident(name), cv.query);
        let Some(Statement::CreateTable(ct)) = crate::sql::parse(&create)?.pop() else {
            return Err(DbError::internal("a materialized view's table did not parse"));
        };
        let Some(query) = ct.query.clone() else {
            return Err(DbError::internal("a materialized view's table has no query"));
        };
        self.create_table_as(&ct, &query, Vec::new(), &[]).await?;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        db.schemas
            .get(schema)
            .and_then(|s| s.tables.get(name))
            .map(|t| t.oid)
            .ok_or_else(|| DbError::internal("a materialized view's table vanished"))
    }

    /// Replaces a materialized view's rows with its query's (or, WITH NO
    /// DATA, with none, leaving it unpopulated), in the session's transaction
    /// (one of its own when none is open).
    async fn refresh_materialized_view_rows(&mut self, oid: u32, with_data: bool) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let (Some(view), Some(table)) = (db.materialized_views.get(&oid), db.table_by_oid(oid)) else {
            return Err(DbError::internal("a materialized view vanished"));
        };
        let target = format!("{}.{}", quote_ident(&table.schema), quote_ident(&table.name));
        let mut statements = vec![format!("DELETE FROM {target}")];
        if with_data {
            statements.push(format!("INSERT INTO {target} {}", view.query));
        }
        let was_populated = view.populated;
        let set_populated = |session: &Session, populated: bool| {
            session.server.catalog.update_database(&session.database, |db| {
                if let Some(v) = db.materialized_views.get_mut(&oid) {
                    v.populated = populated;
                }
                Ok(())
            })
        };
        // Populated first: the refresh's own statements read the table.
        set_populated(self, true)?;
        if let Err(e) = self.run_generated(&statements, &[], &[]).await {
            let _ = set_populated(self, was_populated);
            return Err(e);
        }
        set_populated(self, with_data)
    }

    /// `REFRESH MATERIALIZED VIEW [CONCURRENTLY] v [WITH [NO] DATA]`.
    pub(super) async fn refresh_materialized_view(&mut self, r: &ast::RefreshMaterializedView) -> DbResult<StatementResult> {
        let table = self.lookup_table(&r.name)?;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        if db.timescale.continuous.contains_key(&table.oid) {
            return Err(DbError::new(sqlstate::FEATURE_NOT_SUPPORTED, "operation not supported on continuous aggregate")
                .with_hint("Use the refresh_continuous_aggregate procedure to refresh a continuous aggregate."));
        }
        let Some(view) = db.materialized_views.get(&table.oid) else {
            return Err(DbError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{}\" is not a materialized view", table.name)));
        };
        let with_data = r.with_data.unwrap_or(true);
        if r.concurrently {
            if !with_data {
                return Err(DbError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "REFRESH options CONCURRENTLY and WITH NO DATA cannot be used together",
                ));
            }
            if !view.populated {
                return Err(DbError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "CONCURRENTLY cannot be used when the materialized view is not populated",
                ));
            }
            let unique = db.schemas.get(&table.schema).is_some_and(|s| {
                s.indexes.values().any(|i| i.table == table.name && i.unique && i.predicate.is_none())
            });
            if !unique {
                return Err(DbError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("cannot refresh materialized view \"{}.{}\" concurrently", table.schema, table.name),
                )
                .with_hint("Create a unique index with no WHERE clause on one or more columns of the materialized view."));
            }
        }
        self.refresh_materialized_view_rows(table.oid, with_data).await?;
        Ok(StatementResult::Command("REFRESH MATERIALIZED VIEW".into()))
    }

    /// Drops a continuous aggregate's table (its entry goes with it, pruned).
    async fn drop_continuous_aggregate_table(&mut self, oid: u32) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let Some(t) = catalog.database(&self.database)?.table_by_oid(oid) else { return Ok(()) };
        let name = ast::ObjectName::from(vec![ast::Ident::with_quote('"', &t.schema), ast::Ident::with_quote('"', &t.name)]);
        Box::pin(self.drop(&ast::ObjectType::Table, true, &[name], false)).await?;
        Ok(())
    }

    /// Before `table` is dropped: its continuous aggregates go too with
    /// CASCADE (a NOTICE each), else 2BP01, as PostgreSQL guards dependent objects.
    pub(super) async fn drop_dependent_continuous_aggregates(&mut self, table: &TableDef, cascade: bool) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let dependents: Vec<(u32, String)> = db
            .timescale
            .continuous
            .iter()
            .filter(|(_, c)| c.source == table.oid)
            .filter_map(|(oid, _)| Some((*oid, db.table_by_oid(*oid)?.name.clone())))
            .collect();
        let Some((_, first)) = dependents.first() else { return Ok(()) };
        if !cascade {
            return Err(DbError::new(
                "2BP01",
                format!("cannot drop table {} because other objects depend on it", table.name),
            )
            .with_detail(format!("materialized view {first} depends on table {}", table.name))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        for (oid, name) in dependents {
            self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("drop cascades to materialized view {name}"));
            self.drop_continuous_aggregate_table(oid).await?;
        }
        Ok(())
    }

    /// `DROP MATERIALIZED VIEW [IF EXISTS] v, … [CASCADE]`: continuous aggregates only.
    pub(super) async fn drop_materialized_views(
        &mut self,
        if_exists: bool,
        names: &[ast::ObjectName],
    ) -> DbResult<StatementResult> {
        for n in names {
            let shown = object_name_parts(n).join(".");
            let table = match self.lookup_table(n) {
                Ok(t) => t,
                Err(e) if e.code == sqlstate::UNDEFINED_TABLE => {
                    if if_exists {
                        self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("materialized view \"{shown}\" does not exist, skipping"));
                        continue;
                    }
                    return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("materialized view \"{shown}\" does not exist")));
                }
                Err(e) => return Err(e),
            };
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            if !db.timescale.continuous.contains_key(&table.oid) && !db.materialized_views.contains_key(&table.oid) {
                return Err(DbError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{shown}\" is not a materialized view")));
            }
            self.drop_continuous_aggregate_table(table.oid).await?;
        }
        Ok(StatementResult::Command("DROP MATERIALIZED VIEW".into()))
    }

    /// `CALL refresh_continuous_aggregate(v, window_start, window_end [, force])`.
    pub(super) async fn call_refresh_continuous_aggregate(&mut self, call: &ast::Function) -> DbResult<StatementResult> {
        if self.txn != TxnState::Idle {
            return Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "refresh_continuous_aggregate() cannot run inside a transaction block",
            ));
        }
        let args: Vec<&ast::Expr> = match &call.args {
            ast::FunctionArguments::List(l) => l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))
                    | ast::FunctionArg::Named { arg: ast::FunctionArgExpr::Expr(e), .. }
                    | ast::FunctionArg::ExprNamed { arg: ast::FunctionArgExpr::Expr(e), .. } => Ok(e),
                    other => Err(DbError::unsupported(format!("refresh_continuous_aggregate() argument {other}"))),
                })
                .collect::<DbResult<_>>()?,
            _ => Vec::new(),
        };
        if !(3..=4).contains(&args.len()) {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                "procedure refresh_continuous_aggregate() takes a continuous aggregate, window_start and window_end",
            ));
        }
        // The arguments evaluated as a query would: a name, two times (NULL: unbounded).
        let select = format!("SELECT ({})::regclass::oid, ({})::timestamptz, ({})::timestamptz", args[0], args[1], args[2]);
        let Some(Statement::Query(q)) = crate::sql::parse(&select)?.pop() else {
            return Err(DbError::internal("refresh_continuous_aggregate()'s arguments did not parse"));
        };
        let (plan, eval) = self.plan_query(&q, &[], &[]).await?;
        let ctx = self.query_context(Vec::new(), eval);
        let batches = crate::exec::operators::collect(&plan, &ctx).await?;
        let row = batches
            .iter()
            .find(|b| b.len > 0)
            .map(|b| (0..3).map(|c| b.columns[c].datum(0)).collect::<Vec<_>>())
            .ok_or_else(|| DbError::internal("refresh_continuous_aggregate()'s arguments gave no row"))?;
        let oid = match row[0] {
            Datum::Int64(o) => o as u32,
            Datum::Int32(o) => o as u32,
            _ => return Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid continuous aggregate")),
        };
        let time = |d: &Datum| match d {
            Datum::Int64(t) => Some(*t),
            _ => None,
        };
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        if !db.timescale.continuous.contains_key(&oid) {
            let name = db.table_by_oid(oid).map_or_else(|| oid.to_string(), |t| t.name.clone());
            return Err(DbError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("relation \"{name}\" is not a continuous aggregate"),
            ));
        }
        crate::sql::continuous_aggregates::refresh(&self.server, &self.database, oid, (time(&row[1]), time(&row[2])), self.shard)
            .await?;
        Ok(StatementResult::Command("CALL".into()))
    }
}
