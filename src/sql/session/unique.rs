//! The session's side of UNIQUE / PRIMARY KEY enforcement (`sql/unique.rs`):
//! checking a write's keys against the table's key sets, keeping the keys of
//! an open transaction to take out again on ROLLBACK, and checking whole new
//! row sets (UPDATE, CREATE UNIQUE INDEX).
//! Must not: decide what is unique (the catalog's unique indexes do).

use super::*;
use crate::sql::unique::{self, AddedKeys, UniqueKey};

/// The arbiter of `INSERT … ON CONFLICT [target] DO NOTHING`.
pub enum ConflictArbiter {
    /// No target: every unique index.
    AnyUnique,
    /// `(a, b)`: the unique index on exactly these columns.
    Columns(Vec<usize>),
    /// `ON CONSTRAINT name`.
    Constraint(String),
}

impl Session {
    /// The unique indexes an ON CONFLICT arbiter names (42P10 when none does).
    pub(super) fn arbiter_keys(&self, table: &TableDef, arbiter: &ConflictArbiter) -> DbResult<Vec<UniqueKey>> {
        let keys = self.table_unique_keys(table)?;
        let arbiters: Vec<UniqueKey> = match arbiter {
            ConflictArbiter::AnyUnique => keys,
            ConflictArbiter::Columns(cols) => {
                let mut wanted = cols.clone();
                wanted.sort_unstable();
                keys.into_iter()
                    .filter(|k| {
                        let mut c = k.columns.clone();
                        c.sort_unstable();
                        c == wanted
                    })
                    .collect()
            }
            ConflictArbiter::Constraint(name) => keys.into_iter().filter(|k| k.name == *name).collect(),
        };
        if arbiters.is_empty() && !matches!(arbiter, ConflictArbiter::AnyUnique) {
            return Err(DbError::new(
                sqlstate::INVALID_COLUMN_REFERENCE,
                "there is no unique or exclusion constraint matching the ON CONFLICT specification",
            ));
        }
        Ok(arbiters)
    }

    /// INSERT … ON CONFLICT DO NOTHING: `batches` without the rows that would
    /// violate an `arbiters` index, against the table's keys and each other.
    pub(super) async fn skip_conflicting_rows(
        &mut self,
        table: &TableDef,
        arbiters: &[UniqueKey],
        mut batches: Vec<Batch>,
    ) -> DbResult<Vec<Batch>> {
        self.make_block_rows_whole(table).await?;
        let private = self.txn_replaced.borrow().contains(&table.oid);
        for key in arbiters {
            if private {
                // The block rewrote the table: its rows are all in `pending`.
                let rows = self.own_rows(table);
                batches = unique::drop_conflicts(&unique::key_set(&rows, &key.columns), key, batches);
                continue;
            }
            let set = self.built_key_set(table, key).await?;
            let s = set.lock().unwrap_or_else(|e| e.into_inner());
            batches = unique::drop_conflicts(&s.keys, key, batches);
        }
        Ok(batches)
    }

    /// The key set of `key`, built first if it is not (from the stored rows
    /// and the keys open blocks hold).
    pub(super) async fn built_key_set(&self, table: &TableDef, key: &UniqueKey) -> DbResult<unique::SharedKeySet> {
        let set = self.server.unique_keys.set(table.oid, &key.name);
        if !set.lock().map(|s| s.built).unwrap_or(false) {
            let rows = self.table_columns(table, &key.columns).await?;
            unique::build(&set, &rows, self.server.unique_keys.open_keys(table.oid, &key.name, &AddedKeys::default()));
        }
        Ok(set)
    }

    /// The keys of `key` other open blocks hold: stored at their COMMIT.
    pub(super) fn keys_of_other_blocks(&self, table: &TableDef, key: &UniqueKey) -> hashbrown::HashSet<Box<[u8]>> {
        self.server.unique_keys.open_keys(table.oid, &key.name, &self.txn_unique_keys)
    }

