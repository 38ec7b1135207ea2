//! One shard: its thread, runtime, io_uring ring, storage and mailbox.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::catalog::TableId;
use crate::error::{DbError, DbResult};
use crate::exec::vector::Batch;
use crate::runtime::storage_io::StorageIo;
use crate::runtime::uring::Uring;
use crate::storage::last_rows::LastRowRegistry;
use crate::storage::ShardStorage;
use crate::types::DataType;
use crate::wal::Wal;

/// Stack of a shard thread. Binding and evaluating a deeply nested expression
/// (sqlparser allows 50 levels) recurses through large frames, in debug builds
/// especially; the stack is reserved, not committed, so a generous size is free.
pub const SHARD_STACK_BYTES: usize = 256 << 20;

/// Mailbox depth per shard: a full mailbox makes senders wait (back-pressure).
pub const MAILBOX_DEPTH: usize = 1024;

/// Work sent to a shard: runs on the shard's thread with its local state.
pub type ShardJob = Box<dyn FnOnce(&Rc<ShardContext>) + Send>;

/// One write a prepared transaction applies to a shard's storage when it
/// commits.
#[derive(Debug, Clone)]
pub enum PreparedOp {
    Rows(TableId, Vec<DataType>, Batch),
    /// Rows whose repeated values are kept once (an MCAP batch).
    CompactRows(TableId, Vec<DataType>, crate::storage::memtable::CompactBatch),
    /// Every row of the table (a DELETE or UPDATE rewrite, followed by the
    /// table's new rows).
    Truncate(TableId),
    /// The table's rows whose time (column) lies in the ranges (a DELETE or
    /// UPDATE of whole time partitions, followed by their new rows).
    DropRanges(TableId, usize, Vec<(i64, i64)>),
}

/// What a shard thread owns. Only that thread ever sees it (`Rc`, `RefCell`).
pub struct ShardContext {
    pub id: usize,
    pub storage: RefCell<ShardStorage>,
    /// The shard's io_uring ring until the WAL takes it (`start_wal`).
    /// `None` where the kernel refuses io_uring (seccomp); see the log line.
    pub ring: RefCell<Option<Uring>>,
    /// The shard's write-ahead log, once recovery has finished.
    pub wal: RefCell<Option<Rc<Wal>>>,
    /// Writes of multi-shard transactions that are durable here but not yet
    /// committed: applied to `storage` in order by the commit, dropped by an
    /// abort.
    pub prepared: RefCell<HashMap<u64, Vec<PreparedOp>>>,
    /// Transactions with records in this shard's WAL that are not yet
    /// published or aborted, with the LSN of their first record here: a
    /// checkpoint must keep replaying them (see `storage::checkpoint`).
    pub in_flight: RefCell<HashMap<u64, u64>>,
    /// The ring for segment files (reads and writes from many tasks at once).
    pub io: StorageIo,
    /// Referenced camera frames read back from kept recordings.
    pub frames: crate::storage::frames::FrameReader,
}

impl ShardContext {
    pub fn storage_io(&self) -> &StorageIo {
        &self.io
    }

    /// Notes that `txn` is about to log its first record here.
    pub fn begin_in_flight(&self, txn: u64, wal: &Wal) {
        self.in_flight
            .borrow_mut()
            .entry(txn)
            .or_insert_with(|| wal.next_lsn());
    }

    /// `txn`'s rows here are published (or dropped): nothing to replay any more.
    pub fn end_in_flight(&self, txn: u64) {
        self.in_flight.borrow_mut().remove(&txn);
    }

    /// The WAL, or the error a write gets before recovery finished.
    pub fn wal(&self) -> Result<Rc<Wal>, crate::error::DbError> {
        self.wal.borrow().clone().ok_or_else(|| {
            DbError::new(
                crate::error::sqlstate::ADMIN_SHUTDOWN,
                "the shard's WAL is not running",
            )
        })
    }
}

enum ShardMessage {
    Job(ShardJob),
    Connection(std::net::TcpStream),
}

/// The sending side of a shard's mailbox; cheap to clone, usable from any thread.
#[derive(Clone)]
pub struct ShardHandle {
    pub id: usize,
    tx: mpsc::Sender<ShardMessage>,
    /// Bytes of rows the shard holds in memtables, frozen ones included
    /// (published by its storage after each change): what the memtable
    /// limit of writes reads without a round trip to the shard.
    pub memtable_bytes: Arc<std::sync::atomic::AtomicUsize>,
}

/// Starts a session task for an accepted socket, on the shard that owns it.
pub type SessionSpawner =
    std::sync::Arc<dyn Fn(tokio::net::TcpStream, Rc<ShardContext>) + Send + Sync>;

