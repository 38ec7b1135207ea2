//! Segment scan speed and size on TSBS cpu-only data (the storage issue's
//! targets): 100 hosts × 1 day at 10 s (864,000 rows; time, tags_id and
//! ten usage_* float8 fields, integer-valued clamped random walks), sorted
//! by (tags_id, time) as a flush writes it. Prints bytes per row of the
//! encoded segment, then measures, per core:
//! - `sum usage_user (fused, cached blocks)`: the sum of one float8 column
//!   from its blocks in cache form (verified once, light encodings: what a
//!   scan finds on a cache hit), computed on the packed values without
//!   materialising them (`sum_f64_block`); target ≥ 2 G rows/s;
//! - `decode+sum usage_user (cached blocks)`: the same, decoding each block
//!   into a vector first, then summing it as the executor does;
//! - `decode time` and `decode tags_id`: the other columns a TSBS query reads.
//!
//! Run: `cargo bench --bench scan`.

use std::hint::black_box;

use brewric::exec::vector::{Batch, Column, ColumnData};
use brewric::storage::codec::{float, integer};
use brewric::storage::segment::column::{sum_f64_block, CachedBlock};
use brewric::storage::segment::reader::{cache_block, decode_cached, parse_segment};
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
    // What a scan's cache holds: each block verified once and in cache form.
    let cached: Vec<Vec<CachedBlock>> = (0..types.len())
        .map(|c| {
            footer
                .groups
                .iter()
                .map(|(_, b)| {
                    let m = &b[c];
                    cache_block("bench.seg", m, &bytes[m.offset as usize..(m.offset + m.len as u64) as usize]).expect("verifies")
                })
                .collect()
        })
        .collect();
    let schemes = |payload: &dyn Fn(usize) -> Vec<u8>| {
        let mut schemes = std::collections::BTreeMap::new();
        for g in 0..footer.groups.len() {
            let raw = payload(g);
            let float = float::scheme(&raw);
            // ALP's digits are an integer encoding 15 bytes in
            let digits = if float == Some(float::Scheme::Alp) { raw.get(15).and_then(|t| integer::Scheme::from_tag(*t)) } else { None };
            *schemes.entry(format!("{float:?}/{digits:?}")).or_insert(0) += 1;
        }
        schemes
    };
    let on_disk = schemes(&|g| {
        let m = &footer.groups[g].1[2];
        let payload = &bytes[m.offset as usize + 40..(m.offset + m.len as u64) as usize];
        if m.header.flags & 2 != 0 { zstd::bulk::decompress(payload, m.header.raw_len as usize).unwrap_or_default() } else { payload.to_vec() }
    });
    println!("usage_user blocks on disk (float/digits scheme): {on_disk:?}");
    let in_cache = schemes(&|g| cached[2][g].payload.clone());
    let cache_bytes: usize = cached[2].iter().map(|b| b.size()).sum();
    println!("usage_user blocks in cache form: {in_cache:?}, {:.3} bytes/row", cache_bytes as f64 / n);

    let decode_sum = |gi: usize| -> f64 {
        let col = decode_cached("bench.seg", &footer.groups[gi].1[2], &cached[2][gi], DataType::Float64).expect("decodes");
        let ColumnData::Float64(v) = &col.data else { unreachable!("a float8 column") };
        // Four accumulators, as the executor's sum kernel keeps.
        let mut acc = [0.0f64; 4];
        let chunks = v.chunks_exact(4);
        let rest: f64 = chunks.remainder().iter().sum();
        for ch in chunks {
            for k in 0..4 {
                acc[k] += ch[k];
            }
        }
        acc.iter().sum::<f64>() + rest
    };
    let fused: f64 = (0..footer.groups.len())
        .map(|gi| sum_f64_block(&cached[2][gi].header, &cached[2][gi].payload).expect("sums").unwrap_or_else(|| decode_sum(gi)))
        .sum();
    let decoded: f64 = (0..footer.groups.len()).map(decode_sum).sum();
    assert_eq!(fused, decoded, "the fused sum equals decode + sum");

    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Elements(rows.len as u64));
    g.bench_function("sum usage_user (fused, cached blocks)", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for (gi, blk) in cached[2].iter().enumerate() {
                total += match sum_f64_block(&blk.header, &blk.payload).expect("sums") {
                    Some(s) => s,
                    None => decode_sum(gi),
                };
            }
            black_box(total)
        })
    });
    g.bench_function("decode+sum usage_user (cached blocks)", |b| b.iter(|| black_box((0..footer.groups.len()).map(decode_sum).sum::<f64>())));
    for (name, c) in [("decode time", 0usize), ("decode tags_id", 1)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                for (gi, (_, blocks)) in footer.groups.iter().enumerate() {
                    black_box(decode_cached("bench.seg", &blocks[c], &cached[c][gi], types[c]).expect("decodes"));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
