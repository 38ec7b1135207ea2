//! The parser against every parser case of the line protocol reference
//! (shared/reference/lineprotocol.md §4, numbered as there), plus streaming
//! (every 2-chunk split gives the one-feed result), absolute positions,
//! stop-at-first-error, known columns, type conflicts and NULL back-fill.

use super::*;
use crate::exec::vector::ColumnData;

const DEFAULT_TIME: i64 = 1_700_000_000_123_456_789;

fn options() -> ParseOptions {
    ParseOptions {
        precision: Precision::Nanoseconds,
        default_time_ns: DEFAULT_TIME,
        stop_at_first_error: false,
        first_line_number: 1,
        first_byte_offset: 0,
    }
}

fn parse_with(input: &[u8], options: &ParseOptions, known: &mut dyn ColumnTypes) -> ParsedLines {
    let mut out = ParsedLines::new();
    parse_lines(input, true, options, known, &mut out);
    check_shape(&out);
    out
}

fn parse(input: &str) -> ParsedLines {
    parse_with(input.as_bytes(), &options(), &mut NoKnownColumns)
}

/// Every column of every batch is exactly `rows` long.
fn check_shape(out: &ParsedLines) {
    for m in &out.measurements {
        assert_eq!(m.time.len(), m.rows, "{}", m.name);
        assert_eq!(m.line_numbers.len(), m.rows);
        for t in &m.tags {
            assert_eq!(t.values.len(), m.rows, "tag {}", t.key);
            assert_eq!(t.validity.len(), m.rows, "tag {}", t.key);
        }
        for f in &m.fields {
            assert_eq!(f.data.len(), m.rows, "field {}", f.key);
            assert_eq!(f.validity.len(), m.rows, "field {}", f.key);
        }
    }
}

/// The message of the only error of `input` (which must have no rows).
fn error_of(input: &str) -> String {
    let out = parse(input);
    assert_eq!(out.lines_ok, 0, "{input:?} was accepted");
    assert_eq!(out.errors.len(), 1, "{input:?}: {:?}", out.errors);
    out.errors[0].message.clone()
}

#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    F(f64),
    I(i64),
    U(i64),
    S(String),
    B(bool),
    Tag(String),
}

fn cell(m: &MeasurementBatch, key: &str, row: usize) -> V {
    if let Some(t) = m.tag(key) {
        if !t.validity.get(row) {
            return V::Null;
        }
        return V::Tag(String::from_utf8(t.values.get(row).to_vec()).unwrap());
    }
    let f = m.field(key).unwrap_or_else(|| panic!("no column {key}"));
    if !f.validity.get(row) {
        return V::Null;
    }
    match (&f.data, f.kind) {
        (ColumnData::Float64(v), FieldKind::Float) => V::F(v[row]),
        (ColumnData::Int64(v), FieldKind::Integer) => V::I(v[row]),
        (ColumnData::Int64(v), FieldKind::Unsigned) => V::U(v[row]),
        (ColumnData::Bool(v), FieldKind::Boolean) => V::B(v[row]),
        (ColumnData::Bytes(v), FieldKind::String) => {
            V::S(String::from_utf8(v.get(row).to_vec()).unwrap())
        }
        other => panic!("bad column {other:?}"),
    }
}

/// The single row of `input`'s only measurement.
fn row(input: &str) -> (String, Vec<(String, V)>, i64) {
    let out = parse(input);
    assert!(out.errors.is_empty(), "{input:?}: {:?}", out.errors);
    assert_eq!(out.measurements.len(), 1, "{input:?}");
    let m = &out.measurements[0];
    assert_eq!(m.rows, 1, "{input:?}");
    let mut cols: Vec<(String, V)> = m
        .tags
        .iter()
        .map(|t| (t.key.clone(), cell(m, &t.key, 0)))
        .collect();
    cols.extend(m.fields.iter().map(|f| (f.key.clone(), cell(m, &f.key, 0))));
    (m.name.clone(), cols, m.time[0])
}

fn value(input: &str, key: &str) -> V {
    let (_, cols, _) = row(input);
    cols.into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("{input:?}: no {key}"))
}

fn cols(pairs: &[(&str, V)]) -> Vec<(String, V)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Everything a parse produced, as text, for comparing two parses.
fn dump(out: &ParsedLines) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for m in &out.measurements {
        writeln!(
            s,
            "measurement {:?} rows={} time={:?} lines={:?}",
            m.name, m.rows, m.time, m.line_numbers
        )
        .unwrap();
        for t in &m.tags {
            let vals: Vec<String> = (0..m.rows)
                .map(|r| format!("{:?}", cell(m, &t.key, r)))
                .collect();
            writeln!(s, "  tag {:?} {}", t.key, vals.join(",")).unwrap();
        }
        for f in &m.fields {
            let vals: Vec<String> = (0..m.rows)
                .map(|r| match cell(m, &f.key, r) {
                    V::F(x) => format!("F({:x})", x.to_bits()),
                    v => format!("{v:?}"),
                })
                .collect();
            writeln!(s, "  field {:?} {:?} {}", f.key, f.kind, vals.join(",")).unwrap();
        }
    }
    for e in &out.errors {
        writeln!(
            s,
            "error line={} offset={} {:?} {:?}",
            e.line, e.offset, e.message, e.text
        )
        .unwrap();
    }
    writeln!(
        s,
        "ok={} failed={} seen={}",
        out.lines_ok, out.lines_failed, out.lines_seen
    )
    .unwrap();
    s
}

/// Feeds `input` cut at `cuts` (ascending), re-feeding what each call did
/// not consume, as a streaming caller does.
fn feed_chunks(
    input: &[u8],
    cuts: &[usize],
    options: &ParseOptions,
    known: &mut dyn ColumnTypes,
) -> (ParsedLines, usize) {
    let mut out = ParsedLines::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut opts = options.clone();
    let mut taken = 0;
    let mut consumed_total = 0;
    let ends: Vec<usize> = cuts.iter().copied().chain([input.len()]).collect();
    for (i, &end) in ends.iter().enumerate() {
        pending.extend_from_slice(&input[taken..end]);
        taken = end;
        let is_final = i == ends.len() - 1;
        parse_lines(&pending, is_final, &opts, known, &mut out);
        check_shape(&out);
        assert!(out.consumed <= pending.len());
        assert_eq!(
            out.next_byte_offset,
            opts.first_byte_offset + out.consumed as u64
        );
        consumed_total += out.consumed;
        pending.drain(..out.consumed);
        opts = opts.continuing(&out);
        if out.stopped_at_error {
            break;
        }
    }
    (out, consumed_total)
}

