//! The binder: resolves names against the catalog snapshot and scopes, types
//! every expression (inserting casts where PostgreSQL coerces), decides
//! parameter types from context, and builds the logical `Plan` of a query.
//! Must not: execute anything (constant literals are parsed, nothing else).

use std::collections::HashMap;
use std::sync::Arc;

use sqlparser::ast;

use crate::catalog::{system, Catalog, Database, RelationKind, TableDef, ViewDef};
use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::kernels::{self, BinaryOp, UnaryOp};
use crate::exec::EvalContext;
use crate::sql::plan::*;
use crate::types::text::parse_text;
use crate::types::{DataType, Datum};

use arrays::ArraySubscript;

mod arrays;
mod catalog_functions;
pub mod sql_function;
mod gapfill;
mod grouping_sets;
pub mod jobs;
mod object_identifiers;
pub(crate) use object_identifiers::split_qualified_name;
mod recursive;
mod table_function;
mod window;
use window::{WindowScope, WindowsHere};

/// Columns visible to expressions at one level of a query.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub fields: Vec<Field>,
}

/// What an aggregate query's expressions may see: its GROUP BY values and aggregates.
struct AggContext {
    group_exprs: Vec<Expr>,
    aggs: Vec<AggCall>,
}

pub struct Binder<'a> {
    pub catalog: &'a Catalog,
    pub db: &'a Database,
    pub eval: &'a EvalContext,
    /// Types of `$1..$n`; `Unknown` until context decides.
    pub params: Vec<DataType>,
    ctes: Vec<HashMap<String, Plan>>,
    /// Scopes of enclosing queries, innermost last (for correlated subqueries).
    outer: Vec<Scope>,
    /// Set while binding a subquery when it referenced an outer scope.
    correlated_depths: Vec<bool>,
    next_subquery_id: usize,
    /// The session user, for `current_user` and friends.
    pub user: String,
    /// Schemas searched for unqualified names, in order (existing ones only).
    pub search_path: Vec<String>,
    /// The session's settings (lower-case names), for current_setting().
    pub settings: std::collections::BTreeMap<String, String>,
    /// Where they came from and RESET's values, for pg_settings.
    pub setting_provenance: Arc<crate::sql::session::settings::Provenance>,
    /// The clause being bound, for "aggregate functions are not allowed in WHERE".
    clause: &'static str,
    /// Bytes on disk per table OID, for pg_relation_size and friends; when a
    /// statement uses them and they are absent, `wants_relation_sizes` is set
    /// and the caller binds again with them.
    pub relation_sizes: Option<Arc<HashMap<u32, u64>>>,
    pub wants_relation_sizes: bool,
    /// The shards' chunks (`ShardStorage::chunk_facts`), gathered as the
    /// relation sizes are when a statement names TimescaleDB's chunk views
    /// or show_chunks.
    pub chunk_facts: Option<Arc<Vec<crate::storage::table::ChunkFact>>>,
    pub wants_chunk_facts: bool,
    /// Maintenance functions with side effects (`drop_chunks`,
    /// `brewric_compact`) found while binding: the caller runs them and binds
    /// again with their results in `effect_results`, in the same order.
    pub effects: Vec<Effect>,
    pub effect_results: Option<Vec<Datum>>,
    next_effect: usize,
    /// The executing statement's parameter values, for effects' arguments.
    pub effect_params: Vec<Datum>,
    /// Tables and views the statement named in FROM, as (schema, name)
    /// (a view's dependencies).
    pub referenced: Vec<(String, String)>,
    /// Views being expanded, innermost last (against runaway recursion).
    view_stack: Vec<String>,
    /// Window calls of the SELECTs being bound, innermost last (see `window.rs`).
    windows: Vec<WindowScope>,
    /// How many times a recursive CTE's work table was named (see `recursive.rs`).
    work_table_uses: usize,
    /// SQL function bodies being inlined (see `sql_function.rs`).
    inline_depth: usize,
    /// The server's registries behind pg_stat_activity and
    /// pg_stat_progress_copy (None: those views are empty).
    pub server: Option<Arc<crate::server::Server>>,
    /// The session's pid, for pg_backend_pid() (0 without one).
    pub backend_pid: i32,
    /// The session's currval()/lastval() values (None: no session).
    pub session_sequences: Option<Arc<crate::sql::plan::SessionSequences>>,
}

/// A relation of constant rows (a system catalog's, a sequence's) named `qual`.
fn literal_relation(rows: Vec<Vec<Datum>>, columns: &[(&str, DataType)], oid: u32, qual: &str) -> Plan {
    let rows = rows
        .into_iter()
        .map(|row| row.into_iter().zip(columns).map(|(v, (_, t))| Expr::Literal(v, *t)).collect())
        .collect();
    let fields = columns
        .iter()
        .enumerate()
        .map(|(i, (name, t))| Field {
            name: name.to_string(),
            data_type: *t,
            qualifier: Some(qual.to_string()),
            hidden: false,
            table_oid: oid,
            column_id: i as i16 + 1,
        })
        .collect();
    Plan::Values { rows, fields }
}

/// A FROM item's name, resolved.
pub enum Relation {
    Table(Arc<TableDef>),
    View(Arc<ViewDef>),
}

/// A maintenance function call to run before the statement's plan (see `Binder::effects`).
#[derive(Debug, Clone)]
pub enum Effect {
    /// Drop the table's time partitions ending at or before `cutoff` (ns).
    DropChunks { table: Arc<TableDef>, cutoff: i64 },
    /// Merge segments now.
    Compact,
    /// set_config(name, value, is_local): SET (`value` None: RESET), or SET
    /// LOCAL; the call's value is the setting's new value.
    SetConfig { name: String, value: Option<String>, is_local: bool },
    /// Make `table` a time-series table partitioned on column `time_column`
    /// (TimescaleDB's create_hypertable); `if_not_exists` turns "already a
    /// hypertable" into a notice.
    CreateHypertable { table: Arc<TableDef>, time_column: usize, if_not_exists: bool },
    /// pg_sleep(seconds): waits, cancelable, without holding the shard's thread
    /// (None: a NULL argument, no wait).
    Sleep { seconds: Option<f64> },
    /// add_retention_policy / add_compression_policy: a job for `table`
    /// (its id the call's value; -1 when `if_not_exists` found one).
    AddPolicy {
        table: Arc<TableDef>,
        policy: crate::catalog::timescale::Policy,
        if_not_exists: bool,
        schedule_interval: Option<crate::types::Interval>,
        initial_start: Option<i64>,
    },
    /// remove_retention_policy / remove_compression_policy: the job of
    /// `policy`'s kind on `table` goes (the interval in `policy` is unused).
    RemovePolicy { table: Arc<TableDef>, policy: crate::catalog::timescale::Policy, if_exists: bool },
    DeleteJob { id: i32 },
    AlterJob { id: i32, changes: jobs::JobChanges, if_exists: bool },
}

impl Effect {
    /// The type of the value the call returns.
    pub fn result_type(&self) -> DataType {
        match self {
            // pg_sleep's void is shown as an empty text value.
            Effect::CreateHypertable { .. }
            | Effect::SetConfig { .. }
            | Effect::Sleep { .. }
            | Effect::RemovePolicy { .. }
            | Effect::DeleteJob { .. }
            | Effect::AlterJob { .. } => DataType::Text,
            Effect::AddPolicy { .. } => DataType::Int32,
            Effect::DropChunks { .. } | Effect::Compact => DataType::Int64,
        }
    }
}

pub fn ident_name(id: &ast::Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    }
}

pub fn object_name_parts(name: &ast::ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p.as_ident() {
            Some(id) => ident_name(id),
            None => p.to_string(),
        })
        .collect()
}

/// Functions with side effects, bound through `Binder::effects`.
const MAINTENANCE_FUNCTIONS: &[&str] = &["drop_chunks", "brewric_compact", "create_hypertable", "pg_sleep"];

fn is_maintenance_function(name: &str) -> bool {
    MAINTENANCE_FUNCTIONS.contains(&name) || jobs::JOB_FUNCTIONS.contains(&name)
}

fn undefined_column(name: &str) -> DbError {
    DbError::new(
        sqlstate::UNDEFINED_COLUMN,
        format!("column \"{name}\" does not exist"),
    )
}

impl<'a> Binder<'a> {
    pub fn new(
        catalog: &'a Catalog,
        db: &'a Database,
        eval: &'a EvalContext,
        params: Vec<DataType>,
    ) -> Self {
        Binder {
            catalog,
            db,
            eval,
            params,
            ctes: Vec::new(),
            outer: Vec::new(),
            correlated_depths: Vec::new(),
            next_subquery_id: 0,
            user: "brewric".to_string(),
            search_path: vec!["public".to_string()],
            settings: Default::default(),
            setting_provenance: Default::default(),
            clause: "this context",
            relation_sizes: None,
            wants_relation_sizes: false,
            chunk_facts: None,
            wants_chunk_facts: false,
            effects: Vec::new(),
            effect_results: None,
            next_effect: 0,
            effect_params: Vec::new(),
            referenced: Vec::new(),
            view_stack: Vec::new(),
            windows: Vec::new(),
            work_table_uses: 0,
            inline_depth: 0,
            server: None,
            backend_pid: 0,
            session_sequences: None,
        }
    }

    /// `[db.][schema.]name` → (schema, name); an unqualified name goes to the
    /// first schema of the search path holding a relation of that name.
    pub fn relation_schema(&self, name: &ast::ObjectName) -> DbResult<(String, String)> {
        let parts = object_name_parts(name);
        Ok(match parts.as_slice() {
            [t] => {
                let schema = self
                    .search_path
                    .iter()
                    .find(|s| {
                        self.db
                            .schemas
                            .get(*s)
                            .is_some_and(|sc| sc.relation_kind(t).is_some())
                    })
                    .cloned()
                    .unwrap_or_default();
                (schema, t.clone())
            }
            [s, t] => (s.clone(), t.clone()),
            [d, s, t] if *d == self.db.name => (s.clone(), t.clone()),
            _ => {
                return Err(DbError::unsupported(format!(
                    "cross-database references are not implemented: {name}"
                )))
            }
        })
    }

    /// Resolves a FROM item's name to a table or a view.
    pub fn resolve_relation(&self, name: &ast::ObjectName) -> DbResult<Relation> {
        let (schema, rel) = self.relation_schema(name)?;
        if let Some(s) = self.db.schemas.get(&schema) {
            if let Some(t) = s.tables.get(&rel) {
                return Ok(Relation::Table(t.clone()));
            }
            if let Some(v) = s.views.get(&rel) {
                return Ok(Relation::View(v.clone()));
            }
        }
        Err(DbError::new(
            sqlstate::UNDEFINED_TABLE,
            format!(
                "relation \"{}\" does not exist",
                object_name_parts(name).join(".")
            ),
        ))
    }

