//! Golden files of the on-disk formats (storage-format/vectors/): every
//! version of Brewric must still read them. Each vector is a file and a text
//! rendering of what it decodes to; the test decodes the file, renders it and
//! compares, and re-encodes the same content and compares the bytes.
//! `BREWRIC_WRITE_VECTORS=1 cargo test --test storage_format` (re)writes them,
//! for a new format version only (and with a CHANGELOG entry).

use std::path::PathBuf;

use brewric::catalog::TableDef;
use brewric::exec::vector::{Batch, Column};
use brewric::types::{DataType, Datum, Interval};
use brewric::wal::codec::{decode_batch, encode_batch, Reader};
use brewric::wal::record::{
    decode_segment_header, encode_record, encode_segment_header, read_all, RecordType,
    SegmentHeader, FLAG_SELF_COMMITTED, SEGMENT_HEADER_BYTES,
};

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("storage-format/vectors")
}

fn table_types() -> Vec<DataType> {
    vec![
        DataType::TimestampTz,
        DataType::Text,
        DataType::Float64,
        DataType::Bool,
        DataType::Numeric,
        DataType::Interval,
        DataType::Int32,
    ]
}

fn sample_batch() -> Batch {
    let rows: Vec<Vec<Datum>> = vec![
        vec![
            Datum::Int64(1_767_225_600_000_000_000),
            Datum::text("r1"),
            Datum::Float64(97.5),
            Datum::Bool(true),
            Datum::Numeric(rust_decimal::Decimal::new(1250, 2).into()),
            Datum::Interval(Interval {
                months: 1,
                days: 2,
                micros: 3_000_000,
            }),
            Datum::Int32(-7),
        ],
        vec![
            Datum::Int64(i64::MAX),
            Datum::Null,
            Datum::Float64(-0.25),
            Datum::Bool(false),
            Datum::Null,
            Datum::Null,
            Datum::Int32(i32::MAX),
        ],
        vec![
            Datum::Int64(0),
            Datum::text("ünïcödé 'quoted'"),
            Datum::Null,
            Datum::Null,
            Datum::Numeric(rust_decimal::Decimal::new(-5, 0).into()),
            Datum::Interval(Interval {
                months: 0,
                days: 0,
                micros: -1,
            }),
            Datum::Null,
        ],
    ];
    let cols = table_types()
        .iter()
        .enumerate()
        .map(|(c, t)| {
            Column::from_datums(*t, &rows.iter().map(|r| r[c].clone()).collect::<Vec<_>>())
        })
        .collect();
    Batch::from_columns(cols)
}

/// The golden WAL segment: shard 1, segment 0, with every record type.
fn wal_segment() -> Vec<u8> {
    let mut out = encode_segment_header(&SegmentHeader {
        shard: 1,
        segment: 0,
    })
    .to_vec();
    let rows = |txn: u64, table: u32| {
        let mut p = txn.to_le_bytes().to_vec();
        p.extend_from_slice(&table.to_le_bytes());
        encode_batch(&sample_batch(), &mut p);
        p
    };
    encode_record(
        RecordType::Rows,
        FLAG_SELF_COMMITTED,
        0,
        &rows(7, 16390),
        &mut out,
    );
    encode_record(RecordType::Rows, 0, 1, &rows(8, 16390), &mut out);
    encode_record(RecordType::Commit, 0, 2, &8u64.to_le_bytes(), &mut out);
    let mut t = 9u64.to_le_bytes().to_vec();
    t.extend_from_slice(&16390u32.to_le_bytes());
    encode_record(RecordType::Truncate, FLAG_SELF_COMMITTED, 3, &t, &mut out);
    // A DELETE of two days: the removal, then (here none) the days' kept rows.
    let mut d = 10u64.to_le_bytes().to_vec();
    d.extend_from_slice(&16390u32.to_le_bytes());
    d.extend_from_slice(&0u32.to_le_bytes());
    d.extend_from_slice(&1u32.to_le_bytes());
    d.extend_from_slice(&(86_400_000_000_000i64 * 3).to_le_bytes());
    d.extend_from_slice(&(86_400_000_000_000i64 * 5).to_le_bytes());
    encode_record(RecordType::DropRanges, FLAG_SELF_COMMITTED, 4, &d, &mut out);
    out
}

