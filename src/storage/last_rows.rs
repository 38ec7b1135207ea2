//! The latest row of each series of a time-series table — what TSBS's
//! lastpoint asks per host (`WHERE tags_id = $1 ORDER BY time DESC LIMIT 1`)
//! — kept in memory so that the question costs a hash lookup, not a scan.
//!
//! One `LastRowRegistry` serves all shards (the one part of `storage` that is
//! shared and locked): shards feed it every committed batch (`absorb`) and
//! report what removes rows (`forget_rows`, `drop_before`, `drop_table`);
//! queries read it without a round trip to the shards. A table gets an entry
//! the first time a query asks (`lookup`); the entry is *complete* only once
//! a scan of the table's rows taken after its creation has been merged in
//! (`install`). Merging keeps, per series, the row that sorts first in
//! `ORDER BY time DESC` (a NULL time first, as PostgreSQL sorts it; the later
//! write on equal times), so the scan's rows and the rows appended meanwhile
//! merge in any order. Whatever removes rows bumps the entry's generation,
//! and a scan begun under an older generation is not installed.
//! Must not: answer from an entry that is not complete, or see rows before
//! they are committed (shards call it where rows become visible).

use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use hashbrown::hash_map::Entry;
use hashbrown::HashMap;

use crate::catalog::{IndexDef, TableDef, TableId};
use crate::exec::vector::{Batch, ColumnData};
use crate::types::{DataType, Datum};

/// Which columns identify a series and order its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastRowSpec {
    pub series: usize,
    pub time: usize,
}

impl LastRowSpec {
    /// The spec of `table`'s declared series key (the leading column of an
    /// index on `(column, time [DESC])`, `flush::declared_series_key`) and time
    /// column, when their types can be indexed.
    pub fn declared(table: &TableDef, indexes: &[Arc<IndexDef>]) -> Option<LastRowSpec> {
        let spec = LastRowSpec {
            series: super::flush::declared_series_key(table, indexes)?,
            time: super::flush::time_column(table)?,
        };
        // Its rows hold stored frames (`frames.rs`), which only a scan reads back.
        if table.has_frame_columns() {
            return None;
        }
        spec.supports(&table.column_types()).then_some(spec)
    }

    /// Whether rows of a table with these column types can be indexed: an
    /// integer or text series column and an integer-backed time column.
    fn supports(&self, types: &[DataType]) -> bool {
        let series = types.get(self.series).copied();
        let time = types.get(self.time).copied();
        matches!(
            series,
            Some(DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Text | DataType::Varchar(_))
        ) && matches!(
            time,
            Some(DataType::Timestamp | DataType::TimestampTz | DataType::Date | DataType::Int16 | DataType::Int32 | DataType::Int64)
        )
    }
}

/// A series column's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SeriesValue {
    Int(i64),
    Text(Box<[u8]>),
}

impl SeriesValue {
    /// The value `series = datum` looks up (None: NULL or not comparable as is).
    pub fn of(datum: &Datum) -> Option<SeriesValue> {
        match datum {
            Datum::Int16(v) => Some(SeriesValue::Int(*v as i64)),
            Datum::Int32(v) => Some(SeriesValue::Int(*v as i64)),
            Datum::Int64(v) => Some(SeriesValue::Int(*v)),
            Datum::Bytes(b) => Some(SeriesValue::Text(b.clone().into_boxed_slice())),
            _ => None,
        }
    }
}

/// Series an entry holds at most: each holds a whole row, so past this a
/// table's lookups scan instead (a high-cardinality table is not indexed).
pub const MAX_SERIES: usize = 100_000;

/// Sort position under `ORDER BY time DESC` (higher first): NULL times
/// first, then later times.
type Rank = (bool, i64);

#[derive(Debug)]
struct Latest {
    rank: Rank,
    row: Vec<Datum>,
}

/// Each series' first row of a batch under `ORDER BY time DESC` (rank and
/// row number), so that a row is copied out once per series and batch, not
/// once per newer row.
fn best_rows<K: Hash + Eq>(
    len: usize,
    valid: impl Fn(usize) -> bool,
    key: impl Fn(usize) -> K,
    rank: impl Fn(usize) -> Rank,
) -> HashMap<K, (Rank, usize)> {
    let mut best: HashMap<K, (Rank, usize)> = HashMap::new();
    for r in (0..len).filter(|&r| valid(r)) {
        let rank = rank(r);
        match best.entry(key(r)) {
            Entry::Occupied(held) if held.get().0 > rank => {}
            Entry::Occupied(mut held) => *held.get_mut() = (rank, r),
            Entry::Vacant(slot) => {
                slot.insert((rank, r));
            }
        }
    }
    best
}

