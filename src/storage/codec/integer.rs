//! i64 column blocks: constant, frame-of-reference (FOR) + bit-packing,
//! delta + FOR, and run-length encoding, the smallest picked per block.
//!
//! Every encoding starts with `tag: u8, count: u32` (little-endian), then:
//!
//! | tag | scheme | body after the header |
//! |---|---|---|
//! | 0 | constant | `value: i64` |
//! | 1 | FOR | `min: i64, width: u8, bits[count]` of `value - min` |
//! | 2 | delta + FOR | `first: i64, min_delta: i64, width: u8, bits[count]`: slot 0 is 0 (ignored: any value decodes the same), slot i ≥ 1 is `(v[i] - v[i-1]) - min_delta` |
//! | 3 | RLE | `runs: u32, min: i64, value_width: u8, length_width: u8, bits[runs]` of `run value - min`, `bits[runs]` of `run length - 1` |
//! | 4 | delta + zstd | `first: i64, base: i64, zlen: u32`, then a zstd frame of `zlen` bytes holding the `count - 1` steps `v[i] - v[i-1]`, each as one byte `b < 255` meaning `base + b`, or as `255` followed by the step as 8 bytes (an escape, for rare big steps such as a series boundary) |
//! | 5 | patched delta + FOR | `first: i64, min_delta: i64, width: u8, exceptions: u32, exception_min: i64, exception_width: u8, bits[count]` as for delta + FOR, then `bits[exceptions]` of positions at width `bits_needed(count - 1)` (ascending, each in `1..count`), then `bits[exceptions]` at `exception_width` of `step - exception_min`: step `i` of each listed position is that value instead (its packed slot is ignored) |
//!
//! `bits[n]` is `bitpack` layout at the preceding width (`bitpack::packed_len`
//! bytes; slot 0 of delta + FOR only keeps its 1024-value blocks aligned with
//! the column's). Subtractions are wrapping (mod 2^64) and the results read as
//! u64, so every i64 input, `i64::MIN`/`MAX` included, round-trips exactly; the
//! decoder adds back with wrapping arithmetic. An encoding must be decoded
//! whole: trailing bytes are an error.
//!
//! Choice: min/max over the whole block gives constant and the exact FOR size;
//! delta and RLE sizes are estimated on a sample (10 runs of 64 values, the
//! whole block when it is small). Delta is sized exactly when its estimate
//! beats FOR, then RLE when its estimate beats the best exact size so far; the
//! smallest exact size wins (ties go to FOR, the fastest to decode). Patched
//! delta + FOR is sized when the steps need 2 bits or more: the narrowest
//! window of steps that holds all but a few (a series boundary inside a
//! block, a walk's rare big step) sets the width, the rest are patched; it
//! decodes nearly as fast as delta + FOR. When
//! the sampled steps span fewer than 256 values, delta + zstd is tried too: zstd's
//! entropy coding takes a random walk's steps (mostly 0, ±1, ±2) to about
//! their entropy, ~2.2 bits where bit-packing needs 3–4, and decompresses
//! faster than the bit-packed delta decodes here.

use super::bitpack::{self, bits_needed, packed_len, LANES};
use super::{count_u32, put_i64, put_u32, put_u8, sample_runs, CodecError, Reader};

const CODEC: &str = "integer";
const SAMPLE_LEN: usize = 64;
const HEADER: usize = 5;
const FOR_HEADER: usize = HEADER + 9;
const DELTA_HEADER: usize = HEADER + 17;
const RLE_HEADER: usize = HEADER + 14;
const PATCHED_HEADER: usize = HEADER + 30;

/// The scheme of an integer encoding (its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Constant = 0,
    For = 1,
    DeltaFor = 2,
    Rle = 3,
    DeltaZstd = 4,
    PatchedDelta = 5,
}

impl Scheme {
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        Some(match tag {
            0 => Scheme::Constant,
            1 => Scheme::For,
            2 => Scheme::DeltaFor,
            3 => Scheme::Rle,
            4 => Scheme::DeltaZstd,
            5 => Scheme::PatchedDelta,
            _ => return None,
        })
    }
}

/// The scheme an encoding uses, if its tag is known.
pub fn scheme(bytes: &[u8]) -> Option<Scheme> {
    bytes.first().and_then(|t| Scheme::from_tag(*t))
}

/// Encodes `values` with the smallest of the schemes.
///
/// # Panics
/// If `values.len() > MAX_VALUES`.
pub fn encode_i64(values: &[i64]) -> Vec<u8> {
    encode_with(values, true)
}

/// The same values re-encoded without entropy coding, when `bytes` (an
/// integer encoding) uses it (delta + zstd): the form block caches hold,
/// where decoding speed matters more than bytes. `Ok(None)` when `bytes`
/// is already light.
pub fn light_form(bytes: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
    if scheme(bytes) != Some(Scheme::DeltaZstd) {
        return Ok(None);
    }
    let mut values = Vec::new();
    decode_i64(bytes, &mut values)?;
    Ok(Some(encode_with(&values, false)))
}

