//! Arbitrary bytes as a parameter or COPY field of every SQL type, in both
//! of PostgreSQL's formats: what a client sends in Bind and COPY, untrusted.
//! The first byte picks the type, the second the format and the session
//! (TimeZone, extra_float_digits); the rest is the value.
//!
//! Checks: no panic; a value accepted in text form prints as text that reads
//! back to the same value and the same text (`format ∘ parse` is idempotent);
//! a value accepted in binary form encodes to bytes that decode to the same
//! value; a value read either way survives the other format's round trip.
//! Seeds: `fuzz/seeds/pg_values`.

#![no_main]

use brewric::types::array::ALL;
use brewric::types::binary::{decode_binary, encode_binary};
use brewric::types::text::{format_text, parse_text};
use brewric::types::{DataType, Datum, FormatContext, Zone};
use libfuzzer_sys::fuzz_target;

const SCALARS: [DataType; 20] = [
    DataType::Bool,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::Float32,
    DataType::Float64,
    DataType::Numeric,
    DataType::Text,
    DataType::Varchar(None),
    DataType::Varchar(Some(4)),
    DataType::Bpchar(Some(3)),
    DataType::Bytea,
    DataType::Date,
    DataType::Timestamp,
    DataType::TimestampTz,
    DataType::Interval,
    DataType::Jsonb,
    DataType::Record,
    DataType::Name,
    DataType::Oid,
];

fn data_type(pick: u8) -> DataType {
    let pick = pick as usize % (SCALARS.len() + ALL.len());
    match SCALARS.get(pick) {
        Some(t) => *t,
        None => DataType::Array(ALL[pick - SCALARS.len()]),
    }
}

fn context(pick: u8) -> FormatContext {
    let zone = match (pick >> 1) % 4 {
        0 => Some(Zone::UTC),
        1 => Zone::from_setting("America/New_York"),
        2 => Zone::from_setting("Asia/Kathmandu"),
        _ => Zone::from_setting("-03:30"),
    };
    FormatContext {
        zone: zone.unwrap_or(Zone::UTC),
        extra_float_digits: if pick & 0x08 == 0 { 1 } else { 0 },
    }
}

fn text_of(ty: DataType, value: &Datum, ctx: &FormatContext) -> String {
    let mut out = Vec::new();
    format_text(ty, value, ctx, &mut out);
    String::from_utf8(out).expect("text output is UTF-8")
}

fn binary_of(ty: DataType, value: &Datum) -> Vec<u8> {
    let mut out = Vec::new();
    encode_binary(ty, value, &mut out);
    out
}

/// Values compared by their binary form (NaN equals itself there, and
/// `Datum`'s `PartialEq` would not say so), except that NaNs' payload bits
/// are not kept: every NaN prints, and reads back, as the one `NaN`.
fn same(ty: DataType, a: &Datum, b: &Datum) -> bool {
    let exact = FormatContext::default();
    binary_of(ty, a) == binary_of(ty, b) || {
        let text = text_of(ty, a, &exact);
        text.contains("NaN") && text == text_of(ty, b, &exact)
    }
}

/// Text that PostgreSQL prints and does not read back either: an interval
/// whose time part is the smallest i64 of microseconds (binary input takes
/// it; interval_in's magnitude overflows). The same 22007 here.
fn unreadable_in_postgres(printed: &str) -> bool {
    printed.contains("-2562047788:00:54.775808")
}

fuzz_target!(|data: &[u8]| {
    let [type_pick, mode, value @ ..] = data else { return };
    let ty = data_type(*type_pick);
    let ctx = context(*mode);
    // Rounded text (extra_float_digits 0) does not read back exactly.
    let exact_text = ctx.extra_float_digits == 1;
    // An anonymous record has no text input, as in PostgreSQL (0A000).
    let text_reads = ty != DataType::Record;
    let read = if mode & 1 == 0 {
        let Ok(input) = std::str::from_utf8(value) else { return };
        let Ok(parsed) = parse_text(ty, input, &ctx) else { return };
        let printed = text_of(ty, &parsed, &ctx);
        let again = parse_text(ty, &printed, &ctx)
            .unwrap_or_else(|e| panic!("{ty:?}: {input:?} printed as {printed:?}, which does not read back: {e:?}"));
        assert_eq!(printed, text_of(ty, &again, &ctx), "{ty:?}: text of {input:?} is not stable");
        if exact_text {
            assert!(same(ty, &parsed, &again), "{ty:?}: {input:?} -> {printed:?} changed the value");
        }
        parsed
    } else {
        let Ok(decoded) = decode_binary(ty, value) else { return };
        let encoded = binary_of(ty, &decoded);
        let again = decode_binary(ty, &encoded)
            .unwrap_or_else(|e| panic!("{ty:?}: {value:?} encoded as {encoded:?}, which does not decode: {e:?}"));
        assert!(same(ty, &decoded, &again), "{ty:?}: binary round trip of {value:?} changed the value");
        decoded
    };
    // The other format: binary always round-trips; text does when exact.
    let encoded = binary_of(ty, &read);
    let from_binary = decode_binary(ty, &encoded)
        .unwrap_or_else(|e| panic!("{ty:?}: {read:?} encoded as {encoded:?}, which does not decode: {e:?}"));
    assert!(same(ty, &read, &from_binary), "{ty:?}: {read:?} changed through binary");
    if !text_reads {
        return;
    }
    let printed = text_of(ty, &read, &ctx);
    if unreadable_in_postgres(&printed) {
        return;
    }
    let from_text = parse_text(ty, &printed, &ctx)
        .unwrap_or_else(|e| panic!("{ty:?}: {read:?} printed as {printed:?}, which does not read back: {e:?}"));
    if exact_text {
        assert!(same(ty, &read, &from_text), "{ty:?}: {read:?} -> {printed:?} changed the value");
    }
});
