//! Shared helpers for the integration tests: start a `brewricd` on an ephemeral
//! port with a fresh data directory, and connect to it with tokio-postgres.
//!
//! Every test binary that says `mod common;` gets a [`Server`] guard from
//! [`start`]. Dropping the guard kills the server and removes its data dir.
//!
//! Validating the tests themselves against real PostgreSQL: set
//! `BREWRIC_TEST_SERVER=HOST:PORT` and no `brewricd` is started; the tests run
//! against that server instead (it needs a superuser role `brewric` and a
//! database `brewric`, trust auth, `TimeZone=UTC`). `tools/tests_on_postgres.sh`
//! does exactly that with a throw-away PostgreSQL 15 cluster.
#![allow(dead_code)]

pub mod pgtext;
pub mod psql_bin;
pub mod rng;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio_postgres::{Client, NoTls};

/// The user name the tests log in as (any name works under trust auth).
pub const USER: &str = "brewric";
/// The database that exists on a fresh server.
pub const DEFAULT_DB: &str = "brewric";
/// How long `brewricd` may take to print its listening line.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// The exact prefix of the line `brewricd` prints once it accepts connections.
pub const LISTENING_PREFIX: &str = "brewricd listening on ";

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A running server (a `brewricd` child process, or an external server named by
/// `BREWRIC_TEST_SERVER`). Kills the child and removes its data dir on drop.
pub struct Server {
    pub host: String,
    pub port: u16,
    child: Option<Child>,
    data_dir: Option<PathBuf>,
    stderr_path: Option<PathBuf>,
    /// The line brewricd printed on stdout when it became ready.
    pub listening_line: String,
    /// Where brewricd serves the InfluxDB HTTP API and ILP/TCP (ephemeral ports; None when off or external).
    pub http_addr: Option<String>,
    pub ilp_addr: Option<String>,
}

/// Start a `brewricd` with 2 shards on 127.0.0.1:0 and a fresh temp data dir.
pub fn start() -> Server {
    start_with_shards(2)
}

/// Start a `brewricd` with `shards` shards (see [`start`]).
pub fn start_with_shards(shards: usize) -> Server {
    if let Ok(addr) = std::env::var("BREWRIC_TEST_SERVER") {
        let (host, port) = addr
            .rsplit_once(':')
            .unwrap_or_else(|| panic!("BREWRIC_TEST_SERVER must be HOST:PORT, got {addr:?}"));
        return Server {
            host: host.to_string(),
            port: port.parse().expect("BREWRIC_TEST_SERVER port"),
            child: None,
            data_dir: None,
            stderr_path: None,
            listening_line: String::new(),
            http_addr: None,
            ilp_addr: None,
        };
    }

    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let data_dir = std::env::temp_dir().join(format!(
        "brewric-test-{}-{}-{}",
        std::process::id(),
        n,
        nanos
    ));
    start_in(data_dir, shards)
}

/// Starts brewricd on an existing (or new) data directory — a restart after a
/// crash reuses the directory of the server that was killed.
pub fn start_in(data_dir: PathBuf, shards: usize) -> Server {
    start_configured(data_dir, shards, &[], &[])
}

/// [`start_in`] with extra command-line arguments and environment variables
/// (e.g. `BREWRIC_FAILPOINT`).
pub fn start_configured(
    data_dir: PathBuf,
    shards: usize,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Server {
    std::fs::create_dir_all(&data_dir).expect("create temp data dir");
    // The server's stderr goes to a file next to (not inside) its data dir, so
    // that it can be shown when a test fails.
    let stderr_path = data_dir.with_extension("stderr");
    let stderr_file = std::fs::File::create(&stderr_path).expect("create stderr file");

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_brewricd"));
    // If the test process dies without running Drop (killed by a timeout),
    // take the server with it. (The signal fires when the spawning thread
    // exits; each test keeps its guard on its own thread.)
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--shards")
        .arg(shards.to_string())
        .arg("--data-dir")
        .arg(&data_dir)
        .args(["--http", "127.0.0.1:0", "--ilp", "127.0.0.1:0"])
        .env_remove("BREWRIC_LISTEN")
        .env_remove("BREWRIC_HTTP")
        .env_remove("BREWRIC_ILP")
        .env_remove("BREWRIC_HTTP_TOKEN")
        .env_remove("BREWRIC_DATA_DIR")
        .env_remove("BREWRIC_SHARDS")
        .env_remove("BREWRIC_FAILPOINT")
        .env_remove("BREWRIC_FAILPOINT_PAUSE")
        .env_remove("BREWRIC_FAILPOINT_ERROR")
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr_file))
        .spawn()
        .expect("spawn brewricd");

    // Read stdout on a thread: hand over the listening line, then keep
    // draining so the server never blocks on a full pipe.
    let stdout = child.stdout.take().expect("child stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let mut sent = false;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // The ingest listeners' lines come before the listening line.
                    if !sent && line.starts_with("brewricd ") {
                        sent = line.starts_with(LISTENING_PREFIX);
                        let _ = tx.send(line.trim_end().to_string());
                    }
                }
            }
        }
        // Drain anything left (binary junk would end read_line with Err).
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink);
    });

    let mut server = Server {
        host: String::new(),
        port: 0,
        child: Some(child),
        data_dir: Some(data_dir),
        stderr_path: Some(stderr_path),
        listening_line: String::new(),
        http_addr: None,
        ilp_addr: None,
    };

    let deadline = Instant::now() + STARTUP_TIMEOUT;
    let line = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) if line.starts_with(LISTENING_PREFIX) => break line,
            Ok(line) => {
                if let Some(a) = line.strip_prefix("brewricd http on ") {
                    server.http_addr = Some(a.to_string());
                } else if let Some(a) = line.strip_prefix("brewricd ilp on ") {
                    server.ilp_addr = Some(a.to_string());
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(status) = server.exited() {
                    panic!(
                        "brewricd exited ({status}) before printing its listening line\n--- stderr ---\n{}",
                        server.stderr_tail(8000)
                    );
                }
                if Instant::now() > deadline {
                    panic!(
                        "brewricd did not print `{LISTENING_PREFIX}HOST:PORT` within {STARTUP_TIMEOUT:?}\n--- stderr ---\n{}",
                        server.stderr_tail(8000)
                    );
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // stdout closed without the line; give the child a moment to exit
                std::thread::sleep(Duration::from_millis(200));
                panic!(
                    "brewricd closed stdout without printing its listening line (exit: {:?})\n--- stderr ---\n{}",
                    server.exited(),
                    server.stderr_tail(8000)
                );
            }
        }
    };
    let addr = &line[LISTENING_PREFIX.len()..];
    let (host, port) = addr
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("cannot parse address from listening line {line:?}"));
    server.host = host.to_string();
    server.port = port
        .parse()
        .unwrap_or_else(|_| panic!("cannot parse port from listening line {line:?}"));
    server.listening_line = line;
    server
}

