//! COPY … FROM STDIN through tokio-postgres (extended protocol) and psql
//! (simple protocol): text, CSV and binary formats, column lists, the old
//! option syntax, errors that name the line and column, and atomicity (a
//! failed COPY leaves nothing behind; a large one spans both shards).

mod common;

use bytes::Bytes;
use futures::SinkExt;

async fn copy(
    client: &tokio_postgres::Client,
    sql: &str,
    chunks: &[&[u8]],
) -> Result<u64, tokio_postgres::Error> {
    let sink = client.copy_in::<_, Bytes>(sql).await?;
    futures::pin_mut!(sink);
    for c in chunks {
        sink.send(Bytes::copy_from_slice(c)).await?;
    }
    sink.finish().await
}

async fn rows(client: &tokio_postgres::Client, sql: &str) -> Vec<String> {
    client
        .simple_query(sql)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn copy_text_csv_and_binary_from_stdin() {
    let server = common::start();
    let client = server.fresh_database("copy_formats").await;
    client
        .batch_execute("CREATE TABLE r (id integer NOT NULL, robot text, battery double precision, ts timestamptz, n numeric(6, 2))")
        .await
        .unwrap();

    // text, split mid-row across CopyData messages
    let n = copy(
        &client,
        "COPY r FROM STDIN",
        &[
            b"1\tr1\t97.5\t2026-01-01 00:00:00+00\t1.005\n2\t\\N\t50",
            b"\t\\N\t\\N\n",
        ],
    )
    .await
    .unwrap();
    assert_eq!(n, 2);
    // CSV with a header, quotes and a column list
    let n = copy(
        &client,
        "COPY r (id, robot) FROM STDIN WITH (FORMAT csv, HEADER true)",
        &[b"id,robot\n3,\"a,\"\"b\"\"\"\n4,\n"],
    )
    .await
    .unwrap();
    assert_eq!(n, 2);
    // binary, as pgx sends it: old option syntax, no trailer
    let mut bin = b"PGCOPY\n\xff\r\n\0".to_vec();
    bin.extend_from_slice(&[0; 8]);
    bin.extend_from_slice(&2i16.to_be_bytes());
    bin.extend_from_slice(&4i32.to_be_bytes());
    bin.extend_from_slice(&5i32.to_be_bytes());
    bin.extend_from_slice(&8i32.to_be_bytes());
    bin.extend_from_slice(&12.25f64.to_be_bytes());
    let n = copy(
        &client,
        "copy \"r\" ( \"id\", \"battery\" ) from stdin binary;",
        &[&bin],
    )
    .await
    .unwrap();
    assert_eq!(n, 1);

    assert_eq!(
        rows(&client, "SELECT * FROM r ORDER BY id").await,
        vec![
            "1|r1|97.5|2026-01-01 00:00:00+00|1.01",
            "2|NULL|50|NULL|NULL",
            "3|a,\"b\"|NULL|NULL|NULL",
            "4|NULL|NULL|NULL|NULL",
            "5|NULL|12.25|NULL|NULL",
        ]
    );
}

#[tokio::test]
async fn a_failed_copy_leaves_nothing_and_names_the_line() {
    let server = common::start();
    let client = server.fresh_database("copy_errors").await;
    client
        .batch_execute("CREATE TABLE r (id integer NOT NULL, v double precision)")
        .await
        .unwrap();
    // 100,000 good rows (prepared on both shards), then a bad one
    let mut data = String::new();
    for i in 0..100_000 {
        data.push_str(&format!("{i}\t{i}.5\n"));
    }
    data.push_str("100000\tnot-a-number\n");
    let e = copy(&client, "COPY r FROM STDIN", &[data.as_bytes()])
        .await
        .unwrap_err();
    let db = e.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "22P02");
    assert_eq!(
        db.message(),
        "invalid input syntax for type double precision: \"not-a-number\""
    );
    assert_eq!(
        db.where_(),
        Some("COPY r, line 100001, column v: \"not-a-number\"")
    );
    assert_eq!(rows(&client, "SELECT count(*) FROM r").await, vec!["0"]);

    // NOT NULL, and the connection goes on
    let e = copy(&client, "COPY r FROM STDIN", &[b"\\N\t1\n"])
        .await
        .unwrap_err();
    assert_eq!(e.as_db_error().unwrap().code().code(), "23502");
    // a large good COPY spans both shards and is all visible
    let good: String = (0..50_000).map(|i| format!("{i},{i}\n")).collect();
    assert_eq!(
        copy(
            &client,
            "COPY r FROM STDIN (FORMAT csv)",
            &[good.as_bytes()]
        )
        .await
        .unwrap(),
        50_000
    );
    assert_eq!(
        rows(&client, "SELECT count(*), sum(id) FROM r").await,
        vec!["50000|1249975000"]
    );
}

