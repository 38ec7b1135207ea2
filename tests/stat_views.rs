//! The statistics views: `pg_stat_activity` (one row per connected session,
//! its state and last query; pg_backend_pid() is its pid) and
//! `pg_stat_progress_copy` (a COPY in progress seen from another session,
//! its counters growing, gone once it ends).

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::SinkExt;

/// Rows of a simple query, each as its text values ("NULL" for NULL).
async fn rows(client: &tokio_postgres::Client, sql: &str) -> Vec<Vec<String>> {
    common::text_rows(client, sql).await
}

async fn one(client: &tokio_postgres::Client, sql: &str) -> Vec<String> {
    let mut r = rows(client, sql).await;
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r.remove(0)
}

/// Runs `sql` until `done` accepts its rows (the other session's change is
/// reported asynchronously), failing after 10 seconds.
async fn wait_for(
    client: &tokio_postgres::Client,
    sql: &str,
    done: impl Fn(&[Vec<String>]) -> bool,
) -> Vec<Vec<String>> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = rows(client, sql).await;
        if done(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "{sql}: still {r:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn pg_stat_activity_shows_each_session() {
    let server = common::start();
    let a = server.fresh_database("stat_activity").await;
    let b = server.connect("stat_activity").await;

    let b_pid = one(&b, "SELECT pg_backend_pid()").await[0].clone();
    rows(&b, "SELECT 42 AS marker").await;

    let own_query = "SELECT pid, state, query, usename, backend_type, application_name, \
                     pid = pg_backend_pid() AS me, wait_event, query_start IS NOT NULL, \
                     backend_start <= state_change \
                     FROM pg_stat_activity WHERE datname = 'stat_activity' ORDER BY pid";
    let r = rows(&a, own_query).await;
    assert_eq!(r.len(), 2, "{r:?}");
    let me: Vec<&Vec<String>> = r.iter().filter(|row| row[6] == "t").collect();
    assert_eq!(me.len(), 1, "exactly one row is the querying session's: {r:?}");
    assert_eq!(me[0][1], "active");
    assert_eq!(me[0][2], own_query, "the querying session shows its own query");
    assert_eq!(me[0][7], "NULL", "an active session waits on nothing");
    let other = r.iter().find(|row| row[0] == b_pid).unwrap_or_else(|| panic!("no row for pid {b_pid}: {r:?}"));
    assert_eq!(other[1], "idle");
    assert_eq!(other[2], "SELECT 42 AS marker", "an idle session shows its last query");
    assert_eq!(other[3], common::USER);
    assert_eq!(other[4], "client backend");
    assert_eq!(other[5], "brewric-tests");
    assert_eq!(other[7], "ClientRead");
    assert_eq!((other[8].as_str(), other[9].as_str()), ("t", "t"));

    // pg_backend_pid() is the pid of the session's own row, and the key the
    // client got in BackendKeyData (what the cancel registry uses).
    let mine = one(&a, "SELECT count(*) FROM pg_stat_activity WHERE pid = pg_backend_pid() AND state = 'active'").await;
    assert_eq!(mine, ["1"]);

    // The view joins and filters like any relation.
    let joined = one(
        &a,
        &format!(
            "SELECT d.datname, s.state FROM pg_catalog.pg_stat_activity s \
             JOIN pg_database d ON d.oid = s.datid WHERE s.pid = {b_pid}"
        ),
    )
    .await;
    assert_eq!(joined, ["stat_activity", "idle"]);

    // Inside a transaction block: idle in transaction, since BEGIN.
    rows(&b, "BEGIN").await;
    let r = one(
        &a,
        &format!("SELECT state, query, xact_start IS NOT NULL FROM pg_stat_activity WHERE pid = {b_pid}"),
    )
    .await;
    assert_eq!(r, ["idle in transaction", "BEGIN", "t"]);
    assert!(b.simple_query("SELECT 1/0").await.is_err());
    let r = one(&a, &format!("SELECT state FROM pg_stat_activity WHERE pid = {b_pid}")).await;
    assert_eq!(r, ["idle in transaction (aborted)"]);
    rows(&b, "ROLLBACK").await;
    let r = one(
        &a,
        &format!("SELECT state, xact_start IS NULL FROM pg_stat_activity WHERE pid = {b_pid}"),
    )
    .await;
    assert_eq!(r, ["idle", "t"]);

    // A closed connection's row goes.
    drop(b);
    wait_for(
        &a,
        &format!("SELECT pid FROM pg_stat_activity WHERE pid = {b_pid}"),
        |r| r.is_empty(),
    )
    .await;
    let r = rows(&a, "SELECT count(*) FROM pg_stat_activity WHERE datname = 'stat_activity'").await;
    assert_eq!(r, [["1"]]);
}

