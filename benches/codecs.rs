//! Encode and decode throughput of the column-block codecs (storage::codec)
//! on 1M values shaped like TSBS cpu-only data: timestamps every 10 s (also
//! with a few gaps and late points), a clamped 0..100 random walk stored as
//! integers, `tags_id`-like ids (uniform in 0..1000: the FOR path) and random
//! full-range i64. Columns are cut into blocks of 2048 values (`BLOCK_ROWS`),
//! as a segment would, and each block is decoded into one reused
//! buffer (as a scan decodes into executor vectors), so the numbers are the
//! codecs' speed rather than DRAM write bandwidth. Throughput is in elements
//! (values) per second; bits per value and the schemes chosen are printed
//! once per dataset.
//! Run: `cargo bench --bench codecs`.

use std::collections::BTreeMap;
use std::hint::black_box;

use brewric::storage::codec::{bitpack, integer, timestamp};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 1 << 20;
const BLOCK: usize = 2048;
const T0: i64 = 1_700_000_000_000_000_000;
const TEN_S: i64 = 10_000_000_000;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

fn regular_timestamps() -> Vec<i64> {
    (0..N as i64).map(|i| T0 + i * TEN_S).collect()
}

/// 10 s grid with ~0.1% of points missing and ~0.1% late by up to 1 ms.
fn gappy_timestamps(rng: &mut Rng) -> Vec<i64> {
    let mut out = Vec::with_capacity(N);
    let mut slot = 0;
    while out.len() < N {
        slot += 1;
        if rng.next().is_multiple_of(1000) {
            continue;
        }
        let late = if rng.next().is_multiple_of(1000) {
            (rng.next() % 1_000_000) as i64
        } else {
            0
        };
        out.push(T0 + slot * TEN_S + late);
    }
    out
}

/// TSBS cpu: a random walk with N(0,1) steps clamped to [0, 100], serialized as int64.
fn random_walk(rng: &mut Rng) -> Vec<i64> {
    let mut x = rng.unit() * 100.0;
    (0..N)
        .map(|_| {
            x = (x + rng.normal()).clamp(0.0, 100.0);
            x as i64
        })
        .collect()
}

fn encode_blocks(values: &[i64], encode: fn(&[i64]) -> Vec<u8>) -> Vec<Vec<u8>> {
    values.chunks(BLOCK).map(encode).collect()
}

fn report<S: std::fmt::Debug>(
    codec: &str,
    name: &str,
    blocks: &[Vec<u8>],
    scheme: fn(&[u8]) -> Option<S>,
) {
    let bytes: usize = blocks.iter().map(Vec::len).sum();
    let mut schemes = BTreeMap::new();
    for b in blocks {
        *schemes.entry(format!("{:?}", scheme(b))).or_insert(0) += 1;
    }
    eprintln!("{codec}/{name}: {:.3} bits/value ({bytes} bytes for {N} values in blocks of {BLOCK}; schemes {schemes:?})", bytes as f64 * 8.0 / N as f64);
}

fn bench_bitpack(c: &mut Criterion) {
    let walk: Vec<u64> = random_walk(&mut Rng(1))
        .into_iter()
        .map(|v| v as u64)
        .collect();
    let width = bitpack::bits_needed(walk.iter().copied().max().unwrap_or(0));
    let pack_blocks = |vals: &[u64]| -> Vec<Vec<u8>> {
        vals.chunks(BLOCK)
            .map(|c| {
                let mut out = Vec::new();
                bitpack::pack(c, width, &mut out);
                out
            })
            .collect()
    };
    let packed = pack_blocks(&walk);
    let bytes: usize = packed.iter().map(Vec::len).sum();
    eprintln!(
        "bitpack/walk_0_100: {:.3} bits/value (width {width})",
        bytes as f64 * 8.0 / N as f64
    );

    let mut g = c.benchmark_group("bitpack");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(format!("pack width {width}"), |b| {
        b.iter(|| black_box(pack_blocks(black_box(&walk))))
    });
    g.bench_function(format!("unpack width {width}"), |b| {
        let mut out = Vec::with_capacity(BLOCK);
        b.iter(|| {
            for blk in &packed {
                out.clear();
                black_box(bitpack::unpack(black_box(blk), width, BLOCK, &mut out).ok());
            }
            black_box(out.len())
        })
    });
    g.finish();
}

#[allow(clippy::type_complexity)]
fn bench_column<S: std::fmt::Debug>(
    c: &mut Criterion,
    codec: &str,
    datasets: &[(&str, Vec<i64>)],
    encode: fn(&[i64]) -> Vec<u8>,
    decode: fn(&[u8], &mut Vec<i64>) -> Result<(), brewric::storage::codec::CodecError>,
    scheme: fn(&[u8]) -> Option<S>,
) {
    let mut g = c.benchmark_group(codec);
    g.throughput(Throughput::Elements(N as u64));
    for (name, values) in datasets {
        let blocks = encode_blocks(values, encode);
        report(codec, name, &blocks, scheme);
        let mut check = Vec::with_capacity(N);
        for b in &blocks {
            if let Err(e) = decode(b, &mut check) {
                panic!("{codec}/{name}: {e}");
            }
        }
        assert!(check == *values, "{codec}/{name} does not round-trip");
        g.bench_function(format!("encode {name}"), |b| {
            b.iter(|| black_box(encode_blocks(black_box(values), encode)))
        });
        g.bench_function(format!("decode {name}"), |b| {
            let mut out = Vec::with_capacity(BLOCK);
            b.iter(|| {
                for blk in &blocks {
                    out.clear();
                    black_box(decode(black_box(blk), &mut out).ok());
                }
                black_box(out.len())
            })
        });
    }
    g.finish();
}

fn bench_integer(c: &mut Criterion) {
    let mut rng = Rng(2);
    let datasets = [
        ("walk_0_100", random_walk(&mut rng)),
        ("tags_id_0_1000", (0..N).map(|_| (rng.next() % 1000) as i64).collect()),
        ("random_i64", (0..N).map(|_| rng.next() as i64).collect()),
    ];
    bench_column(
        c,
        "integer",
        &datasets,
        integer::encode_i64,
        integer::decode_i64,
        integer::scheme,
    );
}

fn bench_timestamp(c: &mut Criterion) {
    let datasets = [
        ("regular_10s", regular_timestamps()),
        ("gaps_and_late", gappy_timestamps(&mut Rng(3))),
    ];
    bench_column(
        c,
        "timestamp",
        &datasets,
        timestamp::encode_timestamps,
        timestamp::decode_timestamps,
        timestamp::scheme,
    );
}

criterion_group!(benches, bench_bitpack, bench_integer, bench_timestamp);
criterion_main!(benches);
