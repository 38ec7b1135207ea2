//! Encode, decode and decode+sum throughput of the float codec
//! (storage::codec::float) on 1M f64 values: a TSBS cpu-like column (a random
//! walk with N(0,1) steps clamped to [0, 100], truncated to integers and
//! stored as float8), 2-decimal prices, random doubles in [0, 1000) and a
//! slowly varying sensor (sine plus noise). Columns are cut into blocks of
//! 2048 values (`BLOCK_ROWS`), as a segment would, and each block is decoded into one reused
//! buffer (as a scan decodes into executor vectors). "decode+sum" also sums
//! every decoded block (8 accumulators, as a vectorised aggregate would), the
//! scan-side number. Throughput is in elements (values) per second; bits per
//! value and the schemes chosen are printed once per dataset.
//! Run: `cargo bench --bench codec_float` (add `-- --quick` for a fast pass).

use std::collections::BTreeMap;
use std::hint::black_box;

use brewric::storage::codec::float;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 1 << 20;
const BLOCK: usize = 2048;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// TSBS cpu: a random walk with N(0,1) steps clamped to [0, 100], truncated
/// to an integer and stored as float8.
fn tsbs_walk(rng: &mut Rng) -> Vec<f64> {
    let mut x = rng.unit() * 100.0;
    (0..N)
        .map(|_| {
            x = (x + rng.normal()).clamp(0.0, 100.0);
            (x as i64) as f64
        })
        .collect()
}

/// Prices with 2 decimals, moving by up to ±0.50 a tick.
fn prices(rng: &mut Rng) -> Vec<f64> {
    let mut cents = 1_000_000i64;
    (0..N)
        .map(|_| {
            cents = (cents + (rng.next() % 101) as i64 - 50).max(0);
            cents as f64 / 100.0
        })
        .collect()
}

fn random_doubles(rng: &mut Rng) -> Vec<f64> {
    (0..N).map(|_| rng.unit() * 1000.0).collect()
}

fn sensor(rng: &mut Rng) -> Vec<f64> {
    (0..N).map(|i| 20.0 + 5.0 * (i as f64 / 500.0).sin() + 0.01 * rng.normal()).collect()
}

/// The sum an aggregate would compute: 8 independent accumulators.
fn sum(xs: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = xs.chunks_exact(8);
    let rest: f64 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    acc.iter().sum::<f64>() + rest
}

fn bench_float(c: &mut Criterion) {
    let mut rng = Rng(42);
    let datasets =
        [("tsbs_walk", tsbs_walk(&mut rng)), ("prices_2dp", prices(&mut rng)), ("random_doubles", random_doubles(&mut rng)), ("sensor", sensor(&mut rng))];
    let mut encoded = Vec::new();
    for (name, values) in &datasets {
        let blocks: Vec<Vec<u8>> = values.chunks(BLOCK).map(float::encode_f64).collect();
        let bytes: usize = blocks.iter().map(Vec::len).sum();
        let mut schemes = BTreeMap::new();
        for b in &blocks {
            *schemes.entry(format!("{:?}", float::scheme(b).unwrap())).or_insert(0) += 1;
        }
        let mut check = Vec::with_capacity(N);
        for b in &blocks {
            float::decode_f64(b, &mut check).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(check.iter().map(|x| x.to_bits()).eq(values.iter().map(|x| x.to_bits())), "{name} does not round-trip");
        eprintln!("float/{name}: {:.3} bits/value ({bytes} bytes for {N} values in blocks of {BLOCK}; schemes {schemes:?})", bytes as f64 * 8.0 / N as f64);
        encoded.push((*name, values, blocks));
    }

    let mut g = c.benchmark_group("float encode");
    g.throughput(Throughput::Elements(N as u64));
    for (name, values, _) in &encoded {
        g.bench_function(*name, |b| b.iter(|| black_box(values.chunks(BLOCK).map(|c| float::encode_f64(black_box(c))).collect::<Vec<_>>())));
    }
    g.finish();

    let mut g = c.benchmark_group("float decode");
    g.throughput(Throughput::Elements(N as u64));
    for (name, _, blocks) in &encoded {
        g.bench_function(*name, |b| {
            let mut out = Vec::with_capacity(BLOCK);
            b.iter(|| {
                for blk in blocks {
                    out.clear();
                    black_box(float::decode_f64(black_box(blk), &mut out).ok());
                }
                black_box(out.len())
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("float decode+sum");
    g.throughput(Throughput::Elements(N as u64));
    for (name, _, blocks) in &encoded {
        g.bench_function(*name, |b| {
            let mut out = Vec::with_capacity(BLOCK);
            b.iter(|| {
                let mut total = 0.0;
                for blk in blocks {
                    out.clear();
                    black_box(float::decode_f64(black_box(blk), &mut out).ok());
                    total += sum(&out);
                }
                black_box(total)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_float);
criterion_main!(benches);