#[test]
fn psql_copy_from_stdin_in_a_script() {
    let server = common::start();
    if std::process::Command::new("psql")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(std::env::var("CI").is_err(), "psql is required in CI");
        eprintln!("skipped: psql not installed");
        return;
    }
    let script = "CREATE TABLE c (id int, name text);\nCOPY c FROM STDIN;\n1\tone\n2\ttwo\n\\.\nSELECT count(*) FROM c;\n";
    let out = std::process::Command::new("psql")
        .args([
            "-h",
            &server.host,
            "-p",
            &server.port.to_string(),
            "-U",
            common::USER,
            "-d",
            common::DEFAULT_DB,
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(script.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("COPY 2") || stdout.lines().any(|l| l == "2"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().last(), Some("2"), "{stdout}");
}

#[tokio::test]
async fn a_copy_with_a_duplicate_key_fails_whole_and_frees_its_keys() {
    let server = common::start();
    let client = server.fresh_database("copy_unique").await;
    client.batch_execute("CREATE TABLE k (id bigint PRIMARY KEY, v text)").await.unwrap();
    client.batch_execute("INSERT INTO k VALUES (7, 'before')").await.unwrap();
    // The duplicate sits in a later CopyData message than the rows before it.
    let first: String = (100..70_100).map(|i| format!("{i}\trow\n")).collect();
    let e = copy(&client, "COPY k FROM STDIN", &[first.as_bytes(), b"7\tagain\n"]).await.unwrap_err();
    let db = e.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "23505");
    assert_eq!(db.message(), "duplicate key value violates unique constraint \"k_pkey\"");
    assert_eq!(db.detail(), Some("Key (id)=(7) already exists."));
    assert_eq!(rows(&client, "SELECT count(*) FROM k").await, vec!["1"]);
    // Nothing of the failed COPY holds a key: the same rows load now.
    assert_eq!(copy(&client, "COPY k FROM STDIN", &[first.as_bytes()]).await.unwrap(), 70_000);
    assert_eq!(rows(&client, "SELECT count(*) FROM k").await, vec!["70001"]);
    let e = copy(&client, "COPY k FROM STDIN", &[b"1\tx\n2\ty\n1\tz\n"]).await.unwrap_err();
    assert_eq!(e.as_db_error().unwrap().code().code(), "23505");
}

#[tokio::test]
async fn a_copy_breaking_a_check_constraint_fails_whole() {
    let server = common::start();
    let client = server.fresh_database("copy_check").await;
    client.batch_execute("CREATE TABLE c (id bigint, pct double precision CHECK (pct BETWEEN 0 AND 100))").await.unwrap();
    let good: String = (0..50_000).map(|i| format!("{i}\t{}\n", i % 101)).collect();
    let e = copy(&client, "COPY c FROM STDIN", &[good.as_bytes(), b"7\t101.5\n"]).await.unwrap_err();
    let db = e.as_db_error().expect("a server error");
    assert_eq!((db.code().code(), db.message()), ("23514", "new row for relation \"c\" violates check constraint \"c_pct_check\""));
    assert_eq!(db.detail(), Some("Failing row contains (7, 101.5)."));
    assert_eq!(rows(&client, "SELECT count(*) FROM c").await, vec!["0"]);
    assert_eq!(copy(&client, "COPY c FROM STDIN", &[good.as_bytes(), b"8\t\\N\n"]).await.unwrap(), 50_001);
}

async fn copy_out(client: &tokio_postgres::Client, sql: &str) -> Vec<u8> {
    use futures::TryStreamExt;
    let stream = client
        .copy_out(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {}", common::describe_error(&e)));
    let chunks: Vec<Bytes> = stream.try_collect().await.unwrap();
    chunks.concat()
}

#[tokio::test]
async fn copy_to_stdout_in_text_csv_and_binary() {
    let server = common::start();
    let client = server.fresh_database("copy_out").await;
    client
        .batch_execute("CREATE TABLE r (id integer, note text, v double precision)")
        .await
        .unwrap();
    client
        .batch_execute("INSERT INTO r VALUES (1, E'tab\\there', 1.5), (2, NULL, NULL), (3, 'say \"hi\", ok', -2)")
        .await
        .unwrap();
    let text = copy_out(&client, "COPY (SELECT * FROM r ORDER BY id) TO STDOUT").await;
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "1\ttab\\there\t1.5\n2\t\\N\t\\N\n3\tsay \"hi\", ok\t-2\n"
    );
    let csv = copy_out(
        &client,
        "COPY (SELECT id, note FROM r ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)",
    )
    .await;
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        "id,note\n1,tab\there\n2,\n3,\"say \"\"hi\"\", ok\"\n"
    );
    let bin = copy_out(&client, "COPY r (id) TO STDOUT (FORMAT binary)").await;
    assert!(
        bin.starts_with(b"PGCOPY\n\xff\r\n\0") && bin.ends_with(&[0xff, 0xff]),
        "{bin:?}"
    );
    assert_eq!(bin.len(), 19 + 3 * (2 + 4 + 4) + 2);
    // what COPY TO writes, COPY FROM reads back
    client
        .batch_execute("CREATE TABLE r2 (id integer, note text, v double precision)")
        .await
        .unwrap();
    let all = copy_out(&client, "COPY r TO STDOUT (FORMAT binary)").await;
    assert_eq!(
        copy(&client, "COPY r2 FROM STDIN (FORMAT binary)", &[&all])
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        rows(
            &client,
            "SELECT count(*) FROM r2 JOIN r USING (id) WHERE r2.note IS NOT DISTINCT FROM r.note"
        )
        .await,
        vec!["3"]
    );
}

