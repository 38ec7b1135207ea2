//! The InfluxDB-compatible HTTP API (`--http`, default 127.0.0.1:8086), so
//! that Telegraf, TSBS's influx loader and other agents write to Brewric with
//! only a URL change: `POST /write` (v1), `POST /api/v2/write` (v2), `GET|HEAD
//! /ping`, `GET /health`, and `/query` for the statements agents send before
//! writing (`CREATE DATABASE`, `SHOW DATABASES`); and `PUT
//! /v1/recordings/<name>?schema=<schema>` for MCAP recordings (the body is
//! the file, streamed; `Session::begin_mcap_stream`). An InfluxDB database or
//! bucket is a Brewric schema; every measurement a table in it.
//! Acknowledged (204) means durable: the rows went through the WAL like any
//! committed write. Well-formed lines of a body with bad ones are still
//! written, and the answer is InfluxDB's `partial write` 400.
//! Must not: parse line protocol (`ingest::line_protocol`) or decide tables
//! and columns (`Session::store_line_protocol`).

use std::collections::HashMap;
use std::io::Read;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use crate::ingest::line_protocol as lp;
use crate::server::Server;
use crate::sql::session::line_protocol::{server_time_ns, CatalogColumnTypes};
use crate::sql::session::Session;

/// The version agents are told (they check the major version of /ping's header).
const INFLUXDB_VERSION: &str = "1.8.10";

/// The HTTP API's settings.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest request body, before and after decompression.
    pub max_body: usize,
    /// When set, every request must present it (Token/Bearer header, Basic
    /// password or the `p` query parameter); otherwise 401.
    pub token: Option<String>,
    /// The database whose schemas receive the writes.
    pub database: String,
    /// Write requests in flight at once, over all connections; beyond it, 503 with Retry-After.
    pub max_in_flight: usize,
}

/// State shared by every connection of the HTTP API.
pub struct HttpState {
    pub server: Arc<Server>,
    pub config: HttpConfig,
    in_flight: AtomicUsize,
}

impl HttpState {
    pub fn new(server: Arc<Server>, config: HttpConfig) -> HttpState {
        HttpState {
            server,
            config,
            in_flight: AtomicUsize::new(0),
        }
    }
}

