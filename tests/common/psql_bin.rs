//! Finding the `psql` binary for tests that drive it (`.ci/run` installs
//! postgresql-client when it is missing).

use std::path::PathBuf;

/// psql on PATH, or in Debian's versioned directory.
pub fn find() -> Option<PathBuf> {
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let p = dir.join("psql");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin/psql"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop()
}

/// The psql binary, or None (after saying why) when the test should be
/// skipped; under CI (CI set) a missing psql fails the test.
pub fn or_skip(test: &str) -> Option<PathBuf> {
    match find() {
        Some(p) => Some(p),
        None => {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "psql is not installed, but CI is set: .ci/run must install postgresql-client"
                );
            }
            eprintln!("SKIPPED {test}: psql not found (install postgresql-client to run it)");
            None
        }
    }
}
