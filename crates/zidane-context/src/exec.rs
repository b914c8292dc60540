//! Foreground execution and file reads: `ExecOptions`, `ExecOutput`, `ReadRange`,
//! `ReadResult`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
#[cfg(feature = "runtime")]
use tokio_util::sync::CancellationToken;

use crate::command::CommandSpec;
use crate::error::ContextError;
use crate::signal::Signal;

/// Default cap on the output a foreground `exec` returns (its tail is kept).
pub const DEFAULT_EXEC_OUTPUT_BYTES: u64 = 256 * 1024;

/// Default number of lines a `read_file` window holds.
pub const DEFAULT_READ_LIMIT: usize = 2000;

/// How to run a foreground command.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecOptions {
    /// Working directory and extra environment.
    #[serde(flatten)]
    pub spec: CommandSpec,
    /// Kill the process group after this long.
    #[serde(rename = "timeout_ms", with = "crate::duration_ms::option", default)]
    pub timeout: Option<Duration>,
    /// Bytes of output returned; beyond it the tail is kept (default
    /// [`DEFAULT_EXEC_OUTPUT_BYTES`]).
    pub max_output_bytes: Option<u64>,
    /// Cancelling it kills the process group.
    #[cfg(feature = "runtime")]
    #[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
    #[serde(skip)]
    pub cancel: Option<CancellationToken>,
}

impl ExecOptions {
    /// Options with nothing set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.spec = self.spec.cwd(cwd);
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec = self.spec.env(key, value);
        self
    }

    /// Sets the working directory and extra environment at once.
    #[must_use]
    pub fn spec(mut self, spec: CommandSpec) -> Self {
        self.spec = spec;
        self
    }

    /// Sets the timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the output cap.
    #[must_use]
    pub fn max_output_bytes(mut self, bytes: u64) -> Self {
        self.max_output_bytes = Some(bytes);
        self
    }

    /// Sets the cancellation token.
    #[cfg(feature = "runtime")]
    #[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
    #[must_use]
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

/// What a foreground `exec` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOutput {
    /// stdout and stderr, interleaved, lossily decoded; its tail when truncated.
    pub output: String,
    /// The exit code (`128 + signo` when a signal ended it).
    pub exit_code: i32,
    /// The signal that ended it, if one did.
    pub signal: Option<Signal>,
    /// The timeout killed it.
    pub timed_out: bool,
    /// A cancellation killed it.
    pub cancelled: bool,
    /// Bytes dropped from the head of `output` to keep its tail.
    pub truncated_bytes: u64,
    /// Wall time.
    #[serde(rename = "duration_ms", with = "crate::duration_ms")]
    pub duration: Duration,
}

impl ExecOutput {
    /// Adds one line after the output, a line break first where the output lacks one:
    /// how a context tells the model something of the run beside what it printed (the
    /// sandbox rule it met).
    ///
    /// ```
    /// use std::time::Duration;
    /// use zidane_context::ExecOutput;
    ///
    /// let mut out = ExecOutput {
    ///     output: "touch: cannot touch 'x': Read-only file system".into(),
    ///     exit_code: 1,
    ///     signal: None,
    ///     timed_out: false,
    ///     cancelled: false,
    ///     truncated_bytes: 0,
    ///     duration: Duration::ZERO,
    /// };
    /// out.push_line("sandbox: x is outside the writable roots (read-only)");
    /// assert!(out.output.ends_with("system\nsandbox: x is outside the writable roots (read-only)\n"));
    /// ```
    pub fn push_line(&mut self, line: &str) {
        if !self.output.is_empty() && !self.output.ends_with('\n') {
            self.output.push('\n');
        }
        self.output.push_str(line);
        self.output.push('\n');
    }
}

/// A window of lines: skip `offset` lines, then take up to `limit`. With `from_end`,
/// lines are counted from the end instead: the window holds up to `limit` lines ending
/// `offset` lines before the last (`offset: 0` reads the file's last lines), found by
/// reading backwards from the end rather than scanning from the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadRange {
    /// Lines to skip (0-based index of the first line returned); from the end of the
    /// file with `from_end`.
    pub offset: usize,
    /// Most lines to return (default [`DEFAULT_READ_LIMIT`]).
    pub limit: Option<usize>,
    /// `offset` counts lines back from the end of the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_end: bool,
}

impl ReadRange {
    /// A window starting at line `offset` (0-based) with at most `limit` lines.
    pub const fn new(offset: usize, limit: Option<usize>) -> Self {
        Self {
            offset,
            limit,
            from_end: false,
        }
    }

    /// A window of at most `limit` lines ending `skip` lines before the end of the file.
    pub const fn from_end(skip: usize, limit: Option<usize>) -> Self {
        Self {
            offset: skip,
            limit,
            from_end: true,
        }
    }

    /// The effective limit.
    pub fn limit_or_default(&self) -> usize {
        self.limit.unwrap_or(DEFAULT_READ_LIMIT)
    }
}

/// A window of a file's lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadResult {
    /// The file read.
    pub path: PathBuf,
    /// 0-based index of `lines[0]`.
    pub offset: usize,
    /// The lines, without their terminators, non-UTF-8 bytes shown lossily.
    pub lines: Vec<String>,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// Lines after this window.
    pub remaining: usize,
    /// Set when the read stopped after this many bytes (a context's read budget)
    /// before the end of the file: `total_lines` and `remaining` then count only the
    /// lines seen so far, and a window beyond them is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_after_bytes: Option<u64>,
    /// Set by a from-the-end read that did not reach the start of the file: the window
    /// starts this many bytes into the file, and `offset`, `total_lines` and `remaining`
    /// count lines from there (the lines before it were not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_before: Option<u64>,
}

/// Refuses a command no context can run: empty (or only whitespace), or containing a NUL
/// byte (which no `argv` can carry). Every context calls it before anything is spawned,
/// so they all refuse the same input with the same [`ContextError::InvalidCommand`].
///
/// ```
/// use zidane_context::validate_command;
/// assert!(validate_command("cargo build").is_ok());
/// assert!(validate_command("  ").is_err());
/// assert!(validate_command("echo a\0b").is_err());
/// ```
pub fn validate_command(command: &str) -> Result<(), ContextError> {
    if command.trim().is_empty() {
        return Err(ContextError::InvalidCommand {
            reason: "the command is empty",
        });
    }
    if command.contains('\0') {
        return Err(ContextError::InvalidCommand {
            reason: "the command contains a NUL byte",
        });
    }
    Ok(())
}
