//! Binding of TimescaleDB's policy and job functions —
//! `add_retention_policy`, `remove_retention_policy`,
//! `add_compression_policy`, `remove_compression_policy`, `alter_job`,
//! `delete_job` — into `Effect`s, with their arguments (positional or
//! named, as TimescaleDB 2 declares them) checked and made constants.
//! Must not: change the catalog or run jobs (the session runs the effects).

use std::sync::Arc;

use super::{Binder, Effect};
use crate::catalog::timescale::Policy;
use crate::catalog::TableDef;
use crate::error::{sqlstate, DbError, DbResult};
use crate::sql::plan::Expr;
use crate::types::{DataType, Datum, Interval};

/// A retention policy's default schedule (TimescaleDB's: one day).
pub const RETENTION_SCHEDULE: Interval = Interval { months: 0, days: 1, micros: 0 };
/// A compression policy's default schedule: half the chunk interval (Brewric's chunks are days).
pub const COMPRESSION_SCHEDULE: Interval = Interval { months: 0, days: 0, micros: 12 * 3_600_000_000 };

/// The calls bound here.
pub const JOB_FUNCTIONS: &[&str] = &[
    "add_retention_policy",
    "remove_retention_policy",
    "add_compression_policy",
    "remove_compression_policy",
    "add_continuous_aggregate_policy",
    "remove_continuous_aggregate_policy",
    "alter_job",
    "delete_job",
];

/// What `alter_job` changes (None: left as it is).
#[derive(Debug, Clone, Default)]
pub struct JobChanges {
    pub schedule_interval: Option<Interval>,
    pub scheduled: Option<bool>,
    pub next_start: Option<i64>,
}

