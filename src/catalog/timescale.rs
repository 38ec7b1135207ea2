//! TimescaleDB's per-database state beyond the tables themselves: the
//! background jobs its policies make (`add_retention_policy`,
//! `add_compression_policy`, `add_continuous_aggregate_policy`; what
//! `timescaledb_information.jobs` lists), the compression settings `ALTER
//! TABLE … SET (timescaledb.compress, …)` gives a hypertable, and the
//! continuous aggregates (`CREATE MATERIALIZED VIEW … WITH
//! (timescaledb.continuous)`: a table holding the query's buckets, and the
//! query that refreshes them). All name their table by OID, so a rename
//! keeps them and a table brought back by ROLLBACK (same OID) finds them
//! again; those whose table is gone for good are pruned
//! (`Database::prune_timescale`).
//! Must not: run jobs or know when they run (`sql/jobs.rs` runs them, the
//! server's `JobRuns` keeps their run history).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::types::Interval;

/// The first id a job gets (TimescaleDB's own jobs take those below).
pub const FIRST_JOB_ID: i32 = 1000;

/// A policy's background job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobDef {
    pub id: i32,
    pub policy: Policy,
    /// The hypertable it acts on.
    pub table: u32,
    pub schedule_interval: Interval,
    /// false: kept but not run by the scheduler (`alter_job(id, scheduled => false)`).
    pub scheduled: bool,
    /// A fixed schedule's start (ns since the Unix epoch): runs fall at
    /// `initial_start + k × schedule_interval`; None: each run is due
    /// `schedule_interval` after the previous one finished.
    pub initial_start: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// Drops the chunks whose time range ends `drop_after` before now.
    Retention { drop_after: Interval },
    /// Brings the segments of chunks older than `compress_after` into their
    /// compressed, merged form (every flushed segment is compressed already).
    Compression { compress_after: Interval },
    /// Refreshes a continuous aggregate's buckets from `start_offset` to
    /// `end_offset` before now (None: unbounded that way).
    Refresh { start_offset: Option<Interval>, end_offset: Option<Interval> },
}

impl Policy {
    /// TimescaleDB's procedure name, as `timescaledb_information.jobs.proc_name` shows it.
    pub fn proc_name(&self) -> &'static str {
        match self {
            Policy::Retention { .. } => "policy_retention",
            Policy::Compression { .. } => "policy_compression",
            Policy::Refresh { .. } => "policy_refresh_continuous_aggregate",
        }
    }

    /// As `application_name` names the job.
    pub fn application_name(&self, id: i32) -> String {
        match self {
            Policy::Retention { .. } => format!("Retention Policy [{id}]"),
            Policy::Compression { .. } => format!("Compression Policy [{id}]"),
            Policy::Refresh { .. } => format!("Refresh Continuous Aggregate Policy [{id}]"),
        }
    }

    /// The policy's kind in messages: "retention policy".
    pub fn kind(&self) -> &'static str {
        match self {
            Policy::Retention { .. } => "retention policy",
            Policy::Compression { .. } => "compression policy",
            Policy::Refresh { .. } => "continuous aggregate policy",
        }
    }

    /// The job config's intervals by key (None: JSON null), as TimescaleDB writes them.
    pub fn config(&self) -> Vec<(&'static str, Option<Interval>)> {
        match *self {
            Policy::Retention { drop_after } => vec![("drop_after", Some(drop_after))],
            Policy::Compression { compress_after } => vec![("compress_after", Some(compress_after))],
            Policy::Refresh { start_offset, end_offset } => vec![("start_offset", start_offset), ("end_offset", end_offset)],
        }
    }

    /// The config key naming the table: a continuous aggregate's is its materialization's.
    pub fn table_key(&self) -> &'static str {
        match self {
            Policy::Refresh { .. } => "mat_hypertable_id",
            _ => "hypertable_id",
        }
    }

    fn same_kind(&self, other: &Policy) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// A continuous aggregate: the table holding its buckets (the catalog's
/// key), the query computing them, and what a refresh needs to compute
/// only some buckets again.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinuousAggregate {
    /// The SELECT as written (the view's definition).
    pub query: String,
    /// The hypertable it reads.
    pub source: u32,
    /// The table column holding `time_bucket(width, time)`.
    pub bucket_column: usize,
    pub bucket_width: Interval,
    /// The hypertable's time column as the query names it (time_bucket's
    /// second argument): a refresh bounds it.
    pub time_expr: String,
}

/// `ALTER TABLE … SET (timescaledb.compress, timescaledb.compress_segmentby = '…',
/// timescaledb.compress_orderby = '…')`, as given.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompressionSettings {
    pub segment_by: Vec<String>,
    /// The order as written (`"time" DESC`); empty: the time column descending.
    pub order_by: String,
}

