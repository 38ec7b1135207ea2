//! Segment scan speed and size on TSBS cpu-only data (the storage issue's
//! targets): 100 hosts × 1 day at 10 s (864,000 rows; time, tags_id and
//! ten usage_* float8 fields, integer-valued clamped random walks), sorted
//! by (tags_id, time) as a flush writes it. Prints bytes per row of the
//! encoded segment, then measures, per core:
//! - `decode+sum usage_user`: verify and decode every block of one float8
//!   column from cached compressed block bytes (what a scan does on a cache
//!   hit) and sum it; target ≥ 2 G rows/s;
//! - `decode time` and `decode tags_id`: the other columns a TSBS query reads.
//!
//! Run: `cargo bench --bench scan`.

use std::hint::black_box;
use std::sync::Arc;

use brewric::exec::vector::{Batch, Column, ColumnData};
use brewric::storage::segment::reader::{decode_block_bytes, parse_segment};
use brewric::storage::segment::writer::{write_segment, SegmentSpec};
use brewric::storage::segment::SegmentColumn;
use brewric::types::DataType;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const HOSTS: usize = 100;
const POINTS: usize = 8640;
const T0: i64 = 1_451_606_400_000_000_000;
const TEN_S: i64 = 10_000_000_000;
const FIELDS: [&str; 10] = [
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
];

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// The table as a flush would write it: sorted by host, then time.
fn tsbs_rows() -> Batch {
    let mut rng = Rng(42);
    let n = HOSTS * POINTS;
    let mut time = Vec::with_capacity(n);
    let mut tags = Vec::with_capacity(n);
    let mut fields: Vec<Vec<f64>> = vec![Vec::with_capacity(n); FIELDS.len()];
    for h in 0..HOSTS {
        let mut walk: Vec<f64> = (0..FIELDS.len()).map(|_| rng.unit() * 100.0).collect();
        for p in 0..POINTS {
            time.push(T0 + p as i64 * TEN_S);
            tags.push(h as i32 + 1);
            for (f, w) in walk.iter_mut().enumerate() {
                *w = (*w + rng.normal()).clamp(0.0, 100.0);
                fields[f].push(w.trunc());
            }
        }
    }
    let mut cols = vec![
        Column::new(DataType::TimestampTz, ColumnData::Int64(time), None),
        Column::new(DataType::Int32, ColumnData::Int32(tags), None),
    ];
    cols.extend(fields.into_iter().map(|v| Column::new(DataType::Float64, ColumnData::Float64(v), None)));
    Batch::from_columns(cols)
}

fn bench(c: &mut Criterion) {
    let rows = tsbs_rows();
    let mut types = vec![DataType::TimestampTz, DataType::Int32];
    types.extend([DataType::Float64; 10]);
    let mut names = vec!["time", "tags_id"];
    names.extend(FIELDS);
    let columns = names.iter().zip(&types).map(|(n, t)| SegmentColumn { name: n.to_string(), type_oid: t.oid() }).collect();
    let spec = SegmentSpec { table: 1, shard: 0, segment: 0, columns, series_columns: vec![1], time_column: Some(0) };
    let (bytes, footer) = write_segment(&spec, &rows);
    let n = rows.len as f64;
    println!(
        "TSBS cpu, {} rows: segment {} bytes = {:.2} bytes/row ({:.1}x smaller than 92 raw bytes/row)",
        rows.len,
        bytes.len(),
        bytes.len() as f64 / n,
        92.0 / (bytes.len() as f64 / n)
    );
    for (i, name) in names.iter().enumerate() {
        println!("  {name:>16}: {:.3} bytes/row", footer.column_bytes(i) as f64 / n);
    }
    let (_, footer) = parse_segment("bench.seg", &bytes).expect("segment parses");
    let mut schemes = std::collections::BTreeMap::new();
    for (_, b) in &footer.groups {
        let m = &b[2];
        let payload = &bytes[m.offset as usize + 40..(m.offset + m.len as u64) as usize];
        let raw = if m.header.flags & 2 != 0 { zstd::bulk::decompress(payload, m.header.raw_len as usize).unwrap_or_default() } else { payload.to_vec() };
        *schemes.entry(format!("{:?}", brewric::storage::codec::float::scheme(&raw))).or_insert(0) += 1;
    }
    println!("usage_user float schemes per block: {schemes:?}");
    // The block cache holds each block's bytes separately.
    let cached: Vec<Vec<Arc<Vec<u8>>>> = (0..types.len())
        .map(|c| {
            footer
                .groups
                .iter()
                .map(|(_, b)| Arc::new(bytes[b[c].offset as usize..(b[c].offset + b[c].len as u64) as usize].to_vec()))
                .collect()
        })
        .collect();

    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Elements(rows.len as u64));
    g.bench_function("decode+sum usage_user", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for (gi, (_, blocks)) in footer.groups.iter().enumerate() {
                let col = decode_block_bytes("bench.seg", &blocks[2], &cached[2][gi], DataType::Float64).expect("decodes");
                if let ColumnData::Float64(v) = &col.data {
                    // Four accumulators, as the executor's sum kernel keeps.
                    let mut acc = [0.0f64; 4];
                    let chunks = v.chunks_exact(4);
                    let rest: f64 = chunks.remainder().iter().sum();
                    for ch in chunks {
                        for k in 0..4 {
                            acc[k] += ch[k];
                        }
                    }
                    total += acc.iter().sum::<f64>() + rest;
                }
            }
            black_box(total)
        })
    });
    for (name, c) in [("decode time", 0usize), ("decode tags_id", 1)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                for (gi, (_, blocks)) in footer.groups.iter().enumerate() {
                    black_box(decode_block_bytes("bench.seg", &blocks[c], &cached[c][gi], types[c]).expect("decodes"));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
