//! The PostgreSQL v3 protocol for one connection: startup, simple and
//! extended query, portals with row limits, cancel, and errors in
//! PostgreSQL's shape. Messages are framed and encoded by the `pgwire`
//! crate's codecs; this module owns the protocol state machine.
//! Who may connect is `auth.rs`'s (passwords, SCRAM/MD5 exchanges) and the
//! transport `tls.rs`'s (plain TCP, or TLS after SSLRequest).
//! Must not: plan or execute SQL itself (it calls `sql::Session`).
//! `ilp` is the other TCP protocol served: line protocol, QuestDB-style.

mod auth;
pub mod copy_out;
pub mod encode;
pub mod ilp;
pub mod tls;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::BytesMut;
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::data::{
    DataRow, FieldDescription, NoData, ParameterDescription, RowDescription,
};
use pgwire::messages::extendedquery::{
    BindComplete, CloseComplete, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse, ReadyForQuery, SslResponse,
    TransactionStatus,
};
use pgwire::messages::startup::{Authentication, BackendKeyData, ParameterStatus, SecretKey};
use pgwire::messages::{
    DecodeContext, PgWireBackendMessage as B, PgWireFrontendMessage as F, SslNegotiationMetaMessage,
};
use sqlparser::ast::Statement;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::{sqlstate, DbError, DbResult};
use crate::exec::cancel::StopReason;
use crate::exec::operators::BoxedOperator;
use crate::server::Server;
use crate::sql::plan::Field;
use crate::sql::{Session, StatementResult, TxnState};
use crate::types::{DataType, Datum, FormatContext};

/// Largest frontend message accepted (a COPY chunk or a big multi-row INSERT fits easily).
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;
/// How long a client may take from connecting to finishing authentication.
const STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// Output is flushed to the socket once this much is buffered.
const FLUSH_BYTES: usize = 64 << 10;

struct Prepared {
    /// `None` for an empty query string (or an ingest COPY).
    stmt: Option<Statement>,
    /// A COPY in line_protocol or mcap format (`sql::ingest_copy`).
    ingest_copy: Option<crate::sql::ingest_copy::IngestCopy>,
    /// A role statement (`sql::role_ddl`), which sqlparser does not take.
    role: Option<crate::sql::role_ddl::RoleStatement>,
    /// The query text (a literal multi-row INSERT runs through the fast path).
    sql: String,
    param_types: Vec<DataType>,
    fields: Option<Vec<Field>>,
}

enum PortalState {
    NotStarted,
    Streaming {
        op: BoxedOperator,
        rows: u64,
        tag: String,
        buffered: Option<(crate::exec::vector::Batch, usize)>,
    },
    /// Run to completion; a row-returning portal executed again returns no rows.
    Done {
        tag: Option<String>,
    },
}

struct Portal {
    statement: Arc<Prepared>,
    params: Vec<Datum>,
    result_formats: Vec<i16>,
    state: PortalState,
}

struct Connection {
    stream: tls::ClientStream,
    /// The client's address (None when the socket could not tell).
    peer: Option<std::net::SocketAddr>,
    inbuf: BytesMut,
    out: BytesMut,
    decode: DecodeContext,
    /// ErrorResponses sent so far (a query string run piece by piece stops at one).
    errors_sent: u64,
    /// A FATAL error went out: the connection closes without another one.
    fatal_sent: bool,
}

impl Connection {
    async fn read_message(&mut self) -> DbResult<Option<F>> {
        loop {
            let in_startup =
                self.decode.awaiting_frontend_ssl || self.decode.awaiting_frontend_startup;
            if !in_startup && self.inbuf.len() >= 5 {
                let len = u32::from_be_bytes([
                    self.inbuf[1],
                    self.inbuf[2],
                    self.inbuf[3],
                    self.inbuf[4],
                ]) as usize;
                if !(4..=MAX_MESSAGE_BYTES).contains(&len) {
                    return Err(DbError::protocol(format!("invalid message length {len}")).fatal());
                }
            } else if in_startup && self.inbuf.len() >= 4 {
                let len = u32::from_be_bytes([
                    self.inbuf[0],
                    self.inbuf[1],
                    self.inbuf[2],
                    self.inbuf[3],
                ]) as usize;
                if !(8..=10_000).contains(&len) {
                    return Err(DbError::protocol(format!(
                        "invalid length of startup packet {len}"
                    ))
                    .fatal());
                }
            }
            match F::decode(&mut self.inbuf, &self.decode) {
                Ok(Some(m)) => return Ok(Some(m)),
                Ok(None) => {}
                Err(e) => {
                    return Err(DbError::protocol(format!("invalid frontend message: {e}")).fatal())
                }
            }
            self.flush().await?;
            let n = self
                .stream
                .read_buf(&mut self.inbuf)
                .await
                .map_err(io_error)?;
            if n == 0 {
                return Ok(None);
            }
        }
    }

    fn send(&mut self, msg: B) {
        // Encoding into a BytesMut cannot fail for messages we build.
        let _ = msg.encode(&mut self.out);
    }

