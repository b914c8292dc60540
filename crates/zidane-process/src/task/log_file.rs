//! A task's log file: created new and private, fed from the output pipe (without a
//! userspace buffer on Linux's fast path, through a small one on the portable path), capped, and closed with a marker line for every byte it does not
//! hold: dropped past the cap, or lost because the log could not be written.

use std::fs::{DirBuilder, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use zidane_context::{ContextError, LogWriteFailure};

#[cfg(unix)]
use crate::log_open::LOG_MODE;
use crate::process_path::ProcessPath;
#[cfg(target_os = "linux")]
use crate::task::log_splice::{self, Spliced};
use crate::task::output_pipe::{PipeRef, read_pipe};
use crate::task::terminal_screen::TerminalScreen;

/// Mode of an output directory we create (Unix; on Windows a new directory takes its
/// parent's access list, private to the user under their profile).
#[cfg_attr(windows, allow(dead_code))]
const DIR_MODE: u32 = 0o700;

/// A pipe's default capacity on Linux; a copy that moves this much found it full.
#[cfg(target_os = "linux")]
const DEFAULT_PIPE_CAPACITY: usize = 64 * 1024;

/// Buffer for the read/write fallback and for discarding bytes past the cap.
const SCRATCH_LEN: usize = 64 * 1024;

/// Creates `output_dir` (mode `0700`, parents too): called once creating a log in it
/// said it is missing, so the usual start costs no system call for it.
pub(crate) fn create_output_dir(output_dir: &Path) -> Result<(), ContextError> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, DIR_MODE);
    builder
        .create(output_dir)
        .map_err(|source| ContextError::OutputDir {
            path: output_dir.to_owned(),
            cause: source,
        })
}

/// Creates a task log (`log_open::LOG_OPEN_FLAGS`, mode `LOG_MODE`). A task's spawn child
/// usually does this itself (see `vfork_spawn`); this is for where it cannot.
pub(crate) fn open_new(path: &Path) -> io::Result<File> {
    // std opens close-on-exec itself; `create_new` is `O_CREAT | O_EXCL`.
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, LOG_MODE);
    // Windows: std shares read, write and delete access, so the log can be read (and
    // removed) while the task writes it.
    options.open(path)
}

