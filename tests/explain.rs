//! EXPLAIN and EXPLAIN ANALYZE as users read them: the plan's operators with
//! what runs on each shard (filters, partial aggregates, the zone-map ranges
//! that prune), and under ANALYZE each operator's actual rows and time and
//! how many segments and block groups a scan read out of how many.

mod common;

use tokio_postgres::{Client, SimpleQueryMessage};

/// A query's rows, each as its values joined by `|` (NULL as "NULL").
async fn query_rows(client: &Client, sql: &str) -> Vec<String> {
    let rows = client.simple_query(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    rows.into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).unwrap_or("NULL")).collect::<Vec<_>>().join("|"))
            }
            _ => None,
        })
        .collect()
}

fn has(lines: &[String], needle: &str) -> bool {
    lines.iter().any(|l| l.contains(needle))
}

/// A 2-shard server with `setup` run, or `None` where the server under test
/// is not Brewric (EXPLAIN's output is Brewric's own).
async fn brewric_with(setup: &[&str]) -> Option<(common::Server, Client)> {
    let server = common::start_with_shards(2);
    if !server.is_brewric() {
        eprintln!("skipped: EXPLAIN output is Brewric's own");
        return None;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    for sql in setup {
        client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
    Some((server, client))
}

#[tokio::test]
async fn explain_shows_shard_work_pruning_and_actual_rows() {
    let Some((_server, client)) = brewric_with(&[
        "CREATE TABLE cpu (time timestamptz, host text, usage double precision)",
        "INSERT INTO cpu SELECT t, 'h' || (i % 3), i
           FROM generate_series('2026-01-01'::timestamptz, '2026-01-02', '1 minute') WITH ORDINALITY AS g(t, i)",
        "CHECKPOINT",
        "INSERT INTO cpu VALUES ('2026-01-03', 'h9', 1)",
    ])
    .await
    else {
        return;
    };
    let q = "SELECT host, avg(usage) FROM cpu WHERE time >= '2026-01-01 12:00+00' AND time < '2026-01-01 13:00+00' GROUP BY host ORDER BY host";

    let plain = query_rows(&client, &format!("EXPLAIN {q}")).await;
    let text = plain.join("\n");
    assert!(plain[0].starts_with("Sort"), "{text}");
    assert!(has(&plain, "->  Final HashAggregate"), "{text}");
    assert!(has(&plain, "Shard Scan on cpu  (2 shards)"), "{text}");
    assert!(has(&plain, "Partial Aggregate on each shard: avg(cpu.usage)"), "{text}");
    assert!(has(&plain, "Pruning by zone maps and series index: time >= 2026-01-01 12:00:00+00"), "{text}");
    assert!(!has(&plain, "actual rows"), "plain EXPLAIN runs nothing: {text}");

    let analyzed = query_rows(&client, &format!("EXPLAIN ANALYZE {q}")).await;
    let text = analyzed.join("\n");
    assert!(analyzed[0].starts_with("Sort  (actual rows=3 time="), "{text}");
    assert!(has(&analyzed, "Final HashAggregate  (actual rows=3"), "{text}");
    // The checkpoint wrote one segment per shard holding rows; the hour asked for
    // lies in fewer block groups than the table has, and the memtable row is counted.
    let read = analyzed.iter().find(|l| l.contains("Read: segments")).unwrap_or_else(|| panic!("{text}"));
    assert!(read.contains("1 rows from memtables"), "{text}");
    let numbers: Vec<u64> = read.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    let [_, _, groups_read, groups, _] = numbers[..] else { panic!("{read}") };
    assert!(groups_read < groups, "the zone maps skip block groups outside the hour: {text}");
    assert!(analyzed.last().is_some_and(|l| l.starts_with("Execution Time: ")), "{text}");

    // Bounds computed from constants prune too: `now() - interval …` (the
    // rows are from January 2026, before any hour now() can give) and a
    // timestamp plus an interval.
    let groups_read = |lines: &[String]| {
        let read = lines.iter().find(|l| l.contains("Read: segments")).unwrap_or_else(|| panic!("{}", lines.join("\n")));
        let numbers: Vec<u64> = read.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
        (numbers[2], numbers[3])
    };
    let recent = query_rows(&client, "EXPLAIN ANALYZE SELECT count(*) FROM cpu WHERE time >= now() - interval '1 hour'").await;
    assert_eq!(groups_read(&recent).0, 0, "{}", recent.join("\n"));
    // Plain EXPLAIN shows the bound as the scan computes it.
    let plain = query_rows(&client, "EXPLAIN SELECT count(*) FROM cpu WHERE time >= now() - interval '1 hour'").await;
    assert!(has(&plain, "Pruning by zone maps and series index: time >= 20"), "{}", plain.join("\n"));
    let shifted = query_rows(
        &client,
        "EXPLAIN ANALYZE SELECT avg(usage) FROM cpu WHERE time >= timestamptz '2026-01-01 00:00+00' + interval '12 hours' \
         AND time < timestamptz '2026-01-01 00:00+00' + interval '13 hours'",
    )
    .await;
    let (read, all) = groups_read(&shifted);
    assert!(read < all, "{}", shifted.join("\n"));

    // Tag predicates prune by the series index; a join shows both inputs.
    let tag = query_rows(&client, "EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM cpu WHERE host = 'h9'").await;
    let text = tag.join("\n");
    assert!(has(&tag, "host in ('h9')"), "{text}");
    assert!(has(&tag, "Aggregate  (actual rows=1"), "{text}");
    let join = query_rows(&client, "EXPLAIN SELECT a.host FROM cpu a JOIN cpu b ON a.time = b.time").await;
    assert!(has(&join, "Inner Join") && join.iter().filter(|l| l.contains("Shard Scan on cpu")).count() == 2, "{}", join.join("\n"));

    // EXPLAIN answers the extended protocol's Describe with its one text column.
    let stmt = client.prepare("EXPLAIN SELECT * FROM cpu WHERE usage > $1").await.unwrap();
    assert_eq!(stmt.columns()[0].name(), "QUERY PLAN");
    let rows = client.query(&stmt, &[&10.0f64]).await.unwrap();
    assert!(rows.iter().any(|r| r.get::<_, String>(0).contains("Filter on each shard")));

    let err = client.simple_query("EXPLAIN (FORMAT JSON) SELECT 1").await.unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("0A000"));
}

/// The rows EXPLAIN ANALYZE says the scan read from memtables.
fn memtable_rows_read(lines: &[String]) -> u64 {
    let read = lines.iter().find(|l| l.contains("rows from memtables")).unwrap_or_else(|| panic!("{}", lines.join("\n")));
    let words: Vec<&str> = read.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "rows").unwrap();
    words[at - 1].parse().unwrap()
}

