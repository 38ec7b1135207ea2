//! FastLanes-style bit-packing of u64 values at a fixed width 0..=64.
//!
//! Layout (`packed_len(count, width)` bytes, no header; the caller stores
//! width and count):
//! - every full block of 1024 values is `width * 128` bytes: 16 interleaved
//!   lanes of `width` u64 words each, stored as little-endian u64s. Value `i`
//!   of the block belongs to lane `i % 16`, row `r = i / 16`; its bits start
//!   at bit `(r * width) % 64` of the lane's word `(r * width) / 64`, spilling
//!   into the lane's next word when they cross 64. Lane `l`'s word `k` is u64
//!   number `k * 16 + l` of the block. Every row thus does the same shift on
//!   16 independent lanes, which the compiler turns into SIMD code;
//! - the last `count % 1024` values follow as a plain LSB-first bit stream:
//!   value `j` is bits `j*width .. (j+1)*width` (bit `b` is bit `b % 8` of byte
//!   `b / 8`), padded with zero bits to a whole byte.
//!
//! Width 0 takes no bytes (every value is 0, or the caller's base). This is
//! FastLanes' interleaving of 16 lanes but not its transposed value order:
//! row `r` of a block is values `16r .. 16r + 16` in order, which decoding
//! hands to a `Sink` (FOR, delta, float conversion fused in) one row at a
//! time; delta decoding over the result is a prefix sum.
//! Must not: panic on short or garbage input when unpacking.

use std::mem::MaybeUninit;

use super::{CodecError, MAX_VALUES};

/// Runs `$body` with `$W` bound to the const `usize` equal to `$w` (0..=64),
/// so each width gets its own specialised, fully constant-folded loop.
macro_rules! with_width {
    ($w:expr, $W:ident => $body:expr) => {
        with_width!(@arms $w, $W, $body, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28
            29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64])
    };
    (@arms $w:expr, $W:ident, $body:expr, [$($n:literal)*]) => {
        match $w {
            $($n => {
                const $W: usize = $n;
                $body
            })*
            _ => unreachable!("bit width checked to be at most 64"),
        }
    };
}

/// Values per interleaved block.
pub const BLOCK: usize = 1024;
/// Interleaved lanes per block (1024 bits of u64s: one FastLanes register).
pub(crate) const LANES: usize = 16;
/// Values per lane in a block.
const ROWS: usize = BLOCK / LANES;

/// An output element unpacking can write directly (u64 or i64, bit-cast).
pub trait Lane: Copy + Default {
    fn from_u64(v: u64) -> Self;
}

impl Lane for u64 {
    #[inline(always)]
    fn from_u64(v: u64) -> u64 {
        v
    }
}

impl Lane for i64 {
    #[inline(always)]
    fn from_u64(v: u64) -> i64 {
        v as i64
    }
}

/// The width that holds every value in `0..=max`.
pub fn bits_needed(max: u64) -> u32 {
    64 - max.leading_zeros()
}

/// Bytes that `count` values take at `width` (saturating on absurd inputs).
pub fn packed_len(count: usize, width: u32) -> usize {
    let w = width as usize;
    let full = (count / BLOCK).saturating_mul(w * BLOCK / 8);
    let tail = ((count % BLOCK) * w).div_ceil(8);
    full.saturating_add(tail)
}

/// Appends `values` packed at `width` to `out`. Bits above `width` are dropped.
///
/// # Panics
/// If `width > 64`.
pub fn pack(values: &[u64], width: u32, out: &mut Vec<u8>) {
    pack_with(values.len(), width, out, |start, buf| buf.copy_from_slice(&values[start..start + buf.len()]));
}

/// Unpacks `count` values at `width` from the front of `bytes`, appending them
/// to `out`; returns the bytes read (`packed_len(count, width)`). On error
/// `out` is left as it was.
pub fn unpack(bytes: &[u8], width: u32, count: usize, out: &mut Vec<u64>) -> Result<usize, CodecError> {
    if count > MAX_VALUES {
        return Err(CodecError::new("bitpack", 0, format!("value count {count} above the limit of {MAX_VALUES}")));
    }
    unpack_append(bytes, width, count, 0, out)
}

