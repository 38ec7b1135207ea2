//! The catalog: databases, schemas, tables, columns, sequences. Readers take
//! an immutable `Arc<Catalog>` snapshot per statement; DDL builds a new
//! snapshot under one DDL lock and swaps it in, so the data path never locks.
//! Must not: hold table data (shards do) or know SQL syntax beyond the
//! default-value and CHECK expressions it stores.

pub mod persist;
pub mod system;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::error::{sqlstate, DbError, DbResult};
use crate::types::DataType;

mod block_undo;
mod sequence;
pub mod timescale;
pub use block_undo::{restore_altered_table, BlockUndo, BlockUndoEntry};
pub use sequence::{lastval_undefined, SaveNeeded, Sequence, SequenceSettings, SessionSequenceValues};

/// First OID handed to user objects, as in PostgreSQL.
pub const FIRST_USER_OID: u32 = 16384;

pub type TableId = u32;

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub data_type: DataType,
    pub not_null: bool,
    /// The DEFAULT expression as written (bound at each INSERT).
    pub default: Option<sqlparser::ast::Expr>,
    /// numeric(precision, scale): values are rounded to the scale and checked against the precision.
    pub numeric_typmod: Option<(u32, u32)>,
    /// A line-protocol tag: with the time column, the table's tags identify a
    /// point (InfluxDB's series key + time), and line-protocol writes of a
    /// point already stored merge into it (`sql/series_times.rs`).
    pub series_tag: bool,
    /// A bytea column an MCAP ingest made: its values are stored in the frame
    /// form (`storage/frames.rs`: tagged, large ones as references into a
    /// kept recording), written and read back through that module.
    pub frame_refs: bool,
    /// `GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY`: the column's values come
    /// from its sequence as a serial column's do (its `default` is that
    /// nextval), but the catalogs show an identity column, and ALWAYS refuses
    /// an INSERT's own value.
    pub identity: Option<Identity>,
}

/// How an identity column takes values an INSERT gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Refused (428C9) unless the INSERT says OVERRIDING SYSTEM VALUE.
    Always,
    /// Taken, as a serial column takes them.
    ByDefault,
}

impl Identity {
    /// pg_attribute.attidentity.
    pub fn code(self) -> char {
        match self {
            Identity::Always => 'a',
            Identity::ByDefault => 'd',
        }
    }

    /// information_schema.columns.identity_generation.
    pub fn generation(self) -> &'static str {
        match self {
            Identity::Always => "ALWAYS",
            Identity::ByDefault => "BY DEFAULT",
        }
    }
}

impl ColumnDef {
    /// A column of `data_type` with nothing else declared (nullable, no default).
    pub fn plain(name: impl Into<String>, data_type: DataType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            data_type,
            not_null: false,
            default: None,
            numeric_typmod: None,
            series_tag: false,
            frame_refs: false,
            identity: None,
        }
    }

    /// The sequence a `DEFAULT nextval('s')` (a serial or identity column's)
    /// takes values from, as written there (`schema.name` for those made here).
    pub fn default_sequence(&self) -> Option<String> {
        let text = self.default.as_ref()?.to_string();
        Some(text.strip_prefix("nextval('")?.split('\'').next()?.to_string())
    }

    /// Whether the column's values are stored in the frame form.
    pub fn holds_frames(&self) -> bool {
        self.frame_refs && self.data_type == DataType::Bytea
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    pub oid: TableId,
    pub name: String,
    pub schema: String,
    pub columns: Vec<ColumnDef>,
    /// For time-series tables (create_hypertable): the designated time column.
    pub time_column: Option<usize>,
    /// Kept recordings (`storage/recordings.rs`) this table's frame
    /// references may point into: kept while the table exists.
    pub frame_files: Vec<String>,
    /// CHECK constraints, checked on every row written (`Session::check_constraints`).
    pub checks: Vec<CheckConstraint>,
    /// FOREIGN KEY constraints this table's rows must satisfy (`sql/foreign_keys.rs`).
    pub foreign_keys: Vec<ForeignKey>,
}

/// A FOREIGN KEY constraint of the referencing table: its rows' values in
/// `columns` must be a key of the referenced table's unique index
/// `parent_index`. The referenced columns are that index's keys, so renames
/// of the referenced table and its columns need no change here.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKey {
    pub oid: u32,
    pub name: String,
    /// The referencing columns, in the order written.
    pub columns: Vec<String>,
    /// The referenced table.
    pub parent: TableId,
    /// OID of the referenced table's PRIMARY KEY or UNIQUE index.
    pub parent_index: u32,
    /// For each of `columns`, the position of its referenced column among
    /// the index's keys (`FOREIGN KEY (a, b) REFERENCES p (y, x)` over an
    /// index on `(x, y)`: `[1, 0]`).
    pub key_positions: Vec<usize>,
    pub on_delete: ReferentialAction,
    pub on_update: ReferentialAction,
    /// MATCH FULL (else MATCH SIMPLE: a row with a NULL key column is not checked).
    pub match_full: bool,
}

/// What happens to referencing rows when their referenced key goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferentialAction {
    NoAction,
    Restrict,
    Cascade,
    SetNull,
    SetDefault,
}

