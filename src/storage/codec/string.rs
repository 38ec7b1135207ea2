//! Variable-length column blocks (text, varchar, bytea, jsonb: any byte
//! strings): dictionary or plain, each with its bytes optionally zstd'd, the
//! smaller picked per block.
//!
//! Every encoding starts with `tag: u8, count: u32` (little-endian), then:
//!
//! | tag | scheme | body after the header |
//! |---|---|---|
//! | 0 | plain | `values(count)`: the values in row order |
//! | 1 | dictionary | `distinct: u32, values(distinct), codes`: the distinct values, then an integer encoding (integer.rs) of `count` codes in `0..distinct`, which runs to the end of the buffer; row `i` is dictionary entry `codes[i]` |
//!
//! `values(k)` is `k` byte strings:
//! - `lens_len: u32`, then `lens_len` bytes: an integer encoding of the `k`
//!   lengths (its count must be `k`);
//! - `total: u32`: the sum of the lengths, at most `MAX_BYTES`;
//! - `mode: u8`: 0 = raw, the `total` concatenated bytes follow; 1 = zstd,
//!   `zlen: u32` then a `zlen`-byte zstd frame whose header declares content
//!   size `total` and which decompresses to exactly the concatenated bytes.
//!
//! Dictionary entries are distinct and in strictly ascending bytewise order
//! (so codes compare as their values do, and an equality or range predicate
//! can be evaluated on codes); `distinct` is at least 1 and at most `count`,
//! and the decoder checks all of this. An empty block is plain. A decoded
//! block holds at most `MAX_BYTES` bytes of values; an encoding must be
//! decoded whole: trailing bytes are an error.
//!
//! Choice: distinct values are counted on a sample (10 runs of 64 values, the
//! whole block when it is small). When at most 80% of the sampled values are
//! distinct, the dictionary is built over the whole block (given up once it
//! holds more than half the values) and encoded exactly; it is taken outright
//! when it is at most a quarter of the raw size (plain without zstd), else
//! plain is encoded too and the smaller wins (ties go to plain). Bytes are
//! zstd'd (level 1) when the frame plus its length is at least 20% smaller
//! than the raw bytes and they are at least 64 bytes long.

use std::cell::RefCell;
use std::io::Cursor;

use hashbrown::HashMap;

use super::integer::{decode_i64, encode_i64};
use super::{count_u32, put_u32, put_u8, sample_runs, CodecError, Reader};
use crate::exec::vector::BytesColumn;

const CODEC: &str = "string";
const SAMPLE_LEN: usize = 64;
/// The most bytes of values one block may hold (encoded or decoded).
/// Encoders panic above it (callers cut blocks by bytes as well as rows);
/// decoders reject a block that would decode to more.
pub const MAX_BYTES: usize = 64 << 20;
/// zstd level for value bytes: fast, most of the gain on text.
const ZSTD_LEVEL: i32 = 1;
/// Below this many bytes zstd is not tried.
const ZSTD_MIN: usize = 64;
const MODE_RAW: u8 = 0;
const MODE_ZSTD: u8 = 1;

/// The scheme of a string encoding (its first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Plain = 0,
    Dictionary = 1,
}

impl Scheme {
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        Some(match tag {
            0 => Scheme::Plain,
            1 => Scheme::Dictionary,
            _ => return None,
        })
    }
}

/// The scheme an encoding uses, if its tag is known.
pub fn scheme(bytes: &[u8]) -> Option<Scheme> {
    bytes.first().and_then(|t| Scheme::from_tag(*t))
}

