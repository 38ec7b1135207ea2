//! One column block: a `Column` of up to `BLOCK_ROWS` values to a block
//! (40-byte header + payload) and back. The value codec is picked by the
//! column's physical type and, inside each codec, by sampling the block;
//! NULL slots are filled with the previous valid value before encoding (so a
//! NULL costs nothing in FOR, delta or RLE) and recorded in a validity
//! bitmap that is omitted when the block has no NULLs. An optional zstd
//! stage is kept only when it makes the payload at least 20% smaller.
//! Must not: do I/O, or decode a block whose checksum or lengths disagree.

use std::sync::Arc;

use super::{BlockHeader, FLAG_VALIDITY, FLAG_ZONE_MAP, FLAG_ZSTD};
use crate::exec::vector::{Batch, Bitmap, Column, ColumnData};
use crate::storage::codec::{boolean, float, integer, string, timestamp};
use crate::types::DataType;

/// Block encodings (the header's first byte; stable, never renumber).
pub const ENC_INTEGER: u8 = 1;
pub const ENC_TIMESTAMP: u8 = 2;
pub const ENC_FLOAT64: u8 = 3;
pub const ENC_FLOAT32: u8 = 4;
pub const ENC_BYTES: u8 = 5;
pub const ENC_BOOL: u8 = 6;
/// The WAL's batch encoding of one column (numeric, interval, and any type
/// without a dedicated codec yet).
pub const ENC_PLAIN: u8 = 7;

/// The largest payload a block may declare (a block holds ≤ 8192 values;
/// text values are bounded by the 1 GB field limit, blocks far below that in
/// practice): a guard against lengths read from damaged bytes.
pub const MAX_BLOCK_PAYLOAD: u32 = 1 << 30;

/// The zstd stage is kept only when the result is at most this fraction.
const ZSTD_KEEP_RATIO: f64 = 0.8;
const ZSTD_LEVEL: i32 = 3;
/// Payloads smaller than this are not worth a zstd attempt.
const ZSTD_MIN_BYTES: usize = 256;

fn is_timestamp(t: DataType) -> bool {
    matches!(t, DataType::Timestamp | DataType::TimestampTz)
}

/// A block in the form block caches hold: checked against its checksum once
/// when read, the zstd stage undone and entropy-coded integer steps (ALP
/// digits included) re-encoded light (`integer::light_form`), so that cache
/// hits decode, and sum, at bit-unpacking speed. `header` describes
/// `payload`: lengths, flags and CRC are recomputed when the form differs
/// from the file's.
#[derive(Debug, Clone)]
pub struct CachedBlock {
    pub header: BlockHeader,
    pub payload: Vec<u8>,
}

impl CachedBlock {
    /// Bytes it takes in a cache.
    pub fn size(&self) -> usize {
        super::BLOCK_HEADER_BYTES + self.payload.len()
    }
}

