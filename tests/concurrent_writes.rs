//! Writes racing each other on one table: what each sees and what is
//! stored must be what some serial order of them would give.

mod common;

use std::time::Duration;

use futures::SinkExt;

/// An INSERT checks its unique keys, then appends its rows; an UPDATE that
/// runs in between (made likely here: every INSERT pauses 400 ms after its
/// check) must not give a key the INSERT just checked. The UPDATE waits for
/// the INSERT and then fails 23505; no key is stored twice. The same for a
/// COPY (the pause is between its key check and its commit).
#[tokio::test]
async fn an_update_between_an_inserts_key_check_and_its_write_makes_no_duplicate() {
    let dir = std::env::temp_dir().join(format!("brewric-unique-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT_PAUSE", "insert-after-unique-check:400")]);
    let (a, b) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    a.batch_execute("CREATE TABLE t (id integer PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'one'), (2, 'two')")
        .await
        .unwrap();
    let insert = tokio::spawn(async move {
        let r = a.execute("INSERT INTO t VALUES (3, 'three')", &[]).await;
        (a, r)
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let update = b.execute("UPDATE t SET id = 3 WHERE id = 2", &[]).await;
    let (a, inserted) = insert.await.unwrap();
    inserted.expect("the INSERT checked its key first");
    let e = update.expect_err("the UPDATE runs after the INSERT: id 3 is taken");
    assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION));
    let ids: Vec<i32> = a.query("SELECT id FROM t ORDER BY id", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(ids, [1, 2, 3]);

    let copy = tokio::spawn(async move {
        let sink = a.copy_in::<_, bytes::Bytes>("COPY t FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"4\tfour\n")).await.unwrap();
        let r = sink.finish().await;
        (a, r)
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let update = b.execute("UPDATE t SET id = 4 WHERE id = 1", &[]).await;
    let (a, copied) = copy.await.unwrap();
    assert_eq!(copied.expect("the COPY checked its key first"), 1);
    let e = update.expect_err("the UPDATE runs after the COPY: id 4 is taken");
    assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION));
    let ids: Vec<i32> = a.query("SELECT id FROM t ORDER BY id", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(ids, [1, 2, 3, 4]);
}

/// A key a transaction block inserted is not stored until its COMMIT, yet
/// it is taken: a DELETE/UPDATE by another session in between (which makes
/// the key sets be rebuilt from the stored rows) must not free it, neither
/// for another INSERT nor for the UPDATE's own new rows (23505 at once:
/// PostgreSQL would wait for the block to end). After the block's ROLLBACK
/// the key is free again, also in the sets rebuilt meanwhile.
#[tokio::test]
async fn a_key_an_open_block_inserted_stays_taken_across_another_sessions_rewrite() {
    let server = common::start();
    let (a, b) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    a.batch_execute("CREATE TABLE k (id integer PRIMARY KEY, v text); INSERT INTO k VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
        .await
        .unwrap();
    let unique = |r: Result<u64, tokio_postgres::Error>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION), "{what}");
    };
    a.batch_execute("BEGIN; INSERT INTO k VALUES (5, 'e')").await.unwrap();
    b.execute("DELETE FROM k WHERE id = 1", &[]).await.unwrap();
    unique(b.execute("INSERT INTO k VALUES (5, 'again')", &[]).await, "the open block holds id 5");
    unique(b.execute("UPDATE k SET id = 5 WHERE id = 2", &[]).await, "an UPDATE to the open block's key");
    a.batch_execute("COMMIT").await.unwrap();
    let ids: Vec<i32> = a.query("SELECT id FROM k ORDER BY id", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(ids, [2, 3, 4, 5]);

    a.batch_execute("BEGIN; INSERT INTO k VALUES (6, 'f')").await.unwrap();
    b.execute("DELETE FROM k WHERE id = 2", &[]).await.unwrap();
    unique(b.execute("INSERT INTO k VALUES (6, 'again')", &[]).await, "the open block holds id 6");
    a.batch_execute("ROLLBACK").await.unwrap();
    b.execute("INSERT INTO k VALUES (6, 'after the rollback')", &[]).await.unwrap();
    b.execute("UPDATE k SET v = 'x' WHERE id = 3", &[]).await.unwrap();
    let rows: Vec<(i32, String)> =
        a.query("SELECT id, v FROM k ORDER BY id", &[]).await.unwrap().iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(rows, [(3, "x".into()), (4, "d".into()), (5, "e".into()), (6, "after the rollback".into())]);
}

/// INSERT … ON CONFLICT DO NOTHING decides which rows to skip, then adds
/// the rest's keys: an UPDATE in between (every such INSERT pauses 400 ms
/// after its decision here) waits for it, so the INSERT neither fails with
/// 23505 nor stores a key twice; another INSERT of the same key in between
/// makes it skip that row.
#[tokio::test]
async fn an_update_between_on_conflicts_decision_and_its_write_waits_for_it() {
    let dir = std::env::temp_dir().join(format!("brewric-conflict-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT_PAUSE", "insert-after-conflict-check:400")]);
    let (a, b) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    a.batch_execute("CREATE TABLE c (id integer PRIMARY KEY, v text); INSERT INTO c VALUES (1, 'one')").await.unwrap();
    let insert = tokio::spawn(async move {
        let r = a.execute("INSERT INTO c VALUES (1, 'skipped'), (7, 'seven') ON CONFLICT DO NOTHING", &[]).await;
        (a, r)
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let update = b.execute("UPDATE c SET id = 7 WHERE id = 1", &[]).await;
    let (a, inserted) = insert.await.unwrap();
    assert_eq!(inserted.expect("the INSERT decided first"), 1);
    let e = update.expect_err("the UPDATE runs after the INSERT: id 7 is taken");
    assert_eq!(e.code(), Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION));
    let rows: Vec<(i32, String)> =
        a.query("SELECT id, v FROM c ORDER BY id", &[]).await.unwrap().iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(rows, [(1, "one".into()), (7, "seven".into())]);

    // Another INSERT adds the key after the decision: the INSERT skips the
    // row (checking again) instead of failing with 23505.
    let skipping = tokio::spawn(async move {
        let r = a.execute("INSERT INTO c VALUES (8, 'late') ON CONFLICT DO NOTHING", &[]).await;
        (a, r)
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    b.execute("INSERT INTO c VALUES (8, 'first')", &[]).await.unwrap();
    let (a, skipped) = skipping.await.unwrap();
    assert_eq!(skipped.unwrap_or_else(|e| panic!("{}", common::describe_error(&e))), 0, "the row is skipped");
    let v: String = a.query_one("SELECT v FROM c WHERE id = 8", &[]).await.unwrap().get(0);
    assert_eq!(v, "first");
}

/// A block that rewrites a table (ALTER TABLE … ADD COLUMN) holds other
/// writers off until it ends, as PostgreSQL's lock does: an INSERT or an
/// UPDATE from another session waits, then writes the table as the block
/// left it (the original after ROLLBACK, the new shape after COMMIT).
#[tokio::test]
async fn writers_wait_for_a_block_that_rewrote_a_table() {
    let server = common::start();
    let (a, mut b) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    a.batch_execute("CREATE TABLE w (id integer PRIMARY KEY, v text); INSERT INTO w VALUES (1, 'one')").await.unwrap();
    let mut round = 0;
    for end in ["ROLLBACK", "COMMIT"] {
        for statement in ["INSERT INTO w (id, v) VALUES ({round}, 'waited')", "UPDATE w SET v = 'waited' WHERE id = 1"] {
            round += 10;
            let sql = statement.replace("{round}", &round.to_string());
            a.batch_execute(&format!("BEGIN; ALTER TABLE w ADD COLUMN extra{round} integer")).await.unwrap();
            let waiting = tokio::spawn(async move {
                let r = b.execute(&sql, &[]).await;
                (b, r)
            });
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(!waiting.is_finished(), "{statement} waits for the block ({end})");
            a.batch_execute(end).await.unwrap();
            let (back, written) = waiting.await.unwrap();
            let n = written.unwrap_or_else(|e| panic!("{statement} after {end}: {}", common::describe_error(&e)));
            assert_eq!(n, 1, "{statement} after {end}");
            b = back;
            let check = if statement.starts_with("INSERT") {
                format!("SELECT count(*) FROM w WHERE id = {round}")
            } else {
                "SELECT count(*) FROM w WHERE id = 1 AND v = 'waited'".to_string()
            };
            let row = a.query_one(&check, &[]).await.unwrap();
            assert_eq!(row.get::<_, i64>(0), 1, "{statement}'s row, after {end}");
            a.batch_execute("UPDATE w SET v = 'one' WHERE id = 1").await.unwrap();
        }
    }
    let width = a.query("SELECT * FROM w LIMIT 1", &[]).await.unwrap()[0].len();
    assert_eq!(width, 4, "the two committed columns");
}
