//! Retention in TimescaleDB's spirit: `drop_chunks('t', older_than => …)`
//! removes a time-series table's rows in whole time partitions that end at
//! or before the cutoff, freeing their segment files. Each shard logs a
//! `DropBefore` record (replayed like TRUNCATE, so rows inserted after it
//! with old timestamps stay), applies it to its segments and memtable, and
//! then the manifest is rewritten without the dropped segments, which are
//! deleted once it is durable. Runs under the checkpoint lock, so no flush
//! is in progress.
//! Must not: drop part of a partition (the cutoff is aligned down to a
//! partition boundary).

use super::checkpoint::{rewrite_manifest, serial};
use super::flush::{time_column, PARTITION_NS};
use crate::catalog::TableDef;
use crate::error::{sqlstate, DbError, DbResult};
use crate::server::Server;
use crate::wal::record::{RecordType, FLAG_SELF_COMMITTED};

/// What a drop removed.
#[derive(Debug, Default, Clone, Copy)]
pub struct Dropped {
    pub segments: usize,
    pub rows: u64,
}

/// The partition boundary at or before `cutoff`: partitions ending there or earlier go.
pub fn aligned_cutoff(cutoff: i64) -> i64 {
    cutoff.div_euclid(PARTITION_NS).saturating_mul(PARTITION_NS)
}

pub async fn drop_chunks(server: &Server, def: &TableDef, cutoff: i64) -> DbResult<Dropped> {
    let Some(time) = time_column(def) else {
        return Err(DbError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "table \"{}\" is not a hypertable (it has no time column)",
                def.name
            ),
        ));
    };
    let cutoff = aligned_cutoff(cutoff);
    let _serial = serial(server).await;
    let txn = server.next_txn();
    let table = def.oid;
    let mut total = Dropped::default();
    for shard in &server.shards {
        let part = shard
            .run_local(move |ctx| async move {
                let mut payload = txn.to_le_bytes().to_vec();
                payload.extend_from_slice(&table.to_le_bytes());
                payload.extend_from_slice(&cutoff.to_le_bytes());
                let wal = ctx.wal()?;
                ctx.begin_in_flight(txn, &wal);
                let rx = wal
                    .append(RecordType::DropBefore, FLAG_SELF_COMMITTED, &payload)
                    .await;
                rx.await
                    .map_err(|_| DbError::internal("the WAL writer stopped"))??;
                let (segments, rows) = ctx.storage.borrow_mut().drop_before(table, time, cutoff);
                ctx.end_in_flight(txn);
                Ok::<_, DbError>(Dropped { segments, rows })
            })
            .await??;
        total.segments += part.segments;
        total.rows += part.rows;
    }
    if total.segments > 0 {
        rewrite_manifest(server).await?;
    }
    Ok(total)
}
