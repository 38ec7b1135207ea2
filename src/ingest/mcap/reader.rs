//! The MCAP container: records, chunks, the summary section.
//!
//! Owns the byte-level format of the MCAP specification: magic, the
//! `opcode u8 | length u64 | body` framing, the body of every record
//! (borrowed views where the body holds bytes or strings, owned values for
//! the small index records), chunk decompression ("", "zstd", "lz4" frame)
//! into a reused buffer with the uncompressed CRC checked, the data-section
//! and summary CRCs, and two ways through a file:
//!
//! - [`LinearReader`] (top-level records) and [`McapStream`] (the same with
//!   chunks expanded in place): sans-io state machines fed bytes in pieces
//!   of any size. They keep one record (the largest one bounds memory, and
//!   [`ReaderOptions`] caps it) plus the unread part of the last piece; an
//!   attachment or unknown record over the cap is skipped as it streams by
//!   instead of being held. A file without summary, message indexes or end
//!   magic reads as far as it goes; [`Ending`] then says where and how it
//!   stopped, and the caller decides whether a truncated recording is
//!   acceptable.
//! - [`IndexedFile`]: the whole file as a slice (the caller maps it):
//!   Footer → summary section (schemas, channels, statistics, chunk,
//!   metadata and attachment indexes) plus one cheap walk over the data
//!   section's top-level records (jumping over chunk bodies) that lists the
//!   chunks and proves no message lies outside them. Each chunk is then an
//!   independent unit of work: [`IndexedFile::chunk_records`].
//!
//! Message payloads are never copied: a chunk's records are walked in
//! place in the caller's [`ChunkBuffer`] (or in the file itself when the
//! chunk is not compressed).
//!
//! Must not: interpret schemas or message payloads (that is `decode`), or
//! do I/O.

use std::io::Read;
use std::ops::Range;

use super::{Location, McapError, McapResult};

/// The 8 bytes that open and close an MCAP file.
pub const MAGIC: [u8; 8] = [0x89, b'M', b'C', b'A', b'P', b'0', b'\r', b'\n'];

pub(crate) mod op {
    pub const HEADER: u8 = 0x01;
    pub const FOOTER: u8 = 0x02;
    pub const SCHEMA: u8 = 0x03;
    pub const CHANNEL: u8 = 0x04;
    pub const MESSAGE: u8 = 0x05;
    pub const CHUNK: u8 = 0x06;
    pub const MESSAGE_INDEX: u8 = 0x07;
    pub const CHUNK_INDEX: u8 = 0x08;
    pub const ATTACHMENT: u8 = 0x09;
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    pub const STATISTICS: u8 = 0x0B;
    pub const METADATA: u8 = 0x0C;
    pub const METADATA_INDEX: u8 = 0x0D;
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    pub const DATA_END: u8 = 0x0F;
}

/// opcode + length.
const RECORD_HEADER: u64 = 9;

/// Where a Message record's payload starts, from the record's first byte:
/// opcode and length, then channel id, sequence, log and publish times.
pub const MESSAGE_PAYLOAD_OFFSET: u64 = RECORD_HEADER + MESSAGE_HEADER as u64;

/// The Chunk record at `offset` from its bytes after the opcode and length
/// (`body`): what reading one chunk back out of a kept file needs.
pub fn chunk_record_at(body: &[u8], offset: u64) -> McapResult<ChunkRecord<'_>> {
    let at = Location::File(offset);
    match parse_record(op::CHUNK, body, at, Some(offset + RECORD_HEADER))? {
        Record::Chunk(c) => Ok(c),
        _ => Err(McapError::Malformed { at, record: "Chunk", detail: "not a chunk".to_string() }),
    }
}
/// A Footer record: opcode, length, then 8 + 8 + 4 bytes of body.
const FOOTER_RECORD: u64 = RECORD_HEADER + 20;
/// channel_id u16, sequence u32, log_time u64, publish_time u64.
pub(crate) const MESSAGE_HEADER: usize = 22;

/// Limits and checks for reading.
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    /// Largest record (body length) held in memory; larger Attachment and
    /// unknown records are skipped while streaming, any other is an error.
    pub max_record_bytes: u64,
    /// Largest uncompressed chunk accepted.
    pub max_chunk_bytes: u64,
    /// Check chunk `uncompressed_crc`, the data section CRC (streaming) and
    /// the summary CRC where the file sets them (non-zero).
    pub verify_crcs: bool,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_record_bytes: 1 << 30,
            max_chunk_bytes: 1 << 30,
            verify_crcs: true,
        }
    }
}

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub struct Header<'a> {
    pub profile: &'a str,
    pub library: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// 0 = no summary section.
    pub summary_start: u64,
    pub summary_offset_start: u64,
    /// 0 = not set.
    pub summary_crc: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SchemaRecord<'a> {
    pub id: u16,
    pub name: &'a str,
    pub encoding: &'a str,
    pub data: &'a [u8],
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChannelRecord<'a> {
    pub id: u16,
    /// 0 = no schema.
    pub schema_id: u16,
    pub topic: &'a str,
    pub message_encoding: &'a str,
    pub metadata: Vec<(&'a str, &'a str)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageRecord<'a> {
    pub channel_id: u16,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: &'a [u8],
    /// The file offset of `data[0]` when the payload lies verbatim in the
    /// file (outside chunks, or in an uncompressed chunk); `None` inside a
    /// compressed chunk.
    pub data_file_offset: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkRecord<'a> {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub uncompressed_size: u64,
    /// 0 = not set.
    pub uncompressed_crc: u32,
    pub compression: &'a str,
    /// The (compressed) records.
    pub records: &'a [u8],
    /// File offset of `records[0]`.
    pub records_file_offset: u64,
}

/// One channel's message index after a chunk: (log_time, offset into the
/// chunk's uncompressed records) pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MessageIndexRecord<'a> {
    pub channel_id: u16,
    /// The raw array: 16 bytes per entry.
    pub entries: &'a [u8],
}

