//! Micro-benchmarks of the executor's hot loops over 1M-row columns: a
//! comparison kernel with a scalar operand, arithmetic, and hash aggregation
//! (count, float sum, GROUP BY a text key with 100 groups) as a shard runs it.
//! Run: `cargo bench --bench executor`. Throughput is reported in elements/s.

use std::hint::black_box;
use std::sync::Arc;

use brewric::exec::agg::{AggMode, HashAggregation};
use brewric::exec::kernels::{eval_binary, resolve_binary, BinaryOp};
use brewric::exec::vector::{Column, ColumnData, BATCH_ROWS};
use brewric::exec::{EvalContext, Operand};
use brewric::sql::plan::AggFunc;
use brewric::types::{DataType, Datum};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const ROWS: usize = 1 << 20;

fn batches_f64() -> Vec<Column> {
    (0..ROWS / BATCH_ROWS)
        .map(|b| {
            let v: Vec<f64> = (0..BATCH_ROWS)
                .map(|i| ((b * BATCH_ROWS + i) % 1600) as f64 / 16.0)
                .collect();
            Column::new(DataType::Float64, ColumnData::Float64(v), None)
        })
        .collect()
}

fn batches_text() -> Vec<Column> {
    (0..ROWS / BATCH_ROWS)
        .map(|b| {
            let d: Vec<Datum> = (0..BATCH_ROWS)
                .map(|i| Datum::text(format!("robot-{:03}", (b * BATCH_ROWS + i) % 100)))
                .collect();
            Column::from_datums(DataType::Text, &d)
        })
        .collect()
}

fn kernels(c: &mut Criterion) {
    let cols = batches_f64();
    let ctx = EvalContext::default();
    let mut g = c.benchmark_group("kernels");
    g.throughput(Throughput::Elements(ROWS as u64));
    for op in [BinaryOp::Gt, BinaryOp::Multiply] {
        let sig = match resolve_binary(op, DataType::Float64, DataType::Float64) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        let k = Datum::Float64(50.0);
        g.bench_function(format!("float8 {op:?} scalar"), |b| {
            b.iter(|| {
                for col in &cols {
                    let out = eval_binary(
                        &sig,
                        Operand::Column(col),
                        Operand::Scalar(&k, DataType::Float64),
                        col.len(),
                        &ctx,
                    );
                    black_box(out.ok());
                }
            })
        });
    }
    g.finish();
}

fn aggregation(c: &mut Criterion) {
    let values = batches_f64();
    let keys = batches_text();
    let mut g = c.benchmark_group("hash_aggregation");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("count(*)", |b| {
        b.iter(|| {
            let mut agg = HashAggregation::new(
                AggMode::Partial,
                vec![],
                &[(AggFunc::CountStar, DataType::Int64, DataType::Int64, false)],
            )
            .ok();
            if let Some(agg) = agg.as_mut() {
                for _ in &values {
                    black_box(agg.update(&[], BATCH_ROWS, &[(None, None)]).ok());
                }
            }
        })
    });
    g.bench_function("sum(float8)", |b| {
        b.iter(|| {
            let mut agg = HashAggregation::new(
                AggMode::Partial,
                vec![],
                &[(AggFunc::Sum, DataType::Float64, DataType::Float64, false)],
            )
            .ok();
            if let Some(agg) = agg.as_mut() {
                for v in &values {
                    black_box(agg.update(&[], BATCH_ROWS, &[(Some(v), None)]).ok());
                }
            }
        })
    });
    g.bench_function("text key, 100 groups: count(*), avg(float8)", |b| {
        b.iter(|| {
            let aggs = [
                (AggFunc::CountStar, DataType::Int64, DataType::Int64, false),
                (AggFunc::Avg, DataType::Float64, DataType::Float64, false),
            ];
            let mut agg = HashAggregation::new(AggMode::Partial, vec![DataType::Text], &aggs).ok();
            if let Some(agg) = agg.as_mut() {
                for (k, v) in keys.iter().zip(&values) {
                    black_box(
                        agg.update(&[k], BATCH_ROWS, &[(None, None), (Some(v), None)])
                            .ok(),
                    );
                }
            }
        })
    });
    g.finish();
    black_box(Arc::new(0));
}

criterion_group!(benches, kernels, aggregation);
criterion_main!(benches);
