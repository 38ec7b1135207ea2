//! Byte-level scanning for line protocol: which bytes end which token, the
//! token scanner (escape pairs included), unescaping, whitespace, line ends,
//! the line-end finder used to resynchronise after a bad line, and SWAR digit
//! parsing.
//! Must not: know about columns, batches or messages; every function here is
//! a pure function of the bytes it is given.

/// Ends a tag key, tag value or field key: `,` space `=` `\` LF CR.
pub(super) const NAME_STOP: u8 = 1;
/// Ends a measurement: `,` space `\` LF CR (an `=` is data there).
pub(super) const MEASUREMENT_STOP: u8 = 2;
/// Ends an unquoted field value: `,` space LF CR.
pub(super) const VALUE_END: u8 = 4;
/// Ends a timestamp: space LF CR.
pub(super) const TIMESTAMP_END: u8 = 8;
/// A name containing one of these bytes must be escaped on the wire, so its
/// raw spelling differs from its value (or it cannot be matched in place).
pub(super) const NOT_PLAIN_IN_KEY: u8 = 16;
pub(super) const NOT_PLAIN_IN_MEASUREMENT: u8 = 32;

const fn build_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    t[b',' as usize] =
        NAME_STOP | MEASUREMENT_STOP | VALUE_END | NOT_PLAIN_IN_KEY | NOT_PLAIN_IN_MEASUREMENT;
    t[b' ' as usize] = NAME_STOP
        | MEASUREMENT_STOP
        | VALUE_END
        | TIMESTAMP_END
        | NOT_PLAIN_IN_KEY
        | NOT_PLAIN_IN_MEASUREMENT;
    t[b'=' as usize] = NAME_STOP | NOT_PLAIN_IN_KEY;
    t[b'\\' as usize] = NAME_STOP | MEASUREMENT_STOP | NOT_PLAIN_IN_KEY | NOT_PLAIN_IN_MEASUREMENT;
    t[b'\n' as usize] = NAME_STOP
        | MEASUREMENT_STOP
        | VALUE_END
        | TIMESTAMP_END
        | NOT_PLAIN_IN_KEY
        | NOT_PLAIN_IN_MEASUREMENT;
    t[b'\r' as usize] = NAME_STOP | MEASUREMENT_STOP | VALUE_END | TIMESTAMP_END;
    t
}

pub(super) static CLASS: [u8; 256] = build_classes();

#[inline(always)]
pub(super) fn class(b: u8) -> u8 {
    CLASS[b as usize]
}

/// `b[i]` is a CR: does it end the line (CR LF, or CR as the input's last byte)?
#[inline]
pub(super) fn cr_ends_line(b: &[u8], i: usize) -> bool {
    b.get(i + 1).is_none_or(|&c| c == b'\n')
}

/// Is `i` the end of the line's content: input end, LF, or a CR that ends the line?
#[inline]
pub(super) fn at_line_end(b: &[u8], i: usize) -> bool {
    match b.get(i) {
        None | Some(b'\n') => true,
        Some(b'\r') => cr_ends_line(b, i),
        _ => false,
    }
}

/// Go's `skipWhitespace`: spaces, tabs and NULs.
#[inline]
pub(super) fn skip_whitespace(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if c != b' ' && c != b'\t' && c != 0 {
            break;
        }
        i += 1;
    }
    i
}

/// Scans a name (measurement, tag key, tag value, field key) from `i` to the
/// first unescaped byte of class `stop`; a CR stops it only where it ends the
/// line. A backslash always pairs with the next byte, except a LF (a
/// newline outside a quoted string always ends the line), so an escaped
/// byte never ends the token. Returns the end and whether a backslash was
/// seen (the token then needs unescaping).
#[inline(always)]
pub(super) fn scan_name(b: &[u8], mut i: usize, stop: u8) -> (usize, bool) {
    let mut escaped = false;
    loop {
        while let Some(&c) = b.get(i) {
            if class(c) & stop != 0 {
                break;
            }
            i += 1;
        }
        match b.get(i) {
            None => return (i, escaped),
            Some(b'\\') => {
                escaped = true;
                i += if b.get(i + 1).is_some_and(|&c| c != b'\n') {
                    2
                } else {
                    1
                };
            }
            Some(b'\r') if !cr_ends_line(b, i) => i += 1,
            Some(_) => return (i, escaped),
        }
    }
}

