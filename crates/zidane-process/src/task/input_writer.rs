//! Writing a task's input on Unix: the non-blocking write end of its stdin pipe, or its
//! terminal's master, on the runtime's reactor.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::unix::pipe::Sender;
use zidane_context::TtySize;

use crate::sys::set_window_size;

/// Where a task's input bytes are written.
#[derive(Debug)]
pub(crate) struct InputWriter(Sender);

impl InputWriter {
    /// Wraps `fd` (non-blocking: a pipe's write end or a terminal's master) on the
    /// runtime's reactor.
    pub(crate) fn new(fd: OwnedFd) -> io::Result<Self> {
        // "Unchecked" skips tokio's check that this is a FIFO: a terminal's master is
        // not one, and both are made non-blocking where they are opened.
        Sender::from_owned_fd_unchecked(fd).map(Self)
    }

    /// Writes all of `bytes`, counting them into `written` as they go, so a caller that
    /// gives up can say how far it got.
    pub(crate) async fn write_all(
        &self,
        bytes: Vec<u8>,
        written: Arc<AtomicUsize>,
    ) -> io::Result<()> {
        let mut done = 0;
        while done < bytes.len() {
            self.0.writable().await?;
            match self.0.try_write(&bytes[done..]) {
                Ok(n) => {
                    done += n;
                    written.store(done, Ordering::Release);
                }
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Sets the size of the terminal this writes to; the kernel tells its foreground
    /// process group (`SIGWINCH`).
    pub(crate) fn set_size(&self, size: TtySize) -> io::Result<()> {
        set_window_size(self.0.as_fd(), size.rows, size.cols)
    }
}

/// Whether a write error means nobody reads the input any more: a pipe without a
/// reader, a terminal whose every process is gone (`EIO`).
pub(crate) fn is_hangup(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe || error.raw_os_error() == Some(libc::EIO)
}

/// What identifies the pipe behind `end` in the process table (its inode), so a stall
/// diagnosis can tell a process blocked reading the task's input.
pub(crate) fn pipe_identity(end: &OwnedFd) -> Option<u64> {
    nix::sys::stat::fstat(end).ok().map(|stat| stat.st_ino)
}
