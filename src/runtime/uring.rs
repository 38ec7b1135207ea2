//! A shard's io_uring ring, driven from its current-thread tokio runtime:
//! operations are submitted to the ring and their completions are awaited
//! through an eventfd registered with it (readable when a completion is
//! posted), so waiting never blocks the shard's other tasks.
//! One operation group is in flight at a time (`&mut self`): the WAL writer,
//! its only user, serialises its writes anyway.
//! Must not: be used from another thread (it is `!Send` by construction).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use io_uring::{opcode, squeue, types, IoUring};
use tokio::io::unix::AsyncFd;

/// A ring with `entries` slots whose completions signal an eventfd that the
/// current tokio runtime watches (call inside that runtime).
pub fn ring_with_eventfd(entries: u32) -> io::Result<(IoUring, AsyncFd<OwnedFd>)> {
    let ring = IoUring::new(entries)?;
    // SAFETY: eventfd has no memory-safety preconditions; the result is checked.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    ring.submitter().register_eventfd(owned.as_raw_fd())?;
    // SAFETY: the eventfd is owned by the AsyncFd from here on and closed only
    // when it is dropped, which also deregisters it (AsyncFd's I/O-safety contract).
    let eventfd = unsafe { AsyncFd::register(owned) }.map_err(|e| e.into_parts().1)?;
    Ok((ring, eventfd))
}

pub struct Uring {
    ring: IoUring,
    eventfd: AsyncFd<OwnedFd>,
}

impl Uring {
    /// A ring with `entries` submission slots and its completion eventfd.
    pub fn new(entries: u32) -> io::Result<Uring> {
        let (ring, eventfd) = ring_with_eventfd(entries)?;
        Ok(Uring { ring, eventfd })
    }

    /// Writes all of `buf` at `offset` of `fd` and then fdatasyncs it, as one
    /// linked pair of operations (or, with `sync` false — a file opened with
    /// O_DSYNC, where the write itself is durable — the write alone).
    /// Returns after the operations completed.
    pub async fn write_and_sync(
        &mut self,
        fd: RawFd,
        buf: &[u8],
        offset: u64,
        sync: bool,
    ) -> io::Result<()> {
        let len = u32::try_from(buf.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "write too large"))?;
        let link = if sync {
            squeue::Flags::IO_LINK
        } else {
            squeue::Flags::empty()
        };
        let write = opcode::Write::new(types::Fd(fd), buf.as_ptr(), len)
            .offset(offset)
            .build()
            .flags(link)
            .user_data(1);
        let fsync = opcode::Fsync::new(types::Fd(fd))
            .flags(types::FsyncFlags::DATASYNC)
            .build()
            .user_data(2);
        // SAFETY: `buf` stays borrowed (alive and unmoved) until both completions
        // are reaped below — this future does not return before that, and the
        // WAL writer never drops it early (it runs to completion in its own task).
        unsafe {
            let mut sq = self.ring.submission();
            sq.push(&write)
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            if sync {
                sq.push(&fsync)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        self.ring.submit()?;
        let mut results: [Option<i32>; 2] = [None, if sync { None } else { Some(0) }];
        while results.iter().any(|r| r.is_none()) {
            for cqe in self.ring.completion() {
                if let Some(slot) = results.get_mut(cqe.user_data().wrapping_sub(1) as usize) {
                    *slot = Some(cqe.result());
                }
            }
            if results.iter().any(|r| r.is_none()) {
                let mut guard = self.eventfd.readable().await?;
                let mut counter = [0u8; 8];
                // SAFETY: reads 8 bytes into a local buffer of 8 bytes.
                let n = unsafe {
                    libc::read(
                        self.eventfd.get_ref().as_raw_fd(),
                        counter.as_mut_ptr().cast(),
                        8,
                    )
                };
                if n < 0 {
                    guard.clear_ready();
                }
            }
        }
        let written = results[0].unwrap_or(-libc::EIO);
        if written < 0 {
            return Err(io::Error::from_raw_os_error(-written));
        }
        if written as u32 != len {
            // A short write to a regular file means the disk is full.
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let synced = results[1].unwrap_or(-libc::EIO);
        if synced < 0 {
            return Err(io::Error::from_raw_os_error(-synced));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn linked_write_and_sync_lands_in_the_file() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut ring = match Uring::new(8) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!(
                        "io_uring unavailable here ({e}); the blocking path is tested instead"
                    );
                    return;
                }
            };
            let path = std::env::temp_dir().join(format!("brewric-uring-{}", std::process::id()));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            ring.write_and_sync(file.as_raw_fd(), b"hello ", 0, true)
                .await
                .unwrap();
            ring.write_and_sync(file.as_raw_fd(), b"ring", 6, false)
                .await
                .unwrap();
            let mut buf = [0u8; 10];
            file.read_exact_at(&mut buf, 0).unwrap();
            assert_eq!(&buf, b"hello ring");
            let _ = std::fs::remove_file(path);
        });
    }
}
