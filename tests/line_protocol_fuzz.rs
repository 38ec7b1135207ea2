//! A bounded, seeded fuzz loop over the line protocol parser that runs on
//! stable Rust in CI (the coverage-guided target lives in `fuzz/`): a
//! xorshift mutator (byte flips, insertions of the bytes the grammar cares
//! about, splices between seeds, truncations) over a corpus of valid and
//! invalid lines, with options drawn per case. Every case must not panic,
//! must leave every column exactly `rows` long with `consumed` within the
//! input, and must give the same result fed in two chunks (at a cut drawn
//! from the data) as in one.

use std::time::{Duration, Instant};

use brewric::exec::vector::ColumnData;
use brewric::ingest::line_protocol::{
    parse_lines, ColumnTypes, FieldKind, KnownColumn, NoKnownColumns, ParseOptions, ParsedLines,
    Precision,
};

const ITERATIONS: usize = 200_000;
/// Stop early rather than hold CI up on a slow machine.
const TIME_LIMIT: Duration = Duration::from_secs(20);

const SEEDS: &[&[u8]] = &[
    b"cpu,hostname=host_0,region=eu-central-1,datacenter=eu-central-1a,rack=6,os=Ubuntu15.10 usage_user=58i,usage_system=2i,usage_idle=24i 1451606400000000000\n\
      cpu,hostname=host_1,region=us-west-1,datacenter=us-west-1b,rack=41,os=Ubuntu16.04LTS usage_user=2i,usage_system=96i,usage_idle=11i 1451606400000000000\n",
    b"bench,host=bench v=0.123 1700000000000\nbench,host=bench v=0.456 1700000000001\n",
    b"m f=1\nm f=1i\nm f=-9223372036854775808i\nm f=18446744073709551615u\nm f=1.e+78,g=1E5,h=.5,i=-0.0\n",
    b"m f=t,g=T,h=true,i=True,j=TRUE,k=f,l=F,m=false,n=False,o=FALSE\nm s=\"true\",e=\"\",c=\"a,b c=d\"\n",
    b"m f=\"say \\\"hi\\\"\",g=\"C:\\\\dir\",h=\"a\\b\"\nm f=\"line1\nline2\" 5\n",
    b"my\\ meas,t=1 f=1\nm\\,x f=1\nm,tag\\ key=tag\\ val\\,x\\=y f=1\nm,t=\"q\" f=1\nm field\\ key=1,f\\,k=2,f\\=k=3\n",
    b"m,b=2,a=1 f=1 -1\n# comment\n\n   \n\t m  f=1  123 \r\nm,t=\xf0\x9f\x8d\xad f=\"\xf0\x9f\x9a\x80\"\nm,t=a\\b f=1\n",
    b"m\nm,t=1\nm,t=1 \n,t=1 f=1\nm, f=1\nm,=v f=1\nm,t f=1\nm,t= f=1\nm,t=a=b f=1\nm,t=1,t=2 f=1\n",
    b"m =1\nm f=1,=2\nm f=\nm f=,g=1\nm f= 1\nm f\nm f=1,g\nm f=1,\nm f=\"abc\n",
    b"m f=1.2.3\nm f=1-2\nm f=-\nm f=0x10\nm f=NaN\nm f=-inf\nm f=1e400\nm f=1.5i\nm f=9i10\n",
    b"m f=9223372036854775808i\nm f=-1u\nm f=tru\nm f='x'\nm f=1 abc123\nm f=1 1.5\nm f=1 1 2\nm f=1 9223372036854775807\n",
    b"m,t=a\\ f=1\nm time=1\nm,time=1 f=1\nm f=1.0\nm f=1i\nm,f=x g=1\nm f=\xff\nm,t=a\0b f=1\r\n",
];

