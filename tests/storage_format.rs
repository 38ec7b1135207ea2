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
            Datum::Numeric(rust_decimal::Decimal::new(1250, 2)),
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
            Datum::Numeric(rust_decimal::Decimal::new(-5, 0)),
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
            RecordType::Commit | RecordType::GroupEnd => out += "\n",
        }
    }
    out
}

#[test]
fn wal_vectors() {
    let file = vectors().join("wal-v1-shard001-0000000000000000.wal");
    let expected = vectors().join("wal-v1-shard001-0000000000000000.expected.txt");
    if std::env::var("BREWRIC_WRITE_VECTORS").is_ok() {
        std::fs::write(&file, wal_segment()).unwrap();
        std::fs::write(&expected, render(&wal_segment())).unwrap();
    }
    let bytes = std::fs::read(&file).expect("golden WAL segment");
    assert_eq!(
        render(&bytes),
        std::fs::read_to_string(&expected).expect("its expected decoding")
    );
    assert_eq!(
        bytes,
        wal_segment(),
        "the encoder no longer writes the golden bytes"
    );
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
