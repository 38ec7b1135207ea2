//! TimescaleDB's DDL as TSBS's loader sends it, accepted unmodified:
//! CREATE EXTENSION timescaledb (built in), create_hypertable with its named
//! options (the time column becomes the partitioning column), and the
//! `(tags_id, "time" DESC)` index, whose leading column becomes the series
//! key segments sort and prune by — even when one flush holds too many
//! distinct tags for the key to be inferred from the rows.

mod common;

use tokio_postgres::SimpleQueryMessage;

#[tokio::test]
async fn tsbs_loader_ddl_is_accepted_and_its_index_declares_the_series_key() {
    let server = common::start_with_shards(2);
    if !server.is_brewric() {
        eprintln!("skipped: create_hypertable and EXPLAIN output are Brewric's own");
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    for sql in [
        "CREATE EXTENSION IF NOT EXISTS timescaledb CASCADE",
        "CREATE TABLE cpu(time timestamptz, tags_id integer, hostname TEXT, additional_tags JSONB DEFAULT NULL, usage_user DOUBLE PRECISION)",
        "CREATE INDEX ON cpu(tags_id, \"time\" DESC)",
        "CREATE INDEX ON cpu(usage_user, time DESC)",
    ] {
        client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
    let created = client
        .simple_query(
            "SELECT create_hypertable('cpu'::regclass, 'time'::name, partitioning_column => 'tags_id'::name, \
             number_partitions => 1::smallint, replication_factor => NULL, chunk_time_interval => 43200000000, \
             create_default_indexes=>FALSE)",
        )
        .await
        .unwrap();
    let SimpleQueryMessage::Row(row) = &created[1] else { panic!("{created:?}") };
    assert!(row.get(0).unwrap().ends_with(",public,cpu,t)"), "{:?}", row.get(0));

    // Again: an error, or a notice with if_not_exists.
    let err = client.simple_query("SELECT create_hypertable('cpu', 'time')").await.unwrap_err();
    let message = err.as_db_error().map(|d| d.message().to_string()).unwrap_or_default();
    assert!(message.contains("already a hypertable"), "{err:?}");
    client.simple_query("SELECT create_hypertable('cpu', 'time', if_not_exists => TRUE)").await.unwrap();
    let err = client.simple_query("SELECT create_hypertable('cpu', 'hostname')").await.unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("0A000"), "{err}");
    let err = client.simple_query("CREATE EXTENSION postgis").await.unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("58P01"), "{err}");

    // 500 hosts with 2 rows each: 1000 rows, 500 distinct tags (too many to infer a key).
    client
        .batch_execute(
            "INSERT INTO cpu (time, tags_id, hostname, usage_user) \
             SELECT '2016-01-01 00:00:00+00'::timestamptz + (i % 2) * interval '10 seconds', i / 2, 'host_' || (i / 2), i \
             FROM generate_series(0, 999) AS g(i)",
        )
        .await
        .unwrap();
    client.batch_execute("CHECKPOINT").await.unwrap();
    // Every segment written is sorted by tags_id and indexes each tag as a series.
    let segments = server.data_dir().unwrap().join("segments");
    let mut series = 0;
    for shard in std::fs::read_dir(&segments).unwrap().flatten() {
        for file in std::fs::read_dir(shard.path()).unwrap().flatten() {
            let bytes = std::fs::read(file.path()).unwrap();
            let (_, footer) = brewric::storage::segment::reader::parse_segment("segment", &bytes).unwrap();
            assert_eq!(footer.series_columns, vec![1], "tags_id is the series key");
            series += footer.series.len();
        }
    }
    // Each tag is a series of every segment holding its rows (one or both shards).
    assert!((500..=1000).contains(&series), "{series} series for 500 tags");
    let plan: Vec<String> = client
        .simple_query("EXPLAIN ANALYZE SELECT max(usage_user) FROM cpu WHERE tags_id = 7")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or_default().to_string()),
            _ => None,
        })
        .collect();
    let text = plan.join("\n");
    assert!(text.contains("Pruning by zone maps and series index: tags_id = 7"), "{text}");
    let rows = client.query_one("SELECT max(usage_user), count(*) FROM cpu WHERE tags_id = 7", &[]).await.unwrap();
    assert_eq!(rows.get::<_, f64>(0), 15.0);
    assert_eq!(rows.get::<_, i64>(1), 2);
}

