//! MCAP recordings and the ROS 2 messages in them, decoded into column
//! batches: one table per topic (plus child tables for sequences of
//! structs), ready for the session to create tables and append rows.
//!
//! Owns:
//! - the MCAP container (`reader`): every record of the specification,
//!   read two ways. [`McapStream`] is sans-io: it is fed bytes in pieces of
//!   any size (COPY's 64 KiB CopyData chunks, an HTTP body), holds at most
//!   one record plus the last piece, expands chunks and yields records in
//!   file order, Schema and Channel records before the messages that use
//!   them. [`IndexedFile`] reads a whole file given as a slice (the caller
//!   maps it): Footer → summary (schemas, channels, statistics, indexes) and
//!   the list of chunks, each of which [`IndexedFile::chunk_records`] walks
//!   independently, so chunks can be decoded in parallel.
//! - the ROS 2 `ros2msg` schema text (`ros2msg`), the table layout derived
//!   from it (`layout`), the CDR decoder compiled once per schema into a
//!   flat program (`cdr`), and `json`/`jsonschema` channels (`json`).
//! - [`Channels`] (schema and channel registry, each channel's
//!   [`ChannelPlan`]: table name, layout, decoder) and [`Decoder`] (one per
//!   worker: messages → per-topic column builders → [`TopicBatch`]es).
//!
//! Must not: do I/O, touch storage, the WAL, the catalog or SQL. It never
//! decides whether a table exists or may be widened; it describes the
//! tables and fills columns.
//!
//! Naming (see `layout`): topic `/camera/image_raw` → table
//! `camera_image_raw` (leading `/` stripped, every byte that is not an
//! ASCII letter or digit becomes `_`, ASCII letters lowercased, a leading
//! digit gets a `t_` prefix, an empty name becomes `topic`). Nested struct
//! fields are flattened with `_` (`pose_pose_position_x`), sequences and
//! fixed arrays of structs become child tables `<table>_<field>`.
//!
//! Values: every timestamptz is i64 nanoseconds since 1970 (as everywhere
//! in Brewric). `builtin_interfaces/Time` → one timestamptz column (sec ·
//! 10⁹ + nanosec); `builtin_interfaces/Duration` → a bigint of nanoseconds
//! (lossless, and arithmetic on it is plain integer arithmetic).
//! Strings: invalid UTF-8 is replaced by U+FFFD and NUL bytes by U+FFFD as
//! well (a PostgreSQL text value can hold neither); each topic counts such
//! repairs in [`TopicBatch::repaired_strings`] so the caller can warn.
//!
//! Errors: one enum, [`McapError`]; every error names where it happened
//! (a [`Location`]: a file offset, or a chunk's offset and the offset inside
//! its uncompressed records), and decode errors name the channel, topic and
//! field.
//!
//! Driving it — a mapped file, chunk by chunk (each chunk can go to its own
//! thread with a clone of `channels`), falling back to the stream:
//!
//! ```no_run
//! use brewric::ingest::mcap::*;
//! # fn store(_: TopicBatch) {}
//! # fn run(file: &[u8]) -> Result<(), McapError> {
//! let reader = ReaderOptions::default();
//! let options = DecodeOptions { recording: "robot01".into(), blob_threshold: Some(64 << 10) };
//! if let Some(indexed) = IndexedFile::open(file, &reader)? {
//!     let channels = Channels::from_indexed(&indexed, options)?;
//!     for plan in channels.plans() {
//!         // Create the topic's tables here (the topic table and its child
//!         // tables, names and column types); a warning is a NOTICE.
//!         let (_tables, _notice) = (&plan.layout.tables, &plan.warning);
//!     }
//!     let mut buffer = ChunkBuffer::new();
//!     let mut decoder = Decoder::new(channels.clone());
//!     for chunk in &indexed.chunks {
//!         for record in indexed.chunk_records(chunk, &mut buffer)? {
//!             decoder.record(&record?)?;
//!         }
//!         decoder.take_batches_over(8192, 8 << 20).into_iter().for_each(store);
//!     }
//!     decoder.take_batches().into_iter().for_each(store);
//! } else {
//!     // No summary (or not usable): the same as COPY FROM STDIN does.
//!     let mut stream = McapStream::new(reader);
//!     let mut decoder = Decoder::new(Channels::new(options));
//!     for piece in file.chunks(64 << 10) {
//!         stream.feed(piece);
//!         while let Some(record) = stream.next_record()? {
//!             decoder.record(&record)?;
//!         }
//!     }
//!     stream.finish().into_result()?; // or accept Ending::Truncated
//!     decoder.take_batches().into_iter().for_each(store);
//! }
//! # Ok(()) }
//! ```

mod cdr;
mod decode;
mod json;
pub mod layout;
pub mod reader;
pub mod ros2msg;

use std::fmt;

use crate::error::{sqlstate, DbError};

