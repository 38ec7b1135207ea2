//! MCAP recordings into tables, for every entry point (`COPY <schema> FROM
//! '<path>' | STDIN WITH (FORMAT mcap [, RECORDING '<name>'])`): the
//! schema's topic tables found or created from each channel's layout
//! (widened when a newer message definition adds fields), every decoded
//! batch prepared on the shards as it comes, and at the end one row in
//! `<schema>.recordings` and one per topic in `<schema>.recording_topics`
//! (summed per topic by the view `<schema>.topics`) — all of it one atomic
//! write: a recording is stored whole or not at all.
//!
//! A server file is mapped and, when it has a usable summary, its chunks are
//! decoded by one worker thread per shard (chunks are independent); anything
//! else (STDIN, a file without summary, loose messages) streams through
//! [`McapStream`] in file order.
//!
//! Inside a transaction block a recording is one more write of the block:
//! its rows are kept with the block's (`Session::pending`, at most
//! [`BLOCK_RECORDING_MAX_BYTES`]) and written at COMMIT, logged row by row
//! (no kept file, frames inline); ROLLBACK takes them and the tables the
//! block created.
//!
//! Must not: parse MCAP or CDR (`ingest::mcap` does) or speak a transport.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::*;
use crate::exec::vector::ColumnData;
use crate::storage::recordings::{RecordingRef, RecordingTarget};
use crate::server::copy_progress::{CopyCommand, CopyIoType, CopyProgressCounter, CopyProgressGuard};
use crate::server::ingest_targets::TableClaims;
use crate::catalog::ProvisionalKind;
use crate::ingest::mcap::{
    BlobRef, TableBatch, ChannelPlan, Channels, ChunkBuffer, ColumnRole, DecodeOptions, Decoder, IndexedFile, McapError, McapStream,
    MetadataRecord, ReaderOptions, Record, TableLayout, TopicBatch,
};

/// How long a failed ingest waits for the rewrite lock to remove the tables
/// it created.
const REMOVAL_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A topic's rows are handed to the shards once it holds this many rows,
/// or this many bytes (scans, camera frames): a memtable block's size, so
/// that the memtable keeps the batch as a block instead of copying it.
const BATCH_ROWS: usize = crate::exec::vector::BATCH_ROWS;
const BATCH_BYTES: usize = crate::storage::memtable::BLOCK_MAX_BYTES;
/// What a recording copied inside a transaction block may hold in the
/// session until COMMIT (its decoded rows' bytes); past it, 54000.
const BLOCK_RECORDING_MAX_BYTES: usize = 1 << 30;
/// Decoded batches in flight between the chunk workers and the session.
const BATCHES_IN_FLIGHT_PER_WORKER: usize = 4;
/// The relations every MCAP schema has; no topic table may take their names.
const CATALOG_TABLES: [&str; 4] = ["recordings", "recording_topics", "topics", "frame_index"];

/// `COPY … WITH (FORMAT mcap …)`'s options.
pub struct McapCopyOptions {
    pub recording: Option<String>,
}

/// The options of an MCAP COPY; any option but RECORDING is an error.
pub fn mcap_copy_options(copy: &crate::sql::ingest_copy::IngestCopy) -> DbResult<McapCopyOptions> {
    let mut recording = None;
    for (name, value) in &copy.options {
        match name.as_str() {
            "recording" if value.is_empty() => {
                return Err(DbError::new(sqlstate::INVALID_PARAMETER_VALUE, "RECORDING must not be empty"))
            }
            "recording" => recording = Some(value.clone()),
            other => {
                return Err(DbError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("option \"{other}\" not recognized for COPY … FORMAT mcap (it takes RECORDING)"),
                ))
            }
        }
    }
    if recording.is_none() {
        match &copy.path {
            None => {
                return Err(DbError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    "COPY … FROM STDIN WITH (FORMAT mcap) needs RECORDING '<name>': there is no file name to take it from",
                ))
            }
            Some(path) => {
                let stem = std::path::Path::new(path)
                    .file_name()
                    .map(|f| f.to_string_lossy().to_string())
                    .unwrap_or_default();
                let stem = stem.strip_suffix(".mcap").unwrap_or(&stem).to_string();
                if stem.is_empty() {
                    return Err(DbError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("cannot name a recording after \"{path}\": give RECORDING '<name>'"),
                    ));
                }
                recording = Some(stem);
            }
        }
    }
    Ok(McapCopyOptions { recording })
}

/// What one recording's ingest stored (the HTTP endpoint's answer; COPY
/// reports the message count).
#[derive(Debug, Clone)]
pub struct RecordingSummary {
    pub schema: String,
    pub recording: String,
    pub bytes: u64,
    pub messages: u64,
    /// log_time range, nanoseconds since 1970 (None without messages).
    pub time_range: Option<(i64, i64)>,
    /// Per channel: topic, table, message type, message count.
    pub topics: Vec<(String, String, String, u64)>,
}

impl RecordingSummary {
    /// The JSON the HTTP recordings endpoint answers with.
    pub fn to_json(&self) -> Value {
        let time = |ns: Option<i64>| {
            ns.map_or(Value::Null, |ns| {
                let (secs, nanos) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000) as u32);
                chrono::DateTime::from_timestamp(secs, nanos)
                    .map_or(Value::Null, |t| Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)))
            })
        };
        let (start, end) = (self.time_range.map(|r| r.0), self.time_range.map(|r| r.1));
        serde_json::json!({
            "schema": self.schema,
            "recording": self.recording,
            "bytes": self.bytes,
            "message_count": self.messages,
            "start_time": time(start),
            "end_time": time(end),
            "start_time_ns": start,
            "end_time_ns": end,
            "topics": self.topics.iter().map(|(topic, table, message_type, n)| serde_json::json!({
                "topic": topic, "table_name": table, "message_type": message_type, "message_count": n,
            })).collect::<Vec<_>>(),
        })
    }
}

/// An MCAP recording arriving as a byte stream (COPY FROM STDIN, an HTTP body) in progress.
pub struct McapCopy {
    ingest: RecordingIngest,
    stream: McapStream,
    decoder: Decoder,
}

/// Where one layout table's rows go: the table, and for each of its
/// columns the layout column that fills it (`None`: NULL, a column the
/// table has but this message definition lacks).
struct Target {
    table: Arc<TableDef>,
    types: Vec<DataType>,
    sources: Vec<Option<usize>>,
}

/// One channel's share of the recording.
struct TopicCount {
    plan: Arc<ChannelPlan>,
    messages: u64,
}

