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
