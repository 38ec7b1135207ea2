//! PostgreSQL wire-protocol integration tests, driven by tokio-postgres (and,
//! where a driver would hide the detail, by raw protocol messages):
//!
//! * parameters and results of every supported type, binary (prepared
//!   statements with typed parameters, through a table and through `SELECT $1::type`)
//!   and text (simple query);
//! * parameter type inference and result column types;
//! * `Execute` with a row limit (portals, PortalSuspended);
//! * cancelling a running query (57014) and using the connection afterwards;
//! * errors with their SQLSTATEs, over both protocols, each followed by a
//!   successful query on the same connection; after an error in an extended
//!   batch, messages are skipped until Sync;
//! * several statements in one simple query; SHOW's column names and SHOW
//!   ALL's shape; SSLRequest; malformed messages.
//!
//! `BREWRIC_TEST_SERVER=HOST:PORT` runs them against another server (real
//! PostgreSQL 15, to check the expectations; see tools/tests_on_postgres.sh).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, SimpleQueryMessage};

use common::pgtext::{binary_to_text, numeric_binary, pg_days, Raw, RawParam};
use common::{describe_error, sqlstate};

// ---------------------------------------------------------------------------
// helpers

/// Assert `res` failed with SQLSTATE `code`; return the error.
fn expect_sqlstate<T: std::fmt::Debug>(
    what: &str,
    res: Result<T, tokio_postgres::Error>,
    code: &str,
) -> tokio_postgres::Error {
    match res {
        Ok(v) => panic!("{what}: expected SQLSTATE {code}, but it succeeded: {v:?}"),
        Err(e) => {
            assert_eq!(
                sqlstate(&e).as_deref(),
                Some(code),
                "{what}: wrong error: {}",
                describe_error(&e)
            );
            e
        }
    }
}

/// The connection still answers a trivial query over both protocols.
async fn assert_usable(client: &Client, after: &str) {
    let v: i32 = client
        .query_one("SELECT 41 + 1", &[])
        .await
        .unwrap_or_else(|e| panic!("extended query after {after}: {}", describe_error(&e)))
        .get(0);
    assert_eq!(v, 42, "after {after}");
    let msgs = client
        .simple_query("SELECT 'still here'")
        .await
        .unwrap_or_else(|e| panic!("simple query after {after}: {}", describe_error(&e)));
    assert_eq!(
        simple_rows(&msgs),
        vec![vec![Some("still here".to_string())]],
        "after {after}"
    );
}

/// The rows of a simple-query result, as text (None = NULL).
fn simple_rows(msgs: &[SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect()
}

/// Microseconds since the Unix epoch of a UTC date and time.
fn unix_micros(y: i64, mo: u32, d: u32, h: i64, mi: i64, s: i64, us: i64) -> i64 {
    let days = pg_days(y, mo, d) as i64 + 10957;
    ((days * 86400 + h * 3600 + mi * 60 + s) * 1_000_000) + us
}

fn system_time(unix_us: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(unix_us as u64)
}

fn interval_binary(months: i32, days: i32, micros: i64) -> Vec<u8> {
    let mut v = micros.to_be_bytes().to_vec();
    v.extend_from_slice(&days.to_be_bytes());
    v.extend_from_slice(&months.to_be_bytes());
    v
}

fn jsonb_binary(text: &str) -> Vec<u8> {
    let mut v = vec![1u8];
    v.extend_from_slice(text.as_bytes());
    v
}

/// Read column `idx` of `row` as raw binary and render it as PostgreSQL text.
fn binary_cell(row: &tokio_postgres::Row, idx: usize) -> Option<String> {
    let oid = row.columns()[idx].type_().oid();
    let raw: Option<Raw> = row.get(idx);
    raw.map(|Raw(b)| binary_to_text(oid, b).unwrap_or_else(|e| panic!("column {idx}: {e}")))
}

// ---------------------------------------------------------------------------
// every type, binary and text

/// The types of issue 2, one column each, in this order.
const ALL_TYPES_DDL: &str = "CREATE TABLE all_types (
    b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision,
    n numeric, t text, vc varchar(10), c char(5), by bytea, d date,
    ts timestamp, tz timestamptz, iv interval, j jsonb)";

fn all_types() -> Vec<Type> {
    vec![
        Type::BOOL,
        Type::INT2,
        Type::INT4,
        Type::INT8,
        Type::FLOAT4,
        Type::FLOAT8,
        Type::NUMERIC,
        Type::TEXT,
        Type::VARCHAR,
        Type::BPCHAR,
        Type::BYTEA,
        Type::DATE,
        Type::TIMESTAMP,
        Type::TIMESTAMPTZ,
        Type::INTERVAL,
        Type::JSONB,
    ]
}

/// The text PostgreSQL prints for the row inserted by `binary_round_trip_through_a_table`.
const ROW_TEXT: [&str; 16] = [
    "t",
    "-32768",
    "2147483647",
    "-9223372036854775808",
    "1.5",
    "0.1",
    "12345.678",
    "héllo ☃",
    "varchar",
    "ab   ",
    "\\x0001feff",
    "2026-01-31",
    "2026-01-02 03:04:05.123456",
    "2026-01-02 03:04:05.5+00",
    "1 mon 2 days 00:00:03.25",
    "{\"a\": [1, 2], \"b\": null}",
];

