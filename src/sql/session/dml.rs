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
//! A statement that matches no row writes nothing. On a table with a time
//! column (`RewriteScope::Partitions`), a first query finds the days of
//! the rows it hits, and only the time partitions (days) holding them are
//! rewritten: a `DropRanges` record and those partitions' new rows, so the
//! cost follows the partitions touched, not the table. Otherwise (no time
//! column, a hit row with a NULL time, foreign keys referencing the table,
//! a volatile WHERE, USING/FROM, in a block a table with unique keys) the
//! table is rewritten whole. An UPDATE of partitions that assigns a unique key's column checks
//! the new keys against the other partitions' keys (key columns read).
//!
//! Inside a transaction block the new rows become the block's own view of
//! the table (`pending` + `txn_replaced`: its scans read them instead of the
//! shards) and replace the table at COMMIT; ROLLBACK drops them. Days
//! rewritten in a block (a table without unique keys) are the block's the
//! same way: `pending` holds its rows of them and `txn_dropped_ranges` the
//! ranges, which its scans read from `pending` only, and COMMIT logs a
//! `DropRanges` record before the rows. The block
//! holds `Server::rewrites` from its first DELETE/UPDATE to its end, so other
//! writers wait for it (PostgreSQL would make only writers of the same rows wait).
//! Must not: write to the shards before COMMIT inside a block.

use super::*;
use super::foreign_keys::KeyRemoval;
use crate::runtime::PreparedOp;
use crate::storage::flush::PARTITION_NS;

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

/// The other FROM items of an `UPDATE … FROM` or a `DELETE … USING` (None: none).
fn partner_items_of_update(up: &ast::Update) -> DbResult<Option<&[ast::TableWithJoins]>> {
    match &up.from {
        Some(ast::UpdateTableFromKind::AfterSet(items)) if !items.is_empty() => Ok(Some(items)),
        Some(ast::UpdateTableFromKind::BeforeSet(_)) => Err(DbError::syntax("syntax error at or near \"FROM\"")),
        _ => Ok(None),
    }
}

fn partner_items_of_delete(del: &ast::Delete) -> Option<&[ast::TableWithJoins]> {
    del.using.as_deref().filter(|u| !u.is_empty())
}

/// The hidden column numbering the target's rows in a partner join.
const ROW_NUMBER: &str = "__brewric_row";

/// The FROM clause and row filter of an `UPDATE t … FROM items WHERE p` or a
/// `DELETE FROM t USING items WHERE p`: the target, its rows numbered, joined
/// to the items on `p` (LEFT: every target row, its partner columns NULL when
/// none matches; else only rows with a partner), so that `SELECT DISTINCT ON
/// (alias.__brewric_row) … ORDER BY alias.__brewric_row` keeps one row per
/// target row and, with the `hit` expression, says whether it had a partner
/// (a constant column joined beside the items marks one). Returns (FROM …
/// ORDER BY tail, the DISTINCT ON prefix, hit).
fn partner_join(
    name: &ast::ObjectName,
    alias: &str,
    items: &[ast::TableWithJoins],
    selection: Option<&ast::Expr>,
    left: bool,
) -> (String, String, String) {
    let items = items
        .iter()
        .map(|t| if t.joins.is_empty() { t.to_string() } else { format!("({t})") })
        .collect::<Vec<_>>()
        .join(" CROSS JOIN ");
    let on = selection.map_or_else(|| "true".to_string(), |p| format!("({p})"));
    let join = if left { "LEFT JOIN" } else { "JOIN" };
    let from = format!(
        "FROM (SELECT row_number() OVER () AS {ROW_NUMBER}, * FROM {name}) AS {alias} \
         {join} ({items} CROSS JOIN (SELECT true AS __brewric_partner) AS __brewric_marker) ON {on} \
         ORDER BY {alias}.{ROW_NUMBER}"
    );
    let distinct = format!("DISTINCT ON ({alias}.{ROW_NUMBER})");
    (from, distinct, "(__brewric_marker.__brewric_partner IS NOT NULL)".into())
}