impl MessageIndexRecord<'_> {
    pub fn len(&self) -> usize {
        self.entries.len() / 16
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// (log_time, offset) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.entries
            .chunks_exact(16)
            .map(|e| (le_u64(&e[..8]), le_u64(&e[8..])))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkIndex {
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub chunk_start_offset: u64,
    /// The whole chunk record, opcode and length included.
    pub chunk_length: u64,
    pub message_index_offsets: Vec<(u16, u64)>,
    pub message_index_length: u64,
    pub compression: String,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AttachmentRecord<'a> {
    pub log_time: u64,
    pub create_time: u64,
    pub name: &'a str,
    pub media_type: &'a str,
    pub data: &'a [u8],
    /// 0 = not set.
    pub crc: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentIndex {
    pub offset: u64,
    pub length: u64,
    pub log_time: u64,
    pub create_time: u64,
    pub data_size: u64,
    pub name: String,
    pub media_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Statistics {
    pub message_count: u64,
    pub schema_count: u16,
    pub channel_count: u32,
    pub attachment_count: u32,
    pub metadata_count: u32,
    pub chunk_count: u32,
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub channel_message_counts: Vec<(u16, u64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRecord<'a> {
    pub name: &'a str,
    pub metadata: Vec<(&'a str, &'a str)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataIndex {
    pub offset: u64,
    pub length: u64,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryOffset {
    pub group_opcode: u8,
    pub group_start: u64,
    pub group_length: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataEnd {
    /// 0 = not set.
    pub data_section_crc: u32,
}

/// One record, its body parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Record<'a> {
    Header(Header<'a>),
    Footer(Footer),
    Schema(SchemaRecord<'a>),
    Channel(ChannelRecord<'a>),
    Message(MessageRecord<'a>),
    /// Only yielded by [`LinearReader`]; [`McapStream`] expands chunks.
    Chunk(ChunkRecord<'a>),
    MessageIndex(MessageIndexRecord<'a>),
    ChunkIndex(ChunkIndex),
    Attachment(AttachmentRecord<'a>),
    AttachmentIndex(AttachmentIndex),
    Statistics(Statistics),
    Metadata(MetadataRecord<'a>),
    MetadataIndex(MetadataIndex),
    SummaryOffset(SummaryOffset),
    DataEnd(DataEnd),
    /// An opcode this reader does not know (private records 0x80–0xFF, or
    /// a later version's): skipped by callers.
    Unknown {
        opcode: u8,
        body: &'a [u8],
    },
    /// An Attachment or unknown record over `max_record_bytes`, skipped
    /// while streaming without being held.
    Skipped {
        opcode: u8,
        length: u64,
    },
}

/// Which part of the file a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Data,
    /// After DataEnd (repeated schemas and channels, indexes, statistics).
    Summary,
}

/// A record and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordAt<'a> {
    pub at: Location,
    pub section: Section,
    pub record: Record<'a>,
}

fn record_name(opcode: u8) -> &'static str {
    match opcode {
        op::HEADER => "Header",
        op::FOOTER => "Footer",
        op::SCHEMA => "Schema",
        op::CHANNEL => "Channel",
        op::MESSAGE => "Message",
        op::CHUNK => "Chunk",
        op::MESSAGE_INDEX => "MessageIndex",
        op::CHUNK_INDEX => "ChunkIndex",
        op::ATTACHMENT => "Attachment",
        op::ATTACHMENT_INDEX => "AttachmentIndex",
        op::STATISTICS => "Statistics",
        op::METADATA => "Metadata",
        op::METADATA_INDEX => "MetadataIndex",
        op::SUMMARY_OFFSET => "SummaryOffset",
        op::DATA_END => "DataEnd",
        _ => "unknown",
    }
}

#[inline]
fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Reads the fields of one record body, naming the record and field in
/// its errors.
struct Fields<'a> {
    body: &'a [u8],
    pos: usize,
    record: &'static str,
    at: Location,
}

impl<'a> Fields<'a> {
    fn new(body: &'a [u8], opcode: u8, at: Location) -> Self {
        Fields {
            body,
            pos: 0,
            record: record_name(opcode),
            at,
        }
    }

    fn malformed(&self, detail: String) -> McapError {
        McapError::Malformed {
            at: self.at,
            record: self.record,
            detail,
        }
    }

    fn take(&mut self, n: u64, field: &str) -> McapResult<&'a [u8]> {
        let available = (self.body.len() - self.pos) as u64;
        if n > available {
            return Err(self.malformed(format!(
                "{field} needs {n} bytes but only {available} are left in the record"
            )));
        }
        let s = &self.body[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, field: &str) -> McapResult<[u8; N]> {
        let s = self.take(N as u64, field)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8(&mut self, field: &str) -> McapResult<u8> {
        Ok(self.array::<1>(field)?[0])
    }
    fn u16(&mut self, field: &str) -> McapResult<u16> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }
    fn u32(&mut self, field: &str) -> McapResult<u32> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }
    fn u64(&mut self, field: &str) -> McapResult<u64> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    fn str(&mut self, field: &str) -> McapResult<&'a str> {
        let len = self.u32(field)?;
        let bytes = self.take(len as u64, field)?;
        std::str::from_utf8(bytes)
            .map_err(|_| self.malformed(format!("{field} is not valid UTF-8")))
    }

    fn bytes_u32(&mut self, field: &str) -> McapResult<&'a [u8]> {
        let len = self.u32(field)?;
        self.take(len as u64, field)
    }

    fn bytes_u64(&mut self, field: &str) -> McapResult<&'a [u8]> {
        let len = self.u64(field)?;
        self.take(len, field)
    }

    /// A `Map<String, String>`: u32 byte length, then key/value pairs.
    fn string_map(&mut self, field: &str) -> McapResult<Vec<(&'a str, &'a str)>> {
        let bytes = self.bytes_u32(field)?;
        let mut inner = Fields {
            body: bytes,
            pos: 0,
            record: self.record,
            at: self.at,
        };
        let mut out = Vec::new();
        while inner.pos < bytes.len() {
            let k = inner.str(field)?;
            let v = inner.str(field)?;
            out.push((k, v));
        }
        Ok(out)
    }

    /// A `Map<u16, u64>`.
    fn id_map(&mut self, field: &str) -> McapResult<Vec<(u16, u64)>> {
        let bytes = self.bytes_u32(field)?;
        if bytes.len() % 10 != 0 {
            return Err(self.malformed(format!(
                "{field} is {} bytes, not a whole number of 10-byte entries",
                bytes.len()
            )));
        }
        Ok(bytes
            .chunks_exact(10)
            .map(|e| (u16::from_le_bytes([e[0], e[1]]), le_u64(&e[2..])))
            .collect())
    }

    fn rest(&mut self) -> &'a [u8] {
        let s = &self.body[self.pos..];
        self.pos = self.body.len();
        s
    }
}

/// Parses one record body. `body_file_offset` is the file offset of
/// `body[0]` when the body lies verbatim in the file.
pub(crate) fn parse_record<'a>(
    opcode: u8,
    body: &'a [u8],
    at: Location,
    body_file_offset: Option<u64>,
) -> McapResult<Record<'a>> {
    if opcode == op::MESSAGE {
        // The hot path: fixed header, then the payload.
        if body.len() < MESSAGE_HEADER {
            return Err(McapError::Malformed {
                at,
                record: "Message",
                detail: format!(
                    "the body is {} bytes, shorter than the 22-byte message header",
                    body.len()
                ),
            });
        }
        return Ok(Record::Message(MessageRecord {
            channel_id: u16::from_le_bytes([body[0], body[1]]),
            sequence: u32::from_le_bytes([body[2], body[3], body[4], body[5]]),
            log_time: le_u64(&body[6..14]),
            publish_time: le_u64(&body[14..22]),
            data: &body[MESSAGE_HEADER..],
            data_file_offset: body_file_offset.map(|o| o + MESSAGE_HEADER as u64),
        }));
    }
    let mut f = Fields::new(body, opcode, at);
    let record = match opcode {
        op::HEADER => Record::Header(Header {
            profile: f.str("profile")?,
            library: f.str("library")?,
        }),
        op::FOOTER => Record::Footer(Footer {
            summary_start: f.u64("summary_start")?,
            summary_offset_start: f.u64("summary_offset_start")?,
            summary_crc: f.u32("summary_crc")?,
        }),
        op::SCHEMA => Record::Schema(SchemaRecord {
            id: f.u16("id")?,
            name: f.str("name")?,
            encoding: f.str("encoding")?,
            data: f.bytes_u32("data")?,
        }),
        op::CHANNEL => Record::Channel(ChannelRecord {
            id: f.u16("id")?,
            schema_id: f.u16("schema_id")?,
            topic: f.str("topic")?,
            message_encoding: f.str("message_encoding")?,
            metadata: f.string_map("metadata")?,
        }),
        op::CHUNK => {
            let message_start_time = f.u64("message_start_time")?;
            let message_end_time = f.u64("message_end_time")?;
            let uncompressed_size = f.u64("uncompressed_size")?;
            let uncompressed_crc = f.u32("uncompressed_crc")?;
            let compression = f.str("compression")?;
            let records = f.bytes_u64("records")?;
            let records_at = (f.pos - records.len()) as u64;
            Record::Chunk(ChunkRecord {
                message_start_time,
                message_end_time,
                uncompressed_size,
                uncompressed_crc,
                compression,
                records,
                records_file_offset: body_file_offset.map_or(0, |o| o + records_at),
            })
        }
        op::MESSAGE_INDEX => {
            let channel_id = f.u16("channel_id")?;
            let entries = f.bytes_u32("records")?;
            if entries.len() % 16 != 0 {
                return Err(f.malformed(format!(
                    "records is {} bytes, not a whole number of 16-byte entries",
                    entries.len()
                )));
            }
            Record::MessageIndex(MessageIndexRecord {
                channel_id,
                entries,
            })
        }
        op::CHUNK_INDEX => Record::ChunkIndex(ChunkIndex {
            message_start_time: f.u64("message_start_time")?,
            message_end_time: f.u64("message_end_time")?,
            chunk_start_offset: f.u64("chunk_start_offset")?,
            chunk_length: f.u64("chunk_length")?,
            message_index_offsets: f.id_map("message_index_offsets")?,
            message_index_length: f.u64("message_index_length")?,
            compression: f.str("compression")?.to_string(),
            compressed_size: f.u64("compressed_size")?,
            uncompressed_size: f.u64("uncompressed_size")?,
        }),
        op::ATTACHMENT => Record::Attachment(AttachmentRecord {
            log_time: f.u64("log_time")?,
            create_time: f.u64("create_time")?,
            name: f.str("name")?,
            media_type: f.str("media_type")?,
            data: f.bytes_u64("data")?,
            crc: f.u32("crc")?,
        }),
        op::ATTACHMENT_INDEX => Record::AttachmentIndex(AttachmentIndex {
            offset: f.u64("offset")?,
            length: f.u64("length")?,
            log_time: f.u64("log_time")?,
            create_time: f.u64("create_time")?,
            data_size: f.u64("data_size")?,
            name: f.str("name")?.to_string(),
            media_type: f.str("media_type")?.to_string(),
        }),
        op::STATISTICS => Record::Statistics(Statistics {
            message_count: f.u64("message_count")?,
            schema_count: f.u16("schema_count")?,
            channel_count: f.u32("channel_count")?,
            attachment_count: f.u32("attachment_count")?,
            metadata_count: f.u32("metadata_count")?,
            chunk_count: f.u32("chunk_count")?,
            message_start_time: f.u64("message_start_time")?,
            message_end_time: f.u64("message_end_time")?,
            channel_message_counts: f.id_map("channel_message_counts")?,
        }),
        op::METADATA => Record::Metadata(MetadataRecord {
            name: f.str("name")?,
            metadata: f.string_map("metadata")?,
        }),
        op::METADATA_INDEX => Record::MetadataIndex(MetadataIndex {
            offset: f.u64("offset")?,
            length: f.u64("length")?,
            name: f.str("name")?.to_string(),
        }),
        op::SUMMARY_OFFSET => Record::SummaryOffset(SummaryOffset {
            group_opcode: f.u8("group_opcode")?,
            group_start: f.u64("group_start")?,
            group_length: f.u64("group_length")?,
        }),
        op::DATA_END => Record::DataEnd(DataEnd {
            data_section_crc: f.u32("data_section_crc")?,
        }),
        _ => Record::Unknown {
            opcode,
            body: f.rest(),
        },
    };
    // Later versions may append fields to a record: the rest is ignored, as
    // the specification asks.
    Ok(record)
}

// ---------------------------------------------------------------------------
// Chunks
// ---------------------------------------------------------------------------

/// A reusable buffer for decompressed chunk records (one per worker), with
/// its zstd context.
#[derive(Default)]
pub struct ChunkBuffer {
    data: Vec<u8>,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl std::fmt::Debug for ChunkBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkBuffer")
            .field("capacity", &self.data.capacity())
            .finish()
    }
}

impl ChunkBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// The chunk's uncompressed records: the chunk's own bytes when it is
    /// not compressed, else decompressed into this buffer. `at` is the
    /// chunk record's location (for errors). Checks `uncompressed_size`
    /// and, when set and `verify_crcs`, `uncompressed_crc`.
    pub fn records<'a>(
        &'a mut self,
        chunk: &ChunkRecord<'a>,
        at: Location,
        options: &ReaderOptions,
    ) -> McapResult<&'a [u8]> {
        if chunk.uncompressed_size > options.max_chunk_bytes {
            return Err(McapError::TooLarge {
                at,
                what: "uncompressed chunk",
                size: chunk.uncompressed_size,
                limit: options.max_chunk_bytes,
            });
        }
        let expected = chunk.uncompressed_size as usize;
        let decompress_error = |detail: String| McapError::Decompress {
            at,
            compression: chunk.compression.to_string(),
            detail,
        };
        let records: &'a [u8] = match chunk.compression {
            "" => {
                if chunk.records.len() != expected {
                    return Err(McapError::Malformed {
                        at,
                        record: "Chunk",
                        detail: format!(
                            "uncompressed_size is {expected} but the uncompressed records are {} bytes",
                            chunk.records.len()
                        ),
                    });
                }
                chunk.records
            }
            "zstd" => {
                self.data.clear();
                self.data.reserve(expected);
                if self.zstd.is_none() {
                    self.zstd = Some(
                        zstd::bulk::Decompressor::new()
                            .map_err(|e| decompress_error(e.to_string()))?,
                    );
                }
                let Some(z) = self.zstd.as_mut() else {
                    return Err(decompress_error("no zstd context".into()));
                };
                // Decompresses into the spare capacity: no zeroing, one pass.
                let n = z
                    .decompress_to_buffer(chunk.records, &mut self.data)
                    .map_err(|e| decompress_error(e.to_string()))?;
                if n != expected {
                    return Err(decompress_error(format!(
                        "it decompresses to {n} bytes, not the {expected} its uncompressed_size says"
                    )));
                }
                &self.data
            }
            "lz4" => {
                self.data.clear();
                self.data.reserve(expected);
                // Frame format (what the mcap writers produce). Reading one
                // byte past the expected size detects a frame that lies.
                let mut decoder =
                    lz4_flex::frame::FrameDecoder::new(chunk.records).take(expected as u64 + 1);
                decoder
                    .read_to_end(&mut self.data)
                    .map_err(|e| decompress_error(e.to_string()))?;
                if self.data.len() != expected {
                    return Err(decompress_error(format!(
                        "it decompresses to {}{} bytes, not the {expected} its uncompressed_size says",
                        if self.data.len() > expected { "more than " } else { "" },
                        self.data.len().min(expected)
                    )));
                }
                &self.data
            }
            other => {
                return Err(McapError::UnsupportedCompression {
                    at,
                    compression: other.to_string(),
                })
            }
        };
        if options.verify_crcs && chunk.uncompressed_crc != 0 {
            let actual = crc32fast::hash(records);
            if actual != chunk.uncompressed_crc {
                return Err(McapError::Crc {
                    at,
                    what: "chunk",
                    expected: chunk.uncompressed_crc,
                    actual,
                });
            }
        }
        Ok(records)
    }
}

