//! Which points of a line-protocol table may be stored, so that a write of
//! points can tell cheaply that none of them is.
//!
//! In line protocol a point is identified by its measurement, tag set and
//! time; writing a point again merges its fields into the stored one (last
//! write wins per field). Checking every incoming row against the stored rows
//! would cost a lookup per row, so each table keeps per series (the values of
//! its `series_tag` columns, known by their hash) a floor and the times above it that were
//! written: every stored point of the series later than the floor is in that
//! set, kept as runs of evenly spaced times (one run for a sensor or agent
//! reporting every N seconds). A row above the floor and not in the set is
//! new (and goes in the set: a concurrent writer of the same point then sees
//! it). Loaders that write batches in parallel deliver each series' times out
//! of order, which the runs cover; a series keeps its latest
//! `runs_per_series()` runs, raising the floor past the ones it lets go. Any other row — a repeat, a point at or below the
//! floor, a duplicate inside the write — sends the write down the merging
//! path (`sql/session/point_merge.rs`), which looks the points up under
//! `Server::rewrites` held alone.
//!
//! Built by a scan (`max(time)` per series, which becomes the floor) when
//! first needed and forgotten with the table's other derived write state.
//! Between those it only grows, so it stays a superset of the stored points
//! above each floor even when a write that added to it fails (costing a
//! lookup later, never a lost merge).
//! Must not: decide what is stored (callers do), or hold its lock across an await.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::catalog::{TableDef, TableId};
use crate::exec::agg::encode_key;
use crate::exec::vector::{Batch, ColumnData};

/// One table's series times, in stripes by series hash: the shards writing
/// batches of one table at once lock different stripes most of the time,
/// and keys and hashes are computed before any lock is taken.
pub struct TableSeriesTimes {
    /// Filled from the stored rows (`absorb`) since the table was last forgotten.
    built: AtomicBool,
    series_count: AtomicUsize,
    hasher: hashbrown::DefaultHashBuilder,
    stripes: Vec<Mutex<hashbrown::HashTable<SeriesEntry>>>,
}

/// One series in a stripe, known by its hash alone (`series_hashes`): two
/// series whose hashes collide share one window, which then holds both
/// one's times and the higher floor — a superset for each, so a collision
/// can only send a write down the merging path, never let a repeat pass as new.
struct SeriesEntry {
    hash: u64,
    window: SeriesWindow,
}

const STRIPES: usize = 16;

/// Bits the stripe tables' own probing (low bits, top 7) does not use.
fn stripe_of(hash: u64) -> usize {
    (hash >> 40) as usize % STRIPES
}

/// Rows whose keys one pass holds.
const ADVANCE_PIECE_ROWS: usize = 16_384;

/// A write's hashes, kept per thread between writes: fresh buffers per
/// batch would cost the kernel's page zeroing.
#[derive(Default)]
struct AdvanceScratch {
    hashes: Vec<u64>,
    by_stripe: Vec<Vec<u32>>,
    /// One non-text value's key bytes.
    value: Vec<u8>,
}

thread_local! {
    static ADVANCE_SCRATCH: std::cell::RefCell<AdvanceScratch> = std::cell::RefCell::new(AdvanceScratch::default());
}

impl Default for TableSeriesTimes {
    fn default() -> Self {
        TableSeriesTimes {
            built: AtomicBool::new(false),
            series_count: AtomicUsize::new(0),
            hasher: Default::default(),
            stripes: (0..STRIPES).map(|_| Mutex::new(hashbrown::HashTable::new())).collect(),
        }
    }
}

/// One series: its stored points later than `floor` all have a time in `runs`.
struct SeriesWindow {
    floor: i64,
    /// Ascending and disjoint: regular times (every 10 s) are one run however
    /// many there are, and batches landing out of order join up again.
    runs: Vec<TimeRun>,
}

/// The times `start, start + step, …, end` (`step` 0: just `start`).
#[derive(Clone, Copy)]
struct TimeRun {
    start: i64,
    end: i64,
    step: i64,
}