// ---- Valid input (cases 1-26) ----

#[test]
fn case_01_float_without_tags_gets_server_time() {
    assert_eq!(
        row("m f=1"),
        ("m".into(), cols(&[("f", V::F(1.0))]), DEFAULT_TIME)
    );
}

#[test]
fn case_02_integer_bounds() {
    assert_eq!(value("m f=1i", "f"), V::I(1));
    assert_eq!(value("m f=-9223372036854775808i", "f"), V::I(i64::MIN));
    assert_eq!(value("m f=9223372036854775807i", "f"), V::I(i64::MAX));
    assert_eq!(value("m f=-0i", "f"), V::I(0));
    assert_eq!(value("m f=0012i", "f"), V::I(12));
}

#[test]
fn case_03_unsigned() {
    assert_eq!(value("m f=0u", "f"), V::U(0));
    assert_eq!(value("m f=9223372036854775807u", "f"), V::U(i64::MAX));
    // Brewric stores unsigned in bigint: above i64::MAX is refused.
    assert_eq!(
        error_of("m f=18446744073709551615u"),
        "unsigned value 18446744073709551615 out of range for bigint (max 9223372036854775807)"
    );
    assert_eq!(
        error_of("m f=9223372036854775808u"),
        "unsigned value 9223372036854775808 out of range for bigint (max 9223372036854775807)"
    );
}

