//! Crash injection for the durability tests: `BREWRIC_FAILPOINT=<name>`
//! makes the server abort (as a `kill -9` would stop it) the first time it
//! reaches the point of that name, e.g. between writing a segment and the
//! manifest that lists it. Unset (always, in production) it costs one
//! relaxed load per call.
//! Must not: do anything but abort.

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
