//! ALTER TABLE: RENAME TO, RENAME COLUMN, ALTER COLUMN SET/DROP DEFAULT and
//! SET/DROP NOT NULL change the catalog only (rows are stored by column
//! position), and so does ADD COLUMN of a nullable column without a default
//! outside a transaction block (rows already stored read NULL in it: see
//! `add_column_in_place`), and so do ADD CONSTRAINT (keys and CHECKs, checked
//! against the rows), ADD GENERATED AS IDENTITY and OWNER TO. Other ADD
//! COLUMNs, DROP COLUMN and ALTER COLUMN … TYPE rewrite the table: a new table (a
//! new OID, under a `REWRITE_PREFIX` name) is filled from the old one's rows
//! through the WAL, then one catalog change puts it in the old one's place and
//! the old rows are dropped. A crash before that change leaves the original
//! as it was (the half-filled table is dropped at the next start); after it,
//! the new table. Cost: the table's rows are read and written once.
//! Inside a transaction block the catalog-only changes are noted for
//! ROLLBACK (and for a crash before COMMIT); a rewrite holds every other writer off until the block ends,
//! its new table is provisional and the original waits on the catalog's
//! dropping list (rows and all) until COMMIT: ROLLBACK, or a crash before
//! COMMIT, puts the original back.
//! Must not: rewrite a table the open block has written rows to (0A000).

use super::*;
use crate::catalog::{ColumnDef, ForeignKey, IndexDef, REWRITE_PREFIX};
use crate::sql::unique;

/// What a table rewrite is for.
enum Rewrite<'a> {
    AddColumn,
    /// The column dropped (indexes and CHECKs reading it go with it).
    DropColumn(&'a str),
    /// ALTER COLUMN … TYPE: a column's values cast or computed by USING.
    ColumnType,
}