    async fn flush(&mut self) -> DbResult<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out).await.map_err(io_error)?;
            // TLS may hold the last records back until flushed (a no-op on plain TCP).
            self.stream.flush().await.map_err(io_error)?;
            self.out.clear();
        }
        Ok(())
    }

    async fn maybe_flush(&mut self) -> DbResult<()> {
        if self.out.len() >= FLUSH_BYTES {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends the NOTICEs the session's last statement raised.
    fn send_notices(&mut self, session: &mut Session) {
        for n in std::mem::take(&mut session.notices) {
            let mut fields = vec![
                (b'S', n.severity.to_string()),
                (b'V', n.severity.to_string()),
                (b'C', n.code.to_string()),
                (b'M', n.message.clone()),
            ];
            if let Some(d) = &n.detail {
                fields.push((b'D', d.clone()));
            }
            if let Some(h) = &n.hint {
                fields.push((b'H', h.clone()));
            }
            self.send(B::NoticeResponse(NoticeResponse::new(fields)));
        }
    }

    fn send_error(&mut self, e: &DbError) {
        let mut fields = vec![
            (b'S', e.severity.to_string()),
            (b'V', e.severity.to_string()),
            (b'C', e.code.to_string()),
            (b'M', e.message.clone()),
        ];
        if let Some(d) = &e.detail {
            fields.push((b'D', d.clone()));
        }
        if let Some(h) = &e.hint {
            fields.push((b'H', h.clone()));
        }
        if let Some(p) = e.position {
            fields.push((b'P', p.to_string()));
        }
        if let Some(w) = &e.where_ {
            fields.push((b'W', w.clone()));
        }
        self.send(B::ErrorResponse(ErrorResponse::new(fields)));
        self.errors_sent += 1;
        self.fatal_sent |= e.severity == "FATAL";
    }
}

fn io_error(e: std::io::Error) -> DbError {
    DbError::new(
        sqlstate::CONNECTION_EXCEPTION,
        format!("connection error: {e}"),
    )
}

/// Serves one client connection until it closes.
pub async fn serve(stream: TcpStream, server: Arc<Server>, shard: usize) {
    // pg_stat_activity's backend_start: when the connection came, as PostgreSQL's fork.
    let backend_start_ns = crate::server::activity::now_ns();
    let peer = stream.peer_addr().ok();
    let mut conn = Connection {
        stream: tls::ClientStream::Plain(stream),
        peer,
        inbuf: BytesMut::with_capacity(8192),
        out: BytesMut::with_capacity(FLUSH_BYTES),
        decode: DecodeContext::default(),
        errors_sent: 0,
        fatal_sent: false,
    };
    // PostgreSQL's authentication_timeout: a startup must be done within a minute.
    let started = tokio::time::timeout(
        STARTUP_TIMEOUT,
        startup(&mut conn, &server, shard, backend_start_ns),
    )
    .await
    .unwrap_or_else(|_| Err(DbError::protocol("authentication timeout").fatal()));
    let session = match started {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => {
            conn.send_error(&e);
            let _ = conn.flush().await;
            return;
        }
    };
    // The session holds its registration (cancel key, pg_stat_activity row):
    // it goes when run_session drops the session, also when a panic unwinds.
    let result = run_session(&mut conn, session).await;
    if let Err(e) = result {
        if e.code != sqlstate::CONNECTION_EXCEPTION && !conn.fatal_sent {
            conn.send_error(&e);
        }
    }
    let _ = conn.flush().await;
}

async fn startup(
    conn: &mut Connection,
    server: &Arc<Server>,
    shard: usize,
    backend_start_ns: i64,
) -> DbResult<Option<Session>> {
    loop {
        let Some(msg) = conn.read_message().await? else {
            return Ok(None);
        };
        match msg {
            F::SslNegotiation(SslNegotiationMetaMessage::None) => {
                conn.decode.awaiting_frontend_ssl = false
            }
            F::SslNegotiation(SslNegotiationMetaMessage::PostgresSsl(_)) => {
                conn.decode.awaiting_frontend_ssl = false;
                match &server.access.tls {
                    Some(config) if !conn.stream.is_tls() => {
                        // Bytes after the SSLRequest, sent before the handshake,
                        // would bypass TLS (CVE-2021-23214): refuse them.
                        if !conn.inbuf.is_empty() {
                            return Err(DbError::protocol(
                                "received unencrypted data after SSL request",
                            )
                            .fatal());
                        }
                        conn.send(B::SslResponse(SslResponse::Accept));
                        conn.flush().await?;
                        if let Err(e) = conn.stream.upgrade(config).await {
                            eprintln!("brewricd: TLS handshake failed: {e}");
                            return Ok(None);
                        }
                    }
                    _ => {
                        // No certificate: 'N'; libpq then sends the startup packet in clear.
                        conn.send(B::SslResponse(SslResponse::Refuse));
                        conn.flush().await?;
                    }
                }
            }
            F::SslNegotiation(_) => {
                // GSSAPI encryption: refused; the client may still ask for SSL.
                conn.send(B::SslResponse(SslResponse::Refuse));
                conn.flush().await?;
            }
            F::CancelRequest(c) => {
                // The key may decode as 4 raw bytes; compare it as the i32 we handed out.
                if let Some(secret) = c.secret_key.as_i32() {
                    server.cancel(c.pid, secret);
                }
                return Ok(None);
            }
            F::Startup(s) => {
                conn.decode.awaiting_frontend_startup = false;
                if s.protocol_number_major != 3 {
                    return Err(DbError::protocol(format!(
                        "unsupported frontend protocol {}.{}",
                        s.protocol_number_major, s.protocol_number_minor
                    ))
                    .fatal());
                }
                let user = s
                    .parameters
                    .get("user")
                    .cloned()
                    .unwrap_or_else(|| "brewric".into());
                let database = s
                    .parameters
                    .get("database")
                    .cloned()
                    .unwrap_or_else(|| user.clone());
                let catalog = server.catalog.snapshot();
                let role = catalog.role(&user).cloned();
                match auth::authenticate(conn, server, &user, &database, role.as_deref()).await? {
                    auth::Outcome::Ok => {}
                    auth::Outcome::Gone => return Ok(None),
                }
                let superuser = role.as_ref().is_none_or(|r| r.superuser);
                let slot = server.connections.admit(
                    server.access.max_connections,
                    crate::server::connections::Admission {
                        role: role.as_ref().map(|r| (r.oid, r.name.as_str())),
                        role_limit: role.as_ref().map_or(-1, |r| r.connection_limit),
                        superuser,
                    },
                )?;
                if catalog.database(&database).is_err() {
                    return Err(DbError::new(
                        sqlstate::INVALID_CATALOG_NAME,
                        format!("database \"{database}\" does not exist"),
                    )
                    .fatal());
                }
                let mut session = Session::new(server.clone(), database, user.clone(), shard);
                for (k, v) in &s.parameters {
                    if !matches!(k.as_str(), "user" | "database" | "options" | "replication") {
                        let _ = session.set_variable(k, v);
                    }
                }
                if let Some(options) = s.parameters.get("options") {
                    for (k, v) in startup_options(options) {
                        let _ = session.set_variable(&k, &v);
                    }
                }
                let is_superuser = if superuser { "on" } else { "off" };
                session
                    .settings
                    .insert("is_superuser".into(), is_superuser.into());
                session.mark_startup();
                conn.send(B::Authentication(Authentication::Ok));
                let statuses = [
                    (
                        "application_name",
                        session
                            .settings
                            .get("application_name")
                            .cloned()
                            .unwrap_or_default(),
                    ),
                    ("client_encoding", "UTF8".to_string()),
                    ("DateStyle", "ISO, MDY".to_string()),
                    ("default_transaction_read_only", "off".to_string()),
                    ("in_hot_standby", "off".to_string()),
                    ("integer_datetimes", "on".to_string()),
                    ("IntervalStyle", "postgres".to_string()),
                    ("is_superuser", is_superuser.to_string()),
                    ("server_encoding", "UTF8".to_string()),
                    ("server_version", crate::SERVER_VERSION.to_string()),
                    ("session_authorization", user),
                    ("standard_conforming_strings", "on".to_string()),
                    (
                        "TimeZone",
                        session
                            .settings
                            .get("timezone")
                            .cloned()
                            .unwrap_or_else(|| "UTC".into()),
                    ),
                ];
                for (k, v) in statuses {
                    conn.send(B::ParameterStatus(ParameterStatus::new(k.to_string(), v)));
                }
                let info = crate::server::activity::SessionInfo {
                    datid: session.database_oid(),
                    datname: session.database.clone(),
                    usename: session.user.clone(),
                    application_name: session
                        .settings
                        .get("application_name")
                        .cloned()
                        .unwrap_or_default(),
                    client_addr: conn.peer,
                    backend_start_ns,
                };
                let mut registration = server.register_session(session.cancel.clone(), info);
                registration.hold(slot);
                conn.send(B::BackendKeyData(BackendKeyData::new(
                    registration.pid(),
                    SecretKey::I32(registration.secret()),
                )));
                session.attach_registration(registration);
                conn.send(B::ReadyForQuery(ReadyForQuery::new(
                    TransactionStatus::Idle,
                )));
                conn.flush().await?;
                return Ok(Some(session));
            }
            _ => return Err(DbError::protocol("expected startup message").fatal()),
        }
    }
}

fn txn_status(s: &Session) -> TransactionStatus {
    match s.txn {
        TxnState::Idle => TransactionStatus::Idle,
        TxnState::InBlock => TransactionStatus::Transaction,
        TxnState::Failed => TransactionStatus::Error,
    }
}

/// The settings in a startup packet's `options` (libpq's PGOPTIONS), as
/// PostgreSQL reads them: `-c name=value` or `--name=value`, words split at
/// spaces, a backslash keeping the next character (`-c search_path=a,\ b`).
fn startup_options(options: &str) -> Vec<(String, String)> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_ascii_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut settings = Vec::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let assignment = match w.as_str() {
            "-c" => words.next(),
            _ => w.strip_prefix("--").or_else(|| w.strip_prefix("-c")).map(str::to_string),
        };
        if let Some((name, value)) = assignment.as_deref().and_then(|a| a.split_once('=')) {
            settings.push((name.replace('-', "_"), value.to_string()));
        }
    }
    settings
}

