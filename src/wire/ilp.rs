//! ILP over TCP (`--ilp`, default 127.0.0.1:9009), QuestDB's fire-and-forget
//! transport: newline-delimited line protocol, no responses. Each read's
//! complete lines are written (durable per the WAL's group commit) before the
//! next read, so a sender faster than the shards is slowed by TCP flow control.
//! A malformed or conflicting line is logged with the peer and line number,
//! the lines before it are kept, and the connection is closed: nothing from
//! that line on is written. A last line without a newline is written when the
//! peer closes cleanly.
//! Must not: parse line protocol or decide tables (the session does).

use std::sync::Arc;

use tokio::io::AsyncReadExt;

use crate::ingest::line_protocol as lp;
use crate::server::Server;
use crate::sql::session::line_protocol::{server_time_ns, CatalogColumnTypes, LINE_PROTOCOL_MAX_LINE_BYTES};
use crate::sql::session::Session;

/// Bytes read from the socket per write (about 3,000 TSBS rows).
const READ_BYTES: usize = 1 << 20;

/// Where ILP writes land.
#[derive(Debug, Clone)]
pub struct IlpConfig {
    pub database: String,
    pub schema: String,
}

/// Serves one ILP connection on the current shard until the peer closes it or sends a bad line.
pub async fn serve(mut stream: tokio::net::TcpStream, server: Arc<Server>, config: Arc<IlpConfig>, shard: usize) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "unknown peer".to_string(), |a| a.to_string());
    let mut session = Session::new(server.clone(), config.database.clone(), "brewric".into(), shard);
    let mut options = lp::ParseOptions {
        precision: lp::Precision::Nanoseconds,
        default_time_ns: 0,
        stop_at_first_error: true,
        first_line_number: 1,
        first_byte_offset: 0,
    };
    let mut buffer: Vec<u8> = Vec::with_capacity(READ_BYTES * 2);
    loop {
        buffer.reserve(READ_BYTES);
        let n = match stream.read_buf(&mut buffer).await {
            Ok(n) => n,
            Err(e) => {
                // Not a clean close: the incomplete last line is not written.
                eprintln!("brewricd: ilp {peer}: read failed: {e}");
                return;
            }
        };
        let at_end = n == 0;
        options.default_time_ns = server_time_ns(lp::Precision::Nanoseconds);
        let mut known = CatalogColumnTypes::new(server.catalog.snapshot(), &config.database, &config.schema);
        let mut parsed = lp::ParsedLines::default();
        lp::parse_lines(&buffer, at_end, &options, &mut known, &mut parsed);
        let measurements = parsed.take_measurements();
        if let Err(e) = session.store_line_protocol(&config.schema, measurements).await {
            eprintln!(
                "brewricd: ilp {peer}: lines {}..{} not written, closing: {}",
                options.first_line_number,
                parsed.next_line_number,
                e.message
            );
            return;
        }
        if let Some(e) = parsed.errors.first() {
            eprintln!("brewricd: ilp {peer}: line {}: {e}; closing the connection", e.line);
            return;
        }
        buffer.drain(..parsed.consumed);
        options.first_byte_offset += parsed.consumed as u64;
        options.first_line_number = parsed.next_line_number;
        if at_end {
            return;
        }
        if buffer.len() > LINE_PROTOCOL_MAX_LINE_BYTES {
            eprintln!(
                "brewricd: ilp {peer}: line {} is longer than {LINE_PROTOCOL_MAX_LINE_BYTES} bytes; closing the connection",
                options.first_line_number
            );
            return;
        }
    }
}
