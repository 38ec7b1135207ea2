//! Parses a segment's header, trailer and footer, and decodes blocks read
//! from it. The footer is checksummed as a whole; a block's header must
//! equal its copy in the footer and its payload must match the header's CRC
//! before anything is decoded, so damage on disk is reported (file, offset)
//! and never turned into wrong answers.
//! Must not: do I/O (callers hand it the bytes) or panic on any input.

use super::column::{cache_form, decode_block, CachedBlock};
use super::{
    BlockHeader, BlockMeta, Footer, SegmentColumn, SegmentError, SegmentHeader, SeriesEntry,
    BLOCK_HEADER_BYTES, BLOCK_ROWS, END_MAGIC, HEADER_BYTES, MAGIC, TRAILER_BYTES, VERSION,
};
use crate::exec::vector::Column;
use crate::types::DataType;

/// A footer larger than this is refused (a segment holds at most a few
/// million rows; its footer is a few hundred KB).
pub const MAX_FOOTER_BYTES: u32 = 256 << 20;

pub fn parse_header(file: &str, b: &[u8]) -> Result<SegmentHeader, SegmentError> {
    if b.len() < HEADER_BYTES || &b[0..8] != MAGIC {
        return Err(SegmentError::new(file, 0, "not a segment file (bad magic)"));
    }
    let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let version = u32_at(8);
    if version == 0 || version > VERSION {
        return Err(SegmentError::new(
            file,
            8,
            format!("format version {version} is not supported (this build reads 1..={VERSION})"),
        ));
    }
    let mut seg = [0u8; 8];
    seg.copy_from_slice(&b[24..32]);
    Ok(SegmentHeader {
        version,
        table: u32_at(16),
        shard: u32_at(20),
        segment: u64::from_le_bytes(seg),
    })
}

/// The trailer's `(footer offset, footer length, footer CRC)`, checked
/// against the file length.
pub fn parse_trailer(file: &str, file_len: u64, b: &[u8]) -> Result<(u64, u32, u32), SegmentError> {
    let at = file_len.saturating_sub(TRAILER_BYTES as u64);
    if file_len < (HEADER_BYTES + TRAILER_BYTES) as u64
        || b.len() != TRAILER_BYTES
        || &b[16..24] != END_MAGIC
    {
        return Err(SegmentError::new(
            file,
            at,
            "no segment trailer (truncated file?)",
        ));
    }
    let offset = u64::from_le_bytes(b[0..8].try_into().unwrap_or([0; 8]));
    let len = u32::from_le_bytes(b[8..12].try_into().unwrap_or([0; 4]));
    let crc = u32::from_le_bytes(b[12..16].try_into().unwrap_or([0; 4]));
    if len > MAX_FOOTER_BYTES
        || offset < HEADER_BYTES as u64
        || offset.checked_add(len as u64) != Some(at)
    {
        return Err(SegmentError::new(
            file,
            at,
            format!("trailer places a {len}-byte footer at {offset} in a {file_len}-byte file"),
        ));
    }
    Ok((offset, len, crc))
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    file: &'a str,
    base: u64,
}

impl<'a> Cursor<'a> {
    fn err(&self, what: impl Into<String>) -> SegmentError {
        SegmentError::new(self.file, self.base + self.pos as u64, what)
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], SegmentError> {
        if self.b.len() - self.pos < n {
            return Err(self.err("footer ends early"));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, SegmentError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().unwrap_or([0; 2]),
        ))
    }
    fn u32(&mut self) -> Result<u32, SegmentError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn u64(&mut self) -> Result<u64, SegmentError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }
    /// A count of items each at least `min_bytes` long, checked against what is left.
    fn count(&mut self, min_bytes: usize, what: &str) -> Result<usize, SegmentError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.b.len() - self.pos {
            return Err(self.err(format!("{what} count {n} exceeds the footer")));
        }
        Ok(n)
    }
}