/// The settings PostgreSQL reports (GUC_REPORT) that a session can SET:
/// (setting key, ParameterStatus name).
const REPORTED_SETTINGS: [(&str, &str); 4] = [
    ("application_name", "application_name"),
    ("timezone", "TimeZone"),
    ("datestyle", "DateStyle"),
    ("intervalstyle", "IntervalStyle"),
];

fn reported_settings(session: &Session) -> Vec<String> {
    REPORTED_SETTINGS
        .iter()
        .map(|(k, _)| session.settings.get(*k).cloned().unwrap_or_default())
        .collect()
}

/// As PostgreSQL 14+ does before ReadyForQuery: a ParameterStatus for each
/// reported setting whose value changed since it was last reported (SET,
/// RESET, a transaction's SET LOCAL ending).
fn report_changed_settings(conn: &mut Connection, session: &Session, reported: &mut [String]) {
    for ((key, name), last) in REPORTED_SETTINGS.iter().zip(reported.iter_mut()) {
        let now = session.settings.get(*key).map_or("", |v| v.as_str());
        if now != last.as_str() {
            *last = now.to_string();
            conn.send(B::ParameterStatus(ParameterStatus::new(
                name.to_string(),
                now.to_string(),
            )));
        }
    }
}

/// Drops the prepared statements a `DEALLOCATE` named (all for `DEALLOCATE ALL`).
fn forget_deallocated(session: &mut Session, statements: &mut HashMap<String, Arc<Prepared>>) {
    for d in session.deallocations.drain(..) {
        match d {
            None => statements.clear(),
            Some(name) => {
                statements.remove(&name);
            }
        }
    }
}

