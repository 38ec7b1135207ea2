//! Boolean column blocks and validity (NOT NULL) bitmaps: constant, bitmap,
//! or run lengths, the smallest picked per block.
//!
//! Every encoding starts with `tag: u8, count: u32` (little-endian), then:
//!
//! | tag | scheme | body after the header |
//! |---|---|---|
//! | 0 | constant | `value: u8`, 0 (false) or 1 (true) |
//! | 1 | bitmap | `ceil(count / 8)` bytes: value `i` is bit `i % 8` (LSB first) of byte `i / 8`; the unused high bits of the last byte are 0 |
//! | 2 | RLE | `first: u8` (0 or 1, the value of the first run), then an integer encoding (integer.rs) of `run length - 1` per run, to the end of the buffer; runs alternate values and their lengths add up to `count` |
//!
//! A validity encoding is the same, with true = the row is NOT NULL (so its
//! bitmap is the column's validity bitmap, bit `i` of byte `i / 8` set = row
//! `i` is not NULL); its decoder is also given the expected row count. (The
//! segment writer omits a block's validity entirely when it has no NULLs.)
//! An encoding must be decoded whole: trailing bytes are an error.
//!
//! Choice: one run is constant; otherwise RLE when its exact size (computed
//! only if the runs are fewer than `count / 16`) is below the bitmap's.

use super::integer::{decode_i64, encode_i64};
use super::{count_u32, put_u32, put_u8, CodecError, Reader};

const CODEC: &str = "boolean";
const HEADER: usize = 5;

/// The scheme of a boolean encoding (its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Constant = 0,
    Bitmap = 1,
    Rle = 2,
}

impl Scheme {
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        Some(match tag {
            0 => Scheme::Constant,
            1 => Scheme::Bitmap,
            2 => Scheme::Rle,
            _ => return None,
        })
    }
}

/// The scheme an encoding uses, if its tag is known.
pub fn scheme(bytes: &[u8]) -> Option<Scheme> {
    bytes.first().and_then(|t| Scheme::from_tag(*t))
}

/// Encodes `values` with the smallest of constant, bitmap and RLE.
///
/// # Panics
/// If `values.len() > MAX_VALUES`.
pub fn encode_bools(values: &[bool]) -> Vec<u8> {
    let n = values.len();
    let count = count_u32(n);
    let runs = 1 + values.windows(2).filter(|w| w[0] != w[1]).count();
    if runs == 1 {
        let mut out = header(Scheme::Constant, count, 1);
        put_u8(&mut out, u8::from(values.first() == Some(&true)));
        return out;
    }
    let bitmap_len = HEADER + n.div_ceil(8);
    if runs < n / 16 {
        let mut lens = Vec::with_capacity(runs);
        let mut start = 0;
        for i in 1..=n {
            if i == n || values[i] != values[start] {
                lens.push((i - start - 1) as i64);
                start = i;
            }
        }
        let lens = encode_i64(&lens);
        if HEADER + 1 + lens.len() < bitmap_len {
            let mut out = header(Scheme::Rle, count, 1 + lens.len());
            put_u8(&mut out, u8::from(values[0]));
            out.extend_from_slice(&lens);
            return out;
        }
    }
    let mut out = header(Scheme::Bitmap, count, n.div_ceil(8));
    out.extend(values.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |b, (k, &v)| b | (u8::from(v) << k))));
    out
}

/// Decodes an encoding made by `encode_bools`, appending the values to `out`.
/// On error `out` is left as it was.
pub fn decode_bools(bytes: &[u8], out: &mut Vec<bool>) -> Result<(), CodecError> {
    let old = out.len();
    let r = decode_inner(bytes, out, CODEC, None);
    if r.is_err() {
        out.truncate(old);
    }
    r
}

/// Encodes a validity bitmap: `valid[i]` = row `i` is NOT NULL.
///
/// # Panics
/// If `valid.len() > MAX_VALUES`.
pub fn encode_validity(valid: &[bool]) -> Vec<u8> {
    encode_bools(valid)
}

/// Decodes a validity encoding of exactly `rows` rows, appending to `out`
/// (true = NOT NULL). On error `out` is left as it was.
pub fn decode_validity(bytes: &[u8], rows: usize, out: &mut Vec<bool>) -> Result<(), CodecError> {
    let old = out.len();
    let r = decode_inner(bytes, out, "validity", Some(rows));
    if r.is_err() {
        out.truncate(old);
    }
    r
}

fn header(scheme: Scheme, count: u32, body: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body);
    put_u8(&mut out, scheme as u8);
    put_u32(&mut out, count);
    out
}

fn flag(r: &mut Reader, what: &str) -> Result<bool, CodecError> {
    match r.u8(what)? {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(CodecError::new(r.err("").codec, r.pos() - 1, format!("{what} is {b}, not 0 or 1"))),
    }
}

