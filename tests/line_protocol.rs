//! Line protocol through all three entry points — `COPY <schema> FROM STDIN
//! WITH (FORMAT line_protocol)`, the InfluxDB HTTP API and ILP over TCP —
//! each grammar rule and edge case of ../shared/reference/lineprotocol.md
//! checked by SELECTs; the atomic COPY, the partial write, ILP's
//! close-on-error; schema evolution and type conflicts; gzip, body limits,
//! auth, /ping, /health and /query.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use bytes::Bytes;
use futures::SinkExt;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Entry {
    Copy,
    Http,
    Ilp,
}

const ENTRIES: [Entry; 3] = [Entry::Copy, Entry::Http, Entry::Ilp];

/// A raw HTTP/1.1 request; returns (status, body).
fn http(addr: &str, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect http");
    let mut req = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status: u16 = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string());
    (status, body)
}

/// Sends `body` over ILP/TCP, closes the sending side and waits for the server to close.
fn ilp(addr: &str, body: &[u8]) {
    let mut s = TcpStream::connect(addr).expect("connect ilp");
    s.write_all(body).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
}

async fn copy_lp(client: &tokio_postgres::Client, schema: &str, options: &str, body: &[u8]) -> Result<u64, String> {
    let sql = format!("COPY {schema} FROM STDIN WITH (FORMAT line_protocol{options})");
    let sink = client.copy_in::<_, Bytes>(sql.as_str()).await.map_err(|e| common::describe_error(&e))?;
    futures::pin_mut!(sink);
    sink.send(Bytes::copy_from_slice(body)).await.map_err(|e| common::describe_error(&e))?;
    sink.finish().await.map_err(|e| common::describe_error(&e))
}

/// Writes `body` into `schema` through `entry`; Err carries the error text (ILP: none, it closes).
async fn ingest(server: &common::Server, client: &tokio_postgres::Client, entry: Entry, schema: &str, body: &[u8]) -> Result<(), String> {
    match entry {
        Entry::Copy => copy_lp(client, schema, "", body).await.map(|_| ()),
        Entry::Http => {
            let (status, text) = http(server.http_addr.as_deref().unwrap(), "POST", &format!("/write?db={schema}"), &[], body);
            if status == 204 {
                Ok(())
            } else {
                Err(format!("{status} {text}"))
            }
        }
        Entry::Ilp => {
            // ILP writes into --ilp-schema (public): each case uses its own measurement names there.
            ilp(server.ilp_addr.as_deref().unwrap(), body);
            Ok(())
        }
    }
}

async fn rows(client: &tokio_postgres::Client, sql: &str) -> Vec<String> {
    match client.simple_query(sql).await {
        Ok(msgs) => msgs
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
            .collect(),
        Err(e) => vec![format!("ERROR: {}", common::describe_error(&e))],
    }
}

