//! CREATE/ALTER/DROP ROLE (and USER, GROUP): roles in the catalog, with
//! PostgreSQL's checks and messages. Passwords are stored hashed per the
//! session's `password_encryption` (`auth::hash_password`); a rename clears
//! an MD5 password (its hash covers the name), as PostgreSQL does.
//! Who may: a superuser for anything; a CREATEROLE role for non-superuser
//! roles; any role for its own password. A session whose user is not a role
//! (trust authentication takes any name, as before roles existed) counts as
//! a superuser.
//! Must not: authenticate (`wire/auth.rs`) or count connections (`server/`).

use super::*;
use crate::auth::{hash_password, Encryption};
use crate::catalog::{RoleDef, BOOTSTRAP_ROLE_OID};
use crate::sql::role_ddl::{RoleOption, RoleStatement};

fn no_role(name: &str) -> DbError {
    DbError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("role \"{name}\" does not exist"),
    )
}

fn reserved(name: &str) -> DbResult<()> {
    if name == "public" || name == "none" {
        return Err(DbError::new(
            "42939",
            format!("role name \"{name}\" is reserved"),
        ));
    }
    if name.starts_with("pg_") {
        return Err(
            DbError::new("42939", format!("role name \"{name}\" is reserved"))
                .with_detail("Role names starting with \"pg_\" are reserved."),
        );
    }
    Ok(())
}

fn denied(message: String) -> DbError {
    DbError::new(sqlstate::INSUFFICIENT_PRIVILEGE, message)
}

impl Session {
    /// The session's role and whether it is a superuser / may create roles.
    fn role_powers(&self) -> (Option<Arc<RoleDef>>, bool, bool) {
        match self.server.catalog.snapshot().role(&self.user) {
            Some(r) => (Some(r.clone()), r.superuser, r.superuser || r.create_role),
            None => (None, true, true),
        }
    }

    /// `name` as a statement names a role: CURRENT_USER and friends are the session's.
    fn role_name(&self, name: &str) -> String {
        match name {
            "current_user" | "current_role" | "session_user" => self.user.clone(),
            _ => name.to_string(),
        }
    }

