//! brewric-inspect: dumps a segment file using the names of
//! storage-format/SPEC.md ("Segment files"): the header, the footer's
//! columns, every block group's blocks (offset, length, encoding, rows,
//! nulls, zone map, CRC — each block verified), the series index and the
//! time range; with `--rows N`, the first N decoded rows.
//!
//! Usage: `cargo run --release --bin brewric-inspect -- <file.seg> [--rows N]`

use std::io::Write;
use std::process::ExitCode;

use brewric::storage::segment::column::{
    ENC_BOOL, ENC_BYTES, ENC_FLOAT32, ENC_FLOAT64, ENC_INTEGER, ENC_PLAIN, ENC_TIMESTAMP,
};
use brewric::storage::segment::reader::{decode_block_bytes, parse_segment};
use brewric::storage::segment::{Footer, SegmentHeader};
use brewric::storage::segment::{FLAG_VALIDITY, FLAG_ZONE_MAP, FLAG_ZSTD};
use brewric::types::text::format_text;
use brewric::types::{DataType, Datum, FormatContext};

fn encoding_name(e: u8) -> &'static str {
    match e {
        ENC_INTEGER => "integer",
        ENC_TIMESTAMP => "timestamp",
        ENC_FLOAT64 => "float64",
        ENC_FLOAT32 => "float32",
        ENC_BYTES => "bytes",
        ENC_BOOL => "bool",
        ENC_PLAIN => "plain",
        _ => "unknown",
    }
}

fn flags(f: u8) -> String {
    let mut out = Vec::new();
    if f & FLAG_VALIDITY != 0 {
        out.push("validity");
    }
    if f & FLAG_ZSTD != 0 {
        out.push("zstd");
    }
    if f & FLAG_ZONE_MAP != 0 {
        out.push("zone_map");
    }
    if out.is_empty() {
        "-".into()
    } else {
        out.join("+")
    }
}

fn zone(t: DataType, min: i64, max: i64) -> String {
    match t {
        DataType::Float64 | DataType::Float32 => format!("[{}, {}]", f64::from_bits(min as u64), f64::from_bits(max as u64)),
        _ => format!("[{min}, {max}]"),
    }
}

/// A value as psql shows it (text format, UTC).
fn show(t: DataType, d: &Datum) -> String {
    if d.is_null() {
        return "NULL".into();
    }
    let mut out = Vec::new();
    format_text(t, d, &FormatContext::default(), &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: brewric-inspect <file.seg> [--rows N]");
        return ExitCode::from(2);
    };
    let rows_to_show: usize = args.iter().position(|a| a == "--rows").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(0);
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (header, footer) = match parse_segment(path, &bytes) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let bad = match report(path, &bytes, &header, &footer, rows_to_show, &mut out) {
        Ok(bad) => bad,
        // `brewric-inspect … | head`: the reader left; nothing more to say.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cannot write the report: {e}");
            return ExitCode::FAILURE;
        }
    };
    if bad > 0 {
        eprintln!("{bad} damaged blocks");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Writes the report; returns how many blocks failed to decode.
fn report(
    path: &str,
    bytes: &[u8],
    header: &SegmentHeader,
    footer: &Footer,
    rows_to_show: usize,
    out: &mut impl Write,
) -> std::io::Result<usize> {
    writeln!(out, "segment {path}: {} bytes", bytes.len())?;
    writeln!(out, "header: magic BRWRCSEG, version {}, table {}, shard {}, segment {}", header.version, header.table, header.shard, header.segment)?;
    writeln!(out, "footer: {} rows, {} block groups, {} columns", footer.rows, footer.groups.len(), footer.columns.len())?;
    let types: Vec<DataType> = footer.columns.iter().map(|c| DataType::from_oid(c.type_oid).unwrap_or(DataType::Bytea)).collect();
    for (i, c) in footer.columns.iter().enumerate() {
        writeln!(out, 
            "  column {i}: {} (type oid {}, {}), {} bytes in blocks ({:.3} bytes/row)",
            c.name,
            c.type_oid,
            types[i].name(),
            footer.column_bytes(i),
            footer.column_bytes(i) as f64 / footer.rows.max(1) as f64
        )?;
    }
    match footer.time_column {
        Some(t) => writeln!(out, "time column {t}: [{}, {}] ns", footer.time_min, footer.time_max)?,
        None => writeln!(out, "time column: none")?,
    }
    let mut bad = 0;
    for (g, (rows, blocks)) in footer.groups.iter().enumerate() {
        writeln!(out, "block group {g}: {rows} rows")?;
        for (c, b) in blocks.iter().enumerate() {
            let h = &b.header;
            let check = match decode_block_bytes(path, b, &bytes[b.offset as usize..(b.offset + b.len as u64) as usize], types[c]) {
                Ok(_) => "ok".to_string(),
                Err(e) => {
                    bad += 1;
                    format!("DAMAGED: {e}")
                }
            };
            writeln!(out, 
                "  block {g}.{c} ({}): offset {} length {} encoding {} flags {} rows {} nulls {} stored {} raw {} crc {:08x} zone {} — {check}",
                footer.columns[c].name,
                b.offset,
                b.len,
                encoding_name(h.encoding),
                flags(h.flags),
                h.rows,
                h.nulls,
                h.stored_len,
                h.raw_len,
                h.crc,
                if h.has_zone_map() { zone(types[c], h.min, h.max) } else { "-".into() },
            )?;
        }
    }
    let key_names: Vec<&str> = footer.series_columns.iter().map(|&c| footer.columns[c as usize].name.as_str()).collect();
    writeln!(out, "series index on ({}): {} series", key_names.join(", "), footer.series.len())?;
    for s in footer.series.iter().take(20) {
        let key: Vec<String> = s
            .key
            .iter()
            .map(|k| match k {
                None => "NULL".into(),
                Some(b) if b.len() == 8 => i64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])).to_string(),
                Some(b) => format!("{:?}", String::from_utf8_lossy(b)),
            })
            .collect();
        writeln!(out, "  rows {}..{}: ({})", s.first_row, s.first_row + s.rows, key.join(", "))?;
    }
    if footer.series.len() > 20 {
        writeln!(out, "  … {} more", footer.series.len() - 20)?;
    }
    if rows_to_show > 0 {
        let mut shown = 0;
        'groups: for (rows, blocks) in &footer.groups {
            let cols: Vec<_> = blocks
                .iter()
                .enumerate()
                .filter_map(|(c, b)| decode_block_bytes(path, b, &bytes[b.offset as usize..(b.offset + b.len as u64) as usize], types[c]).ok())
                .collect();
            if cols.len() != blocks.len() {
                continue;
            }
            for r in 0..*rows as usize {
                if shown == rows_to_show {
                    break 'groups;
                }
                let vals: Vec<String> = cols.iter().zip(&types).map(|(c, &t)| show(t, &c.datum(r))).collect();
                writeln!(out, "row {shown}: {}", vals.join(" | "))?;
                shown += 1;
            }
        }
    }
    Ok(bad)
}