/// Valid input (the reference's cases 1–27): the body, a query over the
/// measurement tables (`{s}` = the schema), and its rows. Lines of one write
/// without a timestamp share the server's time, so they are one point (as in
/// InfluxDB): cases about several values give each line its own time.
const VALID: &[(&str, &str, &str)] = &[
    ("m f=1", "SELECT f, pg_typeof(f) FROM {s}.m", "1|double precision"),
    ("m f=1i 1\nm f=-9223372036854775808i 2\nm f=9223372036854775807i 3", "SELECT f FROM {s}.m ORDER BY f", "-9223372036854775808,1,9223372036854775807"),
    ("m f=5u", "SELECT f, pg_typeof(f) FROM {s}.m", "5|bigint"),
    ("m f=1.e+78 1\nm f=1E5 2\nm f=.5 3\nm f=-0.0 4", "SELECT f FROM {s}.m ORDER BY f", "-0,0.5,100000,1e+78"),
    ("m f=t 1\nm f=T 2\nm f=true 3\nm f=True 4\nm f=TRUE 5\nm f=f 6\nm f=F 7\nm f=false 8\nm f=False 9\nm f=FALSE 10", "SELECT f, count(*) FROM {s}.m GROUP BY f ORDER BY f", "f|5,t|5"),
    ("m f=\"true\"", "SELECT f, pg_typeof(f) FROM {s}.m", "true|text"),
    ("m f=\"\"", "SELECT length(f) FROM {s}.m", "0"),
    ("m f=\"a,b c=d\"", "SELECT f FROM {s}.m", "a,b c=d"),
    ("m f=\"say \\\"hi\\\"\",g=\"C:\\\\dir\",h=\"a\\b\"", "SELECT f, g, h FROM {s}.m", "say \"hi\"|C:\\dir|a\\b"),
    ("m f=\"line1\nline2\"", "SELECT f = E'line1\\nline2' FROM {s}.m", "t"),
    ("my\\ meas,t=1 f=1\nm\\,x f=2", "SELECT (SELECT f FROM {s}.\"my meas\"), (SELECT f FROM {s}.\"m,x\")", "1|2"),
    ("m,tag\\ key=tag\\ val\\,x\\=y f=1", "SELECT \"tag key\" FROM {s}.m", "tag val,x=y"),
    ("m,t=\"q\" f=1", "SELECT t FROM {s}.m", "\"q\""),
    ("m field\\ key=1,f\\,k=2,f\\=k=3", "SELECT \"field key\", \"f,k\", \"f=k\" FROM {s}.m", "1|2|3"),
    ("m,b=2,a=1 f=1", "SELECT a, b FROM {s}.m", "1|2"),
    ("m f=1 -1", "SELECT epoch_ns(time) FROM {s}.m", "-1"),
    ("m f=1 1465839830100400200", "SELECT epoch_ns(time), time FROM {s}.m", "1465839830100400200|2016-06-13 17:43:50.1004+00"),
    ("m f=1,g=2i,h=\"x\",i=t 1", "SELECT f, g, h, i, pg_typeof(g), pg_typeof(i) FROM {s}.m", "1|2|x|t|bigint|boolean"),
    ("# comment\n\n   \nm f=1\n", "SELECT count(*) FROM {s}.m", "1"),
    ("   m f=1 1\n\tm f=2 2", "SELECT count(*) FROM {s}.m", "2"),
    ("m  f=1\nm f=2  123", "SELECT f, epoch_ns(time) FROM {s}.m ORDER BY f", "1|NOW,2|123"),
    ("m f=1 123 ", "SELECT epoch_ns(time) FROM {s}.m", "123"),
    ("m f=1 1\nm f=2 2", "SELECT f FROM {s}.m ORDER BY f", "1,2"),
    ("m,t=🍭 f=\"🚀\"", "SELECT t, f FROM {s}.m", "🍭|🚀"),
    ("m,t=a\\b f=1", "SELECT t FROM {s}.m", "a\\b"),
    ("m f=1 1\r\nm f=2 2\r\n", "SELECT f FROM {s}.m ORDER BY f", "1,2"),
    ("m,host=a f=1i 1\nm,rack=r g=2.5 2", "SELECT host, rack, f, g FROM {s}.m ORDER BY time", "a|NULL|1|NULL,NULL|r|NULL|2.5"),
    // Case 27 inside one write (across writes: same_point_written_again_merges_its_fields).
    ("m,t=1 f=1 1\nm,t=1 g=2 1\nm,t=1 f=3 1", "SELECT t, f, g, count(*) OVER () FROM {s}.m", "1|3|2|1"),
];

/// Invalid input (cases 28–52 and Brewric's own rules): each bad line after a good one, and the message expected.
const INVALID: &[(&str, &str)] = &[
    ("m", "missing fields"),
    ("m,t=1 ", "missing fields"),
    (",t=1 f=1", "missing measurement"),
    ("m, f=1", "missing tag key"),
    ("m,t= f=1", "missing tag value"),
    ("m,t=a=b f=1", "invalid tag format"),
    ("m,t=1,t=2 f=1", "duplicate tags"),
    ("m =1", "missing field key"),
    ("m f=", "missing field value"),
    ("m f=1,", "invalid field format"),
    ("m f=\"abc", "unbalanced quotes"),
    ("m f=1.2.3", "invalid number"),
    ("m f=NaN", "invalid number"),
    ("m f=-inf", "invalid number"),
    ("m f=1e400", "invalid float"),
    ("m f=1.5i", "invalid number"),
    ("m f=9223372036854775808i", "out of range"),
    ("m f=-1u", "invalid"),
    ("m f=18446744073709551615u", "out of range"),
    ("m f=tru", "invalid boolean"),
    ("m f='x'", "invalid boolean"),
    ("m f=1 abc123", "bad timestamp"),
    ("m f=1 1 2", "point is invalid"),
    ("m time=1", "invalid field name"),
    ("m,time=1 f=1", "invalid tag key"),
    ("m ok=1.5", "field type conflict"),
];

/// Numbers a case's expected rows join with commas.
fn joined(r: &[String]) -> String {
    r.join(",")
}

