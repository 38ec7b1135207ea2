//! DELETE and UPDATE: a table's rows rewritten.
//!
//! The statement computes the table's new rows with a query over the
//! current ones, so WHERE, SET and RETURNING take every expression a SELECT
//! takes (correlated subqueries included) with the same semantics, then
//! replaces the table's rows on every shard in one transaction: a Truncate
//! record and the new rows on each shard, committed by one Commit record, so
//! recovery applies all of it or none. Writers of rows wait while it runs
//! (`Server::rewrites`): no acknowledged row can land between the read and
//! the rewrite and be lost to it.
//!
//! A statement that matches no row writes nothing. One that matches costs a
//! pass over the whole table (fine for the tables DELETE and UPDATE are
//! used on; bulk removal of old time ranges is `drop_chunks`).
//!
//! Inside a transaction block the new rows become the block's own view of
//! the table (`pending` + `txn_replaced`: its scans read them instead of the
//! shards) and replace the table at COMMIT; ROLLBACK drops them. The block
//! holds `Server::rewrites` from its first DELETE/UPDATE to its end, so other
//! writers wait for it (PostgreSQL would make only writers of the same rows wait).
//! Must not: write to the shards before COMMIT inside a block.

use super::*;
use crate::runtime::PreparedOp;

/// A column name as a quoted SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `true` when `WHERE p` holds for a row (NULL counts as false).
fn hit_sql(selection: Option<&ast::Expr>) -> String {
    match selection {
        Some(p) => format!("(CASE WHEN ({p}) THEN true ELSE false END)"),
        None => "true".into(),
    }
}

/// The type an assigned value is cast to: the column's, except that
/// length-limited strings are cast to their unlimited type so that a value
/// too long is an error (22001), as an assignment in PostgreSQL is, not cut.
fn assignment_type(t: DataType) -> String {
    match t {
        DataType::Varchar(Some(_)) => DataType::Varchar(None).name(),
        DataType::Bpchar(Some(_)) => "text".into(),
        other => other.name(),
    }
}

/// The one table a DELETE or UPDATE names, with its SQL text (alias kept).
fn single_table(t: &ast::TableWithJoins, verb: &str) -> DbResult<(ast::ObjectName, String)> {
    match &t.relation {
        ast::TableFactor::Table { name, .. } if t.joins.is_empty() => {
            Ok((name.clone(), t.to_string()))
        }
        _ => Err(DbError::unsupported(format!(
            "{verb} of anything but one table is not supported yet"
        ))),
    }
}

/// The name RETURNING refers to the table by: its alias, else its name.
fn table_ref_name(t: &ast::TableWithJoins, table: &TableDef) -> String {
    match &t.relation {
        ast::TableFactor::Table {
            alias: Some(alias), ..
        } => quoted(&alias.name.value),
        _ => quoted(&table.name),
    }
}

/// The FROM items of a DELETE's USING or an UPDATE's FROM, as SQL, and the
/// statement's WHERE: the correlated `EXISTS (SELECT 1 FROM items WHERE p)`
/// that says whether a target row has a partner row.
fn partner_exists(items: &[ast::TableWithJoins], selection: Option<&ast::Expr>) -> (String, String) {
    let from = items.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
    let filter = selection.map(|p| format!(" WHERE {p}")).unwrap_or_default();
    let exists = format!("EXISTS (SELECT 1 FROM {from}{filter})");
    (format!("{from}{filter}"), exists)
}

/// `DELETE FROM t USING u, … WHERE p` as `DELETE FROM t WHERE EXISTS
/// (SELECT 1 FROM u, … WHERE p)`: a row goes when some partner row matches.
fn delete_using_as_exists(del: &ast::Delete) -> DbResult<std::borrow::Cow<'_, ast::Delete>> {
    let Some(using) = del.using.as_deref().filter(|u| !u.is_empty()) else {
        return Ok(std::borrow::Cow::Borrowed(del));
    };
    let (_, exists) = partner_exists(using, del.selection.as_ref());
    let mut out = del.clone();
    out.using = None;
    out.selection = Some(crate::sql::bind::sql_function::parse_expr(&exists)?);
    Ok(std::borrow::Cow::Owned(out))
}

