//! A shard's io_uring ring for segment files: many reads and writes in
//! flight at once from any task on the shard (scans, flushes), submitted
//! together and completed through one reaper task that wakes on the ring's
//! eventfd. Buffers are owned by the in-flight table until the kernel is
//! done with them, so dropping a waiting future can never leave the kernel
//! writing into freed memory. Where the kernel refuses io_uring, the same
//! calls fall back to positioned reads/writes on the shard thread.
//! Must not: be used from another thread (`Rc`, `!Send`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::sync::Arc;

use io_uring::{opcode, squeue, types, IoUring};
use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

/// An operation's result as the ring hands it back: (kernel result, buffer).
type Completion = oneshot::Receiver<(i32, Vec<u8>)>;

struct InFlight {
    buf: Vec<u8>,
    /// Keeps the descriptor open until the operation completes.
    _file: Arc<File>,
    expect: usize,
    done: oneshot::Sender<(i32, Vec<u8>)>,
}

struct Ring {
    ring: RefCell<IoUring>,
    eventfd: AsyncFd<OwnedFd>,
    inflight: RefCell<HashMap<u64, InFlight>>,
    next_id: std::cell::Cell<u64>,
    reaper: std::cell::Cell<bool>,
}

/// One read or write request.
pub enum IoRequest {
    Read {
        file: Arc<File>,
        offset: u64,
        len: usize,
    },
    Write {
        file: Arc<File>,
        offset: u64,
        data: Vec<u8>,
    },
    Fsync {
        file: Arc<File>,
    },
}

#[derive(Clone)]
pub struct StorageIo {
    ring: Option<Rc<Ring>>,
}

impl StorageIo {
    /// A ring with `entries` slots (call inside the shard's runtime), or the
    /// blocking fallback when io_uring is unavailable.
    pub fn new(entries: u32) -> StorageIo {
        match Ring::new(entries) {
            Ok(r) => StorageIo {
                ring: Some(Rc::new(r)),
            },
            Err(_) => StorageIo { ring: None },
        }
    }

    /// The positioned-I/O fallback (tests, tools).
    pub fn blocking() -> StorageIo {
        StorageIo { ring: None }
    }

    pub fn uses_io_uring(&self) -> bool {
        self.ring.is_some()
    }

    /// Runs `requests` together (one submission) and returns each result in
    /// order: the bytes read (exactly `len`; a short read is an
    /// UnexpectedEof error) or an empty vector for writes and fsyncs.
    pub async fn submit(&self, requests: Vec<IoRequest>) -> Vec<io::Result<Vec<u8>>> {
        match &self.ring {
            None => requests.into_iter().map(blocking_op).collect(),
            Some(ring) => {
                let waits: Vec<io::Result<Completion>> =
                    requests.into_iter().map(|r| ring.push(r)).collect();
                if let Err(e) = ring.ring.borrow_mut().submit() {
                    // Nothing was handed to the kernel: fail every request.
                    let kind = e.kind();
                    for id in ring.inflight.borrow().keys().copied().collect::<Vec<_>>() {
                        if let Some(op) = ring.inflight.borrow_mut().remove(&id) {
                            let _ = op.done.send((-libc::EIO, Vec::new()));
                        }
                    }
                    return waits
                        .into_iter()
                        .map(|_| Err(io::Error::new(kind, e.to_string())))
                        .collect();
                }
                Ring::ensure_reaper(ring);
                let mut out = Vec::with_capacity(waits.len());
                for w in waits {
                    out.push(match w {
                        Err(e) => Err(e),
                        Ok(rx) => match rx.await {
                            Ok((res, buf)) if res >= 0 => Ok(buf),
                            Ok((res, _)) => Err(io::Error::from_raw_os_error(-res)),
                            Err(_) => Err(io::Error::other("the io_uring reaper stopped")),
                        },
                    });
                }
                out
            }
        }
    }

    pub async fn read(&self, file: Arc<File>, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.submit(vec![IoRequest::Read { file, offset, len }])
            .await
            .pop()
            .unwrap_or_else(|| Err(io::Error::other("no result")))
    }

    pub async fn write(&self, file: Arc<File>, offset: u64, data: Vec<u8>) -> io::Result<()> {
        self.submit(vec![IoRequest::Write { file, offset, data }])
            .await
            .pop()
            .unwrap_or_else(|| Err(io::Error::other("no result")))?;
        Ok(())
    }

    pub async fn fsync(&self, file: Arc<File>) -> io::Result<()> {
        self.submit(vec![IoRequest::Fsync { file }])
            .await
            .pop()
            .unwrap_or_else(|| Err(io::Error::other("no result")))?;
        Ok(())
    }
}

fn blocking_op(r: IoRequest) -> io::Result<Vec<u8>> {
    match r {
        IoRequest::Read { file, offset, len } => {
            let mut buf = vec![0u8; len];
            file.read_exact_at(&mut buf, offset)?;
            Ok(buf)
        }
        IoRequest::Write { file, offset, data } => {
            file.write_all_at(&data, offset).map(|_| Vec::new())
        }
        IoRequest::Fsync { file } => file.sync_all().map(|_| Vec::new()),
    }
}