impl Binder<'_> {
    /// `name(args…)` for one of [`JOB_FUNCTIONS`].
    pub(super) fn bind_job_function(&mut self, name: &str, args: Vec<Expr>, named: Vec<(String, Expr)>) -> DbResult<Effect> {
        let positional: &[&str] = match name {
            "add_retention_policy" => &["relation", "drop_after", "if_not_exists", "schedule_interval", "initial_start", "timezone"],
            "add_compression_policy" => &["hypertable", "compress_after", "if_not_exists", "schedule_interval", "initial_start", "timezone"],
            "remove_retention_policy" => &["relation", "if_exists"],
            "remove_compression_policy" => &["hypertable", "if_exists"],
            "add_continuous_aggregate_policy" => &[
                "continuous_aggregate", "start_offset", "end_offset", "schedule_interval", "if_not_exists", "initial_start",
                "timezone",
            ],
            "remove_continuous_aggregate_policy" => &["continuous_aggregate", "if_not_exists", "if_exists"],
            "delete_job" => &["job_id"],
            _ => &[
                "job_id", "schedule_interval", "max_runtime", "max_retries", "retry_period", "scheduled", "config",
                "next_start", "if_exists",
            ],
        };
        if args.len() > positional.len() {
            return Err(no_such_function(name));
        }
        let mut given: Vec<(String, Expr)> =
            positional.iter().map(|p| p.to_string()).zip(args).chain(named).collect();
        let mut take = |key: &str| given.iter().position(|(n, _)| n == key).map(|i| given.swap_remove(i).1);
        let effect = match name {
            "add_retention_policy" | "add_compression_policy" => {
                let retention = name == "add_retention_policy";
                let (table_key, window_key) =
                    if retention { ("relation", "drop_after") } else { ("hypertable", "compress_after") };
                let table = self.hypertable_arg(name, take(table_key))?;
                let window = self.window_arg(window_key, take(window_key))?;
                let if_not_exists = self.bool_arg(take("if_not_exists"))?.unwrap_or(false);
                let schedule_interval = self.interval_arg("schedule_interval", take("schedule_interval"))?;
                let initial_start = self.timestamp_arg("initial_start", take("initial_start"))?;
                if let Some(zone) = take("timezone") {
                    if !matches!(self.constant(&zone)?.0, Datum::Null) {
                        return Err(DbError::unsupported(format!("{name}() with a timezone")));
                    }
                }
                let policy = if retention {
                    Policy::Retention { drop_after: window }
                } else {
                    Policy::Compression { compress_after: window }
                };
                Effect::AddPolicy { table, policy, if_not_exists, schedule_interval, initial_start }
            }
            "remove_retention_policy" | "remove_compression_policy" => {
                let retention = name == "remove_retention_policy";
                let table = self.hypertable_arg(name, take(if retention { "relation" } else { "hypertable" }))?;
                let if_exists = self.bool_arg(take("if_exists"))?.unwrap_or(false);
                let policy = if retention {
                    Policy::Retention { drop_after: Interval::default() }
                } else {
                    Policy::Compression { compress_after: Interval::default() }
                };
                Effect::RemovePolicy { table, policy, if_exists }
            }
            "add_continuous_aggregate_policy" => {
                let table = self.continuous_aggregate_arg(name, take("continuous_aggregate"))?;
                let start_offset = self.interval_arg("start_offset", take("start_offset"))?;
                let end_offset = self.interval_arg("end_offset", take("end_offset"))?;
                let schedule_interval = self.interval_arg("schedule_interval", take("schedule_interval"))?;
                if schedule_interval.is_none() {
                    return Err(no_such_function(name));
                }
                let if_not_exists = self.bool_arg(take("if_not_exists"))?.unwrap_or(false);
                let initial_start = self.timestamp_arg("initial_start", take("initial_start"))?;
                if let Some(zone) = take("timezone") {
                    if !matches!(self.constant(&zone)?.0, Datum::Null) {
                        return Err(DbError::unsupported(format!("{name}() with a timezone")));
                    }
                }
                if let (Some(start), Some(end), Some(width)) = (
                    start_offset,
                    end_offset,
                    self.db.timescale.continuous.get(&table.oid).map(|c| c.bucket_width),
                ) {
                    let ns = crate::types::datetime::interval_nanos_30_day_months;
                    if ns(start).saturating_sub(ns(end)) < ns(width).saturating_mul(2) {
                        return Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "policy refresh window too small")
                            .with_detail("The start and end offsets must cover at least two buckets in the valid time range of type \"timestamp with time zone\"."));
                    }
                }
                let policy = Policy::Refresh { start_offset, end_offset };
                Effect::AddPolicy { table, policy, if_not_exists, schedule_interval, initial_start }
            }
            "remove_continuous_aggregate_policy" => {
                let table = self.continuous_aggregate_arg(name, take("continuous_aggregate"))?;
                let if_exists = self.bool_arg(take("if_exists"))?.unwrap_or(false) || self.bool_arg(take("if_not_exists"))?.unwrap_or(false);
                Effect::RemovePolicy { table, policy: Policy::Refresh { start_offset: None, end_offset: None }, if_exists }
            }
            "delete_job" => Effect::DeleteJob { id: self.job_id_arg(take("job_id"))? },
            _ => {
                let id = self.job_id_arg(take("job_id"))?;
                let changes = JobChanges {
                    schedule_interval: self.interval_arg("schedule_interval", take("schedule_interval"))?,
                    scheduled: self.bool_arg(take("scheduled"))?,
                    next_start: self.timestamp_arg("next_start", take("next_start"))?,
                };
                let if_exists = self.bool_arg(take("if_exists"))?.unwrap_or(false);
                for unsupported in ["max_runtime", "max_retries", "retry_period", "config"] {
                    if let Some(e) = take(unsupported) {
                        if !matches!(self.constant(&e)?.0, Datum::Null) {
                            return Err(DbError::unsupported(format!("alter_job() with {unsupported}")));
                        }
                    }
                }
                Effect::AlterJob { id, changes, if_exists }
            }
        };
        if let Some((n, _)) = given.first() {
            return Err(DbError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {name}() has no argument {n}"),
            ));
        }
        Ok(effect)
    }

    /// The table a required relation argument names.
    fn relation_arg(&mut self, func: &str, arg: Option<Expr>) -> DbResult<Arc<TableDef>> {
        let arg = arg.ok_or_else(|| no_such_function(func))?;
        self.table_arg(func, &arg)?.ok_or_else(|| DbError::unsupported(format!("{func}() of a NULL relation")))
    }

    /// The hypertable a policy names: a table with a time column.
    fn hypertable_arg(&mut self, func: &str, arg: Option<Expr>) -> DbResult<Arc<TableDef>> {
        let table = self.relation_arg(func, arg)?;
        if table.time_column.is_none() {
            return Err(DbError::new(
                "TS001",
                format!("\"{}\" is not a hypertable or a continuous aggregate", table.name),
            ));
        }
        Ok(table)
    }

    /// The continuous aggregate a policy names.
    fn continuous_aggregate_arg(&mut self, func: &str, arg: Option<Expr>) -> DbResult<Arc<TableDef>> {
        let table = self.relation_arg(func, arg)?;
        if !self.db.timescale.continuous.contains_key(&table.oid) {
            return Err(DbError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("\"{}\" is not a continuous aggregate", table.name),
            ));
        }
        Ok(table)
    }

    /// drop_after / compress_after: an interval, as a timestamp time column needs.
    fn window_arg(&mut self, key: &str, arg: Option<Expr>) -> DbResult<Interval> {
        let invalid = || {
            DbError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter {key}")).with_hint(
                "Interval time duration is required for hypertable with timestamp-based time dimension.",
            )
        };
        let arg = arg.ok_or_else(invalid)?;
        if matches!(arg.data_type(), DataType::Int16 | DataType::Int32 | DataType::Int64) {
            return Err(invalid());
        }
        match self.interval_arg(key, Some(arg))? {
            Some(iv) => Ok(iv),
            None => Err(invalid()),
        }
    }

    /// An optional argument coerced to `t` and made a constant (None: not given).
    fn constant_arg(&mut self, key: &str, arg: Option<Expr>, t: DataType) -> DbResult<Option<Datum>> {
        let Some(arg) = arg else { return Ok(None) };
        let arg = self.coerce(arg, t, key)?;
        Ok(Some(self.constant_with(&arg, &self.effect_params)?.0))
    }

    fn interval_arg(&mut self, key: &str, arg: Option<Expr>) -> DbResult<Option<Interval>> {
        Ok(match self.constant_arg(key, arg, DataType::Interval)? {
            Some(Datum::Interval(iv)) => Some(iv),
            _ => None,
        })
    }

    fn timestamp_arg(&mut self, key: &str, arg: Option<Expr>) -> DbResult<Option<i64>> {
        Ok(match self.constant_arg(key, arg, DataType::TimestampTz)? {
            Some(Datum::Int64(ts)) => Some(ts),
            _ => None,
        })
    }

    fn bool_arg(&mut self, arg: Option<Expr>) -> DbResult<Option<bool>> {
        Ok(match self.constant_arg("argument", arg, DataType::Bool)? {
            Some(Datum::Bool(b)) => Some(b),
            _ => None,
        })
    }

    fn job_id_arg(&mut self, arg: Option<Expr>) -> DbResult<i32> {
        let arg = arg.ok_or_else(|| no_such_function("job function"))?;
        let arg = self.coerce(arg, DataType::Int32, "job_id")?;
        match self.constant_with(&arg, &self.effect_params)?.0 {
            Datum::Int32(id) => Ok(id),
            Datum::Int64(id) => i32::try_from(id).map_err(|_| DbError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")),
            _ => Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "job ID cannot be NULL")),
        }
    }
}