impl ReferentialAction {
    /// pg_constraint's confupdtype/confdeltype letter.
    pub fn code(self) -> char {
        match self {
            ReferentialAction::NoAction => 'a',
            ReferentialAction::Restrict => 'r',
            ReferentialAction::Cascade => 'c',
            ReferentialAction::SetNull => 'n',
            ReferentialAction::SetDefault => 'd',
        }
    }

    pub fn from_code(c: char) -> Option<ReferentialAction> {
        Some(match c {
            'a' => ReferentialAction::NoAction,
            'r' => ReferentialAction::Restrict,
            'c' => ReferentialAction::Cascade,
            'n' => ReferentialAction::SetNull,
            'd' => ReferentialAction::SetDefault,
            _ => return None,
        })
    }

    /// As a definition prints it (NO ACTION is the default, printed as nothing).
    pub fn sql(self) -> &'static str {
        match self {
            ReferentialAction::NoAction => "NO ACTION",
            ReferentialAction::Restrict => "RESTRICT",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET NULL",
            ReferentialAction::SetDefault => "SET DEFAULT",
        }
    }
}

impl ForeignKey {
    /// As pg_get_constraintdef prints it: `FOREIGN KEY (pid) REFERENCES
    /// parent(id) ON DELETE CASCADE`, given the referenced table's name as
    /// it should appear and the referenced columns in `columns`' order.
    pub fn definition(&self, parent: &str, parent_columns: &[String]) -> String {
        let names = |c: &[String]| c.iter().map(|n| quote_ident(n)).collect::<Vec<_>>().join(", ");
        let mut out = format!("FOREIGN KEY ({}) REFERENCES {parent}({})", names(&self.columns), names(parent_columns));
        if self.match_full {
            out.push_str(" MATCH FULL");
        }
        if self.on_update != ReferentialAction::NoAction {
            out.push_str(&format!(" ON UPDATE {}", self.on_update.sql()));
        }
        if self.on_delete != ReferentialAction::NoAction {
            out.push_str(&format!(" ON DELETE {}", self.on_delete.sql()));
        }
        out
    }
}

/// A CHECK constraint: its rows must not make `expr` false (NULL passes).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckConstraint {
    pub oid: u32,
    pub name: String,
    pub expr: sqlparser::ast::Expr,
}

impl CheckConstraint {
    /// The columns of `table` the expression reads, in the order it first names them.
    pub fn columns(&self, table: &TableDef) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        let _ = sqlparser::ast::visit_expressions(&self.expr, |e| {
            let name = match e {
                sqlparser::ast::Expr::Identifier(i) => Some(ident_text(i)),
                sqlparser::ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_text),
                _ => None,
            };
            if let Some(c) = name.and_then(|n| table.column_index(&n)).filter(|c| !out.contains(c)) {
                out.push(c);
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        out
    }

    /// As pg_get_constraintdef prints it: `CHECK ((a > 0))`, pretty `CHECK (a > 0)`.
    pub fn definition(&self, pretty: bool) -> String {
        if pretty {
            format!("CHECK ({})", self.expr)
        } else {
            format!("CHECK (({}))", self.expr)
        }
    }
}

/// An identifier as a name: quoted as written, else folded to lower case.
fn ident_text(i: &sqlparser::ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

impl TableDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
    pub fn column_types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.data_type).collect()
    }
    /// Whether each column holds its values in the frame form.
    pub fn frame_columns(&self) -> Vec<bool> {
        self.columns.iter().map(ColumnDef::holds_frames).collect()
    }
    pub fn has_frame_columns(&self) -> bool {
        self.columns.iter().any(ColumnDef::holds_frames)
    }
}

/// Name prefix of the table an ALTER TABLE rewrite fills before it takes
/// the original's place (see `sql/session/alter.rs`).
pub const REWRITE_PREFIX: &str = "pg_brewric_rewrite_";

/// An index: a catalog object (scans do not use it); a UNIQUE one over plain
/// columns is enforced on every write (`sql/unique.rs`). PRIMARY KEY and
/// UNIQUE constraints are unique indexes, as in PostgreSQL.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDef {
    pub oid: u32,
    pub name: String,
    /// The indexed table (in the index's schema).
    pub table: String,
    pub unique: bool,
    /// The table's PRIMARY KEY.
    pub primary: bool,
    /// Made by a PRIMARY KEY or UNIQUE constraint (pg_constraint lists it),
    /// not by CREATE INDEX.
    pub constraint: bool,
    /// Access method: btree, hash, brin, gin, ...
    pub method: String,
    /// Each key as written (`tags_id`, `"time" DESC`, `lower(name)`).
    pub keys: Vec<String>,
    /// INCLUDE columns.
    pub include: Vec<String>,
    /// The partial-index predicate as written.
    pub predicate: Option<String>,
}

impl IndexDef {
    /// An index key as written → a column of the table (None for expressions).
    pub fn key_columns(&self, table: &TableDef) -> Option<Vec<usize>> {
        self
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
}

/// A view: its query's SQL text, bound again at each use.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewDef {
    pub oid: u32,
    pub name: String,
    pub schema: String,
    /// Output columns (names after the view's column list, and types) as created.
    pub columns: Vec<(String, DataType)>,
    pub query: String,
    /// Relations the query names, as (schema, name): tables and views.
    pub depends_on: Vec<(String, String)>,
}

