//! The one error type of this crate.

use std::path::PathBuf;

use crate::handle::ExecutionHandle;
use crate::task_id::TaskId;

/// What can go wrong when talking to an [`ExecutionContext`](crate::ExecutionContext).
///
/// Every variant is a distinct situation a caller can match on; none of them means
/// that something was half done. Bad input is refused before anything is spawned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// The context does not implement this operation (e.g. background tasks).
    #[error("{operation} is not supported in this execution context")]
    Unsupported {
        /// The operation that was asked for, e.g. `"exec_background"`.
        operation: &'static str,
    },
    /// No machine of the fleet carries every label a start asked for; nothing started.
    #[error("no worker carries the labels {wanted}: {known}")]
    NoMatchingWorker {
        /// The labels asked for, as the model wrote them (`gpu, linux`).
        wanted: String,
        /// The workers and the labels each carries, or why none could be asked.
        known: String,
    },
    /// The handle was never created by this context.
    #[error("unknown execution handle {0}")]
    UnknownHandle(ExecutionHandle),
    /// The handle was destroyed; nothing more can run on it.
    #[error("execution handle {0} was destroyed")]
    Destroyed(ExecutionHandle),
    /// A task id that is not `bash_<digits>`.
    #[error("invalid task id {input:?}: {reason}")]
    InvalidTaskId {
        /// What was given.
        input: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// The per-context cap on running background tasks was reached.
    #[error(
        "too many background tasks: {limit} are already running (wait for one to end or kill one)"
    )]
    TooManyTasks {
        /// The cap that was hit.
        limit: usize,
    },
    /// The command cannot be run as given (empty, or contains a NUL byte).
    #[error("invalid command: {reason}")]
    InvalidCommand {
        /// Why it was refused.
        reason: &'static str,
    },
    /// The working directory does not exist or is not a directory.
    #[error("working directory {path} is not usable: {cause}")]
    InvalidCwd {
        /// The directory that was asked for.
        path: PathBuf,
        /// The underlying OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// The context's sandbox does not let this be read: a credential store, a denied
    /// path, another process's `/proc`. `rule` is the line the model is told.
    #[error("{rule}")]
    SandboxDenied {
        /// The path asked for.
        path: PathBuf,
        /// Which rule refuses it, in one line.
        rule: String,
    },
    /// The output directory for task logs could not be created or used.
    #[error("output directory {path} is not usable: {cause}")]
    OutputDir {
        /// The directory that was asked for.
        path: PathBuf,
        /// The underlying OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// The process could not be started. The message gives the cause first, then at
    /// most [`COMMAND_EXCERPT_CHARS`] characters of the command: a command can be
    /// megabytes long (that is often why it could not start). Build it with
    /// [`ContextError::spawn`].
    #[error("{cause}: could not start the command {}", quote_excerpt(.command, *.command_bytes))]
    Spawn {
        /// The start of the command: all of it when it is short, else its first
        /// [`COMMAND_EXCERPT_CHARS`] characters.
        command: String,
        /// The length of the whole command, in bytes.
        command_bytes: usize,
        /// The underlying OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// A task that exists but cannot be operated on in its current state.
    #[error("task {task_id}: {reason}")]
    Task {
        /// The task concerned.
        task_id: TaskId,
        /// What went wrong.
        reason: String,
    },
    /// Input was written to a task started without it (its stdin closed).
    #[error(
        "task {task_id} takes no input: it was started with its stdin closed (start it with stdin \"pipe\" or a tty to write to it)"
    )]
    NoInput {
        /// The task concerned.
        task_id: TaskId,
    },
    /// Input was written to a task whose input was closed already (an end-of-file
    /// was sent).
    #[error("task {task_id}: its input was closed already (end of input was sent)")]
    InputClosed {
        /// The task concerned.
        task_id: TaskId,
    },
    /// Input was written to (or a screen asked of) a task that has ended.
    #[error("task {task_id} has ended: it takes no more input")]
    TaskEnded {
        /// The task concerned.
        task_id: TaskId,
    },
    /// A terminal's screen or size was asked of a task that runs without one.
    #[error("task {task_id} has no terminal: it was not started with a tty")]
    NotATerminal {
        /// The task concerned.
        task_id: TaskId,
    },
    /// Any other I/O failure, with the path it concerned when there is one.
    #[error("I/O error{}: {cause}", path.as_ref().map(|p| format!(" on {}", p.display())).unwrap_or_default())]
    Io {
        /// The path concerned, if any.
        path: Option<PathBuf>,
        /// The underlying OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
}

impl ContextError {
    /// Shorthand for [`ContextError::Unsupported`].
    pub fn unsupported(operation: &'static str) -> Self {
        Self::Unsupported { operation }
    }

    /// [`ContextError::Spawn`] for `command`, keeping only its start.
    ///
    /// ```
    /// use zidane_context::{COMMAND_EXCERPT_CHARS, ContextError};
    /// let huge = "x".repeat(10 << 20);
    /// let too_long = std::io::Error::from(std::io::ErrorKind::ArgumentListTooLong);
    /// let error = ContextError::spawn(&huge, too_long);
    /// let message = error.to_string();
    /// assert!(message.starts_with("argument list too long"));
    /// assert!(message.ends_with("…\" (10485760 bytes)"));
    /// assert!(message.len() < COMMAND_EXCERPT_CHARS + 100);
    /// ```
    pub fn spawn(command: &str, source: std::io::Error) -> Self {
        Self::Spawn {
            command: command_excerpt(command).to_owned(),
            command_bytes: command.len(),
            cause: source,
        }
    }

    /// Shorthand for [`ContextError::Io`] on a path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: Some(path.into()),
            cause: source,
        }
    }
}

/// The most characters of a command an error quotes.
pub const COMMAND_EXCERPT_CHARS: usize = 200;

/// The start of `command` that errors and logs quote: all of it when it has at most
/// [`COMMAND_EXCERPT_CHARS`] characters, else its first [`COMMAND_EXCERPT_CHARS`].
///
/// ```
/// use zidane_context::{COMMAND_EXCERPT_CHARS, command_excerpt};
/// assert_eq!(command_excerpt("ls -l"), "ls -l");
/// assert_eq!(command_excerpt(&"é".repeat(500)).chars().count(), COMMAND_EXCERPT_CHARS);
/// ```
pub fn command_excerpt(command: &str) -> &str {
    command
        .char_indices()
        .nth(COMMAND_EXCERPT_CHARS)
        .map_or(command, |(at, _)| &command[..at])
}

/// `"ls -l"`, or `"xxx…" (10485760 bytes)` when `excerpt` is only the start.
fn quote_excerpt(excerpt: &str, command_bytes: usize) -> String {
    if excerpt.len() < command_bytes {
        format!("{:?} ({command_bytes} bytes)", format!("{excerpt}…"))
    } else {
        format!("{excerpt:?}")
    }
}

/// The result type of this crate.
pub type Result<T, E = ContextError> = std::result::Result<T, E>;