#[tokio::test]
async fn binary_round_trip_through_a_table() {
    let server = common::start();
    let client = server.fresh_database("wire_table").await;
    client
        .batch_execute(ALL_TYPES_DDL)
        .await
        .expect("create table");

    // parameter types are inferred from the target columns
    let insert = client
        .prepare(
            "INSERT INTO all_types VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .await
        .unwrap_or_else(|e| panic!("prepare insert: {}", describe_error(&e)));
    assert_eq!(
        insert.params(),
        all_types().as_slice(),
        "inferred parameter types"
    );
    assert!(insert.columns().is_empty());

    let ts = system_time(unix_micros(2026, 1, 2, 3, 4, 5, 123_456));
    let tz = system_time(unix_micros(2026, 1, 2, 3, 4, 5, 500_000));
    let numeric = RawParam(numeric_binary("12345.678"));
    let date = RawParam(pg_days(2026, 1, 31).to_be_bytes().to_vec());
    let interval = RawParam(interval_binary(1, 2, 3_250_000));
    let jsonb = RawParam(jsonb_binary("{\"b\":null,\"a\":[1,2]}"));
    let bytes: Vec<u8> = vec![0, 1, 0xfe, 0xff];
    let params: [&(dyn ToSql + Sync); 16] = [
        &true,
        &i16::MIN,
        &i32::MAX,
        &i64::MIN,
        &1.5f32,
        &0.1f64,
        &numeric,
        &"héllo ☃",
        &"varchar",
        &"ab",
        &bytes,
        &date,
        &ts,
        &tz,
        &interval,
        &jsonb,
    ];
    let n = client
        .execute(&insert, &params)
        .await
        .unwrap_or_else(|e| panic!("insert with binary params: {}", describe_error(&e)));
    assert_eq!(n, 1);
    // NULLs (tokio-postgres checks the Rust type even for None, hence the RawParam
    // NULLs for the types it has no Rust type for)
    let raw_null: Option<RawParam> = None;
    let nulls: [&(dyn ToSql + Sync); 16] = [
        &None::<bool>,
        &None::<i16>,
        &None::<i32>,
        &None::<i64>,
        &None::<f32>,
        &None::<f64>,
        &raw_null,
        &None::<&str>,
        &None::<&str>,
        &None::<&str>,
        &None::<Vec<u8>>,
        &raw_null,
        &None::<SystemTime>,
        &None::<SystemTime>,
        &raw_null,
        &raw_null,
    ];
    client
        .execute(&insert, &nulls)
        .await
        .unwrap_or_else(|e| panic!("insert NULLs: {}", describe_error(&e)));

    // binary results
    let select = client
        .prepare("SELECT * FROM all_types WHERE i2 = $1")
        .await
        .unwrap_or_else(|e| panic!("prepare select: {}", describe_error(&e)));
    assert_eq!(
        select.params(),
        &[Type::INT2],
        "parameter type inferred from i2 = $1"
    );
    let col_types: Vec<Type> = select.columns().iter().map(|c| c.type_().clone()).collect();
    assert_eq!(col_types, all_types(), "result column types");
    let names: Vec<&str> = select.columns().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "b", "i2", "i4", "i8", "f4", "f8", "n", "t", "vc", "c", "by", "d", "ts", "tz", "iv",
            "j"
        ]
    );

    let row = client
        .query_one(&select, &[&i16::MIN])
        .await
        .unwrap_or_else(|e| panic!("select: {}", describe_error(&e)));
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, i16>(1), i16::MIN);
    assert_eq!(row.get::<_, i32>(2), i32::MAX);
    assert_eq!(row.get::<_, i64>(3), i64::MIN);
    assert_eq!(row.get::<_, f32>(4), 1.5);
    assert_eq!(row.get::<_, f64>(5), 0.1);
    assert_eq!(row.get::<_, String>(7), "héllo ☃");
    assert_eq!(row.get::<_, String>(8), "varchar");
    assert_eq!(row.get::<_, String>(9), "ab   ", "char(5) is blank-padded");
    assert_eq!(row.get::<_, Vec<u8>>(10), bytes);
    assert_eq!(row.get::<_, SystemTime>(12), ts);
    assert_eq!(row.get::<_, SystemTime>(13), tz);
    for (i, expected) in ROW_TEXT.iter().enumerate() {
        assert_eq!(
            binary_cell(&row, i).as_deref(),
            Some(*expected),
            "binary value of column {} ({})",
            i,
            names[i]
        );
    }

    // the NULL row, binary
    let rows = client
        .query("SELECT * FROM all_types WHERE i2 IS NULL", &[])
        .await
        .unwrap_or_else(|e| panic!("select NULL row: {}", describe_error(&e)));
    assert_eq!(rows.len(), 1);
    for i in 0..16 {
        assert_eq!(binary_cell(&rows[0], i), None, "column {i} of the NULL row");
    }

    // text results (simple query) of the same rows
    let msgs = client
        .simple_query("SELECT * FROM all_types ORDER BY i2 NULLS LAST")
        .await
        .unwrap_or_else(|e| panic!("simple select: {}", describe_error(&e)));
    let rows = simple_rows(&msgs);
    assert_eq!(rows.len(), 2);
    let expected: Vec<Option<String>> = ROW_TEXT.iter().map(|s| Some(s.to_string())).collect();
    assert_eq!(rows[0], expected, "text values");
    assert_eq!(rows[1], vec![None; 16], "text NULLs");
}

#[tokio::test]
async fn binary_parameters_through_select_casts() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;

    macro_rules! round_trip {
        ($sql:expr, $ty:ty, $($v:expr),+) => {{
            let stmt = client
                .prepare($sql)
                .await
                .unwrap_or_else(|e| panic!("prepare {}: {}", $sql, describe_error(&e)));
            $(
                let v: $ty = $v;
                let row = client
                    .query_one(&stmt, &[&v])
                    .await
                    .unwrap_or_else(|e| panic!("{} with {:?}: {}", $sql, v, describe_error(&e)));
                let back: $ty = row.get(0);
                assert_eq!(format!("{back:?}"), format!("{v:?}"), "{} round trip", $sql);
            )+
        }};
    }
    round_trip!("SELECT $1::boolean", bool, true, false);
    round_trip!("SELECT $1::smallint", i16, i16::MIN, -1, 0, i16::MAX);
    round_trip!("SELECT $1::integer", i32, i32::MIN, 7, i32::MAX);
    round_trip!("SELECT $1::bigint", i64, i64::MIN, 1 << 40, i64::MAX);
    round_trip!(
        "SELECT $1::real",
        f32,
        1.5,
        -0.1,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY
    );
    round_trip!(
        "SELECT $1::double precision",
        f64,
        0.1,
        -1e300,
        f64::MIN_POSITIVE,
        f64::INFINITY
    );
    round_trip!(
        "SELECT $1::text",
        String,
        String::new(),
        "héllo ☃".to_string()
    );
    round_trip!("SELECT $1::varchar", String, "v".to_string());
    round_trip!("SELECT $1::bytea", Vec<u8>, vec![], vec![0u8, 255, 10, 13]);
    round_trip!(
        "SELECT $1::timestamp",
        SystemTime,
        system_time(unix_micros(1999, 12, 31, 23, 59, 59, 999_999)),
        system_time(unix_micros(2026, 6, 1, 0, 0, 0, 1))
    );
    round_trip!(
        "SELECT $1::timestamptz",
        SystemTime,
        system_time(unix_micros(2026, 1, 1, 0, 0, 0, 0))
    );
    round_trip!("SELECT $1::integer", Option<i32>, None, Some(3));
    round_trip!("SELECT $1::text", Option<String>, None);

    // NaN does not equal itself: check it separately
    let row = client
        .query_one("SELECT $1::float8, $2::float4", &[&f64::NAN, &f32::NAN])
        .await
        .unwrap();
    assert!(row.get::<_, f64>(0).is_nan());
    assert!(row.get::<_, f32>(1).is_nan());

    // char(n) pads, varchar(n) truncates on an explicit cast
    let row = client
        .query_one("SELECT $1::char(4), $2::varchar(2)", &[&"ab", &"abcd"])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "ab  ");
    assert_eq!(row.get::<_, String>(1), "ab");

    // types tokio-postgres has no Rust type for (without optional features):
    // sent and received as raw binary, and compared on the server with a literal
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("numeric", numeric_binary("12345.678"), "12345.678"),
        ("numeric", numeric_binary("-0.0001"), "-0.0001"),
        (
            "numeric",
            numeric_binary("100000000000000000000.5"),
            "100000000000000000000.5",
        ),
        ("numeric", numeric_binary("0"), "0"),
        (
            "date",
            pg_days(2026, 1, 31).to_be_bytes().to_vec(),
            "2026-01-31",
        ),
        (
            "date",
            pg_days(1970, 1, 1).to_be_bytes().to_vec(),
            "1970-01-01",
        ),
        (
            "interval",
            interval_binary(14, 3, 4 * 3_600_000_000 + 5_000_000),
            "1 year 2 mons 3 days 04:00:05",
        ),
        (
            "interval",
            interval_binary(0, -1, 7_200_000_000),
            "-1 days +02:00:00",
        ),
    ];
    for (ty, bin, text) in cases {
        let sql = format!("SELECT $1::{ty}, $1::{ty} = '{text}'::{ty}");
        let row = client
            .query_one(sql.as_str(), &[&RawParam(bin.clone())])
            .await
            .unwrap_or_else(|e| panic!("{sql} with {text}: {}", describe_error(&e)));
        assert_eq!(
            binary_cell(&row, 0).as_deref(),
            Some(text),
            "{sql}: binary result"
        );
        assert!(
            row.get::<_, bool>(1),
            "{sql}: the server read the binary {ty} {text} as something else"
        );
    }
    // jsonb (no operators yet): binary in, binary out, normalized
    let row = client
        .query_one(
            "SELECT $1::jsonb",
            &[&RawParam(jsonb_binary("{\"k\":[true, 1.50 ,\"s\"]}"))],
        )
        .await
        .unwrap_or_else(|e| panic!("jsonb param: {}", describe_error(&e)));
    assert_eq!(
        binary_cell(&row, 0).as_deref(),
        Some("{\"k\": [true, 1.50, \"s\"]}")
    );

    // several parameters, some used twice, in expressions
    let row = client
        .query_one(
            "SELECT $1::int + $2::int, $1::int * 2, $3::text || $3::text",
            &[&20i32, &22i32, &"ab"],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 42);
    assert_eq!(row.get::<_, i32>(1), 40);
    assert_eq!(row.get::<_, String>(2), "abab");
}