/// Parses and validates a footer (`bytes` = exactly the footer, `crc` from the trailer).
pub fn parse_footer(
    file: &str,
    footer_offset: u64,
    bytes: &[u8],
    crc: u32,
) -> Result<Footer, SegmentError> {
    if crc32fast::hash(bytes) != crc {
        return Err(SegmentError::new(
            file,
            footer_offset,
            "footer checksum mismatch",
        ));
    }
    let mut c = Cursor {
        b: bytes,
        pos: 0,
        file,
        base: footer_offset,
    };
    let ncols = c.count(6, "column")?;
    let mut columns = Vec::with_capacity(ncols);
    for _ in 0..ncols {
        let type_oid = c.u32()?;
        let n = c.u16()? as usize;
        let name = String::from_utf8_lossy(c.take(n)?).into_owned();
        columns.push(SegmentColumn { name, type_oid });
    }
    let ngroups = c.count(4 + ncols * (12 + BLOCK_HEADER_BYTES), "block group")?;
    let mut groups = Vec::with_capacity(ngroups);
    let mut rows_total = 0u64;
    for _ in 0..ngroups {
        let rows = c.u32()?;
        if rows == 0 || rows as usize > BLOCK_ROWS {
            return Err(c.err(format!("block group of {rows} rows")));
        }
        rows_total += rows as u64;
        let mut blocks = Vec::with_capacity(ncols);
        for _ in 0..ncols {
            let offset = c.u64()?;
            let len = c.u32()?;
            let mut h = [0u8; BLOCK_HEADER_BYTES];
            h.copy_from_slice(c.take(BLOCK_HEADER_BYTES)?);
            let header = BlockHeader::decode(&h);
            let end = offset.checked_add(len as u64);
            if offset < HEADER_BYTES as u64
                || end.is_none_or(|e| e > footer_offset)
                || len as u64 != BLOCK_HEADER_BYTES as u64 + header.stored_len as u64
                || header.rows != rows
                || header.nulls > rows
            {
                return Err(c.err(format!(
                    "block directory entry at {offset} (+{len}) is inconsistent"
                )));
            }
            blocks.push(BlockMeta {
                offset,
                len,
                header,
            });
        }
        groups.push((rows, blocks));
    }
    let nkeys = c.u16()? as usize;
    let mut series_columns = Vec::with_capacity(nkeys);
    for _ in 0..nkeys {
        let k = c.u16()?;
        if k as usize >= ncols {
            return Err(c.err(format!("series key column {k} of {ncols}")));
        }
        series_columns.push(k);
    }
    let nseries = c.count(8 + nkeys * 4, "series")?;
    let mut series = Vec::with_capacity(nseries);
    for _ in 0..nseries {
        let first_row = c.u32()?;
        let rows = c.u32()?;
        let mut key = Vec::with_capacity(nkeys);
        for _ in 0..nkeys {
            let n = c.u32()?;
            key.push(if n == u32::MAX {
                None
            } else {
                Some(c.take(n as usize)?.to_vec())
            });
        }
        if first_row as u64 + rows as u64 > rows_total {
            return Err(c.err("series entry beyond the segment's rows"));
        }
        series.push(SeriesEntry {
            first_row,
            rows,
            key,
        });
    }
    let time = c.u16()?;
    let time_column = if time == u16::MAX { None } else { Some(time) };
    if time_column.is_some_and(|t| t as usize >= ncols) {
        return Err(c.err("time column out of range"));
    }
    let time_min = c.u64()? as i64;
    let time_max = c.u64()? as i64;
    let rows = c.u64()?;
    if rows != rows_total {
        return Err(c.err(format!(
            "footer says {rows} rows, its block groups hold {rows_total}"
        )));
    }
    if c.pos != bytes.len() {
        return Err(c.err("trailing bytes in the footer"));
    }
    Ok(Footer {
        columns,
        groups,
        series_columns,
        series,
        time_column,
        time_min,
        time_max,
        rows,
    })
}

