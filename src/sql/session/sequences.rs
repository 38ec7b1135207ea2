//! CREATE SEQUENCE and DROP SEQUENCE (a serial or identity column's sequence
//! is made with its table, and goes with it). Options as PostgreSQL reads
//! them: `AS smallint|integer|bigint`, `INCREMENT [BY]`, `[NO] MINVALUE`,
//! `[NO] MAXVALUE`, `START [WITH]`, `CACHE` (accepted, no effect), `[NO]
//! CYCLE`, `OWNED BY` (accepted, no effect). Inside a block, ROLLBACK undoes
//! both. nextval() and setval() are the binder's; a sequence's values and
//! their durability are `catalog/sequence.rs`'s.
//! Must not: drop a sequence a column's default still uses (2BP01).

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
        let settings = sequence_settings(&name, options, DataType::Int64)?;
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

    pub(super) fn drop_sequences(&mut self, if_exists: bool, names: &[ast::ObjectName]) -> DbResult<StatementResult> {
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
                for t in db.schemas.values().flat_map(|s| s.tables.values()) {
                    let used = t.columns.iter().find(|c| {
                        c.default_sequence().is_some_and(|seq| {
                            seq.split_once('.').unwrap_or((&t.schema, &seq)) == (schema.as_str(), name.as_str())
                        })
                    });
                    if let Some(c) = used {
                        return Err(DbError::new(
                            "2BP01",
                            format!("cannot drop sequence {name} because other objects depend on it"),
                        )
                        .with_detail(format!("default value for column {} of table {} depends on sequence {name}", c.name, t.name))
                        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                    }
                }
                let s = db.schemas.get_mut(schema).ok_or_else(|| DbError::internal("schema vanished"))?;
                Ok(s.sequences.remove(&name).map(|q| (schema.clone(), q)))
            })?;
            match dropped {
                Some((schema, sequence)) => {
                    if self.txn != TxnState::Idle {
                        self.record_block_change(BlockCatalogChange::SequenceDropped { schema, sequence });
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
}

/// CREATE SEQUENCE's options (also an identity column's) as PostgreSQL
/// reads them: defaults from the increment's sign and the `AS` type
/// (`default_type` without one: bigint, or the identity or serial column's
/// type); 22023 for bounds that do not hold.
pub(super) fn sequence_settings(
    name: &str,
    options: &[ast::SequenceOptions],
    default_type: DataType,
) -> DbResult<SequenceSettings> {
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
    let invalid = |m: String| DbError::new(sqlstate::INVALID_PARAMETER_VALUE, m);
    let bounds = |t: DataType| match t {
        DataType::Int16 => Ok((i16::MIN as i64, i16::MAX as i64)),
        DataType::Int32 => Ok((i32::MIN as i64, i32::MAX as i64)),
        DataType::Int64 => Ok((i64::MIN, i64::MAX)),
        _ => Err(invalid("sequence type must be smallint, integer, or bigint".into())),
    };
    let (mut increment, mut min, mut max, mut start, mut cycle) = (1i64, None, None, None, false);
    let (mut type_min, mut type_max) = bounds(default_type)?;
    for o in options {
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => increment = integer(e)?,
            ast::SequenceOptions::MinValue(e) => min = e.as_ref().map(integer).transpose()?,
            ast::SequenceOptions::MaxValue(e) => max = e.as_ref().map(integer).transpose()?,
            ast::SequenceOptions::StartWith(e, _) => start = Some(integer(e)?),
            // sqlparser's flag is NO: Cycle(true) is NO CYCLE.
            ast::SequenceOptions::Cycle(no) => cycle = !*no,
            ast::SequenceOptions::Cache(_) | ast::SequenceOptions::OwnedBy(_) => {}
            ast::SequenceOptions::DataType(t) => (type_min, type_max) = bounds(crate::sql::bind::bind_data_type_mod(t)?.0)?,
        }
    }
    if increment == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let min = min.unwrap_or(if increment > 0 { 1 } else { type_min });
    let max = max.unwrap_or(if increment > 0 { type_max } else { -1 });
    if min < type_min || max > type_max {
        return Err(invalid(format!("MINVALUE ({min}) or MAXVALUE ({max}) is out of range for sequence \"{name}\"'s type")));
    }
    if min >= max {
        return Err(invalid(format!("MINVALUE ({min}) must be less than MAXVALUE ({max})")));
    }
    let start = start.unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(invalid(format!("START value ({start}) cannot be less than MINVALUE ({min})")));
    }
    if start > max {
        return Err(invalid(format!("START value ({start}) cannot be greater than MAXVALUE ({max})")));
    }
    Ok(SequenceSettings { increment, min, max, start, cycle })
}