#[test]
fn case_04_float_spellings() {
    assert_eq!(value("m f=1.e+78", "f"), V::F(1e78));
    assert_eq!(value("m f=1E5", "f"), V::F(1e5));
    assert_eq!(value("m f=.5", "f"), V::F(0.5));
    assert_eq!(value("m f=1.", "f"), V::F(1.0));
    assert_eq!(value("m f=-1.5e-3", "f"), V::F(-1.5e-3));
    assert_eq!(value("m f=0.123", "f"), V::F(0.123));
    assert_eq!(
        value("m f=12345678901234567890", "f"),
        V::F(12345678901234567890.0)
    );
    assert_eq!(
        value("m f=3.141592653589793238", "f"),
        V::F(std::f64::consts::PI)
    );
    match value("m f=-0.0", "f") {
        V::F(z) => assert!(z == 0.0 && z.is_sign_negative()),
        other => panic!("{other:?}"),
    }
    match value("m f=-0", "f") {
        V::F(z) => assert!(z == 0.0 && z.is_sign_negative()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn case_05_booleans() {
    for t in ["t", "T", "true", "True", "TRUE"] {
        assert_eq!(value(&format!("m f={t}"), "f"), V::B(true), "{t}");
    }
    for f in ["f", "F", "false", "False", "FALSE"] {
        assert_eq!(value(&format!("m f={f}"), "f"), V::B(false), "{f}");
    }
}

#[test]
fn case_06_quoted_true_is_a_string() {
    assert_eq!(value("m f=\"true\"", "f"), V::S("true".into()));
}

#[test]
fn case_07_empty_string() {
    assert_eq!(value("m f=\"\"", "f"), V::S(String::new()));
}

#[test]
fn case_08_separators_inside_quotes_are_data() {
    assert_eq!(value("m f=\"a,b c=d\"", "f"), V::S("a,b c=d".into()));
    assert_eq!(value("m f=\"a,b c=d\",g=1i 5", "g"), V::I(1));
}

#[test]
fn case_09_string_escapes() {
    assert_eq!(
        value(r#"m f="say \"hi\"""#, "f"),
        V::S(r#"say "hi""#.into())
    );
    assert_eq!(value(r#"m f="C:\\dir""#, "f"), V::S(r"C:\dir".into()));
    assert_eq!(value(r#"m f="a\b""#, "f"), V::S(r"a\b".into()));
    assert_eq!(value(r#"m f="a\\""#, "f"), V::S(r"a\".into()));
}

#[test]
fn case_10_newline_inside_quotes_stays_in_the_line() {
    let out = parse("m f=\"line1\nline2\",g=1i 7\nm f=\"x\" 8\nbad\n");
    let m = &out.measurements[0];
    assert_eq!(m.rows, 2);
    assert_eq!(cell(m, "f", 0), V::S("line1\nline2".into()));
    assert_eq!(cell(m, "g", 0), V::I(1));
    assert_eq!(m.time, vec![7, 8]);
    // Physical line numbers: the second point starts on line 3.
    assert_eq!(m.line_numbers, vec![1, 3]);
    assert_eq!(out.errors[0].line, 4);
    assert_eq!(out.errors[0].message, "missing fields");
}

#[test]
fn case_11_measurement_escapes() {
    assert_eq!(row(r"my\ meas,t=1 f=1").0, "my meas");
    assert_eq!(row(r"m\,x f=1").0, "m,x");
    assert_eq!(row(r"m=x f=1").0, "m=x");
    assert_eq!(row(r#""m" f=1"#).0, "\"m\"");
}

#[test]
fn case_12_tag_escapes() {
    let (_, c, _) = row(r"m,tag\ key=tag\ val\,x\=y f=1");
    assert_eq!(c[0], ("tag key".to_string(), V::Tag("tag val,x=y".into())));
}

#[test]
fn case_13_quotes_in_tag_values_are_data() {
    assert_eq!(value(r#"m,t="q" f=1"#, "t"), V::Tag("\"q\"".into()));
}

#[test]
fn case_14_field_key_escapes() {
    let (_, c, _) = row(r"m field\ key=1,f\,k=2,f\=k=3");
    assert_eq!(
        c,
        cols(&[
            ("field key", V::F(1.0)),
            ("f,k", V::F(2.0)),
            ("f=k", V::F(3.0))
        ])
    );
}

#[test]
fn case_15_unsorted_tags() {
    let (_, c, _) = row("m,b=2,a=1 f=1");
    assert_eq!(c[0], ("b".to_string(), V::Tag("2".into())));
    assert_eq!(c[1], ("a".to_string(), V::Tag("1".into())));
}

#[test]
fn case_16_negative_timestamp() {
    assert_eq!(row("m f=1 -1").2, -1);
    assert_eq!(row("m f=1 -9223372036854775806").2, -9223372036854775806);
}

#[test]
fn case_17_precision() {
    assert_eq!(row("m f=1 1465839830100400200").2, 1465839830100400200);
    let seconds = ParseOptions {
        precision: Precision::Seconds,
        ..options()
    };
    let out = parse_with(b"m f=1 1465839830", &seconds, &mut NoKnownColumns);
    assert_eq!(out.measurements[0].time, vec![1_465_839_830_000_000_000]);
    let hours = ParseOptions {
        precision: Precision::Hours,
        ..options()
    };
    let out = parse_with(b"m f=1 2\nm f=1 -3", &hours, &mut NoKnownColumns);
    assert_eq!(
        out.measurements[0].time,
        vec![7_200_000_000_000, -10_800_000_000_000]
    );
}

#[test]
fn case_18_mixed_types() {
    let (_, c, t) = row("m f=1,g=2i,h=\"x\",i=t 1");
    assert_eq!(
        c,
        cols(&[
            ("f", V::F(1.0)),
            ("g", V::I(2)),
            ("h", V::S("x".into())),
            ("i", V::B(true))
        ])
    );
    assert_eq!(t, 1);
}

#[test]
fn case_19_comments_and_blank_lines() {
    let out = parse("# comment\n\n   \n\t\nm f=1\n  # indented comment with \"quote\n#\nm f=2\n");
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.lines_seen, 2);
    assert_eq!(out.measurements[0].line_numbers, vec![5, 8]);
    assert_eq!(parse("# only a comment").lines_seen, 0);
    assert_eq!(parse("").lines_seen, 0);
}

#[test]
fn case_20_leading_whitespace() {
    assert_eq!(row("   m f=1").0, "m");
    assert_eq!(row("\t \tm f=1").0, "m");
}

#[test]
fn case_21_extra_spaces_between_sections() {
    assert_eq!(row("m  f=1").1, cols(&[("f", V::F(1.0))]));
    assert_eq!(row("m f=1  123").2, 123);
    assert_eq!(row("m,t=a   f=1 \t 123").2, 123);
}

#[test]
fn case_22_trailing_spaces() {
    assert_eq!(row("m f=1 123 ").2, 123);
    assert_eq!(row("m f=1 123   \n").2, 123);
    assert_eq!(row("m f=1 ").2, DEFAULT_TIME);
}

#[test]
fn case_23_last_line_without_newline() {
    let out = parse("m f=1\nm f=2");
    assert_eq!(out.lines_ok, 2);
    assert_eq!(out.consumed, 11);
    // Not final: the unterminated line waits for more input.
    let mut out = ParsedLines::new();
    parse_lines(
        b"m f=1\nm f=2",
        false,
        &options(),
        &mut NoKnownColumns,
        &mut out,
    );
    assert_eq!(
        (out.lines_ok, out.consumed, out.next_line_number),
        (1, 6, 2)
    );
}

#[test]
fn case_24_utf8() {
    let (name, c, _) = row("m\u{e9}tr\u{e9},t=🍭 f=\"🚀\"");
    assert_eq!(name, "m\u{e9}tr\u{e9}");
    assert_eq!(
        c,
        cols(&[("t", V::Tag("🍭".into())), ("f", V::S("🚀".into()))])
    );
}

#[test]
fn case_25_backslash_before_ordinary_byte_is_literal() {
    assert_eq!(value(r"m,t=a\b f=1", "t"), V::Tag(r"a\b".into()));
    // Backslash runs (docs table): \\ is one backslash.
    assert_eq!(value(r"m,t=a\\b f=1", "t"), V::Tag(r"a\b".into()));
    assert_eq!(value(r"m,t=a\\\b f=1", "t"), V::Tag(r"a\\b".into()));
    assert_eq!(value(r"m,t=a\\\\b f=1", "t"), V::Tag(r"a\\b".into()));
    // A name ending in a backslash is spelled with an escaped one.
    assert_eq!(value(r"m,t=a\\ f=1", "t"), V::Tag(r"a\".into()));
}

#[test]
fn case_26_long_lines() {
    let mut line = String::from("m");
    for i in 0..300 {
        line.push_str(&format!(",tag{i}=v{i}"));
    }
    line.push(' ');
    for i in 0..500 {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&format!("f{i}={i}i"));
    }
    let big = "x".repeat(64 * 1024);
    line.push_str(&format!(",s=\"{big}\" 42"));
    let out = parse(&line);
    assert!(
        out.errors.is_empty(),
        "{:?}",
        out.errors.first().map(|e| &e.message)
    );
    let m = &out.measurements[0];
    assert_eq!((m.tags.len(), m.fields.len(), m.time[0]), (300, 501, 42));
    assert_eq!(cell(m, "tag299", 0), V::Tag("v299".into()));
    assert_eq!(cell(m, "f499", 0), V::I(499));
    assert_eq!(cell(m, "s", 0), V::S(big));
}

// ---- Invalid input (cases 28-52) ----

#[test]
fn case_28_missing_fields() {
    assert_eq!(error_of("m"), "missing fields");
    assert_eq!(error_of("m,t=1"), "missing fields");
    assert_eq!(error_of("m,t=1 "), "missing fields");
    assert_eq!(error_of("m "), "missing fields");
    assert_eq!(error_of("m\n"), "missing fields");
    // After leading whitespace is skipped, " f=1" is a measurement "f=1"
    // without fields, as in Go.
    assert_eq!(error_of(" f=1"), "missing fields");
}

#[test]
fn case_29_missing_measurement() {
    assert_eq!(error_of(",t=1 f=1"), "missing measurement");
    assert_eq!(error_of("  ,t=1 f=1"), "missing measurement");
}

#[test]
fn case_30_missing_tag_key() {
    assert_eq!(error_of("m, f=1"), "missing tag key");
    assert_eq!(error_of("m,=v f=1"), "missing tag key");
    assert_eq!(error_of("m,t=1,,u=2 f=1"), "missing tag key");
    assert_eq!(error_of("m,"), "missing tag key");
}

#[test]
fn case_31_missing_tag_value() {
    assert_eq!(error_of("m,t f=1"), "missing tag value");
    assert_eq!(error_of("m,t= f=1"), "missing tag value");
    assert_eq!(error_of("m,t=,u=1 f=1"), "missing tag value");
    assert_eq!(error_of("m,t"), "missing tag value");
    assert_eq!(error_of("m,t="), "missing tag value");
}

#[test]
fn case_32_invalid_tag_format() {
    assert_eq!(error_of("m,t=a=b f=1"), "invalid tag format");
    assert_eq!(error_of("m,t== f=1"), "invalid tag format");
}

#[test]
fn case_33_duplicate_tags() {
    assert_eq!(error_of("m,t=1,t=2 f=1"), "duplicate tags");
    assert_eq!(error_of(r"m,t\ x=1,t\ x=2 f=1"), "duplicate tags");
    // Through the position caches and the batch's columns as well.
    let out =
        parse("m,a=1,b=2 f=1\nm,a=1,a=2 f=1\nm,b=1,a=2,b=3 f=1\nm,c=1,c=2 f=1\nm,a=1,b=2 f=1");
    let messages: Vec<_> = out
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (2, "duplicate tags"),
            (3, "duplicate tags"),
            (4, "duplicate tags")
        ]
    );
    assert_eq!(out.lines_ok, 2);
    // Duplicate tags are found before a later syntax error, as in Go.
    assert_eq!(error_of("m,t=1,t=2 f="), "duplicate tags");
}

#[test]
fn case_34_missing_field_key() {
    assert_eq!(error_of("m =1"), "missing field key");
    assert_eq!(error_of("m f=1,=2"), "missing field key");
}

#[test]
fn case_35_missing_field_value() {
    assert_eq!(error_of("m f="), "missing field value");
    assert_eq!(error_of("m f=,g=1"), "missing field value");
    assert_eq!(error_of("m f= 1"), "missing field value");
    assert_eq!(error_of("m f=\r\n"), "missing field value");
}

#[test]
fn case_36_invalid_field_format() {
    assert_eq!(error_of("m f"), "invalid field format");
    assert_eq!(error_of("m f=1,g"), "invalid field format");
    assert_eq!(error_of("m f=1,"), "invalid field format");
    assert_eq!(error_of("m f=1, g=2"), "invalid field format");
    assert_eq!(error_of("m ,f=1"), "invalid field format");
    assert_eq!(error_of("m f=\"a\"b"), "invalid field format");
}

#[test]
fn case_37_unbalanced_quotes() {
    assert_eq!(error_of("m f=\"abc"), "unbalanced quotes");
    assert_eq!(error_of("m f=\"abc\\\""), "unbalanced quotes");
    // The open string runs to the end of the input: one bad line.
    let out = parse("m f=\"abc\nm f=1\nm f=2\n");
    assert_eq!((out.lines_ok, out.lines_seen), (0, 1));
}

#[test]
fn case_38_invalid_number() {
    for bad in ["1.2.3", "1-2", "-", "0x10", "-.", ".", "1a", "--1", "1e+-5"] {
        assert_eq!(error_of(&format!("m f={bad}")), "invalid number", "{bad}");
    }
}

#[test]
fn case_39_nan_and_inf() {
    for bad in ["NaN", "nan", "Inf", "-inf", "inf", "-NaN"] {
        assert_eq!(error_of(&format!("m f={bad}")), "invalid number", "{bad}");
    }
}

#[test]
fn case_40_invalid_float_and_number() {
    assert_eq!(error_of("m f=1e400"), "invalid float");
    assert_eq!(error_of("m f=-1e400"), "invalid float");
    assert_eq!(error_of("m f=1e"), "invalid float");
    for bad in ["1.5i", "1e3i", "9i10", "1ii", "1.5u"] {
        assert_eq!(error_of(&format!("m f={bad}")), "invalid number", "{bad}");
    }
}

#[test]
fn case_41_integer_out_of_range() {
    assert_eq!(
        error_of("m f=9223372036854775808i"),
        "unable to parse integer 9223372036854775808: value out of range"
    );
    assert_eq!(
        error_of("m f=-9223372036854775809i"),
        "unable to parse integer -9223372036854775809: value out of range"
    );
}

#[test]
fn case_42_invalid_unsigned() {
    assert_eq!(error_of("m f=-1u"), "invalid number");
    assert_eq!(
        error_of("m f=18446744073709551616u"),
        "unable to parse unsigned 18446744073709551616: value out of range"
    );
}

#[test]
fn case_43_invalid_boolean() {
    for bad in ["tru", "yes", "tRUE", "'x'", "falsey", "+5", "TRUe"] {
        assert_eq!(error_of(&format!("m f={bad}")), "invalid boolean", "{bad}");
    }
}

#[test]
fn case_44_bad_timestamp() {
    assert_eq!(error_of("m f=1 abc123"), "bad timestamp");
    assert_eq!(error_of("m f=1 \"123\""), "bad timestamp");
    assert_eq!(error_of("m f=1 1.5"), "bad timestamp");
    assert_eq!(error_of("m f=1 -"), "bad timestamp");
    assert_eq!(error_of("m f=1 12\t"), "bad timestamp");
}

#[test]
fn case_45_point_is_invalid() {
    assert_eq!(error_of("m f=1 1 2"), "point is invalid");
    assert_eq!(error_of("m f=1 1 \t"), "point is invalid");
}

#[test]
fn case_46_time_outside_range() {
    let range = "time outside range -9223372036854775806 - 9223372036854775806";
    assert_eq!(error_of("m f=1 9223372036854775807"), range);
    assert_eq!(error_of("m f=1 -9223372036854775807"), range);
    assert_eq!(error_of("m f=1 99999999999999999999"), range);
    assert_eq!(row("m f=1 9223372036854775806").2, 9223372036854775806);
    let hours = ParseOptions {
        precision: Precision::Hours,
        ..options()
    };
    let out = parse_with(b"m f=1 2562048\nm f=1 2562047", &hours, &mut NoKnownColumns);
    assert_eq!(
        out.errors
            .iter()
            .map(|e| e.message.as_str())
            .collect::<Vec<_>>(),
        vec![range]
    );
    assert_eq!(
        out.measurements[0].time,
        vec![2_562_047 * 3_600_000_000_000]
    );
}

#[test]
fn case_47_max_key_length() {
    // Key section alone too long: "m,t=" + 70000 bytes.
    let long = "x".repeat(70_000);
    assert_eq!(
        error_of(&format!("m,t={long} f=1")),
        "max key length exceeded: 70004 > 65535"
    );
    // Series key + "#!~#" + field key over the limit.
    let tag = "y".repeat(65_520);
    let key_len = 4 + tag.len();
    let field = "f".repeat(20);
    assert_eq!(
        error_of(&format!("m,t={tag} {field}=1")),
        format!(
            "max key length exceeded: {} > 65535",
            key_len + 4 + field.len()
        )
    );
    assert_eq!(row(&format!("m,t={tag} f=1")).1.len(), 2);
}

#[test]
fn case_48_trailing_backslash_escapes_the_space() {
    // The escaped space keeps the tag value going; Go's scanTagsValue then
    // meets the unescaped `=` of `f=1` (the reference says "missing fields",
    // which is what Go gives when no `=` follows).
    assert_eq!(error_of(r"m,t=a\ f=1"), "invalid tag format");
    assert_eq!(error_of(r"m,t=a\ f"), "missing fields");
    assert_eq!(error_of(r"m\ f=1"), "missing fields");
}

#[test]
fn case_49_time_is_reserved() {
    assert_eq!(
        error_of("m time=1"),
        "invalid field name: input field \"time\" on measurement \"m\" is invalid"
    );
    assert_eq!(
        error_of("m time=1,f=2"),
        "invalid field name: input field \"time\" on measurement \"m\" is invalid"
    );
    assert_eq!(
        error_of("m,time=1 f=1"),
        "invalid tag key: input tag \"time\" on measurement \"m\" is invalid"
    );
    // Other names are fine, `time` in a value too.
    assert_eq!(value("m,t=time times=1", "t"), V::Tag("time".into()));
}

#[test]
fn case_50_type_conflict_in_one_parse() {
    let out = parse("m f=1.0\nm f=1i\nm f=2\nm f=\"s\"\nm f=1u\nm,f=x g=1\nm f=t\nm g=1,f=3");
    let messages: Vec<_> = out
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (2, "field type conflict: input field \"f\" on measurement \"m\" is type integer, already exists as type float"),
            (4, "field type conflict: input field \"f\" on measurement \"m\" is type string, already exists as type float"),
            (5, "field type conflict: input field \"f\" on measurement \"m\" is type unsigned, already exists as type float"),
            (6, "tag/field conflict: input tag \"f\" on measurement \"m\" already exists as a field of type float"),
            (7, "field type conflict: input field \"f\" on measurement \"m\" is type boolean, already exists as type float"),
        ]
    );
    let m = &out.measurements[0];
    assert_eq!(m.rows, 3);
    assert_eq!(m.line_numbers, vec![1, 3, 8]);
    // A rejected line creates nothing: `g` appears with line 8 only.
    assert_eq!(
        m.fields.iter().map(|f| f.key.as_str()).collect::<Vec<_>>(),
        vec!["f", "g"]
    );
    assert_eq!(cell(m, "g", 0), V::Null);
    // Integer and unsigned are different types (both are stored as Int64),
    // on the steady-state path too.
    let out = parse("m f=1i\nm f=1u");
    assert_eq!(
        out.errors[0].message,
        "field type conflict: input field \"f\" on measurement \"m\" is type unsigned, already exists as type integer"
    );
    let out = parse("m,t=a f=1u,g=1 1\nm,t=b f=2i,g=2 2\nm,t=c f=3u,g=3i 3");
    let messages: Vec<_> = out
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (2, "field type conflict: input field \"f\" on measurement \"m\" is type integer, already exists as type unsigned"),
            (3, "field type conflict: input field \"g\" on measurement \"m\" is type integer, already exists as type float"),
        ]
    );
    // A field against a tag of the same measurement, and in one line.
    assert_eq!(
        parse("m,t=a f=1\nm t=1").errors[0].message,
        "tag/field conflict: input field \"t\" on measurement \"m\" already exists as a tag"
    );
    assert_eq!(
        error_of("m,t=a t=1"),
        "tag/field conflict: input field \"t\" on measurement \"m\" already exists as a tag"
    );
    // Other measurements are independent.
    assert_eq!(parse("a f=1\nb f=1i").lines_ok, 2);
}

#[test]
fn case_51_invalid_utf8() {
    let out = parse_with(
        b"m f=1\nm,t=\xff f=1\nm f=\"\xc3\x28\"\nm\xe2\x82 f=1\nm f=2",
        &options(),
        &mut NoKnownColumns,
    );
    let messages: Vec<_> = out
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (2, "invalid byte sequence for encoding \"UTF8\": 0xff"),
            (3, "invalid byte sequence for encoding \"UTF8\": 0xc3"),
            (4, "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82"),
        ]
    );
    assert_eq!(out.errors[0].offset, 10);
    assert_eq!(out.errors[0].text, "m,t=\u{fffd} f=1");
    assert_eq!(out.lines_ok, 2);
    // A NUL inside a name or value cannot be stored in text.
    let out = parse_with(
        b"m,t=a\0b f=1\n\0m f=\"x\0\"\n\0 m \0f=1 \x005",
        &options(),
        &mut NoKnownColumns,
    );
    let messages: Vec<_> = out.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        vec!["invalid byte sequence for encoding \"UTF8\": 0x00"; 2]
    );
    // Before a line and between sections a NUL is whitespace (Go).
    assert_eq!(out.measurements[0].time, vec![5]);
}

#[test]
fn case_52_crlf_line_endings() {
    let out = parse("m f=1 1\r\nm,t=a s=\"x\" 2\r\nm g=t\r\n\r\n# c\r\nm f=2\r");
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let m = &out.measurements[0];
    assert_eq!(m.time, vec![1, 2, DEFAULT_TIME, DEFAULT_TIME]);
    assert_eq!(cell(m, "t", 1), V::Tag("a".into()));
    assert_eq!(cell(m, "g", 2), V::B(true));
    assert_eq!(cell(m, "f", 3), V::F(2.0));
    // A CR inside a token is data, and only one trailing CR is stripped.
    assert_eq!(value("m,t=a\rb f=1", "t"), V::Tag("a\rb".into()));
    assert_eq!(error_of("m f=1 1\r\r\n"), "bad timestamp");
    // The error text leaves the line end out.
    assert_eq!(parse("m\r\n").errors[0].text, "m");
}

// ---- Errors: positions and text ----

#[test]
fn error_positions_and_display() {
    let out = parse("m f=1\n  m,t=a=b f=1\n");
    let e = &out.errors[0];
    assert_eq!((e.line, e.offset), (2, 13));
    assert_eq!(e.text, "m,t=a=b f=1");
    assert_eq!(
        e.to_string(),
        "unable to parse 'm,t=a=b f=1': invalid tag format"
    );
    // Long lines are cut on a character boundary.
    let long = format!("m,t={} f=", "é".repeat(300));
    let e = &parse(&long).errors[0];
    assert!(
        e.text.len() <= ERROR_TEXT_MAX && e.text.len() >= ERROR_TEXT_MAX - 3,
        "{}",
        e.text.len()
    );
    assert!(e.text.ends_with('é'));
}

#[test]
fn absolute_line_numbers_and_offsets() {
    let opts = ParseOptions {
        first_line_number: 100,
        first_byte_offset: 5000,
        ..options()
    };
    let out = parse_with(b"m f=1\n\nm f=\nm f=2", &opts, &mut NoKnownColumns);
    assert_eq!(out.measurements[0].line_numbers, vec![100, 103]);
    assert_eq!((out.errors[0].line, out.errors[0].offset), (102, 5011));
    assert_eq!((out.next_line_number, out.next_byte_offset), (104, 5017));
}

#[test]
fn many_errors_are_counted_but_not_all_kept() {
    let input = "x\n".repeat(MAX_ERRORS_KEPT + 10);
    let out = parse(&input);
    assert_eq!(out.errors.len(), MAX_ERRORS_KEPT);
    assert_eq!(out.lines_failed, MAX_ERRORS_KEPT as u64 + 10);
}

// ---- Stop at first error ----

#[test]
fn stop_at_first_error_keeps_earlier_rows() {
    let opts = ParseOptions {
        stop_at_first_error: true,
        ..options()
    };
    let input = b"m f=1\nm f=2\n m,t f=3\nm f=4\n";
    let mut out = ParsedLines::new();
    parse_lines(input, true, &opts, &mut NoKnownColumns, &mut out);
    assert!(out.stopped_at_error);
    assert_eq!(out.lines_ok, 2);
    assert_eq!(out.measurements[0].rows, 2);
    assert_eq!(out.consumed, 12);
    assert_eq!(out.next_line_number, 3);
    assert_eq!(out.errors.len(), 1);
    assert_eq!(
        (out.errors[0].line, out.errors[0].message.as_str()),
        (3, "missing tag value")
    );
    // A semantic error stops too.
    let mut out = ParsedLines::new();
    parse_lines(
        b"m f=1\nm f=1i\nm f=2\n",
        true,
        &opts,
        &mut NoKnownColumns,
        &mut out,
    );
    assert_eq!(
        (out.lines_ok, out.consumed, out.stopped_at_error),
        (1, 6, true)
    );
}

// ---- Known columns ----

#[test]
fn known_columns_are_asked_once_and_enforced() {
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut known = |m: &str, c: &str| {
        calls.push((m.to_string(), c.to_string()));
        match (m, c) {
            ("cpu", "usage") => Some(KnownColumn::Field(FieldKind::Float)),
            ("cpu", "host") => Some(KnownColumn::Tag),
            ("cpu", "note") => Some(KnownColumn::Text),
            ("cpu", "when") => Some(KnownColumn::Other("timestamptz".to_string())),
            _ => None,
        }
    };
    let input = "cpu,host=a usage=1i\n\
                 cpu,host=a usage=2i\n\
                 cpu host=1\n\
                 cpu,host=a usage=0.5\n\
                 cpu,host=b usage=1i\n\
                 cpu,usage=x v=1\n\
                 cpu note=1i\n\
                 cpu note=\"ok\"\n\
                 cpu,when=x v=1\n\
                 cpu when=1\n\
                 disk,usage=x v=1\n";
    let out = parse_with(input.as_bytes(), &options(), &mut known);
    let messages: Vec<_> = out
        .errors
        .iter()
        .map(|e| (e.line, e.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (1, "field type conflict: input field \"usage\" on measurement \"cpu\" is type integer, already exists as type float"),
            (2, "field type conflict: input field \"usage\" on measurement \"cpu\" is type integer, already exists as type float"),
            (3, "tag/field conflict: input field \"host\" on measurement \"cpu\" already exists as a tag"),
            (5, "field type conflict: input field \"usage\" on measurement \"cpu\" is type integer, already exists as type float"),
            (6, "tag/field conflict: input tag \"usage\" on measurement \"cpu\" already exists as a field of type float"),
            (7, "field type conflict: input field \"note\" on measurement \"cpu\" is type integer, already exists as type string"),
            (9, "column type conflict: input tag \"when\" on measurement \"cpu\" is text, already exists as type timestamptz"),
            (10, "field type conflict: input field \"when\" on measurement \"cpu\" is type float, already exists as type timestamptz"),
        ]
    );
    assert_eq!(out.lines_ok, 3);
    let cpu = out.measurement("cpu").unwrap();
    assert_eq!(cpu.line_numbers, vec![4, 8]);
    assert_eq!(cell(cpu, "usage", 0), V::F(0.5));
    assert_eq!(cell(cpu, "note", 1), V::S("ok".into()));
    assert_eq!(out.measurement("disk").unwrap().rows, 1);
    // One question per (measurement, column), however often it appears.
    let mut asked = calls.clone();
    asked.sort();
    asked.dedup();
    assert_eq!(asked.len(), calls.len(), "{calls:?}");
}

// ---- NULLs ----

#[test]
fn missing_and_late_columns_are_null() {
    let out = parse("m a=1\nm,t=x b=2i\nm a=3,c=\"s\"\nm,t=y a=4,b=5i,c=\"u\",d=f");
    let m = &out.measurements[0];
    assert_eq!(m.rows, 4);
    let col = |k: &str| (0..4).map(|r| cell(m, k, r)).collect::<Vec<_>>();
    assert_eq!(col("a"), vec![V::F(1.0), V::Null, V::F(3.0), V::F(4.0)]);
    assert_eq!(
        col("t"),
        vec![V::Null, V::Tag("x".into()), V::Null, V::Tag("y".into())]
    );
    assert_eq!(col("b"), vec![V::Null, V::I(2), V::Null, V::I(5)]);
    assert_eq!(
        col("c"),
        vec![V::Null, V::Null, V::S("s".into()), V::S("u".into())]
    );
    assert_eq!(col("d"), vec![V::Null, V::Null, V::Null, V::B(false)]);
    // NULL slots hold defaults.
    match &m.fields[0].data {
        ColumnData::Float64(v) => assert_eq!(v[1], 0.0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn duplicate_fields_last_wins() {
    assert_eq!(row("m f=1,f=2i").1, cols(&[("f", V::I(2))]));
    assert_eq!(
        row("m f=1,g=1,f=\"x\",g=2").1,
        cols(&[("f", V::S("x".into())), ("g", V::F(2.0))])
    );
    // Also when the column already exists (the batch's own path).
    let out = parse("m f=1,g=2\nm f=3,g=4,f=5\nm g=6,f=7,g=8");
    let m = &out.measurements[0];
    assert_eq!(
        (0..3).map(|r| cell(m, "f", r)).collect::<Vec<_>>(),
        vec![V::F(1.0), V::F(5.0), V::F(7.0)]
    );
    assert_eq!(
        (0..3).map(|r| cell(m, "g", r)).collect::<Vec<_>>(),
        vec![V::F(2.0), V::F(4.0), V::F(8.0)]
    );
}

#[test]
fn several_measurements_and_changing_shapes() {
    let input = "cpu,host=a,region=x usage=1i,idle=2i 10\n\
                 mem,host=a used=5i 10\n\
                 cpu,region=y,host=b idle=3i,usage=4i 20\n\
                 cpu,host=c usage=5i 30\n\
                 mem,host=b used=6i,free=1i 20\n\
                 cpu,host=d,region=z,rack=1 usage=6i,idle=7i,steal=0i 40\n";
    let out = parse(input);
    assert!(out.errors.is_empty());
    let cpu = out.measurement("cpu").unwrap();
    let col =
        |m: &MeasurementBatch, k: &str| (0..m.rows).map(|r| cell(m, k, r)).collect::<Vec<_>>();
    assert_eq!(
        col(cpu, "host"),
        ["a", "b", "c", "d"].map(|s| V::Tag(s.into())).to_vec()
    );
    assert_eq!(
        col(cpu, "region"),
        vec![
            V::Tag("x".into()),
            V::Tag("y".into()),
            V::Null,
            V::Tag("z".into())
        ]
    );
    assert_eq!(col(cpu, "usage"), vec![V::I(1), V::I(4), V::I(5), V::I(6)]);
    assert_eq!(col(cpu, "idle"), vec![V::I(2), V::I(3), V::Null, V::I(7)]);
    assert_eq!(
        col(cpu, "rack"),
        vec![V::Null, V::Null, V::Null, V::Tag("1".into())]
    );
    assert_eq!(cpu.time, vec![10, 20, 30, 40]);
    let mem = out.measurement("mem").unwrap();
    assert_eq!(col(mem, "free"), vec![V::Null, V::I(1)]);
    assert_eq!(mem.line_numbers, vec![2, 5]);
}

#[test]
fn batches_taken_between_calls_start_afresh() {
    let mut out = ParsedLines::new();
    let opts = options();
    parse_lines(b"m,t=a f=1\n", false, &opts, &mut NoKnownColumns, &mut out);
    let first = out.take_measurements();
    assert_eq!(first[0].rows, 1);
    parse_lines(
        b"m,t=b f=2\n",
        false,
        &opts.continuing(&out),
        &mut NoKnownColumns,
        &mut out,
    );
    assert_eq!(out.measurements[0].rows, 1);
    assert_eq!(out.measurements[0].line_numbers, vec![2]);
    // Edits to the public fields between calls do not break the parser.
    out.measurements[0].fields.clear();
    out.measurements[0].time.push(99);
    out.measurements[0].tags[0].values.offsets.clear();
    parse_lines(b"m,t=c f=3i\n", true, &opts, &mut NoKnownColumns, &mut out);
    check_shape(&out);
    assert_eq!(out.measurements[0].rows, 3);
    assert_eq!(cell(&out.measurements[0], "t", 2), V::Tag("c".into()));
}

#[test]
fn precision_spellings() {
    assert_eq!(Precision::parse_v1("n"), Some(Precision::Nanoseconds));
    assert_eq!(Precision::parse_v1("ns"), Some(Precision::Nanoseconds));
    assert_eq!(Precision::parse_v1("u"), Some(Precision::Microseconds));
    assert_eq!(Precision::parse_v1("us"), Some(Precision::Microseconds));
    assert_eq!(Precision::parse_v1("ms"), Some(Precision::Milliseconds));
    assert_eq!(Precision::parse_v1("s"), Some(Precision::Seconds));
    assert_eq!(Precision::parse_v1("m"), Some(Precision::Minutes));
    assert_eq!(Precision::parse_v1("h"), Some(Precision::Hours));
    assert_eq!(Precision::parse_v1("x"), None);
    assert_eq!(Precision::parse_v2("us"), Some(Precision::Microseconds));
    assert_eq!(Precision::parse_v2("m"), None);
    assert_eq!(Precision::parse_v2("n"), None);
    assert_eq!(Precision::Hours.nanos(), 3_600_000_000_000);
    assert_eq!(FieldKind::Unsigned.name(), "unsigned");
}

// ---- Streaming ----

/// Input touching every boundary a cut can fall on: quoted strings with
/// newlines and escaped quotes, CRLF, comments, blank lines, escapes, bad
/// lines of each family, new columns mid-stream, no final newline.
const STREAM: &[u8] = b"# header\r\n\
cpu,host=a,region=x usage=1i,idle=2.5 10\r\n\
\r\n\
cpu,host=b,region=y usage=3i,note=\"multi\nline \\\"q\\\" \r\nend\" 20\n\
  mem,host=a used=5u,ok=t\n\
cpu,host=a=b usage=1i\n\
cpu,host=c usage=1.5 30\n\
bad line \"with\nquote\n\
my\\ m,t\\,k=v\\ w f\\=k=\"s\\\\\" -5\n\
cpu,host=d usage=9i,extra=\"x\" 40\n\
\t# indented comment\n\
cpu,host=e usage=10i 1 2\n\
cpu,host=f,new=tag usage=11i,\xf0\x9f\x9a\x80=1 50\n\
mem,host=\xff used=1u\n\
cpu,host=g usage=12i 60";

#[test]
fn every_two_chunk_split_matches_one_feed() {
    for stop in [false, true] {
        let opts = ParseOptions {
            stop_at_first_error: stop,
            ..options()
        };
        let (whole, whole_consumed) = feed_chunks(STREAM, &[], &opts, &mut NoKnownColumns);
        let expected = dump(&whole);
        if !stop {
            assert!(whole.errors.len() >= 5, "{expected}");
            assert_eq!(whole_consumed, STREAM.len());
        }
        for cut in 0..=STREAM.len() {
            let (split, consumed) = feed_chunks(STREAM, &[cut], &opts, &mut NoKnownColumns);
            assert_eq!(dump(&split), expected, "cut at {cut} (stop={stop})");
            assert_eq!(consumed, whole_consumed, "cut at {cut}");
        }
    }
}

#[test]
fn byte_at_a_time_matches_one_feed() {
    let opts = options();
    let (whole, _) = feed_chunks(STREAM, &[], &opts, &mut NoKnownColumns);
    let cuts: Vec<usize> = (1..STREAM.len()).collect();
    let (split, _) = feed_chunks(STREAM, &cuts, &opts, &mut NoKnownColumns);
    assert_eq!(dump(&split), dump(&whole));
}

#[test]
fn streaming_waits_for_open_strings_and_crlf() {
    let opts = options();
    let mut out = ParsedLines::new();
    // Inside an open quoted string the newline is not a line end.
    parse_lines(b"m f=\"a\nb", false, &opts, &mut NoKnownColumns, &mut out);
    assert_eq!((out.consumed, out.lines_seen), (0, 0));
    // A CR at the end may be the first half of CRLF.
    parse_lines(b"m f=1\r", false, &opts, &mut NoKnownColumns, &mut out);
    assert_eq!((out.consumed, out.lines_seen), (0, 0));
    // A bad line is only reported once complete.
    parse_lines(
        b"m,t=a=b f=\"x",
        false,
        &opts,
        &mut NoKnownColumns,
        &mut out,
    );
    assert_eq!((out.consumed, out.lines_seen), (0, 0));
    // Whitespace and comments at the end wait too (they may be a line's start).
    parse_lines(b"m f=1\n  ", false, &opts, &mut NoKnownColumns, &mut out);
    assert_eq!(out.consumed, 6);
    parse_lines(
        b"# partial comm",
        false,
        &opts,
        &mut NoKnownColumns,
        &mut out,
    );
    assert_eq!(out.consumed, 0);
}

// ---- The steady-state path against the general path ----

/// A small deterministic mutator: flips, inserts special bytes, splices
/// lines, truncates.
struct Mutator(u64);

impl Mutator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn mutate(&mut self, input: &mut Vec<u8>, corpus: &[&[u8]]) {
        const SPECIAL: &[u8] = b" ,=\\\"\n\r\t\0#.-eiutfTF0123456789xX";
        for _ in 0..1 + self.below(3) {
            let at = self.below(input.len() + 1);
            match self.below(6) {
                0 if !input.is_empty() => {
                    let i = self.below(input.len());
                    input[i] = SPECIAL[self.below(SPECIAL.len())];
                }
                1 => input.insert(at, SPECIAL[self.below(SPECIAL.len())]),
                2 if !input.is_empty() => {
                    input.remove(self.below(input.len()));
                }
                3 => {
                    let other = corpus[self.below(corpus.len())];
                    let from = self.below(other.len() + 1);
                    let to = from + self.below(other.len() - from + 1);
                    input.splice(at..at, other[from..to].iter().copied());
                }
                4 => input.truncate(at),
                _ => {
                    let i = self.below(input.len() + 1);
                    input.insert(i, (self.next() & 0xFF) as u8);
                }
            }
        }
    }
}

fn parse_both_ways(input: &[u8], opts: &ParseOptions) -> (String, String) {
    let fast = dump(&parse_with(input, opts, &mut NoKnownColumns));
    parser::FAST_PATH.with(|f| f.set(false));
    let general = dump(&parse_with(input, opts, &mut NoKnownColumns));
    parser::FAST_PATH.with(|f| f.set(true));
    (fast, general)
}

const STEADY: &[u8] = b"cpu,host=a,region=x usage=1i,idle=2.5,ok=t,note=\"n\" 10\n\
cpu,host=b,region=y usage=2i,idle=3.5,ok=f,note=\"m\" 20\n\
cpu,host=c,region=z usage=3i,idle=4.5,ok=T,note=\"a\\\"b\" 30\n\
cpu,host=d usage=4i,idle=5.5 40\n\
cpu,host=e,region=w,rack=1 usage=5i,idle=6.5,ok=F,note=\"\",new=7u 50\n\
cpu,host=f,region=v,rack=2 usage=6i,idle=7.5,ok=t,note=\"z\",new=8u\n\
cpu,host=g,region=u,rack=3 usage=7i,idle=8.5,ok=true,note=\"q\nr\",new=9u 70\r\n\
mem,host=a used=1i 10\n\
cpu,host=h,region=t,rack=4 usage=8i,idle=9.5,ok=false,note=\"s\",new=10u 80\n";

#[test]
fn fast_path_matches_general_path() {
    let corpus: [&[u8]; 2] = [STEADY, STREAM];
    let mut rng = Mutator(0x5eed_1234_abcd_0001);
    for base in corpus {
        let (fast, general) = parse_both_ways(base, &options());
        assert_eq!(fast, general);
    }
    for i in 0..4000 {
        let mut input = corpus[i % 2].to_vec();
        rng.mutate(&mut input, &corpus);
        for stop in [false, true] {
            let opts = ParseOptions {
                stop_at_first_error: stop,
                precision: if i % 3 == 0 {
                    Precision::Hours
                } else {
                    Precision::Nanoseconds
                },
                ..options()
            };
            let (fast, general) = parse_both_ways(&input, &opts);
            assert_eq!(fast, general, "input {:?}", String::from_utf8_lossy(&input));
        }
    }
}

#[test]
fn mutated_input_keeps_invariants_and_split_equivalence() {
    let corpus: [&[u8]; 2] = [STEADY, STREAM];
    let mut rng = Mutator(0x0dd_ba11_5eed_0002);
    for i in 0..3000 {
        let mut input = corpus[i % 2].to_vec();
        rng.mutate(&mut input, &corpus);
        let opts = ParseOptions {
            stop_at_first_error: i % 5 == 0,
            ..options()
        };
        let (whole, consumed) = feed_chunks(&input, &[], &opts, &mut NoKnownColumns);
        assert!(consumed <= input.len());
        let cut = rng.below(input.len() + 1);
        let (split, split_consumed) = feed_chunks(&input, &[cut], &opts, &mut NoKnownColumns);
        assert_eq!(
            dump(&split),
            dump(&whole),
            "cut {cut} of {:?}",
            String::from_utf8_lossy(&input)
        );
        assert_eq!(split_consumed, consumed);
    }
}