    /// The system catalog relation `name` reaches: `pg_catalog.x` or
    /// `information_schema.x`, or an unqualified pg_catalog name (pg_catalog
    /// is searched before the search path, as in PostgreSQL).
    fn system_relation(&self, name: &ast::ObjectName) -> Option<&'static system::SystemRelation> {
        match object_name_parts(name).as_slice() {
            [t] => system::lookup("pg_catalog", t),
            [s, t] => system::lookup(s, t),
            [d, s, t] if *d == self.db.name => system::lookup(s, t),
            _ => None,
        }
    }

    pub fn system_context(&self) -> system::SystemContext<'_> {
        system::SystemContext {
            catalog: self.catalog,
            db: self.db,
            user: &self.user,
            search_path: &self.search_path,
            server: self.server.as_deref(),
            settings: Some(crate::sql::session::settings::SessionSettings {
                values: &self.settings,
                provenance: &self.setting_provenance,
            }),
            chunks: self.chunk_facts.as_deref().map(Vec::as_slice),
        }
    }

    /// A system relation's rows, computed from this statement's catalog snapshot.
    fn bind_system_relation(&mut self, rel: &'static system::SystemRelation, qual: &str) -> Plan {
        if system::timescaledb_information::needs_chunk_facts(rel) && self.chunk_facts.is_none() {
            self.wants_chunk_facts = true;
        }
        literal_relation(rel.rows(&self.system_context()), rel.columns, rel.oid, qual)
    }

    /// A sequence read as a relation (`SELECT last_value, is_called FROM s`,
    /// as pg_dump reads it): one row, as of now.
    fn sequence_relation(&self, name: &ast::ObjectName) -> Option<Plan> {
        let (schema, rel) = self.relation_schema(name).ok()?;
        let sequence = self.db.schemas.get(&schema)?.sequences.get(&rel)?;
        let (last, called) = sequence.position();
        let row = vec![Datum::Int64(last), Datum::Int64(0), Datum::Bool(called)];
        const COLUMNS: &[(&str, DataType)] =
            &[("last_value", DataType::Int64), ("log_cnt", DataType::Int64), ("is_called", DataType::Bool)];
        Some(literal_relation(vec![row], COLUMNS, sequence.oid, &rel))
    }

    /// Binds a view's stored query as a subquery named `qual`.
    fn bind_view(&mut self, view: &ViewDef, qual: &str) -> DbResult<Plan> {
        let key = format!("{}.{}", view.schema, view.name);
        if self.view_stack.contains(&key) || self.view_stack.len() >= 64 {
            return Err(DbError::new(
                "42P17",
                format!(
                    "infinite recursion detected in rules for relation \"{}\"",
                    view.name
                ),
            ));
        }
        let query = match crate::sql::parse(&view.query)?.into_iter().next() {
            Some(ast::Statement::Query(q)) => q,
            _ => {
                return Err(DbError::internal(format!(
                    "view \"{}\" does not hold a query",
                    view.name
                )))
            }
        };
        // A view sees neither the CTEs nor the outer scopes of the query using it.
        let ctes = std::mem::take(&mut self.ctes);
        let outer = std::mem::take(&mut self.outer);
        let depths = std::mem::take(&mut self.correlated_depths);
        let referenced = self.referenced.len();
        self.view_stack.push(key);
        let plan = self.bind_query(&query);
        self.view_stack.pop();
        self.referenced.truncate(referenced);
        self.ctes = ctes;
        self.outer = outer;
        self.correlated_depths = depths;
        let plan = plan?;
        let visible = plan.fields().iter().filter(|f| !f.hidden).count();
        if visible != view.columns.len() {
            return Err(DbError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!(
                    "view \"{}\" no longer matches its tables (it had {} columns, now {visible})",
                    view.name,
                    view.columns.len()
                ),
            ));
        }
        let mut fields: Vec<Field> = plan.fields().to_vec();
        for (f, (name, _)) in fields.iter_mut().zip(&view.columns) {
            f.name = name.clone();
            f.qualifier = Some(qual.to_string());
        }
        let exprs = fields
            .iter()
            .enumerate()
            .map(|(i, f)| Expr::Column(i, f.data_type))
            .collect();
        Ok(Plan::Project {
            input: Box::new(plan),
            exprs,
            fields,
        })
    }

    /// Binds an index key or predicate over `table`'s columns.
    pub fn bind_over_table(&mut self, table: &Arc<TableDef>, e: &ast::Expr) -> DbResult<Expr> {
        let scope = Scope {
            fields: scan_all(table, None).fields().to_vec(),
        };
        self.bind_in_clause("index expressions", |b| b.bind_expr(e, &scope, None))
    }

    /// A CHECK constraint's expression over `table`'s columns: boolean, no
    /// subqueries, aggregates or functions with side effects (as PostgreSQL).
    pub fn bind_check_over_table(&mut self, table: &Arc<TableDef>, e: &ast::Expr) -> DbResult<Expr> {
        let scope = Scope {
            fields: scan_all(table, None).fields().to_vec(),
        };
        let bound = self.bind_in_clause("check constraints", |b| b.bind_expr(e, &scope, None))?;
        if bound.has_subquery() {
            return Err(DbError::unsupported("cannot use subquery in check constraint"));
        }
        if bound.has_side_effects() {
            return Err(DbError::unsupported("cannot use a function with side effects in check constraint"));
        }
        self.coerce(bound, DataType::Bool, "CHECK")
    }

    /// Resolves `[schema.]name` to a table of the current database.
    pub fn resolve_table(&self, name: &ast::ObjectName) -> DbResult<Arc<TableDef>> {
        let parts = object_name_parts(name);
        let (schema, table) = self.relation_schema(name)?;
        if let Some(_kind) = self
            .db
            .schemas
            .get(&schema)
            .and_then(|s| s.relation_kind(&table))
            .filter(|k| *k != RelationKind::Table)
        {
            return Err(DbError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{table}\" is not a table"),
            ));
        }
        self.db.table(&schema, &table).cloned().ok_or_else(|| {
            DbError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{}\" does not exist", parts.join(".")),
            )
        })
    }

    /// Binds a scalar expression (DEFAULT, RETURNING) against `scope`.
    pub fn bind_scalar(&mut self, e: &ast::Expr, scope: &Scope) -> DbResult<Expr> {
        self.bind_expr(e, scope, None)
    }

    pub fn bind_default(&mut self, e: &ast::Expr, scope: &Scope) -> DbResult<Expr> {
        self.bind_in_clause("DEFAULT expressions", |b| b.bind_expr(e, scope, None))
    }

    /// Binds with `clause` named in errors about misplaced aggregates.
    fn bind_in_clause<T>(
        &mut self,
        clause: &'static str,
        f: impl FnOnce(&mut Self) -> DbResult<T>,
    ) -> DbResult<T> {
        let saved = std::mem::replace(&mut self.clause, clause);
        let out = f(self);
        self.clause = saved;
        out
    }

    /// The first schema of the search path (where unqualified CREATEs go).
    pub fn current_schema(&self) -> String {
        self.search_path
            .first()
            .cloned()
            .unwrap_or_else(|| "public".to_string())
    }

    // ---------------------------------------------------------------- queries

    pub fn bind_query(&mut self, query: &ast::Query) -> DbResult<Plan> {
        let mut pushed_ctes = false;
        if let Some(with) = &query.with {
            self.ctes.push(HashMap::new());
            pushed_ctes = true;
            for cte in &with.cte_tables {
                let name = ident_name(&cte.alias.name);
                let plan = if with.recursive {
                    self.bind_recursive_cte(cte)
                } else {
                    self.bind_query(&cte.query)
                        .and_then(|plan| rename_columns(plan, &name, &cte.alias.columns))
                };
                let plan = match plan {
                    Ok(p) => p,
                    Err(e) => {
                        self.ctes.pop();
                        return Err(e);
                    }
                };
                if let Some(scope) = self.ctes.last_mut() {
                    scope.insert(name, plan);
                }
            }
        }
        let result = self.bind_query_body(query);
        if pushed_ctes {
            self.ctes.pop();
        }
        result
    }

    fn bind_query_body(&mut self, query: &ast::Query) -> DbResult<Plan> {
        let order_by: &[ast::OrderByExpr] = match &query.order_by {
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(e) => e,
                ast::OrderByKind::All(_) => return Err(DbError::unsupported("ORDER BY ALL")),
            },
            None => &[],
        };
        let mut plan = match query.body.as_ref() {
            ast::SetExpr::Select(select) => self.bind_select(select, order_by)?,
            other => {
                let plan = self.bind_set_expr(other)?;
                if order_by.is_empty() {
                    plan
                } else {
                    self.bind_order_by_outputs(plan, order_by)?
                }
            }
        };
        if let Some(limit) = &query.limit_clause {
            let (limit, offset) = match limit {
                ast::LimitClause::LimitOffset { limit, offset, .. } => {
                    (limit.clone(), offset.as_ref().map(|o| o.value.clone()))
                }
                ast::LimitClause::OffsetCommaLimit { offset, limit } => {
                    (Some(limit.clone()), Some(offset.clone()))
                }
            };
            let empty = Scope::default();
            let limit = match limit {
                Some(e) => Some(self.bind_limit_value(&e, &empty)?),
                None => None,
            };
            let offset = match offset {
                Some(e) => Some(self.bind_limit_value(&e, &empty)?),
                None => None,
            };
            plan = Plan::Limit {
                input: Box::new(plan),
                limit,
                offset,
            };
        }
        if let Some(fetch) = &query.fetch {
            let limit = match &fetch.quantity {
                Some(q) => Some(self.bind_limit_value(q, &Scope::default())?),
                None => Some(Expr::Literal(Datum::Int64(1), DataType::Int64)),
            };
            plan = Plan::Limit {
                input: Box::new(plan),
                limit,
                offset: None,
            };
        }
        Ok(plan)
    }

    fn bind_limit_value(&mut self, e: &ast::Expr, scope: &Scope) -> DbResult<Expr> {
        let bound = self.bind_expr(e, scope, None)?;
        self.coerce(bound, DataType::Int64, "LIMIT")
    }

    fn bind_set_expr(&mut self, body: &ast::SetExpr) -> DbResult<Plan> {
        match body {
            ast::SetExpr::Select(select) => self.bind_select(select, &[]),
            ast::SetExpr::Query(q) => self.bind_query(q),
            ast::SetExpr::Values(values) => self.bind_values(values),
            ast::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let l = self.bind_set_expr(left)?;
                let r = self.bind_set_expr(right)?;
                let kind = match op {
                    ast::SetOperator::Union => SetOpKind::Union,
                    ast::SetOperator::Intersect => SetOpKind::Intersect,
                    ast::SetOperator::Except | ast::SetOperator::Minus => SetOpKind::Except,
                };
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                self.bind_set_op(kind, all, l, r)
            }
            ast::SetExpr::Table(t) => {
                let name = t
                    .table_name
                    .clone()
                    .ok_or_else(|| DbError::syntax("TABLE needs a table name"))?;
                let mut parts = Vec::new();
                if let Some(s) = &t.schema_name {
                    parts.push(s.clone());
                }
                parts.push(name);
                let table = self.resolve_table(&ast::ObjectName::from(parts))?;
                Ok(scan_all(&table, None))
            }
            other => Err(DbError::unsupported(format!(
                "query form not supported: {other}"
            ))),
        }
    }

    fn bind_set_op(&mut self, kind: SetOpKind, all: bool, l: Plan, r: Plan) -> DbResult<Plan> {
        let word = match kind {
            SetOpKind::Union => "UNION",
            SetOpKind::Intersect => "INTERSECT",
            SetOpKind::Except => "EXCEPT",
        };
        if l.fields().len() != r.fields().len() {
            return Err(DbError::syntax(format!(
                "each {word} query must have the same number of columns"
            )));
        }
        let mut types = Vec::new();
        for (a, b) in l.fields().iter().zip(r.fields()) {
            let t = kernels::common_type(&[a.data_type, b.data_type], word)?;
            types.push(if t == DataType::Unknown {
                DataType::Text
            } else {
                t
            });
        }
        let l = self.cast_plan(l, &types, word)?;
        let r = self.cast_plan(r, &types, word)?;
        let fields = l
            .fields()
            .iter()
            .map(|f| Field::new(f.name.clone(), f.data_type))
            .collect();
        Ok(Plan::SetOp {
            kind,
            all,
            left: Box::new(l),
            right: Box::new(r),
            fields,
        })
    }

    /// Projects `plan` so its columns have `types` (a no-op when they do).
    fn cast_plan(&mut self, plan: Plan, types: &[DataType], context: &str) -> DbResult<Plan> {
        if plan.types() == types {
            return Ok(plan);
        }
        let mut exprs = Vec::new();
        let mut fields = Vec::new();
        for (i, (f, t)) in plan.fields().iter().zip(types).enumerate() {
            exprs.push(self.coerce(Expr::Column(i, f.data_type), *t, context)?);
            fields.push(Field::new(f.name.clone(), *t));
        }
        Ok(Plan::Project {
            input: Box::new(plan),
            exprs,
            fields,
        })
    }

    /// The expressions of a VALUES list, untyped literals left untyped (INSERT
    /// gives them the target columns' types).
    /// `None` stands for `DEFAULT`.
    pub fn bind_values_raw(&mut self, values: &ast::Values) -> DbResult<Vec<Vec<Option<Expr>>>> {
        let empty = Scope::default();
        let mut rows: Vec<Vec<Option<Expr>>> = Vec::new();
        for row in &values.rows {
            let mut out = Vec::new();
            for e in &row.content {
                match e {
                    ast::Expr::Identifier(id)
                        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") =>
                    {
                        out.push(None)
                    }
                    _ => out.push(Some(
                        self.bind_in_clause("VALUES", |b| b.bind_expr(e, &empty, None))?,
                    )),
                }
            }
            if rows.first().is_some_and(|f| f.len() != out.len()) {
                return Err(DbError::syntax("VALUES lists must all be the same length"));
            }
            rows.push(out);
        }
        Ok(rows)
    }

    fn bind_values(&mut self, values: &ast::Values) -> DbResult<Plan> {
        let empty = Scope::default();
        let mut rows = Vec::new();
        for row in &values.rows {
            let mut out = Vec::new();
            for e in &row.content {
                out.push(self.bind_expr(e, &empty, None)?);
            }
            if let Some(first) = rows.first() {
                let first: &Vec<Expr> = first;
                if first.len() != out.len() {
                    return Err(DbError::syntax("VALUES lists must all be the same length"));
                }
            }
            rows.push(out);
        }
        let width = rows.first().map_or(0, |r| r.len());
        let mut fields = Vec::new();
        for col in 0..width {
            let types: Vec<DataType> = rows.iter().map(|r| r[col].data_type()).collect();
            let mut t = kernels::common_type(&types, "VALUES")?;
            if t == DataType::Unknown {
                t = DataType::Text;
            }
            for r in rows.iter_mut() {
                let e = std::mem::replace(&mut r[col], Expr::null());
                r[col] = self.coerce(e, t, "VALUES")?;
            }
            fields.push(Field::new(format!("column{}", col + 1), t));
        }
        Ok(Plan::Values { rows, fields })
    }

    // ---------------------------------------------------------------- FROM

    fn bind_from(&mut self, from: &[ast::TableWithJoins]) -> DbResult<Plan> {
        let mut plan: Option<Plan> = None;
        for twj in from {
            // A function or LATERAL subquery may refer to the items on its left.
            let (first, lateral) = self.bind_from_item(&twj.relation, plan.as_ref().map(|p| p.fields().to_vec()))?;
            let mut item = match (lateral, plan.take()) {
                (true, Some(left)) => self.lateral_join(left, first, None)?,
                (_, left) => {
                    plan = left;
                    first
                }
            };
            for join in &twj.joins {
                let (right, lateral) = self.bind_from_item(&join.relation, Some(item.fields().to_vec()))?;
                item = if lateral {
                    self.lateral_join(item, right, Some(&join.join_operator))?
                } else {
                    self.bind_join(item, right, &join.join_operator)?
                };
            }
            plan = Some(match plan {
                None => item,
                Some(left) => cross_join(left, item),
            });
        }
        Ok(plan.unwrap_or(Plan::Values {
            rows: vec![vec![]],
            fields: vec![],
        }))
    }

    fn bind_table_factor(&mut self, factor: &ast::TableFactor) -> DbResult<Plan> {
        if let Some(plan) = self.bind_function_factor(factor)? {
            return Ok(plan);
        }
        match factor {
            ast::TableFactor::Table {
                name, alias, args, ..
            } => {
                if args.is_some() {
                    return Err(DbError::unsupported(format!(
                        "table functions are not supported: {name}"
                    )));
                }
                let parts = object_name_parts(name);
                if parts.len() == 1 {
                    let cte = self
                        .ctes
                        .iter()
                        .rev()
                        .find_map(|m| m.get(&parts[0]))
                        .cloned();
                    if let Some(plan) = cte {
                        if matches!(plan, Plan::WorkTable { .. }) {
                            self.work_table_uses += 1;
                        }
                        let qual = alias
                            .as_ref()
                            .map(|a| ident_name(&a.name))
                            .unwrap_or(parts[0].clone());
                        let cols = alias
                            .as_ref()
                            .map(|a| a.columns.clone())
                            .unwrap_or_default();
                        return rename_columns(plan, &qual, &cols);
                    }
                }
                if let Some(rel) = self.system_relation(name) {
                    let qual = alias
                        .as_ref()
                        .map(|a| ident_name(&a.name))
                        .unwrap_or(rel.name.to_string());
                    let plan = self.bind_system_relation(rel, &qual);
                    return match alias {
                        Some(a) if !a.columns.is_empty() => rename_columns(plan, &qual, &a.columns),
                        _ => Ok(plan),
                    };
                }
                if let Some(plan) = self.sequence_relation(name) {
                    let qual = alias.as_ref().map(|a| ident_name(&a.name)).unwrap_or_else(|| parts[parts.len() - 1].clone());
                    let plan = rename_columns(plan, &qual, &alias.as_ref().map(|a| a.columns.clone()).unwrap_or_default())?;
                    return Ok(plan);
                }
                let table = match self.resolve_relation(name)? {
                    Relation::Table(t) => {
                        if self.db.materialized_views.get(&t.oid).is_some_and(|m| !m.populated) {
                            return Err(DbError::new(
                                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                                format!("materialized view \"{}\" has not been populated", t.name),
                            )
                            .with_hint("Use the REFRESH MATERIALIZED VIEW command."));
                        }
                        t
                    }
                    Relation::View(v) => {
                        self.referenced.push((v.schema.clone(), v.name.clone()));
                        let qual = alias
                            .as_ref()
                            .map(|a| ident_name(&a.name))
                            .unwrap_or(v.name.clone());
                        let plan = self.bind_view(&v, &qual)?;
                        return match alias {
                            Some(a) if !a.columns.is_empty() => {
                                rename_columns(plan, &qual, &a.columns)
                            }
                            _ => Ok(plan),
                        };
                    }
                };
                self.referenced
                    .push((table.schema.clone(), table.name.clone()));
                let qual = alias
                    .as_ref()
                    .map(|a| ident_name(&a.name))
                    .unwrap_or(table.name.clone());
                let plan = scan_all(&table, Some(&qual));
                match alias {
                    Some(a) if !a.columns.is_empty() => rename_columns(plan, &qual, &a.columns),
                    _ => Ok(plan),
                }
            }
            ast::TableFactor::Derived {
                subquery, alias, ..
            } => {
                let plan = self.bind_query(subquery)?;
                match alias {
                    Some(a) => rename_columns(plan, &ident_name(&a.name), &a.columns),
                    None => Ok(plan),
                }
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                let plan = self.bind_from(std::slice::from_ref(table_with_joins))?;
                match alias {
                    Some(a) => rename_columns(plan, &ident_name(&a.name), &a.columns),
                    None => Ok(plan),
                }
            }
            other => Err(DbError::unsupported(format!(
                "FROM item not supported: {other}"
            ))),
        }
    }

    fn bind_join(&mut self, left: Plan, right: Plan, op: &ast::JoinOperator) -> DbResult<Plan> {
        use ast::JoinOperator as J;
        let (kind, constraint) = match op {
            J::Join(c) | J::Inner(c) => (JoinKind::Inner, c),
            J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, c),
            J::Right(c) | J::RightOuter(c) => (JoinKind::Right, c),
            J::FullOuter(c) => (JoinKind::Full, c),
            J::CrossJoin(c) => (JoinKind::Cross, c),
            other => {
                return Err(DbError::unsupported(format!(
                    "join type not supported: {other:?}"
                )))
            }
        };
        let mut fields: Vec<Field> = left.fields().to_vec();
        fields.extend(right.fields().iter().cloned());
        let left_len = left.fields().len();
        let mut using_pairs: Vec<(usize, usize)> = Vec::new();
        let on = match constraint {
            ast::JoinConstraint::On(e) => {
                let scope = Scope {
                    fields: fields.clone(),
                };
                let bound =
                    self.bind_in_clause("JOIN conditions", |b| b.bind_expr(e, &scope, None))?;
                Some(self.coerce(bound, DataType::Bool, "JOIN/ON")?)
            }
            ast::JoinConstraint::Using(names) => {
                let mut conj: Option<Expr> = None;
                for n in names {
                    let name = object_name_parts(n).pop().unwrap_or_default();
                    let li = find_unique(&fields[..left_len], None, &name)?
                        .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" specified in USING clause does not exist in left table")))?;
                    let ri = find_unique(&fields[left_len..], None, &name)?
                        .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{name}\" specified in USING clause does not exist in right table")))?;
                    let ri = ri + left_len;
                    using_pairs.push((li, ri));
                    let eq = self.bind_binary(
                        BinaryOp::Eq,
                        Expr::Column(li, fields[li].data_type),
                        Expr::Column(ri, fields[ri].data_type),
                    )?;
                    conj = Some(match conj {
                        None => eq,
                        Some(c) => self.bind_binary(BinaryOp::And, c, eq)?,
                    });
                }
                conj
            }
            ast::JoinConstraint::Natural => {
                return Err(DbError::unsupported("NATURAL JOIN is not supported yet"));
            }
            ast::JoinConstraint::None => None,
            ast::JoinConstraint::UsingAlias(..) => {
                return Err(DbError::unsupported("USING ... AS"))
            }
        };
        let kind = if on.is_none() && kind == JoinKind::Inner {
            JoinKind::Cross
        } else {
            kind
        };
        let join = Plan::Join {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            on,
            fields,
        };
        if using_pairs.is_empty() {
            return Ok(join);
        }
        self.merge_using_columns(join, kind, &using_pairs)
    }

    /// USING output as PostgreSQL shapes it: the merged join columns first
    /// (for FULL JOIN the coalesce of both sides), then the other columns of
    /// the left and right inputs. The right side's originals stay reachable
    /// by qualified name.
    fn merge_using_columns(
        &mut self,
        join: Plan,
        kind: JoinKind,
        pairs: &[(usize, usize)],
    ) -> DbResult<Plan> {
        let fields = join.fields().to_vec();
        let mut exprs = Vec::new();
        let mut out = Vec::new();
        for &(li, ri) in pairs {
            let (l, r) = (&fields[li], &fields[ri]);
            let le = Expr::Column(li, l.data_type);
            let re = Expr::Column(ri, r.data_type);
            let (e, src) = match kind {
                JoinKind::Full => (self.bind_function_call("coalesce", vec![le, re])?, l),
                JoinKind::Right => (re, r),
                _ => (le, l),
            };
            let mut f = src.clone();
            f.data_type = e.data_type();
            f.qualifier = l.qualifier.clone();
            exprs.push(e);
            out.push(f);
        }
        let merged: Vec<usize> = pairs.iter().flat_map(|&(l, r)| [l, r]).collect();
        for (i, f) in fields.iter().enumerate() {
            if !merged.contains(&i) {
                exprs.push(Expr::Column(i, f.data_type));
                out.push(f.clone());
            }
        }
        for &(_, ri) in pairs {
            let mut f = fields[ri].clone();
            f.hidden = true;
            exprs.push(Expr::Column(ri, f.data_type));
            out.push(f);
        }
        Ok(Plan::Project {
            input: Box::new(join),
            exprs,
            fields: out,
        })
    }

    // ---------------------------------------------------------------- SELECT

    fn bind_select(
        &mut self,
        select: &ast::Select,
        order_by: &[ast::OrderByExpr],
    ) -> DbResult<Plan> {
        self.windows.push(WindowScope::new(&select.named_window)?);
        let plan = self.bind_select_in_window_scope(select, order_by);
        self.windows.pop();
        plan
    }

    fn bind_select_in_window_scope(
        &mut self,
        select: &ast::Select,
        order_by: &[ast::OrderByExpr],
    ) -> DbResult<Plan> {
        let mut plan = self.bind_from(&select.from)?;
        let scope = Scope {
            fields: plan.fields().to_vec(),
        };
        let mut where_pred = None;
        if let Some(w) = &select.selection {
            let pred = self.bind_in_clause("WHERE", |b| b.bind_expr(w, &scope, None))?;
            let pred = self.coerce(pred, DataType::Bool, "WHERE")?;
            where_pred = Some(pred.clone());
            plan = crate::sql::optimize::filter(plan, pred);
        }

        let group_asts: Vec<ast::Expr> = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, _) => exprs.clone(),
            ast::GroupByExpr::All(_) => return Err(DbError::unsupported("GROUP BY ALL")),
        };
        let (group_asts, grouping_sets) = grouping_sets::expand(&group_asts)?;
        let aggregating = !group_asts.is_empty()
            || select.having.is_some()
            || select.projection.iter().any(|item| match item {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => contains_aggregate(e),
                _ => false,
            })
            || order_by.iter().any(|o| contains_aggregate(&o.expr));

        // Select-list items, expanded (`*`) but not yet bound: (ast, output name).
        let items = self.expand_select_items(&select.projection, &scope)?;

        let mut agg_ctx = None;
        if aggregating {
            let mut group_exprs = Vec::new();
            for g in &group_asts {
                group_exprs.push(self.bind_group_key(g, &scope, &items)?);
            }
            agg_ctx = Some(AggContext {
                group_exprs,
                aggs: Vec::new(),
            });
        }

        // Bind the select list (and HAVING, ORDER BY) against the input or the aggregate.
        let mut select_exprs = Vec::new();
        let mut names = Vec::new();
        self.allow_windows(true);
        for (item, name) in &items {
            let e = match item {
                SelectSource::Ast(ast) => self.bind_expr(ast, &scope, agg_ctx.as_mut())?,
                SelectSource::Column(i) => self.column_in_agg(*i, &scope, agg_ctx.as_ref())?,
            };
            select_exprs.push(e);
            names.push(name.clone());
        }
        self.allow_windows(false);
        let having = match &select.having {
            Some(h) => {
                let e = self.bind_in_clause("HAVING", |b| b.bind_expr(h, &scope, agg_ctx.as_mut()))?;
                Some(self.coerce(e, DataType::Bool, "HAVING")?)
            }
            None => None,
        };
        let distinct = matches!(select.distinct, Some(ast::Distinct::Distinct));

        // ORDER BY keys: output ordinal, output alias, or an expression (hidden column).
        let mut sort_keys = Vec::new();
        let mut hidden = Vec::new();
        self.allow_windows(true);
        for ob in order_by {
            let descending = matches!(ob.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_first = ob.options.nulls_first.unwrap_or(descending);
            let idx = self.order_key_output_index(&ob.expr, &names, &select_exprs)?;
            let expr = match idx {
                Some(i) => Expr::Column(i, select_exprs[i].data_type()),
                None => {
                    let e = self.bind_expr(&ob.expr, &scope, agg_ctx.as_mut())?;
                    if let Some(pos) = select_exprs.iter().position(|s| *s == e) {
                        Expr::Column(pos, e.data_type())
                    } else {
                        if distinct {
                            return Err(DbError::new(
                                sqlstate::INVALID_COLUMN_REFERENCE,
                                "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                            ));
                        }
                        let pos = select_exprs.len() + hidden.len();
                        let t = e.data_type();
                        hidden.push(e);
                        Expr::Column(pos, t)
                    }
                }
            };
            sort_keys.push(SortKey {
                expr,
                descending,
                nulls_first,
            });
        }
        self.allow_windows(false);

        // DISTINCT ON keys: output columns, or hidden ones like ORDER BY's; the
        // first rows after the sort are kept, so ORDER BY must lead with them.
        let mut distinct_on: Option<Vec<usize>> = None;
        if let Some(ast::Distinct::On(on)) = &select.distinct {
            let mut cols = Vec::new();
            for e in on {
                let col = match self.order_key_output_index(e, &names, &select_exprs)? {
                    Some(i) => i,
                    None => {
                        let b = self.bind_expr(e, &scope, agg_ctx.as_mut())?;
                        match select_exprs.iter().chain(hidden.iter()).position(|s| *s == b) {
                            Some(p) => p,
                            None => {
                                hidden.push(b);
                                select_exprs.len() + hidden.len() - 1
                            }
                        }
                    }
                };
                if !cols.contains(&col) {
                    cols.push(col);
                }
            }
            let leading: Vec<usize> = sort_keys
                .iter()
                .take(cols.len())
                .filter_map(|k| match &k.expr {
                    Expr::Column(i, _) => Some(*i),
                    _ => None,
                })
                .collect();
            if !sort_keys.is_empty()
                && (leading.len() < cols.len().min(sort_keys.len())
                    || leading.iter().any(|i| !cols.contains(i))
                    || (sort_keys.len() < cols.len()))
            {
                return Err(DbError::new(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                ));
            }
            distinct_on = Some(cols);
        }

        if let Some(agg) = agg_ctx {
            let mut fields = Vec::new();
            for (i, g) in agg.group_exprs.iter().enumerate() {
                fields.push(Field::new(format!("group{i}"), g.data_type()));
            }
            for (i, a) in agg.aggs.iter().enumerate() {
                fields.push(Field::new(format!("agg{i}"), a.result_type));
            }
            // `agg(x ORDER BY k)`: the input arrives sorted by k (one ordering per query).
            let mut orderings = agg.aggs.iter().map(|a| &a.order_by).filter(|o| !o.is_empty());
            if let Some(first) = orderings.next() {
                if orderings.any(|o| o != first) {
                    return Err(DbError::unsupported("aggregates with different ORDER BY clauses in one query"));
                }
                plan = Plan::Sort {
                    input: Box::new(plan),
                    keys: first.clone(),
                };
            }
            let group_exprs = agg.group_exprs.clone();
            plan = match &grouping_sets {
                None => Plan::Aggregate {
                    input: Box::new(plan),
                    group_by: agg.group_exprs,
                    aggs: agg.aggs,
                    fields,
                },
                Some(sets) => grouping_sets::grouping_sets_plan(plan, agg.group_exprs, agg.aggs, fields, sets),
            };
            if let Some(h) = having {
                plan = Plan::Filter {
                    input: Box::new(plan),
                    predicate: h,
                };
            }
            let (call, fills) = self.take_gapfill();
            if let Some(call) = call {
                let base = plan.fields().len();
                plan = gapfill::gapfill_plan(plan, call, fills, &group_exprs, where_pred.as_ref())?;
                select_exprs = select_exprs.into_iter().map(|e| gapfill::place_fill_columns(e, base)).collect();
                hidden = hidden.into_iter().map(|e| gapfill::place_fill_columns(e, base)).collect();
            }
        }
        if select_exprs.iter().chain(&hidden).any(gapfill::has_fill_placeholder) {
            return Err(DbError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "locf and interpolate need a time_bucket_gapfill in GROUP BY",
            ));
        }

        // Window calls run over the (aggregated, filtered) rows; their
        // results are the columns after the input's.
        let mut select_exprs = select_exprs;
        let calls = self.take_window_calls();
        if !calls.is_empty() {
            let base = plan.fields().len();
            plan = window::window_plan(plan, calls);
            select_exprs = select_exprs.into_iter().map(|e| window::place_window_columns(e, base)).collect();
            hidden = hidden.into_iter().map(|e| window::place_window_columns(e, base)).collect();
        }
        let (with_srfs, srf_base) = self.lateral_set_returning_calls(plan)?;
        plan = with_srfs;
        if let Some(base) = srf_base {
            select_exprs = select_exprs.into_iter().map(|e| table_function::place_srf_columns(e, base)).collect();
            hidden = hidden.into_iter().map(|e| table_function::place_srf_columns(e, base)).collect();
        }

        let visible = select_exprs.len();
        let mut fields: Vec<Field> = select_exprs
            .iter()
            .zip(&names)
            .map(|(e, n)| {
                let mut f = Field::new(n.clone(), e.data_type());
                if let Expr::Column(i, _) = e {
                    if let Some(src) = plan.fields().get(*i) {
                        f.table_oid = src.table_oid;
                        f.column_id = src.column_id;
                    }
                }
                f
            })
            .collect();
        let mut exprs = select_exprs;
        for h in hidden {
            fields.push(Field::new("?sort?", h.data_type()));
            exprs.push(h);
        }
        for f in fields.iter_mut() {
            if f.data_type == DataType::Unknown {
                f.data_type = DataType::Text;
            }
        }
        let exprs = exprs
            .into_iter()
            .map(|e| {
                if e.data_type() == DataType::Unknown {
                    self.coerce(e, DataType::Text, "SELECT")
                } else {
                    Ok(e)
                }
            })
            .collect::<DbResult<Vec<_>>>()?;
        let (input, exprs) = match crate::sql::optimize::narrow_scan(&plan, &exprs) {
            Some(narrowed) => narrowed,
            None => (plan, exprs),
        };
        plan = Plan::Project {
            input: Box::new(input),
            exprs,
            fields,
        };
        if distinct {
            plan = Plan::Distinct {
                input: Box::new(plan),
                on: None,
            };
        }
        if !sort_keys.is_empty() {
            plan = Plan::Sort {
                input: Box::new(plan),
                keys: sort_keys,
            };
        }
        if let Some(on) = distinct_on {
            plan = Plan::Distinct {
                input: Box::new(plan),
                on: Some(on),
            };
        }
        if plan.fields().len() > visible {
            let fields: Vec<Field> = plan.fields()[..visible].to_vec();
            let exprs = fields
                .iter()
                .enumerate()
                .map(|(i, f)| Expr::Column(i, f.data_type))
                .collect();
            plan = Plan::Project {
                input: Box::new(plan),
                exprs,
                fields,
            };
        }
        Ok(plan)
    }

    /// ORDER BY on a set operation / VALUES: only output columns may be named.
    fn bind_order_by_outputs(
        &mut self,
        plan: Plan,
        order_by: &[ast::OrderByExpr],
    ) -> DbResult<Plan> {
        let names: Vec<String> = plan.fields().iter().map(|f| f.name.clone()).collect();
        let exprs: Vec<Expr> = plan
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| Expr::Column(i, f.data_type))
            .collect();
        let scope = Scope {
            fields: plan.fields().to_vec(),
        };
        let mut keys = Vec::new();
        for ob in order_by {
            let descending = matches!(ob.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_first = ob.options.nulls_first.unwrap_or(descending);
            let expr = match self.order_key_output_index(&ob.expr, &names, &exprs)? {
                Some(i) => exprs[i].clone(),
                None => self.bind_expr(&ob.expr, &scope, None)?,
            };
            keys.push(SortKey {
                expr,
                descending,
                nulls_first,
            });
        }
        Ok(Plan::Sort {
            input: Box::new(plan),
            keys,
        })
    }

    fn order_key_output_index(
        &mut self,
        e: &ast::Expr,
        names: &[String],
        exprs: &[Expr],
    ) -> DbResult<Option<usize>> {
        if let ast::Expr::Value(v) = e {
            if let ast::Value::Number(n, _) = &v.value {
                let pos: usize = n
                    .parse()
                    .map_err(|_| DbError::syntax("non-integer constant in ORDER BY"))?;
                if pos == 0 || pos > exprs.len() {
                    return Err(DbError::new(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        format!("ORDER BY position {pos} is not in select list"),
                    ));
                }
                return Ok(Some(pos - 1));
            }
        }
        if let ast::Expr::Identifier(id) = e {
            let name = ident_name(id);
            let hits: Vec<usize> = names
                .iter()
                .enumerate()
                .filter(|(_, n)| **n == name)
                .map(|(i, _)| i)
                .collect();
            if hits.len() == 1 {
                return Ok(Some(hits[0]));
            }
            if hits.len() > 1 {
                return Err(DbError::new(
                    sqlstate::AMBIGUOUS_COLUMN,
                    format!("ORDER BY \"{name}\" is ambiguous"),
                ));
            }
        }
        Ok(None)
    }

    fn bind_group_key(
        &mut self,
        g: &ast::Expr,
        scope: &Scope,
        items: &[(SelectSource, String)],
    ) -> DbResult<Expr> {
        // GROUP BY 1 and GROUP BY <output alias> refer to the select list, as in PostgreSQL.
        if let ast::Expr::Value(v) = g {
            if let ast::Value::Number(n, _) = &v.value {
                let pos: usize = n.parse().unwrap_or(0);
                let (src, _) = items.get(pos.wrapping_sub(1)).ok_or_else(|| {
                    DbError::new(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        format!("GROUP BY position {pos} is not in select list"),
                    )
                })?;
                return match src {
                    SelectSource::Ast(a) => self.bind_expr(a, scope, None),
                    SelectSource::Column(i) => Ok(Expr::Column(*i, scope.fields[*i].data_type)),
                };
            }
        }
        if let ast::Expr::Identifier(id) = g {
            let name = ident_name(id);
            if find_unique(&scope.fields, None, &name)?.is_none() {
                if let Some((SelectSource::Ast(a), _)) = items.iter().find(|(_, n)| *n == name) {
                    return self.bind_expr(a, scope, None);
                }
            }
        }
        self.bind_expr(g, scope, None)
    }

    fn column_in_agg(
        &mut self,
        i: usize,
        scope: &Scope,
        agg: Option<&AggContext>,
    ) -> DbResult<Expr> {
        let f = &scope.fields[i];
        let e = Expr::Column(i, f.data_type);
        match agg {
            None => Ok(e),
            Some(agg) => match agg.group_exprs.iter().position(|g| *g == e) {
                Some(pos) => Ok(Expr::Column(pos, f.data_type)),
                None => Err(grouping_error(f)),
            },
        }
    }

    fn expand_select_items(
        &mut self,
        items: &[ast::SelectItem],
        scope: &Scope,
    ) -> DbResult<Vec<(SelectSource, String)>> {
        let mut out = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::UnnamedExpr(e) => {
                    out.push((SelectSource::Ast(Box::new(e.clone())), output_name(e)))
                }
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    out.push((SelectSource::Ast(Box::new(expr.clone())), ident_name(alias)))
                }
                ast::SelectItem::Wildcard(_) => {
                    if scope.fields.is_empty() {
                        return Err(DbError::syntax(
                            "SELECT * with no tables specified is not valid",
                        ));
                    }
                    for (i, f) in scope.fields.iter().enumerate() {
                        if !f.hidden {
                            out.push((SelectSource::Column(i), f.name.clone()));
                        }
                    }
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let name = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name_parts(n),
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => vec![e.to_string()],
                    };
                    let qual = name.last().cloned().unwrap_or_default();
                    let mut any = false;
                    for (i, f) in scope.fields.iter().enumerate() {
                        if f.qualifier.as_deref() == Some(qual.as_str()) {
                            out.push((SelectSource::Column(i), f.name.clone()));
                            any = true;
                        }
                    }
                    if !any {
                        return Err(DbError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("missing FROM-clause entry for table \"{qual}\""),
                        ));
                    }
                }
                other => {
                    return Err(DbError::unsupported(format!(
                        "select item not supported: {other}"
                    )))
                }
            }
        }
        Ok(out)
    }

    // ---------------------------------------------------------------- expressions

    /// Casts `e` to `target` where PostgreSQL would coerce implicitly; literals
    /// and untyped parameters take the type directly.
    pub fn coerce(&mut self, e: Expr, target: DataType, context: &str) -> DbResult<Expr> {
        let from = e.data_type();
        if from == target {
            return Ok(e);
        }
        match e {
            Expr::Param(i, DataType::Unknown) => {
                if let Some(slot) = self.params.get_mut(i) {
                    *slot = target;
                }
                return Ok(Expr::Param(i, target));
            }
            Expr::Literal(Datum::Null, _) => return Ok(Expr::Literal(Datum::Null, target)),
            Expr::Literal(Datum::Bytes(ref b), DataType::Unknown)
                if target != DataType::Unknown =>
            {
                let s = String::from_utf8_lossy(b).into_owned();
                let v = parse_text(target, &s, &self.eval.format)?;
                return Ok(Expr::Literal(v, target));
            }
            _ => {}
        }
        if from.same_family(target)
            && !matches!(
                target,
                DataType::Varchar(Some(_)) | DataType::Bpchar(Some(_))
            )
        {
            return Ok(Expr::Cast {
                expr: Box::new(e),
                to: target,
            });
        }
        // Also the relabelling a kernel signature asks for (name as text, oid as bigint).
        if kernels::can_coerce(from, target, false)
            || kernels::same_representation(from, target)
        {
            return Ok(Expr::Cast {
                expr: Box::new(e),
                to: target,
            });
        }
        Err(DbError::datatype_mismatch(format!(
            "argument of {context} must be type {}, not type {}",
            target.name(),
            from.name()
        )))
    }

    /// Casts for an INSERT/UPDATE target column (assignment rules).
    pub fn coerce_assignment(&mut self, e: Expr, target: DataType, column: &str) -> DbResult<Expr> {
        let from = e.data_type();
        if from == target {
            return Ok(e);
        }
        if matches!(
            e,
            Expr::Param(_, DataType::Unknown) | Expr::Literal(Datum::Null, _)
        ) || matches!(e, Expr::Literal(_, DataType::Unknown))
        {
            return self.coerce(e, target, column);
        }
        if kernels::can_coerce(from, target, true) {
            return Ok(Expr::Cast {
                expr: Box::new(e),
                to: target,
            });
        }
        Err(DbError::datatype_mismatch(format!(
            "column \"{column}\" is of type {} but expression is of type {}",
            target.name(),
            from.name()
        ))
        .with_hint("You will need to rewrite or cast the expression."))
    }

    pub fn bind_binary(&mut self, op: BinaryOp, left: Expr, right: Expr) -> DbResult<Expr> {
        let sig = kernels::resolve_binary(op, left.data_type(), right.data_type())?;
        let left = self.coerce(left, sig.left, "operator")?;
        let right = self.coerce(right, sig.right, "operator")?;
        Ok(Expr::Binary {
            sig,
            left: Box::new(left),
            right: Box::new(right),
        })
    }

    /// `l op r` for an operator implemented as a function; its errors name the operator.
    fn bind_operator_function(&mut self, name: &str, op: &str, l: Expr, r: Expr) -> DbResult<Expr> {
        let (lt, rt) = (l.data_type(), r.data_type());
        self.bind_function_call(name, vec![l, r]).map_err(|e| {
            if e.code == sqlstate::UNDEFINED_FUNCTION {
                DbError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("operator does not exist: {} {op} {}", lt.name(), rt.name()),
                )
            } else {
                e
            }
        })
    }

    fn bind_function_call(&mut self, name: &str, args: Vec<Expr>) -> DbResult<Expr> {
        let types: Vec<DataType> = args.iter().map(|a| a.data_type()).collect();
        let sig = kernels::resolve_function(name, &types)?;
        let mut bound = Vec::with_capacity(args.len());
        for (a, t) in args.into_iter().zip(sig.args.iter()) {
            bound.push(self.coerce(a, *t, name)?);
        }
        Ok(Expr::Func {
            sig: Arc::new(sig),
            args: bound,
        })
    }

    fn resolve_column(&mut self, parts: &[String], scope: &Scope) -> DbResult<Expr> {
        let (qual, name) = match parts {
            [n] => (None, n.as_str()),
            [q, n] => (Some(q.as_str()), n.as_str()),
            [_, q, n] | [_, _, q, n] => (Some(q.as_str()), n.as_str()),
            _ => {
                return Err(DbError::syntax(format!(
                    "improper qualified name: {}",
                    parts.join(".")
                )))
            }
        };
        if let Some(i) = find_unique(&scope.fields, qual, name)? {
            return Ok(Expr::Column(i, scope.fields[i].data_type));
        }
        // Correlated reference: search enclosing scopes, innermost first.
        for level in 1..=self.outer.len() {
            let s = &self.outer[self.outer.len() - level];
            if let Some(i) = find_unique(&s.fields, qual, name)? {
                let t = s.fields[i].data_type;
                let n = self.correlated_depths.len();
                for d in self.correlated_depths[n.saturating_sub(level)..].iter_mut() {
                    *d = true;
                }
                return Ok(Expr::Outer {
                    level,
                    index: i,
                    data_type: t,
                });
            }
        }
        if let Some(q) = qual {
            let known = scope
                .fields
                .iter()
                .any(|f| f.qualifier.as_deref() == Some(q))
                || self
                    .outer
                    .iter()
                    .any(|s| s.fields.iter().any(|f| f.qualifier.as_deref() == Some(q)));
            if !known {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ));
            }
            return Err(DbError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column {q}.{name} does not exist"),
            ));
        }
        Err(undefined_column(name))
    }

    fn bind_subquery(
        &mut self,
        query: &ast::Query,
        scope: &Scope,
        kind: SubqueryKind,
        left: Option<Expr>,
    ) -> DbResult<Expr> {
        self.outer.push(scope.clone());
        self.correlated_depths.push(false);
        let plan = self.bind_query(query);
        self.outer.pop();
        let correlated = self.correlated_depths.pop().unwrap_or(false);
        let plan = plan?;
        let id = self.next_subquery_id;
        self.next_subquery_id += 1;
        let fields = plan.fields();
        let (data_type, eq, left) = match kind {
            SubqueryKind::Scalar => {
                if fields.len() != 1 {
                    return Err(DbError::syntax("subquery must return only one column"));
                }
                (fields[0].data_type, None, None)
            }
            SubqueryKind::Exists => (DataType::Bool, None, None),
            SubqueryKind::Array => {
                if fields.len() != 1 {
                    return Err(DbError::syntax("subquery must return only one column"));
                }
                let t = fields[0].data_type;
                match crate::types::array::ArrayElem::of(t).filter(|_| !matches!(t, DataType::Array(_))) {
                    Some(e) => (DataType::Array(e), None, None),
                    None => return Err(DbError::unsupported(format!("ARRAY(subquery) of {}", t.name()))),
                }
            }
            SubqueryKind::In { .. } => {
                if fields.len() != 1 {
                    return Err(DbError::syntax("subquery has too many columns"));
                }
                let left = left.ok_or_else(|| DbError::internal("IN without left operand"))?;
                let sig =
                    kernels::resolve_binary(BinaryOp::Eq, left.data_type(), fields[0].data_type)?;
                let left = self.coerce(left, sig.left, "IN")?;
                (DataType::Bool, Some(sig), Some(Box::new(left)))
            }
        };
        Ok(Expr::Subquery(Subquery {
            id,
            kind,
            plan: Arc::new(plan),
            correlated,
            left,
            eq,
            data_type,
        }))
    }

    fn bind_expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        mut agg: Option<&mut AggContext>,
    ) -> DbResult<Expr> {
        if let ast::Expr::Function(f) = e {
            if f.over.is_some() {
                return self.bind_window_call(f, scope, agg);
            }
        }
        if let Some(ctx) = agg.as_deref_mut() {
            if let Some(bound) = self.bind_in_aggregate(e, scope, ctx)? {
                return Ok(bound);
            }
        }
        use ast::Expr as A;
        match e {
            A::Identifier(id) => match self.resolve_column(&[ident_name(id)], scope) {
                // CURRENT_ROLE, which sqlparser reads as a name: a column of that name wins.
                Err(e)
                    if id.quote_style.is_none()
                        && id.value.eq_ignore_ascii_case("current_role")
                        && e.code == sqlstate::UNDEFINED_COLUMN =>
                {
                    Ok(Expr::Literal(Datum::text(self.user.clone()), DataType::Text))
                }
                other => other,
            },
            A::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(ident_name).collect();
                self.resolve_column(&parts, scope)
            }
            A::Value(v) => self.bind_value(&v.value),
            A::Nested(inner) => self.bind_expr(inner, scope, agg),
            A::TypedString(ts) => {
                let t = bind_data_type(&ts.data_type)?;
                let lit = self.bind_value(&ts.value.value)?;
                self.cast(lit, t)
            }
            A::Cast {
                expr, data_type, ..
            } => {
                // `ARRAY[]::int[]`: the cast gives the empty array its type
                let inner = match expr.as_ref() {
                    A::Array(array) if array.elem.is_empty() => {
                        Expr::Literal(Datum::text("{}"), DataType::Unknown)
                    }
                    _ => self.bind_expr(expr, scope, agg)?,
                };
                if let Some(kind) = object_identifiers::ObjectIdentifier::of(data_type) {
                    return self.bind_object_identifier_cast(inner, kind);
                }
                let (t, typmod) = bind_data_type_mod(data_type)?;
                let cast = self.cast(inner, t)?;
                Ok(match typmod {
                    Some((precision, scale)) => Expr::NumericTypmod {
                        expr: Box::new(cast),
                        precision,
                        scale,
                    },
                    None => cast,
                })
            }
            A::BinaryOp { left, op, right } => {
                let l = self.bind_expr(left, scope, agg.as_deref_mut())?;
                let r = self.bind_expr(right, scope, agg)?;
                let spelled;
                let op = match op {
                    ast::BinaryOperator::PGCustomBinaryOperator(path) => {
                        spelled = qualified_operator(path)?;
                        &spelled
                    }
                    other => other,
                };
                // Operators that are functions of their operands' types.
                let function = match op {
                    ast::BinaryOperator::PGExp => Some("power"),
                    ast::BinaryOperator::BitwiseAnd => Some("&"),
                    ast::BinaryOperator::BitwiseOr => Some("|"),
                    ast::BinaryOperator::PGBitwiseXor => Some("#"),
                    ast::BinaryOperator::PGBitwiseShiftLeft => Some("<<"),
                    ast::BinaryOperator::PGBitwiseShiftRight => Some(">>"),
                    _ => None,
                };
                if let Some(name) = function {
                    return self.bind_operator_function(name, &op.to_string(), l, r);
                }
                let op = binary_op(op)?;
                if op == BinaryOp::Concat
                    && [&l, &r].iter().any(|e| matches!(e.data_type(), DataType::Array(_)))
                {
                    return self.bind_array_concat("||", l, r);
                }
                self.bind_binary(op, l, r)
            }
            A::UnaryOp { op, expr } => {
                // In PostgreSQL a sign binds tighter than `^`: -3 ^ 2 is (-3) ^ 2.
                if let (ast::UnaryOperator::Minus | ast::UnaryOperator::Plus, A::BinaryOp { op: ast::BinaryOperator::PGExp, .. }) =
                    (op, expr.as_ref())
                {
                    return self.bind_expr(&sign_into_power(*op, expr), scope, agg);
                }
                // Fold `-<number>` so that -2147483648 is an integer literal.
                if let (ast::UnaryOperator::Minus, A::Value(v)) = (op, expr.as_ref()) {
                    if let ast::Value::Number(n, _) = &v.value {
                        return number_literal(&format!("-{n}"));
                    }
                }
                let inner = self.bind_expr(expr, scope, agg)?;
                let op = match op {
                    ast::UnaryOperator::Minus => UnaryOp::Neg,
                    ast::UnaryOperator::Plus => UnaryOp::Plus,
                    ast::UnaryOperator::Not => UnaryOp::Not,
                    other => {
                        return Err(DbError::unsupported(format!(
                            "operator not supported: {other}"
                        )))
                    }
                };
                let (arg_type, result) = kernels::resolve_unary(op, inner.data_type())?;
                let inner = self.coerce(inner, arg_type, "NOT")?;
                Ok(Expr::Unary {
                    op,
                    arg_type,
                    result,
                    arg: Box::new(inner),
                })
            }
            A::IsNull(x) | A::IsNotNull(x) => {
                let inner = self.bind_expr(x, scope, agg)?;
                Ok(Expr::IsNull {
                    expr: Box::new(inner),
                    negated: matches!(e, A::IsNotNull(_)),
                })
            }
            A::IsTrue(x)
            | A::IsNotTrue(x)
            | A::IsFalse(x)
            | A::IsNotFalse(x)
            | A::IsUnknown(x)
            | A::IsNotUnknown(x) => {
                let inner = self.bind_expr(x, scope, agg)?;
                let inner = self.coerce(inner, DataType::Bool, "IS TRUE")?;
                Ok(match e {
                    A::IsTrue(_) => Expr::IsBool {
                        expr: Box::new(inner),
                        value: true,
                        negated: false,
                    },
                    A::IsNotTrue(_) => Expr::IsBool {
                        expr: Box::new(inner),
                        value: true,
                        negated: true,
                    },
                    A::IsFalse(_) => Expr::IsBool {
                        expr: Box::new(inner),
                        value: false,
                        negated: false,
                    },
                    A::IsNotFalse(_) => Expr::IsBool {
                        expr: Box::new(inner),
                        value: false,
                        negated: true,
                    },
                    A::IsUnknown(_) => Expr::IsNull {
                        expr: Box::new(inner),
                        negated: false,
                    },
                    _ => Expr::IsNull {
                        expr: Box::new(inner),
                        negated: true,
                    },
                })
            }
            A::IsDistinctFrom(a, b) | A::IsNotDistinctFrom(a, b) => {
                let l = self.bind_expr(a, scope, agg.as_deref_mut())?;
                let r = self.bind_expr(b, scope, agg)?;
                let sig = kernels::resolve_binary(BinaryOp::Eq, l.data_type(), r.data_type())?;
                let l = self.coerce(l, sig.left, "IS DISTINCT FROM")?;
                let r = self.coerce(r, sig.right, "IS DISTINCT FROM")?;
                Ok(Expr::IsDistinct {
                    left: Box::new(l),
                    right: Box::new(r),
                    eq: sig,
                    negated: matches!(e, A::IsNotDistinctFrom(..)),
                })
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind_expr(expr, scope, agg.as_deref_mut())?;
                let lo = self.bind_expr(low, scope, agg.as_deref_mut())?;
                let hi = self.bind_expr(high, scope, agg)?;
                let ge = self.bind_binary(BinaryOp::GtEq, x.clone(), lo)?;
                let le = self.bind_binary(BinaryOp::LtEq, x, hi)?;
                let both = self.bind_binary(BinaryOp::And, ge, le)?;
                if *negated {
                    Ok(Expr::Unary {
                        op: UnaryOp::Not,
                        arg_type: DataType::Bool,
                        result: DataType::Bool,
                        arg: Box::new(both),
                    })
                } else {
                    Ok(both)
                }
            }
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            }
            | A::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let x = self.bind_expr(expr, scope, agg.as_deref_mut())?;
                let mut p = self.bind_expr(pattern, scope, agg.as_deref_mut())?;
                if let Some(esc) = escape_char {
                    // `x LIKE p ESCAPE e` is `x LIKE like_escape(p, e)`, as in PostgreSQL.
                    let esc = self.bind_expr(esc, scope, agg)?;
                    p = self.bind_function_call("like_escape", vec![p, esc])?;
                }
                let op = match (matches!(e, A::ILike { .. }), negated) {
                    (false, false) => BinaryOp::Like,
                    (false, true) => BinaryOp::NotLike,
                    (true, false) => BinaryOp::ILike,
                    (true, true) => BinaryOp::NotILike,
                };
                self.bind_binary(op, x, p)
            }
            A::Tuple(items) => {
                let mut fields = Vec::with_capacity(items.len());
                for e in items {
                    fields.push(self.bind_expr(e, scope, agg.as_deref_mut())?);
                }
                self.bind_row_constructor(fields)
            }
            A::Array(ast::Array { elem, .. }) => {
                let mut elems = Vec::with_capacity(elem.len());
                for e in elem {
                    elems.push(self.bind_expr(e, scope, agg.as_deref_mut())?);
                }
                self.bind_array_constructor(elems)
            }
            A::CompoundFieldAccess { root, access_chain } => {
                // `t.col[i]`, `schema.t.col[i]`: the names before the first
                // subscript make up the column reference.
                let names = access_chain
                    .iter()
                    .take_while(|a| matches!(a, ast::AccessExpr::Dot(ast::Expr::Identifier(_))))
                    .count();
                let array = if names == 0 {
                    self.bind_expr(root, scope, agg.as_deref_mut())?
                } else {
                    let mut ids = match root.as_ref() {
                        A::Identifier(id) => vec![id.clone()],
                        A::CompoundIdentifier(ids) => ids.clone(),
                        other => return Err(DbError::unsupported(format!("field selection from {other}"))),
                    };
                    for a in &access_chain[..names] {
                        if let ast::AccessExpr::Dot(A::Identifier(id)) = a {
                            ids.push(id.clone());
                        }
                    }
                    self.bind_expr(&A::CompoundIdentifier(ids), scope, agg.as_deref_mut())?
                };
                let mut subscripts = Vec::new();
                for a in &access_chain[names..] {
                    let bound = match a {
                        ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => {
                            ArraySubscript::Index(self.bind_expr(index, scope, agg.as_deref_mut())?)
                        }
                        ast::AccessExpr::Subscript(ast::Subscript::Slice {
                            lower_bound,
                            upper_bound,
                            stride: None,
                        }) => {
                            let mut bound = |e: &Option<ast::Expr>| {
                                e.as_ref().map(|e| self.bind_expr(e, scope, agg.as_deref_mut())).transpose()
                            };
                            ArraySubscript::Slice(bound(lower_bound)?, bound(upper_bound)?)
                        }
                        // PostgreSQL's grammar has no stride (`a[1:9:2]`).
                        ast::AccessExpr::Subscript(ast::Subscript::Slice { .. }) => {
                            return Err(DbError::syntax("syntax error at or near \":\""))
                        }
                        // `a[1].x`: no element or slice is a composite.
                        ast::AccessExpr::Dot(field) => {
                            let subscripted = self.bind_array_subscript(array, subscripts)?;
                            return Err(DbError::new(
                                sqlstate::WRONG_OBJECT_TYPE,
                                format!(
                                    "column notation .{field} applied to type {}, which is not a composite type",
                                    subscripted.data_type().name()
                                ),
                            ));
                        }
                    };
                    subscripts.push(bound);
                }
                self.bind_array_subscript(array, subscripts)
            }
            A::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char,
            } => {
                // `x SIMILAR TO p [ESCAPE e]` is `x ~ similar_to_escape(p [, e])`.
                let x = self.bind_expr(expr, scope, agg.as_deref_mut())?;
                let mut args = vec![self.bind_expr(pattern, scope, agg.as_deref_mut())?];
                if let Some(esc) = escape_char {
                    args.push(self.bind_expr(esc, scope, agg)?);
                }
                let regex = self.bind_function_call("similar_to_escape", args)?;
                let op = if *negated { BinaryOp::RegexNotMatch } else { BinaryOp::RegexMatch };
                self.bind_binary(op, x, regex)
            }
            A::In {
                expr,
                target,
                negated,
                ..
            } => match target {
                ast::InTarget::List(list) => {
                    let x = self.bind_expr(expr, scope, agg.as_deref_mut())?;
                    let mut items = Vec::new();
                    for item in list {
                        items.push(self.bind_expr(item, scope, agg.as_deref_mut())?);
                    }
                    let mut types = vec![x.data_type()];
                    types.extend(items.iter().map(|i| i.data_type()));
                    let mut t = kernels::common_type(&types, "IN")?;
                    if t == DataType::Unknown {
                        t = DataType::Text;
                    }
                    let sig = kernels::resolve_binary(BinaryOp::Eq, t, t)?;
                    let x = self.coerce(x, sig.left, "IN")?;
                    let items = items
                        .into_iter()
                        .map(|i| self.coerce(i, sig.right, "IN"))
                        .collect::<DbResult<Vec<_>>>()?;
                    Ok(Expr::InList {
                        expr: Box::new(x),
                        list: items,
                        eq: sig,
                        negated: *negated,
                    })
                }
                ast::InTarget::Subquery(q) => {
                    let x = self.bind_expr(expr, scope, agg)?;
                    self.bind_subquery(q, scope, SubqueryKind::In { negated: *negated }, Some(x))
                }
                _ => Err(DbError::unsupported("IN UNNEST")),
            },
            A::Exists { subquery, negated } => {
                let ex = self.bind_subquery(subquery, scope, SubqueryKind::Exists, None)?;
                if *negated {
                    Ok(Expr::Unary {
                        op: UnaryOp::Not,
                        arg_type: DataType::Bool,
                        result: DataType::Bool,
                        arg: Box::new(ex),
                    })
                } else {
                    Ok(ex)
                }
            }
            A::Subquery(q) => self.bind_subquery(q, scope, SubqueryKind::Scalar, None),
            A::AnyOp { left, compare_op, right, .. } => {
                self.bind_quantified(left, compare_op, right, false, scope, agg)
            }
            A::AllOp { left, compare_op, right } => {
                self.bind_quantified(left, compare_op, right, true, scope, agg)
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = match operand {
                    Some(o) => Some(self.bind_expr(o, scope, agg.as_deref_mut())?),
                    None => None,
                };
                let mut whens = Vec::new();
                for cw in conditions {
                    let c = self.bind_expr(&cw.condition, scope, agg.as_deref_mut())?;
                    let c = match &operand {
                        Some(o) => self.bind_binary(BinaryOp::Eq, o.clone(), c)?,
                        None => self.coerce(c, DataType::Bool, "CASE/WHEN")?,
                    };
                    let r = self.bind_expr(&cw.result, scope, agg.as_deref_mut())?;
                    whens.push((c, r));
                }
                let otherwise = match else_result {
                    Some(x) => self.bind_expr(x, scope, agg)?,
                    None => Expr::null(),
                };
                // PostgreSQL considers the ELSE result first (its error names that type first).
                let mut types = vec![otherwise.data_type()];
                types.extend(whens.iter().map(|(_, r)| r.data_type()));
                let mut t = kernels::common_type(&types, "CASE")?;
                if t == DataType::Unknown {
                    t = DataType::Text;
                }
                let whens = whens
                    .into_iter()
                    .map(|(c, r)| Ok((c, self.coerce(r, t, "CASE")?)))
                    .collect::<DbResult<Vec<_>>>()?;
                let otherwise = self.coerce(otherwise, t, "CASE")?;
                Ok(Expr::Case {
                    whens,
                    otherwise: Box::new(otherwise),
                    data_type: t,
                })
            }
            A::Function(f) => self.bind_function(f, scope, agg),
            A::Extract { field, expr, .. } => {
                let x = self.bind_expr(expr, scope, agg)?;
                let field = Expr::Literal(
                    Datum::text(field.to_string().to_lowercase()),
                    DataType::Text,
                );
                self.bind_function_call("extract", vec![field, x])
            }
            A::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                // `x AT TIME ZONE z` is PostgreSQL's timezone(z, x)
                let zone = self.bind_expr(time_zone, scope, agg.as_deref_mut())?;
                let x = self.bind_expr(timestamp, scope, agg)?;
                self.bind_function_call("timezone", vec![zone, x])
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, scope, agg.as_deref_mut())?];
                args.push(match substring_from {
                    Some(f) => self.bind_expr(f, scope, agg.as_deref_mut())?,
                    None => Expr::Literal(Datum::Int32(1), DataType::Int32),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind_expr(f, scope, agg)?);
                }
                self.bind_function_call("substr", args)
            }
            A::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, scope, agg.as_deref_mut())?];
                if let Some(w) = trim_what {
                    args.push(self.bind_expr(w, scope, agg)?);
                }
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    _ => "btrim",
                };
                self.bind_function_call(name, args)
            }
            A::Position { expr, r#in } => {
                let needle = self.bind_expr(expr, scope, agg.as_deref_mut())?;
                let hay = self.bind_expr(r#in, scope, agg)?;
                self.bind_function_call("strpos", vec![hay, needle])
            }
            A::Ceil { expr, .. } | A::Floor { expr, .. } => {
                let x = self.bind_expr(expr, scope, agg)?;
                self.bind_function_call(
                    if matches!(e, A::Ceil { .. }) {
                        "ceil"
                    } else {
                        "floor"
                    },
                    vec![x],
                )
            }
            A::Interval(iv) => {
                let mut text = match iv.value.as_ref() {
                    A::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(s) | ast::Value::Number(s, _) => s.clone(),
                        other => other.to_string(),
                    },
                    other => return Err(DbError::unsupported(format!("INTERVAL {other}"))),
                };
                if let Some(f) = &iv.leading_field {
                    text = format!("{text} {f}");
                }
                let v = parse_text(DataType::Interval, &text, &self.eval.format)?;
                Ok(Expr::Literal(v, DataType::Interval))
            }
            A::Collate { expr, .. } => self.bind_expr(expr, scope, agg),
            other => Err(DbError::unsupported(format!(
                "expression not supported: {other}"
            ))),
        }
    }

    /// In an aggregate query: aggregates become columns of the Aggregate node,
    /// expressions equal to a GROUP BY key become that key's column, and bare
    /// columns that are neither are a grouping error. `None` = recurse normally.
    fn bind_in_aggregate(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        ctx: &mut AggContext,
    ) -> DbResult<Option<Expr>> {
        if let ast::Expr::Function(f) = e {
            let name = object_name_parts(&f.name).pop().unwrap_or_default();
            if is_aggregate_name(&name) {
                let call = self.bind_aggregate(&name, f, scope)?;
                let t = call.result_type;
                let pos = match ctx.aggs.iter().position(|a| *a == call) {
                    Some(p) => p,
                    None => {
                        ctx.aggs.push(call);
                        ctx.aggs.len() - 1
                    }
                };
                return Ok(Some(Expr::Column(ctx.group_exprs.len() + pos, t)));
            }
        }
        if matches!(e, ast::Expr::Subquery(_) | ast::Expr::Exists { .. }) || contains_aggregate(e) {
            return Ok(None);
        }
        if matches!(
            e,
            ast::Expr::Value(_) | ast::Expr::TypedString(_) | ast::Expr::Interval(_)
        ) {
            return Ok(None);
        }
        // A window or set-returning call inside `e` must bind against the
        // aggregate, not the raw input: such a try is undone.
        let calls = self.select_call_counts();
        let speculative = self.bind_expr(e, scope, None);
        if self.select_call_counts() != calls {
            self.truncate_select_calls(calls);
            return Ok(None);
        }
        let bound = match speculative {
            Ok(b) => b,
            Err(err)
                if matches!(
                    e,
                    ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
                ) =>
            {
                return Err(err)
            }
            Err(_) => return Ok(None),
        };
        if let Some(pos) = ctx.group_exprs.iter().position(|g| *g == bound) {
            return Ok(Some(Expr::Column(pos, bound.data_type())));
        }
        match bound {
            Expr::Column(i, _) if i < scope.fields.len() => Err(grouping_error(&scope.fields[i])),
            Expr::Outer { .. } => Ok(Some(bound)),
            _ => Ok(None),
        }
    }

    fn bind_aggregate(
        &mut self,
        name: &str,
        f: &ast::Function,
        scope: &Scope,
    ) -> DbResult<AggCall> {
        let (args, distinct) = match &f.args {
            ast::FunctionArguments::List(list) => (
                list.args.clone(),
                matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                ),
            ),
            ast::FunctionArguments::None => (vec![], false),
            ast::FunctionArguments::Subquery(_) => {
                return Err(DbError::unsupported("aggregate over subquery"))
            }
        };
        let filter = match &f.filter {
            Some(x) => {
                let b = self.bind_expr(x, scope, None)?;
                Some(self.coerce(b, DataType::Bool, "FILTER")?)
            }
            None => None,
        };
        if f.over.is_some() {
            return Err(DbError::unsupported(
                "window functions are not supported yet",
            ));
        }
        let star = matches!(
            args.as_slice(),
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)]
        );
        if name == "count" && (star || args.is_empty()) {
            return Ok(AggCall {
                func: AggFunc::CountStar,
                arg: None,
                distinct: false,
                filter,
                result_type: DataType::Int64,
                order_by: vec![],
                constant_arg: None,
            });
        }
        let order_by_asts: Vec<ast::OrderByExpr> = match &f.args {
            ast::FunctionArguments::List(list) => list
                .clauses
                .iter()
                .filter_map(|c| match c {
                    ast::FunctionArgumentClause::OrderBy(o) => Some(o.clone()),
                    _ => None,
                })
                .flatten()
                .collect(),
            _ => vec![],
        };
        let mut order_by = Vec::new();
        for ob in &order_by_asts {
            let descending = matches!(ob.options.sort, Some(ast::OrderBySort::Desc));
            let e = self.bind_expr(&ob.expr, scope, None)?;
            order_by.push(SortKey {
                expr: e,
                descending,
                nulls_first: ob.options.nulls_first.unwrap_or(descending),
            });
        }
        match name {
            "string_agg" => return self.bind_string_agg(&args, distinct, filter, order_by, scope),
            "array_agg" => {
                let [value] = args.as_slice() else {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function array_agg with {} arguments does not exist", args.len()),
                    ));
                };
                let mut value = self.bind_aggregate_arg(value, scope, "array_agg")?;
                if value.data_type() == DataType::Unknown {
                    value = self.coerce(value, DataType::Text, "array_agg")?;
                }
                let Some(elem) = crate::types::array::ArrayElem::of(value.data_type()).filter(|_| !matches!(value.data_type(), DataType::Array(_))) else {
                    return Err(DbError::unsupported(format!("array_agg of {}", value.data_type().name())));
                };
                return Ok(AggCall {
                    func: AggFunc::ArrayAgg,
                    arg: Some(value),
                    distinct,
                    filter,
                    result_type: DataType::Array(elem),
                    order_by,
                    constant_arg: None,
                });
            }
            "percentile_cont" | "percentile_disc" => {
                return self.bind_percentile(name, &args, &f.within_group, filter, scope)
            }
            // TimescaleDB's first(value, time) / last(value, time): the value of
            // the row with the earliest (latest) non-NULL time; the argument is
            // the record (time, value) so one state carries both.
            "first" | "last" => {
                let [value, time] = args.as_slice() else {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function {name} with {} arguments does not exist", args.len()),
                    ));
                };
                let value = self.bind_aggregate_arg(value, scope, name)?;
                let value = if value.data_type() == DataType::Unknown {
                    self.coerce(value, DataType::Text, name)?
                } else {
                    value
                };
                let time = self.bind_aggregate_arg(time, scope, name)?;
                let result_type = value.data_type();
                return Ok(AggCall {
                    func: if name == "first" { AggFunc::First } else { AggFunc::Last },
                    arg: Some(self.bind_row_constructor(vec![time, value])?),
                    distinct,
                    filter,
                    result_type,
                    order_by,
                    constant_arg: None,
                });
            }
            _ => {}
        }
        let arg = match args.as_slice() {
            [a] => self.bind_aggregate_arg(a, scope, name)?,
            _ => {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!(
                        "function {name} with {} arguments does not exist",
                        args.len()
                    ),
                ))
            }
        };
        let mut arg = arg;
        if arg.data_type() == DataType::Unknown {
            arg = self.coerce(arg, DataType::Text, name)?;
        }
        let t = arg.data_type();
        let (func, result) = aggregate_signature(name, t)?;
        Ok(AggCall {
            func,
            arg: Some(arg),
            distinct,
            filter,
            result_type: result,
            order_by,
            constant_arg: None,
        })
    }

    /// An aggregate's argument: no aggregates or window calls inside.
    fn bind_aggregate_arg(&mut self, arg: &ast::FunctionArg, scope: &Scope, name: &str) -> DbResult<Expr> {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = arg else {
            return Err(DbError::unsupported(format!("this argument form in a call of {name}")));
        };
        if contains_aggregate(x) {
            return Err(DbError::new(
                sqlstate::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        let windows = self.windows_here();
        self.set_windows_here(WindowsHere::InAggregate);
        let bound = self.bind_expr(x, scope, None);
        self.set_windows_here(windows);
        bound
    }

    /// A constant argument as a literal (parameters stay, resolved at execution).
    fn constant_argument(&mut self, e: Expr, t: DataType, name: &str) -> DbResult<Expr> {
        let e = self.coerce(e, t, name)?;
        let mut columns = Vec::new();
        e.columns_used(&mut columns);
        if !columns.is_empty() || e.has_subquery() || matches!(e, Expr::Outer { .. }) {
            return Err(DbError::unsupported(format!("{name} with an argument that varies by row")));
        }
        let mut has_param = false;
        e.walk(&mut |x| has_param |= matches!(x, Expr::Param(..)));
        if has_param {
            return Ok(e);
        }
        let (d, t) = self.constant(&e)?;
        Ok(Expr::Literal(d, t))
    }

    fn bind_string_agg(
        &mut self,
        args: &[ast::FunctionArg],
        distinct: bool,
        filter: Option<Expr>,
        order_by: Vec<SortKey>,
        scope: &Scope,
    ) -> DbResult<AggCall> {
        let [value, delimiter] = args else {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function string_agg with {} arguments does not exist", args.len()),
            ));
        };
        let value = self.bind_aggregate_arg(value, scope, "string_agg")?;
        let t = match value.data_type() {
            DataType::Bytea => DataType::Bytea,
            DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) | DataType::Name | DataType::Unknown => {
                DataType::Text
            }
            other => {
                return Err(DbError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("function string_agg({}, text) does not exist", other.name()),
                ))
            }
        };
        let value = self.coerce(value, t, "string_agg")?;
        let delimiter = self.bind_aggregate_arg(delimiter, scope, "string_agg")?;
        let delimiter = self.coerce(delimiter, t, "string_agg")?;
        let mut columns = Vec::new();
        delimiter.columns_used(&mut columns);
        if columns.is_empty() && !delimiter.has_subquery() {
            let delimiter = self.constant_argument(delimiter, t, "string_agg")?;
            return Ok(AggCall {
                func: AggFunc::StringAgg,
                arg: Some(value),
                distinct,
                filter,
                result_type: t,
                order_by,
                constant_arg: Some(delimiter),
            });
        }
        if distinct {
            return Err(DbError::unsupported("string_agg(DISTINCT …) with a delimiter that varies by row"));
        }
        // A delimiter per row: each value travels with its row's delimiter as
        // a two-element array (value, delimiter), joined in arrival order.
        let pair = self.bind_array_constructor(vec![value, delimiter])?;
        Ok(AggCall {
            func: AggFunc::StringAgg,
            arg: Some(pair),
            distinct,
            filter,
            result_type: t,
            order_by,
            constant_arg: None,
        })
    }

    /// percentile_cont / percentile_disc(fraction) WITHIN GROUP (ORDER BY x).
    fn bind_percentile(
        &mut self,
        name: &str,
        args: &[ast::FunctionArg],
        within_group: &[ast::OrderByExpr],
        filter: Option<Expr>,
        scope: &Scope,
    ) -> DbResult<AggCall> {
        let ([fraction], [order]) = (args, within_group) else {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {name} needs one fraction and WITHIN GROUP (ORDER BY one expression)"),
            ));
        };
        let fraction = self.bind_aggregate_arg(fraction, scope, name)?;
        let fraction = self.constant_argument(fraction, DataType::Float64, name)?;
        if let Expr::Literal(d, _) = &fraction {
            if let Some(f) = d.as_f64() {
                if !(0.0..=1.0).contains(&f) {
                    return Err(DbError::new(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        format!("percentile value {f} is not between 0 and 1"),
                    ));
                }
            }
        }
        let descending = matches!(order.options.sort, Some(ast::OrderBySort::Desc));
        let windows = self.windows_here();
        self.set_windows_here(WindowsHere::InAggregate);
        let value = self.bind_expr(&order.expr, scope, None);
        self.set_windows_here(windows);
        let value = value?;
        let (func, value, result) = if name == "percentile_cont" {
            let v = match value.data_type() {
                DataType::Float64 | DataType::Float32 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Numeric | DataType::Unknown => {
                    self.coerce(value, DataType::Float64, name)?
                }
                other => {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function percentile_cont(double precision ORDER BY {}) does not exist", other.name()),
                    ))
                }
            };
            (AggFunc::PercentileCont { descending }, v, DataType::Float64)
        } else {
            let value = if value.data_type() == DataType::Unknown { self.coerce(value, DataType::Text, name)? } else { value };
            let t = value.data_type();
            (AggFunc::PercentileDisc { descending }, value, t)
        };
        Ok(AggCall {
            func,
            arg: Some(value),
            distinct: false,
            filter,
            result_type: result,
            order_by: vec![],
            constant_arg: Some(fraction),
        })
    }

    fn bind_function(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        mut agg: Option<&mut AggContext>,
    ) -> DbResult<Expr> {
        let parts = object_name_parts(&f.name);
        let name = parts.last().cloned().unwrap_or_default();
        if table_function::is_set_returning(&name) {
            return self.bind_select_list_srf(&name, f, scope, agg);
        }
        if let Some(e) = self.bind_sql_function_call(&parts, f, scope, agg.as_deref_mut())? {
            return Ok(e);
        }
        if is_aggregate_name(&name) {
            return Err(DbError::new(
                sqlstate::GROUPING_ERROR,
                format!("aggregate functions are not allowed in {}", self.clause),
            ));
        }
        let arg_asts: Vec<ast::FunctionArg> = match &f.args {
            ast::FunctionArguments::List(list) => list.args.clone(),
            ast::FunctionArguments::None => vec![],
            ast::FunctionArguments::Subquery(q) if name == "array" => {
                return self.bind_subquery(q, scope, SubqueryKind::Array, None);
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(DbError::unsupported("function over subquery"))
            }
        };
        let mut args = Vec::new();
        let mut named: Vec<(String, Expr)> = Vec::new();
        for a in &arg_asts {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                    args.push(self.bind_expr(x, scope, agg.as_deref_mut())?)
                }
                ast::FunctionArg::Named {
                    name: n,
                    arg: ast::FunctionArgExpr::Expr(x),
                    ..
                } if is_maintenance_function(&name) || name == "time_bucket_gapfill" || name == "make_interval" => {
                    named.push((ident_name(n), self.bind_expr(x, scope, agg.as_deref_mut())?))
                }
                ast::FunctionArg::ExprNamed {
                    name: ast::Expr::Identifier(n),
                    arg: ast::FunctionArgExpr::Expr(x),
                    ..
                } if is_maintenance_function(&name) || name == "time_bucket_gapfill" || name == "make_interval" => {
                    named.push((ident_name(n), self.bind_expr(x, scope, agg.as_deref_mut())?))
                }
                other => {
                    return Err(DbError::unsupported(format!(
                        "function argument not supported: {other}"
                    )))
                }
            }
        }
        if is_maintenance_function(&name) {
            return self.bind_effect(&name, args, named);
        }
        if name == "make_interval" {
            args = make_interval_args(args, std::mem::take(&mut named))?;
        }
        match name.as_str() {
            "time_bucket_gapfill" => return self.bind_time_bucket_gapfill(args, named),
            "locf" | "interpolate" if args.len() == 1 => {
                return self.bind_gapfill_fill(&name, args.remove(0))
            }
            "nextval" if args.len() == 1 => {
                let sequence = self.sequence_named(&args, "nextval")?;
                return Ok(Expr::NextVal(sequence));
            }
            "currval" if args.len() == 1 => {
                let sequence = self.sequence_named(&args, "currval")?;
                return Ok(Expr::CurrVal(sequence));
            }
            "lastval" if args.is_empty() => {
                let session = self.session_sequences.clone().unwrap_or_default();
                // Its sequence dropped since, lastval() is undefined again (as in PostgreSQL).
                let dropped = session.0.last_sequence().is_some_and(|oid| {
                    !self.db.schemas.values().any(|s| s.sequences.values().any(|q| q.oid == oid))
                });
                if dropped {
                    return Err(crate::catalog::lastval_undefined());
                }
                return Ok(Expr::LastVal(session));
            }
            "setval" if (2..=3).contains(&args.len()) => {
                let sequence = self.sequence_named(&args, "setval")?;
                let value = self.coerce(args[1].clone(), DataType::Int64, "setval")?;
                let mut rest = vec![value];
                if let Some(called) = args.get(2) {
                    rest.push(self.coerce(called.clone(), DataType::Bool, "setval")?);
                }
                return Ok(Expr::SetVal { sequence, args: rest });
            }
            // The argument's type, known when binding (PostgreSQL's regtype,
            // returned here as its name).
            "pg_typeof" if args.len() == 1 => {
                return Ok(Expr::Literal(
                    Datum::text(args[0].data_type().name()),
                    DataType::Text,
                ));
            }
            "version" if args.is_empty() => {
                return Ok(Expr::Literal(
                    Datum::text(crate::VERSION_STRING),
                    DataType::Text,
                ));
            }
            "pg_cancel_backend" | "pg_terminate_backend"
                if args.len() == 1 || (name == "pg_terminate_backend" && args.len() == 2) =>
            {
                return self.bind_backend_signal(&name, &args[0]);
            }
            "pg_backend_pid" if args.is_empty() => {
                return Ok(Expr::Literal(Datum::Int32(self.backend_pid), DataType::Int32));
            }
            "current_database" if args.is_empty() => {
                return Ok(Expr::Literal(
                    Datum::text(self.db.name.clone()),
                    DataType::Text,
                ));
            }
            "current_user" | "session_user" | "user" | "current_role" if args.is_empty() => {
                return Ok(Expr::Literal(
                    Datum::text(self.user.clone()),
                    DataType::Text,
                ));
            }
            "current_setting" if (1..=2).contains(&args.len()) => {
                return self.bind_current_setting(&args);
            }
            "set_config" if args.len() == 3 => return self.bind_set_config(args),
            "current_schemas" if args.len() == 1 => {
                let (implicit, _) = self.constant(&args[0])?;
                let mut schemas: Vec<Datum> = Vec::new();
                if implicit.as_bool() == Some(true) {
                    schemas.push(Datum::text("pg_catalog"));
                }
                schemas.extend(self.search_path.iter().map(|s| Datum::text(s.clone())));
                let value = crate::types::array::ArrayValue::of(schemas)
                    .encode(crate::types::array::ArrayElem::Text);
                return Ok(Expr::Literal(
                    Datum::Bytes(value),
                    DataType::Array(crate::types::array::ArrayElem::Text),
                ));
            }
            "parse_ident" if (1..=2).contains(&args.len()) => {
                let (text, _) = self.constant(&args[0])?;
                let Some(text) = text.as_str() else {
                    return Ok(Expr::Literal(
                        Datum::Null,
                        DataType::Array(crate::types::array::ArrayElem::Text),
                    ));
                };
                let parts = object_identifiers::split_qualified_name(text)
                    .into_iter()
                    .map(Datum::text)
                    .collect();
                let value = crate::types::array::ArrayValue::of(parts)
                    .encode(crate::types::array::ArrayElem::Text);
                return Ok(Expr::Literal(
                    Datum::Bytes(value),
                    DataType::Array(crate::types::array::ArrayElem::Text),
                ));
            }
            "current_schema" if args.is_empty() => {
                return Ok(Expr::Literal(
                    Datum::text(self.current_schema()),
                    DataType::Text,
                ));
            }
            "pg_relation_size" | "pg_total_relation_size" | "pg_table_size" | "pg_indexes_size"
            | "hypertable_size"
                if args.len() == 1 =>
            {
                return self.bind_relation_size(&name, &args[0]);
            }
            _ => {}
        }
        if let Some(e) = self.bind_catalog_function(&name, &args)? {
            return Ok(e);
        }
        if let Some(e) = self.bind_array_function(&name, &args)? {
            return Ok(e);
        }
        if name == "row" {
            return self.bind_row_constructor(args);
        }
        self.bind_function_call(&name, args)
    }

    /// pg_cancel_backend(pid) / pg_terminate_backend(pid [, timeout]): the
    /// signal goes out as the row is computed (the timeout, how long to wait
    /// for the session to end, is not waited: it is 0 by default).
    fn bind_backend_signal(&mut self, name: &str, pid: &Expr) -> DbResult<Expr> {
        let server = self.server.clone().ok_or_else(|| {
            DbError::unsupported(format!("{name}() outside a server session"))
        })?;
        let pid = self.coerce(pid.clone(), DataType::Int32, name)?;
        let reason = if name == "pg_terminate_backend" {
            crate::exec::cancel::StopReason::Terminate
        } else {
            crate::exec::cancel::StopReason::UserRequest
        };
        Ok(Expr::SignalBackend {
            pid: Box::new(pid),
            signal: Arc::new(crate::sql::plan::BackendSignal {
                server,
                caller: self.user.clone(),
                reason,
            }),
        })
    }

    /// `drop_chunks(t, older_than)` and `brewric_compact()`: recorded as
    /// effects on the first bind, replaced by their results on the second.
    fn bind_effect(
        &mut self,
        name: &str,
        args: Vec<Expr>,
        named: Vec<(String, Expr)>,
    ) -> DbResult<Expr> {
        let effect = match name {
            "brewric_compact" if args.is_empty() && named.is_empty() => Effect::Compact,
            "drop_chunks" => {
                let mut table = None;
                let mut older_than = None;
                for (i, a) in args.into_iter().enumerate() {
                    match i {
                        0 => table = Some(a),
                        1 => older_than = Some(a),
                        _ => {
                            return Err(DbError::unsupported(
                                "drop_chunks() takes a table and older_than",
                            ))
                        }
                    }
                }
                for (n, a) in named {
                    match n.as_str() {
                        "relation" => table = Some(a),
                        "older_than" => older_than = Some(a),
                        other => {
                            return Err(DbError::unsupported(format!(
                                "drop_chunks() argument {other} is not supported"
                            )))
                        }
                    }
                }
                let table = match &table {
                    Some(arg) => self.table_arg("drop_chunks", arg)?,
                    None => None,
                }
                .ok_or_else(|| DbError::unsupported("drop_chunks() needs a table name literal"))?;
                let older_than = older_than.ok_or_else(|| {
                    DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "drop_chunks() needs older_than",
                    )
                })?;
                let bad = || {
                    DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "older_than must be an interval or a timestamp",
                    )
                };
                let cutoff = match self.constant(&older_than)? {
                    (Datum::Interval(iv), _) => self
                        .eval
                        .statement_time_ns
                        .saturating_sub(crate::types::datetime::interval_nanos_30_day_months(iv)),
                    (Datum::Int64(ts), DataType::TimestampTz | DataType::Timestamp) => ts,
                    _ => return Err(bad()),
                };
                Effect::DropChunks { table, cutoff }
            }
            "create_hypertable" => self.bind_create_hypertable(args, named)?,
            n if jobs::JOB_FUNCTIONS.contains(&n) => self.bind_job_function(n, args, named)?,
            "pg_sleep" if args.len() == 1 && named.is_empty() => {
                let seconds = self.coerce(args[0].clone(), DataType::Float64, "pg_sleep")?;
                let seconds = match self.constant_with(&seconds, &self.effect_params)? {
                    (Datum::Float64(s), _) => Some(s),
                    (Datum::Null, _) => None,
                    _ => return Err(DbError::unsupported("pg_sleep() of a value computed per row")),
                };
                Effect::Sleep { seconds }
            }
            _ => {
                return Err(DbError::unsupported(format!(
                    "{name}() with these arguments"
                )))
            }
        };
        Ok(self.record_effect(effect))
    }

    /// A call with side effects: recorded on the first bind (its value NULL
    /// for now), its result on the second.
    fn record_effect(&mut self, effect: Effect) -> Expr {
        let result_type = effect.result_type();
        match &self.effect_results {
            Some(results) => {
                let v = results
                    .get(self.next_effect)
                    .cloned()
                    .unwrap_or(Datum::Null);
                self.next_effect += 1;
                Expr::Literal(v, result_type)
            }
            None => {
                self.effects.push(effect);
                Expr::Literal(Datum::Null, result_type)
            }
        }
    }

    /// create_hypertable(relation, time_column_name [, chunk_time_interval =>, if_not_exists =>, …]).
    /// TimescaleDB's other options (replication_factor, create_default_indexes,
    /// migrate_data, partitioning_column, …) are accepted and change nothing.
    fn bind_create_hypertable(&mut self, args: Vec<Expr>, named: Vec<(String, Expr)>) -> DbResult<Effect> {
        let mut relation = None;
        let mut column = None;
        let mut if_not_exists = false;
        let positional = ["relation", "time_column_name", "partitioning_column", "number_partitions"];
        let named_args = args
            .into_iter()
            .enumerate()
            .map(|(i, a)| (positional.get(i).copied().unwrap_or("").to_string(), a))
            .chain(named);
        for (n, a) in named_args {
            match n.as_str() {
                "relation" => relation = self.table_arg("create_hypertable", &a)?,
                "time_column_name" => {
                    column = self.constant(&a)?.0.as_str().map(str::to_string);
                }
                "if_not_exists" => if_not_exists = matches!(self.constant(&a)?.0, Datum::Bool(true)),
                "chunk_time_interval" | "replication_factor" | "create_default_indexes" | "migrate_data"
                | "partitioning_column" | "number_partitions" | "associated_schema_name"
                | "associated_table_prefix" | "chunk_target_size" | "partitioning_func"
                | "time_partitioning_func" | "data_nodes" => {}
                other => {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function create_hypertable() has no argument {other}"),
                    ))
                }
            }
        }
        let table = relation.ok_or_else(|| {
            DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "create_hypertable() needs a relation")
        })?;
        let column = column.ok_or_else(|| {
            DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "create_hypertable() needs a time column name")
        })?;
        let time_column = table.column_index(&column).ok_or_else(|| {
            DbError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{column}\" does not exist"),
            )
        })?;
        if !matches!(
            table.columns[time_column].data_type,
            DataType::Timestamp | DataType::TimestampTz
        ) {
            return Err(DbError::unsupported(format!(
                "time column \"{column}\" must be timestamp or timestamptz (got {})",
                table.columns[time_column].data_type.name()
            )));
        }
        Ok(Effect::CreateHypertable { table, time_column, if_not_exists })
    }

    /// The table a function's argument names: a text literal, possibly cast
    /// (`'cpu'::regclass`); None for NULL.
    fn table_arg(&self, func: &str, arg: &Expr) -> DbResult<Option<Arc<TableDef>>> {
        let literal = match arg {
            Expr::Cast { expr, .. } => expr.as_ref(),
            other => other,
        };
        match literal {
            Expr::Literal(Datum::Null, _) => Ok(None),
            Expr::Literal(Datum::Bytes(b), _) => self.table_by_text(&String::from_utf8_lossy(b)).map(Some),
            // 'cpu'::regclass: the OID its name resolved to.
            Expr::Literal(Datum::Int64(oid), DataType::Oid) => {
                self.db.table_by_oid(*oid as u32).cloned().map(Some).ok_or_else(|| {
                    DbError::new(
                        sqlstate::UNDEFINED_TABLE,
                        format!("{func}(): relation with OID {oid} is not a table"),
                    )
                })
            }
            _ => Err(DbError::unsupported(format!("{func}() needs a table name literal"))),
        }
    }

    /// The sequence nextval()/setval()'s first argument names: a text
    /// literal (`'s'`, `'public.s'`, `'"S"'`), found along the search path,
    /// or a regclass (`'public.s'::regclass`, as pg_dump writes defaults).
    fn sequence_named(&self, args: &[Expr], function: &str) -> DbResult<Arc<SequenceRef>> {
        let sequence = match args.first() {
            Some(Expr::Literal(Datum::Bytes(b), _)) => {
                let name = String::from_utf8_lossy(b).into_owned();
                let parts = crate::sql::bind::object_identifiers::split_qualified_name(&name);
                let found = match parts.as_slice() {
                    [seq] => self.search_path.iter().find_map(|s| self.db.schemas.get(s)?.sequences.get(seq)),
                    [schema, seq] => self.db.schemas.get(schema).and_then(|s| s.sequences.get(seq)),
                    _ => None,
                };
                found.ok_or_else(|| DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))?
            }
            Some(Expr::Literal(Datum::Int64(oid), DataType::Oid)) => {
                let found = self.db.schemas.values().flat_map(|s| s.sequences.values()).find(|q| q.oid as i64 == *oid);
                found.ok_or_else(|| {
                    DbError::new(sqlstate::WRONG_OBJECT_TYPE, format!("relation with OID {oid} is not a sequence"))
                })?
            }
            _ => return Err(DbError::unsupported(format!("{function}() needs a literal sequence name"))),
        };
        Ok(Arc::new(SequenceRef {
            sequence: sequence.clone(),
            server: self.server.clone(),
            session: self.session_sequences.clone(),
        }))
    }

    /// A table named by a text value (`'t'`, `'s.t'`, `'"T"'`), as regclass input resolves it.
    fn table_by_text(&self, name: &str) -> DbResult<Arc<TableDef>> {
        let parts: Vec<String> = name
            .split('.')
            .map(|p| {
                let p = p.trim();
                if p.starts_with('"') {
                    p.trim_matches('"').to_string()
                } else {
                    p.to_lowercase()
                }
            })
            .collect();
        match parts.as_slice() {
            [t] => self
                .search_path
                .iter()
                .find_map(|s| self.db.table(s, t))
                .or_else(|| self.db.table("public", t)),
            [s, t] => self.db.table(s, t),
            _ => None,
        }
        .cloned()
        .ok_or_else(|| {
            DbError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )
        })
    }

    /// Evaluates a constant expression (no columns) to its value and type.
    fn constant(&self, e: &Expr) -> DbResult<(Datum, DataType)> {
        self.constant_with(e, &[])
    }

    /// `constant` with the statement's parameter values (for effects, which
    /// run once per execution; plans keep parameters symbolic).
    fn constant_with(&self, e: &Expr, params: &[Datum]) -> DbResult<(Datum, DataType)> {
        if let Expr::Literal(d, t) = e {
            return Ok((d.clone(), *t));
        }
        let empty = HashMap::new();
        let cx = crate::exec::expr::EvalInputs {
            eval: self.eval,
            params,
            outer: &[],
            subqueries: &empty,
        };
        let one = crate::exec::vector::Batch::new(vec![], 1);
        Ok((
            crate::exec::expr::eval(e, &one, &cx)?.datum(0),
            e.data_type(),
        ))
    }

    /// A table's bytes on disk (its segment files; index structures live in
    /// them), summed over shards. Index size is 0: no separate index files.
    fn bind_relation_size(&mut self, func: &str, arg: &Expr) -> DbResult<Expr> {
        let literal = match arg {
            Expr::Cast { expr, .. } => expr.as_ref(),
            other => other,
        };
        if !matches!(literal, Expr::Literal(..)) {
            return self.bind_relation_size_by_oid(func, arg);
        }
        let Some(table) = self.table_arg(func, arg)? else {
            return Ok(Expr::Literal(Datum::Null, DataType::Int64));
        };
        let bytes = match &self.relation_sizes {
            Some(sizes) => sizes.get(&table.oid).copied().unwrap_or(0),
            None => {
                self.wants_relation_sizes = true;
                0
            }
        };
        let bytes = if func == "pg_indexes_size" { 0 } else { bytes };
        Ok(Expr::Literal(Datum::Int64(bytes as i64), DataType::Int64))
    }

    /// `x = ANY(array | subquery)` and `x <> ALL(…)`: IN and NOT IN over the
    /// array's elements (a subquery unnesting it, correlated when the array is
    /// a column), so NULLs behave as PostgreSQL's ANY/ALL do.
    fn bind_quantified(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
        agg: Option<&mut AggContext>,
    ) -> DbResult<Expr> {
        let negated = match (op, all) {
            (ast::BinaryOperator::Eq, false) => false,
            (ast::BinaryOperator::NotEq, true) => true,
            _ => return self.bind_quantified_comparison(left, op, right, all, scope, agg),
        };
        let x = self.bind_expr(left, scope, agg)?;
        let (query, null_array) = self.quantified_set(right, x.data_type(), all, scope)?;
        let quantified = self.bind_subquery(&query, scope, SubqueryKind::In { negated }, Some(x))?;
        Ok(null_if_array_null(null_array, quantified))
    }

    /// What `x op ANY/ALL (right)` ranges over, as a query: the subquery, or
    /// `SELECT unnest(array)` (an untyped array literal read as an array of
    /// `element`, text if unknown); with the test that the array is NULL,
    /// which makes the comparison NULL (an empty array does not).
    fn quantified_set(
        &mut self,
        right: &ast::Expr,
        element: DataType,
        all: bool,
        scope: &Scope,
    ) -> DbResult<(Box<ast::Query>, Option<Expr>)> {
        let array = match right {
            ast::Expr::Subquery(q) => return Ok((q.clone(), None)),
            array => array,
        };
        let bound = self.bind_expr(array, scope, None)?;
        let cast = match (bound.data_type(), element) {
            (DataType::Array(_), _) => String::new(),
            (DataType::Unknown, DataType::Unknown) => "::text[]".to_string(),
            (DataType::Unknown, t) => format!("::{}[]", t.name()),
            _ => {
                let quantifier = if all { "ALL" } else { "ANY" };
                return Err(DbError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("op {quantifier} (array) requires array on right side"),
                ));
            }
        };
        let sql = format!("SELECT unnest(({array}){cast})");
        let query = match crate::sql::parse(&sql)?.pop() {
            Some(ast::Statement::Query(q)) => q,
            _ => return Err(DbError::internal("ANY over an array")),
        };
        let is_null = Expr::IsNull {
            expr: Box::new(bound),
            negated: false,
        };
        Ok((query, Some(is_null)))
    }

    /// `x op ANY (…)` / `x op ALL (…)` for an operator other than `= ANY` and
    /// `<> ALL` (which are IN / NOT IN): a correlated subquery folding the
    /// comparisons with PostgreSQL's three-valued rules — ANY is true if one
    /// comparison is, else NULL if one is NULL, else false (also for no rows);
    /// ALL is false if one comparison is, else NULL if one is NULL, else true.
    fn bind_quantified_comparison(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
        agg: Option<&mut AggContext>,
    ) -> DbResult<Expr> {
        let quantifier = if all { "ALL" } else { "ANY" };
        let (set, null_array) = self.quantified_set(right, DataType::Unknown, all, scope)?;
        let fold = if all {
            "CASE WHEN NOT bool_and(q.cmp) THEN false WHEN count(*) > count(q.cmp) THEN NULL ELSE true END"
        } else {
            "CASE WHEN bool_or(q.cmp) THEN true WHEN count(*) > count(q.cmp) THEN NULL ELSE false END"
        };
        let sql = format!(
            "SELECT ({fold}) FROM (SELECT ({left}) {op} s.v AS cmp FROM ({set}) AS s(v)) AS q"
        );
        let query = match crate::sql::parse(&sql)?.pop() {
            Some(ast::Statement::Query(q)) => q,
            _ => return Err(DbError::internal(format!("{op} {quantifier} as a subquery"))),
        };
        let folded = self.bind_expr(&ast::Expr::Subquery(query), scope, agg)?;
        Ok(null_if_array_null(null_array, folded))
    }

    /// `current_setting(name [, missing_ok])`: the session's value now (the
    /// statement's settings do not change while it runs).
    fn bind_current_setting(&mut self, args: &[Expr]) -> DbResult<Expr> {
        let (name, _) = self.constant(&args[0])?;
        let missing_ok = match args.get(1) {
            Some(a) => self.constant(a)?.0.as_bool() == Some(true),
            None => false,
        };
        let Some(name) = name.as_str() else {
            return Ok(Expr::Literal(Datum::Null, DataType::Text));
        };
        match self.settings.get(&name.to_lowercase()) {
            Some(v) => Ok(Expr::Literal(Datum::text(v.clone()), DataType::Text)),
            None if missing_ok => Ok(Expr::Literal(Datum::Null, DataType::Text)),
            None => Err(DbError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("unrecognized configuration parameter \"{name}\""),
            )),
        }
    }

    /// `set_config(name, value, is_local)` with constant arguments: an
    /// effect the session runs as SET before the statement (a NULL value
    /// resets the setting, a NULL is_local is false).
    fn bind_set_config(&mut self, args: Vec<Expr>) -> DbResult<Expr> {
        let mut texts = Vec::new();
        for (a, t) in args.into_iter().zip([DataType::Text, DataType::Text, DataType::Bool]) {
            match self.constant_argument(a, t, "set_config()")? {
                Expr::Literal(d, _) => texts.push(d),
                _ => return Err(DbError::unsupported("set_config() with a parameter argument")),
            }
        }
        let name = texts[0].as_str().map(str::to_string).ok_or_else(|| {
            DbError::new(sqlstate::NULL_VALUE_NOT_ALLOWED, "SET requires parameter name")
        })?;
        let value = texts[1].as_str().map(str::to_string);
        let is_local = texts[2].as_bool() == Some(true);
        Ok(self.record_effect(Effect::SetConfig { name, value, is_local }))
    }

    /// A size function over a relation OID computed per row (`pg_table_size(c.oid)`
    /// in psql's `\dt+`): a lookup among the tables' sizes; other relations of
    /// this database (views, indexes, sequences) are 0 bytes, unknown OIDs NULL.
    fn bind_relation_size_by_oid(&mut self, func: &str, arg: &Expr) -> DbResult<Expr> {
        let sizes = match &self.relation_sizes {
            Some(sizes) => sizes.clone(),
            None => {
                self.wants_relation_sizes = true;
                Arc::new(HashMap::new())
            }
        };
        let key = self.coerce(arg.clone(), DataType::Oid, func)?;
        let mut whens = Vec::new();
        for oid in system::user_relation_oids(self.db) {
            let bytes = match func {
                "pg_indexes_size" => 0,
                _ => sizes.get(&oid).copied().unwrap_or(0),
            };
            let test = self.bind_binary(
                BinaryOp::Eq,
                key.clone(),
                Expr::Literal(Datum::Int64(oid as i64), DataType::Oid),
            )?;
            whens.push((test, Expr::Literal(Datum::Int64(bytes as i64), DataType::Int64)));
        }
        Ok(Expr::Case {
            whens,
            otherwise: Box::new(Expr::Literal(Datum::Null, DataType::Int64)),
            data_type: DataType::Int64,
        })
    }

    fn bind_value(&mut self, v: &ast::Value) -> DbResult<Expr> {
        match v {
            ast::Value::Number(n, _) => number_literal(n),
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::DoubleQuotedString(s) => {
                Ok(Expr::Literal(Datum::text(s.clone()), DataType::Unknown))
            }
            ast::Value::DollarQuotedString(s) => Ok(Expr::Literal(
                Datum::text(s.value.clone()),
                DataType::Unknown,
            )),
            ast::Value::Boolean(b) => Ok(Expr::Literal(Datum::Bool(*b), DataType::Bool)),
            ast::Value::Null => Ok(Expr::null()),
            ast::Value::Placeholder(p) => {
                let n: usize = p
                    .trim_start_matches('$')
                    .parse()
                    .map_err(|_| DbError::syntax(format!("syntax error at or near \"{p}\"")))?;
                if n == 0 || n > 65535 {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_PARAMETER,
                        format!("there is no parameter ${n}"),
                    ));
                }
                if self.params.len() < n {
                    self.params.resize(n, DataType::Unknown);
                }
                Ok(Expr::Param(n - 1, self.params[n - 1]))
            }
            other => Err(DbError::unsupported(format!(
                "literal not supported: {other}"
            ))),
        }
    }

    /// An explicit cast (`CAST(x AS t)`, `x::t`); literals are converted now.
    pub fn cast(&mut self, e: Expr, to: DataType) -> DbResult<Expr> {
        let from = e.data_type();
        match &e {
            Expr::Param(i, DataType::Unknown) => {
                // The parameter takes the base type; a length (char(4)) still applies as a cast.
                let base = match to {
                    DataType::Varchar(Some(_)) => DataType::Varchar(None),
                    DataType::Bpchar(Some(_)) => DataType::Bpchar(None),
                    other => other,
                };
                if let Some(slot) = self.params.get_mut(*i) {
                    *slot = base;
                }
                let p = Expr::Param(*i, base);
                return Ok(if base == to {
                    p
                } else {
                    Expr::Cast {
                        expr: Box::new(p),
                        to,
                    }
                });
            }
            Expr::Literal(d, t) => {
                let v = kernels::cast_datum(d, *t, to, self.eval)?;
                return Ok(Expr::Literal(v, to));
            }
            _ => {}
        }
        if from == to {
            return Ok(e);
        }
        if !kernels::can_cast_explicit(from, to) {
            return Err(DbError::new(
                sqlstate::CANNOT_COERCE,
                format!("cannot cast type {} to {}", from.name(), to.name()),
            ));
        }
        Ok(Expr::Cast {
            expr: Box::new(e),
            to,
        })
    }
}

