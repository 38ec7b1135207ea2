//! The per-shard write-ahead log. Writers queue framed records; one writer
//! task per shard takes everything queued, writes it with one linked
//! write + fdatasync through the shard's io_uring ring (group commit), and
//! then completes every waiter of that group. A full queue makes appenders
//! wait (back-pressure). After a failed write or sync every WAL of the
//! server refuses all further writes until restart ([`WalFailure`]):
//! PostgreSQL's lesson is that a failed fsync cannot be retried (the kernel
//! may have dropped the dirty pages), so the only safe answers are
//! re-writing from a known state or stopping. All of them, not the one shard:
//! a failed sync may still have put a commit on disk, and until a restart
//! tells, no other shard may acknowledge a write that contradicts it (the
//! same unique key again, a table dropped by the failed statement's undo).
//! Must not: decide visibility (the caller publishes rows after durability)
//! or delete segments on its own (only `remove_segments_below`, called by the
//! checkpoint once its manifest is durable; see `recovery`).

pub mod codec;
pub mod record;
pub mod recovery;

use std::cell::{Cell, RefCell};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::{oneshot, Notify};

use crate::error::{DbError, DbResult};
use crate::runtime::uring::Uring;
use record::{
    encode_record, encode_record_with, encode_segment_header, RecordType, SegmentHeader,
    SEGMENT_HEADER_BYTES,
};

/// A segment is closed and a new one started once it holds this much.
pub const SEGMENT_TARGET_BYTES: u64 = 16 << 20;
/// Queued-but-unwritten bytes beyond which appenders wait.
pub const QUEUE_LIMIT_BYTES: usize = 64 << 20;
/// A written group's buffer is kept for the next one up to this capacity.
const SPARE_LIMIT_BYTES: usize = QUEUE_LIMIT_BYTES * 2;

/// How a group is made durable. `Fdatasync` (the default): a write, then
/// fdatasync, linked in one io_uring submission. `ODsync`: segments opened
/// with O_DSYNC, so the write alone is durable. Chosen by BREWRIC_WAL_SYNC
/// (`fdatasync` | `odsync`) so that both can be measured
/// (tools/bench_durability.py); the default is the one that measured faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMethod {
    Fdatasync,
    ODsync,
}

impl SyncMethod {
    pub fn from_env() -> SyncMethod {
        match std::env::var("BREWRIC_WAL_SYNC").as_deref() {
            Ok("odsync") => SyncMethod::ODsync,
            _ => SyncMethod::Fdatasync,
        }
    }
}

/// SQLSTATE for a write refused because the disk is full / any other I/O error.
pub const DISK_FULL: &str = "53100";
pub const IO_ERROR: &str = "58030";

pub fn io_error(what: &str, e: &io::Error) -> DbError {
    let code = match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => DISK_FULL,
        _ => IO_ERROR,
    };
    DbError::new(code, format!("could not {what}: {e}"))
}

/// The directory of one shard's WAL segments.
pub fn shard_dir(data_dir: &Path, shard: u32) -> PathBuf {
    data_dir.join("wal").join(format!("shard-{shard:03}"))
}

pub fn segment_path(dir: &Path, segment: u64) -> PathBuf {
    dir.join(format!("{segment:016x}.wal"))
}

/// fsync a directory, so that a file created or renamed in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[derive(Default)]
struct Queue {
    bytes: Vec<u8>,
    /// The buffer the writer last wrote, emptied, for the next group: a
    /// fresh one would grow (and fault in pages) anew for every group.
    spare: Vec<u8>,
    waiters: Vec<oneshot::Sender<DbResult<()>>>,
}

/// How the writer reaches the disk.
enum Io {
    Uring(Box<Uring>),
    /// Where the kernel refuses io_uring: pwrite + fdatasync on the blocking pool.
    Blocking,
}

struct Segment {
    file: Arc<File>,
    method: SyncMethod,
    dir: PathBuf,
    shard: u32,
    number: u64,
    offset: u64,
}