/// `UPDATE t SET c = v, … FROM u, … WHERE p` as `UPDATE t SET c = (SELECT v
/// FROM u, … WHERE p LIMIT 1), … WHERE EXISTS (SELECT 1 FROM u, … WHERE p)`:
/// a row with partner rows takes its values from the first one (PostgreSQL
/// takes one, "not readily predictable" which, when several match).
fn update_from_as_subqueries(up: &ast::Update) -> DbResult<std::borrow::Cow<'_, ast::Update>> {
    let items = match &up.from {
        Some(ast::UpdateTableFromKind::AfterSet(items)) if !items.is_empty() => items,
        Some(ast::UpdateTableFromKind::BeforeSet(_)) => {
            return Err(DbError::syntax("syntax error at or near \"FROM\" (UPDATE FROM … SET)"))
        }
        _ => return Ok(std::borrow::Cow::Borrowed(up)),
    };
    let (from_where, exists) = partner_exists(items, up.selection.as_ref());
    let mut out = up.clone();
    out.from = None;
    for a in &mut out.assignments {
        a.value = crate::sql::bind::sql_function::parse_expr(&format!("(SELECT {} FROM {from_where} LIMIT 1)", a.value))?;
    }
    out.selection = Some(crate::sql::bind::sql_function::parse_expr(&exists)?);
    Ok(std::borrow::Cow::Owned(out))
}

fn delete_target(del: &ast::Delete) -> DbResult<&ast::TableWithJoins> {
    let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) = &del.from;
    match (from.as_slice(), &del.using, del.tables.is_empty()) {
        ([t], None, true) => Ok(t),
        _ => Err(DbError::unsupported(
            "DELETE with USING or of several tables is not supported yet",
        )),
    }
}

/// An UPDATE's new value expression per column (`None`: unchanged).
fn update_values(up: &ast::Update, table: &TableDef) -> DbResult<Vec<Option<String>>> {
    if up.from.is_some() {
        return Err(DbError::internal("UPDATE … FROM not rewritten"));
    }
    let mut values = vec![None; table.columns.len()];
    for a in &up.assignments {
        let ast::AssignmentTarget::ColumnName(name) = &a.target else {
            return Err(DbError::unsupported(
                "UPDATE of a column tuple is not supported yet",
            ));
        };
        let parts = object_name_parts(name);
        let col = parts.last().cloned().unwrap_or_default();
        let Some(i) = table.columns.iter().position(|c| c.name == col) else {
            return Err(DbError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column \"{col}\" of relation \"{}\" does not exist",
                    table.name
                ),
            ));
        };
        if values[i].is_some() {
            return Err(DbError::new(
                sqlstate::SYNTAX_ERROR,
                format!("multiple assignments to same column \"{col}\""),
            ));
        }
        values[i] = Some(a.value.to_string());
    }
    Ok(values)
}

/// The new value of every column of `table` (`values` from
/// `update_values`): assigned ones cast to the column's type, taken where
/// `hit` holds (`hit` "true": everywhere).
fn updated_columns(table: &TableDef, values: &[Option<String>], hit: &str) -> Vec<String> {
    table
        .columns
        .iter()
        .zip(values)
        .map(|(c, v)| match v {
            Some(v) => {
                let cast = format!("CAST(({v}) AS {})", assignment_type(c.data_type));
                if hit == "true" {
                    cast
                } else {
                    format!("CASE WHEN {hit} THEN {cast} ELSE {} END", quoted(&c.name))
                }
            }
            None => quoted(&c.name),
        })
        .collect()
}