/// A column name as a quoted SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl Session {
    pub(super) async fn alter_table(&mut self, at: &ast::AlterTable) -> DbResult<StatementResult> {
        // pg_dump's `ALTER TABLE x OWNER TO r` also names views and sequences.
        let owner_only = at.operations.iter().all(|op| matches!(op, ast::AlterTableOperation::OwnerTo { .. }));
        if owner_only && !at.operations.is_empty() {
            for op in &at.operations {
                if let ast::AlterTableOperation::OwnerTo { new_owner } = op {
                    self.relation_owner_to(&at.name, at.if_exists, new_owner)?;
                }
            }
            return Ok(StatementResult::Command("ALTER TABLE".into()));
        }
        let table = match self.lookup_table(&at.name) {
            Ok(t) => t,
            Err(e) if e.code == sqlstate::UNDEFINED_TABLE && at.if_exists => {
                self.notice(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    format!("relation \"{}\" does not exist, skipping", object_name_parts(&at.name).join(".")),
                );
                return Ok(StatementResult::Command("ALTER TABLE".into()));
            }
            Err(e) => return Err(e),
        };
        let mut current = table;
        for op in &at.operations {
            current = self.alter_once(&current, op).await?;
        }
        Ok(StatementResult::Command("ALTER TABLE".into()))
    }

    /// One operation; returns the table as it is afterwards.
    async fn alter_once(&mut self, table: &Arc<TableDef>, op: &ast::AlterTableOperation) -> DbResult<Arc<TableDef>> {
        use ast::AlterTableOperation as Op;
        match op {
            Op::SetOptionsParens { options } => {
                self.set_compression_options(table, options)?;
                Ok(table.clone())
            }
            Op::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n)) = table_name;
                let new = object_name_parts(n).pop().unwrap_or_default();
                self.change_table(table, |s, def| {
                    if s.relation_kind(&new).is_some() {
                        return Err(DbError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{new}\" already exists")));
                    }
                    let old = def.name.clone();
                    def.name = new.clone();
                    for idx in s.indexes.values_mut() {
                        if idx.table == old {
                            Arc::make_mut(idx).table = new.clone();
                        }
                    }
                    Ok(())
                })
            }
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (old, new) = (ident_name(old_column_name), ident_name(new_column_name));
                let i = column_of(table, &old)?;
                if table.column_index(&new).is_some() {
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("column \"{new}\" of relation \"{}\" already exists", table.name),
                    ));
                }
                self.change_table(table, |s, def| {
                    def.columns[i].name = new.clone();
                    for check in &mut def.checks {
                        check.expr = super::checks::rename_column_in(&check.expr, &old, &new);
                    }
                    for fk in &mut def.foreign_keys {
                        for c in &mut fk.columns {
                            if *c == old {
                                c.clone_from(&new);
                            }
                        }
                    }
                    for idx in s.indexes.values_mut() {
                        if idx.table == def.name {
                            let keys = rename_keys(&idx.keys, &old, &new);
                            Arc::make_mut(idx).keys = keys;
                        }
                    }
                    Ok(())
                })
            }
            Op::AlterColumn { column_name, op } => {
                let i = column_of(table, &ident_name(column_name))?;
                match op {
                    ast::AlterColumnOperation::SetDefault { value } => {
                        // Bound once now, so that a bad default fails here.
                        let catalog = self.server.catalog.snapshot();
                        let db = catalog.database(&self.database)?;
                        let eval = self.eval_context();
                        let mut binder = self.binder(&catalog, db, &eval, vec![]);
                        let bound = binder.bind_default(value, &Scope::default())?;
                        binder.coerce_assignment(bound, table.columns[i].data_type, &table.columns[i].name)?;
                        let value = stored_default(value);
                        self.change_table(table, |_, def| {
                            def.columns[i].default = Some(value);
                            Ok(())
                        })
                    }
                    ast::AlterColumnOperation::DropDefault => self.change_table(table, |_, def| {
                        def.columns[i].default = None;
                        Ok(())
                    }),
                    ast::AlterColumnOperation::DropNotNull => self.change_table(table, |s, def| {
                        let in_primary_key = s.indexes.values().any(|x| {
                            x.primary && x.table == def.name && unique::unique_keys(s, def).iter().any(|k| k.name == x.name && k.columns.contains(&i))
                        });
                        if in_primary_key {
                            return Err(DbError::new(
                                "42P16",
                                format!("column \"{}\" is in a primary key", def.columns[i].name),
                            ));
                        }
                        def.columns[i].not_null = false;
                        Ok(())
                    }),
                    ast::AlterColumnOperation::SetNotNull => {
                        self.check_no_nulls(table, i).await?;
                        self.change_table(table, |_, def| {
                            def.columns[i].not_null = true;
                            Ok(())
                        })
                    }
                    ast::AlterColumnOperation::SetDataType { data_type, using, .. } => {
                        self.change_column_type(table, i, data_type, using.as_ref()).await
                    }
                    ast::AlterColumnOperation::AddGenerated { generated_as, sequence_options } => {
                        let identity = match generated_as {
                            Some(ast::GeneratedAs::ByDefault) => crate::catalog::Identity::ByDefault,
                            _ => crate::catalog::Identity::Always,
                        };
                        // `sql::parse` carries pg_dump's `SEQUENCE NAME s` as OWNED BY s.
                        let options = sequence_options.as_deref().unwrap_or(&[]);
                        let named = options.iter().find_map(|o| match o {
                            ast::SequenceOptions::OwnedBy(Some(name)) => Some(object_name_parts(name)),
                            _ => None,
                        });
                        let sequence = match named.as_deref() {
                            None => None,
                            Some([name]) => Some((None, name.clone())),
                            Some([schema, name]) => Some((Some(schema.clone()), name.clone())),
                            Some(other) => return Err(DbError::syntax(format!("improper sequence name: {}", other.join(".")))),
                        };
                        self.add_identity(table, i, identity, sequence, options)
                    }
                    other => Err(DbError::unsupported(format!("ALTER TABLE … ALTER COLUMN … {other}"))),
                }
            }
            Op::AddColumn {
                if_not_exists,
                column_def,
                ..
            } => {
                let name = ident_name(&column_def.name);
                if table.column_index(&name).is_some() {
                    if *if_not_exists {
                        self.notice(
                            sqlstate::DUPLICATE_COLUMN,
                            format!("column \"{name}\" of relation \"{}\" already exists, skipping", table.name),
                        );
                        return Ok(table.clone());
                    }
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("column \"{name}\" of relation \"{}\" already exists", table.name),
                    ));
                }
                let column = self.added_column(column_def)?;
                // Existing rows take the default (NULL without one), as in PostgreSQL.
                let fill = match &column.default {
                    Some(d) => format!("({d})"),
                    None => "NULL".into(),
                };
                let ty = match (column.data_type, column.numeric_typmod) {
                    (DataType::Numeric, Some((p, sc))) => format!("numeric({p},{sc})"),
                    (DataType::Bpchar(None), _) => "bpchar".into(),
                    (t, _) => t.name(),
                };
                let fill = format!("CAST({fill} AS {ty})");
                let checks = self.added_column_checks(table, &column, column_def, &fill).await?;
                let null_default = column.default.as_ref().is_none_or(|d| d.to_string().eq_ignore_ascii_case("null"));
                let added = if self.txn == TxnState::Idle && null_default && !column.not_null {
                    self.add_column_in_place(table, column, *if_not_exists).await?
                } else {
                    let mut select: Vec<String> = table.columns.iter().map(|c| quoted(&c.name)).collect();
                    select.push(fill);
                    let mut columns = table.columns.clone();
                    columns.push(column);
                    self.rewrite_table(table, columns, &select.join(", "), Rewrite::AddColumn).await?
                };
                if checks.is_empty() {
                    return Ok(added);
                }
                self.change_table(&added, |_, def| {
                    def.checks.extend(checks);
                    Ok(())
                })
            }
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                let mut current = table.clone();
                for c in column_names {
                    let name = ident_name(c);
                    let Some(i) = current.column_index(&name) else {
                        if *if_exists {
                            self.notice(
                                sqlstate::SUCCESSFUL_COMPLETION,
                                format!("column \"{name}\" of relation \"{}\" does not exist, skipping", current.name),
                            );
                            continue;
                        }
                        return Err(undefined_column(&current, &name));
                    };
                    let mut columns = current.columns.clone();
                    columns.remove(i);
                    let select: Vec<String> = columns.iter().map(|c| quoted(&c.name)).collect();
                    let select = if select.is_empty() { String::new() } else { select.join(", ") };
                    current = self.rewrite_table(&current, columns, &select, Rewrite::DropColumn(&name)).await?;
                }
                Ok(current)
            }
            Op::DropConstraint { if_exists, name, .. } => self.drop_constraint(table, &ident_name(name), *if_exists),
            Op::OwnerTo { new_owner } => {
                self.check_new_owner(new_owner)?;
                Ok(table.clone())
            }
            Op::AddConstraint { constraint, not_valid } => match constraint {
                ast::TableConstraint::PrimaryKey(pk) => self.add_key_constraint(table, pk.name.as_ref(), &pk.columns, true).await,
                ast::TableConstraint::Unique(u) => self.add_key_constraint(table, u.name.as_ref(), &u.columns, false).await,
                ast::TableConstraint::Check(c) => self.add_check_constraint(table, c.name.as_ref(), &c.expr, *not_valid).await,
                ast::TableConstraint::ForeignKey(fk) => self.add_foreign_key(table, fk, *not_valid).await,
                other => Err(DbError::unsupported(format!("ALTER TABLE … ADD {other}"))),
            },
            other => Err(DbError::unsupported(format!("ALTER TABLE … {other}"))),
        }
    }

    /// `ALTER COLUMN c [SET DATA] TYPE t [USING expr]`: the table rewritten
    /// with the column's values cast (or computed by USING) — refused as
    /// PostgreSQL refuses it where no assignment cast exists without USING
    /// (42804), and where the column's default or a CHECK constraint would
    /// not hold for the new type; the time column of a hypertable keeps its type.
    async fn change_column_type(
        &mut self,
        table: &Arc<TableDef>,
        i: usize,
        data_type: &ast::DataType,
        using: Option<&ast::Expr>,
    ) -> DbResult<Arc<TableDef>> {
        let (new_type, typmod) = crate::sql::bind::bind_data_type_mod(data_type)?;
        let column = &table.columns[i];
        if table.time_column == Some(i) {
            return Err(DbError::unsupported(format!(
                "changing the type of \"{}\", the time column of hypertable \"{}\"",
                column.name, table.name
            )));
        }
        if column.identity.is_some() && !matches!(new_type, DataType::Int16 | DataType::Int32 | DataType::Int64) {
            return Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "identity column type must be smallint, integer, or bigint"));
        }
        self.check_foreign_key_types(table, i, new_type)?;
        let mut columns = table.columns.clone();
        columns[i].data_type = new_type;
        columns[i].numeric_typmod = typmod;
        columns[i].frame_refs &= new_type == DataType::Bytea;
        let shape = Arc::new(TableDef { columns: columns.clone(), ..(**table).clone() });
        {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            let eval = self.eval_context();
            let mut binder = self.binder(&catalog, db, &eval, vec![]);
            if using.is_none() {
                let from = crate::sql::plan::Expr::Column(i, column.data_type);
                if binder.coerce_assignment(from, new_type, &column.name).is_err() {
                    return Err(DbError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("column \"{}\" cannot be cast automatically to type {}", column.name, new_type.name()),
                    )
                    .with_hint(format!("You might need to specify \"USING {}::{}\".", quoted(&column.name), new_type.name())));
                }
            }
            if let Some(default) = &column.default {
                let bound = binder.bind_default(default, &Scope::default())?;
                binder.coerce_assignment(bound, new_type, &column.name).map_err(|_| {
                    DbError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("default for column \"{}\" cannot be cast automatically to type {}", column.name, new_type.name()),
                    )
                })?;
            }
            for check in &table.checks {
                binder.bind_check_over_table(&shape, &check.expr)?;
            }
        }
        let value = match using {
            Some(e) => format!("({e})"),
            None => quoted(&column.name),
        };
        // An explicit cast to varchar(n) cuts a longer value; a stored value
        // must fit instead (22001 from the rewrite's length check).
        let cast_to = match new_type {
            DataType::Varchar(Some(_)) => "varchar".to_string(),
            _ => data_type.to_string(),
        };
        let select: Vec<String> = table
            .columns
            .iter()
            .enumerate()
            .map(|(k, c)| if k == i { format!("CAST({value} AS {cast_to})") } else { quoted(&c.name) })
            .collect();
        self.rewrite_table(table, columns, &select.join(", "), Rewrite::ColumnType).await
    }

    /// `ALTER COLUMN c ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY
    /// [(options)]`, as pg_dump writes an identity column (naming its
    /// sequence: `sequence`, else `<table>_<column>_seq`): a sequence bounded
    /// by the column's type; rows already there keep their values.
    pub(super) fn add_identity(
        &mut self,
        table: &Arc<TableDef>,
        i: usize,
        identity: crate::catalog::Identity,
        sequence: Option<(Option<String>, String)>,
        options: &[ast::SequenceOptions],
    ) -> DbResult<Arc<TableDef>> {
        let column = &table.columns[i];
        let refused = |code: &'static str, what: &str| {
            Err(DbError::new(code, format!("column \"{}\" of relation \"{}\" {what}", column.name, table.name)))
        };
        if !matches!(column.data_type, DataType::Int16 | DataType::Int32 | DataType::Int64) {
            return Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "identity column type must be smallint, integer, or bigint"));
        }
        if !column.not_null {
            return refused("55000", "must be declared NOT NULL before identity can be added");
        }
        if column.identity.is_some() {
            return refused("42611", "is already an identity column");
        }
        if column.default.is_some() {
            return refused("42611", "already has a default value");
        }
        let settings = sequences::sequence_settings(options, column.data_type)?;
        let (seq_schema, seq_name) = match sequence {
            Some((schema, name)) => (schema.unwrap_or_else(|| table.schema.clone()), name),
            None => (table.schema.clone(), format!("{}_{}_seq", table.name, column.name)),
        };
        let default = nextval_default(&seq_schema, &seq_name)
            .ok_or_else(|| DbError::syntax(format!("improper sequence name: {seq_name}")))?;
        let seq_oid = self.server.catalog.allocate_oid();
        let altered = self.change_table_in_database(table, |db, def| {
            let s = db
                .schemas
                .get_mut(&seq_schema)
                .ok_or_else(|| DbError::new(sqlstate::INVALID_SCHEMA_NAME, format!("schema \"{seq_schema}\" does not exist")))?;
            if s.relation_kind(&seq_name).is_some() {
                return Err(DbError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{seq_name}\" already exists")));
            }
            s.sequences.insert(seq_name.clone(), Arc::new(crate::catalog::Sequence::with_settings(seq_oid, seq_name.clone(), settings)));
            def.columns[i].identity = Some(identity);
            def.columns[i].default = Some(default);
            Ok(())
        })?;
        if self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::SequenceCreated { schema: seq_schema, name: seq_name, oid: seq_oid });
        }
        Ok(altered)
    }

    /// `ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE (columns)`, as pg_dump
    /// writes keys after the data: the constraint's unique index, built over
    /// the rows there are (23505 when they repeat a key), and for a primary
    /// key NOT NULL on its columns (23502 when one holds a NULL).
    async fn add_key_constraint(
        &mut self,
        table: &Arc<TableDef>,
        name: Option<&ast::Ident>,
        columns: &[ast::IndexColumn],
        primary: bool,
    ) -> DbResult<Arc<TableDef>> {
        let names: Vec<String> = columns.iter().map(ident_name_of_index_column).collect();
        let mut positions = Vec::with_capacity(names.len());
        for n in &names {
            let i = table.column_index(n).ok_or_else(|| {
                DbError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" named in key does not exist"))
            })?;
            positions.push(i);
        }
        let catalog = self.server.catalog.snapshot();
        let has_primary = catalog
            .database(&self.database)?
            .schemas
            .get(&table.schema)
            .is_some_and(|s| s.indexes.values().any(|i| i.primary && i.table == table.name));
        if primary && has_primary {
            return Err(DbError::new("42P16", format!("multiple primary keys for table \"{}\" are not allowed", table.name)));
        }
        let nullable: Vec<usize> = positions.iter().copied().filter(|&i| primary && !table.columns[i].not_null).collect();
        for &i in &nullable {
            self.check_no_nulls(table, i).await?;
        }
        let oid = self.server.catalog.allocate_oid();
        let given = name.map(ident_name);
        let created = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&table.schema)
                .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
            let index_name = match &given {
                Some(n) if s.relation_kind(n).is_some() => {
                    return Err(DbError::new(sqlstate::DUPLICATE_TABLE, format!("relation \"{n}\" already exists")));
                }
                Some(n) => n.clone(),
                None if primary => choose_relation_name(s, &table.name, "", "pkey"),
                None => choose_relation_name(s, &table.name, &names.join("_"), "key"),
            };
            s.indexes.insert(
                index_name.clone(),
                Arc::new(IndexDef {
                    oid,
                    name: index_name.clone(),
                    table: table.name.clone(),
                    unique: true,
                    primary,
                    constraint: true,
                    method: "btree".into(),
                    keys: names.iter().map(|c| crate::catalog::quote_ident(c)).collect(),
                    include: vec![],
                    predicate: None,
                }),
            );
            Ok(index_name)
        })?;
        if let Err(e) = self.check_new_unique_index(table, &created).await {
            let _ = self.server.catalog.update_database(&self.database, |db| {
                if let Some(s) = db.schemas.get_mut(&table.schema) {
                    s.indexes.retain(|_, i| i.oid != oid);
                }
                Ok(())
            });
            return Err(e);
        }
        if self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::IndexCreated { schema: table.schema.clone(), name: created, oid });
        }
        if nullable.is_empty() {
            return Ok(table.clone());
        }
        self.change_table(table, |_, def| {
            for &i in &nullable {
                def.columns[i].not_null = true;
            }
            Ok(())
        })
    }

    /// ADD COLUMN of a nullable column without a default, outside a
    /// transaction block: a catalog change, whatever the table holds. Rows
    /// already stored read NULL in the column — memtable blocks take a NULL
    /// column, segment files and WAL records stay as they are and read NULL
    /// past their own columns. The shards widen the table before the catalog
    /// names the column (a scan never asks a shard for a column it lacks),
    /// with every writer held off (the rewrite lock) and no checkpoint freezing
    /// rows in between (the commit gate); a catalog change that fails is
    /// undone on the shards.
    async fn add_column_in_place(
        &mut self,
        table: &Arc<TableDef>,
        column: ColumnDef,
        if_not_exists: bool,
    ) -> DbResult<Arc<TableDef>> {
        let _alone = self.rewrite_lock().await;
        let server = self.server.clone();
        let _no_freeze = server.checkpoints.gate.read().await;
        // The table as it is now that no writer runs: another ALTER may have gone first.
        let current = self
            .server
            .catalog
            .snapshot()
            .database(&self.database)?
            .table(&table.schema, &table.name)
            .filter(|t| t.oid == table.oid)
            .cloned()
            .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", table.name)))?;
        if current.column_index(&column.name).is_some() {
            if if_not_exists {
                self.notice(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{}\" of relation \"{}\" already exists, skipping", column.name, current.name),
                );
                return Ok(current);
            }
            return Err(DbError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{}\" of relation \"{}\" already exists", column.name, current.name),
            ));
        }
        let keep = current.columns.len();
        let mut types = current.column_types();
        types.push(column.data_type);
        // Undone on every shard if any step fails (also a shard that could not widen).
        let widened = self.widen_on_shards(current.oid, keep, types).await;
        let changed = widened.and_then(|_| {
            self.change_table(&current, |_, def| {
                if def.columns.len() != keep {
                    return Err(DbError::internal(format!("table \"{}\" changed during ADD COLUMN", def.name)));
                }
                def.columns.push(column);
                Ok(())
            })
        });
        match changed {
            Ok(def) => {
                // A last-row index entry built from narrower rows meanwhile goes.
                self.server.last_rows.forget_rows(def.oid);
                Ok(def)
            }
            Err(e) => {
                let _ = self.widen_on_shards(current.oid, keep, current.column_types()).await;
                Err(e)
            }
        }
    }

    /// Every shard's storage of `table` takes the columns `types`, its
    /// columns `keep..` reading NULL (`ShardStorage::widen_table`).
    async fn widen_on_shards(&self, table: crate::catalog::TableId, keep: usize, types: Vec<DataType>) -> DbResult<()> {
        for shard in &self.server.shards {
            let types = types.clone();
            shard.run(move |ctx| ctx.storage.borrow_mut().widen_table(table, keep, &types)).await?;
        }
        Ok(())
    }

    fn qualified(&self, table: &TableDef) -> String {
        format!("{}.{}", quoted(&table.schema), quoted(&table.name))
    }

    /// Whether a row of `table` there is now meets `condition` (SQL text over its columns).
    async fn any_row_where(&self, table: &TableDef, condition: &str) -> DbResult<bool> {
        let sql = format!("SELECT count(*) FROM {} WHERE {condition}", self.qualified(table));
        let (_, rows) = self.internal_query(&sql, &[], &[]).await?;
        Ok(rows.first().map(|b| b.columns[0].datum(0).as_i64().unwrap_or(0)).unwrap_or(0) > 0)
    }

    /// 23502 when column `i` of the rows there are holds a NULL (SET NOT NULL, a primary key).
    async fn check_no_nulls(&self, table: &TableDef, i: usize) -> DbResult<()> {
        let column = &table.columns[i].name;
        if self.any_row_where(table, &format!("{} IS NULL", quoted(column))).await? {
            return Err(DbError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!("column \"{column}\" of relation \"{}\" contains null values", table.name),
            ));
        }
        Ok(())
    }

    /// 23514 when a row there is makes CHECK `name`'s `expr` false.
    pub(super) async fn check_holds_for_rows(&self, table: &TableDef, name: &str, expr: &ast::Expr) -> DbResult<()> {
        if self.any_row_where(table, &format!("NOT ({expr})")).await? {
            return Err(DbError::new(
                sqlstate::CHECK_VIOLATION,
                format!("check constraint \"{name}\" of relation \"{}\" is violated by some row", table.name),
            ));
        }
        Ok(())
    }

    /// The CHECK constraints of an ADD COLUMN's column, made and checked
    /// before the column is added: the rows there are, with `fill` (the
    /// value they take) in the new column, must pass them (23514).
    async fn added_column_checks(
        &mut self,
        table: &Arc<TableDef>,
        column: &ColumnDef,
        c: &ast::ColumnDef,
        fill: &str,
    ) -> DbResult<Vec<crate::catalog::CheckConstraint>> {
        let written: Vec<(Option<String>, ast::Expr)> = c
            .options
            .iter()
            .filter_map(|o| match &o.option {
                ast::ColumnOption::Check(check) => Some((o.name.as_ref().or(check.name.as_ref()).map(ident_name), (*check.expr).clone())),
                _ => None,
            })
            .collect();
        if written.is_empty() {
            return Ok(Vec::new());
        }
        let mut shape = (**table).clone();
        shape.columns.push(column.clone());
        let fill = crate::sql::bind::sql_function::parse_expr(fill)?;
        for (given, expr) in written {
            let check = self.new_check(&Arc::new(shape.clone()), given, &expr)?;
            let over_rows = super::checks::replace_column_in(&expr, &column.name, &fill);
            self.check_holds_for_rows(table, &check.name, &over_rows).await?;
            shape.checks.push(check);
        }
        Ok(shape.checks.split_off(table.checks.len()))
    }

    /// The column of ADD COLUMN: type, NOT NULL, NULL, DEFAULT.
    fn added_column(&mut self, c: &ast::ColumnDef) -> DbResult<ColumnDef> {
        let (def, keys) = super::column_def(c)?;
        if !keys.is_empty() {
            return Err(DbError::unsupported("ADD COLUMN with PRIMARY KEY or UNIQUE"));
        }
        if def.identity.is_some() {
            return Err(DbError::unsupported("ADD COLUMN … GENERATED AS IDENTITY"));
        }
        Ok(def)
    }

    /// Applies a catalog-only change to `table` (and its schema's indexes).
    /// Inside a block the table and its indexes as they were are noted for
    /// ROLLBACK and for a crash before COMMIT.
    pub(super) fn change_table(
        &mut self,
        table: &Arc<TableDef>,
        change: impl FnOnce(&mut crate::catalog::Schema, &mut TableDef) -> DbResult<()>,
    ) -> DbResult<Arc<TableDef>> {
        let schema = table.schema.clone();
        self.change_table_in_database(table, |db, def| {
            let s = db.schemas.get_mut(&schema).ok_or_else(|| DbError::internal(format!("schema \"{schema}\" vanished")))?;
            change(s, def)
        })
    }

    /// `change_table` whose change may reach the whole database (made in
    /// the same catalog change as the table's).
    fn change_table_in_database(
        &mut self,
        table: &Arc<TableDef>,
        change: impl FnOnce(&mut crate::catalog::Database, &mut TableDef) -> DbResult<()>,
    ) -> DbResult<Arc<TableDef>> {
        let (out, before) = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&table.schema)
                .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
            let Some(current) = s.tables.get(&table.name).filter(|t| t.oid == table.oid).cloned() else {
                return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", table.name)));
            };
            let indexes: Vec<Arc<IndexDef>> = s.indexes.values().filter(|i| i.table == table.name).cloned().collect();
            let mut def = (*current).clone();
            change(db, &mut def)?;
            let s = db
                .schemas
                .get_mut(&table.schema)
                .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
            let def = Arc::new(def);
            s.tables.remove(&table.name);
            s.tables.insert(def.name.clone(), def.clone());
            Ok((def, (current, indexes)))
        })?;
        self.server.forget_derived_write_state(table.oid);
        if self.txn != TxnState::Idle {
            let (before, indexes) = before;
            self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::TableAltered { before, indexes }));
        }
        Ok(out)
    }

    /// Rewrites `table` with `columns`, its rows computed by `SELECT select FROM table`.
    async fn rewrite_table(
        &mut self,
        table: &Arc<TableDef>,
        columns: Vec<ColumnDef>,
        select: &str,
        why: Rewrite<'_>,
    ) -> DbResult<Arc<TableDef>> {
        let dropped = match why {
            Rewrite::DropColumn(name) => Some(name),
            Rewrite::AddColumn | Rewrite::ColumnType => None,
        };
        let in_block = self.txn != TxnState::Idle;
        if in_block
            && (self.pending.borrow().contains_key(&table.oid)
                || self.txn_replaced.borrow().contains(&table.oid)
                || self.txn_dropped_ranges.borrow().contains_key(&table.oid))
        {
            return Err(DbError::unsupported(format!(
                "ALTER TABLE … ADD/DROP COLUMN of \"{}\" after rows were written to it in the same transaction block",
                table.name
            )));
        }
        // In a block, held until the block ends: no other write may land in
        // the new table, which ROLLBACK removes again.
        let _alone = self.rewrite_lock().await;
        let made_in_block = self.tables_made_in_block().contains(&table.oid);
        self.refuse_rewrite_of_referenced(table, dropped, in_block && !made_in_block)?;
        let oid = self.server.catalog.allocate_oid();
        let temp = format!("{REWRITE_PREFIX}{oid}");
        let new_def = Arc::new(TableDef {
            oid,
            name: temp.clone(),
            schema: table.schema.clone(),
            columns,
            time_column: table.time_column.filter(|&t| t < table.columns.len()),
            // The rows are read back as their bytes and stored inline.
            frame_files: Vec::new(),
            // A dropped column takes the CHECK constraints that read it along.
            checks: table
                .checks
                .iter()
                .filter(|c| dropped.is_none_or(|d| !c.columns(table).iter().any(|&r| table.columns[r].name == d)))
                .cloned()
                .collect(),
            // So does a foreign key; one referencing the table itself follows its new OID.
            foreign_keys: table
                .foreign_keys
                .iter()
                .filter(|f| dropped.is_none_or(|d| !f.columns.iter().any(|c| c == d)))
                .map(|f| ForeignKey { parent: if f.parent == table.oid { oid } else { f.parent }, ..f.clone() })
                .collect(),
        });
        // The time column keeps its place unless it was dropped.
        let new_def = Arc::new(TableDef {
            time_column: table
                .time_column
                .and_then(|t| new_def.column_index(&table.columns[t].name)),
            ..(*new_def).clone()
        });
        self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&table.schema)
                .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
            s.tables.insert(temp.clone(), new_def.clone());
            Ok(())
        })?;
        let filled = self.fill_rewrite(table, &new_def, select, matches!(why, Rewrite::ColumnType)).await;
        if let Err(e) = filled {
            self.abandon_rewrite(&new_def).await;
            return Err(e);
        }
        crate::failpoint::hit("alter-before-swap");
        // One catalog change: the new table takes the old one's name; indexes
        // on a dropped column go with it (as in PostgreSQL).
        let swapped = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&table.schema)
                .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
            if s.tables.get(&table.name).is_none_or(|t| t.oid != table.oid) {
                return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", table.name)));
            }
            s.tables.remove(&temp);
            let final_def = Arc::new(TableDef {
                name: table.name.clone(),
                ..(*new_def).clone()
            });
            let on_dropped_column =
                |idx: &IndexDef| idx.table == table.name && dropped.is_some_and(|col| index_uses_column(idx, col));
            if in_block && !made_in_block {
                // The original leaves for the dropping list, rows and all,
                // until COMMIT (ROLLBACK and a crash put it back); the new
                // table is provisional, with the original's indexes (less
                // those on a dropped column) and serial sequences beside it.
                let indexes: Vec<Arc<IndexDef>> =
                    s.indexes.values().filter(|i| i.table == table.name && !on_dropped_column(i)).cloned().collect();
                let sequences: Vec<(String, Arc<Sequence>)> = s
                    .sequences
                    .iter()
                    .filter(|(k, _)| crate::catalog::is_serial_sequence_of(k, &table.name))
                    .map(|(k, q)| (k.clone(), q.clone()))
                    .collect();
                if !db.start_dropping(table, Vec::new()) {
                    return Err(DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", table.name)));
                }
                let s = db
                    .schemas
                    .get_mut(&table.schema)
                    .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
                s.indexes.extend(indexes.into_iter().map(|i| (i.name.clone(), i)));
                s.sequences.extend(sequences);
            } else {
                // Indexes on a dropped column go with it (as in PostgreSQL).
                s.indexes.retain(|_, idx: &mut Arc<IndexDef>| !on_dropped_column(idx));
            }
            let s = db
                .schemas
                .get_mut(&table.schema)
                .ok_or_else(|| DbError::internal(format!("schema \"{}\" vanished", table.schema)))?;
            s.tables.insert(table.name.clone(), final_def.clone());
            // Foreign keys referencing the table follow it to its new OID.
            for s in db.schemas.values_mut() {
                for t in s.tables.values_mut() {
                    if t.foreign_keys.iter().any(|f| f.parent == table.oid) {
                        let mut def = (**t).clone();
                        for f in &mut def.foreign_keys {
                            if f.parent == table.oid {
                                f.parent = final_def.oid;
                            }
                        }
                        *t = Arc::new(def);
                    }
                }
            }
            if in_block {
                db.provisional.retain(|p| p.oid != table.oid);
                db.provisional.push(crate::catalog::ProvisionalObject {
                    kind: crate::catalog::ProvisionalKind::Table,
                    schema: final_def.schema.clone(),
                    name: final_def.name.clone(),
                    oid: final_def.oid,
                });
            }
            Ok(final_def)
        });
        let final_def = match swapped {
            Ok(d) => d,
            Err(e) => {
                self.abandon_rewrite(&new_def).await;
                return Err(e);
            }
        };
        crate::failpoint::hit("alter-after-swap");
        self.server.forget_derived_write_state(table.oid);
        if in_block {
            self.note_rewritten_in_block(table, &final_def, made_in_block);
            if !made_in_block {
                return Ok(final_def);
            }
        }
        for shard in &self.server.shards {
            let old = table.oid;
            shard.run(move |ctx| ctx.storage.borrow_mut().drop_table(old)).await?;
        }
        Ok(final_def)
    }

    /// A rewrite of `table` that foreign keys reference: refused in a
    /// block (`in_block`: ROLLBACK could not put their reference back), and
    /// when it drops a column their key needs (2BP01).
    fn refuse_rewrite_of_referenced(&self, table: &TableDef, dropped: Option<&str>, in_block: bool) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        for (child, fk) in crate::sql::foreign_keys::referencing(db, table.oid) {
            if let Some(d) = dropped {
                let r = crate::sql::foreign_keys::resolve(db, &child, &fk)?;
                if r.key.columns.iter().any(|&c| table.columns[c].name == d) && !(child.oid == table.oid && fk.columns.iter().any(|c| c == d)) {
                    return Err(DbError::new(
                        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!("cannot drop column {d} of table {} because other objects depend on it", table.name),
                    )
                    .with_detail(format!("constraint {} on table {} depends on column {d} of table {}", fk.name, child.name, table.name))
                    .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                }
            }
            if in_block && child.oid != table.oid {
                return Err(DbError::unsupported(format!(
                    "an ALTER TABLE that rewrites \"{}\" inside a transaction block is not supported while foreign key \"{}\" of table \"{}\" references it",
                    table.name, fk.name, child.name
                )));
            }
        }
        Ok(())
    }

    /// Copies the rows into the rewrite's table (NOT NULL checked, unique keys too).
    /// Fills the rewrite's new table; `values_changed`: a column's values
    /// were computed anew (ALTER COLUMN … TYPE), so the CHECK constraints
    /// are checked too.
    async fn fill_rewrite(&self, table: &TableDef, new_def: &Arc<TableDef>, select: &str, values_changed: bool) -> DbResult<()> {
        let sql = if select.is_empty() {
            // No column left: the rows remain, with nothing in them.
            format!("SELECT 1 FROM {}", self.qualified(table))
        } else {
            format!("SELECT {select} FROM {}", self.qualified(table))
        };
        let (_, mut batches) = self.internal_query(&sql, &[], &[]).await?;
        if select.is_empty() {
            batches = batches.into_iter().map(|b| Batch::new(vec![], b.len)).collect();
        }
        for (i, c) in new_def.columns.iter().enumerate() {
            if c.not_null && batches.iter().any(|b| b.columns[i].null_count() > 0) {
                return Err(DbError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("column \"{}\" of relation \"{}\" contains null values", c.name, table.name),
                ));
            }
        }
        let named = TableDef {
            name: table.name.clone(),
            ..(**new_def).clone()
        };
        // The table's CHECKs held for these rows before (or were added NOT
        // VALID): a rewrite checks what the new columns need, as PostgreSQL's,
        // and all of them when a column's values were cast or computed.
        if values_changed {
            self.check_rewritten_rows(&named, &batches)?;
        } else {
            super::checks::check_column_constraints(&named, &batches)?;
        }
        for key in self.table_unique_keys_named(table, new_def)? {
            unique::check_no_duplicates(&key, new_def, &batches, &self.eval_context().format, false)?;
        }
        self.append_to_shards_holding_rewrites(new_def.oid, batches).await
    }

    /// The unique indexes of `table` over `new_def`'s columns (those still there).
    fn table_unique_keys_named(&self, table: &TableDef, new_def: &TableDef) -> DbResult<Vec<unique::UniqueKey>> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let Some(s) = db.schemas.get(&table.schema) else { return Ok(vec![]) };
        let renamed = TableDef {
            name: table.name.clone(),
            ..new_def.clone()
        };
        Ok(unique::unique_keys(s, &renamed))
    }

    async fn abandon_rewrite(&self, new_def: &Arc<TableDef>) {
        let _ = self
            .server
            .catalog
            .update_database(&self.database, |db| Ok(remove_table_entry(db, new_def)));
        let _ = self.release_table_storage(new_def.oid).await;
    }
}

