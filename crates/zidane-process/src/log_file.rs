//! A task's log file: created new and private, fed from the output pipe without a
//! userspace buffer, capped, and closed with a truncation marker when bytes were dropped.

use std::fs::{DirBuilder, File};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, SpliceFFlags, fcntl, open, splice};
use nix::sys::stat::Mode;
use zidane_context::ContextError;

/// Mode of a task log: only the owner may read it (it holds whatever the task printed).
pub(crate) const LOG_MODE: u32 = 0o600;

/// How a task log is opened, by [`open_new`] and by `vfork_spawn`'s child alike: new
/// (`O_EXCL`: never over an existing file), close-on-exec, and readable as well as
/// writable, so that `finish` can look at the last kept byte (splice never shows us
/// the bytes it moves).
pub(crate) const LOG_OPEN_FLAGS: libc::c_int =
    libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC;

/// Mode of an output directory we create.
const DIR_MODE: u32 = 0o700;

/// Most bytes moved by one `splice` call: the largest pipe we ever ask for.
const SPLICE_CHUNK: usize = 1 << 20;

/// Pipe capacity asked for once a task proves to be verbose (it filled the default
/// 64 KiB pipe): fewer wake-ups per byte. `/proc/sys/fs/pipe-max-size` is 1 MiB by
/// default, so unprivileged processes may ask for this much.
const BUSY_PIPE_CAPACITY: usize = 1 << 20;

/// A pipe's default capacity on Linux; a `splice` that moves this much found it full.
const DEFAULT_PIPE_CAPACITY: usize = 64 * 1024;

/// Buffer for the read/write fallback and for discarding bytes past the cap.
const SCRATCH_LEN: usize = 64 * 1024;

/// Creates `output_dir` (mode `0700`, parents too): called once creating a log in it
/// said it is missing, so the usual start costs no system call for it.
pub(crate) fn create_output_dir(output_dir: &Path) -> Result<(), ContextError> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(output_dir)
        .map_err(|source| ContextError::OutputDir {
            path: output_dir.to_owned(),
            source,
        })
}

/// Creates a task log ([`LOG_OPEN_FLAGS`], mode [`LOG_MODE`]). A task's spawn child
/// usually does this itself (see `vfork_spawn`); this is for where it cannot.
pub(crate) fn open_new(path: &Path) -> io::Result<File> {
    let fd = open(
        path,
        OFlag::from_bits_retain(LOG_OPEN_FLAGS),
        Mode::from_bits_retain(LOG_MODE),
    )?;
    Ok(File::from(fd))
}

/// A log that already exists is a clash of file names (an I/O error on that path);
/// anything else means the directory is not usable.
pub(crate) fn log_error(output_dir: &Path, path: &Path, source: io::Error) -> ContextError {
    if source.kind() == io::ErrorKind::AlreadyExists {
        ContextError::io(path, source)
    } else {
        ContextError::OutputDir {
            path: output_dir.to_owned(),
            source,
        }
    }
}

/// What one [`LogWriter::pump`] call found in the pipe (an empty pipe that still has
/// writers is a `WouldBlock` error, as the reactor expects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pumped {
    /// This many bytes left the pipe (kept or dropped).
    Moved(usize),
    /// The pipe is empty and every writer has closed it.
    Eof,
}

/// Moves a task's output from its pipe into its log.
///
/// `splice(2)` moves the bytes inside the kernel; nothing is buffered here, so memory
/// stays flat however much a task prints. Past the output cap, bytes are read into a
/// small scratch buffer and dropped (counted, never written). A file system that cannot
/// splice falls back to read/write through the same scratch buffer.
#[derive(Debug)]
pub(crate) struct LogWriter {
    file: File,
    cap: Option<u64>,
    kept: u64,
    dropped: u64,
    splice_works: bool,
    /// Set after the first write error (e.g. a full disk): from then on bytes are
    /// drained and dropped, so the task never blocks on a pipe nobody empties.
    write_failed: bool,
    pipe_grown: bool,
    scratch: Vec<u8>,
}

impl LogWriter {
    /// A writer into `file`, keeping at most `cap` bytes.
    pub(crate) fn new(file: File, cap: Option<u64>) -> Self {
        Self {
            file,
            cap,
            kept: 0,
            dropped: 0,
            splice_works: true,
            write_failed: false,
            pipe_grown: false,
            scratch: Vec::new(),
        }
    }

    /// Every byte the task wrote so far, kept or dropped.
    pub(crate) fn total(&self) -> u64 {
        self.kept.saturating_add(self.dropped)
    }

