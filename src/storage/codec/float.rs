//! f64 and f32 column blocks: constant, raw, ALP (decimals as integers, the
//! integers cascaded into the `integer` codec), ALP-RD (high-precision
//! doubles: the left bits dictionary-encoded, the right bits bit-packed) and
//! XOR (Gorilla style), the smallest picked per block by sampling.
//!
//! Every encoding starts with `tag: u8, count: u32` (little-endian). Below,
//! `F` is the value's bit pattern as a little-endian word of the float's own
//! size (8 bytes for f64, 4 for f32; `B` = 64 or 32 bits); f32 encodings have
//! the same layouts with 4-byte words and the f32 constants. Decoding is
//! bit-exact: -0.0, NaN payloads (signalling ones included), ±inf and
//! subnormals come back with the bits they went in with.
//!
//! | tag | scheme | body after the header |
//! |---|---|---|
//! | 0 | constant | `value: F` |
//! | 1 | raw | `values: F[count]` |
//! | 2 | ALP | `exponent: u8, factor: u8, exceptions: u32, digits_len: u32, digits[digits_len], positions, patches` |
//! | 3 | ALP-RD | `right_width: u8, dict_size: u8, dict: u16[dict_size], exceptions: u32, bits[count] codes, bits[count] rights, positions, lefts: u16[exceptions]` |
//! | 4 | XOR | a bit stream to the end of the encoding (below) |
//!
//! **ALP** (Afroozeh & Boncz, SIGMOD 2023): `digits` is an `integer` encoding
//! (any of its schemes) of exactly `count` i64 digits `d`. Value `i` is
//! `(c(d[i]) * P[factor]) * I[exponent]`, evaluated in the float's own
//! IEEE arithmetic, round to nearest, left to right, where `P[k]` is `10^k`
//! (exact) and `I[k]` is the float nearest to `10^-k`, for
//! `factor <= exponent <= 18` (f64) or `<= 10` (f32), and `c(d)` converts a
//! digit by the magic-number trick:
//! `c(d) = from_bits(0x4338_0000_0000_0000 +w d) - 6755399441055744.0` for
//! f64 (`from_bits(0x4B40_0000 +w (d as u32)) - 12582912.0` for f32), which is
//! `d` exactly for `|d| < 2^51` (f64) or `|d| < 2^22` (f32); encoders write
//! no other digits. (`x * 1.0 == x`, so factor 0 is one multiply and
//! exponent 0 none.) Then `exceptions` values are patched: `positions` is
//! `bits[exceptions]` of value indexes at width `bits_needed(count - 1)`
//! (each `< count`, ascending), `patches` is `F[exceptions]`, the values
//! themselves. An exception's digit is a filler, whatever keeps the digits
//! cheap (this writer uses the previous digit; version 1 writers also used
//! digits that kept the steps in a narrow window, which the integer codec's
//! patched delta + FOR now does better). `positions` and `patches` are absent
//! when `exceptions` is 0.
//!
//! **ALP-RD**: `right_width` is in `B-16 .. B` (48..=63 for f64, 16..=31
//! for f32); value `i`'s bits are `(left << right_width) | right[i]`, where
//! `left` is `dict[code[i]]` (codes at width `bits_needed(dict_size - 1)`,
//! `dict_size` in 1..=8; a code naming no entry reads as left 0) unless `i`
//! is an exception. `positions` is as for ALP, then each exception's left
//! part (`u16`) replaces the dictionary's.
//!
//! **XOR**: an LSB-first bit stream (bit `b` is bit `b % 8` of byte `b / 8`;
//! a field of `k` bits is read low bit first), padded with zero bits to a
//! whole byte, and ending exactly there. The first value is `B` raw bits.
//! Then for each further value, `x` = its bits XOR the previous value's bits:
//! `0` when `x` is 0; else `1` and then either `0` and `len` bits of
//! `x >> trail` (reusing the previous window `lead`, `len`,
//! `trail = B - lead - len`, which starts as lead 0, len B), or `1`,
//! `lead: 6 bits`, `len - 1: 6 bits` (`lead + len <= B`) and `len` bits of
//! `x >> trail`, which sets the window.
//!
//! `bits[n]` is `bitpack` layout. An encoding must be decoded whole:
//! trailing bytes are an error.
//!
//! Choice: constant when every bit pattern is equal; otherwise ALP's exponent
//! and factor are chosen on a sample (10 runs of 64 values; every
//! combination is tried on 32 of them, the best 5 on all), and ALP, ALP-RD
//! and XOR sizes are estimated on the same sample. In order of estimate, a
//! scheme is encoded exactly when its estimate beats the smallest exact size
//! so far (raw's to begin with); the smallest exact size wins.

use std::cell::RefCell;

use super::bitpack::{self, bits_needed, packed_len};
use super::{count_u32, integer, put_u32, put_u8, sample_runs, CodecError, Reader};

const CODEC: &str = "float";
const SAMPLE_LEN: usize = 64;
const HEADER: usize = 5;
/// Exponent, factor, exception count, digits length.
const ALP_HEADER: usize = HEADER + 10;
/// Right width, dict size, exception count (the dictionary comes on top).
const RD_HEADER: usize = HEADER + 6;
/// Most entries of an ALP-RD dictionary.
const RD_DICT: usize = 8;
/// ALP combinations kept from the first, small sample for the second.
const ALP_TOP: usize = 5;

/// The scheme of a float encoding (its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Constant = 0,
    Raw = 1,
    Alp = 2,
    AlpRd = 3,
    Xor = 4,
}

impl Scheme {
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        Some(match tag {
            0 => Scheme::Constant,
            1 => Scheme::Raw,
            2 => Scheme::Alp,
            3 => Scheme::AlpRd,
            4 => Scheme::Xor,
            _ => return None,
        })
    }
}

/// The scheme an encoding uses, if its tag is known.
pub fn scheme(bytes: &[u8]) -> Option<Scheme> {
    bytes.first().and_then(|t| Scheme::from_tag(*t))
}

/// Encodes f64 values with the smallest of the schemes (see the module doc).
///
/// # Panics
/// If `values.len() > MAX_VALUES`.
pub fn encode_f64(values: &[f64]) -> Vec<u8> {
    encode(values, false)
}

/// Decodes an encoding made by `encode_f64`, appending the values to `out`.
/// On error `out` is left as it was.
pub fn decode_f64(bytes: &[u8], out: &mut Vec<f64>) -> Result<(), CodecError> {
    decode(bytes, out)
}

