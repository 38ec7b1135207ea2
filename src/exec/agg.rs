//! Hash aggregation, split as "intern keys → group ids" then "update
//! accumulators by id" (one typed loop per accumulator and batch). Runs in
//! three modes: `Single` (raw rows → results), `Partial` (raw rows → states,
//! on each shard) and `Final` (states → results, on the coordinating shard).
//! Must not: evaluate expressions (callers pass evaluated columns).

use hashbrown::HashMap;
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::Decimal;
use std::sync::Arc;

use crate::error::{DbError, DbResult};
use crate::exec::vector::{Batch, Column, ColumnData};
use crate::sql::plan::AggFunc;
use crate::types::datetime::{interval_add, interval_div};
use crate::types::{DataType, Datum, Interval, Numeric};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggMode {
    Single,
    Partial,
    Final,
}

/// Appends a canonical byte encoding of row `i` of `col` to `out` (group
/// keys, DISTINCT, set operations, hash joins): equal values give equal bytes.
pub fn encode_key(col: &Column, i: usize, out: &mut Vec<u8>) {
    if !col.is_valid(i) {
        out.push(0);
        return;
    }
    out.push(1);
    match &col.data {
        ColumnData::Bool(v) => out.push(v[i] as u8),
        ColumnData::Int16(v) => out.extend_from_slice(&(v[i] as i64).to_le_bytes()),
        ColumnData::Int32(v) => out.extend_from_slice(&(v[i] as i64).to_le_bytes()),
        ColumnData::Int64(v) => out.extend_from_slice(&v[i].to_le_bytes()),
        ColumnData::Float32(v) => out.extend_from_slice(&canonical_f64(v[i] as f64).to_le_bytes()),
        ColumnData::Float64(v) => out.extend_from_slice(&canonical_f64(v[i]).to_le_bytes()),
        ColumnData::Numeric(v) => match v[i] {
            crate::types::Numeric::Finite(d) => out.extend_from_slice(d.normalize().to_string().as_bytes()),
            // "NaN" and "±Infinity" never collide with a decimal's digits.
            special => out.extend_from_slice(special.to_string().as_bytes()),
        },
        ColumnData::Bytes(b) => {
            let s = b.get(i);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s);
        }
        ColumnData::Interval(v) => out.extend_from_slice(&v[i].total_micros().to_le_bytes()),
    }
}