/// A function written in SQL (`CREATE FUNCTION … LANGUAGE sql`): its body is
/// inlined into each call (see `sql/bind/sql_function.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub oid: u32,
    pub name: String,
    pub schema: String,
    /// Parameters: optional name and type.
    pub args: Vec<(Option<String>, DataType)>,
    pub returns: DataType,
    /// The body: one SELECT, `$n` or parameter names standing for the arguments.
    pub body: String,
}

impl FunctionDef {
    pub fn arg_types(&self) -> Vec<DataType> {
        self.args.iter().map(|(_, t)| *t).collect()
    }
}

#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub oid: u32,
    pub name: String,
    pub tables: BTreeMap<String, Arc<TableDef>>,
    pub sequences: BTreeMap<String, Arc<Sequence>>,
    pub indexes: BTreeMap<String, Arc<IndexDef>>,
    pub views: BTreeMap<String, Arc<ViewDef>>,
    /// Functions by name; overloads differ in argument types.
    pub functions: BTreeMap<String, Vec<Arc<FunctionDef>>>,
}

impl Schema {
    /// What kind of relation `name` is in this schema (relations share one namespace).
    pub fn relation_kind(&self, name: &str) -> Option<RelationKind> {
        if self.tables.contains_key(name) {
            Some(RelationKind::Table)
        } else if self.views.contains_key(name) {
            Some(RelationKind::View)
        } else if self.indexes.contains_key(name) {
            Some(RelationKind::Index)
        } else if self.sequences.contains_key(name) {
            Some(RelationKind::Sequence)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    Table,
    View,
    Index,
    Sequence,
}

impl RelationKind {
    /// "table", "view", "index", "sequence".
    pub fn noun(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::View => "view",
            RelationKind::Index => "index",
            RelationKind::Sequence => "sequence",
        }
    }
    /// PostgreSQL's 42809 for `DROP <wanted> name` naming a relation of this kind.
    pub fn wrong_type_error(self, name: &str, wanted: RelationKind) -> DbError {
        let article = if self == RelationKind::Index {
            "an"
        } else {
            "a"
        };
        let wanted_article = if wanted == RelationKind::Index {
            "an"
        } else {
            "a"
        };
        DbError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("\"{name}\" is not {wanted_article} {}", wanted.noun()),
        )
        .with_hint(format!(
            "Use DROP {} to remove {article} {}.",
            self.noun().to_uppercase(),
            self.noun()
        ))
    }
}

#[derive(Debug, Clone)]
pub struct Database {
    pub oid: u32,
    pub name: String,
    pub schemas: BTreeMap<String, Schema>,
    /// COMMENT ON texts by (objoid, classoid, objsubid), as pg_description
    /// keys them; a comment whose object is gone is not shown.
    pub comments: BTreeMap<(u32, u32, i32), String>,
    /// Tables an open transaction block dropped (see [`DroppingTable`]).
    pub dropping: Vec<DroppingTable>,
    /// Objects open transaction blocks created (see [`ProvisionalObject`]).
    pub provisional: Vec<ProvisionalObject>,
    /// What open transaction blocks changed in place, in order (see [`BlockUndo`]).
    pub block_undo: Vec<BlockUndoEntry>,
    /// Objects recording ingests that have not ended created (see [`IngestCreated`]).
    pub ingest_created: Vec<IngestCreated>,
    /// TimescaleDB's jobs and compression settings (see [`timescale::Timescale`]).
    pub timescale: timescale::Timescale,
    /// PostgreSQL's materialized views: a table (the key: its OID) holding
    /// the query's rows as of the last REFRESH.
    pub materialized_views: BTreeMap<u32, MaterializedView>,
}

/// A materialized view's query and whether its table holds its rows (WITH
/// NO DATA leaves it unpopulated: reading it is an error until a REFRESH).
#[derive(Debug, Clone, PartialEq)]
pub struct MaterializedView {
    pub query: String,
    pub populated: bool,
}

/// An object an MCAP recording's ingest created outside a transaction block
/// (its schema, the schema's recording catalog, topic tables), listed until
/// the ingest ends, committed or failed (a failed one removes what it
/// created itself). A crash before then leaves it listed, and the next start
/// removes the listed tables still empty once the WAL is replayed
/// ([`Database::remove_unfinished_ingests`]): a recording is stored whole or
/// not at all, its tables included. Emptiness, not the listing alone, decides,
/// because other writers may have committed rows into such a table meanwhile.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestCreated {
    /// Which ingest (an id it allocated from the OID counter).
    pub ingest: u32,
    pub object: ProvisionalObject,
}