async fn run_session(conn: &mut Connection, mut session: Session) -> DbResult<()> {
    let mut reported = reported_settings(&session);
    let mut statements: HashMap<String, Arc<Prepared>> = HashMap::new();
    let mut portals: HashMap<String, Portal> = HashMap::new();
    // After an error in the extended protocol, messages are skipped until Sync.
    let mut skipping = false;
    let terminated = session
        .termination()
        .unwrap_or_else(|| Arc::new(tokio::sync::Notify::new()));
    loop {
        if session.cancel.is_terminating() {
            return Err(StopReason::Terminate.error());
        }
        // An idle session ends as soon as pg_terminate_backend names it; a
        // message half read then is lost with the connection.
        let msg = tokio::select! {
            biased;
            _ = terminated.notified() => return Err(StopReason::Terminate.error()),
            msg = conn.read_message() => msg?,
        };
        let Some(msg) = msg else {
            return Ok(());
        };
        if skipping && !matches!(msg, F::Sync(_) | F::Terminate(_)) {
            continue;
        }
        let result = match msg {
            F::Query(q) => {
                session.report_active(&q.query);
                let timer = StatementTimer::start(&session);
                simple_query(conn, &mut session, &q.query).await;
                drop(timer);
                if session.cancel.is_terminating() {
                    return Err(StopReason::Terminate.error());
                }
                forget_deallocated(&mut session, &mut statements);
                portals.remove("");
                session.report_ready();
                report_changed_settings(conn, &session, &mut reported);
                conn.send(B::ReadyForQuery(ReadyForQuery::new(txn_status(&session))));
                conn.flush().await?;
                Ok(())
            }
            F::Parse(p) => {
                // As PostgreSQL: Parse already shows the statement as active.
                session.report_active(&p.query);
                parse_message(&session, p.name.unwrap_or_default(), &p.query, &p.type_oids).map(
                    |prep| {
                        statements.insert(prep.0, Arc::new(prep.1));
                        conn.send(B::ParseComplete(ParseComplete::new()));
                    },
                )
            }
            F::Bind(b) => bind_message(&statements, &b).map(|portal| {
                portals.insert(b.portal_name.clone().unwrap_or_default(), portal);
                conn.send(B::BindComplete(BindComplete::new()));
            }),
            F::Describe(d) => describe_message(
                conn,
                &statements,
                &portals,
                d.target_type,
                &d.name.unwrap_or_default(),
            ),
            F::Execute(e) => {
                let name = e.name.unwrap_or_default();
                match portals.get_mut(&name) {
                    Some(portal) => {
                        session.report_active(&portal.statement.sql);
                        let timer = StatementTimer::start(&session);
                        let r = execute_portal(conn, &mut session, portal, e.max_rows).await;
                        drop(timer);
                        forget_deallocated(&mut session, &mut statements);
                        r
                    }
                    None => Err(DbError::new(
                        sqlstate::INVALID_CURSOR_STATE,
                        format!("portal \"{name}\" does not exist"),
                    )),
                }
            }
            F::Close(c) => {
                let name = c.name.unwrap_or_default();
                if c.target_type == b'S' {
                    statements.remove(&name);
                } else {
                    portals.remove(&name);
                }
                conn.send(B::CloseComplete(CloseComplete::new()));
                Ok(())
            }
            F::Sync(_) => {
                skipping = false;
                portals.remove("");
                if session.txn == TxnState::Idle {
                    portals.clear();
                }
                session.report_ready();
                report_changed_settings(conn, &session, &mut reported);
                conn.send(B::ReadyForQuery(ReadyForQuery::new(txn_status(&session))));
                conn.flush().await?;
                Ok(())
            }
            F::Flush(_) => conn.flush().await,
            F::Terminate(_) => return Ok(()),
            F::CopyData(_) | F::CopyDone(_) | F::CopyFail(_) => Ok(()), // stray COPY traffic is ignored, as PostgreSQL does
            _ => Err(DbError::protocol("unexpected message").fatal()),
        };
        if let Err(e) = result {
            if e.severity == "FATAL" {
                return Err(e);
            }
            if session.txn == TxnState::InBlock {
                session.txn = TxnState::Failed;
            }
            conn.send_error(&e);
            skipping = true;
        }
        conn.maybe_flush().await?;
    }
}

/// statement_timeout: while a Query or Execute message runs, a timer that
/// cancels it once the session's statement_timeout has passed (none when 0).
struct StatementTimer(Option<tokio::task::JoinHandle<()>>);

impl StatementTimer {
    fn start(session: &Session) -> StatementTimer {
        session.cancel.clear();
        let ms = crate::sql::session::settings::statement_timeout_ms(&session.settings);
        if ms == 0 {
            return StatementTimer(None);
        }
        let cancel = session.cancel.clone();
        StatementTimer(Some(tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            cancel.raise(StopReason::StatementTimeout);
        })))
    }
}

