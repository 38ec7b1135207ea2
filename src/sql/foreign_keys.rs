//! FOREIGN KEY constraints: what a constraint refers to (the referenced
//! table's unique index and which referencing column pairs with which key
//! column), the encoded keys rows reference, and the keys open transactions
//! hold (`ForeignKeyHolds`): a referencing row written in a block not yet
//! committed, or a referenced key a DELETE/UPDATE is taking away. A write
//! checks its referenced keys, and a removal its keys, against the other
//! side's holds under one lock, so neither can slip past the other; where
//! PostgreSQL would make one of the two wait for the other, Brewric fails it
//! with 23503.
//! Must not: read rows or change the catalog (the session's
//! `session/foreign_keys.rs` does both).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::catalog::{Database, ForeignKey, IndexDef, Schema, TableDef, TableId};
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::vector::Batch;
use crate::sql::unique::{self, UniqueKey};
use crate::types::{DataType, FormatContext};

/// A foreign key with what it refers to, as the catalog holds them now.
pub struct Resolved {
    pub parent: Arc<TableDef>,
    /// The referenced unique index: its name and key columns (of the parent).
    pub key: UniqueKey,
    /// For each key column of the index, in its order, the referencing column of the child.
    pub child_columns: Vec<usize>,
}

/// What `fk` of `child` refers to (XX000 when the catalog lost it: DDL keeps them together).
pub fn resolve(db: &Database, child: &TableDef, fk: &ForeignKey) -> DbResult<Resolved> {
    let lost = || DbError::internal(format!("foreign key \"{}\" of \"{}\" refers to a table or index that is gone", fk.name, child.name));
    let parent = db.table_by_oid(fk.parent).ok_or_else(lost)?.clone();
    let schema = db.schemas.get(&parent.schema).ok_or_else(lost)?;
    let index = schema.indexes.values().find(|i| i.oid == fk.parent_index).ok_or_else(lost)?;
    let columns = index.key_columns(&parent).ok_or_else(lost)?;
    let mut child_columns = vec![usize::MAX; columns.len()];
    for (name, &at) in fk.columns.iter().zip(&fk.key_positions) {
        let c = child.column_index(name).ok_or_else(lost)?;
        *child_columns.get_mut(at).ok_or_else(lost)? = c;
    }
    if child_columns.contains(&usize::MAX) {
        return Err(lost());
    }
    Ok(Resolved { parent, key: UniqueKey { name: index.name.clone(), columns }, child_columns })
}

/// Every foreign key of the database whose referenced table is `parent`, with its table.
pub fn referencing(db: &Database, parent: TableId) -> Vec<(Arc<TableDef>, ForeignKey)> {
    db.schemas
        .values()
        .flat_map(|s| s.tables.values())
        .flat_map(|t| t.foreign_keys.iter().filter(|f| f.parent == parent).map(move |f| (t.clone(), f.clone())))
        .collect()
}

/// The unique indexes a foreign key may reference: (index OID, key column
/// names, whether it is the primary key), primary key first.
pub fn candidate_keys(schema: &Schema, table: &TableDef) -> Vec<(u32, Vec<String>, bool)> {
    unique::unique_keys(schema, table)
        .into_iter()
        .filter_map(|k| {
            let index: &IndexDef = schema.indexes.get(&k.name)?;
            Some((index.oid, k.columns.iter().map(|&c| table.columns[c].name.clone()).collect(), index.primary))
        })
        .collect()
}

