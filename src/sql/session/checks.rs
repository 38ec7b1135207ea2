//! CHECK constraints: named as PostgreSQL names them (`<table>_<column>_check`),
//! checked when made (ALTER TABLE … ADD CONSTRAINT checks the rows there
//! are), checked on every row a write brings (INSERT, COPY, UPDATE, line
//! protocol, a rewrite's rows: `check_constraints`), kept through RENAME
//! COLUMN (the expression follows the new name) and dropped with a column
//! they read (DROP COLUMN) or by DROP CONSTRAINT.
//! Must not: evaluate anything but the constraint's own expression over the
//! written rows (no catalog change happens here but through `change_table`).

use sqlparser::ast::visit_expressions_mut;

use super::*;
use crate::catalog::CheckConstraint;

impl Session {
    /// What every write checks before its rows are stored: NOT NULL,
    /// varchar(n)/char(n) lengths, then each CHECK constraint (a row makes
    /// it false: 23514, naming the constraint and the row).
    pub(super) fn check_constraints(&self, table: &TableDef, batches: &[Batch]) -> DbResult<()> {
        self.check_rows(table, batches, false)
    }

    /// A table rewrite's rows (ALTER COLUMN … TYPE) checked against every
    /// constraint, with PostgreSQL's message for rows already stored.
    pub(super) fn check_rewritten_rows(&self, table: &TableDef, batches: &[Batch]) -> DbResult<()> {
        self.check_rows(table, batches, true)
    }

    fn check_rows(&self, table: &TableDef, batches: &[Batch], stored: bool) -> DbResult<()> {
        check_column_constraints(table, batches)?;
        let Some((check, row)) = self.failing_check(table, batches)? else { return Ok(()) };
        Err(if stored {
            DbError::new(
                sqlstate::CHECK_VIOLATION,
                format!("check constraint \"{check}\" of relation \"{}\" is violated by some row", table.name),
            )
        } else {
            DbError::new(
                sqlstate::CHECK_VIOLATION,
                format!("new row for relation \"{}\" violates check constraint \"{check}\"", table.name),
            )
            .with_detail(format!("Failing row contains ({row})."))
        })
    }

    /// The first CHECK constraint a row of `batches` makes false: its name
    /// and the row as text.
    fn failing_check(&self, table: &TableDef, batches: &[Batch]) -> DbResult<Option<(String, String)>> {
        if table.checks.is_empty() {
            return Ok(None);
        }
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval_ctx = self.eval_context();
        let mut binder = self.binder(&catalog, db, &eval_ctx, vec![]);
        let shape = Arc::new(table.clone());
        let empty = HashMap::new();
        let cx = EvalInputs { eval: &eval_ctx, params: &[], outer: &[], subqueries: &empty };
        for check in &table.checks {
            let bound = binder.bind_check_over_table(&shape, &check.expr)?;
            for b in batches {
                let result = eval(&bound, b, &cx)?.into_column(b.len);
                let failing = (0..b.len).find(|&i| matches!(result.datum(i), Datum::Bool(false)));
                if let Some(row) = failing {
                    let values: Vec<String> = b
                        .columns
                        .iter()
                        .map(|c| match c.datum(row) {
                            Datum::Null => "null".to_string(),
                            d => {
                                let mut out = Vec::new();
                                crate::types::text::format_text(c.data_type, &d, &eval_ctx.format, &mut out);
                                String::from_utf8_lossy(&out).into_owned()
                            }
                        })
                        .collect();
                    return Ok(Some((check.name.clone(), values.join(", "))));
                }
            }
        }
        Ok(None)
    }