/// Arrays as binary parameters and results (tokio-postgres's Vec<T> ↔ T[]),
/// NULL elements, and through a table column.
#[tokio::test]
async fn arrays_as_binary_parameters_and_results() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    let ints: Vec<i32> = vec![1, -2, 300_000];
    let row = client.query_one("SELECT $1::integer[]", &[&ints]).await.unwrap();
    assert_eq!(row.get::<_, Vec<i32>>(0), ints);
    let words: Vec<Option<String>> = vec![Some("a b".into()), None, Some(String::new())];
    let row = client.query_one("SELECT $1::text[]", &[&words]).await.unwrap();
    assert_eq!(row.get::<_, Vec<Option<String>>>(0), words);
    let floats: Vec<f64> = vec![0.5, -1e300];
    let row = client.query_one("SELECT $1::float8[], array_length($1::float8[], 1)", &[&floats]).await.unwrap();
    assert_eq!(row.get::<_, Vec<f64>>(0), floats);
    assert_eq!(row.get::<_, i32>(1), 2);

    client.batch_execute("CREATE TABLE wire_arrays (id integer, v bigint[])").await.unwrap();
    let big: Vec<i64> = vec![i64::MAX, 0, i64::MIN];
    client.execute("INSERT INTO wire_arrays VALUES (1, $1)", &[&big]).await.unwrap();
    let row = client.query_one("SELECT v, v[1], cardinality(v) FROM wire_arrays", &[]).await.unwrap();
    assert_eq!(row.get::<_, Vec<i64>>(0), big);
    assert_eq!(row.get::<_, i64>(1), i64::MAX);
    assert_eq!(row.get::<_, i32>(2), 3);
    let text = client.simple_query("SELECT v::text FROM wire_arrays").await.unwrap();
    let first = text.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
        _ => None,
    });
    assert_eq!(first.as_deref(), Some("{9223372036854775807,0,-9223372036854775808}"));
}

#[tokio::test]
async fn text_results_for_every_type() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    let sql = "SELECT true, 1::smallint, -2, 3000000000, 1.5::real, 0.1::float8, 1.50::numeric, \
               'txt'::text, 'vc'::varchar(5), 'c'::char(3), '\\x00ff'::bytea, '2026-01-31'::date, \
               '2026-01-02 03:04:05.5'::timestamp, '2026-01-02 03:04:05+02'::timestamptz, \
               '1 day 02:00:00'::interval, '{\"b\": 1, \"a\": 2}'::jsonb, NULL::integer, ''::text";
    let msgs = client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{}", describe_error(&e)));
    let expected: Vec<Option<String>> = [
        Some("t"),
        Some("1"),
        Some("-2"),
        Some("3000000000"),
        Some("1.5"),
        Some("0.1"),
        Some("1.50"),
        Some("txt"),
        Some("vc"),
        Some("c  "),
        Some("\\x00ff"),
        Some("2026-01-31"),
        Some("2026-01-02 03:04:05.5"),
        Some("2026-01-02 01:04:05+00"),
        Some("1 day 02:00:00"),
        Some("{\"a\": 2, \"b\": 1}"),
        None,
        Some(""),
    ]
    .iter()
    .map(|o| o.map(str::to_string))
    .collect();
    assert_eq!(simple_rows(&msgs), vec![expected.clone()]);

    // the same values in binary over the extended protocol render to the same text
    let row = client
        .query_one(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{}", describe_error(&e)));
    let binary: Vec<Option<String>> = (0..row.len()).map(|i| binary_cell(&row, i)).collect();
    assert_eq!(binary, expected);

    // and the RowDescription carries the right types
    let stmt = client.prepare(sql).await.unwrap();
    let types: Vec<Type> = stmt.columns().iter().map(|c| c.type_().clone()).collect();
    assert_eq!(
        types,
        vec![
            Type::BOOL,
            Type::INT2,
            Type::INT4,
            Type::INT8,
            Type::FLOAT4,
            Type::FLOAT8,
            Type::NUMERIC,
            Type::TEXT,
            Type::VARCHAR,
            Type::BPCHAR,
            Type::BYTEA,
            Type::DATE,
            Type::TIMESTAMP,
            Type::TIMESTAMPTZ,
            Type::INTERVAL,
            Type::JSONB,
            Type::INT4,
            Type::TEXT
        ]
    );
}

