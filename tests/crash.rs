//! Crash test for durability: writers insert acknowledged rows over several
//! connections (single statements spread over both shards, explicit
//! multi-statement transactions, and COPY FROM STDIN), the server is killed with SIGKILL at a
//! random moment, restarted on the same data directory, and then:
//! - every acknowledged statement / transaction is there, whole;
//! - no statement or transaction is there in part (a statement's rows are all
//!   present or all absent, even when they were split across shards).
//!
//! Checkpoints run all the while (CHECKPOINT statements at random moments,
//! and background flushes of memtables above 1 MiB), so kills land before,
//! inside and after flushes and WAL truncations.
//! Several rounds, each killing the server once. The seed is printed; set
//! BREWRIC_CRASH_SEED to replay a run's timing choices.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// (writer, statement) → rows the statement or transaction inserts.
type Ledger = Arc<Mutex<HashMap<(i32, i32), i64>>>;

use common::rng::Rng;

fn insert_sql(writer: i32, stmt: i32, first_k: i64, rows: i64) -> String {
    let values: Vec<String> = (first_k..first_k + rows)
        .map(|k| format!("({writer}, {stmt}, {k}, 'payload-{writer}-{stmt}-{k}')"))
        .collect();
    format!("INSERT INTO acks VALUES {}", values.join(", "))
}

/// One writer: inserts until its connection dies, recording what it attempted
/// before sending and what was acknowledged after.
async fn writer(
    client: tokio_postgres::Client,
    writer: i32,
    seed: u64,
    attempted: Ledger,
    acked: Ledger,
) {
    let mut rng = Rng(seed | 1);
    for stmt in 0.. {
        // Mostly single statements (large ones are split across the shards),
        // sometimes a transaction of two statements committed together.
        let rows = 1 + rng.below(3000) as i64;
        let kind = rng.below(4);
        if kind == 1 {
            // COPY FROM STDIN, sometimes large enough to span both shards
            let rows = rows * (1 + rng.below(20) as i64);
            attempted.lock().unwrap().insert((writer, stmt), rows);
            let data: String = (0..rows)
                .map(|k| format!("{writer}\t{stmt}\t{k}\tpayload-{writer}-{stmt}-{k}\n"))
                .collect();
            let sent = async {
                let sink = client
                    .copy_in::<_, bytes::Bytes>("COPY acks FROM STDIN")
                    .await?;
                futures::pin_mut!(sink);
                futures::SinkExt::send(&mut sink, bytes::Bytes::from(data)).await?;
                sink.finish().await
            };
            if sent.await.is_err() {
                return;
            }
            acked.lock().unwrap().insert((writer, stmt), rows);
        } else if kind == 0 {
            let second = 1 + rng.below(50) as i64;
            attempted
                .lock()
                .unwrap()
                .insert((writer, stmt), rows + second);
            let batch = format!(
                "BEGIN; {}; {}; COMMIT",
                insert_sql(writer, stmt, 0, rows),
                insert_sql(writer, stmt, rows, second)
            );
            if client.batch_execute(&batch).await.is_err() {
                return;
            }
            acked.lock().unwrap().insert((writer, stmt), rows + second);
        } else {
            attempted.lock().unwrap().insert((writer, stmt), rows);
            if client
                .batch_execute(&insert_sql(writer, stmt, 0, rows))
                .await
                .is_err()
            {
                return;
            }
            acked.lock().unwrap().insert((writer, stmt), rows);
        }
    }
}