/// An object an open transaction block created. Its COMMIT takes it off
/// this list; loading the catalog removes what is still on it (a restart
/// before the COMMIT means the block never committed), as ROLLBACK does.
#[derive(Debug, Clone, PartialEq)]
pub struct ProvisionalObject {
    pub kind: ProvisionalKind,
    pub schema: String,
    /// The object's name (the schema's own for a schema).
    pub name: String,
    pub oid: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProvisionalKind {
    Schema,
    Table,
    View,
    Index,
    Sequence,
}

/// Whether sequence `seq` is one a serial column of table `table` made
/// (`<table>_<column>_seq`), which goes with the table.
pub fn is_serial_sequence_of(seq: &str, table: &str) -> bool {
    seq.ends_with("_seq") && seq.strip_prefix(table).is_some_and(|rest| rest.starts_with('_'))
}

/// A table a transaction block dropped: out of its schema (no name finds
/// it, the name is free again) but kept, rows and all, until the block
/// commits. Found by OID still, so that checkpoints write its rows out as
/// any table's. ROLLBACK puts it back ([`Database::restore_dropping`]), and
/// so does loading the catalog: a restart before the COMMIT means the block
/// never committed.
#[derive(Debug, Clone)]
pub struct DroppingTable {
    pub table: Arc<TableDef>,
    pub indexes: Vec<Arc<IndexDef>>,
    /// Its serial columns' sequences.
    pub sequences: Vec<Arc<Sequence>>,
    /// Views DROP … CASCADE took with it.
    pub views: Vec<Arc<ViewDef>>,
}

impl Database {
    fn new(oid: u32, name: &str, public_oid: u32) -> Database {
        let mut schemas = BTreeMap::new();
        schemas.insert(
            "public".to_string(),
            Schema {
                oid: public_oid,
                name: "public".into(),
                ..Default::default()
            },
        );
        Database {
            oid,
            name: name.to_string(),
            schemas,
            comments: BTreeMap::new(),
            dropping: Vec::new(),
            provisional: Vec::new(),
            block_undo: Vec::new(),
            ingest_created: Vec::new(),
            timescale: timescale::Timescale::default(),
            materialized_views: BTreeMap::new(),
        }
    }

    /// Drops the jobs, compression settings, continuous aggregates and
    /// materialized views whose table is gone: not in a schema, nor on the
    /// dropping list (a ROLLBACK may bring it back).
    pub fn prune_timescale(&mut self) {
        let mut live: std::collections::HashSet<u32> =
            self.schemas.values().flat_map(|s| s.tables.values().map(|t| t.oid)).collect();
        live.extend(self.dropping.iter().map(|d| d.table.oid));
        self.timescale.retain_tables(|oid| live.contains(&oid));
        self.materialized_views.retain(|oid, _| live.contains(oid));
    }

    /// After a restart: removes what unfinished ingests created (see
    /// [`IngestCreated`]): the listed tables `has_rows` says are empty, unless
    /// a view not listed reads them; the listed views over what goes; the
    /// listed schemas left empty. Empties the list and returns the OIDs of
    /// the tables removed.
    pub fn remove_unfinished_ingests(&mut self, has_rows: impl Fn(u32) -> bool) -> Vec<u32> {
        let listed: Vec<ProvisionalObject> = std::mem::take(&mut self.ingest_created).into_iter().map(|c| c.object).collect();
        let current = |p: &&ProvisionalObject| {
            self.schemas.get(&p.schema).is_some_and(|s| match p.kind {
                ProvisionalKind::Table => s.tables.get(&p.name).is_some_and(|t| t.oid == p.oid),
                ProvisionalKind::View => s.views.get(&p.name).is_some_and(|v| v.oid == p.oid),
                _ => false,
            })
        };
        let key = |p: &ProvisionalObject| (p.schema.clone(), p.name.clone());
        let mut tables: Vec<&ProvisionalObject> = listed
            .iter()
            .filter(|p| p.kind == ProvisionalKind::Table)
            .filter(current)
            .filter(|p| !has_rows(p.oid))
            .collect();
        let mut views: Vec<&ProvisionalObject> = listed.iter().filter(|p| p.kind == ProvisionalKind::View).filter(current).collect();
        let all_views: Vec<&ViewDef> = self.schemas.values().flat_map(|s| s.views.values().map(|v| &**v)).collect();
        loop {
            let going = |tables: &[&ProvisionalObject], views: &[&ProvisionalObject], rel: &(String, String)| {
                tables.iter().chain(views).any(|p| key(p) == *rel)
            };
            // Kept if a view that stays reads it.
            let kept_reader = |tables: &[&ProvisionalObject], views: &[&ProvisionalObject], p: &ProvisionalObject| {
                all_views
                    .iter()
                    .any(|v| v.depends_on.contains(&key(p)) && !going(tables, views, &(v.schema.clone(), v.name.clone())))
            };
            let before = (tables.len(), views.len());
            let (t, v) = (tables.clone(), views.clone());
            // A listed view goes only with something it reads.
            views.retain(|p| {
                let reads = &self.schemas[&p.schema].views[&p.name].depends_on;
                reads.iter().any(|r| going(&t, &v, r)) && !kept_reader(&t, &v, p)
            });
            let v = views.clone();
            tables.retain(|p| !kept_reader(&t, &v, p));
            if (tables.len(), views.len()) == before {
                break;
            }
        }
        let (tables, views): (Vec<ProvisionalObject>, Vec<ProvisionalObject>) =
            (tables.into_iter().cloned().collect(), views.into_iter().cloned().collect());
        for p in views.iter().chain(&tables) {
            self.remove_provisional(p);
        }
        for p in listed.iter().rev().filter(|p| p.kind == ProvisionalKind::Schema) {
            self.remove_provisional(p);
        }
        tables.iter().map(|p| p.oid).collect()
    }

