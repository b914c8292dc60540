//! What the orphan sweep reports: the processes it ended and the hosts they belonged
//! to, and what [`find_orphans`](crate::find_orphans) lists without ending any. Public
//! on every platform; only Unix hosts leave orphans to sweep (on Windows a task's job
//! object ends with its host).

use zidane_context::TaskId;

/// A process whose owning host is no longer alive — a task, or a descendant of one: one
/// the orphan sweep ended, or one [`find_orphans`](crate::find_orphans) found running.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SweptProcess {
    /// Its pid (once swept, free again, and possibly reused by the time you read this).
    pub pid: u32,
    /// Its command line when it was found (just before a sweep ended it), arguments
    /// joined by spaces; empty if it could not be read.
    pub command_line: String,
    /// The host that started it and is gone.
    pub owner: OrphanOwner,
    /// The id of the background task it belonged to in its owner's context; `None` for
    /// a process of a foreground command.
    pub task_id: Option<TaskId>,
}

/// The host process named by an orphan's marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct OrphanOwner {
    /// The host's pid when it ran.
    pub pid: u32,
    /// The host's start time in clock ticks since boot (field 22 of
    /// `/proc/<pid>/stat`): with the pid, it names that host and no later process that
    /// reuses its pid.
    pub start_time: u64,
}