impl Server {
    /// SIGKILLs the server (no shutdown of any kind) and keeps its data
    /// directory, which is returned for a restart.
    pub fn kill9(mut self) -> PathBuf {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill(); // std's kill sends SIGKILL
            let _ = child.wait();
        }
        self.data_dir
            .take()
            .expect("a server started by the tests has a data dir")
    }

    /// True when the tests run against an external server (BREWRIC_TEST_SERVER),
    /// e.g. real PostgreSQL while validating the expected results.
    pub fn is_external(&self) -> bool {
        self.child.is_none()
    }

    /// True when the server under test is our own brewricd.
    pub fn is_brewric(&self) -> bool {
        !self.is_external()
    }

    /// `Some(exit status)` if the brewricd child has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Panics (with the server's stderr) if brewricd has died.
    pub fn assert_alive(&mut self) {
        if let Some(status) = self.exited() {
            panic!(
                "brewricd died ({status})\n--- stderr ---\n{}",
                self.stderr_tail(8000)
            );
        }
    }

    /// The last `max` bytes of the server's stderr (empty for an external server).
    pub fn stderr_tail(&self, max: usize) -> String {
        let Some(path) = &self.stderr_path else {
            return String::new();
        };
        let bytes = std::fs::read(path).unwrap_or_default();
        let start = bytes.len().saturating_sub(max);
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }

    /// A tokio-postgres config for database `db`.
    pub fn config(&self, db: &str) -> tokio_postgres::Config {
        let mut cfg = tokio_postgres::Config::new();
        cfg.host(&self.host)
            .port(self.port)
            .user(USER)
            .dbname(db)
            .application_name("brewric-tests")
            .connect_timeout(Duration::from_secs(10));
        cfg
    }

    /// Connect to database `db`; the connection task is spawned on the
    /// current tokio runtime.
    pub async fn connect(&self, db: &str) -> Client {
        self.try_connect(db)
            .await
            .unwrap_or_else(|e| panic!("connect to {}:{} db {db}: {e:?}", self.host, self.port))
    }

    pub async fn try_connect(&self, db: &str) -> Result<Client, tokio_postgres::Error> {
        connect_with(self.config(db)).await
    }

    /// Create database `name` (dropping it first when running against an
    /// external server, where it may be left over from an earlier run) and
    /// connect to it.
    pub async fn fresh_database(&self, name: &str) -> Client {
        let admin = self.connect(DEFAULT_DB).await;
        if self.is_external() {
            admin
                .simple_query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await
                .unwrap_or_else(|e| panic!("DROP DATABASE {name}: {e:?}"));
        }
        admin
            .simple_query(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {}", describe_error(&e)));
        self.connect(name).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if std::thread::panicking() {
                let tail = self.stderr_tail(4000);
                if !tail.is_empty() {
                    eprintln!("--- brewricd stderr (tail) ---\n{tail}");
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = self.data_dir.take() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        if let Some(path) = self.stderr_path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Connect with `cfg` and spawn the connection task.
pub async fn connect_with(cfg: tokio_postgres::Config) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = cfg.connect(NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// The rows of a simple query, each as its text values ("NULL" for NULL);
/// panics with the server's error.
pub async fn text_rows(client: &Client, sql: &str) -> Vec<Vec<String>> {
    client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {}", describe_error(&e)))
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// A readable description of a tokio-postgres error, including the server's
/// SQLSTATE and message when it is a database error.
pub fn describe_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(": ");
                s.push_str(&inner.to_string());
                src = inner.source();
            }
            s
        }
    }
}

/// The SQLSTATE of a database error, if it is one.
pub fn sqlstate(e: &tokio_postgres::Error) -> Option<String> {
    e.code().map(|c| c.code().to_string())
}
