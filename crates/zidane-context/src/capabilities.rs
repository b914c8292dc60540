//! What a context can do with background tasks.

use serde::{Deserialize, Serialize};

/// What an execution context can do, beyond foreground `exec` and `read_file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Capabilities {
    /// Whether, and how long, background tasks live.
    pub detached_tasks: DetachedTasks,
}

impl Capabilities {
    /// Capabilities with the given background-task support.
    pub const fn new(detached_tasks: DetachedTasks) -> Self {
        Self { detached_tasks }
    }
}

/// How long background tasks of a context live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DetachedTasks {
    /// No background tasks at all.
    #[default]
    None,
    /// Tasks die with the host process (the local `ProcessContext`).
    ProcessLifetime,
    /// Tasks survive the host process (a remote or durable runner).
    Durable,
}

impl DetachedTasks {
    /// Whether background tasks can be started at all.
    pub const fn supported(self) -> bool {
        !matches!(self, Self::None)
    }
}
