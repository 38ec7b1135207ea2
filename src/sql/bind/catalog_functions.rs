//! Binding of the functions that read the catalog: pg_table_is_visible,
//! obj_description, col_description, shobj_description, pg_get_indexdef,
//! pg_get_userbyid, pg_encoding_to_char, pg_function_is_visible,
//! pg_type_is_visible, pg_get_function_result/arguments, pg_get_expr,
//! pg_get_constraintdef, pg_get_viewdef, pg_relation_is_publishable,
//! pg_partition_ancestors,
//! pg_get_serial_sequence, to_regclass,
//! to_regtype, to_regnamespace and the has_*_privilege family.
//! The catalog is one snapshot per statement, so each call becomes an
//! expression over constants computed here (a membership test or a lookup
//! by key), evaluated per row like any other expression.
//! Must not: change the catalog, or answer from anything but the snapshot.

use std::sync::Arc;

use crate::catalog::system;
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels::BinaryOp;
use crate::sql::plan::*;
use crate::types::{DataType, Datum};

use super::Binder;

/// Result of a privilege check: Brewric has one superuser-like role per session.
const ALL_PRIVILEGES: &[&str] = &[
    "has_table_privilege",
    "has_schema_privilege",
    "has_database_privilege",
    "has_column_privilege",
    "has_function_privilege",
    "has_sequence_privilege",
    "has_any_column_privilege",
    "has_type_privilege",
];