/// Aggregates and window functions in an UPDATE's values or a WHERE: refused,
/// as PostgreSQL refuses them, before any query is bound (a partner join's
/// query would take them; Describe binds the rows query too).
fn refuse_aggregates<'e>(verb: &str, exprs: impl IntoIterator<Item = &'e ast::Expr>) -> DbResult<()> {
    /// Finds an aggregate or window call outside subqueries (theirs are theirs).
    struct Finder {
        depth: usize,
    }
    impl ast::Visitor for Finder {
        type Break = &'static str;
        fn pre_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<Self::Break> {
            self.depth += 1;
            std::ops::ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<Self::Break> {
            self.depth -= 1;
            std::ops::ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> std::ops::ControlFlow<Self::Break> {
            match e {
                ast::Expr::Function(f) if self.depth == 0 && f.over.is_some() => {
                    std::ops::ControlFlow::Break(sqlstate::WINDOWING_ERROR)
                }
                ast::Expr::Function(f)
                    if self.depth == 0 && crate::sql::bind::is_aggregate_name(&f.name.to_string().to_lowercase()) =>
                {
                    std::ops::ControlFlow::Break(sqlstate::GROUPING_ERROR)
                }
                _ => std::ops::ControlFlow::Continue(()),
            }
        }
    }
    for e in exprs {
        if let std::ops::ControlFlow::Break(code) = ast::Visit::visit(e, &mut Finder { depth: 0 }) {
            let what = if code == sqlstate::WINDOWING_ERROR { "window" } else { "aggregate" };
            return Err(DbError::new(code, format!("{what} functions are not allowed in {verb}")));
        }
    }
    Ok(())
}

/// At most this many separate time ranges are rewritten by one statement;
/// more are joined across their narrowest gaps (each range is one query,
/// pruned by the zone maps).
const MAX_REWRITE_RANGES: usize = 8;

/// What a DELETE or UPDATE rewrites.
enum RewriteScope {
    /// Every row of the table.
    Table,
    /// The rows whose time (column `time`) lies in `ranges`: whole time
    /// partitions, [start, end) in nanoseconds (none: nothing is hit).
    Partitions { time: usize, ranges: Vec<(i64, i64)> },
}

/// Functions whose value may differ between two evaluations in one
/// statement: a WHERE holding one cannot be run twice (once to find the
/// partitions, once to rewrite them) with the same result.
const VOLATILE_FUNCTIONS: &[&str] =
    &["random", "nextval", "setval", "clock_timestamp", "timeofday", "gen_random_uuid", "uuid_generate_v4", "txid_current"];

fn calls_volatile_function(e: &ast::Expr) -> bool {
    use sqlparser::ast::Visit;
    struct Find;
    impl ast::Visitor for Find {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> std::ops::ControlFlow<()> {
            if let ast::Expr::Function(f) = e {
                let name = f.name.0.last().map(|p| p.to_string().trim_matches('"').to_ascii_lowercase());
                if name.is_some_and(|n| VOLATILE_FUNCTIONS.contains(&n.as_str())) {
                    return std::ops::ControlFlow::Break(());
                }
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    e.visit(&mut Find).is_break()
}

/// The partitions (numbers, sorted, distinct) as at most
/// `MAX_REWRITE_RANGES` ranges of nanoseconds, joined across the narrowest
/// gaps; `None` if a bound overflows.
pub(super) fn partition_ranges(partitions: &[i64]) -> Option<Vec<(i64, i64)>> {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &p in partitions {
        match runs.last_mut() {
            Some(last) if last.1 + 1 == p => last.1 = p,
            _ => runs.push((p, p)),
        }
    }
    while runs.len() > MAX_REWRITE_RANGES {
        let narrowest = (1..runs.len()).min_by_key(|&i| runs[i].0 - runs[i - 1].1)?;
        runs[narrowest - 1].1 = runs[narrowest].1;
        runs.remove(narrowest);
    }
    let ns = |p: i64| p.checked_mul(PARTITION_NS);
    runs.into_iter().map(|(a, b)| Some((ns(a)?, ns(b.checked_add(1)?)?))).collect()
}

/// `column >= start AND column < end` for a time range, with literal bounds.
fn range_condition(column: &str, t: DataType, (lo, hi): (i64, i64)) -> DbResult<String> {
    match (time_literal(t, lo), time_literal(t, hi)) {
        (Some(lo), Some(hi)) => Ok(format!("({column} >= {lo} AND {column} < {hi})")),
        _ => Err(DbError::internal("time range bound without a literal")),
    }
}

/// A time bound as a literal of the time column's type (zone maps prune on it).
fn time_literal(t: DataType, ns: i64) -> Option<String> {
    let mut text = Vec::new();
    match t {
        DataType::Int64 => return Some(ns.to_string()),
        DataType::Timestamp | DataType::TimestampTz => crate::types::text::format_timestamp(ns, &mut text),
        _ => return None,
    }
    let text = String::from_utf8(text).ok()?;
    Some(match t {
        DataType::TimestampTz => format!("'{text}+00'::timestamptz"),
        _ => format!("'{text}'::timestamp"),
    })
}

/// The query computing a DELETE's or UPDATE's rows: every table row, its
/// new values, and last whether the statement hits it.
pub(super) enum RowsSql {
    /// Over the table alone (`rows_query` checks its shape).
    Single(String),
    /// A partner join (`partner_join`): USING or FROM.
    Joined(String),
}

impl RowsSql {
    pub(super) fn sql(&self) -> &str {
        match self {
            RowsSql::Single(s) | RowsSql::Joined(s) => s,
        }
    }
}

/// A DELETE's rows query: the table's rows and whether each goes.
pub(super) fn delete_rows_sql(del: &ast::Delete, table: &TableDef) -> DbResult<RowsSql> {
    let target = delete_target(del)?;
    let (name, rel) = single_table(target, "DELETE")?;
    refuse_aggregates("DELETE", del.selection.iter())?;
    Ok(match partner_items_of_delete(del) {
        None => RowsSql::Single(format!("SELECT *, {} FROM {rel}", hit_sql(del.selection.as_ref()))),
        Some(items) => {
            let alias = table_ref_name(target, table);
            let (from, distinct, hit) = partner_join(&name, &alias, items, del.selection.as_ref(), true);
            let columns: Vec<String> = table.columns.iter().map(|c| format!("{alias}.{}", quoted(&c.name))).collect();
            RowsSql::Joined(format!("SELECT {distinct} {}, {hit} {from}", columns.join(", ")))
        }
    })
}

/// An UPDATE's rows query: each row as the UPDATE leaves it (then, with
/// `with_old`, as it was) and whether it changes.
pub(super) fn update_rows_sql(up: &ast::Update, table: &TableDef, values: &[Option<String>], with_old: bool) -> DbResult<RowsSql> {
    let (name, rel) = single_table(&up.table, "UPDATE")?;
    refuse_aggregates("UPDATE", up.selection.iter().chain(up.assignments.iter().map(|a| &a.value)))?;
    let old = |target: &str| {
        let unchanged = vec![None; table.columns.len()];
        match with_old {
            true => format!(", {}", updated_columns(table, &unchanged, "true", target).join(", ")),
            false => String::new(),
        }
    };
    Ok(match partner_items_of_update(up)? {
        None => {
            let hit = hit_sql(up.selection.as_ref());
            let columns = updated_columns(table, values, &hit, "").join(", ");
            RowsSql::Single(format!("SELECT {columns}{}, {hit} FROM {rel}", old("")))
        }
        Some(items) => {
            let alias = table_ref_name(&up.table, table);
            let (from, distinct, hit) = partner_join(&name, &alias, items, up.selection.as_ref(), true);
            let columns = updated_columns(table, values, &hit, &alias).join(", ");
            RowsSql::Joined(format!("SELECT {distinct} {columns}{}, {hit} {from}", old(&alias)))
        }
    })
}

fn delete_target(del: &ast::Delete) -> DbResult<&ast::TableWithJoins> {
    let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) = &del.from;
    match (from.as_slice(), del.tables.is_empty()) {
        ([t], true) => Ok(t),
        _ => Err(DbError::unsupported("DELETE of several tables is not supported yet")),
    }
}

/// An UPDATE's new value expression per column (`None`: unchanged).
fn update_values(up: &ast::Update, table: &TableDef) -> DbResult<Vec<Option<String>>> {
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
        // `SET c = DEFAULT`: the column's default (NULL without one).
        let is_default = matches!(&a.value, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"));
        values[i] = Some(match (is_default, &table.columns[i].default) {
            (true, Some(d)) => d.to_string(),
            (true, None) => "NULL".into(),
            (false, _) => a.value.to_string(),
        });
    }
    Ok(values)
}

/// The new value of every column of `table` (`values` from
/// `update_values`): assigned ones cast to the column's type, taken where
/// `hit` holds (`hit` "true": everywhere); the others read as `target.column`
/// (`target` empty: unqualified).
fn updated_columns(table: &TableDef, values: &[Option<String>], hit: &str, target: &str) -> Vec<String> {
    let qualified = |c: &str| if target.is_empty() { quoted(c) } else { format!("{target}.{}", quoted(c)) };
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
                    format!("CASE WHEN {hit} THEN {cast} ELSE {} END", qualified(&c.name))
                }
            }
            None => qualified(&c.name),
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
        let (name, rel) = single_table(delete_target(del)?, "DELETE")?;
        // The lock before the table's name is looked up: a rewrite (ALTER
        // TABLE) that held it meanwhile may have given the name a new table.
        let _alone = self.rewrite_lock().await;
        let table = self.lookup_table(&name)?;
        let rows_sql = delete_rows_sql(del, &table)?;
        let scope = self.rewrite_scope(&table, &rows_sql, &rel, del.selection.as_ref(), &params, param_types).await?;
        let batches = match rows_sql {
            RowsSql::Single(sql) => self.scoped_rows_query("DELETE", &sql, &table, &scope, &params, param_types).await?,
            RowsSql::Joined(sql) => self.internal_query(&sql, &params, param_types).await?.1,
        };
        // The rows before, for the foreign keys that reference the table (the
        // same query's rows: the table is not read twice).
        let old_rows = match self.is_referenced(&table)? {
            true => split_by_last_column(batches.clone(), true).0,
            false => Vec::new(),
        };
        let (kept, deleted) = split_by_last_column(batches, false);
        let returned = match self.returning_sql(&Statement::Delete(del.clone()))? {
            Some(sql) => Some(self.internal_query(&sql, &params, param_types).await?),
            None => None,
        };
        if deleted > 0 {
            if let RewriteScope::Partitions { time, ranges } = &scope {
                self.rewrite_partitions(&table, *time, ranges, kept).await?;
            } else {
                let rewrites = self.referential_actions(&table, kept, KeyRemoval::Delete, old_rows).await?;
                self.rewrite_tables(rewrites).await?;
            }
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
        let (name, rel) = single_table(&up.table, "UPDATE")?;
        // As DELETE: the lock before the lookup.
        let _alone = self.rewrite_lock().await;
        let table = self.lookup_table(&name)?;
        let values = update_values(up, &table)?;
        // The foreign keys that reference the table need each row's old key
        // beside its new one (ON UPDATE CASCADE: row for row): the query
        // gives the old row too, after the new.
        let with_old = self.is_referenced(&table)?;
        let rows_sql = update_rows_sql(up, &table, &values, with_old)?;
        let scope = self.rewrite_scope(&table, &rows_sql, &rel, up.selection.as_ref(), &params, param_types).await?;
        let batches = match rows_sql {
            RowsSql::Single(sql) => self.scoped_rows_query("UPDATE", &sql, &table, &scope, &params, param_types).await?,
            RowsSql::Joined(sql) => self.internal_query(&sql, &params, param_types).await?.1,
        };
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
        let (rows, old_rows) = if with_old {
            let n = table.columns.len();
            let split = |b: &Batch, range: std::ops::Range<usize>| Batch::new(b.columns[range].to_vec(), b.len);
            let old = rows.iter().map(|b| split(b, n..2 * n)).collect();
            (rows.iter().map(|b| split(b, 0..n)).collect(), old)
        } else {
            (rows, Vec::new())
        };
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
            let _referenced = self.check_foreign_keys(&table, &changed_rows).await?;
            match &scope {
                RewriteScope::Partitions { time, ranges } => {
                    self.check_partition_rows_unique(&table, &rel, &values, *time, ranges, &rows).await?;
                    self.rewrite_partitions(&table, *time, ranges, rows).await?;
                }
                RewriteScope::Table => {
                    self.check_rows_unique(&table, &rows)?;
                    let rewrites = self.referential_actions(&table, rows, KeyRemoval::Update, old_rows).await?;
                    self.rewrite_tables(rewrites).await?;
                }
            }
        }
        Ok(command_or_rows(format!("UPDATE {updated}"), returned))
    }

    /// The rows query of a DELETE or UPDATE (Describe binds it to learn the
    /// types of the parameters in its SET and WHERE).
    pub(super) fn rows_sql(&self, stmt: &Statement) -> DbResult<Option<RowsSql>> {
        match stmt {
            Statement::Delete(del) => {
                let (name, _) = single_table(delete_target(del)?, "DELETE")?;
                let table = self.lookup_table(&name)?;
                Ok(Some(delete_rows_sql(del, &table)?))
            }
            Statement::Update(up) => {
                let (name, _) = single_table(&up.table, "UPDATE")?;
                let table = self.lookup_table(&name)?;
                let values = update_values(up, &table)?;
                Ok(Some(update_rows_sql(up, &table, &values, false)?))
            }
            _ => Ok(None),
        }
    }

    /// The query giving a DELETE's or UPDATE's RETURNING rows (the deleted
    /// rows; the updated rows' new values), or `None` without RETURNING.
    pub(super) fn returning_sql(&self, stmt: &Statement) -> DbResult<Option<String>> {
        match stmt {
            Statement::Delete(del) => {
                let Some(items) = &del.returning else {
                    return Ok(None);
                };
                let target = delete_target(del)?;
                let (name, rel) = single_table(target, "DELETE")?;
                let items = items.iter().map(|i| i.to_string()).collect::<Vec<_>>();
                if let Some(partners) = partner_items_of_delete(del) {
                    let table = self.lookup_table(&name)?;
                    let alias = table_ref_name(target, &table);
                    let (from, distinct, _) = partner_join(&name, &alias, partners, del.selection.as_ref(), false);
                    let columns: Vec<String> =
                        table.columns.iter().map(|c| format!("{alias}.{0} AS {0}", quoted(&c.name))).collect();
                    return Ok(Some(format!(
                        "SELECT {} FROM (SELECT {distinct} {} {from}) AS {alias}",
                        items.join(", "),
                        columns.join(", ")
                    )));
                }
                let filter = match &del.selection {
                    Some(p) => format!(" WHERE {p}"),
                    None => String::new(),
                };
                Ok(Some(format!("SELECT {} FROM {rel}{filter}", items.join(", "))))
            }
            Statement::Update(up) => {
                let Some(items) = &up.returning else {
                    return Ok(None);
                };
                let (name, rel) = single_table(&up.table, "UPDATE")?;
                let table = self.lookup_table(&name)?;
                let values = update_values(up, &table)?;
                let partners = partner_items_of_update(up)?;
                let target = if partners.is_some() { table_ref_name(&up.table, &table) } else { String::new() };
                let columns: Vec<String> = updated_columns(&table, &values, "true", &target)
                    .into_iter()
                    .zip(&table.columns)
                    .map(|(e, c)| format!("{e} AS {}", quoted(&c.name)))
                    .collect();
                if let Some(partners) = partners {
                    let (from, distinct, _) = partner_join(&name, &target, partners, up.selection.as_ref(), false);
                    let items = items.iter().map(|i| i.to_string()).collect::<Vec<_>>();
                    return Ok(Some(format!(
                        "SELECT {} FROM (SELECT {distinct} {} {from}) AS {target}",
                        items.join(", "),
                        columns.join(", ")
                    )));
                }
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
        // Its days rewritten before are among the rows now.
        self.txn_dropped_ranges.borrow_mut().remove(&table.oid);
        Ok(())
    }

    /// What a DELETE or UPDATE with this WHERE rewrites (see the module
    /// doc). For `Partitions`, a first query reads the first and last time
    /// of the rows the WHERE hits, per day.
    async fn rewrite_scope(
        &self,
        table: &TableDef,
        rows_sql: &RowsSql,
        rel: &str,
        selection: Option<&ast::Expr>,
        params: &[Datum],
        param_types: &[DataType],
    ) -> DbResult<RewriteScope> {
        let Some(time) = crate::storage::flush::time_column(table) else {
            return Ok(RewriteScope::Table);
        };
        let Some(p) = selection else {
            return Ok(RewriteScope::Table);
        };
        let time_type = table.columns[time].data_type;
        // In a block: not over a table the block rewrote whole (its view is
        // all in `pending`), nor one with unique keys (a block's key checks
        // over its own rows need the table's rows private to it).
        let in_block = self.txn != TxnState::Idle;
        if (in_block && (self.txn_replaced.borrow().contains(&table.oid) || !self.table_unique_keys(table)?.is_empty()))
            || matches!(rows_sql, RowsSql::Joined(_))
            || time_literal(time_type, 0).is_none()
            || calls_volatile_function(p)
            || self.is_referenced(table)?
        {
            return Ok(RewriteScope::Table);
        }
        // The hit rows' days, one row per day (not a row per hit row, which
        // a DELETE of most of a large table would make large): grouped by
        // a day, each group's first and last time give its partitions.
        let name = quoted(&table.columns[time].name);
        let day = match time_type {
            DataType::TimestampTz => format!("date_trunc('day', {name} AT TIME ZONE 'UTC')"),
            DataType::Timestamp => format!("date_trunc('day', {name})"),
            _ => format!("{name} / {PARTITION_NS}"),
        };
        let sql = format!("SELECT min({name}), max({name}) FROM {rel} WHERE {p} GROUP BY {day}");
        let (_, days) = self.internal_query(&sql, params, param_types).await?;
        let mut partitions = Vec::new();
        for b in &days {
            for col in &b.columns {
                let crate::exec::vector::ColumnData::Int64(v) = &col.data else {
                    return Ok(RewriteScope::Table);
                };
                for (i, &ts) in v.iter().enumerate().take(b.len) {
                    if !col.is_valid(i) {
                        // A hit row with a NULL time lies in no partition.
                        return Ok(RewriteScope::Table);
                    }
                    partitions.push(ts.div_euclid(PARTITION_NS));
                }
            }
        }
        partitions.sort_unstable();
        partitions.dedup();
        let Some(ranges) = partition_ranges(&partitions) else {
            return Ok(RewriteScope::Table);
        };
        if !ranges.is_empty() && !self.ranges_droppable(table.oid, time, &ranges).await? {
            return Ok(RewriteScope::Table);
        }
        Ok(RewriteScope::Partitions { time, ranges })
    }

    /// An UPDATE of the time `ranges`: its rows (`rows`, the ranges' new
    /// rows) must keep every unique key it assigns a column of unique,
    /// among themselves and beside the keys of the table's other rows (read
    /// from the table, key columns only) and of open blocks. A key whose
    /// columns the UPDATE does not assign cannot repeat: not checked.
    async fn check_partition_rows_unique(
        &self,
        table: &TableDef,
        rel: &str,
        values: &[Option<String>],
        time: usize,
        ranges: &[(i64, i64)],
        rows: &[Batch],
    ) -> DbResult<()> {
        let time_type = table.columns[time].data_type;
        let name = quoted(&table.columns[time].name);
        let inside = ranges.iter().map(|&r| range_condition(&name, time_type, r)).collect::<DbResult<Vec<String>>>()?;
        if inside.is_empty() {
            return Err(DbError::internal("an UPDATE of no time ranges"));
        }
        let format = self.eval_context().format;
        for key in self.table_unique_keys(table)? {
            if key.columns.iter().all(|&c| values[c].is_none()) {
                continue;
            }
            let columns: Vec<String> = key.columns.iter().map(|&c| quoted(&table.columns[c].name)).collect();
            let sql = format!("SELECT {} FROM {rel} WHERE {name} IS NULL OR NOT ({})", columns.join(", "), inside.join(" OR "));
            let (_, others) = self.internal_query(&sql, &[], &[]).await?;
            let mut taken = self.keys_of_other_blocks(table, &key);
            let positions: Vec<usize> = (0..key.columns.len()).collect();
            for b in &others {
                taken.extend((0..b.len).filter_map(|r| crate::sql::unique::encoded_key(b, &positions, r)));
            }
            crate::sql::unique::check_no_duplicates_beside(&key, table, rows, &format, false, taken)?;
        }
        Ok(())
    }

    /// Whether every shard can drop `ranges` of the table (see `ShardStorage::ranges_droppable`).
    pub(super) async fn ranges_droppable(&self, table: TableId, time: usize, ranges: &[(i64, i64)]) -> DbResult<bool> {
        for shard in &self.server.shards {
            let ranges = ranges.to_vec();
            if !shard.run(move |ctx| ctx.storage.borrow().ranges_droppable(table, time, &ranges)).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A DELETE's or UPDATE's rows query over what `scope` rewrites: the
    /// whole table, or one query per time range.
    async fn scoped_rows_query(
        &self,
        verb: &str,
        sql: &str,
        table: &TableDef,
        scope: &RewriteScope,
        params: &[Datum],
        param_types: &[DataType],
    ) -> DbResult<Vec<Batch>> {
        let RewriteScope::Partitions { time, ranges } = scope else {
            return Ok(self.rows_query(verb, sql, params, param_types).await?.1);
        };
        let column = &table.columns[*time];
        let mut batches = Vec::new();
        for &range in ranges {
            let ranged = format!("{sql} WHERE {}", range_condition(&quoted(&column.name), column.data_type, range)?);
            batches.extend(self.rows_query(verb, &ranged, params, param_types).await?.1);
        }
        Ok(batches)
    }

    /// Replaces the rows of `table`'s time `ranges` with `rows`, on every
    /// shard, atomically: a `DropRanges` record, then the rows. In a block
    /// the rows become the block's rows of those ranges (its earlier rows
    /// there were among the statement's), written at COMMIT.
    async fn rewrite_partitions(&self, table: &TableDef, time: usize, ranges: &[(i64, i64)], rows: Vec<Batch>) -> DbResult<()> {
        if self.txn != TxnState::Idle {
            let inside = |ts: i64| ranges.iter().any(|&(lo, hi)| lo <= ts && ts < hi);
            let mut pending = self.pending.borrow_mut();
            let own = pending.entry(table.oid).or_default();
            let mut kept: Vec<Batch> = std::mem::take(own)
                .into_iter()
                .map(|b| {
                    let Some(col) = b.columns.get(time) else { return b };
                    let keep: Vec<u32> = (0..b.len)
                        .filter(|&i| match col.datum(i) {
                            Datum::Int64(ts) => !inside(ts),
                            _ => true,
                        })
                        .map(|i| i as u32)
                        .collect();
                    if keep.len() == b.len { b } else { b.take(&keep) }
                })
                .collect();
            kept.extend(rows);
            *own = kept;
            let mut dropped = self.txn_dropped_ranges.borrow_mut();
            let entry = dropped.entry(table.oid).or_insert_with(|| (time, Vec::new()));
            entry.1.extend_from_slice(ranges);
            return Ok(());
        }
        // No flush or compaction while the partitions are swapped: a row of
        // them frozen for a flush would come back in its segment.
        let _serial = crate::storage::checkpoint::hold_off_flushes(&self.server).await?;
        self.server.forget_derived_write_state(table.oid);
        let mut write = self.begin_write();
        let result = async {
            self.prepare_drop_ranges(&mut write, table.oid, time, ranges).await?;
            self.prepare_rows(&mut write, table.oid, &table.column_types(), rows).await
        }
        .await;
        self.settle_write(write, result).await
    }

    /// A table whose days the open block rewrote becomes wholly the
    /// block's (its view read into `pending`, rewritten whole at COMMIT),
    /// for the checks that need all of its rows private to the block: unique
    /// keys of an index made after the rewrite, a foreign key's referenced keys.
    pub(super) async fn make_block_rows_whole(&self, table: &TableDef) -> DbResult<()> {
        if !self.txn_dropped_ranges.borrow().contains_key(&table.oid) {
            return Ok(());
        }
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let rows = self.table_columns(table, &all).await?;
        self.txn_dropped_ranges.borrow_mut().remove(&table.oid);
        self.pending.borrow_mut().insert(table.oid, rows);
        self.txn_replaced.borrow_mut().insert(table.oid);
        Ok(())
    }

    /// Logs the removal of `table`'s rows in the time `ranges` on every
    /// shard as part of `write` (the rows the write prepares after it are
    /// their new rows). The caller holds the checkpoint lock until the write
    /// is settled (see `ShardStorage::drop_ranges`).
    pub(super) async fn prepare_drop_ranges(&self, write: &mut ShardWrite, table: TableId, time: usize, ranges: &[(i64, i64)]) -> DbResult<()> {
        let mut payload = table.to_le_bytes().to_vec();
        payload.extend_from_slice(&(time as u32).to_le_bytes());
        payload.extend_from_slice(&(ranges.len() as u32).to_le_bytes());
        for &(lo, hi) in ranges {
            payload.extend_from_slice(&lo.to_le_bytes());
            payload.extend_from_slice(&hi.to_le_bytes());
        }
        let op = PreparedOp::DropRanges(table, time, ranges.to_vec());
        self.prepare_removal(write, RecordType::DropRanges, &payload, op).await
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
        self.prepare_removal(write, RecordType::Truncate, &table.to_le_bytes(), PreparedOp::Truncate(table)).await
    }

    /// Logs a removal of rows (`record` with `payload` after the txn id) on
    /// every shard as part of `write`, each holding `op` prepared.
    async fn prepare_removal(&self, write: &mut ShardWrite, record: RecordType, payload: &[u8], op: PreparedOp) -> DbResult<()> {
        let (txn, synchronous) = (write.txn, write.synchronous);
        let mut removals = Vec::new();
        for (i, shard) in self.server.shards.iter().enumerate() {
            if !write.participants.contains(&i) {
                write.participants.push(i);
            }
            let (payload, op) = (payload.to_vec(), op.clone());
            removals.push(shard.run_local(move |ctx| log_removal(ctx, txn, record, payload, op, synchronous)));
        }
        let mut result = Ok(());
        for r in removals {
            if let Err(e) = r.await.and_then(|r| r) {
                result = Err(e);
            }
        }
        result
    }
}

/// A shard's part of a rewrite: log the removal (committed later with the
/// new rows) and hold it prepared.
async fn log_removal(
    ctx: Rc<crate::runtime::ShardContext>,
    txn: u64,
    record: RecordType,
    payload: Vec<u8>,
    op: PreparedOp,
    synchronous: bool,
) -> DbResult<()> {
    let wal = ctx.wal()?;
    ctx.begin_in_flight(txn, &wal);
    let mut logged = txn.to_le_bytes().to_vec();
    logged.extend_from_slice(&payload);
    let rx = wal.append(record, 0, &logged).await;
    if synchronous {
        wait_durable(rx).await?;
    }
    ctx.prepared.borrow_mut().entry(txn).or_default().push(op);
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

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = PARTITION_NS;

    #[test]
    fn partitions_become_ranges_joined_across_the_narrowest_gaps() {
        assert_eq!(partition_ranges(&[]), Some(vec![]));
        assert_eq!(partition_ranges(&[3, 4, 5, 9]), Some(vec![(3 * DAY, 6 * DAY), (9 * DAY, 10 * DAY)]));
        assert_eq!(partition_ranges(&[-2, -1]), Some(vec![(-2 * DAY, 0)]));
        // Ten separate days, every other one: the two narrowest gaps (the
        // first ones, all being equal) are joined to keep eight ranges.
        let every_other: Vec<i64> = (0..10).map(|i| 2 * i).collect();
        let ranges = partition_ranges(&every_other).unwrap();
        assert_eq!(ranges.len(), MAX_REWRITE_RANGES);
        assert_eq!(ranges[0], (0, 5 * DAY));
        assert_eq!(ranges[7], (18 * DAY, 19 * DAY));
        // Every partition stays inside some range.
        assert!(every_other.iter().all(|p| ranges.iter().any(|&(lo, hi)| lo <= p * DAY && p * DAY < hi)));
        // A bound past the last nanosecond: no ranges (the table is rewritten whole).
        assert_eq!(partition_ranges(&[i64::MAX / DAY]), None);
    }

    #[test]
    fn time_bounds_are_literals_of_the_column_type() {
        assert_eq!(time_literal(DataType::TimestampTz, DAY).as_deref(), Some("'1970-01-02 00:00:00+00'::timestamptz"));
        assert_eq!(time_literal(DataType::Timestamp, -DAY).as_deref(), Some("'1969-12-31 00:00:00'::timestamp"));
        assert_eq!(time_literal(DataType::Int64, 7).as_deref(), Some("7"));
        assert_eq!(time_literal(DataType::Text, 7), None);
    }
}
