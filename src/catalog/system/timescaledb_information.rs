//! TimescaleDB's `timescaledb_information` views, as TimescaleDB 2 names
//! their columns: `hypertables`, `dimensions`, `chunks`, `jobs`,
//! `job_stats`, `continuous_aggregates`, `compression_settings`. A Brewric hypertable's chunks are
//! its day partitions (`storage::flush::PARTITION_NS`) that hold rows,
//! named `_timescaledb_internal._hyper_<table OID>_<day number>_chunk`;
//! one is compressed once none of its rows wait in memory for a flush.
//! Must not: compute storage facts itself (the session gathers them from
//! the shards when a query names `chunks` or `hypertables`: `SystemContext::chunks`).

use super::{b, i4, text, SystemContext, SystemRelation, NULL, NM};
use crate::catalog::timescale::JobDef;
use crate::catalog::{Database, TableDef};
use crate::storage::flush::PARTITION_NS;
use crate::types::{DataType, Datum, Interval};

use DataType::{Bool as B, Int16 as I2, Int32 as I4, Int64 as I8, Text as T, TimestampTz as TZ};
const IV: DataType = DataType::Interval;
const JSONB: DataType = DataType::Jsonb;
const NAME_ARRAY: DataType = DataType::Array(crate::types::array::ArrayElem::Text);

/// The schema TimescaleDB keeps chunks in.
pub const CHUNK_SCHEMA: &str = "_timescaledb_internal";

pub static RELATIONS: &[SystemRelation] = &[
    SystemRelation {
        schema: "timescaledb_information",
        name: "hypertables",
        oid: 13_101,
        kind: 'v',
        columns: &[
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("owner", NM),
            ("num_dimensions", I2),
            ("num_chunks", I8),
            ("compression_enabled", B),
            ("tablespaces", NAME_ARRAY),
        ],
        rows: hypertables,
    },
    SystemRelation {
        schema: "timescaledb_information",
        name: "dimensions",
        oid: 13_102,
        kind: 'v',
        columns: &[
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("dimension_number", I8),
            ("column_name", NM),
            ("column_type", T),
            ("dimension_type", T),
            ("time_interval", IV),
            ("integer_interval", I8),
            ("integer_now_func", NM),
            ("num_partitions", I2),
        ],
        rows: dimensions,
    },
    SystemRelation {
        schema: "timescaledb_information",
        name: "chunks",
        oid: 13_103,
        kind: 'v',
        columns: &[
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("chunk_schema", NM),
            ("chunk_name", NM),
            ("primary_dimension", NM),
            ("primary_dimension_type", T),
            ("range_start", TZ),
            ("range_end", TZ),
            ("range_start_integer", I8),
            ("range_end_integer", I8),
            ("is_compressed", B),
            ("chunk_tablespace", NM),
            ("chunk_creation_time", TZ),
        ],
        rows: chunks,
    },
    SystemRelation {
        schema: "timescaledb_information",
        name: "jobs",
        oid: 13_104,
        kind: 'v',
        columns: &[
            ("job_id", I4),
            ("application_name", NM),
            ("schedule_interval", IV),
            ("max_runtime", IV),
            ("max_retries", I4),
            ("retry_period", IV),
            ("proc_schema", NM),
            ("proc_name", NM),
            ("owner", NM),
            ("scheduled", B),
            ("fixed_schedule", B),
            ("config", JSONB),
            ("next_start", TZ),
            ("initial_start", TZ),
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("check_schema", NM),
            ("check_name", NM),
        ],
        rows: jobs,
    },
    SystemRelation {
        schema: "timescaledb_information",
        name: "job_stats",
        oid: 13_105,
        kind: 'v',
        columns: &[
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("job_id", I4),
            ("last_run_started_at", TZ),
            ("last_successful_finish", TZ),
            ("last_run_status", T),
            ("job_status", T),
            ("last_run_duration", IV),
            ("next_start", TZ),
            ("total_runs", I8),
            ("total_successes", I8),
            ("total_failures", I8),
        ],
        rows: job_stats,
    },
    SystemRelation {
        schema: "timescaledb_information",
        name: "continuous_aggregates",
        oid: 13_107,
        kind: 'v',
        columns: &[
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("view_schema", NM),
            ("view_name", NM),
            ("view_owner", NM),
            ("materialized_only", B),
            ("compression_enabled", B),
            ("materialization_hypertable_schema", NM),
            ("materialization_hypertable_name", NM),
            ("view_definition", T),
            ("finalized", B),
        ],
        rows: continuous_aggregates,
    },
    SystemRelation {
        schema: "timescaledb_information",
        name: "compression_settings",
        oid: 13_106,
        kind: 'v',
        columns: &[
            ("hypertable_schema", NM),
            ("hypertable_name", NM),
            ("attname", NM),
            ("segmentby_column_index", I2),
            ("orderby_column_index", I2),
            ("orderby_asc", B),
            ("orderby_nullsfirst", B),
        ],
        rows: compression_settings,
    },
];

