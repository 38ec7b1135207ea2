//! Crash and race injection for the durability tests:
//! `BREWRIC_FAILPOINT=<name>` makes the server abort (as a `kill -9` would
//! stop it) the first time it reaches the point of that name, e.g. between
//! writing a segment and the manifest that lists it;
//! `BREWRIC_FAILPOINT_PAUSE=<name>:<ms>` makes the task that reaches a pause
//! point of that name wait that long (without blocking its thread), so a
//! test can run a statement inside a window that is otherwise microseconds
//! wide; `BREWRIC_FAILPOINT_ERROR=<name>[:<n>]` makes the operation at an
//! error point of that name report an I/O error the first (n-th) time, after
//! it did its work (a sync that fails although the bytes reached the disk). Unset (always, in
//! production) each costs one load of an initialised cell per call.
//! Must not: do anything but abort, wait or tell its caller to fail.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static ARMED: OnceLock<Option<String>> = OnceLock::new();

/// Aborts the process if the failpoint `name` is armed.
pub fn hit(name: &str) {
    let armed = ARMED.get_or_init(|| {
        std::env::var("BREWRIC_FAILPOINT")
            .ok()
            .filter(|s| !s.is_empty())
    });
    if armed.as_deref() == Some(name) {
        eprintln!("brewricd: failpoint {name} reached: aborting");
        std::process::abort();
    }
}

/// `<name>:<n>` (or `<name>` alone, `default` then) from the environment
/// variable `var`, read once by the caller's cell; unset is None. A value
/// that does not parse aborts: a test that armed a failpoint it did not spell
/// right must not pass unharmed.
fn armed_point(var: &str, default: Option<u64>) -> Option<(String, u64)> {
    let value = std::env::var(var).ok().filter(|s| !s.is_empty())?;
    let parsed = match value.rsplit_once(':') {
        Some((point, n)) => n.parse().ok().filter(|&n| n >= 1).map(|n| (point.to_string(), n)),
        None => default.map(|n| (value.clone(), n)),
    };
    if parsed.is_none() {
        eprintln!("brewricd: {var}={value} is not <name>:<n> with n >= 1: aborting");
        std::process::abort();
    }
    parsed
}

static PAUSE: OnceLock<Option<(String, u64)>> = OnceLock::new();

/// Waits `ms` if `BREWRIC_FAILPOINT_PAUSE` is `name:ms`.
pub async fn pause(name: &str) {
    let armed = PAUSE.get_or_init(|| armed_point("BREWRIC_FAILPOINT_PAUSE", None));
    if let Some((point, ms)) = armed {
        if point == name {
            tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
        }
    }
}

static ERROR: OnceLock<Option<(String, u64)>> = OnceLock::new();
static ERROR_SEEN: AtomicU64 = AtomicU64::new(0);

/// True if `BREWRIC_FAILPOINT_ERROR` is `name` (or `name:n`) and this is the
/// first (n-th) time the point is reached with `applies()` true (asked only
/// when armed: the caller's check that this occurrence counts); the caller
/// then reports an injected error.
pub fn error(name: &str, applies: impl FnOnce() -> bool) -> bool {
    match ERROR.get_or_init(|| armed_point("BREWRIC_FAILPOINT_ERROR", Some(1))) {
        Some((point, n)) if point == name && applies() => ERROR_SEEN.fetch_add(1, Ordering::Relaxed) + 1 == *n,
        _ => false,
    }
}
