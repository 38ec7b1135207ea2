//! Checkpoints: memtables become segment files and the WAL is truncated
//! behind them. A crash at any point of a checkpoint (after a segment file is
//! written but not synced, after it is synced, before the manifest is
//! renamed into place, after it) loses no acknowledged row and duplicates
//! none; rows keep their values through segments; TRUNCATE and DROP of a
//! flushed table stay done after a restart.

mod common;

use tokio_postgres::Client;

const FAILPOINTS: &[&str] = &[
    "flush-after-segment-write",
    "flush-after-segment-sync",
    "checkpoint-before-manifest-rename",
    "checkpoint-after-manifest",
];

/// A brewricd started by the test (None against an external server, which
/// cannot be killed) with the test table `m` created.
async fn start_with_table(shards: usize) -> Option<(common::Server, Client)> {
    let server = common::start_with_shards(shards);
    if server.is_external() {
        eprintln!("skipped: needs a brewricd started by the test");
        return None;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("CREATE TABLE m (time timestamptz, host integer, v double precision, s text)").await.unwrap();
    Some((server, client))
}

/// Inserts rows `first..first + n` of the test table (spread over both shards).
async fn insert(client: &Client, first: i64, n: i64) {
    let values: Vec<String> = (first..first + n)
        .map(|i| format!("('2016-01-01 00:00:00+00'::timestamptz + interval '10 seconds' * {i}, {}, {}.5, 'row {i}')", i % 7, i % 100))
        .collect();
    client
        .batch_execute(&format!("INSERT INTO m VALUES {}", values.join(",")))
        .await
        .unwrap();
}

/// (count, sum of k, sum of v, distinct s, min time, max time) of the table.
async fn summary(client: &Client) -> String {
    let row = client
        .query_one(
            "SELECT count(*)::text || ' ' || coalesce(sum(host), 0)::text || ' ' || coalesce(sum(v), 0)::text || ' ' || \
             count(DISTINCT s)::text || ' ' || coalesce(min(time)::text, '-') || ' ' || coalesce(max(time)::text, '-') FROM m",
            &[],
        )
        .await
        .unwrap();
    row.get(0)
}

fn expected(n: i64) -> String {
    let host: i64 = (0..n).map(|i| i % 7).sum();
    let v: f64 = (0..n).map(|i| (i % 100) as f64 + 0.5).sum();
    let fmt_t = |i: i64| {
        let secs = i * 10;
        format!(
            "2016-01-{:02} {:02}:{:02}:{:02}+00",
            1 + secs / 86400,
            secs % 86400 / 3600,
            secs % 3600 / 60,
            secs % 60
        )
    };
    format!("{n} {host} {v} {n} {} {}", fmt_t(0), fmt_t(n - 1))
}

fn segment_files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(dir.join("segments"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            out.push(format!(
                "{}/{}",
                d.file_name().to_string_lossy(),
                f.file_name().to_string_lossy()
            ));
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn a_crash_at_any_point_of_a_checkpoint_loses_and_duplicates_nothing() {
    for fp in FAILPOINTS {
        let Some((server, client)) = start_with_table(2).await else { return };
        // Rows already in segments from an earlier checkpoint, and rows only in the WAL.
        insert(&client, 0, 3000).await;
        client.batch_execute("CHECKPOINT").await.unwrap();
        insert(&client, 3000, 5000).await;
        let dir = server.kill9();

        let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT", fp)]);
        let client = server.connect(common::DEFAULT_DB).await;
        assert_eq!(
            summary(&client).await,
            expected(8000),
            "{fp}: after the first restart"
        );
        insert(&client, 8000, 2000).await;
        let crashed = client.batch_execute("CHECKPOINT").await;
        assert!(
            crashed.is_err(),
            "{fp}: the failpoint did not stop the server"
        );
        let dir = server.kill9();

        let server = common::start_in(dir, 2);
        let client = server.connect(common::DEFAULT_DB).await;
        assert_eq!(
            summary(&client).await,
            expected(10_000),
            "{fp}: after a crash inside a checkpoint"
        );
        client.batch_execute("CHECKPOINT").await.unwrap();
        assert_eq!(
            summary(&client).await,
            expected(10_000),
            "{fp}: after the next checkpoint"
        );
        let dir = server.kill9();
        let files = segment_files(&dir);
        let manifest = std::fs::read_to_string(dir.join("checkpoint.json")).unwrap();
        for f in &files {
            assert!(
                manifest.contains(f.as_str()),
                "{fp}: {f} is on disk but not in the manifest"
            );
        }

        let server = common::start_in(dir, 2);
        let client = server.connect(common::DEFAULT_DB).await;
        assert_eq!(
            summary(&client).await,
            expected(10_000),
            "{fp}: after a restart from segments"
        );
    }
}

#[tokio::test]
async fn truncate_and_drop_of_flushed_tables_survive_restarts_and_free_their_files() {
    let Some((server, client)) = start_with_table(2).await else { return };
    client
        .batch_execute("CREATE TABLE gone (a integer)")
        .await
        .unwrap();
    insert(&client, 0, 4000).await;
    client
        .batch_execute("INSERT INTO gone VALUES (1), (2), (3); CHECKPOINT")
        .await
        .unwrap();
    let flushed = segment_files(server.data_dir().unwrap());
    assert!(!flushed.is_empty());
    client
        .batch_execute("TRUNCATE m; DROP TABLE gone")
        .await
        .unwrap();
    insert(&client, 0, 10).await;
    let dir = server.kill9();

    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, expected(10));
    client.batch_execute("CHECKPOINT").await.unwrap();
    let files = segment_files(server.data_dir().unwrap());
    assert!(
        !files.is_empty() && files.iter().all(|f| !flushed.contains(f)),
        "the truncated and dropped tables' files are gone: {files:?}"
    );
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, expected(10));
    let e = client.query("SELECT * FROM gone", &[]).await.unwrap_err();
    assert_eq!(common::sqlstate(&e).as_deref(), Some("42P01"));
}

#[tokio::test]
async fn delete_and_update_of_flushed_rows_survive_crashes_and_free_the_old_files() {
    let Some((server, client)) = start_with_table(2).await else { return };
    insert(&client, 0, 4000).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let flushed = segment_files(server.data_dir().unwrap());
    assert!(!flushed.is_empty());
    let deleted = client.execute("DELETE FROM m WHERE host = 3", &[]).await.unwrap();
    assert_eq!(deleted, (0..4000).filter(|i| i % 7 == 3).count() as u64);
    let updated = client.execute("UPDATE m SET v = v + 1000 WHERE host = 1", &[]).await.unwrap();
    assert_eq!(updated, (0..4000).filter(|i| i % 7 == 1).count() as u64);
    insert(&client, 4000, 10).await;
    let before = summary(&client).await;
    let dir = server.kill9();

    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, before, "after a crash");
    client.batch_execute("CHECKPOINT").await.unwrap();
    let files = segment_files(server.data_dir().unwrap());
    assert!(files.iter().all(|f| !flushed.contains(f)), "the rewritten segments are gone: {files:?}");
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, before, "after a checkpoint and a crash");
    let n: i64 = client.query_one("SELECT count(*) FROM m WHERE host = 3", &[]).await.unwrap().get(0);
    assert_eq!(n, (4000..4010).filter(|i| i % 7 == 3).count() as i64, "only the rows inserted after the DELETE");
}

