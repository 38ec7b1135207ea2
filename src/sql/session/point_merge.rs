//! Line-protocol writes that may repeat points: InfluxDB's rule that a point
//! (measurement, tag set, time) written again merges its fields into the
//! stored one, the last write winning per field.
//!
//! Reached when the series times (`sql/series_times.rs`) cannot rule a repeat
//! out: a retried batch, out-of-order points, the same point twice in one
//! write, any write inside a transaction block. Holding `Server::rewrites`
//! alone (no other row lands meanwhile), it folds the write's repeats
//! together, looks its points up among the stored rows of the same time range,
//! drops points that change nothing (a retry), appends new ones, and when a
//! stored point changes, rewrites the days (time partitions) holding the
//! changed points — a `DropRanges` record and those days' new rows,
//! committed together, the cost of a rewrite paid only then — or, where a
//! unique key or a transaction block needs it, the whole table (a Truncate
//! and the new rows).
//! Must not: run on the common in-order path (store_line_protocol decides).

use super::*;
use crate::sql::series_times::{point_columns, row_time, series_key};

/// What one table's rows become after merging.
struct MergedPoints {
    table: Arc<TableDef>,
    /// Points not stored before.
    appended: Option<Batch>,
    /// When stored points changed: the new rows of what is rewritten.
    replaced: Option<Replaced>,
}

/// The rows a merge rewrites: the days holding changed points, or the whole table.
struct Replaced {
    rows: Vec<Batch>,
    /// The time column and the ranges whose rows `rows` replace; `None`:
    /// every row of the table (`appended` is then among `rows`).
    ranges: Option<(usize, Vec<(i64, i64)>)>,
}

impl Session {
    /// Writes the points of each table, merged with the stored ones, as one atomic write.
    pub(super) async fn store_points_merging(&mut self, points: Vec<(Arc<TableDef>, Batch)>) -> DbResult<()> {
        let _alone = self.rewrite_lock().await;
        self.check_tables_current(points.iter().map(|(t, _)| &**t))?;
        let mut merged = Vec::with_capacity(points.len());
        for (table, rows) in points {
            merged.push(self.merge_points(table, rows).await?);
        }
        if self.txn != TxnState::Idle {
            for m in merged {
                if let Some(Replaced { rows: all, .. }) = m.replaced {
                    self.check_rows_unique(&m.table, &all)?;
                    self.rewrite_rows(&m.table, all).await?;
                } else if let Some(rows) = m.appended {
                    let keys = self.add_unique_keys(&m.table, std::slice::from_ref(&rows)).await?;
                    self.settle_unique_keys(keys, &Ok(()));
                    self.pending.borrow_mut().entry(m.table.oid).or_default().push(rows);
                }
            }
            return Ok(());
        }
        // Days swapped out: no flush or compaction meanwhile (see `ShardStorage::drop_ranges`).
        let server = self.server.clone();
        let _serial = match merged.iter().any(|m| m.replaced.as_ref().is_some_and(|r| r.ranges.is_some())) {
            true => Some(crate::storage::checkpoint::hold_off_flushes(&server).await?),
            false => None,
        };
        let mut write = self.begin_write();
        let mut added = crate::sql::unique::AddedKeys::default();
        let mut prepared: DbResult<()> = Ok(());
        for m in &merged {
            let types = m.table.column_types();
            let step = if let Some(Replaced { rows, ranges: Some((time, ranges)) }) = &m.replaced {
                // Without unique keys (a condition of the ranges): only the days are written.
                async {
                    self.prepare_drop_ranges(&mut write, m.table.oid, *time, ranges).await?;
                    self.prepare_rows(&mut write, m.table.oid, &types, rows.clone()).await?;
                    match &m.appended {
                        Some(new) => self.prepare_rows(&mut write, m.table.oid, &types, vec![new.clone()]).await,
                        None => Ok(()),
                    }
                }
                .await
            } else if let Some(Replaced { rows: all, ranges: None }) = &m.replaced {
                match self.check_rows_unique(&m.table, all) {
                    Ok(()) => match self.prepare_truncate(&mut write, m.table.oid).await {
                        Ok(()) => self.prepare_rows(&mut write, m.table.oid, &types, all.clone()).await,
                        Err(e) => Err(e),
                    },
                    Err(e) => Err(e),
                }
            } else if let Some(rows) = &m.appended {
                match self.add_unique_keys(&m.table, std::slice::from_ref(rows)).await {
                    Ok(keys) => {
                        added.extend(keys);
                        self.prepare_rows(&mut write, m.table.oid, &types, vec![rows.clone()]).await
                    }
                    Err(e) => Err(e),
                }
            } else {
                Ok(())
            };
            if let Err(e) = step {
                prepared = Err(e);
                break;
            }
        }
        let result = self.settle_write(write, prepared).await;
        if result.is_err() {
            added.undo();
            return result;
        }
        self.settle_unique_keys(added, &Ok(()));
        for m in merged.iter().filter(|m| m.replaced.is_some()) {
            // Replaced rows left the key sets behind; the series times stay right.
            self.server.unique_keys.forget_table(m.table.oid);
        }
        result
    }