enum SelectSource {
    Ast(Box<ast::Expr>),
    Column(usize),
}

/// make_interval(years, months, weeks, days, hours, mins, secs): the
/// arguments given by position then by name, each missing one 0, as
/// PostgreSQL's defaults make them.
fn make_interval_args(positional: Vec<Expr>, named: Vec<(String, Expr)>) -> DbResult<Vec<Expr>> {
    const PARAMS: [&str; 7] = ["years", "months", "weeks", "days", "hours", "mins", "secs"];
    if positional.len() > PARAMS.len() {
        return Err(DbError::new(
            sqlstate::UNDEFINED_FUNCTION,
            "function make_interval() with more than 7 arguments does not exist",
        ));
    }
    let mut slots: Vec<Option<Expr>> = positional.into_iter().map(Some).collect();
    slots.resize(PARAMS.len(), None);
    for (n, e) in named {
        let Some(i) = PARAMS.iter().position(|p| *p == n) else {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function make_interval({n} => …) does not exist"),
            ));
        };
        if slots[i].replace(e).is_some() {
            return Err(DbError::new(
                sqlstate::SYNTAX_ERROR,
                format!("argument name \"{n}\" used more than once"),
            ));
        }
    }
    Ok(slots
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            e.unwrap_or_else(|| match i {
                6 => Expr::Literal(Datum::Float64(0.0), DataType::Float64),
                _ => Expr::Literal(Datum::Int32(0), DataType::Int32),
            })
        })
        .collect())
}

