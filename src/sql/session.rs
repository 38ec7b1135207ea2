//! A client session: its database, settings and transaction, and the
//! execution of each statement kind for it.
//! Must not: encode wire messages; results are returned as batches.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use sqlparser::ast::{self, Statement};

use crate::catalog::{
    is_serial_sequence_of, restore_altered_table, BlockUndo, BlockUndoEntry, ProvisionalKind, ProvisionalObject,
    ColumnDef, IndexDef, RelationKind, Schema, Sequence, TableDef, TableId, ViewDef,
};
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::expr::{eval, EvalInputs};
use crate::exec::operators::{self, BoxedOperator, QueryContext};
use crate::exec::vector::{Batch, Column};
use crate::exec::EvalContext;
use crate::ingest::copy::{CopyFormat, CopyOptions, CopyReader};
use crate::server::copy_progress::{CopyCommand, CopyIoType, CopyProgressGuard};
use crate::server::Server;
use crate::sql::bind::{ident_name, object_name_parts, Binder, Scope};
use crate::sql::plan::{Expr, Field, Plan};
use crate::types::{DataType, Datum, FormatContext, Zone};
use crate::runtime::PreparedOp;
use crate::wal::record::{RecordType, FLAG_SELF_COMMITTED};
use crate::sql::unique::UniqueKey;
use unique::ConflictArbiter;

mod alter;
mod checks;
mod comment;
pub mod materialized_views;
mod create_table_as;
mod dml;
mod function;
mod ingest_tables;
mod jobs;
mod explain;
mod foreign_keys;
pub mod line_protocol;
pub mod mcap;
mod point_merge;
mod owners;
mod roles;
mod sequences;
pub mod settings;
mod unique;
mod upsert;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// No transaction block: each statement commits by itself.
    Idle,
    InBlock,
    /// An error happened in the block; only ROLLBACK/COMMIT are accepted.
    Failed,
}

pub enum StatementResult {
    /// Rows to stream; `tag` is the command tag verb ("SELECT", "INSERT 0").
    Rows {
        fields: Vec<Field>,
        op: BoxedOperator,
        tag: String,
    },
    /// Rows already computed (RETURNING, SHOW).
    Batches {
        fields: Vec<Field>,
        batches: Vec<Batch>,
        tag: String,
    },
    Command(String),
    Empty,
    /// COPY … FROM STDIN: the client now sends CopyData (see `Session::copy_data`).
    CopyIn(Box<CopyIn>),
    /// COPY … TO STDOUT: these rows, in this COPY format.
    CopyOut {
        fields: Vec<Field>,
        op: BoxedOperator,
        options: CopyOptions,
        /// Its pg_stat_progress_copy row: the sender counts bytes and rows
        /// into it, and drops it before CommandComplete.
        progress: Option<CopyProgressGuard>,
    },
}

/// A transaction's writes on their way to the shards at COMMIT.
struct Committing {
    pending: HashMap<TableId, Vec<Batch>>,
    replaced: std::collections::HashSet<TableId>,
    dropped: crate::exec::operators::DroppedRanges,
    rewrites: Option<tokio::sync::OwnedRwLockWriteGuard<()>>,
}

/// Rows of a COPY buffered before they are prepared on the shards.
const COPY_FLUSH_ROWS: usize = 65_536;

/// A COPY FROM STDIN in progress.
pub struct CopyIn {
    source: CopySource,
    /// Binary (1) or text/CSV (0), and the number of columns, for CopyInResponse.
    pub binary: bool,
    pub columns: usize,
}

/// What a COPY FROM fills: one table, or a schema's measurement tables.
enum CopySource {
    Table(TableCopy),
    LineProtocol(line_protocol::LineProtocolCopy),
    Mcap(Box<mcap::McapCopy>),
}

/// A COPY into one table.
struct TableCopy {
    reader: CopyReader,
    table: Arc<TableDef>,
    write: Option<ShardWrite>,
    buffered: Vec<Batch>,
    buffered_rows: usize,
    /// Unique keys of the rows taken so far (taken out again if the COPY fails).
    unique_keys: crate::sql::unique::AddedKeys,
    /// Its pg_stat_progress_copy row, until the COPY ends (taken by
    /// `copy_abort`, else dropped with the `CopyIn` before CommandComplete).
    progress: Option<CopyProgressGuard>,
}

pub struct Session {
    pub server: Arc<Server>,
    /// The shard this session runs on: it coordinates the session's statements
    /// and holds the Commit records of its multi-shard writes.
    pub shard: usize,
    pub database: String,
    pub user: String,
    pub settings: BTreeMap<String, String>,
    pub txn: TxnState,
    pending: Rc<RefCell<HashMap<TableId, Vec<Batch>>>>,
    /// currval()/lastval(): what nextval returned to this session.
    sequence_values: Arc<crate::sql::plan::SessionSequences>,
    /// Tables a DELETE/UPDATE in the open block rewrote: `pending` holds all their rows.
    txn_replaced: Rc<RefCell<std::collections::HashSet<TableId>>>,
    /// Tables whose days a DELETE/UPDATE in the open block rewrote: `pending`
    /// holds their rows of those time ranges (and the block's other rows).
    txn_dropped_ranges: Rc<RefCell<crate::exec::operators::DroppedRanges>>,
    /// Held from a block's first DELETE/UPDATE to its end, so that no other
    /// write lands between the rewrite's read and its COMMIT.
    txn_rewrites: Option<tokio::sync::OwnedRwLockWriteGuard<()>>,
    pub cancel: Arc<crate::exec::cancel::CancelFlag>,
    /// Where each setting's value came from, and RESET's values (as the
    /// session started, after startup-packet parameters); shared with the
    /// Binder for pg_settings.
    setting_provenance: Arc<settings::Provenance>,
    /// Settings and their sources at BEGIN (restored by ROLLBACK), and
    /// values to restore at the end of the transaction for SET LOCAL.
    txn_settings: Option<(BTreeMap<String, String>, BTreeMap<String, settings::Source>)>,
    local_settings: Vec<(String, SettingState)>,
    /// Schemas, tables, views and indexes the open transaction created or
    /// dropped (undone by ROLLBACK, newest first).
    txn_catalog_changes: Vec<BlockCatalogChange>,
    /// The open block's id in the catalog's `block_undo` list (allocated
    /// from the OID counter at its first in-place change).
    txn_block_id: Option<u32>,
    /// Tables the open transaction dropped: kept (`Database::dropping`)
    /// until COMMIT removes them for good; ROLLBACK puts them back.
    txn_dropped: Vec<TableId>,
    /// Unique keys the open transaction added (taken out again on ROLLBACK).
    txn_unique_keys: crate::sql::unique::AddedKeys,
    /// Keys the open transaction holds on either side of foreign keys
    /// (referenced by its rows, or removed): released when it ends.
    txn_fk_holds: Vec<crate::sql::foreign_keys::HeldKeys>,
    /// Who this session's foreign key holds belong to (its own never stand in its way).
    fk_owner: crate::sql::foreign_keys::HoldOwner,
    /// NOTICEs raised by the last statement, sent before its result.
    pub notices: Vec<DbError>,
    /// Prepared statements `DEALLOCATE` dropped (None: ALL), for the wire
    /// layer, which holds them, to forget after the statement.
    pub deallocations: Vec<Option<String>>,
    /// A wire session's pid and pg_stat_activity entry (None for the HTTP
    /// and ILP APIs' sessions); dropped with the session, which unregisters it.
    registration: Option<crate::server::SessionRegistration>,
}

/// A catalog change a transaction block made, which its ROLLBACK undoes
/// (dropped tables are kept apart: `Session::txn_dropped`): an object it
/// created, or a change in place (`BlockUndo`: what puts it back).
enum BlockCatalogChange {
    SchemaCreated { name: String, oid: u32 },
    TableCreated(Arc<TableDef>),
    /// A view made, or replaced (`previous`, put back by ROLLBACK).
    ViewMade { view: Arc<ViewDef>, previous: Option<Arc<ViewDef>> },
    IndexCreated { schema: String, name: String, oid: u32 },
    SequenceCreated { schema: String, name: String, oid: u32 },
    InPlace(BlockUndo),
}

impl BlockCatalogChange {
    /// The catalog's note of an object the block created (not of a view it
    /// replaced: a restart keeps the new definition).
    fn provisional(&self) -> Option<ProvisionalObject> {
        let (kind, schema, name, oid) = match self {
            BlockCatalogChange::SchemaCreated { name, oid } => (ProvisionalKind::Schema, name, name, *oid),
            BlockCatalogChange::TableCreated(t) => (ProvisionalKind::Table, &t.schema, &t.name, t.oid),
            BlockCatalogChange::ViewMade { view, previous: None } => (ProvisionalKind::View, &view.schema, &view.name, view.oid),
            BlockCatalogChange::IndexCreated { schema, name, oid } => (ProvisionalKind::Index, schema, name, *oid),
            BlockCatalogChange::SequenceCreated { schema, name, oid } => (ProvisionalKind::Sequence, schema, name, *oid),
            _ => return None,
        };
        Some(ProvisionalObject { kind, schema: schema.clone(), name: name.clone(), oid })
    }

    /// What undoing this change puts back in place (None for a created
    /// object: removed through `provisional`).
    fn block_undo(&self) -> Option<BlockUndo> {
        match self {
            BlockCatalogChange::InPlace(undo) => Some(undo.clone()),
            BlockCatalogChange::ViewMade { previous: Some(previous), .. } => {
                Some(BlockUndo::ViewReplaced { previous: previous.clone() })
            }
            BlockCatalogChange::SchemaCreated { .. }
            | BlockCatalogChange::TableCreated(_)
            | BlockCatalogChange::ViewMade { previous: None, .. }
            | BlockCatalogChange::IndexCreated { .. }
            | BlockCatalogChange::SequenceCreated { .. } => None,
        }
    }
}

/// Takes the block's objects off the catalog's provisional list and its
/// in-place changes off `block_undo`.
fn forget_provisional(db: &mut crate::catalog::Database, changes: &[BlockCatalogChange], block: Option<u32>) {
    let ours: Vec<ProvisionalObject> = changes.iter().filter_map(BlockCatalogChange::provisional).collect();
    if !ours.is_empty() {
        db.provisional.retain(|p| !ours.contains(p));
    }
    if let Some(block) = block {
        db.block_undo.retain(|e| e.block != block);
    }
}

/// A setting's value (None: unset placeholder) and where it came from,
/// saved by SET LOCAL to put back at the end of the transaction.
type SettingState = (Option<String>, settings::Source);

/// A session that goes away inside a transaction (Terminate, a lost
/// connection) rolls it back: its unique keys are released.
impl Drop for Session {
    fn drop(&mut self) {
        let keys = std::mem::take(&mut self.txn_unique_keys);
        self.end_block_keys(keys, true);
        if self.txn != TxnState::Idle {
            self.undo_block_catalog();
        }
    }
}

impl Session {
    pub fn new(server: Arc<Server>, database: String, user: String, shard: usize) -> Session {
        let mut values = settings::default_settings();
        values.insert("max_connections".into(), server.access.max_connections.to_string());
        values.insert(
            "brewric.query_memory_limit".into(),
            settings::query_memory_limit_value(server.query_memory_limit_bytes),
        );
        let fk_owner = server.foreign_key_holds.new_owner();
        let mut session = Session {
            server,
            shard,
            database,
            user,
            settings: values,
            txn: TxnState::Idle,
            pending: Default::default(),
            sequence_values: Default::default(),
            txn_replaced: Default::default(),
            txn_dropped_ranges: Default::default(),
            txn_rewrites: None,
            cancel: Arc::new(crate::exec::cancel::CancelFlag::new()),
            setting_provenance: Default::default(),
            txn_settings: None,
            local_settings: Vec::new(),
            txn_catalog_changes: Vec::new(),
            txn_block_id: None,
            txn_dropped: Vec::new(),
            txn_unique_keys: Default::default(),
            txn_fk_holds: Vec::new(),
            fk_owner,
            notices: Vec::new(),
            deallocations: Vec::new(),
            registration: None,
        };
        session.mark_startup();
        session
    }

    /// Gives the session its registration (`Server::register_session`), held
    /// until the session is dropped.
    pub fn attach_registration(&mut self, registration: crate::server::SessionRegistration) {
        self.registration = Some(registration);
    }

    /// The process id the client got in BackendKeyData: pg_backend_pid(),
    /// the `pid` of pg_stat_activity and of pg_stat_progress_copy (which COPY
    /// paths pass to `server.copy_progress.begin`). 0 for a session without
    /// one (the HTTP and ILP APIs').
    /// Wakes when pg_terminate_backend names this session (None without a registration).
    pub fn termination(&self) -> Option<Arc<tokio::sync::Notify>> {
        self.registration.as_ref().map(|r| r.terminated())
    }

    pub fn pid(&self) -> i32 {
        self.registration.as_ref().map_or(0, |r| r.pid())
    }

    /// The OID of the session's database (the statistics views' `datid`); 0
    /// if it was dropped meanwhile.
    pub fn database_oid(&self) -> u32 {
        let catalog = self.server.catalog.snapshot();
        catalog.database(&self.database).map_or(0, |d| d.oid)
    }

    fn application_name(&self) -> &str {
        self.settings.get("application_name").map_or("", |s| s.as_str())
    }

    /// A statement (Query, Parse or Execute message) starts: pg_stat_activity shows it `active`.
    pub fn report_active(&self, sql: &str) {
        if let Some(r) = &self.registration {
            r.activity().report_active(sql, self.application_name());
        }
    }

    /// The session is about to send ReadyForQuery: pg_stat_activity shows it
    /// idle, in or out of a transaction block.
    pub fn report_ready(&self) {
        use crate::server::activity::BackendState;
        if let Some(r) = &self.registration {
            let state = match self.txn {
                TxnState::Idle => BackendState::Idle,
                TxnState::InBlock => BackendState::IdleInTransaction,
                TxnState::Failed => BackendState::IdleInTransactionAborted,
            };
            r.activity().report_idle(state, self.application_name());
        }
    }

    fn notice(&mut self, code: &'static str, message: impl Into<String>) {
        let mut n = DbError::new(code, message);
        n.severity = "NOTICE";
        self.notices.push(n);
    }

    fn warning(&mut self, message: impl Into<String>) {
        let mut w = DbError::new(sqlstate::WARNING, message);
        w.severity = "WARNING";
        self.notices.push(w);
    }

    /// Records the settings after the startup packet's parameters were
    /// applied: what was set so far came from the client, and RESET returns to it.
    pub fn mark_startup(&mut self) {
        let p = Arc::make_mut(&mut self.setting_provenance);
        for source in p.sources.values_mut() {
            *source = settings::Source::Client;
        }
        p.reset = self.settings.clone();
        p.reset_sources = p.sources.clone();
    }

    /// A setting's value and source now, to put back later.
    fn setting_state(&self, key: &str) -> SettingState {
        (self.settings.get(key).cloned(), self.setting_provenance.source(key))
    }

    fn restore_setting(&mut self, key: String, (value, source): SettingState) {
        let sources = &mut Arc::make_mut(&mut self.setting_provenance).sources;
        match source {
            settings::Source::Default => sources.remove(&key),
            s => sources.insert(key.clone(), s),
        };
        match value {
            Some(v) => self.settings.insert(key, v),
            // A custom setting (`myapp.tenant`) stays defined once set, as
            // PostgreSQL's placeholder variables do: RESET empties it.
            None if key.contains('.') && settings::lookup(&key).is_none() => {
                self.settings.insert(key, String::new())
            }
            None => self.settings.remove(&key),
        };
    }

    /// The schema an unqualified CREATE puts its object in: the first existing one of the search path.
    fn creation_schema(&self) -> DbResult<String> {
        self.search_path().into_iter().next().ok_or_else(|| {
            DbError::new(
                sqlstate::INVALID_SCHEMA_NAME,
                "no schema has been selected to create in",
            )
        })
    }

    /// `[schema.]name` of an object to create (`what`: "relation", "qualified"
    /// for the error text): the schema must exist.
    fn creation_target(&self, name: &ast::ObjectName, what: &str) -> DbResult<(String, String)> {
        let (schema, object) = match object_name_parts(name).as_slice() {
            [n] => (self.creation_schema()?, n.clone()),
            [s, n] => (s.clone(), n.clone()),
            _ => return Err(DbError::syntax(format!("improper {what} name: {name}"))),
        };
        let catalog = self.server.catalog.snapshot();
        if !catalog.database(&self.database)?.schemas.contains_key(&schema) {
            return Err(DbError::new(
                sqlstate::INVALID_SCHEMA_NAME,
                format!("schema \"{schema}\" does not exist"),
            ));
        }
        Ok((schema, object))
    }