    /// Puts back what open blocks changed in place, removes what they
    /// created (newest first; a schema only when empty) and puts back what
    /// they dropped: the state before them, as loading the catalog after a
    /// restart needs it. The in-place changes are undone twice, around the
    /// rest: first so that what a block renamed is found under the name it
    /// was created with, again for what a name a created object held kept
    /// from coming back (a view dropped then made again) and for tables the
    /// block renamed before dropping them.
    pub fn undo_open_blocks(&mut self, mut schema_oid: impl FnMut() -> u32) {
        let changed = std::mem::take(&mut self.block_undo);
        for entry in changed.iter().rev() {
            entry.undo.apply(self);
        }
        for p in std::mem::take(&mut self.provisional).into_iter().rev() {
            self.remove_provisional(&p);
        }
        for oid in self.dropping.iter().map(|d| d.table.oid).collect::<Vec<_>>() {
            self.restore_dropping(oid, &mut schema_oid);
        }
        for entry in changed.iter().rev() {
            entry.undo.apply(self);
        }
    }

    /// Removes an object a block created if it is still that object (same
    /// OID), a table with its indexes and serial sequences, a schema only
    /// when empty (another session may have put something in it).
    pub fn remove_provisional(&mut self, p: &ProvisionalObject) {
        let Some(s) = self.schemas.get_mut(&p.schema) else { return };
        match p.kind {
            ProvisionalKind::Table => {
                if s.tables.get(&p.name).is_some_and(|t| t.oid == p.oid) {
                    s.tables.remove(&p.name);
                    s.indexes.retain(|_, i| i.table != p.name);
                    s.sequences.retain(|k, _| !is_serial_sequence_of(k, &p.name));
                }
            }
            ProvisionalKind::View => {
                if s.views.get(&p.name).is_some_and(|v| v.oid == p.oid) {
                    s.views.remove(&p.name);
                }
            }
            ProvisionalKind::Index => {
                if s.indexes.get(&p.name).is_some_and(|i| i.oid == p.oid) {
                    s.indexes.remove(&p.name);
                }
            }
            ProvisionalKind::Sequence => {
                if s.sequences.get(&p.name).is_some_and(|q| q.oid == p.oid) {
                    s.sequences.remove(&p.name);
                }
            }
            ProvisionalKind::Schema => {
                let empty = s.oid == p.oid
                    && s.tables.is_empty()
                    && s.views.is_empty()
                    && s.indexes.is_empty()
                    && s.sequences.is_empty()
                    && s.functions.is_empty();
                if empty {
                    self.schemas.remove(&p.schema);
                }
            }
        }
    }

    /// Moves `table` (if its schema still holds it) with its indexes and
    /// serial sequences onto the dropping list, `views` with it. True when moved.
    pub fn start_dropping(&mut self, table: &Arc<TableDef>, views: Vec<Arc<ViewDef>>) -> bool {
        let Some(s) = self.schemas.get_mut(&table.schema) else { return false };
        if s.tables.get(&table.name).is_none_or(|t| t.oid != table.oid) {
            return false;
        }
        s.tables.remove(&table.name);
        let indexes: Vec<_> = s.indexes.values().filter(|i| i.table == table.name).cloned().collect();
        s.indexes.retain(|_, i| i.table != table.name);
        let sequences: Vec<_> =
            s.sequences.iter().filter(|(k, _)| is_serial_sequence_of(k, &table.name)).map(|(_, q)| q.clone()).collect();
        s.sequences.retain(|k, _| !is_serial_sequence_of(k, &table.name));
        self.dropping.push(DroppingTable {
            table: table.clone(),
            indexes,
            sequences,
            views,
        });
        true
    }

    pub fn table(&self, schema: &str, name: &str) -> Option<&Arc<TableDef>> {
        self.schemas.get(schema)?.tables.get(name)
    }

    /// A table by OID, including one an open block is dropping.
    pub fn table_by_oid(&self, oid: TableId) -> Option<&Arc<TableDef>> {
        self.schemas
            .values()
            .flat_map(|s| s.tables.values())
            .chain(self.dropping.iter().map(|d| &d.table))
            .find(|t| t.oid == oid)
    }

