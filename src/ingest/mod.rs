//! Bulk ingest: turning client byte streams into column batches. Today:
//! `COPY … FROM STDIN` in text, CSV and binary (`copy.rs`), each field parsed
//! straight into its column (`fields.rs`); line protocol and
//! MCAP come with their issues.
//! Must not: write to shards or the WAL (the session does).

pub mod copy;
pub mod fields;
