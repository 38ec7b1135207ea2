//! Authentication and transport end to end: roles created with SQL, logins
//! by SCRAM-SHA-256 (tokio-postgres and psql) and MD5 (psql), the one 28P01
//! for every failed login with its growing delay, NOLOGIN, per-role and
//! server connection limits (53300), TLS with psql's sslmode=require, roles
//! kept across a restart, and clients that vanish or stop reading without
//! disturbing other sessions.

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{describe_error, sqlstate, Server};

const BOOT_PASSWORD: &str = "boot-secret";

fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!("brewric-auth-{tag}-{}-{nanos}", std::process::id()))
}

/// A server that asks every client for a password (the bootstrap roles' is BOOT_PASSWORD).
fn password_server(tag: &str, extra: &[&str]) -> Server {
    let mut args = vec!["--auth", "password"];
    args.extend_from_slice(extra);
    common::start_configured(
        temp_dir(tag),
        2,
        &args,
        &[("BREWRIC_PASSWORD", BOOT_PASSWORD)],
    )
}

async fn login(
    server: &Server,
    user: &str,
    password: Option<&str>,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let mut cfg = server.config(common::DEFAULT_DB);
    cfg.user(user);
    if let Some(p) = password {
        cfg.password(p);
    }
    common::connect_with(cfg).await
}

async fn admin_session(server: &Server) -> tokio_postgres::Client {
    login(server, common::USER, Some(BOOT_PASSWORD))
        .await
        .unwrap_or_else(|e| panic!("bootstrap login: {}", describe_error(&e)))
}

