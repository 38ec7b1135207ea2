//! Lightweight codecs for column blocks: pure functions from a slice of
//! physical values to bytes and back. `bitpack` (FastLanes-style bit-packing
//! of u64 in 1024-value blocks), `integer` (i64: constant, frame-of-reference,
//! delta + FOR, run-length; the scheme picked per block by sampling) and
//! `timestamp` (i64 nanoseconds: constant stride with exceptions, else
//! delta-of-delta with patched bit-packing). Each file's module doc gives its
//! byte layout (for storage-format/SPEC.md): little-endian throughout; integer
//! and timestamp encodings start with a one-byte scheme tag and a u32 value
//! count, and are self-contained (a decoder needs nothing else).
//!
//! Must not: do I/O, checksum or frame blocks (the segment writer does), or
//! know SQL types beyond the physical ones (u64, i64). Must not trust the bytes
//! it decodes: malformed input is a `CodecError`, never a panic, and a decoder
//! never allocates for more than `MAX_VALUES` values.

pub mod bitpack;
pub mod boolean;
pub mod float;
pub mod integer;
pub mod string;
pub mod timestamp;

/// The most values one encoding may hold. Encoders panic above it (callers
/// split columns into blocks far smaller); decoders reject a count above it,
/// so garbage never makes them allocate more than `MAX_VALUES * 8` bytes.
pub const MAX_VALUES: usize = 1 << 20;

/// Whether decoding kernels may use AVX2 (x86_64 CPUs that have it). Tests
/// can turn it off per thread (`testutil::scalar_only`) to compare the AVX2
/// kernels with their scalar twins.
#[inline]
pub(crate) fn simd() -> bool {
    #[cfg(test)]
    if testutil::SCALAR.with(|c| c.get()) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

thread_local! {
    /// One zstd compression context per level per thread: a fresh context is
    /// megabytes of tables allocated (and faulted in) for every block.
    static ZSTD_COMPRESSORS: std::cell::RefCell<Vec<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's reusable zstd context for `level`; `None`
/// when zstd cannot make one.
pub(crate) fn with_zstd_compressor<R>(level: i32, f: impl FnOnce(&mut zstd::bulk::Compressor<'static>) -> R) -> Option<R> {
    ZSTD_COMPRESSORS.with(|contexts| {
        let mut contexts = contexts.borrow_mut();
        let at = match contexts.iter().position(|(l, _)| *l == level) {
            Some(at) => at,
            None => {
                contexts.push((level, zstd::bulk::Compressor::new(level).ok()?));
                contexts.len() - 1
            }
        };
        Some(f(&mut contexts[at].1))
    })
}

/// `bytes` compressed as one zstd frame at `level`; `None` when zstd fails.
pub(crate) fn zstd_compress(bytes: &[u8], level: i32) -> Option<Vec<u8>> {
    with_zstd_compressor(level, |c| c.compress(bytes).ok()).flatten()
}

/// A decode failure: which codec, where in its input, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {codec} encoding at byte {offset}: {what}")]
pub struct CodecError {
    /// `bitpack`, `integer` or `timestamp`.
    pub codec: &'static str,
    /// Byte offset from the start of the buffer handed to the decoder.
    pub offset: usize,
    pub what: String,
}

impl CodecError {
    pub(crate) fn new(codec: &'static str, offset: usize, what: impl Into<String>) -> CodecError {
        CodecError { codec, offset, what: what.into() }
    }

    /// The same error, seen from a buffer in which this one starts at `base`.
    pub(crate) fn at(mut self, codec: &'static str, base: usize) -> CodecError {
        self.codec = codec;
        self.offset += base;
        self
    }
}

/// Zig-zag: small magnitudes of either sign become small unsigned numbers.
#[inline(always)]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of `zigzag`.
#[inline(always)]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

pub(crate) fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The `u32` count written in every header.
pub(crate) fn count_u32(n: usize) -> u32 {
    assert!(n <= MAX_VALUES, "a codec block holds at most {MAX_VALUES} values, got {n}");
    n as u32
}

/// Sampling for scheme choice (BtrBlocks style): up to `SAMPLE_RUNS` runs of
/// `run` consecutive positions spread evenly over `0..n`, as `(start, len)`;
/// one run covering everything when `n` is small.
pub(crate) const SAMPLE_RUNS: usize = 10;

pub(crate) fn sample_runs(n: usize, run: usize) -> impl Iterator<Item = (usize, usize)> {
    let whole = n <= SAMPLE_RUNS * run;
    let runs = if whole { usize::from(n > 0) } else { SAMPLE_RUNS };
    (0..runs).map(move |k| if whole { (0, n) } else { (k * (n - run) / (SAMPLE_RUNS - 1), run) })
}

/// A bounds-checked little-endian cursor over encoded bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    codec: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], codec: &'static str) -> Reader<'a> {
        Reader { buf, pos: 0, codec }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub(crate) fn err(&self, what: impl Into<String>) -> CodecError {
        CodecError::new(self.codec, self.pos, what)
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], CodecError> {
        match self.buf.len().checked_sub(self.pos) {
            Some(left) if left >= n => {
                let s = &self.buf[self.pos..self.pos + n];
                self.pos += n;
                Ok(s)
            }
            _ => Err(self.err(format!("truncated: {what} needs {n} bytes, {} left", self.buf.len() - self.pos))),
        }
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, CodecError> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, CodecError> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(a))
    }

    pub(crate) fn i64(&mut self, what: &str) -> Result<i64, CodecError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8, what)?);
        Ok(i64::from_le_bytes(a))
    }

    /// A bit width byte, checked to be at most 64.
    pub(crate) fn width(&mut self, what: &str) -> Result<u32, CodecError> {
        let w = self.u8(what)? as u32;
        if w > 64 {
            self.pos -= 1;
            return Err(self.err(format!("{what} is {w}, above 64")));
        }
        Ok(w)
    }

    /// An encoding's header: its scheme tag (known to `from_tag`) and its
    /// value count.
    pub(crate) fn scheme_header<S>(&mut self, from_tag: fn(u8) -> Option<S>) -> Result<(S, usize), CodecError> {
        let tag = self.u8("scheme tag")?;
        let Some(scheme) = from_tag(tag) else {
            return Err(CodecError::new(self.codec, 0, format!("unknown scheme tag {tag}")));
        };
        Ok((scheme, self.count()?))
    }

    /// The value count of a header, checked against `MAX_VALUES`.
    pub(crate) fn count(&mut self) -> Result<usize, CodecError> {
        let n = self.u32("value count")? as usize;
        if n > MAX_VALUES {
            self.pos -= 4;
            return Err(self.err(format!("value count {n} above the limit of {MAX_VALUES}")));
        }
        Ok(n)
    }

    /// Bit-unpacks `count` values at `width`, adding `base` (wrapping), and
    /// appends them to `out`.
    pub(crate) fn unpack<T: bitpack::Lane>(&mut self, width: u32, count: usize, base: u64, out: &mut Vec<T>) -> Result<(), CodecError> {
        let start = self.pos;
        let n = bitpack::unpack_append(self.rest(), width, count, base, out).map_err(|e| e.at(self.codec, start))?;
        self.pos += n;
        Ok(())
    }

    /// Ends decoding: every byte must have been consumed.
    pub(crate) fn finish(&self) -> Result<(), CodecError> {
        if self.pos != self.buf.len() {
            return Err(self.err(format!("{} trailing bytes", self.buf.len() - self.pos)));
        }
        Ok(())
    }
}