    /// The table's enforced unique indexes.
    pub(super) fn table_unique_keys(&self, table: &TableDef) -> DbResult<Vec<UniqueKey>> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        Ok(db.schemas.get(&table.schema).map(|s| unique::unique_keys(s, table)).unwrap_or_default())
    }

    /// All rows of `table` (committed, and this transaction's), `columns` only.
    pub(super) async fn table_columns(&self, table: &TableDef, columns: &[usize]) -> DbResult<Vec<Batch>> {
        let def = Arc::new(table.clone());
        let fields = columns.iter().map(|&c| Field::new(table.columns[c].name.clone(), table.columns[c].data_type)).collect();
        let plan = Plan::Scan {
            table: def,
            projection: columns.to_vec(),
            filter: None,
            fields,
        };
        let ctx = self.query_context(vec![], self.eval_context());
        operators::collect(&plan, &ctx).await
    }

    /// The block's own rows of `table` (those written before an ADD COLUMN
    /// read NULL in it).
    pub(super) fn own_rows(&self, table: &TableDef) -> Vec<Batch> {
        let types = table.column_types();
        let pending = self.pending.borrow();
        pending.get(&table.oid).map_or_else(Vec::new, |rows| rows.iter().map(|b| b.clone().padded_to(&types)).collect())
    }

    /// Adds the keys of rows about to be written; 23505 (and nothing added) on a duplicate.
    pub(super) async fn add_unique_keys(&mut self, table: &TableDef, batches: &[Batch]) -> DbResult<AddedKeys> {
        let mut added = AddedKeys::default();
        let format = self.eval_context().format;
        if !self.table_unique_keys(table)?.is_empty() {
            self.make_block_rows_whole(table).await?;
        }
        if self.txn_replaced.borrow().contains(&table.oid) {
            // The block rewrote the table: its rows (all in `pending`) are
            // private to it, so the check runs over them, not the shared sets.
            let mut rows = self.own_rows(table);
            rows.extend(batches.iter().cloned());
            for key in self.table_unique_keys(table)? {
                unique::check_no_duplicates_beside(&key, table, &rows, &format, false, self.keys_of_other_blocks(table, &key))?;
            }
            return Ok(added);
        }
        for key in self.table_unique_keys(table)? {
            let set = match self.built_key_set(table, &key).await {
                Ok(set) => set,
                Err(e) => {
                    added.undo();
                    return Err(e);
                }
            };
            match unique::add_keys(&set, &key, table, batches, &format) {
                Ok(a) => added.extend(a),
                Err(e) => {
                    added.undo();
                    return Err(e);
                }
            }
        }
        Ok(added)
    }

    /// After a write: a failed one takes its keys out; inside a transaction
    /// block they wait for COMMIT or ROLLBACK.
    pub(super) fn settle_unique_keys<T>(&mut self, added: AddedKeys, result: &DbResult<T>) {
        if result.is_err() {
            added.undo();
        } else if self.txn != TxnState::Idle {
            // Not stored until COMMIT: kept aside for rebuilt sets and rewrites.
            self.server.unique_keys.hold_open(&added);
            self.txn_unique_keys.extend(added);
        }
    }

    /// The open block's unique keys are no longer held aside: committed
    /// (stored now), or taken out when `undo` (ROLLBACK, a failed COMMIT).
    pub(super) fn end_block_keys(&self, keys: AddedKeys, undo: bool) {
        self.server.unique_keys.release_open(&keys);
        if undo {
            keys.undo_in(&self.server.unique_keys);
        }
    }

    /// Checks a table's complete new rows (UPDATE) against every unique index.
    pub(super) fn check_rows_unique(&self, table: &TableDef, rows: &[Batch]) -> DbResult<()> {
        let format = self.eval_context().format;
        for key in self.table_unique_keys(table)? {
            unique::check_no_duplicates_beside(&key, table, rows, &format, false, self.keys_of_other_blocks(table, &key))?;
        }
        Ok(())
    }

    /// CREATE UNIQUE INDEX: the table's rows must already be unique under it.
    pub(super) async fn check_new_unique_index(&self, table: &TableDef, index: &str) -> DbResult<()> {
        let Some(key) = self.table_unique_keys(table)?.into_iter().find(|k| k.name == index) else {
            return Ok(());
        };
        let rows = self.table_columns(table, &key.columns).await?;
        let key_over_rows = UniqueKey {
            name: key.name.clone(),
            columns: (0..key.columns.len()).collect(),
        };
        let projected = TableDef {
            columns: key.columns.iter().map(|&c| table.columns[c].clone()).collect(),
            ..table.clone()
        };
        unique::check_no_duplicates(&key_over_rows, &projected, &rows, &self.eval_context().format, true)?;
        self.server.unique_keys.forget_table(table.oid);
        Ok(())
    }
}
