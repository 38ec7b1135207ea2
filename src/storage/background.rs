//! Background CPU work of the storage layer (a checkpoint's and a
//! compaction's sorting and encoding of segments) on threads of lower
//! scheduling priority than the shards, sessions and ingest decoders.
//!
//! Why: a flush is deferred work — the rows it encodes are already queryable
//! in memtables and durable in the WAL. On a machine whose cores are all
//! busy ingesting, an equal-priority flush took a third of the decoder's
//! core and doubled the time of each MCAP COPY after the first checkpoint
//! (24-recording fleet on 1 shard of 2 cores: ~4.5 s, 3.4 s with the flush
//! niced). The flush still gets every cycle the foreground leaves, and
//! ingest waits for it once memtables pass their hard limit (see
//! `checkpoint::MemtableGate`), so memory stays bounded.
//!
//! Must not: run work that a client's statement waits on, or touch shard
//! state (jobs get owned data and return owned data).

use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

/// The `nice` value of background threads: below every foreground thread
/// (0) while still well above idle-only scheduling, so a flush on a
/// saturated machine gets a share and completes.
const BACKGROUND_NICE: i32 = 10;

type Job = Box<dyn FnOnce() + Send>;

/// The pool's job queue; threads are started on first use.
struct Pool {
    jobs: mpsc::Sender<Job>,
}

static POOL: OnceLock<Pool> = OnceLock::new();

/// How a background job ended without a result.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    #[error("background job panicked")]
    Panicked,
    #[error("could not start a background thread: {0}")]
    NoThread(String),
}

fn pool() -> Result<&'static Pool, BackgroundError> {
    if let Some(p) = POOL.get() {
        return Ok(p);
    }
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    // As many threads as the process has cores (checkpoints flush every
    // shard at once), free to run on any of them: the first caller is a
    // shard thread, pinned to its core, whose pinning a thread inherits.
    for i in 0..threads() {
        let rx = rx.clone();
        std::thread::Builder::new()
            .name(format!("storage-bg-{i}"))
            .spawn(move || {
                crate::runtime::shard::unpin_current_thread();
                lower_priority();
                loop {
                    let job = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                }
            })
            .map_err(|e| BackgroundError::NoThread(e.to_string()))?;
    }
    Ok(POOL.get_or_init(|| Pool { jobs: tx }))
}

#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: gettid and setpriority take and return plain integers; on
    // Linux a nice value belongs to the calling thread. Failure (a
    // sandbox refusing it) leaves the thread at normal priority.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, BACKGROUND_NICE);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// How many jobs the pool runs at once (one thread per core).
pub fn threads() -> usize {
    crate::runtime::shard::process_core_count()
}

/// Runs `job` on a background thread and waits for its result without
/// blocking the caller's runtime. A panic in the job is `Panicked`.
pub async fn run<T, F>(job: F) -> Result<T, BackgroundError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let wrapped: Job = Box::new(move || {
        // Nobody waits for it any more (a checkpoint that failed dropped the
        // encodings it had queued): not worth a thread's time.
        if tx.is_closed() {
            return;
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let _ = tx.send(result.map_err(|_| BackgroundError::Panicked));
    });
    pool()?
        .jobs
        .send(wrapped)
        .map_err(|_| BackgroundError::NoThread("the background threads stopped".into()))?;
    rx.await.map_err(|_| BackgroundError::Panicked)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_off_the_caller_and_return_their_results() {
        let caller = std::thread::current().id();
        let (id, value) = run(move || (std::thread::current().id(), 6 * 7)).await.unwrap();
        assert_ne!(id, caller);
        assert_eq!(value, 42);
        let many: Vec<_> = (0..16).map(|i| run(move || i * 2)).collect();
        for (i, f) in many.into_iter().enumerate() {
            assert_eq!(f.await.unwrap(), i * 2);
        }
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_the_pool_goes_on() {
        let r: Result<(), _> = run(|| panic!("boom")).await;
        assert!(matches!(r, Err(BackgroundError::Panicked)));
        assert_eq!(run(|| 1).await.unwrap(), 1);
    }
}
