//! Timestamp column blocks (i64 nanoseconds): constant stride with exceptions
//! when the block sits on a grid, else delta-of-delta with patched bit-packing.
//!
//! Every encoding starts with `tag: u8, count: u32` (little-endian), then:
//!
//! **tag 0, stride**: `start: i64, stride: i64, exceptions: u32`; value `i` is
//! `start + i * stride` unless it is an exception. When `exceptions > 0`:
//! `dev_min: i64, dev_width: u8, bits[exceptions]` of the exception indexes
//! (width `bits_needed(count - 1)`, any order, each `< count`), then
//! `bits[exceptions]` of `deviation - dev_min`, where deviation is the value
//! minus its grid point. Regular data costs 25 bytes per block.
//!
//! **tag 1, delta-of-delta**: `first: i64, first_delta: i64, reference: i64,
//! width: u8, exceptions: u32, bits[count]`: slots 0 and 1 are 0 (ignored;
//! they keep 1024-value blocks aligned with the column's), slot `i ≥ 2` is
//! `dod[i] - reference` (< 2^width) where
//! `dod[i] = (v[i] - v[i-1]) - (v[i-1] - v[i-2])`, or 0 for an exception.
//! When `exceptions > 0`: `exc_width: u8`, `bits[exceptions]` of exception
//! indexes (width `bits_needed(count - 1)`, each in `2..count`), then
//! `bits[exceptions]` of their `zigzag(dod[i] - reference)`. This is patched
//! FOR: the width is chosen to minimise the total size, so a gap or a late
//! point costs a few exceptions rather than widening every value.
//!
//! `bits[n]` is `bitpack` layout. All arithmetic (grid points, deviations,
//! deltas, delta-of-deltas) is wrapping mod 2^64 on both sides, so any i64
//! sequence, unsorted or overflowing, round-trips exactly. An encoding must be
//! decoded whole: trailing bytes are an error.

use super::bitpack::{self, bits_needed, packed_len};
use super::{
    count_u32, put_i64, put_u32, put_u8, sample_runs, unzigzag, zigzag, CodecError, Reader,
};

const CODEC: &str = "timestamp";
const SAMPLE_LEN: usize = 64;
const STRIDE_HEADER: usize = 25;
const DOD_HEADER: usize = 34;

/// The scheme of a timestamp encoding (its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Stride = 0,
    DeltaOfDelta = 1,
}

impl Scheme {
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        match tag {
            0 => Some(Scheme::Stride),
            1 => Some(Scheme::DeltaOfDelta),
            _ => None,
        }
    }
}

/// The scheme an encoding uses, if its tag is known.
pub fn scheme(bytes: &[u8]) -> Option<Scheme> {
    bytes.first().and_then(|t| Scheme::from_tag(*t))
}

/// Encodes nanosecond timestamps: constant stride with exceptions when that
/// is no larger, else delta-of-delta.
///
/// # Panics
/// If `values.len() > MAX_VALUES`.
pub fn encode_timestamps(values: &[i64]) -> Vec<u8> {
    let n = values.len();
    let count = count_u32(n);
    if n <= 2 {
        let start = values.first().copied().unwrap_or(0);
        let stride = if n == 2 {
            values[1].wrapping_sub(values[0])
        } else {
            0
        };
        return stride_encoding(
            values,
            count,
            &StridePlan {
                start,
                stride,
                exceptions: 0,
                dev_min: 0,
                dev_max: 0,
            },
        );
    }
    // A block exactly on a grid is settled in one pass.
    if let Some(sp) = stride_plan(values, STRIDE_HEADER) {
        return stride_encoding(values, count, &sp);
    }
    // Otherwise delta-of-delta is planned on a sample, and the stride's
    // exceptions are counted exactly, giving up once they cost more than the
    // delta-of-delta estimate or half a bit per value, whichever is more (a
    // sample rarely sees the few late points that cost both schemes
    // exceptions); in between, delta-of-delta is sized exactly. Ties go to the
    // stride, which decodes several times faster.
    let dp = dod_plan(values);
    match stride_plan(values, dp.size.max(STRIDE_HEADER + n / 16)) {
        Some(sp) if sp.size(n) <= dp.size || sp.size(n) <= dod_exact_size(values, &dp) => {
            stride_encoding(values, count, &sp)
        }
        _ => dod_encoding(values, count, &dp),
    }
}