/// `encode_i64`, with or without the entropy-coded scheme (delta + zstd).
pub(crate) fn encode_with(values: &[i64], entropy_coded: bool) -> Vec<u8> {
    let n = values.len();
    let count = count_u32(n);
    let Some((min, max)) = min_max(values) else {
        return constant(0, 0);
    };
    if min == max {
        return constant(count, min);
    }
    let for_width = bits_needed(max.wrapping_sub(min) as u64);
    let for_size = FOR_HEADER + packed_len(n, for_width);

    // Estimates from the sample.
    let (mut dmin, mut dmax, mut changes, mut sampled) = (i64::MAX, i64::MIN, 0usize, 0usize);
    for (s, len) in sample_runs(n, SAMPLE_LEN) {
        let run = &values[s..s + len];
        sampled += len;
        changes += 1;
        for w in run.windows(2) {
            let d = w[1].wrapping_sub(w[0]);
            dmin = dmin.min(d);
            dmax = dmax.max(d);
            changes += usize::from(w[1] != w[0]);
        }
    }
    let delta_est = if dmin <= dmax { DELTA_HEADER + packed_len(n, bits_needed(dmax.wrapping_sub(dmin) as u64)) } else { usize::MAX };
    let runs_est = (changes * n).div_ceil(sampled.max(1)).max(1);
    let rle_est = RLE_HEADER + packed_len(runs_est, for_width) + packed_len(runs_est, bits_needed((2 * n / runs_est) as u64));

    // Exact sizes for the candidates the sample favours; FOR is the fallback.
    let mut best = (for_size, None);
    let mut patched = None;
    if delta_est < for_size {
        let (dmin, dmax) = delta_min_max(values);
        let width = bits_needed(dmax.wrapping_sub(dmin) as u64);
        let size = DELTA_HEADER + packed_len(n, width);
        if size < best.0 {
            best = (size, Some((dmin, width)));
        }
        if width >= 2 {
            patched = patched_delta(values, count, width, best.0);
            if let Some(p) = &patched {
                best.0 = p.len();
            }
        }
    }
    let run_lengths = if rle_est < best.0 { rle(values, count, min, for_width, best.0) } else { None };
    let sampled_width = if dmin <= dmax { bits_needed(dmax.wrapping_sub(dmin) as u64) } else { 64 };
    if entropy_coded && sampled_width <= 8 && n >= ZSTD_MIN_VALUES {
        // against RLE too: a walk that repeats values often (TSBS's
        // integer-valued floats) has runs, but its entropy-coded steps are
        // smaller still once the block holds several series' jumps
        let limit = run_lengths.as_ref().map_or(best.0, Vec::len);
        if let Some(enc) = delta_zstd(values, count, limit) {
            return enc;
        }
    }
    if let Some(enc) = run_lengths {
        return enc;
    }
    if let Some(enc) = patched {
        return enc;
    }
    if let (_, Some((dmin, width))) = best {
        return delta_for(values, count, dmin, width);
    }
    frame_of_reference(values, count, min, for_width)
}

/// Steps within this many values around the median step are candidates
/// for a patched window; steps further out are always exceptions.
const PATCH_BINS: usize = 1 << 13;
/// Patched windows are at most this many bits wide.
const MAX_PATCHED_WIDTH: u32 = 12;

/// Patched delta + FOR (tag 5), if smaller than `limit` bytes. `width` is
/// what plain delta + FOR needs. Every narrower width is sized from a
/// histogram of the steps (its best window: the most steps in `2^w`
/// consecutive values); the smallest total, exceptions included, wins.
fn patched_delta(values: &[i64], count: u32, width: u32, limit: usize) -> Option<Vec<u8>> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let steps: Vec<i64> = values.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
    let mut sample: Vec<i64> = steps.iter().step_by(steps.len().div_ceil(256)).copied().collect();
    let mid = sample.len() / 2;
    let median = *sample.select_nth_unstable(mid).1;
    let origin = median.saturating_sub(PATCH_BINS as i64 / 2);
    let mut hist = vec![0u32; PATCH_BINS];
    for &d in &steps {
        if let Some(k) = d.checked_sub(origin).filter(|k| (0..PATCH_BINS as i64).contains(k)) {
            hist[k as usize] += 1;
        }
    }
    // the occupied bins, ascending: a walk's steps occupy a handful
    let occupied: Vec<(usize, u32)> = hist.iter().enumerate().filter(|(_, &c)| c > 0).map(|(k, &c)| (k, c)).collect();
    let pw = bits_needed(n as u64 - 1);
    let mut best: Option<(usize, u32, i64)> = None;
    for w in 0..width.min(MAX_PATCHED_WIDTH + 1) {
        let span = 1usize << w;
        // the window of `span` bins starting at an occupied bin that holds
        // the most steps (two pointers over the occupied bins)
        let (mut end, mut inside, mut top) = (0usize, 0u32, (0u32, 0usize));
        for (i, &(start, _)) in occupied.iter().enumerate() {
            while end < occupied.len() && occupied[end].0 < start + span {
                inside += occupied[end].1;
                end += 1;
            }
            if inside > top.0 {
                top = (inside, start);
            }
            inside -= occupied[i].1;
        }
        let k = steps.len() - top.0 as usize;
        // exceptions sized at the full width: an upper bound
        let size = PATCHED_HEADER + packed_len(n, w) + packed_len(k, pw) + packed_len(k, width);
        if best.is_none_or(|b| size < b.0) {
            best = Some((size, w, origin + top.1 as i64));
        }
    }
    let (size, w, lo) = best?;
    if size >= limit {
        return None;
    }
    let span = 1u64 << w;
    let mut packed = Vec::with_capacity(n);
    packed.push(0u64);
    let (mut positions, mut patches) = (Vec::new(), Vec::new());
    for (i, &d) in steps.iter().enumerate() {
        let u = d.wrapping_sub(lo) as u64;
        if u < span {
            packed.push(u);
        } else {
            packed.push(0);
            positions.push(i as u64 + 1);
            patches.push(d);
        }
    }
    let (emin, emax) = min_max(&patches).unwrap_or((0, 0));
    let ew = bits_needed(emax.wrapping_sub(emin) as u64);
    let k = positions.len();
    let body = PATCHED_HEADER - HEADER + packed_len(n, w) + packed_len(k, pw) + packed_len(k, ew);
    if HEADER + body >= limit {
        return None;
    }
    let mut out = header(Scheme::PatchedDelta, count, body);
    put_i64(&mut out, values[0]);
    put_i64(&mut out, lo);
    put_u8(&mut out, w as u8);
    put_u32(&mut out, k as u32);
    put_i64(&mut out, emin);
    put_u8(&mut out, ew as u8);
    bitpack::pack(&packed, w, &mut out);
    bitpack::pack(&positions, pw, &mut out);
    let rel: Vec<u64> = patches.iter().map(|p| p.wrapping_sub(emin) as u64).collect();
    bitpack::pack(&rel, ew, &mut out);
    Some(out)
}

