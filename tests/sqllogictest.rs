//! Runs every `sql-tests/**/*.slt` file through the `sqllogictest` crate
//! against a brewricd with 2 shards on an ephemeral port, once over the
//! simple query protocol and once over the extended protocol.
//!
//! Each file runs in its own fresh database (`CREATE DATABASE slt_<proto>_<n>`).
//! Records run one at a time, so every failing record is reported, not just
//! the first of each file; the test fails at the end with the full list.
//!
//! Labels: `postgresql` always (as `sqllogictest --label postgresql`);
//! `simple_protocol` or `extended_protocol`; and `brewric` when the server
//! under test is brewricd (for the few records, such as `SHOW server_version`,
//! whose text is Brewric's own), with `timescaledb` beside it (Brewric has
//! TimescaleDB's functions and views built in; PostgreSQL 15 has not).
//!
//! `BREWRIC_TEST_SERVER=HOST:PORT` runs the files against another server
//! instead (real PostgreSQL 15 when validating expected results; see
//! tools/tests_on_postgres.sh). `BREWRIC_SLT_FILTER=substr` runs only the
//! files whose path contains `substr`.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::{pin_mut, TryStreamExt};
use sqllogictest::{AsyncDB, Condition, DBOutput, DefaultColumnType, Record, Runner};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, SimpleQueryMessage};

use common::pgtext::{binary_to_text, is_text_like, timestamptz_text_in, Raw};

/// Longest a single record may take before the file is abandoned.
const RECORD_TIMEOUT: Duration = Duration::from_secs(60);

/// An error from the database (or from converting its output), with the
/// message text that `statement error <regex>` records are matched against:
/// `db error: ERROR: <message>`, as sqllogictest-bin prints it.
#[derive(Debug)]
struct SltError {
    message: String,
    sqlstate: Option<String>,
}

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SltError {}

impl From<tokio_postgres::Error> for SltError {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.as_db_error() {
            Some(db) => SltError {
                message: format!("db error: {}: {}", db.severity(), db.message()),
                sqlstate: Some(db.code().code().to_string()),
            },
            None => SltError {
                message: common::describe_error(&e),
                sqlstate: None,
            },
        }
    }
}

fn conversion_error(msg: String) -> SltError {
    SltError {
        message: format!("extended-protocol runner: {msg}"),
        sqlstate: None,
    }
}

/// Runs each record with `Client::simple_query`; values are the server's text.
struct SimpleProtocol {
    client: Client,
    checkpoint_after_writes: bool,
}

/// Runs each record with `prepare` + `query_raw` (Parse/Describe/Bind/Execute/Sync,
/// all results in binary format) and renders each value as PostgreSQL's text.
struct ExtendedProtocol {
    client: Client,
    /// The session TimeZone when it names a tz database zone: binary
    /// timestamptz results are instants, shown on that zone's clock as
    /// PostgreSQL's text output would show them. None: UTC.
    zone: Option<chrono_tz::Tz>,
}

/// Whether a statement may change the session TimeZone (SET, RESET, or the
/// end of a transaction block that had a SET LOCAL).
fn may_change_time_zone(sql: &str) -> bool {
    let first = sql.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    ["set", "reset", "commit", "rollback", "end", "abort"].contains(&first.as_str())
}

fn text_cell(v: Option<&str>) -> String {
    match v {
        None => "NULL".to_string(),
        Some("") => "(empty)".to_string(),
        Some(s) => s.to_string(),
    }
}

#[async_trait]
impl AsyncDB for SimpleProtocol {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let messages = self.client.simple_query(sql).await?;
        if self.checkpoint_after_writes {
            let head = sql.trim_start().get(..6).unwrap_or("").to_ascii_lowercase();
            if matches!(head.as_str(), "insert" | "copy " | "update" | "delete" | "trunca") {
                self.client.simple_query("CHECKPOINT").await?;
            }
        }
        let mut result: Option<(usize, Vec<Vec<String>>)> = None;
        let mut count = 0u64;
        for m in messages {
            match m {
                SimpleQueryMessage::RowDescription(cols) => result = Some((cols.len(), Vec::new())),
                SimpleQueryMessage::Row(row) => {
                    let cells = (0..row.len()).map(|i| text_cell(row.get(i))).collect();
                    match &mut result {
                        Some((_, rows)) => rows.push(cells),
                        None => result = Some((row.len(), vec![cells])),
                    }
                }
                SimpleQueryMessage::CommandComplete(n) => count = n,
                _ => {}
            }
        }
        Ok(match result {
            Some((ncols, rows)) => DBOutput::Rows {
                types: vec![DefaultColumnType::Any; ncols],
                rows,
            },
            None => DBOutput::StatementComplete(count),
        })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "brewric-simple"
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await
    }

    fn error_sql_state(err: &SltError) -> Option<String> {
        err.sqlstate.clone()
    }
}