/// `days` days of the test table from 2016-01-01, a row a minute, flushed:
/// each of the 2 shards writes one segment per day. Returns their files.
async fn flush_days(server: &common::Server, client: &Client, days: i64) -> Vec<String> {
    client
        .batch_execute(&format!(
            "INSERT INTO m SELECT timestamptz '2016-01-01 00:00:00+00' + interval '1 minute' * i, i % 7, i % 100 + 0.5, 'row ' || i \
             FROM generate_series(0, {days} * 1440 - 1) AS i"
        ))
        .await
        .unwrap();
    client.batch_execute("CHECKPOINT").await.unwrap();
    let flushed = segment_files(server.data_dir().unwrap());
    assert_eq!(flushed.len() as i64, 2 * days, "a segment per shard and day: {flushed:?}");
    flushed
}

#[tokio::test]
async fn a_delete_or_update_rewrites_only_the_days_it_hits() {
    let Some((server, client)) = start_with_table(2).await else { return };
    let flushed = flush_days(&server, &client, 5).await;
    let deleted = client
        .execute("DELETE FROM m WHERE time >= '2016-01-03 10:00:00+00' AND time < '2016-01-03 11:00:00+00'", &[])
        .await
        .unwrap();
    assert_eq!(deleted, 60);
    let updated = client
        .execute("UPDATE m SET v = -1 WHERE time >= '2016-01-05 00:00:00+00' AND host = 2", &[])
        .await
        .unwrap();
    assert_eq!(updated, (4 * 1440..5 * 1440).filter(|i| i % 7 == 2).count() as u64);
    let expect = |client: Client| async move {
        let day = |d: u32| format!("time >= '2016-01-0{d} 00:00:00+00' AND time < '2016-01-0{} 00:00:00+00'", d + 1);
        let count = |w: String| format!("SELECT count(*) FROM m WHERE {w}");
        for (sql, n) in [
            (count(day(3)), 1440 - 60),
            (count(format!("{} AND v = -1", day(5))), updated as i64),
            (count("v = -1".into()), updated as i64),
            ("SELECT count(*) FROM m".into(), 5 * 1440 - 60),
        ] {
            let got: i64 = client.query_one(&sql, &[]).await.unwrap().get(0);
            assert_eq!(got, n, "{sql}");
        }
        client
    };
    let client = expect(client).await;
    let before = summary(&client).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let files = segment_files(server.data_dir().unwrap());
    let kept = files.iter().filter(|f| flushed.contains(f)).count();
    assert_eq!(kept, 6, "the segments of the three days no statement hit stay as they were: {files:?}");
    let dir = server.kill9();

    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let client = expect(client).await;
    assert_eq!(summary(&client).await, before, "after a crash");
    // Once more before the checkpoint: the removal is replayed from the WAL.
    client.batch_execute("DELETE FROM m WHERE time >= '2016-01-02 00:00:00+00' AND time < '2016-01-02 00:01:00+00'").await.unwrap();
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let n: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(n, 5 * 1440 - 61, "after a crash with the removal in the WAL");
}