/// The referenced index among `candidates` (see [`candidate_keys`]) for
/// `referred` (empty: the primary key), and for each referred column its
/// position among the index's keys (42830 when none matches).
pub fn referenced_index(parent: &str, candidates: &[(u32, Vec<String>, bool)], referred: &[String]) -> DbResult<(u32, Vec<usize>)> {
    if referred.is_empty() {
        let Some((oid, keys, _)) = candidates.iter().find(|c| c.2) else {
            return Err(DbError::new(sqlstate::INVALID_FOREIGN_KEY, format!("there is no primary key for referenced table \"{parent}\"")));
        };
        return Ok((*oid, (0..keys.len()).collect()));
    }
    let mut wanted: Vec<&String> = referred.iter().collect();
    wanted.sort();
    wanted.dedup();
    for (oid, keys, _) in candidates {
        let mut have: Vec<&String> = keys.iter().collect();
        have.sort();
        if have == wanted && wanted.len() == referred.len() {
            let positions = referred.iter().filter_map(|r| keys.iter().position(|k| k == r)).collect();
            return Ok((*oid, positions));
        }
    }
    Err(DbError::new(
        sqlstate::INVALID_FOREIGN_KEY,
        format!("there is no unique constraint matching given keys for referenced table \"{parent}\""),
    ))
}

/// Whether values of `a` and `b` can be compared as keys: the same type,
/// or both integers (keys encode every integer width alike), or both text.
pub fn key_types_compatible(a: DataType, b: DataType) -> bool {
    let family = |t: DataType| match t {
        DataType::Int16 | DataType::Int32 | DataType::Int64 => Some(0),
        DataType::Text | DataType::Varchar(_) | DataType::Name => Some(1),
        _ => None,
    };
    a == b || family(a).is_some_and(|f| family(b) == Some(f))
}

/// Encoded keys, each with a row that has it: (batch, row).
pub type KeyRows = hashbrown::HashMap<Box<[u8]>, (usize, usize)>;

/// The keys the rows of `batches` reference (in the referenced index's
/// column order), each with the first row that references it (batch, row);
/// see [`row_key`] for NULLs. One allocation per distinct key.
pub fn referenced_keys(
    child: &TableDef,
    fk: &ForeignKey,
    child_columns: &[usize],
    batches: &[Batch],
) -> DbResult<KeyRows> {
    let mut keys = hashbrown::HashMap::new();
    let mut scratch = Vec::new();
    for (bi, b) in batches.iter().enumerate() {
        for row in 0..b.len {
            if fk.match_full {
                mixed_nulls(child, fk, child_columns, b, row)?;
            }
            if unique::encode_key_into(b, child_columns, row, &mut scratch) && !keys.contains_key(scratch.as_slice()) {
                keys.insert(scratch.as_slice().into(), (bi, row));
            }
        }
    }
    Ok(keys)
}

/// MATCH FULL: 23503 when some but not all of the row's key columns are NULL.
fn mixed_nulls(child: &TableDef, fk: &ForeignKey, child_columns: &[usize], batch: &Batch, r: usize) -> DbResult<()> {
    let nulls = child_columns.iter().filter(|&&c| !batch.columns[c].is_valid(r)).count();
    if nulls > 0 && nulls < child_columns.len() {
        return Err(DbError::new(
            sqlstate::FOREIGN_KEY_VIOLATION,
            format!("insert or update on table \"{}\" violates foreign key constraint \"{}\"", child.name, fk.name),
        )
        .with_detail("MATCH FULL does not allow mixing of null and nonnull key values."));
    }
    Ok(())
}

/// One referencing row's key (in the referenced index's column order), or
/// None when it references nothing: a NULL key column under MATCH SIMPLE,
/// all of them NULL under MATCH FULL. Some but not all NULL under MATCH
/// FULL: 23503.
pub fn row_key(
    child: &TableDef,
    fk: &ForeignKey,
    child_columns: &[usize],
    batch: &Batch,
    r: usize,
) -> DbResult<Option<Box<[u8]>>> {
    if fk.match_full {
        mixed_nulls(child, fk, child_columns, batch, r)?;
    }
    Ok(unique::encoded_key(batch, child_columns, r))
}