impl Segment {
    /// Creates segment `number` with its header, durably (file and directory).
    fn create(dir: &Path, shard: u32, number: u64, method: SyncMethod) -> io::Result<Segment> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(dir)?;
        let path = segment_path(dir, number);
        let flags = if method == SyncMethod::ODsync {
            libc::O_DSYNC
        } else {
            0
        };
        let file = OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(&path)?;
        // The header first: a crash before it leaves a file shorter than a
        // header, which recovery knows for a segment never written.
        file.write_all_at(
            &encode_segment_header(&SegmentHeader {
                shard,
                segment: number,
            }),
            0,
        )?;
        // Preallocate the segment (zeros read back as "end of log"), so that a
        // group's fdatasync need not also persist a new file size each time.
        // SAFETY: fallocate on a descriptor we own; failure is only a lost optimisation.
        unsafe {
            libc::fallocate(file.as_raw_fd(), 0, 0, SEGMENT_TARGET_BYTES as libc::off_t);
        }
        file.sync_all()?;
        sync_dir(dir)?;
        Ok(Segment {
            file: Arc::new(file),
            method,
            dir: dir.to_path_buf(),
            shard,
            number,
            offset: SEGMENT_HEADER_BYTES as u64,
        })
    }
}

/// The first failed write or sync of any WAL of the server, shared by all
/// of them: once set, every WAL refuses appends with it until restart.
#[derive(Debug, Default)]
pub struct WalFailure(std::sync::OnceLock<DbError>);

impl WalFailure {
    pub fn get(&self) -> Option<&DbError> {
        self.0.get()
    }
    fn set(&self, e: DbError) {
        let _ = self.0.set(e);
    }
}

/// One shard's WAL: the queue shared by appenders and the writer task.
pub struct Wal {
    queue: RefCell<Queue>,
    wake: Notify,
    drained: Notify,
    next_lsn: Cell<u64>,
    /// Set after a failed write or sync of any of the server's WALs: every
    /// later append is refused with it.
    failure: Arc<WalFailure>,
    /// This shard's segment files, oldest first: number and largest LSN written
    /// to it (None: no records yet). The last one is being written.
    segments: RefCell<Vec<(u64, Option<u64>)>>,
    dir: PathBuf,
    /// Set by a checkpoint: the next group starts a new segment, so that the
    /// current one can be deleted once it is behind the checkpoint.
    roll: Cell<bool>,
    /// Whether the segment being written holds a record besides GroupEnds
    /// (a segment [`roll_now`](Self::roll_now) began holds none: rolling it
    /// again would leave nothing behind).
    segment_has_records: Cell<bool>,
}

impl Wal {
    /// Starts the WAL of `shard` in `dir`, continuing after segment `last_segment`
    /// and LSN `next_lsn` (both from recovery), with its writer task on this thread.
    /// `existing` lists the segments recovery found (number, largest LSN).
    pub fn start(
        dir: &Path,
        shard: u32,
        existing: Vec<(u64, Option<u64>)>,
        next_lsn: u64,
        ring: Option<Uring>,
        failure: Arc<WalFailure>,
    ) -> io::Result<Rc<Wal>> {
        let number = existing.iter().map(|(n, _)| n + 1).max().unwrap_or(0);
        let segment = Segment::create(dir, shard, number, SyncMethod::from_env())?;
        let mut segments = existing;
        segments.push((number, None));
        let wal = Rc::new(Wal {
            queue: RefCell::new(Queue::default()),
            wake: Notify::new(),
            drained: Notify::new(),
            next_lsn: Cell::new(next_lsn),
            failure,
            segments: RefCell::new(segments),
            dir: dir.to_path_buf(),
            roll: Cell::new(false),
            segment_has_records: Cell::new(false),
        });
        let io = match ring {
            Some(r) => Io::Uring(Box::new(r)),
            None => Io::Blocking,
        };
        tokio::task::spawn_local(writer_task(wal.clone(), segment, io));
        Ok(wal)
    }

    /// Asks the writer to start a new segment with its next group.
    pub fn roll_segment(&self) {
        self.roll.set(true);
    }