/// Walks the records of one chunk (uncompressed) in place.
#[derive(Debug, Clone)]
pub struct ChunkRecords<'a> {
    data: &'a [u8],
    pos: usize,
    chunk_offset: u64,
    /// File offset of `data[0]` when the chunk is not compressed.
    file_offset: Option<u64>,
    failed: bool,
}

impl<'a> ChunkRecords<'a> {
    /// `data` are the chunk's uncompressed records, `chunk_offset` the
    /// chunk record's file offset, `file_offset` where `data` lies in the
    /// file if it does (uncompressed chunk).
    pub fn new(data: &'a [u8], chunk_offset: u64, file_offset: Option<u64>) -> Self {
        ChunkRecords {
            data,
            pos: 0,
            chunk_offset,
            file_offset,
            failed: false,
        }
    }
}

impl<'a> Iterator for ChunkRecords<'a> {
    type Item = McapResult<RecordAt<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let at = Location::InChunk {
            chunk: self.chunk_offset,
            offset: self.pos as u64,
        };
        let rest = &self.data[self.pos..];
        let fail = |detail: String| McapError::Malformed {
            at,
            record: "Chunk",
            detail,
        };
        if rest.len() < RECORD_HEADER as usize {
            self.failed = true;
            return Some(Err(fail(format!(
                "{} stray bytes at the end of the chunk records",
                rest.len()
            ))));
        }
        let opcode = rest[0];
        let len = le_u64(&rest[1..9]);
        if len > (rest.len() as u64 - RECORD_HEADER) {
            self.failed = true;
            return Some(Err(fail(format!(
                "a {} record of {len} bytes runs past the end of the chunk records ({} bytes left)",
                record_name(opcode),
                rest.len() as u64 - RECORD_HEADER
            ))));
        }
        let body = &rest[RECORD_HEADER as usize..RECORD_HEADER as usize + len as usize];
        let body_file = self
            .file_offset
            .map(|o| o + self.pos as u64 + RECORD_HEADER);
        self.pos += RECORD_HEADER as usize + len as usize;
        match parse_record(opcode, body, at, body_file) {
            Ok(record) => Some(Ok(RecordAt {
                at,
                section: Section::Data,
                record,
            })),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Linear (sans-io) reading
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Magic,
    Records,
    /// Skipping the rest of an oversized record.
    Skipping {
        remaining: u64,
    },
    EndMagic,
    Done,
}

/// A top-level record found by [`LinearReader::next_frame`]: where it is
/// in the file, without borrowing the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub opcode: u8,
    /// File offset of the opcode byte.
    pub offset: u64,
    /// File range of the body (empty for a skipped record).
    pub body: (u64, u64),
    /// Body length as the record header says (differs from `body` only for
    /// skipped records).
    pub length: u64,
    pub section: Section,
}