/// Checks one block (`bytes` = header + payload, as read from
/// `meta.offset`) against the footer's copy of its header and its checksum;
/// returns the payload. Damage is an error naming the file and offset.
pub fn verify_block<'a>(
    file: &str,
    meta: &BlockMeta,
    bytes: &'a [u8],
) -> Result<&'a [u8], SegmentError> {
    if bytes.len() != meta.len as usize || bytes.len() < BLOCK_HEADER_BYTES {
        return Err(SegmentError::new(
            file,
            meta.offset,
            format!("block read returned {} of {} bytes", bytes.len(), meta.len),
        ));
    }
    let mut h = [0u8; BLOCK_HEADER_BYTES];
    h.copy_from_slice(&bytes[..BLOCK_HEADER_BYTES]);
    if BlockHeader::decode(&h) != meta.header {
        return Err(SegmentError::new(
            file,
            meta.offset,
            "block header differs from the footer's copy",
        ));
    }
    let payload = &bytes[BLOCK_HEADER_BYTES..];
    if crc32fast::hash(payload) != meta.header.crc {
        return Err(SegmentError::new(
            file,
            meta.offset,
            "block checksum mismatch",
        ));
    }
    Ok(payload)
}

/// Verifies and decodes one block (`bytes` as for `verify_block`).
pub fn decode_block_bytes(
    file: &str,
    meta: &BlockMeta,
    bytes: &[u8],
    data_type: DataType,
) -> Result<Column, SegmentError> {
    let payload = verify_block(file, meta, bytes)?;
    decode_block(&meta.header, payload, data_type)
        .map_err(|e| SegmentError::new(file, meta.offset, e))
}

/// Verifies one block (`bytes` as for `verify_block`) and turns it into the
/// form block caches hold.
pub fn cache_block(
    file: &str,
    meta: &BlockMeta,
    bytes: &[u8],
) -> Result<CachedBlock, SegmentError> {
    let payload = verify_block(file, meta, bytes)?;
    cache_form(&meta.header, payload).map_err(|e| SegmentError::new(file, meta.offset, e))
}

/// Decodes a cached block of the block at `meta.offset` of `file`.
pub fn decode_cached(
    file: &str,
    meta: &BlockMeta,
    block: &CachedBlock,
    data_type: DataType,
) -> Result<Column, SegmentError> {
    decode_block(&block.header, &block.payload, data_type)
        .map_err(|e| SegmentError::new(file, meta.offset, e))
}

/// Parses a whole segment held in memory (tests, the inspector, golden files).
pub fn parse_segment(file: &str, bytes: &[u8]) -> Result<(SegmentHeader, Footer), SegmentError> {
    let header = parse_header(file, bytes)?;
    let len = bytes.len() as u64;
    let tail = bytes
        .get(bytes.len().saturating_sub(TRAILER_BYTES)..)
        .unwrap_or(&[]);
    let (offset, flen, crc) = parse_trailer(file, len, tail)?;
    let footer = parse_footer(
        file,
        offset,
        &bytes[offset as usize..offset as usize + flen as usize],
        crc,
    )?;
    Ok((header, footer))
}