/// What the segment decodes to, one line per record and row.
fn render(bytes: &[u8]) -> String {
    let header = decode_segment_header(bytes).expect("segment header");
    let mut out = format!("segment shard={} number={}\n", header.shard, header.segment);
    let (records, _, damage) = read_all(&bytes[SEGMENT_HEADER_BYTES..]);
    assert_eq!(damage, None);
    for r in records {
        let mut rd = Reader::new(r.payload);
        let txn = rd.u64().unwrap();
        out += &format!(
            "record lsn={} type={:?} flags={} txn={txn}",
            r.lsn, r.record_type, r.flags
        );
        match r.record_type {
            RecordType::Rows => {
                let table = rd.u32().unwrap();
                let batch = decode_batch(&mut rd, &table_types()).unwrap();
                out += &format!(" table={table} rows={}\n", batch.len);
                for i in 0..batch.len {
                    out += &format!("  {:?}\n", batch.row(i));
                }
            }
            RecordType::Truncate => out += &format!(" table={}\n", rd.u32().unwrap()),
            RecordType::DropBefore => out += &format!(" table={} cutoff={}\n", rd.u32().unwrap(), rd.u64().unwrap() as i64),
            RecordType::DropRanges => {
                out += &format!(" table={} time_column={}", rd.u32().unwrap(), rd.u32().unwrap());
                for _ in 0..rd.u32().unwrap() {
                    out += &format!(" [{}, {})", rd.u64().unwrap() as i64, rd.u64().unwrap() as i64);
                }
                out += "\n";
            }
            RecordType::RecordingRows => {
                let r = brewric::storage::recordings::RecordingRef::decode(&mut rd).unwrap();
                out += &format!(" file={} chunks={} targets={}\n", r.file, r.chunks.len(), r.targets.len());
            }
            RecordType::Commit | RecordType::GroupEnd => out += "\n",
        }
    }
    out
}

/// Golden WAL segments: format 1 (frozen) and the current format (rewritten
/// by `BREWRIC_WRITE_VECTORS=1`); both read to the same records.
#[test]
fn wal_vectors() {
    let golden = |v: u32| {
        (
            vectors().join(format!("wal-v{v}-shard001-0000000000000000.wal")),
            vectors().join(format!("wal-v{v}-shard001-0000000000000000.expected.txt")),
        )
    };
    let (file, expected) = golden(2);
    if std::env::var("BREWRIC_WRITE_VECTORS").is_ok() {
        std::fs::write(&file, wal_segment()).unwrap();
        std::fs::write(&expected, render(&wal_segment())).unwrap();
    }
    for version in 1..=2 {
        let (file, expected) = golden(version);
        let bytes = std::fs::read(&file).expect("golden WAL segment");
        assert_eq!(render(&bytes), std::fs::read_to_string(&expected).expect("its expected decoding"), "{}", file.display());
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), version);
    }
    assert_eq!(std::fs::read(&file).unwrap(), wal_segment(), "the encoder no longer writes the golden bytes");
    let _ = std::mem::size_of::<TableDef>();
}

#[test]
fn catalog_vector() {
    let dir = vectors().join("catalog-v1");
    let catalog = brewric::catalog::persist::load(&dir)
        .expect("readable")
        .expect("present")
        .0;
    let t = catalog
        .database("brewric")
        .unwrap()
        .table("public", "readings")
        .expect("the readings table")
        .clone();
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "ts", "robot", "battery", "price"]);
    assert_eq!(
        t.columns[0].default.as_ref().map(|d| d.to_string()),
        Some("nextval('public.readings_id_seq')".to_string())
    );
    assert_eq!(t.columns[4].numeric_typmod, Some((10, 2)));
    assert_eq!(t.columns[2].data_type, DataType::Varchar(Some(16)));
}

// ------------------------------------------------------------------ segments

/// SplitMix64 for the segment vector's data (the benches' generator).
#[path = "../benches/support/rng.rs"]
mod rng;
use rng::Rng;

const SEG_ROWS: usize = 9000;

