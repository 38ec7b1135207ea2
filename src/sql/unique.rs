//! UNIQUE and PRIMARY KEY enforcement. Each unique index over plain columns
//! has a set of the key values the table holds (committed rows, plus rows of
//! transactions that inserted them and have not ended), built by a scan when
//! first needed. A write adds its rows' keys under the set's lock and fails
//! with 23505 on a key already there or repeated in the write; a rolled-back
//! or failed write takes its keys out again. Rows with a NULL in the key are
//! never in conflict, as in PostgreSQL. DELETE, UPDATE, TRUNCATE and DROP
//! forget a table's sets (rebuilt from the rows at the next write).
//! Deviation from PostgreSQL: a key inserted by a transaction still open
//! conflicts at once (PostgreSQL waits for that transaction to end).
//! Must not: hold a set's lock across an await.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hashbrown::HashSet;

use crate::catalog::{IndexDef, Schema, TableDef, TableId};
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
        .filter_map(|i| Some(UniqueKey { name: i.name.clone(), columns: key_columns(i, table)? }))
        .collect();
    // The primary key first, then by name: the first violated constraint is reported.
    out.sort_by_key(|k| (!schema.indexes.get(&k.name).is_some_and(|i| i.primary), k.name.clone()));
    out
}

/// An index key as written → a column of the table (None for expressions).
fn key_columns(index: &IndexDef, table: &TableDef) -> Option<Vec<usize>> {
    index
        .keys
        .iter()
        .map(|k| {
            let mut words: Vec<&str> = k.split_whitespace().collect();
            while words.len() > 1
                && matches!(words[words.len() - 1].to_ascii_uppercase().as_str(), "ASC" | "DESC" | "FIRST" | "LAST" | "NULLS")
            {
                words.pop();
            }
            let [name] = words.as_slice() else { return None };
            let name = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => name.to_lowercase(),
            };
            table.column_index(&name)
        })
        .collect()
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
}

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
}

/// Keys a write added, to take out again if it does not commit.
#[derive(Default)]
pub struct AddedKeys(Vec<(SharedKeySet, Vec<Box<[u8]>>)>);

impl AddedKeys {
    pub fn extend(&mut self, other: AddedKeys) {
        self.0.extend(other.0);
    }

    /// Takes every added key out of its set.
    pub fn undo(self) {
        for (set, keys) in self.0 {
            let mut s = set.lock().unwrap_or_else(|e| e.into_inner());
            for k in keys {
                s.keys.remove(&k);
            }
        }
    }
}

/// The encoded key of row `r` over `columns`, or None when a key column is NULL.
fn encoded_key(batch: &Batch, columns: &[usize], r: usize) -> Option<Box<[u8]>> {
    let mut key = Vec::new();
    for &c in columns {
        let col = &batch.columns[c];
        if !col.is_valid(r) {
            return None;
        }
        encode_key(col, r, &mut key);
    }
    Some(key.into_boxed_slice())
}

/// The non-NULL keys over `columns` of the rows of `batches`.
pub fn key_set(batches: &[Batch], columns: &[usize]) -> HashSet<Box<[u8]>> {
    let mut keys = HashSet::new();
    for b in batches {
        keys.extend((0..b.len).filter_map(|r| encoded_key(b, columns, r)));
    }
    keys
}

/// Fills an unbuilt set with the key values of `existing` (the table's rows, key columns only).
pub fn build(set: &SharedKeySet, existing: &[Batch]) {
    let mut s = set.lock().unwrap_or_else(|e| e.into_inner());
    if s.built {
        return;
    }
    let all: Vec<usize> = existing.first().map(|b| (0..b.columns.len()).collect()).unwrap_or_default();
    s.keys.extend(key_set(existing, &all));
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
    Ok(AddedKeys(vec![(set.clone(), added)]))
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
    let mut seen: HashSet<Box<[u8]>> = HashSet::new();
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
