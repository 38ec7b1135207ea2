//! CREATE, ALTER and DROP SEQUENCE (a serial or identity column's sequence
//! is made with its table, and goes with it). Options as PostgreSQL reads
//! them: `AS smallint|integer|bigint`, `INCREMENT [BY]`, `[NO] MINVALUE`,
//! `[NO] MAXVALUE`, `START [WITH]`, `CACHE` (shown in the catalogs, no
//! effect), `[NO] CYCLE`, `OWNED BY` (accepted, no effect), and ALTER's
//! `RESTART [[WITH] n]`. Inside a block, ROLLBACK undoes them (not a
//! RESTART's position). nextval(), setval(), currval() and lastval() are the
//! binder's; a sequence's values and their durability are
//! `catalog/sequence.rs`'s.
//! Must not: drop a sequence a column's default still uses (2BP01) unless
//! CASCADE drops the default, nor one an identity column requires.

use super::*;
use crate::catalog::SequenceSettings;

impl Session {
    pub(super) fn create_sequence(
        &mut self,
        name: &ast::ObjectName,
        if_not_exists: bool,
        options: &[ast::SequenceOptions],
    ) -> DbResult<StatementResult> {
        let parts = object_name_parts(name);
        let (schema, name) = match parts.as_slice() {
            [n] => (self.creation_schema()?, n.clone()),
            [s, n] => (s.clone(), n.clone()),
            _ => return Err(DbError::syntax(format!("improper relation name: {}", parts.join(".")))),
        };
        let settings = sequence_settings(options, DataType::Int64)?;
        let oid = self.server.catalog.allocate_oid();
        let created = self.server.catalog.update_database(&self.database, |db| {
            let s = db.schemas.get_mut(&schema).ok_or_else(|| {
                DbError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{schema}\" does not exist"))
            })?;
            if s.relation_kind(&name).is_some() {
                if if_not_exists {
                    return Ok(false);
                }
                return Err(DbError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists")));
            }
            s.sequences.insert(name.clone(), Arc::new(Sequence::with_settings(oid, name.clone(), settings)));
            Ok(true)
        })?;
        if !created {
            self.notice(sqlstate::DUPLICATE_TABLE, format!("relation \"{name}\" already exists, skipping"));
        } else if self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::SequenceCreated { schema, name, oid });
        }
        Ok(StatementResult::Command("CREATE SEQUENCE".into()))
    }

    /// DROP SEQUENCE [CASCADE]: 2BP01 while a column's default uses it,
    /// unless CASCADE, which drops those defaults (never an identity
    /// column's: its column requires the sequence).
    pub(super) fn drop_sequences(&mut self, if_exists: bool, names: &[ast::ObjectName], cascade: bool) -> DbResult<StatementResult> {
        for n in names {
            let parts = object_name_parts(n);
            let (schema, name) = match parts.as_slice() {
                [n] => (None, n.clone()),
                [s, n] => (Some(s.clone()), n.clone()),
                _ => return Err(DbError::syntax(format!("improper relation name: {}", parts.join(".")))),
            };
            let search = match &schema {
                Some(s) => vec![s.clone()],
                None => self.search_path(),
            };
            let dropped = self.server.catalog.update_database(&self.database, |db| {
                let Some(schema) = search.iter().find(|s| db.schemas.get(*s).is_some_and(|s| s.sequences.contains_key(&name)))
                else {
                    return Ok(None);
                };
                // Every column whose default uses the sequence, by table.
                let mut dependents: Vec<(Arc<TableDef>, Vec<usize>)> = Vec::new();
                for t in db.schemas.values().flat_map(|s| s.tables.values()) {
                    let using: Vec<usize> = (0..t.columns.len())
                        .filter(|&i| {
                            t.columns[i].default_sequence().is_some_and(|seq| {
                                seq.split_once('.').unwrap_or((&t.schema, &seq)) == (schema.as_str(), name.as_str())
                            })
                        })
                        .collect();
                    if let Some(&i) = using.first() {
                        let c = &t.columns[i];
                        if let Some(c) = using.iter().map(|&i| &t.columns[i]).find(|c| c.identity.is_some()) {
                            return Err(DbError::new(
                                "2BP01",
                                format!("cannot drop sequence {name} because column {} of table {} requires it", c.name, t.name),
                            )
                            .with_hint(format!("You can drop column {} of table {} instead.", c.name, t.name)));
                        }
                        if !cascade {
                            return Err(DbError::new(
                                "2BP01",
                                format!("cannot drop sequence {name} because other objects depend on it"),
                            )
                            .with_detail(format!("default value for column {} of table {} depends on sequence {name}", c.name, t.name))
                            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                        }
                        dependents.push((t.clone(), using));
                    }
                }
                let mut altered = Vec::new();
                for (before, columns) in dependents {
                    let Some(s) = db.schemas.get_mut(&before.schema) else { continue };
                    let indexes: Vec<Arc<IndexDef>> = s.indexes.values().filter(|i| i.table == before.name).cloned().collect();
                    let mut def = (*before).clone();
                    let mut cleared = Vec::new();
                    for i in columns {
                        def.columns[i].default = None;
                        cleared.push(format!("default value for column {} of table {}", def.columns[i].name, def.name));
                    }
                    s.tables.insert(def.name.clone(), Arc::new(def));
                    altered.push((before, indexes, cleared));
                }
                let s = db.schemas.get_mut(schema).ok_or_else(|| DbError::internal("schema vanished"))?;
                Ok(s.sequences.remove(&name).map(|q| (schema.clone(), q, altered)))
            })?;
            match dropped {
                Some((schema, sequence, altered)) => {
                    for (before, indexes, cleared) in altered {
                        for what in cleared {
                            self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("drop cascades to {what}"));
                        }
                        self.server.forget_derived_write_state(before.oid);
                        if self.txn != TxnState::Idle {
                            self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::TableAltered { before, indexes }));
                        }
                    }
                    if self.txn != TxnState::Idle {
                        self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::SequenceDropped { schema, sequence }));
                    }
                }
                None if if_exists => {
                    self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("sequence \"{name}\" does not exist, skipping"));
                }
                None => {
                    return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("sequence \"{name}\" does not exist")));
                }
            }
        }
        Ok(StatementResult::Command("DROP SEQUENCE".into()))
    }

    /// ALTER SEQUENCE, as `sql::parse` rewrote it (see
    /// `sql::ALTER_SEQUENCE_CALL`): new settings, and with RESTART the value
    /// nextval returns next. ROLLBACK puts the settings back, not the
    /// position (as setval's).
    pub(super) fn alter_sequence(&mut self, call: &ast::Function) -> DbResult<StatementResult> {
        let args = match &call.args {
            ast::FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        let text = |e: &ast::Expr| match e {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        };
        let flag = |e: &ast::Expr| match e {
            ast::Expr::Value(v) => match v.value {
                ast::Value::Boolean(b) => Some(b),
                _ => None,
            },
            _ => None,
        };
        let malformed = || DbError::syntax("malformed ALTER SEQUENCE");
        let [name, if_exists, restart, restart_value, options] = args.as_deref().ok_or_else(malformed)? else {
            return Err(malformed());
        };
        let (name, if_exists, restart, options) = (
            text(name).ok_or_else(malformed)?,
            flag(if_exists).ok_or_else(malformed)?,
            flag(restart).ok_or_else(malformed)?,
            text(options).ok_or_else(malformed)?,
        );
        let restart_value = match restart_value {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Null) => None,
            e => Some(integer(e)?),
        };
        let words: Vec<&str> = options.split_whitespace().collect();
        let first_word = words.first().unwrap_or(&"").to_ascii_uppercase();
        if let [owner_word, to, role] = words.as_slice() {
            if owner_word.eq_ignore_ascii_case("owner") && to.eq_ignore_ascii_case("to") && !restart {
                let owner = match role.to_ascii_lowercase().as_str() {
                    "current_user" => ast::Owner::CurrentUser,
                    "current_role" => ast::Owner::CurrentRole,
                    "session_user" => ast::Owner::SessionUser,
                    _ => ast::Owner::Ident(ast::Ident::new(match role.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                        Some(quoted) => quoted.replace("\"\"", "\""),
                        None => role.to_lowercase(),
                    })),
                };
                let name = match crate::sql::bind::split_qualified_name(&name).as_slice() {
                    [n] => ast::ObjectName::from(vec![ast::Ident::with_quote('"', n.clone())]),
                    [s, n] => ast::ObjectName::from(vec![ast::Ident::with_quote('"', s.clone()), ast::Ident::with_quote('"', n.clone())]),
                    _ => return Err(DbError::syntax(format!("improper relation name: {name}"))),
                };
                self.relation_owner_to(&name, if_exists, &owner)?;
                return Ok(StatementResult::Command("ALTER SEQUENCE".into()));
            }
        }
        if matches!(first_word.as_str(), "RENAME" | "OWNER" | "SET") {
            return Err(DbError::unsupported(format!("ALTER SEQUENCE … {first_word} is not supported")));
        }
        if options.is_empty() && !restart {
            return Err(DbError::syntax("syntax error at end of input: ALTER SEQUENCE needs an option"));
        }
        let options = match crate::sql::parse(&format!("CREATE SEQUENCE s {options}"))?.as_slice() {
            [ast::Statement::CreateSequence { sequence_options, .. }] => sequence_options.clone(),
            _ => return Err(DbError::syntax(format!("syntax error in ALTER SEQUENCE options: {options}"))),
        };
        let parts = crate::sql::bind::split_qualified_name(&name);
        let search = match parts.as_slice() {
            [_] => self.search_path(),
            [schema, _] => vec![schema.clone()],
            _ => return Err(DbError::syntax(format!("improper relation name: {name}"))),
        };
        let Some(seq_name) = parts.last().cloned() else { return Err(malformed()) };
        let altered = self.server.catalog.update_database(&self.database, |db| {
            let found = search.iter().find_map(|s| Some((s.clone(), db.schemas.get(s)?.sequences.get(&seq_name)?.clone())));
            let Some((schema, sequence)) = found else {
                return Ok(None);
            };
            let before = sequence.settings();
            let settings = altered_settings(before, &options)?;
            let restart = match (restart, restart_value) {
                (false, _) => None,
                (true, Some(v)) => Some(v),
                (true, None) => Some(settings.start),
            };
            if let Some(v) = restart {
                check_within("RESTART", v, settings.min, settings.max)?;
            }
            let saved = sequence.alter(settings, restart);
            Ok(Some((sequence, schema, before, saved)))
        });
        match altered {
            Ok(Some((sequence, schema, before, saved))) => {
                sequence.mark_durable(saved);
                if self.txn != TxnState::Idle {
                    self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::SequenceAltered { schema, oid: sequence.oid, before }));
                }
            }
            Ok(None) if if_exists => {
                self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("relation \"{name}\" does not exist, skipping"));
            }
            Ok(None) => return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist"))),
            Err(e) => return Err(e),
        }
        Ok(StatementResult::Command("ALTER SEQUENCE".into()))
    }
}