/// Blocks shorter than this are not worth a zstd frame's overhead.
const ZSTD_MIN_VALUES: usize = 256;
const ZSTD_LEVEL: i32 = 1;

/// The escape byte of delta + zstd: the step follows as 8 bytes.
const ZSTD_ESCAPE: u8 = 255;

/// Delta + zstd (tag 4), if it is smaller than `limit` bytes. The byte
/// window is centred on the middle of the steps' sorted order, so the
/// common steps take one byte and outliers an escape.
fn delta_zstd(values: &[i64], count: u32, limit: usize) -> Option<Vec<u8>> {
    let mut sorted: Vec<i64> = values.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
    let mid = sorted.len() / 2;
    let (_, median, _) = sorted.select_nth_unstable(mid);
    let base = median.saturating_sub(127);
    let mut steps = Vec::with_capacity(values.len());
    for w in values.windows(2) {
        let d = w[1].wrapping_sub(w[0]);
        match d.checked_sub(base) {
            Some(b) if (0..ZSTD_ESCAPE as i64).contains(&b) => steps.push(b as u8),
            _ => {
                steps.push(ZSTD_ESCAPE);
                steps.extend_from_slice(&d.to_le_bytes());
            }
        }
    }
    let z = super::zstd_compress(&steps, ZSTD_LEVEL)?;
    let size = DELTA_HEADER - 1 + 4 + z.len();
    if size >= limit {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    put_u8(&mut out, Scheme::DeltaZstd as u8);
    put_u32(&mut out, count);
    put_i64(&mut out, values[0]);
    put_i64(&mut out, base);
    put_u32(&mut out, z.len() as u32);
    out.extend_from_slice(&z);
    Some(out)
}

/// Decodes an encoding made by `encode_i64`, appending the values to `out`.
/// On error `out` is left as it was.
pub fn decode_i64(bytes: &[u8], out: &mut Vec<i64>) -> Result<(), CodecError> {
    decode_map(bytes, out, |x| x)
}

/// `decode_i64`, each value passed through `conv` on its way out (in
/// registers, fused into the unpacking: the float codec turns ALP digits into
/// floats this way). On error `out` is left as it was.
#[inline(always)]
pub(crate) fn decode_map<T: Copy + Default, F: Fn(i64) -> T + Copy>(bytes: &[u8], out: &mut Vec<T>, conv: F) -> Result<(), CodecError> {
    let old = out.len();
    let r = decode_inner(bytes, out, old, conv);
    if r.is_err() {
        out.truncate(old);
    }
    r
}

#[inline(always)]
fn decode_inner<T: Copy + Default, F: Fn(i64) -> T + Copy>(bytes: &[u8], out: &mut Vec<T>, old: usize, conv: F) -> Result<(), CodecError> {
    let mut r = Reader::new(bytes, CODEC);
    let (scheme, n) = r.scheme_header(Scheme::from_tag)?;
    match scheme {
        Scheme::Constant => {
            let v = r.i64("constant value")?;
            r.finish()?;
            out.resize(old + n, conv(v));
        }
        Scheme::For => {
            let min = r.i64("FOR reference")?;
            let width = r.width("FOR bit width")?;
            let at = r.pos();
            let used = bitpack::append_with(out, n, |dst| bitpack::unpack_into(r.rest(), width, n, &mut ForSink { dst, base: min as u64, conv }))
                .map_err(|e| e.at(CODEC, at))?;
            r.take(used, "FOR values")?;
            r.finish()?;
        }
        Scheme::DeltaFor | Scheme::PatchedDelta => {
            let (first, dmin, width, bits, patches) = read_delta(&mut r, scheme, n)?;
            if n == 0 {
                r.finish()?;
                return Ok(());
            }
            let at = r.pos();
            let used = bitpack::append_with(out, n, |dst| {
                let mut sink = DeltaSink { dst, base: dmin as u64, acc: first, skip: true, conv, buf: [0; bitpack::BLOCK], len: 0, at: 0, patches: &patches };
                bitpack::unpack_into(bits, width, n, &mut sink)
            })
            .map_err(|e| e.at(CODEC, at))?;
            if scheme == Scheme::DeltaFor {
                r.take(used, "deltas")?;
            }
            r.finish()?;
        }
        Scheme::DeltaZstd => {
            let first = r.i64("first value")?;
            let base = r.i64("step base")?;
            let zlen = r.u32("zstd frame length")? as usize;
            let at = r.pos();
            let frame = r.take(zlen, "zstd frame")?;
            r.finish()?;
            if n == 0 {
                return Err(CodecError::new(CODEC, 1, "delta + zstd of no values"));
            }
            // `n - 1` steps take at most 9 bytes each: a frame inflating to
            // more is refused before it is inflated.
            let steps = zstd::bulk::decompress(frame, (n - 1) * 9).map_err(|e| CodecError::new(CODEC, at, format!("zstd: {e}")))?;
            out.reserve(n);
            let mut acc = first;
            out.push(conv(acc));
            let mut i = 0;
            while i < steps.len() {
                let b = steps[i];
                let d = if b == ZSTD_ESCAPE {
                    let raw = steps.get(i + 1..i + 9).ok_or_else(|| CodecError::new(CODEC, at, "zstd steps end inside an escape"))?;
                    i += 9;
                    i64::from_le_bytes(raw.try_into().unwrap_or([0; 8]))
                } else {
                    i += 1;
                    base.wrapping_add(b as i64)
                };
                acc = acc.wrapping_add(d);
                out.push(conv(acc));
            }
            if out.len() - old != n {
                return Err(CodecError::new(CODEC, at, format!("zstd frame holds {} steps, {} expected", out.len() - old - 1, n - 1)));
            }
        }
        Scheme::Rle => {
            let runs = r.u32("run count")? as usize;
            if runs > n || (runs == 0 && n > 0) {
                return Err(CodecError::new(CODEC, r.pos() - 4, format!("{runs} runs for {n} values")));
            }
            let min = r.i64("RLE reference")?;
            let vwidth = r.width("RLE value bit width")?;
            let lwidth = r.width("RLE length bit width")?;
            let mut vals: Vec<i64> = Vec::new();
            r.unpack(vwidth, runs, min as u64, &mut vals)?;
            let lens_at = r.pos();
            let mut lens: Vec<u64> = Vec::new();
            r.unpack(lwidth, runs, 1, &mut lens)?;
            r.finish()?;
            let total = lens.iter().try_fold(0u64, |a, &l| a.checked_add(l));
            if total != Some(n as u64) {
                return Err(CodecError::new(CODEC, lens_at, format!("run lengths do not add up to {n} values")));
            }
            out.reserve(n);
            for (&v, &l) in vals.iter().zip(&lens) {
                out.extend(std::iter::repeat_n(conv(v), l as usize));
            }
        }
    }
    Ok(())
}

/// Reads a delta + FOR's or patched delta + FOR's fields after the header:
/// `(first, min_delta, width, packed steps, patches)`; the packed steps are
/// the rest of the encoding for delta + FOR (the caller takes what it used).
#[allow(clippy::type_complexity)]
fn read_delta<'a>(r: &mut Reader<'a>, scheme: Scheme, n: usize) -> Result<(i64, i64, u32, &'a [u8], Vec<(usize, i64)>), CodecError> {
    let first = r.i64("first value")?;
    let dmin = r.i64("delta reference")?;
    let width = r.width("delta bit width")?;
    let (bits, patches) = if scheme == Scheme::PatchedDelta { read_patches(r, n, width)? } else { (r.rest(), Vec::new()) };
    Ok((first, dmin, width, bits, patches))
}