    /// Puts the dropping table `oid` back in its schema with its indexes,
    /// sequences and views (the schema made again, with `schema_oid`, if it
    /// went meanwhile). A name taken meanwhile gets `_restored_<oid>`
    /// appended (the table's, and an index's); a view or sequence whose
    /// name is taken stays out. Returns the table's name when it changed.
    pub fn restore_dropping(&mut self, oid: TableId, schema_oid: impl FnOnce() -> u32) -> Option<String> {
        let at = self.dropping.iter().position(|d| d.table.oid == oid)?;
        let entry = self.dropping.remove(at);
        let schema_name = entry.table.schema.clone();
        let s = self.schemas.entry(schema_name.clone()).or_insert_with(|| Schema {
            oid: schema_oid(),
            name: schema_name,
            ..Default::default()
        });
        let free_name = |s: &Schema, name: &str| {
            if s.relation_kind(name).is_none() {
                return name.to_string();
            }
            (0..)
                .map(|i| if i == 0 { format!("{name}_restored_{oid}") } else { format!("{name}_restored_{oid}_{i}") })
                .find(|n| s.relation_kind(n).is_none())
                .unwrap_or_default()
        };
        let name = free_name(s, &entry.table.name);
        let renamed = (name != entry.table.name).then(|| name.clone());
        let mut table = entry.table;
        if renamed.is_some() {
            Arc::make_mut(&mut table).name = name.clone();
        }
        s.tables.insert(name.clone(), table);
        for mut index in entry.indexes {
            let index_name = free_name(s, &index.name);
            let i = Arc::make_mut(&mut index);
            i.name = index_name.clone();
            i.table = name.clone();
            s.indexes.insert(index_name, index);
        }
        for sequence in entry.sequences {
            if s.relation_kind(&sequence.name).is_none() {
                s.sequences.insert(sequence.name.clone(), sequence);
            }
        }
        for view in entry.views {
            if let Some(vs) = self.schemas.get_mut(&view.schema) {
                if vs.relation_kind(&view.name).is_none() {
                    vs.views.insert(view.name.clone(), view);
                }
            }
        }
        renamed
    }
}

/// A role (PostgreSQL's users and groups are roles): what pg_authid holds.
/// The password is kept only in a stored form (`auth::hash_password`).
#[derive(Debug, Clone, PartialEq)]
pub struct RoleDef {
    pub oid: u32,
    pub name: String,
    pub superuser: bool,
    pub inherit: bool,
    pub create_role: bool,
    pub create_db: bool,
    pub login: bool,
    pub replication: bool,
    pub bypass_rls: bool,
    /// Most concurrent sessions of the role; -1 = no limit.
    pub connection_limit: i32,
    /// `SCRAM-SHA-256$…` or `md5…`; None = no password (no password login).
    pub password: Option<String>,
    /// VALID UNTIL as written (kept and shown, not enforced).
    pub valid_until: Option<String>,
}

/// The bootstrap superuser (the role that owns every object, OID 10 as in
/// PostgreSQL) and its companion `postgres`, both LOGIN SUPERUSER without a
/// password until `--password-file`/`BREWRIC_PASSWORD` or ALTER ROLE sets one.
pub const BOOTSTRAP_ROLE: &str = "brewric";
pub const BOOTSTRAP_ROLE_OID: u32 = 10;
pub const POSTGRES_ROLE_OID: u32 = 14_000;

impl RoleDef {
    /// A role as `CREATE ROLE name` makes it (NOLOGIN, INHERIT, no limit).
    pub fn new(oid: u32, name: &str) -> RoleDef {
        RoleDef {
            oid,
            name: name.to_string(),
            superuser: false,
            inherit: true,
            create_role: false,
            create_db: false,
            login: false,
            replication: false,
            bypass_rls: false,
            connection_limit: -1,
            password: None,
            valid_until: None,
        }
    }

    fn bootstrap(oid: u32, name: &str) -> RoleDef {
        RoleDef {
            superuser: true,
            create_role: true,
            create_db: true,
            login: true,
            replication: true,
            bypass_rls: true,
            ..RoleDef::new(oid, name)
        }
    }
}

/// The roles of a new installation (also of a catalog.json written before roles existed).
pub fn bootstrap_roles() -> BTreeMap<String, Arc<RoleDef>> {
    [
        (BOOTSTRAP_ROLE_OID, BOOTSTRAP_ROLE),
        (POSTGRES_ROLE_OID, "postgres"),
    ]
    .into_iter()
    .map(|(oid, name)| (name.to_string(), Arc::new(RoleDef::bootstrap(oid, name))))
    .collect()
}

/// One immutable version of the whole catalog.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub databases: BTreeMap<String, Arc<Database>>,
    /// Roles by name (shared by all databases, as in PostgreSQL).
    pub roles: BTreeMap<String, Arc<RoleDef>>,
}

impl Catalog {
    pub fn role(&self, name: &str) -> Option<&Arc<RoleDef>> {
        self.roles.get(name)
    }

    pub fn role_by_oid(&self, oid: u32) -> Option<&Arc<RoleDef>> {
        self.roles.values().find(|r| r.oid == oid)
    }

    /// The indexes on `table`.
    pub fn indexes_on(&self, table: &TableDef) -> Vec<Arc<IndexDef>> {
        let dropping = self
            .databases
            .values()
            .flat_map(|d| d.dropping.iter())
            .filter(|d| d.table.oid == table.oid)
            .flat_map(|d| d.indexes.iter().cloned());
        self.databases
            .values()
            .filter_map(|d| d.schemas.get(&table.schema))
            .filter(|s| s.tables.get(&table.name).is_some_and(|t| t.oid == table.oid))
            .flat_map(|s| s.indexes.values().filter(|i| i.table == table.name).cloned())
            .chain(dropping)
            .collect()
    }

