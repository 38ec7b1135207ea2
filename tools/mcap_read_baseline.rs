//! The ceiling issue 8 measures MCAP ingest against: the `mcap` crate's
//! `MessageStream` iterating every message of the given files (decompressing
//! chunks and copying each message, decoding nothing), on 1 or N threads
//! (files shared out among the threads, each file read into memory before
//! the clock starts, as the page cache serves Brewric's reads).
//!
//! With `--brewric-decode`, the same files go through Brewric's own reader
//! and decoder instead (chunks walked without copying messages, every message
//! decoded into column batches that are then dropped): the ingest's cost
//! before storage, to tell decoding from writing. With `--brewric-walk`,
//! Brewric's reader only walks the records (chunks decompressed and
//! CRC-checked, messages decoded not at all): the part of the ingest that
//! is the same work as the crate's. With `--brewric-decode-keep`, decoded
//! as `--brewric-decode` but every batch is kept until the run ends, as a
//! server keeps the rows it ingests: their memory is touched for the first
//! time (page faults, the kernel zeroing pages) instead of reused; the JSON
//! line adds `kept_bytes`, the batches' size, and `--kept-columns` prints
//! to stderr the 30 columns holding most of them (bytes, `table.column`,
//! `(once)` where the decoder kept one value for a whole batch).
//!
//! ```text
//! cargo run --release --example mcap_read_baseline -- [--threads N] [--runs 3] [--brewric-decode | --brewric-decode-keep [--kept-columns] | --brewric-walk] FILE...
//! ```
//! Prints one JSON line: threads, bytes (file bytes), messages, seconds
//! (median of the runs), mb_per_s, messages_per_s.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

fn main() {
    let mut threads = 1usize;
    let mut runs = 3usize;
    let mut paths = Vec::new();
    let mut mode = Mode::Crate;
    let mut kept_columns = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = args.next().and_then(|v| v.parse().ok()).expect("--threads N"),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--brewric-decode" => mode = Mode::BrewricDecode,
            "--brewric-walk" => mode = Mode::BrewricWalk,
            "--brewric-decode-keep" => mode = Mode::BrewricDecodeKeep,
            "--kept-columns" => kept_columns = true,
            _ => paths.push(a),
        }
    }
    assert!(!paths.is_empty(), "usage: mcap_read_baseline [--threads N] [--runs R] FILE...");
    if !matches!(mode, Mode::Crate) {
        keep_freed_memory();
    }
    let files: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).expect("read file")).collect();
    let bytes: usize = files.iter().map(Vec::len).sum();
    let mut times = Vec::new();
    let mut messages = 0usize;
    let mut kept_bytes = 0usize;
    for run in 0..runs.max(1) {
        let kept = std::sync::Mutex::new(Vec::new());
        let next = AtomicUsize::new(0);
        let count = AtomicUsize::new(0);
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads.max(1) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let n = match mode {
                        Mode::BrewricDecode => read_with_brewric(file, true, None),
                        Mode::BrewricDecodeKeep => read_with_brewric(file, true, Some(&kept)),
                        Mode::BrewricWalk => read_with_brewric(file, false, None),
                        Mode::Crate => mcap::MessageStream::new(file)
                            .expect("mcap stream")
                            .map(|m| m.expect("message").data.len())
                            .filter(|&len| len > 0)
                            .count(),
                    };
                    count.fetch_add(n, Ordering::Relaxed);
                });
            }
        });
        times.push(start.elapsed().as_secs_f64());
        messages = count.into_inner();
        let kept = kept.into_inner().unwrap_or_default();
        if kept_columns && run + 1 == runs.max(1) {
            print_kept_columns(&kept);
        }
        kept_bytes = kept
            .iter()
            .flat_map(|b: &brewric::ingest::mcap::TopicBatch| &b.tables)
            .flat_map(|t| &t.columns)
            .map(|c| c.byte_size())
            .sum();
        // The next run must touch fresh memory too, as a server's next rows do.
        drop(kept);
        // SAFETY: malloc_trim takes an integer and only returns free memory to the kernel.
        unsafe {
            libc::malloc_trim(0);
        }
    }
    times.sort_by(f64::total_cmp);
    let secs = times[times.len() / 2];
    let kept = match mode {
        Mode::BrewricDecodeKeep => format!(", \"kept_bytes\": {kept_bytes}"),
        _ => String::new(),
    };
    println!(
        "{{\"threads\": {threads}, \"bytes\": {bytes}, \"messages\": {messages}, \"seconds\": {secs:.4}, \"mb_per_s\": {:.1}, \"messages_per_s\": {:.0}{kept}}}",
        bytes as f64 / secs / 1e6,
        messages as f64 / secs
    );
}