/// A log that already exists is a clash of file names (an I/O error on that path);
/// anything else means the directory is not usable.
pub(crate) fn log_error(output_dir: &Path, path: &Path, source: io::Error) -> ContextError {
    if source.kind() == io::ErrorKind::AlreadyExists {
        ContextError::io(path, source)
    } else {
        ContextError::OutputDir {
            path: output_dir.to_owned(),
            cause: source,
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
/// On Linux's fast path `splice(2)` moves the bytes inside the kernel; nothing is
/// buffered here, so memory stays flat however much a task prints. The portable path
/// (and a file system that cannot splice) copies with read/write through one small
/// scratch buffer, so memory stays flat there too. Past the output cap, bytes are read
/// into the scratch buffer and dropped (counted, never written).
///
/// After the first write error (a full disk, an I/O error) the rest of the output is
/// drained and counted as lost, so the task never blocks on a pipe nobody empties; the
/// error and the count reach the task's exit ([`LogOutcome::failure`]).
#[derive(Debug)]
pub(crate) struct LogWriter {
    file: File,
    cap: Option<u64>,
    kept: u64,
    /// Bytes dropped past the cap, on purpose.
    dropped: u64,
    /// Bytes lost because the log could not be written.
    lost: u64,
    splice_works: bool,
    /// The first write error, once one happened.
    write_error: Option<io::Error>,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pipe_grown: bool,
    scratch: Vec<u8>,
    /// The screen of a terminal task, fed every byte read (kept or not).
    terminal: Option<Arc<TerminalScreen>>,
}

impl LogWriter {
    /// A writer into `file`, keeping at most `cap` bytes, splicing on `path`'s fast
    /// path.
    pub(crate) fn new(file: File, cap: Option<u64>, path: ProcessPath) -> Self {
        Self {
            file,
            cap,
            kept: 0,
            dropped: 0,
            lost: 0,
            splice_works: path.is_fast(),
            write_error: None,
            pipe_grown: false,
            scratch: Vec::new(),
            terminal: None,
        }
    }

    /// A writer for the output of a terminal task: copied (a terminal cannot be
    /// spliced), every byte fed to `terminal`, and the terminal's "no writer is left"
    /// (`EIO`) read as end-of-file.
    #[must_use]
    pub(crate) fn with_terminal(mut self, terminal: Arc<TerminalScreen>) -> Self {
        self.splice_works = false;
        self.terminal = Some(terminal);
        self
    }

    /// Every byte the task wrote so far, kept or dropped.
    pub(crate) fn total(&self) -> u64 {
        self.kept
            .saturating_add(self.dropped)
            .saturating_add(self.lost)
    }

    /// Moves what the pipe holds now (up to one chunk) into the log.
    pub(crate) fn pump(&mut self, pipe: PipeRef<'_>) -> io::Result<Pumped> {
        loop {
            let room = match self.cap {
                Some(cap) => cap.saturating_sub(self.kept),
                None => u64::MAX,
            };
            let step = if self.write_error.is_some() {
                self.discard(pipe, Discard::Lost)
            } else if room == 0 {
                self.discard(pipe, Discard::PastCap)
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
                    #[cfg(target_os = "linux")]
                    if n >= DEFAULT_PIPE_CAPACITY && !self.pipe_grown {
                        self.pipe_grown = true;
                        log_splice::grow_pipe(pipe);
                    }
                    return Ok(Pumped::Moved(n));
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Appends a marker line for the bytes dropped past the cap and one for the bytes
    /// the log could not take (where the file still accepts it: a full disk may not),
    /// and closes the log.
    ///
    /// There is no userspace buffer to flush: every kept byte is already in the file.
    pub(crate) fn finish(mut self) -> LogOutcome {
        let failure = self.write_error.as_ref().map(|error| LogWriteFailure {
            bytes_dropped: self.lost,
            error: error.to_string(),
        });
        let mut markers = String::new();
        if self.dropped > 0 {
            markers.push_str(&truncation_marker(self.dropped));
            markers.push('\n');
        }
        if let Some(failure) = &failure {
            markers.push_str(&write_failure_marker(failure));
            markers.push('\n');
        }
        let mut marker_error = None;
        if !markers.is_empty() {
            // The last kept byte may end mid-line; a marker always gets its own line.
            if self.kept > 0 && !self.ends_with_newline() {
                markers.insert(0, '\n');
            }
            if let Err(error) = self.file.write_all(markers.as_bytes()) {
                marker_error = Some(error);
            }
        }
        LogOutcome {
            bytes_written: self.total(),
            failure,
            marker_error,
        }
    }

    #[cfg(target_os = "linux")]
    fn splice(&mut self, pipe: PipeRef<'_>, room: u64) -> io::Result<Step> {
        match log_splice::splice_into(pipe, &self.file, room) {
            Spliced::Moved(n) => {
                self.kept += n as u64;
                Ok(Step::Moved(n))
            }
            Spliced::Empty => Err(io::ErrorKind::WouldBlock.into()),
            Spliced::Interrupted => Ok(Step::Retry),
            // This file system cannot take spliced pages: copy through userspace.
            Spliced::Unsupported => {
                self.splice_works = false;
                Ok(Step::Retry)
            }
            Spliced::WriteFailed(error) => {
                self.note_write_failure(error);
                Ok(Step::Retry)
            }
        }
    }

    /// No `splice` off Linux (`splice_works` is never set there).
    #[cfg(not(target_os = "linux"))]
    fn splice(&mut self, pipe: PipeRef<'_>, room: u64) -> io::Result<Step> {
        self.copy(pipe, room)
    }

    fn copy(&mut self, pipe: PipeRef<'_>, room: u64) -> io::Result<Step> {
        let len = usize::try_from(room).unwrap_or(usize::MAX).min(SCRATCH_LEN);
        self.scratch.resize(SCRATCH_LEN, 0);
        let n = self.read_output(pipe, len)?;
        if n == 0 {
            return Ok(Step::Moved(0));
        }
        // Written piece by piece, so a write that fails part way counts as lost only
        // what did not reach the file.
        let mut written = 0;
        while written < n {
            match self.file.write(&self.scratch[written..n]) {
                Ok(0) => {
                    self.note_write_failure(io::ErrorKind::WriteZero.into());
                    break;
                }
                Ok(m) => written += m,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    self.note_write_failure(error);
                    break;
                }
            }
        }
        self.kept += written as u64;
        self.lost += (n - written) as u64;
        Ok(Step::Moved(n))
    }

    fn discard(&mut self, pipe: PipeRef<'_>, why: Discard) -> io::Result<Step> {
        self.scratch.resize(SCRATCH_LEN, 0);
        let n = self.read_output(pipe, SCRATCH_LEN)?;
        match why {
            Discard::PastCap => self.dropped += n as u64,
            Discard::Lost => self.lost += n as u64,
        }
        Ok(Step::Moved(n))
    }

    /// One read of at most `len` bytes into the scratch buffer; a terminal's screen
    /// sees them too.
    fn read_output(&mut self, pipe: PipeRef<'_>, len: usize) -> io::Result<usize> {
        let Some(terminal) = &self.terminal else {
            return read_pipe(pipe, &mut self.scratch[..len]);
        };
        match read_pipe(pipe, &mut self.scratch[..len]) {
            // A terminal's master reads EIO once every slave descriptor is closed.
            Err(error) if crate::task::output_pipe::is_terminal_hangup(&error) => Ok(0),
            Ok(n) => {
                terminal.feed(&self.scratch[..n]);
                Ok(n)
            }
            Err(error) => Err(error),
        }
    }

    fn note_write_failure(&mut self, error: io::Error) {
        tracing::warn!(%error, "writing a task log failed; dropping the rest of its output");
        self.write_error.get_or_insert(error);
    }

    fn ends_with_newline(&self) -> bool {
        let mut last = [0u8; 1];
        self.kept
            .checked_sub(1)
            .and_then(|at| crate::file_at::read_at(&self.file, &mut last, at).ok())
            .is_some_and(|n| n == 1 && last[0] == b'\n')
    }
}

/// What one attempt did.
enum Step {
    Moved(usize),
    /// Only a splice asks for another go.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Retry,
}

/// Why bytes are read from the pipe and not written.
#[derive(Debug, Clone, Copy)]
enum Discard {
    PastCap,
    Lost,
}

/// How a log ended, from [`LogWriter::finish`].
#[derive(Debug)]
pub(crate) struct LogOutcome {
    /// Every byte the task wrote, kept, dropped or lost.
    pub(crate) bytes_written: u64,
    /// The output the log could not take, and why.
    pub(crate) failure: Option<LogWriteFailure>,
    /// Appending the marker lines failed (the file took no more).
    pub(crate) marker_error: Option<io::Error>,
}

/// The line appended to a capped log at settle.
pub(crate) fn truncation_marker(dropped: u64) -> String {
    format!("<output-truncated bytes-dropped=\"{dropped}\"/>")
}

/// The line appended at settle to a log that could not take all of the output:
/// `<log-write-failed bytes-dropped="N" error="No space left on device (os error 28)"/>`.
/// Characters that could end the attribute or the line are left out of the error.
pub(crate) fn write_failure_marker(failure: &LogWriteFailure) -> String {
    let error: String = failure
        .error
        .chars()
        .filter(|c| !matches!(c, '"' | '<' | '>' | '&') && !c.is_control())
        .collect();
    format!(
        "<log-write-failed bytes-dropped=\"{}\" error=\"{error}\"/>",
        failure.bytes_dropped
    )
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn failure_marker_names_the_lost_bytes_and_the_error() {
        let failure = LogWriteFailure {
            bytes_dropped: 7,
            error: "No space \"left\" <on>\ndevice (os error 28)".into(),
        };
        assert_eq!(
            write_failure_marker(&failure),
            "<log-write-failed bytes-dropped=\"7\" error=\"No space left ondevice (os error 28)\"/>"
        );
    }

    /// A log on a device that takes nothing (`/dev/full`): everything read is lost and
    /// counted, the first error kept, and the marker that cannot be written reported.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_log_that_takes_nothing_counts_every_byte_lost() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut log = LogWriter::new(full, None, ProcessPath::platform_default());
        let (read, write) = nix::unistd::pipe().unwrap();
        nix::fcntl::fcntl(
            &read,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        let mut write = File::from(write);
        write.write_all(&[b'x'; 10_000]).unwrap();
        drop(write);
        let mut moved = 0;
        while let Pumped::Moved(n) = log.pump(read.as_fd()).unwrap() {
            moved += n;
        }
        assert_eq!(moved, 10_000);
        let outcome = log.finish();
        assert_eq!(outcome.bytes_written, 10_000);
        let failure = outcome.failure.unwrap();
        assert_eq!(failure.bytes_dropped, 10_000);
        assert!(failure.error.contains("No space left"), "{failure:?}");
        assert!(outcome.marker_error.is_some());
    }

    #[test]
    fn marker_names_the_dropped_bytes() {
        assert_eq!(
            truncation_marker(4000),
            "<output-truncated bytes-dropped=\"4000\"/>"
        );
    }
}