#[tokio::test]
async fn acknowledged_rows_survive_kill_9_and_partial_writes_do_not_appear() {
    let seed: u64 = std::env::var("BREWRIC_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(7)
        });
    eprintln!("crash test seed: {seed} (replay with BREWRIC_CRASH_SEED={seed})");
    let mut rng = Rng(seed | 1);
    let flush_args = ["--flush-mb", "1"];
    let mut server = common::start();
    if !server.is_brewric() {
        eprintln!("skipped: needs a brewricd started by the test to kill");
        return;
    }
    server
        .connect(common::DEFAULT_DB)
        .await
        .batch_execute("CREATE TABLE acks (writer integer, stmt integer, k integer, payload text)")
        .await
        .unwrap();
    let attempted: Ledger = Default::default();
    let acked: Ledger = Default::default();
    let dir = server.kill9();
    server = common::start_configured(dir, 2, &flush_args, &[]);
    for round in 0..4 {
        let mut tasks = Vec::new();
        let checkpointer = server.connect(common::DEFAULT_DB).await;
        let mut ck_rng = Rng(rng.next() | 1);
        tasks.push(tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(20 + ck_rng.below(150))).await;
                if checkpointer.batch_execute("CHECKPOINT").await.is_err() {
                    return;
                }
            }
        }));
        for w in 0..4 {
            let client = server.connect(common::DEFAULT_DB).await;
            let id = round * 100 + w;
            tasks.push(tokio::spawn(writer(
                client,
                id,
                rng.next(),
                attempted.clone(),
                acked.clone(),
            )));
        }
        tokio::time::sleep(Duration::from_millis(200 + rng.below(600))).await;
        let dir = server.kill9();
        for t in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
        }
        let segments = std::fs::read_dir(dir.join("segments"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten())
            .count();
        eprintln!("round {round}: killed with {segments} segment files on disk");
        server = common::start_configured(dir, 2, &flush_args, &[]);
        let client = server.connect(common::DEFAULT_DB).await;
        let rows = client
            .query(
                "SELECT writer, stmt, count(*) FROM acks GROUP BY writer, stmt",
                &[],
            )
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "round {round}: query after restart: {}",
                    common::describe_error(&e)
                )
            });
        let present: HashMap<(i32, i32), i64> = rows
            .iter()
            .map(|r| ((r.get(0), r.get(1)), r.get(2)))
            .collect();
        let attempted = attempted.lock().unwrap();
        for (key, n) in acked.lock().unwrap().iter() {
            assert_eq!(
                present.get(key),
                Some(n),
                "round {round} (seed {seed}): acknowledged writer/stmt {key:?} of {n} rows"
            );
        }
        for (key, n) in &present {
            assert_eq!(attempted.get(key), Some(n), "round {round} (seed {seed}): writer/stmt {key:?} is present with {n} rows, only part of it");
        }
        let acked_count = acked.lock().unwrap().len();
        eprintln!(
            "round {round}: {} statements present after restart, {acked_count} acknowledged so far",
            present.len()
        );
        assert!(
            acked_count > 0,
            "round {round}: no write was acknowledged before the kill"
        );
    }
}

/// Two servers appending to one WAL would corrupt it: the second refuses to start.
#[test]
fn a_second_server_on_the_same_data_directory_refuses_to_start() {
    let server = common::start();
    let Some(dir) = server.data_dir() else { return };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_brewricd"))
        .args(["--listen", "127.0.0.1:0", "--http", "off", "--ilp", "off", "--shards", "1", "--data-dir"])
        .arg(dir)
        .output()
        .expect("run a second brewricd");
    assert!(!out.status.success(), "the second server started");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is in use by another brewricd"), "{stderr}");
}