/// The latest row per series of one table (complete or not).
#[derive(Debug)]
pub struct SeriesLatest {
    spec: LastRowSpec,
    rows: HashMap<SeriesValue, Latest>,
}

impl SeriesLatest {
    pub fn new(spec: LastRowSpec) -> SeriesLatest {
        SeriesLatest { spec, rows: HashMap::new() }
    }

    /// Takes each series' first row of `batch` under `ORDER BY time DESC`
    /// where it sorts before (or level with) the one held.
    pub fn absorb(&mut self, batch: &Batch) {
        let (Some(series), Some(time)) = (batch.columns.get(self.spec.series), batch.columns.get(self.spec.time)) else {
            return;
        };
        let times: &dyn Fn(usize) -> i64 = match &time.data {
            ColumnData::Int64(v) => &|r| v[r],
            ColumnData::Int32(v) => &|r| v[r] as i64,
            ColumnData::Int16(v) => &|r| v[r] as i64,
            _ => return,
        };
        let rank_of = |r: usize| -> Rank { if time.is_valid(r) { (false, times(r)) } else { (true, 0) } };
        let valid = |r: usize| series.is_valid(r); // `series = v` never matches NULL
        match &series.data {
            ColumnData::Int64(v) => self.take_best(batch, best_rows(batch.len, valid, |r| v[r], rank_of), SeriesValue::Int),
            ColumnData::Int32(v) => {
                self.take_best(batch, best_rows(batch.len, valid, |r| v[r] as i64, rank_of), SeriesValue::Int)
            }
            ColumnData::Int16(v) => {
                self.take_best(batch, best_rows(batch.len, valid, |r| v[r] as i64, rank_of), SeriesValue::Int)
            }
            ColumnData::Bytes(b) => {
                self.take_best(batch, best_rows(batch.len, valid, |r| b.get(r), rank_of), |k| SeriesValue::Text(k.into()))
            }
            _ => {}
        }
    }

    /// Merges the batch's best row per series (`best_rows`), copying out a
    /// row only where it replaces the one held.
    fn take_best<K>(&mut self, batch: &Batch, best: HashMap<K, (Rank, usize)>, value: impl Fn(K) -> SeriesValue) {
        for (key, (rank, r)) in best {
            match self.rows.entry(value(key)) {
                Entry::Occupied(held) if held.get().rank > rank => {}
                Entry::Occupied(mut held) => {
                    let held = held.get_mut();
                    held.rank = rank;
                    held.row.clear();
                    held.row.extend(batch.columns.iter().map(|c| c.datum(r)));
                }
                Entry::Vacant(slot) => {
                    slot.insert(Latest { rank, row: batch.columns.iter().map(|c| c.datum(r)).collect() });
                }
            }
        }
    }

    /// Merges `other` (same spec) in, keeping each series' first row.
    fn merge(&mut self, other: SeriesLatest) {
        for (key, latest) in other.rows {
            match self.rows.entry(key) {
                Entry::Occupied(held) if held.get().rank > latest.rank => {}
                Entry::Occupied(mut held) => *held.get_mut() = latest,
                Entry::Vacant(slot) => {
                    slot.insert(latest);
                }
            }
        }
    }