/// The kept batches' bytes by table and column, largest first, to stderr.
fn print_kept_columns(kept: &[brewric::ingest::mcap::TopicBatch]) {
    let mut by_column: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for batch in kept {
        for table in &batch.tables {
            let layout = &batch.plan.layout.tables[table.table];
            for (c, column) in table.columns.iter().enumerate() {
                let name = layout.columns.get(c).map_or("?", |l| l.name.as_str());
                let once = if table.repeated.get(c) == Some(&true) { " (once)" } else { "" };
                *by_column.entry(format!("{}.{name}{once}", layout.name)).or_default() += column.byte_size();
            }
        }
    }
    let mut largest: Vec<(String, usize)> = by_column.into_iter().collect();
    largest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (name, bytes) in largest.iter().take(30) {
        eprintln!("{bytes:>12} {name}");
    }
}

/// glibc hands every batch-sized buffer back to the kernel when it is freed,
/// so each of Brewric's batches would fault in fresh pages; the server's
/// allocator keeps freed memory for a second. Told to keep it too, this
/// measures decoding into memory already mapped: the difference to the
/// server's load is storage and the first touches of the rows it keeps.
fn keep_freed_memory() {
    // SAFETY: mallopt takes integers and runs before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

#[derive(Clone, Copy)]
enum Mode {
    Crate,
    BrewricDecode,
    BrewricDecodeKeep,
    BrewricWalk,
}

/// Every message of `file` read by Brewric's chunk reader and, when
/// `decode`, decoded, the batches put in `keep` when given (else dropped);
/// returns the number of messages.
fn read_with_brewric(
    file: &[u8],
    decode: bool,
    keep: Option<&std::sync::Mutex<Vec<brewric::ingest::mcap::TopicBatch>>>,
) -> usize {
    use brewric::ingest::mcap::{Channels, ChunkBuffer, DecodeOptions, Decoder, IndexedFile, ReaderOptions};
    let reader = ReaderOptions::default();
    let indexed = IndexedFile::open(file, &reader).expect("open").expect("a summary");
    // The server's threshold: frames above it stay in the kept recording, not in columns.
    let threshold = brewric::storage::frames::FRAME_THRESHOLD;
    let options = DecodeOptions { recording: "bench".into(), blob_threshold: Some(threshold) };
    let channels = Channels::from_indexed(&indexed, options).expect("channels");
    let mut buffer = ChunkBuffer::new();
    let mut decoder = Decoder::new(channels);
    decoder.cut_batches_at(8192, 8 << 20);
    let mut messages = 0;
    for chunk in &indexed.chunks {
        for record in indexed.chunk_records(chunk, &mut buffer).expect("chunk") {
            let record = record.expect("record");
            if !decode {
                messages += usize::from(matches!(record.record, brewric::ingest::mcap::Record::Message(_)));
                continue;
            }
            decoder.record(&record).expect("decode");
        }
        for batch in decoder.take_batches_over(8192, 8 << 20) {
            messages += batch.messages;
            keep_batch(keep, batch);
        }
    }
    for batch in decoder.take_batches() {
        messages += batch.messages;
        keep_batch(keep, batch);
    }
    messages
}

fn keep_batch(keep: Option<&std::sync::Mutex<Vec<brewric::ingest::mcap::TopicBatch>>>, batch: brewric::ingest::mcap::TopicBatch) {
    if let Some(kept) = keep {
        kept.lock().expect("kept batches").push(batch);
    }
}