/// Serves one HTTP/1.1 connection (keep-alive, `Expect: 100-continue`) on the current shard.
pub async fn serve(stream: tokio::net::TcpStream, state: Arc<HttpState>, shard: usize) {
    let io = hyper_util::rt::TokioIo::new(stream);
    let state = Rc::new((state, shard));
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let state = state.clone();
        async move { Ok::<_, std::convert::Infallible>(handle(req, &state.0, state.1).await) }
    });
    if let Err(e) = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, service)
        .await
    {
        if !e.is_incomplete_message() {
            eprintln!("brewricd: http connection: {e}");
        }
    }
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, body: Option<serde_json::Value>) -> Reply {
    let mut b = Response::builder()
        .status(status)
        .header("X-Influxdb-Version", INFLUXDB_VERSION)
        .header("X-Influxdb-Build", "OSS")
        .header("Content-Type", "application/json");
    if status == StatusCode::UNAUTHORIZED {
        b = b.header("WWW-Authenticate", "Basic realm=\"InfluxDB\"");
    }
    let bytes = body.map_or_else(Bytes::new, |v| Bytes::from(v.to_string()));
    b.body(Full::new(bytes)).unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn error(status: StatusCode, message: impl Into<String>) -> Reply {
    reply(status, Some(serde_json::json!({ "error": message.into() })))
}

async fn handle(req: Request<Incoming>, state: &Arc<HttpState>, shard: usize) -> Reply {
    let params = query_params(req.uri().query().unwrap_or(""));
    let path = req.uri().path().trim_end_matches('/').to_string();
    match (req.method(), path.as_str()) {
        (&Method::GET | &Method::HEAD, "/ping") => return reply(StatusCode::NO_CONTENT, None),
        (&Method::GET, "/health") => {
            return reply(
                StatusCode::OK,
                Some(serde_json::json!({
                    "name": "brewric", "message": "ready for queries and writes", "status": "pass",
                    "checks": [], "version": env!("CARGO_PKG_VERSION"),
                })),
            )
        }
        _ => {}
    }
    if !authorized(&req, &params, &state.config) {
        return error(StatusCode::UNAUTHORIZED, "authorization failed");
    }
    match (req.method(), path.as_str()) {
        (&Method::POST, "/write") => {
            let Some(schema) = params.get("db").filter(|d| !d.is_empty()).cloned() else {
                return error(StatusCode::BAD_REQUEST, "database is required");
            };
            let precision = match params.get("precision").map(String::as_str) {
                None | Some("") => lp::Precision::Nanoseconds,
                Some(p) => match lp::Precision::parse_v1(p) {
                    Some(p) => p,
                    None => {
                        return error(StatusCode::BAD_REQUEST, format!("invalid precision \"{p}\" (use n, u, ms, s, m or h)"))
                    }
                },
            };
            write(req, state, shard, schema, precision).await
        }
        (&Method::POST, "/api/v2/write") => {
            let Some(schema) = params.get("bucket").filter(|d| !d.is_empty()).cloned() else {
                return error(StatusCode::BAD_REQUEST, "bucket is required");
            };
            let precision = match params.get("precision").map(String::as_str) {
                None | Some("") => lp::Precision::Nanoseconds,
                Some(p) => match lp::Precision::parse_v2(p) {
                    Some(p) => p,
                    None => return error(StatusCode::BAD_REQUEST, format!("invalid precision \"{p}\" (use ns, us, ms or s)")),
                },
            };
            write(req, state, shard, schema, precision).await
        }
        (&Method::GET | &Method::POST, "/query") => query(req, params, state, shard).await,
        (&Method::PUT, p) if p == "/v1/recordings" || p.starts_with("/v1/recordings/") => {
            let Some(name) = recording_name(p.strip_prefix("/v1/recordings/").unwrap_or("")) else {
                return error(StatusCode::BAD_REQUEST, "the recording's name is the last path segment: PUT /v1/recordings/<name>?schema=<schema>");
            };
            let schema = params.get("schema").filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| "public".to_string());
            put_recording(req, state, shard, schema, name).await
        }
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}

/// A path segment, percent-decoded; None when empty or holding a `/`.
fn recording_name(segment: &str) -> Option<String> {
    let query = format!("n={}", segment.replace('+', "%2B"));
    let (_, name) = form_urlencoded::parse(query.as_bytes()).next()?;
    (!name.is_empty() && !name.contains('/')).then(|| name.into_owned())
}

/// `PUT /v1/recordings/<name>?schema=<schema>`: the body is an MCAP file,
/// streamed into the schema's topic tables as one atomic ingest; the answer
/// is the recording's summary (topics, message counts, bytes, time range).
async fn put_recording(req: Request<Incoming>, state: &Arc<HttpState>, shard: usize, schema: String, name: String) -> Reply {
    if state.in_flight.fetch_add(1, Ordering::AcqRel) >= state.config.max_in_flight {
        state.in_flight.fetch_sub(1, Ordering::AcqRel);
        let mut r = error(StatusCode::SERVICE_UNAVAILABLE, "write queue is full; retry later");
        r.headers_mut().insert("Retry-After", hyper::header::HeaderValue::from_static("1"));
        return r;
    }
    let _slot = WriteSlot(&state.in_flight);
    let mut session = Session::new(state.server.clone(), state.config.database.clone(), "brewric".into(), shard);
    let mut upload = match session.begin_mcap_stream(&schema, &name, "HTTP").await {
        Ok(u) => u,
        Err(e) => return db_error(e),
    };
    let mut body = req.into_body();
    let result: Result<(), crate::error::DbError> = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                crate::error::DbError::new(crate::error::sqlstate::CONNECTION_EXCEPTION, format!("reading the request body: {e}"))
            })?;
            if let Some(data) = frame.data_ref() {
                session.mcap_copy_data(&mut upload, data).await?;
            }
        }
        Ok(())
    }
    .await;
    let done = match result {
        Ok(()) => session.mcap_copy_done(&mut upload).await,
        Err(e) => Err(e),
    };
    match done {
        Ok(summary) => reply(StatusCode::OK, Some(summary.to_json())),
        Err(e) => {
            session.mcap_copy_abort(&mut upload).await;
            db_error(e)
        }
    }
}