    /// Series held.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

#[derive(Debug)]
struct TableEntry {
    latest: SeriesLatest,
    complete: bool,
    generation: u64,
    /// More than `MAX_SERIES` series: nothing held, lookups scan.
    overflowed: bool,
}

impl TableEntry {
    fn check_size(&mut self) {
        if self.latest.rows.len() > MAX_SERIES {
            self.latest.rows = HashMap::new();
            self.complete = false;
            self.overflowed = true;
        }
    }
}

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub enum Lookup {
    /// The series' latest row (all the table's columns), or None: no row.
    Row(Option<Vec<Datum>>),
    /// The entry is not complete: scan the table, then `install` under this generation.
    Incomplete(u64),
    /// The table has too many series to index: scan it.
    Unavailable,
}

/// The last-row index of every table that has been asked. The table map is
/// read by every append (on every shard) and written only when a table is
/// first asked for or dropped.
#[derive(Debug, Default)]
pub struct LastRowRegistry {
    tables: RwLock<HashMap<TableId, Arc<Mutex<TableEntry>>>>,
}

/// The index stays usable if a thread panicked while holding a lock: every
/// update leaves an entry whole (a row is replaced or not).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl LastRowRegistry {
    fn entry(&self, table: TableId) -> Option<Arc<Mutex<TableEntry>>> {
        self.tables.read().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&table).cloned()
    }

    fn tables_mut(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<TableId, Arc<Mutex<TableEntry>>>> {
        self.tables.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `table` has an entry, which every batch of it must reach.
    pub fn tracks(&self, table: TableId) -> bool {
        self.entry(table).is_some()
    }

    /// A committed batch of `table` (all its columns) became visible.
    pub fn absorb(&self, table: TableId, batch: &Batch) {
        if let Some(e) = self.entry(table) {
            let mut e = lock(&e);
            if !e.overflowed {
                e.latest.absorb(batch);
                e.check_size();
            }
        }
    }

    /// Rows of `table` were removed (TRUNCATE, or the first half of a
    /// DELETE/UPDATE rewrite): the entry needs a new scan.
    pub fn forget_rows(&self, table: TableId) {
        if let Some(e) = self.entry(table) {
            let mut e = lock(&e);
            e.latest.rows.clear();
            e.complete = false;
            e.overflowed = false;
            e.generation += 1;
        }
    }

    /// Retention removed the rows of `table` before `cutoff`: a series whose
    /// latest row is before it has no row left (a NULL time is kept, as
    /// retention keeps it).
    pub fn drop_before(&self, table: TableId, cutoff: i64) {
        if let Some(e) = self.entry(table) {
            let mut e = lock(&e);
            e.latest.rows.retain(|_, l| l.rank.0 || l.rank.1 >= cutoff);
            e.generation += 1;
        }
    }

    pub fn drop_table(&self, table: TableId) {
        if self.entry(table).is_some() {
            self.tables_mut().remove(&table);
        }
    }

    /// The latest row of series `key` of `table` under `spec`. The first
    /// lookup of a table (or of another spec) creates its entry, incomplete.
    pub fn lookup(&self, table: TableId, spec: LastRowSpec, key: &SeriesValue) -> Lookup {
        let e = match self.entry(table) {
            Some(e) if lock(&e).latest.spec == spec => e,
            _ => {
                let mut tables = self.tables_mut();
                let e = tables.entry(table).or_insert_with(|| new_entry(spec));
                if lock(e).latest.spec != spec {
                    *e = new_entry(spec);
                }
                e.clone()
            }
        };
        let e = lock(&e);
        if e.overflowed {
            return Lookup::Unavailable;
        }
        if !e.complete {
            return Lookup::Incomplete(e.generation);
        }
        Lookup::Row(e.latest.rows.get(key).map(|l| l.row.clone()))
    }

    /// Merges a scan of `table`'s rows taken after `lookup` answered
    /// `Incomplete(generation)`; the entry is complete unless rows were
    /// removed meanwhile. Returns whether it is.
    pub fn install(&self, table: TableId, generation: u64, scanned: SeriesLatest) -> bool {
        let Some(e) = self.entry(table) else { return false };
        let mut e = lock(&e);
        if e.generation != generation || e.latest.spec != scanned.spec || e.overflowed {
            return false;
        }
        e.latest.merge(scanned);
        e.complete = true;
        e.check_size();
        e.complete
    }
}

fn new_entry(spec: LastRowSpec) -> Arc<Mutex<TableEntry>> {
    Arc::new(Mutex::new(TableEntry {
        latest: SeriesLatest::new(spec),
        complete: false,
        generation: 0,
        overflowed: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Column;

    const SPEC: LastRowSpec = LastRowSpec { series: 1, time: 0 };

    fn batch(rows: &[(Option<i64>, i32, f64)]) -> Batch {
        let times: Vec<Datum> = rows.iter().map(|r| r.0.map_or(Datum::Null, Datum::Int64)).collect();
        let ids: Vec<Datum> = rows.iter().map(|r| Datum::Int32(r.1)).collect();
        let vals: Vec<Datum> = rows.iter().map(|r| Datum::Float64(r.2)).collect();
        Batch::from_columns(vec![
            Column::from_datums(DataType::TimestampTz, &times),
            Column::from_datums(DataType::Int32, &ids),
            Column::from_datums(DataType::Float64, &vals),
        ])
    }

    fn value_of(reg: &LastRowRegistry, id: i64) -> Option<Datum> {
        match reg.lookup(7, SPEC, &SeriesValue::Int(id)) {
            Lookup::Row(row) => row.map(|r| r[2].clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_entry_answers_only_once_a_scan_is_installed_and_merges_appends_in_any_order() {
        let reg = LastRowRegistry::default();
        let Lookup::Incomplete(g) = reg.lookup(7, SPEC, &SeriesValue::Int(1)) else { panic!() };
        // appended after the entry exists, before the scan is installed
        reg.absorb(7, &batch(&[(Some(50), 1, 5.0), (Some(10), 2, 1.0)]));
        let mut scanned = SeriesLatest::new(SPEC);
        scanned.absorb(&batch(&[(Some(40), 1, 4.0), (Some(20), 2, 2.0), (Some(30), 2, 3.0)]));
        assert!(reg.install(7, g, scanned));
        assert_eq!(value_of(&reg, 1), Some(Datum::Float64(5.0)));
        assert_eq!(value_of(&reg, 2), Some(Datum::Float64(3.0)));
        assert_eq!(value_of(&reg, 3), None);
        // equal times: the later write; a NULL time sorts first under DESC
        reg.absorb(7, &batch(&[(Some(50), 1, 6.0)]));
        assert_eq!(value_of(&reg, 1), Some(Datum::Float64(6.0)));
        reg.absorb(7, &batch(&[(None, 2, 9.0), (Some(99), 2, 8.0)]));
        assert_eq!(value_of(&reg, 2), Some(Datum::Float64(9.0)));
    }

    #[test]
    fn a_table_with_too_many_series_is_not_indexed_until_its_rows_are_removed() {
        let reg = LastRowRegistry::default();
        let Lookup::Incomplete(g) = reg.lookup(7, SPEC, &SeriesValue::Int(1)) else { panic!() };
        assert!(reg.install(7, g, SeriesLatest::new(SPEC)));
        let many: Vec<(Option<i64>, i32, f64)> = (0..=MAX_SERIES as i32).map(|i| (Some(1), i, 0.0)).collect();
        reg.absorb(7, &batch(&many));
        assert_eq!(reg.lookup(7, SPEC, &SeriesValue::Int(1)), Lookup::Unavailable);
        reg.absorb(7, &batch(&[(Some(2), 1, 1.0)]));
        assert_eq!(reg.lookup(7, SPEC, &SeriesValue::Int(1)), Lookup::Unavailable);
        reg.forget_rows(7);
        assert!(matches!(reg.lookup(7, SPEC, &SeriesValue::Int(1)), Lookup::Incomplete(_)));
    }

    #[test]
    fn removing_rows_makes_a_pending_scan_stale() {
        let reg = LastRowRegistry::default();
        let Lookup::Incomplete(g) = reg.lookup(7, SPEC, &SeriesValue::Int(1)) else { panic!() };
        reg.forget_rows(7);
        assert!(!reg.install(7, g, SeriesLatest::new(SPEC)));
        let Lookup::Incomplete(g) = reg.lookup(7, SPEC, &SeriesValue::Int(1)) else { panic!() };
        let mut scanned = SeriesLatest::new(SPEC);
        scanned.absorb(&batch(&[(Some(10), 1, 1.0), (Some(100), 2, 2.0)]));
        assert!(reg.install(7, g, scanned));
        reg.drop_before(7, 50);
        assert_eq!(value_of(&reg, 1), None);
        assert_eq!(value_of(&reg, 2), Some(Datum::Float64(2.0)));
        // another spec (the index changed) starts over
        let other = LastRowSpec { series: 0, time: 1 };
        assert!(matches!(reg.lookup(7, other, &SeriesValue::Int(1)), Lookup::Incomplete(_)));
    }
}
