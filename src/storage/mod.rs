//! Table data owned by one shard. Today: columnar memtables. The WAL
//! (durability issue) appends before `Memtable::append`; compressed segments
//! (storage issue) take over sealed blocks behind it.
//! Must not: be shared between shards or locked; only its shard thread touches it.

pub mod codec;
pub mod memtable;

pub use memtable::{Memtable, ShardStorage};