/// How a stream of bytes ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Footer and end magic read.
    Complete,
    /// The input stopped early: `offset` is where the readable part ends;
    /// `partial_record` says whether bytes of an incomplete record follow
    /// it (a crashed recorder's torn write) or the file simply stops after
    /// a complete record (no summary, no end magic). Everything before
    /// `offset` has been yielded.
    Truncated {
        offset: u64,
        partial_record: bool,
        detail: String,
    },
}

impl Ending {
    /// `Ok` for a complete file, else the truncation as an error.
    pub fn into_result(self) -> McapResult<()> {
        match self {
            Ending::Complete => Ok(()),
            Ending::Truncated { offset, detail, .. } => {
                Err(McapError::Truncated { offset, detail })
            }
        }
    }
}

/// Sans-io reader of top-level records: [`feed`](Self::feed) bytes, then
/// call [`next_record`](Self::next_record) until it returns `None` (more input needed),
/// and [`finish`](Self::finish) at the end of the input.
#[derive(Debug)]
pub struct LinearReader {
    options: ReaderOptions,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    buf_offset: u64,
    /// File offset of the next unread byte.
    cursor: u64,
    /// Bytes before this offset may be dropped (the last frame returned
    /// stays readable until the next call).
    keep_from: u64,
    state: State,
    section: Section,
    /// CRC of the data section so far (everything before DataEnd).
    data_crc: Option<crc32fast::Hasher>,
    /// File offset up to which `data_crc` has hashed.
    hashed_to: u64,
}

