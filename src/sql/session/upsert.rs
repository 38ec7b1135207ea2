//! `INSERT INTO t … ON CONFLICT (cols) | ON CONSTRAINT c DO UPDATE SET … [WHERE
//! …] [RETURNING …]`: the incoming rows are computed once, as a plain INSERT
//! computes them (defaults and sequences included), then, in one
//! transaction (the session's, or one of its own), the rows whose key is
//! already stored are updated by `UPDATE t AS alias SET … FROM (VALUES rows)
//! AS excluded(columns) WHERE the key matches [AND the WHERE]` and the others
//! inserted by `INSERT … ON CONFLICT (key) DO NOTHING`. Two incoming rows with
//! one key are 21000, as in PostgreSQL (the second would change a row the
//! statement made). RETURNING gives the updated rows, then the inserted ones.
//! Must not: check or store keys itself (the UPDATE and INSERT it runs do).

use super::*;
use crate::catalog::quote_ident;

/// Whether `ins` is an upsert (`ON CONFLICT … DO UPDATE`).
pub(super) fn is_upsert(ins: &ast::Insert) -> bool {
    matches!(&ins.on, Some(ast::OnInsert::OnConflict(oc)) if matches!(oc.action, ast::OnConflictAction::DoUpdate(_)))
}

/// A value as an SQL literal of its column's type (`CAST('…' AS type)`, NULL).
fn literal(value: &Datum, data_type: DataType, ctx: &crate::types::FormatContext) -> String {
    if matches!(value, Datum::Null) {
        return format!("CAST(NULL AS {})", data_type.name());
    }
    let mut text = Vec::new();
    crate::types::text::format_text(data_type, value, ctx, &mut text);
    let text = String::from_utf8_lossy(&text).replace('\'', "''");
    format!("CAST('{text}' AS {})", data_type.name())
}

