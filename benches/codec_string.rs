//! Encode and decode throughput of the string and boolean column-block
//! codecs (storage::codec::string, ::boolean) on 256K values: TSBS-like
//! hostname tags (`host_0..host_999`, sorted by series as a segment stores
//! them, and in random order), a 10-value region tag in random order, and
//! log-like lines (high cardinality, zstd path); booleans random and in long
//! runs. Columns are cut into blocks of 8192 values, as a segment would, and
//! each block is decoded into one reused buffer. Throughput is in values and
//! in raw value bytes per second; bytes per value and the schemes chosen are
//! printed once per dataset.
//! Run: `cargo bench --bench codec_string` (add `-- --quick` for a short run).

use std::collections::BTreeMap;
use std::hint::black_box;

use brewric::exec::vector::BytesColumn;
use brewric::storage::codec::{boolean, string};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 1 << 18;
const BLOCK: usize = 8192;
const HOSTS: usize = 1000;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

fn column(values: impl Iterator<Item = String>) -> BytesColumn {
    let mut c = BytesColumn::with_capacity(N, N * 8);
    for v in values {
        c.push(v.as_bytes());
    }
    c
}

/// TSBS cpu-only: series `host_i` (i in 0..1000) stored sorted by series, so
/// each host is a run of N / 1000 rows.
fn hostnames_sorted() -> BytesColumn {
    column((0..N).map(|i| format!("host_{}", i * HOSTS / N)))
}

fn hostnames_random(rng: &mut Rng) -> BytesColumn {
    column((0..N).map(|_| format!("host_{}", rng.below(HOSTS as u64))))
}

fn regions_random(rng: &mut Rng) -> BytesColumn {
    const REGIONS: [&str; 10] =
        ["us-east-1", "us-west-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1", "sa-east-1", "ca-central-1"];
    column((0..N).map(|_| REGIONS[rng.below(10) as usize].to_string()))
}

fn log_lines(rng: &mut Rng) -> BytesColumn {
    const LEVELS: [&str; 4] = ["INFO", "WARN", "DEBUG", "ERROR"];
    const MSGS: [&str; 5] = ["request completed", "connection reset by peer", "retrying upstream fetch", "cache miss for key", "slow query detected"];
    column((0..N).map(|i| {
        format!(
            "2024-05-01T12:{:02}:{:02}.{:03}Z {} [worker-{}] {} id={} latency_ms={} path=/api/v1/robots/{}/telemetry",
            i / 60 % 60,
            i % 60,
            rng.below(1000),
            LEVELS[rng.below(4) as usize],
            rng.below(16),
            MSGS[rng.below(5) as usize],
            rng.next() % 1_000_000_000,
            rng.below(5000),
            rng.below(10_000)
        )
    }))
}

fn encode_blocks(col: &BytesColumn) -> Vec<Vec<u8>> {
    (0..col.len()).step_by(BLOCK).map(|s| string::encode_bytes(&col.offsets[s..(s + BLOCK).min(col.len()) + 1], &col.data)).collect()
}

fn bench_string(c: &mut Criterion) {
    let mut rng = Rng(1);
    let datasets = [
        ("hostname_sorted", hostnames_sorted()),
        ("hostname_random", hostnames_random(&mut rng)),
        ("region_random_10", regions_random(&mut rng)),
        ("log_lines", log_lines(&mut rng)),
    ];
    let mut g = c.benchmark_group("string");
    for (name, col) in &datasets {
        let blocks = encode_blocks(col);
        let bytes: usize = blocks.iter().map(Vec::len).sum();
        let mut schemes = BTreeMap::new();
        for b in &blocks {
            *schemes.entry(format!("{:?}{}", string::scheme(b), if string::uses_zstd(b) == Some(true) { "+zstd" } else { "" })).or_insert(0) += 1;
        }
        eprintln!(
            "string/{name}: {:.4} bytes/value ({bytes} bytes for {N} values, {} raw bytes, ratio {:.1}; blocks of {BLOCK}; schemes {schemes:?})",
            bytes as f64 / N as f64,
            col.data.len(),
            col.data.len() as f64 / bytes as f64
        );
        let mut check = BytesColumn::default();
        for b in &blocks {
            if let Err(e) = string::decode_bytes(b, &mut check) {
                panic!("string/{name}: {e}");
            }
        }
        assert!(check == *col, "string/{name} does not round-trip");
        g.throughput(Throughput::ElementsAndBytes { elements: N as u64, bytes: col.data.len() as u64 });
        g.bench_function(format!("encode {name}"), |b| b.iter(|| black_box(encode_blocks(black_box(col)))));
        g.bench_function(format!("decode {name}"), |b| {
            let mut out = BytesColumn::with_capacity(BLOCK, col.data.len() / (N / BLOCK) + 1);
            b.iter(|| {
                for blk in &blocks {
                    out.offsets.truncate(1);
                    out.data.clear();
                    black_box(string::decode_bytes(black_box(blk), &mut out).ok());
                }
                black_box(out.len())
            })
        });
    }
    g.finish();
}

fn bench_boolean(c: &mut Criterion) {
    let mut rng = Rng(2);
    let mut v = false;
    let datasets = [
        ("random", (0..N).map(|_| rng.below(2) == 0).collect::<Vec<_>>()),
        (
            "long_runs",
            (0..N)
                .map(|_| {
                    if rng.below(1000) == 0 {
                        v = !v
                    }
                    v
                })
                .collect(),
        ),
    ];
    let mut g = c.benchmark_group("boolean");
    g.throughput(Throughput::Elements(N as u64));
    for (name, values) in &datasets {
        let enc = |vals: &[bool]| vals.chunks(BLOCK).map(boolean::encode_bools).collect::<Vec<_>>();
        let blocks = enc(values);
        let bytes: usize = blocks.iter().map(Vec::len).sum();
        let mut schemes = BTreeMap::new();
        for b in &blocks {
            *schemes.entry(format!("{:?}", boolean::scheme(b))).or_insert(0) += 1;
        }
        eprintln!("boolean/{name}: {:.4} bits/value ({bytes} bytes for {N} values; schemes {schemes:?})", bytes as f64 * 8.0 / N as f64);
        g.bench_function(format!("encode {name}"), |b| b.iter(|| black_box(enc(black_box(values)))));
        g.bench_function(format!("decode {name}"), |b| {
            let mut out = Vec::with_capacity(BLOCK);
            b.iter(|| {
                for blk in &blocks {
                    out.clear();
                    black_box(boolean::decode_bools(black_box(blk), &mut out).ok());
                }
                black_box(out.len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_string, bench_boolean);
criterion_main!(benches);
