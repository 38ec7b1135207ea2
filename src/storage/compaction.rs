//! Compaction: per table and time partition, once a shard holds
//! `MIN_SEGMENTS` segments (one per checkpoint), the oldest (at most
//! `MAX_SEGMENTS`, `MAX_ROWS` rows) are merged into one segment sorted by
//! (series, time) — fewer files, longer runs, better compression, fewer
//! blocks per query. Reading and writing go through the shard's io_uring
//! ring; decoding, sorting and encoding run on the blocking pool, so the
//! shard keeps serving queries and writes. One merge at a time in the whole
//! server (it holds the checkpoint lock), so the work in flight is bounded.
//! The merged segment replaces its inputs in memory at once; the manifest is
//! then rewritten and only after it is durable are the inputs deleted — a
//! crash before leaves the inputs listed and the new file unlisted (deleted
//! at start), a crash after leaves the new file listed.
//! Must not: change which rows exist (DELETE does not exist yet; when it
//! does, this is where deleted rows are dropped).

use std::sync::Arc;

use super::checkpoint::{rewrite_manifest, serial};
use super::flush::{declared_series_key, encode_rows, write_segments};
use super::segment::reader::decode_all;
use crate::error::{DbError, DbResult};
use crate::exec::vector::Batch;
use crate::server::Server;
use crate::wal::io_error;

pub const MIN_SEGMENTS: usize = 4;
pub const MAX_SEGMENTS: usize = 16;
/// Rows one merge may hold in memory (decoded), across its inputs.
pub const MAX_ROWS: u64 = 8 << 20;

/// What one compaction pass did.
#[derive(Debug, Default, Clone, Copy)]
pub struct CompactionStats {
    pub merged_segments: usize,
    pub written_segments: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// Merges every candidate set on every shard, then rewrites the manifest.
pub async fn compact(server: &Server) -> DbResult<CompactionStats> {
    let _serial = serial(server).await;
    let catalog = server.catalog.snapshot();
    let mut stats = CompactionStats::default();
    for shard in &server.shards {
        let catalog = catalog.clone();
        let Some(data_dir) = server.checkpoints.data_dir.get().cloned() else {
            return Ok(stats);
        };
        let part = shard
            .run_local(move |ctx| async move {
                let mut stats = CompactionStats::default();
                let candidates = ctx
                    .storage
                    .borrow()
                    .compaction_candidates(MIN_SEGMENTS, MAX_SEGMENTS);
                for (table, mut segs) in candidates {
                    let Some(def) = catalog.table_by_oid(table).cloned() else {
                        continue;
                    };
                    let mut rows = 0;
                    segs.retain(|s| {
                        rows += s.footer.rows;
                        rows <= MAX_ROWS
                    });
                    if segs.len() < 2 {
                        continue;
                    }
                    // Read whole files: a merge needs every block.
                    let reads = segs
                        .iter()
                        .map(|s| crate::runtime::storage_io::IoRequest::Read {
                            file: Arc::clone(&s.file),
                            offset: 0,
                            len: s.bytes as usize,
                        })
                        .collect();
                    let mut files = Vec::with_capacity(segs.len());
                    for (s, r) in segs.iter().zip(ctx.storage_io().submit(reads).await) {
                        files.push((
                            s.path.display().to_string(),
                            r.map_err(|e| io_error("read a segment to compact", &e))?,
                        ));
                    }
                    let types = def.column_types();
                    let (dir, next) = {
                        let s = ctx.storage.borrow();
                        (s.dir, s.next_segment)
                    };
                    let job_def = def.clone();
                    let declared = declared_series_key(&def, &catalog.indexes_on(&def));
                    let encoded = super::background::run(move || {
                        let mut batches = Vec::new();
                        for (name, bytes) in &files {
                            for group in decode_all(name, bytes, &types)? {
                                let len = group.first().map_or(0, |c| c.len());
                                batches.push(Batch::new(
                                    group.into_iter().map(Arc::new).collect(),
                                    len,
                                ));
                            }
                        }
                        let mut next = next;
                        let out = encode_rows(
                            &job_def,
                            declared,
                            table,
                            Batch::concat(&types, &batches),
                            dir,
                            &mut next,
                        );
                        Ok::<_, super::segment::SegmentError>((out, next))
                    })
                    .await
                    .map_err(|e| DbError::internal(format!("compaction failed: {e}")))?
                    .map_err(|e| DbError::new(super::scan::DATA_CORRUPTED, e.to_string()))?;
                    let (encoded, next) = encoded;
                    ctx.storage.borrow_mut().next_segment = next;
                    let written = write_segments(ctx.storage_io(), &data_dir, dir, table, encoded)
                        .await
                        .map_err(|e| io_error("write a compacted segment", &e))?;
                    crate::failpoint::hit("compaction-after-write");
                    // Merged rows are not warmed (`encode_rows` makes no cache
                    // forms): old partitions are read less than new ones.
                    let written: Vec<_> = written.into_iter().map(|(seg, _)| seg).collect();
                    let old: Vec<u64> = segs.iter().map(|s| s.id).collect();
                    let (before, after): (u64, u64) = (
                        segs.iter().map(|s| s.bytes).sum(),
                        written.iter().map(|s| s.bytes).sum(),
                    );
                    let n = written.len();
                    if ctx
                        .storage
                        .borrow_mut()
                        .replace_segments(table, &old, written)
                    {
                        stats.merged_segments += segs.len();
                        stats.written_segments += n;
                        stats.bytes_before += before;
                        stats.bytes_after += after;
                    }
                    drop(segs);
                }
                Ok::<_, DbError>(stats)
            })
            .await??;
        stats.merged_segments += part.merged_segments;
        stats.written_segments += part.written_segments;
        stats.bytes_before += part.bytes_before;
        stats.bytes_after += part.bytes_after;
    }
    if stats.merged_segments > 0 {
        rewrite_manifest(server).await?;
        crate::failpoint::hit("compaction-after-manifest");
    }
    Ok(stats)
}

/// Whether any shard has a set of segments worth merging.
pub async fn due(server: &Server) -> bool {
    for shard in &server.shards {
        let found = shard
            .run(|ctx| {
                !ctx.storage
                    .borrow()
                    .compaction_candidates(MIN_SEGMENTS, MAX_SEGMENTS)
                    .is_empty()
            })
            .await;
        if found.unwrap_or(false) {
            return true;
        }
    }
    false
}