/// A failed ingest as an HTTP answer: the client's fault (400, 409 for a
/// recording stored already) or the server's (500).
fn db_error(e: crate::error::DbError) -> Reply {
    use crate::error::sqlstate;
    let status = match e.code {
        sqlstate::UNIQUE_VIOLATION | sqlstate::DUPLICATE_TABLE => StatusCode::CONFLICT,
        code if code.starts_with("22") || code.starts_with("42") || code.starts_with("54") => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.into_message())
}

/// `Authorization: Token t` / `Bearer t` / Basic with password t, or `?p=t`.
fn authorized(req: &Request<Incoming>, params: &HashMap<String, String>, config: &HttpConfig) -> bool {
    let Some(token) = &config.token else { return true };
    if params.get("p") == Some(token) {
        return true;
    }
    let Some(header) = req.headers().get(hyper::header::AUTHORIZATION).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let (scheme, value) = header.split_once(' ').unwrap_or((header, ""));
    match scheme.to_ascii_lowercase().as_str() {
        // InfluxDB 1.8's `Token user:password` and v2's `Token <token>`.
        "token" | "bearer" => value == token || value.split_once(':').is_some_and(|(_, p)| p == token),
        "basic" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(value.trim())
                .ok()
                .and_then(|d| String::from_utf8(d).ok())
                .is_some_and(|d| d.split_once(':').is_some_and(|(_, p)| p == token))
        }
        _ => false,
    }
}

/// Holds one of the bounded write slots; released on drop.
struct WriteSlot<'a>(&'a AtomicUsize);

impl Drop for WriteSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