/// The cache form of a block whose payload `stored` was checked against
/// `header.crc`.
pub fn cache_form(header: &BlockHeader, stored: &[u8]) -> Result<CachedBlock, String> {
    let mut header = *header;
    let mut raw = if header.flags & FLAG_ZSTD != 0 {
        unzip(&header, stored)?
    } else {
        stored.to_vec()
    };
    let pos = if header.flags & FLAG_VALIDITY != 0 {
        let len = raw
            .get(0..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("truncated validity length")?;
        4usize.saturating_add(len).min(raw.len())
    } else {
        0
    };
    let light = match header.encoding {
        ENC_FLOAT64 => float::light_form(&raw[pos..]),
        ENC_INTEGER => integer::light_form(&raw[pos..]),
        _ => Ok(None),
    }
    .map_err(|e| e.to_string())?;
    let changed = header.flags & FLAG_ZSTD != 0 || light.is_some();
    if let Some(light) = light {
        raw.truncate(pos);
        raw.extend_from_slice(&light);
    }
    if changed {
        header.flags &= !FLAG_ZSTD;
        header.stored_len = raw.len() as u32;
        header.raw_len = raw.len() as u32;
        header.crc = crc32fast::hash(&raw);
    }
    Ok(CachedBlock { header, payload: raw })
}

/// A zstd stage undone, checked against the header's raw length.
fn unzip(header: &BlockHeader, stored: &[u8]) -> Result<Vec<u8>, String> {
    let unzipped = zstd::bulk::decompress(stored, header.raw_len as usize)
        .map_err(|e| format!("zstd: {e}"))?;
    if unzipped.len() != header.raw_len as usize {
        return Err(format!(
            "zstd stage gave {} bytes, the header says {}",
            unzipped.len(),
            header.raw_len
        ));
    }
    Ok(unzipped)
}

/// The sum of a float8 block's values without decoding them, when it has no
/// NULLs, no zstd stage (cache form) and an encoding with a fused sum
/// (`float::sum_f64`). `Ok(None)`: decode and add instead.
pub fn sum_f64_block(header: &BlockHeader, payload: &[u8]) -> Result<Option<f64>, String> {
    if header.encoding != ENC_FLOAT64 || header.nulls != 0 || header.flags & FLAG_ZSTD != 0 {
        return Ok(None);
    }
    match float::sum_f64(payload).map_err(|e| e.to_string())? {
        Some((_, n)) if n != header.rows as usize => Err(format!(
            "{n} values encoded, the header says {}",
            header.rows
        )),
        Some((sum, _)) => Ok(Some(sum)),
        None => Ok(None),
    }
}

/// The sum of an integer block's values without decoding them (cache form,
/// no NULLs; `integer::sum_i64`). `Ok(None)`: decode and add instead.
pub fn sum_i64_block(header: &BlockHeader, payload: &[u8]) -> Result<Option<i64>, String> {
    if header.encoding != ENC_INTEGER || header.nulls != 0 || header.flags & FLAG_ZSTD != 0 {
        return Ok(None);
    }
    match integer::sum_i64(payload).map_err(|e| e.to_string())? {
        Some((_, n)) if n != header.rows as usize => Err(format!(
            "{n} values encoded, the header says {}",
            header.rows
        )),
        Some((sum, _)) => Ok(Some(sum)),
        None => Ok(None),
    }
}

/// Encodes `col` as one block, appending header and payload to `out`.
/// Returns the header written.
pub fn encode_block(col: &Column, out: &mut Vec<u8>) -> BlockHeader {
    let rows = col.len();
    let nulls = col.null_count();
    let mut raw = Vec::new();
    if nulls > 0 {
        let valid: Vec<bool> = (0..rows).map(|i| col.is_valid(i)).collect();
        let validity = boolean::encode_validity(&valid);
        raw.extend_from_slice(&(validity.len() as u32).to_le_bytes());
        raw.extend_from_slice(&validity);
    }
    let mut header = BlockHeader {
        rows: rows as u32,
        nulls: nulls as u32,
        ..Default::default()
    };
    if nulls > 0 {
        header.flags |= FLAG_VALIDITY;
    }
    let valid = |i: usize| col.is_valid(i);
    match &col.data {
        ColumnData::Int16(_) | ColumnData::Int32(_) | ColumnData::Int64(_) => {
            let values: Vec<i64> = match &col.data {
                ColumnData::Int16(v) => v.iter().map(|&x| x as i64).collect(),
                ColumnData::Int32(v) => v.iter().map(|&x| x as i64).collect(),
                ColumnData::Int64(v) => v.clone(),
                _ => Vec::new(),
            };
            encode_ints(values, nulls, &valid, is_timestamp(col.data_type), &mut header, &mut raw)
        }
        ColumnData::Float64(v) => {
            zone_floats(v.iter().copied(), &valid, &mut header);
            header.encoding = ENC_FLOAT64;
            raw.extend_from_slice(&float::encode_f64(&filled(v, nulls, &valid)));
        }
        ColumnData::Float32(v) => {
            zone_floats(v.iter().map(|&x| x as f64), &valid, &mut header);
            header.encoding = ENC_FLOAT32;
            raw.extend_from_slice(&float::encode_f32(&filled(v, nulls, &valid)));
        }
        ColumnData::Bool(v) => {
            zone_ints(v.iter().map(|&b| b as i64), &valid, &mut header);
            header.encoding = ENC_BOOL;
            raw.extend_from_slice(&boolean::encode_bools(&filled(v, nulls, &valid)));
        }
        // NULL text slots are empty strings already: nothing to fill.
        ColumnData::Bytes(b) if b.data.len() <= string::MAX_BYTES => {
            header.encoding = ENC_BYTES;
            raw.extend_from_slice(&string::encode_bytes(&b.offsets, &b.data));
        }
        ColumnData::Numeric(_) | ColumnData::Bytes(_) | ColumnData::Interval(_) => {
            encode_plain(col, &mut header, &mut raw)
        }
    }
    header.raw_len = raw.len() as u32;
    let mut payload = raw;
    // The string codec zstd's value bytes itself where that pays: a second
    // pass over its output costs a compression and rarely gains 20%.
    let compressed_inside = header.encoding == ENC_BYTES;
    if payload.len() >= ZSTD_MIN_BYTES && !compressed_inside {
        if let Some(z) = crate::storage::codec::zstd_compress(&payload, ZSTD_LEVEL) {
            if (z.len() as f64) <= payload.len() as f64 * ZSTD_KEEP_RATIO {
                header.flags |= FLAG_ZSTD;
                payload = z;
            }
        }
    }
    header.stored_len = payload.len() as u32;
    header.crc = crc32fast::hash(&payload);
    header.encode(out);
    out.extend_from_slice(&payload);
    header
}

/// The values with NULL slots filled (a copy only when there are NULLs).
fn filled<'a, T: Copy + Default>(
    v: &'a [T],
    nulls: usize,
    valid: &dyn Fn(usize) -> bool,
) -> std::borrow::Cow<'a, [T]> {
    if nulls == 0 {
        return std::borrow::Cow::Borrowed(v);
    }
    let mut out = v.to_vec();
    fill_nulls(&mut out, valid);
    std::borrow::Cow::Owned(out)
}