fn canonical_f64(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

/// How keys are looked up: one integer-like key, one byte-string key, or
/// any number of keys of any type (encoded with `encode_key`).
enum KeyIndex {
    Int(HashMap<i64, u32>),
    /// Two integer-like keys (a time bucket and a tag id): the pair, with a
    /// bit per key for NULL (its value then 0).
    IntPair(HashMap<(i64, i64, u8), u32>),
    Bytes(HashMap<Box<[u8]>, u32>),
    Encoded(HashMap<Box<[u8]>, u32>),
}

/// The key values of each group, in group-id order.
struct GroupKeys {
    columns: Vec<Column>,
    count: usize,
    /// The group of the NULL key (single-key indexes only).
    null_group: Option<u32>,
}

impl GroupKeys {
    fn add(&mut self, key_cols: &[&Column], row: usize) -> u32 {
        let id = self.count as u32;
        for (k, c) in self.columns.iter_mut().zip(key_cols) {
            k.push_datum(&c.datum(row));
        }
        self.count += 1;
        id
    }

    fn null_id(&mut self, key_cols: &[&Column], row: usize) -> u32 {
        match self.null_group {
            Some(id) => id,
            None => {
                let id = self.add(key_cols, row);
                self.null_group = Some(id);
                id
            }
        }
    }
}

/// Maps group keys to dense group ids and remembers each group's key values.
pub struct GroupTable {
    index: KeyIndex,
    keys: GroupKeys,
    scratch: Vec<u8>,
}

impl GroupTable {
    pub fn new(key_types: Vec<DataType>) -> GroupTable {
        use crate::types::PhysicalType as P;
        let index = match key_types.as_slice() {
            [t] if matches!(t.physical(), P::Int16 | P::Int32 | P::Int64 | P::Bool) => {
                KeyIndex::Int(HashMap::new())
            }
            [t] if t.physical() == P::Bytes => KeyIndex::Bytes(HashMap::new()),
            [a, b]
                if [a, b]
                    .iter()
                    .all(|t| matches!(t.physical(), P::Int16 | P::Int32 | P::Int64 | P::Bool)) =>
            {
                KeyIndex::IntPair(HashMap::new())
            }
            _ => KeyIndex::Encoded(HashMap::new()),
        };
        let columns = key_types.iter().map(|t| Column::empty(*t)).collect();
        GroupTable {
            index,
            keys: GroupKeys {
                columns,
                count: 0,
                null_group: None,
            },
            scratch: Vec::new(),
        }
    }
    pub fn len(&self) -> usize {
        self.keys.count
    }
    pub fn is_empty(&self) -> bool {
        self.keys.count == 0
    }

    /// Group ids for every row of the key columns.
    pub fn intern(&mut self, key_cols: &[&Column], rows: usize, ids: &mut Vec<u32>) {
        ids.clear();
        if key_cols.is_empty() {
            if self.keys.count == 0 {
                self.keys.count = 1;
            }
            ids.resize(rows, 0);
            return;
        }
        ids.reserve(rows);
        let col = key_cols[0];
        let keys = &mut self.keys;
        match (&mut self.index, &col.data) {
            // Rows often arrive in runs of one group (segments sort by series
            // and time): the previous row's group is checked before the map.
            (KeyIndex::Int(map), data) => {
                let mut last: Option<(i64, u32)> = None;
                for i in 0..rows {
                    let id = if !col.is_valid(i) {
                        keys.null_id(key_cols, i)
                    } else {
                        run_id(map, &mut last, int_key(data, i), || keys.add(key_cols, i))
                    };
                    ids.push(id);
                }
            }
            (KeyIndex::IntPair(map), first) if key_cols.len() == 2 => {
                let other = key_cols[1];
                let mut last: Option<((i64, i64, u8), u32)> = None;
                for i in 0..rows {
                    let (a_null, b_null) = (!col.is_valid(i), !other.is_valid(i));
                    let key = (
                        if a_null { 0 } else { int_key(first, i) },
                        if b_null { 0 } else { int_key(&other.data, i) },
                        a_null as u8 | (b_null as u8) << 1,
                    );
                    ids.push(run_id(map, &mut last, key, || keys.add(key_cols, i)));
                }
            }
            (KeyIndex::Bytes(map), ColumnData::Bytes(b)) => {
                for i in 0..rows {
                    let id = if !col.is_valid(i) {
                        keys.null_id(key_cols, i)
                    } else {
                        let v = b.get(i);
                        match map.get(v) {
                            Some(id) => *id,
                            None => {
                                let id = keys.add(key_cols, i);
                                map.insert(v.into(), id);
                                id
                            }
                        }
                    };
                    ids.push(id);
                }
            }
            (index, _) => {
                if !matches!(index, KeyIndex::Encoded(_)) {
                    *index = KeyIndex::Encoded(HashMap::new());
                }
                let KeyIndex::Encoded(map) = index else {
                    return;
                };
                for i in 0..rows {
                    self.scratch.clear();
                    for c in key_cols {
                        encode_key(c, i, &mut self.scratch);
                    }
                    let id = match map.get(self.scratch.as_slice()) {
                        Some(id) => *id,
                        None => {
                            let id = keys.add(key_cols, i);
                            map.insert(self.scratch.clone().into_boxed_slice(), id);
                            id
                        }
                    };
                    ids.push(id);
                }
            }
        }
    }

    pub fn key_columns(&self) -> Vec<Column> {
        self.keys.columns.clone()
    }
}

/// The group id of `key`: the previous row's when the key repeats, else the
/// map's (`add` makes a new group).
#[inline]
fn run_id<K: Copy + Eq + std::hash::Hash>(
    map: &mut HashMap<K, u32>,
    last: &mut Option<(K, u32)>,
    key: K,
    add: impl FnOnce() -> u32,
) -> u32 {
    match *last {
        Some((k, id)) if k == key => id,
        _ => {
            let id = *map.entry(key).or_insert_with(add);
            *last = Some((key, id));
            id
        }
    }
}

#[inline]
fn int_key(data: &ColumnData, i: usize) -> i64 {
    match data {
        ColumnData::Int16(v) => v[i] as i64,
        ColumnData::Int32(v) => v[i] as i64,
        ColumnData::Int64(v) => v[i],
        ColumnData::Bool(v) => v[i] as i64,
        _ => 0,
    }
}

/// Per-group state of one aggregate.
#[derive(Clone)]
enum Acc {
    Count(Vec<i64>),
    SumInt {
        sum: Vec<i128>,
        seen: Vec<bool>,
    },
    SumFloat {
        sum: Vec<f64>,
        seen: Vec<bool>,
    },
    SumDec {
        sum: Vec<Numeric>,
        seen: Vec<bool>,
    },
    AvgInt {
        sum: Vec<i128>,
        count: Vec<i64>,
    },
    AvgFloat {
        sum: Vec<f64>,
        count: Vec<i64>,
    },
    AvgDec {
        sum: Vec<Numeric>,
        count: Vec<i64>,
    },
    /// sum(interval) and avg(interval): months, days and microseconds added
    /// apart, as PostgreSQL's interval_pl does (an overflow is 22008).
    SumInterval {
        sum: Vec<Interval>,
        seen: Vec<bool>,
    },
    AvgInterval {
        sum: Vec<Interval>,
        count: Vec<i64>,
    },
    MinMax {
        vals: Vec<Datum>,
        is_min: bool,
    },
    Bool {
        vals: Vec<Option<bool>>,
        is_and: bool,
    },
    /// first/last: per group the (time, value) record with the earliest
    /// (latest) non-NULL time so far, and that time.
    Bookend {
        records: Vec<Datum>,
        times: Vec<Datum>,
        first: bool,
    },
    /// Every non-NULL value of each group, in arrival order (string_agg,
    /// percentiles); `constant` is the delimiter or the fraction.
    Collect {
        vals: Vec<Vec<Datum>>,
        constant: Datum,
    },
}

/// One aggregate of an aggregation: its function, types and state.
pub struct Accumulator {
    func: AggFunc,
    arg_type: DataType,
    result_type: DataType,
    acc: Acc,
}

impl Accumulator {
    pub fn new(func: AggFunc, arg_type: DataType, result_type: DataType) -> DbResult<Accumulator> {
        let acc = match func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(Vec::new()),
            AggFunc::Sum => match arg_type {
                DataType::Int16 | DataType::Int32 | DataType::Int64 => Acc::SumInt {
                    sum: vec![],
                    seen: vec![],
                },
                DataType::Float32 | DataType::Float64 => Acc::SumFloat {
                    sum: vec![],
                    seen: vec![],
                },
                DataType::Numeric => Acc::SumDec {
                    sum: vec![],
                    seen: vec![],
                },
                DataType::Interval => Acc::SumInterval {
                    sum: vec![],
                    seen: vec![],
                },
                t => return Err(DbError::unsupported(format!("sum({})", t.name()))),
            },
            AggFunc::Avg => match arg_type {
                DataType::Int16 | DataType::Int32 | DataType::Int64 => Acc::AvgInt {
                    sum: vec![],
                    count: vec![],
                },
                DataType::Float32 | DataType::Float64 => Acc::AvgFloat {
                    sum: vec![],
                    count: vec![],
                },
                DataType::Numeric => Acc::AvgDec {
                    sum: vec![],
                    count: vec![],
                },
                DataType::Interval => Acc::AvgInterval {
                    sum: vec![],
                    count: vec![],
                },
                t => return Err(DbError::unsupported(format!("avg({})", t.name()))),
            },
            AggFunc::Min | AggFunc::Max => Acc::MinMax {
                vals: vec![],
                is_min: func == AggFunc::Min,
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => Acc::Bool {
                vals: vec![],
                is_and: func == AggFunc::BoolAnd,
            },
            AggFunc::First | AggFunc::Last => Acc::Bookend {
                records: vec![],
                times: vec![],
                first: func == AggFunc::First,
            },
            AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::PercentileCont { .. } | AggFunc::PercentileDisc { .. } => Acc::Collect {
                vals: vec![],
                constant: Datum::Null,
            },
        };
        Ok(Accumulator {
            func,
            arg_type,
            result_type,
            acc,
        })
    }

    fn resize(&mut self, groups: usize) {
        match &mut self.acc {
            Acc::Count(v) => v.resize(groups, 0),
            Acc::SumInt { sum, seen } => {
                sum.resize(groups, 0);
                seen.resize(groups, false)
            }
            Acc::SumFloat { sum, seen } => {
                sum.resize(groups, 0.0);
                seen.resize(groups, false)
            }
            Acc::SumDec { sum, seen } => {
                sum.resize(groups, Numeric::ZERO);
                seen.resize(groups, false)
            }
            Acc::AvgInt { sum, count } => {
                sum.resize(groups, 0);
                count.resize(groups, 0)
            }
            Acc::AvgFloat { sum, count } => {
                sum.resize(groups, 0.0);
                count.resize(groups, 0)
            }
            Acc::AvgDec { sum, count } => {
                sum.resize(groups, Numeric::ZERO);
                count.resize(groups, 0)
            }
            Acc::SumInterval { sum, seen } => {
                sum.resize(groups, Interval::default());
                seen.resize(groups, false)
            }
            Acc::AvgInterval { sum, count } => {
                sum.resize(groups, Interval::default());
                count.resize(groups, 0)
            }
            Acc::MinMax { vals, .. } => vals.resize(groups, Datum::Null),
            Acc::Bool { vals, .. } => vals.resize(groups, None),
            Acc::Bookend { records, times, .. } => {
                records.resize(groups, Datum::Null);
                times.resize(groups, Datum::Null)
            }
            Acc::Collect { vals, .. } => vals.resize_with(groups, Vec::new),
        }
    }

    /// Sets the constant argument (string_agg's delimiter, a percentile's fraction).
    pub fn set_constant(&mut self, value: Datum) {
        if let Acc::Collect { constant, .. } = &mut self.acc {
            *constant = value;
        }
    }

    /// Folds raw input rows that come in runs of one group in: `runs` is
    /// each run's (group, end row), ascending. Sums and counts keep a run's
    /// total in a register instead of reading and writing the group's slot
    /// per row (which waits on the previous row's store: segments sorted by
    /// series and time hand a grouping by (series, time bucket) runs of
    /// hundreds of rows). Returns
    /// false, having done nothing, where only `update` applies (a FILTER
    /// mask, NULLs, other aggregates).
    pub fn update_runs(&mut self, runs: &[(u32, u32)], groups: usize, arg: Option<&Column>, masked: bool) -> bool {
        if masked || arg.is_some_and(|c| c.validity.is_some()) {
            return false;
        }
        let floats: &[f64] = match (&self.acc, arg.map(|c| &c.data)) {
            (Acc::Count(_), _) => &[],
            (Acc::SumFloat { .. } | Acc::AvgFloat { .. } | Acc::MinMax { .. }, Some(ColumnData::Float64(v))) => v,
            _ => return false,
        };
        self.resize(groups);
        // (group, rows) of each run
        let each = runs.iter().scan(0usize, |start, &(g, end)| {
            let run = *start..end as usize;
            *start = end as usize;
            Some((g as usize, run))
        });
        match &mut self.acc {
            Acc::Count(c) => each.for_each(|(g, run)| c[g] += run.len() as i64),
            Acc::SumFloat { sum, seen } => each.for_each(|(g, run)| {
                sum[g] += run_sum(&floats[run]);
                seen[g] = true;
            }),
            Acc::AvgFloat { sum, count } => each.for_each(|(g, run)| {
                count[g] += run.len() as i64;
                sum[g] += run_sum(&floats[run]);
            }),
            Acc::MinMax { vals, is_min } => {
                // The run's first extreme, then the group's, as `update`
                // would replace on a strictly better value only.
                let better = |x: f64, best: f64| {
                    let ord = crate::types::datum::pg_float_cmp(x, best);
                    if *is_min { ord.is_lt() } else { ord.is_gt() }
                };
                for (g, run) in each {
                    let Some((&first, rest)) = floats[run].split_first() else { continue };
                    let best = rest.iter().fold(first, |b, &x| if better(x, b) { x } else { b });
                    let replace = match vals[g] {
                        Datum::Float64(c) => better(best, c),
                        _ => true,
                    };
                    if replace {
                        vals[g] = Datum::Float64(best);
                    }
                }
            }
            // `floats` above returned for every other accumulator
            _ => return false,
        }
        true
    }

    /// Folds raw input rows in: `arg` is the evaluated argument (None for count(*)),
    /// `mask` the rows that pass FILTER (None = all).
    pub fn update(
        &mut self,
        ids: &[u32],
        groups: usize,
        arg: Option<&Column>,
        mask: Option<&[bool]>,
    ) -> DbResult<()> {
        self.resize(groups);
        let live = |i: usize| mask.is_none_or(|m| m[i]);
        let Some(col) = arg else {
            if let Acc::Count(c) = &mut self.acc {
                for (i, &g) in ids.iter().enumerate() {
                    if live(i) {
                        c[g as usize] += 1;
                    }
                }
            }
            return Ok(());
        };
        let valid = |i: usize| live(i) && col.is_valid(i);
        match (&mut self.acc, &col.data) {
            (Acc::Count(c), _) => {
                if col.validity.is_none() && mask.is_none() {
                    for &g in ids {
                        c[g as usize] += 1;
                    }
                } else {
                    for (i, &g) in ids.iter().enumerate() {
                        if valid(i) {
                            c[g as usize] += 1;
                        }
                    }
                }
            }
            (Acc::SumInt { sum, seen }, _) => {
                for_each_int(col, ids, live_rows(col, mask).as_deref(), |g, v| {
                    sum[g] += v as i128;
                    seen[g] = true;
                })
            }
            (Acc::AvgInt { sum, count }, _) => {
                for_each_int(col, ids, live_rows(col, mask).as_deref(), |g, v| {
                    sum[g] += v as i128;
                    count[g] += 1;
                })
            }
            (Acc::SumFloat { sum, seen }, _) => {
                for_each_float(col, ids, live_rows(col, mask).as_deref(), |g, v| {
                    sum[g] += v;
                    seen[g] = true;
                })
            }
            (Acc::AvgFloat { sum, count }, _) => {
                for_each_float(col, ids, live_rows(col, mask).as_deref(), |g, v| {
                    sum[g] += v;
                    count[g] += 1;
                })
            }
            (Acc::SumDec { sum, seen }, ColumnData::Numeric(v)) => {
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) {
                        sum[g as usize] = checked_dec_add(sum[g as usize], v[i])?;
                        seen[g as usize] = true;
                    }
                }
            }
            (Acc::AvgDec { sum, count }, ColumnData::Numeric(v)) => {
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) {
                        sum[g as usize] = checked_dec_add(sum[g as usize], v[i])?;
                        count[g as usize] += 1;
                    }
                }
            }
            (Acc::SumInterval { sum, seen }, ColumnData::Interval(v)) => {
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) {
                        sum[g as usize] = interval_add(sum[g as usize], v[i])?;
                        seen[g as usize] = true;
                    }
                }
            }
            (Acc::AvgInterval { sum, count }, ColumnData::Interval(v)) => {
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) {
                        sum[g as usize] = interval_add(sum[g as usize], v[i])?;
                        count[g as usize] += 1;
                    }
                }
            }
            (Acc::MinMax { vals, is_min }, _) => {
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) {
                        let d = col.datum(i);
                        let cur = &mut vals[g as usize];
                        let replace = cur.is_null() || {
                            let ord = d.total_cmp_as(cur, col.data_type);
                            if *is_min {
                                ord.is_lt()
                            } else {
                                ord.is_gt()
                            }
                        };
                        if replace {
                            *cur = d;
                        }
                    }
                }
            }
            (Acc::Bookend { records, times, first }, _) => {
                for (i, &g) in ids.iter().enumerate() {
                    if !valid(i) {
                        continue;
                    }
                    let record = col.datum(i);
                    let Datum::Bytes(bytes) = &record else { continue };
                    let Some((_, time)) = crate::types::record::decode(bytes)?.into_iter().next() else {
                        return Err(bad_state());
                    };
                    if time.is_null() {
                        continue;
                    }
                    let g = g as usize;
                    let better = times[g].is_null() || {
                        let ord = time.total_cmp(&times[g]);
                        if *first {
                            ord.is_lt()
                        } else {
                            ord.is_gt()
                        }
                    };
                    if better {
                        times[g] = time;
                        records[g] = record;
                    }
                }
            }
            (Acc::Bool { vals, is_and }, ColumnData::Bool(v)) => {
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) {
                        let cur = &mut vals[g as usize];
                        *cur = Some(match cur {
                            None => v[i],
                            Some(c) => {
                                if *is_and {
                                    *c && v[i]
                                } else {
                                    *c || v[i]
                                }
                            }
                        });
                    }
                }
            }
            (Acc::Collect { vals, .. }, _) => {
                // array_agg keeps NULLs; the others skip them.
                let nulls_too = self.func == AggFunc::ArrayAgg;
                for (i, &g) in ids.iter().enumerate() {
                    if valid(i) || (nulls_too && live(i)) {
                        vals[g as usize].push(col.datum(i));
                    }
                }
            }
            _ => return Err(DbError::internal("aggregate input of unexpected type")),
        }
        Ok(())
    }

    /// Number of state columns this aggregate emits in Partial mode.
    pub fn state_width(func: AggFunc) -> usize {
        if func == AggFunc::Avg {
            2
        } else {
            1
        }
    }

    /// Partial states as columns (merged by `merge`).
    pub fn emit_state(&self, groups: usize) -> Vec<Column> {
        let seen_dec = |sum: &[Numeric], seen: &[bool]| {
            let d: Vec<Datum> = (0..groups)
                .map(|g| {
                    if seen[g] {
                        Datum::Numeric(sum[g])
                    } else {
                        Datum::Null
                    }
                })
                .collect();
            Column::from_datums(DataType::Numeric, &d)
        };
        match &self.acc {
            Acc::Count(c) => vec![Column::new(
                DataType::Int64,
                ColumnData::Int64(c[..groups].to_vec()),
                None,
            )],
            Acc::SumInt { sum, seen } => {
                let d: Vec<Numeric> = sum.iter().map(|s| i128_to_dec(*s)).collect();
                vec![seen_dec(&d, seen)]
            }
            Acc::SumFloat { sum, seen } => {
                let d: Vec<Datum> = (0..groups)
                    .map(|g| {
                        if seen[g] {
                            Datum::Float64(sum[g])
                        } else {
                            Datum::Null
                        }
                    })
                    .collect();
                vec![Column::from_datums(DataType::Float64, &d)]
            }
            Acc::SumDec { sum, seen } => vec![seen_dec(sum, seen)],
            Acc::AvgInt { sum, count } => {
                let d: Vec<Datum> = sum
                    .iter()
                    .map(|s| Datum::Numeric(i128_to_dec(*s)))
                    .collect();
                vec![
                    Column::from_datums(DataType::Numeric, &d),
                    Column::new(DataType::Int64, ColumnData::Int64(count.clone()), None),
                ]
            }
            Acc::AvgFloat { sum, count } => vec![
                Column::new(DataType::Float64, ColumnData::Float64(sum.clone()), None),
                Column::new(DataType::Int64, ColumnData::Int64(count.clone()), None),
            ],
            Acc::AvgDec { sum, count } => {
                let d: Vec<Datum> = sum.iter().map(|s| Datum::Numeric(*s)).collect();
                vec![
                    Column::from_datums(DataType::Numeric, &d),
                    Column::new(DataType::Int64, ColumnData::Int64(count.clone()), None),
                ]
            }
            Acc::SumInterval { sum, seen } => {
                let d: Vec<Datum> = (0..groups).map(|g| if seen[g] { Datum::Interval(sum[g]) } else { Datum::Null }).collect();
                vec![Column::from_datums(DataType::Interval, &d)]
            }
            Acc::AvgInterval { sum, count } => vec![
                Column::new(DataType::Interval, ColumnData::Interval(sum.clone()), None),
                Column::new(DataType::Int64, ColumnData::Int64(count.clone()), None),
            ],
            Acc::MinMax { vals, .. } => vec![Column::from_datums(self.arg_type, vals)],
            Acc::Bookend { records, .. } => vec![Column::from_datums(DataType::Record, records)],
            Acc::Bool { vals, .. } => {
                let d: Vec<Datum> = vals
                    .iter()
                    .map(|v| v.map_or(Datum::Null, Datum::Bool))
                    .collect();
                vec![Column::from_datums(DataType::Bool, &d)]
            }
            // Never split over shards (`AggFunc::collects_values`); `merge` refuses it.
            Acc::Collect { .. } => vec![Column::from_datum(DataType::Int64, &Datum::Null, groups)],
        }
    }

    /// Folds partial states (as emitted by `emit_state`) in.
    pub fn merge(&mut self, ids: &[u32], groups: usize, state: &[&Column]) -> DbResult<()> {
        self.resize(groups);
        match &mut self.acc {
            Acc::Count(c) => {
                let ColumnData::Int64(v) = &state[0].data else {
                    return Err(bad_state());
                };
                for (i, &g) in ids.iter().enumerate() {
                    c[g as usize] += v[i];
                }
            }
            Acc::SumInt { sum, seen } => {
                for (i, &g) in ids.iter().enumerate() {
                    if let Datum::Numeric(d) = state[0].datum(i) {
                        sum[g as usize] += d.finite().and_then(|d| d.to_i128()).ok_or_else(bad_state)?;
                        seen[g as usize] = true;
                    }
                }
            }
            Acc::SumFloat { sum, seen } => {
                for (i, &g) in ids.iter().enumerate() {
                    if let Datum::Float64(d) = state[0].datum(i) {
                        sum[g as usize] += d;
                        seen[g as usize] = true;
                    }
                }
            }
            Acc::SumDec { sum, seen } => {
                for (i, &g) in ids.iter().enumerate() {
                    if let Datum::Numeric(d) = state[0].datum(i) {
                        sum[g as usize] = checked_dec_add(sum[g as usize], d)?;
                        seen[g as usize] = true;
                    }
                }
            }
            Acc::AvgInt { sum, count } => {
                let ColumnData::Int64(c) = &state[1].data else {
                    return Err(bad_state());
                };
                for (i, &g) in ids.iter().enumerate() {
                    if let Datum::Numeric(d) = state[0].datum(i) {
                        sum[g as usize] += d.finite().and_then(|d| d.to_i128()).ok_or_else(bad_state)?;
                    }
                    count[g as usize] += c[i];
                }
            }
            Acc::AvgFloat { sum, count } => {
                let (ColumnData::Float64(s), ColumnData::Int64(c)) =
                    (&state[0].data, &state[1].data)
                else {
                    return Err(bad_state());
                };
                for (i, &g) in ids.iter().enumerate() {
                    sum[g as usize] += s[i];
                    count[g as usize] += c[i];
                }
            }
            Acc::AvgDec { sum, count } => {
                let ColumnData::Int64(c) = &state[1].data else {
                    return Err(bad_state());
                };
                for (i, &g) in ids.iter().enumerate() {
                    if let Datum::Numeric(d) = state[0].datum(i) {
                        sum[g as usize] = checked_dec_add(sum[g as usize], d)?;
                    }
                    count[g as usize] += c[i];
                }
            }
            Acc::SumInterval { sum, seen } => {
                for (i, &g) in ids.iter().enumerate() {
                    if let Datum::Interval(d) = state[0].datum(i) {
                        sum[g as usize] = interval_add(sum[g as usize], d)?;
                        seen[g as usize] = true;
                    }
                }
            }
            Acc::AvgInterval { sum, count } => {
                let (ColumnData::Interval(s), ColumnData::Int64(c)) = (&state[0].data, &state[1].data) else {
                    return Err(bad_state());
                };
                for (i, &g) in ids.iter().enumerate() {
                    sum[g as usize] = interval_add(sum[g as usize], s[i])?;
                    count[g as usize] += c[i];
                }
            }
            Acc::MinMax { .. } | Acc::Bool { .. } | Acc::Bookend { .. } => {
                let mask = None;
                return self.update(ids, groups, Some(state[0]), mask);
            }
            Acc::Collect { .. } => return Err(bad_state()),
        }
        Ok(())
    }

    /// Final values, one per group.
    pub fn finish(&self, groups: usize) -> DbResult<Column> {
        let t = self.result_type;
        let mut out = Column::with_capacity(t, groups);
        for g in 0..groups {
            let d = match &self.acc {
                Acc::Count(c) => Datum::Int64(c.get(g).copied().unwrap_or(0)),
                Acc::SumInt { sum, seen } => match seen.get(g) {
                    Some(true) => match t {
                        DataType::Int64 => Datum::Int64(
                            i64::try_from(sum[g]).map_err(|_| DbError::out_of_range("bigint"))?,
                        ),
                        _ => Datum::Numeric(i128_to_dec(sum[g])),
                    },
                    _ => Datum::Null,
                },
                Acc::SumFloat { sum, seen } => match seen.get(g) {
                    Some(true) if t == DataType::Float32 => Datum::Float32(sum[g] as f32),
                    Some(true) => Datum::Float64(sum[g]),
                    _ => Datum::Null,
                },
                Acc::SumDec { sum, seen } => match seen.get(g) {
                    Some(true) => Datum::Numeric(sum[g]),
                    _ => Datum::Null,
                },
                Acc::AvgInt { sum, count } => match count.get(g) {
                    Some(&c) if c > 0 => Datum::Numeric(avg_numeric(i128_to_dec(sum[g]), c)?),
                    _ => Datum::Null,
                },
                Acc::AvgFloat { sum, count } => match count.get(g) {
                    Some(&c) if c > 0 => Datum::Float64(sum[g] / c as f64),
                    _ => Datum::Null,
                },
                Acc::AvgDec { sum, count } => match count.get(g) {
                    Some(&c) if c > 0 => Datum::Numeric(avg_numeric(sum[g], c)?),
                    _ => Datum::Null,
                },
                Acc::SumInterval { sum, seen } => match seen.get(g) {
                    Some(true) => Datum::Interval(sum[g]),
                    _ => Datum::Null,
                },
                // PostgreSQL 15's interval_avg: the sum divided by the count as
                // interval / float8 divides.
                Acc::AvgInterval { sum, count } => match count.get(g) {
                    Some(&c) if c > 0 => Datum::Interval(interval_div(sum[g], c as f64)?),
                    _ => Datum::Null,
                },
                Acc::MinMax { vals, .. } => vals.get(g).cloned().unwrap_or(Datum::Null),
                Acc::Bookend { records, .. } => match records.get(g) {
                    Some(Datum::Bytes(b)) => crate::types::record::decode(b)?
                        .into_iter()
                        .nth(1)
                        .map(|(_, v)| v)
                        .ok_or_else(bad_state)?,
                    _ => Datum::Null,
                },
                Acc::Bool { vals, .. } => vals
                    .get(g)
                    .copied()
                    .flatten()
                    .map_or(Datum::Null, Datum::Bool),
                Acc::Collect { vals, constant } => match vals.get(g) {
                    Some(v) if !v.is_empty() => collected_result(self.func, v, constant, t)?,
                    _ => Datum::Null,
                },
            };
            out.push_datum(&d);
        }
        let _ = self.func;
        Ok(out)
    }
}