/// The number a command tag ends with (`UPDATE 3`, `INSERT 0 2`).
fn tag_count(result: &StatementResult) -> u64 {
    let tag = match result {
        StatementResult::Command(tag) | StatementResult::Batches { tag, .. } | StatementResult::Rows { tag, .. } => tag,
        _ => return 0,
    };
    tag.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

impl Session {
    /// For Describe: a query binding an upsert's SET values and WHERE over
    /// the target (by its alias) and `excluded`, so that their parameters get types.
    pub(super) fn upsert_describe_sql(&self, ins: &ast::Insert) -> DbResult<Option<String>> {
        let Some(ast::OnInsert::OnConflict(ast::OnConflict { action: ast::OnConflictAction::DoUpdate(action), .. })) = &ins.on
        else {
            return Ok(None);
        };
        let ast::TableObject::TableName(name) = &ins.table else { return Ok(None) };
        let table = self.lookup_table(name)?;
        let target = format!("{}.{}", quote_ident(&table.schema), quote_ident(&table.name));
        let alias = ins.table_alias.as_ref().map_or_else(|| quote_ident(&table.name), |a| quote_ident(&a.alias.value));
        let is_default = |e: &ast::Expr| matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"));
        let mut items: Vec<String> =
            action.assignments.iter().filter(|a| !is_default(&a.value)).map(|a| a.value.to_string()).collect();
        items.extend(action.selection.iter().map(|w| format!("({w})")));
        if items.is_empty() {
            return Ok(None);
        }
        Ok(Some(format!(
            "SELECT {} FROM {target} AS {alias} CROSS JOIN (SELECT * FROM {target} LIMIT 0) AS excluded",
            items.join(", ")
        )))
    }

    pub(super) async fn upsert(
        &mut self,
        ins: &ast::Insert,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        let Some(ast::OnInsert::OnConflict(oc)) = &ins.on else {
            return Err(DbError::internal("an upsert without ON CONFLICT"));
        };
        let ast::OnConflictAction::DoUpdate(action) = &oc.action else {
            return Err(DbError::internal("an upsert without DO UPDATE"));
        };
        if oc.conflict_target.is_none() {
            return Err(DbError::new(
                sqlstate::SYNTAX_ERROR,
                "ON CONFLICT DO UPDATE requires inference specification or constraint name",
            )
            .with_hint("For example, ON CONFLICT (column_name)."));
        }
        // The rows, computed once as a plain INSERT computes them.
        let eval_ctx = self.eval_context();
        let (table, plan, returning) = {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            let mut binder = self.binder(&catalog, db, &eval_ctx, param_types.to_vec());
            let (table, plan, returning, _) = self.bind_insert(&mut binder, ins)?;
            (table, plan, returning)
        };
        let arbiter = super::conflict_arbiter(&table, oc.conflict_target.as_ref())?;
        let key = match self.arbiter_keys(&table, &arbiter)?.as_slice() {
            [key] => key.columns.clone(),
            _ => {
                return Err(DbError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                ))
            }
        };
        // Values written out whole: floats in their shortest exact form, whatever extra_float_digits says.
        let format = crate::types::FormatContext { extra_float_digits: 1, ..eval_ctx.format.clone() };
        let ctx = self.query_context(params.clone(), eval_ctx);
        let batches = operators::collect(&plan, &ctx).await?;
        let mut rows: Vec<String> = Vec::new();
        let mut keys_seen: std::collections::HashSet<Vec<String>> = Default::default();
        for b in &batches {
            for r in 0..b.len {
                let values: Vec<String> = table
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(c, col)| literal(&b.columns[c].datum(r), col.data_type, &format))
                    .collect();
                let null_key = key.iter().any(|&k| matches!(b.columns[k].datum(r), Datum::Null));
                if !null_key && !keys_seen.insert(key.iter().map(|&k| values[k].clone()).collect()) {
                    return Err(DbError::new(
                        sqlstate::CARDINALITY_VIOLATION,
                        "ON CONFLICT DO UPDATE command cannot affect row a second time",
                    )
                    .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values."));
                }
                rows.push(format!("({})", values.join(", ")));
            }
        }
        let insert_tag = |count: u64| format!("INSERT 0 {count}");
        if rows.is_empty() {
            return Ok(match returning {
                Some((_, fields)) => StatementResult::Batches { fields, batches: Vec::new(), tag: insert_tag(0) },
                None => StatementResult::Command(insert_tag(0)),
            });
        }
        let target = format!("{}.{}", quote_ident(&table.schema), quote_ident(&table.name));
        let alias = ins.table_alias.as_ref().map_or_else(|| quote_ident(&table.name), |a| quote_ident(&a.alias.value));
        let columns: Vec<String> = table.columns.iter().map(|c| quote_ident(&c.name)).collect();
        let values = rows.join(", ");
        let matches: Vec<String> =
            key.iter().map(|&k| format!("{alias}.{0} = excluded.{0}", quote_ident(&table.columns[k].name))).collect();
        let mut condition = matches.join(" AND ");
        if let Some(w) = &action.selection {
            condition = format!("{condition} AND ({w})");
        }
        let returning_sql = ins.returning.as_ref().map(|items| {
            format!(" RETURNING {}", items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))
        });
        let assignments = action.assignments.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
        let update = format!(
            "UPDATE {target} AS {alias} SET {assignments} FROM (VALUES {values}) AS excluded({}) WHERE {condition}{}",
            columns.join(", "),
            returning_sql.clone().unwrap_or_default()
        );
        let key_list = key.iter().map(|&k| quote_ident(&table.columns[k].name)).collect::<Vec<_>>().join(", ");
        let insert = format!(
            "INSERT INTO {target} AS {alias} ({}) OVERRIDING SYSTEM VALUE VALUES {values} ON CONFLICT ({key_list}) DO NOTHING{}",
            columns.join(", "),
            returning_sql.unwrap_or_default()
        );
        let mut count = 0;
        let mut returned = Vec::new();
        for (_, result) in self.run_generated(&[update, insert], &params, param_types).await? {
            count += tag_count(&result);
            if let StatementResult::Batches { batches, .. } = result {
                returned.extend(batches);
            }
        }
        let tag = insert_tag(count);
        Ok(match returning {
            Some((_, fields)) => StatementResult::Batches { fields, batches: returned, tag },
            None => StatementResult::Command(tag),
        })
    }
}