    /// Whether `schema` holds a relation (table, view, index, sequence) named `name`.
    fn relation_exists(&self, schema: &str, name: &str) -> DbResult<bool> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        Ok(db.schemas.get(schema).is_some_and(|s| s.relation_kind(name).is_some()))
    }

    /// Existing schemas of `search_path`, in order (`"$user"` is the session user).
    pub fn search_path(&self) -> Vec<String> {
        let catalog = self.server.catalog.snapshot();
        let raw = self
            .settings
            .get("search_path")
            .cloned()
            .unwrap_or_default();
        let mut out = Vec::new();
        if let Ok(db) = catalog.database(&self.database) {
            for part in raw.split(',') {
                let name = part.trim().trim_matches('"').to_string();
                let name = if name == "$user" {
                    self.user.clone()
                } else {
                    name
                };
                if db.schemas.contains_key(&name) && !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }

    fn binder<'a>(
        &self,
        catalog: &'a crate::catalog::Catalog,
        db: &'a crate::catalog::Database,
        eval: &'a EvalContext,
        params: Vec<DataType>,
    ) -> Binder<'a> {
        let mut b = Binder::new(catalog, db, eval, params);
        b.user = self.user.clone();
        b.search_path = self.search_path();
        b.settings = self.settings.clone();
        b.setting_provenance = self.setting_provenance.clone();
        b.server = Some(self.server.clone());
        b.backend_pid = self.pid();
        b.session_sequences = Some(self.sequence_values.clone());
        b
    }

    fn end_transaction(&mut self, commit: bool) {
        let begin_settings = self.txn_settings.take();
        if !commit {
            let keys = std::mem::take(&mut self.txn_unique_keys);
            self.end_block_keys(keys, true);
            self.txn_fk_holds.clear();
            if let Some((mut values, sources)) = begin_settings {
                // custom settings first set in the transaction stay defined, empty
                for key in self.settings.keys() {
                    if !values.contains_key(key) && key.contains('.') && settings::lookup(key).is_none() {
                        values.insert(key.clone(), String::new());
                    }
                }
                self.settings = values;
                Arc::make_mut(&mut self.setting_provenance).sources = sources;
            }
        } else {
            for (k, state) in std::mem::take(&mut self.local_settings).into_iter().rev() {
                self.restore_setting(k, state);
            }
        }
        self.local_settings.clear();
        self.txn = TxnState::Idle;
        self.pending.borrow_mut().clear();
        self.txn_replaced.borrow_mut().clear();
        self.txn_dropped_ranges.borrow_mut().clear();
        self.txn_rewrites = None;
    }

    pub fn eval_context(&self) -> EvalContext {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64 * 1000)
            .unwrap_or(0);
        let zone = self
            .settings
            .get("timezone")
            .and_then(|tz| Zone::from_setting(tz))
            .unwrap_or(Zone::UTC);
        let extra_float_digits = self
            .settings
            .get("extra_float_digits")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(1);
        EvalContext {
            format: FormatContext {
                zone,
                extra_float_digits,
            },
            statement_time_ns: now,
        }
    }

    fn query_context(&self, params: Vec<Datum>, eval: EvalContext) -> Rc<QueryContext> {
        let limit = settings::query_memory_limit_bytes(&self.settings)
            .unwrap_or(self.server.query_memory_limit_bytes);
        QueryContext::new(
            self.server.clone(),
            eval,
            params,
            self.cancel.clone(),
            crate::exec::operators::TxnView {
                pending: self.pending.clone(),
                replaced: self.txn_replaced.clone(),
                dropped: self.txn_dropped_ranges.clone(),
            },
            limit,
        )
    }

    /// Binds a query-like statement to learn its parameter types and result columns.
    pub fn describe(
        &self,
        stmt: &Statement,
        param_types: &[DataType],
    ) -> DbResult<(Vec<DataType>, Option<Vec<Field>>)> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval = self.eval_context();
        let mut binder = self.binder(&catalog, db, &eval, param_types.to_vec());
        let fields = match stmt {
            // SELECT … INTO returns no rows: it creates a table.
            Statement::Query(q) if matches!(q.body.as_ref(), ast::SetExpr::Select(s) if s.into.is_some()) => None,
            Statement::Query(q) => Some(binder.bind_query(q)?.fields().to_vec()),
            Statement::Insert(ins) => {
                let (_, _, returning, _) = self.bind_insert(&mut binder, ins)?;
                // An upsert's SET and WHERE hold parameters too.
                if let Some(sql) = self.upsert_describe_sql(ins)? {
                    if let Some(Statement::Query(q)) = crate::sql::parse(&sql)?.first() {
                        binder.bind_query(q)?;
                    }
                }
                returning.map(|(_, f)| f)
            }
            Statement::Delete(_) | Statement::Update(_) => {
                // The rows query first: its SET and WHERE give the parameters their types.
                if let Some(rows) = self.rows_sql(stmt)? {
                    if let Some(Statement::Query(q)) = crate::sql::parse(rows.sql())?.first() {
                        binder.bind_query(q)?;
                    }
                }
                match self.returning_sql(stmt)? {
                Some(sql) => match crate::sql::parse(&sql)?.first() {
                    Some(Statement::Query(q)) => Some(binder.bind_query(q)?.fields().to_vec()),
                    _ => None,
                },
                None => None,
                }
            }
            Statement::ShowVariable { variable } => {
                Some(show_fields(&show_name(variable)))
            }
            Statement::Explain { statement, .. } => {
                if let Statement::Query(q) = statement.as_ref() {
                    binder.bind_query(q)?;
                }
                Some(vec![Field::new("QUERY PLAN", DataType::Text)])
            }
            _ => None,
        };
        let mut types = binder.params;
        for t in types.iter_mut() {
            if *t == DataType::Unknown {
                *t = DataType::Text;
            }
        }
        Ok((types, fields))
    }

    /// Binds a query for execution: relation sizes and maintenance effects
    /// (drop_chunks, compaction) are gathered or run first when it names them.
    pub(super) async fn plan_query(
        &mut self,
        q: &ast::Query,
        params: &[Datum],
        param_types: &[DataType],
    ) -> DbResult<(Plan, EvalContext)> {
        self.plan_query_with(q, params, param_types, true).await
    }

    /// `plan_query`; without `run_effects` a query calling maintenance
    /// functions is refused instead of run (plain EXPLAIN must not drop data).
    pub(super) async fn plan_query_with(
        &mut self,
        q: &ast::Query,
        params: &[Datum],
        param_types: &[DataType],
        run_effects: bool,
    ) -> DbResult<(Plan, EvalContext)> {
        let eval = self.eval_context();
        let mut sizes = None;
        let mut chunk_facts = None;
        let mut effect_results = None;
        let plan = loop {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            let mut binder = self.binder(&catalog, db, &eval, param_types.to_vec());
            binder.relation_sizes = sizes.clone();
            binder.chunk_facts = chunk_facts.clone();
            binder.effect_results = effect_results.clone();
            binder.effect_params = params.to_vec();
            let plan = binder.bind_query(q)?;
            if binder.wants_relation_sizes && sizes.is_none() {
                sizes = Some(Arc::new(self.relation_sizes().await?));
                continue;
            }
            if binder.wants_chunk_facts && chunk_facts.is_none() {
                let time_columns = db
                    .schemas
                    .values()
                    .flat_map(|s| s.tables.values())
                    .filter_map(|t| Some((t.oid, t.time_column?)))
                    .collect();
                chunk_facts = Some(Arc::new(self.chunk_facts(time_columns).await?));
                continue;
            }
            if !binder.effects.is_empty() && effect_results.is_none() {
                if !run_effects {
                    return Err(DbError::unsupported(
                        "EXPLAIN without ANALYZE of a query that calls drop_chunks, brewric_compact, create_hypertable or pg_sleep",
                    ));
                }
                let effects = std::mem::take(&mut binder.effects);
                drop(binder);
                effect_results = Some(self.run_effects(effects).await?);
                continue;
            }
            break plan;
        };
        Ok((plan, eval))
    }

    /// Runs one statement.
    pub async fn execute(
        &mut self,
        stmt: &Statement,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        self.cancel.clear();
        if self.txn == TxnState::Failed
            && !matches!(stmt, Statement::Commit { .. } | Statement::Rollback { .. })
        {
            return Err(DbError::new(
                sqlstate::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let result = operators::contain_panic(self.execute_inner(stmt, params, param_types)).await;
        if result.is_err() && self.txn == TxnState::InBlock {
            self.txn = TxnState::Failed;
        }
        result
    }

    /// Runs statements this session generated (a refresh, an upsert), with
    /// the user statement's parameters: in the open transaction, or, when none
    /// is open, in one of their own (BEGIN … COMMIT, rolled back on an
    /// error). Each parsed statement with its result.
    pub(crate) async fn run_generated(
        &mut self,
        sql: &[String],
        params: &[Datum],
        param_types: &[DataType],
    ) -> DbResult<Vec<(Statement, StatementResult)>> {
        type Boxed<'f, T> = std::pin::Pin<Box<dyn std::future::Future<Output = DbResult<T>> + 'f>>;
        let own_transaction = self.txn == TxnState::Idle;
        let mut statements = Vec::new();
        for text in sql {
            statements.extend(crate::sql::parse(text)?);
        }
        let begin = crate::sql::parse("BEGIN")?;
        let commit = crate::sql::parse("COMMIT")?;
        let framed = own_transaction.then_some(&begin).into_iter().flatten().map(|s| (s, false));
        let framed = framed
            .chain(statements.iter().map(|s| (s, true)))
            .chain(own_transaction.then_some(&commit).into_iter().flatten().map(|s| (s, false)));
        let mut out = Vec::new();
        for (statement, keep) in framed {
            // Boxed as a trait object: these run inside another statement of this session.
            let (params, types) = if keep { (params.to_vec(), param_types) } else { (Vec::new(), &[][..]) };
            let run: Boxed<'_, StatementResult> = Box::pin(self.execute(statement, params, types));
            match run.await {
                Ok(result) if keep => out.push((statement.clone(), result)),
                Ok(_) => {}
                Err(e) => {
                    if own_transaction {
                        let rollback: Boxed<'_, ()> = Box::pin(self.end_implicit(false));
                        let _ = rollback.await;
                    }
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    async fn execute_inner(
        &mut self,
        stmt: &Statement,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        match stmt {
            Statement::Query(q) => {
                if matches!(q.body.as_ref(), ast::SetExpr::Select(s) if s.into.is_some()) {
                    return self.select_into(q, params, param_types).await;
                }
                let (plan, eval) = self.plan_query(q, &params, param_types).await?;
                let ctx = self.query_context(params, eval);
                let op = operators::build(&plan, &ctx)?;
                Ok(StatementResult::Rows {
                    fields: plan.fields().to_vec(),
                    op,
                    tag: "SELECT".into(),
                })
            }
            Statement::Explain {
                analyze,
                statement,
                options,
                ..
            } => self.explain(*analyze, options.as_deref(), statement, params, param_types).await,
            Statement::Insert(ins) if upsert::is_upsert(ins) => self.upsert(ins, params, param_types).await,
            Statement::Insert(ins) => self.insert(ins, params, param_types).await,
            Statement::Delete(del) => self.delete(del, params, param_types).await,
            Statement::Update(up) => self.update(up, params, param_types).await,
            Statement::CreateTable(ct) => match &ct.query {
                Some(q) => self.create_table_as(ct, q, params, param_types).await,
                None => self.create_table(ct),
            },
            Statement::CreateSequence { if_not_exists, name, sequence_options, .. } => {
                self.create_sequence(name, *if_not_exists, sequence_options)
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                let name = match schema_name {
                    ast::SchemaName::Simple(n) | ast::SchemaName::NamedAuthorization(n, _) => {
                        object_name_parts(n).join(".")
                    }
                    ast::SchemaName::UnnamedAuthorization(i) => ident_name(i),
                };
                self.create_schema(&name, *if_not_exists)?;
                Ok(StatementResult::Command("CREATE SCHEMA".into()))
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => {
                self.refuse_in_block("CREATE DATABASE")?;
                let name = object_name_parts(db_name).join(".");
                match self.server.catalog.create_database(&name) {
                    Err(e) if *if_not_exists && e.code == sqlstate::DUPLICATE_DATABASE => {}
                    other => other?,
                }
                Ok(StatementResult::Command("CREATE DATABASE".into()))
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => self.drop(object_type, *if_exists, names, *cascade).await,
            Statement::CreateIndex(ci) => self.create_index(ci).await,
            Statement::AlterTable(at) => self.alter_table(at).await,
            Statement::CreateView(cv) if cv.materialized => self.create_materialized_view(cv).await,
            Statement::RefreshMaterializedView(r) => self.refresh_materialized_view(r).await,
            Statement::CreateView(cv) => self.create_view(cv),
            Statement::AlterIndex {
                name,
                operation: ast::AlterIndexOperation::RenameIndex { index_name },
            } => self.rename_index(name, index_name),
            Statement::Call(f) if f.name.to_string() == format!("\"{}\"", crate::sql::ALTER_SEQUENCE_CALL) => self.alter_sequence(f),
            Statement::Call(f) if f.name.to_string().eq_ignore_ascii_case("run_job") => self.call_run_job(f).await,
            Statement::Call(f) if f.name.to_string().eq_ignore_ascii_case("refresh_continuous_aggregate") => {
                self.call_refresh_continuous_aggregate(f).await
            }
            Statement::Call(f) if f.name.to_string().eq_ignore_ascii_case("checkpoint") => {
                crate::storage::checkpoint::checkpoint(&self.server).await?;
                Ok(StatementResult::Command("CHECKPOINT".into()))
            }
            Statement::Truncate(t) if self.txn != TxnState::Idle => {
                // Inside a block TRUNCATE is a rewrite to no rows: the block's
                // own view of the table until COMMIT swaps it in (atomically
                // on every shard), nothing at all after ROLLBACK.
                let tables = t.table_names.iter().map(|target| self.lookup_table(&target.name)).collect::<DbResult<Vec<_>>>()?;
                let _held_by_block = self.rewrite_lock().await;
                let (tables, _) = self.truncate_closure(tables, truncate_cascades(t))?;
                for table in tables {
                    self.rewrite_rows(&table, Vec::new()).await?;
                }
                Ok(StatementResult::Command("TRUNCATE TABLE".into()))
            }
            Statement::Truncate(t) => {
                // A block that rewrote a table already holds the lock.
                let _alone = match self.txn_rewrites {
                    Some(_) => None,
                    None => Some(self.server.rewrites.clone().write_owned().await),
                };
                let tables = t.table_names.iter().map(|target| self.lookup_table(&target.name)).collect::<DbResult<Vec<_>>>()?;
                let (tables, _removing) = self.truncate_closure(tables, truncate_cascades(t))?;
                // Each table is its own write: referencing tables first, so
                // that a crash in between leaves no row without its key.
                for table in tables.into_iter().rev() {
                    let txn = self.server.next_txn();
                    for shard in &self.server.shards {
                        let oid = table.oid;
                        // Logged on every shard before the rows disappear, so recovery truncates too.
                        shard
                            .run_local(move |ctx| async move {
                                let mut payload = txn.to_le_bytes().to_vec();
                                payload.extend_from_slice(&oid.to_le_bytes());
                                let wal = ctx.wal()?;
                                ctx.begin_in_flight(txn, &wal);
                                let rx = wal
                                    .append(RecordType::Truncate, FLAG_SELF_COMMITTED, &payload)
                                    .await;
                                wait_durable(rx).await?;
                                ctx.storage.borrow_mut().truncate(oid);
                                ctx.end_in_flight(txn);
                                Ok::<(), DbError>(())
                            })
                            .await??;
                    }
                    self.pending.borrow_mut().remove(&table.oid);
                    self.server.forget_derived_write_state(table.oid);
                }
                Ok(StatementResult::Command("TRUNCATE TABLE".into()))
            }
            Statement::StartTransaction { .. } => {
                if self.txn != TxnState::Idle {
                    // PostgreSQL warns and carries on.
                    return Ok(StatementResult::Command("BEGIN".into()));
                }
                self.txn = TxnState::InBlock;
                self.txn_settings = Some(self.begin_settings());
                self.txn_catalog_changes.clear();
                Ok(StatementResult::Command("BEGIN".into()))
            }
            Statement::Commit { .. } => {
                let failed = self.txn == TxnState::Failed;
                if failed {
                    self.rollback_block().await;
                    return Ok(StatementResult::Command("ROLLBACK".into()));
                }
                self.commit_block().await?;
                Ok(StatementResult::Command("COMMIT".into()))
            }
            Statement::Rollback { .. } => {
                self.rollback_block().await;
                Ok(StatementResult::Command("ROLLBACK".into()))
            }
            Statement::Set(set) => self.set(set),
            Statement::ShowVariable { variable } => self.show_statement(variable),
            Statement::Reset(r) => {
                match &r.reset {
                    ast::Reset::ALL => {
                        self.settings = self.setting_provenance.reset.clone();
                        let p = Arc::make_mut(&mut self.setting_provenance);
                        p.sources = p.reset_sources.clone();
                    }
                    ast::Reset::SessionAuthorization => {}
                    ast::Reset::ConfigurationParameter(name) => {
                        self.reset_variable(&object_name_parts(name).join("."))?;
                    }
                }
                Ok(StatementResult::Command("RESET".into()))
            }
            Statement::Copy {
                source,
                to,
                target,
                options,
                legacy_options,
                ..
            } => {
                if *to {
                    return self.copy_to(source, target, options, legacy_options);
                }
                let (table_name, columns) = match source {
                    ast::CopySource::Table {
                        table_name,
                        columns,
                    } => (table_name, columns),
                    ast::CopySource::Query(_) => {
                        return Err(DbError::syntax("COPY FROM needs a table, not a query"))
                    }
                };
                let file = match target {
                    ast::CopyTarget::Stdin => None,
                    ast::CopyTarget::File { filename } => Some(filename.clone()),
                    _ => return Err(DbError::unsupported("COPY FROM a program is not supported; use FROM STDIN or a file")),
                };
                // Outside a block the COPY's write, and with it the rewrite
                // lock (shared), comes first: a block rewriting the table
                // holds the lock alone until it ends, and the COPY then finds
                // the table as that block left it.
                let write = match self.txn {
                    TxnState::Idle => Some(self.begin_locked_write().await),
                    _ => None,
                };
                let table = self.lookup_table(table_name)?;
                let opts = copy_options(options, legacy_options)?;
                let cols: Vec<String> = columns.iter().map(ident_name).collect();
                let binary = opts.format == CopyFormat::Binary;
                let count = if cols.is_empty() {
                    table.columns.len()
                } else {
                    cols.len()
                };
                let reader = CopyReader::new(&table, &cols, opts, self.eval_context().format)?;
                let (io_type, bytes_total) = match &file {
                    // The size as the COPY starts; 0 (unknown) if it cannot be read now
                    // (opening the file reports why).
                    Some(path) => (CopyIoType::File, std::fs::metadata(path).map_or(0, |m| m.len())),
                    None => (CopyIoType::Pipe, 0),
                };
                let progress = self.begin_copy_progress(table.oid, CopyCommand::From, io_type, bytes_total);
                let copy = Box::new(CopyIn {
                    source: CopySource::Table(TableCopy {
                        reader,
                        table,
                        write,
                        buffered: Vec::new(),
                        buffered_rows: 0,
                        unique_keys: Default::default(),
                        progress: Some(progress),
                    }),
                    binary,
                    columns: count,
                });
                match file {
                    None => Ok(StatementResult::CopyIn(copy)),
                    Some(path) => self.copy_from_file(&path, copy).await,
                }
            }
            Statement::Discard { .. } => Ok(StatementResult::Command("DISCARD ALL".into())),
            Statement::Deallocate { name, .. } => {
                if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
                    self.deallocations.push(None);
                    Ok(StatementResult::Command("DEALLOCATE ALL".into()))
                } else {
                    self.deallocations.push(Some(name.value.clone()));
                    Ok(StatementResult::Command("DEALLOCATE".into()))
                }
            }
            Statement::CreateFunction(cf) => self.create_function(cf),
            // TimescaleDB's functions are built in: creating the extension changes nothing.
            Statement::CreateExtension(ce) if ident_name(&ce.name) == "timescaledb" => {
                Ok(StatementResult::Command("CREATE EXTENSION".into()))
            }
            Statement::CreateExtension(ce) => Err(DbError::new(
                "58P01",
                format!("extension \"{}\" is not available", ident_name(&ce.name)),
            )),
            Statement::DropFunction(df) => self.drop_function(df),
            Statement::Comment {
                object_type,
                object_name,
                comment,
                ..
            } => self.comment(object_type, object_name, comment.as_deref()),
            Statement::AlterSchema(alter) => self.alter_schema(alter),
            Statement::AlterFunction(alter) => self.alter_function(alter),
            Statement::AlterView(ast::AlterView { name, if_exists, operation: ast::AlterViewOperation::OwnerTo(owner), .. }) => {
                self.relation_owner_to(name, *if_exists, owner)?;
                Ok(StatementResult::Command("ALTER VIEW".into()))
            }
            other => Err(DbError::unsupported(format!(
                "statement not supported yet: {}",
                first_words(&other.to_string())
            ))),
        }
    }

    /// Starts the implicit transaction of a multi-statement Query message.
    pub fn begin_implicit(&mut self) {
        self.txn = TxnState::InBlock;
        self.txn_settings = Some(self.begin_settings());
        self.txn_catalog_changes.clear();
    }

    /// Ends it: commits everything, or (after an error) nothing.
    pub async fn end_implicit(&mut self, commit: bool) -> DbResult<()> {
        if !commit || self.txn == TxnState::Failed {
            self.rollback_block().await;
            return Ok(());
        }
        self.commit_block().await
    }

    /// COMMIT of a block that did not fail: its rows written, then the
    /// tables it dropped removed for good (or, if the rows failed, back).
    async fn commit_block(&mut self) -> DbResult<()> {
        let committing = self.take_committing();
        let changes = std::mem::take(&mut self.txn_catalog_changes);
        self.end_transaction(true);
        let keys = std::mem::take(&mut self.txn_unique_keys);
        let fk_holds = std::mem::take(&mut self.txn_fk_holds);
        let written = self.write_committed(committing).await;
        self.end_block_keys(keys, written.is_err());
        // Held until the rows are stored (or not): the keys they reference stay meanwhile.
        drop(fk_holds);
        if written.is_err() {
            // Nothing of the block committed: its catalog changes go too.
            self.txn_catalog_changes = changes;
            let removed = self.undo_block_catalog();
            self.release_rolled_back(removed).await;
            return written;
        }
        self.finish_block_catalog(&changes).await
    }

    /// What COMMIT writes: the block's rows, the tables it rewrote, and the
    /// rewrite lock when it holds one.
    fn take_committing(&mut self) -> Committing {
        Committing {
            pending: std::mem::take(&mut *self.pending.borrow_mut()),
            replaced: std::mem::take(&mut *self.txn_replaced.borrow_mut()),
            dropped: std::mem::take(&mut *self.txn_dropped_ranges.borrow_mut()),
            rewrites: self.txn_rewrites.take(),
        }
    }

    /// Writes a committing transaction's rows as one write: a rewritten
    /// table's rows replace it, others are appended, and all of it commits
    /// on every shard or none of it does (a table dropped meanwhile fails
    /// the whole COMMIT; a crash before the Commit record leaves nothing).
    async fn write_committed(&self, c: Committing) -> DbResult<()> {
        // One table appended: the plain write (on one shard a single
        // self-committed record).
        if c.rewrites.is_none() && c.pending.len() <= 1 && c.dropped.is_empty() {
            for (table, batches) in c.pending {
                self.append_to_shards(table, batches).await?;
            }
            return Ok(());
        }
        let _shared = match &c.rewrites {
            Some(_) => None,
            None => Some(self.server.rewrites.read().await),
        };
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let (mut pending, replaced, dropped) = (c.pending, c.replaced, c.dropped);
        // Days swapped out: no flush or compaction meanwhile (see `ShardStorage::drop_ranges`).
        let server = self.server.clone();
        let _serial = match dropped.is_empty() {
            true => None,
            false => Some(crate::storage::checkpoint::hold_off_flushes(&server).await?),
        };
        let mut write = self.begin_write();
        let prepared = async {
            for table in &replaced {
                let rows = pending.remove(table).unwrap_or_default();
                // Dropped in the block after its rewrite: nothing to replace.
                let Some(def) = db.table_by_oid(*table) else { continue };
                self.prepare_replacement(&mut write, def, rows).await?;
            }
            for (table, (time, ranges)) in &dropped {
                // The days' rows, and the block's others, follow with the appended rows.
                if db.table_by_oid(*table).is_none() || replaced.contains(table) {
                    continue;
                }
                self.server.forget_derived_write_state(*table);
                self.prepare_drop_ranges(&mut write, *table, *time, ranges).await?;
            }
            for (table, batches) in pending {
                let def = db.table_by_oid(table).ok_or_else(|| {
                    DbError::new(sqlstate::UNDEFINED_TABLE, "table was dropped during the transaction")
                })?;
                self.prepare_rows(&mut write, table, &def.column_types(), batches).await?;
            }
            Ok(())
        }
        .await;
        let result = self.settle_write(write, prepared).await;
        drop(c.rewrites);
        result
    }

    /// ROLLBACK of a transaction that created schemas, tables or views
    /// removes them again, newest first (a view before the table under it).
    /// Also run when a session ends inside a block (a lost connection).
    /// A schema stays if it holds anything another session put there
    /// meanwhile; an object already gone (dropped in the block) is skipped.
    /// Then the tables it dropped come back ([`DroppingTable`]).
    /// Returns the tables it removed (a rewrite in the block stored rows
    /// in them: see [`Session::rollback_block`]).
    fn undo_block_catalog(&mut self) -> Vec<TableId> {
        let created = std::mem::take(&mut self.txn_catalog_changes);
        let block = self.txn_block_id.take();
        if created.is_empty() {
            self.restore_dropped_tables();
            return Vec::new();
        }
        let _ = self.server.catalog.update_database(&self.database, |db| {
            forget_provisional(db, &created, block);
            for object in created.iter().rev() {
                if let Some(p) = object.provisional() {
                    db.remove_provisional(&p);
                    continue;
                }
                if let Some(undo) = object.block_undo() {
                    undo.apply(db);
                }
            }
            Ok(())
        });
        for change in &created {
            if let BlockCatalogChange::InPlace(BlockUndo::TableAltered { before, .. }) = change {
                self.server.forget_derived_write_state(before.oid);
            }
        }
        // After the block's own tables went: a table it dropped and then
        // made again under the same name gets its name back.
        let dropped_some = !self.txn_dropped.is_empty();
        self.restore_dropped_tables();
        // A table the block renamed and then dropped (or rewrote) was on the
        // dropping list at the first pass: its old name and definition now.
        let altered: Vec<_> = created
            .iter()
            .rev()
            .filter_map(|c| match c {
                BlockCatalogChange::InPlace(BlockUndo::TableAltered { before, indexes }) => Some((before, indexes)),
                _ => None,
            })
            .collect();
        if dropped_some && !altered.is_empty() {
            let _ = self.server.catalog.update_database(&self.database, |db| {
                for (before, indexes) in &altered {
                    restore_altered_table(db, before, indexes);
                }
                Ok(())
            });
        }
        created
            .iter()
            .filter_map(|c| match c {
                BlockCatalogChange::TableCreated(t) => Some(t.oid),
                _ => None,
            })
            .collect()
    }

    /// ROLLBACK (or a COMMIT of a failed block): the block's catalog
    /// changes undone, the rows its rewrites stored in tables it made
    /// released, the transaction ended.
    async fn rollback_block(&mut self) {
        let removed = self.undo_block_catalog();
        self.end_transaction(false);
        self.release_rolled_back(removed).await;
    }

    /// The storage of tables a rolled-back block made (see `rollback_block`).
    async fn release_rolled_back(&self, tables: Vec<TableId>) {
        for oid in tables {
            // Nothing else names the table: a failure leaves rows the next
            // checkpoint discards.
            let _ = self.release_table_storage(oid).await;
        }
    }

    /// CREATE SCHEMA (42P06 if it exists, unless `if_not_exists`); inside a
    /// block its ROLLBACK removes the schema again (when empty).
    pub(super) fn create_schema(&mut self, name: &str, if_not_exists: bool) -> DbResult<()> {
        let oid = self.server.catalog.allocate_oid();
        let created = self.server.catalog.update_database(&self.database, |db| {
            if db.schemas.contains_key(name) {
                if if_not_exists {
                    return Ok(false);
                }
                return Err(DbError::new(sqlstate::DUPLICATE_SCHEMA, format!("schema \"{name}\" already exists")));
            }
            let schema = Schema { oid, name: name.to_string(), ..Default::default() };
            db.schemas.insert(name.to_string(), schema);
            Ok(true)
        })?;
        if created && self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::SchemaCreated { name: name.to_string(), oid });
        }
        Ok(())
    }

    /// Notes a catalog change of the open block for its ROLLBACK. The
    /// catalog lists it too, so that a restart before the block's COMMIT
    /// undoes it: an object it created as provisional, an in-place change
    /// in `block_undo`.
    fn record_block_change(&mut self, change: BlockCatalogChange) {
        let (provisional, undo) = (change.provisional(), change.block_undo());
        if provisional.is_some() || undo.is_some() {
            let block = match self.txn_block_id {
                Some(id) => id,
                None => *self.txn_block_id.insert(self.server.catalog.allocate_oid()),
            };
            // A failed save leaves it off the lists: only a crash before the
            // COMMIT would then keep the change, as before the lists existed.
            // (The change itself was saved a moment before: a crash in
            // between keeps it too.)
            let _ = self.server.catalog.update_database(&self.database, |db| {
                db.provisional.extend(provisional);
                db.block_undo.extend(undo.map(|undo| BlockUndoEntry { block, undo }));
                Ok(())
            });
        }
        self.txn_catalog_changes.push(change);
    }

    /// The tables the open block dropped, back in their schemas (ROLLBACK,
    /// a failed COMMIT, the session's end). One whose name another session
    /// took meanwhile comes back renamed, with a WARNING.
    fn restore_dropped_tables(&mut self) {
        let dropped = std::mem::take(&mut self.txn_dropped);
        if dropped.is_empty() {
            return;
        }
        let catalog = &self.server.catalog;
        let renamed = catalog.update_database(&self.database, |db| {
            Ok(dropped.iter().filter_map(|&oid| db.restore_dropping(oid, || catalog.allocate_oid())).collect::<Vec<_>>())
        });
        for name in renamed.unwrap_or_default() {
            self.warning(format!("a table the transaction dropped is back as \"{name}\": its name was taken meanwhile"));
        }
    }

    /// COMMIT's catalog side, in one catalog change: what the block created
    /// is no longer provisional, what it dropped goes for good (then its
    /// rows are released on every shard).
    async fn finish_block_catalog(&mut self, changes: &[BlockCatalogChange]) -> DbResult<()> {
        let dropped = std::mem::take(&mut self.txn_dropped);
        let block = self.txn_block_id.take();
        if dropped.is_empty() && block.is_none() && !changes.iter().any(|c| c.provisional().is_some()) {
            return Ok(());
        }
        self.server.catalog.update_database(&self.database, |db| {
            forget_provisional(db, changes, block);
            db.dropping.retain(|d| !dropped.contains(&d.table.oid));
            Ok(())
        })?;
        for oid in dropped {
            self.release_table_storage(oid).await?;
        }
        Ok(())
    }

    /// Frees what the server and the shards hold for a table whose catalog
    /// entry is gone (`remove_table_entry`): its derived write state and
    /// every shard's rows.
    async fn release_table_storage(&self, oid: TableId) -> DbResult<()> {
        self.server.forget_derived_write_state(oid);
        for shard in &self.server.shards {
            shard.run(move |ctx| ctx.storage.borrow_mut().drop_table(oid)).await?;
        }
        Ok(())
    }

    fn show(&self, name: &str) -> DbResult<String> {
        if name.eq_ignore_ascii_case("session_authorization") {
            return Ok(self.user.clone());
        }
        self.settings.get(&name.to_lowercase()).cloned().ok_or_else(|| settings::unrecognized(name))
    }

    /// SHOW name, or SHOW ALL: the rows and their columns.
    fn show_statement(&self, variable: &[ast::Ident]) -> DbResult<StatementResult> {
        let name = show_name(variable);
        let (fields, columns) = if name.eq_ignore_ascii_case("all") {
            let rows = settings::show_all(&self.settings);
            let column = |i: usize| {
                let values: Vec<Datum> = rows.iter().map(|r| Datum::text(r[i].clone())).collect();
                Column::from_datums(DataType::Text, &values)
            };
            (show_fields(&name), vec![column(0), column(1), column(2)])
        } else {
            let value = self.show(&name)?;
            (show_fields(&name), vec![Column::from_datums(DataType::Text, &[Datum::text(value)])])
        };
        Ok(StatementResult::Batches {
            fields,
            batches: vec![Batch::from_columns(columns)],
            tag: "SHOW".into(),
        })
    }

    fn set(&mut self, set: &ast::Set) -> DbResult<StatementResult> {
        match set {
            ast::Set::SingleAssignment {
                variable,
                values,
                scope,
                ..
            } => {
                let name = object_name_parts(variable).join(".");
                let is_default = matches!(values.as_slice(),
                    [ast::Expr::Identifier(i)] if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"));
                let value = if is_default { None } else { Some(set_value_text(&name, values)?) };
                let local = matches!(scope, Some(ast::ContextModifier::Local));
                if local && self.txn == TxnState::Idle {
                    let mut w = DbError::new("25P01", "SET LOCAL can only be used in transaction blocks");
                    w.severity = "WARNING";
                    self.notices.push(w);
                }
                self.set_setting(&name, value.as_deref(), local)?;
            }
            ast::Set::SetTimeZone { value, local } => {
                let v = match value {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(s) => Some(s.clone()),
                        other => Some(other.to_string()),
                    },
                    ast::Expr::Identifier(i)
                        if i.quote_style.is_none()
                            && ["local", "default"].contains(&i.value.to_lowercase().as_str()) =>
                    {
                        None
                    }
                    other => Some(other.to_string()),
                };
                self.set_setting("timezone", v.as_deref(), *local)?;
            }
            ast::Set::SetNames { .. } | ast::Set::SetNamesDefault { .. } => {}
            ast::Set::SetTransaction { .. } => {}
            other => {
                return Err(DbError::unsupported(format!(
                    "SET form not supported: {other}"
                )))
            }
        }
        Ok(StatementResult::Command("SET".into()))
    }

    /// SET (`value` None: DEFAULT, as RESET) or set_config(): changes the
    /// setting for the session, or with `local` until the transaction ends
    /// (outside a transaction block, not at all). Returns the value SHOW now prints.
    pub fn set_setting(&mut self, name: &str, value: Option<&str>, local: bool) -> DbResult<String> {
        let key = name.to_lowercase();
        let before = self.setting_state(&key);
        match value {
            Some(v) => self.set_variable(name, v)?,
            None => self.reset_variable(name)?,
        }
        let now = self.settings.get(&key).cloned().unwrap_or_default();
        if local {
            if self.txn == TxnState::Idle {
                self.restore_setting(key, before);
            } else {
                self.local_settings.push((key, before));
            }
        }
        Ok(now)
    }

    fn is_superuser(&self) -> bool {
        self.settings.get("is_superuser").is_some_and(|v| v == "on")
    }

    /// Sets a setting for the session (SET, a startup parameter): checked
    /// and stored as SHOW prints it (see `settings.rs`).
    pub fn set_variable(&mut self, name: &str, value: &str) -> DbResult<()> {
        let key = name.to_lowercase();
        let value = match settings::lookup(&key) {
            Some(s) => {
                settings::check_context(s, self.is_superuser())?;
                settings::canonical_value(s, value, self.settings.get(&key).map(String::as_str))?
            }
            None if settings::check_placeholder(&key)? => value.to_string(),
            None => return Err(settings::unrecognized(name)),
        };
        self.settings.insert(key.clone(), value);
        Arc::make_mut(&mut self.setting_provenance)
            .sources
            .insert(key, settings::Source::Session);
        Ok(())
    }

    /// RESET name: the value (and source) the session started with.
    fn reset_variable(&mut self, name: &str) -> DbResult<()> {
        let key = name.to_lowercase();
        match settings::lookup(&key) {
            Some(s) => settings::check_context(s, self.is_superuser())?,
            None if settings::check_placeholder(&key)? => {}
            None => return Err(settings::unrecognized(name)),
        }
        let p = &self.setting_provenance;
        let state = (
            p.reset.get(&key).cloned(),
            p.reset_sources.get(&key).copied().unwrap_or(settings::Source::Default),
        );
        self.restore_setting(key, state);
        Ok(())
    }

    /// The settings and sources BEGIN saves for ROLLBACK.
    fn begin_settings(&self) -> (BTreeMap<String, String>, BTreeMap<String, settings::Source>) {
        (self.settings.clone(), self.setting_provenance.sources.clone())
    }

    fn lookup_table(&self, name: &ast::ObjectName) -> DbResult<Arc<TableDef>> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval = self.eval_context();
        self.binder(&catalog, db, &eval, vec![]).resolve_table(name)
    }

    /// CREATE TABLE (its `AS query` form is `create_table_as`'s).
    fn create_table(&mut self, ct: &ast::CreateTable) -> DbResult<StatementResult> {
        let parts = object_name_parts(&ct.name);
        let (schema, name) = match parts.as_slice() {
            [t] => (self.creation_schema()?, t.clone()),
            [s, t] => (s.clone(), t.clone()),
            _ => return Err(DbError::syntax(format!("improper table name: {}", ct.name))),
        };
        let mut columns = Vec::new();
        let mut sequences = Vec::new();
        // PRIMARY KEY and UNIQUE constraints: (constraint name, columns, primary).
        let mut unique_constraints: Vec<(Option<String>, Vec<String>, bool)> = Vec::new();
        // CHECKs as written, column and table constraints alike: (name given, expression).
        let mut pending_checks: Vec<(Option<String>, ast::Expr)> = Vec::new();
        // FOREIGN KEYs as written, column and table constraints alike, with their columns.
        let mut pending_foreign_keys: Vec<(ast::ForeignKeyConstraint, Vec<String>)> = Vec::new();
        for c in &ct.columns {
            let cname = ident_name(&c.name);
            if columns.iter().any(|x: &ColumnDef| x.name == cname) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{cname}\" specified more than once"),
                ));
            }
            let type_name = c.data_type.to_string().to_lowercase();
            let serial = matches!(
                type_name.as_str(),
                "serial" | "bigserial" | "smallserial" | "serial4" | "serial8" | "serial2"
            );
            let (mut def, keys) = column_def(c)?;
            for opt in &c.options {
                match &opt.option {
                    ast::ColumnOption::Check(check) => {
                        let given = opt.name.as_ref().or(check.name.as_ref()).map(ident_name);
                        pending_checks.push((given, (*check.expr).clone()));
                    }
                    ast::ColumnOption::ForeignKey(fk) => {
                        let mut fk = fk.clone();
                        fk.name = opt.name.clone().or(fk.name);
                        pending_foreign_keys.push((fk, vec![cname.clone()]));
                    }
                    _ => {}
                }
            }
            // An identity column takes its values from a sequence as a serial one does.
            let sequenced = serial || def.identity.is_some();
            def.not_null |= sequenced;
            for (constraint, primary) in keys {
                unique_constraints.push((constraint, vec![cname.clone()], primary));
            }
            if sequenced {
                let seq_name = format!("{name}_{cname}_seq");
                def.default = nextval_default(&schema, &seq_name);
                // The column's type bounds its sequence (serial: integer), as in PostgreSQL.
                let options = c.options.iter().find_map(|o| match &o.option {
                    ast::ColumnOption::Generated { sequence_options: Some(options), .. } => Some(options.as_slice()),
                    _ => None,
                });
                let settings = sequences::sequence_settings(options.unwrap_or(&[]), def.data_type)?;
                sequences.push((seq_name, settings));
            }
            columns.push(def);
        }
        for constraint in &ct.constraints {
            let (name, cols, primary) = match constraint {
                ast::TableConstraint::PrimaryKey(pk) => (&pk.name, &pk.columns, true),
                ast::TableConstraint::Unique(u) => (&u.name, &u.columns, false),
                ast::TableConstraint::Check(check) => {
                    pending_checks.push((check.name.as_ref().map(ident_name), (*check.expr).clone()));
                    continue;
                }
                ast::TableConstraint::ForeignKey(fk) => {
                    pending_foreign_keys.push((fk.clone(), fk.columns.iter().map(ident_name).collect()));
                    continue;
                }
                _ => continue,
            };
            let names: Vec<String> = cols.iter().map(ident_name_of_index_column).collect();
            for n in &names {
                let Some(c) = columns.iter_mut().find(|c| c.name == *n) else {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{n}\" named in key does not exist"),
                    ));
                };
                if primary {
                    c.not_null = true;
                }
            }
            unique_constraints.push((name.as_ref().map(ident_name), names, primary));
        }
        if unique_constraints.iter().filter(|c| c.2).count() > 1 {
            return Err(DbError::new(
                "42P16",
                format!("multiple primary keys for table \"{name}\" are not allowed"),
            ));
        }
        let index_oids: Vec<u32> = unique_constraints.iter().map(|_| self.server.catalog.allocate_oid()).collect();
        let oid = self.server.catalog.allocate_oid();
        // The CHECKs, bound over the table being made (a bad one fails here).
        let mut shape = TableDef {
            oid,
            name: name.clone(),
            schema: schema.clone(),
            columns: columns.clone(),
            time_column: None,
            frame_files: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
        };
        for (given, expr) in &pending_checks {
            let check = self.new_check(&Arc::new(shape.clone()), given.clone(), expr)?;
            shape.checks.push(check);
        }
        // The FOREIGN KEYs (one may reference the table being made, by its own keys).
        let own_keys: Vec<(u32, Vec<String>, bool)> =
            unique_constraints.iter().zip(&index_oids).map(|((_, cols, primary), oid)| (*oid, cols.clone(), *primary)).collect();
        for (fk, cols) in &pending_foreign_keys {
            let made = self.new_foreign_key(&shape, fk, cols.clone(), Some(&own_keys))?;
            if shape.foreign_keys.iter().any(|f| f.name == made.name) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("constraint \"{}\" for relation \"{name}\" already exists", made.name),
                ));
            }
            shape.foreign_keys.push(made);
        }
        let checks = shape.checks;
        let foreign_keys = shape.foreign_keys;
        let seq_oids: Vec<u32> = sequences
            .iter()
            .map(|_| self.server.catalog.allocate_oid())
            .collect();
        let if_not_exists = ct.if_not_exists;
        let created = self.server.catalog.update_database(&self.database, |db| {
            let s = db.schemas.get_mut(&schema).ok_or_else(|| {
                DbError::new(
                    sqlstate::INVALID_SCHEMA_NAME,
                    format!("schema \"{schema}\" does not exist"),
                )
            })?;
            if s.relation_kind(&name).is_some() {
                if if_not_exists {
                    return Ok(None);
                }
                return Err(DbError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists"),
                ));
            }
            for ((seq, settings), soid) in sequences.iter().zip(&seq_oids) {
                let sequence = Sequence::with_settings(*soid, seq.clone(), *settings);
                s.sequences.insert(seq.clone(), Arc::new(sequence));
            }
            let def = Arc::new(TableDef {
                oid,
                name: name.clone(),
                schema: schema.clone(),
                columns,
                time_column: None,
                frame_files: Vec::new(),
                checks,
                foreign_keys,
            });
            s.tables.insert(name.clone(), def.clone());
            // The constraints' unique indexes, named as PostgreSQL names them.
            for ((given, cols, primary), ioid) in unique_constraints.iter().zip(&index_oids) {
                let index_name = match given {
                    Some(n) => n.clone(),
                    None if *primary => choose_relation_name(s, &name, "", "pkey"),
                    None => choose_relation_name(s, &name, &cols.join("_"), "key"),
                };
                if s.relation_kind(&index_name).is_some() {
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_TABLE,
                        format!("relation \"{index_name}\" already exists"),
                    ));
                }
                s.indexes.insert(
                    index_name.clone(),
                    Arc::new(IndexDef {
                        oid: *ioid,
                        name: index_name,
                        table: name.clone(),
                        unique: true,
                        primary: *primary,
                        constraint: true,
                        method: "btree".into(),
                        keys: cols.iter().map(|c| crate::catalog::quote_ident(c)).collect(),
                        include: vec![],
                        predicate: None,
                    }),
                );
            }
            Ok(Some(def))
        })?;
        if let (Some(def), true) = (created, self.txn != TxnState::Idle) {
            self.record_block_change(BlockCatalogChange::TableCreated(def));
        }
        Ok(StatementResult::Command("CREATE TABLE".into()))
    }

    async fn drop(
        &mut self,
        object_type: &ast::ObjectType,
        if_exists: bool,
        names: &[ast::ObjectName],
        cascade: bool,
    ) -> DbResult<StatementResult> {
        match object_type {
            ast::ObjectType::Index => self.drop_indexes(if_exists, names),
            ast::ObjectType::MaterializedView => self.drop_materialized_views(if_exists, names).await,
            ast::ObjectType::Sequence => self.drop_sequences(if_exists, names, cascade),
            ast::ObjectType::View => self.drop_views(if_exists, names, cascade),
            ast::ObjectType::Table => {
                for n in names {
                    self.check_relation_kind(n, RelationKind::Table)?;
                }
                // Foreign keys among the tables dropped together do not hold their drop up.
                let dropping: Vec<TableId> = names.iter().filter_map(|n| self.lookup_table(n).ok()).map(|t| t.oid).collect();
                for n in names {
                    let table = match self.lookup_table(n) {
                        Ok(t) => t,
                        Err(e) if e.code == sqlstate::UNDEFINED_TABLE => {
                            if if_exists {
                                let n = object_name_parts(n).join(".");
                                self.notice(
                                    sqlstate::SUCCESSFUL_COMPLETION,
                                    format!("table \"{n}\" does not exist, skipping"),
                                );
                                continue;
                            }
                            let n = object_name_parts(n).join(".");
                            return Err(DbError::new(
                                sqlstate::UNDEFINED_TABLE,
                                format!("table \"{n}\" does not exist"),
                            ));
                        }
                        Err(e) => return Err(e),
                    };
                    self.drop_referencing_foreign_keys(&table, &dropping, cascade)?;
                    self.drop_dependent_continuous_aggregates(&table, cascade).await?;
                    if self.txn != TxnState::Idle && !self.tables_made_in_block().contains(&table.oid) {
                        self.drop_table_in_block(&table, cascade)?;
                        continue;
                    }
                    let dropped_views =
                        self.server.catalog.update_database(&self.database, |db| {
                            let views = dependent_views(
                                db,
                                &(table.schema.clone(), table.name.clone()),
                                "table",
                                cascade,
                            )?;
                            for (vs, vn) in &views {
                                if let Some(s) = db.schemas.get_mut(vs) {
                                    s.views.remove(vn);
                                }
                            }
                            if remove_table_entry(db, &table) {
                                if let Some(s) = db.schemas.get_mut(&table.schema) {
                                    s.sequences.retain(|k, _| !is_serial_sequence_of(k, &table.name));
                                }
                            }
                            Ok(views)
                        })?;
                    self.cascade_view_notices(&dropped_views);
                    self.release_table_storage(table.oid).await?;
                }
                Ok(StatementResult::Command("DROP TABLE".into()))
            }
            ast::ObjectType::Schema => {
                for n in names {
                    let name = object_name_parts(n).join(".");
                    self.drop_schema(&name, if_exists, cascade).await?;
                }
                Ok(StatementResult::Command("DROP SCHEMA".into()))
            }
            ast::ObjectType::Database => {
                self.refuse_in_block("DROP DATABASE")?;
                for n in names {
                    let name = object_name_parts(n).join(".");
                    if name == self.database {
                        return Err(DbError::new(
                            sqlstate::OBJECT_IN_USE,
                            "cannot drop the currently open database",
                        ));
                    }
                    self.server.catalog.update(|cat| {
                        if cat.databases.remove(&name).is_none() && !if_exists {
                            return Err(DbError::new(
                                sqlstate::INVALID_CATALOG_NAME,
                                format!("database \"{name}\" does not exist"),
                            ));
                        }
                        Ok(())
                    })?;
                }
                Ok(StatementResult::Command("DROP DATABASE".into()))
            }
            other => Err(DbError::unsupported(format!(
                "DROP {other} is not supported yet"
            ))),
        }
    }

    /// 25001 for a statement PostgreSQL never runs inside a transaction
    /// block (it could not be undone).
    fn refuse_in_block(&self, statement: &str) -> DbResult<()> {
        match self.txn {
            TxnState::Idle => Ok(()),
            _ => Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                format!("{statement} cannot run inside a transaction block"),
            )),
        }
    }

    /// 42809 when `name` is an existing relation of another kind than `wanted`
    /// (PostgreSQL checks this even with IF EXISTS).
    fn check_relation_kind(&self, name: &ast::ObjectName, wanted: RelationKind) -> DbResult<()> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval = self.eval_context();
        let (schema, rel) = self
            .binder(&catalog, db, &eval, vec![])
            .relation_schema(name)?;
        match db.schemas.get(&schema).and_then(|s| s.relation_kind(&rel)) {
            Some(kind) if kind != wanted => Err(kind.wrong_type_error(&rel, wanted)),
            _ => Ok(()),
        }
    }

    /// The schema and name `name` refers to (`None` when no such relation exists).
    fn find_relation(
        &self,
        name: &ast::ObjectName,
    ) -> DbResult<Option<(String, String, RelationKind)>> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval = self.eval_context();
        let (schema, rel) = self
            .binder(&catalog, db, &eval, vec![])
            .relation_schema(name)?;
        Ok(db
            .schemas
            .get(&schema)
            .and_then(|s| s.relation_kind(&rel))
            .map(|k| (schema, rel, k)))
    }

    /// DROP SCHEMA: without CASCADE only an empty schema goes (2BP01 naming
    /// what depends on it); with CASCADE its tables (their storage, indexes
    /// and serial sequences), views, sequences and functions go too, and so
    /// do views elsewhere built on them — what re-ingesting an MCAP fleet
    /// into a fresh schema needs. Objects are named as PostgreSQL names them:
    /// unqualified where the search path finds them, each outside view after
    /// the relation it is built on.
    async fn drop_schema(&mut self, name: &str, if_exists: bool, cascade: bool) -> DbResult<()> {
        if matches!(name, "pg_catalog" | "information_schema") {
            return Err(DbError::new(
                "2BP01",
                format!("cannot drop schema {name} because it is required by the database system"),
            ));
        }
        let search_path = self.search_path();
        let display = |schema: &str, object: &str| {
            if schema != name && search_path.iter().any(|s| s == schema) {
                crate::catalog::quote_ident(object)
            } else {
                format!("{}.{}", crate::catalog::quote_ident(schema), crate::catalog::quote_ident(object))
            }
        };
        // Inside a block the schema's tables are kept until COMMIT (see
        // `drop_table_in_block`), except those the block made itself.
        let in_block = self.txn != TxnState::Idle;
        let made_here = self.tables_made_in_block();
        let views_made_here = self.views_made_in_block();
        if cascade {
            // Foreign keys of other schemas' tables that reference its tables go first.
            let tables: Vec<Arc<TableDef>> = {
                let catalog = self.server.catalog.snapshot();
                let db = catalog.database(&self.database)?;
                db.schemas.get(name).map(|s| s.tables.values().cloned().collect()).unwrap_or_default()
            };
            let oids: Vec<TableId> = tables.iter().map(|t| t.oid).collect();
            for t in &tables {
                self.drop_referencing_foreign_keys(t, &oids, true)?;
            }
        }
        let dropped = self.server.catalog.update_database(&self.database, |db| {
            let Some(schema) = db.schemas.get(name) else {
                return if if_exists {
                    Ok(None)
                } else {
                    Err(DbError::new(
                        sqlstate::INVALID_SCHEMA_NAME,
                        format!("schema \"{name}\" does not exist"),
                    ))
                };
            };
            // (what goes, why it goes), in PostgreSQL's order.
            let mut objects: Vec<(String, String)> = Vec::new();
            let mut outside: Vec<(String, String)> = Vec::new();
            for (kind, object, _) in schema_contents(schema) {
                let text = format!("{kind} {}", display(name, &object));
                objects.push((text.clone(), format!("schema {}", crate::catalog::quote_ident(name))));
                if kind != "table" && kind != "view" {
                    continue;
                }
                let mut frontier = vec![(text, (name.to_string(), object))];
                while let Some((rel_text, rel)) = frontier.pop() {
                    for s in db.schemas.values().filter(|s| s.name != name) {
                        for v in s.views.values() {
                            let key = (v.schema.clone(), v.name.clone());
                            if v.depends_on.contains(&rel) && !outside.contains(&key) {
                                let text = format!("view {}", display(&v.schema, &v.name));
                                objects.push((text.clone(), rel_text.clone()));
                                outside.push(key.clone());
                                frontier.push((text, key));
                            }
                        }
                    }
                }
            }
            if !objects.is_empty() && !cascade {
                return Err(DbError::new(
                    "2BP01",
                    format!("cannot drop schema {name} because other objects depend on it"),
                )
                .with_detail(
                    objects.iter().map(|(what, on)| format!("{what} depends on {on}")).collect::<Vec<_>>().join("\n"),
                )
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            let tables: Vec<TableId> = schema.tables.values().map(|t| t.oid).collect();
            let keep: Vec<Arc<TableDef>> = match in_block {
                true => schema.tables.values().filter(|t| !made_here.contains(&t.oid)).cloned().collect(),
                false => Vec::new(),
            };
            let mut views: Vec<Arc<ViewDef>> = schema.views.values().cloned().collect();
            for (vs, vn) in &outside {
                if let Some(v) = db.schemas.get_mut(vs).and_then(|s| s.views.remove(vn)) {
                    views.push(v);
                }
            }
            let mut kept = Vec::new();
            let mut undo = None;
            if in_block {
                // The schema's own views and those outside it over its
                // relations come back with its first kept table.
                views.retain(|v| !views_made_here.iter().any(|m| Arc::ptr_eq(m, v)));
                for table in keep {
                    if db.start_dropping(&table, std::mem::take(&mut views)) {
                        kept.push(table.oid);
                    }
                }
                let schema = &db.schemas[name];
                undo = Some(BlockUndo::SchemaDropped {
                    name: name.to_string(),
                    oid: schema.oid,
                    functions: schema.functions.values().flatten().cloned().collect(),
                    views,
                });
            }
            db.schemas.remove(name);
            Ok(Some((tables, kept, objects.into_iter().map(|(what, _)| what).collect::<Vec<_>>(), undo)))
        })?;
        let Some((tables, kept, objects, undo)) = dropped else {
            self.notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("schema \"{name}\" does not exist, skipping"),
            );
            return Ok(());
        };
        self.cascade_notices(&objects);
        if let Some(undo) = undo {
            self.record_block_change(BlockCatalogChange::InPlace(undo));
        }
        for oid in tables {
            if kept.contains(&oid) {
                self.keep_dropped_until_commit(oid);
            } else {
                self.release_table_storage(oid).await?;
            }
        }
        Ok(())
    }

    /// The NOTICE a cascading DROP gives: each object it took besides the
    /// one named (`view v`, `table s.t`), one line each past the first.
    fn cascade_notices(&mut self, objects: &[String]) {
        match objects {
            [] => {}
            [one] => self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("drop cascades to {one}")),
            many => {
                let mut n = DbError::new(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    format!("drop cascades to {} other objects", many.len()),
                );
                n.severity = "NOTICE";
                n = n.with_detail(
                    many.iter().map(|o| format!("drop cascades to {o}")).collect::<Vec<_>>().join("\n"),
                );
                self.notices.push(n);
            }
        }
    }

    /// DROP TABLE inside a transaction block: the table leaves its schema
    /// (with its indexes, serial sequences and, with CASCADE, the views over
    /// it) for the catalog's dropping list, its rows stay stored, and the
    /// block's COMMIT removes it for good; ROLLBACK puts it all back. A table
    /// the block created itself is dropped at once (ROLLBACK would remove it).
    fn drop_table_in_block(&mut self, table: &Arc<TableDef>, cascade: bool) -> DbResult<()> {
        let made_here = self.views_made_in_block();
        let dropped_views = self.server.catalog.update_database(&self.database, |db| {
            let views = dependent_views(db, &(table.schema.clone(), table.name.clone()), "table", cascade)?;
            let mut taken_views = Vec::new();
            for (vs, vn) in &views {
                if let Some(v) = db.schemas.get_mut(vs).and_then(|s| s.views.remove(vn)) {
                    if !made_here.iter().any(|m| Arc::ptr_eq(m, &v)) {
                        taken_views.push(v);
                    }
                }
            }
            db.start_dropping(table, taken_views);
            Ok(views)
        })?;
        self.cascade_view_notices(&dropped_views);
        self.keep_dropped_until_commit(table.oid);
        Ok(())
    }

    /// A table the block moved onto the dropping list: COMMIT releases it,
    /// ROLLBACK puts it back. The block's own rows of it go with it.
    fn keep_dropped_until_commit(&mut self, table: TableId) {
        self.txn_dropped.push(table);
        self.pending.borrow_mut().remove(&table);
        self.txn_replaced.borrow_mut().remove(&table);
        self.txn_dropped_ranges.borrow_mut().remove(&table);
    }

    /// An ALTER TABLE rewrite inside the block (the catalog side is done:
    /// `new` is listed provisional, `old` is on the dropping list unless the
    /// block made it): ROLLBACK removes `new` and puts `old` back, COMMIT
    /// drops `old` for good. A table the block made itself is simply
    /// replaced by `new` in the block's list of tables made.
    pub(super) fn note_rewritten_in_block(&mut self, old: &Arc<TableDef>, new: &Arc<TableDef>, made_in_block: bool) {
        if made_in_block {
            self.txn_catalog_changes
                .retain(|c| !matches!(c, BlockCatalogChange::TableCreated(t) if t.oid == old.oid));
        } else {
            self.keep_dropped_until_commit(old.oid);
        }
        // Listed provisional by the rewrite's own catalog change already.
        self.txn_catalog_changes.push(BlockCatalogChange::TableCreated(new.clone()));
    }

    /// Tables the open block made: a DROP in the block takes them at once
    /// (ROLLBACK would remove them anyway), not onto the dropping list.
    fn tables_made_in_block(&self) -> Vec<TableId> {
        self.txn_catalog_changes
            .iter()
            .filter_map(|c| match c {
                BlockCatalogChange::TableCreated(t) => Some(t.oid),
                _ => None,
            })
            .collect()
    }

    /// Views the open block made: a DROP in the block takes them for good
    /// (ROLLBACK would remove them anyway), not to be put back.
    fn views_made_in_block(&self) -> Vec<Arc<ViewDef>> {
        self.txn_catalog_changes
            .iter()
            .filter_map(|c| match c {
                BlockCatalogChange::ViewMade { view, .. } => Some(view.clone()),
                _ => None,
            })
            .collect()
    }

    /// `cascade_notices` for views, named as `dependent_views` gives them.
    fn cascade_view_notices(&mut self, views: &[(String, String)]) {
        let objects: Vec<String> = views.iter().map(|(_, v)| format!("view {v}")).collect();
        self.cascade_notices(&objects);
    }

    async fn create_index(&mut self, ci: &ast::CreateIndex) -> DbResult<StatementResult> {
        let table = self.lookup_table(&ci.table_name)?;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval = self.eval_context();
        let mut binder = self.binder(&catalog, db, &eval, vec![]);
        let method = match &ci.using {
            None => "btree".to_string(),
            Some(m) => {
                let m = m.to_string().to_lowercase();
                if !["btree", "hash", "brin", "gin", "gist", "spgist"].contains(&m.as_str()) {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("access method \"{m}\" does not exist"),
                    ));
                }
                m
            }
        };
        let mut keys = Vec::new();
        let mut name_parts: Vec<String> = Vec::new();
        for c in &ci.columns {
            let part = match &c.column.expr {
                ast::Expr::Identifier(i) => {
                    let n = ident_name(i);
                    if table.column_index(&n).is_none() {
                        return Err(DbError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!("column \"{n}\" does not exist"),
                        ));
                    }
                    n
                }
                e => {
                    binder.bind_over_table(&table, e)?;
                    match e {
                        ast::Expr::Function(f) => object_name_parts(&f.name)
                            .pop()
                            .unwrap_or_else(|| "expr".into()),
                        _ => "expr".to_string(),
                    }
                }
            };
            name_parts.push(part);
            keys.push(c.to_string());
        }
        let mut include = Vec::new();
        for i in &ci.include {
            let n = ident_name(i);
            if table.column_index(&n).is_none() {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{n}\" does not exist"),
                ));
            }
            name_parts.push(n.clone());
            include.push(n);
        }
        if let Some(p) = &ci.predicate {
            let e = binder.bind_over_table(&table, p)?;
            binder.coerce(e, DataType::Bool, "WHERE")?;
        }
        drop(binder);
        // PostgreSQL's ChooseIndexColumnNames: repeated names get a number.
        let mut seen: Vec<String> = Vec::new();
        for part in name_parts.iter_mut() {
            let base = part.clone();
            let mut k = 0;
            while seen.contains(part) {
                k += 1;
                *part = format!("{base}{k}");
            }
            seen.push(part.clone());
        }
        let given = ci.name.as_ref().and_then(|n| object_name_parts(n).pop());
        let oid = self.server.catalog.allocate_oid();
        let (if_not_exists, unique) = (ci.if_not_exists, ci.unique);
        let predicate = ci.predicate.as_ref().map(|p| p.to_string());
        let skipped = self.server.catalog.update_database(&self.database, |db| {
            let s = db.schemas.get_mut(&table.schema).ok_or_else(|| {
                DbError::internal(format!("schema \"{}\" vanished", table.schema))
            })?;
            if s.tables.get(&table.name).is_none_or(|t| t.oid != table.oid) {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_TABLE,
                    format!("relation \"{}\" does not exist", table.name),
                ));
            }
            let name = match &given {
                Some(n) => {
                    if s.relation_kind(n).is_some() {
                        if if_not_exists {
                            return Ok((Some(n.clone()), n.clone()));
                        }
                        return Err(DbError::new(
                            sqlstate::DUPLICATE_TABLE,
                            format!("relation \"{n}\" already exists"),
                        ));
                    }
                    n.clone()
                }
                None => choose_relation_name(s, &table.name, &name_parts.join("_"), "idx"),
            };
            s.indexes.insert(
                name.clone(),
                Arc::new(IndexDef {
                    oid,
                    name: name.clone(),
                    table: table.name.clone(),
                    unique,
                    primary: false,
                    constraint: false,
                    method,
                    keys,
                    include,
                    predicate,
                }),
            );
            Ok((None, name))
        })?;
        let (skipped, created) = skipped;
        let made = skipped.is_none();
        if let Some(n) = skipped {
            self.notice(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{n}\" already exists, skipping"),
            );
        } else if unique {
            // Existing rows must already be unique under the new index.
            if let Err(e) = self.check_new_unique_index(&table, &created).await {
                let _ = self.server.catalog.update_database(&self.database, |db| {
                    if let Some(s) = db.schemas.get_mut(&table.schema) {
                        s.indexes.remove(&created);
                    }
                    Ok(())
                });
                return Err(e);
            }
        }
        if made && self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::IndexCreated { schema: table.schema.clone(), name: created, oid });
        }
        Ok(StatementResult::Command("CREATE INDEX".into()))
    }

    fn drop_indexes(
        &mut self,
        if_exists: bool,
        names: &[ast::ObjectName],
    ) -> DbResult<StatementResult> {
        let mut targets = Vec::new();
        for n in names {
            match self.find_relation(n)? {
                Some((schema, rel, RelationKind::Index)) => targets.push((schema, rel)),
                Some((_, rel, kind)) => {
                    return Err(kind.wrong_type_error(&rel, RelationKind::Index))
                }
                None => {
                    let n = object_name_parts(n).join(".");
                    if !if_exists {
                        return Err(DbError::new(
                            sqlstate::UNDEFINED_OBJECT,
                            format!("index \"{n}\" does not exist"),
                        ));
                    }
                    self.notice(
                        sqlstate::SUCCESSFUL_COMPLETION,
                        format!("index \"{n}\" does not exist, skipping"),
                    );
                }
            }
        }
        {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            for (schema, rel) in &targets {
                let Some(index) = db.schemas.get(schema).and_then(|s| s.indexes.get(rel)) else { continue };
                if let Some(table) = db.table(schema, &index.table) {
                    self.refuse_drop_of_referenced_key(table, index, "index")?;
                }
            }
        }
        let dropped = self.server.catalog.update_database(&self.database, |db| {
            let mut dropped = Vec::new();
            for (schema, rel) in &targets {
                if let Some(index) = db.schemas.get_mut(schema).and_then(|s| s.indexes.remove(rel)) {
                    dropped.push(BlockUndo::IndexDropped { schema: schema.clone(), index });
                }
            }
            Ok(dropped)
        })?;
        if self.txn != TxnState::Idle {
            for undo in dropped {
                self.record_block_change(BlockCatalogChange::InPlace(undo));
            }
        }
        Ok(StatementResult::Command("DROP INDEX".into()))
    }

    fn rename_index(
        &mut self,
        name: &ast::ObjectName,
        to: &ast::ObjectName,
    ) -> DbResult<StatementResult> {
        let (schema, rel) = match self.find_relation(name)? {
            Some((schema, rel, RelationKind::Index)) => (schema, rel),
            Some((_, rel, kind)) => {
                return Err(DbError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("\"{rel}\" is not an index"),
                )
                .with_hint(format!("Use ALTER {} instead.", kind.noun().to_uppercase())))
            }
            None => {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_TABLE,
                    format!(
                        "relation \"{}\" does not exist",
                        object_name_parts(name).join(".")
                    ),
                ))
            }
        };
        let new = object_name_parts(to).pop().unwrap_or_default();
        let before = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&schema)
                .ok_or_else(|| DbError::internal("schema vanished"))?;
            if s.relation_kind(&new).is_some() {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{new}\" already exists"),
                ));
            }
            let before = s.indexes.remove(&rel);
            if let Some(i) = &before {
                let mut i = (**i).clone();
                i.name = new.clone();
                s.indexes.insert(new.clone(), Arc::new(i));
            }
            Ok(before)
        })?;
        if let (Some(before), true) = (before, self.txn != TxnState::Idle) {
            self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::IndexRenamed { schema, before }));
        }
        Ok(StatementResult::Command("ALTER INDEX".into()))
    }

    fn create_view(&mut self, cv: &ast::CreateView) -> DbResult<StatementResult> {
        if cv.materialized {
            return Err(DbError::unsupported(
                "CREATE MATERIALIZED VIEW is not supported yet",
            ));
        }
        if cv.temporary {
            return Err(DbError::unsupported(
                "CREATE TEMPORARY VIEW is not supported yet",
            ));
        }
        let (schema, name) = self.creation_target(&cv.name, "relation")?;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let eval = self.eval_context();
        let mut binder = self.binder(&catalog, db, &eval, vec![]);
        let plan = binder.bind_query(&cv.query)?;
        if !binder.params.is_empty() {
            return Err(DbError::new("42P02", "there is no parameter $1"));
        }
        let mut depends_on: Vec<(String, String)> = Vec::new();
        for r in std::mem::take(&mut binder.referenced) {
            if !depends_on.contains(&r) {
                depends_on.push(r);
            }
        }
        drop(binder);
        let mut columns: Vec<(String, DataType)> = plan
            .fields()
            .iter()
            .filter(|f| !f.hidden)
            .map(|f| (f.name.clone(), f.data_type))
            .collect();
        if cv.columns.len() > columns.len() {
            return Err(DbError::syntax(
                "CREATE VIEW specifies more column names than columns",
            ));
        }
        for (c, named) in columns.iter_mut().zip(&cv.columns) {
            c.0 = ident_name(&named.name);
        }
        for (i, (n, t)) in columns.iter().enumerate() {
            if columns[..i].iter().any(|(m, _)| m == n) {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{n}\" specified more than once"),
                ));
            }
            if *t == DataType::Unknown {
                // PostgreSQL 15 makes unknown-typed view columns text.
            }
        }
        let query = cv.query.to_string();
        let oid = self.server.catalog.allocate_oid();
        let (or_replace, if_not_exists) = (cv.or_replace, cv.if_not_exists);
        let made = self.server.catalog.update_database(&self.database, |db| {
            let s = db
                .schemas
                .get_mut(&schema)
                .ok_or_else(|| DbError::internal("schema vanished"))?;
            let mut oid = oid;
            let mut previous = None;
            match s.relation_kind(&name) {
                None => {}
                Some(RelationKind::View) if or_replace => {
                    let old = &s.views[&name];
                    previous = Some(old.clone());
                    if columns.len() < old.columns.len() {
                        return Err(DbError::new(
                            "42P16",
                            "cannot drop columns from view",
                        ));
                    }
                    for ((n, t), (on, ot)) in columns.iter().zip(&old.columns) {
                        if n != on {
                            return Err(DbError::new(
                                "42P16",
                                format!("cannot change name of view column \"{on}\" to \"{n}\""),
                            )
                            .with_hint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."));
                        }
                        if t != ot {
                            return Err(DbError::new(
                                "42P16",
                                format!(
                                    "cannot change data type of view column \"{n}\" from {} to {}",
                                    ot.name(),
                                    t.name()
                                ),
                            ));
                        }
                    }
                    oid = old.oid;
                }
                Some(_) if if_not_exists => return Ok(None),
                Some(_) if !or_replace => {
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_TABLE,
                        format!("relation \"{name}\" already exists"),
                    ))
                }
                Some(kind) => {
                    return Err(DbError::new(
                        sqlstate::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a view"),
                    )
                    .with_detail(format!("This operation is not supported for {}s.", kind.noun())))
                }
            }
            let view = Arc::new(ViewDef {
                oid,
                name: name.clone(),
                schema: schema.clone(),
                columns,
                query,
                depends_on,
            });
            s.views.insert(name.clone(), view.clone());
            Ok(Some((view, previous)))
        })?;
        let skipped = made.is_none();
        if let (Some((view, previous)), true) = (made, self.txn != TxnState::Idle) {
            self.record_block_change(BlockCatalogChange::ViewMade { view, previous });
        }
        if skipped {
            self.notice(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists, skipping"),
            );
        }
        Ok(StatementResult::Command("CREATE VIEW".into()))
    }

    fn drop_views(
        &mut self,
        if_exists: bool,
        names: &[ast::ObjectName],
        cascade: bool,
    ) -> DbResult<StatementResult> {
        let mut targets = Vec::new();
        for n in names {
            match self.find_relation(n)? {
                Some((schema, rel, RelationKind::View)) => targets.push((schema, rel)),
                Some((_, rel, kind)) => return Err(kind.wrong_type_error(&rel, RelationKind::View)),
                None => {
                    let n = object_name_parts(n).join(".");
                    if !if_exists {
                        return Err(DbError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("view \"{n}\" does not exist"),
                        ));
                    }
                    self.notice(
                        sqlstate::SUCCESSFUL_COMPLETION,
                        format!("view \"{n}\" does not exist, skipping"),
                    );
                }
            }
        }
        let mut removed = Vec::new();
        let cascaded = self.server.catalog.update_database(&self.database, |db| {
            let mut cascaded = Vec::new();
            for t in &targets {
                if !db
                    .schemas
                    .get(&t.0)
                    .is_some_and(|s| s.views.contains_key(&t.1))
                {
                    continue;
                }
                let deps: Vec<(String, String)> = dependent_views(db, t, "view", cascade)?
                    .into_iter()
                    .filter(|d| !targets.contains(d))
                    .collect();
                for (vs, vn) in deps.iter().chain(std::iter::once(t)) {
                    if let Some(v) = db.schemas.get_mut(vs).and_then(|s| s.views.remove(vn)) {
                        removed.push(v);
                    }
                }
                cascaded.extend(deps);
            }
            Ok(cascaded)
        })?;
        self.cascade_view_notices(&cascaded);
        if self.txn != TxnState::Idle {
            // Views the block made stay gone (ROLLBACK would remove them).
            let made_here = self.views_made_in_block();
            removed.retain(|v| !made_here.iter().any(|m| Arc::ptr_eq(m, v)));
            for view in removed {
                self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::ViewDropped(view)));
            }
        }
        Ok(StatementResult::Command("DROP VIEW".into()))
    }

    /// Binds an INSERT: the table, the plan producing full-width rows, RETURNING,
    /// and the arbiter of ON CONFLICT DO NOTHING (none for DO UPDATE, whose
    /// rows are this plan's: see `upsert`).
    #[allow(clippy::type_complexity)]
    fn bind_insert(
        &self,
        binder: &mut Binder,
        ins: &ast::Insert,
    ) -> DbResult<(Arc<TableDef>, Plan, Option<(Vec<Expr>, Vec<Field>)>, Option<Vec<UniqueKey>>)> {
        let name = match &ins.table {
            ast::TableObject::TableName(n) => n.clone(),
            other => return Err(DbError::unsupported(format!("INSERT INTO {other}"))),
        };
        let table = binder.resolve_table(&name)?;
        let arbiter = match &ins.on {
            None => None,
            // DO UPDATE's rows are computed here as a plain INSERT's (`upsert` does the rest).
            Some(ast::OnInsert::OnConflict(oc)) if !matches!(oc.action, ast::OnConflictAction::DoNothing) => None,
            Some(ast::OnInsert::OnConflict(oc)) => Some(conflict_arbiter(&table, oc.conflict_target.as_ref())?),
            Some(other) => return Err(DbError::unsupported(format!("INSERT … {other}"))),
        };
        // Checked before any row is computed (a DEFAULT nextval() runs then).
        let arbiter = arbiter.map(|a| self.arbiter_keys(&table, &a)).transpose()?;
        let targets: Vec<usize> = if ins.columns.is_empty() {
            (0..table.columns.len()).collect()
        } else {
            ins.columns
                .iter()
                .map(|c| {
                    let n = object_name_parts(c).pop().unwrap_or_default();
                    table.column_index(&n).ok_or_else(|| {
                        DbError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{n}\" of relation \"{}\" does not exist",
                                table.name
                            ),
                        )
                    })
                })
                .collect::<DbResult<_>>()?
        };
        check_identity_always(&table, &targets, ins)?;
        let plain_values = ins.source.as_ref().and_then(|q| match q.body.as_ref() {
            ast::SetExpr::Values(v)
                if q.with.is_none() && q.order_by.is_none() && q.limit_clause.is_none() =>
            {
                Some(v)
            }
            _ => None,
        });
        let source = match (&ins.source, plain_values) {
            (_, Some(values)) => {
                let raw = binder.bind_values_raw(values)?;
                let width = raw.first().map_or(0, |r| r.len());
                if width > targets.len() {
                    return Err(DbError::syntax(
                        "INSERT has more expressions than target columns",
                    ));
                }
                let mut rows = Vec::with_capacity(raw.len());
                for row in raw {
                    let mut out = Vec::with_capacity(row.len());
                    for (k, cell) in row.into_iter().enumerate() {
                        let col = &table.columns[targets[k]];
                        out.push(match cell {
                            Some(e) => e,
                            None => self.default_expr(binder, col)?,
                        });
                    }
                    rows.push(out);
                }
                let fields = (0..width)
                    .map(|i| Field::new(format!("column{}", i + 1), DataType::Unknown))
                    .collect();
                Plan::Values { rows, fields }
            }
            (Some(q), None) => binder.bind_query(q)?,
            (None, None) => Plan::Values {
                rows: vec![vec![]],
                fields: vec![],
            },
        };
        let src_fields = source.fields().to_vec();
        if src_fields.len() > targets.len() {
            return Err(DbError::syntax(
                "INSERT has more expressions than target columns",
            ));
        }
        if ins.source.is_some() && src_fields.len() < targets.len() && !ins.columns.is_empty() {
            return Err(DbError::syntax(
                "INSERT has more target columns than expressions",
            ));
        }
        // Untyped VALUES literals take the target column's type directly.
        let source = match source {
            Plan::Values { rows, .. } if plain_values.is_some() => {
                let mut typed_rows = Vec::new();
                for row in rows {
                    let mut out = Vec::new();
                    for (k, e) in row.into_iter().enumerate() {
                        let col = &table.columns[targets[k]];
                        out.push(binder.coerce_assignment(e, col.data_type, &col.name)?);
                    }
                    typed_rows.push(out);
                }
                let fields = targets[..src_fields.len()]
                    .iter()
                    .map(|&t| Field::new(table.columns[t].name.clone(), table.columns[t].data_type))
                    .collect();
                Plan::Values {
                    rows: typed_rows,
                    fields,
                }
            }
            other => other,
        };
        let src_types = source.types();
        let mut exprs = Vec::with_capacity(table.columns.len());
        for (ci, col) in table.columns.iter().enumerate() {
            let e = match targets
                .iter()
                .position(|&t| t == ci)
                .filter(|&k| k < src_types.len())
            {
                Some(k) => binder.coerce_assignment(
                    Expr::Column(k, src_types[k]),
                    col.data_type,
                    &col.name,
                )?,
                None => self.default_expr(binder, col)?,
            };
            let e = match col.numeric_typmod {
                Some((precision, scale)) => Expr::NumericTypmod {
                    expr: Box::new(e),
                    precision,
                    scale,
                },
                None => e,
            };
            exprs.push(e);
        }
        let fields: Vec<Field> = table
            .columns
            .iter()
            .map(|c| Field::new(c.name.clone(), c.data_type))
            .collect();
        let plan = Plan::Project {
            input: Box::new(source),
            exprs,
            fields,
        };
        let returning = match &ins.returning {
            Some(items) => {
                let scope = Scope {
                    fields: table
                        .columns
                        .iter()
                        .map(|c| Field {
                            qualifier: Some(table.name.clone()),
                            ..Field::new(c.name.clone(), c.data_type)
                        })
                        .collect(),
                };
                let mut exprs = Vec::new();
                let mut fields = Vec::new();
                for item in items {
                    let (e, name) = match item {
                        ast::SelectItem::UnnamedExpr(e) => {
                            (e.clone(), crate::sql::bind::output_name(e))
                        }
                        ast::SelectItem::ExprWithAlias { expr, alias } => {
                            (expr.clone(), ident_name(alias))
                        }
                        ast::SelectItem::Wildcard(_) => {
                            for (i, f) in scope.fields.iter().enumerate() {
                                exprs.push(Expr::Column(i, f.data_type));
                                fields.push(Field::new(f.name.clone(), f.data_type));
                            }
                            continue;
                        }
                        other => return Err(DbError::unsupported(format!("RETURNING {other}"))),
                    };
                    let bound = binder.bind_scalar(&e, &scope)?;
                    fields.push(Field::new(name, bound.data_type()));
                    exprs.push(bound);
                }
                Some((exprs, fields))
            }
            None => None,
        };
        Ok((table, plan, returning, arbiter))
    }

    /// A column's DEFAULT (NULL when it has none), typed for the column.
    fn default_expr(&self, binder: &Binder, col: &ColumnDef) -> DbResult<Expr> {
        match &col.default {
            Some(d) => {
                let mut b = Binder::new(binder.catalog, binder.db, binder.eval, vec![]);
                // A serial's nextval counts for the session's currval()/lastval().
                b.session_sequences = binder.session_sequences.clone();
                let bound = b.bind_default(d, &Scope::default())?;
                b.coerce_assignment(bound, col.data_type, &col.name)
            }
            None => Ok(Expr::Literal(Datum::Null, col.data_type)),
        }
    }

    async fn insert(
        &mut self,
        ins: &ast::Insert,
        params: Vec<Datum>,
        param_types: &[DataType],
    ) -> DbResult<StatementResult> {
        // Outside a block the INSERT holds the rewrite lock (shared) from
        // before it names its table to its write: a block rewriting that
        // table holds the lock alone until it ends, and the INSERT then finds
        // the table as that block left it (and no rewrite can come between
        // its unique-key check and its write).
        let shared = self.autocommit_write_lock().await;
        let eval_ctx = self.eval_context();
        let (table, plan, returning, arbiter) = {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            let mut binder = self.binder(&catalog, db, &eval_ctx, param_types.to_vec());
            self.bind_insert(&mut binder, ins)?
        };
        let ctx = self.query_context(params, eval_ctx);
        let mut batches = operators::collect(&plan, &ctx).await?;
        self.check_constraints(&table, &batches)?;
        let (keys, _referenced) = match &arbiter {
            Some(arbiters) => {
                // Only the rows ON CONFLICT DO NOTHING keeps must reference keys that are there.
                let keys = self.add_keys_skipping_conflicts(&table, arbiters, &mut batches).await?;
                match self.check_foreign_keys(&table, &batches).await {
                    Ok(referenced) => (keys, referenced),
                    Err(e) => {
                        keys.undo();
                        return Err(e);
                    }
                }
            }
            None => {
                let referenced = self.check_foreign_keys(&table, &batches).await?;
                (self.add_unique_keys(&table, &batches).await?, referenced)
            }
        };
        let count: usize = batches.iter().map(|b| b.len).sum();
        let returned = match &returning {
            Some((exprs, _)) => {
                let empty = HashMap::new();
                let cx = EvalInputs {
                    eval: &ctx.eval,
                    params: &ctx.params,
                    outer: &[],
                    subqueries: &empty,
                };
                batches
                    .iter()
                    .map(|b| {
                        let cols = exprs
                            .iter()
                            .map(|e| eval(e, b, &cx).map(|v| v.into_column(b.len)))
                            .collect::<DbResult<Vec<_>>>()?;
                        Ok(Batch::new(cols, b.len))
                    })
                    .collect::<DbResult<Vec<_>>>()
            }
            None => Ok(vec![]),
        };
        let returned = match returned {
            Ok(r) => r,
            Err(e) => {
                keys.undo();
                return Err(e);
            }
        };
        self.write_keyed_rows(&table, batches, keys, shared).await?;
        let tag = format!("INSERT 0 {count}");
        Ok(match returning {
            Some((_, fields)) => StatementResult::Batches {
                fields,
                batches: returned,
                tag,
            },
            None => StatementResult::Command(tag),
        })
    }

    /// Runs a plain literal multi-row INSERT through the fast path
    /// (`sql::fast_insert`); `None` when it does not apply.
    pub async fn try_fast_insert(&mut self, sql: &str) -> Option<DbResult<StatementResult>> {
        if self.txn == TxnState::Failed {
            return None;
        }
        let header = crate::sql::fast_insert::parse_header(sql)?;
        // As `insert`: the lock before the table's name is looked up.
        let shared = self.autocommit_write_lock().await;
        let name = sqlparser::ast::ObjectName::from(
            header
                .table
                .iter()
                .map(|p| sqlparser::ast::Ident::with_quote('"', p.clone()))
                .collect::<Vec<_>>(),
        );
        let table = self.lookup_table(&name).ok()?;
        let eval = self.eval_context();
        let result = match crate::sql::fast_insert::read_rows(sql, &header, &table, &eval.format) {
            Ok(None) => return None,
            Ok(Some(columns)) => self.insert_columns(&table, columns, shared).await,
            Err(e) => Err(e),
        };
        if result.is_err() && self.txn == TxnState::InBlock {
            self.txn = TxnState::Failed;
        }
        Some(result)
    }

    async fn insert_columns(
        &mut self,
        table: &TableDef,
        columns: Vec<Column>,
        shared: Option<tokio::sync::OwnedRwLockReadGuard<()>>,
    ) -> DbResult<StatementResult> {
        let columns = self.apply_numeric_typmods(table, columns)?;
        let batch = Batch::from_columns(columns);
        let count = batch.len;
        let batches = vec![batch];
        self.check_constraints(table, &batches)?;
        let _referenced = self.check_foreign_keys(table, &batches).await?;
        self.write_checked_rows(table, batches, shared).await?;
        Ok(StatementResult::Command(format!("INSERT 0 {count}")))
    }

    /// An INSERT's rows: their unique keys checked and added, then written
    /// (or kept for COMMIT). Outside a block the caller holds the rewrite
    /// lock (shared, `shared`) through both: a DELETE/UPDATE in between
    /// would forget the keys and could make a key just checked a duplicate.
    async fn write_checked_rows(
        &mut self,
        table: &TableDef,
        batches: Vec<Batch>,
        shared: Option<tokio::sync::OwnedRwLockReadGuard<()>>,
    ) -> DbResult<()> {
        let keys = self.add_unique_keys(table, &batches).await?;
        self.write_keyed_rows(table, batches, keys, shared).await
    }

    /// INSERT … ON CONFLICT DO NOTHING: drops the rows whose key an
    /// `arbiters` index holds, then adds the rest's keys. Another INSERT may
    /// add one of those keys in between: the check then runs again (a few
    /// times) instead of failing with 23505, unless it drops nothing more
    /// (the duplicate is in an index that is not an arbiter).
    async fn add_keys_skipping_conflicts(
        &mut self,
        table: &TableDef,
        arbiters: &[crate::sql::unique::UniqueKey],
        batches: &mut Vec<Batch>,
    ) -> DbResult<crate::sql::unique::AddedKeys> {
        let rows = |b: &[Batch]| b.iter().map(|b| b.len).sum::<usize>();
        *batches = self.skip_conflicting_rows(table, arbiters, std::mem::take(batches)).await?;
        crate::failpoint::pause("insert-after-conflict-check").await;
        let mut attempts = 0;
        loop {
            match self.add_unique_keys(table, batches).await {
                Err(e) if e.code == sqlstate::UNIQUE_VIOLATION && attempts < 3 => {
                    attempts += 1;
                    let before = rows(batches);
                    *batches = self.skip_conflicting_rows(table, arbiters, std::mem::take(batches)).await?;
                    if rows(batches) == before {
                        return Err(e);
                    }
                }
                other => return other,
            }
        }
    }

    /// Writes rows whose unique keys were added (`keys`), taking the keys
    /// out again if the write fails.
    async fn write_keyed_rows(
        &mut self,
        table: &TableDef,
        batches: Vec<Batch>,
        keys: crate::sql::unique::AddedKeys,
        shared: Option<tokio::sync::OwnedRwLockReadGuard<()>>,
    ) -> DbResult<()> {
        crate::failpoint::pause("insert-after-unique-check").await;
        let written = match shared {
            Some(_held) => self.append_to_shards_holding_rewrites(table.oid, batches).await,
            None => self.write_rows(table.oid, batches).await,
        };
        self.settle_unique_keys(keys, &written);
        written
    }

    /// Rounds numeric(p, s) columns to their scale (22003 when a value does not fit).
    fn apply_numeric_typmods(
        &self,
        table: &TableDef,
        mut columns: Vec<Column>,
    ) -> DbResult<Vec<Column>> {
        for (col, def) in columns.iter_mut().zip(&table.columns) {
            if let Some((precision, scale)) = def.numeric_typmod {
                let typed = Expr::NumericTypmod {
                    expr: Box::new(Expr::Column(0, DataType::Numeric)),
                    precision,
                    scale,
                };
                let one = Batch::from_columns(vec![std::mem::replace(
                    col,
                    Column::empty(DataType::Numeric),
                )]);
                let empty = HashMap::new();
                let eval_ctx = self.eval_context();
                let cx = EvalInputs {
                    eval: &eval_ctx,
                    params: &[],
                    outer: &[],
                    subqueries: &empty,
                };
                *col = (*eval(&typed, &one, &cx)?.into_column(one.len)).clone();
            }
        }
        Ok(columns)
    }

    /// COPY table [(cols)] | (query) TO STDOUT: the rows as an operator stream.
    fn copy_to(
        &mut self,
        source: &ast::CopySource,
        target: &ast::CopyTarget,
        options: &[ast::CopyOption],
        legacy: &[ast::CopyLegacyOption],
    ) -> DbResult<StatementResult> {
        if !matches!(target, ast::CopyTarget::Stdout) {
            return Err(DbError::unsupported(
                "COPY TO a file or program is not supported yet; use TO STDOUT (psql's \\copy)",
            ));
        }
        let opts = copy_options(options, legacy)?;
        let eval = self.eval_context();
        // relid: the table's; COPY (query) TO has none (0), as in PostgreSQL.
        let (plan, relid) = {
            let catalog = self.server.catalog.snapshot();
            let db = catalog.database(&self.database)?;
            let mut binder = self.binder(&catalog, db, &eval, vec![]);
            match source {
                ast::CopySource::Query(q) => (binder.bind_query(q)?, 0),
                ast::CopySource::Table {
                    table_name,
                    columns,
                } => {
                    let table = binder.resolve_table(table_name)?;
                    let mut projection = Vec::new();
                    for c in columns {
                        let name = ident_name(c);
                        projection.push(table.column_index(&name).ok_or_else(|| {
                            DbError::new(
                                sqlstate::UNDEFINED_COLUMN,
                                format!(
                                    "column \"{name}\" of relation \"{}\" does not exist",
                                    table.name
                                ),
                            )
                        })?);
                    }
                    let plan = crate::sql::bind::scan_all(&table, None);
                    let plan = if projection.is_empty() {
                        plan
                    } else {
                        let fields: Vec<Field> = projection
                            .iter()
                            .map(|&i| plan.fields()[i].clone())
                            .collect();
                        let exprs = projection
                            .iter()
                            .map(|&i| Expr::Column(i, table.columns[i].data_type))
                            .collect();
                        Plan::Project {
                            input: Box::new(plan),
                            exprs,
                            fields,
                        }
                    };
                    (plan, table.oid)
                }
            }
        };
        let ctx = self.query_context(vec![], eval);
        let op = operators::build(&plan, &ctx)?;
        let progress = self.begin_copy_progress(relid, CopyCommand::To, CopyIoType::Pipe, 0);
        Ok(StatementResult::CopyOut {
            fields: plan.fields().to_vec(),
            op,
            options: opts,
            progress: Some(progress),
        })
    }

    /// Registers a COPY of this session in pg_stat_progress_copy (see
    /// `server/copy_progress.rs`); the row shows until the guard is dropped.
    pub fn begin_copy_progress(
        &self,
        relid: u32,
        command: CopyCommand,
        io_type: CopyIoType,
        bytes_total: u64,
    ) -> CopyProgressGuard {
        self.server.copy_progress.begin(
            self.pid(),
            self.database_oid(),
            &self.database,
            relid,
            command,
            io_type,
            bytes_total,
        )
    }

    /// `COPY t FROM '/path'`: the server reads the file in chunks through the
    /// same reader and commit as COPY FROM STDIN (atomic; errors name the line).
    async fn copy_from_file(&mut self, path: &str, mut copy: Box<CopyIn>) -> DbResult<StatementResult> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| {
            DbError::new("58P01", format!("could not open file \"{path}\" for reading: {e}"))
        })?;
        let mut chunk = vec![0u8; 1 << 20];
        let result: DbResult<u64> = async {
            loop {
                let n = file
                    .read(&mut chunk)
                    .map_err(|e| DbError::new("58030", format!("could not read from COPY file: {e}")))?;
                if n == 0 {
                    break;
                }
                self.copy_data(&mut copy, &chunk[..n]).await?;
            }
            self.copy_done(&mut copy).await
        }
        .await;
        match result {
            Ok(rows) => Ok(StatementResult::Command(format!("COPY {rows}"))),
            Err(e) => {
                self.copy_abort(&mut copy).await;
                Err(e)
            }
        }
    }

    /// Checks an ingest COPY's options without running it: at Parse, so a
    /// driver learns of a bad option before it starts sending data.
    pub fn check_ingest_copy(copy: &crate::sql::ingest_copy::IngestCopy) -> DbResult<()> {
        use crate::sql::ingest_copy::IngestFormat;
        match copy.format {
            IngestFormat::LineProtocol => line_protocol::line_protocol_copy_precision(copy).map(|_| ()),
            IngestFormat::Mcap => mcap::mcap_copy_options(copy).map(|_| ()),
        }
    }

    /// Starts a COPY in one of Brewric's ingest formats (`sql::ingest_copy`).
    pub async fn begin_ingest_copy(&mut self, copy: &crate::sql::ingest_copy::IngestCopy) -> DbResult<StatementResult> {
        use crate::sql::ingest_copy::IngestFormat;
        let (source, binary) = match (copy.format, &copy.path) {
            (IngestFormat::LineProtocol, _) => (CopySource::LineProtocol(self.begin_line_protocol_copy(copy)?), false),
            (IngestFormat::Mcap, Some(path)) => {
                let messages = self.copy_mcap_file(copy, path).await?;
                return Ok(StatementResult::Command(format!("COPY {messages}")));
            }
            // MCAP is binary: psql's \copy sends the file's bytes as they are.
            (IngestFormat::Mcap, None) => (CopySource::Mcap(Box::new(self.begin_mcap_copy(copy).await?)), true),
        };
        let copy_in = Box::new(CopyIn {
            source,
            binary,
            columns: 1,
        });
        match &copy.path {
            None => Ok(StatementResult::CopyIn(copy_in)),
            Some(path) => self.copy_from_file(path, copy_in).await,
        }
    }

    /// Feeds one CopyData chunk of a COPY FROM STDIN.
    pub async fn copy_data(&mut self, copy: &mut CopyIn, chunk: &[u8]) -> DbResult<()> {
        // A cancel or statement_timeout stops a COPY between chunks.
        self.cancel.check()?;
        let table = match &mut copy.source {
            CopySource::Table(t) => t,
            CopySource::LineProtocol(lp) => return self.line_protocol_copy_data(lp, chunk),
            CopySource::Mcap(m) => return self.mcap_copy_data(m, chunk).await,
        };
        let rows_before = table.reader.rows;
        let mut batches = Vec::new();
        let fed = table.reader.feed(chunk, &mut |b| {
            batches.push(b);
            Ok(())
        });
        // Rows count as parsed (the reader holds up to a batch of them before
        // emitting it), so the view moves with every chunk.
        if let Some(p) = &table.progress {
            p.add_bytes(chunk.len() as u64);
            p.add_tuples(table.reader.rows.saturating_sub(rows_before));
        }
        fed?;
        self.copy_absorb(table, batches).await
    }

    /// Ends a COPY (CopyDone): the last rows, then the commit. Returns the row count.
    pub async fn copy_done(&mut self, copy: &mut CopyIn) -> DbResult<u64> {
        self.cancel.check()?;
        let copy = match &mut copy.source {
            CopySource::Table(t) => t,
            CopySource::LineProtocol(lp) => return self.line_protocol_copy_done(lp).await,
            CopySource::Mcap(m) => return self.mcap_copy_done(m).await.map(|r| r.messages),
        };
        let rows_before = copy.reader.rows;
        let mut batches = Vec::new();
        copy.reader.finish(&mut |b| {
            batches.push(b);
            Ok(())
        })?;
        if let Some(p) = &copy.progress {
            p.add_tuples(copy.reader.rows.saturating_sub(rows_before));
        }
        self.copy_absorb(copy, batches).await?;
        self.copy_flush(copy).await?;
        if let Some(write) = copy.write.take() {
            self.commit_write(write).await?;
        }
        let keys = std::mem::take(&mut copy.unique_keys);
        self.settle_unique_keys(keys, &Ok(()));
        // Committed: the COPY leaves pg_stat_progress_copy before its CommandComplete.
        copy.progress = None;
        Ok(copy.reader.rows)
    }

    /// Abandons a COPY (CopyFail or an error): nothing of it becomes visible.
    pub async fn copy_abort(&mut self, copy: &mut CopyIn) {
        if let CopySource::Mcap(m) = &mut copy.source {
            self.mcap_copy_abort(m).await;
        }
        if let CopySource::Table(copy) = &mut copy.source {
            // The COPY has ended for pg_stat_progress_copy, though the wire
            // layer may still read and drop the client's remaining CopyData.
            copy.progress = None;
            std::mem::take(&mut copy.unique_keys).undo();
            if let Some(write) = copy.write.take() {
                self.abort_write(write).await;
            }
        }
        if self.txn == TxnState::InBlock {
            self.txn = TxnState::Failed;
        }
    }

    async fn copy_absorb(&mut self, copy: &mut TableCopy, batches: Vec<Batch>) -> DbResult<()> {
        let typmods = copy.table.columns.iter().any(|c| c.numeric_typmod.is_some());
        for b in batches {
            let b = if typmods {
                let columns = b.columns.iter().map(|c| (**c).clone()).collect();
                Batch::from_columns(self.apply_numeric_typmods(&copy.table, columns)?)
            } else {
                b
            };
            self.check_constraints(&copy.table, std::slice::from_ref(&b))?;
            // Outside a block the COPY holds the rewrite lock (shared) from
            // its start (its write opened then; see `insert`): no DELETE of
            // a referenced key comes before its commit, the holds may go.
            self.check_foreign_keys(&copy.table, std::slice::from_ref(&b)).await?;
            let keys = self.add_unique_keys(&copy.table, std::slice::from_ref(&b)).await?;
            copy.unique_keys.extend(keys);
            crate::failpoint::pause("insert-after-unique-check").await;
            copy.buffered_rows += b.len;
            copy.buffered.push(b);
        }
        if copy.buffered_rows >= COPY_FLUSH_ROWS {
            self.copy_flush(copy).await?;
        }
        Ok(())
    }

    /// Hands buffered COPY rows on: prepared on the shards (committed at the end),
    /// or, inside a transaction block, kept with the transaction's rows.
    async fn copy_flush(&mut self, copy: &mut TableCopy) -> DbResult<()> {
        let batches = std::mem::take(&mut copy.buffered);
        copy.buffered_rows = 0;
        if batches.is_empty() {
            return Ok(());
        }
        if self.txn != TxnState::Idle {
            self.pending
                .borrow_mut()
                .entry(copy.table.oid)
                .or_default()
                .extend(batches);
            return Ok(());
        }
        let types = copy.table.column_types();
        let write = copy.write.as_mut().ok_or_else(|| DbError::internal("COPY without a write"))?;
        self.prepare_rows(write, copy.table.oid, &types, batches)
            .await
    }

    /// Outside a block, the rewrite lock (shared) a write holds from before
    /// it looks its table up to its end (see `insert`); None in a block.
    async fn autocommit_write_lock(&self) -> Option<tokio::sync::OwnedRwLockReadGuard<()>> {
        match self.txn {
            TxnState::Idle => Some(self.server.rewrites.clone().read_owned().await),
            _ => None,
        }
    }

    /// A write holding the rewrite lock (shared) until it ends.
    pub(super) async fn begin_locked_write(&self) -> ShardWrite {
        let mut write = self.begin_write();
        write.rewrites = Some(self.server.rewrites.clone().read_owned().await);
        write
    }

    /// Appends rows now (autocommit) or keeps them for COMMIT.
    async fn write_rows(&mut self, table: TableId, batches: Vec<Batch>) -> DbResult<()> {
        if self.txn == TxnState::Idle {
            self.append_to_shards(table, batches).await
        } else {
            self.pending
                .borrow_mut()
                .entry(table)
                .or_default()
                .extend(batches);
            Ok(())
        }
    }

    /// Makes committed rows durable and visible on their shards.
    ///
    /// Rows are split across shards (large batches evenly, small ones to the
    /// next shard in turn) and logged there. One shard: its record is
    /// self-committed and the rows are published once it is durable. Several:
    /// every shard logs and holds its rows (prepared); once all are durable the
    /// session's shard logs the transaction's Commit record, and only then are
    /// the rows published everywhere. With `synchronous_commit = off` nothing
    /// waits for the disk: the statement is acknowledged once its records are
    /// queued, and a crash can lose the last moments of such writes (as in
    /// PostgreSQL), never part of one.
    async fn append_to_shards(&self, table: TableId, batches: Vec<Batch>) -> DbResult<()> {
        let _shared = self.server.rewrites.read().await;
        self.append_to_shards_holding_rewrites(table, batches).await
    }

    /// `append_to_shards` for a caller that already holds `Server::rewrites`.
    async fn append_to_shards_holding_rewrites(&self, table: TableId, batches: Vec<Batch>) -> DbResult<()> {
        crate::storage::checkpoint::wait_for_memtable_room(&self.server).await?;
        let catalog = self.server.catalog.snapshot();
        let def = match catalog.database(&self.database)?.table_by_oid(table) {
            Some(t) => t.clone(),
            None => {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_TABLE,
                    "table was dropped during the transaction",
                ))
            }
        };
        let types = def.column_types();
        // Rows bound before an ADD COLUMN (a block's, committed now) read NULL there.
        let batches = batches.into_iter().map(|b| b.padded_to(&types)).collect();
        let batches = crate::storage::frames::store_inline(&def.frame_columns(), batches);
        let route = crate::storage::routing::series_route_column(&def);
        let shards = &self.server.shards;
        let participants =
            crate::storage::routing::route_batches(route, batches, shards.len(), || self.server.next_shard());
        match participants.len() {
            0 => Ok(()),
            1 => {
                // One shard: its last record commits the write.
                let (shard, part) = participants.into_iter().next().unwrap_or_default();
                let (txn, synchronous) = (self.server.next_txn(), self.synchronous());
                shards[shard]
                    .run_local(move |ctx| log_rows(ctx, txn, table, types, part, true, synchronous))
                    .await?
                    .map(|_| ())
            }
            _ => {
                let mut write = self.begin_write();
                let result = self
                    .prepare_parts(&mut write, table, &types, participants)
                    .await;
                self.settle_write(write, result).await
            }
        }
    }

    /// Runs maintenance functions found while binding (drop_chunks,
    /// brewric_compact), returning each one's result.
    async fn run_effects(&mut self, effects: Vec<crate::sql::bind::Effect>) -> DbResult<Vec<Datum>> {
        use crate::sql::bind::Effect;
        // Hypertables, policies and jobs are catalog changes a block can undo.
        let maintenance = effects.iter().any(|e| {
            !matches!(
                e,
                Effect::SetConfig { .. }
                    | Effect::Sleep { .. }
                    | Effect::AddPolicy { .. }
                    | Effect::RemovePolicy { .. }
                    | Effect::DeleteJob { .. }
                    | Effect::AlterJob { .. }
                    | Effect::CreateHypertable { .. }
            )
        });
        if maintenance && self.txn != TxnState::Idle {
            return Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "drop_chunks() and brewric_compact() cannot run inside a transaction block",
            ));
        }
        let mut out = Vec::with_capacity(effects.len());
        for e in effects {
            out.push(match e {
                Effect::DropChunks { table, cutoff } => {
                    let d = crate::sql::jobs::drop_chunks_now(&self.server, &table, cutoff).await?;
                    Datum::Int64(d.segments as i64)
                }
                Effect::AddPolicy { table, policy, if_not_exists, schedule_interval, initial_start } => {
                    self.add_policy(&table, policy, if_not_exists, schedule_interval, initial_start)?
                }
                Effect::RemovePolicy { table, policy, if_exists } => self.remove_policy(&table, policy, if_exists)?,
                Effect::DeleteJob { id } => self.delete_job(id)?,
                Effect::AlterJob { id, changes, if_exists } => self.alter_job(id, &changes, if_exists)?,
                // Strict, as PostgreSQL's: NULL in, NULL out, no wait.
                Effect::Sleep { seconds: None } => Datum::Null,
                Effect::Sleep { seconds: Some(seconds) } => {
                    self.sleep(seconds).await?;
                    Datum::text("")
                }
                Effect::SetConfig { name, value, is_local } => {
                    Datum::text(self.set_setting(&name, value.as_deref(), is_local)?)
                }
                Effect::Compact => {
                    let s = crate::storage::compaction::compact(&self.server).await?;
                    Datum::Int64(s.merged_segments as i64)
                }
                Effect::CreateHypertable { table, time_column, if_not_exists } => {
                    // A catalog change like ALTER TABLE's (a block's ROLLBACK undoes it).
                    let mut created = false;
                    self.change_table(&table, |_, def| {
                        if def.time_column.is_none() {
                            def.time_column = Some(time_column);
                            created = true;
                        }
                        Ok(())
                    })?;
                    if !created {
                        let message = format!("table \"{}\" is already a hypertable", table.name);
                        if !if_not_exists {
                            return Err(DbError::new("TS110", message));
                        }
                        self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("{message}, skipping"));
                    }
                    // TimescaleDB's result record (hypertable_id, schema_name, table_name, created).
                    Datum::text(format!("({},{},{},{})", table.oid, table.schema, table.name, if created { "t" } else { "f" }))
                }
            });
        }
        Ok(out)
    }

    /// pg_sleep: waits in short steps so that a cancel, a statement timeout
    /// or a termination ends it promptly.
    async fn sleep(&self, seconds: f64) -> DbResult<()> {
        const STEP: std::time::Duration = std::time::Duration::from_millis(10);
        let total = std::time::Duration::try_from_secs_f64(seconds.max(0.0))
            .unwrap_or(std::time::Duration::MAX);
        let deadline = tokio::time::Instant::now().checked_add(total);
        loop {
            self.cancel.check()?;
            let now = tokio::time::Instant::now();
            let left = match deadline {
                Some(d) if d <= now => return Ok(()),
                Some(d) => d - now,
                None => STEP,
            };
            tokio::time::sleep(left.min(STEP)).await;
        }
    }

    /// Every shard's chunks of the given time-series tables (table → time column).
    async fn chunk_facts(&self, time_columns: HashMap<u32, usize>) -> DbResult<Vec<crate::storage::table::ChunkFact>> {
        let time_columns = Arc::new(time_columns);
        let mut out = Vec::new();
        for shard in &self.server.shards {
            let time_columns = time_columns.clone();
            out.extend(shard.run(move |ctx| ctx.storage.borrow().chunk_facts(&time_columns)).await?);
        }
        Ok(out)
    }

    /// Bytes of segment files per table, over all shards.
    async fn relation_sizes(&self) -> DbResult<HashMap<u32, u64>> {
        let mut out: HashMap<u32, u64> = HashMap::new();
        for shard in &self.server.shards {
            let part = shard
                .run(|ctx| {
                    let s = ctx.storage.borrow();
                    s.live_segments()
                        .iter()
                        .map(|seg| (seg.table, seg.bytes))
                        .collect::<Vec<_>>()
                })
                .await?;
            for (t, b) in part {
                *out.entry(t).or_default() += b;
            }
        }
        Ok(out)
    }

    fn synchronous(&self) -> bool {
        self.settings
            .get("synchronous_commit")
            .is_none_or(|v| v != "off")
    }

    /// Starts a write that may span shards and statements' worth of rows (COPY):
    /// rows are prepared on shards as they come and committed together.
    pub fn begin_write(&self) -> ShardWrite {
        ShardWrite {
            txn: self.server.next_txn(),
            participants: Vec::new(),
            synchronous: self.synchronous(),
            rewrites: None,
            durable: Vec::new(),
            commit_logged: Default::default(),
        }
    }

    /// Logs rows (not yet committed) on the shards they go to and holds them there.
    pub async fn prepare_rows(
        &self,
        write: &mut ShardWrite,
        table: TableId,
        types: &[DataType],
        batches: Vec<Batch>,
    ) -> DbResult<()> {
        let def = self.table_def_by_oid(table);
        let batches = match &def {
            Some(def) => {
                let width = def.column_types();
                let batches = batches.into_iter().map(|b| b.padded_to(&width)).collect();
                crate::storage::frames::store_inline(&def.frame_columns(), batches)
            }
            None => batches,
        };
        self.prepare_routed(write, table, types, def.as_deref(), batches).await
    }

    /// `prepare_rows` for rows already in the stored form (`storage/frames.rs`).
    pub async fn prepare_stored_rows(
        &self,
        write: &mut ShardWrite,
        table: TableId,
        types: &[DataType],
        batches: Vec<Batch>,
    ) -> DbResult<()> {
        let def = self.table_def_by_oid(table);
        self.prepare_routed(write, table, types, def.as_deref(), batches).await
    }

    fn table_def_by_oid(&self, table: TableId) -> Option<Arc<TableDef>> {
        self.server.catalog.snapshot().database(&self.database).ok().and_then(|d| d.table_by_oid(table).cloned())
    }

    /// Routes stored rows of `def` (series key) to shards and prepares them there.
    async fn prepare_routed(
        &self,
        write: &mut ShardWrite,
        table: TableId,
        types: &[DataType],
        def: Option<&TableDef>,
        batches: Vec<Batch>,
    ) -> DbResult<()> {
        // Rows made before an ADD COLUMN (an ingest's held batches) read NULL there.
        let width = def.map(TableDef::column_types).filter(|w| w.len() > types.len());
        let (types, batches) = match &width {
            Some(width) => (&width[..], batches.into_iter().map(|b| b.padded_to(width)).collect()),
            None => (types, batches),
        };
        let route = def.and_then(crate::storage::routing::series_route_column);
        let participants = crate::storage::routing::route_batches(route, batches, self.server.shards.len(), || {
            self.server.next_shard()
        });
        self.prepare_parts(write, table, types, participants).await
    }

    async fn prepare_parts(
        &self,
        write: &mut ShardWrite,
        table: TableId,
        types: &[DataType],
        parts: Vec<(usize, Vec<Batch>)>,
    ) -> DbResult<()> {
        crate::storage::checkpoint::wait_for_memtable_room(&self.server).await?;
        let mut waits = Vec::new();
        for (shard, part) in parts {
            if !write.participants.contains(&shard) {
                write.participants.push(shard);
            }
            let (txn, synchronous, types) = (write.txn, write.synchronous, types.to_vec());
            waits.push((
                shard,
                self.server.shards[shard].run_local(move |ctx| {
                    log_rows(ctx, txn, table, types, part, false, synchronous)
                }),
            ));
        }
        let mut failure = None;
        for (shard, w) in waits {
            match w.await.and_then(|r| r) {
                Ok(durable) => write.durable.extend(durable.into_iter().map(|rx| (shard, rx))),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Holds rows prepared on `shard` without logging them: the caller logs
    /// what they stand for (`log_prepared_reference`) before the commit.
    /// The rows are in the stored form (`storage/frames.rs`).
    pub async fn hold_rows(
        &self,
        write: &mut ShardWrite,
        shard: usize,
        table: TableId,
        types: &[DataType],
        rows: crate::storage::memtable::CompactBatch,
    ) -> DbResult<()> {
        crate::storage::checkpoint::wait_for_memtable_room(&self.server).await?;
        if !write.participants.contains(&shard) {
            write.participants.push(shard);
        }
        let (txn, types) = (write.txn, types.to_vec());
        self.server.shards[shard]
            .run(move |ctx| {
                ctx.prepared.borrow_mut().entry(txn).or_default().push(PreparedOp::CompactRows(table, types, rows));
            })
            .await
    }

    /// Logs, on `shard`, one prepared record of `record_type` whose payload
    /// (after the txn id) `encode` writes; its durability is awaited by the commit.
    pub async fn log_prepared_reference(
        &self,
        write: &mut ShardWrite,
        shard: usize,
        record_type: RecordType,
        payload: Vec<u8>,
    ) -> DbResult<()> {
        if !write.participants.contains(&shard) {
            write.participants.push(shard);
        }
        let txn = write.txn;
        let rx = self.server.shards[shard]
            .run_local(move |ctx| async move {
                let wal = ctx.wal()?;
                ctx.begin_in_flight(txn, &wal);
                let rx = wal
                    .append_with(record_type, 0, |out| {
                        out.extend_from_slice(&txn.to_le_bytes());
                        out.extend_from_slice(&payload);
                    })
                    .await;
                Ok::<_, DbError>(rx)
            })
            .await??;
        if write.synchronous {
            write.durable.push((shard, rx));
        }
        Ok(())
    }

    /// Logs the write's Commit record on this session's shard, then publishes
    /// the prepared rows on every participant.
    pub async fn commit_write(&self, mut write: ShardWrite) -> DbResult<()> {
        let shards = &self.server.shards;
        let commit_shard = self.shard % shards.len();
        // Every prepared record durable before the Commit record can be. The
        // commit shard's own need no wait of their own: its WAL writes and
        // syncs groups in order and takes nothing after a failed one, so the
        // Commit record's group is durable only if theirs are.
        let mut failure = None;
        for (shard, rx) in std::mem::take(&mut write.durable) {
            if shard == commit_shard {
                continue;
            }
            if let Err(e) = wait_durable(rx).await {
                failure.get_or_insert(e);
            }
        }
        if let Some(e) = failure {
            self.abort_write(write).await;
            return Err(e);
        }
        crate::failpoint::hit("commit-before-commit-record");
        // A checkpoint must not freeze between this Commit record and the
        // publication of the rows (see storage::checkpoint).
        let _gate = self.server.checkpoints.gate.read().await;
        let (txn, synchronous) = (write.txn, write.synchronous);
        let commit_logged = write.commit_logged.clone();
        let commit = shards[commit_shard]
            .run_local(move |ctx| async move {
                let wal = ctx.wal()?;
                let rx = wal.append(RecordType::Commit, 0, &txn.to_le_bytes()).await;
                // A WAL that refuses writes refused the record as it was
                // queued (nothing awaited since): then nothing is logged.
                if !wal.refuses_writes() {
                    commit_logged.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                if synchronous {
                    wait_durable(rx).await?;
                }
                Ok::<(), DbError>(())
            })
            .await
            .and_then(|r| r);
        if let Err(e) = commit {
            self.abort_write(write).await;
            return Err(e);
        }
        self.finish_write(&write, true).await
    }

    /// Commits the write when its preparation succeeded, else aborts it.
    pub async fn settle_write(&self, write: ShardWrite, prepared: DbResult<()>) -> DbResult<()> {
        match prepared {
            Ok(()) => self.commit_write(write).await,
            Err(e) => {
                self.abort_write(write).await;
                Err(e)
            }
        }
    }

    /// Drops the write's prepared rows (nothing was committed; recovery ignores them too).
    pub async fn abort_write(&self, write: ShardWrite) {
        let _ = self.finish_write(&write, false).await;
    }

    async fn finish_write(&self, write: &ShardWrite, publish: bool) -> DbResult<()> {
        let txn = write.txn;
        for shard in &write.participants {
            self.server.shards[*shard]
                .run(move |ctx| {
                    ctx.end_in_flight(txn);
                    if let Some(ops) = ctx.prepared.borrow_mut().remove(&txn) {
                        if publish {
                            let mut storage = ctx.storage.borrow_mut();
                            for op in &ops {
                                match op {
                                    PreparedOp::Rows(table, types, batch) => {
                                        storage.append(*table, types, batch)
                                    }
                                    PreparedOp::CompactRows(table, types, rows) => {
                                        storage.append_compact(*table, types, rows.clone())
                                    }
                                    PreparedOp::Truncate(table) => storage.truncate(*table),
                                    PreparedOp::DropRanges(table, time, ranges) => {
                                        storage.drop_ranges(*table, *time, ranges);
                                    }
                                }
                            }
                        }
                    }
                })
                .await?;
        }
        Ok(())
    }
}

/// A write in progress across shards (see `Session::begin_write`).
pub struct ShardWrite {
    txn: u64,
    participants: Vec<usize>,
    synchronous: bool,
    /// A COPY's share of `Server::rewrites`, held until it commits.
    rewrites: Option<tokio::sync::OwnedRwLockReadGuard<()>>,
    /// The prepared records' durability by shard, awaited once before the
    /// Commit record is logged (not per prepare: a long COPY keeps the WAL
    /// busy instead of waiting out one fsync per batch).
    durable: Vec<(usize, tokio::sync::oneshot::Receiver<DbResult<()>>)>,
    /// Set when the WAL queued the Commit record (did not refuse it): a
    /// commit that fails from then on (its sync failed) may still be on
    /// disk, and recovery would count it committed. See [`ShardWrite::commit_logged`].
    commit_logged: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl ShardWrite {
    /// Whether this write's Commit record was handed to the WAL, read after
    /// `commit_write`/`settle_write` took the write: after a failed commit,
    /// true means the outcome is unknown until the next start (undoing
    /// anything beside the rows, such as tables made for them or files they
    /// name, could take what recovery brings back), false that nothing committed.
    pub fn commit_logged(&self) -> impl Fn() -> bool {
        let flag = self.commit_logged.clone();
        move || flag.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Waits for a WAL group to be durable.
async fn wait_durable(rx: tokio::sync::oneshot::Receiver<DbResult<()>>) -> DbResult<()> {
    rx.await
        .map_err(|_| DbError::internal("the WAL writer stopped"))?
}

/// A shard's part of a write: log its rows, then publish them (one shard) or
/// hold them prepared for the commit (several shards).
async fn log_rows(
    ctx: Rc<crate::runtime::ShardContext>,
    txn: u64,
    table: TableId,
    types: Vec<DataType>,
    batches: Vec<Batch>,
    self_committed: bool,
    synchronous: bool,
) -> DbResult<Vec<tokio::sync::oneshot::Receiver<DbResult<()>>>> {
    let wal = ctx.wal()?;
    ctx.begin_in_flight(txn, &wal);
    let mut receivers = Vec::with_capacity(batches.len());
    for (i, b) in batches.iter().enumerate() {
        // Only the last record commits: a crash between records applies none of them.
        let flags = if self_committed && i + 1 == batches.len() {
            FLAG_SELF_COMMITTED
        } else {
            0
        };
        let rx = wal
            .append_with(RecordType::Rows, flags, |payload| {
                payload.extend_from_slice(&txn.to_le_bytes());
                payload.extend_from_slice(&table.to_le_bytes());
                crate::wal::codec::encode_batch(b, payload);
            })
            .await;
        receivers.push(rx);
    }
    // Published rows must be durable first; prepared ones are awaited by the commit.
    if synchronous && self_committed {
        for rx in receivers.drain(..) {
            wait_durable(rx).await?;
        }
    }
    if !synchronous {
        receivers.clear();
    }
    if self_committed {
        let mut storage = ctx.storage.borrow_mut();
        for b in &batches {
            storage.append(table, &types, b);
        }
        ctx.end_in_flight(txn);
    } else {
        let mut prepared = ctx.prepared.borrow_mut();
        let entry = prepared.entry(txn).or_default();
        for b in batches {
            entry.push(PreparedOp::Rows(table, types.clone(), b));
        }
    }
    Ok(receivers)
}

/// COPY options, new style (`WITH (FORMAT csv, HEADER, …)`) and old (`CSV HEADER`, `BINARY`).
fn copy_options(
    options: &[ast::CopyOption],
    legacy: &[ast::CopyLegacyOption],
) -> DbResult<CopyOptions> {
    let mut format = CopyFormat::Text;
    for o in options {
        if let ast::CopyOption::Format(f) = o {
            format = match f.value.to_lowercase().as_str() {
                "text" => CopyFormat::Text,
                "csv" => CopyFormat::Csv,
                "binary" => CopyFormat::Binary,
                other => {
                    return Err(DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("COPY format \"{other}\" not recognized"),
                    ))
                }
            };
        }
    }
    for o in legacy {
        match o {
            ast::CopyLegacyOption::Binary => format = CopyFormat::Binary,
            ast::CopyLegacyOption::Csv(_) => format = CopyFormat::Csv,
            _ => {}
        }
    }
    let mut out = CopyOptions::new(format);
    let one_byte = |c: char, what: &str| -> DbResult<u8> {
        u8::try_from(c)
            .ok()
            .filter(|b| b.is_ascii())
            .ok_or_else(|| {
                DbError::unsupported(format!("COPY {what} must be a single one-byte character"))
            })
    };
    for o in options {
        match o {
            ast::CopyOption::Format(_) => {}
            ast::CopyOption::Delimiter(c) => out.delimiter = one_byte(*c, "delimiter")?,
            ast::CopyOption::Null(n) => out.null = n.clone(),
            ast::CopyOption::Header(h) => out.header = *h,
            ast::CopyOption::Quote(c) => out.quote = one_byte(*c, "quote")?,
            ast::CopyOption::Escape(c) => out.escape = one_byte(*c, "escape")?,
            ast::CopyOption::ForceNull(cols) => {
                out.force_null = cols.iter().map(ident_name).collect()
            }
            ast::CopyOption::Encoding(e)
                if e.eq_ignore_ascii_case("utf8") || e.eq_ignore_ascii_case("utf-8") => {}
            ast::CopyOption::Freeze(_) => {}
            other => {
                return Err(DbError::unsupported(format!(
                    "COPY option {other} is not supported yet"
                )))
            }
        }
    }
    for o in legacy {
        match o {
            ast::CopyLegacyOption::Binary => {}
            ast::CopyLegacyOption::Delimiter(c) => out.delimiter = one_byte(*c, "delimiter")?,
            ast::CopyLegacyOption::Null(n) => out.null = n.clone(),
            ast::CopyLegacyOption::Csv(csv) => {
                for c in csv {
                    match c {
                        ast::CopyLegacyCsvOption::Header => out.header = true,
                        ast::CopyLegacyCsvOption::Quote(q) => out.quote = one_byte(*q, "quote")?,
                        ast::CopyLegacyCsvOption::Escape(e) => out.escape = one_byte(*e, "escape")?,
                        other => {
                            return Err(DbError::unsupported(format!(
                                "COPY option {other} is not supported yet"
                            )))
                        }
                    }
                }
            }
            other => {
                return Err(DbError::unsupported(format!(
                    "COPY option {other} is not supported yet"
                )))
            }
        }
    }
    if out.format == CopyFormat::Binary && (out.header || out.delimiter != b'\t') {
        return Err(DbError::syntax(
            "cannot specify DELIMITER or HEADER in BINARY mode",
        ));
    }
    Ok(out)
}

/// PostgreSQL's ChooseRelationName: `<table>_<columns>_<label>`, with a
/// number after the label while the name is taken (`t_a_idx1`), each part
/// cut so that the whole fits in 63 bytes.
fn choose_relation_name(s: &Schema, name1: &str, name2: &str, label: &str) -> String {
    let mut pass = 0;
    loop {
        let label = if pass == 0 {
            label.to_string()
        } else {
            format!("{label}{pass}")
        };
        let candidate = make_object_name(name1, name2, &label);
        if s.relation_kind(&candidate).is_none() {
            return candidate;
        }
        pass += 1;
    }
}

/// A PRIMARY KEY or UNIQUE constraint written on a column: (name, primary).
type ColumnKey = (Option<String>, bool);

/// An INSERT giving a GENERATED ALWAYS identity column a value of its own
/// (anything but DEFAULT) is refused, as in PostgreSQL, unless it says
/// OVERRIDING SYSTEM VALUE.
/// The arbiter an `ON CONFLICT [target]` names.
fn conflict_arbiter(table: &TableDef, target: Option<&ast::ConflictTarget>) -> DbResult<ConflictArbiter> {
    Ok(match target {
        None => ConflictArbiter::AnyUnique,
        Some(ast::ConflictTarget::Columns { predicate: Some(_), .. }) => {
            return Err(DbError::unsupported("ON CONFLICT (…) WHERE is not supported yet"))
        }
        Some(ast::ConflictTarget::Columns { columns, .. }) => ConflictArbiter::Columns(
            columns
                .iter()
                .map(|c| {
                    let n = ident_name(c);
                    table
                        .column_index(&n)
                        .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" does not exist")))
                })
                .collect::<DbResult<_>>()?,
        ),
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            ConflictArbiter::Constraint(object_name_parts(name).pop().unwrap_or_default())
        }
    })
}

fn check_identity_always(table: &TableDef, targets: &[usize], ins: &ast::Insert) -> DbResult<()> {
    if matches!(ins.overriding, Some(ast::InsertOverriding::System)) {
        return Ok(());
    }
    let is_default = |e: &ast::Expr| matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"));
    for (position, &c) in targets.iter().enumerate() {
        let column = &table.columns[c];
        if column.identity != Some(crate::catalog::Identity::Always) {
            continue;
        }
        let only_defaults = match ins.source.as_ref().map(|q| q.body.as_ref()) {
            None => true,
            Some(ast::SetExpr::Values(v)) => v.rows.iter().all(|row| row.get(position).is_none_or(is_default)),
            Some(_) => false,
        };
        if !only_defaults {
            return Err(DbError::new(
                "428C9",
                format!("cannot insert a non-DEFAULT value into column \"{}\"", column.name),
            )
            .with_detail(format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", column.name))
            .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
        }
    }
    Ok(())
}

/// A column of CREATE TABLE or ADD COLUMN: its type, NOT NULL and DEFAULT,
/// and the PRIMARY KEY / UNIQUE constraints written on it (name, primary).
fn column_def(c: &ast::ColumnDef) -> DbResult<(ColumnDef, Vec<ColumnKey>)> {
    let (data_type, numeric_typmod) = crate::sql::bind::bind_data_type_mod(&c.data_type)?;
    let mut def = ColumnDef {
        name: ident_name(&c.name),
        data_type,
        not_null: false,
        default: None,
        numeric_typmod,
        series_tag: false,
        frame_refs: false,
        identity: None,
    };
    let mut keys = Vec::new();
    for opt in &c.options {
        match &opt.option {
            ast::ColumnOption::Generated {
                generated_as: how @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                generation_expr: None,
                ..
            } => {
                if !matches!(def.data_type, DataType::Int16 | DataType::Int32 | DataType::Int64) {
                    return Err(DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "identity column type must be smallint, integer, or bigint",
                    ));
                }
                def.identity = Some(match how {
                    ast::GeneratedAs::Always => crate::catalog::Identity::Always,
                    _ => crate::catalog::Identity::ByDefault,
                });
                def.not_null = true;
            }
            ast::ColumnOption::NotNull => def.not_null = true,
            ast::ColumnOption::Null => def.not_null = false,
            ast::ColumnOption::Default(e) => def.default = Some(stored_default(e)),
            ast::ColumnOption::PrimaryKey(_) => {
                def.not_null = true;
                keys.push((opt.name.as_ref().map(ident_name), true));
            }
            ast::ColumnOption::Unique(_) => keys.push((opt.name.as_ref().map(ident_name), false)),
            // CREATE TABLE collects CHECKs and FOREIGN KEYs itself (they need the whole table).
            ast::ColumnOption::Check(_) | ast::ColumnOption::ForeignKey(_) => {}
            other => return Err(DbError::unsupported(format!("column option not supported yet: {other}"))),
        }
    }
    Ok((def, keys))
}

/// Whether a TRUNCATE says CASCADE.
fn truncate_cascades(t: &ast::Truncate) -> bool {
    matches!(t.cascade, Some(ast::CascadeOption::Cascade))
}

/// `nextval('schema.sequence')`, the DEFAULT of a serial or identity column.
pub(super) fn nextval_default(schema: &str, sequence: &str) -> Option<ast::Expr> {
    let text = format!("{schema}.{sequence}").replace('\'', "''");
    crate::sql::bind::sql_function::parse_expr(&format!("nextval('{text}')")).ok()
}

/// A DEFAULT as the catalog keeps it: `nextval('s'::regclass)` (pg_dump's
/// and hand-written DDL's spelling) as `nextval('s')`, the form the
/// catalogs print and the sequence dependency is read from.
pub(super) fn stored_default(e: &ast::Expr) -> ast::Expr {
    if let ast::Expr::Function(f) = e {
        if f.name.to_string().eq_ignore_ascii_case("nextval") {
            if let ast::FunctionArguments::List(list) = &f.args {
                if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Cast { expr, data_type, .. }))] =
                    list.args.as_slice()
                {
                    let regclass = matches!(data_type, ast::DataType::Regclass)
                        || data_type.to_string().eq_ignore_ascii_case("regclass");
                    if regclass && matches!(**expr, ast::Expr::Value(_)) {
                        let mut f = f.clone();
                        if let ast::FunctionArguments::List(list) = &mut f.args {
                            list.args = vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr((**expr).clone()))];
                        }
                        return ast::Expr::Function(f);
                    }
                }
            }
        }
    }
    e.clone()
}

