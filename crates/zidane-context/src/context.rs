//! The `ExecutionContext` trait.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::capabilities::Capabilities;
use crate::error::{ContextError, Result};
use crate::exec::{ExecOptions, ExecOutput, ReadRange, ReadResult};
use crate::handle::ExecutionHandle;
use crate::interactive::{Screen, TaskInput, TtySize};
use crate::output::OutputChunk;
use crate::probe::{Probe, ProbeOutcome};
use crate::sandbox::SandboxReport;
use crate::task::{
    BackgroundOptions, BackgroundStarted, ExitCallback, Naming, TaskEntry, TaskExitInfo,
};
use crate::task_id::TaskId;

/// Where commands run: the local machine, a container, a remote runner.
///
/// Used as `Arc<dyn ExecutionContext>`. Foreground [`exec`](Self::exec) and
/// [`read_file`](Self::read_file) are required; the background methods are optional —
/// their default bodies return [`ContextError::Unsupported`] — and
/// [`capabilities`](Self::capabilities) says whether they work.
///
/// Guarantees an implementation must keep (the layers above rely on them):
/// - `on_exit` fires **exactly once** per task, whatever races (exit, kill, destroy,
///   reassign), and only after the task's log is flushed and closed.
/// - `kill_background` is idempotent and bounded in time; an unknown id is `Ok(None)`.
/// - `wait_background` never misses an exit that races with the wait.
/// - `destroy` kills every surviving task of the handle and is idempotent.
#[async_trait]
pub trait ExecutionContext: Send + Sync {
    /// What this context can do. The default says: no background tasks.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// The shell commands run under, as a path (`/bin/bash`, `/bin/sh`), so that tools
    /// can tell the model which dialect to write. The default is `None`: not said (a
    /// tool then says "shell" and nothing more).
    fn shell(&self) -> Option<String> {
        None
    }

    /// What this context's sandbox enforces, for the tools to tell the model. The
    /// default: no sandbox ([`SandboxReport::off`]).
    fn sandbox(&self) -> SandboxReport {
        SandboxReport::off()
    }

    /// A new handle: the scope of one session's tasks.
    async fn create_handle(&self) -> Result<ExecutionHandle>;

    /// Kills every surviving task of the handle (TERM, then KILL after the grace
    /// period), flushes and closes their logs, and forgets the handle. Idempotent.
    async fn destroy(&self, handle: ExecutionHandle) -> Result<()>;

    /// Runs a command to completion. A timeout or cancellation kills its whole process
    /// group; huge output keeps its tail.
    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput>;

    /// Reads a window of a file's lines (the seam the `read_file` tool uses).
    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult>;