#[tokio::test]
async fn result_types_of_aggregates_and_parameter_inference() {
    let server = common::start();
    let client = server.fresh_database("wire_infer").await;
    client
        .batch_execute(
            "CREATE TABLE r (ts timestamptz NOT NULL, robot text, battery double precision, ok boolean, n integer);
             INSERT INTO r VALUES ('2026-01-01 00:00:00+00', 'r1', 97.5, true, 1), ('2026-01-01 00:00:10+00', 'r1', 96.5, true, 2)",
        )
        .await
        .unwrap_or_else(|e| panic!("setup: {}", describe_error(&e)));

    let stmt = client
        .prepare("SELECT count(*), sum(n), avg(n), avg(battery), max(ts), min(robot) FROM r WHERE robot = $1 AND ts >= $2 AND ok = $3")
        .await
        .unwrap_or_else(|e| panic!("prepare: {}", describe_error(&e)));
    assert_eq!(stmt.params(), &[Type::TEXT, Type::TIMESTAMPTZ, Type::BOOL]);
    let types: Vec<Type> = stmt.columns().iter().map(|c| c.type_().clone()).collect();
    assert_eq!(
        types,
        vec![
            Type::INT8,
            Type::INT8,
            Type::NUMERIC,
            Type::FLOAT8,
            Type::TIMESTAMPTZ,
            Type::TEXT
        ]
    );
    let since = system_time(unix_micros(2026, 1, 1, 0, 0, 0, 0));
    let row = client
        .query_one(&stmt, &[&"r1", &since, &true])
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 2);
    assert_eq!(row.get::<_, i64>(1), 3);
    assert_eq!(binary_cell(&row, 2).as_deref(), Some("1.5000000000000000"));
    assert_eq!(row.get::<_, f64>(3), 97.0);
    assert_eq!(
        row.get::<_, SystemTime>(4),
        system_time(unix_micros(2026, 1, 1, 0, 0, 10, 0))
    );
    assert_eq!(row.get::<_, String>(5), "r1");

    // LIMIT and INSERT targets infer parameter types too
    let stmt = client
        .prepare("SELECT n FROM r ORDER BY n LIMIT $1")
        .await
        .unwrap();
    assert_eq!(stmt.params(), &[Type::INT8]);
    let rows = client.query(&stmt, &[&1i64]).await.unwrap();
    assert_eq!(rows.len(), 1);
    let stmt = client
        .prepare("INSERT INTO r (ts, n) VALUES ($1, $2 + 1)")
        .await
        .unwrap();
    assert_eq!(stmt.params(), &[Type::TIMESTAMPTZ, Type::INT4]);
}

// ---------------------------------------------------------------------------
// portals, cancel, several statements

#[tokio::test]
async fn execute_with_row_limit_suspends_the_portal() {
    let server = common::start();
    let mut client = server.fresh_database("wire_portal").await;
    client
        .batch_execute("CREATE TABLE p (i integer); INSERT INTO p VALUES (5), (3), (1), (4), (2)")
        .await
        .unwrap_or_else(|e| panic!("setup: {}", describe_error(&e)));

    let tx = client.transaction().await.unwrap();
    let stmt = tx
        .prepare("SELECT i FROM p WHERE i > $1 ORDER BY i")
        .await
        .unwrap();
    let portal = tx
        .bind(&stmt, &[&0i32])
        .await
        .unwrap_or_else(|e| panic!("bind: {}", describe_error(&e)));
    let mut batches = Vec::new();
    for call in 1..=4 {
        let rows = tx.query_portal(&portal, 2).await.unwrap_or_else(|e| {
            panic!(
                "Execute #{call} (max 2 rows) of the portal, after batches {batches:?}: {}",
                describe_error(&e)
            )
        });
        batches.push(rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>());
    }
    assert_eq!(batches, vec![vec![1, 2], vec![3, 4], vec![5], vec![]]);

    // two portals open at once, interleaved
    let a = tx.bind(&stmt, &[&1i32]).await.unwrap();
    let b = tx.bind(&stmt, &[&3i32]).await.unwrap();
    let a1: Vec<i32> = tx
        .query_portal(&a, 1)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let b1: Vec<i32> = tx
        .query_portal(&b, 1)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let a2: Vec<i32> = tx
        .query_portal(&a, 10)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let b2: Vec<i32> = tx
        .query_portal(&b, 10)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!((a1, b1, a2, b2), (vec![2], vec![4], vec![3, 4, 5], vec![5]));
    tx.commit().await.unwrap();
    assert_usable(&client, "portals").await;
}

#[tokio::test]
async fn cancel_a_running_query() {
    let server = common::start();
    let client = server.fresh_database("wire_cancel").await;
    client
        .batch_execute("CREATE TABLE big (i integer)")
        .await
        .unwrap();
    for chunk in 0..20 {
        let values: Vec<String> = (0..1000)
            .map(|k| format!("({})", chunk * 1000 + k))
            .collect();
        client
            .batch_execute(&format!("INSERT INTO big VALUES {}", values.join(",")))
            .await
            .unwrap_or_else(|e| panic!("load big: {}", describe_error(&e)));
    }
    let n: i64 = client
        .query_one("SELECT count(*) FROM big", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 20_000);

    let token = client.cancel_token();
    let started = Instant::now();
    // 400 million row pairs: long enough to be cancelled while it runs
    let query =
        client.simple_query("SELECT count(*) FROM big a CROSS JOIN big b WHERE a.i + b.i >= 0");
    tokio::pin!(query);
    let mut cancels = 0;
    let result = loop {
        tokio::select! {
            res = &mut query => break res,
            _ = tokio::time::sleep(Duration::from_millis(if cancels == 0 { 300 } else { 1000 })) => {
                // a CancelRequest that arrives before the query started is
                // ignored (as in PostgreSQL), so repeat it until the query ends
                assert!(started.elapsed() < Duration::from_secs(60), "query still running 60s after the first CancelRequest");
                token
                    .cancel_query(tokio_postgres::NoTls)
                    .await
                    .unwrap_or_else(|e| panic!("send CancelRequest: {}", describe_error(&e)));
                cancels += 1;
            }
        }
    };
    match result {
        Ok(msgs) => panic!(
            "the query finished before it was cancelled ({:?} after {} CancelRequests): {:?}",
            started.elapsed(),
            cancels,
            simple_rows(&msgs)
        ),
        Err(e) => {
            assert_eq!(
                sqlstate(&e).as_deref(),
                Some("57014"),
                "{}",
                describe_error(&e)
            );
            let msg = e.as_db_error().unwrap().message().to_string();
            assert_eq!(msg, "canceling statement due to user request");
        }
    }
    assert_usable(&client, "a cancelled query").await;

    // the same over the extended protocol
    let started = Instant::now();
    let query = client.query(
        "SELECT count(*) FROM big a, big b WHERE a.i + b.i >= $1",
        &[&0i32],
    );
    tokio::pin!(query);
    let mut cancels = 0;
    let result = loop {
        tokio::select! {
            res = &mut query => break res,
            _ = tokio::time::sleep(Duration::from_millis(if cancels == 0 { 300 } else { 1000 })) => {
                assert!(started.elapsed() < Duration::from_secs(60), "query still running 60s after the first CancelRequest");
                token.cancel_query(tokio_postgres::NoTls).await.unwrap();
                cancels += 1;
            }
        }
    };
    expect_sqlstate(
        "extended-protocol query after CancelRequest",
        result,
        "57014",
    );
    assert_usable(&client, "a cancelled extended-protocol query").await;

    // a cancel request while idle does nothing
    token.cancel_query(tokio_postgres::NoTls).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_usable(&client, "a CancelRequest sent while idle").await;
}