/// CREATE SEQUENCE's options (also an identity column's) as PostgreSQL
/// reads them: defaults from the increment's sign and the `AS` type
/// (`default_type` without one: bigint, or the identity or serial column's
/// type); 22023 for bounds that do not hold.
pub(super) fn sequence_settings(
    options: &[ast::SequenceOptions],
    default_type: DataType,
) -> DbResult<SequenceSettings> {
    resolve_settings(None, options, default_type)
}

/// ALTER SEQUENCE's options over a sequence's `current` settings: what is
/// not spelled out stays, except that a new `AS` type moves a bound that was
/// the old type's limit to the new type's (as PostgreSQL does).
fn altered_settings(current: SequenceSettings, options: &[ast::SequenceOptions]) -> DbResult<SequenceSettings> {
    resolve_settings(Some(current), options, current.data_type)
}

fn invalid(m: String) -> DbError {
    DbError::new(sqlstate::INVALID_PARAMETER_VALUE, m)
}

fn integer(e: &ast::Expr) -> DbResult<i64> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => integer(expr).ok().and_then(|n| n.checked_neg()),
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Plus, expr } => integer(expr).ok(),
        _ => None,
    }
    .ok_or_else(|| DbError::syntax(format!("{e} is not an integer")))
}

/// The range of a sequence's `AS` type.
fn type_bounds(t: DataType) -> DbResult<(i64, i64)> {
    match t {
        DataType::Int16 => Ok((i16::MIN as i64, i16::MAX as i64)),
        DataType::Int32 => Ok((i32::MIN as i64, i32::MAX as i64)),
        DataType::Int64 => Ok((i64::MIN, i64::MAX)),
        _ => Err(invalid("sequence type must be smallint, integer, or bigint".into())),
    }
}