fn zone_ints(
    values: impl Iterator<Item = i64>,
    valid: &dyn Fn(usize) -> bool,
    header: &mut BlockHeader,
) {
    let (mut min, mut max, mut any) = (i64::MAX, i64::MIN, false);
    for (i, v) in values.enumerate() {
        if valid(i) {
            min = min.min(v);
            max = max.max(v);
            any = true;
        }
    }
    if any {
        header.flags |= FLAG_ZONE_MAP;
        header.min = min;
        header.max = max;
    }
}

/// Float zone maps are kept only for NaN-free blocks (NaN sorts above every
/// number in PostgreSQL, which a min/max pair of numbers cannot express).
fn zone_floats(
    values: impl Iterator<Item = f64>,
    valid: &dyn Fn(usize) -> bool,
    header: &mut BlockHeader,
) {
    let (mut min, mut max, mut any) = (f64::INFINITY, f64::NEG_INFINITY, false);
    for (i, v) in values.enumerate() {
        if valid(i) {
            if v.is_nan() {
                return;
            }
            min = min.min(v);
            max = max.max(v);
            any = true;
        }
    }
    if any {
        header.flags |= FLAG_ZONE_MAP;
        header.min = min.to_bits() as i64;
        header.max = max.to_bits() as i64;
    }
}

fn encode_ints(
    mut filled: Vec<i64>,
    nulls: usize,
    valid: &dyn Fn(usize) -> bool,
    timestamps: bool,
    header: &mut BlockHeader,
    raw: &mut Vec<u8>,
) {
    zone_ints(filled.iter().copied(), valid, header);
    if nulls > 0 {
        fill_nulls(&mut filled, valid);
    }
    let bytes = if timestamps {
        header.encoding = ENC_TIMESTAMP;
        timestamp::encode_timestamps(&filled)
    } else {
        header.encoding = ENC_INTEGER;
        integer::encode_i64(&filled)
    };
    raw.extend_from_slice(&bytes);
}

/// NULL slots take the previous valid value (the first valid one for leading NULLs).
fn fill_nulls<T: Copy + Default>(values: &mut [T], valid: &dyn Fn(usize) -> bool) {
    let first = (0..values.len())
        .find(|&i| valid(i))
        .map(|i| values[i])
        .unwrap_or_default();
    let mut last = first;
    for (i, v) in values.iter_mut().enumerate() {
        if valid(i) {
            last = *v;
        } else {
            *v = last;
        }
    }
}

fn encode_plain(col: &Column, header: &mut BlockHeader, raw: &mut Vec<u8>) {
    header.encoding = ENC_PLAIN;
    let one = Batch::new(
        vec![Arc::new(Column {
            validity: None,
            ..col.clone()
        })],
        col.len(),
    );
    crate::wal::codec::encode_batch(&one, raw);
}