#[tokio::test]
async fn several_statements_in_one_simple_query() {
    let server = common::start();
    let client = server.fresh_database("wire_multi").await;
    let msgs = client
        .simple_query("CREATE TABLE m (i integer); INSERT INTO m VALUES (1), (2); SELECT count(*) FROM m; SELECT i FROM m ORDER BY i DESC")
        .await
        .unwrap_or_else(|e| panic!("{}", describe_error(&e)));
    let mut shape = Vec::new();
    for m in &msgs {
        shape.push(match m {
            SimpleQueryMessage::CommandComplete(n) => format!("complete {n}"),
            SimpleQueryMessage::RowDescription(cols) => format!("columns {}", cols.len()),
            SimpleQueryMessage::Row(r) => format!("row {}", r.get(0).unwrap_or("NULL")),
            _ => "other".to_string(),
        });
    }
    assert_eq!(
        shape,
        [
            "complete 0",
            "complete 2",
            "columns 1",
            "row 2",
            "complete 1",
            "columns 1",
            "row 2",
            "row 1",
            "complete 2"
        ]
    );

    // an error stops the rest of the message, and the statements of one
    // simple Query message run in one implicit transaction: nothing is kept
    let res = client
        .simple_query("INSERT INTO m VALUES (3); SELECT 1 / 0; INSERT INTO m VALUES (4)")
        .await;
    expect_sqlstate(
        "multi-statement query with a failing statement",
        res,
        "22012",
    );
    let n: i64 = client
        .query_one("SELECT count(*) FROM m", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "the INSERT before the error must be rolled back");

    // an empty query and a comment-only query
    let msgs = client
        .simple_query("")
        .await
        .unwrap_or_else(|e| panic!("empty query: {}", describe_error(&e)));
    assert!(simple_rows(&msgs).is_empty());
    let msgs = client
        .simple_query("-- nothing here")
        .await
        .unwrap_or_else(|e| panic!("comment-only query: {}", describe_error(&e)));
    assert!(simple_rows(&msgs).is_empty());
    assert_usable(&client, "empty queries").await;
}

// ---------------------------------------------------------------------------
// errors

/// SHOW's column is headed by the setting's canonical name however it was
/// written; SHOW ALL has three columns and one row per pg_settings row.
#[tokio::test]
async fn show_headers_and_show_all() {
    let server = common::start();
    let client = server.fresh_database("wire_show").await;
    for (written, header) in [("datestyle", "DateStyle"), ("TIMEZONE", "TimeZone"), ("Application_Name", "application_name")] {
        let stmt = client.prepare(&format!("SHOW {written}")).await.unwrap();
        assert_eq!(stmt.columns()[0].name(), header, "SHOW {written}");
        let msgs = client.simple_query(&format!("SHOW {written}")).await.unwrap();
        let Some(SimpleQueryMessage::RowDescription(cols)) = msgs.first() else {
            panic!("SHOW {written}: no RowDescription first: {msgs:?}");
        };
        assert_eq!(cols[0].name(), header, "SHOW {written} (simple)");
    }
    let msgs = client.simple_query("SHOW ALL").await.unwrap();
    let Some(SimpleQueryMessage::RowDescription(cols)) = msgs.first() else {
        panic!("SHOW ALL: no RowDescription first");
    };
    let names: Vec<&str> = cols.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["name", "setting", "description"]);
    let rows = simple_rows(&msgs);
    let listed: i64 = client.query_one("SELECT count(*) FROM pg_settings", &[]).await.unwrap().get(0);
    assert_eq!(rows.len() as i64, listed);
    let datestyle = rows.iter().find(|r| r[0].as_deref() == Some("DateStyle")).expect("a DateStyle row");
    assert_eq!(datestyle[1].as_deref(), Some("ISO, MDY"));
    assert_eq!(datestyle[2].as_deref(), Some("Sets the display format for date and time values."));
    let mut sorted = rows.clone();
    sorted.sort_by_key(|r| r[0].clone().unwrap_or_default().to_lowercase());
    assert_eq!(rows, sorted, "SHOW ALL is ordered by name, case-insensitively");
}

/// A session may start in a named zone (PGOPTIONS / `options=-c TimeZone=…`,
/// as psql and libpq send it): it is reported, and timestamptz text is on
/// that zone's clock, daylight saving time included.
#[tokio::test]
async fn startup_options_set_a_named_time_zone() {
    let server = common::start();
    let mut cfg = server.config(common::DEFAULT_DB);
    cfg.options("-c TimeZone=europe/paris --extra-float-digits=0");
    let client = common::connect_with(cfg).await.expect("connect with options");
    let rows = common::text_rows(
        &client,
        "SELECT current_setting('TimeZone'), current_setting('extra_float_digits'), \
         '2024-07-01 12:00Z'::timestamptz, '2024-01-01 12:00Z'::timestamptz",
    )
    .await;
    assert_eq!(
        rows,
        [["Europe/Paris", "0", "2024-07-01 14:00:00+02", "2024-01-01 13:00:00+01"]]
    );
    // a binary result is the instant itself, whatever the zone
    let row = client
        .query_one("SELECT '2024-07-01 14:00:00+02'::timestamptz = '2024-07-01 12:00Z'", &[])
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0));
}

#[tokio::test]
async fn errors_carry_sqlstates_and_the_connection_survives() {
    let server = common::start();
    let client = server.fresh_database("wire_errors").await;
    client
        .batch_execute("CREATE TABLE t (a integer, b text); INSERT INTO t VALUES (1, 'x')")
        .await
        .unwrap();

    let cases = [
        ("SELEC 1", "42601", "syntax error at or near \"SELEC\""),
        (
            "SELECT * FROM nope",
            "42P01",
            "relation \"nope\" does not exist",
        ),
        (
            "SELECT nope FROM t",
            "42703",
            "column \"nope\" does not exist",
        ),
        (
            "SELECT 'abc'::integer",
            "22P02",
            "invalid input syntax for type integer: \"abc\"",
        ),
        (
            "SELECT a FROM t WHERE a",
            "42804",
            "argument of WHERE must be type boolean, not type integer",
        ),
        (
            "INSERT INTO t (a) SELECT b FROM t",
            "42804",
            "column \"a\" is of type integer but expression is of type text",
        ),
        ("SELECT a / 0 FROM t", "22012", "division by zero"),
        (
            "SELECT 2147483647 + a FROM t",
            "22003",
            "integer out of range",
        ),
        (
            "CREATE TABLE t (z integer)",
            "42P07",
            "relation \"t\" already exists",
        ),
    ];
    for (sql, code, message) in cases {
        // simple protocol
        let e = expect_sqlstate(
            &format!("simple: {sql}"),
            client.simple_query(sql).await,
            code,
        );
        assert_eq!(e.as_db_error().unwrap().message(), message, "simple: {sql}");
        assert_eq!(e.as_db_error().unwrap().severity(), "ERROR");
        assert_usable(&client, sql).await;
        // extended protocol
        let e = expect_sqlstate(
            &format!("extended: {sql}"),
            client.query(sql, &[]).await,
            code,
        );
        assert_eq!(
            e.as_db_error().unwrap().message(),
            message,
            "extended: {sql}"
        );
        assert_usable(&client, sql).await;
    }

    // an execution-time error with a parameter, then success on the same connection
    let stmt = client.prepare("SELECT 10 / $1::integer").await.unwrap();
    expect_sqlstate(
        "10 / $1 with 0",
        client.query(&stmt, &[&0i32]).await,
        "22012",
    );
    let v: i32 = client.query_one(&stmt, &[&5i32]).await.unwrap().get(0);
    assert_eq!(v, 2);

    // a failed Parse leaves earlier prepared statements working
    expect_sqlstate(
        "prepare bad",
        client.prepare("SELECT * FROM nope").await,
        "42P01",
    );
    let v: i32 = client.query_one(&stmt, &[&-10i32]).await.unwrap().get(0);
    assert_eq!(v, -1);

    // malformed binary parameter values
    let long = RawParam(vec![0, 0, 0, 1, 2]); // 5 bytes for an int4
    let res = client.query("SELECT $1::integer", &[&long]).await;
    let e = expect_sqlstate("5-byte binary int4 parameter", res, "22P03");
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "incorrect binary data format in bind parameter 1"
    );
    assert_usable(&client, "a too-long binary parameter").await;
    let short = RawParam(vec![1, 2, 3]); // 3 bytes for an int4
    let res = client.query("SELECT $1::integer", &[&short]).await;
    expect_sqlstate("3-byte binary int4 parameter", res, "08P01");
    assert_usable(&client, "a too-short binary parameter").await;
}