pub use decode::{
    BlobRef, ChannelPlan, Channels, DecodeOptions, Decoder, Encoding, SchemaEntry, TableBatch,
    TopicBatch,
};
pub use layout::{table_name_for_topic, ColumnLayout, ColumnRole, TableLayout, TopicLayout};
pub use reader::{
    chunk_record_at, AttachmentIndex, AttachmentRecord, ChannelRecord, ChunkBuffer, ChunkIndex, ChunkRecord,
    ChunkRecords, ChunkRef, DataEnd, Ending, Footer, Header, IndexedFile, LinearReader, McapStream,
    MessageIndexRecord, MessageRecord, MetadataIndex, MetadataRecord, ReaderOptions, Record,
    RecordAt, SchemaRecord, Section, Statistics, SummaryOffset, MAGIC,
};
pub use ros2msg::{
    parse_ros2msg, BaseType, FieldDef, MessageDef, MessageSchema, Multiplicity, Primitive,
};

/// Where in a recording something is. Offsets are bytes from the start of
/// the file (the first magic byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    /// A record (or a byte) at this file offset.
    File(u64),
    /// A record inside a chunk: the chunk record's file offset and the
    /// offset inside the chunk's uncompressed records.
    InChunk { chunk: u64, offset: u64 },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(o) => write!(f, "offset {o}"),
            Location::InChunk { chunk, offset } => {
                write!(f, "offset {offset} inside the chunk at offset {chunk}")
            }
        }
    }
}

/// Everything that can go wrong reading a recording.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McapError {
    #[error("not an MCAP file: the magic bytes at offset {offset} are wrong")]
    NotMcap { offset: u64 },
    #[error("MCAP file truncated at offset {offset}: {detail}")]
    Truncated { offset: u64, detail: String },
    #[error("{what} at {at} is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        at: Location,
        what: &'static str,
        size: u64,
        limit: u64,
    },
    #[error("malformed {record} record at {at}: {detail}")]
    Malformed {
        at: Location,
        record: &'static str,
        detail: String,
    },
    #[error("{what} CRC mismatch at {at}: the file records {expected:#010x}, the data gives {actual:#010x}")]
    Crc {
        at: Location,
        what: &'static str,
        expected: u32,
        actual: u32,
    },
    #[error("the chunk at {at} fails to decompress ({compression}): {detail}")]
    Decompress {
        at: Location,
        compression: String,
        detail: String,
    },
    #[error("the chunk at {at} uses compression {compression:?}, which is not supported (only \"\", \"zstd\" and \"lz4\")")]
    UnsupportedCompression { at: Location, compression: String },
    #[error("{at}: {detail}")]
    Conflict { at: Location, detail: String },
    #[error(
        "message at {at} is on channel {channel_id}, which no Channel record defined before it"
    )]
    UnknownChannel { at: Location, channel_id: u16 },
    #[error("schema {schema_id} is not defined before it is used")]
    UnknownSchema { schema_id: u16 },
    #[error("data after the end magic at offset {offset}")]
    DataAfterEnd { offset: u64 },
    /// A schema text that does not parse (line numbers are 1-based within
    /// the schema's text).
    #[error("schema {schema:?}, line {line}: {detail}")]
    Schema {
        schema: String,
        line: usize,
        detail: String,
    },
    /// A message payload that does not decode; `offset` is the byte in the
    /// payload (counting the 4-byte encapsulation header) where it failed.
    #[error("field {field}: {detail} (at byte {offset} of the message)")]
    Message {
        field: String,
        offset: usize,
        detail: String,
    },
    #[error("field {field}: uint64 value {value} is out of range for type bigint")]
    Overflow { field: String, value: u64 },
    /// Any of the above, in a channel's context.
    #[error("{at}, channel {channel_id} (topic {topic}): {source}")]
    Channel {
        at: Location,
        channel_id: u16,
        topic: String,
        source: Box<McapError>,
    },
}

impl McapError {
    /// The SQLSTATE a client should see.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            McapError::TooLarge { .. } => sqlstate::PROGRAM_LIMIT_EXCEEDED,
            McapError::Overflow { .. } => sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            McapError::Message { .. } => sqlstate::INVALID_BINARY_REPRESENTATION,
            McapError::Channel { source, .. } => source.sqlstate(),
            _ => sqlstate::BAD_COPY_FILE_FORMAT,
        }
    }

    /// Wraps an error in a channel's context (location, id, topic).
    pub(crate) fn in_channel(self, at: Location, channel_id: u16, topic: &str) -> McapError {
        McapError::Channel {
            at,
            channel_id,
            topic: topic.to_string(),
            source: Box::new(self),
        }
    }
}

impl From<McapError> for DbError {
    fn from(e: McapError) -> DbError {
        DbError::new(e.sqlstate(), e.to_string())
    }
}

/// The crate's result type for this module.
pub type McapResult<T> = Result<T, McapError>;