    /// One table's rows merged with each other and with the stored points.
    async fn merge_points(&self, table: Arc<TableDef>, rows: Batch) -> DbResult<MergedPoints> {
        let Some((tags, time)) = point_columns(&table) else {
            return Ok(MergedPoints { table, appended: Some(rows), replaced: None });
        };
        let types = table.column_types();
        // The write's own repeats, folded in order (later fields win).
        let mut incoming: Vec<Vec<Datum>> = Vec::with_capacity(rows.len);
        let mut incoming_at: HashMap<(Vec<u8>, i64), usize> = HashMap::new();
        let mut range: Option<(i64, i64)> = None;
        for r in 0..rows.len {
            let values = rows.row(r);
            let Some(t) = row_time(&rows, time, r) else {
                incoming.push(values);
                continue;
            };
            range = Some(range.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
            let mut key = Vec::new();
            series_key(&rows, &tags, r, &mut key);
            match incoming_at.get(&(key.clone(), t)) {
                Some(&i) => overlay(&mut incoming[i], values),
                None => {
                    incoming_at.insert((key, t), incoming.len());
                    incoming.push(values);
                }
            }
        }
        let Some((lo, hi)) = range else {
            return Ok(MergedPoints { table, appended: Some(rows), replaced: None });
        };
        // The stored points in the write's time range.
        let q = crate::catalog::quote_ident;
        let relation = format!("{}.{}", q(&table.schema), q(&table.name));
        let time_name = q(&table.columns[time].name);
        let bounds = [Datum::Int64(lo), Datum::Int64(hi)];
        let bound_types = [DataType::TimestampTz, DataType::TimestampTz];
        let (_, stored) = self
            .internal_query(
                &format!("SELECT * FROM {relation} WHERE {time_name} >= $1 AND {time_name} <= $2"),
                &bounds,
                &bound_types,
            )
            .await?;
        let mut stored_at: HashMap<(Vec<u8>, i64), (usize, usize)> = HashMap::new();
        for (b, batch) in stored.iter().enumerate() {
            for r in 0..batch.len {
                let Some(t) = row_time(batch, time, r) else { continue };
                let mut key = Vec::new();
                series_key(batch, &tags, r, &mut key);
                stored_at.insert((key, t), (b, r));
            }
        }
        let mut appended = Vec::new();
        let mut changed: Vec<Vec<Datum>> = Vec::new();
        let mut changed_keys: std::collections::HashSet<(Vec<u8>, i64)> = Default::default();
        let mut changed_at: Vec<Vec<u32>> = vec![Vec::new(); stored.len()];
        let mut keys_of: HashMap<usize, (Vec<u8>, i64)> = HashMap::new();
        for ((key, t), i) in incoming_at {
            keys_of.insert(i, (key, t));
        }
        for (i, values) in incoming.into_iter().enumerate() {
            let Some((key, &(b, r))) = keys_of.get(&i).and_then(|k| Some((k, stored_at.get(k)?))) else {
                appended.push(values);
                continue;
            };
            let before = stored[b].row(r);
            let mut after = before.clone();
            overlay(&mut after, values);
            if after != before {
                changed.push(after);
                changed_keys.insert(key.clone());
                changed_at[b].push(r as u32);
            }
        }
        let appended = (!appended.is_empty()).then(|| rows_batch(&types, &appended));
        if let Some(new_points) = &appended {
            let times = self.server.series_times.table(table.oid);
            if times.is_built() {
                times.advance(new_points, &tags, time);
            }
        }
        if changed.is_empty() {
            return Ok(MergedPoints { table, appended, replaced: None });
        }
        // A stored point changed: the days holding the changed points are
        // written anew (their other rows as they were), or the whole table.
        if let Some((partition_time, ranges)) = self.point_rewrite_ranges(&table, time, &changed_keys).await? {
            let mut rows = Vec::new();
            for (start, end) in &ranges {
                let bounds = [Datum::Int64(*start), Datum::Int64(*end)];
                let (_, in_range) = self
                    .internal_query(
                        &format!("SELECT * FROM {relation} WHERE {time_name} >= $1 AND {time_name} < $2"),
                        &bounds,
                        &bound_types,
                    )
                    .await?;
                for batch in in_range {
                    let keep: Vec<u32> = (0..batch.len)
                        .filter(|&r| {
                            let Some(t) = row_time(&batch, time, r) else { return true };
                            let mut key = Vec::new();
                            series_key(&batch, &tags, r, &mut key);
                            !changed_keys.contains(&(key, t))
                        })
                        .map(|r| r as u32)
                        .collect();
                    rows.push(if keep.len() == batch.len { batch } else { batch.take(&keep) });
                }
            }
            rows.push(rows_batch(&types, &changed));
            let replaced = Replaced { rows, ranges: Some((partition_time, ranges)) };
            return Ok(MergedPoints { table, appended, replaced: Some(replaced) });
        }
        let (_, mut all) = self
            .internal_query(
                &format!("SELECT * FROM {relation} WHERE {time_name} IS NULL OR {time_name} < $1 OR {time_name} > $2"),
                &bounds,
                &bound_types,
            )
            .await?;
        for (batch, mut replaced) in stored.into_iter().zip(changed_at) {
            replaced.sort_unstable();
            if replaced.is_empty() {
                all.push(batch);
                continue;
            }
            let keep: Vec<u32> = (0..batch.len as u32).filter(|r| replaced.binary_search(r).is_err()).collect();
            all.push(batch.take(&keep));
        }
        all.push(rows_batch(&types, &changed));
        all.extend(appended);
        Ok(MergedPoints { table, appended: None, replaced: Some(Replaced { rows: all, ranges: None }) })
    }

    /// The days a merge that changes the points `changed` (series key,
    /// time) rewrites, with the table's partitioning time column — or `None`
    /// where the whole table is rewritten: inside a transaction block (whose
    /// view of a table is all of it), or where unique keys or foreign keys
    /// referencing the table need every row.
    async fn point_rewrite_ranges(
        &self,
        table: &TableDef,
        time: usize,
        changed: &std::collections::HashSet<(Vec<u8>, i64)>,
    ) -> DbResult<Option<(usize, Vec<(i64, i64)>)>> {
        if self.txn != TxnState::Idle
            || crate::storage::flush::time_column(table) != Some(time)
            || !self.table_unique_keys(table)?.is_empty()
            || self.is_referenced(table)?
        {
            return Ok(None);
        }
        let mut partitions: Vec<i64> =
            changed.iter().map(|(_, t)| t.div_euclid(crate::storage::flush::PARTITION_NS)).collect();
        partitions.sort_unstable();
        partitions.dedup();
        let Some(ranges) = super::dml::partition_ranges(&partitions) else {
            return Ok(None);
        };
        if ranges.is_empty() || !self.ranges_droppable(table.oid, time, &ranges).await? {
            return Ok(None);
        }
        Ok(Some((time, ranges)))
    }
}

/// A later write of a point over an earlier one: its non-NULL values win.
fn overlay(point: &mut [Datum], later: Vec<Datum>) {
    for (v, l) in point.iter_mut().zip(later) {
        if !l.is_null() {
            *v = l;
        }
    }
}

fn rows_batch(types: &[DataType], rows: &[Vec<Datum>]) -> Batch {
    Batch::from_columns(
        types
            .iter()
            .enumerate()
            .map(|(c, t)| {
                let values: Vec<Datum> = rows.iter().map(|row| row[c].clone()).collect();
                Column::from_datums(*t, &values)
            })
            .collect(),
    )
}
