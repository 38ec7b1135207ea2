//! WAL framing: segment file headers and checksummed records (see
//! storage-format/SPEC.md, "Write-ahead log"). A record is a 20-byte header —
//! payload length (u32), record type (u8), flags (u8), reserved (u16), LSN
//! (u64), and the CRC-32 (IEEE, crc32fast) of the header's first 16 bytes and
//! the payload (u32) — followed by the payload.
//! Must not: interpret payloads (the writer and recovery do), or panic on
//! any bytes read back from disk.

use super::codec::{CodecError, Reader};

/// "BRWRCWAL": the first bytes of every WAL segment file.
pub const SEGMENT_MAGIC: [u8; 8] = *b"BRWRCWAL";
/// Format version of segment files and records; bumped on any layout change.
/// Written by this build; readers accept `1..=FORMAT_VERSION`. Format 2 is
/// format 1's layout whose array values may be packed (`types::array`); a
/// format-1 reader would misread them. Arrays of format-1 records are
/// repacked as they are decoded (`exec::vector::repack_arrays`).
pub const FORMAT_VERSION: u32 = 2;
pub const SEGMENT_HEADER_BYTES: usize = 32;
pub const RECORD_HEADER_BYTES: usize = 20;
/// A record larger than this is corrupt (a statement's rows are split into
/// records well below it).
pub const MAX_RECORD_PAYLOAD_BYTES: usize = 256 << 20;

/// Record types (stable: never renumber).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// Rows for one table: txn id (u64), table oid (u32), then an encoded batch.
    Rows = 1,
    /// The transaction `txn` (u64) committed: its Rows records on every shard apply.
    Commit = 2,
    /// TRUNCATE of table oid (u32) by txn (u64).
    Truncate = 3,
    /// Ends a group of records written and synced together (payload: 8 zero
    /// bytes). Everything before a durable GroupEnd was acknowledged; damage
    /// with no GroupEnd after it can only be an unacknowledged, torn write.
    GroupEnd = 4,
    /// Retention (`drop_chunks`): txn id (u64), table OID (u32), cutoff
    /// (i64 ns): the table's rows with a time before the cutoff are removed.
    DropBefore = 5,
    /// Rows of a kept MCAP recording: txn id (u64), then a
    /// `storage::recordings::RecordingRef` (the kept file, the chunks this
    /// shard decoded, the tables they fill). Recovery decodes them again.
    RecordingRows = 6,
    /// A DELETE's or UPDATE's removal of whole time partitions: txn id
    /// (u64), table OID (u32), time column (u32), range count (u32), then
    /// each range's start and end (i64 ns, end exclusive). Committed as
    /// `Rows` records are; the statement's kept rows of those partitions
    /// follow as `Rows` of the same transaction.
    DropRanges = 7,
}

impl RecordType {
    pub fn from_u8(v: u8) -> Option<RecordType> {
        match v {
            1 => Some(RecordType::Rows),
            2 => Some(RecordType::Commit),
            3 => Some(RecordType::Truncate),
            4 => Some(RecordType::GroupEnd),
            5 => Some(RecordType::DropBefore),
            6 => Some(RecordType::RecordingRows),
            7 => Some(RecordType::DropRanges),
            _ => None,
        }
    }
}

/// Flag bit: this record commits its transaction (a write that touched one
/// shard; on its last record only, so a torn multi-record write never applies in part).
pub const FLAG_SELF_COMMITTED: u8 = 1;

/// Identity of a segment file, written in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    pub shard: u32,
    pub segment: u64,
}

