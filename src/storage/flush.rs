//! Flushing a frozen memtable to segment files. A time-series table (one
//! with a designated time column, or a timestamp column named `time`) is
//! split by time partition (`PARTITION_NS`, one segment per partition per
//! flush) and sorted by (series, time), where the series key is the set of
//! low-cardinality integer/text/boolean columns found in the rows (e.g.
//! TSBS's `tags_id`, line protocol's tags): that is what makes tags cost
//! almost nothing and timestamps regular. Other tables keep arrival order
//! in one segment. Files are written and fsynced through the shard's
//! io_uring ring, then the directory is fsynced, before they are installed.
//! Must not: touch the WAL or the manifest (the checkpoint does, after every
//! shard's flush is durable).

use std::fs::OpenOptions;
use std::rc::Rc;
use std::sync::Arc;

use super::files::{segment_file_name, segments_dir, SegmentFile};
use super::segment::writer::{write_segment, SegmentSpec};
use super::segment::SegmentColumn;
use super::table::FrozenTable;
use crate::catalog::TableDef;
use crate::exec::vector::{Batch, Column, ColumnData};
use crate::runtime::storage_io::StorageIo;
use crate::types::DataType;

/// Time partition width for time-series tables without their own interval: one day.
pub const PARTITION_NS: i64 = 86_400 * 1_000_000_000;

/// A series-key column has at most one distinct value per this many rows.
const SERIES_ROWS_PER_VALUE: usize = 16;

/// The table's time column: the designated one, else a timestamp column named `time`.
pub fn time_column(def: &TableDef) -> Option<usize> {
    def.time_column.or_else(|| {
        def.columns.iter().position(|c| {
            c.name == "time" && matches!(c.data_type, DataType::Timestamp | DataType::TimestampTz)
        })
    })
}

/// The series key an index declares: the leading column of an index on
/// `(column, time [DESC])` of a time-series table (TSBS's `(tags_id, "time" DESC)`).
/// Segments sort by it and the series index prunes by it, however many
/// distinct values one flush holds.
pub fn declared_series_key(def: &TableDef, indexes: &[Arc<crate::catalog::IndexDef>]) -> Option<usize> {
    let time = time_column(def)?;
    let bare = |key: &str| key.split_whitespace().next().unwrap_or(key).trim_matches('"').to_string();
    indexes.iter().find_map(|i| match i.keys.as_slice() {
        [lead, second, ..] if bare(second) == def.columns[time].name => {
            def.column_index(&bare(lead)).filter(|&c| c != time)
        }
        _ => None,
    })
}

/// A segment ready to write: its number, bytes and footer.
pub struct EncodedSegment {
    pub id: u64,
    pub bytes: Vec<u8>,
    pub footer: super::segment::Footer,
}

/// Sorts, partitions and encodes `frozen` (pure CPU work; ids from `next_id`).
pub fn encode_frozen(
    def: &TableDef,
    declared_series: Option<usize>,
    frozen: &FrozenTable,
    shard_dir: u32,
    next_id: &mut u64,
) -> Vec<EncodedSegment> {
    encode_rows(
        def,
        declared_series,
        frozen.table,
        Batch::concat(&frozen.types, &frozen.rows),
        shard_dir,
        next_id,
    )
}

/// Sorts, partitions and encodes a table's rows (a flush's, or the merged
/// rows of a compaction); `declared_series` leads the series key (see `declared_series_key`).
pub fn encode_rows(
    def: &TableDef,
    declared_series: Option<usize>,
    table: u32,
    all: Batch,
    shard_dir: u32,
    next_id: &mut u64,
) -> Vec<EncodedSegment> {
    if all.len == 0 {
        return Vec::new();
    }
    let columns: Vec<SegmentColumn> = def
        .columns
        .iter()
        .map(|c| SegmentColumn {
            name: c.name.clone(),
            type_oid: c.data_type.oid(),
        })
        .collect();
    let time = time_column(def).filter(|&t| t < all.columns.len());
    let mut out = Vec::new();
    let parts: Vec<(Vec<u32>, Vec<usize>)> = match time {
        None => vec![((0..all.len as u32).collect(), Vec::new())],
        Some(t) => {
            let mut series = series_columns(&all, t);
            if let Some(k) = declared_series.filter(|&k| k < all.columns.len() && k != t) {
                series.retain(|&c| c != k);
                series.insert(0, k);
            }
            partition_and_sort(&all, t, &series)
                .into_iter()
                .map(|p| (p, series.clone()))
                .collect()
        }
    };
    for (perm, series) in parts {
        // Rows that arrived in order (an MCAP recording's, a sorted COPY's)
        // are written as they are.
        let in_order = perm.len() == all.len && perm.iter().enumerate().all(|(i, &p)| p as usize == i);
        let rows = if time.is_none() || in_order {
            all.clone()
        } else {
            all.take(&perm)
        };
        let id = *next_id;
        *next_id += 1;
        let spec = SegmentSpec {
            table,
            shard: shard_dir,
            segment: id,
            columns: columns.clone(),
            series_columns: series,
            time_column: time,
        };
        let (bytes, footer) = write_segment(&spec, &rows);
        out.push(EncodedSegment { id, bytes, footer });
    }
    out
}