/// Columns chosen so that the golden segment exercises every block encoding
/// and the codecs' main schemes: regular and jittered timestamps, integers
/// constant / small / random / in runs, floats integer-valued, decimal,
/// random and slowly varying, text as dictionary and as plain + zstd,
/// booleans, numeric and interval (plain), NULLs in several.
fn segment_columns() -> Vec<(&'static str, DataType)> {
    vec![
        ("time", DataType::TimestampTz),
        ("jittered", DataType::Timestamp),
        ("tags_id", DataType::Int32),
        ("small", DataType::Int16),
        ("random", DataType::Int64),
        ("runs", DataType::Int64),
        ("usage", DataType::Float64),
        ("price", DataType::Float64),
        ("noise", DataType::Float64),
        ("sensor", DataType::Float32),
        ("host", DataType::Text),
        ("log", DataType::Text),
        ("ok", DataType::Bool),
        ("amount", DataType::Numeric),
        ("span", DataType::Interval),
        ("day", DataType::Date),
    ]
}

fn segment_rows() -> Batch {
    let mut rng = Rng(2026);
    let mut walk = 50.0f64;
    let mut cols: Vec<Vec<Datum>> = vec![Vec::with_capacity(SEG_ROWS); segment_columns().len()];
    for i in 0..SEG_ROWS {
        let t0 = 1_767_225_600_000_000_000i64;
        walk = (walk + (rng.unit() - 0.5) * 4.0).clamp(0.0, 100.0);
        let row = vec![
            Datum::Int64(t0 + i as i64 * 10_000_000_000),
            if i % 97 == 5 { Datum::Null } else { Datum::Int64(t0 + i as i64 * 1_000_000_000 + (rng.next() % 1000) as i64) },
            Datum::Int32((i / 1000) as i32),
            Datum::Int16((rng.next() % 7) as i16 - 3),
            Datum::Int64(rng.next() as i64),
            Datum::Int64((i / 300) as i64 * 1_000_003),
            Datum::Float64(walk.trunc()),
            Datum::Float64(((rng.next() % 100_000) as f64) / 100.0),
            if i % 50 == 7 { Datum::Null } else { Datum::Float64(rng.unit() * 1e6) },
            Datum::Float32((i as f32 * 0.01).sin() * 20.0 + rng.unit() as f32 * 0.001),
            Datum::text(format!("host_{}", i / 1000)),
            Datum::text(format!("{i:06} GET /api/v1/items/{} 200 {}ms user-agent=probe/{}", rng.next() % 100_000, rng.next() % 500, i % 3)),
            if i % 11 == 0 { Datum::Null } else { Datum::Bool(!rng.next().is_multiple_of(4)) },
            Datum::Numeric(rust_decimal::Decimal::new((rng.next() % 1_000_000) as i64 - 500_000, 3).into()),
            Datum::Interval(Interval { months: (i % 13) as i32, days: (i % 31) as i32, micros: (rng.next() % 86_400_000_000) as i64 }),
            Datum::Int32(20_000 + (i / 100) as i32),
        ];
        for (c, d) in row.into_iter().enumerate() {
            cols[c].push(d);
        }
    }
    let types: Vec<DataType> = segment_columns().iter().map(|c| c.1).collect();
    Batch::from_columns(cols.iter().zip(&types).map(|(v, t)| Column::from_datums(*t, v)).collect())
}

fn segment_bytes() -> Vec<u8> {
    use brewric::storage::segment::writer::{write_segment, SegmentSpec};
    use brewric::storage::segment::SegmentColumn;
    let columns = segment_columns().iter().map(|(n, t)| SegmentColumn { name: n.to_string(), type_oid: t.oid() }).collect();
    let spec = SegmentSpec { table: 16400, shard: 1, segment: 3, columns, series_columns: vec![2], time_column: Some(0) };
    write_segment(&spec, &segment_rows()).0
}