/// Polls `sql` (one value) until it reads `want`, for up to 20 s.
async fn wait_for(client: &tokio_postgres::Client, sql: &str, want: &str) {
    let mut last = Vec::new();
    for _ in 0..200 {
        last = common::text_rows(client, sql).await;
        if last.first().and_then(|r| r.first()).map(String::as_str) == Some(want) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{sql}: still {last:?} after 20 s, not {want}");
}

/// A retention policy runs on its own: the scheduler drops the chunks whose
/// time ended `drop_after` ago and job_stats records the run; a compression
/// policy's run leaves no chunk waiting in memory; the jobs survive kill -9,
/// and a block that removed one but never committed has removed nothing.
#[tokio::test]
async fn policies_run_on_schedule_and_survive_a_crash() {
    let server = common::start_with_shards(2);
    if !server.is_brewric() {
        eprintln!("skipped: TimescaleDB's policies are Brewric's built-in ones");
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    // create_hypertable in the same transaction as its table, as migrations run it.
    client
        .batch_execute("CREATE TABLE m (time timestamptz NOT NULL, v int); SELECT create_hypertable('m', 'time')")
        .await
        .unwrap();
    for sql in [
        "INSERT INTO m VALUES (now() - interval '10 days', 1), (now() - interval '9 days', 2), (now() - interval '1 hour', 3)",
        "INSERT INTO m VALUES (now() - interval '8 days', 4)",
        "CHECKPOINT",
        "ALTER TABLE m SET (timescaledb.compress, timescaledb.compress_segmentby = 'v')",
    ] {
        client.batch_execute(sql).await.unwrap();
    }
    let compression = common::text_rows(
        &client,
        "SELECT add_compression_policy('m', INTERVAL '1 day', initial_start => '2100-01-01')",
    )
    .await;
    assert_eq!(compression, vec![vec!["1000".to_string()]]);
    // Rows arrive after a checkpoint: their chunk waits in memory.
    client.batch_execute("INSERT INTO m VALUES (now() - interval '2 hours', 5)").await.unwrap();
    wait_for(&client, "SELECT count(*) FROM timescaledb_information.chunks WHERE NOT is_compressed", "1").await;
    client.batch_execute("CALL run_job(1000)").await.unwrap();
    wait_for(&client, "SELECT count(*) FROM timescaledb_information.chunks WHERE NOT is_compressed", "0").await;

    // Due at once: the scheduler runs it within a second or two.
    client.batch_execute("SELECT add_retention_policy('m', INTERVAL '3 days')").await.unwrap();
    wait_for(&client, "SELECT last_run_status FROM timescaledb_information.job_stats WHERE job_id = 1001", "Success").await;
    let rows = common::text_rows(&client, "SELECT string_agg(v::text, ',' ORDER BY v) FROM m").await;
    assert_eq!(rows, vec![vec!["3,5".to_string()]], "the rows of the last 3 days stay");
    let stats = common::text_rows(
        &client,
        "SELECT last_run_status, job_status, total_runs >= 1, total_failures, next_start > now() + interval '23 hours' \
         FROM timescaledb_information.job_stats WHERE job_id = 1001",
    )
    .await;
    assert_eq!(stats, vec![vec!["Success", "Scheduled", "t", "0", "t"]]);

    // A block removes the retention policy and never commits: the crash undoes it.
    let in_block = server.connect(common::DEFAULT_DB).await;
    in_block.batch_execute("BEGIN; SELECT remove_retention_policy('m'); SELECT alter_job(1000, scheduled => false)").await.unwrap();
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let jobs = common::text_rows(
        &client,
        "SELECT job_id, proc_name, scheduled, config->>'drop_after', config->>'compress_after' FROM timescaledb_information.jobs ORDER BY job_id",
    )
    .await;
    assert_eq!(
        jobs,
        vec![
            vec!["1000", "policy_compression", "t", "NULL", "1 day"],
            vec!["1001", "policy_retention", "t", "3 days", "NULL"],
        ]
    );
    // After a restart a job has no history and is due at once.
    wait_for(&client, "SELECT total_runs::text FROM timescaledb_information.job_stats WHERE job_id = 1001", "1").await;
    let settings = common::text_rows(&client, "SELECT attname FROM timescaledb_information.compression_settings WHERE segmentby_column_index = 1").await;
    assert_eq!(settings, vec![vec!["v".to_string()]]);
    // A new job never takes an id that was given before.
    let next = common::text_rows(&client, "SELECT delete_job(1001); SELECT add_retention_policy('m', INTERVAL '30 days', initial_start => '2100-01-01')").await;
    assert_eq!(next.last(), Some(&vec!["1002".to_string()]), "{next:?}");
}

/// A continuous aggregate policy refreshes on its own schedule: the buckets
/// of rows written before it ran appear in the view; the view, its query and
/// its policy survive kill -9, and a refresh after the restart still works.
#[tokio::test]
async fn a_continuous_aggregate_policy_refreshes_on_schedule() {
    let server = common::start_with_shards(2);
    if !server.is_brewric() {
        eprintln!("skipped: TimescaleDB's continuous aggregates are Brewric's built-in ones");
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    for sql in [
        "CREATE TABLE r (time timestamptz NOT NULL, v int)",
        "SELECT create_hypertable('r', 'time')",
        "INSERT INTO r SELECT date_trunc('hour', now()) - interval '5 hours' + i * interval '10 minutes', i FROM generate_series(0, 11) i",
        "CREATE MATERIALIZED VIEW r_hourly WITH (timescaledb.continuous) AS \
         SELECT time_bucket('1 hour', time) AS h, sum(v) AS s, count(*) AS n FROM r GROUP BY h WITH NO DATA",
    ] {
        client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {}", common::describe_error(&e)));
    }
    assert_eq!(common::text_rows(&client, "SELECT count(*) FROM r_hourly").await, vec![vec!["0".to_string()]]);
    let job = common::text_rows(
        &client,
        "SELECT add_continuous_aggregate_policy('r_hourly', start_offset => INTERVAL '1 day', end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 hour')",
    )
    .await;
    assert_eq!(job, vec![vec!["1000".to_string()]]);
    wait_for(&client, "SELECT last_run_status FROM timescaledb_information.job_stats WHERE job_id = 1000", "Success").await;
    // Rows from 5 hours before the hour to 3 hours before it: two whole hours, all inside the window.
    let view = common::text_rows(&client, "SELECT count(*), sum(s), sum(n) FROM r_hourly").await;
    assert_eq!(view, vec![vec!["2".to_string(), "66".to_string(), "12".to_string()]]);

    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    let view = common::text_rows(&client, "SELECT count(*), sum(s) FROM r_hourly").await;
    assert_eq!(view, vec![vec!["2".to_string(), "66".to_string()]]);
    client
        .batch_execute("INSERT INTO r VALUES (date_trunc('hour', now()) - interval '5 hours', 100)")
        .await
        .unwrap();
    client.batch_execute("CALL refresh_continuous_aggregate('r_hourly', NULL, NULL)").await.unwrap();
    let view = common::text_rows(&client, "SELECT sum(s), sum(n) FROM r_hourly").await;
    assert_eq!(view, vec![vec!["166".to_string(), "13".to_string()]]);
    let jobs = common::text_rows(&client, "SELECT proc_name, hypertable_name FROM timescaledb_information.jobs").await;
    assert_eq!(jobs, vec![vec!["policy_refresh_continuous_aggregate".to_string(), "r_hourly".to_string()]]);
}