impl LinearReader {
    pub fn new(options: ReaderOptions) -> Self {
        let data_crc = options.verify_crcs.then(crc32fast::Hasher::new);
        LinearReader {
            options,
            buf: Vec::new(),
            buf_offset: 0,
            cursor: 0,
            keep_from: 0,
            state: State::Magic,
            section: Section::Data,
            data_crc,
            hashed_to: 0,
        }
    }

    pub fn options(&self) -> &ReaderOptions {
        &self.options
    }

    /// Appends input. Drops what has been read when that is cheap.
    pub fn feed(&mut self, bytes: &[u8]) {
        let droppable = (self.keep_from - self.buf_offset) as usize;
        if droppable > 0
            && (droppable == self.buf.len()
                || droppable >= self.buf.len() / 2
                || self.buf.capacity() - self.buf.len() < bytes.len())
        {
            self.buf.drain(..droppable);
            self.buf_offset += droppable as u64;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered (for memory accounting).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// File offset of the next unread byte.
    pub fn position(&self) -> u64 {
        self.cursor
    }

    fn available(&self) -> u64 {
        self.buf_offset + self.buf.len() as u64 - self.cursor
    }

    /// The bytes of a file range that is still buffered.
    pub(crate) fn slice(&self, range: (u64, u64)) -> &[u8] {
        let start = (range.0 - self.buf_offset) as usize;
        let end = (range.1 - self.buf_offset) as usize;
        &self.buf[start..end]
    }

    fn hash_to(&mut self, end: u64) {
        if let Some(h) = self.data_crc.as_mut() {
            if end > self.hashed_to {
                let start = (self.hashed_to - self.buf_offset) as usize;
                let stop = (end - self.buf_offset) as usize;
                h.update(&self.buf[start..stop]);
                self.hashed_to = end;
            }
        }
    }

    /// The next top-level record's position, or `None` when more input is
    /// needed (or the file is done). The previous frame's bytes stay
    /// buffered until this is called again.
    pub(crate) fn next_frame(&mut self) -> McapResult<Option<Frame>> {
        self.keep_from = self.cursor;
        loop {
            match self.state {
                State::Magic => {
                    let have = self.available().min(8) as usize;
                    let start = (self.cursor - self.buf_offset) as usize;
                    if self.buf[start..start + have] != MAGIC[..have] {
                        return Err(McapError::NotMcap { offset: 0 });
                    }
                    if have < 8 {
                        return Ok(None);
                    }
                    // The data section CRC starts at the magic.
                    self.hash_to(self.cursor + 8);
                    self.cursor += 8;
                    self.state = State::Records;
                }
                State::Skipping { remaining } => {
                    let n = remaining.min(self.available());
                    if self.section == Section::Data {
                        self.hash_to(self.cursor + n);
                    }
                    self.cursor += n;
                    // Everything skipped may go at the next feed.
                    self.keep_from = self.cursor;
                    if n < remaining {
                        self.state = State::Skipping {
                            remaining: remaining - n,
                        };
                        return Ok(None);
                    }
                    self.state = State::Records;
                }
                State::Records => {
                    if self.available() < RECORD_HEADER {
                        return Ok(None);
                    }
                    let start = (self.cursor - self.buf_offset) as usize;
                    let opcode = self.buf[start];
                    let length = le_u64(&self.buf[start + 1..start + 9]);
                    let offset = self.cursor;
                    let at = Location::File(offset);
                    if length > self.options.max_record_bytes {
                        let skippable = opcode == op::ATTACHMENT || opcode > op::DATA_END;
                        if !skippable {
                            return Err(McapError::TooLarge {
                                at,
                                what: if opcode == op::CHUNK {
                                    "chunk record"
                                } else {
                                    "record"
                                },
                                size: length,
                                limit: self.options.max_record_bytes,
                            });
                        }
                        if self.section == Section::Data {
                            self.hash_to(offset + RECORD_HEADER);
                        }
                        self.cursor += RECORD_HEADER;
                        self.state = State::Skipping { remaining: length };
                        return Ok(Some(Frame {
                            opcode,
                            offset,
                            body: (self.cursor, self.cursor),
                            length,
                            section: self.section,
                        }));
                    }
                    if self.available() < RECORD_HEADER.saturating_add(length) {
                        return Ok(None);
                    }
                    let body = (offset + RECORD_HEADER, offset + RECORD_HEADER + length);
                    let section = self.section;
                    match opcode {
                        op::DATA_END if self.section == Section::Data => {
                            self.hash_to(offset);
                            let computed = self.data_crc.take().map(|h| h.finalize());
                            let body_bytes = self.slice(body);
                            if let (Some(actual), Some(expected)) = (
                                computed,
                                body_bytes
                                    .get(..4)
                                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                            ) {
                                if expected != 0 && expected != actual {
                                    return Err(McapError::Crc {
                                        at,
                                        what: "data section",
                                        expected,
                                        actual,
                                    });
                                }
                            }
                            self.section = Section::Summary;
                        }
                        op::FOOTER => self.state = State::EndMagic,
                        _ => {
                            if self.section == Section::Data {
                                self.hash_to(body.1);
                            }
                        }
                    }
                    self.cursor = body.1;
                    return Ok(Some(Frame {
                        opcode,
                        offset,
                        body,
                        length,
                        section,
                    }));
                }
                State::EndMagic => {
                    if self.available() < 8 {
                        return Ok(None);
                    }
                    let start = (self.cursor - self.buf_offset) as usize;
                    if self.buf[start..start + 8] != MAGIC {
                        return Err(McapError::NotMcap {
                            offset: self.cursor,
                        });
                    }
                    self.cursor += 8;
                    self.state = State::Done;
                }
                State::Done => {
                    if self.available() > 0 {
                        return Err(McapError::DataAfterEnd {
                            offset: self.cursor,
                        });
                    }
                    return Ok(None);
                }
            }
        }
    }

    /// The next top-level record (chunks whole), or `None` when more input
    /// is needed or the file is done.
    pub fn next_record(&mut self) -> McapResult<Option<RecordAt<'_>>> {
        let Some(frame) = self.next_frame()? else {
            return Ok(None);
        };
        let at = Location::File(frame.offset);
        if frame.body.0 == frame.body.1 && frame.length > 0 {
            return Ok(Some(RecordAt {
                at,
                section: frame.section,
                record: Record::Skipped {
                    opcode: frame.opcode,
                    length: frame.length,
                },
            }));
        }
        let body = self.slice(frame.body);
        let record = parse_record(frame.opcode, body, at, Some(frame.body.0))?;
        Ok(Some(RecordAt {
            at,
            section: frame.section,
            record,
        }))
    }

    /// Called once the input has ended: how it ended.
    pub fn finish(&self) -> Ending {
        let leftover = self.available();
        let truncated = |detail: String| Ending::Truncated {
            offset: self.cursor,
            partial_record: leftover > 0,
            detail,
        };
        match self.state {
            State::Done => Ending::Complete,
            State::Magic => truncated(format!(
                "the input ends after {leftover} bytes, inside the opening magic"
            )),
            State::Skipping { remaining } => truncated(format!(
                "the input ends inside an oversized record, {remaining} bytes short"
            )),
            State::Records if leftover == 0 => truncated(
                "the input ends after a complete record, without a footer and end magic (a recording that was not closed)"
                    .to_string(),
            ),
            State::Records => {
                let start = (self.cursor - self.buf_offset) as usize;
                let detail = if leftover >= RECORD_HEADER {
                    let opcode = self.buf[start];
                    let length = le_u64(&self.buf[start + 1..start + 9]);
                    format!(
                        "the input ends inside a {} record: {} of its {} bytes are present",
                        record_name(opcode),
                        leftover,
                        RECORD_HEADER.saturating_add(length)
                    )
                } else {
                    format!("the input ends inside a record header ({leftover} of 9 bytes)")
                };
                truncated(detail)
            }
            State::EndMagic => truncated("the input ends after the footer, without the end magic".to_string()),
        }
    }
}

/// Where [`McapStream`] is inside an expanded chunk.
#[derive(Debug, Clone, Copy)]
struct ChunkWalk {
    chunk_offset: u64,
    /// The records are in the linear reader's buffer at this file range
    /// (uncompressed chunk), else in the decompression buffer.
    in_input: Option<(u64, u64)>,
    pos: usize,
    len: usize,
}

/// [`LinearReader`] with chunks expanded: yields Header, Schema, Channel,
/// Message, Metadata, Attachment, … records in file order, each chunk's
/// records in place of the chunk (MessageIndex records after it are
/// yielded too; callers skip them).
#[derive(Debug)]
pub struct McapStream {
    linear: LinearReader,
    buffer: ChunkBuffer,
    walk: Option<ChunkWalk>,
}

impl McapStream {
    pub fn new(options: ReaderOptions) -> Self {
        McapStream {
            linear: LinearReader::new(options),
            buffer: ChunkBuffer::new(),
            walk: None,
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.linear.feed(bytes);
    }

    /// Bytes held: input buffer plus decompression buffer.
    pub fn buffered(&self) -> usize {
        self.linear.buffered() + self.buffer.data.capacity()
    }

    /// File offset of the next unread top-level byte.
    pub fn position(&self) -> u64 {
        self.linear.position()
    }

    pub fn finish(&self) -> Ending {
        self.linear.finish()
    }

    /// The next record, or `None` when more input is needed (or the input
    /// is done: then call [`finish`](Self::finish)).
    pub fn next_record(&mut self) -> McapResult<Option<RecordAt<'_>>> {
        loop {
            if let Some(walk) = self.walk {
                if walk.pos < walk.len {
                    return self.next_in_chunk(walk);
                }
                self.walk = None;
            }
            let Some(frame) = self.linear.next_frame()? else {
                return Ok(None);
            };
            let at = Location::File(frame.offset);
            if frame.opcode != op::CHUNK {
                if frame.body.0 == frame.body.1 && frame.length > 0 {
                    return Ok(Some(RecordAt {
                        at,
                        section: frame.section,
                        record: Record::Skipped {
                            opcode: frame.opcode,
                            length: frame.length,
                        },
                    }));
                }
                let body = self.linear.slice(frame.body);
                let record = parse_record(frame.opcode, body, at, Some(frame.body.0))?;
                return Ok(Some(RecordAt {
                    at,
                    section: frame.section,
                    record,
                }));
            }
            let body = self.linear.slice(frame.body);
            let Record::Chunk(chunk) = parse_record(op::CHUNK, body, at, Some(frame.body.0))?
            else {
                continue;
            };
            let options = self.linear.options().clone();
            let records = self.buffer.records(&chunk, at, &options)?;
            let in_input = (chunk.compression.is_empty()).then(|| {
                (
                    chunk.records_file_offset,
                    chunk.records_file_offset + chunk.records.len() as u64,
                )
            });
            self.walk = Some(ChunkWalk {
                chunk_offset: frame.offset,
                in_input,
                pos: 0,
                len: records.len(),
            });
        }
    }