/// An aggregate's function and result type for an argument of type `t`
/// (PostgreSQL's: sum(int4) is bigint, sum(int8) and avg(int) numeric).
pub(crate) fn aggregate_signature(name: &str, t: DataType) -> DbResult<(AggFunc, DataType)> {
    Ok(match name {
        "count" => (AggFunc::Count, DataType::Int64),
        "sum" => (
            AggFunc::Sum,
            match t {
                DataType::Int16 | DataType::Int32 => DataType::Int64,
                DataType::Int64 | DataType::Numeric => DataType::Numeric,
                DataType::Float32 => DataType::Float32,
                DataType::Float64 => DataType::Float64,
                DataType::Interval => DataType::Interval,
                _ => return Err(no_agg(name, t)),
            },
        ),
        "avg" => (
            AggFunc::Avg,
            match t {
                DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Numeric => {
                    DataType::Numeric
                }
                DataType::Float32 | DataType::Float64 => DataType::Float64,
                DataType::Interval => DataType::Interval,
                _ => return Err(no_agg(name, t)),
            },
        ),
        "min" | "max" => {
            if matches!(t, DataType::Jsonb) {
                return Err(no_agg(name, t));
            }
            (
                if name == "min" {
                    AggFunc::Min
                } else {
                    AggFunc::Max
                },
                t,
            )
        }
        "bool_and" | "every" | "bool_or" => {
            if t != DataType::Bool {
                return Err(no_agg(name, t));
            }
            (
                if name == "bool_or" {
                    AggFunc::BoolOr
                } else {
                    AggFunc::BoolAnd
                },
                DataType::Bool,
            )
        }
        _ => return Err(no_agg(name, t)),
    })
}