/// One recording's ingest: its tables, its open write, what it counted.
struct RecordingIngest {
    schema: String,
    recording: String,
    source: String,
    targets: HashMap<(u16, usize), Target>,
    /// Table name → the topic whose rows it takes in this recording.
    claimed: HashMap<String, String>,
    write: Option<ShardWrite>,
    topics: BTreeMap<u16, TopicCount>,
    messages: u64,
    bytes: u64,
    time_range: Option<(i64, i64)>,
    metadata: Map<String, Value>,
    repaired_strings: u64,
    warned: Vec<String>,
    /// The COPY's pg_stat_progress_copy row (bytes read, messages decoded);
    /// None for the HTTP endpoint.
    progress: Option<CopyProgressGuard>,
    /// Set when the rows are logged as references into a kept copy of the
    /// file (a server file with a summary) rather than row by row.
    by_reference: Option<ReferenceIngest>,
    /// `<schema>.frame_index` rows: one per value stored as a reference.
    frame_rows: Vec<Vec<Datum>>,
    /// Every table this ingest writes to, claimed until it ends.
    table_claims: TableClaims,
    /// The topic tables this ingest created: a failed ingest removes them
    /// (see [`Session::remove_created_tables`]).
    created: Vec<Arc<TableDef>>,
    /// Outside a transaction block, the id under which the catalog lists
    /// what this ingest created until it ends (`catalog::IngestCreated`);
    /// `listed` once something is.
    unfinished: Option<u32>,
    listed: bool,
    /// Set when the commit failed after its Commit record went to the WAL
    /// (`ShardWrite::commit_logged`): the record may be on disk, and then
    /// the next start brings the recording back. The failed ingest then
    /// undoes nothing: its tables and its kept file stay (empty tables and
    /// a file their frame columns name, if it did not commit).
    may_have_committed: bool,
    /// Copied inside a transaction block: rows go to the block's pending
    /// rows (`block_bytes` of them so far), the block's COMMIT writes them.
    in_block: bool,
    block_bytes: usize,
    timeline: CopyTimeline,
}

/// Where a server file's COPY spends its time, logged to stderr when
/// `BREWRIC_MCAP_TIMELINE` is set (tools/bench_mcap.py reads it): the phases
/// before and after the decoding are what the decoding threads do not
/// overlap.
struct CopyTimeline {
    enabled: bool,
    last: std::time::Instant,
    phases: Vec<(&'static str, std::time::Duration)>,
}

impl CopyTimeline {
    fn start() -> CopyTimeline {
        static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        CopyTimeline {
            enabled: *ENABLED.get_or_init(|| std::env::var_os("BREWRIC_MCAP_TIMELINE").is_some_and(|v| !v.is_empty())),
            last: std::time::Instant::now(),
            phases: Vec::new(),
        }
    }

    /// Ends phase `name` (begun at the previous mark).
    fn mark(&mut self, name: &'static str) {
        if self.enabled {
            let now = std::time::Instant::now();
            self.phases.push((name, now - self.last));
            self.last = now;
        }
    }

    fn log(&self, path: &str) {
        if self.enabled {
            let phases: Vec<String> =
                self.phases.iter().map(|(name, d)| format!("{name} {:.2}", d.as_secs_f64() * 1e3)).collect();
            eprintln!("brewricd: mcap timeline (ms) {path}: {}", phases.join(", "));
        }
    }
}

/// A recording whose rows the WAL logs by reference (`storage::recordings`):
/// chunk worker `w`'s rows are held on shard `w`, which logs the chunks it
/// decoded before the commit.
struct ReferenceIngest {
    data_dir: std::path::PathBuf,
    /// The kept file's name in the data directory's `recordings/`.
    file: String,
    /// Keeping the file (`keep_recording_file`), off the session's thread
    /// while the chunks decode; awaited before a reference to the file is
    /// logged, and before the file is removed again.
    keeping: Option<tokio::task::JoinHandle<DbResult<()>>>,
    /// Holds the file against a checkpoint's removal of unneeded kept files
    /// until the ingest ends (the keeping task holds it too, in case the
    /// session goes first).
    pin: Arc<crate::storage::recordings::KeptPin>,
    file_bytes: u64,
    /// Per worker (= shard), the file offsets of the chunks it decodes, in order.
    chunks: Vec<Vec<u64>>,
    /// Byte sequences longer than this are stored as references into the
    /// kept file (None: every value inline).
    frame_threshold: Option<usize>,
    /// The shards that hold rows of this recording.
    shards: Vec<usize>,
}

impl RecordingIngest {
    fn metadata(&mut self, m: &MetadataRecord<'_>) {
        let fields: Map<String, Value> = m
            .metadata
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        self.metadata.insert(m.name.to_string(), Value::Object(fields));
    }
}

impl Session {
    /// Starts `COPY <schema> FROM STDIN WITH (FORMAT mcap, RECORDING 'name')`.
    pub(super) async fn begin_mcap_copy(&mut self, copy: &crate::sql::ingest_copy::IngestCopy) -> DbResult<McapCopy> {
        let options = mcap_copy_options(copy)?;
        let recording = options.recording.unwrap_or_default();
        let mut copy = self.begin_mcap_stream(&copy.schema, &recording, "STDIN").await?;
        copy.ingest.progress = Some(self.begin_copy_progress(0, CopyCommand::From, CopyIoType::Pipe, 0));
        Ok(copy)
    }

    /// Starts a recording that arrives as a byte stream: fed by
    /// [`mcap_copy_data`](Self::mcap_copy_data), ended by
    /// [`mcap_copy_done`](Self::mcap_copy_done) or [`mcap_copy_abort`](Self::mcap_copy_abort).
    pub async fn begin_mcap_stream(&mut self, schema: &str, recording: &str, source: &str) -> DbResult<McapCopy> {
        let ingest = self.start_recording(schema, recording, source).await?;
        let recording = recording.to_string();
        let mut decoder = Decoder::new(Channels::new(DecodeOptions {
            recording,
            blob_threshold: None,
        }));
        decoder.cut_batches_at(BATCH_ROWS, BATCH_BYTES);
        Ok(McapCopy {
            ingest,
            stream: McapStream::new(ReaderOptions::default()),
            decoder,
        })
    }

    /// Feeds one CopyData chunk of an MCAP COPY.
    pub async fn mcap_copy_data(&mut self, copy: &mut McapCopy, chunk: &[u8]) -> DbResult<()> {
        copy.ingest.bytes += chunk.len() as u64;
        if let Some(p) = &copy.ingest.progress {
            p.add_bytes(chunk.len() as u64);
        }
        copy.stream.feed(chunk);
        while let Some(record) = copy.stream.next_record()? {
            if let Record::Metadata(m) = &record.record {
                copy.ingest.metadata(m);
            }
            copy.decoder.record(&record)?;
        }
        let batches = copy.decoder.take_batches_over(BATCH_ROWS, BATCH_BYTES);
        for b in batches {
            self.absorb_topic_batch(&mut copy.ingest, b, None).await?;
        }
        Ok(())
    }

    /// Ends an MCAP COPY FROM STDIN: the file must be complete; then the
    /// last rows, the recording's catalog rows and the commit.
    pub async fn mcap_copy_done(&mut self, copy: &mut McapCopy) -> DbResult<RecordingSummary> {
        copy.stream.finish().into_result()?;
        for b in copy.decoder.take_batches() {
            self.absorb_topic_batch(&mut copy.ingest, b, None).await?;
        }
        self.finish_recording(&mut copy.ingest).await
    }

    /// Abandons an MCAP COPY: its prepared rows are dropped.
    pub async fn mcap_copy_abort(&mut self, copy: &mut McapCopy) {
        if let Some(write) = copy.ingest.write.take() {
            self.abort_write(write).await;
        }
        self.remove_created_tables(&mut copy.ingest).await;
    }