fn check(bytes: &[u8], width: u32, count: usize) -> Result<usize, CodecError> {
    if width > 64 {
        return Err(CodecError::new("bitpack", 0, format!("bit width {width} above 64")));
    }
    let need = packed_len(count, width);
    if bytes.len() < need {
        return Err(CodecError::new("bitpack", bytes.len(), format!("truncated: {count} values at {width} bits need {need} bytes, {} present", bytes.len())));
    }
    Ok(need)
}

/// Packs `count` values at `width`; `fill(start, buf)` writes values
/// `start .. start + buf.len()` (at most one block at a time) into `buf`; it
/// is not called at all when `width` or `count` is 0.
pub(crate) fn pack_with(count: usize, width: u32, out: &mut Vec<u8>, mut fill: impl FnMut(usize, &mut [u64])) {
    assert!(width <= 64, "bit width {width} above 64");
    if width == 0 || count == 0 {
        return;
    }
    out.reserve(packed_len(count, width));
    let mut buf = [0u64; BLOCK];
    let mut words = [0u64; BLOCK];
    let nwords = width as usize * LANES;
    let full = count / BLOCK;
    for b in 0..full {
        fill(b * BLOCK, &mut buf);
        pack_block_dyn(width, &buf, &mut words[..nwords]);
        let at = out.len();
        out.resize(at + nwords * 8, 0);
        for (c, w) in out[at..].chunks_exact_mut(8).zip(&words[..nwords]) {
            c.copy_from_slice(&w.to_le_bytes());
        }
    }
    let tail = count % BLOCK;
    if tail > 0 {
        fill(full * BLOCK, &mut buf[..tail]);
        pack_tail(&buf[..tail], width, out);
    }
}

/// Unpacks `count` values at `width` from the front of `bytes`, adding
/// `base` to each (wrapping: frame-of-reference decoding fused into the
/// unpack), and appends them to `out`; returns the bytes read. Appends nothing
/// on error. (The values are written straight into `out`'s spare capacity,
/// sparing both a memset and per-row length updates.)
pub(crate) fn unpack_append<T: Lane>(bytes: &[u8], width: u32, count: usize, base: u64, out: &mut Vec<T>) -> Result<usize, CodecError> {
    check(bytes, width, count)?;
    append_with(out, count, |dst| unpack_into(bytes, width, count, &mut AddBase { dst, base }))
}

/// Appends values, `base` added: the sink behind `unpack_append`.
struct AddBase<'s, 'a, T> {
    dst: &'s mut Spare<'a, T>,
    base: u64,
}

impl<T: Lane> Sink for AddBase<'_, '_, T> {
    #[inline(always)]
    fn row(&mut self, vals: &[u64; LANES]) {
        self.dst.row(&std::array::from_fn(|l| T::from_u64(vals[l].wrapping_add(self.base))));
    }

    #[inline(always)]
    fn rest(&mut self, vals: &[u64]) {
        for &v in vals {
            self.dst.push(T::from_u64(v.wrapping_add(self.base)));
        }
    }
}

/// Receives unpacked values in order: whole rows of 16 while full blocks
/// last, then the tail (fewer than 1024) in one slice. Decoders fuse their
/// own work (frame of reference, prefix sums, conversions) into a sink, so
/// each value is touched once, in registers, on its way to the output.
pub(crate) trait Sink {
    /// The next 16 values.
    fn row(&mut self, vals: &[u64; LANES]);
    /// The next `vals.len()` values.
    fn rest(&mut self, vals: &[u64]);
}