/// Decodes a block's payload (as stored, checksum already verified by the
/// caller against `header.crc`) into a column of `data_type`.
pub fn decode_block(
    header: &BlockHeader,
    stored: &[u8],
    data_type: DataType,
) -> Result<Column, String> {
    let rows = header.rows as usize;
    if rows > super::BLOCK_ROWS {
        return Err(format!(
            "block claims {rows} rows, more than {}",
            super::BLOCK_ROWS
        ));
    }
    if header.raw_len > MAX_BLOCK_PAYLOAD {
        return Err(format!("block claims a {}-byte payload", header.raw_len));
    }
    let unzipped;
    let raw: &[u8] = if header.flags & FLAG_ZSTD != 0 {
        unzipped = unzip(header, stored)?;
        &unzipped
    } else {
        stored
    };
    let mut pos = 0usize;
    let mut validity = None;
    if header.flags & FLAG_VALIDITY != 0 {
        let len = raw
            .get(0..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or("truncated validity length")?;
        let bytes = raw
            .get(4..4usize.saturating_add(len))
            .ok_or("truncated validity")?;
        let mut valid = Vec::with_capacity(rows);
        boolean::decode_validity(bytes, rows, &mut valid).map_err(|e| e.to_string())?;
        let mut bm = Bitmap::new_unset(rows);
        for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
            bm.set(i);
        }
        if rows - bm.count_set() != header.nulls as usize {
            return Err(format!(
                "validity has {} NULLs, the header says {}",
                rows - bm.count_set(),
                header.nulls
            ));
        }
        validity = Some(bm);
        pos = 4 + len;
    } else if header.nulls != 0 {
        return Err(format!("{} NULLs but no validity bitmap", header.nulls));
    }
    let body = &raw[pos..];
    let physical = data_type.physical();
    let data = match header.encoding {
        ENC_INTEGER | ENC_TIMESTAMP => {
            let mut v = Vec::with_capacity(rows);
            if header.encoding == ENC_INTEGER {
                integer::decode_i64(body, &mut v).map_err(|e| e.to_string())?;
            } else {
                timestamp::decode_timestamps(body, &mut v).map_err(|e| e.to_string())?;
            }
            if v.len() != rows {
                return Err(format!(
                    "{} values decoded, the header says {rows}",
                    v.len()
                ));
            }
            use crate::types::PhysicalType as P;
            match physical {
                P::Int64 => ColumnData::Int64(v),
                P::Int32 => ColumnData::Int32(narrow(&v)?),
                P::Int16 => ColumnData::Int16(narrow(&v)?),
                other => return Err(format!("integer block for a {other:?} column")),
            }
        }
        ENC_FLOAT64 | ENC_FLOAT32 | ENC_BOOL | ENC_BYTES => {
            use crate::types::PhysicalType as P;
            let cx = |e: crate::storage::codec::CodecError| e.to_string();
            match (header.encoding, physical) {
                (ENC_FLOAT64, P::Float64) => {
                    let mut v = Vec::with_capacity(rows);
                    float::decode_f64(body, &mut v).map_err(cx)?;
                    ColumnData::Float64(v)
                }
                (ENC_FLOAT32, P::Float32) => {
                    let mut v = Vec::with_capacity(rows);
                    float::decode_f32(body, &mut v).map_err(cx)?;
                    ColumnData::Float32(v)
                }
                (ENC_BOOL, P::Bool) => {
                    let mut v = Vec::with_capacity(rows);
                    boolean::decode_bools(body, &mut v).map_err(cx)?;
                    ColumnData::Bool(v)
                }
                (ENC_BYTES, P::Bytes) => {
                    let mut b = crate::exec::vector::BytesColumn::with_capacity(rows, 0);
                    string::decode_bytes(body, &mut b).map_err(cx)?;
                    ColumnData::Bytes(b)
                }
                (enc, p) => return Err(format!("block encoding {enc} for a {p:?} column")),
            }
        }
        ENC_PLAIN => {
            let mut r = crate::wal::codec::Reader::new(body);
            let batch =
                crate::wal::codec::decode_batch(&mut r, &[data_type]).map_err(|e| e.to_string())?;
            if r.remaining() != 0 || batch.len != rows {
                return Err("plain block length disagrees with its header".into());
            }
            let col = Arc::try_unwrap(
                batch
                    .columns
                    .into_iter()
                    .next()
                    .ok_or("plain block without a column")?,
            )
            .unwrap_or_else(|c| (*c).clone());
            col.data
        }
        other => return Err(format!("unknown block encoding {other}")),
    };
    if data.len() != rows {
        return Err(format!(
            "{} values decoded, the header says {rows}",
            data.len()
        ));
    }
    let mut data = data;
    crate::exec::vector::repack_arrays(data_type, &mut data);
    Ok(Column::new(data_type, data, validity))
}