    fn next_in_chunk(&mut self, walk: ChunkWalk) -> McapResult<Option<RecordAt<'_>>> {
        let data: &[u8] = match walk.in_input {
            Some(range) => self.linear.slice(range),
            None => &self.buffer.data[..walk.len],
        };
        let mut records = ChunkRecords::new(data, walk.chunk_offset, walk.in_input.map(|r| r.0));
        records.pos = walk.pos;
        let item = records.next();
        let next_pos = records.pos;
        match item {
            None => {
                self.walk = None;
                Ok(None)
            }
            Some(Err(e)) => {
                self.walk = None;
                Err(e)
            }
            Some(Ok(rec)) => {
                // `rec` borrows `data`, which borrows `self.linear` or
                // `self.buffer`, never `self.walk`: update the position
                // through a field-disjoint borrow.
                if let Some(w) = self.walk.as_mut() {
                    w.pos = next_pos;
                }
                Ok(Some(rec))
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Indexed (summary) reading of a whole file
// ---------------------------------------------------------------------------

/// A chunk found in the data section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkRef {
    /// File offset of the chunk record.
    pub offset: u64,
    /// The whole record, opcode and length included.
    pub length: u64,
    pub message_start_time: u64,
    pub message_end_time: u64,
    pub compression: String,
    pub compressed_size: u64,
    pub uncompressed_size: u64,
}

/// A whole MCAP file with a summary, ready for chunk-parallel decoding.
#[derive(Debug, Clone)]
pub struct IndexedFile<'a> {
    file: &'a [u8],
    options: ReaderOptions,
    pub header: Option<Header<'a>>,
    pub footer: Footer,
    /// From the summary, then any outside chunks in the data section that
    /// the summary lacks; each with its record's location.
    pub schemas: Vec<(Location, SchemaRecord<'a>)>,
    pub channels: Vec<(Location, ChannelRecord<'a>)>,
    pub statistics: Option<Statistics>,
    pub chunk_indexes: Vec<ChunkIndex>,
    pub metadata_indexes: Vec<MetadataIndex>,
    pub attachment_indexes: Vec<AttachmentIndex>,
    /// Every chunk of the data section, in file order.
    pub chunks: Vec<ChunkRef>,
    /// Metadata records of the data section (rosbag2 writes one named
    /// `rosbag2`).
    pub metadata: Vec<MetadataRecord<'a>>,
    /// Offset and content of the DataEnd record.
    pub data_end: Option<(u64, DataEnd)>,
}

/// Iterates the top-level records of `file[range]`, yielding (offset,
/// opcode, body). Stops with an error at a record that does not fit.
fn top_level(
    file: &[u8],
    range: Range<u64>,
) -> impl Iterator<Item = McapResult<(u64, u8, &[u8])>> + '_ {
    let mut pos = range.start;
    let end = range.end;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || pos >= end {
            return None;
        }
        let at = Location::File(pos);
        if end - pos < RECORD_HEADER {
            failed = true;
            return Some(Err(McapError::Malformed {
                at,
                record: "unknown",
                detail: format!("{} stray bytes where a record should start", end - pos),
            }));
        }
        let p = pos as usize;
        let opcode = file[p];
        let length = le_u64(&file[p + 1..p + 9]);
        if length > end - pos - RECORD_HEADER {
            failed = true;
            return Some(Err(McapError::Malformed {
                at,
                record: record_name(opcode),
                detail: format!(
                    "its length {length} runs past the end of its section at offset {end}"
                ),
            }));
        }
        let body = &file[p + 9..p + 9 + length as usize];
        let this = pos;
        pos += RECORD_HEADER + length;
        Some(Ok((this, opcode, body)))
    })
}

impl<'a> IndexedFile<'a> {
    /// Reads the footer and summary of a whole file. `Ok(None)` when the
    /// file cannot be read through its summary (no end magic, no summary,
    /// a summary without channels, or messages outside chunks): read it
    /// with [`McapStream`] instead, which also reports truncation precisely.
    pub fn open(file: &'a [u8], options: &ReaderOptions) -> McapResult<Option<IndexedFile<'a>>> {
        let len = file.len() as u64;
        if file.len() < 8 || file[..8] != MAGIC {
            return Err(McapError::NotMcap { offset: 0 });
        }
        if len < 8 + FOOTER_RECORD + 8 || file[file.len() - 8..] != MAGIC {
            return Ok(None);
        }
        let footer_offset = len - 8 - FOOTER_RECORD;
        let fo = footer_offset as usize;
        if file[fo] != op::FOOTER || le_u64(&file[fo + 1..fo + 9]) != 20 {
            return Ok(None);
        }
        let Record::Footer(footer) = parse_record(
            op::FOOTER,
            &file[fo + 9..fo + 29],
            Location::File(footer_offset),
            None,
        )?
        else {
            return Ok(None);
        };
        if footer.summary_start == 0 {
            return Ok(None);
        }
        if footer.summary_start < 8 || footer.summary_start > footer_offset {
            return Err(McapError::Malformed {
                at: Location::File(footer_offset),
                record: "Footer",
                detail: format!(
                    "summary_start {} is outside the file's records",
                    footer.summary_start
                ),
            });
        }
        if options.verify_crcs && footer.summary_crc != 0 {
            // From the summary's first byte through the footer's
            // summary_offset_start field.
            let actual = crc32fast::hash(&file[footer.summary_start as usize..fo + 25]);
            if actual != footer.summary_crc {
                return Err(McapError::Crc {
                    at: Location::File(footer_offset),
                    what: "summary section",
                    expected: footer.summary_crc,
                    actual,
                });
            }
        }
        let summary_end = if footer.summary_offset_start >= footer.summary_start
            && footer.summary_offset_start <= footer_offset
            && footer.summary_offset_start != 0
        {
            footer.summary_offset_start
        } else {
            footer_offset
        };
        let mut indexed = IndexedFile {
            file,
            options: options.clone(),
            header: None,
            footer,
            schemas: Vec::new(),
            channels: Vec::new(),
            statistics: None,
            chunk_indexes: Vec::new(),
            metadata_indexes: Vec::new(),
            attachment_indexes: Vec::new(),
            chunks: Vec::new(),
            metadata: Vec::new(),
            data_end: None,
        };
        for item in top_level(file, footer.summary_start..summary_end) {
            let (offset, opcode, body) = item?;
            let at = Location::File(offset);
            match parse_record(opcode, body, at, None)? {
                Record::Schema(s) => indexed.schemas.push((at, s)),
                Record::Channel(c) => indexed.channels.push((at, c)),
                Record::Statistics(s) => indexed.statistics = Some(s),
                Record::ChunkIndex(c) => indexed.chunk_indexes.push(c),
                Record::MetadataIndex(m) => indexed.metadata_indexes.push(m),
                Record::AttachmentIndex(a) => indexed.attachment_indexes.push(a),
                _ => {}
            }
        }
        // The data section: list the chunks, jumping over their bodies.
        for item in top_level(file, 8..footer.summary_start) {
            let (offset, opcode, body) = item?;
            let at = Location::File(offset);
            match opcode {
                op::CHUNK => {
                    let Record::Chunk(c) = parse_record(opcode, body, at, Some(offset + 9))? else {
                        continue;
                    };
                    indexed.chunks.push(ChunkRef {
                        offset,
                        length: RECORD_HEADER + body.len() as u64,
                        message_start_time: c.message_start_time,
                        message_end_time: c.message_end_time,
                        compression: c.compression.to_string(),
                        compressed_size: c.records.len() as u64,
                        uncompressed_size: c.uncompressed_size,
                    });
                }
                // A message outside chunks: only a linear read keeps the
                // order of loose messages and chunks.
                op::MESSAGE => return Ok(None),
                op::HEADER => {
                    if let Record::Header(h) = parse_record(opcode, body, at, None)? {
                        indexed.header = Some(h);
                    }
                }
                op::SCHEMA => {
                    if let Record::Schema(s) = parse_record(opcode, body, at, None)? {
                        if !indexed.schemas.iter().any(|(_, x)| x.id == s.id) {
                            indexed.schemas.push((at, s));
                        }
                    }
                }
                op::CHANNEL => {
                    if let Record::Channel(c) = parse_record(opcode, body, at, None)? {
                        if !indexed.channels.iter().any(|(_, x)| x.id == c.id) {
                            indexed.channels.push((at, c));
                        }
                    }
                }
                op::METADATA => {
                    if let Record::Metadata(m) = parse_record(opcode, body, at, None)? {
                        indexed.metadata.push(m);
                    }
                }
                op::DATA_END => {
                    if let Record::DataEnd(d) = parse_record(opcode, body, at, None)? {
                        indexed.data_end = Some((offset, d));
                    }
                    break;
                }
                _ => {}
            }
        }
        // Channels defined only inside chunks cannot be known to a worker
        // that starts at a later chunk.
        let channels_known = match &indexed.statistics {
            Some(s) => indexed.channels.len() as u64 >= s.channel_count as u64,
            None => !indexed.channels.is_empty() || indexed.chunks.is_empty(),
        };
        let schemas_known = indexed.channels.iter().all(|(_, c)| {
            c.schema_id == 0 || indexed.schemas.iter().any(|(_, s)| s.id == c.schema_id)
        });
        if !channels_known || !schemas_known {
            return Ok(None);
        }
        Ok(Some(indexed))
    }

    pub fn file(&self) -> &'a [u8] {
        self.file
    }

