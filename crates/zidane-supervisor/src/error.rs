//! The one error type of the supervisor, its client and its context.

use std::io;
use std::path::PathBuf;

/// What can go wrong talking to, or running, the per-user supervisor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SupervisorError {
    /// This platform has no supervisor yet: detached tasks are not offered here.
    #[error("detached tasks are not available on this platform yet")]
    Unsupported,
    /// The supervisor could not be reached, nor started.
    #[error("the supervisor at {socket} could not be reached: {source}")]
    Unreachable {
        /// Its socket.
        socket: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file or directory of its state could not be read or written.
    #[error("{path}: {source}")]
    State {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A message on the socket, or a state file, was not what it should be.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being read.
        what: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The supervisor refused a request, and said why.
    #[error("{0}")]
    Refused(String),
    /// No task has this id (or no one task starts with this prefix).
    #[error("no detached task {0}")]
    UnknownTask(String),
    /// More than one task starts with this prefix.
    #[error("`{prefix}` names more than one task: {matches}")]
    Ambiguous {
        /// What was typed.
        prefix: String,
        /// The ids it matches.
        matches: String,
    },
    /// The task's monitor could not be started, or did not say it started the task.
    #[error("the task could not be started: {0}")]
    StartFailed(String),
}

impl SupervisorError {
    pub(crate) fn state(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| Self::State { path, source }
    }
}

/// The result of this crate's operations.
pub type Result<T, E = SupervisorError> = std::result::Result<T, E>;