#[tokio::test]
async fn pg_stat_progress_copy_shows_a_copy_in_progress() {
    let server = common::start();
    let a = server.fresh_database("stat_copy").await;
    a.batch_execute("CREATE TABLE t (id integer, name text)").await.unwrap();
    let table_oid = one(&a, "SELECT oid FROM pg_class WHERE relname = 't'").await[0].clone();
    let b = server.connect("stat_copy").await;
    let b_pid = one(&b, "SELECT pg_backend_pid()").await[0].clone();

    // Chunks over tokio-postgres' 4 KiB buffering, so each goes out as it is sent.
    let chunk = |from: usize| -> Bytes {
        let mut s = String::new();
        for i in from..from + 500 {
            s.push_str(&format!("{i}\tname number {i}\n"));
        }
        Bytes::from(s)
    };
    let sink = b.copy_in::<_, Bytes>("COPY t FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(chunk(0)).await.unwrap();

    let progress = format!(
        "SELECT pid, relid = {table_oid}, command, type, bytes_processed, bytes_total, \
         tuples_processed, tuples_excluded, datname, datid = (SELECT oid FROM pg_database WHERE datname = 'stat_copy') \
         FROM pg_stat_progress_copy"
    );
    let first = wait_for(&a, &progress, |r| r.len() == 1 && r[0][4] != "0").await;
    let row = &first[0];
    assert_eq!(row[0], b_pid);
    assert_eq!(&row[1..4], ["t", "COPY FROM", "PIPE"]);
    assert_eq!(row[5], "0", "STDIN's size is unknown");
    assert_eq!((row[7].as_str(), row[8].as_str(), row[9].as_str()), ("0", "stat_copy", "t"));
    let bytes: u64 = row[4].parse().unwrap();
    assert_eq!(bytes, chunk(0).len() as u64);

    sink.send(chunk(500)).await.unwrap();
    let second = wait_for(&a, &progress, |r| {
        r.len() == 1 && r[0][4].parse::<u64>().unwrap_or(0) > bytes
    })
    .await;
    assert!(second[0][6].parse::<u64>().unwrap() > 0, "rows are counted: {second:?}");

    // The view joins with pg_class like the catalogs.
    let joined = one(
        &a,
        "SELECT c.relname FROM pg_stat_progress_copy p JOIN pg_class c ON c.oid = p.relid",
    )
    .await;
    assert_eq!(joined, ["t"]);

    let n = sink.finish().await.unwrap();
    assert_eq!(n, 1000);
    // Gone as soon as the COPY has completed.
    assert!(rows(&a, &progress).await.is_empty());
    assert_eq!(one(&a, "SELECT count(*) FROM t").await, ["1000"]);

    // A failed COPY goes too.
    let sink = b.copy_in::<_, Bytes>("COPY t FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(chunk(0)).await.unwrap();
    wait_for(&a, &progress, |r| r.len() == 1).await;
    sink.send(Bytes::from_static(b"not a number\tx\n")).await.unwrap();
    assert!(sink.finish().await.is_err());
    assert!(rows(&a, &progress).await.is_empty());
}