impl Drop for StatementTimer {
    fn drop(&mut self) {
        if let Some(timer) = self.0.take() {
            timer.abort();
        }
    }
}

/// A simple Query message: one or more statements, text results.
async fn simple_query(conn: &mut Connection, session: &mut Session, sql: &str) {
    if let Some(result) = session.try_fast_insert(sql).await {
        match result {
            Ok(r) => {
                let fmt = session.eval_context().format;
                if let Err(e) = stream_result(conn, r, &[], &fmt, true).await {
                    conn.send_error(&e);
                }
            }
            Err(e) => conn.send_error(&e),
        }
        return;
    }
    if let Some(copy) = crate::sql::ingest_copy::parse(sql) {
        let result = match copy {
            Ok(c) => session.begin_ingest_copy(&c).await,
            Err(e) => Err(e),
        };
        let result = send_statement_result(conn, session, result).await;
        if let Err(e) = result {
            if e.code == sqlstate::CONNECTION_EXCEPTION {
                return;
            }
            if session.txn == TxnState::InBlock {
                session.txn = TxnState::Failed;
            }
            conn.send_error(&e);
        }
        return;
    }
    if let Some(pieces) = crate::sql::role_ddl::split(sql) {
        // Several statements with a role statement among them: one by one.
        for piece in pieces {
            let errors = conn.errors_sent;
            Box::pin(simple_query(conn, session, &piece)).await;
            if conn.errors_sent != errors {
                return;
            }
        }
        return;
    }
    if let Some(role) = crate::sql::role_ddl::parse(sql) {
        let result = match role {
            Ok(r) => session.role_statement(&r).await,
            Err(e) => Err(e),
        };
        conn.send_notices(session);
        match result {
            Ok(r) => {
                let fmt = session.eval_context().format;
                if let Err(e) = stream_result(conn, r, &[], &fmt, true).await {
                    conn.send_error(&e);
                }
            }
            Err(e) => {
                if session.txn == TxnState::InBlock {
                    session.txn = TxnState::Failed;
                }
                conn.send_error(&e);
            }
        }
        return;
    }
    let stmts = match crate::sql::parse(sql) {
        Ok(s) => s,
        Err(e) => {
            if session.txn == TxnState::InBlock {
                session.txn = TxnState::Failed;
            }
            conn.send_error(&e);
            return;
        }
    };
    if stmts.is_empty() {
        conn.send(B::EmptyQueryResponse(EmptyQueryResponse::new()));
        return;
    }
    // Several statements in one Query message run in one implicit transaction,
    // unless they manage transactions themselves.
    let implicit = stmts.len() > 1
        && session.txn == TxnState::Idle
        && !stmts.iter().any(|s| {
            matches!(
                s,
                Statement::StartTransaction { .. }
                    | Statement::Commit { .. }
                    | Statement::Rollback { .. }
            )
        });
    if implicit {
        session.begin_implicit();
    }
    for stmt in &stmts {
        let executed = session.execute(stmt, vec![], &[]).await;
        conn.send_notices(session);
        let result = send_statement_result(conn, session, executed).await;
        if let Err(e) = result {
            if e.code == sqlstate::CONNECTION_EXCEPTION {
                return;
            }
            if implicit {
                let _ = session.end_implicit(false).await;
            } else if session.txn == TxnState::InBlock {
                session.txn = TxnState::Failed;
            }
            conn.send_error(&e);
            return;
        }
    }
    if implicit {
        if let Err(e) = session.end_implicit(true).await {
            conn.send_error(&e);
        }
    }
}

/// One simple-query statement's result to the client: its rows, or its
/// COPY FROM STDIN run to the end. A lost connection comes back as 08000.
async fn send_statement_result(
    conn: &mut Connection,
    session: &mut Session,
    executed: DbResult<StatementResult>,
) -> DbResult<()> {
    match executed? {
        StatementResult::CopyIn(copy) => {
            let tag = copy_in(conn, session, copy).await?;
            conn.send(B::CommandComplete(CommandComplete::new(tag)));
            Ok(())
        }
        r => {
            let fmt = session.eval_context().format;
            stream_result(conn, r, &[], &fmt, true).await.map(|_| ())
        }
    }
}

fn parse_message(
    session: &Session,
    name: String,
    sql: &str,
    type_oids: &[u32],
) -> DbResult<(String, Prepared)> {
    if let Some(copy) = crate::sql::ingest_copy::parse(sql) {
        let copy = copy?;
        Session::check_ingest_copy(&copy)?;
        return Ok((
            name,
            Prepared {
                stmt: None,
                ingest_copy: Some(copy),
                role: None,
                sql: sql.to_string(),
                param_types: Vec::new(),
                fields: None,
            },
        ));
    }
    if let Some(role) = crate::sql::role_ddl::parse(sql) {
        return Ok((
            name,
            Prepared {
                stmt: None,
                ingest_copy: None,
                role: Some(role?),
                sql: sql.to_string(),
                param_types: Vec::new(),
                fields: None,
            },
        ));
    }
    let mut stmts = crate::sql::parse(sql)?;
    if stmts.len() > 1 {
        return Err(DbError::syntax(
            "cannot insert multiple commands into a prepared statement",
        ));
    }
    let stmt = stmts.pop();
    let declared: Vec<DataType> = type_oids
        .iter()
        .map(|&oid| {
            if oid == 0 {
                Ok(DataType::Unknown)
            } else {
                DataType::from_oid(oid).ok_or_else(|| {
                    DbError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("type with OID {oid} does not exist"),
                    )
                })
            }
        })
        .collect::<DbResult<_>>()?;
    let (param_types, fields) = match &stmt {
        Some(s) => session.describe(s, &declared)?,
        None => (vec![], None),
    };
    let mut param_types = param_types;
    for (i, d) in declared.iter().enumerate() {
        if *d != DataType::Unknown {
            if i < param_types.len() {
                param_types[i] = *d;
            } else {
                param_types.push(*d);
            }
        }
    }
    Ok((
        name,
        Prepared {
            stmt,
            ingest_copy: None,
            role: None,
            sql: sql.to_string(),
            param_types,
            fields,
        },
    ))
}