    /// `COPY <schema> FROM '<path>' WITH (FORMAT mcap …)`: the file mapped,
    /// its chunks decoded in parallel when it has a summary, else streamed.
    pub(super) async fn copy_mcap_file(&mut self, copy: &crate::sql::ingest_copy::IngestCopy, path: &str) -> DbResult<u64> {
        let options = mcap_copy_options(copy)?;
        let recording = options.recording.unwrap_or_default();
        let file = std::fs::File::open(path)
            .map_err(|e| DbError::new("58P01", format!("could not open file \"{path}\" for reading: {e}")))?;
        // SAFETY: the mapping is only read. Another process truncating the file
        // while it is mapped would fault the reads (SIGBUS); the server reads
        // files an administrator pointed it at, as PostgreSQL's COPY FROM does.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| DbError::new("58030", format!("could not read file \"{path}\": {e}")))?;
        let map = Arc::new(map);
        let mut ingest = self.start_recording(&copy.schema, &recording, path).await?;
        ingest.timeline.mark("catalog");
        ingest.bytes = map.len() as u64;
        ingest.progress = Some(self.begin_copy_progress(0, CopyCommand::From, CopyIoType::File, map.len() as u64));
        let result = match self.ingest_mapped_file(&mut ingest, map, &recording, path).await {
            Ok(()) => self.finish_recording(&mut ingest).await.map(|s| s.messages),
            Err(e) => Err(e),
        };
        if result.is_ok() {
            ingest.timeline.log(path);
        } else {
            if let Some(write) = ingest.write.take() {
                self.abort_write(write).await;
            }
            // The keeping ends before the file goes and the tables naming it do.
            if let Some(keeping) = ingest.by_reference.as_mut().and_then(|r| r.keeping.take()) {
                let _ = keeping.await;
            }
            self.remove_created_tables(&mut ingest).await;
            // A commit that may be on disk keeps its file (see `may_have_committed`).
            if let Some(r) = ingest.by_reference.as_ref().filter(|_| !ingest.may_have_committed) {
                self.unname_kept_file(&ingest.schema, &r.file);
                crate::storage::recordings::forget_file(&r.data_dir, &r.file);
            }
        }
        result
    }

    /// Takes kept file `file` out of the frame tables of `schema` that the
    /// keeping named it in (tables the COPY did not create; those it created
    /// are gone already), so that no catalog entry names a removed file.
    fn unname_kept_file(&self, schema: &str, file: &str) {
        let named = |t: &TableDef| t.frame_files.iter().any(|f| f == file);
        let snapshot = self.server.catalog.snapshot();
        let Ok(db) = snapshot.database(&self.database) else { return };
        if !db.schemas.get(schema).is_some_and(|s| s.tables.values().any(|t| named(t))) {
            return;
        }
        // A failure to save the catalog leaves the name: the file is gone
        // either way, and a name without a file only keeps nothing.
        let _ = self.server.catalog.update_database(&self.database, |db| {
            if let Some(s) = db.schemas.get_mut(schema) {
                for t in s.tables.values_mut().filter(|t| named(t)) {
                    Arc::make_mut(t).frame_files.retain(|f| f != file);
                }
            }
            Ok(())
        });
    }

    /// The recording's one write, begun at its first rows. A recording
    /// logged by reference commits synchronously whatever
    /// `synchronous_commit` says: its kept file is unpinned when the COPY
    /// ends, and from then on only the WAL keeps a checkpoint from deleting
    /// it (`recordings::remove_unlogged`), so its records must be on disk by then.
    /// The tables found before the lock was taken must still be there
    /// (an ALTER TABLE in between gives a table a new OID: rows prepared
    /// for the old one would be lost): else 40001.
    async fn open_recording_write(&self, ingest: &mut RecordingIngest) -> DbResult<()> {
        if ingest.write.is_none() {
            let mut write = self.begin_locked_write().await;
            write.synchronous |= ingest.by_reference.is_some();
            ingest.write = Some(write);
            self.check_targets_remain(ingest)?;
        }
        Ok(())
    }

    /// 40001 when a table this ingest found was rewritten or dropped since.
    fn check_targets_remain(&self, ingest: &RecordingIngest) -> DbResult<()> {
        self.check_tables_current(ingest.targets.values().map(|t| &*t.table))
    }

    async fn ingest_mapped_file(
        &mut self,
        ingest: &mut RecordingIngest,
        map: Arc<memmap2::Mmap>,
        recording: &str,
        path: &str,
    ) -> DbResult<()> {
        let reader = ReaderOptions::default();
        let options = DecodeOptions {
            recording: recording.to_string(),
            blob_threshold: None,
        };
        let indexed = IndexedFile::open(&map, &reader)?;
        let Some(indexed) = indexed else {
            return self.stream_mapped_file(ingest, &map, options).await;
        };
        ingest.timeline.mark("open");
        let mut channels = Channels::from_indexed(&indexed, options)?;
        for m in &indexed.metadata {
            ingest.metadata(m);
        }
        // Every table before any row: a table that needs new columns is
        // widened while no write of this recording is open.
        for plan in channels.plans() {
            for t in 0..plan.layout.tables.len() {
                self.ensure_target(ingest, &plan, t).await?;
            }
        }
        ingest.timeline.mark("tables");
        let chunks = indexed.chunks.len();
        let workers = self.server.shards.len().clamp(1, chunks.max(1));
        // A server with a data directory keeps the file and logs references
        // into it; the rows of worker `w` then stay on shard `w`.
        // (Not in a transaction block: its rows are logged at its COMMIT.)
        if let Some(data_dir) = self.server.checkpoints.data_dir.get().filter(|_| !ingest.in_block) {
            let file = crate::storage::recordings::new_kept_name();
            ingest.by_reference = Some(ReferenceIngest {
                data_dir: data_dir.clone(),
                pin: Arc::new(self.server.kept_pins.pin(&file)),
                file,
                keeping: None,
                file_bytes: map.len() as u64,
                chunks: (0..workers)
                    .map(|w| chunks_of_worker(&indexed.chunks, w, workers).map(|c| c.offset).collect())
                    .collect(),
                frame_threshold: None,
                shards: Vec::new(),
            });
            let frame_tables = self.keep_frames_in(ingest, &mut channels);
            if let Some(reference) = ingest.by_reference.as_mut() {
                let (server, database, schema) = (self.server.clone(), self.database.clone(), ingest.schema.clone());
                let (source, data_dir, file) = (path.to_string(), data_dir.clone(), reference.file.clone());
                let pin = reference.pin.clone();
                reference.keeping = Some(tokio::task::spawn_blocking(move || {
                    let kept = keep_recording_file(&server, &database, &schema, &source, &data_dir, &file, &frame_tables);
                    drop(pin);
                    kept
                }));
            }
        }
        let (tx, mut rx) = tokio::sync::mpsc::channel::<WorkerMessage>(workers * BATCHES_IN_FLIGHT_PER_WORKER);
        let progress = ingest.progress.as_ref().map(|p| p.counter());
        for worker in 0..workers {
            let (tx, map, channels, reader) = (tx.clone(), map.clone(), channels.clone(), reader.clone());
            let progress = progress.clone();
            std::thread::Builder::new()
                .name(format!("mcap-decode-{worker}"))
                .spawn(move || {
                    // Started from the session's shard thread: not confined to its core.
                    crate::runtime::shard::unpin_current_thread();
                    decode_chunks(&map, &reader, channels, (worker, workers), progress, &tx)
                })
                .map_err(|e| DbError::internal(format!("could not start a decoding thread: {e}")))?;
        }
        drop(tx);
        ingest.timeline.mark("start_decoding");
        // The whole data section's checksum, here while the workers decode;
        // reported only once they all finished, so that a damaged chunk is
        // reported as itself rather than as the section's checksum.
        let data_crc = indexed.verify_data_crc();
        drop(indexed);
        let mut done = 0;
        // Each worker's last message is Done: past the last one, nothing is
        // left to wait for (not even the workers' exits).
        while done < workers {
            match rx.recv().await {
                Some(WorkerMessage::Batch(worker, b)) => {
                    let shard = ingest.by_reference.is_some().then_some(worker);
                    self.absorb_topic_batch(ingest, b, shard).await?
                }
                Some(WorkerMessage::Done) => done += 1,
                Some(WorkerMessage::Failed(e)) => return Err(e),
                None => return Err(DbError::internal("an MCAP decoding worker stopped without finishing")),
            }
        }
        // Unmapping the file (~0.7 ms for 20 MB, when the workers are gone
        // already) need not hold up the commit.
        tokio::task::spawn_blocking(move || drop(map));
        ingest.timeline.mark("decoding");
        Ok(data_crc?)
    }