/// Decodes an encoding made by `encode_timestamps`, appending the values to
/// `out`. On error `out` is left as it was.
pub fn decode_timestamps(bytes: &[u8], out: &mut Vec<i64>) -> Result<(), CodecError> {
    let old = out.len();
    let r = decode_inner(bytes, out, old);
    if r.is_err() {
        out.truncate(old);
    }
    r
}

fn decode_inner(bytes: &[u8], out: &mut Vec<i64>, old: usize) -> Result<(), CodecError> {
    let mut r = Reader::new(bytes, CODEC);
    let tag = r.u8("scheme tag")?;
    let Some(scheme) = Scheme::from_tag(tag) else {
        return Err(CodecError::new(
            CODEC,
            0,
            format!("unknown scheme tag {tag}"),
        ));
    };
    let n = r.count()?;
    match scheme {
        Scheme::Stride => {
            let start = r.i64("start")?;
            let stride = r.i64("stride")?;
            let exc = exception_count(&mut r, n)?;
            let mut line: Vec<u64> = Vec::new();
            let mut devs: Vec<i64> = Vec::new();
            let mut idx_at = 0;
            if exc > 0 {
                let dev_min = r.i64("deviation reference")?;
                let dev_width = r.width("deviation bit width")?;
                idx_at = r.pos();
                r.unpack(bits_needed(n as u64 - 1), exc, 0, &mut line)?;
                r.unpack(dev_width, exc, dev_min as u64, &mut devs)?;
            }
            r.finish()?;
            fill_line(start, stride, n, out);
            let dst = &mut out[old..];
            for (&i, &d) in line.iter().zip(&devs) {
                let i = i as usize;
                let Some(o) = dst.get_mut(i) else {
                    return Err(CodecError::new(
                        CODEC,
                        idx_at,
                        format!("exception index {i} beyond {n} values"),
                    ));
                };
                *o = o.wrapping_add(d);
            }
        }
        Scheme::DeltaOfDelta => {
            let first = r.i64("first value")?;
            let first_delta = r.i64("first delta")?;
            let reference = r.i64("reference")?;
            let width = r.width("bit width")?;
            let exc = exception_count(&mut r, n.saturating_sub(2))?;
            r.unpack(width, n, reference as u64, out)?;
            let dst = &mut out[old..];
            if exc > 0 {
                let exc_width = r.width("exception bit width")?;
                let mut idx: Vec<u64> = Vec::new();
                let idx_at = r.pos();
                r.unpack(bits_needed(n as u64 - 1), exc, 0, &mut idx)?;
                let mut vals: Vec<u64> = Vec::new();
                r.unpack(exc_width, exc, 0, &mut vals)?;
                for (&i, &z) in idx.iter().zip(&vals) {
                    match dst.get_mut(i as usize) {
                        Some(o) if i >= 2 => *o = unzigzag(z).wrapping_add(reference),
                        _ => {
                            return Err(CodecError::new(
                                CODEC,
                                idx_at,
                                format!("exception index {i} outside 2..{n}"),
                            ))
                        }
                    }
                }
            }
            r.finish()?;
            if n >= 1 {
                dst[0] = first;
            }
            if n >= 2 {
                dst[1] = first.wrapping_add(first_delta);
                let (mut v, mut d) = (dst[1], first_delta);
                for x in &mut dst[2..] {
                    d = d.wrapping_add(*x);
                    v = v.wrapping_add(d);
                    *x = v;
                }
            }
        }
    }
    Ok(())
}

/// Appends `start + i * stride` for `i in 0..n` (wrapping; an induction
/// variable, which the compiler vectorizes).
fn fill_line(start: i64, stride: i64, n: usize, out: &mut Vec<i64>) {
    let old = out.len();
    out.resize(old + n, 0);
    let mut v = start;
    for o in &mut out[old..] {
        *o = v;
        v = v.wrapping_add(stride);
    }
}

/// An exception count, checked to be at most `limit`.
fn exception_count(r: &mut Reader, limit: usize) -> Result<usize, CodecError> {
    let at = r.pos();
    let e = r.u32("exception count")? as usize;
    if e > limit {
        return Err(CodecError::new(
            CODEC,
            at,
            format!("{e} exceptions for {limit} values"),
        ));
    }
    Ok(e)
}