/// Scans an unquoted field value or timestamp: to the first byte of class
/// `end` (a CR only where it ends the line), or the input end.
#[inline]
pub(super) fn scan_plain(b: &[u8], mut i: usize, end: u8) -> usize {
    loop {
        while let Some(&c) = b.get(i) {
            if class(c) & end != 0 {
                break;
            }
            i += 1;
        }
        match b.get(i) {
            Some(b'\r') if !cr_ends_line(b, i) => i += 1,
            _ => return i,
        }
    }
}

/// Appends the value of an escaped name: a backslash before `,` `=` space or
/// another backslash stands for that byte; before anything else it is kept
/// (`a\b` stays `a\b`). Pairs are taken left to right as `scan_name` does.
pub(super) fn unescape_name_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < raw.len() {
        let Some(k) = memchr::memchr(b'\\', &raw[i..]) else {
            out.extend_from_slice(&raw[i..]);
            return;
        };
        out.extend_from_slice(&raw[i..i + k]);
        i += k;
        match raw.get(i + 1) {
            Some(&c @ (b',' | b'=' | b' ' | b'\\')) => {
                out.push(c);
                i += 2;
            }
            Some(&c) => {
                out.push(b'\\');
                out.push(c);
                i += 2;
            }
            None => {
                out.push(b'\\');
                i += 1;
            }
        }
    }
}

/// Appends the value of a quoted string's body: `\"` and `\\` are escapes,
/// any other backslash is kept.
pub(super) fn unescape_string_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < raw.len() {
        let Some(k) = memchr::memchr(b'\\', &raw[i..]) else {
            out.extend_from_slice(&raw[i..]);
            return;
        };
        out.extend_from_slice(&raw[i..i + k]);
        i += k;
        match raw.get(i + 1) {
            Some(&c @ (b'"' | b'\\')) => {
                out.push(c);
                i += 2;
            }
            Some(&c) => {
                out.push(b'\\');
                out.push(c);
                i += 2;
            }
            None => {
                out.push(b'\\');
                i += 1;
            }
        }
    }
}

/// The body of a quoted string starting after its opening quote at `i`:
/// returns the index of the closing quote, or None if the input ends first.
/// `\"` and `\\` do not end it; newlines are data.
#[inline]
pub(super) fn find_closing_quote(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let k = memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        i += k;
        if b[i] == b'"' {
            return Some(i);
        }
        i += 2;
    }
}

/// Where the line whose first non-blank byte is at `start` ends (the index of
/// its LF), by structure alone, for a line that failed to parse: the key
/// section runs to the first unescaped space; in the field section a `"`
/// right after an unescaped `=` opens a quoted string, which may span
/// newlines; after the field section, the first LF ends the line. A valid
/// line ends at the same LF under this rule as under the full parse. None:
/// the input ends before the line does.
pub(super) fn find_line_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    // Key section.
    loop {
        let k = memchr::memchr3(b' ', b'\\', b'\n', b.get(i..)?)?;
        i += k;
        match b[i] {
            b'\n' => return Some(i),
            b'\\' => {
                if b.get(i + 1) == Some(&b'\n') {
                    return Some(i + 1);
                }
                i += 2;
            }
            _ => break,
        }
    }
    // Field section.
    i = skip_whitespace(b, i);
    let mut after_equals = false;
    loop {
        let c = *b.get(i)?;
        match c {
            b'\n' => return Some(i),
            b'\\' => {
                if b.get(i + 1) == Some(&b'\n') {
                    return Some(i + 1);
                }
                after_equals = false;
                i += 2;
            }
            b'"' if after_equals => {
                i = find_closing_quote(b, i + 1)? + 1;
                after_equals = false;
            }
            b' ' => break,
            _ => {
                after_equals = c == b'=';
                i += 1;
            }
        }
    }
    // Timestamp and anything after it.
    memchr::memchr(b'\n', b.get(i..)?).map(|k| i + k)
}

