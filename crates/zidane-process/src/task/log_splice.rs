//! Linux's fast copy of a task's output: `splice(2)` from the pipe into the log, inside
//! the kernel, and a bigger pipe for a task that proves verbose.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, SpliceFFlags, fcntl, splice};

/// Most bytes moved by one `splice` call: the largest pipe we ever ask for.
const SPLICE_CHUNK: usize = 1 << 20;

/// Pipe capacity asked for once a task proves to be verbose (it filled the default
/// 64 KiB pipe): fewer wake-ups per byte. `/proc/sys/fs/pipe-max-size` is 1 MiB by
/// default, so unprivileged processes may ask for this much.
const BUSY_PIPE_CAPACITY: usize = 1 << 20;

/// What one [`splice_into`] did.
pub(crate) enum Spliced {
    /// This many bytes went from the pipe into the file (0: end-of-file).
    Moved(usize),
    /// The pipe is empty but still has writers.
    Empty,
    /// A signal interrupted the call: try again.
    Interrupted,
    /// This file system cannot take spliced pages.
    Unsupported,
    /// The file refused the bytes (a full disk, an I/O error).
    WriteFailed(io::Error),
}

/// Moves up to `room` bytes (at most one chunk) from `pipe` into `file`, without
/// blocking.
pub(crate) fn splice_into(pipe: BorrowedFd<'_>, file: &File, room: u64) -> Spliced {
    let len = usize::try_from(room)
        .unwrap_or(usize::MAX)
        .min(SPLICE_CHUNK);
    let flags = SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE;
    match splice(pipe, None, file.as_fd(), None, len, flags) {
        Ok(n) => Spliced::Moved(n),
        Err(Errno::EAGAIN) => Spliced::Empty,
        Err(Errno::EINTR) => Spliced::Interrupted,
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => Spliced::Unsupported,
        Err(errno) => Spliced::WriteFailed(io::Error::from(errno)),
    }
}

/// Asks for a bigger pipe once the task shows it fills the default one. Best effort:
/// the per-user pipe budget may refuse, which only costs more wake-ups.
pub(crate) fn grow_pipe(pipe: BorrowedFd<'_>) {
    let capacity = i32::try_from(BUSY_PIPE_CAPACITY).unwrap_or(i32::MAX);
    if let Err(error) = fcntl(pipe, FcntlArg::F_SETPIPE_SZ(capacity)) {
        tracing::debug!(%error, "could not grow a task's output pipe");
    }
}
