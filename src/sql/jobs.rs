//! TimescaleDB's background jobs, run: what a job does (a retention policy
//! drops the chunks whose time range ended `drop_after` ago, as
//! `drop_chunks`; a compression policy brings rows still in memory into
//! compressed segment files with a checkpoint, then merges each
//! partition's segments, as `brewric_compact`; a continuous aggregate
//! policy refreshes the buckets between its offsets), the scheduler (one task on
//! shard 0: every second it runs the scheduled jobs that are due, one at a
//! time), and `run_recorded`, which runs one job and records the run in
//! the server's `JobRuns` (the scheduler and `CALL run_job` both use it).
//! Also the text forms `timescaledb_information.jobs` and `alter_job` show.
//! Must not: change the jobs' definitions (the session does).

use std::sync::Arc;
use std::time::Duration;

use crate::catalog::timescale::{JobDef, Policy};
use crate::catalog::{Database, TableDef};
use crate::error::{DbError, DbResult};
use crate::server::activity::now_ns;
use crate::server::Server;
use crate::storage::retention::Dropped;
use crate::types::zone::Zone;
use crate::types::Interval;

/// How often the scheduler looks for due jobs.
const SCHEDULER_TICK: Duration = Duration::from_secs(1);

/// `drop_chunks(table, cutoff)` as a session and a retention job run it:
/// after any block that rewrote rows (it holds the rewrite lock until it
/// ends, and its COMMIT would write the dropped rows back).
pub async fn drop_chunks_now(server: &Server, table: &TableDef, cutoff: i64) -> DbResult<Dropped> {
    let _shared = server.rewrites.read().await;
    let dropped = crate::storage::retention::drop_chunks(server, table, cutoff).await?;
    // Series times stay upper bounds when rows go.
    server.unique_keys.forget_table(table.oid);
    Ok(dropped)
}

/// Whether an open transaction block changed `table`'s jobs (its change
/// may yet be rolled back: the scheduler waits for the block to end).
fn changed_by_open_block(db: &Database, table: u32) -> bool {
    db.block_undo
        .iter()
        .any(|e| matches!(&e.undo, crate::catalog::BlockUndo::TimescaleChanged { table: t, .. } if *t == table))
}

/// Does the job's work once.
async fn run_job(server: &Arc<Server>, db: &Database, job: &JobDef) -> DbResult<()> {
    let table = db.table_by_oid(job.table).ok_or_else(|| {
        DbError::new(
            "TS001",
            format!("hypertable of job {} (OID {}) does not exist", job.id, job.table),
        )
    })?;
    match job.policy {
        Policy::Retention { drop_after } => {
            let cutoff = crate::types::datetime::timestamp_sub_interval(now_ns(), drop_after)?;
            drop_chunks_now(server, table, cutoff).await?;
        }
        Policy::Compression { .. } => {
            crate::storage::checkpoint::checkpoint(server).await?;
            crate::storage::compaction::compact(server).await?;
        }
        Policy::Refresh { start_offset, end_offset } => {
            let now = now_ns();
            let before_now = |offset: Option<Interval>| {
                offset.map(|iv| crate::types::datetime::timestamp_sub_interval(now, iv)).transpose()
            };
            let window = (before_now(start_offset)?, before_now(end_offset)?);
            let refreshed = crate::sql::continuous_aggregates::refresh(server, &db.name, job.table, window, 0).await;
            // A policy's window may hold no whole bucket yet: nothing to do, not a failure.
            match refreshed {
                Err(e) if e.code == crate::error::sqlstate::INVALID_PARAMETER_VALUE && e.message.contains("too small") => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// A started run: records its end, also when the run is dropped unfinished
/// (its session went away), so that the job is not left "running".
struct RunRecord<'a> {
    server: &'a Server,
    db: u32,
    job: &'a JobDef,
    finished: bool,
}

impl RunRecord<'_> {
    fn finish(mut self, outcome: Result<(), String>) {
        self.finished = true;
        self.server.job_runs.finish(self.db, self.job, now_ns(), outcome);
    }
}

impl Drop for RunRecord<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.server.job_runs.finish(self.db, self.job, now_ns(), Err("the run was cut short".into()));
        }
    }
}