#[tokio::test]
async fn syntax_errors_point_at_the_offending_text() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    for (sql, pos) in [
        ("SELEC 1", 1u32),
        ("SELECT 1 FROM WHERE", 15),
        ("SELECT (1", 10),
    ] {
        let e = expect_sqlstate(sql, client.simple_query(sql).await, "42601");
        match e.as_db_error().unwrap().position() {
            Some(tokio_postgres::error::ErrorPosition::Original(p)) => {
                assert_eq!(*p, pos, "caret position for {sql:?}")
            }
            other => panic!("no caret position for {sql:?}: {other:?}"),
        }
    }
    assert_usable(&client, "syntax errors").await;
}

#[tokio::test]
async fn transaction_status_and_aborted_transactions() {
    let server = common::start();
    let mut client = server.fresh_database("wire_tx").await;
    client
        .batch_execute("CREATE TABLE t (a integer)")
        .await
        .unwrap();
    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO t VALUES (1)", &[]).await.unwrap();
    expect_sqlstate(
        "1/0 in a transaction",
        tx.query("SELECT 1 / 0", &[]).await,
        "22012",
    );
    let e = expect_sqlstate(
        "query in an aborted transaction",
        tx.query("SELECT 1", &[]).await,
        "25P02",
    );
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "current transaction is aborted, commands ignored until end of transaction block"
    );
    expect_sqlstate(
        "simple query in an aborted transaction",
        tx.simple_query("SELECT 1").await,
        "25P02",
    );
    tx.rollback().await.unwrap();
    let n: i64 = client
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0);

    let tx = client.transaction().await.unwrap();
    tx.execute("INSERT INTO t VALUES (2)", &[]).await.unwrap();
    tx.commit().await.unwrap();
    let n: i64 = client
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

#[tokio::test]
async fn databases_users_and_session_functions() {
    let server = common::start();
    // both databases exist from the start
    for db in ["brewric", "postgres"] {
        let client = server.connect(db).await;
        let row = client
            .query_one(
                "SELECT current_database(), current_user, current_schema()",
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{db}: {}", describe_error(&e)));
        assert_eq!(row.get::<_, String>(0), db);
        assert_eq!(row.get::<_, String>(1), common::USER);
        assert_eq!(row.get::<_, String>(2), "public");
    }
    // an unknown database is refused with 3D000
    let res = server.try_connect("no_such_db").await;
    let e = expect_sqlstate("connect to a missing database", res.map(|_| ()), "3D000");
    assert_eq!(
        e.as_db_error().unwrap().message(),
        "database \"no_such_db\" does not exist"
    );

    // CREATE DATABASE / DROP DATABASE
    let admin = server.connect("brewric").await;
    if server.is_external() {
        admin
            .batch_execute("DROP DATABASE IF EXISTS wire_db_tmp")
            .await
            .unwrap();
    }
    admin
        .batch_execute("CREATE DATABASE wire_db_tmp")
        .await
        .unwrap();
    expect_sqlstate(
        "CREATE DATABASE twice",
        admin.batch_execute("CREATE DATABASE wire_db_tmp").await,
        "42P04",
    );
    {
        let c = server.connect("wire_db_tmp").await;
        c.batch_execute("CREATE TABLE only_here (a integer); INSERT INTO only_here VALUES (1)")
            .await
            .unwrap();
    }
    // tables live in their own database
    expect_sqlstate(
        "a table of another database",
        admin.query("SELECT * FROM only_here", &[]).await,
        "42P01",
    );
    // the connection to wire_db_tmp is closed when its client drops; PostgreSQL
    // notices that a moment later
    let mut dropped = false;
    for _ in 0..50 {
        match admin.batch_execute("DROP DATABASE wire_db_tmp").await {
            Ok(()) => {
                dropped = true;
                break;
            }
            Err(e) if sqlstate(&e).as_deref() == Some("55006") => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("DROP DATABASE: {}", describe_error(&e)),
        }
    }
    assert!(
        dropped,
        "DROP DATABASE kept failing because the database was in use"
    );
    let res = server.try_connect("wire_db_tmp").await;
    expect_sqlstate("connect to a dropped database", res.map(|_| ()), "3D000");

    // any user name is accepted under trust auth
    if server.is_brewric() {
        let mut cfg = server.config("brewric");
        cfg.user("somebody_else");
        let c = common::connect_with(cfg)
            .await
            .unwrap_or_else(|e| panic!("{}", describe_error(&e)));
        let u: String = c
            .query_one("SELECT current_user", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(u, "somebody_else");
        let v: String = c
            .query_one("SHOW server_version", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(v, "15.0 (Brewric 0.1.0)");
    }
    let v: String = admin
        .query_one("SELECT version()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(v.starts_with("PostgreSQL 15."), "version() = {v:?}");
}

// ---------------------------------------------------------------------------
// raw protocol: what a driver does not let us see

/// A minimal blocking frontend speaking protocol 3.0.
struct RawConn {
    s: TcpStream,
}

impl RawConn {
    fn connect(server: &common::Server) -> RawConn {
        let s = TcpStream::connect((server.host.as_str(), server.port)).expect("tcp connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.set_nodelay(true).unwrap();
        RawConn { s }
    }

    fn startup(&mut self, user: &str, db: &str) {
        let mut body = Vec::new();
        body.extend_from_slice(&196608i32.to_be_bytes());
        for (k, v) in [
            ("user", user),
            ("database", db),
            ("client_encoding", "UTF8"),
        ] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        msg.extend_from_slice(&body);
        self.s.write_all(&msg).unwrap();
        // AuthenticationOk, ParameterStatus*, BackendKeyData, ReadyForQuery
        let mut params = Vec::new();
        loop {
            let (tag, body) = self.read().expect("startup reply");
            match tag {
                b'R' => assert_eq!(
                    &body[..4],
                    &[0, 0, 0, 0],
                    "expected AuthenticationOk (trust)"
                ),
                b'S' => {
                    let parts: Vec<&[u8]> = body.split(|b| *b == 0).collect();
                    params.push(String::from_utf8_lossy(parts[0]).to_string());
                }
                b'K' => {}
                b'Z' => break,
                b'E' => panic!("startup failed: {}", error_fields(&body)),
                other => panic!("unexpected message {:?} during startup", other as char),
            }
        }
        for p in [
            "server_version",
            "server_encoding",
            "client_encoding",
            "DateStyle",
            "TimeZone",
            "integer_datetimes",
            "standard_conforming_strings",
        ] {
            assert!(
                params.iter().any(|x| x == p),
                "no ParameterStatus {p} at startup (got {params:?})"
            );
        }
    }

    fn send(&mut self, tag: u8, body: &[u8]) {
        let mut msg = vec![tag];
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(body);
        self.s.write_all(&msg).unwrap();
    }

    /// The next backend message, or None if the server closed the connection.
    fn read(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 5];
        if self.s.read_exact(&mut head).is_err() {
            return None;
        }
        let len = i32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
        assert!(
            (4..1 << 30).contains(&len),
            "bad backend message length {len}"
        );
        let mut body = vec![0u8; len - 4];
        self.s.read_exact(&mut body).ok()?;
        Some((head[0], body))
    }

    /// Tags of the messages up to and including the next ReadyForQuery.
    fn until_ready(&mut self) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            let m = self.read().expect("connection closed before ReadyForQuery");
            let done = m.0 == b'Z';
            out.push(m);
            if done {
                return out;
            }
        }
    }
}

fn cstr(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v
}

fn parse_msg(name: &str, sql: &str) -> Vec<u8> {
    let mut b = cstr(name);
    b.extend(cstr(sql));
    b.extend_from_slice(&0i16.to_be_bytes());
    b
}

fn bind_msg(portal: &str, stmt: &str) -> Vec<u8> {
    let mut b = cstr(portal);
    b.extend(cstr(stmt));
    b.extend_from_slice(&0i16.to_be_bytes()); // parameter formats
    b.extend_from_slice(&0i16.to_be_bytes()); // parameters
    b.extend_from_slice(&0i16.to_be_bytes()); // result formats: all text
    b
}

fn execute_msg(portal: &str, max_rows: i32) -> Vec<u8> {
    let mut b = cstr(portal);
    b.extend_from_slice(&max_rows.to_be_bytes());
    b
}

/// "C=42P01 M=..." from an ErrorResponse body.
fn error_fields(body: &[u8]) -> String {
    body.split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| format!("{}={}", f[0] as char, String::from_utf8_lossy(&f[1..])))
        .collect::<Vec<_>>()
        .join(" ")
}

fn error_code(body: &[u8]) -> String {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&b'C'))
        .map(|f| String::from_utf8_lossy(&f[1..]).to_string())
        .unwrap_or_default()
}

