//! Line protocol parsing throughput, Brewric's parser against the
//! `influxdb-line-protocol` crate (IOx), on 1000 lines of two shapes:
//! TSBS cpu-only lines (10 tags, 10 integer fields, ns timestamp, ~350
//! bytes; host and values vary) and tiny lines
//! (`bench,host=bench v=0.123 1700000000000`, ms timestamps).
//! Brewric's number includes UTF-8 validation and building the column
//! batches (a fresh `ParsedLines` per iteration, as a write request has);
//! the crate's includes `str::from_utf8` (it needs `&str`) and reading every
//! tag and field value, the fair equivalent of borrowed parsing.
//! Throughput is in lines per second.
//! Run: `cargo bench --bench line_protocol`.

use std::hint::black_box;

use brewric::ingest::line_protocol::{
    parse_lines, NoKnownColumns, ParseOptions, ParsedLines, Precision,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

const LINES: usize = 1000;

/// TSBS `cpu-only` lines as `tsbs_generate_data --use-case=cpu-only` writes
/// them for InfluxDB: 100 hosts with their fixed tags, one line per host per
/// 10 s, integer fields.
fn tsbs_cpu_lines() -> Vec<u8> {
    let mut rng = Rng(7);
    let regions = [
        ("us-east-1", ["us-east-1a", "us-east-1b", "us-east-1c"]),
        (
            "eu-central-1",
            ["eu-central-1a", "eu-central-1b", "eu-central-1c"],
        ),
        (
            "ap-southeast-2",
            ["ap-southeast-2a", "ap-southeast-2b", "ap-southeast-2c"],
        ),
    ];
    let os = ["Ubuntu15.10", "Ubuntu16.10", "Ubuntu16.04LTS"];
    let arch = ["x86", "x64"];
    let team = ["SF", "NYC", "LON", "CHI"];
    let env = ["test", "staging", "production"];
    let hosts: Vec<String> = (0..100)
        .map(|h| {
            let (region, dcs) = regions[rng.below(3) as usize];
            format!(
                "hostname=host_{h},region={region},datacenter={},rack={},os={},arch={},team={},service={},service_version={},service_environment={}",
                dcs[rng.below(3) as usize],
                rng.below(100),
                os[rng.below(3) as usize],
                arch[rng.below(2) as usize],
                team[rng.below(4) as usize],
                rng.below(20),
                rng.below(2),
                env[rng.below(3) as usize],
            )
        })
        .collect();
    let fields = [
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
    let mut out = Vec::new();
    for i in 0..LINES {
        let mut line = format!("cpu,{} ", hosts[i % hosts.len()]);
        for (k, f) in fields.iter().enumerate() {
            if k > 0 {
                line.push(',');
            }
            line.push_str(&format!("{f}={}i", rng.below(100)));
        }
        let ts = 1_451_606_400_000_000_000i64 + (i / hosts.len()) as i64 * 10_000_000_000;
        line.push_str(&format!(" {ts}\n"));
        out.extend_from_slice(line.as_bytes());
    }
    out
}

fn tiny_lines() -> Vec<u8> {
    let mut rng = Rng(11);
    let mut out = Vec::new();
    for i in 0..LINES {
        out.extend_from_slice(
            format!(
                "bench,host=bench v=0.{:03} {}\n",
                rng.below(1000),
                1_700_000_000_000i64 + i as i64
            )
            .as_bytes(),
        );
    }
    out
}

fn brewric(input: &[u8], precision: Precision) -> ParsedLines {
    let options = ParseOptions {
        precision,
        default_time_ns: 0,
        stop_at_first_error: false,
        first_line_number: 1,
        first_byte_offset: 0,
    };
    let mut out = ParsedLines::new();
    parse_lines(input, true, &options, &mut NoKnownColumns, &mut out);
    out
}

/// The IOx crate: parse every line and read every tag and field value.
fn iox(input: &[u8]) -> u64 {
    use influxdb_line_protocol::FieldValue;
    let text = std::str::from_utf8(input).expect("benchmark input is UTF-8");
    let mut acc = 0u64;
    for line in influxdb_line_protocol::parse_lines(text) {
        let line = line.expect("benchmark input is valid");
        acc = acc.wrapping_add(line.series.measurement.len() as u64);
        if let Some(tags) = &line.series.tag_set {
            for (k, v) in tags {
                acc = acc.wrapping_add(k.len() as u64 + v.len() as u64);
            }
        }
        for (k, v) in &line.field_set {
            acc = acc.wrapping_add(k.len() as u64);
            acc = acc.wrapping_add(match v {
                FieldValue::I64(x) => *x as u64,
                FieldValue::U64(x) => *x,
                FieldValue::F64(x) => x.to_bits(),
                FieldValue::String(s) => s.len() as u64,
                FieldValue::Boolean(b) => *b as u64,
            });
        }
        acc = acc.wrapping_add(line.timestamp.unwrap_or(0) as u64);
    }
    acc
}

fn bench(c: &mut Criterion) {
    let cpu = tsbs_cpu_lines();
    let tiny = tiny_lines();
    // Both parsers accept every line, and Brewric's columns hold them all.
    for (input, precision) in [
        (&cpu, Precision::Nanoseconds),
        (&tiny, Precision::Milliseconds),
    ] {
        let out = brewric(input, precision);
        assert_eq!(
            (out.lines_ok, out.errors.len()),
            (LINES as u64, 0),
            "{:?}",
            out.errors.first()
        );
        assert_eq!(out.measurements[0].rows, LINES);
        iox(input);
    }
    println!(
        "tsbs cpu: {} bytes/line; tiny: {} bytes/line",
        cpu.len() / LINES,
        tiny.len() / LINES
    );

    let mut g = c.benchmark_group("parse_1000");
    g.throughput(Throughput::Elements(LINES as u64));
    g.bench_function("brewric/tsbs_cpu", |b| {
        b.iter(|| black_box(brewric(black_box(&cpu), Precision::Nanoseconds)))
    });
    g.bench_function("influxdb_line_protocol/tsbs_cpu", |b| {
        b.iter(|| black_box(iox(black_box(&cpu))))
    });
    g.bench_function("brewric/tiny", |b| {
        b.iter(|| black_box(brewric(black_box(&tiny), Precision::Milliseconds)))
    });
    g.bench_function("influxdb_line_protocol/tiny", |b| {
        b.iter(|| black_box(iox(black_box(&tiny))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