impl Ring {
    fn new(entries: u32) -> io::Result<Ring> {
        let (ring, eventfd) = super::uring::ring_with_eventfd(entries)?;
        Ok(Ring {
            ring: RefCell::new(ring),
            eventfd,
            inflight: RefCell::new(HashMap::new()),
            next_id: std::cell::Cell::new(1),
            reaper: std::cell::Cell::new(false),
        })
    }

    /// Queues one operation (not yet submitted) and returns its completion.
    fn push(&self, req: IoRequest) -> io::Result<Completion> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        let (file, mut buf, offset, kind, expect) = match req {
            IoRequest::Read { file, offset, len } => (file, vec![0u8; len], offset, 0, len),
            IoRequest::Write { file, offset, data } => {
                let n = data.len();
                (file, data, offset, 1, n)
            }
            IoRequest::Fsync { file } => (file, Vec::new(), 0, 2, 0),
        };
        let len = u32::try_from(buf.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "I/O larger than 4 GiB"))?;
        let fd = types::Fd(file.as_raw_fd());
        let entry = match kind {
            0 => opcode::Read::new(fd, buf.as_mut_ptr(), len)
                .offset(offset)
                .build(),
            // Writes and fsyncs go straight to the kernel's workers: tried
            // inline, a buffered write would copy a whole segment into the
            // page cache on the shard thread, stalling its sessions.
            1 => opcode::Write::new(fd, buf.as_ptr(), len)
                .offset(offset)
                .build()
                .flags(squeue::Flags::ASYNC),
            _ => opcode::Fsync::new(fd).build().flags(squeue::Flags::ASYNC),
        }
        .user_data(id);
        // The buffer's heap allocation does not move when the Vec is moved
        // into the in-flight table below.
        self.inflight.borrow_mut().insert(
            id,
            InFlight {
                buf,
                _file: file,
                expect,
                done: tx,
            },
        );
        let mut ring = self.ring.borrow_mut();
        // SAFETY: the entry's buffer and descriptor live in `inflight` until the
        // completion for `id` is reaped (or the ring is dropped, which waits for
        // nothing but also never outlives the shard that owns both).
        let pushed = unsafe { ring.submission().push(&entry) };
        if pushed.is_err() {
            // Queue full: hand what is queued to the kernel, then retry once.
            ring.submit()?;
            // SAFETY: as above.
            if unsafe { ring.submission().push(&entry) }.is_err() {
                self.inflight.borrow_mut().remove(&id);
                return Err(io::Error::other("io_uring submission queue full"));
            }
        }
        Ok(rx)
    }

    fn ensure_reaper(this: &Rc<Ring>) {
        if this.reaper.replace(true) {
            return;
        }
        let ring = this.clone();
        tokio::task::spawn_local(async move {
            loop {
                ring.reap();
                if ring.inflight.borrow().is_empty() {
                    ring.reaper.set(false);
                    return;
                }
                let Ok(mut guard) = ring.eventfd.readable().await else {
                    ring.reaper.set(false);
                    return;
                };
                let mut counter = [0u8; 8];
                // SAFETY: reads 8 bytes into a local buffer of 8 bytes.
                let n = unsafe {
                    libc::read(
                        ring.eventfd.get_ref().as_raw_fd(),
                        counter.as_mut_ptr().cast(),
                        8,
                    )
                };
                if n < 0 {
                    guard.clear_ready();
                }
            }
        });
    }

    fn reap(&self) {
        let completions: Vec<(u64, i32)> = self
            .ring
            .borrow_mut()
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (id, res) in completions {
            if let Some(op) = self.inflight.borrow_mut().remove(&id) {
                let res = if res >= 0 && (res as usize) < op.expect {
                    // A short read of a regular file is its end; a short write, a full disk.
                    if op.buf.is_empty() {
                        res
                    } else {
                        -libc::ENODATA
                    }
                } else {
                    res
                };
                let _ = op.done.send((res, op.buf));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_in_one_submission() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            for io in [StorageIo::new(32), StorageIo::blocking()] {
                let path = std::env::temp_dir().join(format!(
                    "brewric-sio-{}-{}",
                    std::process::id(),
                    io.uses_io_uring()
                ));
                let file = Arc::new(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .truncate(true)
                        .read(true)
                        .write(true)
                        .open(&path)
                        .unwrap(),
                );
                io.write(file.clone(), 0, b"hello segment".to_vec())
                    .await
                    .unwrap();
                io.fsync(file.clone()).await.unwrap();
                let got = io
                    .submit(vec![
                        IoRequest::Read {
                            file: file.clone(),
                            offset: 0,
                            len: 5,
                        },
                        IoRequest::Read {
                            file: file.clone(),
                            offset: 6,
                            len: 7,
                        },
                        IoRequest::Read {
                            file: file.clone(),
                            offset: 10,
                            len: 10,
                        },
                    ])
                    .await;
                assert_eq!(got[0].as_ref().unwrap(), b"hello");
                assert_eq!(got[1].as_ref().unwrap(), b"segment");
                assert!(got[2].is_err(), "a read past the end is an error");
                let _ = std::fs::remove_file(path);
            }
        });
    }
}
