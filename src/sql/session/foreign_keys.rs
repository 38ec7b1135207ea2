//! The session's side of FOREIGN KEY constraints (`sql/foreign_keys.rs`):
//! making one (CREATE TABLE's column `REFERENCES` and table constraints,
//! ALTER TABLE … ADD, which checks the rows there are), checking the keys a
//! write's rows reference (23503 when the referenced table lacks one), and
//! what removing referenced keys does — DELETE, UPDATE, TRUNCATE and DROP of
//! a referenced table: refused (NO ACTION, RESTRICT), or carried to the
//! referencing rows (ON DELETE CASCADE deletes them, ON UPDATE CASCADE gives
//! them the new key, SET NULL and SET DEFAULT change their key), computed as
//! new rows for every table touched and written in the statement's one
//! rewrite.
//! Must not: decide what a key is (the referenced unique index does) or
//! write rows itself (the statement's rewrite does).

use std::collections::VecDeque;

use hashbrown::HashSet;

use super::*;
use crate::catalog::{ForeignKey, ReferentialAction};
use crate::sql::foreign_keys::{self, HeldKeys, HoldKind};
use crate::sql::unique;
use crate::types::DataType;

/// Whether referenced keys go by a DELETE (ON DELETE applies) or an UPDATE (ON UPDATE).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyRemoval {
    Delete,
    Update,
}

/// The tables a statement rewrites, with their new rows (the statement's
/// own table first), and the holds that keep the keys it removes from being
/// referenced meanwhile (kept until the rewrite is done).
pub(super) struct Rewrites {
    pub tables: Vec<(Arc<TableDef>, Vec<Batch>)>,
    pub holds: Vec<HeldKeys>,
}

/// How many referencing steps one statement may take (a guard against a
/// cascade that would not end).
const MAX_CASCADE_STEPS: usize = 10_000;

/// The index id of a hold on all of a table's keys (TRUNCATE).
const ALL_KEYS: u32 = u32::MAX;

