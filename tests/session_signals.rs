//! Stopping statements and sessions, as PostgreSQL does: `statement_timeout`
//! (57014 "canceling statement due to statement timeout"), a CancelRequest
//! and `pg_cancel_backend` (57014 "… due to user request"),
//! `pg_terminate_backend` (57P01 FATAL, the connection closes, idle or not),
//! who may signal whom (42501), and `pg_sleep`, which all of them interrupt;
//! a session that ends inside a transaction block rolls it back, DDL included.
//! Passes on PostgreSQL 15 too (`bash tools/tests_on_postgres.sh --release
//! --test session_signals`).

mod common;

use std::time::{Duration, Instant};

use tokio_postgres::Client;

async fn one(client: &Client, sql: &str) -> Vec<String> {
    let rows = common::text_rows(client, sql).await;
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    rows.into_iter().next().unwrap_or_default()
}

async fn run(client: &Client, sql: &str) {
    client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {}", common::describe_error(&e)));
}

/// The SQLSTATE and message of the error `sql` fails with, and how long it took.
async fn failure(client: &Client, sql: &str) -> (String, String, Duration) {
    let started = Instant::now();
    let e = match client.simple_query(sql).await {
        Ok(_) => panic!("{sql}: succeeded, expected an error"),
        Err(e) => e,
    };
    let elapsed = started.elapsed();
    let db = e.as_db_error().unwrap_or_else(|| panic!("{sql}: not a server error: {e:?}"));
    (db.code().code().to_string(), db.message().to_string(), elapsed)
}

/// Runs `sql` until it returns `want`, for at most 10 seconds (another
/// session's state is seen asynchronously).
async fn wait_for(client: &Client, sql: &str, want: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = one(client, sql).await;
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: still {got:?}, want {want:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

const TIMEOUT: &str = "canceling statement due to statement timeout";
const USER_CANCEL: &str = "canceling statement due to user request";
const TERMINATED: &str = "terminating connection due to administrator command";

#[tokio::test]
async fn statement_timeout_cancels_sleeps_and_long_queries() {
    let server = common::start();
    let c = server.fresh_database("signals_timeout").await;

    run(&c, "SET statement_timeout = '200ms'").await;
    let (code, message, took) = failure(&c, "SELECT pg_sleep(5)").await;
    assert_eq!((code.as_str(), message.as_str()), ("57014", TIMEOUT));
    assert!(took < Duration::from_secs(4), "the timeout stopped the sleep: {took:?}");

    // A query that computes for a long time stops too (between batches).
    let (code, message, _) = failure(
        &c,
        "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b",
    )
    .await;
    assert_eq!((code.as_str(), message.as_str()), ("57014", TIMEOUT));

    // The session goes on; a statement within the limit is not disturbed.
    assert_eq!(one(&c, "SELECT pg_sleep(0.05), 7").await, ["", "7"]);

    // Over the extended protocol (Parse/Bind/Execute) alike.
    let e = c.query("SELECT pg_sleep($1)", &[&5.0f64]).await.expect_err("timed out");
    let db = e.as_db_error().expect("server error");
    assert_eq!((db.code().code(), db.message()), ("57014", TIMEOUT));

    // In a transaction block, the timed-out statement fails the block.
    run(&c, "BEGIN").await;
    let (code, _, _) = failure(&c, "SELECT pg_sleep(5)").await;
    assert_eq!(code, "57014");
    let (code, _, _) = failure(&c, "SELECT 1").await;
    assert_eq!(code, "25P02");
    run(&c, "ROLLBACK").await;

    // A COPY FROM STDIN that outlasts the limit fails, and keeps nothing.
    run(&c, "CREATE TABLE copied (n integer)").await;
    {
        use futures::SinkExt;
        let sink = c.copy_in("COPY copied FROM STDIN").await.expect("copy starts");
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"1\n")).await.expect("first row");
        tokio::time::sleep(Duration::from_millis(400)).await;
        // The server may already have answered with the error: sending more
        // can fail too, the result is what counts.
        let _ = sink.send(bytes::Bytes::from_static(b"2\n")).await;
        let e = sink.finish().await.expect_err("timed out");
        let db = e.as_db_error().expect("server error");
        assert_eq!((db.code().code(), db.message()), ("57014", TIMEOUT));
    }
    assert_eq!(one(&c, "SELECT count(*) FROM copied").await, ["0"]);

    // 0 turns the limit off.
    run(&c, "SET statement_timeout = 0").await;
    assert_eq!(one(&c, "SELECT pg_sleep(0.3), 'slept'").await, ["", "slept"]);
    assert_eq!(one(&c, "SELECT pg_sleep(NULL) IS NULL").await, ["t"]);
}