#[tokio::test]
async fn newest_first_reads_stop_early_and_shards_without_the_series_skip_their_memtable() {
    let server = common::start_with_shards(2);
    if !server.is_brewric() {
        eprintln!("skipped: EXPLAIN output is Brewric's own");
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    client
        .batch_execute(
            "CREATE TABLE cpu (time timestamptz, tags_id int, usage double precision);
             INSERT INTO cpu SELECT timestamptz '2016-01-01 00:00:00+00' + (g / 100) * interval '10 seconds', g % 100, g
               FROM generate_series(0, 199999) AS g",
        )
        .await
        .unwrap();
    // 200,000 rows in memtables; the newest point of one series is in the newest block.
    let q = "SELECT * FROM cpu WHERE tags_id = 5 ORDER BY time DESC LIMIT 1";
    let lines = query_rows(&client, &format!("EXPLAIN ANALYZE {q}")).await;
    assert!(memtable_rows_read(&lines) <= 3 * 2048, "{}", lines.join("\n"));
    let row = client.query_one(q, &[]).await.unwrap();
    assert_eq!(row.get::<_, f64>(2), 199_905.0);
    // Oldest first reads from the other end.
    let rows = client.query("SELECT usage FROM cpu WHERE tags_id = 5 ORDER BY time LIMIT 2", &[]).await.unwrap();
    let first: Vec<f64> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(first, vec![5.0, 105.0]);
    // Series live whole on one shard: the other skips its memtable for this filter.
    let lines = query_rows(&client, "EXPLAIN ANALYZE SELECT max(usage) FROM cpu WHERE tags_id IN (5)").await;
    assert!(memtable_rows_read(&lines) <= 100_000 + 2048, "{}", lines.join("\n"));
}

/// A scan reads only the columns its SELECT list, its filter and its
/// shard-side aggregate use; EXPLAIN's "Columns:" names exactly those.
#[tokio::test]
async fn a_scan_reads_only_the_columns_the_query_uses() {
    let Some((_server, client)) = brewric_with(&[
        "CREATE TABLE imu (time timestamptz, recording text, x float8, y float8, covariance float8[])",
        "INSERT INTO imu SELECT '2026-01-01'::timestamptz + i * interval '1 second', 'robot' || (i % 2), i, i % 3 - 1, ARRAY[i, 0, 0]
           FROM generate_series(1, 6) AS g(i)",
    ])
    .await
    else {
        return;
    };
    let columns = |lines: &[String]| -> String {
        let line = lines.iter().find(|l| l.contains("Columns:")).unwrap_or_else(|| panic!("{}", lines.join("\n")));
        line.trim().to_string()
    };
    let cases = [
        ("SELECT x FROM imu WHERE y > 0 ORDER BY time", "Columns: time, x, y"),
        ("SELECT x * 2, recording FROM imu", "Columns: recording, x"),
        ("SELECT 1 FROM imu", "Columns: time"),
        ("SELECT recording, max(x) FROM imu WHERE y < 1 GROUP BY recording", "Columns: recording, x, y"),
        ("SELECT count(*) FROM imu", "Columns: none (rows are only counted)"),
        ("SELECT * FROM imu", "Columns: time, recording, x, y, covariance"),
        // A subquery may read the row as its outer row: the scan stays whole.
        ("SELECT (SELECT count(*) FROM imu i2 WHERE i2.x < imu.x) FROM imu", "Columns: time, recording, x, y, covariance"),
    ];
    for (q, expected) in cases {
        let plan = query_rows(&client, &format!("EXPLAIN {q}")).await;
        assert_eq!(columns(&plan), expected, "{q}:\n{}", plan.join("\n"));
    }
    // And the narrowed scans answer as the whole ones would.
    let rows = |sql: &'static str| query_rows(&client, sql);
    assert_eq!(rows("SELECT x FROM imu WHERE y > 0 ORDER BY time").await, ["2", "5"]);
    assert_eq!(rows("SELECT x * 2, recording FROM imu ORDER BY 1 LIMIT 2").await, ["2|robot1", "4|robot0"]);
    assert_eq!(rows("SELECT count(*) FROM (SELECT 1 FROM imu) s").await, ["6"]);
    assert_eq!(rows("SELECT covariance[1], y FROM imu WHERE x = 3").await, ["3|-1"]);
    assert_eq!(
        rows("SELECT (SELECT count(*) FROM imu i2 WHERE i2.x < imu.x) FROM imu ORDER BY 1").await,
        ["0", "1", "2", "3", "4", "5"]
    );
}