/// Writes encoded segments durably (each file written and fsynced through
/// `io`, then the directory fsynced) and opens them.
pub async fn write_segments(
    io: &StorageIo,
    data_dir: &std::path::Path,
    shard_dir: u32,
    table: u32,
    segments: Vec<EncodedSegment>,
) -> std::io::Result<Vec<Rc<SegmentFile>>> {
    let dir = segments_dir(data_dir, shard_dir);
    std::fs::create_dir_all(&dir)?;
    let mut out = Vec::new();
    for seg in segments {
        let path = dir.join(segment_file_name(table, seg.id));
        let file = Arc::new(
            OpenOptions::new()
                .create_new(true)
                .read(true)
                .write(true)
                .open(&path)?,
        );
        let len = seg.bytes.len() as u64;
        // Large segments go out in 8 MiB writes, submitted together.
        let mut requests = Vec::new();
        let mut off = 0usize;
        while off < seg.bytes.len() {
            let end = (off + (8 << 20)).min(seg.bytes.len());
            requests.push(crate::runtime::storage_io::IoRequest::Write {
                file: file.clone(),
                offset: off as u64,
                data: seg.bytes[off..end].to_vec(),
            });
            off = end;
        }
        for r in io.submit(requests).await {
            r?;
        }
        crate::failpoint::hit("flush-after-segment-write");
        io.fsync(file.clone()).await?;
        out.push(Rc::new(SegmentFile::from_written(
            path, shard_dir, file, seg.footer, len, table, seg.id,
        )));
    }
    crate::wal::sync_dir(&dir)?;
    crate::failpoint::hit("flush-after-segment-sync");
    Ok(out)
}

/// Low-cardinality key columns, fewest distinct values first.
fn series_columns(all: &Batch, time: usize) -> Vec<usize> {
    let limit = (all.len / SERIES_ROWS_PER_VALUE).max(1);
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (i, col) in all.columns.iter().enumerate() {
        if i == time
            || matches!(
                col.data_type,
                DataType::Timestamp | DataType::TimestampTz | DataType::Bytea | DataType::Jsonb
            )
        {
            continue;
        }
        let distinct = match &col.data {
            ColumnData::Int16(_)
            | ColumnData::Int32(_)
            | ColumnData::Int64(_)
            | ColumnData::Bool(_)
            | ColumnData::Bytes(_) => count_distinct(col, limit),
            _ => None,
        };
        if let Some(d) = distinct {
            if d > 1 {
                found.push((d, i));
            }
        }
    }
    found.sort_unstable();
    found.into_iter().map(|(_, i)| i).collect()
}

/// Distinct values (NULL counted once), or None once above `limit`.
fn count_distinct(col: &Column, limit: usize) -> Option<usize> {
    let mut seen: hashbrown::HashSet<Option<&[u8]>> = hashbrown::HashSet::new();
    let mut ints: hashbrown::HashSet<Option<i64>> = hashbrown::HashSet::new();
    for r in 0..col.len() {
        let valid = col.is_valid(r);
        let n = match &col.data {
            ColumnData::Bytes(b) => {
                seen.insert(valid.then(|| b.get(r)));
                seen.len()
            }
            _ => {
                ints.insert(valid.then(|| int_key(col, r)));
                ints.len()
            }
        };
        if n > limit {
            return None;
        }
    }
    Some(seen.len().max(ints.len()))
}

fn int_key(col: &Column, r: usize) -> i64 {
    match &col.data {
        ColumnData::Int16(v) => v[r] as i64,
        ColumnData::Int32(v) => v[r] as i64,
        ColumnData::Int64(v) => v[r],
        ColumnData::Bool(v) => v[r] as i64,
        _ => 0,
    }
}

/// Per time partition (ascending), the row order sorted by (series, time).
fn partition_and_sort(all: &Batch, time: usize, series: &[usize]) -> Vec<Vec<u32>> {
    let ColumnData::Int64(ts) = &all.columns[time].data else {
        return vec![(0..all.len as u32).collect()];
    };
    let tcol = &all.columns[time];
    // Sort keys: each series column as an order-preserving u64 rank (NULLs last).
    let ranks: Vec<Vec<u64>> = series
        .iter()
        .map(|&c| rank_column(&all.columns[c]))
        .collect();
    let part_of = |r: usize| {
        if tcol.is_valid(r) {
            ts[r].div_euclid(PARTITION_NS)
        } else {
            i64::MIN
        }
    };
    let mut idx: Vec<u32> = (0..all.len as u32).collect();
    idx.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        part_of(a)
            .cmp(&part_of(b))
            .then_with(|| {
                for r in &ranks {
                    let o = r[a].cmp(&r[b]);
                    if o.is_ne() {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            })
            .then_with(|| (!tcol.is_valid(a), ts[a]).cmp(&(!tcol.is_valid(b), ts[b])))
    });
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut last = None;
    for i in idx {
        let p = part_of(i as usize);
        if last != Some(p) {
            out.push(Vec::new());
            last = Some(p);
        }
        if let Some(cur) = out.last_mut() {
            cur.push(i);
        }
    }
    out
}