/// A patched value: (position, step).
type Patch = (usize, i64);

/// Reads a patched delta + FOR's fields after its width: returns the packed
/// steps and the patches `(position, step)`, leaving `r` at the end.
fn read_patches<'a>(r: &mut Reader<'a>, n: usize, width: u32) -> Result<(&'a [u8], Vec<Patch>), CodecError> {
    let k = r.u32("exception count")? as usize;
    if k >= n.max(1) {
        return Err(CodecError::new(CODEC, r.pos() - 4, format!("{k} exceptions for {n} values")));
    }
    let emin = r.i64("exception reference")?;
    let ew = r.width("exception bit width")?;
    let bits = r.take(packed_len(n, width), "deltas")?;
    let at = r.pos();
    let mut positions: Vec<u64> = Vec::new();
    r.unpack(bits_needed(n.saturating_sub(1) as u64), k, 0, &mut positions)?;
    if positions.first().is_some_and(|&p| p == 0) || positions.windows(2).any(|w| w[0] >= w[1]) || positions.last().is_some_and(|&p| p as usize >= n) {
        return Err(CodecError::new(CODEC, at, "exception positions are not ascending within 1..count"));
    }
    let mut steps: Vec<i64> = Vec::new();
    r.unpack(ew, k, emin as u64, &mut steps)?;
    Ok((bits, positions.into_iter().map(|p| p as usize).zip(steps).collect()))
}

/// The sum of the values an encoding decodes to, computed on the packed
/// form without materialising them (scans summing a column use it), and
/// the value count (RLE and delta + zstd are decoded and added). `Ok(None)`
/// when the sum might not fit an i64: the caller then decodes and adds in
/// its own type. Errors as `decode_i64` would give them.
///
/// Delta + FOR sums without a prefix sum: with steps `d[j]`,
/// `sum(x) = n * first + sum_j (n - j) * d[j]`, and the weighted sum of the
/// packed values comes from two running lane sums (`bitpack::sums`). All
/// arithmetic wraps (mod 2^64), so it is exact once the true sum is known
/// to fit, which a bound on `|x|` checks first.
pub fn sum_i64(bytes: &[u8]) -> Result<Option<(i64, usize)>, CodecError> {
    let mut r = Reader::new(bytes, CODEC);
    let (scheme, n) = r.scheme_header(Scheme::from_tag)?;
    let fits = |bound: i128| bound.checked_mul(n as i128).is_some_and(|b| b < i64::MAX as i128);
    let sum = match scheme {
        Scheme::Constant => {
            let v = r.i64("constant value")?;
            r.finish()?;
            fits((v as i128).abs()).then(|| v.wrapping_mul(n as i64))
        }
        Scheme::For => {
            let min = r.i64("FOR reference")?;
            let width = r.width("FOR bit width")?;
            let at = r.pos();
            let (s1, _, used) = bitpack::sums(r.rest(), width, n).map_err(|e| e.at(CODEC, at))?;
            r.take(used, "FOR values")?;
            r.finish()?;
            let top = (min as i128).abs().max((min as i128 + ((1i128 << width) - 1)).abs());
            fits(top).then(|| (n as i64).wrapping_mul(min).wrapping_add(s1 as i64))
        }
        Scheme::DeltaFor | Scheme::PatchedDelta => {
            let (first, dmin, width, bits, patches) = read_delta(&mut r, scheme, n)?;
            if n == 0 {
                r.finish()?;
                return Ok(Some((0, 0)));
            }
            let at = r.pos();
            let (s1, s2, used) = bitpack::sums(bits, width, n).map_err(|e| e.at(CODEC, at))?;
            if scheme == Scheme::DeltaFor {
                r.take(used, "deltas")?;
            }
            r.finish()?;
            // |x[i]| <= |first| + every step's magnitude
            let step = (dmin as i128).abs().max((dmin as i128 + ((1i128 << width) - 1)).abs());
            let patched: i128 = patches.iter().map(|&(_, s)| (s as i128).abs()).sum();
            if !fits((first as i128).abs() + step * (n as i128 - 1) + patched) {
                return Ok(None);
            }
            // slot 0 and patched slots hold ignored values: take them back out
            let packed = |i: usize| bitpack::get(bits, width, n, i).unwrap_or(0);
            let nw = n as u64;
            let mut total = nw.wrapping_mul(first as u64).wrapping_add((dmin as u64).wrapping_mul(nw * (nw - 1) / 2));
            total = total.wrapping_add(nw.wrapping_mul(s1)).wrapping_sub(s2).wrapping_sub(nw.wrapping_mul(packed(0)));
            for &(p, step) in &patches {
                let weight = (n - p) as u64;
                total = total.wrapping_add(weight.wrapping_mul((step as u64).wrapping_sub(dmin as u64).wrapping_sub(packed(p))));
            }
            Some(total as i64)
        }
        Scheme::Rle | Scheme::DeltaZstd => {
            let mut v = Vec::new();
            decode_i64(bytes, &mut v)?;
            let total: i128 = v.iter().map(|&x| x as i128).sum();
            i64::try_from(total).ok()
        }
    };
    Ok(sum.map(|s| (s, n)))
}