/// The same inside a transaction block: its DELETE and UPDATE of some days
/// are its own until COMMIT (ROLLBACK leaves the table as it was), COMMIT
/// writes those days alone, and a crash right after keeps what it wrote.
#[tokio::test]
async fn a_transaction_block_rewrites_only_the_days_it_hits() {
    let Some((server, client)) = start_with_table(2).await else { return };
    let flushed = flush_days(&server, &client, 4).await;
    let before = summary(&client).await;
    let block = "BEGIN; \
        DELETE FROM m WHERE time >= '2016-01-02 10:00:00+00' AND time < '2016-01-02 11:00:00+00'; \
        INSERT INTO m VALUES ('2016-01-02 10:30:00+00', 9, 0.5, 'new'); \
        UPDATE m SET v = -1 WHERE time >= '2016-01-02 00:00:00+00' AND time < '2016-01-02 00:10:00+00' OR host = 9";
    client.batch_execute(&format!("{block}; ROLLBACK")).await.unwrap();
    assert_eq!(summary(&client).await, before, "ROLLBACK leaves the rows as they were");
    client.batch_execute(&format!("{block}; COMMIT")).await.unwrap();
    let count = |sql: &'static str| {
        let client = &client;
        async move { client.query_one(sql, &[]).await.unwrap().get::<_, i64>(0) }
    };
    assert_eq!(count("SELECT count(*) FROM m").await, 4 * 1440 - 60 + 1);
    assert_eq!(count("SELECT count(*) FROM m WHERE v = -1").await, 11);
    let after = summary(&client).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let files = segment_files(server.data_dir().unwrap());
    let kept = files.iter().filter(|f| flushed.contains(f)).count();
    assert_eq!(kept, 6, "the segments of the three days the block did not touch stay: {files:?}");
    // Once more, killed before a checkpoint: the block's COMMIT is in the WAL.
    client.batch_execute("BEGIN; DELETE FROM m WHERE host = 9 AND time > '2016-01-01 00:00:00+00'; COMMIT").await.unwrap();
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let n: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(n, 4 * 1440 - 60, "after a crash");
    assert_ne!(summary(&client).await, after);
}

