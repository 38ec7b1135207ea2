//! UNIQUE and PRIMARY KEY enforcement. Each unique index over plain columns
//! has a set of the key values the table holds (committed rows, plus rows of
//! transactions that inserted them and have not ended), built by a scan when
//! first needed. A write adds its rows' keys under the set's lock and fails
//! with 23505 on a key already there or repeated in the write; a rolled-back
//! or failed write takes its keys out again. Rows with a NULL in the key are
//! never in conflict, as in PostgreSQL. DELETE, UPDATE, TRUNCATE and DROP
//! forget a table's sets (rebuilt from the rows at the next write). The keys
//! of open transaction blocks are not stored yet, so they are also kept
//! aside ([`UniqueKeySets::hold_open`]) until the block ends: a rebuilt set
//! takes them again, and a rewrite's new rows are checked against them.
//! Deviation from PostgreSQL: a key inserted by a transaction still open
//! conflicts at once (PostgreSQL waits for that transaction to end).
//! Must not: hold a set's lock across an await.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hashbrown::HashSet;

use crate::catalog::{Schema, TableDef, TableId};
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::agg::encode_key;
use crate::exec::vector::Batch;
use crate::types::FormatContext;

/// A unique index that is enforced: its name and key columns.
#[derive(Debug, Clone)]
pub struct UniqueKey {
    pub name: String,
    pub columns: Vec<usize>,
}

/// The table's enforced unique indexes: those whose keys are plain column
/// names (`a`, `"b" DESC`) and that have no WHERE predicate.
pub fn unique_keys(schema: &Schema, table: &TableDef) -> Vec<UniqueKey> {
    let mut out: Vec<UniqueKey> = schema
        .indexes
        .values()
        .filter(|i| i.unique && i.table == table.name && i.predicate.is_none())
        .filter_map(|i| Some(UniqueKey { name: i.name.clone(), columns: i.key_columns(table)? }))
        .collect();
    // The primary key first, then by name: the first violated constraint is reported.
    out.sort_by_key(|k| (!schema.indexes.get(&k.name).is_some_and(|i| i.primary), k.name.clone()));
    out
}

/// The key values of one unique index.
#[derive(Default)]
pub struct KeySet {
    pub built: bool,
    pub keys: HashSet<Box<[u8]>>,
}

pub type SharedKeySet = Arc<Mutex<KeySet>>;

/// Every enforced index's key set, by (table, index name).
#[derive(Default)]
pub struct UniqueKeySets {
    sets: Mutex<HashMap<(TableId, String), SharedKeySet>>,
    /// Keys open transaction blocks added (not stored until they commit),
    /// by (table, index name), each with how many blocks hold it.
    open: Mutex<HashMap<(TableId, String), HeldKeys>>,
}

/// Keys held by open blocks, each with how many hold it.
type HeldKeys = HashMap<Box<[u8]>, u32>;

impl UniqueKeySets {
    pub fn set(&self, table: TableId, index: &str) -> SharedKeySet {
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets.entry((table, index.to_string())).or_default().clone()
    }

    /// Forgets the table's sets: its rows changed in ways the sets do not follow.
    pub fn forget_table(&self, table: TableId) {
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets.retain(|(t, _), _| *t != table);
    }