    /// Starts a background task and returns as soon as the process exists.
    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        let _ = (handle, command, options);
        Err(ContextError::unsupported("exec_background"))
    }

    /// Kills a task's process group (TERM, KILL after the grace period) and resolves
    /// once it is gone and its log is closed. `Ok(None)` for an unknown id; a task that
    /// already ended returns its cached exit.
    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        let _ = (handle, task_id);
        Err(ContextError::unsupported("kill_background"))
    }

    /// Every task of the handle, running and ended (ended ones stay until `destroy`).
    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        let _ = handle;
        Err(ContextError::unsupported("list_background"))
    }

    /// Waits for a task to end: `Some(exit)` on exit (at once if it already ended),
    /// `None` on timeout, cancellation or an unknown id.
    async fn wait_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Option<TaskExitInfo>> {
        let _ = (handle, task_id, timeout, cancel);
        Err(ContextError::unsupported("wait_background"))
    }

    /// Follows a task's log: waits until it holds bytes past `offset` or the task has
    /// ended, then returns at most `max` bytes from `offset`. An `offset` past the end
    /// of the log is answered at once with an empty chunk whose offset is where the log
    /// ends now (so `u64::MAX` asks "where does it end?"). `Ok(None)` for an unknown id.
    /// Cancelled by dropping the future. Waiting must not poll: a context wakes the
    /// caller when the task writes or ends.
    async fn follow_output(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        offset: u64,
        max: usize,
    ) -> Result<Option<OutputChunk>> {
        let _ = (handle, task_id, offset, max);
        Err(ContextError::unsupported("follow_output"))
    }

    /// Names a task started [`held`](BackgroundOptions::held): it takes the next id of
    /// its handle's sequence, its log is renamed to match, and it is listed from now
    /// on; its exit, stall and output keep flowing where they did. A task that ended
    /// first stays held ([`Naming::Ended`]); naming and ending never race. `Ok(None)`
    /// for an id that is not a held task of the handle. The default,
    /// [`Naming::AtStart`], is the answer of a context that ignores `held`.
    async fn name_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Naming>> {
        let _ = (handle, task_id);
        Ok(Some(Naming::AtStart))
    }

    /// Removes the log of a held task that ended unnamed: a foreground call that
    /// answered from it leaves no task behind (held tasks are never listed; `destroy`
    /// still ends whatever left its group). `Ok(false)` when `task_id` is not a held
    /// task of the handle that ended (a running task keeps its log). The default does
    /// nothing, for a context that ignores `held`.
    async fn forget_background(&self, handle: ExecutionHandle, task_id: TaskId) -> Result<bool> {
        let _ = (handle, task_id);
        Ok(false)
    }

    /// Moves every running task of `from` to `to`, replacing its exit callback with
    /// `on_exit`. Returns the moved entries.
    async fn reassign_background_tasks(
        &self,
        from: ExecutionHandle,
        to: ExecutionHandle,
        on_exit: Option<ExitCallback>,
    ) -> Result<Vec<TaskEntry>> {
        let _ = (from, to, on_exit);
        Err(ContextError::unsupported("reassign_background_tasks"))
    }

    /// Writes input to a running task started to take it (`stdin: pipe`, or a `tty`):
    /// bytes as they are, or the end of input. Resolves once the bytes are written (a
    /// task that does not read its input for long gets an error, not a hang).
    /// `Ok(None)` for an unknown id; [`ContextError::NoInput`] for a task started
    /// without input, [`ContextError::TaskEnded`] for one that ended,
    /// [`ContextError::InputClosed`] after an end of input was sent to a pipe.
    async fn write_input(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        input: TaskInput,
    ) -> Result<Option<()>> {
        let _ = (handle, task_id, input);
        Err(ContextError::unsupported("write_input"))
    }

    /// What a task's terminal shows now. `Ok(None)` for an unknown id;
    /// [`ContextError::NotATerminal`] for a task without a terminal. An ended task's
    /// screen is the last one it showed.
    async fn read_screen(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Screen>> {
        let _ = (handle, task_id);
        Err(ContextError::unsupported("read_screen"))
    }

    /// Runs one readiness probe where task `task_id` runs, bounded by `timeout`: a
    /// connect to a port or a GET of a URL on that task's machine (a task on a worker
    /// listens on the worker's ports). A context that cannot reach its tasks' machine
    /// keeps the default, [`ContextError::Unsupported`].
    async fn probe(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        probe: Probe,
        timeout: Duration,
    ) -> Result<ProbeOutcome> {
        let _ = (handle, task_id, probe, timeout);
        Err(ContextError::unsupported("probe"))
    }

    /// Records that the model of `handle`'s session was told these tasks' ends (or took
    /// them by a kill, a completed wait, or a read of their log). A context that shares
    /// tasks across sessions (detached tasks, owned by the per-user supervisor) records
    /// it so that no other session tells them again: their entries are then listed
    /// [`reported`](crate::TaskEntry::reported). The default does nothing: a context
    /// whose tasks belong to one session has nothing to record.
    async fn exits_told(&self, handle: ExecutionHandle, task_ids: &[TaskId]) -> Result<()> {
        let _ = (handle, task_ids);
        Ok(())
    }

    /// Resizes a running task's terminal (the program gets `SIGWINCH`). `Ok(None)` for
    /// an unknown id; [`ContextError::NotATerminal`] for a task without a terminal.
    async fn resize(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        size: TtySize,
    ) -> Result<Option<()>> {
        let _ = (handle, task_id, size);
        Err(ContextError::unsupported("resize"))
    }
}