/// magic (8), version u32, shard u32, segment u64, crc u32 of the first 24 bytes, reserved u32.
pub fn encode_segment_header(h: &SegmentHeader) -> [u8; SEGMENT_HEADER_BYTES] {
    let mut b = [0u8; SEGMENT_HEADER_BYTES];
    b[..8].copy_from_slice(&SEGMENT_MAGIC);
    b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&h.shard.to_le_bytes());
    b[16..24].copy_from_slice(&h.segment.to_le_bytes());
    let crc = crc32fast::hash(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

pub fn decode_segment_header(bytes: &[u8]) -> Result<SegmentHeader, CodecError> {
    let mut r = Reader::new(bytes);
    let magic: [u8; 8] = r.array()?;
    if magic != SEGMENT_MAGIC {
        return Err(r.fail("not a Brewric WAL segment (bad magic)"));
    }
    let version = r.u32()?;
    if version == 0 || version > FORMAT_VERSION {
        return Err(r.fail(format!(
            "WAL format version {version}, this build reads 1..={FORMAT_VERSION}"
        )));
    }
    let shard = r.u32()?;
    let segment = r.u64()?;
    let crc = r.u32()?;
    if crc != crc32fast::hash(&bytes[..24]) {
        return Err(r.fail("segment header checksum mismatch"));
    }
    Ok(SegmentHeader { shard, segment })
}

/// A decoded record, borrowing its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    pub record_type: RecordType,
    pub flags: u8,
    pub lsn: u64,
    pub payload: &'a [u8],
}

/// Appends one framed record to `out`.
pub fn encode_record(
    record_type: RecordType,
    flags: u8,
    lsn: u64,
    payload: &[u8],
    out: &mut Vec<u8>,
) {
    encode_record_with(record_type, flags, lsn, out, |o| o.extend_from_slice(payload));
}

/// Appends one framed record to `out` whose payload `write_payload` appends
/// in place (a batch is encoded straight into the log's queue, not copied).
pub fn encode_record_with(
    record_type: RecordType,
    flags: u8,
    lsn: u64,
    out: &mut Vec<u8>,
    write_payload: impl FnOnce(&mut Vec<u8>),
) {
    let start = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(record_type as u8);
    out.push(flags);
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&lsn.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let payload_start = out.len();
    write_payload(out);
    let len = (out.len() - payload_start) as u32;
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&out[start..start + 16]);
    h.update(&out[payload_start..]);
    let crc = h.finalize();
    out[start + 16..start + 20].copy_from_slice(&crc.to_le_bytes());
}

/// Why reading stopped before the end of the bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Damage {
    /// A record that is cut short or fails its checksum, with nothing valid after it:
    /// the tail of a write that never completed. Safe to truncate at `offset`.
    TornTail { offset: usize, reason: String },
    /// A bad record followed by valid ones: the log was damaged after it was written.
    /// Recovery must stop; skipping would silently lose acknowledged data.
    Corrupt { offset: usize, reason: String },
}

/// Decodes the record at `offset`, or says why it cannot be read.
/// `Ok(None)` is a clean end: a zeroed header (preallocated space) or the end of the bytes.
pub fn read_record(bytes: &[u8], offset: usize) -> Result<Option<(Record<'_>, usize)>, String> {
    let rest = &bytes[offset.min(bytes.len())..];
    if rest.is_empty() {
        return Ok(None);
    }
    if rest.len() < RECORD_HEADER_BYTES {
        return if rest.iter().all(|&b| b == 0) {
            Ok(None)
        } else {
            Err("record header cut short".into())
        };
    }
    let header = &rest[..RECORD_HEADER_BYTES];
    if header.iter().all(|&b| b == 0) {
        return Ok(None);
    }
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    if len > MAX_RECORD_PAYLOAD_BYTES {
        return Err(format!("record length {len} is impossible"));
    }
    let Some(record_type) = RecordType::from_u8(header[4]) else {
        return Err(format!("unknown record type {}", header[4]));
    };
    let flags = header[5];
    let mut lsn_bytes = [0u8; 8];
    lsn_bytes.copy_from_slice(&header[8..16]);
    let lsn = u64::from_le_bytes(lsn_bytes);
    let crc = u32::from_le_bytes([header[16], header[17], header[18], header[19]]);
    let end = RECORD_HEADER_BYTES + len;
    if rest.len() < end {
        return Err(format!(
            "record payload cut short ({} of {len} bytes)",
            rest.len() - RECORD_HEADER_BYTES
        ));
    }
    let payload = &rest[RECORD_HEADER_BYTES..end];
    let mut h = crc32fast::Hasher::new();
    h.update(&header[..16]);
    h.update(payload);
    if h.finalize() != crc {
        return Err("record checksum mismatch".into());
    }
    Ok(Some((
        Record {
            record_type,
            flags,
            lsn,
            payload,
        },
        offset + end,
    )))
}