/// PostgreSQL's init_params: `current` is None for CREATE SEQUENCE.
fn resolve_settings(
    current: Option<SequenceSettings>,
    options: &[ast::SequenceOptions],
    default_type: DataType,
) -> DbResult<SequenceSettings> {
    let (mut data_type, mut increment, mut min, mut max, mut start, mut cache, mut cycle) =
        (None, None, None, None, None, None, None);
    for o in options {
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => increment = Some(integer(e)?),
            ast::SequenceOptions::MinValue(e) => min = Some(e.as_ref().map(integer).transpose()?),
            ast::SequenceOptions::MaxValue(e) => max = Some(e.as_ref().map(integer).transpose()?),
            ast::SequenceOptions::StartWith(e, _) => start = Some(integer(e)?),
            ast::SequenceOptions::Cache(e) => cache = Some(integer(e)?),
            // sqlparser's flag is NO: Cycle(true) is NO CYCLE.
            ast::SequenceOptions::Cycle(no) => cycle = Some(!*no),
            ast::SequenceOptions::OwnedBy(_) => {}
            ast::SequenceOptions::DataType(t) => data_type = Some(crate::sql::bind::bind_data_type_mod(t)?.0),
        }
    }
    let old = current.unwrap_or(SequenceSettings { data_type: default_type, ..Default::default() });
    let data_type = data_type.unwrap_or(old.data_type);
    let (type_min, type_max) = type_bounds(data_type)?;
    let (old_type_min, old_type_max) = type_bounds(old.data_type)?;
    let increment = increment.unwrap_or(old.increment);
    if increment == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let init = current.is_none();
    let retyped = data_type != old.data_type;
    let reset_max = !init && retyped && old.max == old_type_max;
    let reset_min = !init && retyped && old.min == old_type_min;
    let max = match max {
        Some(Some(v)) => v,
        None if !init && !reset_max => old.max,
        _ if increment > 0 || reset_max => type_max,
        _ => -1,
    };
    let min = match min {
        Some(Some(v)) => v,
        None if !init && !reset_min => old.min,
        _ if increment < 0 || reset_min => type_min,
        _ => 1,
    };
    if max < type_min || max > type_max {
        return Err(invalid(format!("MAXVALUE ({max}) is out of range for sequence data type {}", data_type.name())));
    }
    if min < type_min || min > type_max {
        return Err(invalid(format!("MINVALUE ({min}) is out of range for sequence data type {}", data_type.name())));
    }
    if min >= max {
        return Err(invalid(format!("MINVALUE ({min}) must be less than MAXVALUE ({max})")));
    }
    let start = start.unwrap_or(if !init {
        old.start
    } else if increment > 0 {
        min
    } else {
        max
    });
    check_within("START", start, min, max)?;
    let cache = cache.unwrap_or(old.cache);
    if cache <= 0 {
        return Err(invalid(format!("CACHE ({cache}) must be greater than zero")));
    }
    let cycle = cycle.unwrap_or(old.cycle);
    Ok(SequenceSettings { data_type, increment, min, max, start, cache, cycle })
}

/// 22023 when a START or RESTART value is outside [min, max].
fn check_within(what: &str, v: i64, min: i64, max: i64) -> DbResult<()> {
    if v < min {
        return Err(invalid(format!("{what} value ({v}) cannot be less than MINVALUE ({min})")));
    }
    if v > max {
        return Err(invalid(format!("{what} value ({v}) cannot be greater than MAXVALUE ({max})")));
    }
    Ok(())
}