fn narrow<T: TryFrom<i64>>(v: &[i64]) -> Result<Vec<T>, String> {
    v.iter()
        .map(|&x| T::try_from(x).map_err(|_| format!("value {x} out of range for the column")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    fn round_trip(col: &Column) -> Column {
        let mut out = Vec::new();
        let header = encode_block(col, &mut out);
        let stored = &out[super::super::BLOCK_HEADER_BYTES..];
        assert_eq!(crc32fast::hash(stored), header.crc);
        decode_block(&header, stored, col.data_type).unwrap()
    }

    #[test]
    fn every_type_round_trips_with_and_without_nulls() {
        let samples: Vec<(DataType, Vec<Datum>)> = vec![
            (
                DataType::Int16,
                vec![Datum::Int16(1), Datum::Int16(-7), Datum::Int16(i16::MAX)],
            ),
            (
                DataType::Int32,
                vec![Datum::Int32(5), Datum::Int32(i32::MIN), Datum::Int32(0)],
            ),
            (
                DataType::Int64,
                vec![
                    Datum::Int64(i64::MIN),
                    Datum::Int64(i64::MAX),
                    Datum::Int64(3),
                ],
            ),
            (
                DataType::TimestampTz,
                vec![
                    Datum::Int64(1_000_000_000),
                    Datum::Int64(2_000_000_000),
                    Datum::Int64(3_000_000_000),
                ],
            ),
            (
                DataType::Float64,
                vec![
                    Datum::Float64(1.5),
                    Datum::Float64(f64::NAN),
                    Datum::Float64(-0.0),
                ],
            ),
            (
                DataType::Float32,
                vec![
                    Datum::Float32(1.5),
                    Datum::Float32(2.25),
                    Datum::Float32(-3.0),
                ],
            ),
            (
                DataType::Bool,
                vec![Datum::Bool(true), Datum::Bool(false), Datum::Bool(true)],
            ),
            (
                DataType::Text,
                vec![
                    Datum::Bytes(b"a".to_vec()),
                    Datum::Bytes(Vec::new()),
                    Datum::Bytes("héllo".as_bytes().to_vec()),
                ],
            ),
            (
                DataType::Numeric,
                vec![
                    Datum::Numeric(rust_decimal::Decimal::new(-12_340, 3).into()),
                    Datum::Numeric(crate::types::Numeric::NaN),
                    Datum::Numeric(crate::types::Numeric::Infinity),
                    Datum::Numeric(crate::types::Numeric::NegInfinity),
                    Datum::Numeric(crate::types::Numeric::ZERO),
                ],
            ),
        ];
        for (t, vals) in samples {
            for with_nulls in [false, true] {
                let mut datums: Vec<Datum> =
                    (0..3000).map(|i| vals[i % vals.len()].clone()).collect();
                if with_nulls {
                    for i in (0..datums.len()).step_by(7) {
                        datums[i] = Datum::Null;
                    }
                }
                datums.truncate(2048);
                let col = Column::from_datums(t, &datums);
                let back = round_trip(&col);
                for i in 0..datums.len() {
                    let (a, b) = (col.datum(i), back.datum(i));
                    assert!(
                        a == b || format!("{a:?}") == format!("{b:?}"),
                        "{t:?} row {i}: {a:?} vs {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn zone_maps_cover_valid_values_only() {
        let col = Column::from_datums(
            DataType::Int64,
            &[Datum::Null, Datum::Int64(5), Datum::Int64(-3), Datum::Null],
        );
        let header = encode_block(&col, &mut Vec::new());
        assert!(header.has_zone_map());
        assert_eq!((header.min, header.max, header.nulls), (-3, 5, 2));
        let nan = Column::from_datums(
            DataType::Float64,
            &[Datum::Float64(1.0), Datum::Float64(f64::NAN)],
        );
        assert!(!encode_block(&nan, &mut Vec::new()).has_zone_map());
    }

    #[test]
    fn a_damaged_payload_is_an_error_not_a_panic() {
        let col = Column::from_datums(
            DataType::Int64,
            &(0..2048).map(|i| Datum::Int64(i * 3)).collect::<Vec<_>>(),
        );
        let mut out = Vec::new();
        let header = encode_block(&col, &mut out);
        let stored = out[super::super::BLOCK_HEADER_BYTES..].to_vec();
        for cut in 0..stored.len() {
            let _ = decode_block(&header, &stored[..cut], DataType::Int64);
        }
        let mut bad = header;
        bad.rows = 5000;
        assert!(decode_block(&bad, &stored, DataType::Int64).is_err());
    }
}