    /// Moves what the pipe holds now (up to one chunk) into the log.
    pub(crate) fn pump(&mut self, pipe: BorrowedFd<'_>) -> io::Result<Pumped> {
        loop {
            let room = match self.cap {
                Some(cap) => cap.saturating_sub(self.kept),
                None => u64::MAX,
            };
            let step = if room == 0 || self.write_failed {
                self.discard(pipe)
            } else if self.splice_works {
                self.splice(pipe, room)
            } else {
                self.copy(pipe, room)
            };
            match step {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Step::Retry) => {}
                Ok(Step::Moved(0)) => return Ok(Pumped::Eof),
                Ok(Step::Moved(n)) => {
                    if n >= DEFAULT_PIPE_CAPACITY && !self.pipe_grown {
                        self.grow_pipe(pipe);
                    }
                    return Ok(Pumped::Moved(n));
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Appends the truncation marker when bytes were dropped, and closes the log.
    ///
    /// There is no userspace buffer to flush: every kept byte is already in the file.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        if self.dropped > 0 {
            let marker = truncation_marker(self.dropped);
            // The last kept byte may end mid-line; the marker always gets its own line.
            let separator = if self.kept > 0 && !self.ends_with_newline() {
                "\n"
            } else {
                ""
            };
            self.file
                .write_all(format!("{separator}{marker}\n").as_bytes())?;
        }
        Ok(())
    }

    fn splice(&mut self, pipe: BorrowedFd<'_>, room: u64) -> io::Result<Step> {
        let len = usize::try_from(room)
            .unwrap_or(usize::MAX)
            .min(SPLICE_CHUNK);
        let flags = SpliceFFlags::SPLICE_F_NONBLOCK | SpliceFFlags::SPLICE_F_MOVE;
        match splice(pipe, None, self.file.as_fd(), None, len, flags) {
            Ok(n) => {
                self.kept += n as u64;
                Ok(Step::Moved(n))
            }
            Err(Errno::EAGAIN) => Err(io::ErrorKind::WouldBlock.into()),
            Err(Errno::EINTR) => Ok(Step::Retry),
            // This file system cannot take spliced pages: copy through userspace.
            Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {
                self.splice_works = false;
                Ok(Step::Retry)
            }
            Err(errno) => {
                self.note_write_failure(&io::Error::from(errno));
                Ok(Step::Retry)
            }
        }
    }

    fn copy(&mut self, pipe: BorrowedFd<'_>, room: u64) -> io::Result<Step> {
        let len = usize::try_from(room).unwrap_or(usize::MAX).min(SCRATCH_LEN);
        self.scratch.resize(SCRATCH_LEN, 0);
        let n = read_pipe(pipe, &mut self.scratch[..len])?;
        if n == 0 {
            return Ok(Step::Moved(0));
        }
        match self.file.write_all(&self.scratch[..n]) {
            Ok(()) => self.kept += n as u64,
            Err(error) => {
                self.note_write_failure(&error);
                self.dropped += n as u64;
            }
        }
        Ok(Step::Moved(n))
    }

    fn discard(&mut self, pipe: BorrowedFd<'_>) -> io::Result<Step> {
        self.scratch.resize(SCRATCH_LEN, 0);
        let n = read_pipe(pipe, &mut self.scratch)?;
        self.dropped += n as u64;
        Ok(Step::Moved(n))
    }

    fn note_write_failure(&mut self, error: &io::Error) {
        tracing::warn!(%error, "writing a task log failed; dropping the rest of its output");
        self.write_failed = true;
    }

    /// Asks for a bigger pipe once the task shows it fills the default one. Best effort:
    /// the per-user pipe budget may refuse, which only costs more wake-ups.
    fn grow_pipe(&mut self, pipe: BorrowedFd<'_>) {
        self.pipe_grown = true;
        let capacity = i32::try_from(BUSY_PIPE_CAPACITY).unwrap_or(i32::MAX);
        if let Err(error) = fcntl(pipe, FcntlArg::F_SETPIPE_SZ(capacity)) {
            tracing::debug!(%error, "could not grow a task's output pipe");
        }
    }

    fn ends_with_newline(&self) -> bool {
        use std::os::unix::fs::FileExt;
        let mut last = [0u8; 1];
        self.kept
            .checked_sub(1)
            .and_then(|at| self.file.read_at(&mut last, at).ok())
            .is_some_and(|n| n == 1 && last[0] == b'\n')
    }
}

/// What one attempt did.
enum Step {
    Moved(usize),
    Retry,
}

/// The line appended to a capped log at settle.
pub(crate) fn truncation_marker(dropped: u64) -> String {
    format!("<output-truncated bytes-dropped=\"{dropped}\"/>")
}

/// One non-blocking read from the pipe; `WouldBlock` when it is empty.
pub(crate) fn read_pipe(pipe: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match nix::unistd::read(pipe, buf) {
            Ok(n) => return Ok(n),
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_names_the_dropped_bytes() {
        assert_eq!(
            truncation_marker(4000),
            "<output-truncated bytes-dropped=\"4000\"/>"
        );
    }
}