fn bind_message(
    statements: &HashMap<String, Arc<Prepared>>,
    b: &pgwire::messages::extendedquery::Bind,
) -> DbResult<Portal> {
    let name = b.statement_name.clone().unwrap_or_default();
    let prep = statements.get(&name).cloned().ok_or_else(|| {
        DbError::new(
            sqlstate::INVALID_SQL_STATEMENT_NAME,
            format!("prepared statement \"{name}\" does not exist"),
        )
    })?;
    if b.parameters.len() != prep.param_types.len() {
        return Err(DbError::protocol(format!(
            "bind message supplies {} parameters, but prepared statement \"{name}\" requires {}",
            b.parameters.len(),
            prep.param_types.len()
        )));
    }
    let formats = &b.parameter_format_codes;
    let mut params = Vec::with_capacity(b.parameters.len());
    for (i, (value, ty)) in b.parameters.iter().zip(&prep.param_types).enumerate() {
        let format = match formats.len() {
            0 => 0,
            1 => formats[0],
            _ => formats.get(i).copied().unwrap_or(0),
        };
        let d = match value {
            None => Datum::Null,
            Some(bytes)
                if format == 1 && ty.type_len() > 0 && bytes.len() < ty.type_len() as usize =>
            {
                // As PostgreSQL's recv functions: reading past the value is a protocol error.
                return Err(DbError::protocol("insufficient data left in message"));
            }
            Some(bytes) if format == 1 => {
                crate::types::binary::decode_binary(*ty, bytes).map_err(|mut e| {
                    if e.code == sqlstate::INVALID_BINARY_REPRESENTATION {
                        e.message = format!("{} in bind parameter {}", e.message, i + 1);
                    }
                    e
                })?
            }
            Some(bytes) => {
                let s = std::str::from_utf8(bytes).map_err(|_| {
                    DbError::new("22021", "invalid byte sequence for encoding \"UTF8\"")
                })?;
                crate::types::text::parse_text(*ty, s, &Default::default())?
            }
        };
        params.push(d);
    }
    Ok(Portal {
        statement: prep,
        params,
        result_formats: b.result_column_format_codes.clone(),
        state: PortalState::NotStarted,
    })
}

fn describe_message(
    conn: &mut Connection,
    statements: &HashMap<String, Arc<Prepared>>,
    portals: &HashMap<String, Portal>,
    target: u8,
    name: &str,
) -> DbResult<()> {
    if target == b'S' {
        let prep = statements.get(name).ok_or_else(|| {
            DbError::new(
                sqlstate::INVALID_SQL_STATEMENT_NAME,
                format!("prepared statement \"{name}\" does not exist"),
            )
        })?;
        conn.send(B::ParameterDescription(ParameterDescription::new(
            prep.param_types.iter().map(|t| t.oid()).collect(),
        )));
        match &prep.fields {
            Some(f) => conn.send(B::RowDescription(row_description(f, &[]))),
            None => conn.send(B::NoData(NoData::new())),
        }
    } else {
        let portal = portals.get(name).ok_or_else(|| {
            DbError::new(
                sqlstate::INVALID_CURSOR_STATE,
                format!("portal \"{name}\" does not exist"),
            )
        })?;
        match &portal.statement.fields {
            Some(f) => conn.send(B::RowDescription(row_description(
                f,
                &portal.result_formats,
            ))),
            None => conn.send(B::NoData(NoData::new())),
        }
    }
    Ok(())
}

fn format_for(formats: &[i16], i: usize) -> i16 {
    match formats.len() {
        0 => 0,
        1 => formats[0],
        _ => formats.get(i).copied().unwrap_or(0),
    }
}

fn row_description(fields: &[Field], formats: &[i16]) -> RowDescription {
    RowDescription::new(
        fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                FieldDescription::new(
                    f.name.clone(),
                    f.table_oid as i32,
                    f.column_id,
                    f.data_type.oid(),
                    f.data_type.type_len(),
                    f.data_type.type_modifier(),
                    format_for(formats, i),
                )
            })
            .collect(),
    )
}