#[tokio::test]
async fn copy_from_a_server_file_loads_it_whole_or_not_at_all() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("CREATE TABLE f (id int, name text)").await.unwrap();
    let dir = std::env::temp_dir().join(format!("brewric-copy-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.csv");
    let lines: String = (1..=50_000).map(|i| format!("{i},name {i}\n")).collect();
    std::fs::write(&good, format!("id,name\n{lines}")).unwrap();
    let n = client
        .execute(&format!("COPY f FROM '{}' WITH (FORMAT csv, HEADER)", good.display()), &[])
        .await
        .unwrap();
    assert_eq!(n, 50_000);
    assert_eq!(rows(&client, "SELECT count(*), sum(id) FROM f").await, vec!["50000|1250025000"]);

    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "1,a\n2,b\nthree,c\n").unwrap();
    let e = client
        .execute(&format!("COPY f FROM '{}' (FORMAT csv)", bad.display()), &[])
        .await
        .unwrap_err();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "22P02");
    assert!(db.where_().unwrap_or_default().contains("line 3"), "{db:?}");
    assert_eq!(rows(&client, "SELECT count(*) FROM f").await, vec!["50000"], "nothing of the failed COPY");

    let e = client.execute("COPY f FROM '/nonexistent/brewric.csv'", &[]).await.unwrap_err();
    assert_eq!(e.as_db_error().unwrap().code().code(), "58P01");
    std::fs::remove_dir_all(&dir).ok();
}