/// Whether a query naming `rel` needs the shards' chunk facts.
pub fn needs_chunk_facts(rel: &SystemRelation) -> bool {
    rel.schema == "timescaledb_information" && matches!(rel.name, "chunks" | "hypertables")
}

/// A chunk's name: `_hyper_<table OID>_<partition>_chunk`.
pub fn chunk_name(table: u32, partition: i64) -> String {
    format!("_hyper_{table}_{partition}_chunk")
}

/// The database's hypertables, in schema and name order (continuous
/// aggregates' tables too: policies act on them).
fn hypertable_defs(db: &Database) -> impl Iterator<Item = &TableDef> {
    db.schemas.values().flat_map(|s| s.tables.values()).filter(|t| t.time_column.is_some()).map(|t| &**t)
}

/// The hypertables users made (not continuous aggregates' tables).
fn user_hypertables(db: &Database) -> impl Iterator<Item = &TableDef> {
    hypertable_defs(db).filter(|t| !db.timescale.continuous.contains_key(&t.oid))
}

fn continuous_aggregates(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    hypertable_defs(ctx.db)
        .filter_map(|t| {
            let c = ctx.db.timescale.continuous.get(&t.oid)?;
            let source = ctx.db.table_by_oid(c.source);
            Some(vec![
                source.map_or(NULL, |s| text(&s.schema)),
                source.map_or(NULL, |s| text(&s.name)),
                text(&t.schema),
                text(&t.name),
                text(ctx.user),
                b(true),
                b(ctx.db.timescale.compression.contains_key(&t.oid)),
                text(&t.schema),
                text(&t.name),
                text(format!(" {};", c.query)),
                b(true),
            ])
        })
        .collect()
}

/// The chunks of `table` this statement's facts hold: (partition, compressed), in time order.
pub fn table_chunks(ctx: &SystemContext, table: u32) -> Vec<(i64, bool)> {
    let mut out: std::collections::BTreeMap<i64, bool> = Default::default();
    for f in ctx.chunks.unwrap_or(&[]).iter().filter(|f| f.table == table) {
        let compressed = out.entry(f.partition).or_insert(true);
        *compressed &= !f.in_memory;
    }
    out.into_iter().collect()
}

fn i8v(v: i64) -> Datum {
    Datum::Int64(v)
}

fn ts(ns: Option<i64>) -> Datum {
    ns.map_or(NULL, Datum::Int64)
}

fn interval(iv: Interval) -> Datum {
    Datum::Interval(iv)
}

const FIVE_MINUTES: Interval = Interval { months: 0, days: 0, micros: 300_000_000 };

fn hypertables(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    user_hypertables(ctx.db)
        .map(|t| {
            vec![
                text(&t.schema),
                text(&t.name),
                text(ctx.user),
                Datum::Int16(1),
                i8v(table_chunks(ctx, t.oid).len() as i64),
                b(ctx.db.timescale.compression.contains_key(&t.oid)),
                NULL,
            ]
        })
        .collect()
}

fn time_column(t: &TableDef) -> Option<&crate::catalog::ColumnDef> {
    t.time_column.and_then(|c| t.columns.get(c))
}

fn dimensions(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    user_hypertables(ctx.db)
        .filter_map(|t| {
            let c = time_column(t)?;
            Some(vec![
                text(&t.schema),
                text(&t.name),
                i8v(1),
                text(&c.name),
                text(c.data_type.name()),
                text("Time"),
                interval(Interval { months: 0, days: 1, micros: 0 }),
                NULL,
                NULL,
                NULL,
            ])
        })
        .collect()
}

fn chunks(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for t in hypertable_defs(ctx.db) {
        let Some(c) = time_column(t) else { continue };
        for (partition, compressed) in table_chunks(ctx, t.oid) {
            let start = partition.saturating_mul(PARTITION_NS);
            rows.push(vec![
                text(&t.schema),
                text(&t.name),
                text(CHUNK_SCHEMA),
                text(chunk_name(t.oid, partition)),
                text(&c.name),
                text(c.data_type.name()),
                Datum::Int64(start),
                Datum::Int64(start.saturating_add(PARTITION_NS)),
                NULL,
                NULL,
                b(compressed),
                NULL,
                NULL,
            ]);
        }
    }
    rows
}