#[tokio::test]
async fn every_valid_case_through_every_entry_point() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    for entry in ENTRIES {
        for (i, (body, query, expected)) in VALID.iter().enumerate() {
            // ILP writes into public (--ilp-schema): each case starts from an empty one.
            let schema = if entry == Entry::Ilp { "public".to_string() } else { format!("{entry:?}{i}").to_lowercase() };
            let query = query.replace("{s}", &schema);
            if entry == Entry::Ilp {
                // Case isolation in public: drop what the previous case created.
                for t in rows(&client, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").await {
                    client.batch_execute(&format!("DROP TABLE public.\"{}\"", t.replace('"', "\"\""))).await.unwrap();
                }
            }
            if let Err(e) = ingest(&server, &client, entry, &schema, body.as_bytes()).await {
                panic!("{entry:?} case {i} {body:?}: {e}");
            }
            let got = joined(&rows(&client, &query).await);
            let want = if expected.contains("NOW") {
                // A line without a timestamp gets the server's time.
                let now = got.split(',').next().unwrap_or("").split('|').nth(1).unwrap_or("0").parse::<i64>().unwrap_or(0);
                let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64;
                assert!((wall - now).abs() < 600_000_000_000, "{entry:?} case {i}: server time {now} vs {wall}");
                expected.replace("NOW", &now.to_string())
            } else {
                expected.to_string()
            };
            assert_eq!(got, want, "{entry:?} case {i} {body:?}: {query}");
        }
    }
}

#[tokio::test]
async fn every_invalid_case_through_every_entry_point() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    for entry in ENTRIES {
        for (i, (bad, message)) in INVALID.iter().enumerate() {
            let schema = if entry == Entry::Ilp { "public".to_string() } else { format!("bad{entry:?}{i}").to_lowercase() };
            if entry == Entry::Ilp {
                client.batch_execute("DROP TABLE IF EXISTS public.m").await.unwrap();
            }
            let body = format!("m ok=1i 1\n{bad}\nm ok=3i 3\n");
            let result = ingest(&server, &client, entry, &schema, body.as_bytes()).await;
            let count = joined(&rows(&client, &format!("SELECT count(*) FROM {schema}.m")).await);
            match entry {
                Entry::Copy => {
                    let e = result.expect_err(&format!("COPY took {bad:?}"));
                    assert!(e.contains(message), "COPY {bad:?}: {e}");
                    assert!(e.contains("line 2"), "COPY {bad:?} names the line: {e}");
                    assert!(count.contains("does not exist"), "COPY {bad:?} stored something: {count}");
                }
                Entry::Http => {
                    let e = result.expect_err(&format!("HTTP took {bad:?}"));
                    assert!(e.starts_with("400 "), "HTTP {bad:?}: {e}");
                    assert!(e.contains("partial write") && e.contains(message) && e.contains("dropped=1"), "HTTP {bad:?}: {e}");
                    // An unbalanced quote runs to the end of the body (Go's scanner), taking the last line with it.
                    let good = if bad.matches('"').count() % 2 == 1 { "1" } else { "2" };
                    assert_eq!(count, good, "HTTP {bad:?}: the good lines are written");
                }
                Entry::Ilp => {
                    assert_eq!(count, "1", "ILP {bad:?}: the line before is kept, nothing after");
                }
            }
        }
    }
}