fn tags(msgs: &[(u8, Vec<u8>)]) -> String {
    msgs.iter().map(|(t, _)| *t as char).collect()
}

#[test]
fn extended_batch_error_skips_messages_until_sync() {
    let server = common::start();
    let mut c = RawConn::connect(&server);
    c.startup(common::USER, common::DEFAULT_DB);

    // Parse fails; Bind/Describe/Execute and the next Parse/Bind/Execute are
    // skipped; Sync answers ReadyForQuery (idle)
    c.send(b'P', &parse_msg("", "SELECT * FROM nope"));
    c.send(b'B', &bind_msg("", ""));
    c.send(b'D', b"P\0");
    c.send(b'E', &execute_msg("", 0));
    c.send(b'P', &parse_msg("", "SELECT 1"));
    c.send(b'B', &bind_msg("", ""));
    c.send(b'E', &execute_msg("", 0));
    c.send(b'S', &[]);
    let msgs = c.until_ready();
    assert_eq!(
        tags(&msgs),
        "EZ",
        "messages after the error must be skipped until Sync"
    );
    assert_eq!(
        error_code(&msgs[0].1),
        "42P01",
        "{}",
        error_fields(&msgs[0].1)
    );
    assert_eq!(msgs[1].1, b"I");

    // an execution error in the middle of a batch (on a column, so that no
    // planner can fold it into a Bind-time error)
    c.send(
        b'Q',
        &cstr("DROP TABLE IF EXISTS raw_portal; CREATE TABLE raw_portal (i integer); INSERT INTO raw_portal VALUES (1), (2), (3)"),
    );
    let msgs = c.until_ready();
    assert!(
        !tags(&msgs).contains('E'),
        "setup: {}",
        error_fields(&msgs.iter().find(|m| m.0 == b'E').unwrap().1)
    );
    c.send(b'P', &parse_msg("s1", "SELECT i / 0 FROM raw_portal"));
    c.send(b'B', &bind_msg("", "s1"));
    c.send(b'E', &execute_msg("", 0));
    c.send(b'B', &bind_msg("", "s1"));
    c.send(b'E', &execute_msg("", 0));
    c.send(b'S', &[]);
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "12EZ");
    assert_eq!(error_code(&msgs[2].1), "22012");

    // the connection then works; the named statement s1 survived
    c.send(b'P', &parse_msg("", "SELECT 'ok', 2"));
    c.send(b'B', &bind_msg("", ""));
    c.send(b'D', b"P\0");
    c.send(b'E', &execute_msg("", 0));
    c.send(b'S', &[]);
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "12TDCZ");
    assert_eq!(msgs[4].1, cstr("SELECT 1"), "CommandComplete tag");

    // Execute with a row limit answers PortalSuspended ('s')
    c.send(b'P', &parse_msg("", "SELECT i FROM raw_portal ORDER BY i"));
    c.send(b'B', &bind_msg("p1", ""));
    c.send(b'E', &execute_msg("p1", 2));
    c.send(b'E', &execute_msg("p1", 2));
    c.send(b'S', &[]);
    let msgs = c.until_ready();
    // outside a transaction block the portal dies at Sync; both Executes come before it
    assert_eq!(tags(&msgs), "12DDsDCZ");

    // Close of a statement, then using it is an error (26000)
    c.send(b'C', b"Ss1\0");
    c.send(b'B', &bind_msg("", "s1"));
    c.send(b'S', &[]);
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "3EZ");
    assert_eq!(
        error_code(&msgs[1].1),
        "26000",
        "{}",
        error_fields(&msgs[1].1)
    );

    // Flush makes the server send what it has without a Sync
    c.send(b'P', &parse_msg("", "SELECT 1"));
    c.send(b'H', &[]);
    let (tag, _) = c.read().expect("ParseComplete after Flush");
    assert_eq!(tag, b'1');
    c.send(b'S', &[]);
    assert_eq!(tags(&c.until_ready()), "Z");

    // simple query, several statements, in one message
    c.send(b'Q', &cstr("SELECT 1; SELECT 2"));
    assert_eq!(tags(&c.until_ready()), "TDCTDCZ");

    // Terminate
    c.send(b'X', &[]);
    assert!(
        c.read().is_none(),
        "the server closes the connection after Terminate"
    );
}

