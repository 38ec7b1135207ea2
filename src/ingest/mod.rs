//! Bulk ingest: turning client byte streams into column batches. Today:
//! `COPY … FROM STDIN` in text, CSV and binary (`copy.rs`), each field parsed
//! straight into its column (`fields.rs`); InfluxDB line protocol into
//! per-measurement column batches (`line_protocol`); MCAP recordings and their
//! ROS 2 (CDR) and JSON messages into per-topic column batches (`mcap`).
//! Must not: write to shards or the WAL (the session does).

pub mod copy;
pub mod fields;
pub mod line_protocol;
pub mod mcap;