    /// A mapped file without a usable summary, read in file order.
    async fn stream_mapped_file(&mut self, ingest: &mut RecordingIngest, map: &[u8], options: DecodeOptions) -> DbResult<()> {
        let mut stream = McapStream::new(ReaderOptions::default());
        let mut decoder = Decoder::new(Channels::new(options));
        decoder.cut_batches_at(BATCH_ROWS, BATCH_BYTES);
        for piece in map.chunks(1 << 20) {
            stream.feed(piece);
            if let Some(p) = &ingest.progress {
                p.add_bytes(piece.len() as u64);
            }
            while let Some(record) = stream.next_record()? {
                if let Record::Metadata(m) = &record.record {
                    ingest.metadata(m);
                }
                decoder.record(&record)?;
            }
            let batches = decoder.take_batches_over(BATCH_ROWS, BATCH_BYTES);
            for b in batches {
                self.absorb_topic_batch(ingest, b, None).await?;
            }
        }
        stream.finish().into_result()?;
        for b in decoder.take_batches() {
            self.absorb_topic_batch(ingest, b, None).await?;
        }
        Ok(())
    }

    /// Makes the schema and its recording catalog, and refuses a recording
    /// name the schema already holds.
    async fn start_recording(&mut self, schema: &str, recording: &str, source: &str) -> DbResult<RecordingIngest> {
        let timeline = CopyTimeline::start();
        let schema_existed = self.server.catalog.snapshot().database(&self.database)?.schemas.contains_key(schema);
        self.create_schema_if_absent(schema)?;
        let q = crate::catalog::quote_ident;
        let s = q(schema);
        let ddl = [
            format!(
                "CREATE TABLE IF NOT EXISTS {s}.recordings (name text PRIMARY KEY, source text, bytes bigint, \
                 message_count bigint, start_time timestamptz, end_time timestamptz, metadata jsonb)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {s}.recording_topics (recording text, topic text, table_name text, \
                 message_type text, message_encoding text, schema_encoding text, message_count bigint)"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {s}.frame_index (recording text, topic text, table_name text, \
                 column_name text, log_time timestamptz, sequence bigint, bytes bigint, encoding text, \
                 width bigint, height bigint, file_offset bigint, offset_in_chunk bigint)"
            ),
        ];
        let (server, database) = (self.server.clone(), self.database.clone());
        let existing = move |name: &str| -> DbResult<bool> {
            Ok(server
                .catalog
                .snapshot()
                .database(&database)?
                .schemas
                .get(schema)
                .is_some_and(|sc| sc.relation_kind(name).is_some()))
        };
        // Each DDL saves the whole catalog: run only what is missing.
        let missing: Vec<(String, &str)> = ddl
            .into_iter()
            .zip(["recordings", "recording_topics", "frame_index"])
            .filter_map(|(sql, name)| match existing(name) {
                Ok(true) => None,
                Ok(false) => Some(Ok((sql, name))),
                Err(e) => Some(Err(e)),
            })
            .collect::<DbResult<_>>()?;
        let mut made: Vec<(ProvisionalKind, &str)> = Vec::new();
        for (sql, name) in missing {
            for stmt in crate::sql::parse(&sql)? {
                Box::pin(self.execute(&stmt, vec![], &[])).await?;
            }
            made.push((ProvisionalKind::Table, name));
        }
        if !existing("topics")? {
            made.push((ProvisionalKind::View, "topics"));
            let sql = format!(
                "CREATE VIEW {s}.topics AS SELECT topic, table_name, message_type, message_encoding, schema_encoding, \
                 sum(message_count)::bigint AS message_count FROM {s}.recording_topics \
                 GROUP BY topic, table_name, message_type, message_encoding, schema_encoding"
            );
            for stmt in crate::sql::parse(&sql)? {
                if let Err(e) = Box::pin(self.execute(&stmt, vec![], &[])).await {
                    // Made meanwhile by another recording's ingest.
                    if e.code != sqlstate::DUPLICATE_TABLE {
                        return Err(e);
                    }
                }
            }
        }
        self.notices.clear();
        let (_, found) = self
            .internal_query(
                &format!("SELECT 1 FROM {s}.recordings WHERE name = $1"),
                &[Datum::text(recording)],
                &[DataType::Text],
            )
            .await?;
        if found.iter().any(|b| b.len > 0) {
            return Err(duplicate_recording(schema, recording));
        }
        let in_block = self.txn != TxnState::Idle;
        // A block's ROLLBACK and a crash before its COMMIT undo what it made.
        let unfinished = (!in_block).then(|| self.server.catalog.allocate_oid());
        let mut listed = false;
        if let Some(ingest) = unfinished {
            if !schema_existed {
                made.insert(0, (ProvisionalKind::Schema, schema));
            }
            listed = self.list_ingest_created(ingest, schema, &made);
        }
        Ok(RecordingIngest {
            schema: schema.to_string(),
            recording: recording.to_string(),
            source: source.to_string(),
            targets: HashMap::new(),
            claimed: HashMap::new(),
            write: None,
            topics: BTreeMap::new(),
            messages: 0,
            bytes: 0,
            time_range: None,
            metadata: Map::new(),
            repaired_strings: 0,
            warned: Vec::new(),
            progress: None,
            by_reference: None,
            frame_rows: Vec::new(),
            table_claims: TableClaims::new(self.server.ingest_targets.clone()),
            created: Vec::new(),
            unfinished,
            listed,
            may_have_committed: false,
            in_block,
            block_bytes: 0,
            timeline,
        })
    }

