//! Drives the real `psql` binary against brewricd: connect, CREATE, INSERT,
//! SELECT (checking psql's printed output), errors (stderr text and psql's exit
//! codes), as a user at a terminal would.
//!
//! psql comes from the `postgresql-client` package; `.ci/run` installs it when
//! it is missing. Without psql these tests fail under CI (CI=true) and are
//! skipped with a message elsewhere.

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::psql_bin::or_skip as psql_or_skip;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Run psql against `server` and database `db` with `args` (after the
/// connection options and -X), feeding `stdin`. Fails after 60 s.
fn psql(bin: &PathBuf, server: &common::Server, db: &str, args: &[&str], stdin: &str) -> Out {
    let mut cmd = Command::new(bin);
    cmd.arg("-h")
        .arg(&server.host)
        .arg("-p")
        .arg(server.port.to_string())
        .arg("-U")
        .arg(common::USER)
        .arg("-d")
        .arg(db)
        .arg("-X") // no ~/.psqlrc
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "PGHOST",
        "PGHOSTADDR",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGPASSWORD",
        "PGPASSFILE",
        "PGSERVICE",
        "PGOPTIONS",
        "PGTZ",
        "PGDATESTYLE",
        "PGCLIENTENCODING",
        "PGSSLMODE",
        "PSQLRC",
        "PSQL_PAGER",
        "PAGER",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("PGCONNECT_TIMEOUT", "10")
        .env("PGAPPNAME", "psql-test");
    let mut child = cmd.spawn().expect("spawn psql");
    let mut input = child.stdin.take().unwrap();
    let script = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(script.as_bytes());
    });
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for psql") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("psql {args:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = writer.join();
    Out {
        code: status.code(),
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}

/// Create database `name` with psql itself (dropping a leftover first when
/// running against an external server).
fn create_db(bin: &PathBuf, server: &common::Server, name: &str) {
    if server.is_external() {
        let out = psql(
            bin,
            server,
            "brewric",
            &["-c", &format!("DROP DATABASE IF EXISTS {name}")],
            "",
        );
        assert_eq!(out.code, Some(0), "{out:?}");
    }
    let out = psql(
        bin,
        server,
        "brewric",
        &["-c", &format!("CREATE DATABASE {name}")],
        "",
    );
    assert_eq!(out.code, Some(0), "CREATE DATABASE {name}: {out:?}");
    assert_eq!(out.stdout, "CREATE DATABASE\n", "{out:?}");
}

const SCRIPT: &str = "\
CREATE TABLE readings (ts timestamptz NOT NULL, robot text, battery double precision, ok boolean);
INSERT INTO readings VALUES ('2026-01-01 00:00:00+00', 'r1', 97.5, true), ('2026-01-01 00:00:10+00', 'r1', 96.5, true), ('2026-01-01 00:00:00+00', 'r2', 50, true), ('2026-01-01 00:00:05+00', 'r2', 10, false);
SELECT robot, count(*), avg(battery), max(ts) FROM readings WHERE ok GROUP BY robot ORDER BY robot;
SELECT * FROM nope;
SELECT 'after error';
";

#[test]
fn psql_script_create_insert_select_and_an_error() {
    let Some(bin) = psql_or_skip("psql_script_create_insert_select_and_an_error") else {
        return;
    };
    let server = common::start();
    create_db(&bin, &server, "psql_script");

    // unaligned, tuples only, as scripts use psql; the error does not stop the script
    let out = psql(
        &bin,
        &server,
        "psql_script",
        &["-A", "-t", "-v", "ON_ERROR_STOP=0"],
        SCRIPT,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "CREATE TABLE\n\
         INSERT 0 4\n\
         r1|2|97|2026-01-01 00:00:10+00\n\
         r2|1|50|2026-01-01 00:00:00+00\n\
         after error\n",
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("ERROR:  relation \"nope\" does not exist"),
        "{out:?}"
    );

    // the default aligned format: headers, right-aligned numbers, row count
    let out = psql(
        &bin,
        &server,
        "psql_script",
        &[
            "-c",
            "SELECT robot, count(*) AS n, avg(battery) FROM readings GROUP BY robot ORDER BY robot",
        ],
        "",
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        " robot | n | avg \n\
         -------+---+-----\n \
         r1    | 2 |  97\n \
         r2    | 2 |  30\n\
         (2 rows)\n\n",
        "{out:?}"
    );
    assert_eq!(out.stderr, "", "{out:?}");

    // ON_ERROR_STOP=1: psql stops at the error and exits with 3
    let out = psql(
        &bin,
        &server,
        "psql_script",
        &["-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-"],
        "SELECT 1;\nSELECT * FROM nope;\nSELECT 2;\n",
    );
    assert_eq!(out.code, Some(3), "{out:?}");
    assert_eq!(out.stdout, "1\n", "{out:?}");
    assert!(
        out.stderr
            .contains("psql:<stdin>:2: ERROR:  relation \"nope\" does not exist"),
        "{out:?}"
    );
}

#[test]
fn psql_single_commands_and_exit_codes() {
    let Some(bin) = psql_or_skip("psql_single_commands_and_exit_codes") else {
        return;
    };
    let server = common::start();

    let out = psql(
        &bin,
        &server,
        "brewric",
        &["-A", "-t", "-c", "SELECT 1 + 1, 'two'"],
        "",
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "2|two\n", "{out:?}");

    // a failing -c command: exit code 1, the message on stderr
    let out = psql(
        &bin,
        &server,
        "brewric",
        &["-A", "-t", "-v", "ON_ERROR_STOP=0", "-c", "SELECT 1 / 0"],
        "",
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(out.stderr.contains("ERROR:  division by zero"), "{out:?}");

    // a syntax error is shown with its line and a caret under the offending text
    let out = psql(&bin, &server, "brewric", &["-c", "SELEC 2"], "");
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr, "ERROR:  syntax error at or near \"SELEC\"\nLINE 1: SELEC 2\n        ^\n",
        "{out:?}"
    );

    // several -c commands run in order; the exit code is that of the last
    let out = psql(
        &bin,
        &server,
        "brewric",
        &[
            "-A",
            "-t",
            "-c",
            "SELECT 'a'",
            "-c",
            "SELECT nope",
            "-c",
            "SELECT 'c'",
        ],
        "",
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "a\nc\n", "{out:?}");
    assert!(
        out.stderr
            .contains("ERROR:  column \"nope\" does not exist"),
        "{out:?}"
    );

    // SHOW and SET through psql
    let out = psql(
        &bin,
        &server,
        "brewric",
        &["-A", "-t", "-c", "SHOW application_name"],
        "",
    );
    assert_eq!(out.stdout, "psql-test\n", "{out:?}");
    if server.is_brewric() {
        let out = psql(
            &bin,
            &server,
            "brewric",
            &["-A", "-t", "-c", "SHOW server_version"],
            "",
        );
        assert_eq!(out.stdout, "15.0 (Brewric 0.1.0)\n", "{out:?}");
    }

    // the other built-in database, and a missing one (exit code 2)
    let out = psql(
        &bin,
        &server,
        "postgres",
        &["-A", "-t", "-c", "SELECT current_database()"],
        "",
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "postgres\n", "{out:?}");
    let out = psql(&bin, &server, "no_such_db", &["-c", "SELECT 1"], "");
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("FATAL:  database \"no_such_db\" does not exist"),
        "{out:?}"
    );
}

