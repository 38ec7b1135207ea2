//! `OWNER TO` of tables, views, sequences, schemas and functions, as pg_dump
//! writes it after each object. Every object here belongs to the bootstrap
//! superuser and there are no privileges, so a superuser named as owner
//! changes nothing (superusers pass every check there is); any other role
//! would be an owner Brewric cannot keep, and is refused (0A000).
//! Must not: change an object (ownership is not stored).

use super::*;

impl Session {
    /// Checks `OWNER TO owner`: the role exists (42704) and is a superuser (0A000).
    pub(super) fn check_new_owner(&self, owner: &ast::Owner) -> DbResult<()> {
        let name = match owner {
            ast::Owner::Ident(i) => ident_name(i),
            ast::Owner::CurrentRole | ast::Owner::CurrentUser | ast::Owner::SessionUser => self.user.clone(),
        };
        let catalog = self.server.catalog.snapshot();
        let role = catalog
            .roles
            .get(&name)
            .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist")))?;
        if !role.superuser {
            return Err(DbError::unsupported(format!(
                "OWNER TO {name}: objects belong to the bootstrap superuser; only a superuser may be named as owner"
            )));
        }
        Ok(())
    }

    /// `ALTER TABLE|VIEW|SEQUENCE name OWNER TO role` of any relation.
    pub(super) fn relation_owner_to(&mut self, name: &ast::ObjectName, if_exists: bool, owner: &ast::Owner) -> DbResult<()> {
        if self.find_relation(name)?.is_none() {
            let shown = object_name_parts(name).join(".");
            if if_exists {
                self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("relation \"{shown}\" does not exist, skipping"));
                return Ok(());
            }
            return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{shown}\" does not exist")));
        }
        self.check_new_owner(owner)
    }

    /// `ALTER SCHEMA name OWNER TO role`.
    pub(super) fn alter_schema(&mut self, alter: &ast::AlterSchema) -> DbResult<StatementResult> {
        let name = object_name_parts(&alter.name).join(".");
        let catalog = self.server.catalog.snapshot();
        let exists = catalog.database(&self.database)?.schemas.contains_key(&name);
        for op in &alter.operations {
            let ast::AlterSchemaOperation::OwnerTo { owner } = op else {
                return Err(DbError::unsupported(format!("ALTER SCHEMA … {op}")));
            };
            if !exists {
                if alter.if_exists {
                    continue;
                }
                return Err(DbError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist")));
            }
            self.check_new_owner(owner)?;
        }
        Ok(StatementResult::Command("ALTER SCHEMA".into()))
    }

    /// `ALTER FUNCTION name[(args)] OWNER TO role`.
    pub(super) fn alter_function(&mut self, alter: &ast::AlterFunction) -> DbResult<StatementResult> {
        let ast::AlterFunctionOperation::OwnerTo(owner) = &alter.operation else {
            return Err(DbError::unsupported(format!("ALTER FUNCTION … {}", alter.operation)));
        };
        let parts = object_name_parts(&alter.function.name);
        let (schemas, name) = match parts.as_slice() {
            [n] => (self.search_path(), n.clone()),
            [s, n] => (vec![s.clone()], n.clone()),
            _ => return Err(DbError::syntax(format!("improper qualified name: {}", parts.join(".")))),
        };
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        if !schemas.iter().any(|s| db.schemas.get(s).is_some_and(|s| s.functions.contains_key(&name))) {
            return Err(DbError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {name} does not exist")));
        }
        self.check_new_owner(owner)?;
        Ok(StatementResult::Command("ALTER FUNCTION".into()))
    }
}