/// string_agg's joined text, or a percentile of the group's values.
fn collected_result(func: AggFunc, vals: &[Datum], constant: &Datum, result: DataType) -> DbResult<Datum> {
    match func {
        AggFunc::StringAgg if constant.is_null() => {
            // (value, delimiter) pairs: each value after its own row's delimiter.
            let elem = crate::types::array::ArrayElem::of(result).unwrap_or(crate::types::array::ArrayElem::Text);
            let mut out: Option<Vec<u8>> = None;
            for v in vals {
                let Datum::Bytes(raw) = v else { continue };
                let pair = crate::types::array::ArrayValue::decode(raw, elem)?;
                let (Some(Datum::Bytes(value)), delimiter) = (pair.elems.first(), pair.elems.get(1)) else { continue };
                match &mut out {
                    None => out = Some(value.clone()),
                    Some(o) => {
                        if let Some(Datum::Bytes(d)) = delimiter {
                            o.extend_from_slice(d);
                        }
                        o.extend_from_slice(value);
                    }
                }
            }
            Ok(out.map_or(Datum::Null, Datum::Bytes))
        }
        AggFunc::StringAgg => {
            let sep: &[u8] = match constant {
                Datum::Bytes(b) => b,
                _ => &[],
            };
            let mut out = Vec::new();
            for (i, v) in vals.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(sep);
                }
                if let Datum::Bytes(b) = v {
                    out.extend_from_slice(b);
                }
            }
            Ok(Datum::Bytes(out))
        }
        AggFunc::PercentileCont { descending } | AggFunc::PercentileDisc { descending } => {
            let fraction = constant.as_f64().unwrap_or(0.0);
            let mut sorted = vals.to_vec();
            sorted.sort_by(|a, b| if descending { b.total_cmp(a) } else { a.total_cmp(b) });
            let n = sorted.len();
            if matches!(func, AggFunc::PercentileDisc { .. }) {
                let pos = ((fraction * n as f64).ceil() as usize).clamp(1, n) - 1;
                return Ok(sorted[pos].clone());
            }
            let at = fraction * (n - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            let (a, b) = (sorted[lo].as_f64().unwrap_or(0.0), sorted[hi].as_f64().unwrap_or(0.0));
            let v = if lo == hi { a } else { a + (at - lo as f64) * (b - a) };
            Ok(if result == DataType::Float32 { Datum::Float32(v as f32) } else { Datum::Float64(v) })
        }
        AggFunc::ArrayAgg => match result {
            DataType::Array(e) => Ok(Datum::Bytes(crate::types::array::ArrayValue::of(vals.to_vec()).encode(e))),
            _ => Err(DbError::internal("array_agg without an array result type")),
        },
        _ => Err(DbError::internal("not a collecting aggregate")),
    }
}