    /// The table that takes layout table `index` of `plan`'s topic: found,
    /// created, or widened (only while the recording's write is not open yet).
    async fn ensure_target(&mut self, ingest: &mut RecordingIngest, plan: &Arc<ChannelPlan>, index: usize) -> DbResult<()> {
        let key = (plan.channel_id, index);
        if ingest.targets.contains_key(&key) {
            return Ok(());
        }
        let layout = &plan.layout.tables[index];
        if CATALOG_TABLES.contains(&layout.name.as_str()) {
            return Err(DbError::new(
                sqlstate::DUPLICATE_TABLE,
                format!(
                    "topic {} would be stored in table \"{}\", which holds the schema's recording catalog",
                    plan.topic, layout.name
                ),
            ));
        }
        match ingest.claimed.get(&layout.name) {
            Some(topic) if *topic != plan.topic => {
                return Err(DbError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("topics {topic} and {} would both be stored in table \"{}\"", plan.topic, layout.name),
                ))
            }
            Some(_) => {}
            None => {
                ingest.claimed.insert(layout.name.clone(), plan.topic.clone());
            }
        }
        if let Some(warning) = &plan.warning {
            if index == 0 && !ingest.warned.contains(&plan.topic) {
                ingest.warned.push(plan.topic.clone());
                self.warning(warning.clone());
            }
        }
        let created_before = ingest.created.len();
        let mut table = self.claim_target(ingest, layout)?;
        if ingest.created.len() > created_before {
            self.note_created_in_block(&table);
        }
        let missing: Vec<(&str, DataType)> = layout
            .columns
            .iter()
            .filter(|c| table.column_index(&c.name).is_none())
            .map(|c| (c.name.as_str(), c.data_type))
            .collect();
        if !missing.is_empty() {
            table = if ingest.write.is_some() {
                self.widen_during_write(ingest, plan, &table, &missing).await?
            } else {
                self.add_ingest_columns(&ingest.schema, &layout.name, &missing).await?
            };
            ingest.table_claims.claim(table.oid);
            // Columns just added hold only NULLs: new bytea ones can take the
            // frame form, as the table's other MCAP columns have it.
            let added: Vec<String> =
                missing.iter().filter(|(_, t)| *t == DataType::Bytea).map(|(n, _)| n.to_string()).collect();
            if !added.is_empty() {
                table = self.mark_frame_columns(&ingest.schema, &table, &added)?;
            }
        }
        let sources = table_sources(&table, layout, &plan.topic)?;
        let types = table.column_types();
        ingest.targets.insert(key, Target { table, types, sources });
        Ok(())
    }

    /// The ingest has ended (committed, or failed and removed what it
    /// could): what it created is no longer listed as an unfinished ingest's.
    fn forget_ingest_created(&self, ingest: &mut RecordingIngest) {
        if let Some(id) = ingest.unfinished.filter(|_| ingest.listed) {
            self.forget_unfinished_ingest(id);
        }
        ingest.listed = false;
    }

    /// Adds `missing` columns to `table` once the recording's write is open
    /// (a stream meets a channel whose newer definition has more fields
    /// after other channels' rows). The ADD COLUMN keeps the table's OID
    /// (rows this recording already holds for it, from another channel of
    /// the topic, read NULL in the new columns); the write lets go of the
    /// rewrite lock for the ALTER and takes it again, then checks that no
    /// table it has rows for was rewritten meanwhile by another session
    /// (those rows would be lost with the old OID): 40001 then.
    async fn widen_during_write(
        &mut self,
        ingest: &mut RecordingIngest,
        plan: &ChannelPlan,
        table: &Arc<TableDef>,
        missing: &[(&str, DataType)],
    ) -> DbResult<Arc<TableDef>> {
        let refuse = |why: &str| {
            DbError::unsupported(format!(
                "topic {} (channel {}) needs new columns in table \"{}\" (\"{}\", …), {why}",
                plan.topic, plan.channel_id, table.name, missing[0].0
            ))
            .with_hint("Add the columns with ALTER TABLE first.")
        };
        if ingest.by_reference.is_some() {
            return Err(refuse("and its channel first appears after rows were written"));
        }
        if ingest.in_block {
            // add_ingest_columns refuses it (a rewrite cannot be rolled back).
            return self.add_ingest_columns(&ingest.schema, &table.name, missing).await;
        }
        let write = ingest.write.as_mut().ok_or_else(|| DbError::internal("MCAP write missing"))?;
        write.rewrites = None;
        let widened = self.add_ingest_columns(&ingest.schema, &table.name, missing).await;
        let write = ingest.write.as_mut().ok_or_else(|| DbError::internal("MCAP write missing"))?;
        write.rewrites = Some(self.server.rewrites.clone().read_owned().await);
        let widened = widened?;
        self.check_targets_remain(ingest)?;
        Ok(widened)
    }

    /// Finds or creates the table of `layout` and claims it for this
    /// ingest. A failed ingest may remove a table it created between the
    /// lookup and the claim: the claim holds only once the table is seen
    /// still there, else the lookup runs again.
    fn claim_target(&self, ingest: &mut RecordingIngest, layout: &TableLayout) -> DbResult<Arc<TableDef>> {
        let current = |oid: Option<u32>| -> DbResult<Option<Arc<TableDef>>> {
            let catalog = self.server.catalog.snapshot();
            let table = catalog.database(&self.database)?.table(&ingest.schema, &layout.name).cloned();
            Ok(table.filter(|t| oid.is_none_or(|o| t.oid == o)))
        };
        for _ in 0..3 {
            let (table, created) = match current(None)? {
                Some(t) => (t, false),
                None => {
                    let time = layout.columns.iter().position(|c| c.role == ColumnRole::LogTime);
                    let oid = self.server.catalog.allocate_oid();
                    let table = self.create_ingest_table(TableDef {
                        oid,
                        name: layout.name.clone(),
                        schema: ingest.schema.clone(),
                        columns: layout
                            .columns
                            .iter()
                            .map(|c| ColumnDef {
                                frame_refs: c.data_type == DataType::Bytea,
                                ..ColumnDef::plain(&c.name, c.data_type)
                            })
                            .collect(),
                        time_column: time,
                        frame_files: Vec::new(),
                        checks: Vec::new(),
                        foreign_keys: Vec::new(),
                    }, ingest.unfinished)?;
                    let created = table.oid == oid;
                    (table, created)
                }
            };
            ingest.table_claims.claim(table.oid);
            if current(Some(table.oid))?.is_some() {
                if created {
                    ingest.created.push(table.clone());
                    ingest.listed |= ingest.unfinished.is_some();
                }
                return Ok(table);
            }
            ingest.table_claims.release(table.oid);
        }
        Err(DbError::new(
            "40001",
            format!("table \"{}.{}\" was removed while this recording was being stored", ingest.schema, layout.name),
        )
        .with_hint("Run the COPY again."))
    }

    /// After a failed ingest (its write aborted): removes the topic tables
    /// it created, unless another writer has put rows in one or another
    /// ingest claims it. Writes wait meanwhile (the rewrite lock), so no row
    /// lands between the emptiness check and the removal. The schema and its
    /// recording catalog stay, as do columns the ingest added to existing
    /// tables.
    async fn remove_created_tables(&mut self, ingest: &mut RecordingIngest) {
        self.remove_created_tables_of(ingest).await;
        self.forget_ingest_created(ingest);
    }

    async fn remove_created_tables_of(&mut self, ingest: &mut RecordingIngest) {
        ingest.table_claims.release_all();
        let created = std::mem::take(&mut ingest.created);
        // In a block the failed COPY aborts the block, whose ROLLBACK removes them.
        if created.is_empty() || ingest.may_have_committed || ingest.in_block {
            return;
        }
        // A transaction block that rewrote rows holds the lock until it
        // ends: past a bound the tables stay (empty), rather than the
        // failed COPY's answer waiting on another client.
        let Ok(_alone) = tokio::time::timeout(REMOVAL_LOCK_WAIT, self.server.rewrites.write()).await else {
            let names: Vec<&str> = created.iter().map(|t| t.name.as_str()).collect();
            eprintln!(
                "brewricd: a failed recording ingest left its tables in schema \"{}\" ({}): writes held the rewrite lock for over {} s",
                ingest.schema,
                names.join(", "),
                REMOVAL_LOCK_WAIT.as_secs()
            );
            return;
        };
        let q = crate::catalog::quote_ident;
        for table in created {
            let sql = format!("SELECT 1 FROM {}.{} LIMIT 1", q(&table.schema), q(&table.name));
            match self.internal_query(&sql, &[], &[]).await {
                Ok((_, batches)) if batches.iter().all(|b| b.len == 0) => {}
                _ => continue,
            }
            let removed = self.server.ingest_targets.if_unclaimed(table.oid, || {
                self.server.catalog.update_database(&self.database, |db| {
                    let relation = (table.schema.clone(), table.name.clone());
                    // A view made over it meanwhile keeps it, as DROP TABLE without CASCADE would.
                    if dependent_views(db, &relation, "table", false).is_err() {
                        return Ok(false);
                    }
                    Ok(remove_table_entry(db, &table))
                })
            });
            if let Some(Ok(true)) = removed {
                let _ = self.release_table_storage(table.oid).await;
            }
        }
    }