/// The jobs and compression settings of one database.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timescale {
    pub jobs: BTreeMap<i32, JobDef>,
    /// The id the next job gets (never reused, as TimescaleDB's sequence).
    pub next_job_id: i32,
    /// Hypertables with compression enabled, by table OID.
    pub compression: BTreeMap<u32, CompressionSettings>,
    /// Continuous aggregates by the OID of the table holding their buckets.
    pub continuous: BTreeMap<u32, ContinuousAggregate>,
}

impl Timescale {
    /// The job of `policy`'s kind on `table`, if there is one (one per kind and table).
    pub fn policy_job(&self, table: u32, policy: &Policy) -> Option<&JobDef> {
        self.jobs.values().find(|j| j.table == table && j.policy.same_kind(policy))
    }

    /// Adds a job and returns its id.
    pub fn add_job(&mut self, policy: Policy, table: u32, schedule_interval: Interval, initial_start: Option<i64>) -> i32 {
        let id = self.next_job_id.max(FIRST_JOB_ID);
        self.next_job_id = id + 1;
        self.jobs.insert(id, JobDef { id, policy, table, schedule_interval, scheduled: true, initial_start });
        id
    }

    /// `table`'s jobs and compression settings alone (what a block's undo keeps).
    pub fn of_table(&self, table: u32) -> Timescale {
        Timescale {
            jobs: self.jobs.iter().filter(|(_, j)| j.table == table).map(|(id, j)| (*id, j.clone())).collect(),
            next_job_id: 0,
            compression: self.compression.get(&table).map(|c| (table, c.clone())).into_iter().collect(),
            continuous: self.continuous.get(&table).map(|c| (table, c.clone())).into_iter().collect(),
        }
    }

    /// Puts `table`'s jobs and settings back as `before` (from `of_table`) had them.
    pub fn restore_table(&mut self, table: u32, before: &Timescale) {
        self.jobs.retain(|_, j| j.table != table);
        self.jobs.extend(before.jobs.iter().map(|(id, j)| (*id, j.clone())));
        self.compression.remove(&table);
        self.compression.extend(before.compression.iter().map(|(t, c)| (*t, c.clone())));
        self.continuous.remove(&table);
        self.continuous.extend(before.continuous.iter().map(|(t, c)| (*t, c.clone())));
    }

    /// Keeps only the jobs and settings whose table `exists`.
    pub fn retain_tables(&mut self, exists: impl Fn(u32) -> bool) {
        self.jobs.retain(|_, j| exists(j.table));
        self.compression.retain(|t, _| exists(*t));
        self.continuous.retain(|t, _| exists(*t));
    }

    pub fn to_json(&self) -> Value {
        json!({
            "next_job_id": self.next_job_id,
            "jobs": self.jobs.values().map(|j| {
                let mut v = json!({
                    "id": j.id,
                    "proc": j.policy.proc_name(),
                    "table": j.table,
                    "schedule_interval": interval_json(j.schedule_interval),
                    "scheduled": j.scheduled,
                    "initial_start": j.initial_start,
                });
                for (key, window) in j.policy.config() {
                    v[key] = window.map_or(Value::Null, interval_json);
                }
                v
            }).collect::<Vec<_>>(),
            "continuous": self.continuous.iter().map(|(t, c)| json!({
                "table": t,
                "query": c.query,
                "source": c.source,
                "bucket_column": c.bucket_column,
                "bucket_width": interval_json(c.bucket_width),
                "time_expr": c.time_expr,
            })).collect::<Vec<_>>(),
            "compression": self.compression.iter().map(|(t, c)| json!({
                "table": t,
                "segment_by": c.segment_by,
                "order_by": c.order_by,
            })).collect::<Vec<_>>(),
        })
    }