/// A table dropped inside a block that never committed is back after
/// kill -9 with every row (those in segment files, and those only in the
/// WAL), its key and its name, and what the block created (a schema, a table
/// of the dropped one's name, a view, an index) is gone; what a committed
/// block dropped or created stays so.
/// A checkpoint while the block is open writes the dropped table's rows out
/// as any table's.
#[tokio::test]
async fn a_block_that_never_committed_is_undone_by_kill_9_ddl_included() {
    let server = common::start_with_shards(2);
    let client = server.connect(common::DEFAULT_DB).await;
    client
        .batch_execute(
            "CREATE TABLE kept (id integer PRIMARY KEY, v text);
             INSERT INTO kept SELECT g, 'row ' || g FROM generate_series(1, 3000) AS g;
             CHECKPOINT;
             INSERT INTO kept SELECT g, 'row ' || g FROM generate_series(3001, 5000) AS g;
             CREATE TABLE gone (a integer);
             INSERT INTO gone VALUES (1);",
        )
        .await
        .unwrap();
    client.batch_execute("BEGIN; DROP TABLE gone; COMMIT").await.unwrap();
    // A committed block's creations stay.
    client
        .batch_execute("BEGIN; CREATE SCHEMA made_and_committed; CREATE TABLE made_and_committed.t (a integer); COMMIT")
        .await
        .unwrap();
    let block = server.connect(common::DEFAULT_DB).await;
    block.batch_execute("BEGIN; DROP TABLE kept").await.unwrap();
    // What the open block creates goes with the crash.
    block
        .batch_execute(
            "CREATE SCHEMA provisional; CREATE TABLE provisional.t (a integer); INSERT INTO provisional.t VALUES (1);
             CREATE TABLE kept (other integer); CREATE VIEW made_v AS SELECT 1 AS one;
             CREATE INDEX made_idx ON made_and_committed.t (a);",
        )
        .await
        .unwrap();
    // Rows only in the WAL go to segment files while the block is open.
    client.batch_execute("CHECKPOINT").await.unwrap();
    let dir = server.kill9();

    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let row = client.query_one("SELECT count(*), sum(id), count(DISTINCT v) FROM kept", &[]).await.unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1), row.get::<_, i64>(2)), (5000, 5000 * 5001 / 2, 5000));
    let e = client.execute("INSERT INTO kept VALUES (7, 'again')", &[]).await.expect_err("its key is back");
    assert_eq!(common::sqlstate(&e).as_deref(), Some("23505"));
    let e = client.query_one("SELECT count(*) FROM gone", &[]).await.expect_err("committed drop stays");
    assert_eq!(common::sqlstate(&e).as_deref(), Some("42P01"));
    let left: i64 = client
        .query_one(
            "SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'provisional')
                  + (SELECT count(*) FROM pg_views WHERE viewname = 'made_v')
                  + (SELECT count(*) FROM pg_indexes WHERE indexname = 'made_idx')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "what the open block created is gone after the crash");
    let n: i64 = client.query_one("SELECT count(*) FROM made_and_committed.t", &[]).await.unwrap().get(0);
    assert_eq!(n, 0);
    // The same once more after a clean ROLLBACK on the restarted server.
    client.batch_execute("BEGIN; DROP TABLE kept; ROLLBACK").await.unwrap();
    let n: i64 = client.query_one("SELECT count(*) FROM kept", &[]).await.unwrap().get(0);
    assert_eq!(n, 5000);
}