/// Reads every record of a segment's body (the bytes after its header).
/// Returns the records, the offset where valid data ends, and the damage found, if any.
pub fn read_all(bytes: &[u8]) -> (Vec<Record<'_>>, usize, Option<Damage>) {
    let mut records = Vec::new();
    let mut offset = 0;
    loop {
        match read_record(bytes, offset) {
            Ok(Some((rec, next))) => {
                records.push(rec);
                offset = next;
            }
            Ok(None) => return (records, offset, None),
            Err(reason) => {
                let damage = if group_end_after(bytes, offset + 1) {
                    Damage::Corrupt { offset, reason }
                } else {
                    Damage::TornTail { offset, reason }
                };
                return (records, offset, Some(damage));
            }
        }
    }
}

/// Whether, at or after `from`, a valid GroupEnd is directly followed by
/// another valid record. The writer starts a group only after the previous
/// one was synced, so that proves the damaged group was durable and
/// acknowledged. (A valid GroupEnd alone proves nothing: a crash before the
/// sync completed can leave a group's last page on disk and an earlier one not.)
fn group_end_after(bytes: &[u8], from: usize) -> bool {
    (from..bytes.len().saturating_sub(RECORD_HEADER_BYTES - 1)).any(|o| {
        match read_record(bytes, o) {
            Ok(Some((r, next))) if r.record_type == RecordType::GroupEnd => {
                matches!(read_record(bytes, next), Ok(Some(_)))
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` records, each its own acknowledged group (record + GroupEnd, 28 + 28 bytes).
    fn log(n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            encode_record(
                RecordType::Commit,
                0,
                i as u64,
                &(i as u64).to_le_bytes(),
                &mut out,
            );
            encode_record(RecordType::GroupEnd, 0, i as u64, &[0u8; 8], &mut out);
        }
        out
    }

    #[test]
    fn records_round_trip_and_zeros_end_the_log() {
        let mut bytes = log(5);
        bytes.extend_from_slice(&[0u8; 100]);
        let (recs, end, damage) = read_all(&bytes);
        assert_eq!(recs.len(), 10);
        assert_eq!(end, 10 * (RECORD_HEADER_BYTES + 8));
        assert_eq!(damage, None);
        assert_eq!(recs[6].lsn, 3);
        let h = SegmentHeader {
            shard: 3,
            segment: 42,
        };
        assert_eq!(
            decode_segment_header(&encode_segment_header(&h)).unwrap(),
            h
        );
    }

    #[test]
    fn a_torn_tail_is_found_and_cut() {
        let bytes = log(5);
        for cut in (8 * 28 + 1)..(9 * 28) {
            let (recs, end, damage) = read_all(&bytes[..cut]);
            assert_eq!(recs.len(), 8, "cut {cut}");
            assert_eq!(end, 8 * 28);
            assert!(
                matches!(damage, Some(Damage::TornTail { offset: 224, .. })),
                "cut {cut}: {damage:?}"
            );
        }
    }

    #[test]
    fn damage_before_valid_records_is_corruption() {
        let mut bytes = log(5);
        bytes[2 * 28 + 22] ^= 0xff; // a payload byte of the second group's record
        let (recs, end, damage) = read_all(&bytes);
        assert_eq!((recs.len(), end), (2, 56));
        assert!(
            matches!(damage, Some(Damage::Corrupt { offset: 56, .. })),
            "{damage:?}"
        );
        // damage in a group without a GroupEnd after it is a torn (unacknowledged) write
        let mut bytes = log(4);
        encode_record(RecordType::Commit, 0, 9, &9u64.to_le_bytes(), &mut bytes);
        encode_record(RecordType::Commit, 0, 10, &10u64.to_le_bytes(), &mut bytes);
        bytes[8 * 28 + 22] ^= 0xff;
        assert!(matches!(
            read_all(&bytes).2,
            Some(Damage::TornTail { offset: 224, .. })
        ));
    }
}
