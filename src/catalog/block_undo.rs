//! What undoing an open transaction block's catalog changes puts back in
//! place: ALTER TABLE's catalog-only changes (renames, defaults, NOT NULL),
//! views replaced or dropped, indexes renamed or dropped, sequences dropped, functions made,
//! replaced or dropped, comments set, a schema dropped, a sequence altered.
//! ROLLBACK applies these at once (`Session`); the catalog file also lists
//! them as the block makes them (`Database::block_undo`, taken off at the
//! block's end), so that a start after a crash before the COMMIT applies
//! them too (`Database::undo_open_blocks`). Objects a block created are
//! `ProvisionalObject`s and tables it dropped `DroppingTable`s, not these.
//! Each undo finds its object by OID and puts it back only where nothing
//! else has taken its name, so applying one twice changes nothing more.
//! Must not: decide when a block ends (the session does).

use std::sync::Arc;

use super::{Database, FunctionDef, IndexDef, Schema, Sequence, SequenceSettings, TableDef, ViewDef};

/// One change of an open block, listed in the catalog until the block ends.
#[derive(Debug, Clone)]
pub struct BlockUndoEntry {
    /// Which block (an id it allocated from the OID counter).
    pub block: u32,
    pub undo: BlockUndo,
}

#[derive(Debug, Clone)]
pub enum BlockUndo {
    /// ALTER TABLE's catalog-only changes: the table and its indexes as they were.
    TableAltered { before: Arc<TableDef>, indexes: Vec<Arc<IndexDef>> },
    /// CREATE OR REPLACE VIEW over an existing view: the definition replaced.
    ViewReplaced { previous: Arc<ViewDef> },
    ViewDropped(Arc<ViewDef>),
    IndexDropped { schema: String, index: Arc<IndexDef> },
    /// ALTER INDEX … RENAME: the index as it was.
    IndexRenamed { schema: String, before: Arc<IndexDef> },
    /// CREATE [OR REPLACE] FUNCTION: the function made and the definition it
    /// replaced (None: it was new).
    FunctionMade { function: Arc<FunctionDef>, previous: Option<Arc<FunctionDef>> },
    FunctionDropped(Arc<FunctionDef>),
    /// COMMENT ON: the comment the object had before (None: none).
    CommentSet { key: (u32, u32, i32), previous: Option<String> },
    /// DROP SCHEMA: made again (same OID) with its functions, and the views
    /// no kept table brought back (its tables come back from the dropping
    /// list, with the other views).
    SchemaDropped { name: String, oid: u32, functions: Vec<Arc<FunctionDef>>, views: Vec<Arc<ViewDef>> },
    SequenceDropped { schema: String, sequence: Arc<Sequence> },
    /// ALTER SEQUENCE: the settings it had (its position is not put back).
    SequenceAltered { schema: String, oid: u32, before: SequenceSettings },
    /// A policy added or removed, a job altered or deleted, compression
    /// settings changed: the table's jobs and settings as they were
    /// (`before` holds that table's alone). While it is listed, the
    /// scheduler leaves the table's jobs alone.
    TimescaleChanged { table: u32, before: super::timescale::Timescale },
}