/// Whether the bytes of an encoding's (first) values section are zstd'd:
/// for tests and benchmark reports. `None` on malformed input.
pub fn uses_zstd(bytes: &[u8]) -> Option<bool> {
    let mut r = Reader::new(bytes, CODEC);
    let tag = r.u8("scheme tag").ok()?;
    r.count().ok()?;
    if Scheme::from_tag(tag)? == Scheme::Dictionary {
        r.u32("distinct").ok()?;
    }
    let lens_len = r.u32("lengths size").ok()? as usize;
    r.take(lens_len, "lengths").ok()?;
    r.u32("total").ok()?;
    Some(r.u8("mode").ok()? == MODE_ZSTD)
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Encodes the values `data[offsets[i]..offsets[i + 1]]` for `i` in
/// `0..offsets.len() - 1` (no values when `offsets` has fewer than 2 entries)
/// with the smaller of plain and dictionary.
///
/// # Panics
/// If there are more than `MAX_VALUES` values or more than `MAX_BYTES` bytes
/// of them, or if `offsets` decrease or point past `data`.
pub fn encode_bytes(offsets: &[u32], data: &[u8]) -> Vec<u8> {
    let n = offsets.len().saturating_sub(1);
    let count = count_u32(n);
    if n == 0 {
        return plain(count, &[], &[]);
    }
    let (first, last) = (offsets[0] as usize, offsets[n] as usize);
    assert!(first <= last && last <= data.len(), "offsets {first}..{last} outside {} bytes of data", data.len());
    let bytes = &data[first..last];
    assert!(bytes.len() <= MAX_BYTES, "a string block holds at most {MAX_BYTES} bytes, got {}", bytes.len());
    let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];

    // Distinct values on the sample.
    let (mut sampled, mut distinct) = (0usize, 0usize);
    let mut seen: HashMap<&[u8], ()> = HashMap::new();
    for (s, len) in sample_runs(n, SAMPLE_LEN) {
        sampled += len;
        for i in s..s + len {
            distinct += usize::from(seen.insert(value(i), ()).is_none());
        }
    }
    let lens: Vec<i64> = offsets.windows(2).map(|w| i64::from(w[1]) - i64::from(w[0])).collect();
    assert!(lens.iter().all(|&l| l >= 0), "offsets decrease");
    if distinct * 5 <= sampled * 4 {
        if let Some(dict) = dictionary(count, offsets, data) {
            let raw = 32 + n + bytes.len();
            if dict.len() * 4 <= raw {
                return dict;
            }
            let p = plain(count, &lens, bytes);
            return if dict.len() < p.len() { dict } else { p };
        }
    }
    plain(count, &lens, bytes)
}

fn header(scheme: Scheme, count: u32, body: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + body);
    put_u8(&mut out, scheme as u8);
    put_u32(&mut out, count);
    out
}

fn plain(count: u32, lens: &[i64], bytes: &[u8]) -> Vec<u8> {
    let mut out = header(Scheme::Plain, count, 32 + bytes.len());
    put_values(&mut out, lens, bytes);
    out
}

/// The dictionary encoding, or `None` when more than half the values are distinct.
fn dictionary(count: u32, offsets: &[u32], data: &[u8]) -> Option<Vec<u8>> {
    let n = offsets.len() - 1;
    let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
    let limit = n / 2;
    let mut map: HashMap<&[u8], u32> = HashMap::with_capacity(64.min(limit + 1));
    let mut entries: Vec<&[u8]> = Vec::new();
    let mut codes: Vec<i64> = Vec::with_capacity(n);
    let mut prev: (&[u8], i64) = (value(0), -1);
    for i in 0..n {
        let v = value(i);
        // Runs of one value (a block sorted by series) skip the hash lookup.
        if prev.1 >= 0 && v == prev.0 {
            codes.push(prev.1);
            continue;
        }
        let code = *map.entry(v).or_insert_with(|| {
            entries.push(v);
            entries.len() as u32 - 1
        });
        if entries.len() > limit.max(1) {
            return None;
        }
        prev = (v, i64::from(code));
        codes.push(i64::from(code));
    }
    // Entries in ascending order, codes renumbered to match.
    if !entries.is_sorted() {
        let mut order: Vec<u32> = (0..entries.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| entries[a as usize].cmp(entries[b as usize]));
        let mut rank = vec![0i64; entries.len()];
        for (new, &old) in order.iter().enumerate() {
            rank[old as usize] = new as i64;
        }
        for c in &mut codes {
            *c = rank[*c as usize];
        }
        entries = order.iter().map(|&o| entries[o as usize]).collect();
    }
    let lens: Vec<i64> = entries.iter().map(|e| e.len() as i64).collect();
    let bytes = entries.concat();
    let codes = encode_i64(&codes);
    let mut out = header(Scheme::Dictionary, count, 36 + bytes.len() + codes.len());
    put_u32(&mut out, entries.len() as u32);
    put_values(&mut out, &lens, &bytes);
    out.extend_from_slice(&codes);
    Some(out)
}

