//! Bulk ingest: turning client byte streams into column batches. Today:
//! `COPY … FROM STDIN` in text, CSV and binary (`copy.rs`), each field parsed
//! straight into its column (`fields.rs`); InfluxDB line protocol into
//! per-measurement column batches (`line_protocol`); MCAP comes with its issue.
//! Must not: write to shards or the WAL (the session does).

pub mod copy;
pub mod fields;
pub mod line_protocol;