fn no_agg(name: &str, t: DataType) -> DbError {
    DbError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {name}({}) does not exist", t.name()))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

fn grouping_error(f: &Field) -> DbError {
    let name = match &f.qualifier {
        Some(q) => format!("{q}.{}", f.name),
        None => f.name.clone(),
    };
    DbError::new(
        sqlstate::GROUPING_ERROR,
        format!("column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"),
    )
}

pub fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name,
        "count"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "bool_and"
            | "bool_or"
            | "every"
            | "string_agg"
            | "array_agg"
            | "percentile_cont"
            | "percentile_disc"
            | "first"
            | "last"
    )
}

/// Whether an AST expression contains an aggregate call outside any subquery.
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    let text_has_call = |f: &ast::Function| {
        object_name_parts(&f.name)
            .last()
            .is_some_and(|n| is_aggregate_name(n))
            && f.over.is_none()
    };
    match e {
        ast::Expr::Function(f) => {
            if text_has_call(f) {
                return true;
            }
            match &f.args {
                ast::FunctionArguments::List(l) => l.args.iter().any(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                        contains_aggregate(x)
                    }
                    _ => false,
                }),
                _ => false,
            }
        }
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } => false,
        ast::Expr::BinaryOp { left, right, .. } => {
            contains_aggregate(left) || contains_aggregate(right)
        }
        ast::Expr::UnaryOp { expr, .. }
        | ast::Expr::Nested(expr)
        | ast::Expr::Cast { expr, .. }
        | ast::Expr::IsNull(expr)
        | ast::Expr::IsNotNull(expr)
        | ast::Expr::IsTrue(expr)
        | ast::Expr::IsNotTrue(expr)
        | ast::Expr::IsFalse(expr)
        | ast::Expr::IsNotFalse(expr)
        | ast::Expr::Extract { expr, .. }
        | ast::Expr::Ceil { expr, .. }
        | ast::Expr::Floor { expr, .. }
        | ast::Expr::Collate { expr, .. } => contains_aggregate(expr),
        ast::Expr::IsDistinctFrom(a, b) | ast::Expr::IsNotDistinctFrom(a, b) => {
            contains_aggregate(a) || contains_aggregate(b)
        }
        ast::Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => contains_aggregate(timestamp) || contains_aggregate(time_zone),
        ast::Expr::Between {
            expr, low, high, ..
        } => contains_aggregate(expr) || contains_aggregate(low) || contains_aggregate(high),
        ast::Expr::Like { expr, pattern, .. } | ast::Expr::ILike { expr, pattern, .. } => {
            contains_aggregate(expr) || contains_aggregate(pattern)
        }
        ast::Expr::In { expr, target, .. } => {
            contains_aggregate(expr)
                || matches!(target, ast::InTarget::List(l) if l.iter().any(contains_aggregate))
        }
        ast::Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || conditions
                    .iter()
                    .any(|c| contains_aggregate(&c.condition) || contains_aggregate(&c.result))
                || else_result.as_deref().is_some_and(contains_aggregate)
        }
        ast::Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            contains_aggregate(expr)
                || substring_from.as_deref().is_some_and(contains_aggregate)
                || substring_for.as_deref().is_some_and(contains_aggregate)
        }
        ast::Expr::Trim {
            expr, trim_what, ..
        } => contains_aggregate(expr) || trim_what.as_deref().is_some_and(contains_aggregate),
        _ => false,
    }
}