    /// `ALTER TABLE … ADD [CONSTRAINT name] CHECK (expr) [NOT VALID]`: the
    /// rows there are must pass it unless NOT VALID (23514).
    pub(super) async fn add_check_constraint(
        &mut self,
        table: &Arc<TableDef>,
        name: Option<&ast::Ident>,
        expr: &ast::Expr,
        not_valid: bool,
    ) -> DbResult<Arc<TableDef>> {
        let check = self.new_check(table, name.map(ident_name), expr)?;
        if !not_valid {
            self.check_holds_for_rows(table, &check.name, expr).await?;
        }
        self.change_table(table, |_, def| {
            if def.checks.iter().any(|c| c.name == check.name) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("constraint \"{}\" for relation \"{}\" already exists", check.name, def.name),
                ));
            }
            def.checks.push(check);
            Ok(())
        })
    }

    /// `ALTER TABLE … DROP CONSTRAINT [IF EXISTS] name`: a CHECK constraint,
    /// or a PRIMARY KEY/UNIQUE constraint with its index (a primary key's
    /// columns stay NOT NULL, as in PostgreSQL).
    pub(super) fn drop_constraint(&mut self, table: &Arc<TableDef>, name: &str, if_exists: bool) -> DbResult<Arc<TableDef>> {
        if table.checks.iter().any(|c| c.name == name) {
            return self.change_table(table, |_, def| {
                def.checks.retain(|c| c.name != name);
                Ok(())
            });
        }
        if table.foreign_keys.iter().any(|f| f.name == name) {
            return self.change_table(table, |_, def| {
                def.foreign_keys.retain(|f| f.name != name);
                Ok(())
            });
        }
        let key_index = {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            db.schemas.get(&table.schema).and_then(|s| s.indexes.get(name)).filter(|i| i.constraint && i.table == table.name).cloned()
        };
        if let Some(index) = key_index {
            self.refuse_drop_of_referenced_key(table, &index, "constraint")?;
        }
        let dropped = self.server.catalog.update_database(&self.database, |db| {
            let Some(s) = db.schemas.get_mut(&table.schema) else { return Ok(None) };
            let is_key = s.indexes.get(name).is_some_and(|i| i.constraint && i.table == table.name);
            Ok(if is_key { s.indexes.remove(name) } else { None })
        })?;
        match dropped {
            Some(index) => {
                if self.txn != TxnState::Idle {
                    self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::IndexDropped { schema: table.schema.clone(), index }));
                }
            }
            None if if_exists => self.notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("constraint \"{name}\" of relation \"{}\" does not exist, skipping", table.name),
            ),
            None => {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("constraint \"{name}\" of relation \"{}\" does not exist", table.name),
                ))
            }
        }
        Ok(table.clone())
    }

    /// A CHECK constraint for `table`: its expression bound over the
    /// table's columns (so a bad one fails here), named `given` or as
    /// PostgreSQL names it: `<table>_<column>_check` when the expression
    /// reads one column, else `<table>_check`, numbered while taken.
    pub(super) fn new_check(&self, table: &Arc<TableDef>, given: Option<String>, expr: &ast::Expr) -> DbResult<CheckConstraint> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval_ctx = self.eval_context();
        self.binder(&catalog, db, &eval_ctx, vec![]).bind_check_over_table(table, expr)?;
        let name = match given {
            Some(n) if table.checks.iter().any(|c| c.name == n) => {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("constraint \"{n}\" for relation \"{}\" already exists", table.name),
                ));
            }
            Some(n) => n,
            None => {
                let reads = CheckConstraint { oid: 0, name: String::new(), expr: expr.clone() }.columns(table);
                let base = match reads.as_slice() {
                    [only] => format!("{}_{}_check", table.name, table.columns[*only].name),
                    _ => format!("{}_check", table.name),
                };
                let mut name = base.clone();
                let mut k = 0;
                while table.checks.iter().any(|c| c.name == name) {
                    k += 1;
                    name = format!("{base}{k}");
                }
                name
            }
        };
        Ok(CheckConstraint { oid: self.server.catalog.allocate_oid(), name, expr: expr.clone() })
    }
}

/// NOT NULL and varchar(n)/char(n) length checks on rows about to be written.
pub(super) fn check_column_constraints(table: &TableDef, batches: &[Batch]) -> DbResult<()> {
    for b in batches {
        for (ci, col) in table.columns.iter().enumerate() {
            if col.not_null && b.columns[ci].null_count() > 0 {
                return Err(DbError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("null value in column \"{}\" of relation \"{}\" violates not-null constraint", col.name, table.name),
                ));
            }
            if let DataType::Varchar(Some(_)) | DataType::Bpchar(Some(_)) = col.data_type {
                crate::exec::kernels::check_string_length(&b.columns[ci], col.data_type)?;
            }
        }
    }
    Ok(())
}

/// `expr` with column `column` replaced by `value` (ADD COLUMN's check of
/// the rows there are, which hold `value` in the new column).
pub(super) fn replace_column_in(expr: &ast::Expr, column: &str, value: &ast::Expr) -> ast::Expr {
    let mut expr = expr.clone();
    let _ = visit_expressions_mut(&mut expr, |e| {
        let names_it = match e {
            ast::Expr::Identifier(i) => ident_name(i) == column,
            ast::Expr::CompoundIdentifier(parts) => parts.last().is_some_and(|p| ident_name(p) == column),
            _ => false,
        };
        if names_it {
            *e = ast::Expr::Nested(Box::new(value.clone()));
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    expr
}

/// `expr` with column `old` named `new` (RENAME COLUMN).
pub(super) fn rename_column_in(expr: &ast::Expr, old: &str, new: &str) -> ast::Expr {
    let renamed = || match crate::catalog::quote_ident(new) == new {
        true => ast::Ident::new(new),
        false => ast::Ident::with_quote('"', new),
    };
    let mut expr = expr.clone();
    let _ = visit_expressions_mut(&mut expr, |e| {
        match e {
            ast::Expr::Identifier(i) if ident_name(i) == old => *i = renamed(),
            ast::Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last_mut().filter(|p| ident_name(p) == old) {
                    *last = renamed();
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    expr
}