async fn execute_portal(
    conn: &mut Connection,
    session: &mut Session,
    portal: &mut Portal,
    max_rows: i32,
) -> DbResult<()> {
    if let PortalState::NotStarted = portal.state {
        if let Some(copy) = &portal.statement.ingest_copy {
            portal.state = PortalState::Done { tag: None };
            return match session.begin_ingest_copy(copy).await? {
                StatementResult::CopyIn(copy) => {
                    let tag = copy_in(conn, session, copy).await?;
                    conn.send(B::CommandComplete(CommandComplete::new(tag)));
                    Ok(())
                }
                other => stream_result(conn, other, &portal.result_formats, &session.eval_context().format, false)
                    .await
                    .map(|_| ()),
            };
        }
        if let Some(role) = &portal.statement.role {
            portal.state = PortalState::Done { tag: None };
            let result = session.role_statement(role).await;
            conn.send_notices(session);
            return stream_result(
                conn,
                result?,
                &portal.result_formats,
                &session.eval_context().format,
                false,
            )
            .await
            .map(|_| ());
        }
        let Some(stmt) = portal.statement.stmt.clone() else {
            conn.send(B::EmptyQueryResponse(EmptyQueryResponse::new()));
            portal.state = PortalState::Done { tag: None };
            return Ok(());
        };
        let params = std::mem::take(&mut portal.params);
        let fast = if params.is_empty() && matches!(stmt, Statement::Insert(_)) {
            session.try_fast_insert(&portal.statement.sql).await
        } else {
            None
        };
        let result = match fast {
            Some(r) => r?,
            None => {
                let executed = session
                    .execute(&stmt, params, &portal.statement.param_types)
                    .await;
                conn.send_notices(session);
                executed?
            }
        };
        portal.state = match result {
            StatementResult::Rows { op, tag, .. } => PortalState::Streaming {
                op,
                rows: 0,
                tag,
                buffered: None,
            },
            StatementResult::CopyIn(copy) => {
                let tag = copy_in(conn, session, copy).await?;
                conn.send(B::CommandComplete(CommandComplete::new(tag)));
                portal.state = PortalState::Done { tag: None };
                return Ok(());
            }
            other => {
                stream_result(
                    conn,
                    other,
                    &portal.result_formats,
                    &session.eval_context().format,
                    false,
                )
                .await?;
                portal.state = PortalState::Done { tag: None };
                return Ok(());
            }
        };
    }
    match &mut portal.state {
        PortalState::Streaming {
            op,
            rows,
            tag,
            buffered,
        } => {
            let limit = if max_rows <= 0 {
                u64::MAX
            } else {
                max_rows as u64
            };
            let fmt = session.eval_context().format;
            let suspended = send_rows(
                conn,
                op,
                buffered,
                &portal.result_formats,
                limit,
                rows,
                &fmt,
            )
            .await?;
            if suspended {
                conn.send(B::PortalSuspended(PortalSuspended::new()));
            } else {
                conn.send(B::CommandComplete(CommandComplete::new(format!(
                    "{tag} {rows}"
                ))));
                portal.state = PortalState::Done {
                    tag: Some(tag.clone()),
                };
            }
            Ok(())
        }
        PortalState::Done { tag: Some(tag) } => {
            conn.send(B::CommandComplete(CommandComplete::new(format!("{tag} 0"))));
            Ok(())
        }
        PortalState::Done { tag: None } => Err(DbError::new(
            sqlstate::INVALID_CURSOR_STATE,
            "portal has already been run to completion",
        )),
        PortalState::NotStarted => Ok(()),
    }
}

/// Sends up to `limit` rows; returns true when rows remain (portal suspended).
async fn send_rows(
    conn: &mut Connection,
    op: &mut BoxedOperator,
    buffered: &mut Option<(crate::exec::vector::Batch, usize)>,
    formats: &[i16],
    limit: u64,
    rows: &mut u64,
    fmt: &FormatContext,
) -> DbResult<bool> {
    let mut sent = 0u64;
    loop {
        let (batch, start) = match buffered.take() {
            Some(b) => b,
            None => match crate::exec::operators::next_contained(op).await? {
                Some(b) => (b, 0),
                None => return Ok(false),
            },
        };
        let mut i = start;
        let capacity = encode::row_capacity(&batch);
        while i < batch.len {
            if sent == limit {
                *buffered = Some((batch, i));
                return Ok(true);
            }
            let mut row = DataRow::new(BytesMut::with_capacity(capacity), batch.columns.len() as i16);
            encode::encode_row(&batch, i, formats, fmt, &mut row.data);
            conn.send(B::DataRow(row));
            sent += 1;
            *rows += 1;
            i += 1;
        }
        conn.maybe_flush().await?;
    }
}