/// The benches' seeded generator, shared so tests and benches see the same data.
#[cfg(test)]
#[path = "../../../benches/support/rng.rs"]
mod test_rng;

/// Seeded data generators and the never-panic harness shared by the codec tests.
#[cfg(test)]
pub(crate) mod testutil {
    use std::cell::Cell;

    thread_local! {
        /// Set: `simd()` is false on this thread.
        pub static SCALAR: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` with the AVX2 kernels off and then on (where the CPU has
    /// them), returning both results: (scalar, default).
    pub fn both<R>(f: impl Fn() -> R) -> (R, R) {
        SCALAR.with(|c| c.set(true));
        let a = f();
        SCALAR.with(|c| c.set(false));
        (a, f())
    }

    pub use super::test_rng::Rng;

    /// Lengths that cover empty, tiny, block-aligned and ragged inputs.
    pub const LENGTHS: &[usize] = &[0, 1, 2, 3, 5, 63, 64, 65, 100, 1000, 1023, 1024, 1025, 2047, 3000, 4096, 8191, 10_000];

    /// Decodes every truncation and every single-bit flip of `enc`; the decoder
    /// may return Ok or Err but must not panic (a panic fails the test).
    pub fn never_panics(enc: &[u8], decode: impl Fn(&[u8]) -> bool) {
        for cut in 0..enc.len() {
            assert!(!decode(&enc[..cut]), "a truncation to {cut} of {} bytes decoded", enc.len());
        }
        let mut buf = enc.to_vec();
        for i in 0..buf.len() * 8 {
            buf[i / 8] ^= 1 << (i % 8);
            let _ = decode(&buf);
            buf[i / 8] ^= 1 << (i % 8);
        }
        let mut extra = enc.to_vec();
        extra.push(0);
        assert!(!decode(&extra), "a trailing byte was accepted");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips_extremes() {
        for v in [0, 1, -1, 2, -2, i64::MAX, i64::MIN, i64::MIN + 1, 12345, -12345] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
    }

    #[test]
    fn reader_reports_offsets() {
        let mut r = Reader::new(&[1, 2, 3], "integer");
        assert_eq!(r.u8("tag"), Ok(1));
        let e = r.u32("count").unwrap_err();
        assert_eq!(e.offset, 1);
        assert!(e.to_string().contains("integer encoding at byte 1"), "{e}");
    }
}