/// Unpacks `count` values at `width` from the front of `bytes` into `sink`;
/// returns the bytes read. On error the sink has seen nothing.
///
/// Full blocks run through a kernel specialised for the width (one match per
/// call) and, where the CPU has AVX2, that kernel compiled for AVX2 (the same
/// source: the scalar kernel is its twin); the tail is a plain bit stream.
#[inline(always)]
pub(crate) fn unpack_into<S: Sink>(bytes: &[u8], width: u32, count: usize, sink: &mut S) -> Result<usize, CodecError> {
    let need = check(bytes, width, count)?;
    let full = count / BLOCK;
    let nb = width as usize * LANES * 8;
    let wide = super::simd();
    with_width!(width, W => {
        for b in 0..full {
            let blk = &bytes[b * nb..(b + 1) * nb];
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: `simd()` is true only when the CPU supports AVX2.
                unsafe { block_avx2::<W, S>(blk, sink) };
                continue;
            }
            let _ = wide;
            block_scalar::<W, S>(blk, sink);
        }
    });
    let tail = count % BLOCK;
    if tail > 0 {
        let mut buf = [0u64; BLOCK];
        unpack_tail(&bytes[full * nb..need], width, &mut buf[..tail]);
        sink.rest(&buf[..tail]);
    }
    Ok(need)
}

/// `(sum v[i], sum i * v[i], bytes read)` over `count` values at `width`,
/// wrapping (mod 2^64): what summing frame-of-reference and delta-decoded
/// values needs, computed in lane registers without unpacking to memory.
/// Within a block, lane `l` keeps `a` (its running sum) and `t` (the sum of
/// `a` after each row), so `sum_r r * v[r][l] = ROWS * a - t`: two adds per
/// value.
pub(crate) fn sums(bytes: &[u8], width: u32, count: usize) -> Result<(u64, u64, usize), CodecError> {
    let need = check(bytes, width, count)?;
    let full = count / BLOCK;
    let nb = width as usize * LANES * 8;
    let wide = super::simd();
    let (mut s1, mut s2) = (0u64, 0u64);
    with_width!(width, W => {
        for b in 0..full {
            let blk = &bytes[b * nb..(b + 1) * nb];
            #[cfg(target_arch = "x86_64")]
            let (a, t) = if wide {
                // SAFETY: `simd()` is true only when the CPU supports AVX2.
                unsafe { sums_block_avx2::<W>(blk) }
            } else {
                sums_block_scalar::<W>(blk)
            };
            #[cfg(not(target_arch = "x86_64"))]
            let (a, t) = sums_block_scalar::<W>(blk);
            let (b1, b2) = fold_sums(&a, &t);
            s2 = s2.wrapping_add(b2).wrapping_add(((b * BLOCK) as u64).wrapping_mul(b1));
            s1 = s1.wrapping_add(b1);
        }
    });
    let _ = wide;
    let tail = count % BLOCK;
    if tail > 0 {
        let mut buf = [0u64; BLOCK];
        unpack_tail(&bytes[full * nb..need], width, &mut buf[..tail]);
        for (k, &v) in buf[..tail].iter().enumerate() {
            s1 = s1.wrapping_add(v);
            s2 = s2.wrapping_add(((full * BLOCK + k) as u64).wrapping_mul(v));
        }
    }
    Ok((s1, s2, need))
}

/// A block's `(sum v, sum i * v)` from its lane sums (see `sums`).
fn fold_sums(a: &[u64; LANES], t: &[u64; LANES]) -> (u64, u64) {
    let (mut s1, mut s2) = (0u64, 0u64);
    for l in 0..LANES {
        let weighted_rows = (ROWS as u64).wrapping_mul(a[l]).wrapping_sub(t[l]);
        s1 = s1.wrapping_add(a[l]);
        s2 = s2.wrapping_add((LANES as u64).wrapping_mul(weighted_rows)).wrapping_add((l as u64).wrapping_mul(a[l]));
    }
    (s1, s2)
}