    /// Prepares one decoded batch's rows on the shards (opening the
    /// recording's write at its first rows): logged and routed as any
    /// write's, or, for a recording logged by reference, held unlogged on
    /// `shard`.
    async fn absorb_topic_batch(&mut self, ingest: &mut RecordingIngest, batch: TopicBatch, shard: Option<usize>) -> DbResult<()> {
        let plan = batch.plan.clone();
        for t in 0..plan.layout.tables.len() {
            self.ensure_target(ingest, &plan, t).await?;
        }
        ingest.messages += batch.messages as u64;
        if let Some(p) = &ingest.progress {
            p.add_tuples(batch.messages as u64);
        }
        ingest.repaired_strings += batch.repaired_strings;
        ingest
            .topics
            .entry(plan.channel_id)
            .or_insert_with(|| TopicCount {
                plan: plan.clone(),
                messages: 0,
            })
            .messages += batch.messages as u64;
        if let Some(main) = batch.tables.first() {
            let log_time = plan.layout.main().columns.iter().position(|c| c.role == ColumnRole::LogTime);
            if let Some(ColumnData::Int64(times)) = log_time.and_then(|c| main.columns.get(c)).map(|c| &c.data) {
                for &t in times.iter().take(main.rows) {
                    let (lo, hi) = ingest.time_range.get_or_insert((t, t));
                    *lo = (*lo).min(t);
                    *hi = (*hi).max(t);
                }
            }
        }
        if !ingest.in_block {
            self.open_recording_write(ingest).await?;
        }
        let kept_file = ingest.by_reference.as_ref().map(|r| r.file.clone());
        for mut table_batch in batch.tables {
            if table_batch.rows == 0 {
                continue;
            }
            let target = ingest
                .targets
                .get(&(plan.channel_id, table_batch.table))
                .ok_or_else(|| DbError::internal("MCAP table target missing"))?;
            let blobs: Vec<BlobRef> = batch.blobs.iter().filter(|b| b.table == table_batch.table).copied().collect();
            let layout = &plan.layout.tables[table_batch.table];
            for blob in &blobs {
                ingest.frame_rows.push(frame_index_row(&ingest.recording, &plan.topic, layout, &table_batch, blob));
            }
            // Rows are spelled out where they are not kept as a memtable
            // block as they come (a stream's rows are logged and appended as
            // any write's) and where camera frame columns are rewritten row
            // by row.
            let frame_columns = target.table.frame_columns();
            let held = shard.is_some() && ingest.by_reference.is_some();
            if !held || frame_columns.iter().any(|&f| f) {
                table_batch.spell_out();
            }
            // Which of the target's columns keep one value for every row.
            let repeated: Vec<bool> =
                target.sources.iter().map(|s| s.is_some_and(|s| table_batch.repeated.get(s) == Some(&true))).collect();
            let rows_batch = crate::storage::recordings::table_batch(
                &target.types,
                &target.sources,
                table_batch.columns,
                table_batch.rows,
            );
            if ingest.in_block {
                // Kept as any row the block wrote (frames inline at COMMIT).
                ingest.block_bytes += rows_batch.columns.iter().map(|c| c.byte_size()).sum::<usize>();
                if ingest.block_bytes > BLOCK_RECORDING_MAX_BYTES {
                    return Err(block_recording_too_large(&ingest.recording));
                }
                let oid = target.table.oid;
                self.write_rows(oid, vec![rows_batch]).await?;
                continue;
            }
            let rows_batch = crate::storage::frames::store_decoded(
                rows_batch,
                &frame_columns,
                &target.sources,
                &blobs,
                kept_file.as_deref(),
            )
            .map_err(|e| DbError::internal(format!("topic {}: {e}", plan.topic)))?;
            let (oid, types) = (target.table.oid, target.types.clone());
            let write = ingest.write.as_mut().ok_or_else(|| DbError::internal("MCAP write missing"))?;
            match (shard, ingest.by_reference.as_mut()) {
                (Some(shard), Some(reference)) => {
                    if !reference.shards.contains(&shard) {
                        reference.shards.push(shard);
                    }
                    // Repeated values stay kept once, as the decoder wrote them.
                    let rows = crate::storage::memtable::CompactBatch::from_repeated(rows_batch, repeated);
                    self.hold_rows(write, shard, oid, &types, rows).await?
                }
                _ => self.prepare_stored_rows(write, oid, &types, vec![rows_batch]).await?,
            }
        }
        Ok(())
    }