#[tokio::test]
async fn cancel_request_and_pg_cancel_backend_stop_only_the_statement() {
    let server = common::start();
    let admin = server.fresh_database("signals_cancel").await;
    let sleeper = server.connect("signals_cancel").await;
    let pid = one(&sleeper, "SELECT pg_backend_pid()").await[0].clone();

    // pg_cancel_backend from another session.
    let sleeping = tokio::spawn(async move {
        let r = sleeper.simple_query("SELECT pg_sleep(30)").await;
        (sleeper, r)
    });
    let state = format!("SELECT state FROM pg_stat_activity WHERE pid = {pid}");
    wait_for(&admin, &state, &["active"]).await;
    assert_eq!(one(&admin, &format!("SELECT pg_cancel_backend({pid})")).await, ["t"]);
    let (sleeper, r) = sleeping.await.expect("task");
    let e = r.expect_err("canceled");
    let db = e.as_db_error().expect("server error");
    assert_eq!((db.code().code(), db.message()), ("57014", USER_CANCEL));
    // The session itself lives on.
    assert_eq!(one(&sleeper, "SELECT 'still here'").await, ["still here"]);

    // A CancelRequest on its own connection (what psql's Ctrl-C sends).
    let token = sleeper.cancel_token();
    let sleeping = tokio::spawn(async move {
        let r = sleeper.simple_query("SELECT pg_sleep(30)").await;
        (sleeper, r)
    });
    wait_for(&admin, &state, &["active"]).await;
    token.cancel_query(tokio_postgres::NoTls).await.expect("cancel request");
    let (sleeper, r) = sleeping.await.expect("task");
    let e = r.expect_err("canceled");
    assert_eq!(e.as_db_error().map(|d| d.message()), Some(USER_CANCEL));
    assert_eq!(one(&sleeper, "SELECT 1").await, ["1"]);

    // A cancel that arrives while the session is idle is lost, as in PostgreSQL.
    assert_eq!(one(&admin, &format!("SELECT pg_cancel_backend({pid})")).await, ["t"]);
    assert_eq!(one(&sleeper, "SELECT pg_sleep(0.05), 2").await, ["", "2"]);

    // No such session: false. NULL: NULL.
    assert_eq!(
        one(&admin, "SELECT pg_cancel_backend(2147483000), pg_cancel_backend(NULL) IS NULL").await,
        ["f", "t"]
    );
}