/// What an open block changed in place — a table renamed, a default set, a
/// function replaced, made or dropped, a comment, a view replaced or
/// dropped, an index renamed, an index, a sequence and an empty schema
/// dropped, a sequence altered — is as before the block after a kill -9
/// before its COMMIT.
#[tokio::test]
async fn a_block_that_never_committed_keeps_none_of_its_in_place_changes_after_kill_9() {
    let server = common::start_with_shards(2);
    if server.is_external() {
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    client
        .batch_execute(
            "CREATE TABLE alt (id integer, v text);
             INSERT INTO alt VALUES (1, 'a');
             CREATE INDEX alt_v ON alt (v);
             CREATE INDEX alt_id ON alt (id);
             CREATE VIEW other_view AS SELECT 1 AS one;
             CREATE VIEW replaced_view AS SELECT 1 AS one;
             CREATE FUNCTION f_keep(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x + 1';
             CREATE FUNCTION f_gone(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x * 2';
             COMMENT ON TABLE alt IS 'before';
             CREATE SEQUENCE seq_drop;
             CREATE SEQUENCE seq_alter;
             CREATE SCHEMA empty_schema;",
        )
        .await
        .unwrap();
    let block = server.connect(common::DEFAULT_DB).await;
    block
        .batch_execute(
            "BEGIN;
             ALTER TABLE alt RENAME TO alt_renamed;
             ALTER TABLE alt_renamed RENAME COLUMN id TO ident;
             ALTER TABLE alt_renamed ALTER COLUMN v SET DEFAULT 'dflt';
             CREATE OR REPLACE FUNCTION f_keep(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x + 100';
             CREATE FUNCTION f_new(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x';
             DROP FUNCTION f_gone(integer);
             COMMENT ON TABLE alt_renamed IS 'after';
             DROP VIEW other_view;
             CREATE VIEW other_view AS SELECT 'made in the block' AS one;
             CREATE OR REPLACE VIEW replaced_view AS SELECT 2 AS one;
             DROP INDEX alt_v;
             ALTER INDEX alt_id RENAME TO alt_id_renamed;
             DROP SEQUENCE seq_drop;
             ALTER SEQUENCE seq_alter INCREMENT BY 9;
             DROP SCHEMA empty_schema;",
        )
        .await
        .unwrap();
    let dir = server.kill9();

    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let row = client
        .query_one(
            "SELECT (SELECT id FROM alt), (SELECT column_default FROM information_schema.columns WHERE table_name = 'alt' AND column_name = 'v'),
                    f_keep(1), f_gone(1), (SELECT count(*) FROM pg_proc WHERE proname = 'f_new'),
                    obj_description('alt'::regclass, 'pg_class'),
                    (SELECT one::text FROM other_view), (SELECT one FROM replaced_view),
                    (SELECT count(*) FROM pg_indexes WHERE indexname IN ('alt_v', 'alt_id') AND tablename = 'alt'),
                    (SELECT count(*) FROM pg_sequences WHERE sequencename = 'seq_drop'),
                    (SELECT increment_by FROM pg_sequences WHERE sequencename = 'seq_alter'),
                    (SELECT count(*) FROM pg_namespace WHERE nspname = 'empty_schema')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 1, "the table's name and column name are back");
    assert_eq!(row.get::<_, Option<String>>(1), None, "no default");
    assert_eq!((row.get::<_, i32>(2), row.get::<_, i32>(3), row.get::<_, i64>(4)), (2, 2, 0), "functions");
    assert_eq!(row.get::<_, Option<String>>(5).as_deref(), Some("before"));
    assert_eq!((row.get::<_, String>(6), row.get::<_, i32>(7)), ("1".to_string(), 1), "views");
    assert_eq!((row.get::<_, i64>(8), row.get::<_, i64>(9), row.get::<_, i64>(10), row.get::<_, i64>(11)), (2, 1, 1, 1));
    // The undone block leaves nothing listed: the next restart changes nothing.
    client.batch_execute("ALTER TABLE alt RENAME TO alt_after; COMMENT ON TABLE alt_after IS 'later'").await.unwrap();
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let comment: Option<String> = client.query_one("SELECT obj_description('alt_after'::regclass, 'pg_class')", &[]).await.unwrap().get(0);
    assert_eq!(comment.as_deref(), Some("later"));
}

async fn counts(client: &tokio_postgres::Client, tables: &[&str]) -> Vec<i64> {
    let mut out = Vec::new();
    for t in tables {
        out.push(client.query_one(&format!("SELECT count(*) FROM {t}"), &[]).await.unwrap().get(0));
    }
    out
}

/// A transaction block that wrote several tables commits them as one write:
/// when one of them was dropped meanwhile the COMMIT fails and no other table
/// gets the block's rows (nor does its DDL stay), and a crash just before the
/// block's Commit record leaves none of them there either.
#[tokio::test]
async fn a_block_writing_several_tables_commits_all_of_them_or_none() {
    let server = common::start_with_shards(1);
    if server.is_external() {
        return;
    }
    let tables = ["t1", "t2", "t3", "t4"];
    let (a, b) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    a.batch_execute(
        "CREATE TABLE t1 (v integer); CREATE TABLE t2 (v integer); CREATE TABLE t3 (v integer);
         CREATE TABLE t4 (v integer); CREATE TABLE doomed (v integer); INSERT INTO t1 VALUES (0)",
    )
    .await
    .unwrap();
    let block = |extra: &str| {
        let mut sql = String::from("BEGIN;");
        for t in tables {
            sql += &format!(" INSERT INTO {t} SELECT generate_series(1, 100);");
        }
        sql + extra
    };
    a.batch_execute(&block(
        " INSERT INTO doomed VALUES (1); CREATE TABLE made_in_the_block (a integer); ALTER TABLE t4 RENAME TO t4_renamed;",
    ))
    .await
    .unwrap();
    b.batch_execute("DROP TABLE doomed").await.unwrap();
    let failed = a.batch_execute("COMMIT").await.expect_err("a table of the block is gone");
    assert_eq!(failed.code(), Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE));
    assert_eq!(counts(&b, &tables).await, [1, 0, 0, 0], "no table got the failed block's rows");
    // Nor does its DDL stay: the failed COMMIT rolled the block back.
    let e = b.query("SELECT * FROM made_in_the_block", &[]).await.expect_err("the block's table went with it");
    assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE));
    a.batch_execute(&block(" COMMIT;")).await.unwrap();
    assert_eq!(counts(&b, &tables).await, [101, 100, 100, 100]);
    drop((a, b));

    let server = common::start_configured(server.kill9(), 1, &[], &[("BREWRIC_FAILPOINT", "commit-before-commit-record")]);
    let a = server.connect(common::DEFAULT_DB).await;
    a.batch_execute(&block(" COMMIT;")).await.expect_err("the failpoint stops the server at the block's COMMIT");
    drop(a);
    let server = common::start_in(server.kill9(), 1);
    let a = server.connect(common::DEFAULT_DB).await;
    assert_eq!(counts(&a, &tables).await, [101, 100, 100, 100], "none of the cut-short block's rows");
}

/// A migration block (ALTER TABLE … ADD/DROP COLUMN) that never committed:
/// after kill -9 the original table is back with every row (in segments and
/// in the WAL), its key and its serial sequence; a CHECKPOINT while the
/// block was open changes nothing.
#[tokio::test]
async fn an_alter_table_rewrite_in_a_block_is_undone_by_kill_9() {
    let server = common::start_with_shards(2);
    if server.is_external() {
        return;
    }
    let (a, b) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    a.batch_execute(
        "CREATE TABLE migrated (id serial PRIMARY KEY, v text, old integer);
         INSERT INTO migrated (v, old) SELECT 'row ' || g, g FROM generate_series(1, 2000) AS g;
         CHECKPOINT;
         INSERT INTO migrated (v, old) SELECT 'row ' || g, g FROM generate_series(2001, 3000) AS g;",
    )
    .await
    .unwrap();
    a.batch_execute(
        "BEGIN; ALTER TABLE migrated ADD COLUMN note text DEFAULT 'n'; ALTER TABLE migrated DROP COLUMN old;
         INSERT INTO migrated (v) VALUES ('in the block')",
    )
    .await
    .unwrap();
    b.batch_execute("CHECKPOINT").await.unwrap();
    drop((a, b));
    let server = common::start_in(server.kill9(), 2);
    let a = server.connect(common::DEFAULT_DB).await;
    let row = a
        .query_one("SELECT count(*), sum(old), count(DISTINCT v), max(id) FROM migrated", &[])
        .await
        .unwrap();
    let (n, sum, distinct, max): (i64, i64, i64, i32) = (row.get(0), row.get(1), row.get(2), row.get(3));
    assert_eq!((n, sum, distinct, max), (3000, 3000 * 3001 / 2, 3000, 3000), "the original rows, all of them");
    let e = a.query("SELECT note FROM migrated", &[]).await.expect_err("the block's column is gone");
    assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNDEFINED_COLUMN));
    let e = a.execute("INSERT INTO migrated VALUES (7, 'dup', 0)", &[]).await.expect_err("the key is enforced");
    assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION));
    a.execute("INSERT INTO migrated (v, old) VALUES ('after', 0)", &[]).await.unwrap();
    let tables: i64 = a
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'migrated%'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "no leftover table");
}

