//! Which shard a table's rows go to. A time-series table's rows are routed
//! by a hash of their series column, so each series lives whole on one
//! shard: its rows then sit together in that shard's segments, sorted by
//! time, which is what makes timestamps regular and values delta-friendly
//! (TSBS data split by position instead compresses about 2x worse). Other
//! tables spread rows evenly (large batches) or round-robin (small ones).
//! Must not: depend on anything but the row's values and the shard count
//! (the hash is fixed, not seeded per process).

use crate::catalog::TableDef;
use crate::exec::vector::{Batch, ColumnData};
use crate::types::DataType;

/// The column whose value routes a row: for a time-series table, the first
/// integer or text column other than the time column (TSBS's `tags_id`, a
/// recording's `recording` tag); None for other tables.
pub fn series_route_column(def: &TableDef) -> Option<usize> {
    let time = super::flush::time_column(def)?;
    def.columns.iter().enumerate().position(|(i, c)| {
        i != time
            && matches!(c.data_type, DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Text | DataType::Varchar(_))
    })
}

/// FNV-1a over the value's bytes, then a final mix: stable across processes.
fn hash_bytes(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix(h)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The shard of each row of `batch`, by the value in `column` (NULL → shard 0).
pub fn shard_of_rows(batch: &Batch, column: usize, shards: usize) -> Vec<usize> {
    let col = &batch.columns[column];
    let n = shards.max(1) as u64;
    (0..batch.len)
        .map(|r| {
            if !col.is_valid(r) {
                return 0;
            }
            let h = match &col.data {
                ColumnData::Int16(v) => mix(v[r] as i64 as u64),
                ColumnData::Int32(v) => mix(v[r] as i64 as u64),
                ColumnData::Int64(v) => mix(v[r] as u64),
                ColumnData::Bytes(b) => hash_bytes(b.get(r)),
                _ => 0,
            };
            (h % n) as usize
        })
        .collect()
}

/// Splits `batch` into one part per shard (None where a shard gets no row),
/// keeping each part's rows in their original order.
pub fn split_by_series(batch: &Batch, column: usize, shards: usize) -> Vec<Option<Batch>> {
    let owner = shard_of_rows(batch, column, shards);
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); shards.max(1)];
    for (r, &s) in owner.iter().enumerate() {
        rows[s].push(r as u32);
    }
    rows.into_iter()
        .map(|idx| match idx.len() {
            0 => None,
            n if n == batch.len => Some(batch.clone()),
            _ => Some(batch.take(&idx)),
        })
        .collect()
}

/// Batches below this many rows of a table without a series column go to
/// one shard whole (round-robin); larger ones are split evenly.
pub const SPLIT_ROWS: usize = 1024;

/// Assigns `batches` of a table to shards: by series when `route` names a
/// column, else large batches split evenly and small ones whole to the
/// shard `next_shard` picks. Returns the shards that get rows, with them.
pub fn route_batches(
    route: Option<usize>,
    batches: Vec<Batch>,
    shards: usize,
    mut next_shard: impl FnMut() -> usize,
) -> Vec<(usize, Vec<Batch>)> {
    let mut per_shard: Vec<Vec<Batch>> = vec![Vec::new(); shards.max(1)];
    for b in batches {
        if b.len == 0 {
            continue;
        }
        match route {
            Some(col) if shards > 1 => {
                for (s, part) in split_by_series(&b, col, shards).into_iter().enumerate() {
                    if let Some(p) = part {
                        per_shard[s].push(p);
                    }
                }
            }
            _ if b.len >= SPLIT_ROWS && shards > 1 => {
                let chunk = b.len.div_ceil(shards);
                for (s, part) in per_shard.iter_mut().enumerate() {
                    let start = s * chunk;
                    if start < b.len {
                        part.push(b.slice(start, chunk.min(b.len - start)));
                    }
                }
            }
            _ => per_shard[next_shard() % shards.max(1)].push(b),
        }
    }
    per_shard.into_iter().enumerate().filter(|(_, p)| !p.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::Column;
    use crate::types::Datum;

    #[test]
    fn a_series_always_goes_to_the_same_shard_and_rows_keep_their_order() {
        let tags: Vec<Datum> = (0..1000).map(|i| Datum::Int32(i % 37)).collect();
        let seq: Vec<Datum> = (0..1000).map(Datum::Int64).collect();
        let b = Batch::from_columns(vec![Column::from_datums(DataType::Int32, &tags), Column::from_datums(DataType::Int64, &seq)]);
        let parts = split_by_series(&b, 0, 4);
        let mut seen = std::collections::HashMap::new();
        let mut total = 0;
        for (s, p) in parts.iter().enumerate() {
            let Some(p) = p else { continue };
            total += p.len;
            let mut last = -1;
            for r in 0..p.len {
                let tag = p.columns[0].datum(r);
                assert_eq!(*seen.entry(format!("{tag:?}")).or_insert(s), s, "a series on two shards");
                let Datum::Int64(v) = p.columns[1].datum(r) else { panic!() };
                assert!(v > last, "order kept");
                last = v;
            }
        }
        assert_eq!(total, 1000);
        assert!(parts.iter().filter(|p| p.is_some()).count() >= 3, "37 series spread over the shards");
        let text = Batch::from_columns(vec![Column::from_datums(DataType::Text, &[Datum::Bytes(b"host_1".to_vec())])]);
        assert_eq!(shard_of_rows(&text, 0, 8), shard_of_rows(&text, 0, 8));
    }
}