fn bad_state() -> DbError {
    DbError::internal("malformed partial aggregate state")
}

/// sum's step: PostgreSQL's numeric addition (a NaN, or both infinities, make the sum NaN).
fn checked_dec_add(a: Numeric, b: Numeric) -> DbResult<Numeric> {
    crate::exec::kernels::numeric_add(a, b)
}

fn i128_to_dec(v: i128) -> Numeric {
    Numeric::Finite(Decimal::from_i128_with_scale(v, 0))
}

/// avg over exact numbers: sum / count with PostgreSQL's division scale.
fn avg_numeric(sum: Numeric, count: i64) -> DbResult<Numeric> {
    let c = Decimal::from_i64(count).ok_or_else(|| DbError::out_of_range("numeric"))?;
    crate::exec::kernels::numeric_div(sum, Numeric::Finite(c))
}

/// Calls `f(group, value)` for every live row; `live` is None when all rows are.
fn for_each_value<T: Copy, U>(
    v: &[T],
    ids: &[u32],
    live: Option<&[bool]>,
    conv: impl Fn(T) -> U,
    mut f: impl FnMut(usize, U),
) {
    match live {
        None => {
            for (&g, &x) in ids.iter().zip(v) {
                f(g as usize, conv(x));
            }
        }
        Some(live) => {
            for ((&g, &x), &ok) in ids.iter().zip(v).zip(live) {
                if ok {
                    f(g as usize, conv(x));
                }
            }
        }
    }
}