/// One block's lane sums `(a, t)` (see `sums`), in locals the compiler
/// keeps in registers.
#[inline(always)]
fn sums_block<const W: usize>(bytes: &[u8]) -> ([u64; LANES], [u64; LANES]) {
    struct Lanes {
        a: [u64; LANES],
        t: [u64; LANES],
    }
    impl Sink for Lanes {
        #[inline(always)]
        #[allow(clippy::needless_range_loop)] // three arrays in lockstep
        fn row(&mut self, vals: &[u64; LANES]) {
            for l in 0..LANES {
                self.a[l] = self.a[l].wrapping_add(vals[l]);
                self.t[l] = self.t[l].wrapping_add(self.a[l]);
            }
        }
        fn rest(&mut self, _: &[u64]) {}
    }
    let mut acc = Lanes { a: [0; LANES], t: [0; LANES] };
    unpack_block::<W, Lanes>(bytes, &mut acc);
    (acc.a, acc.t)
}

#[inline(never)]
fn sums_block_scalar<const W: usize>(bytes: &[u8]) -> ([u64; LANES], [u64; LANES]) {
    sums_block::<W>(bytes)
}

/// `sums_block` compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn sums_block_avx2<const W: usize>(bytes: &[u8]) -> ([u64; LANES], [u64; LANES]) {
    sums_block::<W>(bytes)
}

/// Value `i` of `count` values packed at `width` in `bytes` (which must hold
/// `packed_len(count, width)` bytes; `None` when it does not or `i` is out
/// of range): random access for the few values a fused sum must see.
pub(crate) fn get(bytes: &[u8], width: u32, count: usize, i: usize) -> Option<u64> {
    if width > 64 || i >= count || bytes.len() < packed_len(count, width) {
        return None;
    }
    let w = width as usize;
    if w == 0 {
        return Some(0);
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    let full = count / BLOCK;
    let nb = w * LANES * 8;
    let mask = mask_of(w);
    if i < full * BLOCK {
        let (b, k) = (i / BLOCK, i % BLOCK);
        let (r, l) = (k / LANES, k % LANES);
        let (wi, shift) = ((r * w) / 64, (r * w) % 64);
        let at = |wi: usize| b * nb + (wi * LANES + l) * 8;
        let mut v = word(at(wi)) >> shift;
        if shift + w > 64 {
            v |= word(at(wi + 1)) << (64 - shift);
        }
        return Some(v & mask);
    }
    let bit = (i - full * BLOCK) * w;
    let start = full * nb + bit / 8;
    let mut a = [0u8; 16];
    let end = (start + 16).min(bytes.len());
    a[..end - start].copy_from_slice(&bytes[start..end]);
    Some(((u128::from_le_bytes(a) >> (bit % 8)) as u64) & mask)
}

#[inline(never)]
fn block_scalar<const W: usize, S: Sink>(bytes: &[u8], sink: &mut S) {
    unpack_block::<W, S>(bytes, sink)
}

/// `unpack_block` compiled for AVX2 (its sink inlined into it).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn block_avx2<const W: usize, S: Sink>(bytes: &[u8], sink: &mut S) {
    unpack_block::<W, S>(bytes, sink)
}

/// Spare capacity of a `Vec` filled front to back: what `append_with`
/// hands its closure.
pub(crate) struct Spare<'a, T> {
    dst: &'a mut [MaybeUninit<T>],
    pos: usize,
}

impl<T: Copy> Spare<'_, T> {
    /// Writes the next 16 values.
    #[inline(always)]
    pub(crate) fn row(&mut self, vals: &[T; LANES]) {
        let d = &mut self.dst[self.pos..self.pos + LANES];
        for (d, v) in d.iter_mut().zip(vals) {
            d.write(*v);
        }
        self.pos += LANES;
    }

    /// Writes the next value.
    #[inline(always)]
    pub(crate) fn push(&mut self, v: T) {
        self.dst[self.pos].write(v);
        self.pos += 1;
    }
}

