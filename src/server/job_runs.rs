//! What TimescaleDB's `timescaledb_information.job_stats` shows: per job,
//! when it runs next and how its runs went (kept in memory: after a restart
//! every job starts with no history and is due at once, so a retention job
//! that a restart skipped runs then). The scheduler (`sql/jobs.rs`) asks
//! which jobs are due and records each run here.
//! Must not: run jobs or hold their definitions (the catalog does).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::catalog::timescale::JobDef;
use crate::types::datetime::{interval_nanos_30_day_months as interval_ns, timestamp_add_interval};
use crate::types::Interval;

/// After a failed run, the next try waits this long (TimescaleDB's default retry_period).
pub const RETRY_PERIOD_NS: i64 = 5 * 60 * 1_000_000_000;

/// One job's run history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobRun {
    /// When it is due next (ns); None: at once.
    pub next_start: Option<i64>,
    pub last_start: Option<i64>,
    pub last_finish: Option<i64>,
    pub last_successful_finish: Option<i64>,
    /// The last run's outcome (None: never ran).
    pub last_succeeded: Option<bool>,
    pub running: bool,
    pub total_runs: i64,
    pub total_successes: i64,
    pub total_failures: i64,
    /// The last failure's message, for the server log and `job_errors`.
    pub last_error: Option<String>,
}

/// Every job's run history, by (database OID, job id).
#[derive(Default)]
pub struct JobRuns {
    runs: Mutex<HashMap<(u32, i32), JobRun>>,
}

impl JobRuns {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<(u32, i32), JobRun>) -> T) -> T {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut runs)
    }

    /// The job's history (a job that never ran: the default, due at once).
    pub fn get(&self, db: u32, job: i32) -> JobRun {
        self.with(|r| r.get(&(db, job)).cloned().unwrap_or_default())
    }

    /// Sets when the job is due next (a new job's first run, `alter_job(next_start => …)`).
    pub fn set_next_start(&self, db: u32, job: i32, at: Option<i64>) {
        self.with(|r| r.entry((db, job)).or_default().next_start = at);
    }

    /// Marks a run started unless one is running; false if one is.
    pub fn start(&self, db: u32, job: i32, now: i64) -> bool {
        self.with(|r| {
            let run = r.entry((db, job)).or_default();
            if run.running {
                return false;
            }
            run.running = true;
            run.last_start = Some(now);
            true
        })
    }

    /// Records a run's end and when the job is due again.
    pub fn finish(&self, db: u32, job: &JobDef, now: i64, outcome: Result<(), String>) {
        self.with(|r| {
            let run = r.entry((db, job.id)).or_default();
            run.running = false;
            run.total_runs += 1;
            run.last_finish = Some(now);
            run.last_succeeded = Some(outcome.is_ok());
            run.next_start = Some(match &outcome {
                Ok(()) => next_after(job, now),
                Err(_) => now.saturating_add(RETRY_PERIOD_NS),
            });
            match outcome {
                Ok(()) => {
                    run.total_successes += 1;
                    run.last_successful_finish = Some(now);
                }
                Err(e) => {
                    run.total_failures += 1;
                    run.last_error = Some(e);
                }
            }
        })
    }

    /// Forgets a deleted job.
    pub fn forget(&self, db: u32, job: i32) {
        self.with(|r| r.remove(&(db, job)));
    }
}

/// When a job that finished a run at `finished` is due again: on a fixed
/// schedule the first slot `initial_start + k × interval` after it, else
/// one interval after it.
pub fn next_after(job: &JobDef, finished: i64) -> i64 {
    let step = |from: i64| timestamp_add_interval(from, job.schedule_interval).unwrap_or(i64::MAX);
    let Some(start) = job.initial_start else {
        return step(finished);
    };
    if start > finished {
        return start;
    }
    // The interval as nanoseconds to jump close, then calendar steps to land.
    let approx = interval_ns(job.schedule_interval).max(1);
    let skipped = ((finished - start) / approx).saturating_sub(1);
    let mut at = timestamp_add_interval(
        start,
        Interval {
            months: job.schedule_interval.months.saturating_mul(skipped.min(i32::MAX as i64) as i32),
            days: job.schedule_interval.days.saturating_mul(skipped.min(i32::MAX as i64) as i32),
            micros: job.schedule_interval.micros.saturating_mul(skipped),
        },
    )
    .unwrap_or(start);
    while at <= finished {
        let next = step(at);
        if next <= at {
            return i64::MAX;
        }
        at = next;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::timescale::Policy;

    const HOUR: i64 = 3_600_000_000_000;

    fn job(every_hours: i64, initial_start: Option<i64>) -> JobDef {
        JobDef {
            id: 1000,
            policy: Policy::Retention { drop_after: Interval::default() },
            table: 1,
            schedule_interval: Interval { months: 0, days: 0, micros: every_hours * 3_600_000_000 },
            scheduled: true,
            initial_start,
        }
    }

    #[test]
    fn a_drifting_schedule_runs_one_interval_after_the_last_finish() {
        assert_eq!(next_after(&job(24, None), 5 * HOUR + 7), 29 * HOUR + 7);
    }

    #[test]
    fn a_fixed_schedule_keeps_its_slots() {
        let j = job(6, Some(HOUR));
        assert_eq!(next_after(&j, 0), HOUR, "before the start: the start");
        assert_eq!(next_after(&j, HOUR), 7 * HOUR, "a run at a slot: the next slot");
        assert_eq!(next_after(&j, 8 * HOUR), 13 * HOUR);
        assert_eq!(next_after(&j, 1000 * HOUR + 1), 1003 * HOUR);
    }

    #[test]
    fn runs_are_counted_and_a_failure_retries_sooner() {
        let runs = JobRuns::default();
        let j = job(24, None);
        assert!(runs.start(1, j.id, 10));
        assert!(!runs.start(1, j.id, 11), "one run at a time");
        runs.finish(1, &j, 20, Err("boom".into()));
        let r = runs.get(1, j.id);
        assert_eq!((r.total_runs, r.total_failures, r.last_succeeded), (1, 1, Some(false)));
        assert_eq!(r.next_start, Some(20 + RETRY_PERIOD_NS));
        assert!(runs.start(1, j.id, 30));
        runs.finish(1, &j, 40, Ok(()));
        let r = runs.get(1, j.id);
        assert_eq!((r.total_runs, r.total_successes, r.last_successful_finish), (2, 1, Some(40)));
        assert_eq!(r.next_start, Some(40 + 24 * HOUR));
        runs.forget(1, j.id);
        assert_eq!(runs.get(1, j.id), JobRun::default());
    }
}