/// The column name PostgreSQL gives an unaliased select item.
pub fn output_name(e: &ast::Expr) -> String {
    figure_colname(e).0
}

/// PostgreSQL's FigureColname: a result column's name and how sure it is
/// (2: a column, function, ROW or ARRAY; 1: a type name or "case"; 0: none),
/// so that `CASE … ELSE f(x) END` is named `f` but `CASE … ELSE 1 END` "case".
fn figure_colname(e: &ast::Expr) -> (String, u8) {
    let strong = |n: &str| (n.to_string(), 2);
    match e {
        ast::Expr::Identifier(id) => (ident_name(id), 2),
        ast::Expr::CompoundIdentifier(ids) => (ids.last().map(ident_name).unwrap_or_default(), 2),
        ast::Expr::Function(f) => match object_name_parts(&f.name).pop() {
            Some(n) => (n, 2),
            None => ("?column?".into(), 0),
        },
        ast::Expr::Cast { expr, data_type, .. } => match figure_colname(expr) {
            (n, 2) => (n, 2),
            _ => (type_output_name(data_type), 1),
        },
        ast::Expr::Nested(inner) => figure_colname(inner),
        // The last field name (`t.col[1]` is `col`); subscripts alone keep
        // the subscripted expression's name.
        ast::Expr::CompoundFieldAccess { root, access_chain } => {
            let field = access_chain.iter().rev().find_map(|a| match a {
                ast::AccessExpr::Dot(ast::Expr::Identifier(id)) => Some(ident_name(id)),
                _ => None,
            });
            field.map_or_else(|| figure_colname(root), |n| (n, 2))
        }
        ast::Expr::Case { else_result, .. } => match else_result.as_deref().map(figure_colname) {
            Some((n, 2)) => (n, 2),
            _ => ("case".into(), 1),
        },
        ast::Expr::Tuple(_) => strong("row"),
        ast::Expr::Array(_) => strong("array"),
        ast::Expr::Exists { .. } => strong("exists"),
        ast::Expr::Extract { .. } => strong("extract"),
        ast::Expr::AtTimeZone { .. } => strong("timezone"),
        ast::Expr::Substring { .. } => strong("substring"),
        ast::Expr::Trim { .. } => strong("btrim"),
        ast::Expr::Position { .. } => strong("position"),
        ast::Expr::Ceil { .. } => strong("ceil"),
        ast::Expr::Floor { .. } => strong("floor"),
        ast::Expr::TypedString(ts) => (type_output_name(&ts.data_type), 1),
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::UnnamedExpr(e)) => figure_colname(e),
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => (ident_name(alias), 2),
                _ => ("?column?".into(), 0),
            },
            _ => ("?column?".into(), 0),
        },
        _ => ("?column?".into(), 0),
    }
}