/// FOR: `base + value`, converted.
struct ForSink<'s, 'a, T, F> {
    dst: &'s mut bitpack::Spare<'a, T>,
    base: u64,
    conv: F,
}

impl<T: Copy + Default, F: Fn(i64) -> T> bitpack::Sink for ForSink<'_, '_, T, F> {
    #[inline(always)]
    fn row(&mut self, vals: &[u64; LANES]) {
        self.dst.row(&std::array::from_fn(|l| (self.conv)(vals[l].wrapping_add(self.base) as i64)));
    }

    #[inline(always)]
    fn rest(&mut self, vals: &[u64]) {
        for &v in vals {
            self.dst.push((self.conv)(v.wrapping_add(self.base) as i64));
        }
    }
}

/// Delta + FOR: a running sum of `base + value` from `acc` (the first value;
/// slot 0's packed value is ignored), converted. Rows are gathered into a
/// block buffer (in L1) and each block then gets one scalar prefix pass with
/// a short dependency chain and one vectorised convert-and-store pass.
struct DeltaSink<'s, 'a, T, F> {
    dst: &'s mut bitpack::Spare<'a, T>,
    base: u64,
    /// The last value written.
    acc: i64,
    /// Slot 0 is still to come.
    skip: bool,
    conv: F,
    buf: [i64; bitpack::BLOCK],
    len: usize,
    /// The position of `buf[0]` in the block.
    at: usize,
    /// Steps replacing the packed ones, `(position, step)`, ascending.
    patches: &'s [(usize, i64)],
}

impl<T: Copy + Default, F: Fn(i64) -> T> DeltaSink<'_, '_, T, F> {
    /// Prefix-sums and writes out `buf[..len]`.
    #[inline(always)]
    fn flush(&mut self) {
        let buf = &mut self.buf[..self.len];
        if self.skip && !buf.is_empty() {
            buf[0] = 0;
            self.skip = false;
        }
        while let Some((&(p, step), rest)) = self.patches.split_first() {
            if p >= self.at + buf.len() {
                break;
            }
            buf[p - self.at] = step;
            self.patches = rest;
        }
        self.at += buf.len();
        // four values a step: only `acc` is a chain (one add per four)
        let mut acc = self.acc;
        let mut quads = buf.chunks_exact_mut(4);
        for q in &mut quads {
            let s01 = q[0].wrapping_add(q[1]);
            let s012 = s01.wrapping_add(q[2]);
            let s0123 = s01.wrapping_add(q[2].wrapping_add(q[3]));
            q[0] = acc.wrapping_add(q[0]);
            q[1] = acc.wrapping_add(s01);
            q[2] = acc.wrapping_add(s012);
            acc = acc.wrapping_add(s0123);
            q[3] = acc;
        }
        for x in quads.into_remainder() {
            acc = acc.wrapping_add(*x);
            *x = acc;
        }
        self.acc = acc;
        for c in buf.chunks_exact(LANES) {
            self.dst.row(&std::array::from_fn(|l| (self.conv)(c[l])));
        }
        for &x in buf.chunks_exact(LANES).remainder() {
            self.dst.push((self.conv)(x));
        }
        self.len = 0;
    }
}

impl<T: Copy + Default, F: Fn(i64) -> T> bitpack::Sink for DeltaSink<'_, '_, T, F> {
    #[inline(always)]
    fn row(&mut self, vals: &[u64; LANES]) {
        let at = self.len;
        let d = &mut self.buf[at..at + LANES];
        for (d, v) in d.iter_mut().zip(vals) {
            *d = v.wrapping_add(self.base) as i64;
        }
        self.len += LANES;
        if self.len == bitpack::BLOCK {
            self.flush();
        }
    }

    #[inline(always)]
    fn rest(&mut self, vals: &[u64]) {
        self.len = 0;
        for (d, v) in self.buf.iter_mut().zip(vals) {
            *d = v.wrapping_add(self.base) as i64;
        }
        self.len = vals.len().min(bitpack::BLOCK);
        self.flush();
    }
}

fn min_max(values: &[i64]) -> Option<(i64, i64)> {
    if values.is_empty() {
        return None;
    }
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for &v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    Some((lo, hi))
}

fn delta_min_max(values: &[i64]) -> (i64, i64) {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (x, y) in values.iter().zip(values.iter().skip(1)) {
        let d = y.wrapping_sub(*x);
        lo = lo.min(d);
        hi = hi.max(d);
    }
    (lo, hi)
}

fn header(scheme: Scheme, count: u32, body: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body);
    put_u8(&mut out, scheme as u8);
    put_u32(&mut out, count);
    out
}