#[test]
fn psql_transactions_and_null_display() {
    let Some(bin) = psql_or_skip("psql_transactions_and_null_display") else {
        return;
    };
    let server = common::start();
    create_db(&bin, &server, "psql_tx");
    let script = "\
\\pset null '<null>'
CREATE TABLE t (a integer, b text);
BEGIN;
INSERT INTO t VALUES (1, NULL);
SELECT 1 / 0;
SELECT 'ignored';
ROLLBACK;
BEGIN;
INSERT INTO t VALUES (2, NULL), (3, 'three');
COMMIT;
SELECT a, b FROM t ORDER BY a;
";
    let out = psql(&bin, &server, "psql_tx", &["-A", "-t", "-f", "-"], script);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "Null display is \"<null>\".\nCREATE TABLE\nBEGIN\nINSERT 0 1\nROLLBACK\nBEGIN\nINSERT 0 2\nCOMMIT\n2|<null>\n3|three\n",
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("psql:<stdin>:5: ERROR:  division by zero"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(
            "psql:<stdin>:6: ERROR:  current transaction is aborted, commands ignored until end of transaction block"
        ),
        "{out:?}"
    );
}

#[test]
fn psql_copy_from_and_to_files_in_text_and_csv_and_timing() {
    let Some(bin) = psql_or_skip("psql_copy_from_and_to_files_in_text_and_csv_and_timing") else {
        return;
    };
    let server = common::start();
    create_db(&bin, &server, "psql_copy");
    let dir = std::env::temp_dir().join(format!("brewric-psql-copy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // CSV with a header, a quoted delimiter, a quoted quote and an empty (NULL) field.
    std::fs::write(
        dir.join("in.csv"),
        "id,name,battery\n1,\"r1, north\",97.5\n2,\"say \"\"hi\"\"\",\n",
    )
    .expect("write csv");
    // Text format: tabs, \N for NULL, backslash escapes.
    std::fs::write(dir.join("in.txt"), "3\tr3\\ttabbed\t\\N\n").expect("write text");
    let d = dir.display();
    let script = format!(
        "\
CREATE TABLE robots (id integer, name text, battery double precision);
\\copy robots FROM '{d}/in.csv' WITH (FORMAT csv, HEADER)
\\copy robots FROM '{d}/in.txt'
\\copy robots (id, name) FROM STDIN
4\tfrom-stdin
\\.
\\copy robots TO '{d}/out.csv' WITH (FORMAT csv, HEADER)
\\copy (SELECT id, name FROM robots WHERE battery IS NULL ORDER BY id) TO STDOUT WITH (FORMAT csv)
\\copy robots FROM '{d}/missing.csv' WITH (FORMAT csv)
\\timing on
SELECT count(*) FROM robots;
\\timing off
"
    );
    let out = psql(&bin, &server, "psql_copy", &["-A", "-t", "-f", "-"], &script);
    let exported = std::fs::read_to_string(dir.join("out.csv")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[..9],
        [
            "CREATE TABLE",
            "COPY 2",
            "COPY 1",
            "COPY 1",
            "COPY 4",
            "2,\"say \"\"hi\"\"\"",
            "3,r3\ttabbed",
            "4,from-stdin",
            "Timing is on.",
        ],
        "{out:?}"
    );
    assert_eq!(lines[9], "4", "{out:?}");
    assert!(lines[10].starts_with("Time: ") && lines[10].ends_with(" ms"), "{out:?}");
    assert_eq!(lines[11..], ["Timing is off."], "{out:?}");
    // A table's rows come in no particular order (shards): sorted here.
    let mut exported_rows: Vec<&str> = exported.lines().skip(1).collect();
    exported_rows.sort();
    let exported = format!("{}\n{}\n", exported.lines().next().unwrap_or(""), exported_rows.join("\n"));
    assert_eq!(
        exported,
        "id,name,battery\n1,\"r1, north\",97.5\n2,\"say \"\"hi\"\"\",\n3,r3\ttabbed,\n4,from-stdin,\n",
    );
    // A missing file is psql's own error; the script goes on.
    assert!(out.stderr.contains("missing.csv: No such file or directory"), "{out:?}");
}

/// A database dumped by PostgreSQL 15's pg_dump (`tests/fixtures/pg_dump_15.sql`,
/// written by `tools/make_pg_dump_fixture.sh`) restores with `psql -f`, every
/// statement succeeding: schemas, tables, owners, an identity column and
/// serial sequences with their positions, comments, a view, the rows, then
/// the keys and indexes pg_dump adds after the data — which hold afterwards.
#[test]
fn a_pg_dump_of_postgresql_15_restores_with_psql() {
    let Some(bin) = psql_or_skip("a_pg_dump_of_postgresql_15_restores_with_psql") else {
        return;
    };
    let server = common::start();
    create_db(&bin, &server, "restored");
    let dump = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pg_dump_15.sql");
    let out = psql(&bin, &server, "restored", &["-q", "-v", "ON_ERROR_STOP=1", "-f", dump], "");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    let checks = "\
SELECT host, time, usage, cores, tags FROM metrics.cpu ORDER BY host, time;
SELECT id, name, added, price, flags, note FROM devices ORDER BY id;
SELECT id, device_id, at, payload, kind FROM events ORDER BY id;
SELECT host, avg_usage FROM busy ORDER BY host;
INSERT INTO devices (name) VALUES ('z') RETURNING id;
INSERT INTO events (device_id) VALUES (3) RETURNING id;
SELECT nextval('standalone');
SELECT obj_description('metrics.cpu'::regclass, 'pg_class'), col_description('metrics.cpu'::regclass, 3);
SELECT indexname FROM pg_indexes WHERE schemaname IN ('public', 'metrics') ORDER BY 1;
SELECT attname, attidentity FROM pg_attribute WHERE attrelid = 'devices'::regclass AND attnum = 1;
INSERT INTO devices (name) VALUES ('x');
";
    let out = psql(&bin, &server, "restored", &["-A", "-t", "-q", "-f", "-"], checks);
    assert_eq!(
        out.stdout,
        "a|2024-01-01 00:00:00+00|12.5|8|{\"rack\": 1}\n\
         a|2024-01-01 00:00:10+00||4|\n\
         b|2024-01-01 00:00:00+00|99.9|2|[1, 2]\n\
         1|x|2024-02-02|10.25|{t,f}|tab\tand\nnewline\n\
         2|y'q||||\n\
         1|1|2024-03-03 10:00:00|\\x00ff10|abc\n\
         2|2|||\n\
         a|12.5\n\
         b|99.9\n\
         3\n\
         3\n\
         105\n\
         CPU samples|percent\n\
         cpu_pkey\ncpu_time_idx\ndevices_name_key\ndevices_pkey\nevents_pkey\n\
         id|a\n",
        "{out:?}"
    );
    assert!(out.stderr.contains("duplicate key value violates unique constraint \"devices_name_key\""), "{out:?}");
}

/// psql's `\d` shows a table's foreign keys and, on the referenced table,
/// what references it (psql asks only for tables whose pg_class says they
/// have triggers, and through pg_partition_ancestors); a violation reaches
/// psql as PostgreSQL words it.
#[test]
fn psql_describes_foreign_keys_and_shows_their_violations() {
    let Some(bin) = psql_or_skip("psql_describes_foreign_keys_and_shows_their_violations") else {
        return;
    };
    let server = common::start();
    create_db(&bin, &server, "psql_fk");
    let script = "CREATE TABLE parent (id integer PRIMARY KEY);\n\
                  CREATE TABLE child (pid integer, CONSTRAINT child_parent FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE);\n\
                  \\d child\n\\d parent\n\
                  INSERT INTO child VALUES (7);\n";
    let out = psql(&bin, &server, "psql_fk", &["-q", "-f", "-"], script);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains("Foreign-key constraints:\n    \"child_parent\" FOREIGN KEY (pid) REFERENCES parent(id) ON DELETE CASCADE"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains(
            "Referenced by:\n    TABLE \"child\" CONSTRAINT \"child_parent\" FOREIGN KEY (pid) REFERENCES parent(id) ON DELETE CASCADE"
        ),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(
            "ERROR:  insert or update on table \"child\" violates foreign key constraint \"child_parent\"\nDETAIL:  Key (pid)=(7) is not present in table \"parent\"."
        ),
        "{out:?}"
    );
}