#[tokio::test]
async fn pg_terminate_backend_closes_busy_and_idle_sessions() {
    let server = common::start();
    let admin = server.fresh_database("signals_terminate").await;

    // A busy session: its statement fails with 57P01 and the connection closes.
    let busy = server.connect("signals_terminate").await;
    let busy_pid = one(&busy, "SELECT pg_backend_pid()").await[0].clone();
    let running = tokio::spawn(async move {
        let r = busy.simple_query("SELECT pg_sleep(30)").await;
        (busy, r)
    });
    let state = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {busy_pid} AND state = 'active'");
    wait_for(&admin, &state, &["1"]).await;
    assert_eq!(one(&admin, &format!("SELECT pg_terminate_backend({busy_pid})")).await, ["t"]);
    let (busy, r) = running.await.expect("task");
    let e = r.expect_err("terminated");
    let db = e.as_db_error().expect("server error");
    assert_eq!((db.code().code(), db.message(), db.severity()), ("57P01", TERMINATED, "FATAL"));
    assert!(busy.simple_query("SELECT 1").await.is_err(), "the connection is gone");

    // An idle session, picked out of pg_stat_activity as administrators do:
    // its connection closes at once, and its row goes.
    let idle = server.connect("signals_terminate").await;
    let idle_pid = one(&idle, "SELECT pg_backend_pid()").await[0].clone();
    let terminated = one(
        &admin,
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = 'signals_terminate' AND pid <> pg_backend_pid()",
    )
    .await;
    assert_eq!(terminated, ["1"]);
    let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE pid IN ({busy_pid}, {idle_pid})");
    wait_for(&admin, &gone, &["0"]).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !idle.is_closed() {
        assert!(Instant::now() < deadline, "the idle session's connection stays open");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(idle.simple_query("SELECT 1").await.is_err());

    // The terminating session and the server go on.
    assert_eq!(one(&admin, "SELECT 'alive'").await, ["alive"]);
    assert!(server.connect("signals_terminate").await.simple_query("SELECT 1").await.is_ok());
}

#[tokio::test]
async fn only_superusers_signal_other_roles_sessions() {
    let server = common::start();
    let admin = server.fresh_database("signals_roles").await;
    for sql in [
        "DROP ROLE IF EXISTS signal_alice",
        "DROP ROLE IF EXISTS signal_bob",
        "CREATE ROLE signal_alice LOGIN",
        "CREATE ROLE signal_bob LOGIN",
    ] {
        run(&admin, sql).await;
    }
    let as_role = |user: &str| {
        let mut cfg = server.config("signals_roles");
        cfg.user(user);
        cfg
    };
    let alice = common::connect_with(as_role("signal_alice")).await.expect("alice connects");
    let alice2 = common::connect_with(as_role("signal_alice")).await.expect("alice again");
    let bob = common::connect_with(as_role("signal_bob")).await.expect("bob connects");
    let admin_pid = one(&admin, "SELECT pg_backend_pid()").await[0].clone();
    let bob_pid = one(&bob, "SELECT pg_backend_pid()").await[0].clone();
    let alice2_pid = one(&alice2, "SELECT pg_backend_pid()").await[0].clone();

    let (code, message, _) = failure(&alice, &format!("SELECT pg_cancel_backend({admin_pid})")).await;
    assert_eq!((code.as_str(), message.as_str()), ("42501", "must be a superuser to cancel superuser query"));
    let (code, message, _) = failure(&alice, &format!("SELECT pg_terminate_backend({admin_pid})")).await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("42501", "must be a superuser to terminate superuser process")
    );
    let (code, message, _) = failure(&alice, &format!("SELECT pg_cancel_backend({bob_pid})")).await;
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("42501", "must be a member of the role whose query is being canceled or member of pg_signal_backend")
    );
    // A role may signal its own sessions.
    assert_eq!(one(&alice, &format!("SELECT pg_cancel_backend({alice2_pid})")).await, ["t"]);
    assert_eq!(one(&alice, &format!("SELECT pg_terminate_backend({alice2_pid})")).await, ["t"]);
    // A superuser may signal anyone.
    assert_eq!(one(&admin, &format!("SELECT pg_cancel_backend({bob_pid})")).await, ["t"]);
    assert_eq!(one(&bob, "SELECT 'bob goes on'").await, ["bob goes on"]);

    drop((alice, alice2, bob));
    let gone = "SELECT count(*) FROM pg_stat_activity WHERE usename IN ('signal_alice', 'signal_bob')";
    wait_for(&admin, gone, &["0"]).await;
    for sql in ["DROP ROLE signal_alice", "DROP ROLE signal_bob"] {
        run(&admin, sql).await;
    }
}

/// A session that ends inside a transaction block (terminated, or its
/// client gone) rolls the block back: a table it dropped is back with its
/// rows, a table it made is gone.
#[tokio::test]
async fn a_session_ending_inside_a_block_rolls_its_ddl_back() {
    let server = common::start();
    let admin = server.fresh_database("signals_block_ddl").await;
    run(&admin, "CREATE TABLE kept_rows (a integer); INSERT INTO kept_rows VALUES (1), (2), (3)").await;
    for how in ["terminated", "disconnected"] {
        let session = server.connect("signals_block_ddl").await;
        let pid = one(&session, "SELECT pg_backend_pid()").await[0].clone();
        run(&session, "BEGIN").await;
        run(&session, "DROP TABLE kept_rows").await;
        run(&session, "CREATE TABLE made_in_block (a integer)").await;
        if how == "terminated" {
            assert_eq!(one(&admin, &format!("SELECT pg_terminate_backend({pid})")).await, ["t"], "{how}");
        } else {
            drop(session);
        }
        wait_for(&admin, &format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}"), &["0"]).await;
        assert_eq!(one(&admin, "SELECT count(*) FROM kept_rows").await, ["3"], "{how}");
        assert_eq!(one(&admin, "SELECT count(*) FROM pg_tables WHERE tablename = 'made_in_block'").await, ["0"], "{how}");
    }
}