const SPECIAL: &[u8] = b" ,=\\\"\n\r\t\0#.-+eEiutfTFnN0123456789x";

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(input.len() + 1);
        match rng.below(7) {
            0 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] ^= 1 << rng.below(8);
            }
            1 => input.insert(at, SPECIAL[rng.below(SPECIAL.len())]),
            2 if !input.is_empty() => {
                input.remove(rng.below(input.len()));
            }
            3 => {
                let other = SEEDS[rng.below(SEEDS.len())];
                let from = rng.below(other.len() + 1);
                let to = from + rng.below(other.len() - from + 1);
                input.splice(at..at, other[from..to].iter().copied());
            }
            4 => input.truncate(at),
            5 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] = SPECIAL[rng.below(SPECIAL.len())];
            }
            _ => {
                // Duplicate a run (repeated keys, long lines).
                let from = rng.below(input.len() + 1);
                let to = from + rng.below((input.len() - from).min(40) + 1);
                let run = input[from..to].to_vec();
                input.splice(at..at, run);
            }
        }
    }
    input.truncate(4096);
}

/// Known columns for some names, so conflicts with "existing tables" occur.
struct Known;

impl ColumnTypes for Known {
    fn lookup(&mut self, measurement: &str, column: &str) -> Option<KnownColumn> {
        match (measurement, column) {
            ("m", "f") => Some(KnownColumn::Field(FieldKind::Float)),
            ("m", "t") => Some(KnownColumn::Tag),
            ("cpu", "usage_user") => Some(KnownColumn::Field(FieldKind::Integer)),
            ("m", "s") => Some(KnownColumn::Text),
            ("m", "g") => Some(KnownColumn::Other("timestamptz".into())),
            _ => None,
        }
    }
}

fn options_for(control: u64) -> (ParseOptions, bool) {
    let precision = [
        Precision::Nanoseconds,
        Precision::Microseconds,
        Precision::Milliseconds,
        Precision::Seconds,
        Precision::Minutes,
        Precision::Hours,
    ][(control % 6) as usize];
    let options = ParseOptions {
        precision,
        default_time_ns: 1_700_000_000_000_000_000,
        stop_at_first_error: control & 8 != 0,
        first_line_number: 1 + (control >> 8) % 1000,
        first_byte_offset: (control >> 20) % 100_000,
    };
    (options, control & 16 != 0)
}

/// Feeds `input` cut at `cuts`, re-feeding what each call left, as a
/// streaming caller does; checks the per-call invariants.
fn feed(
    input: &[u8],
    cuts: &[usize],
    options: &ParseOptions,
    use_known: bool,
) -> (ParsedLines, usize) {
    let mut out = ParsedLines::new();
    let mut pending = Vec::new();
    let mut opts = options.clone();
    let mut taken = 0;
    let mut consumed = 0;
    let ends: Vec<usize> = cuts.iter().copied().chain([input.len()]).collect();
    for (i, &end) in ends.iter().enumerate() {
        pending.extend_from_slice(&input[taken..end]);
        taken = end;
        if use_known {
            parse_lines(&pending, i + 1 == ends.len(), &opts, &mut Known, &mut out);
        } else {
            parse_lines(
                &pending,
                i + 1 == ends.len(),
                &opts,
                &mut NoKnownColumns,
                &mut out,
            );
        }
        assert!(
            out.consumed <= pending.len(),
            "consumed {} of {}",
            out.consumed,
            pending.len()
        );
        assert_eq!(
            out.next_byte_offset,
            opts.first_byte_offset + out.consumed as u64
        );
        check_shape(&out);
        consumed += out.consumed;
        pending.drain(..out.consumed);
        opts = opts.continuing(&out);
        if out.stopped_at_error {
            break;
        }
    }
    (out, consumed)
}