/// Appends `values(k)`: the lengths, then the bytes raw or zstd'd.
fn put_values(out: &mut Vec<u8>, lens: &[i64], bytes: &[u8]) {
    let lens = encode_i64(lens);
    put_u32(out, lens.len() as u32);
    out.extend_from_slice(&lens);
    put_u32(out, bytes.len() as u32);
    if bytes.len() >= ZSTD_MIN && compress_into(out, bytes) {
        return;
    }
    put_u8(out, MODE_RAW);
    out.extend_from_slice(bytes);
}

/// Appends `mode = zstd, zlen, frame` if the frame and its length come to at
/// most 80% of `bytes`; otherwise leaves `out` as it was and returns false.
fn compress_into(out: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let limit = bytes.len() - bytes.len() / 5 - 4;
    let at = out.len();
    put_u8(out, MODE_ZSTD);
    put_u32(out, 0);
    out.reserve(limit);
    let start = out.len();
    let written = super::with_zstd_compressor(ZSTD_LEVEL, |c| {
        let mut cur = Cursor::new(&mut *out);
        cur.set_position(start as u64);
        c.compress_to_buffer(bytes, &mut cur).ok()
    })
    .flatten();
    match written {
        Some(z) if z <= limit && out.len() == start + z => {
            out[at + 1..at + 5].copy_from_slice(&(z as u32).to_le_bytes());
            true
        }
        _ => {
            out.truncate(at);
            false
        }
    }
}

/// Decodes an encoding made by `encode_bytes`, appending the values to `out`
/// (offsets continue from the end of `out.data`; an `out` without offsets
/// gets its leading 0). On error `out` is left as it was.
pub fn decode_bytes(bytes: &[u8], out: &mut BytesColumn) -> Result<(), CodecError> {
    let (olen, dlen) = (out.offsets.len(), out.data.len());
    if out.offsets.is_empty() {
        out.offsets.push(0);
    }
    debug_assert_eq!(out.offsets.last().map(|&o| o as usize), Some(dlen));
    let r = decode_inner(bytes, &mut out.offsets, &mut out.data);
    if r.is_err() {
        out.offsets.truncate(olen);
        out.data.truncate(dlen);
    }
    r
}

fn decode_inner(bytes: &[u8], offsets: &mut Vec<u32>, data: &mut Vec<u8>) -> Result<(), CodecError> {
    let mut r = Reader::new(bytes, CODEC);
    let (scheme, n) = r.scheme_header(Scheme::from_tag)?;
    match scheme {
        Scheme::Plain => {
            get_values(&mut r, n, offsets, data)?;
            r.finish()
        }
        Scheme::Dictionary => {
            let at = r.pos();
            let k = r.u32("distinct count")? as usize;
            if k > n || (k == 0 && n > 0) {
                return Err(CodecError::new(CODEC, at, format!("{k} distinct values for {n} values")));
            }
            let at = r.pos();
            let mut doffs = vec![0u32];
            let mut dict = Vec::new();
            get_values(&mut r, k, &mut doffs, &mut dict)?;
            let entry = |c: usize| &dict[doffs[c] as usize..doffs[c + 1] as usize];
            if (1..k).any(|c| entry(c - 1) >= entry(c)) {
                return Err(CodecError::new(CODEC, at, "dictionary entries not in strictly ascending order"));
            }
            let at = r.pos();
            let mut codes = Vec::new();
            decode_i64(r.rest(), &mut codes).map_err(|e| e.at(CODEC, at))?;
            if codes.len() != n {
                return Err(CodecError::new(CODEC, at, format!("{} codes for {n} values", codes.len())));
            }
            let mut total = 0usize;
            for &c in &codes {
                if c < 0 || c as usize >= k {
                    return Err(CodecError::new(CODEC, at, format!("code {c} outside a dictionary of {k}")));
                }
                total += (doffs[c as usize + 1] - doffs[c as usize]) as usize;
            }
            room(total, data.len(), at)?;
            data.reserve(total);
            offsets.reserve(n);
            for &c in &codes {
                data.extend_from_slice(entry(c as usize));
                offsets.push(data.len() as u32);
            }
            Ok(())
        }
    }
}