impl BlockUndo {
    /// Puts back what the change took, where nothing else took its place.
    pub fn apply(&self, db: &mut Database) {
        match self {
            BlockUndo::TableAltered { before, indexes } => restore_altered_table(db, before, indexes),
            BlockUndo::TimescaleChanged { table, before } => db.timescale.restore_table(*table, before),
            BlockUndo::ViewReplaced { previous } => {
                let Some(s) = db.schemas.get_mut(&previous.schema) else { return };
                if s.views.get(&previous.name).is_some_and(|v| v.oid == previous.oid) {
                    s.views.insert(previous.name.clone(), previous.clone());
                }
            }
            BlockUndo::ViewDropped(view) => {
                if let Some(s) = db.schemas.get_mut(&view.schema) {
                    if s.relation_kind(&view.name).is_none() {
                        s.views.insert(view.name.clone(), view.clone());
                    }
                }
            }
            BlockUndo::IndexDropped { schema, index } => {
                if let Some(s) = db.schemas.get_mut(schema) {
                    if s.tables.contains_key(&index.table) && s.relation_kind(&index.name).is_none() {
                        s.indexes.insert(index.name.clone(), index.clone());
                    }
                }
            }
            BlockUndo::IndexRenamed { schema, before } => {
                let Some(s) = db.schemas.get_mut(schema) else { return };
                let Some(now) = s.indexes.values().find(|i| i.oid == before.oid).map(|i| i.name.clone()) else { return };
                if now != before.name && s.relation_kind(&before.name).is_none() {
                    s.indexes.remove(&now);
                    s.indexes.insert(before.name.clone(), before.clone());
                }
            }
            BlockUndo::FunctionMade { function, previous } => {
                let Some(s) = db.schemas.get_mut(&function.schema) else { return };
                let Some(list) = s.functions.get_mut(&function.name) else { return };
                match previous {
                    // A replaced function keeps its OID.
                    Some(previous) => {
                        for f in list.iter_mut().filter(|f| f.oid == function.oid) {
                            *f = previous.clone();
                        }
                    }
                    None => list.retain(|f| f.oid != function.oid),
                }
                if list.is_empty() {
                    s.functions.remove(&function.name);
                }
            }
            BlockUndo::FunctionDropped(function) => {
                let Some(s) = db.schemas.get_mut(&function.schema) else { return };
                put_back_function(s, function);
            }
            BlockUndo::CommentSet { key, previous } => {
                match previous {
                    Some(text) => db.comments.insert(*key, text.clone()),
                    None => db.comments.remove(key),
                };
            }
            BlockUndo::SchemaDropped { name, oid, functions, views } => {
                let s = db
                    .schemas
                    .entry(name.clone())
                    .or_insert_with(|| Schema { oid: *oid, name: name.clone(), ..Default::default() });
                for f in functions {
                    put_back_function(s, f);
                }
                for v in views {
                    let Some(vs) = db.schemas.get_mut(&v.schema) else { return };
                    if vs.relation_kind(&v.name).is_none() {
                        vs.views.insert(v.name.clone(), v.clone());
                    }
                }
            }
            BlockUndo::SequenceDropped { schema, sequence } => {
                if let Some(s) = db.schemas.get_mut(schema) {
                    if s.relation_kind(&sequence.name).is_none() {
                        s.sequences.insert(sequence.name.clone(), sequence.clone());
                    }
                }
            }
            BlockUndo::SequenceAltered { schema, oid, before } => {
                let found = db.schemas.get(schema).and_then(|s| s.sequences.values().find(|q| q.oid == *oid));
                if let Some(sequence) = found {
                    sequence.alter(*before, None);
                }
            }
        }
    }
}

/// A function dropped, back in schema `s` unless one of the same arguments
/// was made meanwhile.
fn put_back_function(s: &mut Schema, function: &Arc<FunctionDef>) {
    let list = s.functions.entry(function.name.clone()).or_default();
    if !list.iter().any(|f| f.arg_types() == function.arg_types()) {
        list.push(function.clone());
    }
}

/// The undo of an ALTER TABLE's catalog-only change: the table (found by
/// OID, whatever its name now) takes its definition and name back, and its
/// indexes theirs; skipped when its old name is taken by another relation.
pub fn restore_altered_table(db: &mut Database, before: &Arc<TableDef>, indexes: &[Arc<IndexDef>]) {
    let Some(s) = db.schemas.get_mut(&before.schema) else { return };
    let Some(now) = s.tables.values().find(|t| t.oid == before.oid).map(|t| t.name.clone()) else { return };
    if now != before.name && s.relation_kind(&before.name).is_some() {
        return;
    }
    s.tables.remove(&now);
    s.tables.insert(before.name.clone(), before.clone());
    for idx in s.indexes.values_mut() {
        if idx.table == now {
            match indexes.iter().find(|i| i.oid == idx.oid) {
                Some(old) => *idx = old.clone(),
                None => Arc::make_mut(idx).table = before.name.clone(),
            }
        }
    }
}