/// `Key (a, b)=(1, 2)`'s two halves for row `r` of `batch` over `columns`.
pub fn key_text(table: &TableDef, columns: &[usize], batch: &Batch, r: usize, format: &FormatContext) -> (String, String) {
    let names: Vec<String> = columns.iter().map(|&c| table.columns[c].name.clone()).collect();
    let values: Vec<String> = columns
        .iter()
        .map(|&c| {
            let col = &batch.columns[c];
            if !col.is_valid(r) {
                return "null".to_string();
            }
            let mut out = Vec::new();
            crate::types::text::format_text(col.data_type, &col.datum(r), format, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        })
        .collect();
    (names.join(", "), values.join(", "))
}

/// The referencing columns in the order the constraint names them (for messages).
pub fn columns_as_written(fk: &ForeignKey, child_columns: &[usize]) -> Vec<usize> {
    fk.key_positions.iter().map(|&p| child_columns[p]).collect()
}

/// Which side of a foreign key a hold is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldKind {
    /// Keys referenced by rows an open block wrote (stored at its COMMIT).
    Referenced,
    /// Keys a DELETE or UPDATE is taking away (gone at its end).
    Removing,
}

/// Who holds keys: one transaction (a session's, see [`ForeignKeyHolds::new_owner`]).
pub type HoldOwner = u64;

/// A set of held keys: (kind, referenced table, referenced index OID, owner).
type HoldId = (HoldKind, TableId, u32, HoldOwner);

/// The keys held per [`HoldId`], each with a count.
type Held = HashMap<HoldId, HashMap<Box<[u8]>, u32>>;

/// The keys open transactions hold on either side of foreign keys.
#[derive(Default)]
pub struct ForeignKeyHolds {
    held: Mutex<Held>,
    owners: std::sync::atomic::AtomicU64,
}

/// The holds, locked: a check and the hold it takes happen under one lock.
pub struct LockedHolds<'a> {
    holds: &'a Arc<ForeignKeyHolds>,
    held: MutexGuard<'a, Held>,
}

impl ForeignKeyHolds {
    pub fn lock(self: &Arc<Self>) -> LockedHolds<'_> {
        LockedHolds { holds: self, held: self.held.lock().unwrap_or_else(|e| e.into_inner()) }
    }

    /// An owner id for a session (its own holds never stand in its way).
    pub fn new_owner(&self) -> HoldOwner {
        self.owners.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

impl LockedHolds<'_> {
    /// Whether another owner than `me` holds `key` of (kind, parent, index).
    pub fn held_by_others(&self, kind: HoldKind, parent: TableId, index: u32, key: &[u8], me: HoldOwner) -> bool {
        self.held.iter().any(|(&(k, p, i, o), h)| k == kind && p == parent && i == index && o != me && h.contains_key(key))
    }

    /// Whether another owner than `me` holds any key of `parent` (of any of its indexes).
    pub fn any_held_by_others(&self, kind: HoldKind, parent: TableId, me: HoldOwner) -> bool {
        self.held.iter().any(|(&(k, p, _, o), h)| k == kind && p == parent && o != me && !h.is_empty())
    }

    /// Holds `keys` for `owner` until the returned value is dropped.
    pub fn hold(&mut self, kind: HoldKind, parent: TableId, index: u32, owner: HoldOwner, keys: Vec<Box<[u8]>>) -> HeldKeys {
        let id = (kind, parent, index, owner);
        let held = self.held.entry(id).or_default();
        for k in &keys {
            *held.entry(k.clone()).or_default() += 1;
        }
        HeldKeys { holds: self.holds.clone(), id, keys }
    }
}

/// Keys held on one side of a foreign key; released when dropped.
pub struct HeldKeys {
    holds: Arc<ForeignKeyHolds>,
    id: HoldId,
    keys: Vec<Box<[u8]>>,
}

impl Drop for HeldKeys {
    fn drop(&mut self) {
        let mut held = self.holds.held.lock().unwrap_or_else(|e| e.into_inner());
        let Some(h) = held.get_mut(&self.id) else { return };
        for k in &self.keys {
            if let Some(n) = h.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    h.remove(k);
                }
            }
        }
        if h.is_empty() {
            held.remove(&self.id);
        }
    }
}
