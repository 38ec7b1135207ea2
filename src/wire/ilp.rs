//! ILP over TCP (`--ilp`, default 127.0.0.1:9009), QuestDB's fire-and-forget
//! transport: newline-delimited line protocol, no responses. Each read's
//! complete lines are written (durable per the WAL's group commit) while the
//! next read is parsed, and no further read happens until they are, so a
//! sender faster than the shards is slowed by TCP flow control.
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

/// One read's complete lines, parsed and waiting to be written.
struct Chunk {
    /// The lines' bytes (kept for a second parse when the catalog changed meanwhile).
    bytes: Vec<u8>,
    options: lp::ParseOptions,
    /// The catalog the lines were parsed against.
    catalog: Arc<crate::catalog::Catalog>,
    parsed: lp::ParsedLines,
    /// The peer closed after these lines.
    at_end: bool,
}

/// Serves one ILP connection on the current shard until the peer closes it or sends a bad line.
/// Reading and parsing the next lines overlaps with writing the previous ones
/// (whose WAL group commit is mostly waiting): at most one read is parsed ahead.
pub async fn serve(mut stream: tokio::net::TcpStream, server: Arc<Server>, config: Arc<IlpConfig>, shard: usize) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "unknown peer".to_string(), |a| a.to_string());
    let mut session = Session::new(server.clone(), config.database.clone(), "brewric".into(), shard);
    let mut reader = ChunkReader {
        options: lp::ParseOptions {
            precision: lp::Precision::Nanoseconds,
            default_time_ns: 0,
            stop_at_first_error: true,
            first_line_number: 1,
            first_byte_offset: 0,
        },
        buffer: Vec::with_capacity(READ_BYTES * 2),
        spare: Vec::new(),
        server: &server,
        config: &config,
        peer: &peer,
    };
    let mut ready = match reader.next(&mut stream).await {
        Some(chunk) => chunk,
        None => return,
    };
    loop {
        // A chunk that ends the connection (closed, or stopped at a bad line) is written alone.
        let ends = ready.at_end || !ready.parsed.errors.is_empty();
        let (stored, next) = if ends {
            (write_chunk(&mut session, &server, &config, &peer, ready).await, None)
        } else {
            let (stored, next) =
                tokio::join!(write_chunk(&mut session, &server, &config, &peer, ready), reader.next(&mut stream));
            (stored, Some(next))
        };
        let Some(bytes) = stored else { return };
        reader.spare = bytes;
        match next.flatten() {
            Some(chunk) => ready = chunk,
            None => return,
        }
    }
}

/// Reads and parses a connection's input, a chunk of complete lines at a time.
struct ChunkReader<'a> {
    options: lp::ParseOptions,
    /// Bytes read and not yet parsed (an incomplete line).
    buffer: Vec<u8>,
    /// A written chunk's buffer, reused for the next read.
    spare: Vec<u8>,
    server: &'a Arc<Server>,
    config: &'a IlpConfig,
    peer: &'a str,
}

impl ChunkReader<'_> {
    /// The next chunk; None when the connection ends with nothing more to write.
    async fn next(&mut self, stream: &mut tokio::net::TcpStream) -> Option<Chunk> {
        loop {
            self.buffer.reserve(READ_BYTES);
            let n = match stream.read_buf(&mut self.buffer).await {
                Ok(n) => n,
                Err(e) => {
                    // Not a clean close: the incomplete last line is not written.
                    eprintln!("brewricd: ilp {}: read failed: {e}", self.peer);
                    return None;
                }
            };
            let at_end = n == 0;
            self.options.default_time_ns = server_time_ns(lp::Precision::Nanoseconds);
            let catalog = self.server.catalog.snapshot();
            let parsed = parse(&self.buffer, at_end, &self.options, &catalog, self.config);
            if parsed.consumed == 0 && parsed.errors.is_empty() && !at_end {
                if self.buffer.len() > LINE_PROTOCOL_MAX_LINE_BYTES {
                    eprintln!(
                        "brewricd: ilp {}: line {} is longer than {LINE_PROTOCOL_MAX_LINE_BYTES} bytes; closing the connection",
                        self.peer, self.options.first_line_number
                    );
                    return None;
                }
                continue;
            }
            // The chunk keeps its bytes; the unconsumed tail starts the next buffer.
            let mut rest = std::mem::take(&mut self.spare);
            rest.clear();
            rest.extend_from_slice(&self.buffer[parsed.consumed..]);
            let mut bytes = std::mem::replace(&mut self.buffer, rest);
            bytes.truncate(parsed.consumed);
            let options = self.options.clone();
            self.options.first_byte_offset += parsed.consumed as u64;
            self.options.first_line_number = parsed.next_line_number;
            return Some(Chunk { bytes, options, catalog, parsed, at_end });
        }
    }
}

fn parse(bytes: &[u8], at_end: bool, options: &lp::ParseOptions, catalog: &Arc<crate::catalog::Catalog>, config: &IlpConfig) -> lp::ParsedLines {
    let mut known = CatalogColumnTypes::new(catalog.clone(), &config.database, &config.schema);
    let mut parsed = lp::ParsedLines::default();
    lp::parse_lines(bytes, at_end, options, &mut known, &mut parsed);
    parsed
}

/// Writes a chunk's lines and logs its bad line. Returns the chunk's buffer
/// for reuse, or None when the connection must close.
async fn write_chunk(session: &mut Session, server: &Arc<Server>, config: &IlpConfig, peer: &str, mut chunk: Chunk) -> Option<Vec<u8>> {
    let catalog = server.catalog.snapshot();
    if !Arc::ptr_eq(&catalog, &chunk.catalog) {
        // A table or column came meanwhile: a line may now conflict with it,
        // which only a parse against the new catalog places at its line.
        // The chunk's bytes end where its parse stopped, so they parse alike otherwise.
        let mut reparsed = parse(&chunk.bytes, true, &chunk.options, &catalog, config);
        if reparsed.errors.is_empty() {
            // The bad line the first parse stopped at is not among the bytes.
            reparsed.errors = std::mem::take(&mut chunk.parsed.errors);
        }
        chunk.parsed = reparsed;
    }
    let Chunk { bytes, options, mut parsed, .. } = chunk;
    let measurements = parsed.take_measurements();
    if let Err(e) = session.store_line_protocol(&config.schema, measurements).await {
        eprintln!(
            "brewricd: ilp {peer}: lines {}..{} not written, closing: {}",
            options.first_line_number, parsed.next_line_number, e.message
        );
        return None;
    }
    if let Some(e) = parsed.errors.first() {
        eprintln!("brewricd: ilp {peer}: line {}: {e}; closing the connection", e.line);
        return None;
    }
    Some(bytes)
}