fn for_each_int(col: &Column, ids: &[u32], live: Option<&[bool]>, f: impl FnMut(usize, i64)) {
    match &col.data {
        ColumnData::Int16(v) => for_each_value(v, ids, live, |x| x as i64, f),
        ColumnData::Int32(v) => for_each_value(v, ids, live, |x| x as i64, f),
        ColumnData::Int64(v) => for_each_value(v, ids, live, |x| x, f),
        _ => {}
    }
}

fn for_each_float(col: &Column, ids: &[u32], live: Option<&[bool]>, f: impl FnMut(usize, f64)) {
    match &col.data {
        ColumnData::Float32(v) => for_each_value(v, ids, live, |x| x as f64, f),
        ColumnData::Float64(v) => for_each_value(v, ids, live, |x| x, f),
        _ => {}
    }
}

/// Rows that pass both the FILTER mask and the column's validity; None when all do.
fn live_rows(col: &Column, mask: Option<&[bool]>) -> Option<Vec<bool>> {
    match (&col.validity, mask) {
        (None, None) => None,
        (None, Some(m)) => Some(m.to_vec()),
        (Some(v), m) => Some(
            (0..col.len())
                .map(|i| v.get(i) && m.is_none_or(|m| m[i]))
                .collect(),
        ),
    }
}