fn constant(count: u32, v: i64) -> Vec<u8> {
    let mut out = header(Scheme::Constant, count, 8);
    put_i64(&mut out, v);
    out
}

fn frame_of_reference(values: &[i64], count: u32, min: i64, width: u32) -> Vec<u8> {
    let mut out = header(Scheme::For, count, 9 + packed_len(values.len(), width));
    put_i64(&mut out, min);
    put_u8(&mut out, width as u8);
    bitpack::pack_with(values.len(), width, &mut out, |s, buf| {
        for (b, v) in buf.iter_mut().zip(&values[s..]) {
            *b = v.wrapping_sub(min) as u64;
        }
    });
    out
}

fn delta_for(values: &[i64], count: u32, dmin: i64, width: u32) -> Vec<u8> {
    let n = values.len();
    let mut out = header(Scheme::DeltaFor, count, 17 + packed_len(n, width));
    put_i64(&mut out, values[0]);
    put_i64(&mut out, dmin);
    put_u8(&mut out, width as u8);
    bitpack::pack_with(n, width, &mut out, |s, buf| {
        let skip = usize::from(s == 0);
        buf[0] = 0;
        let prev = &values[s + skip - 1..];
        for (b, (x, y)) in buf[skip..].iter_mut().zip(prev.iter().zip(&prev[1..])) {
            *b = y.wrapping_sub(*x).wrapping_sub(dmin) as u64;
        }
    });
    out
}