    /// Keeps `added` (a transaction block's keys) aside until the block ends.
    pub fn hold_open(&self, added: &AddedKeys) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        for e in &added.0 {
            let held = open.entry((e.table, e.index.clone())).or_default();
            for k in &e.keys {
                *held.entry(k.clone()).or_default() += 1;
            }
        }
    }

    /// The block that held `added` has ended (committed: its keys are
    /// stored now; rolled back: [`AddedKeys::undo_in`] takes them out).
    pub fn release_open(&self, added: &AddedKeys) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        for e in &added.0 {
            let id = (e.table, e.index.clone());
            let Some(held) = open.get_mut(&id) else { continue };
            for k in &e.keys {
                if let Some(n) = held.get_mut(k) {
                    *n -= 1;
                    if *n == 0 {
                        held.remove(k);
                    }
                }
            }
            if held.is_empty() {
                open.remove(&id);
            }
        }
    }

    /// The keys open blocks hold for (table, index), less those of `own`.
    pub fn open_keys(&self, table: TableId, index: &str, own: &AddedKeys) -> HashSet<Box<[u8]>> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let Some(held) = open.get(&(table, index.to_string())) else { return HashSet::new() };
        let mine: HashSet<&[u8]> = own
            .0
            .iter()
            .filter(|e| e.table == table && e.index == index)
            .flat_map(|e| e.keys.iter().map(|k| &**k))
            .collect();
        held.keys().filter(|k| !mine.contains(&***k)).cloned().collect()
    }
}

/// Keys a write added, to take out again if it does not commit.
#[derive(Default)]
pub struct AddedKeys(Vec<AddedToSet>);

/// Keys added to one index's set.
struct AddedToSet {
    table: TableId,
    index: String,
    set: SharedKeySet,
    keys: Vec<Box<[u8]>>,
}

impl AddedKeys {
    pub fn extend(&mut self, other: AddedKeys) {
        self.0.extend(other.0);
    }

    /// Takes every added key out of its set.
    pub fn undo(self) {
        for e in self.0 {
            let mut s = e.set.lock().unwrap_or_else(|e| e.into_inner());
            for k in e.keys {
                s.keys.remove(&k);
            }
        }
    }

    /// [`undo`](Self::undo), also out of the sets rebuilt since the keys
    /// were added (a rebuild takes open blocks' keys again).
    pub fn undo_in(self, sets: &UniqueKeySets) {
        for e in &self.0 {
            let current = sets.sets.lock().unwrap_or_else(|e| e.into_inner()).get(&(e.table, e.index.clone())).cloned();
            if let Some(current) = current.filter(|c| !Arc::ptr_eq(c, &e.set)) {
                let mut s = current.lock().unwrap_or_else(|e| e.into_inner());
                for k in &e.keys {
                    s.keys.remove(k);
                }
            }
        }
        self.undo();
    }
}

/// The encoded key of row `r` over `columns`, or None when a key column is NULL.
pub fn encoded_key(batch: &Batch, columns: &[usize], r: usize) -> Option<Box<[u8]>> {
    let mut key = Vec::new();
    encode_key_into(batch, columns, r, &mut key).then(|| key.into_boxed_slice())
}

/// [`encoded_key`] written into `key` (cleared first); false when a key column is NULL.
pub fn encode_key_into(batch: &Batch, columns: &[usize], r: usize, key: &mut Vec<u8>) -> bool {
    key.clear();
    for &c in columns {
        let col = &batch.columns[c];
        if !col.is_valid(r) {
            return false;
        }
        encode_key(col, r, key);
    }
    true
}

/// The non-NULL keys over `columns` of the rows of `batches`.
pub fn key_set(batches: &[Batch], columns: &[usize]) -> HashSet<Box<[u8]>> {
    let mut keys = HashSet::new();
    for b in batches {
        keys.extend((0..b.len).filter_map(|r| encoded_key(b, columns, r)));
    }
    keys
}

/// Fills an unbuilt set with the key values of `existing` (the table's rows,
/// key columns only) and `open` (the keys open blocks hold).
pub fn build(set: &SharedKeySet, existing: &[Batch], open: HashSet<Box<[u8]>>) {
    let mut s = set.lock().unwrap_or_else(|e| e.into_inner());
    if s.built {
        return;
    }
    let all: Vec<usize> = existing.first().map(|b| (0..b.columns.len()).collect()).unwrap_or_default();
    s.keys.extend(key_set(existing, &all));
    s.keys.extend(open);
    s.built = true;
}

