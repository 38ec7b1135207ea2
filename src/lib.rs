//! Brewric: a time-series SQL database speaking the PostgreSQL wire protocol.
//!
//! Data flow: a client connection is accepted and handed to one shard
//! (`runtime`), whose session (`wire`) parses and binds SQL (`sql`), builds
//! vectorized operators (`exec`) that send scan fragments to every shard
//! holding table data (`storage`), and merges their partial results.
//! Line protocol also arrives over HTTP (`http`) and ILP/TCP (`wire::ilp`).
//! See ARCHITECTURE.md for the map.

pub mod auth;
pub mod catalog;
pub mod config;
pub mod error;
pub mod exec;
pub mod failpoint;
pub mod http;
pub mod ingest;
pub mod runtime;
pub mod server;
pub mod sql;
pub mod storage;
pub mod types;
pub mod wal;
pub mod wire;

/// What `SELECT version()` returns.
pub const VERSION_STRING: &str = concat!(
    "PostgreSQL 15.0 (Brewric ",
    env!("CARGO_PKG_VERSION"),
    ") on x86_64-pc-linux-gnu"
);
/// The server_version ParameterStatus: PostgreSQL-style number first (psql picks its catalog queries by it).
pub const SERVER_VERSION: &str = concat!("15.0 (Brewric ", env!("CARGO_PKG_VERSION"), ")");