fn check_shape(out: &ParsedLines) {
    assert_eq!(out.lines_seen, out.lines_ok + out.lines_failed);
    let rows: usize = out.measurements.iter().map(|m| m.rows).sum();
    assert_eq!(rows as u64, out.lines_ok);
    for m in &out.measurements {
        assert!(m.rows > 0, "empty batch {:?}", m.name);
        assert_eq!(m.time.len(), m.rows);
        assert_eq!(m.line_numbers.len(), m.rows);
        for t in &m.tags {
            assert_eq!(t.values.len(), m.rows, "tag {:?}", t.key);
            assert_eq!(t.validity.len(), m.rows, "tag {:?}", t.key);
            assert!(t.values.offsets.windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(
                *t.values.offsets.last().unwrap() as usize,
                t.values.data.len()
            );
            assert!(std::str::from_utf8(&t.values.data).is_ok());
            assert!(!t.values.data.contains(&0));
        }
        for f in &m.fields {
            assert_eq!(f.data.len(), m.rows, "field {:?}", f.key);
            assert_eq!(f.validity.len(), m.rows, "field {:?}", f.key);
            let kind_ok = matches!(
                (&f.data, f.kind),
                (ColumnData::Float64(_), FieldKind::Float)
                    | (
                        ColumnData::Int64(_),
                        FieldKind::Integer | FieldKind::Unsigned
                    )
                    | (ColumnData::Bool(_), FieldKind::Boolean)
                    | (ColumnData::Bytes(_), FieldKind::String)
            );
            assert!(kind_ok, "{:?} holds {:?}", f.kind, f.data);
            if let ColumnData::Float64(v) = &f.data {
                assert!(v.iter().all(|x| x.is_finite()));
            }
            if let ColumnData::Bytes(v) = &f.data {
                assert!(std::str::from_utf8(&v.data).is_ok());
            }
            assert_ne!(f.key, "time");
        }
    }
}

/// The two parses hold the same rows, errors and counters.
fn assert_same(a: &ParsedLines, b: &ParsedLines, input: &[u8], cut: usize) {
    let context = || format!("cut {cut} of {:?}", String::from_utf8_lossy(input));
    assert_eq!(a.measurements.len(), b.measurements.len(), "{}", context());
    for (x, y) in a.measurements.iter().zip(&b.measurements) {
        assert_eq!(x.name, y.name, "{}", context());
        assert_eq!(x.rows, y.rows, "{}", context());
        assert_eq!(x.time, y.time, "{}", context());
        assert_eq!(x.line_numbers, y.line_numbers, "{}", context());
        assert_eq!(x.tags, y.tags, "{}", context());
        assert_eq!(x.fields.len(), y.fields.len(), "{}", context());
        for (f, g) in x.fields.iter().zip(&y.fields) {
            assert_eq!(
                (&f.key, f.kind, &f.validity),
                (&g.key, g.kind, &g.validity),
                "{}",
                context()
            );
            match (&f.data, &g.data) {
                // Bit patterns: -0.0 and 0.0 differ.
                (ColumnData::Float64(p), ColumnData::Float64(q)) => {
                    let bits = |v: &Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(p), bits(q), "{}", context());
                }
                (p, q) => assert_eq!(p, q, "{}", context()),
            }
        }
    }
    assert_eq!(a.errors, b.errors, "{}", context());
    assert_eq!(
        (
            a.lines_ok,
            a.lines_failed,
            a.lines_seen,
            a.next_line_number,
            a.stopped_at_error
        ),
        (
            b.lines_ok,
            b.lines_failed,
            b.lines_seen,
            b.next_line_number,
            b.stopped_at_error
        ),
        "{}",
        context()
    );
}

#[test]
fn mutated_line_protocol_keeps_invariants() {
    let started = Instant::now();
    let mut rng = Rng(0x6c69_6e65_7072_6f74);
    let mut done = 0;
    let mut rows = 0u64;
    let mut errors = 0u64;
    while done < ITERATIONS && started.elapsed() < TIME_LIMIT {
        let mut input = SEEDS[rng.below(SEEDS.len())].to_vec();
        // Small inputs most of the time: more cases per second.
        if rng.below(4) != 0 {
            let from = rng.below(input.len());
            let len = 1 + rng.below(120);
            input = input[from..(from + len).min(input.len())].to_vec();
        }
        mutate(&mut rng, &mut input);
        let control = rng.next();
        let (options, use_known) = options_for(control);
        let (whole, consumed) = feed(&input, &[], &options, use_known);
        if !options.stop_at_first_error {
            assert_eq!(consumed, input.len(), "a final feed consumes everything");
        }
        let cut = rng.below(input.len() + 1);
        let (split, split_consumed) = feed(&input, &[cut], &options, use_known);
        assert_same(&whole, &split, &input, cut);
        assert_eq!(consumed, split_consumed);
        rows += whole.lines_ok;
        errors += whole.lines_failed;
        done += 1;
    }
    eprintln!(
        "line protocol fuzz: {done} cases in {:.1} s ({rows} rows accepted, {errors} lines rejected)",
        started.elapsed().as_secs_f64()
    );
    assert!(done >= 1000, "only {done} cases ran");
    assert!(rows > 0 && errors > 0, "the corpus exercises both outcomes");
}