impl Session {
    /// `DELETE FROM t [AS a] [WHERE p] [RETURNING …]`.
    pub(super) async fn delete(
        &mut self,
        del: &ast::Delete,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        let del = &*delete_using_as_exists(del)?;
        let target = delete_target(del)?;
        let (name, rel) = single_table(target, "DELETE")?;
        // The lock before the table's name is looked up: a rewrite (ALTER
        // TABLE) that held it meanwhile may have given the name a new table.
        let _alone = self.rewrite_lock().await;
        let table = self.lookup_table(&name)?;
        let hit = hit_sql(del.selection.as_ref());
        let (_, batches) = self
            .rows_query("DELETE", &format!("SELECT *, {hit} FROM {rel}"), &params, param_types)
            .await?;
        let (kept, deleted) = split_by_last_column(batches, false);
        let returned = match self.returning_sql(&Statement::Delete(del.clone()))? {
            Some(sql) => Some(self.internal_query(&sql, &params, param_types).await?),
            None => None,
        };
        if deleted > 0 {
            self.rewrite_rows(&table, kept).await?;
        }
        Ok(command_or_rows(format!("DELETE {deleted}"), returned))
    }

    /// `UPDATE t [AS a] SET c = v, … [WHERE p] [RETURNING …]`.
    pub(super) async fn update(
        &mut self,
        up: &ast::Update,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        let up = &*update_from_as_subqueries(up)?;
        let (name, rel) = single_table(&up.table, "UPDATE")?;
        // As DELETE: the lock before the lookup.
        let _alone = self.rewrite_lock().await;
        let table = self.lookup_table(&name)?;
        let values = update_values(up, &table)?;
        let hit = hit_sql(up.selection.as_ref());
        let columns = updated_columns(&table, &values, &hit).join(", ");
        let (_, batches) = self
            .rows_query("UPDATE", &format!("SELECT {columns}, {hit} FROM {rel}"), &params, param_types)
            .await?;
        // The rows the UPDATE changes, per batch: what the constraints check
        // (a NOT VALID CHECK does not hold for the rows left as they were).
        let changed: Vec<Vec<u32>> = batches
            .iter()
            .filter_map(|b| {
                let flag = b.columns.last()?;
                Some((0..b.len).filter(|&i| flag.datum(i) == Datum::Bool(true)).map(|i| i as u32).collect())
            })
            .collect();
        let (rows, updated) = split_by_last_column(batches, true);
        let returned = match self.returning_sql(&Statement::Update(up.clone()))? {
            Some(sql) => Some(self.internal_query(&sql, &params, param_types).await?),
            None => None,
        };
        if updated > 0 {
            let rows = rows
                .into_iter()
                .map(|b| {
                    let cols = b.columns.iter().map(|c| (**c).clone()).collect();
                    Ok(Batch::from_columns(self.apply_numeric_typmods(&table, cols)?))
                })
                .collect::<DbResult<Vec<_>>>()?;
            let changed_rows: Vec<Batch> = rows.iter().zip(&changed).map(|(b, at)| b.take(at)).collect();
            self.check_constraints(&table, &changed_rows)?;
            self.check_rows_unique(&table, &rows)?;
            self.rewrite_rows(&table, rows).await?;
        }
        Ok(command_or_rows(format!("UPDATE {updated}"), returned))
    }

    /// The query giving a DELETE's or UPDATE's RETURNING rows (the deleted
    /// rows; the updated rows' new values), or `None` without RETURNING.
    pub(super) fn returning_sql(&self, stmt: &Statement) -> DbResult<Option<String>> {
        match stmt {
            Statement::Delete(del) => {
                let del = &*delete_using_as_exists(del)?;
                let Some(items) = &del.returning else {
                    return Ok(None);
                };
                let (_, rel) = single_table(delete_target(del)?, "DELETE")?;
                let items = items.iter().map(|i| i.to_string()).collect::<Vec<_>>();
                let filter = match &del.selection {
                    Some(p) => format!(" WHERE {p}"),
                    None => String::new(),
                };
                Ok(Some(format!("SELECT {} FROM {rel}{filter}", items.join(", "))))
            }
            Statement::Update(up) => {
                let up = &*update_from_as_subqueries(up)?;
                let Some(items) = &up.returning else {
                    return Ok(None);
                };
                let (name, rel) = single_table(&up.table, "UPDATE")?;
                let table = self.lookup_table(&name)?;
                let values = update_values(up, &table)?;
                let columns: Vec<String> = updated_columns(&table, &values, "true")
                    .into_iter()
                    .zip(&table.columns)
                    .map(|(e, c)| format!("{e} AS {}", quoted(&c.name)))
                    .collect();
                let filter = match &up.selection {
                    Some(p) => format!(" WHERE {p}"),
                    None => String::new(),
                };
                let items = items.iter().map(|i| i.to_string()).collect::<Vec<_>>();
                Ok(Some(format!(
                    "SELECT {} FROM (SELECT {} FROM {rel}{filter}) AS {}",
                    items.join(", "),
                    columns.join(", "),
                    table_ref_name(&up.table, &table)
                )))
            }
            _ => Ok(None),
        }
    }