#[tokio::test]
async fn the_wal_is_truncated_behind_a_checkpoint() {
    let Some((server, client)) = start_with_table(2).await else { return };
    for round in 0..3 {
        insert(&client, round * 2000, 2000).await;
        client.batch_execute("CHECKPOINT").await.unwrap();
    }
    // One more write makes each shard's WAL move to a fresh segment; the next
    // checkpoint then deletes everything before it.
    insert(&client, 6000, 100).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let dir = server.data_dir().unwrap().to_path_buf();
    for shard in ["shard-000", "shard-001"] {
        let wal: Vec<_> = std::fs::read_dir(dir.join("wal").join(shard))
            .unwrap()
            .flatten()
            .collect();
        assert!(
            wal.len() <= 2,
            "{shard}: {} WAL segments remain after checkpoints",
            wal.len()
        );
    }
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, expected(6100));
    // Changing the shard count keeps every row: the orphaned shard's rows are
    // checkpointed at start and its WAL directory removed.
    client
        .batch_execute(
            "INSERT INTO m SELECT time + interval '1 day', host, v, s FROM m WHERE host = 1",
        )
        .await
        .ok();
    let dir = server.kill9();
    let server = common::start_in(dir, 1);
    let client = server.connect(common::DEFAULT_DB).await;
    let n: i64 = client
        .query_one("SELECT count(*) FROM m", &[])
        .await
        .unwrap()
        .get(0);
    assert!(n >= 6100, "{n} rows after restarting with one shard");
    let before = summary(&client).await;
    let dir = server.kill9();
    assert!(
        !dir.join("wal").join("shard-001").exists(),
        "the orphaned WAL directory was removed"
    );
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, before, "back to two shards");
}

#[tokio::test]
async fn a_damaged_block_is_reported_with_file_and_offset_never_decoded() {
    let Some((server, client)) = start_with_table(1).await else { return };
    insert(&client, 0, 5000).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let dir = server.kill9();
    let file = segment_files(&dir)
        .into_iter()
        .next()
        .expect("a segment file");
    let path = dir.join("segments").join(&file);
    let mut bytes = std::fs::read(&path).unwrap();
    // The first block (column `time`, rows 0..2048) starts after the 32-byte
    // file header; flip a byte of its payload, past the 40-byte block header.
    bytes[32 + 40 + 3] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();

    let server = common::start_in(dir, 1);
    let client = server.connect(common::DEFAULT_DB).await;
    let n: i64 = client
        .query_one("SELECT count(*) FROM m", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 5000, "a query that reads no column still works");
    let n: i64 = client
        .query_one("SELECT count(v) FROM m WHERE host < 3", &[])
        .await
        .unwrap()
        .get(0);
    assert!(
        n > 0,
        "a query that reads other columns of the damaged block's group still works"
    );
    let e = client
        .query("SELECT max(time) FROM m", &[])
        .await
        .unwrap_err();
    assert_eq!(
        common::sqlstate(&e).as_deref(),
        Some("XX001"),
        "{}",
        common::describe_error(&e)
    );
    let msg = common::describe_error(&e);
    assert!(
        msg.contains(&file.split('/').next_back().unwrap().to_string())
            && msg.contains("at byte 32"),
        "{msg}"
    );
}

/// Inserts rows `first..first + n` of the test table with its added column
/// `extra` holding the row number.
async fn insert_with_extra(client: &Client, first: i64, n: i64) {
    let values: Vec<String> = (first..first + n)
        .map(|i| format!("('2016-01-01 00:00:00+00'::timestamptz + interval '10 seconds' * {i}, {}, {}.5, 'row {i}', {i})", i % 7, i % 100))
        .collect();
    client.batch_execute(&format!("INSERT INTO m VALUES {}", values.join(","))).await.unwrap();
}

