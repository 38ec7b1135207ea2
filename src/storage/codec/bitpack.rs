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
//! FastLanes' interleaving of 16 lanes but not its transposed value order, so
//! delta decoding over the result is a scalar prefix sum.
//! Must not: panic on short or garbage input when unpacking.

use super::{CodecError, MAX_VALUES};

/// Values per interleaved block.
pub const BLOCK: usize = 1024;
/// Interleaved lanes per block (1024 bits of u64s: one FastLanes register).
const LANES: usize = 16;
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
    pack_with(values.len(), width, out, |start, buf| {
        buf.copy_from_slice(&values[start..start + buf.len()])
    });
}

/// Unpacks `count` values at `width` from the front of `bytes`, appending them
/// to `out`; returns the bytes read (`packed_len(count, width)`). On error
/// `out` is left as it was.
pub fn unpack(
    bytes: &[u8],
    width: u32,
    count: usize,
    out: &mut Vec<u64>,
) -> Result<usize, CodecError> {
    if count > MAX_VALUES {
        return Err(CodecError::new(
            "bitpack",
            0,
            format!("value count {count} above the limit of {MAX_VALUES}"),
        ));
    }
    unpack_append(bytes, width, count, 0, out)
}

fn check(bytes: &[u8], width: u32, count: usize) -> Result<usize, CodecError> {
    if width > 64 {
        return Err(CodecError::new(
            "bitpack",
            0,
            format!("bit width {width} above 64"),
        ));
    }
    let need = packed_len(count, width);
    if bytes.len() < need {
        return Err(CodecError::new(
            "bitpack",
            bytes.len(),
            format!(
                "truncated: {count} values at {width} bits need {need} bytes, {} present",
                bytes.len()
            ),
        ));
    }
    Ok(need)
}

/// Packs `count` values at `width`; `fill(start, buf)` writes values
/// `start .. start + buf.len()` (at most one block at a time) into `buf`; it
/// is not called at all when `width` or `count` is 0.
pub(crate) fn pack_with(
    count: usize,
    width: u32,
    out: &mut Vec<u8>,
    mut fill: impl FnMut(usize, &mut [u64]),
) {
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
/// on error. (Appending row by row, rather than resizing and then
/// overwriting, spares a memset of the output.)
pub(crate) fn unpack_append<T: Lane>(
    bytes: &[u8],
    width: u32,
    count: usize,
    base: u64,
    out: &mut Vec<T>,
) -> Result<usize, CodecError> {
    let need = check(bytes, width, count)?;
    out.reserve(count);
    let nwords = width as usize * LANES;
    let mut words = [0u64; BLOCK];
    let mut pos = 0;
    for _ in 0..count / BLOCK {
        let src = &bytes[pos..pos + nwords * 8];
        for (w, c) in words[..nwords].iter_mut().zip(src.chunks_exact(8)) {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            *w = u64::from_le_bytes(a);
        }
        unpack_block_dyn(width, &words[..nwords], base, out);
        pos += nwords * 8;
    }
    unpack_tail(&bytes[pos..need], width, count % BLOCK, base, out);
    Ok(need)
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

/// Unpacks one block from `W * 16` words, appending its 1024 values (plus
/// `base`) to `out`.
fn unpack_block<const W: usize, T: Lane>(inp: &[u64], base: u64, out: &mut Vec<T>) {
    if W == 0 {
        out.resize(out.len() + BLOCK, T::from_u64(base));
        return;
    }
    let inp = &inp[..W * LANES];
    let mask = mask_of(W);
    for r in 0..ROWS {
        let (word, shift) = ((r * W) / 64, (r * W) % 64);
        let mut row = [T::default(); LANES];
        let a = &inp[word * LANES..word * LANES + LANES];
        if shift + W > 64 {
            let b = &inp[(word + 1) * LANES..(word + 2) * LANES];
            for ((d, x), y) in row.iter_mut().zip(a).zip(b) {
                *d = T::from_u64((((x >> shift) | (y << (64 - shift))) & mask).wrapping_add(base));
            }
        } else {
            for (d, x) in row.iter_mut().zip(a) {
                *d = T::from_u64(((x >> shift) & mask).wrapping_add(base));
            }
        }
        out.extend_from_slice(&row);
    }
}

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

fn pack_block_dyn(width: u32, inp: &[u64; BLOCK], out: &mut [u64]) {
    with_width!(width, W => pack_block::<W>(inp, out))
}

fn unpack_block_dyn<T: Lane>(width: u32, inp: &[u64], base: u64, out: &mut Vec<T>) {
    with_width!(width, W => unpack_block::<W, T>(inp, base, out))
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

/// `bytes` holds exactly the tail's bit stream (length checked by the caller).
fn unpack_tail<T: Lane>(bytes: &[u8], width: u32, count: usize, base: u64, out: &mut Vec<T>) {
    let mask = mask_of(width as usize);
    let mut acc: u128 = 0;
    let mut n = 0u32;
    let mut pos = 0;
    for _ in 0..count {
        if n < width {
            let k = (bytes.len() - pos).min(8);
            let mut a = [0u8; 8];
            a[..k].copy_from_slice(&bytes[pos..pos + k]);
            pos += k;
            acc |= (u64::from_le_bytes(a) as u128) << n;
            n += 8 * k as u32;
        }
        out.push(T::from_u64(((acc as u64) & mask).wrapping_add(base)));
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
            assert_eq!(
                a & mask,
                *b,
                "value {i} of {} at width {width}",
                values.len()
            );
        }
        assert_eq!(out.len(), values.len() + 1);
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
                let vals: Vec<u64> = (0..len)
                    .map(|_| rng.next() & mask_of(width as usize))
                    .collect();
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
            let v = if bit % 64 + 3 > 64 {
                lo | word((bit / 64 + 1) * 16 + lane) << (64 - bit % 64)
            } else {
                lo
            };
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
