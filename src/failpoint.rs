//! Crash and race injection for the durability tests:
//! `BREWRIC_FAILPOINT=<name>` makes the server abort (as a `kill -9` would
//! stop it) the first time it reaches the point of that name, e.g. between
//! writing a segment and the manifest that lists it;
//! `BREWRIC_FAILPOINT_PAUSE=<name>:<ms>` makes the task that reaches a pause
//! point of that name wait that long (without blocking its thread), so a
//! test can run a statement inside a window that is otherwise microseconds
//! wide. Unset (always, in production) each costs one relaxed load per call.
//! Must not: do anything but abort or wait.

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

static PAUSE: OnceLock<Option<(String, u64)>> = OnceLock::new();

/// Waits `ms` if `BREWRIC_FAILPOINT_PAUSE` is `name:ms`.
pub async fn pause(name: &str) {
    let armed = PAUSE.get_or_init(|| {
        let value = std::env::var("BREWRIC_FAILPOINT_PAUSE").ok()?;
        let (point, ms) = value.rsplit_once(':')?;
        Some((point.to_string(), ms.parse().ok()?))
    });
    if let Some((point, ms)) = armed {
        if point == name {
            tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
        }
    }
}