/// Checks that `total` more bytes fit in a block and in u32 offsets after `have`.
fn room(total: usize, have: usize, at: usize) -> Result<(), CodecError> {
    if total > MAX_BYTES {
        return Err(CodecError::new(CODEC, at, format!("{total} bytes of values, above the limit of {MAX_BYTES}")));
    }
    if have + total > u32::MAX as usize {
        return Err(CodecError::new(CODEC, at, format!("{total} more bytes overflow u32 offsets after {have}")));
    }
    Ok(())
}

/// Reads `values(k)`, appending the values to `offsets`/`data` (which the
/// caller restores on error).
fn get_values(r: &mut Reader, k: usize, offsets: &mut Vec<u32>, data: &mut Vec<u8>) -> Result<(), CodecError> {
    let lens_len = r.u32("lengths size")? as usize;
    let at = r.pos();
    let mut lens = Vec::new();
    decode_i64(r.take(lens_len, "lengths")?, &mut lens).map_err(|e| e.at(CODEC, at))?;
    if lens.len() != k {
        return Err(CodecError::new(CODEC, at, format!("{} lengths for {k} values", lens.len())));
    }
    let total_at = r.pos();
    let total = r.u32("total length")? as usize;
    let mut sum = 0u64;
    for &l in &lens {
        if l < 0 {
            return Err(CodecError::new(CODEC, at, format!("negative length {l}")));
        }
        sum = sum.saturating_add(l as u64);
    }
    if sum != total as u64 {
        return Err(CodecError::new(CODEC, total_at, format!("lengths add up to {sum}, not {total}")));
    }
    room(total, data.len(), total_at)?;
    let mode_at = r.pos();
    match r.u8("bytes mode")? {
        MODE_RAW => data.extend_from_slice(r.take(total, "value bytes")?),
        MODE_ZSTD => {
            let zlen = r.u32("zstd frame size")? as usize;
            let frame_at = r.pos();
            let frame = r.take(zlen, "zstd frame")?;
            decompress_into(frame, total, data).map_err(|what| CodecError::new(CODEC, frame_at, what))?;
        }
        m => return Err(CodecError::new(CODEC, mode_at, format!("unknown bytes mode {m}"))),
    }
    let mut o = offsets.last().copied().unwrap_or(0);
    offsets.reserve(k);
    for &l in &lens {
        o += l as u32;
        offsets.push(o);
    }
    Ok(())
}

