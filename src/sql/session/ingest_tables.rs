//! Tables that ingest creates and widens on its own (line protocol's
//! measurements, MCAP's topics): one created from a full definition unless
//! it exists, columns added to one that lacks them. Both entry points decide
//! the columns; this module only changes the catalog.
//! Must not: decide names or types, or write rows.

use super::*;
use crate::catalog::{IngestCreated, ProvisionalKind, ProvisionalObject};

impl Session {
    /// Creates `def` in its schema; when a table of that name exists (made
    /// meanwhile by another writer, or before), returns that one instead.
    /// A table it creates for `unfinished_ingest` is listed in the same
    /// catalog change as that ingest's (see `catalog::IngestCreated`).
    pub(super) fn create_ingest_table(&self, def: TableDef, unfinished_ingest: Option<u32>) -> DbResult<Arc<TableDef>> {
        let schema = def.schema.clone();
        self.server.catalog.update_database(&self.database, |db| {
            let s = db.schemas.get_mut(&schema).ok_or_else(|| {
                DbError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{schema}\" does not exist"))
            })?;
            match s.relation_kind(&def.name) {
                None => {
                    let t = Arc::new(def);
                    s.tables.insert(t.name.clone(), t.clone());
                    if let Some(ingest) = unfinished_ingest {
                        db.ingest_created.push(IngestCreated {
                            ingest,
                            object: ProvisionalObject {
                                kind: ProvisionalKind::Table,
                                schema: t.schema.clone(),
                                name: t.name.clone(),
                                oid: t.oid,
                            },
                        });
                    }
                    Ok(t)
                }
                Some(RelationKind::Table) => s
                    .tables
                    .get(&def.name)
                    .cloned()
                    .ok_or_else(|| DbError::internal("table vanished")),
                Some(kind) => Err(kind.wrong_type_error(&def.name, RelationKind::Table)),
            }
        })
    }

    /// 40001 unless every one of `tables` (found before the rewrite lock
    /// was taken) is still there: an ALTER TABLE in between gives a table a
    /// new OID, and rows written for the old one would be lost.
    pub(super) fn check_tables_current<'a>(&self, tables: impl IntoIterator<Item = &'a TableDef>) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        for t in tables {
            // By name (a map lookup: this runs on every line-protocol write).
            if db.table(&t.schema, &t.name).is_none_or(|now| now.oid != t.oid) {
                return Err(DbError::new(
                    "40001",
                    format!("table \"{}.{}\" was rewritten or dropped while this write was prepared", t.schema, t.name),
                )
                .with_hint("Send the write again."));
            }
        }
        Ok(())
    }

    /// Lists `made` (objects of `schema` the ingest just created, found by
    /// name) in the catalog as `ingest`'s, in one change. True when listed.
    pub(super) fn list_ingest_created(&self, ingest: u32, schema: &str, made: &[(ProvisionalKind, &str)]) -> bool {
        if made.is_empty() {
            return false;
        }
        // A failed save leaves them off the list: a crash during the ingest
        // then keeps them (empty), as before the list existed.
        self.server
            .catalog
            .update_database(&self.database, |db| {
                let Some(s) = db.schemas.get(schema) else { return Ok(false) };
                let objects: Vec<ProvisionalObject> = made
                    .iter()
                    .filter_map(|&(kind, name)| {
                        let oid = match kind {
                            ProvisionalKind::Schema => Some(s.oid),
                            ProvisionalKind::Table => s.tables.get(name).map(|t| t.oid),
                            ProvisionalKind::View => s.views.get(name).map(|v| v.oid),
                            ProvisionalKind::Index | ProvisionalKind::Sequence => None,
                        }?;
                        Some(ProvisionalObject { kind, schema: schema.to_string(), name: name.to_string(), oid })
                    })
                    .collect();
                db.ingest_created.extend(objects.into_iter().map(|object| IngestCreated { ingest, object }));
                Ok(true)
            })
            .unwrap_or(false)
    }

    /// Ingest `id` has ended: what it created is no longer listed as an
    /// unfinished ingest's. A failed save leaves them listed: the next start
    /// removes only those of them that are empty.
    pub(super) fn forget_unfinished_ingest(&self, id: u32) {
        let _ = self.server.catalog.update_database(&self.database, |db| {
            db.ingest_created.retain(|c| c.ingest != id);
            Ok(())
        });
    }

    /// A table ingest created inside a transaction block goes again at its
    /// ROLLBACK, as one CREATE TABLE made there does.
    pub(super) fn note_created_in_block(&mut self, table: &Arc<TableDef>) {
        if self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::TableCreated(table.clone()));
        }
    }

    /// Adds `columns` to `schema.table` (ALTER TABLE … ADD COLUMN IF NOT
    /// EXISTS, a rewrite) and returns the widened table. Not inside a
    /// transaction block: the rewrite commits on its own.
    pub(super) async fn add_ingest_columns(
        &mut self,
        schema: &str,
        table: &str,
        columns: &[(&str, DataType)],
    ) -> DbResult<Arc<TableDef>> {
        if self.txn != TxnState::Idle {
            return Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                format!(
                    "ingest adds column \"{}\" to table \"{table}\", which cannot happen inside a transaction block",
                    columns.first().map_or("", |c| c.0)
                ),
            ));
        }
        let q = crate::catalog::quote_ident;
        let adds: Vec<String> = columns
            .iter()
            .map(|(n, t)| format!("ADD COLUMN IF NOT EXISTS {} {}", q(n), t.name()))
            .collect();
        let sql = format!("ALTER TABLE {}.{} {}", q(schema), q(table), adds.join(", "));
        for stmt in crate::sql::parse(&sql)? {
            // Boxed: execute can reach this function again (an ingest COPY FROM a file).
            Box::pin(self.execute(&stmt, vec![], &[])).await?;
        }
        self.notices.clear();
        self.server
            .catalog
            .snapshot()
            .database(&self.database)?
            .table(schema, table)
            .cloned()
            .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist")))
    }
}
