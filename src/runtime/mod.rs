//! Thread-per-core runtime: one pinned OS thread per shard, each with its own
//! current-thread tokio runtime and io_uring ring. Shards share nothing
//! mutable on the data path: each owns its `ShardStorage`, and other shards
//! reach it only through its bounded mailbox (`ShardHandle::run`).
//! Must not: parse SQL or speak the wire protocol (sessions are spawned on a
//! shard but implemented in `wire`).

pub mod shard;
pub mod storage_io;
pub mod uring;

pub use shard::{PreparedOp, ShardContext, ShardHandle, ShardJob};