/// Runs `job` now and records the run (its outcome, when it is due again).
/// A job already running elsewhere is not started twice.
pub async fn run_recorded(server: &Arc<Server>, db: &Database, job: &JobDef) -> DbResult<()> {
    if !server.job_runs.start(db.oid, job.id, now_ns()) {
        return Err(DbError::new(
            crate::error::sqlstate::OBJECT_IN_USE,
            format!("job {} is already running", job.id),
        ));
    }
    let record = RunRecord { server, db: db.oid, job, finished: false };
    let outcome = run_job(server, db, job).await;
    record.finish(outcome.as_ref().map(|_| ()).map_err(|e| e.message.clone()));
    outcome
}

/// When `job` runs next: as recorded, or at once (a job the scheduler has
/// not seen since the server started).
pub fn next_start(server: &Server, db: u32, job: &JobDef) -> i64 {
    server.job_runs.get(db, job.id).next_start.unwrap_or_else(now_ns)
}

/// The scheduler: runs forever on the shard it was spawned on.
pub async fn run_scheduler(server: Arc<Server>) {
    loop {
        tokio::time::sleep(SCHEDULER_TICK).await;
        let catalog = server.catalog.snapshot();
        for db in catalog.databases.values() {
            for job in db.timescale.jobs.values() {
                if !job.scheduled || db.table_by_oid(job.table).is_none() || changed_by_open_block(db, job.table) {
                    continue;
                }
                let run = server.job_runs.get(db.oid, job.id);
                if run.running || run.next_start.is_some_and(|at| at > now_ns()) {
                    continue;
                }
                if let Err(e) = run_recorded(&server, db, job).await {
                    eprintln!("brewricd: job {} ({}) failed: {}", job.id, job.policy.application_name(job.id), e.message);
                }
            }
        }
    }
}

pub fn interval_text(iv: Interval) -> String {
    let mut out = Vec::new();
    crate::types::text::format_interval(iv, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

pub fn timestamptz_text(ns: i64, zone: Zone) -> String {
    let mut out = Vec::new();
    crate::types::text::format_timestamptz(ns, zone, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The job's config as TimescaleDB shows it (jsonb text):
/// `{"drop_after": "7 days", "hypertable_id": 16384}`.
pub fn config_text(job: &JobDef) -> String {
    let mut config = serde_json::Map::new();
    for (key, window) in job.policy.config() {
        config.insert(key.into(), window.map_or(serde_json::Value::Null, |w| interval_text(w).into()));
    }
    config.insert(job.policy.table_key().into(), job.table.into());
    let json = serde_json::Value::Object(config).to_string();
    crate::types::text::parse_jsonb(&json).unwrap_or(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_dropped_unfinished_is_recorded_as_failed_and_not_left_running() {
        let server = Server::new(crate::catalog::CatalogStore::new(), Vec::new(), 0, 0, Default::default());
        let day = Interval { months: 0, days: 1, micros: 0 };
        let job = JobDef { id: 1000, policy: Policy::Retention { drop_after: day }, table: 1, schedule_interval: day, scheduled: true, initial_start: None };
        assert!(server.job_runs.start(1, job.id, now_ns()));
        drop(RunRecord { server: &server, db: 1, job: &job, finished: false });
        let run = server.job_runs.get(1, job.id);
        assert!(!run.running);
        assert_eq!((run.last_succeeded, run.total_failures), (Some(false), 1));
        assert!(server.job_runs.start(1, job.id, now_ns()), "the job can run again");
        RunRecord { server: &server, db: 1, job: &job, finished: false }.finish(Ok(()));
        assert_eq!(server.job_runs.get(1, job.id).total_successes, 1);
    }
}
