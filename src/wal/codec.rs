//! Byte encoding of column batches inside WAL records (see
//! storage-format/SPEC.md, "WAL payloads"). Little-endian throughout.
//! Must not: trust the bytes it decodes — every length is checked, and
//! malformed input is an error, never a panic.

use std::sync::Arc;

use crate::exec::vector::{Batch, Bitmap, BytesColumn, Column, ColumnData};
use crate::types::{DataType, Interval};

/// A decode failure: where in the payload and what was wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("malformed WAL payload at byte {offset}: {what}")]
pub struct CodecError {
    pub offset: usize,
    pub what: String,
}

/// Physical type tags as written on disk (stable: never renumber).
const TAG_BOOL: u8 = 1;
const TAG_INT16: u8 = 2;
const TAG_INT32: u8 = 3;
const TAG_INT64: u8 = 4;
const TAG_FLOAT32: u8 = 5;
const TAG_FLOAT64: u8 = 6;
const TAG_NUMERIC: u8 = 7;
const TAG_BYTES: u8 = 8;
const TAG_INTERVAL: u8 = 9;

fn tag_of(data: &ColumnData) -> u8 {
    match data {
        ColumnData::Bool(_) => TAG_BOOL,
        ColumnData::Int16(_) => TAG_INT16,
        ColumnData::Int32(_) => TAG_INT32,
        ColumnData::Int64(_) => TAG_INT64,
        ColumnData::Float32(_) => TAG_FLOAT32,
        ColumnData::Float64(_) => TAG_FLOAT64,
        ColumnData::Numeric(_) => TAG_NUMERIC,
        ColumnData::Bytes(_) => TAG_BYTES,
        ColumnData::Interval(_) => TAG_INTERVAL,
    }
}

/// Appends `batch` to `out`: row count (u32), column count (u16), then per
/// column its tag (u8), a validity flag (u8), the validity bitmap when the
/// flag is 1 (ceil(rows/8) bytes, LSB first) and the values.
pub fn encode_batch(batch: &Batch, out: &mut Vec<u8>) {
    // One reservation: growing by doubling re-faults fresh pages at every step.
    out.reserve(encoded_len(batch));
    out.extend_from_slice(&(batch.len as u32).to_le_bytes());
    out.extend_from_slice(&(batch.columns.len() as u16).to_le_bytes());
    for col in &batch.columns {
        out.push(tag_of(&col.data));
        match &col.validity {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                // The bitmap's words, little-endian, are the LSB-first bytes; bits past the end are zero.
                let bytes = batch.len.div_ceil(8);
                let start = out.len();
                for w in v.words() {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                out.resize(start + bytes, 0);
                if !batch.len.is_multiple_of(8) {
                    out[start + bytes - 1] &= (1u8 << (batch.len % 8)) - 1;
                }
            }
        }
        match &col.data {
            ColumnData::Bool(v) => out.extend(v.iter().map(|&b| b as u8)),
            ColumnData::Int16(v) => extend_le(out, v, |x| x.to_le_bytes()),
            ColumnData::Int32(v) => extend_le(out, v, |x| x.to_le_bytes()),
            ColumnData::Int64(v) => extend_le(out, v, |x| x.to_le_bytes()),
            ColumnData::Float32(v) => extend_le(out, v, |x| x.to_le_bytes()),
            ColumnData::Float64(v) => extend_le(out, v, |x| x.to_le_bytes()),
            ColumnData::Numeric(v) => extend_le(out, v, |x| x.serialize()),
            ColumnData::Interval(v) => v.iter().for_each(|x| {
                out.extend_from_slice(&x.months.to_le_bytes());
                out.extend_from_slice(&x.days.to_le_bytes());
                out.extend_from_slice(&x.micros.to_le_bytes());
            }),
            ColumnData::Bytes(b) => {
                extend_le(out, &b.offsets, |o| o.to_le_bytes());
                out.extend_from_slice(&b.data);
            }
        }
    }
}

/// Appends each value's `N` bytes: sized once, then filled in a loop the
/// compiler turns into straight copies (a push per value checks capacity each time).
fn extend_le<T: Copy, const N: usize>(out: &mut Vec<u8>, values: &[T], bytes: impl Fn(T) -> [u8; N]) {
    let start = out.len();
    out.resize(start + values.len() * N, 0);
    for (dst, &x) in out[start..].chunks_exact_mut(N).zip(values) {
        dst.copy_from_slice(&bytes(x));
    }
}