/// A run's sum in four interleaved partial sums (one add's latency per
/// four values instead of per value; the order of float additions is as
/// unspecified in SQL as the order of rows).
fn run_sum(v: &[f64]) -> f64 {
    let mut p = [0.0f64; 4];
    let mut quads = v.chunks_exact(4);
    for q in &mut quads {
        for (p, x) in p.iter_mut().zip(q) {
            *p += x;
        }
    }
    let tail: f64 = quads.remainder().iter().sum();
    (p[0] + p[1]) + (p[2] + p[3]) + tail
}

/// Fills `runs` with the (group, end row) of each run of equal ids and
/// says whether they average at least `MIN_RUN` rows (else the per-row
/// paths are as fast, and `runs` is left partly filled).
fn long_runs(ids: &[u32], runs: &mut Vec<(u32, u32)>) -> bool {
    const MIN_RUN: usize = 8;
    runs.clear();
    let limit = ids.len() / MIN_RUN;
    let Some(&first) = ids.first() else { return false };
    let mut cur = first;
    for (i, &g) in ids.iter().enumerate().skip(1) {
        if g != cur {
            runs.push((cur, i as u32));
            if runs.len() > limit {
                return false;
            }
            cur = g;
        }
    }
    runs.push((cur, ids.len() as u32));
    runs.len() <= limit.max(1)
}