    /// Takes `Server::rewrites` alone: for this statement (autocommit, the
    /// guard returned), or until the block ends (kept by the session).
    pub(super) async fn rewrite_lock(&mut self) -> Option<tokio::sync::OwnedRwLockWriteGuard<()>> {
        let lock = self.server.rewrites.clone();
        if self.txn == TxnState::Idle {
            return Some(lock.write_owned().await);
        }
        if self.txn_rewrites.is_none() {
            self.txn_rewrites = Some(lock.write_owned().await);
        }
        None
    }

    /// The table's new rows: swapped in now (autocommit), or, in a block,
    /// kept as the transaction's view of the table until COMMIT.
    pub(super) async fn rewrite_rows(&mut self, table: &TableDef, rows: Vec<Batch>) -> DbResult<()> {
        if self.txn == TxnState::Idle {
            return self.replace_rows(table, rows).await;
        }
        self.pending.borrow_mut().insert(table.oid, rows);
        self.txn_replaced.borrow_mut().insert(table.oid);
        Ok(())
    }

    /// The query that computes a DELETE's or UPDATE's rows: exactly one row
    /// per table row, so aggregates, window and set-returning calls (which
    /// would merge or multiply rows) are refused as PostgreSQL refuses them.
    async fn rows_query(
        &self,
        verb: &str,
        sql: &str,
        params: &[Datum],
        param_types: &[DataType],
    ) -> DbResult<(Vec<Field>, Vec<Batch>)> {
        // The generated query has no GROUP BY: a grouping error comes from an aggregate.
        let (plan, eval_ctx) = self.bind_internal(sql, param_types).map_err(|e| match e.code {
            sqlstate::GROUPING_ERROR => {
                DbError::new(sqlstate::GROUPING_ERROR, format!("aggregate functions are not allowed in {verb}"))
            }
            _ => e,
        })?;
        let mut node = &plan;
        loop {
            match node {
                Plan::Project { input, .. } | Plan::Filter { input, .. } => node = input,
                Plan::Scan { .. } => break,
                Plan::Aggregate { .. } => {
                    return Err(DbError::new(sqlstate::GROUPING_ERROR, format!("aggregate functions are not allowed in {verb}")))
                }
                Plan::Window { .. } => {
                    return Err(DbError::new(sqlstate::WINDOWING_ERROR, format!("window functions are not allowed in {verb}")))
                }
                _ => {
                    return Err(DbError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("set-returning functions are not allowed in {verb}"),
                    ))
                }
            }
        }
        let fields = plan.fields().to_vec();
        let ctx = self.query_context(params.to_vec(), eval_ctx);
        Ok((fields, operators::collect(&plan, &ctx).await?))
    }

    /// Binds a query this session generated (over the user's expressions).
    fn bind_internal(&self, sql: &str, param_types: &[DataType]) -> DbResult<(Plan, crate::exec::EvalContext)> {
        let stmts = crate::sql::parse(sql)?;
        let Some(Statement::Query(q)) = stmts.first() else {
            return Err(DbError::internal("generated statement is not a query"));
        };
        let eval_ctx = self.eval_context();
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let mut binder = self.binder(&catalog, db, &eval_ctx, param_types.to_vec());
        let plan = binder.bind_query(q)?;
        Ok((plan, eval_ctx))
    }

    /// Runs a query this session generated (over the user's expressions).
    pub(super) async fn internal_query(
        &self,
        sql: &str,
        params: &[Datum],
        param_types: &[DataType],
    ) -> DbResult<(Vec<Field>, Vec<Batch>)> {
        let (plan, eval_ctx) = self.bind_internal(sql, param_types)?;
        let fields = plan.fields().to_vec();
        let ctx = self.query_context(params.to_vec(), eval_ctx);
        Ok((fields, operators::collect(&plan, &ctx).await?))
    }

    /// Replaces `table`'s rows with `rows`, on every shard, atomically.
    pub(super) async fn replace_rows(&self, table: &TableDef, rows: Vec<Batch>) -> DbResult<()> {
        let mut write = self.begin_write();
        let result = self.prepare_replacement(&mut write, table, rows).await;
        self.settle_write(write, result).await
    }

    /// `table`'s rows replaced by `rows` as part of `write`: its Truncate
    /// logged on every shard, then the rows.
    pub(super) async fn prepare_replacement(&self, write: &mut ShardWrite, table: &TableDef, rows: Vec<Batch>) -> DbResult<()> {
        // The key sets are rebuilt from the new rows at the next write.
        self.server.forget_derived_write_state(table.oid);
        self.prepare_truncate(write, table.oid).await?;
        self.prepare_rows(write, table.oid, &table.column_types(), rows).await
    }

    /// Logs the table's Truncate on every shard as part of `write` (the
    /// table's rows are replaced by the rows the write prepares after it).
    pub(super) async fn prepare_truncate(&self, write: &mut ShardWrite, table: TableId) -> DbResult<()> {
        let (txn, synchronous) = (write.txn, write.synchronous);
        let mut truncates = Vec::new();
        for (i, shard) in self.server.shards.iter().enumerate() {
            if !write.participants.contains(&i) {
                write.participants.push(i);
            }
            truncates.push(shard.run_local(move |ctx| log_truncate(ctx, txn, table, synchronous)));
        }
        let mut result = Ok(());
        for t in truncates {
            if let Err(e) = t.await.and_then(|r| r) {
                result = Err(e);
            }
        }
        result
    }
}