/// CREATE TABLE … AS is one statement: cut short by a crash before its rows
/// commit, it leaves no table behind (an empty table would be a half-done
/// statement); done, its table and rows stay.
#[tokio::test]
async fn create_table_as_cut_short_by_kill_9_leaves_no_table() {
    let server = common::start_with_shards(2);
    if server.is_external() {
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    let done = client.execute("CREATE TABLE cta_src AS SELECT g AS n FROM generate_series(1, 20000) AS g", &[]).await.unwrap();
    assert_eq!(done, 20000, "the command tag is SELECT 20000");
    drop(client);
    let failpoint = [("BREWRIC_FAILPOINT", "commit-before-commit-record")];
    let server = common::start_configured(server.kill9(), 2, &[], &failpoint);
    let client = server.connect(common::DEFAULT_DB).await;
    client
        .batch_execute("CREATE TABLE cta_cut AS SELECT n FROM cta_src")
        .await
        .expect_err("the failpoint stops the server");
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let row = client
        .query_one("SELECT (SELECT count(*) FROM cta_src), NOT EXISTS (SELECT FROM pg_class WHERE relname = 'cta_cut')", &[])
        .await
        .unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, bool>(1)), (20000, true));
}

/// A sequence never hands out a value twice, also across kill -9: values
/// nextval() returned before the crash (kept in no row) and serial values of
/// committed rows are all below what it returns after the restart; setval's
/// position survives too.
#[tokio::test]
async fn sequences_hand_out_no_value_twice_across_kill_9() {
    let server = common::start_with_shards(2);
    if server.is_external() {
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("CREATE SEQUENCE crash_seq; CREATE SEQUENCE crash_set; CREATE TABLE crash_serial (id serial, v int)").await.unwrap();
    // setval first: a catalog save after the nextvals would cover them by chance.
    client.batch_execute("SELECT setval('crash_set', 77)").await.unwrap();
    let taken: i64 = client.query_one("SELECT max(nextval('crash_seq')) FROM generate_series(1, 5000)", &[]).await.unwrap().get(0);
    assert_eq!(taken, 5000);
    client.batch_execute("INSERT INTO crash_serial (v) SELECT g FROM generate_series(1, 3000) AS g").await.unwrap();
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let row = client
        .query_one("SELECT nextval('crash_seq'), nextval('crash_set'), (SELECT max(id) FROM crash_serial)", &[])
        .await
        .unwrap();
    let (next, set, max_id): (i64, i64, i32) = (row.get(0), row.get(1), row.get(2));
    assert!(next > 5000, "nextval after the restart: {next}");
    assert_eq!((set, max_id), (78, 3000));
    client.batch_execute("INSERT INTO crash_serial (v) VALUES (0)").await.unwrap();
    let ids: i64 = client.query_one("SELECT count(DISTINCT id) FROM crash_serial", &[]).await.unwrap().get(0);
    assert_eq!(ids, 3001, "no serial value given twice");
    // ALTER SEQUENCE's settings and restart point survive a kill -9 too.
    client.batch_execute("ALTER SEQUENCE crash_set AS integer INCREMENT BY 5 MAXVALUE 9000 CACHE 3 RESTART WITH 1000").await.unwrap();
    // A sequence made by a block that never commits is gone after the crash.
    client.batch_execute("BEGIN; CREATE SEQUENCE crash_in_block; SELECT nextval('crash_in_block')").await.unwrap();
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let row = client
        .query_one(
            "SELECT format_type(seqtypid, NULL), seqincrement, seqmax, seqcache, (SELECT is_called FROM crash_set), nextval('crash_set'), nextval('crash_set')
             FROM pg_sequence WHERE seqrelid = 'crash_set'::regclass",
            &[],
        )
        .await
        .unwrap();
    let settings: (String, i64, i64, i64, bool) = (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
    assert_eq!(settings, ("integer".to_string(), 5, 9000, 3, false));
    let values: (i64, i64) = (row.get(5), row.get(6));
    assert_eq!(values, (1000, 1005));
    let left: i64 = client.query_one("SELECT count(*) FROM pg_sequences WHERE sequencename = 'crash_in_block'", &[]).await.unwrap().get(0);
    assert_eq!(left, 0, "the uncommitted block's sequence");
}