/// FNV-1a, to fingerprint each column's decoded values.
fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// What the segment decodes to: its footer (block by block: encoding and
/// flags), each column's row count and value fingerprint, and the first and
/// last rows in full.
fn render_segment(bytes: &[u8]) -> String {
    use brewric::storage::segment::reader::{decode_all, parse_segment};
    let (header, footer) = parse_segment("golden.seg", bytes).expect("the golden segment parses");
    let types: Vec<DataType> = segment_columns().iter().map(|c| c.1).collect();
    let groups = decode_all("golden.seg", bytes, &types).expect("every block decodes");
    let mut out = format!(
        "segment version={} table={} shard={} id={} rows={} groups={} series_columns={:?} series={} time=[{}, {}]\n",
        header.version,
        header.table,
        header.shard,
        header.segment,
        footer.rows,
        footer.groups.len(),
        footer.series_columns,
        footer.series.len(),
        footer.time_min,
        footer.time_max
    );
    for (c, (name, _)) in segment_columns().iter().enumerate() {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut n = 0;
        for g in &groups {
            for r in 0..g[c].len() {
                h = fnv(h, format!("{:?}", g[c].datum(r)).as_bytes());
                n += 1;
            }
        }
        let blocks: Vec<String> = footer
            .groups
            .iter()
            .map(|(_, b)| format!("enc{} flags{} nulls{}", b[c].header.encoding, b[c].header.flags, b[c].header.nulls))
            .collect();
        out += &format!("column {c} {name}: {n} values, fingerprint {h:016x}; blocks: {}\n", blocks.join(", "));
    }
    let row = |g: usize, r: usize| -> String {
        let vals: Vec<String> = groups[g].iter().map(|c| format!("{:?}", c.datum(r))).collect();
        vals.join(" | ")
    };
    for r in 0..3 {
        out += &format!("row {r}: {}\n", row(0, r));
    }
    let last = groups.len() - 1;
    let n = groups[last][0].len();
    out += &format!("row {}: {}\n", SEG_ROWS - 1, row(last, n - 1));
    out
}

/// Golden segments: versions 1, 2 and 3 (frozen, written by those formats)
/// and the current version (rewritten by `BREWRIC_WRITE_VECTORS=1`), all of
/// the same rows; every build must read them all to the same values.
#[test]
fn segment_vectors() {
    let golden = |v: u32| {
        (
            vectors().join(format!("segment-v{v}-16400-0000000000000003.seg")),
            vectors().join(format!("segment-v{v}-16400-0000000000000003.expected.txt")),
        )
    };
    let (file, expected) = golden(4);
    if std::env::var("BREWRIC_WRITE_VECTORS").is_ok() {
        std::fs::write(&file, segment_bytes()).unwrap();
        std::fs::write(&expected, render_segment(&segment_bytes())).unwrap();
    }
    let values = |s: &str| -> Vec<String> {
        s.lines().skip(1).map(|l| l.split("; blocks:").next().unwrap_or(l).to_string()).collect()
    };
    let mut rendered_values = Vec::new();
    for version in 1..=4 {
        let (file, expected) = golden(version);
        let bytes = std::fs::read(&file).expect("golden segment file");
        let rendered = render_segment(&bytes);
        assert_eq!(rendered, std::fs::read_to_string(&expected).expect("its expected decoding"), "{}", file.display());
        assert!(rendered.starts_with(&format!("segment version={version} ")));
        // Every block encoding appears in each golden file.
        for enc in 1..=7 {
            assert!(rendered.contains(&format!("enc{enc} ")), "block encoding {enc} is not covered in version {version}");
        }
        rendered_values.push(values(&rendered));
    }
    for (v, later) in rendered_values.iter().enumerate().skip(1) {
        assert_eq!(&rendered_values[0], later, "versions 1 and {} hold the same rows", v + 1);
    }
    // Writers may choose other encodings in later versions; what they write
    // now must decode to the same values as the golden files.
    let now = render_segment(&segment_bytes());
    assert_eq!(values(&now), rendered_values[3], "today's writer stores different values");
}

/// brewric-inspect over a golden segment: rows in psql's text form; a
/// reader that leaves early (`brewric-inspect … | head`) ends it quietly.
#[test]
fn inspect_shows_rows_as_text_and_ends_quietly_when_its_reader_leaves() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let seg = vectors().join("segment-v3-16400-0000000000000003.seg");
    let inspect = env!("CARGO_BIN_EXE_brewric-inspect");
    let out = Command::new(inspect).arg(&seg).args(["--rows", "2"]).output().expect("run brewric-inspect");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8 report");
    assert!(text.contains("version 3"), "{text}");
    assert!(
        text.contains("row 1: 2026-01-01 00:00:10+00 | 2026-01-01 00:00:01 | 0 | "),
        "row 1 as psql shows it:\n{text}"
    );
    let mut child = Command::new(inspect)
        .arg(&seg)
        .args(["--rows", "9000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run brewric-inspect");
    let mut first = [0u8; 64];
    child.stdout.as_mut().expect("piped stdout").read_exact(&mut first).expect("the report's start");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("brewric-inspect ends");
    assert!(out.status.success(), "exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
}