/// A quantified comparison is NULL where its array is (see `quantified_set`).
fn null_if_array_null(null_array: Option<Expr>, quantified: Expr) -> Expr {
    match null_array {
        Some(is_null) => Expr::Case {
            whens: vec![(is_null, Expr::Literal(Datum::Null, DataType::Bool))],
            otherwise: Box::new(quantified),
            data_type: DataType::Bool,
        },
        None => quantified,
    }
}

fn type_output_name(t: &ast::DataType) -> String {
    match bind_data_type(t) {
        Ok(DataType::Int16) => "int2".into(),
        Ok(DataType::Int32) => "int4".into(),
        Ok(DataType::Int64) => "int8".into(),
        Ok(DataType::Float32) => "float4".into(),
        Ok(DataType::Float64) => "float8".into(),
        Ok(DataType::Bool) => "bool".into(),
        Ok(DataType::Varchar(_)) => "varchar".into(),
        Ok(DataType::Bpchar(_)) => "bpchar".into(),
        Ok(DataType::Timestamp) => "timestamp".into(),
        Ok(DataType::TimestampTz) => "timestamptz".into(),
        Ok(DataType::Char) => "char".into(),
        Ok(other) => other.name(),
        Err(_) => "?column?".into(),
    }
}

fn number_literal(n: &str) -> DbResult<Expr> {
    if !n.contains(['.', 'e', 'E']) {
        if let Ok(v) = n.parse::<i32>() {
            return Ok(Expr::Literal(Datum::Int32(v), DataType::Int32));
        }
        if let Ok(v) = n.parse::<i64>() {
            return Ok(Expr::Literal(Datum::Int64(v), DataType::Int64));
        }
    }
    match parse_text(DataType::Numeric, n, &Default::default()) {
        Ok(v) => Ok(Expr::Literal(v, DataType::Numeric)),
        // Beyond numeric's 28 digits (1e100): keep the value as double precision.
        Err(_) => Ok(Expr::Literal(
            parse_text(DataType::Float64, n, &Default::default())?,
            DataType::Float64,
        )),
    }
}

