//! psql's meta-commands (`\dt`, `\d table`, `\di`, `\df`, …) against brewricd,
//! compared with what psql prints against PostgreSQL 15 for the same schema:
//! the golden file `tests/golden/psql_meta.out` was recorded from PostgreSQL
//! by running this test there in record mode:
//!
//!   BREWRIC_GOLDEN_RECORD=1 bash tools/tests_on_postgres.sh --release --test psql_meta
//!
//! (without BREWRIC_GOLDEN_RECORD the same command checks that PostgreSQL
//! still prints the golden file). Sizes (`\dt+`) and the port (`\conninfo`)
//! differ by nature and are masked before comparing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The objects the meta-commands describe.
const SCHEMA: &str = "\
CREATE SCHEMA fleet;
CREATE TABLE readings (id serial PRIMARY KEY, ts timestamptz NOT NULL, robot text NOT NULL, battery double precision DEFAULT 100, ok boolean, note varchar(20));
CREATE INDEX readings_robot_ts ON readings (robot, ts DESC);
CREATE UNIQUE INDEX readings_ts_robot ON readings (ts, robot);
CREATE TABLE fleet.robots (name text UNIQUE, model text DEFAULT 'x', weight numeric(6,2), born date, active boolean DEFAULT true);
COMMENT ON TABLE readings IS 'battery readings';
CREATE VIEW low_battery AS SELECT robot, battery FROM readings WHERE battery < 20;
CREATE FUNCTION add_one(a integer) RETURNS integer LANGUAGE sql AS 'SELECT a + 1';
INSERT INTO readings (ts, robot, battery, ok) VALUES ('2026-01-01 00:00:00+00', 'r1', 97.5, true);
";

/// Each meta-command, run by its own psql (aligned output, as at a terminal).
const COMMANDS: &[&str] = &[
    "\\dt",
    "\\dt fleet.*",
    "\\dt+",
    "\\d",
    "\\d readings",
    "\\d+ readings",
    "\\d fleet.robots",
    "\\d readings_robot_ts",
    "\\d readings_pkey",
    "\\di",
    "\\di+",
    "\\dv",
    "\\d low_battery",
    "\\df add_one",
    "\\df",
    "\\dn",
    "\\dn fleet",
    "\\dn+ fleet",
    "\\l psql_meta",
    "\\du brewric",
    "\\dT",
    "\\dt *.rob*",
    "\\d fleet.*",
    "\\d nothing_here",
    "\\conninfo",
    "\\x\nSELECT robot, battery FROM readings;",
];

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/psql_meta.out")
}

fn psql(bin: &Path, server: &common::Server, db: &str, input: &str) -> String {
    let mut cmd = Command::new(bin);
    cmd.args(["-h", &server.host, "-p", &server.port.to_string()])
        .args(["-U", common::USER, "-d", db, "-X", "-P", "pager=off"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGOPTIONS", "PGTZ", "PSQLRC", "PAGER"] {
        cmd.env_remove(var);
    }
    cmd.env("PGCONNECT_TIMEOUT", "10");
    let mut child = cmd.spawn().expect("spawn psql");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("psql stdin");
        stdin.write_all(input.as_bytes()).expect("write psql input");
    }
    let out = child.wait_with_output().expect("psql output");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What differs by nature between two servers: on-disk sizes and the port.
fn mask(text: &str, port: u16) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.replace(&format!("port \"{port}\""), "port \"<port>\"");
        // Size cells: "8192 bytes", "16 kB", "0 bytes" → "<size>" (columns then realigned by width).
        let mut masked = String::new();
        let mut rest = line.as_str();
        while let Some(pos) = find_size(rest) {
            let (start, end) = pos;
            masked.push_str(&rest[..start]);
            masked.push_str("<size>");
            rest = &rest[end..];
        }
        masked.push_str(rest);
        out.push_str(masked.trim_end());
        out.push('\n');
    }
    out
}

/// The byte range of the first `<digits> bytes|kB|MB|GB` in `s`.
fn find_size(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            for unit in [" bytes", " kB", " MB", " GB"] {
                if s[j..].starts_with(unit) {
                    return Some((i, j + unit.len()));
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    None
}

/// Collapses runs of spaces and dashes so that a masked size's column width does not matter.
fn squeeze(text: &str) -> String {
    text.lines()
        .map(|l| {
            let mut s = String::new();
            let mut last = '\0';
            for c in l.chars() {
                if (c == ' ' || c == '-') && c == last {
                    continue;
                }
                s.push(c);
                last = c;
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn psql_meta_commands_print_what_postgresql_prints() {
    let Some(bin) = common::psql_bin::or_skip("psql_meta_commands_print_what_postgresql_prints")
    else {
        return;
    };
    let server = common::start();
    let db = "psql_meta";
    if server.is_external() {
        psql(&bin, &server, "brewric", &format!("DROP DATABASE IF EXISTS {db};\n"));
    }
    let created = psql(&bin, &server, "brewric", &format!("CREATE DATABASE {db};\n"));
    assert_eq!(created, "CREATE DATABASE\n");
    let setup = psql(&bin, &server, db, &format!("\\set ON_ERROR_STOP 1\n{SCHEMA}"));
    assert!(!setup.contains("ERROR"), "schema setup failed:\n{setup}");

    let mut got = String::new();
    for command in COMMANDS {
        got.push_str(&format!("=== {}\n", command.replace('\n', " ")));
        got.push_str(&mask(&psql(&bin, &server, db, &format!("{command}\n")), server.port));
    }

    let path = golden_path();
    if std::env::var_os("BREWRIC_GOLDEN_RECORD").is_some() {
        assert!(server.is_external(), "record the golden file from PostgreSQL (see the top of this file)");
        std::fs::write(&path, &got).expect("write golden file");
        eprintln!("recorded {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).expect("golden file tests/golden/psql_meta.out");
    if squeeze(&got) != squeeze(&want) {
        let got_path = std::env::temp_dir().join("psql_meta.got");
        let _ = std::fs::write(&got_path, &got);
        let mut diff = String::new();
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
        for i in 0..w.len().max(g.len()) {
            let (a, b) = (w.get(i).copied().unwrap_or(""), g.get(i).copied().unwrap_or(""));
            if squeeze(a) != squeeze(b) {
                diff.push_str(&format!("line {}:\n  PostgreSQL: {a}\n  brewricd:   {b}\n", i + 1));
            }
        }
        panic!(
            "psql's output differs from PostgreSQL 15's (whole output in {}):\n{diff}",
            got_path.display()
        );
    }
}