/// Encodes f32 values (same layouts, 4-byte words, f32 ALP arithmetic).
///
/// # Panics
/// If `values.len() > MAX_VALUES`.
pub fn encode_f32(values: &[f32]) -> Vec<u8> {
    encode(values, false)
}

/// Decodes an encoding made by `encode_f32`, appending the values to `out`.
/// On error `out` is left as it was.
pub fn decode_f32(bytes: &[u8], out: &mut Vec<f32>) -> Result<(), CodecError> {
    decode(bytes, out)
}

/// What the codec needs of f64 and f32.
trait Float: Copy + Default + 'static {
    const BITS: u32;
    const BYTES: usize;
    const MAX_EXP: usize;
    fn to_u64(self) -> u64;
    fn from_u64(b: u64) -> Self;
    /// `c(d)` of the module doc: exact for digits the encoder writes.
    fn digit(d: i64) -> Self;
    fn mul(self, o: Self) -> Self;
    fn p10(k: usize) -> Self;
    fn i10(k: usize) -> Self;
    /// `round(self * 10^e * 10^-f)` when it is within the digit range.
    fn alp_digit(self, e: usize, f: usize) -> Option<i64>;
}

const P10_64: [f64; 19] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18];
const I10_64: [f64; 19] = [1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18];
const P10_32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];
const I10_32: [f32; 11] = [1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10];
const MAGIC_64: f64 = 6_755_399_441_055_744.0; // 2^52 + 2^51
const MAGIC_32: f32 = 12_582_912.0; // 2^23 + 2^22

impl Float for f64 {
    const BITS: u32 = 64;
    const BYTES: usize = 8;
    const MAX_EXP: usize = 18;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_u64(b: u64) -> f64 {
        f64::from_bits(b)
    }
    #[inline(always)]
    fn digit(d: i64) -> f64 {
        f64::from_bits(MAGIC_64.to_bits().wrapping_add(d as u64)) - MAGIC_64
    }
    #[inline(always)]
    fn mul(self, o: f64) -> f64 {
        self * o
    }
    fn p10(k: usize) -> f64 {
        P10_64[k]
    }
    fn i10(k: usize) -> f64 {
        I10_64[k]
    }
    #[inline(always)]
    fn alp_digit(self, e: usize, f: usize) -> Option<i64> {
        let t = self * P10_64[e] * I10_64[f];
        // also false for NaN
        if t.abs() < (1u64 << 51) as f64 - 1.0 {
            Some(((t + MAGIC_64) - MAGIC_64) as i64)
        } else {
            None
        }
    }
}

impl Float for f32 {
    const BITS: u32 = 32;
    const BYTES: usize = 4;
    const MAX_EXP: usize = 10;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline(always)]
    fn from_u64(b: u64) -> f32 {
        f32::from_bits(b as u32)
    }
    #[inline(always)]
    fn digit(d: i64) -> f32 {
        f32::from_bits(MAGIC_32.to_bits().wrapping_add(d as u32)) - MAGIC_32
    }
    #[inline(always)]
    fn mul(self, o: f32) -> f32 {
        self * o
    }
    fn p10(k: usize) -> f32 {
        P10_32[k]
    }
    fn i10(k: usize) -> f32 {
        I10_32[k]
    }
    #[inline(always)]
    fn alp_digit(self, e: usize, f: usize) -> Option<i64> {
        let t = self * P10_32[e] * I10_32[f];
        if t.abs() < (1u32 << 22) as f32 - 1.0 {
            Some(((t + MAGIC_32) - MAGIC_32) as i64)
        } else {
            None
        }
    }
}

/// The ALP decoding of one digit.
#[inline(always)]
fn alp_value<T: Float>(d: i64, e: usize, f: usize) -> T {
    T::digit(d).mul(T::p10(f)).mul(T::i10(e))
}

/// The digit of `v` at `(e, f)` if it decodes back to exactly `v`.
#[inline(always)]
fn alp_exact<T: Float>(v: T, e: usize, f: usize) -> Option<i64> {
    let d = v.alp_digit(e, f)?;
    (alp_value::<T>(d, e, f).to_u64() == v.to_u64()).then_some(d)
}

fn put_word<T: Float>(out: &mut Vec<u8>, bits: u64) {
    out.extend_from_slice(&bits.to_le_bytes()[..T::BYTES]);
}

fn word_of<T: Float>(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..T::BYTES].copy_from_slice(&b[..T::BYTES]);
    u64::from_le_bytes(a)
}

fn header(scheme: Scheme, count: u32, body: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body);
    put_u8(&mut out, scheme as u8);
    put_u32(&mut out, count);
    out
}

/// Width of an exception position in a block of `n` values.
fn pos_width(n: usize) -> u32 {
    bits_needed(n.saturating_sub(1) as u64)
}

// ---------------------------------------------------------------- choice

/// `light`: without XOR and without entropy-coded digits (cache forms).
fn encode<T: Float>(values: &[T], light: bool) -> Vec<u8> {
    let n = values.len();
    let count = count_u32(n);
    let Some(first) = values.first() else {
        return constant::<T>(0, 0);
    };
    let b0 = first.to_u64();
    if values.iter().all(|v| v.to_u64() == b0) {
        return constant::<T>(count, b0);
    }
    let runs: Vec<(usize, usize)> = sample_runs(n, SAMPLE_LEN).collect();
    let sampled: usize = runs.iter().map(|r| r.1).sum();
    let scale = |bits: f64| (bits * n as f64 / sampled as f64 / 8.0) as usize;

    let (e, f) = alp_pick(values, &runs);
    let alp_est = ALP_HEADER + 22 + scale(alp_sample_bits(values, &runs, e, f));
    let rd = rd_plan(values, &runs);
    let rd_est = RD_HEADER + 2 * rd.dict.len() + scale(rd.bits);
    let xor_bits: usize = runs.iter().map(|&(s, l)| xor_bits(&values[s..s + l]) - T::BITS as usize).sum();
    let xor_est = HEADER + (T::BITS as usize + xor_bits * (n - 1) / sampled.max(2)).div_ceil(8);

    let xor_est = if light { usize::MAX } else { xor_est };
    let mut cands = [(alp_est, Scheme::Alp), (rd_est, Scheme::AlpRd), (xor_est, Scheme::Xor)];
    cands.sort_by_key(|c| c.0);
    let mut best: Option<Vec<u8>> = None;
    let mut best_len = HEADER + n * T::BYTES;
    for (est, s) in cands {
        if est >= best_len {
            continue;
        }
        let enc = match s {
            Scheme::Alp => alp(values, count, e, f, light),
            Scheme::AlpRd => alp_rd(values, count, &rd),
            _ => xor(values, count),
        };
        if enc.len() < best_len {
            best_len = enc.len();
            best = Some(enc);
        }
    }
    best.unwrap_or_else(|| raw(values, count))
}