/// Boyer-Moore majority vote: the value that is a majority, if there is one
/// (otherwise some value of the input).
fn majority(it: impl Iterator<Item = i64>) -> i64 {
    let (mut cand, mut votes) = (0i64, 0usize);
    for x in it {
        if votes == 0 {
            cand = x;
            votes = 1;
        } else if x == cand {
            votes += 1;
        } else {
            votes -= 1;
        }
    }
    cand
}

struct StridePlan {
    start: i64,
    stride: i64,
    exceptions: usize,
    dev_min: i64,
    dev_max: i64,
}

impl StridePlan {
    fn dev_width(&self) -> u32 {
        bits_needed(self.dev_max.wrapping_sub(self.dev_min) as u64)
    }

    fn size(&self, n: usize) -> usize {
        if self.exceptions == 0 {
            return STRIDE_HEADER;
        }
        STRIDE_HEADER
            + 9
            + packed_len(self.exceptions, bits_needed(n as u64 - 1))
            + packed_len(self.exceptions, self.dev_width())
    }
}

/// The grid most sampled points sit on (majority votes over the sample), if
/// its exact encoding is no larger than `limit` bytes.
fn stride_plan(v: &[i64], limit: usize) -> Option<StridePlan> {
    let n = v.len();
    let runs = || sample_runs(n, SAMPLE_LEN);
    let stride = majority(
        runs().flat_map(|(s, len)| v[s..s + len].windows(2).map(|w| w[1].wrapping_sub(w[0]))),
    );
    let start = majority(runs().flat_map(|(s, len)| {
        (s..s + len).map(|i| v[i].wrapping_sub((i as i64).wrapping_mul(stride)))
    }));
    let mut p = StridePlan {
        start,
        stride,
        exceptions: 0,
        dev_min: i64::MAX,
        dev_max: i64::MIN,
    };
    // every exception costs at least its index
    let max_exceptions = limit.saturating_sub(STRIDE_HEADER + 9).saturating_mul(8)
        / bits_needed(n as u64 - 1).max(1) as usize;
    let mut line = start;
    for &x in v {
        let dev = x.wrapping_sub(line);
        if dev != 0 {
            p.exceptions += 1;
            if p.exceptions > max_exceptions {
                return None;
            }
            p.dev_min = p.dev_min.min(dev);
            p.dev_max = p.dev_max.max(dev);
        }
        line = line.wrapping_add(stride);
    }
    (p.size(n) <= limit).then_some(p)
}

fn stride_encoding(v: &[i64], count: u32, p: &StridePlan) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.size(v.len()));
    put_u8(&mut out, Scheme::Stride as u8);
    put_u32(&mut out, count);
    put_i64(&mut out, p.start);
    put_i64(&mut out, p.stride);
    put_u32(&mut out, p.exceptions as u32);
    if p.exceptions > 0 {
        let mut idx = Vec::with_capacity(p.exceptions);
        let mut devs = Vec::with_capacity(p.exceptions);
        let mut line = p.start;
        for (i, &x) in v.iter().enumerate() {
            let dev = x.wrapping_sub(line);
            if dev != 0 {
                idx.push(i as u64);
                devs.push(dev.wrapping_sub(p.dev_min) as u64);
            }
            line = line.wrapping_add(p.stride);
        }
        put_i64(&mut out, p.dev_min);
        put_u8(&mut out, p.dev_width() as u8);
        bitpack::pack(&idx, bits_needed(v.len() as u64 - 1), &mut out);
        bitpack::pack(&devs, p.dev_width(), &mut out);
    }
    out
}

struct DodPlan {
    reference: i64,
    width: u32,
    /// Estimated from the sample.
    size: usize,
}

#[inline(always)]
fn dod(w: &[i64]) -> i64 {
    w[2].wrapping_sub(w[1])
        .wrapping_sub(w[1].wrapping_sub(w[0]))
}