    pub async fn role_statement(&mut self, stmt: &RoleStatement) -> DbResult<StatementResult> {
        if self.txn != TxnState::Idle {
            // Role changes are catalog changes published at once; a block's
            // ROLLBACK could not take them back.
            return Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "role statements cannot run inside a transaction block in Brewric",
            ));
        }
        let (me, superuser, create_role) = self.role_powers();
        let encryption =
            Encryption::from_setting(self.settings.get("password_encryption").map(String::as_str));
        match stmt {
            RoleStatement::Create {
                name,
                user,
                options,
            } => {
                reserved(name)?;
                if !create_role {
                    return Err(denied("permission denied to create role".into()));
                }
                let mut role = RoleDef::new(0, name);
                role.login = *user;
                let password = self.apply_options(&mut role, options, encryption)?;
                if role.superuser && !superuser {
                    return Err(denied("must be superuser to create superusers".into()));
                }
                if let Some(p) = password {
                    role.password = p;
                }
                let oid = self.server.catalog.allocate_oid();
                role.oid = oid;
                self.server.catalog.update(|cat| {
                    if cat.roles.contains_key(name) {
                        return Err(DbError::new(
                            sqlstate::DUPLICATE_OBJECT,
                            format!("role \"{name}\" already exists"),
                        ));
                    }
                    cat.roles.insert(name.clone(), Arc::new(role));
                    Ok(())
                })?;
                Ok(StatementResult::Command("CREATE ROLE".into()))
            }
            RoleStatement::Alter { name, options } => {
                let name = self.role_name(name);
                let current = self
                    .server
                    .catalog
                    .snapshot()
                    .role(&name)
                    .cloned()
                    .ok_or_else(|| no_role(&name))?;
                let mut role = (*current).clone();
                let password = self.apply_options(&mut role, options, encryption)?;
                let own = me.as_ref().is_some_and(|m| m.oid == role.oid);
                let only_password = options.iter().all(|o| matches!(o, RoleOption::Password(_)));
                if !superuser {
                    if current.superuser || role.superuser {
                        return Err(denied("must be superuser to alter superuser roles or change superuser attribute".into()));
                    }
                    if !(create_role || (own && only_password)) {
                        return Err(denied(format!(
                            "permission denied to alter role \"{name}\""
                        )));
                    }
                }
                if role.oid == BOOTSTRAP_ROLE_OID && (!role.superuser || !role.login) {
                    return Err(denied(
                        "permission denied: bootstrap user must be superuser and able to log in"
                            .into(),
                    ));
                }
                if let Some(p) = password {
                    role.password = p;
                }
                self.server.catalog.update(|cat| {
                    if cat.roles.get(&name).map(|r| r.oid) != Some(role.oid) {
                        return Err(no_role(&name));
                    }
                    cat.roles.insert(name.clone(), Arc::new(role));
                    Ok(())
                })?;
                Ok(StatementResult::Command("ALTER ROLE".into()))
            }
            RoleStatement::Rename { name, to } => {
                let name = self.role_name(name);
                reserved(to)?;
                let catalog = self.server.catalog.snapshot();
                let current = catalog.role(&name).cloned().ok_or_else(|| no_role(&name))?;
                if me.as_ref().is_some_and(|m| m.oid == current.oid) {
                    return Err(DbError::unsupported("session user cannot be renamed"));
                }
                if !create_role || (current.superuser && !superuser) {
                    return Err(denied("permission denied to rename role".into()));
                }
                let mut role = (*current).clone();
                role.name = to.clone();
                let md5 = role
                    .password
                    .as_deref()
                    .is_some_and(crate::auth::is_md5_hash);
                if md5 {
                    role.password = None;
                }
                self.server.catalog.update(|cat| {
                    if cat.roles.contains_key(to) {
                        return Err(DbError::new(
                            sqlstate::DUPLICATE_OBJECT,
                            format!("role \"{to}\" already exists"),
                        ));
                    }
                    if cat.roles.remove(&name).is_none() {
                        return Err(no_role(&name));
                    }
                    cat.roles.insert(to.clone(), Arc::new(role));
                    Ok(())
                })?;
                if md5 {
                    self.notice(
                        sqlstate::SUCCESSFUL_COMPLETION,
                        "MD5 password cleared because of role rename",
                    );
                }
                Ok(StatementResult::Command("ALTER ROLE".into()))
            }
            RoleStatement::Drop { if_exists, names } => {
                if !create_role {
                    return Err(denied("permission denied to drop role".into()));
                }
                let catalog = self.server.catalog.snapshot();
                let mut gone = Vec::new();
                for name in names {
                    let name = self.role_name(name);
                    let Some(role) = catalog.role(&name) else {
                        if *if_exists {
                            self.notice(
                                sqlstate::SUCCESSFUL_COMPLETION,
                                format!("role \"{name}\" does not exist, skipping"),
                            );
                            continue;
                        }
                        return Err(no_role(&name));
                    };
                    if me.as_ref().is_some_and(|m| m.oid == role.oid) || name == self.user {
                        return Err(DbError::new(
                            sqlstate::OBJECT_IN_USE,
                            "current user cannot be dropped",
                        ));
                    }
                    if role.oid == BOOTSTRAP_ROLE_OID {
                        return Err(DbError::new(
                            "2BP01",
                            format!("cannot drop role {name} because it is required by the database system"),
                        ));
                    }
                    if role.superuser && !superuser {
                        return Err(denied("must be superuser to drop superusers".into()));
                    }
                    gone.push((name, role.oid));
                }
                self.server.catalog.update(|cat| {
                    for (name, oid) in &gone {
                        if cat.roles.get(name).map(|r| r.oid) == Some(*oid) {
                            cat.roles.remove(name);
                        }
                    }
                    Ok(())
                })?;
                Ok(StatementResult::Command("DROP ROLE".into()))
            }
        }
    }

    /// Applies the options to `role`; the password, if one was given, comes
    /// back (Some(None) = PASSWORD NULL or '') to be stored once the checks pass.
    fn apply_options(
        &mut self,
        role: &mut RoleDef,
        options: &[RoleOption],
        encryption: Encryption,
    ) -> DbResult<Option<Option<String>>> {
        let mut password = None;
        for o in options {
            match o {
                RoleOption::SuperUser(v) => role.superuser = *v,
                RoleOption::CreateDb(v) => role.create_db = *v,
                RoleOption::CreateRole(v) => role.create_role = *v,
                RoleOption::Inherit(v) => role.inherit = *v,
                RoleOption::Login(v) => role.login = *v,
                RoleOption::Replication(v) => role.replication = *v,
                RoleOption::BypassRls(v) => role.bypass_rls = *v,
                RoleOption::ConnectionLimit(n) => {
                    if *n < -1 || *n > i32::MAX as i64 {
                        return Err(DbError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("invalid connection limit: {n}"),
                        ));
                    }
                    role.connection_limit = *n as i32;
                }
                RoleOption::Password(None) => password = Some(None),
                RoleOption::Password(Some(p)) if p.is_empty() => {
                    self.notice(
                        sqlstate::SUCCESSFUL_COMPLETION,
                        "empty string is not a valid password, clearing password",
                    );
                    password = Some(None);
                }
                RoleOption::Password(Some(p)) => {
                    password = Some(Some(hash_password(p, &role.name, encryption)))
                }
                RoleOption::ValidUntil(t) => role.valid_until = Some(t.clone()),
                RoleOption::Ignored => {}
            }
        }
        Ok(password)
    }
}