/// The bytes `encode_batch` writes for `batch`.
pub fn encoded_len(batch: &Batch) -> usize {
    let validity = batch.len.div_ceil(8);
    6 + batch
        .columns
        .iter()
        .map(|col| {
            2 + col.validity.as_ref().map_or(0, |_| validity) + col.value_bytes()
        })
        .sum::<usize>()
}

/// Reads bytes with bounds checks.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }
    pub fn fail(&self, what: impl Into<String>) -> CodecError {
        CodecError {
            offset: self.pos,
            what: what.into(),
        }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.fail(format!("needs {n} more bytes")))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    pub fn u16(&mut self) -> Result<u16, CodecError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32, CodecError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, CodecError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
}

fn fixed<const N: usize, T>(
    r: &mut Reader,
    rows: usize,
    conv: impl Fn([u8; N]) -> T,
) -> Result<Vec<T>, CodecError> {
    let bytes = r.take(
        rows.checked_mul(N)
            .ok_or_else(|| r.fail("row count overflows"))?,
    )?;
    Ok(bytes
        .chunks_exact(N)
        .map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            conv(a)
        })
        .collect())
}

/// Decodes one batch written by `encode_batch`, checking it against the
/// table's column types (a mismatch means the log does not belong to this
/// catalog). A batch with fewer columns was written before an `ALTER TABLE
/// … ADD COLUMN`: it reads NULL in the added ones.
pub fn decode_batch(r: &mut Reader, types: &[DataType]) -> Result<Batch, CodecError> {
    let rows = r.u32()? as usize;
    let ncols = r.u16()? as usize;
    if ncols > types.len() {
        return Err(r.fail(format!("{ncols} columns, the table has {}", types.len())));
    }
    // Every row costs at least one byte per column: a row count beyond the payload is corrupt.
    if rows > r.remaining() {
        return Err(r.fail(format!("row count {rows} exceeds the payload")));
    }
    let mut columns = Vec::with_capacity(types.len());
    for &t in &types[..ncols] {
        let tag = r.u8()?;
        let validity = match r.u8()? {
            0 => None,
            1 => {
                let bytes = r.take(rows.div_ceil(8))?;
                let mut v = Bitmap::new_unset(rows);
                for i in 0..rows {
                    if bytes[i / 8] >> (i % 8) & 1 == 1 {
                        v.set(i);
                    }
                }
                Some(v)
            }
            other => return Err(r.fail(format!("validity flag {other}"))),
        };
        let data = match (tag, t.physical()) {
            (TAG_BOOL, crate::types::PhysicalType::Bool) => {
                ColumnData::Bool(r.take(rows)?.iter().map(|&b| b != 0).collect())
            }
            (TAG_INT16, crate::types::PhysicalType::Int16) => {
                ColumnData::Int16(fixed(r, rows, i16::from_le_bytes)?)
            }
            (TAG_INT32, crate::types::PhysicalType::Int32) => {
                ColumnData::Int32(fixed(r, rows, i32::from_le_bytes)?)
            }
            (TAG_INT64, crate::types::PhysicalType::Int64) => {
                ColumnData::Int64(fixed(r, rows, i64::from_le_bytes)?)
            }
            (TAG_FLOAT32, crate::types::PhysicalType::Float32) => {
                ColumnData::Float32(fixed(r, rows, f32::from_le_bytes)?)
            }
            (TAG_FLOAT64, crate::types::PhysicalType::Float64) => {
                ColumnData::Float64(fixed(r, rows, f64::from_le_bytes)?)
            }
            (TAG_NUMERIC, crate::types::PhysicalType::Numeric) => {
                ColumnData::Numeric(fixed(r, rows, crate::types::Numeric::deserialize)?)
            }
            (TAG_INTERVAL, crate::types::PhysicalType::Interval) => {
                ColumnData::Interval(fixed(r, rows, |a: [u8; 16]| Interval {
                    months: i32::from_le_bytes([a[0], a[1], a[2], a[3]]),
                    days: i32::from_le_bytes([a[4], a[5], a[6], a[7]]),
                    micros: i64::from_le_bytes([
                        a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15],
                    ]),
                })?)
            }
            (TAG_BYTES, crate::types::PhysicalType::Bytes) => {
                let offsets = fixed(r, rows + 1, u32::from_le_bytes)?;
                if offsets.first() != Some(&0) || offsets.windows(2).any(|w| w[0] > w[1]) {
                    return Err(r.fail("string offsets are not ascending from 0"));
                }
                let len = offsets.last().copied().unwrap_or(0) as usize;
                let data = r.take(len)?.to_vec();
                if matches!(
                    t,
                    DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) | DataType::Jsonb
                ) && std::str::from_utf8(&data).is_err()
                {
                    return Err(r.fail("text column is not UTF-8"));
                }
                let mut data = ColumnData::Bytes(BytesColumn { offsets, data });
                crate::exec::vector::repack_arrays(t, &mut data);
                data
            }
            (tag, _) => {
                return Err(r.fail(format!("column tag {tag} does not match type {}", t.name())))
            }
        };
        columns.push(Arc::new(Column::new(t, data, validity)));
    }
    Ok(Batch::new(columns, rows).padded_to(types))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    fn sample() -> (Vec<DataType>, Batch) {
        let types = vec![
            DataType::Int64,
            DataType::Text,
            DataType::Float64,
            DataType::Bool,
            DataType::Numeric,
            DataType::Interval,
        ];
        let rows: Vec<Vec<Datum>> = (0..37)
            .map(|i| {
                vec![
                    Datum::Int64(i * 1_000_000_007),
                    if i % 5 == 0 {
                        Datum::Null
                    } else {
                        Datum::text(format!("robot-{i}"))
                    },
                    Datum::Float64(i as f64 / 3.0),
                    Datum::Bool(i % 2 == 0),
                    Datum::Numeric(rust_decimal::Decimal::new(i * 125, 2).into()),
                    Datum::Interval(Interval {
                        months: i as i32,
                        days: -1,
                        micros: 7,
                    }),
                ]
            })
            .collect();
        let cols = types
            .iter()
            .enumerate()
            .map(|(c, t)| {
                Column::from_datums(*t, &rows.iter().map(|r| r[c].clone()).collect::<Vec<_>>())
            })
            .collect();
        (types, Batch::from_columns(cols))
    }

    #[test]
    fn batches_round_trip() {
        let (types, batch) = sample();
        let mut buf = Vec::new();
        encode_batch(&batch, &mut buf);
        let mut r = Reader::new(&buf);
        assert_eq!(buf.len(), encoded_len(&batch));
        let back = decode_batch(&mut r, &types).unwrap();
        assert_eq!(r.remaining(), 0);
        for i in 0..batch.len {
            assert_eq!(back.row(i), batch.row(i));
        }
    }

    /// A record written before an ALTER TABLE … ADD COLUMN has fewer columns
    /// than the table: it reads NULL in the added ones. One with more is damage.
    #[test]
    fn a_narrower_batch_reads_null_in_the_columns_added_since() {
        let (types, batch) = sample();
        let mut buf = Vec::new();
        encode_batch(&batch, &mut buf);
        let mut wider = types.clone();
        wider.extend([DataType::Text, DataType::Float64]);
        let back = decode_batch(&mut Reader::new(&buf), &wider).unwrap();
        assert_eq!(back.columns.len(), wider.len());
        for i in 0..batch.len {
            let mut want = batch.row(i);
            want.extend([Datum::Null, Datum::Null]);
            assert_eq!(back.row(i), want);
        }
        assert!(decode_batch(&mut Reader::new(&buf), &types[..types.len() - 1]).is_err());
    }

    /// A format-1 record holds arrays in PostgreSQL's form; they read back
    /// packed, equal byte for byte to the same array written today.
    #[test]
    fn arrays_written_before_the_packed_form_decode_packed() {
        use crate::types::array::{ArrayElem, ArrayValue};
        let t = DataType::Array(ArrayElem::Int32);
        let value = ArrayValue::of(vec![Datum::Int32(1), Datum::Int32(-2)]);
        let old = Batch::from_columns(vec![Column::from_datums(t, &[Datum::Bytes(value.encode_pg(ArrayElem::Int32))])]);
        let mut buf = Vec::new();
        encode_batch(&old, &mut buf);
        let back = decode_batch(&mut Reader::new(&buf), &[t]).unwrap();
        assert_eq!(back.row(0), vec![Datum::Bytes(value.encode(ArrayElem::Int32))]);
    }

    #[test]
    fn every_truncation_and_corruption_is_an_error_not_a_panic() {
        let (types, batch) = sample();
        let mut buf = Vec::new();
        encode_batch(&batch, &mut buf);
        for cut in 0..buf.len() {
            assert!(
                decode_batch(&mut Reader::new(&buf[..cut]), &types).is_err(),
                "cut at {cut}"
            );
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let mut bad = buf.clone();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % bad.len();
            bad[at] ^= (seed >> 32) as u8 | 1;
            let _ = decode_batch(&mut Reader::new(&bad), &types);
        }
        assert!(decode_batch(&mut Reader::new(&buf), &types[..2]).is_err());
    }
}