    /// Every table of every database.
    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableDef>> {
        self.databases.values().flat_map(|d| d.schemas.values()).flat_map(|s| s.tables.values())
    }

    /// A table of any database, by OID, including one an open block is
    /// dropping (its rows are still stored).
    pub fn table_by_oid(&self, oid: TableId) -> Option<&Arc<TableDef>> {
        self.databases.values().find_map(|d| d.table_by_oid(oid))
    }

    /// Every table's column types by OID, over all databases.
    pub fn table_types(&self) -> std::collections::HashMap<TableId, Vec<DataType>> {
        self.tables().map(|t| (t.oid, t.column_types())).collect()
    }

    /// Per table with frame columns, which columns they are.
    pub fn table_frame_columns(&self) -> std::collections::HashMap<TableId, Vec<bool>> {
        self.tables().filter(|t| t.has_frame_columns()).map(|t| (t.oid, t.frame_columns())).collect()
    }

    /// Every kept recording some table's frame references may point into.
    pub fn frame_files(&self) -> std::collections::HashSet<String> {
        // A table a block is dropping may come back: its files stay too.
        let dropping = self.databases.values().flat_map(|d| d.dropping.iter().map(|x| &x.table));
        self.tables().chain(dropping).flat_map(|t| t.frame_files.iter().cloned()).collect()
    }

    pub fn database(&self, name: &str) -> DbResult<&Arc<Database>> {
        self.databases.get(name).ok_or_else(|| {
            DbError::new(
                sqlstate::INVALID_CATALOG_NAME,
                format!("database \"{name}\" does not exist"),
            )
        })
    }
}

/// Owner of the current catalog snapshot.
pub struct CatalogStore {
    current: RwLock<Arc<Catalog>>,
    ddl: Mutex<()>,
    next_oid: AtomicU32,
    /// Where `catalog.json` lives; every change is saved there before it is published.
    persist_dir: Option<PathBuf>,
}

impl Default for CatalogStore {
    fn default() -> Self {
        Self::new()
    }
}

impl CatalogStore {
    /// A catalog with the databases every installation has: `brewric` and `postgres`.
    pub fn new() -> CatalogStore {
        let store = CatalogStore {
            current: RwLock::new(Arc::new(Catalog {
                databases: BTreeMap::new(),
                roles: bootstrap_roles(),
            })),
            ddl: Mutex::new(()),
            next_oid: AtomicU32::new(FIRST_USER_OID),
            persist_dir: None,
        };
        for name in ["postgres", "brewric"] {
            // Creating a fixed, distinct name on an empty catalog cannot fail.
            let _ = store.create_database(name);
        }
        store
    }

    /// A store that saves every change into `dir`, starting from the catalog
    /// saved there (or a new one, saved at once).
    pub fn open(dir: PathBuf) -> Result<CatalogStore, String> {
        let mut store = match persist::load(&dir)? {
            Some((catalog, next_oid)) => CatalogStore {
                current: RwLock::new(Arc::new(catalog)),
                ddl: Mutex::new(()),
                next_oid: AtomicU32::new(next_oid),
                persist_dir: None,
            },
            None => CatalogStore::new(),
        };
        store.persist_dir = Some(dir);
        // A table rewrite (ALTER TABLE) cut short by a crash leaves its new
        // table unnamed by anyone: it goes; the original stands.
        store
            .update(|cat| {
                for db in cat.databases.values_mut() {
                    let d = Arc::make_mut(db);
                    for s in d.schemas.values_mut() {
                        s.tables.retain(|name, _| !name.starts_with(REWRITE_PREFIX));
                    }
                }
                Ok(())
            })
            .map_err(|e| e.into_message())?;
        Ok(store)
    }

    pub fn snapshot(&self) -> Arc<Catalog> {
        match self.current.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn allocate_oid(&self) -> u32 {
        self.next_oid.fetch_add(1, Ordering::Relaxed)
    }

    /// Applies `change` to a copy of the catalog and publishes it atomically.
    pub fn update<T>(&self, change: impl FnOnce(&mut Catalog) -> DbResult<T>) -> DbResult<T> {
        let _guard = self.ddl.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = (*self.snapshot()).clone();
        let out = change(&mut next)?;
        if let Some(dir) = &self.persist_dir {
            persist::save(dir, &next, self.next_oid.load(Ordering::Relaxed))
                .map_err(|e| crate::wal::io_error("save the catalog", &e))?;
        }
        let mut cur = self.current.write().unwrap_or_else(|p| p.into_inner());
        *cur = Arc::new(next);
        Ok(out)
    }

    /// Applies `change` to one database of the catalog.
    pub fn update_database<T>(
        &self,
        db: &str,
        change: impl FnOnce(&mut Database) -> DbResult<T>,
    ) -> DbResult<T> {
        self.update(|cat| {
            let d = cat.database(db)?;
            let mut d = (**d).clone();
            let out = change(&mut d)?;
            cat.databases.insert(db.to_string(), Arc::new(d));
            Ok(out)
        })
    }

    pub fn create_database(&self, name: &str) -> DbResult<()> {
        let oid = self.allocate_oid();
        let public_oid = self.allocate_oid();
        self.update(|cat| {
            if cat.databases.contains_key(name) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_DATABASE,
                    format!("database \"{name}\" already exists"),
                ));
            }
            cat.databases.insert(
                name.to_string(),
                Arc::new(Database::new(oid, name, public_oid)),
            );
            Ok(())
        })
    }
}