    /// Checks the DataEnd record's data section CRC (one pass over the
    /// data section; run it beside the chunk workers). `Ok` when absent.
    pub fn verify_data_crc(&self) -> McapResult<()> {
        if let Some((offset, end)) = self.data_end {
            if end.data_section_crc != 0 {
                let actual = crc32fast::hash(&self.file[..offset as usize]);
                if actual != end.data_section_crc {
                    return Err(McapError::Crc {
                        at: Location::File(offset),
                        what: "data section",
                        expected: end.data_section_crc,
                        actual,
                    });
                }
            }
        }
        Ok(())
    }

    /// The chunk record itself (header fields and compressed records).
    pub fn chunk(&self, chunk: &ChunkRef) -> McapResult<ChunkRecord<'a>> {
        let at = Location::File(chunk.offset);
        let start = chunk.offset as usize;
        let body = start
            .checked_add(9)
            .zip(start.checked_add(chunk.length as usize))
            .and_then(|(from, to)| self.file.get(from..to))
            .ok_or(McapError::Malformed {
                at,
                record: "Chunk",
                detail: "it runs past the end of the file".to_string(),
            })?;
        match parse_record(op::CHUNK, body, at, Some(chunk.offset + 9))? {
            Record::Chunk(c) => Ok(c),
            _ => Err(McapError::Malformed {
                at,
                record: "Chunk",
                detail: "not a chunk".to_string(),
            }),
        }
    }