impl Session {
    /// A FOREIGN KEY as written, for `child` (the table as it will be) over
    /// its `columns`. `own_keys`: `child`'s unique keys when it is being made
    /// (it may reference itself), see [`foreign_keys::candidate_keys`].
    pub(super) fn new_foreign_key(
        &self,
        child: &TableDef,
        given: &ast::ForeignKeyConstraint,
        columns: Vec<String>,
        own_keys: Option<&[(u32, Vec<String>, bool)]>,
    ) -> DbResult<ForeignKey> {
        if matches!(given.match_kind, Some(ast::ConstraintReferenceMatchKind::Partial)) {
            return Err(DbError::unsupported("MATCH PARTIAL not yet implemented"));
        }
        if given.characteristics.as_ref().is_some_and(|c| c.deferrable == Some(true) || c.initially.is_some()) {
            return Err(DbError::unsupported(format!(
                "DEFERRABLE foreign keys are not supported (\"{}\" of table \"{}\"): Brewric checks them at each statement",
                given.name.as_ref().map(ident_name).unwrap_or_default(),
                child.name
            )));
        }
        for c in &columns {
            if child.column_index(c).is_none() {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{c}\" referenced in foreign key constraint does not exist"),
                ));
            }
        }
        let parts = object_name_parts(&given.foreign_table);
        let names_child = match parts.as_slice() {
            [t] => *t == child.name && own_keys.is_some(),
            [s, t] => *s == child.schema && *t == child.name,
            _ => false,
        };
        let parent: Arc<TableDef> = if names_child {
            Arc::new(child.clone())
        } else {
            self.lookup_table(&given.foreign_table)?
        };
        let self_reference = parent.oid == child.oid;
        let candidates = match own_keys {
            Some(keys) if self_reference => keys.to_vec(),
            _ => {
                let catalog = self.server.catalog.snapshot();
                let db = catalog.database(&self.database)?;
                let schema = db.schemas.get(&parent.schema).ok_or_else(|| DbError::internal("referenced table's schema is gone"))?;
                foreign_keys::candidate_keys(schema, &parent)
            }
        };
        let referred: Vec<String> = given.referred_columns.iter().map(ident_name).collect();
        for r in &referred {
            if parent.column_index(r).is_none() {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{r}\" referenced in foreign key constraint does not exist"),
                ));
            }
        }
        let (parent_index, key_positions) = foreign_keys::referenced_index(&parent.name, &candidates, &referred)?;
        let keys = candidates.iter().find(|c| c.0 == parent_index).map(|c| c.1.clone()).unwrap_or_default();
        if key_positions.len() != columns.len() {
            return Err(DbError::new(
                sqlstate::INVALID_FOREIGN_KEY,
                "number of referencing and referenced columns for foreign key disagree",
            ));
        }
        let name = match given.name.as_ref() {
            Some(n) => ident_name(n),
            None => self.foreign_key_name(child, &columns),
        };
        for (c, &p) in columns.iter().zip(&key_positions) {
            let from = child.columns[child.column_index(c).unwrap_or_default()].data_type;
            let to = parent.column_index(&keys[p]).map(|i| parent.columns[i].data_type).unwrap_or(from);
            if !foreign_keys::key_types_compatible(from, to) {
                return Err(DbError::new(sqlstate::DATATYPE_MISMATCH, format!("foreign key constraint \"{name}\" cannot be implemented"))
                    .with_detail(format!(
                        "Key columns \"{c}\" and \"{}\" are of incompatible types: {} and {}.",
                        keys[p],
                        from.name(),
                        to.name()
                    )));
            }
        }
        let action = |a: Option<ast::ReferentialAction>| match a {
            None | Some(ast::ReferentialAction::NoAction) => ReferentialAction::NoAction,
            Some(ast::ReferentialAction::Restrict) => ReferentialAction::Restrict,
            Some(ast::ReferentialAction::Cascade) => ReferentialAction::Cascade,
            Some(ast::ReferentialAction::SetNull) => ReferentialAction::SetNull,
            Some(ast::ReferentialAction::SetDefault) => ReferentialAction::SetDefault,
        };
        Ok(ForeignKey {
            oid: self.server.catalog.allocate_oid(),
            name,
            columns,
            parent: parent.oid,
            parent_index,
            key_positions,
            on_delete: action(given.on_delete),
            on_update: action(given.on_update),
            match_full: matches!(given.match_kind, Some(ast::ConstraintReferenceMatchKind::Full)),
        })
    }

    /// PostgreSQL's name for a foreign key: `<table>_<col>[_<col>…]_fkey`,
    /// numbered while a constraint of the table has it.
    fn foreign_key_name(&self, child: &TableDef, columns: &[String]) -> String {
        let base = format!("{}_{}_fkey", child.name, columns.join("_"));
        let taken = |n: &str| {
            child.foreign_keys.iter().any(|f| f.name == n)
                || child.checks.iter().any(|c| c.name == n)
                || self.table_unique_keys(child).is_ok_and(|keys| keys.iter().any(|k| k.name == n))
        };
        let mut name = base.clone();
        let mut n = 0;
        while taken(&name) {
            n += 1;
            name = format!("{}{n}", base);
        }
        name
    }

    /// ALTER COLUMN … TYPE of column `i` of `table` to `new_type`: the keys
    /// of the foreign keys it is part of (either side) must stay comparable (42804).
    pub(super) fn check_foreign_key_types(&self, table: &TableDef, i: usize, new_type: DataType) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let mut pairs = Vec::new();
        for fk in &table.foreign_keys {
            let r = foreign_keys::resolve(db, table, fk)?;
            for (p, &c) in r.child_columns.iter().enumerate() {
                if c == i {
                    pairs.push((fk.name.clone(), r.parent.columns[r.key.columns[p]].clone()));
                }
            }
        }
        for (child, fk) in foreign_keys::referencing(db, table.oid) {
            let r = foreign_keys::resolve(db, &child, &fk)?;
            for (p, &k) in r.key.columns.iter().enumerate() {
                if k == i {
                    pairs.push((fk.name.clone(), child.columns[r.child_columns[p]].clone()));
                }
            }
        }
        for (name, other) in pairs {
            if !foreign_keys::key_types_compatible(new_type, other.data_type) {
                return Err(DbError::new(sqlstate::DATATYPE_MISMATCH, format!("foreign key constraint \"{name}\" cannot be implemented"))
                    .with_detail(format!(
                        "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                        table.columns[i].name,
                        other.name,
                        new_type.name(),
                        other.data_type.name()
                    )));
            }
        }
        Ok(())
    }

    /// `ALTER TABLE … ADD [CONSTRAINT n] FOREIGN KEY …`: the rows there are
    /// must reference keys the referenced table has (23503), then it is kept.
    pub(super) async fn add_foreign_key(
        &mut self,
        table: &Arc<TableDef>,
        given: &ast::ForeignKeyConstraint,
        not_valid: bool,
    ) -> DbResult<Arc<TableDef>> {
        let columns: Vec<String> = given.columns.iter().map(ident_name).collect();
        if let Some(n) = &given.name {
            let n = ident_name(n);
            if table.foreign_keys.iter().any(|f| f.name == n) || table.checks.iter().any(|c| c.name == n) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("constraint \"{n}\" for relation \"{}\" already exists", table.name),
                ));
            }
        }
        let fk = self.new_foreign_key(table, given, columns, None)?;
        // Held (outside a block) until the constraint is in the catalog,
        // where writes and removals see it.
        let _held = if not_valid {
            None
        } else {
            let rows = self.all_rows(table).await?;
            let held = self.check_referenced_keys(table, &fk, &rows).await?;
            match self.txn {
                TxnState::Idle => held,
                _ => {
                    self.txn_fk_holds.extend(held);
                    None
                }
            }
        };
        self.change_table(table, |_, def| {
            def.foreign_keys.push(fk);
            Ok(())
        })
    }

    /// Every foreign key of `table` holds for the rows of `batches` (about
    /// to be written): each key they reference is one the referenced table
    /// has, else 23503. The referenced keys are held so that no other
    /// transaction removes them meanwhile: inside a block until it ends,
    /// else until the caller drops what this returns (after its write).
    pub(super) async fn check_foreign_keys(&mut self, table: &TableDef, batches: &[Batch]) -> DbResult<Vec<HeldKeys>> {
        let mut held = Vec::new();
        for fk in &table.foreign_keys {
            held.extend(self.check_referenced_keys(table, fk, batches).await?);
        }
        if self.txn != TxnState::Idle {
            self.txn_fk_holds.append(&mut held);
        }
        Ok(held)
    }

    /// [`check_foreign_keys`](Self::check_foreign_keys) for one constraint.
    async fn check_referenced_keys(&mut self, table: &TableDef, fk: &ForeignKey, batches: &[Batch]) -> DbResult<Option<HeldKeys>> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?.clone();
        let r = foreign_keys::resolve(&db, table, fk)?;
        // The referenced keys, each with a row that references it (for the message).
        let wanted = foreign_keys::referenced_keys(table, fk, &r.child_columns, batches)?;
        if wanted.is_empty() {
            return Ok(None);
        }
        // A table referencing itself: the rows written are keys too.
        let own_new: HashSet<Box<[u8]>> =
            if r.parent.oid == table.oid { unique::key_set(batches, &r.key.columns) } else { HashSet::new() };
        let mut held = None;
        self.make_block_rows_whole(&r.parent).await?;
        let missing = if self.txn_replaced.borrow().contains(&r.parent.oid) {
            // The block rewrote the referenced table (and holds the rewrite
            // lock): its rows are private to it.
            let present = unique::key_set(&self.own_rows(&r.parent), &r.key.columns);
            wanted.iter().find(|(k, _)| !present.contains(*k) && !own_new.contains(*k)).map(|(_, at)| *at)
        } else {
            let set = self.built_key_set(&r.parent, &r.key).await?;
            let uncommitted = self.keys_of_other_blocks(&r.parent, &r.key);
            let holds = self.server.foreign_key_holds.clone();
            let mut locked = holds.lock();
            let me = self.fk_owner;
            let truncating = locked.held_by_others(HoldKind::Removing, r.parent.oid, ALL_KEYS, b"", me);
            let missing = {
                let s = set.lock().unwrap_or_else(|e| e.into_inner());
                wanted
                    .iter()
                    .find(|(k, _)| {
                        !own_new.contains(*k)
                            && (truncating
                                || !s.keys.contains(*k)
                                || uncommitted.contains(*k)
                                || locked.held_by_others(HoldKind::Removing, r.parent.oid, fk.parent_index, k, me))
                    })
                    .map(|(_, at)| *at)
            };
            if missing.is_none() {
                let keys = wanted.keys().cloned().collect();
                held = Some(locked.hold(HoldKind::Referenced, r.parent.oid, fk.parent_index, me, keys));
            }
            missing
        };
        let Some((bi, row)) = missing else { return Ok(held) };
        let format = self.eval_context().format;
        let (names, values) = foreign_keys::key_text(table, &foreign_keys::columns_as_written(fk, &r.child_columns), &batches[bi], row, &format);
        Err(not_present(table, fk, &r.parent, &names, &values))
    }

    /// A DELETE or UPDATE of `table` leaving `new_rows`: what its foreign
    /// keys make of it. Keys that go while rows reference them are refused
    /// (NO ACTION, RESTRICT: 23503) or carried to the referencing rows (ON
    /// DELETE CASCADE deletes them; ON UPDATE CASCADE gives them the
    /// referenced row's new key; SET NULL, SET DEFAULT), step after step
    /// through the tables they reach. `old_rows`: the table's rows before
    /// (an UPDATE's row for row with `new_rows`, as ON UPDATE CASCADE needs
    /// them; read only when a foreign key references `table`, see
    /// [`is_referenced`](Self::is_referenced)). Returns every table to
    /// rewrite, `table` first.
    pub(super) async fn referential_actions(
        &mut self,
        table: &Arc<TableDef>,
        new_rows: Vec<Batch>,
        removal: KeyRemoval,
        old_rows: Vec<Batch>,
    ) -> DbResult<Rewrites> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?.clone();
        let mut out = Rewrites { tables: vec![(table.clone(), new_rows)], holds: Vec::new() };
        if foreign_keys::referencing(&db, table.oid).is_empty() {
            return Ok(out);
        }
        // (which table of `out`, its rows before the step, how they changed).
        let mut work: VecDeque<(usize, Vec<Batch>, KeyRemoval)> = VecDeque::from([(0, old_rows, removal)]);
        let format = self.eval_context().format;
        let mut steps = 0;
        while let Some((at, before, removal)) = work.pop_front() {
            let parent = out.tables[at].0.clone();
            for (child, fk) in foreign_keys::referencing(&db, parent.oid) {
                steps += 1;
                if steps > MAX_CASCADE_STEPS {
                    return Err(DbError::new(
                        sqlstate::PROGRAM_LIMIT_EXCEEDED,
                        format!("foreign key actions from table \"{}\" take more than {MAX_CASCADE_STEPS} steps", table.name),
                    ));
                }
                let r = foreign_keys::resolve(&db, &child, &fk)?;
                let after = unique::key_set(&out.tables[at].1, &r.key.columns);
                let removed: HashSet<Box<[u8]>> =
                    unique::key_set(&before, &r.key.columns).into_iter().filter(|k| !after.contains(k)).collect();
                if removed.is_empty() {
                    continue;
                }
                {
                    let holds = self.server.foreign_key_holds.clone();
                    let mut locked = holds.lock();
                    let me = self.fk_owner;
                    if let Some(k) = removed.iter().find(|k| locked.held_by_others(HoldKind::Referenced, parent.oid, fk.parent_index, k, me)) {
                        let (names, values) = key_of_rows(&parent, &r.key.columns, &before, k, &format);
                        return Err(still_referenced(&parent, &child, &fk, &names, &values)
                            .with_hint("A transaction that has not ended references it."));
                    }
                    let held = locked.hold(HoldKind::Removing, parent.oid, fk.parent_index, me, removed.iter().cloned().collect());
                    self.keep_hold(&mut out, held);
                }
                let ci = match out.tables.iter().position(|(t, _)| t.oid == child.oid) {
                    Some(i) => i,
                    None => {
                        let rows = self.all_rows(&child).await?;
                        out.tables.push((child.clone(), rows));
                        out.tables.len() - 1
                    }
                };
                let hits: Vec<Vec<u32>> = out.tables[ci]
                    .1
                    .iter()
                    .map(|b| {
                        (0..b.len)
                            .filter(|&row| unique::encoded_key(b, &r.child_columns, row).is_some_and(|k| removed.contains(&k)))
                            .map(|row| row as u32)
                            .collect()
                    })
                    .collect();
                let Some((bi, first)) = hits.iter().enumerate().find_map(|(bi, h)| h.first().map(|&row| (bi, row as usize))) else {
                    continue;
                };
                let action = match removal {
                    KeyRemoval::Delete => fk.on_delete,
                    KeyRemoval::Update => fk.on_update,
                };
                let verb = match removal {
                    KeyRemoval::Delete => "DELETE",
                    KeyRemoval::Update => "UPDATE",
                };
                let child_rows = std::mem::take(&mut out.tables[ci].1);
                // The referenced table's rows now (the same rows when it references itself).
                let parent_rows: &[Batch] = if ci == at { &child_rows } else { &out.tables[at].1 };
                let unsupported = || {
                    DbError::unsupported(format!(
                        "ON {verb} {} (foreign key \"{}\" on table \"{}\") is not supported yet",
                        action.sql(),
                        fk.name,
                        child.name
                    ))
                };
                // Referencing rows whose key changes: each hit row's new values of the key columns.
                let new_values: Option<Vec<Vec<Vec<Datum>>>> = match action {
                    ReferentialAction::NoAction | ReferentialAction::Restrict => {
                        let (_, values) = foreign_keys::key_text(&child, &r.child_columns, &child_rows[bi], first, &format);
                        let names: Vec<&str> = r.key.columns.iter().map(|&c| parent.columns[c].name.as_str()).collect();
                        return Err(still_referenced(&parent, &child, &fk, &names.join(", "), &values));
                    }
                    ReferentialAction::Cascade if removal == KeyRemoval::Delete => None,
                    ReferentialAction::Cascade => {
                        // The key the referenced row has now (`before` and the
                        // rows now are an UPDATE's: row for row).
                        let after = parent_rows;
                        let moved = moved_keys(&before, after, &r.key.columns, &removed).ok_or_else(unsupported)?;
                        let values = child_rows
                            .iter()
                            .zip(&hits)
                            .map(|(b, h)| {
                                h.iter()
                                    .map(|&row| {
                                        let key = unique::encoded_key(b, &r.child_columns, row as usize).unwrap_or_default();
                                        let (pb, pr) = moved.get(&key).copied().ok_or_else(unsupported)?;
                                        Ok(r.key.columns.iter().map(|&pc| after[pb].columns[pc].datum(pr)).collect())
                                    })
                                    .collect::<DbResult<Vec<Vec<Datum>>>>()
                            })
                            .collect::<DbResult<Vec<_>>>()?;
                        Some(values)
                    }
                    ReferentialAction::SetNull => {
                        Some(hits.iter().map(|h| h.iter().map(|_| vec![Datum::Null; r.key.columns.len()]).collect()).collect())
                    }
                    ReferentialAction::SetDefault => Some(self.default_key_values(&child, &r.child_columns, &hits)?),
                };
                let (new_child_rows, changed) = match new_values {
                    None => {
                        let kept = child_rows
                            .iter()
                            .zip(&hits)
                            .map(|(b, h)| {
                                let keep: Vec<u32> = (0..b.len as u32).filter(|row| h.binary_search(row).is_err()).collect();
                                b.take(&keep)
                            })
                            .collect();
                        (kept, KeyRemoval::Delete)
                    }
                    Some(values) => {
                        let eval_ctx = self.eval_context();
                        let mut changed_rows = Vec::new();
                        let mut rows = Vec::with_capacity(child_rows.len());
                        for ((b, h), v) in child_rows.iter().zip(&hits).zip(&values) {
                            let mut b = b.clone();
                            for (p, &c) in r.child_columns.iter().enumerate() {
                                let column: Vec<Datum> = v.iter().map(|row| row[p].clone()).collect();
                                let from = match action {
                                    ReferentialAction::SetDefault => child.columns[c].data_type,
                                    _ => parent.columns[r.key.columns[p]].data_type,
                                };
                                b = replace_values(&b, c, h, &column, from, &eval_ctx)?;
                            }
                            changed_rows.push(b.take(h));
                            rows.push(b);
                        }
                        self.check_constraints(&child, &changed_rows)?;
                        if action == ReferentialAction::SetDefault {
                            // The defaults must be keys the referenced table keeps.
                            let present = unique::key_set(parent_rows, &r.key.columns);
                            for b in &changed_rows {
                                for row in 0..b.len {
                                    let Some(k) = foreign_keys::row_key(&child, &fk, &r.child_columns, b, row)? else { continue };
                                    if !present.contains(&k) {
                                        let (names, values) =
                                            foreign_keys::key_text(&child, &foreign_keys::columns_as_written(&fk, &r.child_columns), b, row, &format);
                                        return Err(not_present(&child, &fk, &parent, &names, &values));
                                    }
                                }
                            }
                        }
                        (rows, KeyRemoval::Update)
                    }
                };
                out.tables[ci].1 = new_child_rows;
                work.push_back((ci, child_rows, changed));
            }
        }
        Ok(out)
    }

    /// ON … SET DEFAULT: for each hit row (`hits`, per batch) the defaults
    /// of `columns` (in key order), each default computed once per row.
    fn default_key_values(&self, child: &TableDef, columns: &[usize], hits: &[Vec<u32>]) -> DbResult<Vec<Vec<Vec<Datum>>>> {
        let n: usize = hits.iter().map(Vec::len).sum();
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval_ctx = self.eval_context();
        let binder = self.binder(&catalog, db, &eval_ctx, vec![]);
        let empty = HashMap::new();
        let cx = EvalInputs { eval: &eval_ctx, params: &[], outer: &[], subqueries: &empty };
        let rows = Batch::new(Vec::new(), n);
        let mut per_column = Vec::with_capacity(columns.len());
        for &c in columns {
            let e = self.default_expr(&binder, &child.columns[c])?;
            per_column.push(eval(&e, &rows, &cx)?.into_column(n));
        }
        let mut at = 0;
        Ok(hits
            .iter()
            .map(|h| {
                h.iter()
                    .map(|_| {
                        let row: Vec<Datum> = per_column.iter().map(|col| col.datum(at)).collect();
                        at += 1;
                        row
                    })
                    .collect()
            })
            .collect())
    }

    /// Whether a foreign key references `table` (a DELETE or UPDATE of it
    /// then hands its old rows to `referential_actions`).
    pub(super) fn is_referenced(&self, table: &TableDef) -> DbResult<bool> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        Ok(!foreign_keys::referencing(db, table.oid).is_empty())
    }

    /// A removal's hold: kept by the block until it ends, or by the statement until its rewrite is done.
    fn keep_hold(&mut self, out: &mut Rewrites, held: HeldKeys) {
        if self.txn != TxnState::Idle {
            self.txn_fk_holds.push(held);
        } else {
            out.holds.push(held);
        }
    }

    /// Every row of `table` this session sees, all columns.
    async fn all_rows(&self, table: &TableDef) -> DbResult<Vec<Batch>> {
        let all: Vec<usize> = (0..table.columns.len()).collect();
        self.table_columns(table, &all).await
    }

    /// Writes the new rows of every table `rewrites` holds as one rewrite
    /// (autocommit: one write, all of it or none; in a block: the block's
    /// view of each until COMMIT), then lets its holds go.
    pub(super) async fn rewrite_tables(&mut self, rewrites: Rewrites) -> DbResult<()> {
        let Rewrites { mut tables, holds } = rewrites;
        let result = if tables.len() == 1 {
            let (table, rows) = tables.remove(0);
            self.rewrite_rows(&table, rows).await
        } else if self.txn == TxnState::Idle {
            let mut write = self.begin_write();
            let prepared = async {
                for (table, rows) in tables {
                    self.prepare_replacement(&mut write, &table, rows).await?;
                }
                Ok(())
            }
            .await;
            self.settle_write(write, prepared).await
        } else {
            for (table, rows) in tables {
                self.rewrite_rows(&table, rows).await?;
            }
            Ok(())
        };
        drop(holds);
        result
    }

    /// TRUNCATE of `tables`: with `cascade` the tables referencing them are
    /// added (NOTICE for each), else one that is not truncated too refuses
    /// it (0A000). The keys of every truncated table are held as removed
    /// (by the block, or until `holds` is dropped), and a table whose keys
    /// an open transaction's rows reference refuses it (23503).
    pub(super) fn truncate_closure(&mut self, tables: Vec<Arc<TableDef>>, cascade: bool) -> DbResult<(Vec<Arc<TableDef>>, Vec<HeldKeys>)> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?.clone();
        let mut all = tables;
        let mut i = 0;
        while i < all.len() {
            let parent = all[i].clone();
            for (child, _) in foreign_keys::referencing(&db, parent.oid) {
                if all.iter().any(|t| t.oid == child.oid) {
                    continue;
                }
                if !cascade {
                    return Err(DbError::unsupported("cannot truncate a table referenced in a foreign key constraint")
                    .with_detail(format!("Table \"{}\" references \"{}\".", child.name, parent.name))
                    .with_hint(format!("Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.", child.name)));
                }
                self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("truncate cascades to table \"{}\"", child.name));
                all.push(child);
            }
            i += 1;
        }
        let holds = self.server.foreign_key_holds.clone();
        let mut locked = holds.lock();
        let mut held = Vec::new();
        for t in &all {
            if !foreign_keys::referencing(&db, t.oid).is_empty() {
                if locked.any_held_by_others(HoldKind::Referenced, t.oid, self.fk_owner) {
                    return Err(DbError::new(
                        sqlstate::FOREIGN_KEY_VIOLATION,
                        format!("cannot truncate table \"{}\": a transaction that has not ended references its rows", t.name),
                    ));
                }
                held.push(locked.hold(HoldKind::Removing, t.oid, ALL_KEYS, self.fk_owner, vec![Box::from(&b""[..])]));
            }
        }
        drop(locked);
        if self.txn != TxnState::Idle {
            self.txn_fk_holds.extend(held);
            return Ok((all, Vec::new()));
        }
        Ok((all, held))
    }

    /// DROP TABLE of `table`: the foreign keys of other tables (not in
    /// `dropping`) that reference it refuse it (2BP01), or with CASCADE go
    /// (NOTICE for each).
    pub(super) fn drop_referencing_foreign_keys(&mut self, table: &Arc<TableDef>, dropping: &[TableId], cascade: bool) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?.clone();
        let dependents: Vec<(Arc<TableDef>, ForeignKey)> = foreign_keys::referencing(&db, table.oid)
            .into_iter()
            .filter(|(child, _)| child.oid != table.oid && !dropping.contains(&child.oid))
            .collect();
        if dependents.is_empty() {
            return Ok(());
        }
        if !cascade {
            let lines: Vec<String> = dependents
                .iter()
                .map(|(child, fk)| format!("constraint {} on table {} depends on table {}", fk.name, child.name, table.name))
                .collect();
            return Err(DbError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop table {} because other objects depend on it", table.name),
            )
            .with_detail(lines.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        for (child, fk) in dependents {
            self.notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("drop cascades to constraint {} on table {}", fk.name, child.name),
            );
            self.change_table(&child, |_, def| {
                def.foreign_keys.retain(|f| f.oid != fk.oid);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The foreign keys of other tables that reference the unique index
    /// `index` of `table` (dropping it would leave them without a key): 2BP01.
    pub(super) fn refuse_drop_of_referenced_key(&self, table: &TableDef, index: &IndexDef, what: &str) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let dependents: Vec<String> = foreign_keys::referencing(db, table.oid)
            .into_iter()
            .filter(|(_, fk)| fk.parent_index == index.oid)
            .map(|(child, fk)| format!("constraint {} on table {} depends on index {}", fk.name, child.name, index.name))
            .collect();
        if dependents.is_empty() {
            return Ok(());
        }
        Err(DbError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop {what} {} on table {} because other objects depend on it", index.name, table.name),
        )
        .with_detail(dependents.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."))
    }
}

/// 23503 for a row whose key the referenced table does not have.
fn not_present(child: &TableDef, fk: &ForeignKey, parent: &TableDef, names: &str, values: &str) -> DbError {
    DbError::new(
        sqlstate::FOREIGN_KEY_VIOLATION,
        format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", child.name, fk.name),
    )
    .with_detail(format!("Key ({names})=({values}) is not present in table \"{}\".", parent.name))
}

/// 23503 for a key that goes while `child`'s rows reference it.
fn still_referenced(parent: &TableDef, child: &TableDef, fk: &ForeignKey, names: &str, values: &str) -> DbError {
    DbError::new(
        sqlstate::FOREIGN_KEY_VIOLATION,
        format!(
            "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
            parent.name, fk.name, child.name
        ),
    )
    .with_detail(format!("Key ({names})=({values}) is still referenced from table \"{}\".", child.name))
}

/// The text of key `key` over `columns`, found in `rows` (for a message).
fn key_of_rows(table: &TableDef, columns: &[usize], rows: &[Batch], key: &[u8], format: &FormatContext) -> (String, String) {
    for b in rows {
        for r in 0..b.len {
            if unique::encoded_key(b, columns, r).is_some_and(|k| *k == *key) {
                return foreign_keys::key_text(table, columns, b, r, format);
            }
        }
    }
    let names: Vec<&str> = columns.iter().map(|&c| table.columns[c].name.as_str()).collect();
    (names.join(", "), "?".into())
}

/// `batch` with column `c`'s values in the rows `at` (sorted) replaced by
/// `values` (of type `from`, cast to the column's).
fn replace_values(batch: &Batch, c: usize, at: &[u32], values: &[Datum], from: DataType, ctx: &EvalContext) -> DbResult<Batch> {
    let col = &batch.columns[c];
    let to = col.data_type;
    let mut datums = Vec::with_capacity(batch.len);
    let mut next = at.iter().zip(values).peekable();
    for row in 0..batch.len {
        match next.next_if(|(&r, _)| r as usize == row) {
            Some((_, Datum::Null)) => datums.push(Datum::Null),
            Some((_, v)) => datums.push(crate::exec::kernels::cast_datum(v, from, to, ctx)?),
            None => datums.push(col.datum(row)),
        }
    }
    let mut columns: Vec<Column> = batch.columns.iter().map(|c| (**c).clone()).collect();
    columns[c] = Column::from_datums(to, &datums);
    Ok(Batch::from_columns(columns))
}

/// For each key of `removed`, where the row that had it in `before` stands
/// in `after` (an UPDATE's rows, row for row); None when they are not.
fn moved_keys(
    before: &[Batch],
    after: &[Batch],
    columns: &[usize],
    removed: &HashSet<Box<[u8]>>,
) -> Option<foreign_keys::KeyRows> {
    if before.len() != after.len() || before.iter().zip(after).any(|(b, a)| b.len != a.len) {
        return None;
    }
    let mut moved = hashbrown::HashMap::new();
    for (bi, b) in before.iter().enumerate() {
        for row in 0..b.len {
            if let Some(k) = unique::encoded_key(b, columns, row).filter(|k| removed.contains(k)) {
                moved.insert(k, (bi, row));
            }
        }
    }
    Some(moved)
}