#[test]
fn ssl_request_is_answered_n() {
    let server = common::start();
    let mut c = RawConn::connect(&server);
    let mut req = 8i32.to_be_bytes().to_vec();
    req.extend_from_slice(&80877103i32.to_be_bytes());
    c.s.write_all(&req).unwrap();
    let mut answer = [0u8; 1];
    c.s.read_exact(&mut answer).unwrap();
    assert_eq!(answer[0], b'N');
    // the startup continues on the same socket
    c.startup(common::USER, common::DEFAULT_DB);
    c.send(b'Q', &cstr("SELECT 1"));
    assert_eq!(tags(&c.until_ready()), "TDCZ");
}

#[test]
fn malformed_messages_get_08p01_and_the_server_lives_on() {
    let server = common::start();

    // an unknown message type
    let mut c = RawConn::connect(&server);
    c.startup(common::USER, common::DEFAULT_DB);
    c.send(b'y', b"junk");
    let (tag, body) = c
        .read()
        .expect("an ErrorResponse for an unknown message type");
    assert_eq!(tag, b'E');
    assert_eq!(error_code(&body), "08P01", "{}", error_fields(&body));

    // a message whose length is below the minimum
    let mut c = RawConn::connect(&server);
    c.startup(common::USER, common::DEFAULT_DB);
    // (PostgreSQL only logs "invalid message length" and closes the connection;
    // an ErrorResponse, if one comes, must say 08P01)
    c.s.write_all(&[b'Q', 0, 0, 0, 2]).unwrap();
    if let Some((tag, body)) = c.read() {
        assert_eq!(tag, b'E');
        assert_eq!(error_code(&body), "08P01", "{}", error_fields(&body));
    }

    // an oversized message (claims 2 GiB)
    let mut c = RawConn::connect(&server);
    c.startup(common::USER, common::DEFAULT_DB);
    c.s.write_all(&[b'Q', 0x7f, 0xff, 0xff, 0xff]).unwrap();
    c.s.write_all(b"SELECT 1").unwrap();
    if let Some((tag, body)) = c.read() {
        assert_eq!(tag, b'E');
        assert_eq!(error_code(&body), "08P01", "{}", error_fields(&body));
    }

    // a garbage startup packet
    let mut c = RawConn::connect(&server);
    c.s.write_all(&[0, 0, 0, 12, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4])
        .unwrap();
    let _ = c.read();

    // the server still serves new connections
    let mut c = RawConn::connect(&server);
    c.startup(common::USER, common::DEFAULT_DB);
    c.send(b'Q', &cstr("SELECT 1"));
    assert_eq!(tags(&c.until_ready()), "TDCZ");
}

#[test]
fn listening_line_names_the_bound_address() {
    let server = common::start();
    if server.is_external() {
        return;
    }
    assert_eq!(
        server.listening_line,
        format!("brewricd listening on 127.0.0.1:{}", server.port)
    );
    assert_ne!(server.port, 0);
}

/// A message may arrive in pieces: here the first 4 bytes of a Query, a
/// pause, then the rest. (A length check once mistook such a 4-byte prefix
/// for a startup packet and closed the connection.)
#[test]
fn a_message_split_after_four_bytes_is_read_whole() {
    let server = common::start();
    let mut c = RawConn::connect(&server);
    c.startup(common::USER, common::DEFAULT_DB);
    let body = cstr("SELECT 42");
    let mut msg = vec![b'Q'];
    msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    msg.extend_from_slice(&body);
    for cut in [1usize, 4, 5] {
        c.s.write_all(&msg[..cut]).unwrap();
        c.s.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        c.s.write_all(&msg[cut..]).unwrap();
        assert_eq!(tags(&c.until_ready()), "TDCZ", "split after {cut} bytes");
    }
}

/// An upsert over the extended protocol with parameters in its rows, its SET
/// and its WHERE: each placeholder reads the statement's parameter.
#[tokio::test]
async fn an_upsert_takes_parameters_in_its_rows_set_and_where() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("CREATE TABLE up (id int PRIMARY KEY, name text, n int)").await.unwrap();
    let sql = "INSERT INTO up (id, name, n) VALUES ($1, $2, 1) \
               ON CONFLICT (id) DO UPDATE SET name = $2 || '!', n = up.n + $3 WHERE up.n < $4 RETURNING n";
    let statement = client.prepare(sql).await.unwrap();
    let n = |rows: Vec<tokio_postgres::Row>| rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>();
    assert_eq!(n(client.query(&statement, &[&1i32, &"a", &10i32, &100i32]).await.unwrap()), vec![1]);
    assert_eq!(n(client.query(&statement, &[&1i32, &"b", &10i32, &100i32]).await.unwrap()), vec![11]);
    // The WHERE no longer holds: nothing changes, nothing returned.
    assert!(client.query(&statement, &[&1i32, &"c", &10i32, &5i32]).await.unwrap().is_empty());
    let row = client.query_one("SELECT name, n FROM up WHERE id = 1", &[]).await.unwrap();
    assert_eq!((row.get::<_, String>(0), row.get::<_, i32>(1)), ("b!".to_string(), 11));
}

/// UPDATE and DELETE prepared with parameters in SET and WHERE (no RETURNING):
/// Describe reports every parameter with the type its place gives it.
#[tokio::test]
async fn update_and_delete_describe_their_parameters() {
    let server = common::start();
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("CREATE TABLE pu (id int, name text, n bigint)").await.unwrap();
    client.batch_execute("INSERT INTO pu VALUES (1, 'a', 1), (2, 'b', 2)").await.unwrap();
    let update = client.prepare("UPDATE pu SET name = $1, n = n + $2 WHERE id = $3").await.unwrap();
    let types: Vec<_> = update.params().iter().map(|t| t.name().to_string()).collect();
    assert_eq!(types, vec!["text", "int8", "int4"]);
    assert_eq!(client.execute(&update, &[&"z", &10i64, &1i32]).await.unwrap(), 1);
    let delete = client.prepare("DELETE FROM pu WHERE id = $1").await.unwrap();
    assert_eq!(client.execute(&delete, &[&2i32]).await.unwrap(), 1);
    let row = client.query_one("SELECT name, n, (SELECT count(*) FROM pu) FROM pu", &[]).await.unwrap();
    assert_eq!((row.get::<_, String>(0), row.get::<_, i64>(1), row.get::<_, i64>(2)), ("z".to_string(), 11, 1));
}