fn rank_column(col: &Column) -> Vec<u64> {
    match &col.data {
        ColumnData::Bytes(b) => {
            let mut dict: Vec<&[u8]> = (0..b.len())
                .filter(|&r| col.is_valid(r))
                .map(|r| b.get(r))
                .collect();
            dict.sort_unstable();
            dict.dedup();
            (0..b.len())
                .map(|r| {
                    if col.is_valid(r) {
                        dict.binary_search(&b.get(r)).map_or(u64::MAX, |p| p as u64)
                    } else {
                        u64::MAX
                    }
                })
                .collect()
        }
        _ => (0..col.len())
            .map(|r| {
                if col.is_valid(r) {
                    (int_key(col, r) as u64) ^ (1 << 63)
                } else {
                    u64::MAX
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ColumnDef;
    use crate::types::Datum;

    /// A `cpu(time timestamptz, tags_id int)` table holding `batch`, frozen for a flush.
    fn cpu_table(time_column: Option<usize>, batch: Batch) -> (TableDef, FrozenTable) {
        let types = vec![DataType::TimestampTz, DataType::Int32];
        let def = TableDef {
            oid: 1,
            name: "cpu".into(),
            schema: "public".into(),
            columns: ["time", "tags_id"]
                .iter()
                .zip(&types)
                .map(|(n, t)| ColumnDef {
                    name: n.to_string(),
                    data_type: *t,
                    not_null: false,
                    default: None,
                    numeric_typmod: None,
                    series_tag: false,
                })
                .collect(),
            time_column,
        };
        let frozen = FrozenTable {
            table: 1,
            types,
            generation: 0,
            flush_id: 0,
            rows: Arc::new(vec![batch]),
        };
        (def, frozen)
    }

    #[test]
    fn time_series_rows_are_partitioned_and_sorted_by_series_then_time() {
        let day = PARTITION_NS;
        // 3 hosts, rows arriving by time then host, spanning two days.
        let mut t = Vec::new();
        let mut h = Vec::new();
        for i in 0..200i64 {
            for host in [2, 0, 1] {
                t.push(Datum::Int64(day - 100 * 1_000_000_000 + i * 1_000_000_000));
                h.push(Datum::Int32(host));
            }
        }
        let types = vec![DataType::TimestampTz, DataType::Int32];
        let batch = Batch::from_columns(vec![
            Column::from_datums(types[0], &t),
            Column::from_datums(types[1], &h),
        ]);
        let (def, frozen) = cpu_table(None, batch);
        let mut next = 5;
        let segs = encode_frozen(&def, None, &frozen, 0, &mut next);
        assert_eq!(segs.len(), 2, "two days, two partitions");
        assert_eq!(next, 7);
        assert_eq!(segs[0].footer.rows, 300);
        assert_eq!(segs[0].footer.series_columns, vec![1]);
        assert_eq!(segs[0].footer.series.len(), 3);
        assert_eq!(
            segs[0].footer.series[0].key,
            vec![Some(0i64.to_le_bytes().to_vec())]
        );
        assert!(segs[0].footer.time_max < day && segs[1].footer.time_min >= day);
    }

    fn index(keys: &[&str]) -> Arc<crate::catalog::IndexDef> {
        Arc::new(crate::catalog::IndexDef {
            oid: 2,
            name: "i".into(),
            table: "cpu".into(),
            unique: false,
            primary: false,
            constraint: false,
            method: "btree".into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            include: vec![],
            predicate: None,
        })
    }

    #[test]
    fn an_index_on_column_and_time_declares_the_series_key() {
        // 40 rows of 40 hosts: too many distinct values for the key to be inferred.
        let types = vec![DataType::TimestampTz, DataType::Int32];
        let t: Vec<Datum> = (0..40).map(|i| Datum::Int64(i * 1_000_000_000)).collect();
        let h: Vec<Datum> = (0..40).map(|i| Datum::Int32(39 - i as i32)).collect();
        let batch = Batch::from_columns(vec![Column::from_datums(types[0], &t), Column::from_datums(types[1], &h)]);
        let (def, frozen) = cpu_table(Some(0), batch);
        assert_eq!(declared_series_key(&def, &[index(&["tags_id", "\"time\" DESC"])]), Some(1));
        assert_eq!(declared_series_key(&def, &[index(&["tags_id"])]), None);
        assert_eq!(declared_series_key(&def, &[index(&["\"time\" DESC", "tags_id"])]), None);
        let mut next = 0;
        let inferred = encode_frozen(&def, None, &frozen, 0, &mut next);
        assert!(inferred[0].footer.series_columns.is_empty());
        let declared = encode_frozen(&def, Some(1), &frozen, 0, &mut next);
        assert_eq!(declared[0].footer.series_columns, vec![1]);
        assert_eq!(declared[0].footer.series.len(), 40);
        assert_eq!(declared[0].footer.series[0].key, vec![Some(0i64.to_le_bytes().to_vec())]);
    }
}