#[tokio::test]
async fn copy_precision_schema_creation_and_new_columns() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    let n = copy_lp(&client, "fleet", ", PRECISION 's'", b"battery,robot=r1 pct=97.5 1700000000\nbattery,robot=r2 pct=50 1700000001\n")
        .await
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        joined(&rows(&client, "SELECT robot, pct, epoch_ns(time) FROM fleet.battery ORDER BY robot").await),
        "r1|97.5|1700000000000000000,r2|50|1700000001000000000"
    );
    // New tags and fields add columns; earlier rows read NULL there. The
    // table is not rewritten: it keeps its OID.
    let oid = "SELECT 'fleet.battery'::regclass::oid::bigint";
    let before = rows(&client, oid).await;
    copy_lp(&client, "fleet", ", PRECISION 'ms'", b"battery,robot=r3,site=lab pct=10,charging=t 1700000002000\n")
        .await
        .unwrap();
    assert_eq!(rows(&client, oid).await, before, "the same table, widened in place");
    assert_eq!(
        joined(&rows(&client, "SELECT robot, site, charging FROM fleet.battery ORDER BY robot").await),
        "r1|NULL|NULL,r2|NULL|NULL,r3|lab|t"
    );
    assert_eq!(
        joined(&rows(&client, "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'fleet' AND table_name = 'battery' ORDER BY ordinal_position").await),
        "time|timestamp with time zone,robot|text,pct|double precision,site|text,charging|boolean"
    );
    // Integer and unsigned values share a bigint column once it exists.
    copy_lp(&client, "fleet", "", b"odo,robot=r1 km=5u 1\n").await.unwrap();
    copy_lp(&client, "fleet", "", b"odo,robot=r1 km=6i 2\n").await.unwrap();
    copy_lp(&client, "fleet", "", b"odo,robot=r1 km=7u 3\n").await.unwrap();
    // Within one write, as in InfluxDB, the first kind seen fixes the field's.
    let e = copy_lp(&client, "fleet", "", b"odo,robot=r1 km=8i 4\nodo,robot=r1 km=9u 5\n").await.unwrap_err();
    assert!(e.contains("field type conflict"), "{e}");
    assert_eq!(joined(&rows(&client, "SELECT sum(km) FROM fleet.odo").await), "18");
    // A field whose type conflicts with the column fails the COPY, which adds nothing.
    let e = copy_lp(&client, "fleet", "", b"battery,robot=r4 pct=1i,extra=1i\n").await.unwrap_err();
    assert!(e.contains("field type conflict"), "{e}");
    assert!(e.contains("already exists as type float"), "{e}");
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM fleet.battery").await), "3");
    assert_eq!(
        joined(&rows(&client, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'battery' AND column_name = 'extra'").await),
        "0"
    );
    // Several measurements in one COPY are one atomic write.
    let e = copy_lp(&client, "fleet", "", b"imu,robot=r1 ax=1 1\nbattery,robot=r1 pct=2 2\nimu,robot=r1 ax=oops 3\n")
        .await
        .unwrap_err();
    assert!(e.contains("line 3"), "{e}");
    assert!(joined(&rows(&client, "SELECT count(*) FROM fleet.imu").await).contains("does not exist"));
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM fleet.battery").await), "3");
    // A CHECK constraint added to a measurement's table holds for line-protocol writes too.
    client.batch_execute("ALTER TABLE fleet.battery ADD CONSTRAINT pct_range CHECK (pct BETWEEN 0 AND 100)").await.unwrap();
    let e = copy_lp(&client, "fleet", "", b"battery,robot=r5 pct=50 10\nbattery,robot=r5 pct=150 11\n").await.unwrap_err();
    assert!(e.contains("violates check constraint \"pct_range\""), "{e}");
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM fleet.battery").await), "3");
    // So does a FOREIGN KEY: a point whose tag names no robot of the fleet's table is refused, with the write.
    client
        .batch_execute(
            "CREATE TABLE fleet.robots (name text PRIMARY KEY); INSERT INTO fleet.robots VALUES ('r1'), ('r2'), ('r3'), ('r5');
             ALTER TABLE fleet.battery ADD CONSTRAINT battery_robot FOREIGN KEY (robot) REFERENCES fleet.robots (name)",
        )
        .await
        .unwrap();
    let e = copy_lp(&client, "fleet", "", b"battery,robot=r5 pct=50 12
battery,robot=r9 pct=50 13
").await.unwrap_err();
    assert!(e.contains("violates foreign key constraint \"battery_robot\""), "{e}");
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM fleet.battery").await), "3");
    copy_lp(&client, "fleet", "", b"battery,robot=r5 pct=50 12
").await.unwrap();
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM fleet.battery").await), "4");
    // A bad precision and an unknown option are refused.
    assert!(copy_lp(&client, "fleet", ", PRECISION 'weeks'", b"m f=1\n").await.unwrap_err().contains("invalid precision"));
    let e = copy_lp(&client, "fleet", ", DELIMITER ','", b"m f=1\n").await.unwrap_err();
    assert!(e.contains("not recognized"), "{e}");
}

#[tokio::test]
async fn copy_in_a_transaction_block_commits_and_rolls_back_with_it() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    // ROLLBACK takes the rows, the measurement tables and the schema the COPY made.
    client.batch_execute("BEGIN").await.unwrap();
    copy_lp(&client, "lp_tx", "", b"cpu,host=a usage=1 1\nmem,host=a used=2 1\n").await.unwrap();
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM lp_tx.cpu").await), "1");
    client.batch_execute("ROLLBACK").await.unwrap();
    assert!(joined(&rows(&client, "SELECT count(*) FROM lp_tx.cpu").await).contains("does not exist"));
    assert!(joined(&rows(&client, "SELECT count(*) FROM lp_tx.mem").await).contains("does not exist"));
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM pg_namespace WHERE nspname = 'lp_tx'").await), "0");
    // COMMIT keeps both.
    client.batch_execute("BEGIN").await.unwrap();
    copy_lp(&client, "lp_tx", "", b"cpu,host=a usage=1 1\ncpu,host=b usage=3 2\n").await.unwrap();
    client.batch_execute("COMMIT").await.unwrap();
    assert_eq!(joined(&rows(&client, "SELECT host, usage FROM lp_tx.cpu ORDER BY host").await), "a|1,b|3");
}

#[tokio::test]
async fn copy_line_protocol_over_the_simple_protocol_with_psql() {
    let server = common::start();
    let dir = std::env::temp_dir().join(format!("brewric-lp-psql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("metrics.lp");
    let mut body = String::new();
    for i in 0..5000 {
        body.push_str(&format!("cpu,host=h{} usage=0.{i},n={i}i {}\n", i % 7, 1_700_000_000_000_000_000i64 + i));
    }
    std::fs::write(&file, body).unwrap();
    let out = std::process::Command::new("psql")
        .args(["-X", "-v", "ON_ERROR_STOP=1", "-h", &server.host, "-p", &server.port.to_string(), "-U", common::USER, "-d", common::DEFAULT_DB, "-c"])
        .arg(format!("\\copy public from '{}' with (format line_protocol)", file.display()))
        .output()
        .expect("run psql");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "COPY 5000");
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(
        joined(&rows(&client, "SELECT count(*), count(DISTINCT host), sum(n) FROM cpu").await),
        "5000|7|12497500"
    );
    // COPY FROM a server-side file too.
    let n = client
        .simple_query(&format!("COPY other FROM '{}' WITH (FORMAT line_protocol)", file.display()))
        .await
        .unwrap();
    assert!(matches!(n.last(), Some(tokio_postgres::SimpleQueryMessage::CommandComplete(5000))));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn http_write_api_as_agents_use_it() {
    let server = common::start();
    let addr = server.http_addr.clone().unwrap();
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(http(&addr, "GET", "/ping", &[], b"").0, 204);
    assert_eq!(http(&addr, "HEAD", "/ping", &[], b"").0, 204);
    let (status, body) = http(&addr, "GET", "/health", &[], b"");
    assert_eq!(status, 200);
    assert!(body.contains("\"status\":\"pass\""), "{body}");
    // Telegraf's and TSBS's setup statements.
    let (status, body) = http(&addr, "POST", "/query", &[("Content-Type", "application/x-www-form-urlencoded")], b"q=CREATE+DATABASE+%22telegraf%22");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"results\""), "{body}");
    let (status, body) = http(&addr, "GET", "/query?q=show%20databases", &[], b"");
    assert_eq!(status, 200);
    assert!(body.contains("[\"telegraf\"]") && body.contains("[\"public\"]"), "{body}");
    // v1 with Telegraf's headers and gzip.
    let lines = b"cpu,host=a,region=eu usage_user=58i,usage_idle=0.5 1451606400000000000\ncpu,host=b,region=eu usage_user=2i,usage_idle=0.25 1451606400000000000\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(lines).unwrap();
    let gz = gz.finish().unwrap();
    let (status, body) = http(
        &addr,
        "POST",
        "/write?db=telegraf",
        &[("Content-Type", "text/plain; charset=utf-8"), ("Content-Encoding", "gzip"), ("User-Agent", "Telegraf/1.30")],
        &gz,
    );
    assert_eq!(status, 204, "{body}");
    assert_eq!(
        joined(&rows(&client, "SELECT host, usage_user, usage_idle, time FROM telegraf.cpu ORDER BY host").await),
        "a|58|0.5|2016-01-01 00:00:00+00,b|2|0.25|2016-01-01 00:00:00+00"
    );
    // TSBS's influx loader: its CREATE DATABASE, then gzip writes with consistency=all.
    let (status, body) = http(&addr, "POST", "/query", &[("Content-Type", "application/x-www-form-urlencoded")], b"q=CREATE+DATABASE+benchmark+WITH+REPLICATION+1");
    assert_eq!(status, 200, "{body}");
    let (status, body) = http(&addr, "POST", "/write?consistency=all&db=benchmark", &[("Content-Type", "text/plain"), ("Content-Encoding", "gzip")], &gz);
    assert_eq!(status, 204, "{body}");
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM benchmark.cpu").await), "2");
    // v2: bucket and org; precision; a bucket that does not exist yet is created.
    let (status, body) = http(&addr, "POST", "/api/v2/write?org=acme&bucket=metrics&precision=s", &[("Authorization", "Token anything")], b"mem,host=a used=1i 1700000000");
    assert_eq!(status, 204, "{body}");
    assert_eq!(joined(&rows(&client, "SELECT epoch_ns(time) FROM metrics.mem").await), "1700000000000000000");
    // Errors: missing db, bad precision, corrupt gzip, nothing parsable, an unknown path.
    let (status, body) = http(&addr, "POST", "/write", &[], b"m f=1");
    assert_eq!((status, body.as_str()), (400, "{\"error\":\"database is required\"}"));
    let (status, body) = http(&addr, "POST", "/write?db=x&precision=fortnight", &[], b"m f=1");
    assert_eq!(status, 400);
    assert!(body.contains("invalid precision"), "{body}");
    let (status, _) = http(&addr, "POST", "/write?db=x", &[("Content-Encoding", "gzip")], b"not gzip at all");
    assert_eq!(status, 400);
    let (status, body) = http(&addr, "POST", "/write?db=x", &[], b"m\nbad line\n");
    assert_eq!(status, 400);
    assert!(body.contains("unable to parse") && !body.contains("partial write"), "{body}");
    assert_eq!(http(&addr, "POST", "/write?db=x", &[], b"").0, 204);
    assert_eq!(http(&addr, "GET", "/nope", &[], b"").0, 404);
    // A type conflict drops that line only: a partial write.
    let (status, body) = http(&addr, "POST", "/write?db=telegraf", &[], b"cpu,host=c usage_user=1.5\ncpu,host=d usage_user=7i 1451606400000000000\n");
    assert_eq!(status, 400);
    assert!(body.contains("partial write: ") && body.contains("field type conflict") && body.contains("(line 1)") && body.contains("dropped=1"), "{body}");
    assert_eq!(joined(&rows(&client, "SELECT host FROM telegraf.cpu WHERE host = 'd'").await), "d");
}

#[tokio::test]
async fn http_body_limit_and_authentication() {
    let dir = std::env::temp_dir().join(format!("brewric-lp-auth-{}-{}", std::process::id(), line!()));
    let server = common::start_configured(dir, 2, &["--http-max-body", "1KB", "--http-token", "s3cret"], &[]);
    let addr = server.http_addr.clone().unwrap();
    assert_eq!(http(&addr, "GET", "/ping", &[], b"").0, 204, "ping needs no auth");
    let (status, body) = http(&addr, "POST", "/write?db=a", &[], b"m f=1");
    assert_eq!((status, body.as_str()), (401, "{\"error\":\"authorization failed\"}"));
    assert_eq!(http(&addr, "POST", "/write?db=a", &[("Authorization", "Token wrong")], b"m f=1").0, 401);
    assert_eq!(http(&addr, "POST", "/write?db=a", &[("Authorization", "Token s3cret")], b"m f=1").0, 204);
    assert_eq!(http(&addr, "POST", "/api/v2/write?bucket=a", &[("Authorization", "Bearer s3cret")], b"m f=2").0, 204);
    // Basic user:s3cret, and v1's u/p parameters.
    assert_eq!(http(&addr, "POST", "/write?db=a", &[("Authorization", "Basic dTpzM2NyZXQ=")], b"m f=3").0, 204);
    assert_eq!(http(&addr, "POST", "/write?db=a&u=u&p=s3cret", &[], b"m f=4").0, 204);
    // Bodies over --http-max-body, raw or once inflated.
    let big = "m f=1\n".repeat(400);
    let (status, body) = http(&addr, "POST", "/write?db=a&p=s3cret", &[], big.as_bytes());
    assert_eq!((status, body.as_str()), (413, "{\"error\":\"Request Entity Too Large\"}"));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(big.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    assert!(gz.len() < 1000);
    assert_eq!(http(&addr, "POST", "/write?db=a&p=s3cret", &[("Content-Encoding", "gzip")], &gz).0, 413);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(joined(&rows(&client, "SELECT f FROM a.m ORDER BY f").await), "1,2,3,4");
}

#[tokio::test]
async fn ilp_keeps_lines_before_an_error_and_a_last_line_without_newline() {
    let server = common::start();
    let addr = server.ilp_addr.clone().unwrap();
    let client = server.connect(common::DEFAULT_DB).await;
    // Many lines in pieces, a line split across writes, the last without a newline.
    let mut s = TcpStream::connect(&addr).unwrap();
    for i in 0..20_000 {
        writeln!(s, "cpu,host=h{} u={i}i {}", i % 10, i).unwrap();
    }
    s.write_all(b"cpu,host=last u=").unwrap();
    s.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    s.write_all(b"-1i 99999").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let _ = s.read_to_end(&mut Vec::new());
    assert_eq!(
        joined(&rows(&client, "SELECT count(*), sum(u), count(DISTINCT host) FROM cpu").await),
        "20001|199989999|11"
    );
    // A bad line: the lines before it stay, nothing after it is written, the connection closes.
    ilp(&addr, b"mem used=1i 1\nmem used=2i 2\nmem used=oops 3\nmem used=4i 4\n");
    assert_eq!(joined(&rows(&client, "SELECT used FROM mem ORDER BY used").await), "1,2");
    assert!(server.stderr_tail(4000).contains("line 3"), "the bad line is logged");
    // A conflict with a column that the connection's previous read created
    // (parsed while that read was still being written): still placed at its line.
    for pause_ms in [0, 2, 30] {
        let table = format!("disk{pause_ms}");
        let mut s = TcpStream::connect(&addr).unwrap();
        for i in 0..5_000 {
            writeln!(s, "{table} free={i}i {i}").unwrap();
        }
        s.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(pause_ms));
        write!(s, "{table} other=1i 9001\n{table} free=0.5 9002\n{table} free=-3i 9003\n").unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let _ = s.read_to_end(&mut Vec::new());
        assert_eq!(
            joined(&rows(&client, &format!("SELECT count(*), count(other), min(free) FROM {table}")).await),
            "5001|1|0",
            "pause {pause_ms} ms: the lines before the conflict are kept, none after"
        );
    }
}

/// Case 27 across writes: a point (measurement, tag set, time) written again
/// merges its fields into the stored one, the last write winning per field;
/// other series at the same time, and new points out of order, are rows of
/// their own; a retry that changes nothing changes nothing. The series times
/// behind the in-order fast path are rebuilt from the rows after a restart.
#[tokio::test]
async fn same_point_written_again_merges_its_fields() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    let writes: &[&str] = &[
        "m,t=1 f=1 10\nm,t=2 f=9 10\nm f=5 10",
        "m,t=1 g=2 10",
        "m,t=1 f=3 10\nm,t=1 f=0 5",
        "m,t=1 f=3 10",
        "m,t=1 f=3,h=\"x\" 10\nm,t=2,u=a f=8 10",
        "m,t=2 g=7 10\nm g=6 10\nm,t=1 f=4 20",
    ];
    let want = "NULL|NULL|5|6|NULL|10,1|NULL|0|NULL|NULL|5,1|NULL|3|2|x|10,1|NULL|4|NULL|NULL|20,2|NULL|9|7|NULL|10,2|a|8|NULL|NULL|10";
    let query = |s: &str| format!("SELECT t, u, f, g, h, epoch_ns(time) FROM {s}.m ORDER BY t NULLS FIRST, u NULLS FIRST, time");
    for entry in ENTRIES {
        let schema = if entry == Entry::Ilp { "public".to_string() } else { format!("merge_{entry:?}").to_lowercase() };
        if entry == Entry::Ilp {
            let _ = client.batch_execute("DROP TABLE IF EXISTS public.m").await;
        }
        for body in writes {
            if let Err(e) = ingest(&server, &client, entry, &schema, body.as_bytes()).await {
                panic!("{entry:?} {body:?}: {e}");
            }
        }
        assert_eq!(joined(&rows(&client, &query(&schema)).await), want, "{entry:?}");
    }

    // A table made by SQL takes tags into its text columns; they become its series key.
    client
        .batch_execute("CREATE TABLE merge_copy.sqlmade (time timestamptz, host text, v double precision)")
        .await
        .unwrap();
    for body in ["sqlmade,host=a v=1 1\nsqlmade,host=b v=2 1", "sqlmade,host=a v=3 1"] {
        copy_lp(&client, "merge_copy", "", body.as_bytes()).await.unwrap();
    }
    assert_eq!(
        joined(&rows(&client, "SELECT host, v FROM merge_copy.sqlmade ORDER BY host").await),
        "a|3,b|2"
    );

    // After a restart the in-order path still knows which points are stored.
    drop(client);
    let dir = server.kill9();
    let server = common::start_in(dir, 2);
    let client = server.connect(common::DEFAULT_DB).await;
    copy_lp(&client, "merge_copy", "", b"m,t=1 g=1 20\nm,t=9 f=1 30").await.unwrap();
    assert_eq!(
        joined(&rows(&client, "SELECT t, f, g FROM merge_copy.m WHERE epoch_ns(time) >= 20 ORDER BY t").await),
        "1|4|1,9|1|NULL"
    );
}

/// A write that changes a stored point rewrites only the day holding it:
/// the segment files of the other days stay as they were, and the merged
/// point and a new one survive a crash.
#[tokio::test]
async fn a_changed_point_rewrites_only_its_day() {
    let server = common::start_with_shards(2);
    let Some(data_dir) = server.data_dir().map(|d| d.to_path_buf()) else {
        return;
    };
    let segment_files = || -> Vec<std::path::PathBuf> {
        let shards = std::fs::read_dir(data_dir.join("segments")).into_iter().flatten().flatten();
        shards.flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten().map(|f| f.path())).collect()
    };
    let client = server.connect(common::DEFAULT_DB).await;
    // Three days of three hosts, a point a minute, from 2024-03-01.
    let start: i64 = 1_709_251_200_000_000_000;
    let minute: i64 = 60_000_000_000;
    let mut body = String::new();
    for i in 0..3 * 1440 {
        for host in ["a", "b", "c"] {
            body += &format!("cpu,host={host} usage={i} {}\n", start + i * minute);
        }
    }
    copy_lp(&client, "lp_days", "", body.as_bytes()).await.unwrap();
    client.batch_execute("CHECKPOINT").await.unwrap();
    let flushed = segment_files();
    // Day 2: host b's point at 12:00 changes, host d's is new.
    let noon = start + (1440 + 720) * minute;
    copy_lp(&client, "lp_days", "", format!("cpu,host=b usage=-1 {noon}\ncpu,host=d usage=7 {noon}").as_bytes()).await.unwrap();
    let check = |client: tokio_postgres::Client| async move {
        assert_eq!(joined(&rows(&client, "SELECT count(*), sum(usage) FROM lp_days.cpu").await), format!("{}|{}", 3 * 3 * 1440 + 1, 3 * (0..3 * 1440).sum::<i64>() - (1440 + 720) - 1 + 7));
        assert_eq!(
            joined(&rows(&client, &format!("SELECT host, usage FROM lp_days.cpu WHERE epoch_ns(time) = {noon} ORDER BY host")).await),
            "a|2160,b|-1,c|2160,d|7"
        );
        client
    };
    let client = check(client).await;
    client.batch_execute("CHECKPOINT").await.unwrap();
    let now = segment_files();
    let kept = now.iter().filter(|f| flushed.contains(f)).count();
    assert!(flushed.len() >= 3 && kept == flushed.len() * 2 / 3, "the other days' files stay: {flushed:?} then {now:?}");
    drop(client);
    let server = common::start_in(server.kill9(), 2);
    check(server.connect(common::DEFAULT_DB).await).await;
}

