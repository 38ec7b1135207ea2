//! CREATE [OR REPLACE] FUNCTION … LANGUAGE sql and DROP FUNCTION: SQL
//! functions kept in the catalog (their body checked when created), inlined
//! into each call by `sql/bind/sql_function.rs`.
//! Must not: accept a body it cannot run (other languages, several
//! statements, set-returning functions are refused with 0A000).

use super::*;
use crate::catalog::FunctionDef;
use crate::sql::bind::bind_data_type;

impl Session {
    pub(super) fn create_function(
        &mut self,
        cf: &ast::CreateFunction,
    ) -> DbResult<StatementResult> {
        let standard_body = matches!(
            cf.function_body,
            Some(ast::CreateFunctionBody::Return(_) | ast::CreateFunctionBody::AsReturnExpr(_))
        );
        let language = match &cf.language {
            Some(l) => ident_name(l),
            None if standard_body => "sql".to_string(),
            None => {
                return Err(DbError::new(
                    sqlstate::INVALID_FUNCTION_DEFINITION,
                    "no language specified",
                ))
            }
        };
        match language.as_str() {
            "sql" => {}
            "plpgsql" | "c" | "internal" => {
                return Err(DbError::unsupported(format!(
                    "functions in language \"{language}\" are not supported (only LANGUAGE sql)"
                )))
            }
            _ => {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("language \"{language}\" does not exist"),
                ))
            }
        }
        let returns = match &cf.return_type {
            Some(ast::FunctionReturnType::DataType(t)) => bind_data_type(t)?,
            Some(ast::FunctionReturnType::SetOf(_)) => {
                return Err(DbError::unsupported(
                    "set-returning SQL functions are not supported",
                ))
            }
            None => {
                return Err(DbError::new(
                    sqlstate::INVALID_FUNCTION_DEFINITION,
                    "function result type must be specified",
                ))
            }
        };
        let mut args = Vec::new();
        for a in cf.args.iter().flatten() {
            if matches!(a.mode, Some(ast::ArgMode::Out | ast::ArgMode::InOut)) {
                return Err(DbError::unsupported("OUT parameters are not supported"));
            }
            if a.default_expr.is_some() {
                return Err(DbError::unsupported("parameter defaults are not supported"));
            }
            args.push((
                a.name.as_ref().map(ident_name),
                bind_data_type(&a.data_type)?,
            ));
        }
        let body = match &cf.function_body {
            Some(
                ast::CreateFunctionBody::AsBeforeOptions { body, .. }
                | ast::CreateFunctionBody::AsAfterOptions(body),
            ) => match body {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    ast::Value::DollarQuotedString(d) => d.value.clone(),
                    other => {
                        return Err(DbError::syntax(format!(
                            "function body must be a string, not {other}"
                        )))
                    }
                },
                other => {
                    return Err(DbError::syntax(format!(
                        "function body must be a string, not {other}"
                    )))
                }
            },
            Some(ast::CreateFunctionBody::Return(e) | ast::CreateFunctionBody::AsReturnExpr(e)) => {
                format!("SELECT {e}")
            }
            _ => {
                return Err(DbError::new(
                    sqlstate::INVALID_FUNCTION_DEFINITION,
                    "no function body specified",
                ))
            }
        };
        let (schema, name) = self.creation_target(&cf.name, "qualified")?;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let mut def = FunctionDef {
            oid: 0,
            name: name.clone(),
            schema: schema.clone(),
            args,
            returns,
            body,
        };
        let eval = self.eval_context();
        self.binder(&catalog, db, &eval, vec![])
            .check_sql_function(&def)?;
        def.oid = self.server.catalog.allocate_oid();
        let or_replace = cf.or_replace;
        let made = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&schema)
                .ok_or_else(|| DbError::internal("schema vanished"))?;
            let overloads = s.functions.entry(name.clone()).or_default();
            if let Some(i) = overloads
                .iter()
                .position(|f| f.arg_types() == def.arg_types())
            {
                if !or_replace {
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_FUNCTION,
                        format!("function \"{name}\" already exists with same argument types"),
                    ));
                }
                if overloads[i].returns != def.returns {
                    return Err(DbError::new(
                        sqlstate::INVALID_FUNCTION_DEFINITION,
                        "cannot change return type of existing function",
                    ));
                }
                def.oid = overloads[i].oid;
                let made = Arc::new(def);
                let previous = std::mem::replace(&mut overloads[i], made.clone());
                Ok((made, Some(previous)))
            } else {
                let made = Arc::new(def);
                overloads.push(made.clone());
                Ok((made, None))
            }
        })?;
        if self.txn != TxnState::Idle {
            let (function, previous) = made;
            self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::FunctionMade { function, previous }));
        }
        Ok(StatementResult::Command("CREATE FUNCTION".into()))
    }

    pub(super) fn drop_function(&mut self, df: &ast::DropFunction) -> DbResult<StatementResult> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        // Resolve every name first: DROP FUNCTION drops all or nothing.
        let mut doomed: Vec<(String, String, u32)> = Vec::new();
        for desc in &df.func_desc {
            let parts = object_name_parts(&desc.name);
            let (schemas, name) = match parts.as_slice() {
                [n] => (self.search_path(), n.clone()),
                [s, n] => (vec![s.clone()], n.clone()),
                _ => {
                    return Err(DbError::syntax(format!(
                        "improper qualified name: {}",
                        desc.name
                    )))
                }
            };
            let wanted: Option<Vec<DataType>> = desc
                .args
                .as_ref()
                .map(|a| {
                    a.iter()
                        .map(|a| bind_data_type(&a.data_type))
                        .collect::<DbResult<_>>()
                })
                .transpose()?;
            let found: Vec<_> = schemas
                .iter()
                .filter_map(|s| db.schemas.get(s))
                .filter_map(|s| s.functions.get(&name))
                .flatten()
                .filter(|f| wanted.as_ref().is_none_or(|w| *w == f.arg_types()))
                .collect();
            let shown = match &wanted {
                Some(w) => format!(
                    "{name}({})",
                    w.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                ),
                None => name.clone(),
            };
            match found.as_slice() {
                [] if df.if_exists => self.notice(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    format!("function {shown} does not exist, skipping"),
                ),
                [] => {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function {shown} does not exist"),
                    ))
                }
                [f] => doomed.push((f.schema.clone(), f.name.clone(), f.oid)),
                _ => {
                    return Err(DbError::new(
                        sqlstate::AMBIGUOUS_FUNCTION,
                        format!("function name \"{name}\" is not unique"),
                    )
                    .with_hint("Specify the argument list to select the function unambiguously."))
                }
            }
        }
        if !doomed.is_empty() {
            let dropped = self.server.catalog.update_database(&self.database, |db| {
                let mut dropped = Vec::new();
                for (schema, name, oid) in &doomed {
                    if let Some(s) = db.schemas.get_mut(schema) {
                        if let Some(list) = s.functions.get_mut(name) {
                            dropped.extend(list.iter().filter(|f| f.oid == *oid).cloned());
                            list.retain(|f| f.oid != *oid);
                            if list.is_empty() {
                                s.functions.remove(name);
                            }
                        }
                    }
                }
                Ok(dropped)
            })?;
            if self.txn != TxnState::Idle {
                for function in dropped {
                    self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::FunctionDropped(function)));
                }
            }
        }
        Ok(StatementResult::Command("DROP FUNCTION".into()))
    }
}