impl ShardHandle {
    /// Runs `job` on the shard and returns its result.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&Rc<ShardContext>) -> T + Send + 'static,
    ) -> DbResult<T> {
        let (tx, rx) = oneshot::channel();
        self.send_job(Box::new(move |ctx| {
            let _ = tx.send(job(ctx));
        }))
        .await?;
        rx.await
            .map_err(|_| DbError::internal("shard dropped a request"))
    }

    /// Runs the future `job` makes on the shard (it may await the shard's WAL) and returns its output.
    pub async fn run_local<T, Fut>(
        &self,
        job: impl FnOnce(Rc<ShardContext>) -> Fut + Send + 'static,
    ) -> DbResult<T>
    where
        T: Send + 'static,
        Fut: Future<Output = T> + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.send_job(Box::new(move |ctx| {
            let fut = job(ctx.clone());
            tokio::task::spawn_local(async move {
                let _ = tx.send(fut.await);
            });
        }))
        .await?;
        rx.await
            .map_err(|_| DbError::internal("shard dropped a request"))
    }

    /// Queues `job` without waiting for it.
    pub async fn send_job(&self, job: ShardJob) -> DbResult<()> {
        self.tx.send(ShardMessage::Job(job)).await.map_err(|_| {
            DbError::new(
                crate::error::sqlstate::ADMIN_SHUTDOWN,
                "shard is shutting down",
            )
        })
    }

    /// Sends a job from a thread outside any runtime (main), waiting for mailbox room.
    pub fn send_job_blocking(&self, job: ShardJob) -> bool {
        self.tx.blocking_send(ShardMessage::Job(job)).is_ok()
    }

    /// Hands an accepted connection to this shard.
    pub fn send_connection(&self, stream: std::net::TcpStream) -> bool {
        self.tx
            .blocking_send(ShardMessage::Connection(stream))
            .is_ok()
    }

    pub async fn send_connection_async(&self, stream: std::net::TcpStream) -> bool {
        self.tx.send(ShardMessage::Connection(stream)).await.is_ok()
    }
}

/// Starts `count` shard threads; each runs until its mailbox closes. Every
/// shard's storage feeds `last_rows` (the server's, which queries read).
pub fn start_shards(
    count: usize,
    spawn_session: SessionSpawner,
    last_rows: Arc<LastRowRegistry>,
) -> std::io::Result<Vec<ShardHandle>> {
    let cores = available_cores();
    let _ = PROCESS_CORES.set(cores.clone());
    let mut handles = Vec::with_capacity(count);
    for id in 0..count {
        let (tx, rx) = mpsc::channel(MAILBOX_DEPTH);
        let spawner = spawn_session.clone();
        let last_rows = last_rows.clone();
        let core = cores.get(id % cores.len().max(1)).copied();
        let memtable_bytes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let gauge = memtable_bytes.clone();
        std::thread::Builder::new()
            .name(format!("shard-{id}"))
            .stack_size(SHARD_STACK_BYTES)
            .spawn(move || run_shard(id, core, rx, spawner, last_rows, gauge))?;
        handles.push(ShardHandle { id, tx, memtable_bytes });
    }
    Ok(handles)
}

fn run_shard(
    id: usize,
    core: Option<usize>,
    mut rx: mpsc::Receiver<ShardMessage>,
    spawner: SessionSpawner,
    last_rows: Arc<LastRowRegistry>,
    memtable_bytes: Arc<std::sync::atomic::AtomicUsize>,
) {
    if let Some(core) = core {
        pin_current_thread(core);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("brewricd: shard {id}: cannot build runtime: {e}");
            return;
        }
    };
    // The ring registers its eventfd with this runtime's reactor: create it inside.
    let ring = match runtime.block_on(async { Uring::new(256) }) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("brewricd: shard {id}: io_uring unavailable ({e}); I/O falls back to blocking calls");
            None
        }
    };
    let io = runtime.block_on(async { StorageIo::new(256) });
    let ctx = Rc::new(ShardContext {
        id,
        storage: RefCell::new(ShardStorage::feeding(last_rows).publishing_memory(memtable_bytes)),
        ring: RefCell::new(ring),
        wal: RefCell::new(None),
        prepared: RefCell::new(HashMap::new()),
        in_flight: RefCell::new(HashMap::new()),
        io,
        frames: Default::default(),
    });
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        while let Some(msg) = rx.recv().await {
            match msg {
                ShardMessage::Job(job) => job(&ctx),
                ShardMessage::Connection(stream) => {
                    let _ = stream.set_nonblocking(true);
                    let _ = stream.set_nodelay(true);
                    match tokio::net::TcpStream::from_std(stream) {
                        Ok(s) => spawner(s, ctx.clone()),
                        Err(e) => eprintln!("brewricd: shard {id}: cannot adopt socket: {e}"),
                    }
                }
            }
        }
    });
}

fn available_cores() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// The cores the process may run on, noted before shard threads pin
/// themselves: a thread a shard starts inherits the shard's one core.
static PROCESS_CORES: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();

/// Lets the calling thread run on every core the process may use again.
/// For threads started from a shard thread that must not share the shard's
/// core alone: MCAP decoding workers and the storage background threads.
pub fn unpin_current_thread() {
    let Some(cores) = PROCESS_CORES.get().filter(|c| !c.is_empty()) else {
        return;
    };
    // SAFETY: cpu_set_t is plain data; the set only widens where this thread runs.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cores {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn pin_current_thread(core: usize) {
    // SAFETY: as above; pinning only restricts where this thread runs.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Cores the process may run on as noted when the shards started (the
/// calling thread's own when they have not).
pub fn process_core_count() -> usize {
    PROCESS_CORES.get().map_or_else(core_count, |c| c.len().max(1))
}

/// Number of cores this process may run on (the default shard count).
pub fn core_count() -> usize {
    available_cores().len().max(1)
}