/// Appends the decompressed `frame` to `data`, which must come to exactly
/// `total` bytes (already checked against `MAX_BYTES`); allocates only after
/// the frame header has declared that size.
fn decompress_into(frame: &[u8], total: usize, data: &mut Vec<u8>) -> Result<(), String> {
    match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) if size == total as u64 => {}
        Ok(Some(size)) => return Err(format!("zstd frame declares {size} bytes, the header {total}")),
        Ok(None) => return Err("zstd frame without a content size".into()),
        Err(_) => return Err("not a zstd frame header".into()),
    }
    let start = data.len();
    data.reserve_exact(total);
    let r = DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        let d = d.as_mut().ok_or("no zstd decompressor")?;
        let mut cur = Cursor::new(&mut *data);
        cur.set_position(start as u64);
        d.decompress_to_buffer(frame, &mut cur).map_err(|e| format!("zstd: {e}"))
    });
    match r {
        Ok(z) if z == total && data.len() == start + total => Ok(()),
        Ok(z) => {
            data.truncate(start);
            Err(format!("zstd frame decompressed to {z} bytes, not {total}"))
        }
        Err(e) => {
            data.truncate(start);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{never_panics, Rng, LENGTHS};
    use super::*;

    fn column<T: AsRef<[u8]>>(values: &[T]) -> BytesColumn {
        let mut c = BytesColumn::default();
        for v in values {
            c.push(v.as_ref());
        }
        c
    }

    fn round_trip<T: AsRef<[u8]>>(values: &[T]) -> Vec<u8> {
        let col = column(values);
        let enc = encode_bytes(&col.offsets, &col.data);
        let mut out = column(&[b"prefix".as_slice()]);
        decode_bytes(&enc, &mut out).unwrap_or_else(|e| panic!("{e}: {:?}", scheme(&enc)));
        assert_eq!(out.len(), values.len() + 1);
        assert_eq!(out.get(0), b"prefix");
        for (i, v) in values.iter().enumerate() {
            assert!(out.get(i + 1) == v.as_ref(), "value {i} of {} ({:?})", values.len(), scheme(&enc));
        }
        assert_eq!(*out.offsets.last().unwrap() as usize, out.data.len());
        enc
    }

    fn tags(n: usize, distinct: usize, sorted: bool, r: &mut Rng) -> Vec<String> {
        let mut v: Vec<String> =
            (0..n).map(|i| if sorted { format!("host_{}", i * distinct / n.max(1)) } else { format!("host_{}", r.below(distinct as u64)) }).collect();
        if sorted {
            v.sort();
        }
        v
    }

    fn random_text(n: usize, r: &mut Rng) -> Vec<String> {
        (0..n).map(|_| (0..r.below(30)).map(|_| (b'a' + r.below(26) as u8) as char).collect()).collect()
    }

    fn random_bytes(n: usize, r: &mut Rng) -> Vec<Vec<u8>> {
        (0..n).map(|_| (0..r.below(12)).map(|_| [0u8, 0xff, 0xc3, 0x80, r.next() as u8][r.below(5) as usize]).collect()).collect()
    }

    fn log_lines(n: usize, r: &mut Rng) -> Vec<String> {
        const LEVELS: [&str; 4] = ["INFO", "WARN", "DEBUG", "ERROR"];
        const MSGS: [&str; 5] = ["request completed", "connection reset by peer", "retrying upstream fetch", "cache miss for key", "slow query detected"];
        (0..n)
            .map(|i| {
                format!(
                    "2024-05-01T12:{:02}:{:02}.{:03}Z {} [worker-{}] {} id={} latency_ms={} path=/api/v1/robots/{}/telemetry",
                    i / 60 % 60,
                    i % 60,
                    r.below(1000),
                    LEVELS[r.below(4) as usize],
                    r.below(16),
                    MSGS[r.below(5) as usize],
                    r.next() % 1_000_000_000,
                    r.below(5000),
                    r.below(10_000)
                )
            })
            .collect()
    }

    #[test]
    fn round_trips_every_shape_and_length() {
        let mut rng = Rng(21);
        for &n in LENGTHS {
            round_trip(&tags(n, 10, true, &mut rng));
            round_trip(&tags(n, 10, false, &mut rng));
            round_trip(&random_text(n, &mut rng));
            round_trip(&vec![""; n]);
            round_trip(&random_bytes(n, &mut rng));
            round_trip(&(0..n).map(|i| if i % 3 == 0 { "" } else { "x" }).collect::<Vec<_>>());
            round_trip(&log_lines(n.min(3000), &mut rng));
        }
    }

    #[test]
    fn round_trips_a_huge_value_and_binary() {
        let mut rng = Rng(22);
        let huge: Vec<u8> = (0..1 << 20).map(|i| if i % 7 == 0 { 0 } else { rng.next() as u8 }).collect();
        round_trip(std::slice::from_ref(&huge));
        round_trip(&[b"a".to_vec(), huge.clone(), Vec::new(), huge]);
        let zeros = vec![vec![0u8; 100_000]; 3];
        let enc = round_trip(&zeros);
        assert!(enc.len() < 1000, "{} bytes", enc.len());
        round_trip(&[b"\xff\xfe\x00".to_vec(), b"\xc3\x28".to_vec(), b"\x00".to_vec(), b"\x00\x00".to_vec()]);
    }

    #[test]
    fn encodes_a_slice_of_a_larger_buffer() {
        let col = column(&["zz", "a", "bb", "a", "ccc"]);
        let enc = encode_bytes(&col.offsets[1..], &col.data);
        let mut out = BytesColumn::default();
        decode_bytes(&enc, &mut out).unwrap();
        assert_eq!(out.iter().collect::<Vec<_>>(), [b"a".as_slice(), b"bb", b"a", b"ccc"]);
        let mut bare = BytesColumn { offsets: Vec::new(), data: Vec::new() };
        decode_bytes(&enc, &mut bare).unwrap();
        assert_eq!(bare, out);
    }

    #[test]
    fn picks_the_expected_scheme() {
        let mut rng = Rng(23);
        let pick = |v: &[String]| {
            let enc = round_trip(v);
            (scheme(&enc).unwrap(), uses_zstd(&enc).unwrap())
        };
        assert_eq!(pick(&[]), (Scheme::Plain, false));
        assert_eq!(pick(&tags(8192, 10, true, &mut rng)), (Scheme::Dictionary, false));
        assert_eq!(pick(&tags(8192, 10, false, &mut rng)), (Scheme::Dictionary, false));
        assert_eq!(pick(&tags(8192, 1000, true, &mut rng)).0, Scheme::Dictionary);
        assert_eq!(pick(&random_text(5000, &mut rng)).0, Scheme::Plain);
        assert_eq!(pick(&log_lines(5000, &mut rng)), (Scheme::Plain, true));
        let uuids: Vec<String> = (0..5000).map(|_| format!("{:016x}{:016x}", rng.next(), rng.next())).collect();
        assert_eq!(pick(&uuids).0, Scheme::Plain);
        // a dictionary of long, similar values is zstd'd
        let long: Vec<String> = (0..5000).map(|_| format!("{}-{}", "robot/arm/joint/sensor/temperature".repeat(4), rng.below(200))).collect();
        assert_eq!(pick(&long), (Scheme::Dictionary, true));
    }

    #[test]
    fn sorted_tags_cost_almost_nothing() {
        let mut rng = Rng(24);
        for distinct in [1, 10, 100] {
            let v = tags(8192, distinct, true, &mut rng);
            let enc = round_trip(&v);
            let per = enc.len() as f64 / v.len() as f64;
            assert!(per < 0.05, "{distinct} sorted tags: {per} bytes/value ({} bytes)", enc.len());
        }
        let random = tags(8192, 10, false, &mut rng);
        let enc = round_trip(&random);
        assert!(enc.len() <= 150 + 8192 / 2, "10 random tags: {} bytes", enc.len());
    }

    #[test]
    fn log_lines_compress() {
        let mut rng = Rng(25);
        let v = log_lines(8192, &mut rng);
        let raw: usize = v.iter().map(String::len).sum();
        let enc = round_trip(&v);
        assert!(enc.len() * 2 < raw, "{} of {raw} bytes", enc.len());
    }

    #[test]
    fn decode_appends_and_restores_on_error() {
        let col = column(&["a", "bb"]);
        let enc = encode_bytes(&col.offsets, &col.data);
        let mut out = column(&["x"]);
        decode_bytes(&enc, &mut out).unwrap();
        assert_eq!(out, column(&["x", "a", "bb"]));
        let before = out.clone();
        assert!(decode_bytes(&enc[..enc.len() - 1], &mut out).is_err());
        assert_eq!(out, before);
        let mut bare = BytesColumn { offsets: Vec::new(), data: Vec::new() };
        assert!(decode_bytes(&enc[..3], &mut bare).is_err());
        assert!(bare.offsets.is_empty());
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let mut out = BytesColumn::default();
        assert!(decode_bytes(&[], &mut out).is_err());
        assert!(decode_bytes(&[7, 0, 0, 0, 0], &mut out).is_err());
        // unsorted dictionary
        let col = column(&["b", "a", "b", "a", "b", "a"]);
        let mut enc = dictionary(6, &col.offsets, &col.data).unwrap();
        decode_bytes(&enc, &mut BytesColumn::default()).unwrap();
        let at = enc.windows(2).position(|w| w == b"ab").unwrap();
        enc[at..at + 2].copy_from_slice(b"ba");
        assert!(decode_bytes(&enc, &mut out).unwrap_err().to_string().contains("ascending"));
        assert_eq!(out, BytesColumn::default());
    }

    /// A zstd frame that declares (and would inflate to) far more than the
    /// header allows is refused before anything is allocated for it.
    #[test]
    fn a_zstd_bomb_is_rejected_quickly() {
        let bomb = zstd::bulk::compress(&vec![0u8; 100 << 20], 1).unwrap();
        assert!(bomb.len() < 100_000);
        let build = |total: u32, lens: &[i64]| {
            let mut e = header(Scheme::Plain, lens.len() as u32, 0);
            let l = encode_i64(lens);
            put_u32(&mut e, l.len() as u32);
            e.extend_from_slice(&l);
            put_u32(&mut e, total);
            put_u8(&mut e, MODE_ZSTD);
            put_u32(&mut e, bomb.len() as u32);
            e.extend_from_slice(&bomb);
            e
        };
        let t = std::time::Instant::now();
        let mut out = BytesColumn::default();
        // header honest about the frame: above MAX_BYTES
        let e = decode_bytes(&build(100 << 20, &[100 << 20]), &mut out).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        // header claiming a small size: the frame disagrees
        let e = decode_bytes(&build(1000, &[1000]), &mut out).unwrap_err();
        assert!(e.to_string().contains("declares"), "{e}");
        assert!(t.elapsed().as_millis() < 200, "{:?}", t.elapsed());
        assert!(out.data.capacity() < 1 << 20);
        // a dictionary whose codes would expand past MAX_BYTES
        let big = vec![b'x'; 1 << 20];
        let vals: Vec<&[u8]> = (0..10).map(|i| if i % 2 == 0 { big.as_slice() } else { b"y".as_slice() }).collect();
        let enc = round_trip(&vals);
        assert_eq!(scheme(&enc), Some(Scheme::Dictionary));
        let mut codes = encode_i64(&(0..100_000).map(|i| i % 2).collect::<Vec<_>>());
        let mut e2 = enc[..enc.len() - encode_i64(&(0..10).map(|i| i % 2).collect::<Vec<_>>()).len()].to_vec();
        e2[1..5].copy_from_slice(&100_000u32.to_le_bytes());
        e2.append(&mut codes);
        let e = decode_bytes(&e2, &mut out).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let mut rng = Rng(26);
        let inputs: Vec<Vec<Vec<u8>>> = vec![
            vec![],
            vec![Vec::new(); 5],
            tags(40, 3, true, &mut rng).into_iter().map(String::into_bytes).collect(),
            tags(40, 5, false, &mut rng).into_iter().map(String::into_bytes).collect(),
            random_text(20, &mut rng).into_iter().map(String::into_bytes).collect(),
            random_bytes(20, &mut rng),
            log_lines(12, &mut rng).into_iter().map(String::into_bytes).collect(),
            (0..20).map(|i| format!("{}{}", "abcdefgh".repeat(10), i % 4).into_bytes()).collect(),
        ];
        for (k, v) in inputs.into_iter().enumerate() {
            let enc = round_trip(&v);
            if k >= 6 {
                assert_eq!(uses_zstd(&enc), Some(true), "input {k}");
            }
            never_panics(&enc, |b| decode_bytes(b, &mut BytesColumn::default()).is_ok());
        }
    }
}