impl TimeRun {
    #[cfg(test)]
    fn holds(&self, t: i64) -> bool {
        t >= self.start && t <= self.end && (self.step == 0 || (t as i128 - self.start as i128) % self.step as i128 == 0)
    }

    /// Cuts the run to its times after `t`; false when none is left.
    fn keep_above(&mut self, t: i64) -> bool {
        if self.end <= t {
            return false;
        }
        if self.start <= t {
            // end > t >= start, so the run has a step.
            let skipped = (t as i128 - self.start as i128) / self.step as i128 + 1;
            self.start = (self.start as i128 + skipped * self.step as i128) as i64;
            if self.start == self.end {
                self.step = 0;
            }
        }
        true
    }

    /// The next time the run would take.
    fn next(&self) -> Option<i64> {
        (self.step != 0).then(|| self.end.checked_add(self.step)).flatten()
    }
}

/// Most runs a series keeps above its floor: enough for parallel loaders'
/// batches to land far out of order, fewer when series are many (memory then
/// stays near 200 MiB).
fn runs_per_series(series: usize) -> usize {
    (8_000_000 / series.max(1)).clamp(8, 1024)
}

impl SeriesWindow {
    fn new(t: i64) -> SeriesWindow {
        SeriesWindow { floor: i64::MIN, runs: vec![TimeRun { start: t, end: t, step: 0 }] }
    }

    /// Adds `t` unless it may be stored already (then `false`): at or below
    /// the floor, or written before.
    fn add(&mut self, t: i64, capacity: usize) -> bool {
        if t <= self.floor {
            return false;
        }
        let at = self.runs.partition_point(|r| r.start <= t);
        if at > 0 && t <= self.runs[at - 1].end {
            let run = self.runs[at - 1];
            if run.step == 0 || (t as i128 - run.start as i128) % run.step as i128 == 0 {
                return false;
            }
            // Off the run's cadence: split it around t.
            let below = (t as i128 - run.start as i128) / run.step as i128;
            let left_end = (run.start as i128 + below * run.step as i128) as i64;
            let right_start = left_end + run.step;
            self.runs[at - 1] = TimeRun { start: run.start, end: left_end, step: if left_end == run.start { 0 } else { run.step } };
            let right = TimeRun { start: right_start, end: run.end, step: if right_start == run.end { 0 } else { run.step } };
            self.runs.insert(at, TimeRun { start: t, end: t, step: 0 });
            self.runs.insert(at + 1, right);
        } else {
            self.runs.insert(at, TimeRun { start: t, end: t, step: 0 });
            self.join(at);
            if at > 0 {
                self.join(at - 1);
            }
        }
        self.bound(capacity);
        true
    }

    /// Joins runs `i` and `i + 1` when they make one progression.
    fn join(&mut self, i: usize) {
        let (Some(&a), Some(&b)) = (self.runs.get(i), self.runs.get(i + 1)) else { return };
        let step = match (a.step, b.step) {
            (0, 0) => b.start - a.start,
            (0, s) if b.start.checked_sub(s) == Some(a.start) => s,
            (s, 0) if a.next() == Some(b.start) => s,
            (s, t) if s == t && a.next() == Some(b.start) => s,
            _ => return,
        };
        self.runs[i] = TimeRun { start: a.start, end: b.end, step };
        self.runs.remove(i + 1);
    }

    /// Lets the older half of the runs go when there are too many: the floor rises past them.
    fn bound(&mut self, capacity: usize) {
        if self.runs.len() > capacity {
            let drop = self.runs.len() / 2;
            self.floor = self.runs[drop - 1].end;
            self.runs.drain(..drop);
        }
    }
}

pub type SharedSeriesTimes = Arc<TableSeriesTimes>;

/// Every line-protocol table's series times, by table.
#[derive(Default)]
pub struct SeriesTimes {
    tables: Mutex<HashMap<TableId, SharedSeriesTimes>>,
}

impl SeriesTimes {
    pub fn table(&self, table: TableId) -> SharedSeriesTimes {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables.entry(table).or_default().clone()
    }