/// A hash aggregation in one of the three modes.
pub struct HashAggregation {
    pub mode: AggMode,
    pub groups: GroupTable,
    pub accs: Vec<Accumulator>,
    funcs: Vec<AggFunc>,
    ids: Vec<u32>,
    /// The batch's runs of one group, when they are long (see `long_runs`).
    runs: Vec<(u32, u32)>,
    /// For DISTINCT aggregates: values already seen per (aggregate, group).
    distinct_seen: Vec<Option<hashbrown::HashSet<Vec<u8>>>>,
}

impl HashAggregation {
    /// `aggs`: (function, argument type, result type, distinct).
    pub fn new(
        mode: AggMode,
        key_types: Vec<DataType>,
        aggs: &[(AggFunc, DataType, DataType, bool)],
    ) -> DbResult<Self> {
        let accs = aggs
            .iter()
            .map(|(f, a, r, _)| Accumulator::new(*f, *a, *r))
            .collect::<DbResult<Vec<_>>>()?;
        let distinct_seen = aggs
            .iter()
            .map(|a| a.3.then(hashbrown::HashSet::new))
            .collect();
        Ok(HashAggregation {
            mode,
            groups: GroupTable::new(key_types),
            accs,
            funcs: aggs.iter().map(|a| a.0).collect(),
            ids: Vec::new(),
            runs: Vec::new(),
            distinct_seen,
        })
    }

    /// Sets aggregate `k`'s constant argument (see `Accumulator::set_constant`).
    pub fn set_constant(&mut self, k: usize, value: Datum) {
        if let Some(acc) = self.accs.get_mut(k) {
            acc.set_constant(value);
        }
    }

    /// Raw rows: key columns, then per aggregate its argument and FILTER mask.
    pub fn update(
        &mut self,
        keys: &[&Column],
        rows: usize,
        args: &[(Option<&Column>, Option<Vec<bool>>)],
    ) -> DbResult<()> {
        let mut ids = std::mem::take(&mut self.ids);
        self.groups.intern(keys, rows, &mut ids);
        let groups = self.groups.len();
        let runs = long_runs(&ids, &mut self.runs);
        for (k, (acc, (arg, mask))) in self.accs.iter_mut().zip(args).enumerate() {
            if runs && self.distinct_seen[k].is_none() && acc.update_runs(&self.runs, groups, *arg, mask.is_some()) {
                continue;
            }
            match (&mut self.distinct_seen[k], arg) {
                (Some(seen), Some(col)) => {
                    // DISTINCT: only the first occurrence of a value per group counts.
                    let mut keep = mask.clone().unwrap_or_else(|| vec![true; rows]);
                    let mut key = Vec::new();
                    for i in 0..rows {
                        if keep[i] {
                            key.clear();
                            key.extend_from_slice(&ids[i].to_le_bytes());
                            encode_key(col, i, &mut key);
                            keep[i] = seen.insert(key.clone());
                        }
                    }
                    acc.update(&ids, groups, Some(col), Some(&keep))?;
                }
                _ => acc.update(&ids, groups, *arg, mask.as_deref())?,
            }
        }
        self.ids = ids;
        Ok(())
    }