impl Binder<'_> {
    /// The catalog function `name` over bound `args`, or `None` when `name` is not one.
    pub(super) fn bind_catalog_function(
        &mut self,
        name: &str,
        args: &[Expr],
    ) -> DbResult<Option<Expr>> {
        let e = match (name, args) {
            ("pg_table_is_visible", [rel]) => {
                let visible = system::visible_relation_oids(&self.system_context());
                let list = visible
                    .into_iter()
                    .map(|o| Datum::Int64(o as i64))
                    .collect();
                self.membership(rel.clone(), DataType::Oid, list)?
            }
            ("obj_description", [obj, class]) => {
                let class = self.class_oid(class)?;
                let map = self.comments(|(_, c, s)| c == class && s == 0);
                self.lookup(std::slice::from_ref(obj), &[DataType::Oid], map)?
            }
            ("obj_description", [obj]) => {
                let map = self.comments(|(_, _, s)| s == 0);
                self.lookup(std::slice::from_ref(obj), &[DataType::Oid], map)?
            }
            ("shobj_description", [obj, _class]) => {
                let map = self.comments(|(_, c, _)| c == 1262);
                self.lookup(std::slice::from_ref(obj), &[DataType::Oid], map)?
            }
            ("col_description", [rel, column]) => {
                let map: Vec<(Vec<Datum>, String)> = self
                    .db
                    .comments
                    .iter()
                    .filter(|((_, c, s), _)| *c == system::PG_CLASS_OID && *s != 0)
                    .map(|((o, _, s), t)| {
                        (vec![Datum::Int64(*o as i64), Datum::Int32(*s)], t.clone())
                    })
                    .collect();
                self.lookup(
                    &[rel.clone(), column.clone()],
                    &[DataType::Oid, DataType::Int32],
                    map,
                )?
            }
            ("pg_get_indexdef", [index]) => {
                let mut map = Vec::new();
                for s in self.db.schemas.values() {
                    for i in s.indexes.values() {
                        map.push((
                            vec![Datum::Int64(i.oid as i64)],
                            system::index_definition(&s.name, i),
                        ));
                    }
                }
                self.lookup(std::slice::from_ref(index), &[DataType::Oid], map)?
            }
            // Column 0: the whole definition; column n: that key (or INCLUDE column) alone.
            ("pg_get_indexdef", [index, column, ..]) => {
                let mut map = Vec::new();
                for s in self.db.schemas.values() {
                    for i in s.indexes.values() {
                        let key = Datum::Int64(i.oid as i64);
                        map.push((
                            vec![key.clone(), Datum::Int32(0)],
                            system::index_definition(&s.name, i),
                        ));
                        for (n, k) in i.keys.iter().chain(&i.include).enumerate() {
                            map.push((
                                vec![key.clone(), Datum::Int32(n as i32 + 1)],
                                system::index_key_column(k),
                            ));
                        }
                    }
                }
                self.lookup(
                    &[index.clone(), column.clone()],
                    &[DataType::Oid, DataType::Int32],
                    map,
                )?
            }
            ("pg_get_userbyid", [role]) => {
                // The owner of every object shows as the session's user, as before roles existed.
                let mut map = vec![(
                    vec![Datum::Int64(system::OWNER_OID as i64)],
                    self.user.clone(),
                )];
                map.push((
                    vec![Datum::Int64(system::PG_DATABASE_OWNER_OID as i64)],
                    "pg_database_owner".to_string(),
                ));
                for r in self
                    .catalog
                    .roles
                    .values()
                    .filter(|r| r.oid != system::OWNER_OID)
                {
                    map.push((vec![Datum::Int64(r.oid as i64)], r.name.clone()));
                }
                let found = self.lookup(std::slice::from_ref(role), &[DataType::Oid], map)?;
                // PostgreSQL answers "unknown (OID=n)" for a role that does not exist.
                let role_oid = self.coerce(role.clone(), DataType::Oid, name)?;
                let role_text = self.cast(role_oid, DataType::Text)?;
                let unknown = self.bind_function_call(
                    "concat",
                    vec![
                        Expr::Literal(Datum::text("unknown (OID="), DataType::Text),
                        role_text,
                        Expr::Literal(Datum::text(")"), DataType::Text),
                    ],
                )?;
                self.bind_function_call("coalesce", vec![found, unknown])?
            }
            // The casts to regclass/regtype/regnamespace, NULL where no object has the name.
            ("to_regclass" | "to_regtype" | "to_regnamespace", [text]) => {
                use super::object_identifiers::ObjectIdentifier as Kind;
                let kind = match name {
                    "to_regclass" => Kind::Class,
                    "to_regtype" => Kind::Type,
                    _ => Kind::Namespace,
                };
                let text = self.coerce(text.clone(), DataType::Text, name)?;
                match self.bind_object_identifier_cast(text, kind) {
                    Err(e) if [sqlstate::UNDEFINED_TABLE, sqlstate::UNDEFINED_OBJECT, sqlstate::INVALID_SCHEMA_NAME]
                        .contains(&e.code) =>
                    {
                        Expr::Literal(Datum::Null, DataType::Oid)
                    }
                    other => other?,
                }
            }
            // The sequence a serial or identity column takes its values from,
            // schema-qualified (setval's first argument in Django's and
            // Rails' sequence resets); NULL for a column without one.
            ("pg_get_serial_sequence", [table, column]) => {
                let (Datum::Bytes(table), Datum::Bytes(column)) = (self.constant(table)?.0, self.constant(column)?.0) else {
                    return Ok(Some(Expr::Literal(Datum::Null, DataType::Text)));
                };
                let table = String::from_utf8_lossy(&table).into_owned();
                let column = String::from_utf8_lossy(&column).into_owned();
                let parts = super::object_identifiers::split_qualified_name(&table);
                let found = match parts.as_slice() {
                    [t] => self.search_path.iter().find_map(|s| Some((s.clone(), self.db.schemas.get(s)?.tables.get(t)?.clone()))),
                    [s, t] => self.db.schemas.get(s).and_then(|sc| Some((s.clone(), sc.tables.get(t)?.clone()))),
                    _ => None,
                };
                let Some((schema, def)) = found else {
                    return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{table}\" does not exist")));
                };
                let Some(col) = def.columns.iter().find(|c| c.name == column) else {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{column}\" of relation \"{}\" does not exist", def.name),
                    ));
                };
                let sequence = col.default_sequence().map(|name| if name.contains('.') { name } else { format!("{schema}.{name}") });
                Expr::Literal(sequence.map_or(Datum::Null, Datum::text), DataType::Text)
            }
            ("pg_function_is_visible", [f]) => {
                let list = self
                    .visible_functions()
                    .into_iter()
                    .map(|f| Datum::Int64(f.oid as i64))
                    .collect();
                self.membership(f.clone(), DataType::Oid, list)?
            }
            ("pg_type_is_visible", [t]) => {
                // Every type lives in pg_catalog, which is always searched.
                let list = system::type_oids().into_iter().map(|o| Datum::Int64(o as i64)).collect();
                self.membership(t.clone(), DataType::Oid, list)?
            }
            ("pg_get_function_result", [f]) => {
                let map = self.function_texts(|f| f.returns.name());
                self.lookup(std::slice::from_ref(f), &[DataType::Oid], map)?
            }
            (
                "pg_get_function_arguments" | "pg_get_function_identity_arguments",
                [f],
            ) => {
                let map = self.function_texts(|f| {
                    f.args
                        .iter()
                        .map(|(n, t)| match n {
                            Some(n) => format!("{} {}", crate::catalog::quote_ident(n), t.name()),
                            None => t.name(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                self.lookup(std::slice::from_ref(f), &[DataType::Oid], map)?
            }
            // adbin, indpred, … hold the expression's text already.
            ("pg_get_expr", [expr, _rel] | [expr, _rel, _]) => {
                self.coerce(expr.clone(), DataType::Text, name)?
            }
            ("pg_get_constraintdef", [con] | [con, _]) => {
                let pretty = matches!(args.get(1), Some(Expr::Literal(Datum::Bool(true), _)));
                let keys = system::constraints(self.db)
                    .into_iter()
                    .map(|(_, i)| (vec![Datum::Int64(i.oid as i64)], system::constraint_definition(i)));
                let checks = system::check_constraints(self.db)
                    .into_iter()
                    .map(|(_, _, c)| (vec![Datum::Int64(c.oid as i64)], c.definition(pretty)));
                let foreign = system::foreign_key_constraints(self.db)
                    .into_iter()
                    .map(|f| (vec![Datum::Int64(f.fk.oid as i64)], f.definition));
                let map = keys.chain(checks).chain(foreign).collect();
                self.lookup(std::slice::from_ref(con), &[DataType::Oid], map)?
            }
            ("pg_get_viewdef", [view] | [view, _]) => {
                let map = self
                    .db
                    .schemas
                    .values()
                    .flat_map(|s| s.views.values())
                    .map(|v| (vec![Datum::Int64(v.oid as i64)], format!(" {};", v.query)))
                    .collect();
                self.lookup(std::slice::from_ref(view), &[DataType::Oid], map)?
            }
            // No partitions: a table is its own only ancestor (in FROM its
            // column is `relid`, see `bind_scalar_function_in_from`).
            ("pg_partition_ancestors", [rel]) => match rel.data_type() {
                DataType::Unknown | DataType::Text | DataType::Varchar(_) | DataType::Name => {
                    self.bind_object_identifier_cast(rel.clone(), super::object_identifiers::ObjectIdentifier::Class)?
                }
                _ => self.coerce(rel.clone(), DataType::Oid, name)?,
            },
            ("pg_relation_is_publishable", [rel]) => {
                let list = self
                    .db
                    .schemas
                    .values()
                    .flat_map(|s| s.tables.values())
                    .map(|t| Datum::Int64(t.oid as i64))
                    .collect();
                self.membership(rel.clone(), DataType::Oid, list)?
            }
            // Rules and triggers: their catalogs are empty, so no call gets a row.
            ("pg_get_ruledef" | "pg_get_triggerdef", [_] | [_, _]) => {
                Expr::Literal(Datum::Null, DataType::Text)
            }
            ("pg_get_statisticsobjdef_columns", [_]) => {
                Expr::Literal(Datum::Null, DataType::Text)
            }
            ("pg_encoding_to_char", [_]) => Expr::Literal(Datum::text("UTF8"), DataType::Name),
            (n, _) if ALL_PRIVILEGES.contains(&n) && (2..=4).contains(&args.len()) => {
                Expr::Literal(Datum::Bool(true), DataType::Bool)
            }
            _ => return Ok(None),
        };
        Ok(Some(e))
    }

    /// The SQL functions an unqualified call reaches: those of the search path's schemas,
    /// the first schema holding a name and argument types hiding later ones.
    fn visible_functions(&self) -> Vec<&Arc<crate::catalog::FunctionDef>> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for schema in &self.search_path {
            let Some(s) = self.db.schemas.get(schema) else {
                continue;
            };
            for f in s.functions.values().flatten() {
                if seen.insert((f.name.clone(), f.arg_types())) {
                    out.push(f);
                }
            }
        }
        out
    }

    /// `text(f)` for every SQL function of the database, keyed by its OID.
    fn function_texts(
        &self,
        text: impl Fn(&crate::catalog::FunctionDef) -> String,
    ) -> Vec<(Vec<Datum>, String)> {
        self.db
            .schemas
            .values()
            .flat_map(|s| s.functions.values().flatten())
            .map(|f| (vec![Datum::Int64(f.oid as i64)], text(f)))
            .collect()
    }

    /// The classoid a catalog name argument ('pg_class') stands for.
    fn class_oid(&self, class: &Expr) -> DbResult<u32> {
        let (v, _) = self.constant(class)?;
        let name = v
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("pg_catalog.")
            .to_string();
        Ok(system::lookup("pg_catalog", &name)
            .map(|r| r.oid)
            .unwrap_or(0))
    }

    /// Comments of this database whose (objoid, classoid, objsubid) pass `keep`, keyed by objoid.
    fn comments(&self, keep: impl Fn((u32, u32, i32)) -> bool) -> Vec<(Vec<Datum>, String)> {
        self.db
            .comments
            .iter()
            .filter(|(k, _)| keep(**k))
            .map(|((o, _, _), t)| (vec![Datum::Int64(*o as i64)], t.clone()))
            .collect()
    }

    /// `key IN (list)`, false (not NULL) for an empty list; NULL for a NULL key.
    fn membership(&mut self, key: Expr, key_type: DataType, list: Vec<Datum>) -> DbResult<Expr> {
        let key = self.coerce(key, key_type, "function")?;
        if list.is_empty() {
            let is_null = Expr::IsNull {
                expr: Box::new(key),
                negated: false,
            };
            return Ok(Expr::Case {
                whens: vec![(is_null, Expr::Literal(Datum::Null, DataType::Bool))],
                otherwise: Box::new(Expr::Literal(Datum::Bool(false), DataType::Bool)),
                data_type: DataType::Bool,
            });
        }
        let eq = crate::exec::kernels::resolve_binary(BinaryOp::Eq, key_type, key_type)?;
        Ok(Expr::InList {
            expr: Box::new(key),
            list: list
                .into_iter()
                .map(|d| Expr::Literal(d, key_type))
                .collect(),
            eq,
            negated: false,
        })
    }

    /// The text `map` holds for the key `keys` (NULL when it holds none).
    fn lookup(
        &mut self,
        keys: &[Expr],
        key_types: &[DataType],
        map: Vec<(Vec<Datum>, String)>,
    ) -> DbResult<Expr> {
        let keys: Vec<Expr> = keys
            .iter()
            .zip(key_types)
            .map(|(k, t)| self.coerce(k.clone(), *t, "function"))
            .collect::<DbResult<_>>()?;
        let mut whens = Vec::with_capacity(map.len());
        for (key, value) in map {
            let mut test: Option<Expr> = None;
            for ((k, v), t) in keys.iter().zip(key).zip(key_types) {
                let eq = self.bind_binary(BinaryOp::Eq, k.clone(), Expr::Literal(v, *t))?;
                test = Some(match test {
                    Some(t) => self.bind_binary(BinaryOp::And, t, eq)?,
                    None => eq,
                });
            }
            if let Some(test) = test {
                whens.push((test, Expr::Literal(Datum::text(value), DataType::Text)));
            }
        }
        Ok(Expr::Case {
            whens,
            otherwise: Box::new(Expr::Literal(Datum::Null, DataType::Text)),
            data_type: DataType::Text,
        })
    }
}
