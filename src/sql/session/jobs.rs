//! The session's side of TimescaleDB's policies and jobs: adding and
//! removing retention and compression policies, `alter_job`, `delete_job`,
//! `CALL run_job(id)`, and `ALTER TABLE … SET (timescaledb.compress, …)` —
//! catalog changes with TimescaleDB's messages and SQLSTATEs.
//! Must not: run a job's work itself (`sql/jobs.rs` does) or schedule runs
//! (the scheduler there does).

use std::sync::Arc;

use sqlparser::ast;

use super::{BlockCatalogChange, Session, StatementResult, TxnState};
use crate::catalog::timescale::{CompressionSettings, Policy};
use crate::catalog::{BlockUndo, Database, TableDef};
use crate::error::{sqlstate, DbError, DbResult};
use crate::sql::bind::jobs::{JobChanges, COMPRESSION_SCHEDULE, RETENTION_SCHEDULE};
use crate::types::Datum;

/// "retention policy already exists for hypertable "t"", TimescaleDB's wording per kind.
fn policy_message(policy: &Policy, what: &str, table: &TableDef) -> String {
    match policy {
        Policy::Refresh { .. } => format!("{} {what} for \"{}\"", policy.kind(), table.name),
        _ => format!("{} {what} for hypertable \"{}\"", policy.kind(), table.name),
    }
}

fn job_not_found(id: i32) -> DbError {
    DbError::new(sqlstate::UNDEFINED_OBJECT, format!("job {id} not found"))
}

impl Session {
    /// Changes the database's jobs or compression settings of `table`; in a
    /// transaction block, notes what puts them back (ROLLBACK, a crash).
    fn update_timescale<T>(&mut self, table: u32, change: impl FnOnce(&mut Database) -> DbResult<T>) -> DbResult<T> {
        let (out, before) = self.server.catalog.update_database(&self.database, |db| {
            db.prune_timescale();
            let before = db.timescale.of_table(table);
            Ok((change(db)?, before))
        })?;
        if self.txn != TxnState::Idle {
            self.record_block_change(BlockCatalogChange::InPlace(BlockUndo::TimescaleChanged { table, before }));
        }
        Ok(out)
    }

    /// The table job `id` acts on.
    fn job_table(&self, id: i32) -> DbResult<Option<u32>> {
        let catalog = self.server.catalog.snapshot();
        Ok(catalog.database(&self.database)?.timescale.jobs.get(&id).map(|j| j.table))
    }