    /// Decompresses one chunk into `buffer` (unless it is not compressed)
    /// and walks its records. Independent of every other chunk: call it
    /// from as many threads as there are chunks to share.
    pub fn chunk_records<'b>(
        &self,
        chunk: &ChunkRef,
        buffer: &'b mut ChunkBuffer,
    ) -> McapResult<ChunkRecords<'b>>
    where
        'a: 'b,
    {
        let record = self.chunk(chunk)?;
        let file_offset = record
            .compression
            .is_empty()
            .then_some(record.records_file_offset);
        let records = buffer.records(&record, Location::File(chunk.offset), &self.options)?;
        Ok(ChunkRecords::new(records, chunk.offset, file_offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![opcode];
        r.extend_from_slice(&(body.len() as u64).to_le_bytes());
        r.extend_from_slice(body);
        r
    }

    #[test]
    fn malformed_bodies_name_record_and_field() {
        let at = Location::File(40);
        // A Channel whose topic length runs past the body.
        let body = [1, 0, 0, 0, 200, 0, 0, 0, b'x'];
        let e = parse_record(op::CHANNEL, &body, at, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed Channel record at offset 40: topic needs 200 bytes but only 1 are left in the record"
        );
        let e = parse_record(op::MESSAGE, &[0; 21], at, None).unwrap_err();
        assert!(e.to_string().contains("Message"), "{e}");
        // Unknown opcodes keep their body; extra trailing fields are ignored.
        assert_eq!(
            parse_record(0x99, b"abc", at, None).unwrap(),
            Record::Unknown {
                opcode: 0x99,
                body: b"abc"
            }
        );
        let mut data_end = 7u32.to_le_bytes().to_vec();
        data_end.extend_from_slice(b"later fields");
        assert_eq!(
            parse_record(op::DATA_END, &data_end, at, None).unwrap(),
            Record::DataEnd(DataEnd {
                data_section_crc: 7
            })
        );
    }

    #[test]
    fn chunk_records_stop_at_a_record_that_does_not_fit() {
        let mut data = record(op::MESSAGE, &[0; 30]);
        data.extend(record(op::MESSAGE, &[0; 30])[..20].iter());
        let mut walk = ChunkRecords::new(&data, 1000, Some(2000));
        let first = walk.next().unwrap().unwrap();
        let Record::Message(m) = first.record else {
            panic!()
        };
        assert_eq!(m.data.len(), 8);
        assert_eq!(m.data_file_offset, Some(2000 + 9 + 22));
        let e = walk.next().unwrap().unwrap_err();
        assert!(
            e.to_string()
                .contains("offset 39 inside the chunk at offset 1000"),
            "{e}"
        );
        assert!(walk.next().is_none());
    }

    #[test]
    fn the_linear_reader_keeps_one_record_and_the_crc() {
        let mut file = MAGIC.to_vec();
        file.extend(record(
            op::HEADER,
            &[4, 0, 0, 0, b'r', b'o', b's', b'2', 0, 0, 0, 0],
        ));
        for i in 0..50u8 {
            file.extend(record(0x80, &[i; 1000]));
        }
        let crc = crc32fast::hash(&file);
        file.extend(record(op::DATA_END, &crc.to_le_bytes()));
        file.extend(record(op::FOOTER, &[0; 20]));
        file.extend(MAGIC);
        let mut reader = LinearReader::new(ReaderOptions::default());
        let mut unknown = 0;
        let mut most = 0;
        for piece in file.chunks(333) {
            reader.feed(piece);
            most = most.max(reader.buffered());
            while let Some(rec) = reader.next_record().unwrap() {
                unknown += matches!(rec.record, Record::Unknown { .. }) as usize;
            }
        }
        assert_eq!(unknown, 50);
        assert!(most < 3000, "{most}");
        assert_eq!(reader.finish(), Ending::Complete);
        // The same file with one byte changed before DataEnd.
        let mut bad = file.clone();
        bad[100] ^= 1;
        let mut reader = LinearReader::new(ReaderOptions::default());
        reader.feed(&bad);
        let e = loop {
            match reader.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("no error"),
                Err(e) => break e,
            }
        };
        assert!(
            matches!(
                e,
                McapError::Crc {
                    what: "data section",
                    ..
                }
            ),
            "{e}"
        );
    }
}