/// (count, sum, NULL count) of the test table's added column `extra`.
async fn extras(client: &Client) -> (i64, i64, i64) {
    let r = client
        .query_one("SELECT count(extra), sum(extra)::bigint, count(*) FILTER (WHERE extra IS NULL) FROM m", &[])
        .await
        .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

fn segment_count(dir: &std::path::Path) -> usize {
    segment_files(dir).len()
}

#[tokio::test]
async fn compaction_merges_segments_and_a_crash_during_it_loses_nothing() {
    for fp in ["", "compaction-after-write", "compaction-after-manifest"] {
        let Some((server, client)) = start_with_table(2).await else { return };
        // Five checkpoints of rows in the same day: five segments per shard.
        for round in 0..5 {
            insert(&client, round * 1500, 1500).await;
            client.batch_execute("CHECKPOINT").await.unwrap();
        }
        let before = segment_count(server.data_dir().unwrap());
        assert!(before >= 8, "{before} segments before compaction");
        let dir = server.kill9();
        let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT", fp)]);
        let client = server.connect(common::DEFAULT_DB).await;
        let merged = client.query_one("SELECT brewric_compact()", &[]).await;
        if fp.is_empty() {
            let merged: i64 = merged.unwrap().get(0);
            assert!(merged >= 8, "{merged} segments merged");
            assert_eq!(summary(&client).await, expected(7500), "after compaction");
            assert!(segment_count(server.data_dir().unwrap()) <= 2, "one segment per shard remains");
        } else {
            assert!(merged.is_err(), "{fp}: the failpoint did not stop the server");
        }
        let dir = server.kill9();
        let server = common::start_in(dir, 2);
        let client = server.connect(common::DEFAULT_DB).await;
        assert_eq!(summary(&client).await, expected(7500), "{fp}: after a restart");
        let dir = server.data_dir().unwrap().to_path_buf();
        let manifest = std::fs::read_to_string(dir.join("checkpoint.json")).unwrap();
        for f in segment_files(&dir) {
            assert!(manifest.contains(f.as_str()), "{fp}: {f} is on disk but not in the manifest");
        }
    }
}

/// A transaction block that rewrote the table (DELETE/UPDATE) holds its new
/// rows until COMMIT: drop_chunks waits for it to end, so that its COMMIT
/// cannot write the dropped rows back.
#[tokio::test]
async fn drop_chunks_waits_for_a_block_that_rewrote_the_table() {
    let Some((server, client)) = start_with_table(2).await else { return };
    insert(&client, 0, 30_000).await;
    let block = server.connect(common::DEFAULT_DB).await;
    block.batch_execute("BEGIN; DELETE FROM m WHERE host = 0").await.unwrap();
    let dropping = tokio::spawn(async move {
        client
            .query_one("SELECT drop_chunks('m', older_than => '2016-01-03 00:00:00+00'::timestamptz)", &[])
            .await
            .map(|r| r.get::<_, i64>(0))
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!dropping.is_finished(), "drop_chunks waits for the block");
    block.batch_execute("COMMIT").await.unwrap();
    dropping.await.unwrap().unwrap();
    let (old, host0): (i64, i64) = {
        let row = block
            .query_one(
                "SELECT count(*) FILTER (WHERE time < '2016-01-03 00:00:00+00'), count(*) FILTER (WHERE host = 0) FROM m",
                &[],
            )
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!((old, host0), (0, 0), "no dropped row written back, the block's DELETE kept");
    let left: i64 = block.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    let want = (0..30_000i64).filter(|i| i * 10 >= 2 * 86_400 && i % 7 != 0).count() as i64;
    assert_eq!(left, want);
}

#[tokio::test]
async fn drop_chunks_removes_old_partitions_and_frees_their_files() {
    let Some((server, client)) = start_with_table(2).await else { return };
    // 2016-01-01 00:00 .. 2016-01-04 11:19:50, flushed: one segment per day and shard.
    insert(&client, 0, 30_000).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let before = segment_files(server.data_dir().unwrap());
    // Old rows still in memory go too.
    insert(&client, 0, 10).await;
    let dropped: i64 = client
        .query_one("SELECT drop_chunks('m', older_than => '2016-01-03 00:00:00+00'::timestamptz)", &[])
        .await
        .unwrap()
        .get(0);
    assert!(dropped >= 2, "{dropped} segments dropped");
    let left: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(left, 30_000 - 17_280);
    let oldest: String = client.query_one("SELECT min(time)::text FROM m", &[]).await.unwrap().get(0);
    assert_eq!(oldest, "2016-01-03 00:00:00+00");
    let after = segment_files(server.data_dir().unwrap());
    assert_eq!(after.len(), before.len() - dropped as usize, "the dropped segments' files are deleted");
    // A cutoff inside a day keeps that day whole; a table without time is refused.
    let kept: i64 = client.query_one("SELECT drop_chunks('m', '2016-01-03 12:00:00+00'::timestamptz)", &[]).await.unwrap().get(0);
    assert_eq!(kept, 0);
    client.batch_execute("CREATE TABLE plain (a integer)").await.unwrap();
    let e = client.query("SELECT drop_chunks('plain', older_than => interval '1 day')", &[]).await.unwrap_err();
    assert_eq!(common::sqlstate(&e).as_deref(), Some("22023"));
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let left: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(left, 30_000 - 17_280, "after a restart");
}

/// ALTER TABLE ADD/DROP COLUMN rewrite the table into a new one and swap it
/// in: a crash before the swap leaves the original table whole, one after it
/// the new one, with every row either way (rows in segments and in the WAL).
/// ADD COLUMN of a nullable column without a default changes the catalog
/// only: the table keeps its OID and every segment file stays as it was;
/// rows in segments, in the WAL (written before the column existed) and
/// in the memtable read NULL in it — also after a crash (the WAL replays
/// narrower records), a checkpoint and a compaction that merges segments
/// written before the change with ones written after it.
#[tokio::test]
async fn add_column_leaves_stored_rows_in_place_and_they_read_null_through_restarts_and_compaction() {
    let Some((server, client)) = start_with_table(2).await else { return };
    insert(&client, 0, 3000).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    insert(&client, 3000, 2000).await;
    let oid = "SELECT 'm'::regclass::oid::bigint";
    let oid_of = |r: tokio_postgres::Row| r.get::<_, i64>(0);
    let before = (oid_of(client.query_one(oid, &[]).await.unwrap()), segment_files(server.data_dir().unwrap()));
    client.batch_execute("ALTER TABLE m ADD COLUMN extra integer").await.unwrap();
    let after = (oid_of(client.query_one(oid, &[]).await.unwrap()), segment_files(server.data_dir().unwrap()));
    assert_eq!(after, before, "the table keeps its OID and its segment files");
    insert_with_extra(&client, 5000, 1000).await;
    let want = (1000, (5000..6000i64).sum::<i64>(), 5000);
    assert_eq!(summary(&client).await, expected(6000));
    assert_eq!(extras(&client).await, want, "before a restart");
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, expected(6000), "after a crash");
    assert_eq!(extras(&client).await, want, "after a crash: the WAL's older records read NULL");
    // Two more checkpoints of rows holding the column: four segments per
    // shard, two of them written before the column existed.
    client.batch_execute("CHECKPOINT").await.unwrap();
    for first in [6000, 6500] {
        insert_with_extra(&client, first, 500).await;
        client.batch_execute("CHECKPOINT").await.unwrap();
    }
    let want = (2000, (5000..7000i64).sum::<i64>(), 5000);
    let merged: i64 = client.query_one("SELECT brewric_compact()", &[]).await.unwrap().get(0);
    assert!(merged >= 4, "{merged} segments merged");
    assert_eq!(summary(&client).await, expected(7000), "after a compaction of segments of both widths");
    assert_eq!(extras(&client).await, want, "after a compaction of segments of both widths");
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(summary(&client).await, expected(7000), "after one more restart");
    assert_eq!(extras(&client).await, want, "after one more restart");
}

#[tokio::test]
async fn a_crash_inside_alter_table_leaves_the_old_table_or_the_new_one() {
    for (fp, altered) in [("alter-before-swap", false), ("alter-after-swap", true)] {
        let Some((server, client)) = start_with_table(2).await else { return };
        insert(&client, 0, 3000).await;
        client.batch_execute("CHECKPOINT").await.unwrap();
        insert(&client, 3000, 2000).await;
        let dir = server.kill9();

        let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT", fp)]);
        let client = server.connect(common::DEFAULT_DB).await;
        let crashed = client.batch_execute("ALTER TABLE m ADD COLUMN extra integer DEFAULT 7").await;
        assert!(crashed.is_err(), "{fp}: the failpoint did not stop the server");
        let dir = server.kill9();

        let server = common::start_in(dir, 2);
        let client = server.connect(common::DEFAULT_DB).await;
        assert_eq!(summary(&client).await, expected(5000), "{fp}: the rows after the crash");
        let columns = client
            .query("SELECT * FROM m LIMIT 1", &[])
            .await
            .unwrap()
            .first()
            .map(|r| r.len())
            .unwrap_or(0);
        assert_eq!(columns, if altered { 5 } else { 4 }, "{fp}: the table's columns");
        let tables = client
            .query("SELECT count(*) FROM m", &[])
            .await
            .unwrap();
        assert_eq!(tables[0].get::<_, i64>(0), 5000);
        // After a cut rewrite the ALTER can be run again.
        if !altered {
            client.batch_execute("ALTER TABLE m ADD COLUMN extra integer DEFAULT 7").await.unwrap();
        }
        let sevens = client.query("SELECT count(*) FROM m WHERE extra = 7", &[]).await.unwrap();
        assert_eq!(sevens[0].get::<_, i64>(0), 5000, "{fp}: existing rows take the default");
        let dir = server.kill9();
        let server = common::start_in(dir, 2);
        let client = server.connect(common::DEFAULT_DB).await;
        assert_eq!(summary(&client).await, expected(5000), "{fp}: after one more restart");
    }
}

#[tokio::test]
async fn writes_wait_for_the_flush_when_memtables_pass_their_limit_and_lose_nothing() {
    let server = common::start();
    if !server.is_brewric() {
        eprintln!("skipped: needs a brewricd started by the test");
        return;
    }
    // A 1 MiB flush threshold and a 2 MiB limit: ~24 MiB of rows written in
    // 10,000-row statements (~2 MiB each, made by the server so they follow
    // each other faster than a flush of the last one, in debug builds too)
    // pass the limit again and again.
    let dir = server.kill9();
    let mut server = common::start_configured(dir, 2, &["--flush-mb", "1", "--memtable-limit-mb", "2"], &[]);
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("CREATE TABLE m (time timestamptz, host integer, v double precision, s text)").await.unwrap();
    let (statements, rows) = (12, 10_000);
    for k in 0..statements {
        let first = k * rows;
        client
            .batch_execute(&format!(
                "INSERT INTO m SELECT '2016-01-01 00:00:00+00'::timestamptz + interval '10 seconds' * i, i % 7, i % 100 + 0.5, \
                 'row ' || i || ' ' || repeat('x', 150) FROM generate_series({first}, {}) AS i",
                first + rows - 1
            ))
            .await
            .unwrap();
    }
    let n = statements * rows;
    let count: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(count, n);
    let distinct: i64 = client.query_one("SELECT count(DISTINCT s) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(distinct, n);
    server.assert_alive();
    let log = server.stderr_tail(20_000);
    assert!(log.contains("writes wait for the flush"), "no write waited for the flush:\n{log}");
    // Every row was flushed by the checkpoints the waits asked for, or is still in memory: a restart has them all.
    let dir = server.kill9();
    let server = common::start_configured(dir, 2, &[], &[]);
    let client = server.connect(common::DEFAULT_DB).await;
    let count: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
    assert_eq!(count, n);
}

/// A table created while a checkpoint is starting keeps every acknowledged
/// row: the checkpoint freezes them and must flush them as that table's. (It
/// once read the catalog before the freeze, found no such table, dropped
/// the rows as a dropped table's and truncated the WAL that held them.) A
/// pause point holds the checkpoint just before its freeze while the table
/// is created and filled.
#[tokio::test]
async fn a_table_created_as_a_checkpoint_starts_loses_no_row() {
    let dir = std::env::temp_dir().join(format!("brewric-ckpt-fresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT_PAUSE", "checkpoint-before-freeze:600")]);
    if server.is_external() {
        return;
    }
    let (checkpointer, writer) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    let checkpoint = checkpointer.batch_execute("CHECKPOINT");
    let write = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        writer.batch_execute("CREATE TABLE fresh (a int); INSERT INTO fresh VALUES (1), (2), (3)").await
    };
    let (checkpointed, written) = tokio::join!(checkpoint, write);
    checkpointed.unwrap();
    written.unwrap();
    drop((checkpointer, writer));
    let server = common::start_in(server.kill9(), 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let n: i64 = client.query_one("SELECT count(*) FROM fresh", &[]).await.unwrap().get(0);
    assert_eq!(n, 3, "every acknowledged row after the restart");
}

/// A DELETE of some days while a checkpoint holds the table's rows frozen
/// (being flushed) waits for the flush: a frozen row of those days would
/// otherwise come back with its segment. A pause point holds the checkpoint
/// just after its freeze while the DELETE runs.
#[tokio::test]
async fn a_delete_of_some_days_during_a_flush_keeps_them_deleted() {
    let dir = std::env::temp_dir().join(format!("brewric-ckpt-delete-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = common::start_configured(dir, 2, &[], &[("BREWRIC_FAILPOINT_PAUSE", "checkpoint-after-freeze:600")]);
    if server.is_external() {
        return;
    }
    let (checkpointer, writer) = (server.connect(common::DEFAULT_DB).await, server.connect(common::DEFAULT_DB).await);
    writer
        .batch_execute(
            "CREATE TABLE m (time timestamptz, v double precision); \
             INSERT INTO m SELECT timestamptz '2016-01-01 00:00:00+00' + interval '1 minute' * i, i FROM generate_series(0, 3 * 1440 - 1) AS i",
        )
        .await
        .unwrap();
    let checkpoint = checkpointer.batch_execute("CHECKPOINT");
    let delete = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        writer.execute("DELETE FROM m WHERE time >= '2016-01-02 00:00:00+00' AND time < '2016-01-02 01:00:00+00'", &[]).await
    };
    let (checkpointed, deleted) = tokio::join!(checkpoint, delete);
    checkpointed.unwrap();
    assert_eq!(deleted.unwrap(), 60);
    let count = |client: Client| async move {
        let n: i64 = client.query_one("SELECT count(*) FROM m", &[]).await.unwrap().get(0);
        n
    };
    assert_eq!(count(writer).await, 3 * 1440 - 60);
    drop(checkpointer);
    let server = common::start_in(server.kill9(), 2);
    assert_eq!(count(server.connect(common::DEFAULT_DB).await).await, 3 * 1440 - 60, "after a restart");
}

/// Per table, (count(*), sum(v)).
async fn counts_and_sums(client: &Client, tables: &[&str]) -> Vec<(i64, f64)> {
    let mut out = Vec::new();
    for t in tables {
        let row = client.query_one(&format!("SELECT count(*), sum(v) FROM {t}"), &[]).await.unwrap();
        out.push((row.get::<_, i64>(0), row.get::<_, f64>(1)));
    }
    out
}

/// A shard flushes several tables at once (their encodings run side by side
/// on the background pool, each written as the ones before it are): when
/// the second table's segment fails to be written, the checkpoint fails,
/// the table written before it stays flushed, that table and the ones after
/// it go back to memory with every row, and the next checkpoint writes them.
/// A restart finds each row once (the failed write's file is an orphan).
#[tokio::test]
async fn a_failed_segment_write_in_a_checkpoint_of_many_tables_loses_and_duplicates_nothing() {
    let dir = std::env::temp_dir().join(format!("brewric-ckpt-write-fails-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = common::start_configured(dir, 1, &[], &[("BREWRIC_FAILPOINT_ERROR", "segment-write-fails:2")]);
    if server.is_external() {
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    let tables = ["t0", "t1", "t2", "t3", "t4"];
    for (k, t) in tables.iter().enumerate() {
        client
            .batch_execute(&format!(
                "CREATE TABLE {t} (time timestamptz, host integer, v double precision);
                 INSERT INTO {t} SELECT '2016-01-01 00:00:00+00'::timestamptz + interval '1 second' * i, i % 5, i * {k}
                 FROM generate_series(1, {}) AS i",
                1000 * (k + 1)
            ))
            .await
            .unwrap();
    }
    let written: Vec<(i64, f64)> = (0..tables.len())
        .map(|k| {
            let n = 1000 * (k as i64 + 1);
            (n, (k as i64 * n * (n + 1) / 2) as f64)
        })
        .collect();
    let err = client.batch_execute("CHECKPOINT").await.expect_err("the second segment write fails");
    let db = err.as_db_error().expect("a database error");
    assert!(db.message().contains("segment-write-fails"), "{}", db.message());
    // Files are `shard-000/<table oid>-<segment id>.seg`: the first table's segment,
    // and the file of the failed write.
    let table_of = |files: &[String]| -> Vec<String> {
        files.iter().map(|f| f.split(['/', '-']).nth(2).unwrap_or_default().to_string()).collect()
    };
    let after_failure = table_of(&segment_files(server.data_dir().unwrap()));
    assert_eq!(after_failure.len(), 2, "{after_failure:?}");
    assert_ne!(after_failure[0], after_failure[1], "{after_failure:?}");
    assert_eq!(counts_and_sums(&client, &tables).await, written, "after the failed checkpoint");
    client.batch_execute("CHECKPOINT").await.unwrap();
    assert_eq!(counts_and_sums(&client, &tables).await, written, "after the checkpoint that wrote them");
    // Every table has its segment now (the second one twice, counting the orphan).
    let mut after_retry = table_of(&segment_files(server.data_dir().unwrap()));
    assert_eq!(after_retry.len(), tables.len() + 1, "{after_retry:?}");
    after_retry.dedup();
    assert_eq!(after_retry.len(), tables.len(), "{after_retry:?}");
    let dir = server.kill9();
    let server = common::start_configured(dir, 1, &[], &[]);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(counts_and_sums(&client, &tables).await, written, "after a restart");
    // The start removed the orphan.
    let mut after_restart = table_of(&segment_files(server.data_dir().unwrap()));
    assert_eq!(after_restart.len(), tables.len(), "{after_restart:?}");
    after_restart.dedup();
    assert_eq!(after_restart.len(), tables.len(), "{after_restart:?}");
}