#[async_trait]
impl AsyncDB for ExtendedProtocol {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let stmt = self.client.prepare(sql).await?;
        let stream = self
            .client
            .query_raw(&stmt, std::iter::empty::<&(dyn ToSql + Sync)>())
            .await?;
        pin_mut!(stream);
        let mut rows = Vec::new();
        while let Some(row) = stream.try_next().await? {
            let mut cells = Vec::with_capacity(row.len());
            for (i, col) in row.columns().iter().enumerate() {
                let oid = col.type_().oid();
                let raw: Option<Raw> = row
                    .try_get(i)
                    .map_err(|e| conversion_error(format!("column {i}: {e}")))?;
                let cell = match raw {
                    None => "NULL".to_string(),
                    Some(Raw(bytes)) => {
                        if bytes.is_empty() && is_text_like(oid) {
                            "(empty)".to_string()
                        } else {
                            match (oid, self.zone) {
                                (1184, Some(tz)) if bytes.len() == 8 => timestamptz_text_in(
                                    i64::from_be_bytes(bytes.try_into().unwrap()),
                                    tz,
                                ),
                                _ => binary_to_text(oid, bytes).map_err(|e| {
                                    conversion_error(format!("column {i} ({}): {e}", col.name()))
                                })?,
                            }
                        }
                    }
                };
                cells.push(cell);
            }
            rows.push(cells);
        }
        if may_change_time_zone(sql) {
            let shown = self.client.query_one("SHOW TimeZone", &[]).await?;
            self.zone = shown.get::<_, String>(0).parse::<chrono_tz::Tz>().ok();
        }
        if stmt.columns().is_empty() {
            Ok(DBOutput::StatementComplete(
                stream.rows_affected().unwrap_or(0),
            ))
        } else {
            Ok(DBOutput::Rows {
                types: vec![DefaultColumnType::Any; stmt.columns().len()],
                rows,
            })
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "brewric-extended"
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await
    }

    fn error_sql_state(err: &SltError) -> Option<String> {
        err.sqlstate.clone()
    }
}

/// All `.slt` files under `dir`, recursively, sorted by path.
fn slt_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "slt" || e == "test")
                || path.to_string_lossy().ends_with(".slt.part")
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Protocol {
    Simple,
    Extended,
    /// The simple protocol, with a CHECKPOINT after every write, so that
    /// queries read their rows back from segment files.
    SimpleFromSegments,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::SimpleFromSegments => "segments",
        }
    }

    /// The sqllogictest label set for this protocol (`onlyif simple_protocol`).
    fn label(self) -> &'static str {
        match self {
            Protocol::Simple | Protocol::SimpleFromSegments => "simple_protocol",
            Protocol::Extended => "extended_protocol",
        }
    }
}

struct FileOutcome {
    /// Statement and query records, skipped ones included.
    records: usize,
    /// Records whose `skipif`/`onlyif` conditions exclude this engine.
    skipped: usize,
    failures: Vec<String>,
}

impl FileOutcome {
    fn passed(&self) -> usize {
        self.records.saturating_sub(self.skipped + self.failures.len())
    }
}

/// Whether a record's conditions exclude it under `labels` (as the runner
/// decides: `onlyif L` without L, or `skipif L` with it).
fn excluded(conditions: &[Condition], labels: &[&str]) -> bool {
    conditions.iter().any(|c| match c {
        Condition::OnlyIf { label } => !labels.contains(&label.as_str()),
        Condition::SkipIf { label } => labels.contains(&label.as_str()),
    })
}

async fn run_file<D, M>(
    mut runner: Runner<D, M>,
    path: &Path,
    protocol: Protocol,
    brewric: bool,
) -> FileOutcome
where
    D: AsyncDB<ColumnType = DefaultColumnType>,
    M: sqllogictest::MakeConnection<Conn = D>,
{
    let mut labels = vec!["postgresql", protocol.label()];
    if brewric {
        // TimescaleDB's API is built in.
        labels.extend(["brewric", "timescaledb"]);
    }
    for l in &labels {
        runner.add_label(l);
    }
    let mut outcome = FileOutcome {
        records: 0,
        skipped: 0,
        failures: Vec::new(),
    };
    let records = match sqllogictest::parse_file::<DefaultColumnType>(path) {
        Ok(r) => r,
        Err(e) => {
            outcome.failures.push(format!("cannot parse: {e}"));
            return outcome;
        }
    };
    for record in records {
        if let Record::Halt { .. } = record {
            break;
        }
        let counts = matches!(record, Record::Statement { .. } | Record::Query { .. });
        let loc = match &record {
            Record::Statement { loc, .. } | Record::Query { loc, .. } => loc.to_string(),
            _ => String::new(),
        };
        if counts {
            outcome.records += 1;
        }
        if let Record::Statement { conditions, .. } | Record::Query { conditions, .. } = &record {
            if excluded(conditions, &labels) {
                outcome.skipped += 1;
                continue;
            }
        }
        match tokio::time::timeout(RECORD_TIMEOUT, runner.run_async(record)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => outcome.failures.push(e.display(false).to_string()),
            Err(_) => {
                outcome.failures.push(format!(
                    "record at {loc} did not finish within {RECORD_TIMEOUT:?}; rest of the file skipped"
                ));
                return outcome;
            }
        }
    }
    runner.shutdown_async().await;
    outcome
}