    /// Forgets the table's times: its rows changed in ways they do not follow.
    pub fn forget_table(&self, table: TableId) {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables.remove(&table);
    }
}

/// The columns that identify a point of `table`: its tags, and its time column.
pub fn point_columns(table: &TableDef) -> Option<(Vec<usize>, usize)> {
    let time = table.column_index("time")?;
    let tags = table
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.series_tag)
        .map(|(i, _)| i)
        .collect();
    Some((tags, time))
}

/// Row `r`'s series key (its tag values, NULL included) appended to `out`.
pub fn series_key(batch: &Batch, tags: &[usize], r: usize, out: &mut Vec<u8>) {
    for &c in tags {
        encode_key(&batch.columns[c], r, out);
    }
}

/// The series hashes of `rows`, computed tag column by tag column (no key
/// is built). Equal tag values hash equal; see `SeriesEntry` on collisions.
fn series_hashes(hasher: &impl BuildHasher, batch: &Batch, tags: &[usize], rows: std::ops::Range<usize>, value: &mut Vec<u8>, out: &mut Vec<u64>) {
    const NULL_HASH: u64 = 0x51_7cc1_b727_220a;
    out.clear();
    out.resize(rows.len(), 0);
    for &c in tags {
        let col = &batch.columns[c];
        let mix = |h: &mut u64, v: u64| *h = (h.rotate_left(23) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        match &col.data {
            ColumnData::Bytes(b) => {
                for (h, r) in out.iter_mut().zip(rows.clone()) {
                    mix(h, if col.is_valid(r) { hasher.hash_one(b.get(r)) } else { NULL_HASH });
                }
            }
            _ => {
                for (h, r) in out.iter_mut().zip(rows.clone()) {
                    value.clear();
                    encode_key(col, r, value);
                    mix(h, hasher.hash_one(value.as_slice()));
                }
            }
        }
    }
    for h in out.iter_mut() {
        *h ^= *h >> 29;
    }
}

/// Row `r`'s time (None when NULL or not a time column).
pub fn row_time(batch: &Batch, time: usize, r: usize) -> Option<i64> {
    let col = &batch.columns[time];
    match &col.data {
        ColumnData::Int64(v) if col.is_valid(r) => Some(v[r]),
        _ => None,
    }
}

impl TableSeriesTimes {
    pub fn is_built(&self) -> bool {
        self.built.load(Ordering::Acquire)
    }

    /// Records the rows' points. Returns whether every one was new: above its
    /// series' floor and not written before (then no row of `batch` is stored
    /// yet, and no two rows of it are the same point).
    pub fn advance(&self, batch: &Batch, tags: &[usize], time: usize) -> bool {
        ADVANCE_SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let mut all_new = true;
            // In pieces, so that the scratch stays small whatever the write.
            for from in (0..batch.len).step_by(ADVANCE_PIECE_ROWS) {
                let rows = from..(from + ADVANCE_PIECE_ROWS).min(batch.len);
                all_new &= self.advance_rows(&mut scratch, batch, rows, tags, time);
            }
            all_new
        })
    }

    fn advance_rows(&self, scratch: &mut AdvanceScratch, batch: &Batch, rows: std::ops::Range<usize>, tags: &[usize], time: usize) -> bool {
        let mut all_new = true;
        // Hashes and stripes first, without a lock.
        let AdvanceScratch { hashes, by_stripe, value } = scratch;
        by_stripe.resize_with(STRIPES, Vec::new);
        by_stripe.iter_mut().for_each(Vec::clear);
        let first = rows.start;
        series_hashes(&self.hasher, batch, tags, rows, value, hashes);
        for (i, &hash) in hashes.iter().enumerate() {
            by_stripe[stripe_of(hash)].push(i as u32);
        }
        let capacity = runs_per_series(self.series_count.load(Ordering::Relaxed));
        for (stripe, rows) in self.stripes.iter().zip(by_stripe.iter()) {
            if rows.is_empty() {
                continue;
            }
            let mut series = stripe.lock().unwrap_or_else(|e| e.into_inner());
            for &i in rows {
                let (hash, r) = (hashes[i as usize], first + i as usize);
                let Some(t) = row_time(batch, time, r) else {
                    all_new = false;
                    continue;
                };
                let new = match series.find_mut(hash, |e| e.hash == hash) {
                    Some(entry) => entry.window.add(t, capacity),
                    None => {
                        series.insert_unique(hash, SeriesEntry { hash, window: SeriesWindow::new(t) }, |e| e.hash);
                        self.series_count.fetch_add(1, Ordering::Relaxed);
                        true
                    }
                };
                all_new &= new;
            }
        }
        all_new
    }

    /// Takes in the latest stored time of each series (rows of tag columns…,
    /// max time) as its floor.
    pub fn absorb(&self, batches: &[Batch]) {
        let (mut hashes, mut value) = (Vec::new(), Vec::new());
        for b in batches {
            let Some(time) = b.columns.len().checked_sub(1) else { continue };
            let tags: Vec<usize> = (0..time).collect();
            series_hashes(&self.hasher, b, &tags, 0..b.len, &mut value, &mut hashes);
            for (r, &hash) in hashes.iter().enumerate() {
                let Some(t) = row_time(b, time, r) else { continue };
                let mut series = self.stripes[stripe_of(hash)].lock().unwrap_or_else(|e| e.into_inner());
                let window = match series.find_mut(hash, |e| e.hash == hash) {
                    Some(entry) => &mut entry.window,
                    None => {
                        self.series_count.fetch_add(1, Ordering::Relaxed);
                        let empty = SeriesWindow { floor: i64::MIN, runs: Vec::new() };
                        &mut series.insert_unique(hash, SeriesEntry { hash, window: empty }, |e| e.hash).into_mut().window
                    }
                };
                if t > window.floor {
                    window.floor = t;
                    window.runs.retain_mut(|r| r.keep_above(t));
                }
            }
        }
        self.built.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Column;
    use crate::types::{DataType, Datum};

    fn points(rows: &[(Option<&str>, i64)]) -> Batch {
        let tags: Vec<Datum> = rows
            .iter()
            .map(|(t, _)| t.map_or(Datum::Null, Datum::text))
            .collect();
        let times: Vec<Datum> = rows.iter().map(|(_, t)| Datum::Int64(*t)).collect();
        Batch::from_columns(vec![
            Column::from_datums(DataType::Text, &tags),
            Column::from_datums(DataType::TimestampTz, &times),
        ])
    }

    #[test]
    fn new_points_of_each_series_pass() {
        let s = TableSeriesTimes::default();
        assert!(s.advance(&points(&[(Some("a"), 1), (Some("b"), 1), (None, 1), (Some("a"), 2)]), &[0], 1));
        assert!(s.advance(&points(&[(Some("a"), 3), (Some("b"), 2), (None, 2)]), &[0], 1));
    }

    #[test]
    fn repeats_are_caught() {
        let s = TableSeriesTimes::default();
        assert!(s.advance(&points(&[(Some("a"), 5)]), &[0], 1));
        // The same point again, and a repeat inside one write.
        assert!(!s.advance(&points(&[(Some("a"), 5)]), &[0], 1));
        assert!(!s.advance(&points(&[(Some("b"), 7), (Some("b"), 7)]), &[0], 1));
        // NULL and the empty string are different series.
        assert!(s.advance(&points(&[(None, 5), (Some(""), 5)]), &[0], 1));
    }

    #[test]
    fn writes_longer_than_a_piece_are_checked_whole() {
        let s = TableSeriesTimes::default();
        let mut rows: Vec<(Option<&str>, i64)> = (0..40_000).map(|t| (Some("a"), t)).collect();
        assert!(s.advance(&points(&rows), &[0], 1));
        rows.push((Some("a"), 5));
        assert!(!s.advance(&points(&rows[39_990..]), &[0], 1), "repeats after a write of several pieces");
    }

    #[test]
    fn parallel_batches_landing_out_of_order_are_new() {
        let s = TableSeriesTimes::default();
        assert!(s.advance(&points(&[(Some("a"), 3), (Some("a"), 4)]), &[0], 1));
        assert!(s.advance(&points(&[(Some("a"), 1), (Some("a"), 2)]), &[0], 1));
        assert!(!s.advance(&points(&[(Some("a"), 2)]), &[0], 1));
    }

    #[test]
    fn regular_times_in_interleaved_batches_join_into_one_run() {
        let mut w = SeriesWindow { floor: i64::MIN, runs: Vec::new() };
        // Batches of 5 times every 10, landing in the order 2, 0, 3, 1.
        for batch in [2, 0, 3, 1] {
            for i in 0..5 {
                assert!(w.add(100 + (batch * 5 + i) * 10, 1024), "batch {batch} time {i}");
            }
        }
        assert_eq!(w.runs.len(), 1, "one run from 100 to 290");
        assert_eq!((w.runs[0].start, w.runs[0].end, w.runs[0].step), (100, 290, 10));
        for t in (100..=290).step_by(10) {
            assert!(!w.add(t, 1024), "{t} is stored");
        }
        // Off the cadence inside the run: new once, then stored; the run's times still are.
        assert!(w.add(105, 1024));
        assert!(!w.add(105, 1024));
        for t in (100..=290).step_by(10) {
            assert!(!w.add(t, 1024), "{t} is still stored");
        }
        assert!(w.add(300, 1024) && w.add(90, 1024) && w.add(1000, 1024));
    }

    #[test]
    fn runs_let_go_count_as_maybe_stored() {
        let mut w = SeriesWindow::new(0);
        // Irregular times: every one its own run.
        let mut t = 0;
        for i in 1..=100 {
            t += i;
            assert!(w.add(t, 16));
        }
        assert!(w.runs.len() <= 16);
        assert!(!w.add(1, 16), "below the floor now");
        assert!(w.add(t + 1, 16));
    }

    /// The runs agree with an exact set of stored times on random writes.
    #[test]
    fn runs_never_call_a_stored_time_new() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..200 {
            let mut w = SeriesWindow { floor: i64::MIN, runs: Vec::new() };
            let mut stored = std::collections::BTreeSet::new();
            let cadence = [1, 10, 7][round % 3];
            for _ in 0..300 {
                let t = (next() % 120) as i64 * cadence + if next() % 9 == 0 { 3 } else { 0 };
                let new = w.add(t, 12);
                if new {
                    assert!(stored.insert(t), "round {round}: {t} was stored but called new");
                } else {
                    stored.insert(t);
                }
                for pair in w.runs.windows(2) {
                    assert!(pair[0].end < pair[1].start, "runs ascending and disjoint");
                }
                for &x in stored.range(w.floor.saturating_add(1)..) {
                    assert!(w.runs.iter().any(|r| r.holds(x)), "round {round}: stored {x} above the floor is in no run");
                }
            }
        }
    }

    #[test]
    fn absorbed_scan_results_count_as_stored() {
        let s = TableSeriesTimes::default();
        s.absorb(&[points(&[(Some("a"), 10)])]);
        assert!(s.is_built());
        assert!(!s.advance(&points(&[(Some("a"), 10)]), &[0], 1));
        assert!(!s.advance(&points(&[(Some("a"), 9)]), &[0], 1));
        assert!(s.advance(&points(&[(Some("a"), 11)]), &[0], 1));
        assert!(s.advance(&points(&[(Some("b"), 1)]), &[0], 1));
        // A scan that ran before a concurrent write landed keeps that write's later times.
        let s = TableSeriesTimes::default();
        assert!(s.advance(&points(&[(Some("a"), 10), (Some("a"), 20), (Some("a"), 30)]), &[0], 1));
        s.absorb(&[points(&[(Some("a"), 15)])]);
        assert!(!s.advance(&points(&[(Some("a"), 20)]), &[0], 1));
        assert!(!s.advance(&points(&[(Some("a"), 30)]), &[0], 1));
        assert!(!s.advance(&points(&[(Some("a"), 12)]), &[0], 1));
        assert!(s.advance(&points(&[(Some("a"), 40)]), &[0], 1));
    }
}