    /// Partial states: key columns, then each aggregate's state columns.
    pub fn merge(&mut self, batch: &Batch, key_count: usize) -> DbResult<()> {
        let keys: Vec<&Column> = batch.columns[..key_count]
            .iter()
            .map(|c| c.as_ref())
            .collect();
        let mut ids = std::mem::take(&mut self.ids);
        self.groups.intern(&keys, batch.len, &mut ids);
        let groups = self.groups.len();
        let mut col = key_count;
        for (acc, f) in self.accs.iter_mut().zip(&self.funcs) {
            let w = Accumulator::state_width(*f);
            let state: Vec<&Column> = batch.columns[col..col + w]
                .iter()
                .map(|c| c.as_ref())
                .collect();
            acc.merge(&ids, groups, &state)?;
            col += w;
        }
        self.ids = ids;
        Ok(())
    }

    /// The result batch (Single/Final) or the state batch (Partial).
    pub fn finish(&self, has_keys: bool) -> DbResult<Batch> {
        let mut groups = self.groups.len();
        if !has_keys {
            groups = 1; // an aggregate without GROUP BY yields one row even over no input
        }
        let mut cols: Vec<Column> = if has_keys {
            self.groups.key_columns()
        } else {
            vec![]
        };
        for acc in &self.accs {
            if self.mode == AggMode::Partial {
                let mut a = Accumulator {
                    func: acc.func,
                    arg_type: acc.arg_type,
                    result_type: acc.result_type,
                    acc: acc.acc.clone(),
                };
                a.resize(groups);
                cols.extend(a.emit_state(groups));
            } else {
                let mut a = Accumulator {
                    func: acc.func,
                    arg_type: acc.arg_type,
                    result_type: acc.result_type,
                    acc: acc.acc.clone(),
                };
                a.resize(groups);
                cols.push(a.finish(groups)?);
            }
        }
        Ok(Batch::new(cols.into_iter().map(Arc::new).collect(), groups))
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    /// Group ids of the rows of `cols` (as `intern` numbers them).
    fn ids(table: &mut GroupTable, cols: &[Column]) -> Vec<u32> {
        let refs: Vec<&Column> = cols.iter().collect();
        let mut out = Vec::new();
        table.intern(&refs, cols[0].len(), &mut out);
        out
    }

    #[test]
    fn runs_of_one_group_aggregate_as_rows_one_by_one_do() {
        // groups in runs (0 0 0 1 1 0 0 0 0 2 ...), values exact in binary so
        // that any order of additions gives the same sums
        let mut ids = Vec::new();
        let mut vals = Vec::new();
        for r in 0..200u32 {
            let len = 1 + (r as usize * 7) % 23;
            for k in 0..len {
                ids.push(r % 5);
                vals.push(match (r, k) {
                    (17, 3) => f64::NAN,
                    (40, 0) => -0.0,
                    (41, 0) => 0.0,
                    _ => (r as f64 - 90.0) * 0.5 + k as f64 * 0.25,
                });
            }
        }
        let mut runs = Vec::new();
        assert!(long_runs(&ids, &mut runs), "{} runs of {} rows", runs.len(), ids.len());
        let col = Column::new(DataType::Float64, ColumnData::Float64(vals), None);
        for func in [AggFunc::CountStar, AggFunc::Count, AggFunc::Sum, AggFunc::Avg, AggFunc::Min, AggFunc::Max] {
            let arg = (func != AggFunc::CountStar).then_some(&col);
            let result = if matches!(func, AggFunc::CountStar | AggFunc::Count) { DataType::Int64 } else { DataType::Float64 };
            let mut by_rows = Accumulator::new(func, DataType::Float64, result).unwrap();
            let mut by_runs = Accumulator::new(func, DataType::Float64, result).unwrap();
            // two batches, so that runs meet groups already holding values
            let half = runs[runs.len() / 2].1 as usize;
            for (lo, hi) in [(0, half), (half, ids.len())] {
                let part = col.slice(lo, hi - lo);
                let part_arg = arg.map(|_| &part);
                by_rows.update(&ids[lo..hi], 5, part_arg, None).unwrap();
                let mut part_runs = Vec::new();
                long_runs(&ids[lo..hi], &mut part_runs);
                assert!(by_runs.update_runs(&part_runs, 5, part_arg, false), "{func:?} takes the run path");
            }
            let (a, b) = (by_rows.finish(5).unwrap(), by_runs.finish(5).unwrap());
            for g in 0..5 {
                assert_eq!(format!("{:?}", a.datum(g)), format!("{:?}", b.datum(g)), "{func:?}, group {g}");
            }
        }
        // a FILTER mask or NULLs leave the rows to `update`
        let mut acc = Accumulator::new(AggFunc::Sum, DataType::Float64, DataType::Float64).unwrap();
        assert!(!acc.update_runs(&runs, 5, Some(&col), true));
        // short runs are not worth it
        assert!(!long_runs(&[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], &mut runs));
    }

    #[test]
    fn integer_pairs_group_as_encoded_keys_do_nulls_included() {
        let a: Vec<Datum> = [1, 1, 2, 2, 0, 0, 1].iter().map(|&v| if v == 0 { Datum::Null } else { Datum::Int64(v) }).collect();
        let b: Vec<Datum> = [5, 6, 5, 5, 5, 0, 0].iter().map(|&v| if v == 0 { Datum::Null } else { Datum::Int32(v) }).collect();
        let cols = vec![Column::from_datums(DataType::Int64, &a), Column::from_datums(DataType::Int32, &b)];
        let mut pairs = GroupTable::new(vec![DataType::Int64, DataType::Int32]);
        assert!(matches!(pairs.index, KeyIndex::IntPair(_)));
        let mut encoded = GroupTable::new(vec![DataType::Int64, DataType::Int32]);
        encoded.index = KeyIndex::Encoded(HashMap::new());
        assert_eq!(ids(&mut pairs, &cols), ids(&mut encoded, &cols));
        assert_eq!(pairs.len(), 7 - 1, "(2, 5) twice");
        assert_eq!(pairs.key_columns()[0].datum(4), Datum::Null);
    }
}