/// Reference and width for delta-of-delta, from a sample: the window of
/// `2^width` values centred on the sample's median that minimises the packed
/// values plus the exceptions falling outside it. Needs `v.len() >= 3`.
fn dod_plan(v: &[i64]) -> DodPlan {
    let n = v.len();
    let m = n - 2;
    let mut sample = Vec::with_capacity(SAMPLE_LEN * 10);
    for (s, len) in sample_runs(m, SAMPLE_LEN) {
        sample.extend(v[s..s + len + 2].windows(3).map(dod));
    }
    let mid = sample.len() / 2;
    let center = *sample.select_nth_unstable(mid).1;
    // zigzag(x - center) < 2^w  <=>  x in [center - 2^(w-1), center + 2^(w-1))
    let mut hist = [0usize; 65];
    for &x in &sample {
        hist[bits_needed(zigzag(x.wrapping_sub(center))) as usize] += 1;
    }
    let max_bits = (0..=64).rev().find(|&b| hist[b] > 0).unwrap_or(0) as u32;
    let idx_width = bits_needed(n as u64 - 1);
    let mut best = (usize::MAX, 0);
    let mut fitting = 0;
    for w in 0..=max_bits {
        fitting += hist[w as usize];
        let exc = ((sample.len() - fitting) * m).div_ceil(sample.len());
        let exc_size = if exc > 0 {
            1 + packed_len(exc, idx_width) + packed_len(exc, max_bits.max(1))
        } else {
            0
        };
        let size = DOD_HEADER + packed_len(n, w) + exc_size;
        if size <= best.0 {
            best = (size, w);
        }
    }
    let (size, width) = best;
    let reference = if width == 0 {
        center
    } else {
        center.wrapping_sub((1u64 << (width - 1)) as i64)
    };
    DodPlan {
        reference,
        width,
        size,
    }
}

/// The exact size of `dod_encoding(v, _, p)`.
fn dod_exact_size(v: &[i64], p: &DodPlan) -> usize {
    let mask = if p.width == 64 {
        u64::MAX
    } else {
        (1u64 << p.width) - 1
    };
    let (mut exc, mut max_z) = (0usize, 0u64);
    for w in v.windows(3) {
        let x = dod(w).wrapping_sub(p.reference);
        if x as u64 > mask {
            exc += 1;
            max_z = max_z.max(zigzag(x));
        }
    }
    let n = v.len();
    let exc_size = if exc > 0 {
        1 + packed_len(exc, bits_needed(n as u64 - 1)) + packed_len(exc, bits_needed(max_z))
    } else {
        0
    };
    DOD_HEADER + packed_len(n, p.width) + exc_size
}