/// Matches a short name (at most 32 bytes, typically `key=`) against the
/// input in place: four masked word compares, no call and no branch per
/// byte. Built only for names whose raw spelling is their value.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeyMatcher {
    words: [u64; 4],
    masks: [u64; 4],
    len: usize,
}

impl KeyMatcher {
    pub const MAX_LEN: usize = 32;

    /// None when `bytes` is empty or longer than `MAX_LEN`.
    pub fn new(bytes: &[u8]) -> Option<KeyMatcher> {
        if bytes.is_empty() || bytes.len() > Self::MAX_LEN {
            return None;
        }
        let mut padded = [0u8; 32];
        padded[..bytes.len()].copy_from_slice(bytes);
        let mut words = [0u64; 4];
        let mut masks = [0u64; 4];
        for i in 0..4 {
            words[i] = word_of(&padded, i);
            let covered = bytes.len().saturating_sub(i * 8).min(8);
            masks[i] = if covered == 8 {
                u64::MAX
            } else {
                (1u64 << (covered * 8)) - 1
            };
        }
        Some(KeyMatcher {
            words,
            masks,
            len: bytes.len(),
        })
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Does the input at `p` start with the name?
    #[inline(always)]
    pub fn matches(&self, b: &[u8], p: usize) -> bool {
        if self.len <= 16 {
            if let Some(chunk) = b.get(p..).and_then(|s| s.first_chunk::<16>()) {
                let mut w = [0u8; 8];
                w.copy_from_slice(&chunk[..8]);
                let w0 = u64::from_le_bytes(w);
                w.copy_from_slice(&chunk[8..]);
                let w1 = u64::from_le_bytes(w);
                return ((w0 ^ self.words[0]) & self.masks[0])
                    | ((w1 ^ self.words[1]) & self.masks[1])
                    == 0;
            }
        } else if let Some(chunk) = b.get(p..).and_then(|s| s.first_chunk::<32>()) {
            let mut diff = 0;
            for i in 0..4 {
                diff |= (word_of(chunk, i) ^ self.words[i]) & self.masks[i];
            }
            return diff == 0;
        }
        // Near the end of the input: byte by byte.
        let mut padded = [0u8; 32];
        for i in 0..4 {
            padded[i * 8..i * 8 + 8].copy_from_slice(&self.words[i].to_le_bytes());
        }
        b.get(p..p + self.len) == Some(&padded[..self.len])
    }
}

#[inline(always)]
fn word_of(chunk: &[u8; 32], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&chunk[i * 8..i * 8 + 8]);
    u64::from_le_bytes(w)
}