/// Decodes every block of a segment held in memory, group by group.
pub fn decode_all(
    file: &str,
    bytes: &[u8],
    types: &[DataType],
) -> Result<Vec<Vec<Column>>, SegmentError> {
    let (_, footer) = parse_segment(file, bytes)?;
    if types.len() < footer.columns.len() {
        return Err(SegmentError::new(
            file,
            0,
            format!(
                "{} column types for {} columns",
                types.len(),
                footer.columns.len()
            ),
        ));
    }
    footer
        .groups
        .iter()
        .map(|(rows, blocks)| {
            let stored = blocks.iter().zip(types).map(|(m, &t)| {
                decode_block_bytes(
                    file,
                    m,
                    &bytes[m.offset as usize..(m.offset + m.len as u64) as usize],
                    t,
                )
            });
            // Columns added after the segment was written read NULL.
            let added = types[blocks.len().min(types.len())..]
                .iter()
                .map(|&t| Ok(Column::from_datum(t, &crate::types::Datum::Null, *rows as usize)));
            stored.chain(added).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::writer::{write_segment, SegmentSpec};
    use super::*;
    use crate::exec::vector::Batch;
    use crate::types::Datum;

    fn sample(rows: usize) -> (SegmentSpec, Batch, Vec<DataType>) {
        let types = vec![
            DataType::TimestampTz,
            DataType::Int32,
            DataType::Float64,
            DataType::Text,
        ];
        let t: Vec<Datum> = (0..rows)
            .map(|i| Datum::Int64(1_451_606_400_000_000_000 + (i as i64 % 500) * 10_000_000_000))
            .collect();
        let host: Vec<Datum> = (0..rows).map(|i| Datum::Int32((i / 500) as i32)).collect();
        let v: Vec<Datum> = (0..rows)
            .map(|i| {
                if i % 11 == 3 {
                    Datum::Null
                } else {
                    Datum::Float64((i % 100) as f64)
                }
            })
            .collect();
        let s: Vec<Datum> = (0..rows)
            .map(|i| Datum::Bytes(format!("host_{}", i / 500).into_bytes()))
            .collect();
        let batch = Batch::from_columns(vec![
            Column::from_datums(types[0], &t),
            Column::from_datums(types[1], &host),
            Column::from_datums(types[2], &v),
            Column::from_datums(types[3], &s),
        ]);
        let columns = ["time", "tags_id", "usage", "hostname"]
            .iter()
            .zip(&types)
            .map(|(n, t)| SegmentColumn {
                name: n.to_string(),
                type_oid: t.oid(),
            })
            .collect();
        let spec = SegmentSpec {
            table: 16400,
            shard: 1,
            segment: 7,
            columns,
            series_columns: vec![1],
            time_column: Some(0),
        };
        (spec, batch, types)
    }

    #[test]
    fn a_segment_round_trips_with_its_footer() {
        let (spec, batch, types) = sample(20_000);
        let (bytes, footer) = write_segment(&spec, &batch);
        let (header, parsed) = parse_segment("t.seg", &bytes).unwrap();
        assert_eq!(
            header,
            SegmentHeader {
                version: super::super::VERSION,
                table: 16400,
                shard: 1,
                segment: 7
            }
        );
        assert_eq!(parsed, footer);
        assert_eq!(parsed.rows, 20_000);
        assert_eq!(parsed.groups.len(), 3);
        assert_eq!(parsed.groups[2].0, 20_000 - 2 * 8192);
        assert_eq!(parsed.series.len(), 40);
        assert_eq!(parsed.series[2].first_row, 1000);
        assert_eq!(
            parsed.series[2].key,
            vec![Some(2i64.to_le_bytes().to_vec())]
        );
        assert_eq!(parsed.time_min, 1_451_606_400_000_000_000);
        let groups = decode_all("t.seg", &bytes, &types).unwrap();
        let mut row = 0;
        for g in &groups {
            for i in 0..g[0].len() {
                for (c, col) in g.iter().enumerate() {
                    assert_eq!(
                        format!("{:?}", col.datum(i)),
                        format!("{:?}", batch.columns[c].datum(row)),
                        "row {row} col {c}"
                    );
                }
                row += 1;
            }
        }
        assert_eq!(row, 20_000);
        // Read as a table that gained a column since: NULL on every row.
        let mut wider = types.clone();
        wider.push(DataType::Int64);
        for g in decode_all("t.seg", &bytes, &wider).unwrap() {
            assert_eq!(g.len(), wider.len());
            assert_eq!(g[4].null_count(), g[0].len());
        }
        assert!(decode_all("t.seg", &bytes, &types[..3]).is_err(), "fewer types than columns");
    }

    #[test]
    fn every_flipped_bit_is_caught_or_harmless() {
        let (spec, batch, types) = sample(300);
        let (bytes, _) = write_segment(&spec, &batch);
        let good = decode_all("t.seg", &bytes, &types).unwrap();
        let mut copy = bytes.clone();
        for bit in 0..copy.len() * 8 {
            copy[bit / 8] ^= 1 << (bit % 8);
            // A flip is either detected, or lands where it changes nothing decoded
            // (the reserved header flags word, the segment id).
            if let Ok(decoded) = decode_all("t.seg", &copy, &types) {
                assert_eq!(
                    format!("{decoded:?}"),
                    format!("{good:?}"),
                    "bit {bit} changed the data undetected"
                );
            }
            copy[bit / 8] ^= 1 << (bit % 8);
        }
        for cut in 0..bytes.len() {
            assert!(
                decode_all("t.seg", &bytes[..cut], &types).is_err(),
                "a truncation to {cut} bytes was accepted"
            );
        }
    }
}