fn dod_encoding(v: &[i64], count: u32, p: &DodPlan) -> Vec<u8> {
    let n = v.len();
    let mut out = Vec::with_capacity(p.size);
    put_u8(&mut out, Scheme::DeltaOfDelta as u8);
    put_u32(&mut out, count);
    put_i64(&mut out, v[0]);
    put_i64(&mut out, v[1].wrapping_sub(v[0]));
    put_i64(&mut out, p.reference);
    put_u8(&mut out, p.width as u8);
    let exc_at = out.len();
    put_u32(&mut out, 0); // exception count, known after packing
    let mask = if p.width == 64 {
        u64::MAX
    } else {
        (1u64 << p.width) - 1
    };
    let reference = p.reference;
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    let mut slot = |i: usize, w: &[i64]| -> u64 {
        let x = dod(w).wrapping_sub(reference);
        if x as u64 > mask {
            idx.push(i as u64);
            vals.push(zigzag(x));
            0
        } else {
            x as u64
        }
    };
    if p.width == 0 {
        // nothing is packed (`fill` is not called): only collect exceptions
        for (j, w) in v.windows(3).enumerate() {
            slot(j + 2, w);
        }
    } else {
        bitpack::pack_with(n, p.width, &mut out, |s, buf| {
            let skip = if s == 0 { 2 } else { 0 };
            buf[..skip].fill(0);
            for (k, (b, w)) in buf[skip..]
                .iter_mut()
                .zip(v[s + skip - 2..].windows(3))
                .enumerate()
            {
                *b = slot(s + skip + k, w);
            }
        });
    }
    if !idx.is_empty() {
        out[exc_at..exc_at + 4].copy_from_slice(&(idx.len() as u32).to_le_bytes());
        let exc_width = bits_needed(vals.iter().copied().max().unwrap_or(0));
        put_u8(&mut out, exc_width as u8);
        bitpack::pack(&idx, bits_needed(n as u64 - 1), &mut out);
        bitpack::pack(&vals, exc_width, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{never_panics, Rng, LENGTHS};
    use super::*;

    const T0: i64 = 1_700_000_000_000_000_000;
    const SEC: i64 = 1_000_000_000;

    fn regular(n: usize) -> Vec<i64> {
        (0..n as i64).map(|i| T0 + i * 10 * SEC).collect()
    }

    /// 10 s grid; about `gaps` missing points and `late` points off by up to ±1 ms.
    fn gappy(n: usize, r: &mut Rng, gaps: u64, late: u64) -> Vec<i64> {
        let mut out = Vec::with_capacity(n);
        let mut slot = 0i64;
        while out.len() < n {
            slot += 1;
            if r.below(n as u64 + gaps + 1) < gaps {
                continue;
            }
            let jitter = if r.below(n as u64 + 1) < late {
                r.range(-1_000_000, 1_000_000)
            } else {
                0
            };
            out.push(T0 + slot * 10 * SEC + jitter);
        }
        out
    }

    #[allow(clippy::type_complexity)]
    fn shapes() -> Vec<(&'static str, fn(usize, &mut Rng) -> Vec<i64>)> {
        vec![
            ("regular_10s", |n, _| regular(n)),
            ("regular_1ns", |n, _| (0..n as i64).collect()),
            ("constant", |n, _| vec![T0; n]),
            ("few_gaps_few_late", |n, r| gappy(n, r, 3, 3)),
            ("many_gaps", |n, r| gappy(n, r, n as u64 / 10, 0)),
            ("all_jittered", |n, r| {
                (0..n as i64)
                    .map(|i| T0 + i * 10 * SEC + r.range(-1_000_000, 1_000_000))
                    .collect()
            }),
            ("irregular", |n, r| {
                let mut t = T0;
                (0..n)
                    .map(|_| {
                        t += r.range(1, 60 * SEC);
                        t
                    })
                    .collect()
            }),
            ("duplicates", |n, _| {
                (0..n as i64).map(|i| T0 + (i / 2) * SEC).collect()
            }),
            ("descending", |n, _| {
                (0..n as i64).map(|i| T0 - i * SEC).collect()
            }),
            ("overflowing_grid", |n, _| {
                (0..n as i64)
                    .map(|i| (i64::MAX - 5 * SEC).wrapping_add(i.wrapping_mul(SEC)))
                    .collect()
            }),
            ("random_full_range", |n, r| {
                (0..n).map(|_| r.next() as i64).collect()
            }),
            ("extremes", |n, r| {
                (0..n)
                    .map(|_| [i64::MIN, i64::MAX, 0, -1][r.below(4) as usize])
                    .collect()
            }),
            ("regular_with_extreme_outlier", |n, _| {
                (0..n as i64)
                    .map(|i| {
                        if i == n as i64 / 3 {
                            i64::MIN
                        } else {
                            T0 + i * SEC
                        }
                    })
                    .collect()
            }),
        ]
    }

    fn round_trip(values: &[i64]) -> Vec<u8> {
        let enc = encode_timestamps(values);
        let mut out = vec![-9];
        decode_timestamps(&enc, &mut out).unwrap_or_else(|e| panic!("{e}: {:?}", scheme(&enc)));
        assert_eq!(out[0], -9);
        assert!(
            out[1..] == *values,
            "{:?} of {} values",
            scheme(&enc),
            values.len()
        );
        enc
    }

    #[test]
    fn round_trips_every_shape_and_length() {
        for seed in 0..3 {
            let mut rng = Rng(200 + seed);
            for (name, gen) in shapes() {
                for &n in LENGTHS {
                    let v = gen(n, &mut rng);
                    let enc = round_trip(&v);
                    assert!(
                        enc.len() <= DOD_HEADER + 1 + 8 * n + n.div_ceil(4) + 16,
                        "{name}/{n}: {} bytes",
                        enc.len()
                    );
                }
            }
        }
    }

    #[test]
    fn both_schemes_round_trip_when_forced() {
        let mut rng = Rng(11);
        for (_, gen) in shapes() {
            for n in [3usize, 4, 1025, 3000] {
                let v = gen(n, &mut rng);
                let dp = dod_plan(&v);
                let mut encs = vec![dod_encoding(&v, n as u32, &dp)];
                assert_eq!(encs[0].len(), dod_exact_size(&v, &dp));
                encs.extend(stride_plan(&v, usize::MAX).map(|p| stride_encoding(&v, n as u32, &p)));
                assert_eq!(encs.len(), 2);
                for enc in encs {
                    let mut out = Vec::new();
                    decode_timestamps(&enc, &mut out).unwrap();
                    assert_eq!(out, v, "{:?}", scheme(&enc));
                }
            }
        }
    }

    #[test]
    fn regular_10s_costs_at_most_one_bit_per_value() {
        for n in [1024, 8192, 10_000, 1 << 16] {
            let enc = round_trip(&regular(n));
            assert_eq!(scheme(&enc), Some(Scheme::Stride));
            assert_eq!(
                enc.len(),
                STRIDE_HEADER,
                "a constant stride is a few bytes per block"
            );
            assert!(enc.len() * 8 <= n);
        }
        // irregularities per block: 1 gap + 1 late point in 1024, 4 + 4 in 8192
        for (n, k) in [(1024, 1), (8192, 4)] {
            let mut v = regular(n + k);
            for g in 0..k {
                v.remove(n / (k + 1) * (g + 1));
                v[n / (k + 1) * (g + 1) + 7] += 1_000_000;
            }
            let enc = round_trip(&v);
            let bits = enc.len() as f64 * 8.0 / n as f64;
            assert!(
                bits <= 1.0,
                "regular with gaps and late points: {bits} bits/value ({:?})",
                scheme(&enc)
            );
        }
    }

    #[test]
    fn a_late_point_is_one_stride_exception() {
        let mut v = regular(4096);
        v[100] += 1234;
        let enc = round_trip(&v);
        assert_eq!(scheme(&enc), Some(Scheme::Stride));
        assert!(
            enc.len() <= STRIDE_HEADER + 9 + 2 + 2,
            "{} bytes",
            enc.len()
        );
        // a gap shifts the grid for the rest of the block: delta-of-delta wins
        let mut g = regular(4096);
        g.remove(100);
        let enc = round_trip(&g);
        assert_eq!(scheme(&enc), Some(Scheme::DeltaOfDelta));
        assert!(
            enc.len() <= DOD_HEADER + 1 + 2 * 2 + 2 * 8,
            "{} bytes",
            enc.len()
        );
    }

    #[test]
    fn jittered_points_pack_narrow() {
        let mut rng = Rng(13);
        let v: Vec<i64> = (0..8192)
            .map(|i| T0 + i * 10 * SEC + rng.range(-500, 500))
            .collect();
        let enc = round_trip(&v);
        let bits = enc.len() as f64 * 8.0 / v.len() as f64;
        assert!(bits <= 13.0, "{bits} bits/value ({:?})", scheme(&enc));
    }

    #[test]
    fn malformed_input_is_an_error() {
        let mut out = vec![1];
        assert!(decode_timestamps(&[], &mut out).is_err());
        assert!(decode_timestamps(&[7, 0, 0, 0, 0], &mut out).is_err());
        // an exception index past the end
        let mut v = regular(10);
        v[9] += 1;
        let mut enc = encode_timestamps(&v);
        assert_eq!(scheme(&enc), Some(Scheme::Stride));
        let at = STRIDE_HEADER + 9; // index bits (width 4): 9 = 0b1001 -> 15
        enc[at] |= 0b0110;
        let e = decode_timestamps(&enc, &mut out).unwrap_err();
        assert!(e.what.contains("beyond"), "{e}");
        assert_eq!(out, vec![1]);
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let mut rng = Rng(14);
        let mut late = regular(700);
        late[5] += 77;
        late[600] -= 3 * SEC;
        let inputs = vec![
            vec![],
            vec![T0],
            regular(1100),
            late,
            gappy(1100, &mut rng, 5, 5),
            (0..300).map(|_| rng.next() as i64).collect::<Vec<_>>(),
        ];
        for v in inputs {
            let enc = round_trip(&v);
            never_panics(&enc, |b| decode_timestamps(b, &mut Vec::new()).is_ok());
        }
    }
}