/// Appends `b[at..at + len]` to `out`; short values (the common case) as
/// one fixed 16-byte copy, trimmed, instead of a variable-length `memcpy`.
#[inline(always)]
pub(super) fn append_bytes(out: &mut Vec<u8>, b: &[u8], at: usize, len: usize) {
    let before = out.len();
    match b.get(at..).and_then(|s| s.first_chunk::<16>()) {
        Some(chunk) if len <= 16 => {
            out.extend_from_slice(chunk);
            out.truncate(before + len);
        }
        _ => out.extend_from_slice(b.get(at..at + len).unwrap_or(&[])),
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Index (0..8) of the first byte of the 8 at `i` that may end a name:
/// `,` `=` `\` or any byte below 0x21 (space, LF, CR, and control bytes the
/// caller re-checks with `scan_name`); 8 when there is none. None when
/// fewer than 8 bytes remain. One word, no loop, no branch per byte: the
/// classic zero-byte test is exact for the lowest match, which is all this
/// asks. Scalar twin: `first_name_stop_scalar` (tests).
#[inline(always)]
pub(super) fn first_name_stop_in_word(b: &[u8], i: usize) -> Option<usize> {
    let w = read_word(b, i)?;
    let equal = |c: u8| {
        let x = w ^ (ONES * c as u64);
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let below_0x21 = w.wrapping_sub(ONES * 0x21) & !w & HIGHS;
    let found = equal(b',') | equal(b'=') | equal(b'\\') | below_0x21;
    Some((found.trailing_zeros() / 8) as usize)
}

/// The run of ASCII digits at `i`, up to 8, from one word: its length and
/// value (length 8: all eight are digits, more may follow). None when fewer
/// than 8 bytes remain. Scalar twin: `leading_digits_scalar` (tests).
#[inline(always)]
pub(super) fn leading_digits_in_word(b: &[u8], i: usize) -> Option<(usize, u64)> {
    let w = read_word(b, i)?;
    // A byte is a digit when its high nibble is 3 both before and after
    // adding 6; a carry out of a non-digit byte only disturbs bytes above
    // the first non-digit, which do not count.
    let high = w & 0xF0F0_F0F0_F0F0_F0F0;
    let high_plus_6 = w.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0;
    let non_digit = (high ^ 0x3030_3030_3030_3030) | (high_plus_6 ^ 0x3030_3030_3030_3030);
    let n = (non_digit.trailing_zeros() / 8) as usize;
    if n == 0 {
        return Some((0, 0));
    }
    // Right-align the n digits and pad with leading '0's.
    let digits = w << (8 * (8 - n));
    let pad = 0x3030_3030_3030_3030u64
        .checked_shr(8 * n as u32)
        .unwrap_or(0);
    Some((n, eight_digits_value(digits | pad)))
}

/// Eight ASCII digits in `chunk` (first digit in the lowest byte)?
#[inline(always)]
pub(super) fn is_eight_digits(chunk: u64) -> bool {
    ((chunk & 0xF0F0_F0F0_F0F0_F0F0)
        | (((chunk.wrapping_add(0x0606_0606_0606_0606)) & 0xF0F0_F0F0_F0F0_F0F0) >> 4))
        == 0x3333_3333_3333_3333
}

/// The value of eight ASCII digits (checked by `is_eight_digits`).
#[inline(always)]
pub(super) fn eight_digits_value(chunk: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let mut v = chunk.wrapping_sub(0x3030_3030_3030_3030);
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    ((v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2)))
        >> 32
}

/// Reads 8 bytes at `i` as a little-endian word, if there are 8.
#[inline(always)]
pub(super) fn read_word(b: &[u8], i: usize) -> Option<u64> {
    let s: &[u8; 8] = b.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(*s))
}

/// Powers of ten as integers.
pub(super) const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Accumulates the run of ASCII digits at `i` into `acc` (wrapping; callers
/// bound the digit count), eight at a time, the last partial word in one
/// step. Returns the end.
#[inline(always)]
pub(super) fn take_digits(b: &[u8], mut i: usize, acc: &mut u64) -> usize {
    while let Some((n, v)) = leading_digits_in_word(b, i) {
        *acc = acc.wrapping_mul(POW10_U64[n]).wrapping_add(v);
        i += n;
        if n < 8 {
            return i;
        }
    }
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *acc = acc.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    i
}

/// `scan_name(b, p, NAME_STOP)` for the common token: up to 16 bytes
/// without escapes, ended by `,` space or `=`, found by word; anything else
/// goes through `scan_name`.
#[inline(always)]
pub(super) fn scan_name_fast(b: &[u8], p: usize) -> (usize, bool) {
    let mut q = p;
    for _ in 0..2 {
        match first_name_stop_in_word(b, q) {
            Some(8) => q += 8,
            Some(k) => {
                if matches!(b.get(q + k), Some(b',' | b' ' | b'=')) {
                    return (q + k, false);
                }
                break;
            }
            None => break,
        }
    }
    scan_name(b, p, NAME_STOP)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar twin of `take_digits`: one digit at a time.
    fn take_digits_scalar(b: &[u8], mut i: usize, acc: &mut u64) -> usize {
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            *acc = acc.wrapping_mul(10).wrapping_add((c - b'0') as u64);
            i += 1;
        }
        i
    }

    /// Scalar twin of `first_name_stop_in_word`.
    fn first_name_stop_scalar(b: &[u8], i: usize) -> Option<usize> {
        let w = b.get(i..i + 8)?;
        Some(
            w.iter()
                .position(|&c| c == b',' || c == b'=' || c == b'\\' || c < 0x21)
                .unwrap_or(8),
        )
    }

    /// Scalar twin of `leading_digits_in_word`.
    fn leading_digits_scalar(b: &[u8], i: usize) -> Option<(usize, u64)> {
        let w = b.get(i..i + 8)?;
        let n = w.iter().take_while(|c| c.is_ascii_digit()).count();
        Some((n, w[..n].iter().fold(0, |v, &c| v * 10 + (c - b'0') as u64)))
    }

    #[test]
    fn word_kernels_match_scalar_twins() {
        // Every byte value in every position, around digits and specials.
        for pos in 0..8 {
            for v in 0..=255u8 {
                for fill in [b'7', b'a', b'0', 0xFF, 0x80] {
                    let mut w = vec![fill; 10];
                    w[pos] = v;
                    for start in 0..3 {
                        assert_eq!(
                            first_name_stop_in_word(&w, start),
                            first_name_stop_scalar(&w, start),
                            "{w:?}@{start}"
                        );
                        assert_eq!(
                            leading_digits_in_word(&w, start),
                            leading_digits_scalar(&w, start),
                            "{w:?}@{start}"
                        );
                    }
                }
            }
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet = b"0123456789,= \\\n\r\t\0ab\xff\x80/:";
        for _ in 0..50_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let w: Vec<u8> = (0..9)
                .map(|k| alphabet[((seed >> (k * 5)) % alphabet.len() as u64) as usize])
                .collect();
            assert_eq!(
                first_name_stop_in_word(&w, 0),
                first_name_stop_scalar(&w, 0),
                "{w:?}"
            );
            assert_eq!(
                leading_digits_in_word(&w, 1),
                leading_digits_scalar(&w, 1),
                "{w:?}"
            );
        }
        assert_eq!(first_name_stop_in_word(b"short", 0), None);
        assert_eq!(leading_digits_in_word(b"1234567", 0), None);
    }

    #[test]
    fn swar_digits_match_scalar() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let alphabet = b"0123456789/:a ,";
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 24) as usize;
            let mut s = Vec::with_capacity(len);
            let mut x = seed;
            for _ in 0..len {
                // Mostly digits, sometimes a byte next to them in ASCII.
                let pick = (x % 40) as usize;
                s.push(if pick < 36 {
                    alphabet[pick % 10]
                } else {
                    alphabet[10 + pick % 5]
                });
                x = x.rotate_left(7).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            }
            let (mut a, mut b) = (0u64, 0u64);
            assert_eq!(
                take_digits(&s, 0, &mut a),
                take_digits_scalar(&s, 0, &mut b),
                "{s:?}"
            );
            assert_eq!(a, b, "{s:?}");
        }
        for w in 0..=255u8 {
            let chunk = u64::from_le_bytes([b'1', b'2', b'3', b'4', b'5', b'6', b'7', w]);
            assert_eq!(is_eight_digits(chunk), w.is_ascii_digit(), "{w}");
        }
    }

    #[test]
    fn key_matcher_matches_exactly_its_bytes() {
        let keys: [&[u8]; 5] = [
            b"a=",
            b"hostname=",
            b"usage_guest_nice=",
            b"service_environment=",
            &[b'k'; 32],
        ];
        for key in keys {
            let m = KeyMatcher::new(key).unwrap();
            for tail in [&b""[..], b"x", b",more,bytes,after,the,key,to,fill,words"] {
                let mut hit = key.to_vec();
                hit.extend_from_slice(tail);
                assert!(m.matches(&hit, 0), "{key:?}+{tail:?}");
                let mut shifted = b"zz".to_vec();
                shifted.extend_from_slice(&hit);
                assert!(m.matches(&shifted, 2));
                // Any single changed byte of the key, or a cut, is a miss.
                for i in 0..key.len() {
                    let mut miss = hit.clone();
                    miss[i] ^= 0x20;
                    assert!(!m.matches(&miss, 0), "{key:?} byte {i}");
                }
                assert!(!m.matches(&hit[..key.len() - 1], 0));
            }
        }
        assert!(KeyMatcher::new(b"").is_none());
        assert!(KeyMatcher::new(&[b'k'; 33]).is_none());
    }

    #[test]
    fn append_bytes_copies_exactly() {
        let input: Vec<u8> = (0..64u8).collect();
        for at in 0..64 {
            for len in 0..=(64 - at) {
                let mut out = vec![9u8];
                append_bytes(&mut out, &input, at, len);
                assert_eq!(&out[1..], &input[at..at + len]);
            }
        }
    }

    #[test]
    fn fast_name_scan_matches_scan_name() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let alphabet = b"abc,= \\\n\r\t\0xyz0123456789";
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let mut x = seed;
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.rotate_left(11).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    // Mostly letters, so tokens are long enough to matter.
                    let k = (x >> 33) as usize % 64;
                    alphabet[if k < 40 { k % 3 } else { k % alphabet.len() }]
                })
                .collect();
            for start in 0..len.min(3) {
                assert_eq!(
                    scan_name_fast(&s, start),
                    scan_name(&s, start, NAME_STOP),
                    "{s:?}@{start}"
                );
            }
        }
    }

    #[test]
    fn unescaping() {
        let name = |raw: &[u8]| {
            let mut v = Vec::new();
            unescape_name_into(raw, &mut v);
            v
        };
        assert_eq!(name(br"my\ meas\,x"), b"my meas,x");
        assert_eq!(name(br"a\=b"), b"a=b");
        assert_eq!(name(br"a\b"), br"a\b");
        assert_eq!(name(br"\"), br"\");
        assert_eq!(name(br"\\"), br"\");
        assert_eq!(name(br"\\\"), br"\\");
        assert_eq!(name(br"\\\\"), br"\\");
        let string = |raw: &[u8]| {
            let mut v = Vec::new();
            unescape_string_into(raw, &mut v);
            v
        };
        assert_eq!(string(br#"say \"hi\""#), br#"say "hi""#);
        assert_eq!(string(br"C:\\dir"), br"C:\dir");
        assert_eq!(string(br"a\b"), br"a\b");
    }

    #[test]
    fn line_ends() {
        assert_eq!(find_line_end(b"m f=1\nx", 0), Some(5));
        assert_eq!(find_line_end(b"m f=\"a\nb\" 1\nx", 0), Some(11));
        assert_eq!(find_line_end(b"m,t=a=b f=\"a\nb\"\nx", 0), Some(15));
        assert_eq!(find_line_end(b"m f=\"a\nb", 0), None);
        assert_eq!(find_line_end(b"m f=a\"b\nc\"", 0), Some(7));
        assert_eq!(find_line_end(b"m,t=a\\\nf=1", 0), Some(6));
        assert_eq!(find_line_end(b"m  f=\"\n\"\n", 0), Some(8));
        assert_eq!(find_line_end(b"m f=1 \"\n\"", 0), Some(7));
    }
}