/// The database's jobs with the hypertables they act on (a job whose table
/// an open block dropped is not shown).
fn jobs_with_tables(db: &Database) -> impl Iterator<Item = (&JobDef, &TableDef)> {
    db.timescale.jobs.values().filter_map(|j| Some((j, &**db.table_by_oid(j.table)?)))
}

fn jobs(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    jobs_with_tables(ctx.db)
        .map(|(j, t)| {
            let next_start = ctx.server.map(|s| crate::sql::jobs::next_start(s, ctx.db.oid, j));
            vec![
                i4(j.id),
                text(j.policy.application_name(j.id)),
                interval(j.schedule_interval),
                interval(FIVE_MINUTES),
                i4(-1),
                interval(FIVE_MINUTES),
                text("_timescaledb_functions"),
                text(j.policy.proc_name()),
                text(ctx.user),
                b(j.scheduled),
                b(j.initial_start.is_some()),
                Datum::Bytes(crate::sql::jobs::config_text(j).into_bytes()),
                ts(next_start.filter(|_| j.scheduled)),
                ts(j.initial_start),
                text(&t.schema),
                text(&t.name),
                text("_timescaledb_functions"),
                text(format!("{}_check", j.policy.proc_name())),
            ]
        })
        .collect()
}

fn job_stats(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    jobs_with_tables(ctx.db)
        .map(|(j, t)| {
            let run = ctx.server.map(|s| s.job_runs.get(ctx.db.oid, j.id)).unwrap_or_default();
            let next_start = ctx.server.map(|s| crate::sql::jobs::next_start(s, ctx.db.oid, j));
            let duration = match (run.last_start, run.last_finish) {
                (Some(s), Some(f)) if !run.running && f >= s => {
                    interval(Interval { months: 0, days: 0, micros: (f - s) / 1000 })
                }
                _ => NULL,
            };
            let status = match (run.running, j.scheduled) {
                (true, _) => "Running",
                (false, true) => "Scheduled",
                (false, false) => "Paused",
            };
            vec![
                text(&t.schema),
                text(&t.name),
                i4(j.id),
                ts(run.last_start),
                ts(run.last_successful_finish),
                run.last_succeeded.map_or(NULL, |ok| text(if ok { "Success" } else { "Failed" })),
                text(status),
                duration,
                ts(next_start.filter(|_| j.scheduled)),
                i8v(run.total_runs),
                i8v(run.total_successes),
                i8v(run.total_failures),
            ]
        })
        .collect()
}

/// One `compress_orderby` item: (column, ascending, nulls first).
fn order_item(item: &str) -> (String, bool, bool) {
    let words: Vec<String> = item.split_whitespace().map(str::to_lowercase).collect();
    let column = item.split_whitespace().next().unwrap_or_default();
    let column = match column.strip_prefix('"').and_then(|c| c.strip_suffix('"')) {
        Some(quoted) => quoted.to_string(),
        None => column.to_lowercase(),
    };
    let asc = !words.iter().any(|w| w == "desc");
    let nulls_first = match words.iter().position(|w| w == "nulls") {
        Some(i) => words.get(i + 1).is_some_and(|w| w == "first"),
        None => !asc,
    };
    (column, asc, nulls_first)
}

fn compression_settings(ctx: &SystemContext) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for t in hypertable_defs(ctx.db) {
        let Some(settings) = ctx.db.timescale.compression.get(&t.oid) else { continue };
        let mut order: Vec<(String, bool, bool)> =
            settings.order_by.split(',').map(str::trim).filter(|s| !s.is_empty()).map(order_item).collect();
        if order.is_empty() {
            if let Some(c) = time_column(t) {
                order.push((c.name.clone(), false, true));
            }
        }
        for (i, column) in settings.segment_by.iter().enumerate() {
            rows.push(vec![text(&t.schema), text(&t.name), text(column), Datum::Int16(i as i16 + 1), NULL, NULL, NULL]);
        }
        for (i, (column, asc, nulls_first)) in order.into_iter().enumerate() {
            rows.push(vec![
                text(&t.schema),
                text(&t.name),
                text(column),
                NULL,
                Datum::Int16(i as i16 + 1),
                b(asc),
                b(nulls_first),
            ]);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_items_read_direction_and_nulls_as_timescaledb_does() {
        assert_eq!(order_item("time DESC"), ("time".into(), false, true));
        assert_eq!(order_item("\"Time\""), ("Time".into(), true, false));
        assert_eq!(order_item("v asc nulls first"), ("v".into(), true, true));
        assert_eq!(order_item("v DESC NULLS LAST"), ("v".into(), false, false));
    }
}