/// `-(a ^ b)` as PostgreSQL reads `-a ^ b`: the sign on the leftmost operand.
fn sign_into_power(sign: ast::UnaryOperator, e: &ast::Expr) -> ast::Expr {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::PGExp, right } => ast::Expr::BinaryOp {
            left: Box::new(sign_into_power(sign, left)),
            op: ast::BinaryOperator::PGExp,
            right: right.clone(),
        },
        other => ast::Expr::UnaryOp { op: sign, expr: Box::new(other.clone()) },
    }
}

/// `OPERATOR(pg_catalog.~)` (psql's spelling) as the operator it names;
/// only the pg_catalog schema holds operators.
fn qualified_operator(path: &[String]) -> DbResult<ast::BinaryOperator> {
    use ast::BinaryOperator as B;
    let spelled = || format!("OPERATOR({})", path.join("."));
    let name = match path {
        [name] => name.as_str(),
        [schema, name] if schema.eq_ignore_ascii_case("pg_catalog") => name.as_str(),
        _ => {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("operator does not exist: {}", spelled()),
            ))
        }
    };
    Ok(match name {
        "+" => B::Plus,
        "-" => B::Minus,
        "*" => B::Multiply,
        "/" => B::Divide,
        "%" => B::Modulo,
        "^" => B::PGExp,
        "=" => B::Eq,
        "<>" | "!=" => B::NotEq,
        "<" => B::Lt,
        "<=" => B::LtEq,
        ">" => B::Gt,
        ">=" => B::GtEq,
        "||" => B::StringConcat,
        "~" => B::PGRegexMatch,
        "!~" => B::PGRegexNotMatch,
        "~*" => B::PGRegexIMatch,
        "!~*" => B::PGRegexNotIMatch,
        "~~" => B::PGLikeMatch,
        "!~~" => B::PGNotLikeMatch,
        "~~*" => B::PGILikeMatch,
        "!~~*" => B::PGNotILikeMatch,
        "&" => B::BitwiseAnd,
        "|" => B::BitwiseOr,
        "#" => B::PGBitwiseXor,
        "<<" => B::PGBitwiseShiftLeft,
        ">>" => B::PGBitwiseShiftRight,
        "->" => B::Arrow,
        "->>" => B::LongArrow,
        "#>" => B::HashArrow,
        "#>>" => B::HashLongArrow,
        "?" => B::Question,
        "?|" => B::QuestionPipe,
        "?&" => B::QuestionAnd,
        _ => {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("operator does not exist: {}", spelled()),
            ))
        }
    })
}

fn binary_op(op: &ast::BinaryOperator) -> DbResult<BinaryOp> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Plus => BinaryOp::Plus,
        B::Minus => BinaryOp::Minus,
        B::Multiply => BinaryOp::Multiply,
        B::Divide => BinaryOp::Divide,
        B::Modulo => BinaryOp::Modulo,
        B::Eq => BinaryOp::Eq,
        B::NotEq => BinaryOp::NotEq,
        B::Lt => BinaryOp::Lt,
        B::LtEq => BinaryOp::LtEq,
        B::Gt => BinaryOp::Gt,
        B::GtEq => BinaryOp::GtEq,
        B::StringConcat => BinaryOp::Concat,
        B::And => BinaryOp::And,
        B::Or => BinaryOp::Or,
        B::PGRegexMatch => BinaryOp::RegexMatch,
        B::PGRegexNotMatch => BinaryOp::RegexNotMatch,
        B::PGRegexIMatch => BinaryOp::RegexIMatch,
        B::PGRegexNotIMatch => BinaryOp::RegexNotIMatch,
        B::PGLikeMatch => BinaryOp::Like,
        B::PGNotLikeMatch => BinaryOp::NotLike,
        B::PGILikeMatch => BinaryOp::ILike,
        B::PGNotILikeMatch => BinaryOp::NotILike,
        B::Arrow => BinaryOp::JsonGet,
        B::LongArrow => BinaryOp::JsonGetText,
        B::HashArrow => BinaryOp::JsonPath,
        B::HashLongArrow => BinaryOp::JsonPathText,
        B::Question => BinaryOp::JsonExists,
        B::QuestionPipe => BinaryOp::JsonExistsAny,
        B::QuestionAnd => BinaryOp::JsonExistsAll,
        other => {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("operator does not exist: {other}"),
            ))
        }
    })
}

/// A SQL type and, for numeric(p, s), its precision and scale.
pub fn bind_data_type_mod(t: &ast::DataType) -> DbResult<(DataType, Option<(u32, u32)>)> {
    let dt = bind_data_type(t)?;
    let typmod = match t {
        ast::DataType::Numeric(info) | ast::DataType::Decimal(info) | ast::DataType::Dec(info) => {
            match info {
                ast::ExactNumberInfo::Precision(p) => Some((*p as u32, 0)),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => Some((*p as u32, *s as u32)),
                ast::ExactNumberInfo::None => None,
            }
        }
        _ => None,
    };
    if let Some((p, s)) = typmod {
        if p == 0 || p > 1000 {
            return Err(DbError::syntax(format!(
                "NUMERIC precision {p} must be between 1 and 1000"
            )));
        }
        if s > p {
            return Err(DbError::syntax(format!(
                "NUMERIC scale {s} must be between 0 and precision {p}"
            )));
        }
    }
    Ok((dt, typmod))
}

/// Maps a SQL type name to a `DataType`.
pub fn bind_data_type(t: &ast::DataType) -> DbResult<DataType> {
    use ast::DataType as T;
    let len = |n: &Option<ast::CharacterLength>| match n {
        Some(ast::CharacterLength::IntegerLength { length, .. }) => Some(*length as u32),
        _ => None,
    };
    Ok(match t {
        T::Array(
            ast::ArrayElemTypeDef::SquareBracket(elem, _)
            | ast::ArrayElemTypeDef::Qualified(elem, _)
            | ast::ArrayElemTypeDef::AngleBracket(elem)
            | ast::ArrayElemTypeDef::Parenthesis(elem),
        ) => {
            let e = bind_data_type(elem)?;
            match crate::types::array::ArrayElem::of(e) {
                Some(a) => DataType::Array(a),
                None => return Err(DbError::unsupported(format!("arrays of {}", e.name()))),
            }
        }
        T::Boolean | T::Bool => DataType::Bool,
        T::SmallInt(_) | T::Int2(_) => DataType::Int16,
        T::Int(_) | T::Integer(_) | T::Int4(_) => DataType::Int32,
        T::BigInt(_) | T::Int8(_) => DataType::Int64,
        T::Real | T::Float4 => DataType::Float32,
        T::Float(p) => match p {
            ast::ExactNumberInfo::Precision(n) | ast::ExactNumberInfo::PrecisionAndScale(n, _)
                if *n <= 24 =>
            {
                DataType::Float32
            }
            _ => DataType::Float64,
        },
        T::DoublePrecision | T::Float8 | T::Double(_) => DataType::Float64,
        T::Numeric(_) | T::Decimal(_) | T::Dec(_) => DataType::Numeric,
        T::Text | T::String(_) => DataType::Text,
        T::Varchar(n) | T::CharacterVarying(n) | T::CharVarying(n) => DataType::Varchar(len(n)),
        T::Char(n) | T::Character(n) => DataType::Bpchar(Some(len(n).unwrap_or(1))),
        T::Bytea => DataType::Bytea,
        T::Date => DataType::Date,
        T::Timestamp(_, tz) => match tz {
            ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz => DataType::TimestampTz,
            _ => DataType::Timestamp,
        },
        T::Interval { .. } => DataType::Interval,
        T::JSONB | T::JSON => DataType::Jsonb,
        // A relation named by text until regclass is its own type.
        T::Regclass => DataType::Text,
        T::Custom(name, _) => {
            let n = object_name_parts(name).pop().unwrap_or_default();
            match n.as_str() {
                "int2" => DataType::Int16,
                "int4" | "serial" | "serial4" => DataType::Int32,
                "int8" | "bigserial" | "serial8" => DataType::Int64,
                "float4" => DataType::Float32,
                "float8" => DataType::Float64,
                "bool" => DataType::Bool,
                "bpchar" => DataType::Bpchar(None),
                "timestamptz" => DataType::TimestampTz,
                "text" | "regclass" => DataType::Text,
                "name" => DataType::Name,
                "char" => DataType::Char,
                "oid" => DataType::Oid,
                "varchar" => DataType::Varchar(None),
                "numeric" | "decimal" => DataType::Numeric,
                "smallserial" | "serial2" => DataType::Int16,
                _ => {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("type \"{n}\" does not exist"),
                    ))
                }
            }
        }
        other => {
            return Err(DbError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{other}\" does not exist"),
            ))
        }
    })
}

/// Finds the one visible field named `name` (qualified by `qual` if given).
fn find_unique(fields: &[Field], qual: Option<&str>, name: &str) -> DbResult<Option<usize>> {
    let mut found = None;
    for (i, f) in fields.iter().enumerate() {
        let matches = f.name == name
            && match qual {
                Some(q) => f.qualifier.as_deref() == Some(q),
                None => !f.hidden,
            };
        if matches {
            if found.is_some() {
                return Err(DbError::new(
                    sqlstate::AMBIGUOUS_COLUMN,
                    format!("column reference \"{name}\" is ambiguous"),
                ));
            }
            found = Some(i);
        }
    }
    Ok(found)
}

pub fn scan_all(table: &Arc<TableDef>, qualifier: Option<&str>) -> Plan {
    let fields = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field {
            name: c.name.clone(),
            data_type: c.data_type,
            qualifier: Some(qualifier.unwrap_or(&table.name).to_string()),
            hidden: false,
            table_oid: table.oid,
            column_id: i as i16 + 1,
        })
        .collect();
    Plan::Scan {
        table: table.clone(),
        projection: (0..table.columns.len()).collect(),
        filter: None,
        fields,
    }
}

/// `left` × `right`: every pair of rows.
pub(crate) fn cross_join(left: Plan, right: Plan) -> Plan {
    let mut fields = left.fields().to_vec();
    fields.extend(right.fields().iter().cloned());
    Plan::Join {
        left: Box::new(left),
        right: Box::new(right),
        kind: JoinKind::Cross,
        on: None,
        fields,
    }
}

/// Gives a relation a new qualifier and, optionally, new column names.
fn rename_columns(
    plan: Plan,
    qualifier: &str,
    columns: &[ast::TableAliasColumnDef],
) -> DbResult<Plan> {
    let mut fields: Vec<Field> = plan.fields().to_vec();
    if columns.len() > fields.len() {
        return Err(DbError::syntax(format!(
            "table \"{qualifier}\" has {} columns available but {} columns specified",
            fields.len(),
            columns.len()
        )));
    }
    for (i, f) in fields.iter_mut().enumerate() {
        f.qualifier = Some(qualifier.to_string());
        if let Some(c) = columns.get(i) {
            f.name = ident_name(&c.name);
        }
    }
    let exprs = fields
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::Column(i, f.data_type))
        .collect();
    Ok(Plan::Project {
        input: Box::new(plan),
        exprs,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::output_name;
    use super::sql_function::parse_expr;

    fn name_of(expr: &str) -> String {
        output_name(&parse_expr(expr).expect("an expression"))
    }

    #[test]
    fn result_columns_are_named_as_postgresql_names_them() {
        assert_eq!(name_of("ranges[1]"), "ranges");
        assert_eq!(name_of("ranges[161:201]"), "ranges");
        assert_eq!(name_of("s.ranges[2:][1]"), "ranges");
        assert_eq!(name_of("(ARRAY[1, 2])[1:1]"), "array");
        assert_eq!(name_of("1 + 2"), "?column?");
    }
}
