//! Table data owned by one shard: rows arrive in columnar memtables
//! (`memtable`), are flushed at checkpoints into immutable compressed
//! segment files (`segment`: the format; `flush`: sorting and writing;
//! `files`: handles and the checkpoint manifest), and are read back by
//! scans (`scan`) through a bounded block cache (`cache`). `table` holds a
//! shard's per-table state; `checkpoint` runs the checkpoint protocol
//! across shards. `codec` holds the per-block value codecs. `last_rows`
//! keeps the latest row of each series for lastpoint queries. `recordings`
//! keeps MCAP recordings whose rows the WAL logs by reference; `frames`
//! stores their camera frames as references into them. `background` runs
//! flush and compaction encoding on lower-priority threads.
//! Must not: be shared between shards or locked; only its shard thread
//! touches it — except `last_rows`, the one index all shards feed and
//! queries read directly (behind its own locks).

pub mod background;
pub mod cache;
pub mod checkpoint;
pub mod codec;
pub mod compaction;
pub mod files;
pub mod flush;
pub mod frames;
pub mod last_rows;
pub mod memtable;
pub mod recordings;
pub mod retention;
pub mod routing;
pub mod scan;
pub mod segment;
pub mod table;

pub use memtable::Memtable;
pub use table::ShardStorage;
