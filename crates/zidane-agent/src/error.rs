//! The one error type of this crate.

use std::path::PathBuf;

use zidane_context::{ContextError, TaskId};
use zidane_tools::ToolError;

use zidane_llm::ModelError;

/// What can go wrong when building, running or tearing down an [`Agent`](crate::Agent).
///
/// A run that the model ends, that hits the step limit or that is cancelled is not an
/// error: it is a [`RunOutcome`](crate::RunOutcome) with a [`StopReason`](crate::StopReason).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The agent was destroyed; nothing more can run on it.
    #[error("the agent was destroyed")]
    Destroyed,
    /// A run was asked for while another one is in flight on the same agent.
    #[error("a run is already in flight on this agent")]
    Busy,
    /// `run` was given an empty prompt while no task notification was pending: there is
    /// nothing to resume with.
    #[error("cannot run without a prompt: no task notification is pending")]
    NothingPending,
    /// `run` was called on an agent its host drives ([`Agent::host_driven`]): it has no
    /// model. The host calls tools and drains notifications itself.
    ///
    /// [`Agent::host_driven`]: crate::Agent::host_driven
    #[error("this agent is driven by its host and has no model to run")]
    HostDriven,
    /// The model failed.
    #[error("model error: {0}")]
    Model(ModelError),
    /// The execution context failed where the agent itself needed it (creating its
    /// handle). Tool calls report context errors to the model instead.
    #[error("execution context error: {0}")]
    Context(ContextError),
    /// A tool could not be registered (a duplicate name or alias).
    #[error("tool registry error: {0}")]
    Tools(ToolError),
    /// A session id that cannot name a directory.
    #[error("invalid session id {id:?}: {reason}")]
    InvalidSessionId {
        /// What was given.
        id: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A session file could not be read, written or removed.
    #[error("session I/O error on {}: {cause}", path.display())]
    SessionIo {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// Another agent (in this process or another) holds the session: two writers would
    /// lose each other's turns.
    #[error("session {session_id:?} is in use by another agent{}", holder_pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default())]
    SessionLocked {
        /// The session asked for.
        session_id: String,
        /// The process holding it, when its lock file says.
        holder_pid: Option<u32>,
    },
    /// A session or tasks directory that someone else could tamper with: a symlink, a
    /// directory of another user, or one writable by group or others. Nothing was written.
    #[error("refusing session directory {}: {reason}", path.display())]
    UnsafeSessionDir {
        /// The directory concerned.
        path: PathBuf,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A run the [`WakeLoop`](crate::WakeLoop) made on its own failed; the message is
    /// that run's error (see [`WakeLoop::next_wake`](crate::WakeLoop::next_wake)).
    #[error("a wake-up run failed: {0}")]
    WakeRun(String),
    /// A session file is not valid session JSON.
    #[error("session file {} is not a valid session: {cause}", path.display())]
    SessionFormat {
        /// The file concerned.
        path: PathBuf,
        /// The JSON error. Printed in the message, so not also a `source()`.
        cause: serde_json::Error,
    },
}

/// Why a host could not reach a task's input or terminal
/// ([`Agent::write_task_input`](crate::Agent::write_task_input),
/// [`read_task_screen`](crate::Agent::read_task_screen),
/// [`resize_task`](crate::Agent::resize_task),
/// [`follow_task_output`](crate::Agent::follow_task_output)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AttachError {
    /// The id is not a task id (`bash_N`); nothing was asked of the context.
    #[error("not a task id: {0}")]
    InvalidId(ContextError),
    /// The agent has no execution handle yet, so it has started no task.
    #[error("this agent has started no background task")]
    NoHandle,
    /// No task of that id belongs to this agent's handle.
    #[error("no background task {0} on this agent")]
    Unknown(TaskId),
    /// The context refused: the task takes no input or has no terminal, has ended, or
    /// the context has neither.
    #[error("the execution context refused: {0}")]
    Context(ContextError),
}

/// Why [`Agent::kill_background_task`](crate::Agent::kill_background_task) killed
/// nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KillTaskError {
    /// The id is not a task id (`bash_N`); nothing was asked of the context.
    #[error("not a task id: {0}")]
    InvalidId(ContextError),
    /// The agent has no execution handle yet, so it has started no task.
    #[error("this agent has started no background task")]
    NoHandle,
    /// No task of that id belongs to this agent's handle.
    #[error("no background task {0} on this agent")]
    Unknown(TaskId),
    /// The context could not kill it (or has no background tasks at all).
    #[error("the execution context could not kill the task: {0}")]
    Context(ContextError),
}

/// `From` for each error that `?` wraps in its own variant. Those variants print the
/// wrapped error in their message, so it is not also their `source()` (which
/// `#[from]` would make it): a reporter walking the chain would print it twice.
macro_rules! wraps {
    ($($error:ty => $variant:ident),+ $(,)?) => {$(
        impl From<$error> for AgentError {
            fn from(error: $error) -> Self {
                Self::$variant(error)
            }
        }
    )+};
}

wraps!(ModelError => Model, ContextError => Context, ToolError => Tools);

/// The result type of this crate.
pub type Result<T, E = AgentError> = std::result::Result<T, E>;