fn column_of(table: &TableDef, name: &str) -> DbResult<usize> {
    table.column_index(name).ok_or_else(|| undefined_column(table, name))
}

fn undefined_column(table: &TableDef, name: &str) -> DbError {
    DbError::new(
        sqlstate::UNDEFINED_COLUMN,
        format!("column \"{name}\" of relation \"{}\" does not exist", table.name),
    )
}

/// Index keys as written, with column `old` renamed to `new` where a key is just that column.
fn rename_keys(keys: &[String], old: &str, new: &str) -> Vec<String> {
    keys.iter()
        .map(|k| {
            let mut words = k.splitn(2, ' ');
            let first = words.next().unwrap_or_default();
            let rest = words.next();
            let name = match first.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
                Some(q) => q.replace("\"\"", "\""),
                None => first.to_lowercase(),
            };
            if name != old {
                return k.clone();
            }
            let bare = new.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
                && new.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            let renamed = if bare { new.to_string() } else { quoted(new) };
            match rest {
                Some(r) => format!("{renamed} {r}"),
                None => renamed,
            }
        })
        .collect()
}

/// Whether an index names `column` in its keys or INCLUDE list.
fn index_uses_column(idx: &IndexDef, column: &str) -> bool {
    // Every identifier in the key (a column, or the columns of an expression).
    let mentions = |k: &String| {
        k.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '"'))
            .filter(|w| !w.is_empty())
            .any(|w| match w.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
                Some(q) => q.replace("\"\"", "\"") == column,
                None => w.to_lowercase() == column,
            })
    };
    idx.keys.iter().any(mentions) || idx.include.iter().any(|c| c == column)
}