    /// Makes a roll asked for by [`roll_segment`](Self::roll_segment) happen
    /// now when no write has made it yet: an idle shard's segment then stops
    /// being the one written, so a checkpoint can delete it (and the kept
    /// recordings only it names, `storage::recordings`) instead of keeping
    /// it until the shard writes again. Writes an empty group (its GroupEnd
    /// record alone) into the new segment; the receiver completes when that
    /// is durable. None when no roll is pending, the segment holds no
    /// record, or the WAL refuses writes.
    pub fn roll_now(&self) -> Option<oneshot::Receiver<DbResult<()>>> {
        if !self.roll.get() || !self.segment_has_records.get() || self.refuses_writes() {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        self.queue.borrow_mut().waiters.push(tx);
        self.wake.notify_one();
        Some(rx)
    }

    /// Whether a failed write or sync (of any WAL of the server) made this
    /// WAL refuse every append.
    pub fn refuses_writes(&self) -> bool {
        self.failure.get().is_some()
    }

    /// The LSN the next record will get.
    pub fn next_lsn(&self) -> u64 {
        self.next_lsn.get()
    }

    /// Deletes every finished segment whose records all lie below `bound`
    /// (the checkpoint protocol: call only once a manifest saying so is durable).
    /// Returns how many were deleted.
    pub fn remove_segments_below(&self, bound: u64) -> io::Result<usize> {
        let mut segments = self.segments.borrow_mut();
        let current = segments.last().map(|(n, _)| *n);
        let mut removed = 0;
        let mut keep = Vec::with_capacity(segments.len());
        for &(number, max) in segments.iter() {
            if Some(number) != current && max.is_none_or(|m| m < bound) {
                match std::fs::remove_file(segment_path(&self.dir, number)) {
                    Ok(()) => removed += 1,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            } else {
                keep.push((number, max));
            }
        }
        *segments = keep;
        if removed > 0 {
            sync_dir(&self.dir)?;
        }
        Ok(removed)
    }

    /// Queues one record; the receiver completes when it is durable (or failed).
    pub async fn append(
        &self,
        record_type: RecordType,
        flags: u8,
        payload: &[u8],
    ) -> oneshot::Receiver<DbResult<()>> {
        self.append_with(record_type, flags, |out| out.extend_from_slice(payload)).await
    }

    /// As `append`, with the payload written in place by `write_payload`.
    pub async fn append_with(
        &self,
        record_type: RecordType,
        flags: u8,
        write_payload: impl FnOnce(&mut Vec<u8>),
    ) -> oneshot::Receiver<DbResult<()>> {
        while self.queue.borrow().bytes.len() > QUEUE_LIMIT_BYTES && !self.refuses_writes()
        {
            self.drained.notified().await;
        }
        self.append_now_with(record_type, flags, write_payload)
    }

    /// Queues one record; the caller has waited for queue space.
    fn append_now_with(
        &self,
        record_type: RecordType,
        flags: u8,
        write_payload: impl FnOnce(&mut Vec<u8>),
    ) -> oneshot::Receiver<DbResult<()>> {
        let (tx, rx) = oneshot::channel();
        if let Some(e) = self.failure.get().cloned() {
            let _ = tx.send(Err(e));
            return rx;
        }
        let lsn = self.next_lsn.get();
        self.next_lsn.set(lsn + 1);
        let mut q = self.queue.borrow_mut();
        encode_record_with(record_type, flags, lsn, &mut q.bytes, write_payload);
        q.waiters.push(tx);
        drop(q);
        self.wake.notify_one();
        rx
    }
}

async fn writer_task(wal: Rc<Wal>, mut segment: Segment, mut io: Io) {
    loop {
        if wal.queue.borrow().waiters.is_empty() {
            wal.drained.notify_waiters();
            wal.wake.notified().await;
            continue;
        }
        let (mut bytes, waiters) = {
            let mut q = wal.queue.borrow_mut();
            let spare = std::mem::take(&mut q.spare);
            (std::mem::replace(&mut q.bytes, spare), std::mem::take(&mut q.waiters))
        };
        // Records queued before an earlier group failed are refused too: a
        // later group durable after a failed one would let a Commit record
        // stand without the records it commits (`Session::commit_write`
        // relies on this).
        let broken = wal.failure.get().cloned();
        let result = match broken {
            Some(e) => Err(e),
            None => {
                let lsn = wal.next_lsn.get();
                wal.next_lsn.set(lsn + 1);
                let has_records = !bytes.is_empty();
                encode_record(RecordType::GroupEnd, 0, lsn, &[0u8; 8], &mut bytes);
                let roll = wal.roll.replace(false);
                let mut result = write_group(&mut segment, &mut io, &bytes, roll).await;
                if result.is_ok() && crate::failpoint::error("wal-commit-sync-fails", || group_has_commit(&bytes)) {
                    result = Err(io_error("write and sync the WAL", &io::Error::other("failpoint wal-commit-sync-fails")));
                }
                match &result {
                    Ok(()) => {
                        let mut segs = wal.segments.borrow_mut();
                        let rolled = segs.last().map(|(n, _)| *n) != Some(segment.number);
                        if rolled {
                            segs.push((segment.number, None));
                        }
                        wal.segment_has_records.set(has_records || (!rolled && wal.segment_has_records.get()));
                        if let Some(last) = segs.last_mut() {
                            last.1 = Some(lsn);
                        }
                    }
                    Err(e) => {
                        eprintln!(
                            "brewricd: shard {} WAL: {} — every shard refuses further writes until restart",
                            segment.shard, e.message
                        );
                        wal.failure.set(e.clone());
                    }
                }
                result
            }
        };
        for w in waiters {
            let _ = w.send(result.clone());
        }
        if bytes.capacity() <= SPARE_LIMIT_BYTES {
            bytes.clear();
            wal.queue.borrow_mut().spare = bytes;
        }
        wal.drained.notify_waiters();
    }
}

/// Whether a group's bytes hold a Commit record (for the failpoint that fails
/// a Commit's sync after its bytes were written).
fn group_has_commit(bytes: &[u8]) -> bool {
    record::read_all(bytes).0.iter().any(|r| r.record_type == RecordType::Commit)
}

async fn write_group(segment: &mut Segment, io: &mut Io, bytes: &[u8], roll: bool) -> DbResult<()> {
    let full = segment.offset + bytes.len() as u64 > SEGMENT_TARGET_BYTES;
    if (full || roll) && segment.offset > SEGMENT_HEADER_BYTES as u64 {
        *segment = Segment::create(
            &segment.dir,
            segment.shard,
            segment.number + 1,
            segment.method,
        )
        .map_err(|e| io_error("create a WAL segment", &e))?;
    }
    let offset = segment.offset;
    match io {
        Io::Uring(ring) => {
            ring.write_and_sync(
                segment.file.as_raw_fd(),
                bytes,
                offset,
                segment.method == SyncMethod::Fdatasync,
            )
            .await
        }
        Io::Blocking => {
            let file = segment.file.clone();
            let data = bytes.to_vec();
            let sync = segment.method == SyncMethod::Fdatasync;
            tokio::task::spawn_blocking(move || {
                file.write_all_at(&data, offset)?;
                if sync {
                    file.sync_data()?;
                }
                Ok(())
            })
            .await
            .unwrap_or_else(|e| Err(io::Error::other(e.to_string())))
        }
    }
    .map_err(|e| io_error("write and sync the WAL", &e))?;
    segment.offset += bytes.len() as u64;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL whose disk is /dev/full: the write fails with ENOSPC.
    async fn wal_on_dev_full(io: Io) -> Rc<Wal> {
        wal_on_dev_full_at(io, 0, std::env::temp_dir(), Default::default())
    }

    /// As `wal_on_dev_full`, its current segment `offset` bytes in; a
    /// rolled segment would be a real file in `dir`.
    fn wal_on_dev_full_at(io: Io, offset: u64, dir: PathBuf, failure: Arc<WalFailure>) -> Rc<Wal> {
        let file = OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let segment = Segment {
            file: Arc::new(file),
            method: SyncMethod::Fdatasync,
            dir,
            shard: 0,
            number: 0,
            offset,
        };
        let wal = Rc::new(Wal {
            queue: RefCell::new(Queue::default()),
            wake: Notify::new(),
            drained: Notify::new(),
            next_lsn: Cell::new(0),
            failure,
            segments: RefCell::new(Vec::new()),
            dir: std::env::temp_dir(),
            roll: Cell::new(false),
            segment_has_records: Cell::new(false),
        });
        tokio::task::spawn_local(writer_task(wal.clone(), segment, io));
        wal
    }

    /// An empty data directory of this test process under the temp dir.
    fn scratch_data_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("brewric-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Runs `f` to completion on a current-thread runtime's LocalSet, as a shard does.
    fn on_a_local_runtime(f: impl std::future::Future<Output = ()>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&rt, f);
    }

    #[test]
    fn a_failed_write_is_refused_and_the_wal_takes_no_more() {
        on_a_local_runtime(async {
            let mut kinds = vec![Io::Blocking];
            if let Ok(ring) = Uring::new(8) {
                kinds.push(Io::Uring(Box::new(ring)));
            }
            for io in kinds {
                let wal = wal_on_dev_full(io).await;
                let first = wal
                    .append(RecordType::Commit, 0, &1u64.to_le_bytes())
                    .await
                    .await
                    .unwrap();
                let e = first.unwrap_err();
                assert_eq!(e.code, DISK_FULL, "{e:?}");
                // No retry after a failed write/sync: every later append is refused at once.
                let second = wal
                    .append(RecordType::Commit, 0, &2u64.to_le_bytes())
                    .await
                    .await
                    .unwrap();
                assert_eq!(second.unwrap_err().code, DISK_FULL);
            }
        });
    }

    #[test]
    fn records_queued_before_a_failed_group_are_refused_even_where_a_later_write_would_succeed() {
        on_a_local_runtime(async {
            let dir = std::env::temp_dir().join(format!("brewric-wal-refuse-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            // The first group goes to /dev/full; the second would roll to a
            // new segment file in `dir`, where its write would succeed.
            let wal = wal_on_dev_full_at(Io::Blocking, 1 << 20, dir.clone(), Default::default());
            let first = wal.append(RecordType::Commit, 0, &1u64.to_le_bytes()).await;
            tokio::task::yield_now().await;
            assert!(wal.queue.borrow().waiters.is_empty(), "the writer took the first group");
            assert!(!wal.refuses_writes(), "the first group is still being written");
            wal.roll_segment();
            let second = wal.append(RecordType::Commit, 0, &2u64.to_le_bytes()).await;
            assert_eq!(first.await.unwrap().unwrap_err().code, DISK_FULL);
            assert_eq!(second.await.unwrap().unwrap_err().code, DISK_FULL);
            let _ = std::fs::remove_dir_all(&dir);
        });
    }

    /// A checkpoint on a shard that writes nothing after it: `roll_now`
    /// moves the WAL to a new segment at once (an empty group), so the old
    /// one is deleted behind the checkpoint and recovery reads what is left.
    #[test]
    fn an_idle_wal_rolls_when_asked_so_its_segment_can_go() {
        on_a_local_runtime(async {
            let data_dir = scratch_data_dir("wal-roll-now");
            let dir = shard_dir(&data_dir, 0);
            let wal = Wal::start(&dir, 0, Vec::new(), 0, None, Default::default()).unwrap();
            wal.roll_segment();
            assert!(wal.roll_now().is_none(), "a segment without records has nothing to leave behind");
            let written = wal.append(RecordType::Commit, 0, &7u64.to_le_bytes()).await;
            written.await.unwrap().unwrap();
            assert!(wal.roll_now().is_none(), "no roll asked for");
            // The checkpoint: a roll asked for, then no write.
            wal.roll_segment();
            let bound = wal.next_lsn();
            assert_eq!(wal.remove_segments_below(bound).unwrap(), 0, "the segment being written stays");
            wal.roll_now().expect("a roll pending over a segment with records").await.unwrap().unwrap();
            assert!(wal.roll_now().is_none(), "rolled already");
            wal.roll_segment();
            assert!(wal.roll_now().is_none(), "the new segment holds the empty group only: nothing to leave behind");
            assert_eq!(wal.remove_segments_below(bound).unwrap(), 1, "the old segment is behind the checkpoint");
            let logs = recovery::read_logs(&data_dir).unwrap();
            assert_eq!(logs.len(), 1);
            assert_eq!(logs[0].segments.len(), 1, "{:?}", logs[0].segments);
            assert!(logs[0].records.iter().all(|r| r.lsn >= bound), "only the roll's group is left");
            assert!(logs[0].next_lsn > bound);
            // Later writes go on in the new segment.
            let later = wal.append(RecordType::Commit, 0, &8u64.to_le_bytes()).await;
            later.await.unwrap().unwrap();
            assert_eq!(recovery::read_logs(&data_dir).unwrap()[0].records.iter().filter(|r| r.record_type == RecordType::Commit).count(), 1);
            let _ = std::fs::remove_dir_all(&data_dir);
        });
    }

    /// A crash while a segment is created leaves a file without its header
    /// (empty, or sized and all zeros): recovery removes it when it is the
    /// last, and the WAL starts again in a segment of the same number.
    #[test]
    fn a_segment_created_as_the_server_died_is_removed_and_made_again() {
        on_a_local_runtime(async {
            for unwritten in [vec![], vec![0u8; 1 << 20]] {
                let data_dir = scratch_data_dir(&format!("wal-unwritten-{}", unwritten.len()));
                let dir = shard_dir(&data_dir, 0);
                let wal = Wal::start(&dir, 0, Vec::new(), 0, None, Default::default()).unwrap();
                wal.append(RecordType::Commit, 0, &7u64.to_le_bytes()).await.await.unwrap().unwrap();
                std::fs::write(segment_path(&dir, 1), &unwritten).unwrap();
                let logs = recovery::read_logs(&data_dir).unwrap();
                assert_eq!(logs[0].segments.len(), 1, "{:?}", logs[0].segments);
                assert!(!segment_path(&dir, 1).exists(), "the unwritten segment is removed");
                let restarted = Wal::start(&dir, 0, logs[0].segments.clone(), logs[0].next_lsn, None, Default::default()).unwrap();
                restarted.append(RecordType::Commit, 0, &8u64.to_le_bytes()).await.await.unwrap().unwrap();
                let commits = recovery::read_logs(&data_dir).unwrap()[0].records.iter().filter(|r| r.record_type == RecordType::Commit).count();
                assert_eq!(commits, 2);
                let _ = std::fs::remove_dir_all(&data_dir);
            }
        });
    }

    /// A failed write on one shard's WAL stops every WAL of the server: a
    /// sync that failed may have left a commit on disk, and no other shard
    /// may acknowledge a write that contradicts it before a restart tells.
    #[test]
    fn a_failure_on_one_wal_refuses_writes_on_all() {
        on_a_local_runtime(async {
            let data_dir = scratch_data_dir("wal-all-refuse");
            let failure: Arc<WalFailure> = Default::default();
            let healthy = Wal::start(&shard_dir(&data_dir, 1), 1, Vec::new(), 0, None, failure.clone()).unwrap();
            healthy.append(RecordType::Commit, 0, &1u64.to_le_bytes()).await.await.unwrap().unwrap();
            let failing = wal_on_dev_full_at(Io::Blocking, 0, data_dir.clone(), failure.clone());
            let e = failing.append(RecordType::Commit, 0, &2u64.to_le_bytes()).await.await.unwrap().unwrap_err();
            assert_eq!(e.code, DISK_FULL);
            assert!(healthy.refuses_writes());
            let refused = healthy.append(RecordType::Commit, 0, &3u64.to_le_bytes()).await.await.unwrap();
            assert_eq!(refused.unwrap_err().message, e.message, "the other shard answers with the failure");
            let logs = recovery::read_logs(&data_dir).unwrap();
            let commits = logs[0].records.iter().filter(|r| r.record_type == RecordType::Commit).count();
            assert_eq!(commits, 1, "nothing written after the failure");
            let _ = std::fs::remove_dir_all(&data_dir);
        });
    }
}
