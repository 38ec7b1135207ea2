//! COMMENT ON: a description kept in the database's catalog by (objoid,
//! classoid, objsubid), read back through pg_description, obj_description
//! and col_description. `IS NULL` (or '') removes it.
//! Must not: accept a comment on an object that does not exist.

use super::*;
use crate::catalog::system::{self, PG_CLASS_OID, PG_NAMESPACE_OID};

impl Session {
    pub(super) fn comment(
        &mut self,
        object_type: &ast::CommentObject,
        object_name: &ast::ObjectName,
        comment: Option<&str>,
    ) -> DbResult<StatementResult> {
        use ast::CommentObject as O;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let parts = object_name_parts(object_name);
        let eval = self.eval_context();
        let binder = self.binder(&catalog, db, &eval, vec![]);
        let key = match object_type {
            O::Table | O::View | O::Index | O::Sequence | O::MaterializedView | O::ForeignTable => {
                let wanted = match object_type {
                    O::View | O::MaterializedView => RelationKind::View,
                    O::Index => RelationKind::Index,
                    O::Sequence => RelationKind::Sequence,
                    _ => RelationKind::Table,
                };
                {
                    let (schema, rel) = binder.relation_schema(object_name)?;
                    (
                        relation_oid(db, &schema, &rel, object_name, wanted)?,
                        PG_CLASS_OID,
                        0,
                    )
                }
            }
            O::Column => {
                let Some((column, relation)) = parts.split_last() else {
                    return Err(DbError::syntax("column name must be qualified"));
                };
                if relation.is_empty() {
                    return Err(DbError::syntax("column name must be qualified"));
                }
                let relation = ast::ObjectName::from(
                    relation
                        .iter()
                        .map(|p| ast::Ident::with_quote('"', p.clone()))
                        .collect::<Vec<_>>(),
                );
                let (schema, rel) = binder.relation_schema(&relation)?;
                let found = db.schemas.get(&schema).and_then(|s| {
                    let position = |cols: Vec<&String>| cols.iter().position(|c| *c == column);
                    if let Some(t) = s.tables.get(&rel) {
                        Some((t.oid, position(t.columns.iter().map(|c| &c.name).collect())))
                    } else {
                        s.views
                            .get(&rel)
                            .map(|v| (v.oid, position(v.columns.iter().map(|c| &c.0).collect())))
                    }
                });
                match found {
                    None => return Err(undefined_relation(&relation)),
                    Some((_, None)) => {
                        return Err(DbError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!("column \"{column}\" of relation \"{rel}\" does not exist"),
                        ))
                    }
                    Some((oid, Some(i))) => (oid, PG_CLASS_OID, i as i32 + 1),
                }
            }
            O::Schema => {
                let name = parts.join(".");
                match db.schemas.get(&name) {
                    Some(s) => (s.oid, PG_NAMESPACE_OID, 0),
                    None => {
                        return Err(DbError::new(
                            sqlstate::INVALID_SCHEMA_NAME,
                            format!("schema \"{name}\" does not exist"),
                        ))
                    }
                }
            }
            O::Database => {
                let name = parts.join(".");
                (catalog.database(&name)?.oid, 1262, 0)
            }
            other => {
                return Err(DbError::unsupported(format!(
                    "COMMENT ON {other} is not supported"
                )));
            }
        };
        drop(binder);
        let text = comment.filter(|c| !c.is_empty()).map(str::to_string);
        let previous = self.server.catalog.update_database(&self.database, |db| {
            Ok(match text {
                Some(t) => db.comments.insert(key, t),
                None => db.comments.remove(&key),
            })
        })?;
        if self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::CommentSet { key, previous }));
        }
        Ok(StatementResult::Command("COMMENT".into()))
    }
}

/// The OID of relation `schema.rel` (as `name` resolved), which must be of kind `wanted`.
fn relation_oid(
    db: &crate::catalog::Database,
    schema: &str,
    rel: &str,
    name: &ast::ObjectName,
    wanted: RelationKind,
) -> DbResult<u32> {
    let parts = object_name_parts(name);
    if parts.len() == 1 || system::is_system_schema(schema) {
        let sys_schema = if parts.len() == 1 {
            "pg_catalog"
        } else {
            schema
        };
        if let Some(r) = system::lookup(sys_schema, rel) {
            return Ok(r.oid);
        }
    }
    let s = db
        .schemas
        .get(schema)
        .ok_or_else(|| undefined_relation(name))?;
    let kind = s
        .relation_kind(rel)
        .ok_or_else(|| undefined_relation(name))?;
    if kind != wanted {
        return Err(kind.wrong_type_error(rel, wanted));
    }
    Ok(match kind {
        RelationKind::Table => s.tables[rel].oid,
        RelationKind::View => s.views[rel].oid,
        RelationKind::Index => s.indexes[rel].oid,
        RelationKind::Sequence => s.sequences[rel].oid,
    })
}

fn undefined_relation(name: &ast::ObjectName) -> DbError {
    DbError::new(
        sqlstate::UNDEFINED_TABLE,
        format!(
            "relation \"{}\" does not exist",
            object_name_parts(name).join(".")
        ),
    )
}