async fn write(req: Request<Incoming>, state: &Arc<HttpState>, shard: usize, schema: String, precision: lp::Precision) -> Reply {
    // Back-pressure: past the bounded number of writes in flight, senders are
    // told to come back (Telegraf's v2 output and TSBS honour 503 + Retry-After).
    if state.in_flight.fetch_add(1, Ordering::AcqRel) >= state.config.max_in_flight {
        state.in_flight.fetch_sub(1, Ordering::AcqRel);
        let mut r = error(StatusCode::SERVICE_UNAVAILABLE, "write queue is full; retry later");
        r.headers_mut().insert("Retry-After", hyper::header::HeaderValue::from_static("1"));
        return r;
    }
    let _slot = WriteSlot(&state.in_flight);
    let gzip = req
        .headers()
        .get(hyper::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("gzip"));
    let body = match read_body(req, state.config.max_body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let body = if gzip {
        match gunzip(&body, state.config.max_body) {
            Ok(b) => b,
            Err(r) => return *r,
        }
    } else {
        body.to_vec()
    };
    let mut session = Session::new(state.server.clone(), state.config.database.clone(), "brewric".into(), shard);
    let options = lp::ParseOptions {
        precision,
        default_time_ns: server_time_ns(precision),
        stop_at_first_error: false,
        first_line_number: 1,
        first_byte_offset: 0,
    };
    let mut known = CatalogColumnTypes::new(state.server.catalog.snapshot(), &state.config.database, &schema);
    let mut parsed = lp::ParsedLines::default();
    lp::parse_lines(&body, true, &options, &mut known, &mut parsed);
    let dropped = parsed.lines_failed;
    let first_error = parsed
        .errors
        .first()
        .map(|e| format!("{e} (line {})", e.line));
    if parsed.lines_ok == 0 {
        return match first_error {
            // Nothing parsed: InfluxDB's plain parse error, every bad line's message.
            Some(_) => error(
                StatusCode::BAD_REQUEST,
                parsed
                    .errors
                    .iter()
                    .take(100)
                    .map(|e| format!("{e} (line {})", e.line))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            None => reply(StatusCode::NO_CONTENT, None),
        };
    }
    let measurements = parsed.take_measurements();
    if let Err(e) = session.store_line_protocol(&schema, measurements).await {
        let status = match e.code {
            crate::error::sqlstate::DATATYPE_MISMATCH | crate::error::sqlstate::NOT_NULL_VIOLATION => StatusCode::BAD_REQUEST,
            crate::error::sqlstate::UNIQUE_VIOLATION | crate::error::sqlstate::WRONG_OBJECT_TYPE => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        return error(status, e.into_message());
    }
    match first_error {
        Some(first) => error(StatusCode::BAD_REQUEST, format!("partial write: {first} dropped={dropped}")),
        None => reply(StatusCode::NO_CONTENT, None),
    }
}

/// The whole body, or 413 past `max` bytes.
async fn read_body(req: Request<Incoming>, max: usize) -> Result<Bytes, Reply> {
    let too_large = || error(StatusCode::PAYLOAD_TOO_LARGE, "Request Entity Too Large");
    let declared = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let mut body = req.into_body();
    let mut out = Vec::with_capacity(declared.unwrap_or(0).min(max));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| error(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > max {
                return Err(too_large());
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(out))
}

/// A gzip body (several members allowed) inflated, at most `max` bytes.
fn gunzip(body: &[u8], max: usize) -> Result<Vec<u8>, Box<Reply>> {
    let mut out = Vec::with_capacity((body.len() * 4).min(max));
    let mut decoder = flate2::read::MultiGzDecoder::new(body).take(max as u64 + 1);
    decoder
        .read_to_end(&mut out)
        .map_err(|e| Box::new(error(StatusCode::BAD_REQUEST, format!("unable to decode gzip body: {e}"))))?;
    if out.len() > max {
        return Err(Box::new(error(StatusCode::PAYLOAD_TOO_LARGE, "Request Entity Too Large")));
    }
    Ok(out)
}

/// `/query`: the statements agents send before writing, answered in InfluxDB's JSON.
async fn query(req: Request<Incoming>, mut params: HashMap<String, String>, state: &Arc<HttpState>, shard: usize) -> Reply {
    let is_form = req
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if req.method() == Method::POST {
        let body = match read_body(req, state.config.max_body).await {
            Ok(b) => b,
            Err(r) => return r,
        };
        if is_form || !body.is_empty() {
            params.extend(query_params(&String::from_utf8_lossy(&body)));
        }
    }
    let Some(q) = params.get("q").cloned() else {
        return error(StatusCode::BAD_REQUEST, "missing required parameter \"q\"");
    };
    let mut session = Session::new(state.server.clone(), state.config.database.clone(), "brewric".into(), shard);
    let mut results = Vec::new();
    for (i, statement) in q.split(';').map(str::trim).filter(|s| !s.is_empty()).enumerate() {
        results.push(influxql_statement(&mut session, i, statement));
    }
    reply(StatusCode::OK, Some(serde_json::json!({ "results": results })))
}

/// One InfluxQL statement of the few agents send: CREATE DATABASE creates the
/// schema, SHOW DATABASES lists schemas; others get a per-statement error.
fn influxql_statement(session: &mut Session, id: usize, statement: &str) -> serde_json::Value {
    let words: Vec<&str> = statement.split_whitespace().collect();
    let upper: Vec<String> = words.iter().take(2).map(|w| w.to_ascii_uppercase()).collect();
    match upper.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["CREATE", "DATABASE"] => {
            let Some(name) = words.get(2).map(|n| unquote_influx_name(n)) else {
                return serde_json::json!({"statement_id": id, "error": "error parsing query: found EOF, expected identifier"});
            };
            match session.create_schema_if_absent(&name) {
                Ok(()) => serde_json::json!({ "statement_id": id }),
                Err(e) => serde_json::json!({ "statement_id": id, "error": e.message }),
            }
        }
        ["SHOW", "DATABASES"] => {
            let names: Vec<serde_json::Value> = session
                .schema_names()
                .into_iter()
                .map(|n| serde_json::json!([n]))
                .collect();
            serde_json::json!({
                "statement_id": id,
                "series": [{ "name": "databases", "columns": ["name"], "values": names }],
            })
        }
        _ => serde_json::json!({
            "statement_id": id,
            "error": format!("brewric answers only CREATE DATABASE and SHOW DATABASES here; query with SQL over the PostgreSQL protocol ({statement})"),
        }),
    }
}

fn unquote_influx_name(n: &str) -> String {
    let n = n.trim_end_matches(';');
    if n.len() >= 2 && n.starts_with('"') && n.ends_with('"') {
        n[1..n.len() - 1].replace("\\\"", "\"")
    } else {
        n.to_string()
    }
}

/// `a=1&b=x%20y` decoded (a form body too); the last of a repeated name wins.
fn query_params(query: &str) -> HashMap<String, String> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}