fn no_such_function(name: &str) -> DbError {
    DbError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("function {name}() does not exist with these arguments"),
    )
    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

impl Binder<'_> {
    /// `show_chunks(relation [, older_than, newer_than])`: the hypertable's
    /// chunk names as a text array, for unnest (see `bind_table_func_call`).
    /// The chunks come from the shards (`chunk_facts`, gathered on a second bind).
    pub(super) fn show_chunks_array(&mut self, args: &[sqlparser::ast::FunctionArg]) -> DbResult<Expr> {
        use sqlparser::ast::{FunctionArg, FunctionArgExpr};
        let positional = ["relation", "older_than", "newer_than"];
        let mut given: Vec<(String, Expr)> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let (name, e) = match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => {
                    (positional.get(i).ok_or_else(|| no_such_function("show_chunks"))?.to_string(), e)
                }
                FunctionArg::Named { name, arg: FunctionArgExpr::Expr(e), .. } => (super::ident_name(name), e),
                FunctionArg::ExprNamed { name: sqlparser::ast::Expr::Identifier(name), arg: FunctionArgExpr::Expr(e), .. } => {
                    (super::ident_name(name), e)
                }
                _ => return Err(no_such_function("show_chunks")),
            };
            let bound = self.bind_expr(e, &super::Scope::default(), None)?;
            given.push((name, bound));
        }
        let mut table = None;
        let (mut older, mut newer) = (None, None);
        for (name, e) in given {
            match name.as_str() {
                "relation" => table = Some(self.hypertable_arg("show_chunks", Some(e))?),
                "older_than" => older = self.cutoff_arg(e)?,
                "newer_than" => newer = self.cutoff_arg(e)?,
                other => {
                    return Err(DbError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function show_chunks() has no argument {other}"),
                    ))
                }
            }
        }
        let table = table.ok_or_else(|| no_such_function("show_chunks"))?;
        let names: Vec<Datum> = match &self.chunk_facts {
            None => {
                self.wants_chunk_facts = true;
                Vec::new()
            }
            Some(facts) => {
                let mut partitions: Vec<i64> = facts.iter().filter(|f| f.table == table.oid).map(|f| f.partition).collect();
                partitions.sort_unstable();
                partitions.dedup();
                let day = crate::storage::flush::PARTITION_NS;
                partitions
                    .into_iter()
                    .filter(|p| older.is_none_or(|cut| p.saturating_add(1).saturating_mul(day) <= cut))
                    .filter(|p| newer.is_none_or(|cut| p.saturating_mul(day) >= cut))
                    .map(|p| {
                        Datum::text(format!(
                            "{}.{}",
                            crate::catalog::system::timescaledb_information::CHUNK_SCHEMA,
                            crate::catalog::system::timescaledb_information::chunk_name(table.oid, p)
                        ))
                    })
                    .collect()
            }
        };
        let elem = crate::types::array::ArrayElem::Text;
        Ok(Expr::Literal(Datum::Bytes(crate::types::array::ArrayValue::of(names).encode(elem)), DataType::Array(elem)))
    }

    /// older_than / newer_than: an interval before now, or a point in time.
    fn cutoff_arg(&mut self, e: Expr) -> DbResult<Option<i64>> {
        if matches!(e.data_type(), DataType::Timestamp | DataType::TimestampTz | DataType::Date) {
            return self.timestamp_arg("older_than", Some(e));
        }
        Ok(match self.interval_arg("older_than", Some(e))? {
            Some(iv) => Some(crate::types::datetime::timestamp_sub_interval(self.eval.statement_time_ns, iv)?),
            None => None,
        })
    }
}