/// A shard's part of a rewrite: log the table's Truncate (committed later
/// with the new rows) and hold it prepared.
async fn log_truncate(
    ctx: Rc<crate::runtime::ShardContext>,
    txn: u64,
    table: TableId,
    synchronous: bool,
) -> DbResult<()> {
    let wal = ctx.wal()?;
    ctx.begin_in_flight(txn, &wal);
    let mut payload = txn.to_le_bytes().to_vec();
    payload.extend_from_slice(&table.to_le_bytes());
    let rx = wal.append(RecordType::Truncate, 0, &payload).await;
    if synchronous {
        wait_durable(rx).await?;
    }
    ctx.prepared
        .borrow_mut()
        .entry(txn)
        .or_default()
        .push(PreparedOp::Truncate(table));
    Ok(())
}

/// Splits query results whose last column is a boolean "hit" flag: returns
/// the rows to keep (all rows when `keep_hits`, else those not hit), without
/// the flag, and the number of hits.
fn split_by_last_column(batches: Vec<Batch>, keep_hits: bool) -> (Vec<Batch>, usize) {
    let mut hits = 0;
    let mut out = Vec::with_capacity(batches.len());
    for b in batches {
        let Some((flag, cols)) = b.columns.split_last() else {
            continue;
        };
        let keep: Vec<u32> = (0..b.len)
            .filter(|&i| {
                let hit = flag.datum(i) == Datum::Bool(true);
                hits += usize::from(hit);
                keep_hits || !hit
            })
            .map(|i| i as u32)
            .collect();
        let rest = Batch::new(cols.to_vec(), b.len);
        out.push(if keep.len() == b.len { rest } else { rest.take(&keep) });
    }
    (out, hits)
}

/// A command tag, or RETURNING rows with it.
fn command_or_rows(tag: String, returned: Option<(Vec<Field>, Vec<Batch>)>) -> StatementResult {
    match returned {
        Some((fields, batches)) => StatementResult::Batches {
            fields,
            batches,
            tag,
        },
        None => StatementResult::Command(tag),
    }
}