    /// add_retention_policy / add_compression_policy: the new job's id, or
    /// -1 when `if_not_exists` finds the table has one already.
    pub(super) fn add_policy(
        &mut self,
        table: &TableDef,
        policy: Policy,
        if_not_exists: bool,
        schedule_interval: Option<crate::types::Interval>,
        initial_start: Option<i64>,
    ) -> DbResult<Datum> {
        let schedule_interval = schedule_interval.unwrap_or(match policy {
            Policy::Retention { .. } | Policy::Refresh { .. } => RETENTION_SCHEDULE,
            Policy::Compression { .. } => COMPRESSION_SCHEDULE,
        });
        if crate::types::datetime::interval_nanos_30_day_months(schedule_interval) <= 0 {
            return Err(DbError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "schedule interval must be positive",
            ));
        }
        enum Added {
            New(i32),
            Same,
            Different,
        }
        let added = self.update_timescale(table.oid, |db| {
            if let Policy::Compression { .. } = policy {
                if !db.timescale.compression.contains_key(&table.oid) {
                    return Err(DbError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("compression not enabled on hypertable \"{}\"", table.name),
                    )
                    .with_hint("Enable compression before adding a compression policy."));
                }
            }
            if let Some(existing) = db.timescale.policy_job(table.oid, &policy) {
                if !if_not_exists {
                    return Err(DbError::new(
                        sqlstate::DUPLICATE_OBJECT,
                        policy_message(&policy, "already exists", table),
                    ));
                }
                return Ok(if existing.policy == policy { Added::Same } else { Added::Different });
            }
            Ok(Added::New(db.timescale.add_job(policy, table.oid, schedule_interval, initial_start)))
        })?;
        let message = policy_message(&policy, "already exists", table);
        match added {
            Added::New(id) => {
                let db = self.database_oid();
                let first = initial_start.unwrap_or_else(crate::server::activity::now_ns);
                self.server.job_runs.set_next_start(db, id, Some(first));
                Ok(Datum::Int32(id))
            }
            Added::Same => {
                self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("{message}, skipping"));
                Ok(Datum::Int32(-1))
            }
            Added::Different => {
                let mut w = DbError::new(sqlstate::WARNING, message)
                    .with_detail("A policy already exists with different arguments.")
                    .with_hint("Remove the existing policy before adding a new one.");
                w.severity = "WARNING";
                self.notices.push(w);
                Ok(Datum::Int32(-1))
            }
        }
    }

    /// remove_retention_policy / remove_compression_policy (void).
    pub(super) fn remove_policy(&mut self, table: &TableDef, policy: Policy, if_exists: bool) -> DbResult<Datum> {
        let removed = self.update_timescale(table.oid, |db| {
            let Some(id) = db.timescale.policy_job(table.oid, &policy).map(|j| j.id) else {
                return Ok(None);
            };
            db.timescale.jobs.remove(&id);
            Ok(Some(id))
        })?;
        match removed {
            Some(id) => self.server.job_runs.forget(self.database_oid(), id),
            None => {
                let message = policy_message(&policy, "not found", table);
                if !if_exists {
                    return Err(DbError::new(sqlstate::UNDEFINED_OBJECT, message));
                }
                self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("{message}, skipping"));
            }
        }
        Ok(Datum::text(""))
    }

    /// delete_job(id) (void).
    pub(super) fn delete_job(&mut self, id: i32) -> DbResult<Datum> {
        let table = self.job_table(id)?.ok_or_else(|| job_not_found(id))?;
        self.update_timescale(table, |db| {
            db.timescale.jobs.remove(&id).map(|_| ()).ok_or_else(|| job_not_found(id))
        })?;
        self.server.job_runs.forget(self.database_oid(), id);
        Ok(Datum::text(""))
    }

    /// alter_job(id, …): TimescaleDB's result record (job_id,
    /// schedule_interval, max_runtime, max_retries, retry_period, scheduled,
    /// config, next_start, check_config, fixed_schedule, initial_start, timezone).
    pub(super) fn alter_job(&mut self, id: i32, changes: &JobChanges, if_exists: bool) -> DbResult<Datum> {
        let job = match self.job_table(id)? {
            None => None,
            Some(table) => self.update_timescale(table, |db| {
                let Some(job) = db.timescale.jobs.get_mut(&id) else { return Ok(None) };
                if let Some(iv) = changes.schedule_interval {
                    if crate::types::datetime::interval_nanos_30_day_months(iv) <= 0 {
                        return Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "schedule interval must be positive"));
                    }
                    job.schedule_interval = iv;
                }
                if let Some(s) = changes.scheduled {
                    job.scheduled = s;
                }
                Ok(Some(job.clone()))
            })?,
        };
        let Some(job) = job else {
            if if_exists {
                self.notice(sqlstate::SUCCESSFUL_COMPLETION, format!("job {id} not found, skipping"));
                return Ok(Datum::Null);
            }
            return Err(job_not_found(id));
        };
        let db = self.database_oid();
        if let Some(at) = changes.next_start {
            self.server.job_runs.set_next_start(db, id, Some(at));
        }
        let zone = self.eval_context().format.zone;
        let next_start = crate::sql::jobs::next_start(&self.server, db, &job);
        let fields = [
            id.to_string(),
            crate::sql::jobs::interval_text(job.schedule_interval),
            "00:05:00".into(),
            "-1".into(),
            "00:05:00".into(),
            if job.scheduled { "t" } else { "f" }.into(),
            crate::sql::jobs::config_text(&job),
            crate::sql::jobs::timestamptz_text(next_start, zone),
            format!("_timescaledb_functions.{}_check", job.policy.proc_name()),
            if job.initial_start.is_some() { "t" } else { "f" }.into(),
            job.initial_start.map(|t| crate::sql::jobs::timestamptz_text(t, zone)).unwrap_or_default(),
            String::new(),
        ];
        Ok(Datum::text(record_text(&fields)))
    }

    /// `CALL run_job(id)`: runs the job now, in this session, whatever its schedule.
    pub(super) async fn call_run_job(&mut self, call: &ast::Function) -> DbResult<StatementResult> {
        if self.txn != TxnState::Idle {
            return Err(DbError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "run_job() cannot run inside a transaction block",
            ));
        }
        let id = match &call.args {
            ast::FunctionArguments::List(list) => match list.args.as_slice() {
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))] => job_id_literal(e),
                _ => None,
            },
            _ => None,
        }
        .ok_or_else(|| DbError::unsupported("run_job() takes one job id given as a number"))?;
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?.clone();
        let job = db.timescale.jobs.get(&id).cloned().ok_or_else(|| job_not_found(id))?;
        crate::sql::jobs::run_recorded(&self.server, &db, &job).await?;
        Ok(StatementResult::Command("CALL".into()))
    }

    /// `ALTER TABLE t SET (timescaledb.compress [= true|false],
    /// timescaledb.compress_segmentby = '…', timescaledb.compress_orderby = '…')`.
    pub(super) fn set_compression_options(&mut self, table: &Arc<TableDef>, options: &[ast::SqlOption]) -> DbResult<()> {
        let mut enable: Option<bool> = None;
        let mut segment_by: Option<Vec<String>> = None;
        let mut order_by: Option<String> = None;
        for option in options {
            let (key, value) = storage_option(option)?;
            match key.as_str() {
                "timescaledb.compress" => {
                    let v = value.as_deref();
                    enable = Some(option_bool(v).ok_or_else(|| {
                        DbError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("invalid value for timescaledb.compress '{}'", v.unwrap_or_default()),
                        )
                    })?);
                }
                "timescaledb.compress_segmentby" => {
                    let list = value.unwrap_or_default();
                    let mut columns = Vec::new();
                    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        let name = unquote_identifier(name);
                        if table.column_index(&name).is_none() {
                            return Err(DbError::new(
                                sqlstate::UNDEFINED_COLUMN,
                                format!("column \"{name}\" does not exist"),
                            )
                            .with_hint("The timescaledb.compress_segmentby option must reference a valid column."));
                        }
                        columns.push(name);
                    }
                    segment_by = Some(columns);
                }
                "timescaledb.compress_orderby" => order_by = Some(value.unwrap_or_default()),
                "timescaledb.compress_chunk_time_interval" => {}
                other => {
                    return Err(DbError::unsupported(format!(
                        "ALTER TABLE … SET ({other}): storage parameters other than TimescaleDB's compression settings"
                    )))
                }
            }
        }
        if table.time_column.is_none() {
            return Err(DbError::new("TS001", format!("table \"{}\" is not a hypertable", table.name)));
        }
        self.update_timescale(table.oid, |db| {
            if enable == Some(false) {
                if db.timescale.policy_job(table.oid, &Policy::Compression { compress_after: Default::default() }).is_some() {
                    return Err(DbError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("cannot disable compression on hypertable \"{}\"", table.name),
                    )
                    .with_hint("Remove the compression policy first."));
                }
                db.timescale.compression.remove(&table.oid);
                return Ok(());
            }
            // Settings without `timescaledb.compress` change an enabled table's, or enable it.
            let settings = db.timescale.compression.entry(table.oid).or_insert_with(CompressionSettings::default);
            if let Some(s) = segment_by {
                settings.segment_by = s;
            }
            if let Some(o) = order_by {
                settings.order_by = o;
            }
            Ok(())
        })
    }
}