/// The ALP `(exponent, factor)` smallest on the sample: every combination
/// on 32 evenly spaced sample values, the best `ALP_TOP` on the whole sample.
fn alp_pick<T: Float>(values: &[T], runs: &[(usize, usize)]) -> (usize, usize) {
    let all: Vec<T> = runs.iter().flat_map(|&(s, l)| values[s..s + l].iter().copied()).collect();
    let small: Vec<T> = (0..32.min(all.len())).map(|k| all[k * all.len() / 32.min(all.len())]).collect();
    let cost = |vals: &[T], e: usize, f: usize| -> u64 {
        let (mut lo, mut hi, mut exc) = (i64::MAX, i64::MIN, 0u64);
        for &v in vals {
            match alp_exact(v, e, f) {
                Some(d) => {
                    lo = lo.min(d);
                    hi = hi.max(d);
                }
                None => exc += 1,
            }
        }
        let w = if lo <= hi { bits_needed(hi.wrapping_sub(lo) as u64) as u64 } else { 0 };
        w * (vals.len() as u64 - exc) + exc * (T::BITS as u64 + 16)
    };
    let mut top: Vec<(u64, usize, usize)> = Vec::new();
    for e in 0..=T::MAX_EXP {
        for f in 0..=e {
            top.push((cost(&small, e, f), e, f));
        }
    }
    // stable: ties keep the smaller exponent, then the smaller factor
    top.sort_by_key(|t| t.0);
    top.truncate(ALP_TOP);
    let mut best = (u64::MAX, 0, 0);
    for &(_, e, f) in &top {
        let c = cost(&all, e, f);
        if c < best.0 {
            best = (c, e, f);
        }
    }
    (best.1, best.2)
}

/// Estimated bits of ALP on the sample: digits at the smaller of their FOR
/// and delta widths, plus the exceptions.
fn alp_sample_bits<T: Float>(values: &[T], runs: &[(usize, usize)], e: usize, f: usize) -> f64 {
    let (mut lo, mut hi, mut exc, mut total) = (i64::MAX, i64::MIN, 0usize, 0usize);
    let mut steps: Vec<i64> = Vec::new();
    for &(s, l) in runs {
        let mut prev: Option<i64> = None;
        for &v in &values[s..s + l] {
            total += 1;
            let Some(d) = alp_exact(v, e, f) else {
                exc += 1;
                continue;
            };
            lo = lo.min(d);
            hi = hi.max(d);
            if let Some(p) = prev {
                steps.push(d.wrapping_sub(p));
            }
            prev = Some(d);
        }
    }
    let for_w = if lo <= hi { bits_needed(hi.wrapping_sub(lo) as u64) } else { 0 };
    let mut bits = for_w as f64 * total as f64;
    if !steps.is_empty() {
        // Deltas as the integer codec's patched delta stores them: the width
        // of all but the few largest steps, the rest as patches (a block of
        // several series' runs has a jump at each series boundary, which
        // would otherwise make the estimate lose to XOR's).
        steps.sort_unstable();
        let m = steps.len();
        let trim = m / 50;
        let full_w = bits_needed(steps[m - 1].wrapping_sub(steps[0]) as u64) as f64;
        let (clo, chi) = (steps[trim], steps[m - 1 - trim]);
        let core_w = bits_needed(chi.wrapping_sub(clo) as u64) as f64;
        let outliers = steps.iter().filter(|&&d| d < clo || d > chi).count();
        // a patch: its position and its step at the full width, scaled
        // from the sample's steps to the block's values
        let patched = core_w * total as f64 + outliers as f64 * (14.0 + full_w);
        bits = bits.min(full_w * total as f64).min(patched);
    }
    bits + exc as f64 * (T::BITS as f64 + 14.0)
}

// ---------------------------------------------------------------- encoders

fn constant<T: Float>(count: u32, bits: u64) -> Vec<u8> {
    let mut out = header(Scheme::Constant, count, T::BYTES);
    put_word::<T>(&mut out, bits);
    out
}

fn raw<T: Float>(values: &[T], count: u32) -> Vec<u8> {
    let mut out = header(Scheme::Raw, count, values.len() * T::BYTES);
    for v in values {
        put_word::<T>(&mut out, v.to_u64());
    }
    out
}

fn alp<T: Float>(values: &[T], count: u32, e: usize, f: usize, light: bool) -> Vec<u8> {
    let n = values.len();
    let mut digits = Vec::with_capacity(n);
    let mut positions: Vec<u64> = Vec::new();
    let mut first_good: Option<i64> = None;
    let mut prev = 0i64;
    for (i, &v) in values.iter().enumerate() {
        match alp_exact(v, e, f) {
            Some(d) => {
                first_good.get_or_insert(d);
                prev = d;
                digits.push(d);
            }
            None => {
                positions.push(i as u64);
                digits.push(prev);
            }
        }
    }
    // leading exceptions take the first digit, so FOR and delta stay tight
    let lead = positions.iter().enumerate().take_while(|&(i, &p)| p as usize == i).count();
    if let Some(g) = first_good {
        digits[..lead].fill(g);
    }
    let enc = integer::encode_with(&digits, !light);
    let pw = pos_width(n);
    drop(digits);
    let mut out = header(Scheme::Alp, count, 10 + enc.len() + packed_len(positions.len(), pw) + positions.len() * T::BYTES);
    put_u8(&mut out, e as u8);
    put_u8(&mut out, f as u8);
    put_u32(&mut out, positions.len() as u32);
    put_u32(&mut out, enc.len() as u32);
    out.extend_from_slice(&enc);
    if !positions.is_empty() {
        bitpack::pack(&positions, pw, &mut out);
        for &p in &positions {
            put_word::<T>(&mut out, values[p as usize].to_u64());
        }
    }
    out
}

/// An ALP-RD plan: right width, dictionary, estimated bits on the sample.
struct RdPlan {
    right: u32,
    dict: Vec<u16>,
    bits: f64,
}

