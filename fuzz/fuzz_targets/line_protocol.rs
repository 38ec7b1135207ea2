//! Arbitrary bytes through the line protocol parser. The first byte picks
//! the options (precision, stop at first error, known columns) and a split
//! point; the rest is the input. Checks: no panic, every column exactly
//! `rows` long, `consumed` within the input, and the same result fed in
//! two chunks as in one.

#![no_main]

use brewric::exec::vector::ColumnData;
use brewric::ingest::line_protocol::{
    parse_lines, ColumnTypes, FieldKind, KnownColumn, ParseOptions, ParsedLines, Precision,
};
use libfuzzer_sys::fuzz_target;

struct Known(bool);

impl ColumnTypes for Known {
    fn lookup(&mut self, measurement: &str, column: &str) -> Option<KnownColumn> {
        if !self.0 {
            return None;
        }
        match (measurement, column) {
            ("m", "f") => Some(KnownColumn::Field(FieldKind::Float)),
            ("m", "t") => Some(KnownColumn::Tag),
            ("m", "s") => Some(KnownColumn::Text),
            ("m", "g") => Some(KnownColumn::Other("timestamptz".into())),
            _ => None,
        }
    }
}

fn feed(input: &[u8], cut: Option<usize>, options: &ParseOptions, known: bool) -> ParsedLines {
    let mut out = ParsedLines::new();
    let mut opts = options.clone();
    let mut pending = Vec::new();
    let ends: Vec<usize> = cut.into_iter().chain([input.len()]).collect();
    let mut taken = 0;
    for (i, &end) in ends.iter().enumerate() {
        pending.extend_from_slice(&input[taken..end]);
        taken = end;
        parse_lines(
            &pending,
            i + 1 == ends.len(),
            &opts,
            &mut Known(known),
            &mut out,
        );
        assert!(out.consumed <= pending.len());
        for m in &out.measurements {
            assert_eq!(m.time.len(), m.rows);
            assert_eq!(m.line_numbers.len(), m.rows);
            for t in &m.tags {
                assert_eq!(t.values.len(), m.rows);
                assert_eq!(t.validity.len(), m.rows);
            }
            for f in &m.fields {
                assert_eq!(f.data.len(), m.rows);
                assert_eq!(f.validity.len(), m.rows);
            }
        }
        pending.drain(..out.consumed);
        opts = opts.continuing(&out);
        if out.stopped_at_error {
            break;
        }
    }
    out
}

fn same(a: &ParsedLines, b: &ParsedLines) -> bool {
    let floats = |d: &ColumnData| match d {
        ColumnData::Float64(v) => v.iter().map(|x| x.to_bits()).collect(),
        _ => Vec::new(),
    };
    a.measurements.len() == b.measurements.len()
        && a.measurements.iter().zip(&b.measurements).all(|(x, y)| {
            x.name == y.name
                && x.rows == y.rows
                && x.time == y.time
                && x.line_numbers == y.line_numbers
                && x.tags == y.tags
                && x.fields.len() == y.fields.len()
                && x.fields
                    .iter()
                    .zip(&y.fields)
                    .all(|(f, g)| f == g && floats(&f.data) == floats(&g.data))
        })
        && a.errors == b.errors
        && (a.lines_ok, a.lines_failed, a.lines_seen, a.next_line_number)
            == (b.lines_ok, b.lines_failed, b.lines_seen, b.next_line_number)
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
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
        first_line_number: 1 + (control >> 5) as u64,
        first_byte_offset: control as u64 * 7,
    };
    let known = control & 16 != 0;
    let whole = feed(input, None, &options, known);
    let cut = (control as usize * 131 + input.len() / 2) % (input.len() + 1);
    let split = feed(input, Some(cut), &options, known);
    assert!(same(&whole, &split), "split at {cut} differs");
});