    /// The recording's catalog rows, then the commit.
    async fn finish_recording(&mut self, ingest: &mut RecordingIngest) -> DbResult<RecordingSummary> {
        let catalog = self.server.catalog.snapshot();
        let db = catalog.database(&self.database)?;
        let relation = |name: &str| {
            db.table(&ingest.schema, name)
                .cloned()
                .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}.{name}\" does not exist", ingest.schema)))
        };
        let (recordings, recording_topics) = (relation("recordings")?, relation("recording_topics")?);
        let frame_index = relation("frame_index")?;
        let (start, end) = match ingest.time_range {
            Some((lo, hi)) => (Datum::Int64(lo), Datum::Int64(hi)),
            None => (Datum::Null, Datum::Null),
        };
        let recording_row = vec![
            Datum::text(&ingest.recording),
            Datum::text(&ingest.source),
            Datum::Int64(ingest.bytes as i64),
            Datum::Int64(ingest.messages as i64),
            start,
            end,
            crate::types::text::parse_text(
                DataType::Jsonb,
                &Value::Object(std::mem::take(&mut ingest.metadata)).to_string(),
                &crate::types::FormatContext::default(),
            )?,
        ];
        let topic_rows: Vec<Vec<Datum>> = ingest
            .topics
            .values()
            .map(|t| {
                vec![
                    Datum::text(&ingest.recording),
                    Datum::text(&t.plan.topic),
                    Datum::text(&t.plan.table_name),
                    Datum::text(t.plan.schema_name()),
                    Datum::text(&t.plan.message_encoding),
                    Datum::text(t.plan.schema_encoding()),
                    Datum::Int64(t.messages as i64),
                ]
            })
            .collect();
        let recording_batch = rows_batch(&recordings, &[recording_row]);
        let topics_batch = rows_batch(&recording_topics, &topic_rows);
        if ingest.in_block {
            let keys = self
                .add_unique_keys(&recordings, std::slice::from_ref(&recording_batch))
                .await
                .map_err(|e| if e.code == sqlstate::UNIQUE_VIOLATION { duplicate_recording(&ingest.schema, &ingest.recording) } else { e })?;
            self.settle_unique_keys(keys, &Ok(()));
            self.write_rows(recordings.oid, vec![recording_batch]).await?;
            if topics_batch.len > 0 {
                self.write_rows(recording_topics.oid, vec![topics_batch]).await?;
            }
            ingest.progress = None;
        } else {
            self.commit_recording(ingest, recordings, recording_topics, frame_index, recording_batch, topics_batch).await?;
            self.forget_ingest_created(ingest);
        }
        if ingest.repaired_strings > 0 {
            self.warning(
                format!(
                    "recording {}: {} strings held invalid UTF-8 or NUL bytes, stored with U+FFFD in their place",
                    ingest.recording, ingest.repaired_strings
                ),
            );
        }
        Ok(RecordingSummary {
            schema: ingest.schema.clone(),
            recording: ingest.recording.clone(),
            bytes: ingest.bytes,
            messages: ingest.messages,
            time_range: ingest.time_range,
            topics: ingest
                .topics
                .values()
                .map(|t| (t.plan.topic.clone(), t.plan.table_name.clone(), t.plan.schema_name().to_string(), t.messages))
                .collect(),
        })
    }

    /// The recording's one write (outside a transaction block): its
    /// references, its catalog rows and the commit.
    async fn commit_recording(
        &mut self,
        ingest: &mut RecordingIngest,
        recordings: Arc<TableDef>,
        recording_topics: Arc<TableDef>,
        frame_index: Arc<TableDef>,
        recording_batch: Batch,
        topics_batch: Batch,
    ) -> DbResult<()> {
        self.open_recording_write(ingest).await?;
        let mut write = ingest.write.take().ok_or_else(|| DbError::internal("MCAP write missing"))?;
        let mut added = crate::sql::unique::AddedKeys::default();
        let prepared: DbResult<()> = async {
            let keys = self
                .add_unique_keys(&recordings, std::slice::from_ref(&recording_batch))
                .await
                .map_err(|e| if e.code == sqlstate::UNIQUE_VIOLATION { duplicate_recording(&ingest.schema, &ingest.recording) } else { e })?;
            added.extend(keys);
            if let Some(keeping) = ingest.by_reference.as_mut().and_then(|r| r.keeping.take()) {
                keeping
                    .await
                    .map_err(|e| DbError::internal(format!("keeping \"{}\" stopped: {e}", ingest.source)))??;
            }
            if let Some(reference) = &ingest.by_reference {
                self.log_recording_references(&mut write, ingest, reference).await?;
            }
            self.prepare_rows(&mut write, recordings.oid, &recordings.column_types(), vec![recording_batch])
                .await?;
            if topics_batch.len > 0 {
                self.prepare_rows(&mut write, recording_topics.oid, &recording_topics.column_types(), vec![topics_batch])
                    .await?;
            }
            let frame_batches: Vec<Batch> =
                ingest.frame_rows.chunks(crate::exec::vector::BATCH_ROWS).map(|rows| rows_batch(&frame_index, rows)).collect();
            if !frame_batches.is_empty() {
                self.prepare_rows(&mut write, frame_index.oid, &frame_index.column_types(), frame_batches).await?;
            }
            Ok(())
        }
        .await;
        ingest.timeline.mark("catalog_rows");
        let commit_logged = write.commit_logged();
        let result = self.settle_write(write, prepared).await;
        ingest.may_have_committed = result.is_err() && commit_logged();
        ingest.timeline.mark("commit");
        // Done either way: the progress row goes before CommandComplete.
        ingest.progress = None;
        // A recording that may have committed keeps its name taken: a
        // second one of that name would stand beside it after the restart.
        if result.is_ok() {
            self.settle_unique_keys(added, &Ok(()));
        } else if !ingest.may_have_committed {
            added.undo();
        }
        result?;
        Ok(())
    }
}

impl Session {
    /// A kept recording's large byte sequences (camera frames) become
    /// references into it when every bytea column its topics fill holds the
    /// frame form (tables made before that form existed store bytes inline).
    /// Returns the tables that must name the kept file in the catalog (see
    /// `keep_recording_file`); none when frames stay inline.
    fn keep_frames_in(&self, ingest: &mut RecordingIngest, channels: &mut Channels) -> Vec<TableId> {
        let Some(reference) = ingest.by_reference.as_mut() else { return Vec::new() };
        let all_frame_form = ingest.targets.values().all(|t| {
            t.table.columns.iter().all(|c| c.data_type != DataType::Bytea || c.frame_refs)
        });
        let tables: Vec<TableId> =
            ingest.targets.values().filter(|t| t.table.has_frame_columns()).map(|t| t.table.oid).collect();
        if !all_frame_form || tables.is_empty() {
            return Vec::new();
        }
        reference.frame_threshold = Some(crate::storage::frames::FRAME_THRESHOLD);
        channels.set_blob_threshold(reference.frame_threshold);
        tables
    }

    /// Marks `columns` of `table` (bytea, all NULL) as holding the frame form.
    fn mark_frame_columns(&self, schema: &str, table: &Arc<TableDef>, columns: &[String]) -> DbResult<Arc<TableDef>> {
        self.server.catalog.update_database(&self.database, |db| {
            let s = db.schemas.get_mut(schema).ok_or_else(|| DbError::internal("schema vanished"))?;
            let t = s
                .tables
                .get_mut(&table.name)
                .filter(|t| t.oid == table.oid)
                .ok_or_else(|| DbError::new(sqlstate::UNDEFINED_TABLE, format!("relation \"{}\" does not exist", table.name)))?;
            for c in &mut Arc::make_mut(t).columns {
                if columns.contains(&c.name) && c.data_type == DataType::Bytea {
                    c.frame_refs = true;
                }
            }
            Ok(t.clone())
        })
    }

    /// Logs, on each shard that holds rows of a recording ingested by
    /// reference, the chunks it decoded and the tables they fill.
    async fn log_recording_references(
        &self,
        write: &mut ShardWrite,
        ingest: &RecordingIngest,
        reference: &ReferenceIngest,
    ) -> DbResult<()> {
        let mut targets: Vec<RecordingTarget> = ingest
            .targets
            .iter()
            .map(|(&(channel, layout_table), t)| RecordingTarget {
                channel,
                layout_table: layout_table as u16,
                table: t.table.oid,
                sources: t.sources.clone(),
            })
            .collect();
        targets.sort_by_key(|t| (t.channel, t.layout_table));
        for &shard in &reference.shards {
            let r = RecordingRef {
                file: reference.file.clone(),
                file_bytes: reference.file_bytes,
                recording: ingest.recording.clone(),
                chunks: reference.chunks.get(shard).cloned().unwrap_or_default(),
                targets: targets.clone(),
                frame_threshold: reference.frame_threshold.map(|t| t as u32),
            };
            let mut payload = Vec::new();
            r.encode(&mut payload);
            self.log_prepared_reference(write, shard, RecordType::RecordingRows, payload).await?;
        }
        Ok(())
    }
}

/// Each of `table`'s columns' layout column (by name), checking that the
/// types agree.
fn table_sources(table: &TableDef, layout: &TableLayout, topic: &str) -> DbResult<Vec<Option<usize>>> {
    table
        .columns
        .iter()
        .map(|c| match layout.column_index(&c.name) {
            None => Ok(None),
            Some(i) if layout.columns[i].data_type == c.data_type => Ok(Some(i)),
            Some(i) => Err(DbError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "column \"{}\" of table \"{}\" is of type {}, but topic {topic}'s field {} ({}) is {}",
                    c.name,
                    table.name,
                    c.data_type.name(),
                    layout.columns[i].source,
                    layout.columns[i].source_type,
                    layout.columns[i].data_type.name()
                ),
            )),
        })
        .collect()
}