fn rd_plan<T: Float>(values: &[T], runs: &[(usize, usize)]) -> RdPlan {
    let mut s: Vec<u64> = runs.iter().flat_map(|&(s, l)| values[s..s + l].iter().map(|v| v.to_u64())).collect();
    s.sort_unstable();
    let total = s.len();
    let mut best = RdPlan { right: T::BITS - 1, dict: vec![0], bits: f64::MAX };
    let mut counts: Vec<(usize, u64)> = Vec::new();
    for right in T::BITS - 16..T::BITS {
        counts.clear();
        let mut i = 0;
        while i < total {
            let left = s[i] >> right;
            let start = i;
            while i < total && s[i] >> right == left {
                i += 1;
            }
            counts.push((i - start, left));
        }
        counts.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for b in 0..=3u32 {
            let k = (1usize << b).min(counts.len());
            let covered: usize = counts[..k].iter().map(|c| c.0).sum();
            let exc = total - covered;
            let bits = total as f64 * (right + bits_needed(k as u64 - 1)) as f64 + exc as f64 * (16.0 + 14.0);
            if bits < best.bits {
                best = RdPlan { right, dict: counts[..k].iter().map(|c| c.1 as u16).collect(), bits };
            }
        }
    }
    best
}

fn alp_rd<T: Float>(values: &[T], count: u32, plan: &RdPlan) -> Vec<u8> {
    let n = values.len();
    let right = plan.right;
    let rmask = (1u64 << right) - 1;
    let cw = bits_needed(plan.dict.len() as u64 - 1);
    let mut positions: Vec<u64> = Vec::new();
    let mut lefts: Vec<u16> = Vec::new();
    let code_of = |left: u64| plan.dict.iter().position(|&d| d as u64 == left);
    let pw = pos_width(n);
    let mut out = header(Scheme::AlpRd, count, 1 + 2 * RD_DICT + 4 + packed_len(n, cw) + packed_len(n, right));
    put_u8(&mut out, right as u8);
    put_u8(&mut out, plan.dict.len() as u8);
    for &d in &plan.dict {
        out.extend_from_slice(&d.to_le_bytes());
    }
    let exc_at = out.len();
    put_u32(&mut out, 0);
    bitpack::pack_with(n, cw, &mut out, |s, buf| {
        for (b, v) in buf.iter_mut().zip(&values[s..]) {
            *b = code_of(v.to_u64() >> right).unwrap_or(0) as u64;
        }
    });
    // exceptions are collected separately: `pack_with` skips width 0
    for (i, v) in values.iter().enumerate() {
        let left = v.to_u64() >> right;
        if code_of(left).is_none() {
            positions.push(i as u64);
            lefts.push(left as u16);
        }
    }
    bitpack::pack_with(n, right, &mut out, |s, buf| {
        for (b, v) in buf.iter_mut().zip(&values[s..]) {
            *b = v.to_u64() & rmask;
        }
    });
    out[exc_at..exc_at + 4].copy_from_slice(&(positions.len() as u32).to_le_bytes());
    if !positions.is_empty() {
        bitpack::pack(&positions, pw, &mut out);
        for l in lefts {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
    out
}

/// LSB-first bit stream writer.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, v: u64, bits: u32) {
        if bits == 0 {
            return;
        }
        let v = if bits < 64 { v & ((1u64 << bits) - 1) } else { v };
        self.acc |= v << self.n;
        if self.n + bits >= 64 {
            self.out.extend_from_slice(&self.acc.to_le_bytes());
            self.acc = if self.n == 0 { 0 } else { v >> (64 - self.n) };
            self.n = self.n + bits - 64;
        } else {
            self.n += bits;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        let k = self.n.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..k]);
        self.out
    }
}

/// The XOR window state shared by the encoder, its sizer and the decoder.
#[derive(Clone, Copy)]
struct Window {
    lead: u32,
    len: u32,
}

/// Walks the XOR encoding of `values`, calling `emit(value, bits)` per field.
fn xor_walk<T: Float>(values: &[T], mut emit: impl FnMut(u64, u32)) {
    let Some(first) = values.first() else { return };
    emit(first.to_u64(), T::BITS);
    let mut prev = first.to_u64();
    let mut w = Window { lead: 0, len: T::BITS };
    for v in &values[1..] {
        let b = v.to_u64();
        let x = b ^ prev;
        prev = b;
        if x == 0 {
            emit(0, 1);
            continue;
        }
        let lead = x.leading_zeros() - (64 - T::BITS);
        let trail = x.trailing_zeros();
        let wtrail = T::BITS - w.lead - w.len;
        let len = T::BITS - lead - trail;
        // reuse the window unless a fresh one saves more than its 12 bits
        if lead >= w.lead && trail >= wtrail && w.len <= len + 13 {
            emit(0b01, 2);
            emit(x >> wtrail, w.len);
        } else {
            emit(0b11, 2);
            emit(lead as u64, 6);
            emit((len - 1) as u64, 6);
            emit(x >> trail, len);
            w = Window { lead, len };
        }
    }
}

fn xor_bits<T: Float>(values: &[T]) -> usize {
    let mut bits = 0usize;
    xor_walk(values, |_, b| bits += b as usize);
    bits
}

fn xor<T: Float>(values: &[T], count: u32) -> Vec<u8> {
    let mut w = BitWriter { out: header(Scheme::Xor, count, xor_bits(values).div_ceil(8)), acc: 0, n: 0 };
    xor_walk(values, |v, b| w.put(v, b));
    w.finish()
}

// ---------------------------------------------------------------- decoding