/// PostgreSQL's quote_ident: double quotes unless the name is a lower-case
/// identifier that is not a reserved keyword.
pub fn quote_ident(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
        && name
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'$')
        && !RESERVED_KEYWORDS.contains(&name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// PostgreSQL 15's keywords that quote_ident quotes (reserved, and the
/// column-name and type-function-name ones).
const RESERVED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "json",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "system_user",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

#[cfg(test)]
mod quote_tests {
    use super::quote_ident;

    #[test]
    fn quote_ident_as_postgres() {
        assert_eq!(quote_ident("abc"), "abc");
        assert_eq!(quote_ident("Abc"), "\"Abc\"");
        assert_eq!(quote_ident("select"), "\"select\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_ident("1a"), "\"1a\"");
        assert_eq!(quote_ident(""), "\"\"");
    }
}

#[cfg(test)]
mod unfinished_ingest_tests {
    use super::*;

    fn table(schema: &str, name: &str, oid: u32) -> Arc<TableDef> {
        Arc::new(TableDef {
            oid,
            name: name.into(),
            schema: schema.into(),
            columns: Vec::new(),
            time_column: None,
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        })
    }

    fn view(schema: &str, name: &str, oid: u32, reads: &[&str]) -> Arc<ViewDef> {
        Arc::new(ViewDef {
            oid,
            name: name.into(),
            schema: schema.into(),
            columns: Vec::new(),
            query: String::new(),
            depends_on: reads.iter().map(|r| (schema.to_string(), r.to_string())).collect(),
        })
    }

    fn listed(kind: ProvisionalKind, name: &str, oid: u32) -> IngestCreated {
        IngestCreated {
            ingest: 1,
            object: ProvisionalObject { kind, schema: "s".into(), name: name.into(), oid },
        }
    }

    /// A schema `s` an unfinished ingest made, with `recording_topics` (10),
    /// `topics` over it (11), `imu` (12) and `scan` (13), all listed.
    fn database() -> Database {
        let mut db = Database::new(1, "db", 2);
        let mut s = Schema { oid: 3, name: "s".into(), ..Default::default() };
        for t in [table("s", "recording_topics", 10), table("s", "imu", 12), table("s", "scan", 13)] {
            s.tables.insert(t.name.clone(), t);
        }
        s.views.insert("topics".into(), view("s", "topics", 11, &["recording_topics"]));
        db.schemas.insert("s".into(), s);
        db.ingest_created = vec![
            listed(ProvisionalKind::Schema, "s", 3),
            listed(ProvisionalKind::Table, "recording_topics", 10),
            listed(ProvisionalKind::View, "topics", 11),
            listed(ProvisionalKind::Table, "imu", 12),
            listed(ProvisionalKind::Table, "scan", 13),
        ];
        db
    }

    #[test]
    fn empty_listed_tables_go_with_their_views_and_then_the_empty_schema() {
        let mut db = database();
        let mut removed = db.remove_unfinished_ingests(|_| false);
        removed.sort();
        assert_eq!(removed, [10, 12, 13]);
        assert!(!db.schemas.contains_key("s"));
        assert!(db.ingest_created.is_empty());
    }

    #[test]
    fn a_table_with_rows_or_read_by_a_view_not_listed_stays() {
        let mut db = database();
        // Another writer committed rows into scan; a user made a view over imu.
        db.schemas.get_mut("s").unwrap().views.insert("mine".into(), view("s", "mine", 20, &["imu"]));
        let mut removed = db.remove_unfinished_ingests(|oid| oid == 13);
        removed.sort();
        assert_eq!(removed, [10]);
        let s = &db.schemas["s"];
        assert_eq!(s.tables.keys().collect::<Vec<_>>(), ["imu", "scan"]);
        assert_eq!(s.views.keys().collect::<Vec<_>>(), ["mine"], "topics went with recording_topics");
    }

    #[test]
    fn a_listed_view_whose_table_has_rows_keeps_both() {
        let mut db = database();
        let removed = db.remove_unfinished_ingests(|oid| oid == 10);
        assert_eq!(removed.len(), 2);
        let s = &db.schemas["s"];
        assert!(s.tables.contains_key("recording_topics") && s.views.contains_key("topics"));
    }

    #[test]
    fn objects_replaced_since_are_left_alone() {
        let mut db = database();
        // imu was dropped and made again by someone else: another OID.
        db.schemas.get_mut("s").unwrap().tables.insert("imu".into(), table("s", "imu", 30));
        db.remove_unfinished_ingests(|_| false);
        assert_eq!(db.schemas["s"].tables.keys().collect::<Vec<_>>(), ["imu"]);
    }
}