/// One `<schema>.frame_index` row: where a value stored as a reference is
/// in the kept file, with its message's time and the image fields beside it
/// (`encoding` or `format`, `width`, `height`) when its table has them.
fn frame_index_row(recording: &str, topic: &str, layout: &TableLayout, rows: &TableBatch, blob: &BlobRef) -> Vec<Datum> {
    let value = |names: &[&str]| -> Datum {
        names
            .iter()
            .find_map(|n| layout.column_index(n))
            .and_then(|c| rows.datum(c, blob.row))
            .unwrap_or(Datum::Null)
    };
    let role = |role: ColumnRole| {
        layout.columns.iter().position(|c| c.role == role).and_then(|c| rows.datum(c, blob.row)).unwrap_or(Datum::Null)
    };
    let integer = |d: Datum| match d {
        Datum::Int16(v) => Datum::Int64(v as i64),
        Datum::Int32(v) => Datum::Int64(v as i64),
        d @ Datum::Int64(_) => d,
        _ => Datum::Null,
    };
    let text = |d: Datum| if matches!(d, Datum::Bytes(_)) { d } else { Datum::Null };
    let (file_offset, offset_in_chunk) = match (blob.file_offset, blob.in_chunk) {
        (Some(offset), _) => (Datum::Int64(offset as i64), Datum::Null),
        (None, Some((chunk, offset))) => (Datum::Int64(chunk as i64), Datum::Int64(offset as i64)),
        (None, None) => (Datum::Null, Datum::Null),
    };
    vec![
        Datum::text(recording),
        Datum::text(topic),
        Datum::text(&layout.name),
        layout.columns.get(blob.column).map_or(Datum::Null, |c| Datum::text(&c.name)),
        role(ColumnRole::LogTime),
        role(ColumnRole::Sequence),
        Datum::Int64(blob.len as i64),
        text(value(&["encoding", "format"])),
        integer(value(&["width"])),
        integer(value(&["height"])),
        file_offset,
        offset_in_chunk,
    ]
}

/// Rows of datums as one batch of `table`'s columns.
fn rows_batch(table: &TableDef, rows: &[Vec<Datum>]) -> Batch {
    let columns = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let values: Vec<Datum> = rows.iter().map(|r| r.get(i).cloned().unwrap_or(Datum::Null)).collect();
            Column::from_datums(c.data_type, &values)
        })
        .collect();
    let mut b = Batch::from_columns(columns);
    b.len = rows.len();
    b
}

fn block_recording_too_large(recording: &str) -> DbError {
    DbError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        format!(
            "recording {recording}: a COPY in mcap format inside a transaction block holds its rows until COMMIT, and this one passed {} MiB",
            BLOCK_RECORDING_MAX_BYTES >> 20
        ),
    )
    .with_hint("Run the COPY outside a transaction block (autocommit): a recording then commits on its own, its rows not held in the session.")
}

fn duplicate_recording(schema: &str, recording: &str) -> DbError {
    DbError::new(
        sqlstate::UNIQUE_VIOLATION,
        format!("recording \"{recording}\" is already stored in schema \"{schema}\""),
    )
    .with_detail(format!("Key (name)=({recording}) already exists in {schema}.recordings."))
    .with_hint("Name this copy with RECORDING '<name>', or delete the stored one first.")
}

/// Keeps the recording file at `source` in the data directory as `file`
/// (linked or copied, and synced) and names it in the catalog entries of
/// `frame_tables`, which keeps it as long as they exist. Blocking file and
/// catalog writes: run it beside the decoding.
fn keep_recording_file(
    server: &Server,
    database: &str,
    schema: &str,
    source: &str,
    data_dir: &std::path::Path,
    file: &str,
    frame_tables: &[TableId],
) -> DbResult<()> {
    crate::storage::recordings::keep_file(data_dir, std::path::Path::new(source), file).map_err(|e| {
        DbError::new("58030", format!("could not keep a copy of \"{source}\" in the data directory: {e}"))
    })?;
    if frame_tables.is_empty() {
        return Ok(());
    }
    server.catalog.update_database(database, |db| {
        let s = db.schemas.get_mut(schema).ok_or_else(|| DbError::internal("schema vanished"))?;
        for t in s.tables.values_mut() {
            if frame_tables.contains(&t.oid) && !t.frame_files.iter().any(|f| f == file) {
                Arc::make_mut(t).frame_files.push(file.to_string());
            }
        }
        Ok(())
    })
}

/// The chunks worker `worker` of `workers` decodes, in file order: the one
/// assignment both the workers and the WAL references (which list each
/// shard's chunks for recovery) follow.
fn chunks_of_worker(
    chunks: &[crate::ingest::mcap::ChunkRef],
    worker: usize,
    workers: usize,
) -> impl Iterator<Item = &crate::ingest::mcap::ChunkRef> {
    chunks.iter().skip(worker).step_by(workers.max(1))
}

/// What a chunk worker sends: decoded rows, its end, or why it stopped.
enum WorkerMessage {
    /// Rows decoded by worker `.0`.
    Batch(usize, TopicBatch),
    Done,
    Failed(DbError),
}

/// One chunk worker: decodes every `workers`-th chunk of the mapped file
/// (starting at `worker`) and sends the batches, then `Done`; stops at the
/// first error (sent as `Failed`, a panic included) or when the session stops listening.
fn decode_chunks(
    map: &[u8],
    reader: &ReaderOptions,
    channels: Channels,
    (worker, workers): (usize, usize),
    progress: Option<CopyProgressCounter>,
    tx: &tokio::sync::mpsc::Sender<WorkerMessage>,
) {
    let send = |b: TopicBatch| tx.blocking_send(WorkerMessage::Batch(worker, b)).is_ok();
    let run = || -> Result<bool, McapError> {
        let Some(indexed) = IndexedFile::open(map, reader)? else {
            return Err(McapError::Conflict {
                at: crate::ingest::mcap::Location::File(0),
                detail: "the file's summary changed while it was read".to_string(),
            });
        };
        let mut decoder = Decoder::new(channels);
        decoder.cut_batches_at(BATCH_ROWS, BATCH_BYTES);
        let mut buffer = ChunkBuffer::new();
        for chunk in chunks_of_worker(&indexed.chunks, worker, workers) {
            for record in indexed.chunk_records(chunk, &mut buffer)? {
                decoder.record(&record?)?;
            }
            if let Some(p) = &progress {
                p.add_bytes(chunk.length);
            }
            let batches = decoder.take_batches_over(BATCH_ROWS, BATCH_BYTES);
            if !batches.into_iter().all(send) {
                return Ok(false);
            }
        }
        if !decoder.take_batches().into_iter().all(send) {
            return Ok(false);
        }
        Ok(true)
    };
    let message = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(true)) => WorkerMessage::Done,
        Ok(Ok(false)) => return,
        Ok(Err(e)) => WorkerMessage::Failed(e.into()),
        Err(_) => WorkerMessage::Failed(DbError::internal(format!("MCAP decoding worker {worker} panicked"))),
    };
    let _ = tx.blocking_send(message);
}