async fn one_text(client: &tokio_postgres::Client, sql: &str) -> Option<String> {
    let rows = client
        .query(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {}", describe_error(&e)));
    rows[0].get(0)
}

async fn expect_error(
    server: &Server,
    user: &str,
    password: Option<&str>,
    code: &str,
    message: &str,
) {
    match login(server, user, password).await {
        Ok(_) => panic!("{user} logged in, expected {code}"),
        Err(e) => {
            assert_eq!(
                sqlstate(&e).as_deref(),
                Some(code),
                "{}",
                describe_error(&e)
            );
            assert_eq!(e.as_db_error().map(|d| d.message()), Some(message));
        }
    }
}

struct PsqlOut {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// psql with a connection string, PGPASSWORD and `-c` commands.
fn psql(bin: &PathBuf, conninfo: &str, password: Option<&str>, commands: &[&str]) -> PsqlOut {
    let mut cmd = Command::new(bin);
    cmd.arg("-X").arg("-At").arg(conninfo);
    for c in commands {
        cmd.arg("-c").arg(c);
    }
    for var in [
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGPASSWORD",
        "PGPASSFILE",
        "PGSERVICE",
        "PGSSLMODE",
        "PSQLRC",
    ] {
        cmd.env_remove(var);
    }
    if let Some(p) = password {
        cmd.env("PGPASSWORD", p);
    }
    // No ~/.pgpass and no prompt: a missing password fails at once.
    cmd.env("PGPASSFILE", "/nonexistent")
        .env("PGCONNECT_TIMEOUT", "20")
        .arg("-w");
    let out = cmd.stdin(Stdio::null()).output().expect("run psql");
    PsqlOut {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn conninfo(server: &Server, user: &str, extra: &str) -> String {
    format!(
        "host={} port={} user={user} dbname={} {extra}",
        server.host,
        server.port,
        common::DEFAULT_DB
    )
}

#[tokio::test]
async fn scram_logins_with_tokio_postgres_and_psql() {
    let server = password_server("scram", &[]);
    let admin = admin_session(&server).await;
    admin
        .batch_execute("CREATE USER alice WITH PASSWORD 'alice-pw' CONNECTION LIMIT 5")
        .await
        .unwrap();
    let stored = one_text(
        &admin,
        "SELECT rolpassword FROM pg_authid WHERE rolname = 'alice'",
    )
    .await
    .unwrap();
    assert!(stored.starts_with("SCRAM-SHA-256$4096:"), "{stored}");
    assert_eq!(
        one_text(
            &admin,
            "SELECT rolpassword FROM pg_roles WHERE rolname = 'alice'"
        )
        .await
        .as_deref(),
        Some("********")
    );

    let alice = login(&server, "alice", Some("alice-pw"))
        .await
        .unwrap_or_else(|e| panic!("{}", describe_error(&e)));
    let row = alice
        .query_one("SELECT current_user, session_user, current_role", &[])
        .await
        .unwrap();
    assert_eq!(
        (
            row.get::<_, String>(0),
            row.get::<_, String>(1),
            row.get::<_, String>(2)
        ),
        ("alice".into(), "alice".into(), "alice".into())
    );
    let role_oid: u32 = admin
        .query_one("SELECT oid FROM pg_roles WHERE rolname = 'alice'", &[])
        .await
        .unwrap()
        .get(0);
    let activity_oid: u32 = alice
        .query_one(
            "SELECT usesysid FROM pg_stat_activity WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(activity_oid, role_oid);
    let is_superuser: String = alice
        .query_one("SHOW is_superuser", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(is_superuser, "off");
    // A non-superuser may change its own password, not make roles.
    let e = alice
        .batch_execute("CREATE ROLE mallory")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e).as_deref(), Some("42501"));
    alice
        .batch_execute("ALTER ROLE alice PASSWORD 'alice-pw2'")
        .await
        .unwrap();
    login(&server, "alice", Some("alice-pw2")).await.unwrap();

    let failed = "password authentication failed for user \"alice\"";
    expect_error(&server, "alice", Some("alice-pw"), "28P01", failed).await;
    expect_error(
        &server,
        "nobody",
        Some("x"),
        "28P01",
        "password authentication failed for user \"nobody\"",
    )
    .await;
    // A role without a password cannot log in by password.
    admin.batch_execute("CREATE ROLE nopw LOGIN").await.unwrap();
    expect_error(
        &server,
        "nopw",
        Some(""),
        "28P01",
        "password authentication failed for user \"nopw\"",
    )
    .await;

    let Some(bin) = common::psql_bin::or_skip("scram_logins_with_tokio_postgres_and_psql") else {
        return;
    };
    let out = psql(
        &bin,
        &conninfo(&server, "alice", ""),
        Some("alice-pw2"),
        &["SELECT current_user"],
    );
    assert!(
        out.ok && out.stdout.trim() == "alice",
        "{} {}",
        out.stdout,
        out.stderr
    );
    let out = psql(
        &bin,
        &conninfo(&server, "alice", ""),
        Some("wrong"),
        &["SELECT 1"],
    );
    assert!(!out.ok && out.stderr.contains(failed), "{}", out.stderr);
    // \du lists the roles with their attributes.
    let out = psql(
        &bin,
        &conninfo(&server, "brewric", ""),
        Some(BOOT_PASSWORD),
        &["\\du"],
    );
    assert!(out.ok, "{}", out.stderr);
    assert!(
        out.stdout.contains("alice|5 connections|{}"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("brewric|Superuser, Create role, Create DB, Replication, Bypass RLS|{}"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn md5_logins_with_psql() {
    let server = password_server("md5", &[]);
    let admin = admin_session(&server).await;
    admin
        .batch_execute("SET password_encryption = 'md5'; CREATE ROLE bob LOGIN PASSWORD 'bob-pw'")
        .await
        .unwrap();
    let stored = one_text(
        &admin,
        "SELECT rolpassword FROM pg_authid WHERE rolname = 'bob'",
    )
    .await
    .unwrap();
    assert_eq!(stored, brewric::auth::md5_hash("bob-pw", "bob"));
    // A password given already hashed is stored as given.
    admin
        .batch_execute(&format!("CREATE ROLE bob2 LOGIN PASSWORD '{stored}'"))
        .await
        .unwrap();
    assert_eq!(
        one_text(
            &admin,
            "SELECT rolpassword FROM pg_authid WHERE rolname = 'bob2'"
        )
        .await,
        Some(stored.clone())
    );

    if let Some(bin) = common::psql_bin::or_skip("md5_logins_with_psql") {
        let out = psql(
            &bin,
            &conninfo(&server, "bob", ""),
            Some("bob-pw"),
            &["SELECT session_user"],
        );
        assert!(
            out.ok && out.stdout.trim() == "bob",
            "{} {}",
            out.stdout,
            out.stderr
        );
        let out = psql(
            &bin,
            &conninfo(&server, "bob", ""),
            Some("nope"),
            &["SELECT 1"],
        );
        assert!(
            !out.ok
                && out
                    .stderr
                    .contains("password authentication failed for user \"bob\""),
            "{}",
            out.stderr
        );
    }
    // tokio-postgres answers MD5 too.
    login(&server, "bob", Some("bob-pw")).await.unwrap();

    // A rename clears an MD5 password (its hash covers the name).
    admin
        .batch_execute("ALTER ROLE bob RENAME TO bobby")
        .await
        .unwrap();
    assert_eq!(
        one_text(
            &admin,
            "SELECT rolpassword FROM pg_authid WHERE rolname = 'bobby'"
        )
        .await,
        None
    );
    expect_error(
        &server,
        "bobby",
        Some("bob-pw"),
        "28P01",
        "password authentication failed for user \"bobby\"",
    )
    .await;
}

#[tokio::test]
async fn failed_logins_wait_longer_while_other_sessions_go_on() {
    let server = password_server("delay", &[]);
    let admin = admin_session(&server).await;
    let mut took = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        assert!(login(&server, common::USER, Some("wrong")).await.is_err());
        took.push(t.elapsed());
    }
    // 100 ms, 200 ms, 400 ms at the least (minimums only: the machine may be slow).
    assert!(took[0] >= Duration::from_millis(100), "{took:?}");
    assert!(took[1] >= Duration::from_millis(200), "{took:?}");
    assert!(took[2] >= Duration::from_millis(400), "{took:?}");

    // The fourth failure waits 800 ms on the server; meanwhile another session is served.
    let addr = (server.host.clone(), server.port);
    let failing = tokio::spawn(async move {
        let mut cfg = tokio_postgres::Config::new();
        cfg.host(&addr.0)
            .port(addr.1)
            .user(common::USER)
            .dbname(common::DEFAULT_DB)
            .password("wrong");
        let r = common::connect_with(cfg).await;
        (r.is_err(), Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let n: i64 = admin
        .query_one("SELECT count(*) FROM generate_series(1, 1000)", &[])
        .await
        .unwrap()
        .get(0);
    let served = Instant::now();
    assert_eq!(n, 1000);
    let (refused, refused_at) = failing.await.unwrap();
    assert!(refused);
    assert!(
        served < refused_at,
        "the other session waited for the failed login"
    );
    // The right password still works (the delay only slows failures).
    login(&server, common::USER, Some(BOOT_PASSWORD))
        .await
        .unwrap();
}

#[tokio::test]
async fn nologin_and_connection_limits() {
    let server = password_server("limits", &["--max-connections", "4"]);
    let admin = admin_session(&server).await;
    admin
        .batch_execute("CREATE ROLE carol NOLOGIN PASSWORD 'c'; CREATE ROLE dave LOGIN PASSWORD 'd' CONNECTION LIMIT 1")
        .await
        .unwrap();
    expect_error(
        &server,
        "carol",
        Some("c"),
        "28000",
        "role \"carol\" is not permitted to log in",
    )
    .await;
    // The wrong password of a NOLOGIN role is still 28P01.
    expect_error(
        &server,
        "carol",
        Some("x"),
        "28P01",
        "password authentication failed for user \"carol\"",
    )
    .await;

    let dave = login(&server, "dave", Some("d")).await.unwrap();
    expect_error(
        &server,
        "dave",
        Some("d"),
        "53300",
        "too many connections for role \"dave\"",
    )
    .await;
    drop(dave);
    // The place is freed when the session ends (asynchronously: poll).
    let deadline = Instant::now() + Duration::from_secs(10);
    let dave = loop {
        match login(&server, "dave", Some("d")).await {
            Ok(c) => break c,
            Err(e) if Instant::now() < deadline && sqlstate(&e).as_deref() == Some("53300") => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!("{}", describe_error(&e)),
        }
    };
    // admin + dave + two more = 4: the fifth is refused.
    let _a = login(&server, common::USER, Some(BOOT_PASSWORD))
        .await
        .unwrap();
    let _b = login(&server, common::USER, Some(BOOT_PASSWORD))
        .await
        .unwrap();
    expect_error(
        &server,
        common::USER,
        Some(BOOT_PASSWORD),
        "53300",
        "sorry, too many clients already",
    )
    .await;
    admin
        .batch_execute("ALTER ROLE dave CONNECTION LIMIT -1")
        .await
        .unwrap();
    let e = admin
        .batch_execute("ALTER ROLE dave CONNECTION LIMIT -2")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e).as_deref(), Some("22023"));
    drop(dave);
}

#[tokio::test]
async fn role_ddl_errors_and_roles_survive_a_restart() {
    let dir = temp_dir("restart");
    let server = common::start_configured(
        dir.clone(),
        2,
        &["--auth", "password"],
        &[("BREWRIC_PASSWORD", BOOT_PASSWORD)],
    );
    let admin = admin_session(&server).await;
    admin
        .batch_execute("CREATE ROLE erin WITH LOGIN PASSWORD 'e' CREATEDB")
        .await
        .unwrap();
    let e = admin.batch_execute("CREATE ROLE erin").await.unwrap_err();
    assert_eq!(
        (sqlstate(&e).as_deref(), e.as_db_error().unwrap().message()),
        (Some("42710"), "role \"erin\" already exists")
    );
    let e = admin.batch_execute("DROP ROLE ghost").await.unwrap_err();
    assert_eq!(
        (sqlstate(&e).as_deref(), e.as_db_error().unwrap().message()),
        (Some("42704"), "role \"ghost\" does not exist")
    );
    let e = admin
        .batch_execute("ALTER ROLE ghost LOGIN")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e).as_deref(), Some("42704"));
    let e = admin
        .batch_execute("CREATE ROLE pg_mine")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e).as_deref(), Some("42939"));
    let e = admin.batch_execute("DROP ROLE brewric").await.unwrap_err();
    assert_eq!(sqlstate(&e).as_deref(), Some("55006"));
    admin
        .batch_execute("CREATE GROUP staff; DROP ROLE IF EXISTS ghost, staff")
        .await
        .unwrap();
    // The extended protocol takes role statements too.
    admin
        .execute("CREATE ROLE frank LOGIN PASSWORD 'f'", &[])
        .await
        .unwrap();
    drop(admin);

    let dir = server.kill9();
    let server = common::start_configured(dir, 2, &["--auth", "password"], &[]);
    // No BREWRIC_PASSWORD this time: the saved verifier stands.
    let admin = admin_session(&server).await;
    let names: Vec<String> = admin
        .query("SELECT rolname FROM pg_roles ORDER BY 1", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(names, ["brewric", "erin", "frank", "postgres"]);
    let created_db: bool = admin
        .query_one(
            "SELECT rolcreatedb FROM pg_roles WHERE rolname = 'erin'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(created_db);
    login(&server, "erin", Some("e")).await.unwrap();
    login(&server, "frank", Some("f")).await.unwrap();
}

#[tokio::test]
async fn tls_with_psql_sslmode_require() {
    let Some(bin) = common::psql_bin::or_skip("tls_with_psql_sslmode_require") else {
        return;
    };
    let dir = temp_dir("tls");
    std::fs::create_dir_all(&dir).unwrap();
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    let cert = dir.with_extension("cert.pem");
    let key = dir.with_extension("key.pem");
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let server = common::start_configured(
        dir.join("data"),
        2,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        &[],
    );
    // Loopback is trusted by default: no password.
    let out = psql(
        &bin,
        &conninfo(&server, "brewric", "sslmode=require"),
        None,
        &["\\conninfo", "SELECT 40 + 2"],
    );
    assert!(out.ok, "{}", out.stderr);
    assert!(
        out.stdout.contains("SSL connection (protocol: TLSv1."),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\n42"), "{}", out.stdout);
    // A result larger than the socket buffers arrives whole over TLS.
    let out = psql(
        &bin,
        &conninfo(&server, "brewric", "sslmode=require"),
        None,
        &["SELECT g FROM generate_series(1, 200000) g"],
    );
    assert!(
        out.ok && out.stdout.ends_with("\n200000\n"),
        "{}",
        out.stderr
    );
    // Clear connections go on as before.
    let out = psql(
        &bin,
        &conninfo(&server, "brewric", "sslmode=disable"),
        None,
        &["\\conninfo"],
    );
    assert!(
        out.ok && !out.stdout.contains("SSL connection"),
        "{} {}",
        out.stdout,
        out.stderr
    );
    let client = server.connect(common::DEFAULT_DB).await;
    client.batch_execute("SELECT 1").await.unwrap();
    let _ = std::fs::remove_file(cert);
    let _ = std::fs::remove_file(key);
}

/// A v3 startup packet for user brewric, database brewric.
fn startup_packet() -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&196608u32.to_be_bytes());
    for s in ["user", "brewric", "database", "brewric", ""] {
        body.extend_from_slice(s.as_bytes());
        body.push(0);
    }
    let mut p = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    p.extend(body);
    p
}

fn query_message(sql: &str) -> Vec<u8> {
    let mut p = vec![b'Q'];
    p.extend_from_slice(&((sql.len() + 5) as u32).to_be_bytes());
    p.extend_from_slice(sql.as_bytes());
    p.push(0);
    p
}

/// Reads until ReadyForQuery ('Z') arrives.
fn read_until_ready(s: &mut std::net::TcpStream) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "server closed during startup");
        seen.extend_from_slice(&buf[..n]);
        // Walk whole messages: type byte + length.
        let mut i = 0;
        while i + 5 <= seen.len() {
            let len =
                u32::from_be_bytes([seen[i + 1], seen[i + 2], seen[i + 3], seen[i + 4]]) as usize;
            if seen[i] == b'Z' {
                return;
            }
            i += 1 + len;
        }
    }
}

#[tokio::test]
async fn vanishing_and_stalled_clients_do_not_disturb_others() {
    let server = common::start_configured(temp_dir("stall"), 2, &[], &[]);
    let addr = format!("{}:{}", server.host, server.port);
    // Half a startup packet, then gone.
    {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(&startup_packet()[..7]).unwrap();
    }
    // Half a query, then gone.
    {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(&startup_packet()).unwrap();
        read_until_ready(&mut s);
        s.write_all(&query_message("SELECT 1")[..6]).unwrap();
    }
    // A client that asks for a huge result and never reads it.
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.write_all(&startup_packet()).unwrap();
        read_until_ready(&mut s);
        s.write_all(&query_message(
            "SELECT g, repeat('x', 100) FROM generate_series(1, 3000000) g",
        ))
        .unwrap();
        stalled.push(s);
    }
    // Let them fill their socket buffers.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let client = server.connect(common::DEFAULT_DB).await;
    let t = Instant::now();
    for _ in 0..3 {
        let n: i64 = tokio::time::timeout(
            Duration::from_secs(30),
            client.query_one("SELECT count(*) FROM generate_series(1, 10000)", &[]),
        )
        .await
        .expect("another session's query was held up")
        .unwrap()
        .get(0);
        assert_eq!(n, 10000);
    }
    eprintln!(
        "three queries beside the stalled clients took {:?}",
        t.elapsed()
    );
    let activity: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        activity >= 2,
        "the stalled sessions are still there, active: {activity}"
    );
    drop(stalled);
}