async fn run_all(protocol: Protocol) {
    // BREWRIC_SLT_DIR runs another corpus (e.g. ../shared/sqllogictest) with the same runner.
    let root = match std::env::var("BREWRIC_SLT_DIR") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("sql-tests"),
    };
    run_corpus(protocol, root, &[]).await;
}

/// Runs every .slt file under `root` (those matching BREWRIC_SLT_FILTER); fails
/// at the end when a file has failing records, unless `known_failures` lists
/// the file (by the end of its path) with at least that many failures.
async fn run_corpus(protocol: Protocol, root: PathBuf, known_failures: &[(&str, usize)]) {
    let started = Instant::now();
    let mut server = common::start();
    let brewric = server.is_brewric();
    let filter = std::env::var("BREWRIC_SLT_FILTER").unwrap_or_default();
    let files: Vec<PathBuf> = slt_files(&root)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    assert!(!files.is_empty(), "no .slt files under {}", root.display());

    let admin = server.connect(common::DEFAULT_DB).await;
    let mut report: Vec<String> = Vec::new();
    let mut total_records = 0usize;
    let mut passed_records = 0usize;
    let mut skipped_records = 0usize;
    let mut failed_records = 0usize;
    let mut failed_files = 0usize;

    for (n, path) in files.iter().enumerate() {
        let rel = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path)
            .display()
            .to_string();
        let db = format!("slt_{}_{n}", protocol.name());
        if server.is_external() {
            let _ = admin
                .simple_query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
                .await;
        }
        let outcome = match admin.simple_query(&format!("CREATE DATABASE {db}")).await {
            Err(e) => FileOutcome {
                records: 0,
                skipped: 0,
                failures: vec![format!(
                    "CREATE DATABASE {db} failed: {}",
                    common::describe_error(&e)
                )],
            },
            Ok(_) => {
                let cfg = server.config(&db);
                match protocol {
                    Protocol::Simple | Protocol::SimpleFromSegments => {
                        let checkpoint_after_writes = protocol == Protocol::SimpleFromSegments;
                        let runner = Runner::new(move || {
                            let cfg = cfg.clone();
                            async move {
                                let client = common::connect_with(cfg).await?;
                                Ok::<_, SltError>(SimpleProtocol { client, checkpoint_after_writes })
                            }
                        });
                        run_file(runner, path, protocol, brewric).await
                    }
                    Protocol::Extended => {
                        let runner = Runner::new(move || {
                            let cfg = cfg.clone();
                            async move {
                                let client = common::connect_with(cfg).await?;
                                Ok::<_, SltError>(ExtendedProtocol { client, zone: None })
                            }
                        });
                        run_file(runner, path, protocol, brewric).await
                    }
                }
            }
        };
        total_records += outcome.records;
        passed_records += outcome.passed();
        skipped_records += outcome.skipped;
        let status = if outcome.failures.is_empty() {
            "ok"
        } else {
            "FAILED"
        };
        eprintln!(
            "[{}] {rel}: {} records, {} passed, {} failed, {} skipped: {status}",
            protocol.name(),
            outcome.records,
            outcome.passed(),
            outcome.failures.len(),
            outcome.skipped
        );
        if !outcome.failures.is_empty() {
            failed_files += 1;
            failed_records += outcome.failures.len();
            let allowed = known_failures
                .iter()
                .find(|(file, _)| rel.ends_with(file))
                .map_or(0, |(_, n)| *n);
            for f in &outcome.failures {
                eprintln!("{f}");
            }
            if outcome.failures.len() > allowed {
                for f in &outcome.failures {
                    report.push(format!("--- {rel}\n{f}"));
                }
            }
        }
        if let Some(status) = server.exited() {
            report.push(format!(
                "brewricd died ({status}) while running {rel}; remaining files not run\n--- stderr ---\n{}",
                server.stderr_tail(8000)
            ));
            failed_files += files.len() - n - 1;
            break;
        }
    }

    let secs = started.elapsed().as_secs_f64();
    let summary = format!(
        "{} protocol: {passed_records} passed, {failed_records} failed, {skipped_records} skipped of {total_records} records \
         in {} files ({failed_files} with failures); {secs:.1}s, {:.0} records/s",
        protocol.name(),
        files.len(),
        (passed_records + failed_records) as f64 / secs.max(1e-9)
    );
    eprintln!("{summary}");
    if !report.is_empty() {
        panic!(
            "sqllogictest failures ({summary}):\n\n{}",
            report.join("\n")
        );
    }
}