/// RLE, if its exact size is below `limit`.
fn rle(values: &[i64], count: u32, min: i64, vwidth: u32, limit: usize) -> Option<Vec<u8>> {
    let mut vals = Vec::new();
    let mut lens = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let start = i;
        while i < values.len() && values[i] == v {
            i += 1;
        }
        vals.push(v.wrapping_sub(min) as u64);
        lens.push((i - start - 1) as u64);
        if RLE_HEADER + packed_len(vals.len(), vwidth) + packed_len(vals.len(), 1) >= limit {
            return None;
        }
    }
    let lwidth = bits_needed(lens.iter().copied().max().unwrap_or(0));
    let size = packed_len(vals.len(), vwidth) + packed_len(lens.len(), lwidth);
    if RLE_HEADER + size >= limit {
        return None;
    }
    let mut out = header(Scheme::Rle, count, 14 + size);
    put_u32(&mut out, vals.len() as u32);
    put_i64(&mut out, min);
    put_u8(&mut out, vwidth as u8);
    put_u8(&mut out, lwidth as u8);
    bitpack::pack(&vals, vwidth, &mut out);
    bitpack::pack(&lens, lwidth, &mut out);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{never_panics, Rng, LENGTHS};
    use super::super::MAX_VALUES;
    use super::*;

    /// Named generators of many shapes, each given a length and a generator.
    #[allow(clippy::type_complexity)]
    fn shapes() -> Vec<(&'static str, fn(usize, &mut Rng) -> Vec<i64>)> {
        vec![
            ("zeros", |n, _| vec![0; n]),
            ("constant_min", |n, _| vec![i64::MIN; n]),
            ("constant_max", |n, _| vec![i64::MAX; n]),
            ("ascending", |n, _| (0..n as i64).collect()),
            ("descending_from_max", |n, _| (0..n as i64).map(|i| i64::MAX - 3 * i).collect()),
            ("sorted_random_steps", |n, r| {
                let mut v = r.next() as i64;
                (0..n)
                    .map(|_| {
                        v = v.wrapping_add(r.below(1000) as i64);
                        v
                    })
                    .collect()
            }),
            ("random_full_range", |n, r| (0..n).map(|_| r.next() as i64).collect()),
            ("extremes", |n, r| (0..n).map(|_| [i64::MIN, i64::MAX, 0, -1, 1][r.below(5) as usize]).collect()),
            ("alternating_min_max", |n, _| (0..n).map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX }).collect()),
            ("small_0_100", |n, r| (0..n).map(|_| r.below(100) as i64).collect()),
            ("negative_small", |n, r| (0..n).map(|_| r.range(-5000, -4990)).collect()),
            ("random_walk_0_100", |n, r| random_walk(n, r)),
            ("long_runs", |n, r| {
                let mut v = 0;
                (0..n)
                    .map(|i| {
                        if i % 300 == 0 {
                            v = r.next() as i64
                        }
                        v
                    })
                    .collect()
            }),
            ("short_runs", |n, r| {
                let mut v = 0;
                (0..n)
                    .map(|_| {
                        if r.below(8) == 0 {
                            v = r.range(-3, 3)
                        }
                        v
                    })
                    .collect()
            }),
            ("one_outlier", |n, r| (0..n).map(|i| if i == n / 2 { i64::MIN } else { r.below(4) as i64 }).collect()),
            ("walks_of_several_series", |n, r| walks_of_series(n, 1000, r)),
            ("mostly_flat_with_jumps", |n, r| {
                let mut v = 0i64;
                (0..n)
                    .map(|_| {
                        if r.below(50) == 0 {
                            v = v.wrapping_add(r.next() as i64 >> 20)
                        }
                        v
                    })
                    .collect()
            }),
        ]
    }

    fn random_walk(n: usize, r: &mut Rng) -> Vec<i64> {
        let mut x = r.below(100) as i64;
        (0..n)
            .map(|_| {
                x = (x + r.range(-3, 3)).clamp(0, 100);
                x
            })
            .collect()
    }

    /// TSBS-like: walks of `len` values each, a jump at every series start.
    fn walks_of_series(n: usize, len: usize, r: &mut Rng) -> Vec<i64> {
        let mut x = 0;
        (0..n)
            .map(|i| {
                x = if i % len == 0 { r.below(100) as i64 } else { (x + r.range(-3, 3)).clamp(0, 100) };
                x
            })
            .collect()
    }

    fn round_trip(values: &[i64]) -> Vec<u8> {
        let enc = encode_i64(values);
        let mut out = vec![42];
        decode_i64(&enc, &mut out).unwrap_or_else(|e| panic!("{e}: {:?}", scheme(&enc)));
        assert_eq!(out[0], 42);
        assert!(out[1..] == *values, "{:?} of {} values", scheme(&enc), values.len());
        enc
    }

    #[test]
    fn round_trips_every_shape_and_length() {
        for seed in 0..3 {
            let mut rng = Rng(100 + seed);
            for (name, gen) in shapes() {
                for &n in LENGTHS {
                    let v = gen(n, &mut rng);
                    let enc = round_trip(&v);
                    // never much worse than raw: header + 64 bits/value at most
                    assert!(enc.len() <= RLE_HEADER + 8 * n + 8, "{name}/{n}: {} bytes", enc.len());
                }
            }
        }
    }

    #[test]
    fn avx2_kernels_match_their_scalar_twins() {
        let mut rng = Rng(11);
        for (name, gen) in shapes() {
            for &n in LENGTHS {
                let v = gen(n, &mut rng);
                let enc = encode_i64(&v);
                let (a, b) = super::super::testutil::both(|| {
                    let mut out = Vec::new();
                    decode_i64(&enc, &mut out).map(|_| out)
                });
                assert_eq!(a.as_ref(), Ok(&v), "{name}/{n} scalar");
                assert_eq!(b.as_ref(), Ok(&v), "{name}/{n} simd");
            }
        }
    }

    #[test]
    fn every_scheme_round_trips_when_forced() {
        let mut rng = Rng(7);
        for (_, gen) in shapes() {
            for n in [1usize, 2, 1025, 3000] {
                let v = gen(n, &mut rng);
                let (min, max) = min_max(&v).unwrap();
                let fw = bits_needed(max.wrapping_sub(min) as u64);
                let (dmin, dmax) = delta_min_max(&v);
                let dw = if n > 1 { bits_needed(dmax.wrapping_sub(dmin) as u64) } else { 0 };
                let mut encs = vec![frame_of_reference(&v, n as u32, min, fw), delta_for(&v, n as u32, dmin, dw)];
                encs.extend(rle(&v, n as u32, min, fw, usize::MAX));
                encs.extend(patched_delta(&v, n as u32, dw, usize::MAX));
                for enc in encs {
                    let mut out = Vec::new();
                    decode_i64(&enc, &mut out).unwrap();
                    assert_eq!(out, v, "{:?}", scheme(&enc));
                }
            }
        }
    }

    #[test]
    fn picks_the_expected_scheme() {
        let mut rng = Rng(8);
        let pick = |v: &[i64]| scheme(&round_trip(v)).unwrap();
        assert_eq!(pick(&[]), Scheme::Constant);
        assert_eq!(pick(&vec![-7; 5000]), Scheme::Constant);
        assert_eq!(pick(&(0..5000).map(|i| 1_000_000 + 3 * i).collect::<Vec<_>>()), Scheme::DeltaFor);
        assert_eq!(pick(&(0..5000).map(|_| rng.below(100) as i64).collect::<Vec<_>>()), Scheme::For);
        assert_eq!(pick(&(0..5000).map(|i| i / 500).collect::<Vec<_>>()), Scheme::Rle);
        let walk = random_walk(8192, &mut rng);
        assert_eq!(pick(&walk), Scheme::DeltaFor);
        let series = walks_of_series(8192, 3000, &mut rng);
        assert_eq!(pick(&series), Scheme::PatchedDelta);
    }

    #[test]
    fn entropy_coded_steps_beat_runs_when_they_are_smaller() {
        // TSBS's integer-valued walks, which repeat values often, in runs of
        // 1,080 values per series (a block of a few series' hours): RLE's
        // exact size beats the bit-packed steps', but not the entropy-coded ones
        let mut rng = Rng(21);
        let mut x = 0i64;
        let v: Vec<i64> = (0..8192)
            .map(|i| {
                let step = if rng.below(10) < 7 { 0 } else { rng.range(-8, 8) };
                x = if i % 1080 == 0 { rng.below(100) as i64 } else { (x + step).clamp(0, 100) };
                x
            })
            .collect();
        let enc = round_trip(&v);
        assert_eq!(scheme(&enc), Some(Scheme::DeltaZstd));
        let light = encode_with(&v, false);
        assert_eq!(scheme(&light), Some(Scheme::Rle), "without entropy coding");
        assert!(enc.len() < light.len(), "{} vs {}", enc.len(), light.len());
    }

    #[test]
    fn a_series_boundary_costs_one_patch_not_a_wider_width() {
        let mut rng = Rng(12);
        let v = walks_of_series(8192, 3000, &mut rng);
        let enc = round_trip(&v);
        assert_eq!(scheme(&enc), Some(Scheme::PatchedDelta));
        assert_eq!(enc[21], 3, "steps -3..=3 take 3 bits");
        assert_eq!(u32::from_le_bytes(enc[22..26].try_into().unwrap()), 2, "two series starts");
        assert!(enc.len() <= PATCHED_HEADER + 8192 * 3 / 8 + 16, "{} bytes", enc.len());
    }

    #[test]
    fn fused_sums_equal_the_sum_of_the_decoded_values() {
        let mut rng = Rng(14);
        for (name, gen) in shapes() {
            for &n in LENGTHS {
                let v = gen(n, &mut rng);
                let (min, max) = min_max(&v).unwrap_or((0, 0));
                let (dmin, dmax) = delta_min_max(&v);
                let fw = bits_needed(max.wrapping_sub(min) as u64);
                let dw = if n > 1 { bits_needed(dmax.wrapping_sub(dmin) as u64) } else { 0 };
                let mut encs = vec![encode_i64(&v)];
                if n > 0 {
                    encs.push(frame_of_reference(&v, n as u32, min, fw));
                    encs.push(delta_for(&v, n as u32, dmin, dw));
                    encs.extend(patched_delta(&v, n as u32, dw, usize::MAX));
                }
                let exact: i128 = v.iter().map(|&x| x as i128).sum();
                for enc in encs {
                    let (a, b) = super::super::testutil::both(|| sum_i64(&enc).unwrap());
                    assert_eq!(a, b, "{name}/{n} {:?}: scalar and SIMD", scheme(&enc));
                    match a {
                        Some((s, count)) => {
                            assert_eq!(count, n);
                            assert_eq!(s as i128, exact, "{name}/{n} {:?}", scheme(&enc));
                        }
                        None => assert!(
                            scheme(&enc) == Some(Scheme::DeltaZstd) || i64::try_from(exact).is_err() || v.iter().any(|x| x.unsigned_abs() > 1 << 40),
                            "{name}/{n} {:?}: no fused sum for a small sum",
                            scheme(&enc)
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn light_forms_decode_to_the_same_values_without_entropy_coding() {
        let mut rng = Rng(15);
        // a walk whose steps are mostly 0 and ±1: entropy coding pays
        let mut x = 0i64;
        let v: Vec<i64> = (0..8192)
            .map(|i| {
                x = if i % 3000 == 0 { rng.below(1000) as i64 } else { x + [0, 0, 0, 0, 1, -1, 1, -1, 2, -2][rng.below(10) as usize] };
                x
            })
            .collect();
        let enc = encode_i64(&v);
        assert_eq!(scheme(&enc), Some(Scheme::DeltaZstd));
        let light = light_form(&enc).unwrap().expect("delta + zstd has a light form");
        assert_eq!(scheme(&light), Some(Scheme::PatchedDelta));
        let mut out = Vec::new();
        decode_i64(&light, &mut out).unwrap();
        assert_eq!(out, v);
        assert_eq!(light_form(&light).unwrap(), None);
        assert!(light_form(&enc[..enc.len() - 1]).is_err());
    }

    #[test]
    fn malformed_patches_are_errors() {
        let mut rng = Rng(13);
        let v = walks_of_series(2000, 700, &mut rng);
        let enc = patched_delta(&v, 2000, 7, usize::MAX).unwrap();
        let mut out = Vec::new();
        decode_i64(&enc, &mut out).unwrap();
        assert_eq!(out, v);
        // exception count at or above the value count
        let mut bad = enc.clone();
        bad[22..26].copy_from_slice(&2000u32.to_le_bytes());
        assert!(decode_i64(&bad, &mut Vec::new()).unwrap_err().to_string().contains("exceptions"));
        // positions out of order: swap the two 11-bit positions
        let k = u32::from_le_bytes(enc[22..26].try_into().unwrap()) as usize;
        assert_eq!(k, 2);
        let at = PATCHED_HEADER + packed_len(2000, enc[21] as u32);
        let mut pos = Vec::new();
        bitpack::unpack(&enc[at..], 11, 2, &mut pos).unwrap();
        let mut bad = enc[..at].to_vec();
        bitpack::pack(&[pos[1], pos[0]], 11, &mut bad);
        bad.extend_from_slice(&enc[at + packed_len(2, 11)..]);
        assert!(decode_i64(&bad, &mut Vec::new()).unwrap_err().to_string().contains("ascending"));
    }

    #[test]
    fn values_in_0_100_take_at_most_7_bits() {
        let mut rng = Rng(9);
        let n = 8192;
        let uniform: Vec<i64> = (0..n).map(|_| rng.below(100) as i64).collect();
        let enc = round_trip(&uniform);
        // FOR at 7 bits plus a 14-byte header
        assert!(enc.len() <= FOR_HEADER + n * 7 / 8, "{} bytes", enc.len());
        assert!((enc.len() - FOR_HEADER) * 8 <= 7 * n);
        let walk = random_walk(n, &mut rng);
        let enc = round_trip(&walk);
        let bits = enc.len() as f64 * 8.0 / n as f64;
        assert!(bits <= 7.0, "random walk: {bits} bits/value");
    }

    #[test]
    fn decode_appends_and_restores_on_error() {
        let enc = encode_i64(&[5, 6, 7]);
        let mut out = vec![1, 2];
        decode_i64(&enc, &mut out).unwrap();
        assert_eq!(out, vec![1, 2, 5, 6, 7]);
        assert!(decode_i64(&enc[..enc.len() - 1], &mut out).is_err());
        assert_eq!(out, vec![1, 2, 5, 6, 7]);
    }

    #[test]
    fn malformed_headers_are_errors() {
        let mut out = Vec::new();
        assert!(decode_i64(&[], &mut out).is_err());
        assert!(decode_i64(&[9, 0, 0, 0, 0], &mut out).is_err());
        let mut big = constant(1, 3);
        big[1..5].copy_from_slice(&((MAX_VALUES + 1) as u32).to_le_bytes());
        let e = decode_i64(&big, &mut out).unwrap_err();
        assert_eq!(e.offset, 1, "{e}");
        let mut wide = frame_of_reference(&[1, 2, 3], 3, 1, 2);
        wide[13] = 65;
        assert!(decode_i64(&wide, &mut out).unwrap_err().to_string().contains("above 64"));
        assert!(out.is_empty());
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let mut rng = Rng(10);
        let inputs: Vec<Vec<i64>> = vec![
            vec![],
            vec![3; 100],
            (0..1100).map(|_| rng.below(100) as i64).collect(),
            (0..300).map(|_| rng.next() as i64).collect(),
            (0..1500).map(|i| 10 * i + rng.below(3) as i64).collect(),
            (0..2000).map(|i| i / 97).collect(),
            walks_of_series(2100, 700, &mut rng),
        ];
        for v in inputs {
            let enc = round_trip(&v);
            never_panics(&enc, |b| decode_i64(b, &mut Vec::new()).is_ok());
            never_panics(&enc, |b| sum_i64(b).is_ok());
        }
    }
}