/// Sends a statement's whole result (simple protocol, or a non-query in extended).
async fn stream_result(
    conn: &mut Connection,
    result: StatementResult,
    formats: &[i16],
    fmt: &FormatContext,
    describe: bool,
) -> DbResult<u64> {
    match result {
        StatementResult::Rows {
            fields,
            mut op,
            tag,
        } => {
            if describe {
                conn.send(B::RowDescription(row_description(&fields, formats)));
            }
            let mut rows = 0;
            let mut buffered = None;
            send_rows(
                conn,
                &mut op,
                &mut buffered,
                formats,
                u64::MAX,
                &mut rows,
                fmt,
            )
            .await?;
            conn.send(B::CommandComplete(CommandComplete::new(format!(
                "{tag} {rows}"
            ))));
            Ok(rows)
        }
        StatementResult::Batches {
            fields,
            batches,
            tag,
        } => {
            if describe {
                conn.send(B::RowDescription(row_description(&fields, formats)));
            }
            let mut rows = 0;
            for b in &batches {
                let capacity = encode::row_capacity(b);
                for i in 0..b.len {
                    let mut row = DataRow::new(BytesMut::with_capacity(capacity), b.columns.len() as i16);
                    encode::encode_row(b, i, formats, fmt, &mut row.data);
                    conn.send(B::DataRow(row));
                    rows += 1;
                }
            }
            conn.send(B::CommandComplete(CommandComplete::new(tag)));
            Ok(rows)
        }
        StatementResult::Command(tag) => {
            conn.send(B::CommandComplete(CommandComplete::new(tag)));
            Ok(0)
        }
        StatementResult::Empty => {
            conn.send(B::EmptyQueryResponse(EmptyQueryResponse::new()));
            Ok(0)
        }
        StatementResult::CopyIn(_) => Err(DbError::internal("COPY result reached the row encoder")),
        StatementResult::CopyOut {
            fields,
            mut op,
            options,
            progress,
        } => {
            // Counts what is handed to the connection: bytes of CopyData, rows.
            let sent = |bytes: usize, rows: usize| {
                if let Some(p) = &progress {
                    p.add_bytes(bytes as u64);
                    p.add_tuples(rows as u64);
                }
            };
            let format = if options.format == crate::ingest::copy::CopyFormat::Binary {
                1
            } else {
                0
            };
            conn.send(B::CopyOutResponse(CopyOutResponse::new(
                format,
                fields.len() as i16,
                vec![format as i16; fields.len()],
            )));
            // One CopyData per row, as PostgreSQL sends them (the binary
            // header goes with the first row, a CSV header and the binary
            // trailer alone): `ends` marks where each message ends in `buf`.
            let send_rows = |conn: &mut Connection, buf: &mut Vec<u8>, ends: &mut Vec<usize>| {
                let data = bytes::Bytes::from(std::mem::take(buf));
                let mut start = 0;
                for &end in ends.iter() {
                    conn.send(B::CopyData(CopyData::new(data.slice(start..end))));
                    start = end;
                }
                if start < data.len() {
                    conn.send(B::CopyData(CopyData::new(data.slice(start..))));
                }
                ends.clear();
                data.len()
            };
            let mut buf = Vec::with_capacity(FLUSH_BYTES);
            let mut ends: Vec<usize> = Vec::new();
            if format == 1 {
                copy_out::binary_header(&mut buf);
            } else if options.header {
                copy_out::csv_header(
                    &fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
                    &options,
                    &mut buf,
                );
                ends.push(buf.len());
            }
            let mut rows = 0u64;
            while let Some(batch) = crate::exec::operators::next_contained(&mut op).await? {
                copy_out::encode_rows(&batch, &options, fmt, &mut buf, &mut ends);
                rows += batch.len as u64;
                sent(0, batch.len);
                if buf.len() >= FLUSH_BYTES {
                    let n = send_rows(conn, &mut buf, &mut ends);
                    sent(n, 0);
                    conn.maybe_flush().await?;
                }
            }
            if format == 1 {
                // after the last row's end: a message of its own
                copy_out::binary_trailer(&mut buf);
            }
            if !buf.is_empty() {
                let n = send_rows(conn, &mut buf, &mut ends);
                sent(n, 0);
            }
            // The COPY has ended: its row goes before the client can see it end.
            drop(progress);
            conn.send(B::CopyDone(CopyDone::new()));
            conn.send(B::CommandComplete(CommandComplete::new(format!(
                "COPY {rows}"
            ))));
            Ok(rows)
        }
    }
}

/// COPY … FROM STDIN: CopyInResponse, then CopyData until CopyDone (commit)
/// or CopyFail (nothing is kept). Flush and Sync are ignored meanwhile, as
/// PostgreSQL does. After an error the remaining CopyData is read and dropped
/// until the client ends the copy; then the error is reported.
async fn copy_in(
    conn: &mut Connection,
    session: &mut Session,
    mut copy: Box<crate::sql::session::CopyIn>,
) -> DbResult<String> {
    let format = if copy.binary { 1 } else { 0 };
    conn.send(B::CopyInResponse(CopyInResponse::new(
        format,
        copy.columns as i16,
        vec![format as i16; copy.columns],
    )));
    conn.flush().await?;
    let mut failed: Option<DbError> = None;
    loop {
        let Some(msg) = conn.read_message().await? else {
            session.copy_abort(&mut copy).await;
            return Err(DbError::new(
                sqlstate::CONNECTION_EXCEPTION,
                "connection closed during COPY",
            ));
        };
        match msg {
            F::CopyData(d) => {
                if failed.is_none() {
                    if let Err(e) = session.copy_data(&mut copy, &d.data).await {
                        session.copy_abort(&mut copy).await;
                        failed = Some(e);
                    }
                }
            }
            F::CopyDone(_) => {
                if let Some(e) = failed {
                    return Err(e);
                }
                return match session.copy_done(&mut copy).await {
                    Ok(rows) => Ok(format!("COPY {rows}")),
                    Err(e) => {
                        session.copy_abort(&mut copy).await;
                        Err(e)
                    }
                };
            }
            F::CopyFail(f) => {
                session.copy_abort(&mut copy).await;
                return Err(failed.unwrap_or_else(|| {
                    DbError::new(
                        sqlstate::QUERY_CANCELED,
                        format!("COPY from stdin failed: {}", f.message),
                    )
                }));
            }
            F::Flush(_) | F::Sync(_) => {}
            F::Terminate(_) => {
                session.copy_abort(&mut copy).await;
                return Err(DbError::new(
                    sqlstate::CONNECTION_EXCEPTION,
                    "connection closed during COPY",
                ));
            }
            _ => {
                session.copy_abort(&mut copy).await;
                return Err(DbError::protocol(
                    "unexpected message type during COPY from stdin",
                ));
            }
        }
    }
}
