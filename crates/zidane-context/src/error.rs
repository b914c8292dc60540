//! The one error type of this crate.

use std::path::PathBuf;

use crate::{ExecutionHandle, TaskId};

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
    #[error("working directory {path} is not usable: {source}")]
    InvalidCwd {
        /// The directory that was asked for.
        path: PathBuf,
        /// The underlying OS error.
        #[source]
        source: std::io::Error,
    },
    /// The output directory for task logs could not be created or used.
    #[error("output directory {path} is not usable: {source}")]
    OutputDir {
        /// The directory that was asked for.
        path: PathBuf,
        /// The underlying OS error.
        #[source]
        source: std::io::Error,
    },
    /// The process could not be started.
    #[error("failed to spawn {command:?}: {source}")]
    Spawn {
        /// The command that was being started.
        command: String,
        /// The underlying OS error.
        #[source]
        source: std::io::Error,
    },
    /// A task that exists but cannot be operated on in its current state.
    #[error("task {task_id}: {reason}")]
    Task {
        /// The task concerned.
        task_id: TaskId,
        /// What went wrong.
        reason: String,
    },
    /// Any other I/O failure, with the path it concerned when there is one.
    #[error("I/O error{}: {source}", path.as_ref().map(|p| format!(" on {}", p.display())).unwrap_or_default())]
    Io {
        /// The path concerned, if any.
        path: Option<PathBuf>,
        /// The underlying OS error.
        #[source]
        source: std::io::Error,
    },
}

impl ContextError {
    /// Shorthand for [`ContextError::Unsupported`].
    pub fn unsupported(operation: &'static str) -> Self {
        Self::Unsupported { operation }
    }

    /// Shorthand for [`ContextError::Io`] on a path.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: Some(path.into()),
            source,
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = ContextError> = std::result::Result<T, E>;
