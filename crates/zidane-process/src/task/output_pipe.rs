//! The read end of a command's output as its owner sees it on Unix: a non-blocking
//! pipe (or a terminal's master) registered with tokio's reactor, read in place by the
//! log writer (`splice` or a copy) once the reactor says it is readable.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use tokio::net::unix::pipe::Receiver;

/// What the log writer reads from: the descriptor itself, so that Linux can `splice`.
pub(crate) type PipeRef<'a> = BorrowedFd<'a>;

/// The read end of a command's output.
#[derive(Debug)]
pub(crate) struct OutputPipe(Receiver);

impl OutputPipe {
    /// Registers `read` (non-blocking, close-on-exec) with the reactor.
    pub(crate) fn new(read: OwnedFd) -> io::Result<Self> {
        // "Unchecked" only skips tokio's fstat that the descriptor is a readable pipe:
        // the caller just made it one (or a terminal's master), non-blocking.
        Receiver::from_owned_fd_unchecked(read).map(Self)
    }

    /// Waits until the pipe is readable (data, end-of-file or an error).
    pub(crate) async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }

    /// Runs `read` on the pipe; a `WouldBlock` from it clears the reactor's readiness,
    /// so the next [`readable`](Self::readable) waits for the kernel's next event.
    pub(crate) fn try_read_with<T>(
        &self,
        read: impl FnOnce(PipeRef<'_>) -> io::Result<T>,
    ) -> io::Result<T> {
        self.0.try_io(|| read(self.0.as_fd()))
    }

    /// The pipe to read from without asking the reactor (whose readiness may be stale).
    pub(crate) fn as_source(&self) -> PipeRef<'_> {
        self.0.as_fd()
    }

    /// Whether some process still holds the write end, asked of the kernel (`POLLHUP`
    /// is set once the last writer closed it), not of what was read so far.
    pub(crate) fn is_open(&self) -> bool {
        let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(_) => !fds[0]
                .revents()
                .is_some_and(|events| events.contains(PollFlags::POLLHUP)),
            // Not knowing, assume what kept the task running still does.
            Err(_) => true,
        }
    }
}

/// One `read(2)` from the pipe, retried on `EINTR`: `Ok(0)` at end-of-file,
/// `WouldBlock` when it is empty.
pub(crate) fn read_pipe(pipe: PipeRef<'_>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match nix::unistd::read(pipe, buf) {
            Ok(n) => return Ok(n),
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Whether a read error means the output ended: a terminal's master reads `EIO` once
/// every process holding its slave is gone.
pub(crate) fn is_terminal_hangup(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::EIO)
}