fn decode_inner(bytes: &[u8], out: &mut Vec<bool>, codec: &'static str, rows: Option<usize>) -> Result<(), CodecError> {
    let mut r = Reader::new(bytes, codec);
    let tag = r.u8("scheme tag")?;
    let Some(scheme) = Scheme::from_tag(tag) else {
        return Err(CodecError::new(codec, 0, format!("unknown scheme tag {tag}")));
    };
    let n = r.count()?;
    if let Some(rows) = rows {
        if n != rows {
            return Err(CodecError::new(codec, 1, format!("{n} rows of validity for a block of {rows}")));
        }
    }
    match scheme {
        Scheme::Constant => {
            let v = flag(&mut r, "constant value")?;
            r.finish()?;
            out.resize(out.len() + n, v);
        }
        Scheme::Bitmap => {
            let bits = r.take(n.div_ceil(8), "bitmap")?;
            r.finish()?;
            if n % 8 != 0 && bits[n / 8] >> (n % 8) != 0 {
                return Err(CodecError::new(codec, HEADER + n / 8, "padding bits set in the last bitmap byte"));
            }
            out.reserve(n);
            for (i, &b) in bits.iter().enumerate() {
                let k = (n - 8 * i).min(8);
                out.extend((0..k).map(|j| (b >> j) & 1 != 0));
            }
        }
        Scheme::Rle => {
            let first = flag(&mut r, "first run value")?;
            let at = r.pos();
            let mut lens = Vec::new();
            decode_i64(r.rest(), &mut lens).map_err(|e| e.at(codec, at))?;
            let mut total = 0u64;
            for &l in &lens {
                if l < 0 {
                    return Err(CodecError::new(codec, at, format!("negative run length {l} + 1")));
                }
                total = total.saturating_add(l as u64 + 1);
            }
            if total != n as u64 {
                return Err(CodecError::new(codec, at, format!("runs add up to {total} values, not {n}")));
            }
            out.reserve(n);
            let mut v = first;
            for &l in &lens {
                out.resize(out.len() + l as usize + 1, v);
                v = !v;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{never_panics, Rng, LENGTHS};
    use super::*;

    #[allow(clippy::type_complexity)]
    fn shapes() -> Vec<(&'static str, fn(usize, &mut Rng) -> Vec<bool>)> {
        vec![
            ("all_true", |n, _| vec![true; n]),
            ("all_false", |n, _| vec![false; n]),
            ("alternating", |n, _| (0..n).map(|i| i % 2 == 0).collect()),
            ("random", |n, r| (0..n).map(|_| r.below(2) == 1).collect()),
            ("sparse", |n, r| (0..n).map(|_| r.below(50) == 0).collect()),
            ("long_runs", |n, r| {
                let mut v = r.below(2) == 1;
                (0..n)
                    .map(|i| {
                        if i % 500 == 499 {
                            v = !v
                        }
                        v
                    })
                    .collect()
            }),
            ("random_runs", |n, r| {
                let mut v = false;
                (0..n)
                    .map(|_| {
                        if r.below(100) == 0 {
                            v = !v
                        }
                        v
                    })
                    .collect()
            }),
        ]
    }

    fn round_trip(values: &[bool]) -> Vec<u8> {
        let enc = encode_bools(values);
        let mut out = vec![true];
        decode_bools(&enc, &mut out).unwrap_or_else(|e| panic!("{e}: {:?}", scheme(&enc)));
        assert!(out[0]);
        assert!(out[1..] == *values, "{:?} of {} values", scheme(&enc), values.len());
        let venc = encode_validity(values);
        let mut vout = Vec::new();
        decode_validity(&venc, values.len(), &mut vout).unwrap();
        assert!(vout == values);
        assert!(decode_validity(&venc, values.len() + 1, &mut vout).is_err());
        assert_eq!(vout.len(), values.len());
        enc
    }

    #[test]
    fn round_trips_every_shape_and_length() {
        let mut rng = Rng(31);
        for (name, gen) in shapes() {
            for &n in LENGTHS {
                let v = gen(n, &mut rng);
                let enc = round_trip(&v);
                assert!(enc.len() <= HEADER + n.div_ceil(8).max(1), "{name}/{n}: {} bytes", enc.len());
            }
        }
    }

    #[test]
    fn picks_the_expected_scheme() {
        let mut rng = Rng(32);
        let pick = |v: &[bool]| scheme(&round_trip(v)).unwrap();
        assert_eq!(pick(&[]), Scheme::Constant);
        assert_eq!(pick(&[true; 5000]), Scheme::Constant);
        assert_eq!(pick(&[false; 5000]), Scheme::Constant);
        assert_eq!(pick(&(0..5000).map(|i| i % 2 == 0).collect::<Vec<_>>()), Scheme::Bitmap);
        assert_eq!(pick(&(0..5000).map(|_| rng.below(2) == 0).collect::<Vec<_>>()), Scheme::Bitmap);
        assert_eq!(pick(&(0..8192).map(|i| i / 1000 % 2 == 0).collect::<Vec<_>>()), Scheme::Rle);
        // a few NULLs in a long block
        let enc = round_trip(&(0..8192).map(|i| i != 17 && i != 4000).collect::<Vec<_>>());
        assert_eq!(scheme(&enc), Some(Scheme::Rle));
        assert!(enc.len() < 40, "{} bytes", enc.len());
    }

    #[test]
    fn decode_appends_and_restores_on_error() {
        let enc = encode_bools(&[true, false, true]);
        let mut out = vec![false];
        decode_bools(&enc, &mut out).unwrap();
        assert_eq!(out, [false, true, false, true]);
        assert!(decode_bools(&enc[..enc.len() - 1], &mut out).is_err());
        assert_eq!(out, [false, true, false, true]);
        // padding bits, a bad constant
        let mut bad = enc.clone();
        bad[5] |= 0x80;
        assert!(decode_bools(&bad, &mut out).unwrap_err().to_string().contains("padding"));
        assert!(decode_bools(&[0, 1, 0, 0, 0, 2], &mut out).is_err());
        assert!(decode_bools(&[3, 0, 0, 0, 0], &mut out).is_err());
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let mut rng = Rng(33);
        for (_, gen) in shapes() {
            for n in [0, 1, 9, 300, 2000] {
                let v = gen(n, &mut rng);
                let enc = round_trip(&v);
                never_panics(&enc, |b| decode_bools(b, &mut Vec::new()).is_ok());
                never_panics(&enc, |b| decode_validity(b, n, &mut Vec::new()).is_ok());
            }
        }
    }
}