#[tokio::test]
async fn sql_tests_simple_protocol() {
    run_all(Protocol::Simple).await;
}

#[tokio::test]
async fn sql_tests_extended_protocol() {
    run_all(Protocol::Extended).await;
}

/// Every .slt file again, with the rows flushed to segment files after each
/// write (brewricd only: CHECKPOINT is a superuser command in PostgreSQL).
#[tokio::test]
async fn sql_tests_reading_segments() {
    if std::env::var("BREWRIC_TEST_SERVER").is_ok() {
        eprintln!("skipped against an external server");
        return;
    }
    run_all(Protocol::SimpleFromSegments).await;
}

/// The shared corpus (../shared/sqllogictest: SQLite's select/evidence/index/
/// random files and RisingWave's PostgreSQL-style files, 119,621 records that
/// PostgreSQL 15 passes), when it is there (CI has it beside the clone).
fn shared_corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/sqllogictest");
    dir.is_dir().then_some(dir)
}

/// Records of the shared corpus Brewric does not pass yet, by file, with why
/// (README "Tests" lists them): any other failure fails the test.
const CORPUS_KNOWN_FAILURES: &[(&str, usize)] = &[];

#[tokio::test]
async fn shared_corpus_simple_protocol() {
    match shared_corpus() {
        Some(dir) if std::env::var("BREWRIC_TEST_SERVER").is_err() => {
            run_corpus(Protocol::Simple, dir, CORPUS_KNOWN_FAILURES).await
        }
        _ => eprintln!("skipped: no ../shared/sqllogictest, or an external server"),
    }
}

#[tokio::test]
async fn shared_corpus_extended_protocol() {
    match shared_corpus() {
        Some(dir) if std::env::var("BREWRIC_TEST_SERVER").is_err() => {
            run_corpus(Protocol::Extended, dir, CORPUS_KNOWN_FAILURES).await
        }
        _ => eprintln!("skipped: no ../shared/sqllogictest, or an external server"),
    }
}

/// The binary-to-text renderer the extended runner relies on.
#[test]
fn binary_values_render_as_postgres_text() {
    use common::pgtext::*;
    assert_eq!(float8_text(1e15), "1e+15");
    assert_eq!(float8_text(1e14), "100000000000000");
    assert_eq!(float8_text(0.0001), "0.0001");
    assert_eq!(float8_text(0.00001), "1e-05");
    assert_eq!(float8_text(-2.5), "-2.5");
    assert_eq!(float8_text(0.1 + 0.2), "0.30000000000000004");
    assert_eq!(float8_text(-0.0), "-0");
    assert_eq!(float4_text(1e6), "1e+06");
    assert_eq!(float4_text(123456.0), "123456");
    assert_eq!(date_text(0), "2000-01-01");
    assert_eq!(pg_days(2026, 1, 1), 9497);
    assert_eq!(date_text(pg_days(2026, 1, 1)), "2026-01-01");
    assert_eq!(date_text(pg_days(0, 12, 31)), "0001-12-31 BC");
    assert_eq!(timestamp_text(-1, true), "1999-12-31 23:59:59.999999+00");
    assert_eq!(timestamptz_text_in(0, chrono_tz::Asia::Kathmandu), "2000-01-01 05:45:00+05:45");
    assert_eq!(timestamptz_text_in(0, chrono_tz::America::New_York), "1999-12-31 19:00:00-05");
    assert_eq!(
        interval_text(14, 3, 4 * 3_600_000_000 + 5_000_000),
        "1 year 2 mons 3 days 04:00:05"
    );
    assert_eq!(interval_text(0, -1, 7_200_000_000), "-1 days +02:00:00");
    assert_eq!(interval_text(0, 0, 0), "00:00:00");
    assert_eq!(interval_text(-1, 0, -1_500_000), "-1 mons -00:00:01.5");
    for t in [
        "0",
        "12.50",
        "-0.0001",
        "123456789.123456789",
        "10000",
        "2.5000000000000000",
        "0.00",
    ] {
        assert_eq!(numeric_text(&numeric_binary(t)).unwrap(), t, "{t}");
    }
    assert_eq!(bytea_text(&[0xde, 0xad, 0x01]), "\\xdead01");
}