/// Adds the keys of `batches` (full table rows) to a built set; 23505 on the
/// first key already present, with nothing of this call left in the set.
pub fn add_keys(
    set: &SharedKeySet,
    key: &UniqueKey,
    table: &TableDef,
    batches: &[Batch],
    format: &FormatContext,
) -> DbResult<AddedKeys> {
    let mut s = set.lock().unwrap_or_else(|e| e.into_inner());
    let mut added: Vec<Box<[u8]>> = Vec::new();
    for b in batches {
        for r in 0..b.len {
            let Some(k) = encoded_key(b, &key.columns, r) else { continue };
            if s.keys.contains(&k) {
                for a in &added {
                    s.keys.remove(a);
                }
                return Err(duplicate_key(key, table, b, r, format));
            }
            s.keys.insert(k.clone());
            added.push(k);
        }
    }
    drop(s);
    Ok(AddedKeys(vec![AddedToSet { table: table.oid, index: key.name.clone(), set: set.clone(), keys: added }]))
}

/// INSERT … ON CONFLICT DO NOTHING: `batches` without the rows whose key
/// the set holds or an earlier row of `batches` has (a NULL key never conflicts).
pub fn drop_conflicts(existing: &HashSet<Box<[u8]>>, key: &UniqueKey, batches: Vec<Batch>) -> Vec<Batch> {
    let mut seen: HashSet<Box<[u8]>> = HashSet::new();
    let mut out = Vec::with_capacity(batches.len());
    for b in batches {
        let mut keep: Vec<u32> = Vec::with_capacity(b.len);
        for r in 0..b.len {
            let conflicts = match encoded_key(&b, &key.columns, r) {
                Some(k) => existing.contains(&k) || !seen.insert(k),
                None => false,
            };
            if !conflicts {
                keep.push(r as u32);
            }
        }
        if keep.len() == b.len {
            out.push(b);
        } else if !keep.is_empty() {
            out.push(b.take(&keep));
        }
    }
    out
}

/// Checks that `rows` (all of a table's rows) hold no key twice: 23505 as a
/// write reports it (UPDATE), or as CREATE UNIQUE INDEX does when `index_build`.
pub fn check_no_duplicates(
    key: &UniqueKey,
    table: &TableDef,
    rows: &[Batch],
    format: &FormatContext,
    index_build: bool,
) -> DbResult<()> {
    check_no_duplicates_beside(key, table, rows, format, index_build, HashSet::new())
}

/// [`check_no_duplicates`], where the keys of `taken` (open blocks') count
/// as present already.
pub fn check_no_duplicates_beside(
    key: &UniqueKey,
    table: &TableDef,
    rows: &[Batch],
    format: &FormatContext,
    index_build: bool,
    taken: HashSet<Box<[u8]>>,
) -> DbResult<()> {
    let mut seen: HashSet<Box<[u8]>> = taken;
    for b in rows {
        for r in 0..b.len {
            let Some(k) = encoded_key(b, &key.columns, r) else { continue };
            if !seen.insert(k) {
                let err = duplicate_key(key, table, b, r, format);
                if !index_build {
                    return Err(err);
                }
                return Err(DbError::new(
                    sqlstate::UNIQUE_VIOLATION,
                    format!("could not create unique index \"{}\"", key.name),
                )
                .with_detail(err.into_fields().detail.unwrap_or_default().replace("already exists", "is duplicated")));
            }
        }
    }
    Ok(())
}

fn duplicate_key(key: &UniqueKey, table: &TableDef, b: &Batch, r: usize, format: &FormatContext) -> DbError {
    let names: Vec<&str> = key.columns.iter().map(|&c| table.columns[c].name.as_str()).collect();
    let values: Vec<String> = key
        .columns
        .iter()
        .map(|&c| {
            let mut out = Vec::new();
            crate::types::text::format_text(b.columns[c].data_type, &b.columns[c].datum(r), format, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        })
        .collect();
    DbError::new(
        sqlstate::UNIQUE_VIOLATION,
        format!("duplicate key value violates unique constraint \"{}\"", key.name),
    )
    .with_detail(format!("Key ({})=({}) already exists.", names.join(", "), values.join(", ")))
}