/// One backend message: type byte and body.
fn read_message(s: &mut std::net::TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    s.read_exact(&mut head).ok()?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut body = vec![0u8; len.checked_sub(4)?];
    s.read_exact(&mut body).ok()?;
    Some((head[0], body))
}

fn password_message(body: &[u8]) -> Vec<u8> {
    let mut p = vec![b'p'];
    p.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    p.extend_from_slice(body);
    p
}

#[tokio::test]
async fn malformed_sasl_messages_are_protocol_violations() {
    let server = password_server("sasl", &[]);
    let addr = format!("{}:{}", server.host, server.port);
    let mut initial_ok = b"SCRAM-SHA-256\0".to_vec();
    initial_ok.extend_from_slice(&(18u32).to_be_bytes());
    initial_ok.extend_from_slice(b"n,,n=,r=abcdefghij");
    let mut wrong_mechanism = b"SCRAM-SHA-1\0".to_vec();
    wrong_mechanism.extend_from_slice(&(18u32).to_be_bytes());
    wrong_mechanism.extend_from_slice(b"n,,n=,r=abcdefghij");
    let cases: Vec<(Vec<Vec<u8>>, &str)> = vec![
        // A length field cut short, no terminator, a length beyond the body.
        (vec![b"SCRAM-SHA-256\0\xff".to_vec()], "08P01"),
        (vec![b"SCRAM-SHA-256".to_vec()], "08P01"),
        (
            vec![b"SCRAM-SHA-256\0\x00\x00\x10\x00n,,".to_vec()],
            "08P01",
        ),
        (vec![wrong_mechanism], "08P01"),
        // Channel binding asked for but not offered; garbage client-first.
        (
            vec![[&b"SCRAM-SHA-256\0\x00\x00\x00\x1ep=tls-server-end-point,,n=,r=x"[..]].concat()],
            "08P01",
        ),
        (
            vec![[&b"SCRAM-SHA-256\0\x00\x00\x00\x03\xff\xfe\xfd"[..]].concat()],
            "08P01",
        ),
        // A good first message, then a final message without a proof or with the wrong nonce.
        (vec![initial_ok.clone(), b"c=biws,r=zzz".to_vec()], "08P01"),
        (
            vec![initial_ok.clone(), b"c=biws,r=abc,p=AAAA".to_vec()],
            "08P01",
        ),
    ];
    for (messages, code) in cases {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(&startup_packet()).unwrap();
        let (kind, body) = read_message(&mut s).expect("authentication request");
        assert_eq!(
            (kind, &body[..4]),
            (b'R', &10u32.to_be_bytes()[..]),
            "AuthenticationSASL"
        );
        let mut error = None;
        for m in &messages {
            s.write_all(&password_message(m)).unwrap();
            let (kind, body) = read_message(&mut s).expect("an answer");
            if kind == b'E' {
                error = Some(String::from_utf8_lossy(&body).into_owned());
                break;
            }
            assert_eq!(kind, b'R', "SASLContinue");
        }
        let error = error.unwrap_or_else(|| panic!("no error for {messages:?}"));
        assert!(
            error.contains(&format!("C{code}\0")),
            "{messages:?}: {error:?}"
        );
        assert!(error.contains("SFATAL\0"), "{error:?}");
        // The server closes the connection after it.
        assert!(read_message(&mut s).is_none());
    }
    // The server lives on and takes the right password.
    admin_session(&server)
        .await
        .batch_execute("SELECT 1")
        .await
        .unwrap();
}