/// A `WITH (…)`/`SET (…)` option: its key in lower case and its value as
/// text (a string literal's contents; None when given bare, `(opt)`).
pub(super) fn storage_option(option: &ast::SqlOption) -> DbResult<(String, Option<String>)> {
    match option {
        ast::SqlOption::Ident(name) => Ok((name.to_string().to_lowercase(), None)),
        ast::SqlOption::KeyValue { key, value } => {
            let text = match value {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                },
                ast::Expr::Identifier(i) => i.value.clone(),
                other => other.to_string(),
            };
            Ok((key.to_string().to_lowercase(), Some(text)))
        }
        other => Err(DbError::unsupported(format!("the option {other}"))),
    }
}

/// A boolean option's value (bare: true); None when it is not a boolean.
pub(super) fn option_bool(value: Option<&str>) -> Option<bool> {
    match value.map(str::to_lowercase).as_deref() {
        None | Some("true" | "on" | "1" | "t" | "yes") => Some(true),
        Some("false" | "off" | "0" | "f" | "no") => Some(false),
        _ => None,
    }
}

fn job_id_literal(e: &ast::Expr) -> Option<i32> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => job_id_literal(expr),
        _ => None,
    }
}

/// `"Device"` → `Device`, `device` → `device`, `Device` → `device`.
fn unquote_identifier(name: &str) -> String {
    match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\"\"", "\""),
        None => name.to_lowercase(),
    }
}

/// A record's text form: fields quoted where PostgreSQL's record_out
/// quotes them (empty: NULL).
fn record_text(fields: &[String]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|f| {
            if f.is_empty() {
                String::new()
            } else if f.chars().any(|c| matches!(c, ',' | '(' | ')' | '"' | '\\' | ' ')) {
                format!("\"{}\"", f.replace('\\', "\\\\").replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect();
    format!("({})", parts.join(","))
}