/// PostgreSQL's makeObjectName: shortens the longer of `name1`/`name2` until
/// `name1_name2_label` fits in 63 bytes.
fn make_object_name(name1: &str, name2: &str, label: &str) -> String {
    let cut = |s: &str, n: usize| -> String {
        let mut end = n.min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    };
    let overhead = label.len() + 1 + if name2.is_empty() { 0 } else { 1 };
    let (mut l1, mut l2) = (name1.len(), name2.len());
    while l1 + l2 + overhead > 63 {
        if l1 > l2 {
            l1 -= 1;
        } else {
            l2 -= 1;
        }
    }
    let (n1, n2) = (cut(name1, l1), cut(name2, l2));
    if n2.is_empty() {
        format!("{n1}_{label}")
    } else {
        format!("{n1}_{n2}_{label}")
    }
}

/// What a schema holds that DROP SCHEMA names, as PostgreSQL names it:
/// (kind, name, oid) in creation (oid) order. A table's indexes and its
/// serial columns' sequences go with the table and are not named.
fn schema_contents(schema: &crate::catalog::Schema) -> Vec<(&'static str, String, u32)> {
    let owned_sequence = |seq: &str| schema.tables.keys().any(|t| is_serial_sequence_of(seq, t));
    let mut out: Vec<(&'static str, String, u32)> = Vec::new();
    out.extend(schema.tables.values().map(|t| ("table", t.name.clone(), t.oid)));
    out.extend(schema.views.values().map(|v| ("view", v.name.clone(), v.oid)));
    out.extend(
        schema.sequences.values().filter(|q| !owned_sequence(&q.name)).map(|q| ("sequence", q.name.clone(), q.oid)),
    );
    out.extend(schema.functions.values().flatten().map(|f| ("function", f.name.clone(), f.oid)));
    out.sort_by_key(|o| o.2);
    out
}

/// Removes `table`'s catalog entry and its indexes, if the entry under its
/// name is still that table (same oid: it was not dropped and made again
/// meanwhile). True when removed; the caller then releases its storage
/// (`Session::release_table_storage`).
fn remove_table_entry(db: &mut crate::catalog::Database, table: &TableDef) -> bool {
    let Some(s) = db.schemas.get_mut(&table.schema) else { return false };
    if s.tables.get(&table.name).is_none_or(|t| t.oid != table.oid) {
        return false;
    }
    s.tables.remove(&table.name);
    s.indexes.retain(|_, i| i.table != table.name);
    true
}

/// Views that depend (directly or through other views) on `rel`: with
/// `cascade` they are returned to be dropped too; without, 2BP01.
fn dependent_views(
    db: &crate::catalog::Database,
    rel: &(String, String),
    kind: &str,
    cascade: bool,
) -> DbResult<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut detail: Vec<String> = Vec::new();
    let mut frontier = vec![(rel.clone(), kind.to_string())];
    while let Some((r, r_kind)) = frontier.pop() {
        for s in db.schemas.values() {
            for v in s.views.values() {
                let key = (v.schema.clone(), v.name.clone());
                if v.depends_on.contains(&r) && !out.contains(&key) && key != *rel {
                    detail.push(format!("view {} depends on {r_kind} {}", v.name, r.1));
                    out.push(key.clone());
                    frontier.push((key, "view".to_string()));
                }
            }
        }
    }
    if !out.is_empty() && !cascade {
        return Err(DbError::new(
            "2BP01",
            format!(
                "cannot drop {kind} {} because other objects depend on it",
                rel.1
            ),
        )
        .with_detail(detail.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    Ok(out)
}

fn ident_name_of_index_column(c: &ast::IndexColumn) -> String {
    match &c.column.expr {
        ast::Expr::Identifier(i) => ident_name(i),
        other => other.to_string(),
    }
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// The setting SHOW names: its words (sqlparser drops the dots of
/// `SHOW myapp.tenant`) joined by dots, or the setting of one of
/// PostgreSQL's multi-word forms (`SHOW TIME ZONE`).
fn show_name(variable: &[ast::Ident]) -> String {
    let words: Vec<String> = variable.iter().map(ident_name).collect();
    match words.join(" ").to_lowercase().as_str() {
        "transaction isolation level" => "transaction_isolation".into(),
        "time zone" => "timezone".into(),
        // sqlparser takes SESSION as a scope: `SHOW SESSION AUTHORIZATION` arrives as `authorization`
        "session authorization" | "authorization" => "session_authorization".into(),
        _ => words.join("."),
    }
}

/// SHOW's columns: name, setting and description for SHOW ALL, else one
/// headed by the setting's name.
fn show_fields(name: &str) -> Vec<Field> {
    if name.eq_ignore_ascii_case("all") {
        ["name", "setting", "description"].iter().map(|n| Field::new(n.to_string(), DataType::Text)).collect()
    } else {
        vec![Field::new(settings::show_header(name), DataType::Text)]
    }
}

/// SET's value list as one string: `'x'` is x, an identifier its name;
/// a list (search_path, DateStyle) joined by `, `, its items quoted as
/// identifiers where the setting wants it (`"$user", public`).
fn set_value_text(name: &str, values: &[ast::Expr]) -> DbResult<String> {
    let list = settings::lookup(name).and_then(settings::list_input);
    if values.len() > 1 && list.is_none() {
        return Err(DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("SET {} takes only one argument", name.to_lowercase()),
        ));
    }
    let quote = list == Some(true);
    let items: Vec<String> = values
        .iter()
        .map(|v| match v {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) if quote => crate::catalog::quote_ident(s),
                ast::Value::SingleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            ast::Expr::Identifier(i) if quote => crate::catalog::quote_ident(&ident_name(i)),
            ast::Expr::Identifier(i) => ident_name(i),
            other => other.to_string(),
        })
        .collect();
    Ok(items.join(", "))
}