/// Runs `f` with room for `n` more values of `out`; the values it writes are
/// appended to `out` (in order), whatever `f` returns.
#[inline(always)]
pub(crate) fn append_with<T: Copy, R>(out: &mut Vec<T>, n: usize, f: impl FnOnce(&mut Spare<'_, T>) -> R) -> R {
    out.reserve(n);
    let old = out.len();
    let mut spare = Spare { dst: &mut out.spare_capacity_mut()[..n], pos: 0 };
    let r = f(&mut spare);
    let pos = spare.pos;
    // SAFETY: `Spare` writes its slots strictly in order from the first and
    // counts them in `pos`, so slots `old..old + pos` are initialised, and
    // `old + pos <= old + n <= capacity` (its slice is `n` slots long).
    unsafe { out.set_len(old + pos) };
    r
}

#[inline(always)]
fn mask_of(width: usize) -> u64 {
    if width == 0 {
        0
    } else {
        u64::MAX >> (64 - width)
    }
}

/// Packs one block of 1024 values into `W * 16` words (`out.len()`).
fn pack_block<const W: usize>(inp: &[u64; BLOCK], out: &mut [u64]) {
    if W == 0 {
        return;
    }
    let out = &mut out[..W * LANES];
    out.fill(0);
    let mask = mask_of(W);
    for r in 0..ROWS {
        let (word, shift) = ((r * W) / 64, (r * W) % 64);
        let src = &inp[r * LANES..r * LANES + LANES];
        let dst = &mut out[word * LANES..word * LANES + LANES];
        for (d, s) in dst.iter_mut().zip(src) {
            *d |= (s & mask) << shift;
        }
        if shift + W > 64 {
            let dst = &mut out[(word + 1) * LANES..(word + 2) * LANES];
            for (d, s) in dst.iter_mut().zip(src) {
                *d |= (s & mask) >> (64 - shift);
            }
        }
    }
}

/// Unpacks one block from its `W * 128` bytes into `sink`, a row at a time.
#[inline(always)]
fn unpack_block<const W: usize, S: Sink>(bytes: &[u8], sink: &mut S) {
    if W == 0 {
        for _ in 0..ROWS {
            sink.row(&[0; LANES]);
        }
        return;
    }
    let (words, _) = bytes.as_chunks::<{ LANES * 8 }>();
    let words = &words[..W];
    let load = |k: usize| -> [u64; LANES] {
        let c = &words[k];
        std::array::from_fn(|l| u64::from_le_bytes(c[l * 8..l * 8 + 8].try_into().unwrap()))
    };
    let mask = mask_of(W);
    for r in 0..ROWS {
        let (word, shift) = ((r * W) / 64, (r * W) % 64);
        let a = load(word);
        let row: [u64; LANES] = if shift + W > 64 {
            let b = load(word + 1);
            std::array::from_fn(|l| ((a[l] >> shift) | (b[l] << (64 - shift))) & mask)
        } else {
            std::array::from_fn(|l| (a[l] >> shift) & mask)
        };
        sink.row(&row);
    }
}

fn pack_block_dyn(width: u32, inp: &[u64; BLOCK], out: &mut [u64]) {
    with_width!(width, W => pack_block::<W>(inp, out))
}

fn pack_tail(vals: &[u64], width: u32, out: &mut Vec<u8>) {
    let mask = mask_of(width as usize);
    let mut acc: u128 = 0;
    let mut n = 0u32;
    for &v in vals {
        acc |= ((v & mask) as u128) << n;
        n += width;
        if n >= 64 {
            out.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            n -= 64;
        }
    }
    out.extend_from_slice(&(acc as u64).to_le_bytes()[..n.div_ceil(8) as usize]);
}

/// `bytes` holds exactly the tail's bit stream (length checked by the
/// caller); fills `out` with its first `out.len()` values.
fn unpack_tail(bytes: &[u8], width: u32, out: &mut [u64]) {
    let mask = mask_of(width as usize);
    let mut acc: u128 = 0;
    let mut n = 0u32;
    let mut pos = 0;
    for o in out {
        if n < width {
            let k = (bytes.len() - pos).min(8);
            let mut a = [0u8; 8];
            a[..k].copy_from_slice(&bytes[pos..pos + k]);
            pos += k;
            acc |= (u64::from_le_bytes(a) as u128) << n;
            n += 8 * k as u32;
        }
        *o = (acc as u64) & mask;
        acc >>= width;
        n = n.saturating_sub(width);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{never_panics, Rng, LENGTHS};
    use super::*;

    fn round_trip(values: &[u64], width: u32) {
        let mut enc = vec![0xAA]; // packing appends
        pack(values, width, &mut enc);
        assert_eq!(enc.len() - 1, packed_len(values.len(), width));
        enc.push(0x55); // unpacking reads only its own bytes
        let mut out = vec![7];
        let n = unpack(&enc[1..], width, values.len(), &mut out).unwrap();
        assert_eq!(n, packed_len(values.len(), width));
        assert_eq!(out[0], 7);
        let mask = mask_of(width as usize);
        for (i, (a, b)) in values.iter().zip(&out[1..]).enumerate() {
            assert_eq!(a & mask, *b, "value {i} of {} at width {width}", values.len());
        }
        assert_eq!(out.len(), values.len() + 1);
    }

    #[test]
    fn avx2_kernels_match_their_scalar_twins() {
        let mut rng = Rng(5);
        for width in 0..=64u32 {
            for &len in LENGTHS {
                let vals: Vec<u64> = (0..len).map(|_| rng.next()).collect();
                let mut enc = Vec::new();
                pack(&vals, width, &mut enc);
                let base = rng.next();
                let (a, b) = super::super::testutil::both(|| {
                    let mut out: Vec<i64> = vec![3];
                    unpack_append(&enc, width, len, base, &mut out).map(|_| out)
                });
                assert_eq!(a, b, "width {width}, {len} values");
            }
        }
    }

    #[test]
    fn sums_and_random_access_match_the_unpacked_values() {
        let mut rng = Rng(6);
        for width in 0..=64u32 {
            for &len in LENGTHS {
                let vals: Vec<u64> = (0..len).map(|_| rng.next() & mask_of(width as usize)).collect();
                let mut enc = Vec::new();
                pack(&vals, width, &mut enc);
                let s1 = vals.iter().fold(0u64, |s, &v| s.wrapping_add(v));
                let s2 = vals.iter().enumerate().fold(0u64, |s, (i, &v)| s.wrapping_add((i as u64).wrapping_mul(v)));
                let (a, b) = super::super::testutil::both(|| sums(&enc, width, len).unwrap());
                assert_eq!(a, (s1, s2, enc.len()), "width {width}, {len} values, scalar");
                assert_eq!(b, a, "width {width}, {len} values, simd");
                for i in (0..len).step_by(len / 50 + 1).chain(len.checked_sub(1)) {
                    assert_eq!(get(&enc, width, len, i), Some(vals[i]), "value {i} of {len} at width {width}");
                }
                assert_eq!(get(&enc, width, len, len), None);
                if !enc.is_empty() {
                    assert!(sums(&enc[..enc.len() - 1], width, len).is_err());
                    assert_eq!(get(&enc[..enc.len() - 1], width, len, 0), None);
                }
            }
        }
    }

    #[test]
    fn bits_needed_matches_definition() {
        assert_eq!(bits_needed(0), 0);
        assert_eq!(bits_needed(1), 1);
        assert_eq!(bits_needed(99), 7);
        assert_eq!(bits_needed(127), 7);
        assert_eq!(bits_needed(128), 8);
        assert_eq!(bits_needed(u64::MAX), 64);
        assert_eq!(bits_needed(1 << 63), 64);
    }

    #[test]
    fn round_trips_every_width_and_length() {
        let mut rng = Rng(1);
        for width in 0..=64u32 {
            for &len in LENGTHS {
                let vals: Vec<u64> = (0..len).map(|_| rng.next() & mask_of(width as usize)).collect();
                round_trip(&vals, width);
            }
        }
    }

    #[test]
    fn extremes_and_high_bits_are_masked() {
        let mut rng = Rng(2);
        for width in [1, 7, 31, 32, 33, 63, 64] {
            let all_ones = vec![u64::MAX; 2100];
            round_trip(&all_ones, width);
            // values wider than `width`: high bits are dropped, neighbours untouched
            let wide: Vec<u64> = (0..3000).map(|_| rng.next()).collect();
            round_trip(&wide, width);
        }
    }

    #[test]
    fn interleaved_layout_is_as_documented() {
        // width 3: value i of a block sits in lane i % 16 at bit offset (i / 16) * 3
        let vals: Vec<u64> = (0..BLOCK as u64).map(|i| i % 8).collect();
        let mut enc = Vec::new();
        pack(&vals, 3, &mut enc);
        assert_eq!(enc.len(), 3 * 128);
        let word = |k: usize| u64::from_le_bytes(enc[k * 8..k * 8 + 8].try_into().unwrap());
        for i in [0usize, 1, 15, 16, 17, 300, 1023] {
            let (lane, row) = (i % 16, i / 16);
            let bit = row * 3;
            let lo = word((bit / 64) * 16 + lane) >> (bit % 64);
            let v = if bit % 64 + 3 > 64 { lo | word((bit / 64 + 1) * 16 + lane) << (64 - bit % 64) } else { lo };
            assert_eq!(v & 7, vals[i], "value {i}");
        }
        // the tail is a plain LSB-first bit stream
        let mut t = Vec::new();
        pack(&[1, 2, 3, 4, 5], 3, &mut t);
        // bits, low first: 100 010 110 001 101 0 -> bytes 0b1101_0001, 0b0101_1000
        assert_eq!(t, vec![0b1101_0001, 0b0101_1000]);
    }

    #[test]
    fn width_zero_takes_no_bytes() {
        let mut enc = Vec::new();
        pack(&[0; 5000], 0, &mut enc);
        assert!(enc.is_empty());
        let mut out = Vec::new();
        assert_eq!(unpack(&[], 0, 5000, &mut out), Ok(0));
        assert_eq!(out, vec![0; 5000]);
    }

    #[test]
    fn values_below_100_take_7_bits() {
        let mut rng = Rng(3);
        let vals: Vec<u64> = (0..10_000).map(|_| rng.below(100)).collect();
        let w = bits_needed(*vals.iter().max().unwrap());
        assert_eq!(w, 7);
        let mut enc = Vec::new();
        pack(&vals, w, &mut enc);
        assert!(enc.len() * 8 <= vals.len() * 7 + 7, "{} bytes", enc.len());
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut out = vec![1, 2];
        assert!(unpack(&[0; 10], 65, 1, &mut out).is_err());
        assert!(unpack(&[0; 10], 8, 11, &mut out).is_err());
        assert!(unpack(&[], 1, usize::MAX, &mut out).is_err());
        assert!(unpack(&[], 0, MAX_VALUES + 1, &mut out).is_err());
        assert_eq!(out, vec![1, 2]);
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let mut rng = Rng(4);
        for (width, len) in [(5u32, 1100usize), (64, 40), (13, 300)] {
            let vals: Vec<u64> = (0..len).map(|_| rng.next()).collect();
            let mut enc = Vec::new();
            pack(&vals, width, &mut enc);
            never_panics(&enc, |b| {
                let mut out = Vec::new();
                // a decoder frames the packed bytes itself: demand all of them
                matches!(unpack(b, width, len, &mut out), Ok(n) if n == b.len())
            });
            for w in 0..=70 {
                for n in [0, 1, 1024, 1025, len] {
                    let _ = unpack(&enc, w, n, &mut Vec::new());
                }
            }
        }
    }
}