    pub fn from_json(v: &Value) -> Result<Timescale, String> {
        let bad = |what: &str| format!("catalog.json: timescale {what} is malformed");
        let mut out = Timescale {
            next_job_id: v.get("next_job_id").and_then(Value::as_i64).ok_or_else(|| bad("next_job_id"))? as i32,
            ..Timescale::default()
        };
        for j in v.get("jobs").and_then(Value::as_array).ok_or_else(|| bad("jobs"))? {
            let int = |k: &str| j.get(k).and_then(Value::as_i64).ok_or_else(|| bad(&format!("job {k}")));
            let interval = |k: &str| j.get(k).and_then(interval_from).ok_or_else(|| bad(&format!("job {k}")));
            let optional = |k: &str| j.get(k).and_then(interval_from);
            let policy = match j.get("proc").and_then(Value::as_str) {
                Some("policy_retention") => Policy::Retention { drop_after: interval("drop_after")? },
                Some("policy_compression") => Policy::Compression { compress_after: interval("compress_after")? },
                Some("policy_refresh_continuous_aggregate") => {
                    Policy::Refresh { start_offset: optional("start_offset"), end_offset: optional("end_offset") }
                }
                _ => return Err(bad("job proc")),
            };
            let job = JobDef {
                id: int("id")? as i32,
                policy,
                table: int("table")? as u32,
                schedule_interval: interval("schedule_interval")?,
                scheduled: j.get("scheduled").and_then(Value::as_bool).ok_or_else(|| bad("job scheduled"))?,
                initial_start: j.get("initial_start").and_then(Value::as_i64),
            };
            out.jobs.insert(job.id, job);
        }
        for c in v.get("compression").and_then(Value::as_array).ok_or_else(|| bad("compression"))? {
            let table = c.get("table").and_then(Value::as_u64).ok_or_else(|| bad("compression table"))? as u32;
            let segment_by = c
                .get("segment_by")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("compression segment_by"))?
                .iter()
                .map(|s| s.as_str().map(str::to_string).ok_or_else(|| bad("compression segment_by")))
                .collect::<Result<_, _>>()?;
            let order_by = c.get("order_by").and_then(Value::as_str).ok_or_else(|| bad("compression order_by"))?.to_string();
            out.compression.insert(table, CompressionSettings { segment_by, order_by });
        }
        // Absent in files written before continuous aggregates.
        for c in v.get("continuous").and_then(Value::as_array).into_iter().flatten() {
            let int = |k: &str| c.get(k).and_then(Value::as_u64).ok_or_else(|| bad(&format!("continuous {k}")));
            let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string).ok_or_else(|| bad(&format!("continuous {k}")));
            out.continuous.insert(
                int("table")? as u32,
                ContinuousAggregate {
                    query: text("query")?,
                    source: int("source")? as u32,
                    bucket_column: int("bucket_column")? as usize,
                    bucket_width: c.get("bucket_width").and_then(interval_from).ok_or_else(|| bad("continuous bucket_width"))?,
                    time_expr: text("time_expr")?,
                },
            );
        }
        Ok(out)
    }
}

fn interval_json(iv: Interval) -> Value {
    json!([iv.months, iv.days, iv.micros])
}

fn interval_from(v: &Value) -> Option<Interval> {
    let a = v.as_array()?;
    match a.as_slice() {
        [m, d, u] => Some(Interval { months: m.as_i64()? as i32, days: d.as_i64()? as i32, micros: u.as_i64()? }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_and_settings_round_trip_through_json() {
        let mut t = Timescale::default();
        let week = Interval { months: 0, days: 7, micros: 0 };
        let day = Interval { months: 0, days: 1, micros: 0 };
        let a = t.add_job(Policy::Retention { drop_after: week }, 16_400, day, None);
        let b = t.add_job(Policy::Compression { compress_after: day }, 16_400, Interval { months: 0, days: 0, micros: 43_200_000_000 }, Some(5));
        assert_eq!((a, b), (FIRST_JOB_ID, FIRST_JOB_ID + 1));
        t.jobs.get_mut(&b).unwrap().scheduled = false;
        t.compression.insert(16_400, CompressionSettings { segment_by: vec!["device".into()], order_by: "\"time\" DESC".into() });
        let c = t.add_job(Policy::Refresh { start_offset: None, end_offset: Some(day) }, 16_401, day, None);
        t.continuous.insert(
            16_401,
            ContinuousAggregate {
                query: "SELECT time_bucket('1 day', time) AS d, avg(v) FROM m GROUP BY d".into(),
                source: 16_400,
                bucket_column: 0,
                bucket_width: day,
                time_expr: "time".into(),
            },
        );
        assert_eq!(c, FIRST_JOB_ID + 2);
        let back = Timescale::from_json(&t.to_json()).unwrap();
        assert_eq!(back, t);
        assert!(back.policy_job(16_400, &Policy::Retention { drop_after: day }).is_some_and(|j| j.id == a));
        assert!(back.policy_job(16_401, &Policy::Retention { drop_after: day }).is_none());
    }

    #[test]
    fn ids_are_not_reused_after_a_job_goes() {
        let mut t = Timescale::default();
        let day = Interval { months: 0, days: 1, micros: 0 };
        let a = t.add_job(Policy::Retention { drop_after: day }, 1, day, None);
        t.jobs.remove(&a);
        assert_eq!(t.add_job(Policy::Retention { drop_after: day }, 1, day, None), a + 1);
        t.retain_tables(|oid| oid != 1);
        assert!(t.jobs.is_empty());
    }
}