thread_local! {
    /// Reused code and right-part buffers of ALP-RD decoding.
    static RD_BUFS: RefCell<(Vec<u64>, Vec<u64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Buffers above this many values are released after use.
const KEEP: usize = 1 << 16;

fn decode<T: Float>(bytes: &[u8], out: &mut Vec<T>) -> Result<(), CodecError> {
    let old = out.len();
    let r = decode_inner(bytes, out, old);
    if r.is_err() {
        out.truncate(old);
    }
    r
}

fn decode_inner<T: Float>(bytes: &[u8], out: &mut Vec<T>, old: usize) -> Result<(), CodecError> {
    let mut r = Reader::new(bytes, CODEC);
    let (scheme, n) = r.scheme_header(Scheme::from_tag)?;
    match scheme {
        Scheme::Constant => {
            let v = T::from_u64(word_of::<T>(r.take(T::BYTES, "constant value")?));
            r.finish()?;
            out.resize(old + n, v);
        }
        Scheme::Raw => {
            let body = r.take(n * T::BYTES, "raw values")?;
            r.finish()?;
            out.extend(body.chunks_exact(T::BYTES).map(|c| T::from_u64(word_of::<T>(c))));
        }
        Scheme::Alp => decode_alp(&mut r, n, out)?,
        Scheme::AlpRd => decode_rd(&mut r, n, out)?,
        Scheme::Xor => decode_xor(&mut r, n, out)?,
    }
    Ok(())
}

/// The sum of the f64 values an encoding decodes to, and their count,
/// computed without materialising them where the scheme allows: ALP without
/// exceptions sums its digits exactly as integers (the integer codec's
/// fused sum) and scales once, so integer-valued columns (exponent 0) sum
/// exactly and decimal ones round once instead of at every addition;
/// constants multiply. `Ok(None)`: no fused sum here (ALP with exceptions,
/// ALP-RD, XOR, raw, or a digit sum that might overflow); decode and add.
pub fn sum_f64(bytes: &[u8]) -> Result<Option<(f64, usize)>, CodecError> {
    let mut r = Reader::new(bytes, CODEC);
    let (scheme, n) = r.scheme_header(Scheme::from_tag)?;
    match scheme {
        Scheme::Constant => {
            let v = f64::from_u64(word_of::<f64>(r.take(8, "constant value")?));
            r.finish()?;
            Ok(Some((if n == 0 { 0.0 } else { v * n as f64 }, n)))
        }
        Scheme::Alp => {
            let e = r.u8("ALP exponent")? as usize;
            let f = r.u8("ALP factor")? as usize;
            if e > <f64 as Float>::MAX_EXP || f > e {
                return Err(CodecError::new(CODEC, r.pos() - 2, format!("ALP exponent {e} and factor {f} out of range")));
            }
            let exc = exception_count(&mut r, n)?;
            let len = r.u32("digits length")? as usize;
            let at = r.pos();
            let enc = r.take(len, "digits")?;
            if exc > 0 {
                return Ok(None);
            }
            r.finish()?;
            let Some((digits, count)) = integer::sum_i64(enc).map_err(|err| err.at(CODEC, at))? else {
                return Ok(None);
            };
            if count != n {
                return Err(CodecError::new(CODEC, at, format!("{count} digits for {n} values")));
            }
            let v = digits as f64;
            Ok(Some((if e == 0 { v } else { v * f64::p10(f) * f64::i10(e) }, n)))
        }
        Scheme::Raw | Scheme::AlpRd | Scheme::Xor => Ok(None),
    }
}

/// The same f64 values in light schemes, for block caches: ALP's digits
/// re-encoded without entropy coding (`integer::light_form`; the rest of
/// the encoding is copied as it is), and XOR (30x slower to decode than
/// ALP) re-encoded without it when that costs at most a quarter more bytes.
/// `Ok(None)` when nothing changes.
pub fn light_form(bytes: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
    if scheme(bytes) == Some(Scheme::Xor) {
        let mut values = Vec::new();
        decode_f64(bytes, &mut values)?;
        let light = encode(&values, true);
        return Ok((light.len() <= bytes.len() + bytes.len() / 4).then_some(light));
    }
    if scheme(bytes) != Some(Scheme::Alp) {
        return Ok(None);
    }
    let mut r = Reader::new(bytes, CODEC);
    r.take(HEADER + 2, "ALP header")?;
    let _exceptions = r.u32("exception count")?;
    let len = r.u32("digits length")? as usize;
    let at = r.pos();
    let digits = r.take(len, "digits")?;
    let Some(light) = integer::light_form(digits).map_err(|e| e.at(CODEC, at))? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(bytes.len() - len + light.len());
    out.extend_from_slice(&bytes[..at - 4]);
    put_u32(&mut out, light.len() as u32);
    out.extend_from_slice(&light);
    out.extend_from_slice(r.rest());
    Ok(Some(out))
}

/// An exception count, checked to be at most `n`.
fn exception_count(r: &mut Reader, n: usize) -> Result<usize, CodecError> {
    let e = r.u32("exception count")? as usize;
    if e > n {
        return Err(CodecError::new(CODEC, r.pos() - 4, format!("{e} exceptions for {n} values")));
    }
    Ok(e)
}

/// Exception positions, each checked to be below `n`.
fn positions(r: &mut Reader, exc: usize, n: usize) -> Result<Vec<u64>, CodecError> {
    let at = r.pos();
    let mut pos: Vec<u64> = Vec::new();
    r.unpack(pos_width(n), exc, 0, &mut pos)?;
    if let Some(p) = pos.iter().find(|&&p| p >= n as u64) {
        return Err(CodecError::new(CODEC, at, format!("exception position {p} beyond {n} values")));
    }
    Ok(pos)
}

fn decode_alp<T: Float>(r: &mut Reader, n: usize, out: &mut Vec<T>) -> Result<(), CodecError> {
    let e = r.u8("ALP exponent")? as usize;
    let f = r.u8("ALP factor")? as usize;
    if e > T::MAX_EXP || f > e {
        return Err(CodecError::new(CODEC, r.pos() - 2, format!("ALP exponent {e} and factor {f} out of range")));
    }
    let exc = exception_count(r, n)?;
    let len = r.u32("digits length")? as usize;
    let at = r.pos();
    let enc = r.take(len, "digits")?;
    // The hot loop: the digits are decoded straight into floats, one
    // conversion and at most two multiplies per value fused into the
    // integer codec's unpacking (no digit buffer, no second pass).
    let old = out.len();
    let res = if e == 0 {
        integer::decode_map(enc, out, T::digit)
    } else {
        let (p, m) = (T::p10(f), T::i10(e));
        integer::decode_map(enc, out, move |d| T::digit(d).mul(p).mul(m))
    };
    res.map_err(|err| err.at(CODEC, at))?;
    if out.len() - old != n {
        return Err(CodecError::new(CODEC, at, format!("{} digits for {n} values", out.len() - old)));
    }
    if exc > 0 {
        let pos = positions(r, exc, n)?;
        let body = r.take(exc * T::BYTES, "exception values")?;
        let dst = &mut out[old..];
        for (&p, b) in pos.iter().zip(body.chunks_exact(T::BYTES)) {
            dst[p as usize] = T::from_u64(word_of::<T>(b));
        }
    }
    r.finish()
}

fn decode_rd<T: Float>(r: &mut Reader, n: usize, out: &mut Vec<T>) -> Result<(), CodecError> {
    let right = r.u8("ALP-RD right width")? as u32;
    if !(T::BITS - 16..T::BITS).contains(&right) {
        return Err(CodecError::new(CODEC, r.pos() - 1, format!("ALP-RD right width {right} out of range")));
    }
    let size = r.u8("ALP-RD dictionary size")? as usize;
    if !(1..=RD_DICT).contains(&size) {
        return Err(CodecError::new(CODEC, r.pos() - 1, format!("ALP-RD dictionary size {size} out of range")));
    }
    let mut dict = [0u64; RD_DICT];
    for d in &mut dict[..size] {
        let b = r.take(2, "ALP-RD dictionary")?;
        *d = u16::from_le_bytes([b[0], b[1]]) as u64;
    }
    let exc = exception_count(r, n)?;
    let cw = bits_needed(size as u64 - 1);
    RD_BUFS.with(|cell| {
        let mut bufs = cell.borrow_mut();
        let (codes, rights) = &mut *bufs;
        codes.clear();
        rights.clear();
        let res = (|| {
            r.unpack(cw, n, 0, codes)?;
            r.unpack(right, n, 0, rights)?;
            let pos = if exc > 0 { positions(r, exc, n)? } else { Vec::new() };
            let lefts = r.take(exc * 2, "ALP-RD exception lefts")?;
            r.finish()?;
            out.extend(codes.iter().zip(rights.iter()).map(|(&c, &rt)| T::from_u64((dict[(c as usize) & (RD_DICT - 1)] << right) | rt)));
            let base = out.len() - n;
            let rmask = (1u64 << right) - 1;
            for (&p, l) in pos.iter().zip(lefts.chunks_exact(2)) {
                let slot = &mut out[base + p as usize];
                *slot = T::from_u64(((u16::from_le_bytes([l[0], l[1]]) as u64) << right) | (slot.to_u64() & rmask));
            }
            Ok(())
        })();
        if codes.capacity() > KEEP {
            *codes = Vec::new();
            *rights = Vec::new();
        }
        res
    })
}

/// LSB-first bit stream reader with bounds checks.
struct BitReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl BitReader<'_> {
    fn get(&mut self, bits: u32) -> Option<u64> {
        if bits == 0 {
            return Some(0);
        }
        if self.pos + bits as usize > self.buf.len() * 8 {
            return None;
        }
        let at = self.pos / 8;
        let k = (self.buf.len() - at).min(16);
        let mut a = [0u8; 16];
        a[..k].copy_from_slice(&self.buf[at..at + k]);
        let v = (u128::from_le_bytes(a) >> (self.pos % 8)) as u64;
        self.pos += bits as usize;
        Some(if bits < 64 { v & ((1u64 << bits) - 1) } else { v })
    }
}

fn decode_xor<T: Float>(r: &mut Reader, n: usize, out: &mut Vec<T>) -> Result<(), CodecError> {
    let start = r.pos();
    let mut br = BitReader { buf: r.rest(), pos: 0 };
    let truncated = |br: &BitReader| CodecError::new(CODEC, start + br.pos / 8, "truncated XOR bit stream");
    if n > 0 {
        // every value takes at least a bit: a short stream fails before `out` grows much
        if br.buf.len() * 8 < n - 1 + T::BITS as usize {
            return Err(truncated(&br));
        }
        out.reserve(n);
        let mut prev = br.get(T::BITS).ok_or_else(|| truncated(&br))?;
        out.push(T::from_u64(prev));
        let mut w = Window { lead: 0, len: T::BITS };
        for _ in 1..n {
            let x = match br.get(1).ok_or_else(|| truncated(&br))? {
                0 => 0,
                _ => {
                    if br.get(1).ok_or_else(|| truncated(&br))? == 1 {
                        let lead = br.get(6).ok_or_else(|| truncated(&br))? as u32;
                        let len = br.get(6).ok_or_else(|| truncated(&br))? as u32 + 1;
                        if lead + len > T::BITS {
                            return Err(CodecError::new(CODEC, start + br.pos / 8, format!("XOR window {lead}+{len} wider than {} bits", T::BITS)));
                        }
                        w = Window { lead, len };
                    }
                    br.get(w.len).ok_or_else(|| truncated(&br))? << (T::BITS - w.lead - w.len)
                }
            };
            prev ^= x;
            out.push(T::from_u64(prev));
        }
    }
    r.take(br.pos.div_ceil(8), "XOR bit stream")?;
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{never_panics, Rng, LENGTHS};
    use super::super::MAX_VALUES;
    use super::*;

    fn unit(r: &mut Rng) -> f64 {
        ((r.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(r: &mut Rng) -> f64 {
        (-2.0 * unit(r).ln()).sqrt() * (std::f64::consts::TAU * unit(r)).cos()
    }

    /// TSBS cpu: a clamped random walk with N(0,1) steps, truncated to integers.
    fn tsbs(n: usize, r: &mut Rng) -> Vec<f64> {
        let mut x = unit(r) * 100.0;
        (0..n)
            .map(|_| {
                x = (x + normal(r)).clamp(0.0, 100.0);
                (x as i64) as f64
            })
            .collect()
    }

    fn prices(n: usize, r: &mut Rng, digits: u32) -> Vec<f64> {
        let scale = 10f64.powi(digits as i32);
        let mut c = 1_000_000i64 + r.below(1_000_000) as i64;
        (0..n)
            .map(|_| {
                c = (c + r.range(-50, 50)).max(0);
                c as f64 / scale
            })
            .collect()
    }

    fn random(n: usize, r: &mut Rng) -> Vec<f64> {
        (0..n).map(|_| unit(r) * 1000.0).collect()
    }

    fn sensor(n: usize, r: &mut Rng) -> Vec<f64> {
        (0..n).map(|i| 20.0 + 5.0 * (i as f64 / 500.0).sin() + 0.01 * normal(r)).collect()
    }

    fn specials() -> Vec<f64> {
        [
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7FF0_0000_0000_0001), // signalling NaN
            f64::from_bits(0x7FF8_0000_DEAD_BEEF),
            f64::from_bits(0xFFF4_0000_0000_1234),
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            -f64::from_bits(1),
            f64::from_bits(1),
            f64::MIN,
            f64::MAX,
            f64::EPSILON,
            1.0,
            -1.5,
        ]
        .to_vec()
    }

    fn mixed(n: usize, r: &mut Rng) -> Vec<f64> {
        let sp = specials();
        let mut v = prices(n, r, 2);
        for (i, x) in v.iter_mut().enumerate() {
            if i % 97 == 13 {
                *x = sp[i % sp.len()];
            }
        }
        v
    }

    #[allow(clippy::type_complexity)]
    fn shapes() -> Vec<(&'static str, fn(usize, &mut Rng) -> Vec<f64>)> {
        vec![
            ("tsbs", tsbs),
            ("prices1", |n, r| prices(n, r, 1)),
            ("prices2", |n, r| prices(n, r, 2)),
            ("prices3", |n, r| prices(n, r, 3)),
            ("prices4", |n, r| prices(n, r, 4)),
            ("random", random),
            ("sensor", sensor),
            ("constant", |n, _| vec![-0.0; n]),
            ("constant_nan", |n, _| vec![f64::from_bits(0x7FF0_0000_0000_0042); n]),
            ("specials", |n, r| {
                let sp = specials();
                (0..n).map(|_| sp[r.below(sp.len() as u64) as usize]).collect()
            }),
            ("mixed", mixed),
            ("random_bits", |n, r| (0..n).map(|_| f64::from_bits(r.next())).collect()),
        ]
    }

    fn bits64(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    fn round_trip(values: &[f64]) -> Vec<u8> {
        let enc = encode_f64(values);
        let mut out = vec![42.0];
        decode_f64(&enc, &mut out).unwrap_or_else(|e| panic!("{e}: {:?} of {} values", scheme(&enc), values.len()));
        assert_eq!(out[0], 42.0);
        assert!(bits64(&out[1..]) == bits64(values), "{:?} of {} values", scheme(&enc), values.len());
        enc
    }

    fn round_trip32(values: &[f32]) -> Vec<u8> {
        let enc = encode_f32(values);
        let mut out = Vec::new();
        decode_f32(&enc, &mut out).unwrap_or_else(|e| panic!("{e}: {:?}", scheme(&enc)));
        let a: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
        let b: Vec<u32> = values.iter().map(|x| x.to_bits()).collect();
        assert!(a == b, "{:?} of {} values", scheme(&enc), values.len());
        enc
    }

    /// f32 versions of the shapes, with f32 specials that widening would quiet.
    fn to32(v: &[f64]) -> Vec<f32> {
        v.iter().enumerate().map(|(i, &x)| if i % 50 == 7 { f32::from_bits(0x7F80_0001 + i as u32) } else { x as f32 }).collect()
    }

    #[test]
    fn round_trips_every_shape_and_length() {
        for seed in 0..2 {
            let mut rng = Rng(200 + seed);
            for (name, gen) in shapes() {
                for &n in LENGTHS {
                    let v = gen(n, &mut rng);
                    let enc = round_trip(&v);
                    assert!(enc.len() <= HEADER + 8 * n + 8, "{name}/{n}: {} bytes", enc.len());
                    let v32 = to32(&v);
                    let enc = round_trip32(&v32);
                    assert!(enc.len() <= HEADER + 4 * n + 4, "{name}/{n} f32: {} bytes", enc.len());
                    round_trip32(&v.iter().map(|&x| x as f32).collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn every_scheme_round_trips_when_forced() {
        let mut rng = Rng(7);
        for (name, gen) in shapes() {
            for n in [1usize, 2, 1025, 3000] {
                let v = gen(n, &mut rng);
                let runs: Vec<_> = sample_runs(n, SAMPLE_LEN).collect();
                let (e, f) = alp_pick(&v, &runs);
                let rd = rd_plan(&v, &runs);
                for enc in [raw(&v, n as u32), alp(&v, n as u32, e, f, false), alp_rd(&v, n as u32, &rd), xor(&v, n as u32)] {
                    let mut out = Vec::new();
                    decode_f64(&enc, &mut out).unwrap_or_else(|err| panic!("{name}/{n} {:?}: {err}", scheme(&enc)));
                    assert!(bits64(&out) == bits64(&v), "{name}/{n} {:?}", scheme(&enc));
                }
                let v32 = to32(&v);
                let runs: Vec<_> = sample_runs(n, SAMPLE_LEN).collect();
                let (e, f) = alp_pick(&v32, &runs);
                let rd = rd_plan(&v32, &runs);
                for enc in [raw(&v32, n as u32), alp(&v32, n as u32, e, f, true), alp_rd(&v32, n as u32, &rd), xor(&v32, n as u32)] {
                    let mut out = Vec::new();
                    decode_f32(&enc, &mut out).unwrap_or_else(|err| panic!("{name}/{n} f32 {:?}: {err}", scheme(&enc)));
                    assert!(out.iter().map(|x| x.to_bits()).eq(v32.iter().map(|x| x.to_bits())), "{name}/{n} f32 {:?}", scheme(&enc));
                }
            }
        }
    }

    #[test]
    fn picks_the_expected_scheme() {
        let mut rng = Rng(8);
        let n = 8192;
        let pick = |v: &[f64]| scheme(&round_trip(v)).unwrap();
        assert_eq!(pick(&[]), Scheme::Constant);
        assert_eq!(pick(&vec![1.5; n]), Scheme::Constant);
        assert_eq!(pick(&tsbs(n, &mut rng)), Scheme::Alp);
        for d in 1..=4 {
            assert_eq!(pick(&prices(n, &mut rng, d)), Scheme::Alp, "{d} decimals");
        }
        assert_eq!(pick(&mixed(n, &mut rng)), Scheme::Alp);
        assert_eq!(pick(&random(n, &mut rng)), Scheme::AlpRd);
        assert_eq!(pick(&(0..n).map(|_| f64::from_bits(rng.next())).collect::<Vec<_>>()), Scheme::Raw);
        // slowly varying, full precision: ALP-RD or XOR, never raw
        let s = pick(&sensor(n, &mut rng));
        assert!(matches!(s, Scheme::AlpRd | Scheme::Xor), "{s:?}");
        let ramp: Vec<f64> = (0..n).map(|i| 1.0 + (i / 16) as f64 * 2f64.powi(-40)).collect();
        assert_eq!(pick(&ramp), Scheme::Xor);
        // f32 prices around 50.00 (f32 holds about 7 significant digits)
        let mut c = 5000i32;
        let f32s: Vec<f32> = (0..n)
            .map(|_| {
                c = (c + rng.range(-20, 20) as i32).max(0);
                c as f32 / 100.0
            })
            .collect();
        assert_eq!(scheme(&round_trip32(&f32s)), Some(Scheme::Alp));
    }

    #[test]
    fn fused_sums_equal_the_sum_of_the_decoded_values() {
        let mut rng = Rng(16);
        let mut fused = 0;
        for (name, gen) in shapes() {
            for &n in LENGTHS {
                let v = gen(n, &mut rng);
                let enc = encode_f64(&v);
                let light = light_form(&enc).unwrap();
                for enc in [Some(enc), light].into_iter().flatten() {
                    let Some((sum, count)) = sum_f64(&enc).unwrap() else { continue };
                    fused += 1;
                    assert_eq!(count, n);
                    let exact: f64 = v.iter().sum();
                    let tol = v.iter().map(|x| x.abs()).sum::<f64>() * 1e-12;
                    assert!(sum == exact || (sum - exact).abs() <= tol || (sum.is_nan() && exact.is_nan()), "{name}/{n} {:?}: {sum} vs {exact}", scheme(&enc));
                    if name == "tsbs" {
                        assert_eq!(sum, exact, "integer-valued sums are exact");
                    }
                }
            }
        }
        assert!(fused > 50, "{fused} fused sums");
    }

    #[test]
    fn light_forms_keep_every_bit() {
        let mut rng = Rng(17);
        for (name, gen) in shapes() {
            let v = gen(8192, &mut rng);
            let enc = encode_f64(&v);
            if let Some(light) = light_form(&enc).unwrap() {
                assert!(integer::scheme(&light[ALP_HEADER..]) != Some(integer::Scheme::DeltaZstd));
                let mut out = Vec::new();
                decode_f64(&light, &mut out).unwrap();
                assert!(bits64(&out) == bits64(&v), "{name}");
            }
        }
        let enc = encode_f64(&tsbs(8192, &mut rng));
        assert!(light_form(&enc).unwrap().is_some(), "TSBS digits are entropy coded on disk");
    }

    #[test]
    fn tsbs_takes_at_most_2_9_bits_per_value() {
        let mut rng = Rng(9);
        let n = 8192;
        // ALP digits as delta + zstd: the steps (mostly 0, ±1, ±2) entropy
        // coded, where bit-packing needs 3 bits
        let mut total = 0;
        for _ in 0..8 {
            let enc = round_trip(&tsbs(n, &mut rng));
            assert_eq!(scheme(&enc), Some(Scheme::Alp));
            assert_eq!(integer::scheme(&enc[ALP_HEADER..]), Some(integer::Scheme::DeltaZstd));
            total += enc.len();
        }
        let bits = total as f64 * 8.0 / (8 * n) as f64;
        eprintln!("tsbs: {bits} bits/value");
        assert!(bits <= 2.9, "tsbs: {bits} bits/value");
        let enc = round_trip(&prices(n, &mut rng, 2));
        let bits = enc.len() as f64 * 8.0 / n as f64;
        assert!(bits <= 8.0, "prices: {bits} bits/value");
        let enc = round_trip(&random(n, &mut rng));
        let bits = enc.len() as f64 * 8.0 / n as f64;
        assert!(bits <= 58.0, "random: {bits} bits/value");
    }

    #[test]
    fn decode_appends_and_restores_on_error() {
        let mut rng = Rng(11);
        for v in [prices(300, &mut rng, 2), random(300, &mut rng), sensor(300, &mut rng), vec![2.5; 3]] {
            let enc = encode_f64(&v);
            let mut out = vec![1.0, 2.0];
            decode_f64(&enc, &mut out).unwrap();
            assert_eq!(out.len(), 2 + v.len());
            out.truncate(2);
            assert!(decode_f64(&enc[..enc.len() - 1], &mut out).is_err());
            assert_eq!(out, vec![1.0, 2.0]);
        }
    }

    #[test]
    fn malformed_headers_are_errors() {
        let mut out = Vec::new();
        assert!(decode_f64(&[], &mut out).is_err());
        assert!(decode_f64(&[9, 0, 0, 0, 0], &mut out).is_err());
        for tag in 0..5u8 {
            let mut big = vec![tag];
            big.extend_from_slice(&((MAX_VALUES + 1) as u32).to_le_bytes());
            big.extend_from_slice(&[0; 64]);
            let e = decode_f64(&big, &mut out).unwrap_err();
            assert_eq!(e.offset, 1, "{e}");
            assert!(decode_f32(&big, &mut Vec::new()).is_err());
        }
        // ALP exponent beyond the table
        let mut a = alp(&[1.5, 2.5], 2, 1, 0, false);
        a[5] = 19;
        assert!(decode_f64(&a, &mut out).is_err());
        a[5] = 11;
        assert!(decode_f32(&a, &mut Vec::new()).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let mut rng = Rng(10);
        let inputs: Vec<Vec<f64>> = vec![
            vec![],
            vec![3.25; 100],
            tsbs(1100, &mut rng),
            mixed(600, &mut rng),
            random(200, &mut rng),
            sensor(200, &mut rng),
            (0..120).map(|_| f64::from_bits(rng.next())).collect(),
        ];
        let mut seen = Vec::new();
        for v in inputs {
            let enc = round_trip(&v);
            seen.push(scheme(&enc).unwrap());
            never_panics(&enc, |b| decode_f64(b, &mut Vec::new()).is_ok());
            // the sum and the light form may skip what they do not read, but never panic
            for cut in 0..enc.len() {
                let _ = (sum_f64(&enc[..cut]), light_form(&enc[..cut]));
            }
            let mut flipped = enc.clone();
            for i in 0..flipped.len() * 8 {
                flipped[i / 8] ^= 1 << (i % 8);
                let _ = (sum_f64(&flipped), light_form(&flipped));
                flipped[i / 8] ^= 1 << (i % 8);
            }
            let e32 = round_trip32(&to32(&v));
            never_panics(&e32, |b| decode_f32(b, &mut Vec::new()).is_ok());
        }
        // forced encodings of the schemes the choice did not reach
        let v = sensor(300, &mut rng);
        never_panics(&xor(&v, 300), |b| decode_f64(b, &mut Vec::new()).is_ok());
        let runs: Vec<_> = sample_runs(300, SAMPLE_LEN).collect();
        never_panics(&alp_rd(&v, 300, &rd_plan(&v, &runs)), |b| decode_f64(b, &mut Vec::new()).is_ok());
        for s in [Scheme::Constant, Scheme::Raw, Scheme::Alp] {
            assert!(seen.contains(&s), "{s:?} not covered");
        }
    }
}