/// A write cut short by a crash after it created its schema and tables but
/// before its Commit record (failpoint `commit-before-commit-record`) leaves
/// neither behind once the server is back; a measurement table that already
/// held rows stays with them.
#[tokio::test]
async fn a_write_cut_short_by_a_crash_leaves_no_table_it_created() {
    let server = common::start_with_shards(1);
    if server.is_external() {
        return;
    }
    let client = server.connect(common::DEFAULT_DB).await;
    copy_lp(&client, "lp_crash", "", b"cpu,host=a usage=1 1\n").await.unwrap();
    drop(client);
    let server = common::start_configured(server.kill9(), 1, &[], &[("BREWRIC_FAILPOINT", "commit-before-commit-record")]);
    let client = server.connect(common::DEFAULT_DB).await;
    copy_lp(&client, "lp_crash", "", b"cpu,host=b usage=2 2\nmem,host=b used=3 2\n").await.expect_err("the failpoint stops the server");
    drop(client);
    let server = common::start_configured(server.kill9(), 1, &[], &[("BREWRIC_FAILPOINT", "commit-before-commit-record")]);
    let client = server.connect(common::DEFAULT_DB).await;
    copy_lp(&client, "lp_fresh", "", b"disk,host=c free=4 3\n").await.expect_err("the failpoint stops the server");
    drop(client);
    let server = common::start_in(server.kill9(), 1);
    let client = server.connect(common::DEFAULT_DB).await;
    assert_eq!(joined(&rows(&client, "SELECT host, usage FROM lp_crash.cpu").await), "a|1", "the table that held rows stays");
    assert!(joined(&rows(&client, "SELECT count(*) FROM lp_crash.mem").await).contains("does not exist"));
    assert_eq!(joined(&rows(&client, "SELECT count(*) FROM pg_namespace WHERE nspname = 'lp_fresh'").await), "0");
}
