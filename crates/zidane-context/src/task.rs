//! The types of a background task's life: options in, started, entry, exit, stall.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::command::CommandSpec;
use crate::interactive::{StdinMode, TtySize};
use crate::limits::TaskLimits;
use crate::signal::Signal;
use crate::task_id::TaskId;

/// Where a background task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Still running (or its output has not reached EOF yet).
    Running,
    /// Ended on its own, whatever its exit code or signal.
    Exited,
    /// Ended by our kill: `kill_background`, or `destroy` of its handle.
    Killed,
    /// The machine or worker that ran it was lost (a durable context's worker died):
    /// how the task ended is unknown, and it is not running any more.
    Lost,
}

impl TaskStatus {
    /// Whether the task has ended.
    pub const fn is_terminal(self) -> bool {
        !matches!(self, Self::Running)
    }

    /// The lowercase name used on the wire: `running`, `exited`, `killed`, `lost`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited => "exited",
            Self::Killed => "killed",
            Self::Lost => "lost",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The exit code of a [`TaskStatus::Lost`] task, whose real code nobody saw.
pub const LOST_EXIT_CODE: i32 = -1;

/// How a background task ended: what `on_exit` receives and `kill`/`wait` return.
///
/// A context builds one with [`new`](Self::new) (or [`TaskEntry::exit_at`]) and the
/// builder methods; users receive it.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{KillReason, Signal, TaskExitInfo, TaskId, TaskStatus};
///
/// let exit = TaskExitInfo::new(
///     TaskId::parse("bash_1")?,
///     "npm run dev",
///     "/tmp/tasks/bash_1.log",
///     TaskStatus::Killed,
///     Signal::TERM.exit_code(),
///     Duration::from_millis(1200),
/// )
/// .signal(Signal::TERM)
/// .kill_reason(KillReason::Requested);
/// assert_eq!(exit.exit_code, 143);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        description = "How a background task ended: what `on_exit` receives and `kill`/`wait` return."
    )
)]
#[non_exhaustive]
pub struct TaskExitInfo {
    /// The task.
    pub task_id: TaskId,
    /// `Exited`, `Killed` or `Lost` (never `Running`).
    pub status: TaskStatus,
    /// The exit code; `128 + signo` when a signal ended the task (143 for SIGTERM);
    /// [`LOST_EXIT_CODE`](crate::LOST_EXIT_CODE) when the task was `Lost`.
    pub exit_code: i32,
    /// The signal that ended the task, if one did.
    pub signal: Option<Signal>,
    /// The task's log file.
    pub output_path: PathBuf,
    /// From start to settle.
    #[serde(rename = "duration_ms", with = "crate::duration_ms")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub duration: Duration,
    /// The command as given.
    pub command: String,
    /// Set when the task was killed after its shell (the leader) had already exited on
    /// its own, while something it started still held the output open: the shell's own
    /// exit code. `exit_code` and `signal` then say what our kill did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_exit_code: Option<i32>,
    /// Set when some of the task's output could not be written to its log (a full
    /// disk, an I/O error): the log is incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_write_failure: Option<LogWriteFailure>,
    /// Why our kill ended the task, when one did (`status` is then `Killed`): a kill
    /// asked for, the handle's destroy, or a budget running out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_reason: Option<KillReason>,
    /// For a task that failed inside its context's sandbox on a denial, one line
    /// naming the path and the rule it met (`sandbox: ~/.bashrc is outside the
    /// writable roots (workspace-write)`), for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_denial: Option<String>,
    /// Whether the task was detached (started with `BackgroundOptions::detach`): it
    /// belonged to the per-user supervisor, not to a host, so a notification can say so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detached: bool,
}

impl TaskExitInfo {
    /// The exit of `task_id`, which ran `command` into `output_path`: ended with
    /// `status` (never `Running`) and `exit_code` after `duration`, with no signal and
    /// none of the optional facts set.
    pub fn new(
        task_id: TaskId,
        command: impl Into<String>,
        output_path: impl Into<PathBuf>,
        status: TaskStatus,
        exit_code: i32,
        duration: Duration,
    ) -> Self {
        Self {
            task_id,
            status,
            exit_code,
            signal: None,
            output_path: output_path.into(),
            duration,
            command: command.into(),
            leader_exit_code: None,
            log_write_failure: None,
            kill_reason: None,
            sandbox_denial: None,
            detached: false,
        }
    }

    /// Sets the signal that ended the task.
    #[must_use]
    pub fn signal(mut self, signal: impl Into<Option<Signal>>) -> Self {
        self.signal = signal.into();
        self
    }

    /// Sets the exit code of the task's shell when the task was killed after it.
    #[must_use]
    pub fn leader_exit_code(mut self, code: impl Into<Option<i32>>) -> Self {
        self.leader_exit_code = code.into();
        self
    }

    /// Sets what of the task's output its log could not take.
    #[must_use]
    pub fn log_write_failure(mut self, failure: impl Into<Option<LogWriteFailure>>) -> Self {
        self.log_write_failure = failure.into();
        self
    }

    /// Sets why our kill ended the task.
    #[must_use]
    pub fn kill_reason(mut self, reason: impl Into<Option<KillReason>>) -> Self {
        self.kill_reason = reason.into();
        self
    }

    /// Sets the sandbox rule the task met.
    #[must_use]
    pub fn sandbox_denial(mut self, line: impl Into<Option<String>>) -> Self {
        self.sandbox_denial = line.into();
        self
    }

    /// Sets whether the task was detached (see [`detached`](Self::detached)).
    #[must_use]
    pub fn detached(mut self, detached: bool) -> Self {
        self.detached = detached;
        self
    }
}

/// Why a task was killed: what tells a model's own `shell_kill` from the end of its
/// session and from a budget that ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum KillReason {
    /// `kill_background`: the model's `shell_kill`, or a host's own kill.
    Requested,
    /// `destroy` of the task's handle: its session ended.
    Destroyed,
    /// A person stopped it from outside the session (`zidane kill`).
    User,
    /// The task ran longer than its wall-time budget.
    WallTime {
        /// The budget.
        #[serde(rename = "budget_ms", with = "crate::duration_ms")]
        #[cfg_attr(feature = "schema", schemars(with = "u64"))]
        budget: Duration,
    },
    /// The task's processes used more CPU time than its budget.
    CpuTime {
        /// The budget.
        #[serde(rename = "budget_ms", with = "crate::duration_ms")]
        #[cfg_attr(feature = "schema", schemars(with = "u64"))]
        budget: Duration,
    },
}

impl KillReason {
    /// Whether a budget, not a person or a teardown, ended the task.
    pub const fn is_budget(self) -> bool {
        matches!(self, Self::WallTime { .. } | Self::CpuTime { .. })
    }
}

/// Output of a task that its log could not take: the bytes lost and why.
///
/// Bytes past an output cap are not counted here: the cap drops them on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogWriteFailure {
    /// Bytes the task wrote that are not in its log.
    pub bytes_dropped: u64,
    /// The first error writing the log, as the OS reported it
    /// (e.g. `No space left on device (os error 28)`).
    pub error: String,
}

impl fmt::Display for LogWriteFailure {
    /// `7906957 bytes not written: No space left on device (os error 28)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes not written: {}",
            self.bytes_dropped, self.error
        )
    }
}

/// One row of [`list_background`](crate::ExecutionContext::list_background): a task,
/// running or ended.
///
/// A context builds one with [`running`](Self::running) and ends it once with
/// [`end`](Self::end) (or [`ended`](Self::ended)); users receive it. What changes when the
/// task ends is its [`state`](Self::state), which then carries the task's
/// [`TaskExitInfo`]: an entry is never half-ended. Its JSON form is flat
/// (`status`, `exit_code`, `signal`, `ended_at`, … beside the running-task fields).
///
/// ```
/// use std::time::Duration;
/// use chrono::Utc;
/// use zidane_context::{TaskEntry, TaskId, TaskStatus};
///
/// let task_id = TaskId::parse("bash_1")?;
/// let mut entry = TaskEntry::running(task_id, 42, "make", "/work", "/tmp/bash_1.log", Utc::now());
/// assert_eq!(entry.status(), TaskStatus::Running);
/// let exit = entry.exit_after(TaskStatus::Exited, 0, Duration::from_secs(3));
/// assert!(entry.end(exit));
/// assert_eq!(entry.exit_code(), Some(0));
/// assert_eq!(entry.exit().map(|exit| exit.duration), Some(Duration::from_secs(3)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        description = "One row of [`list_background`](crate::ExecutionContext::list_background): a task, running or ended."
    )
)]
#[serde(try_from = "EntryForm", into = "EntryForm")]
#[non_exhaustive]
pub struct TaskEntry {
    /// The task.
    pub task_id: TaskId,
    /// The process id of the task's leader (also its process-group id).
    pub pid: u32,
    /// The command as given.
    pub command: String,
    /// The working directory it ran in.
    pub cwd: PathBuf,
    /// The task's log file.
    pub output_path: PathBuf,
    /// When the task started.
    pub started_at: DateTime<Utc>,
    /// Bytes the task has written so far (including bytes dropped past an output cap).
    pub bytes_written: u64,
    /// Whether the task takes input ([`write_input`](crate::ExecutionContext::write_input)):
    /// `pipe` for a task started with its stdin open or with a terminal.
    pub stdin: StdinMode,
    /// The task's terminal and its current size, when it runs in one.
    pub tty: Option<TtySize>,
    /// Running, or ended with how it ended.
    pub state: TaskState,
    /// Whether the task is detached ([`BackgroundOptions::detach`]): it outlives the
    /// host that started it and belongs to the per-user supervisor.
    pub detached: bool,
    /// Whether its end is another session's to tell (a detached or durable task is
    /// shared by the sessions of a workspace): that session's model was told it, or that
    /// session is telling it now (it started the task, or claimed its end first). This
    /// session does not tell it.
    pub reported: bool,
    /// Where the task runs when not on the host's machine: the id of the fleet's worker
    /// that runs it (`w2`). `None` for a task of this machine.
    pub runs_on: Option<String>,
}

/// Where a listed task is: running, or ended with its exit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Still running (or its output has not reached EOF yet).
    Running,
    /// Ended: how, as `on_exit` received it. It settled (exited and its log was closed)
    /// `duration` after the entry's `started_at`.
    Ended(TaskExitInfo),
}

impl TaskEntry {
    /// A running task that has written nothing yet, its stdin closed and no terminal.
    pub fn running(
        task_id: TaskId,
        pid: u32,
        command: impl Into<String>,
        cwd: impl Into<PathBuf>,
        output_path: impl Into<PathBuf>,
        started_at: DateTime<Utc>,
    ) -> Self {
        Self {
            task_id,
            pid,
            command: command.into(),
            cwd: cwd.into(),
            output_path: output_path.into(),
            started_at,
            bytes_written: 0,
            stdin: StdinMode::Closed,
            tty: None,
            state: TaskState::Running,
            detached: false,
            reported: false,
            runs_on: None,
        }
    }

    /// Sets whether the task is detached (see [`detached`](Self::detached)).
    #[must_use]
    pub fn detached(mut self, detached: bool) -> Self {
        self.detached = detached;
        self
    }

    /// Sets whether the task's end was already told to another session (see
    /// [`reported`](Self::reported)).
    #[must_use]
    pub fn reported(mut self, reported: bool) -> Self {
        self.reported = reported;
        self
    }

    /// Sets the worker that runs the task (see [`runs_on`](Self::runs_on)).
    #[must_use]
    pub fn runs_on(mut self, worker: Option<String>) -> Self {
        self.runs_on = worker;
        self
    }

    /// Sets what the task's stdin is.
    #[must_use]
    pub fn stdin(mut self, stdin: StdinMode) -> Self {
        self.stdin = stdin;
        self
    }

    /// Sets the task's terminal (`None`: it has none).
    #[must_use]
    pub fn tty(mut self, tty: impl Into<Option<TtySize>>) -> Self {
        self.tty = tty.into();
        self
    }

    /// Sets the bytes the task has written so far.
    #[must_use]
    pub fn bytes_written(mut self, bytes: u64) -> Self {
        self.bytes_written = bytes;
        self
    }

    /// The entry ended with `exit` (see [`end`](Self::end)).
    #[must_use]
    pub fn ended(mut self, exit: TaskExitInfo) -> Self {
        self.end(exit);
        self
    }

    /// Ends a running task with `exit`, whose `status` is never `Running`; `false` (and
    /// nothing changes) when the task had already ended: an ended task never changes
    /// again.
    pub fn end(&mut self, exit: TaskExitInfo) -> bool {
        if !self.is_running() {
            return false;
        }
        self.state = TaskState::Ended(exit);
        true
    }

    /// The exit of this task, ended `duration` after it started with `status` and
    /// `exit_code`: its id, command, log path and whether it is detached filled in from
    /// the entry. Set the rest with [`TaskExitInfo`]'s builder methods.
    pub fn exit_after(
        &self,
        status: TaskStatus,
        exit_code: i32,
        duration: Duration,
    ) -> TaskExitInfo {
        TaskExitInfo::new(
            self.task_id,
            self.command.clone(),
            self.output_path.clone(),
            status,
            exit_code,
            duration,
        )
        .detached(self.detached)
    }

    /// The exit of this task, ended at `ended_at` (see [`exit_after`](Self::exit_after));
    /// a time before its start counts as no time at all.
    pub fn exit_at(
        &self,
        status: TaskStatus,
        exit_code: i32,
        ended_at: DateTime<Utc>,
    ) -> TaskExitInfo {
        let duration = (ended_at - self.started_at).to_std().unwrap_or_default();
        self.exit_after(status, exit_code, duration)
    }

    /// Whether the task is still running.
    pub const fn is_running(&self) -> bool {
        matches!(self.state, TaskState::Running)
    }

    /// Running, exited, killed or lost.
    pub const fn status(&self) -> TaskStatus {
        match &self.state {
            TaskState::Running => TaskStatus::Running,
            TaskState::Ended(exit) => exit.status,
        }
    }

    /// How the task ended, or `None` while it runs.
    pub const fn exit(&self) -> Option<&TaskExitInfo> {
        match &self.state {
            TaskState::Running => None,
            TaskState::Ended(exit) => Some(exit),
        }
    }

    /// The exit info of an ended task (a copy), or `None` while it runs.
    pub fn exit_info(&self) -> Option<TaskExitInfo> {
        self.exit().cloned()
    }

    /// The exit code, once the task has ended.
    pub fn exit_code(&self) -> Option<i32> {
        self.exit().map(|exit| exit.exit_code)
    }

    /// The signal that ended the task, if one did.
    pub fn signal(&self) -> Option<Signal> {
        self.exit().and_then(|exit| exit.signal)
    }

    /// When the task settled (exited and its log was closed), once it has.
    pub fn ended_at(&self) -> Option<DateTime<Utc>> {
        self.exit()
            .map(|exit| end_time(self.started_at, exit.duration))
    }

    /// See [`TaskExitInfo::leader_exit_code`]; `None` while the task runs.
    pub fn leader_exit_code(&self) -> Option<i32> {
        self.exit().and_then(|exit| exit.leader_exit_code)
    }

    /// See [`TaskExitInfo::log_write_failure`]; `None` while the task runs.
    pub fn log_write_failure(&self) -> Option<&LogWriteFailure> {
        self.exit().and_then(|exit| exit.log_write_failure.as_ref())
    }

    /// See [`TaskExitInfo::kill_reason`]; `None` while the task runs.
    pub fn kill_reason(&self) -> Option<KillReason> {
        self.exit().and_then(|exit| exit.kill_reason)
    }

    /// Whether the task was started to take input (a pipe or a terminal); whether it
    /// still does depends on it running.
    pub const fn takes_input(&self) -> bool {
        !self.stdin.is_closed() || self.tty.is_some()
    }

    /// How long the task has run: until it settled, or until `now` while it runs.
    pub fn runtime(&self, now: DateTime<Utc>) -> Duration {
        match self.exit() {
            Some(exit) => exit.duration,
            None => (now - self.started_at).to_std().unwrap_or_default(),
        }
    }
}

/// `started_at + duration`, or the latest time there is when that overflows.
fn end_time(started_at: DateTime<Utc>, duration: Duration) -> DateTime<Utc> {
    chrono::TimeDelta::from_std(duration)
        .ok()
        .and_then(|delta| started_at.checked_add_signed(delta))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// One row of [`list_background`](crate::ExecutionContext::list_background): a task,
/// running or ended.
///
/// The JSON form of [`TaskEntry`]: flat, each field of an ended task beside the rest.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct EntryForm {
    /// The task.
    task_id: TaskId,
    /// The process id of the task's leader (also its process-group id).
    pid: u32,
    /// The command as given.
    command: String,
    /// The working directory it ran in.
    cwd: PathBuf,
    /// The task's log file.
    output_path: PathBuf,
    /// Running, exited or killed.
    status: TaskStatus,
    /// Set once the task has ended.
    exit_code: Option<i32>,
    /// Set when a signal ended the task.
    signal: Option<Signal>,
    /// When the task started.
    started_at: DateTime<Utc>,
    /// When the task settled (exited and its log was closed).
    ended_at: Option<DateTime<Utc>>,
    /// Bytes the task has written so far (including bytes dropped past an output cap).
    bytes_written: u64,
    /// Set once the task has ended, when it was killed after its shell had already
    /// exited: see [`TaskExitInfo::leader_exit_code`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    leader_exit_code: Option<i32>,
    /// Set once the task has ended, when part of its output could not be written to
    /// its log: see [`TaskExitInfo::log_write_failure`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_write_failure: Option<LogWriteFailure>,
    /// Why our kill ended the task: see [`TaskExitInfo::kill_reason`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kill_reason: Option<KillReason>,
    /// Whether the task takes input ([`write_input`](crate::ExecutionContext::write_input)):
    /// `pipe` for a task started with its stdin open or with a terminal.
    #[serde(default, skip_serializing_if = "StdinMode::is_closed")]
    stdin: StdinMode,
    /// The task's terminal and its current size, when it runs in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tty: Option<TtySize>,
    /// Whether the task is detached: it outlives the host that started it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    detached: bool,
    /// Whether its end was already told to the model of another session; no session
    /// tells it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    reported: bool,
    /// The fleet's worker that runs it, when it does not run on the host's machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    runs_on: Option<String>,
}

/// A task entry whose JSON says it ended without saying how.
#[derive(Debug, thiserror::Error)]
#[error("task entry {task_id}: status `{status}` needs `{field}`")]
struct IncompleteEntry {
    task_id: TaskId,
    status: TaskStatus,
    field: &'static str,
}

impl TryFrom<EntryForm> for TaskEntry {
    type Error = IncompleteEntry;

    fn try_from(form: EntryForm) -> Result<Self, Self::Error> {
        let entry = Self::running(
            form.task_id,
            form.pid,
            form.command,
            form.cwd,
            form.output_path,
            form.started_at,
        )
        .bytes_written(form.bytes_written)
        .stdin(form.stdin)
        .tty(form.tty)
        .detached(form.detached)
        .reported(form.reported)
        .runs_on(form.runs_on);
        if !form.status.is_terminal() {
            return Ok(entry);
        }
        let missing = |field| IncompleteEntry {
            task_id: form.task_id,
            status: form.status,
            field,
        };
        let exit_code = form.exit_code.ok_or_else(|| missing("exit_code"))?;
        let ended_at = form.ended_at.ok_or_else(|| missing("ended_at"))?;
        let exit = entry
            .exit_at(form.status, exit_code, ended_at)
            .signal(form.signal)
            .leader_exit_code(form.leader_exit_code)
            .log_write_failure(form.log_write_failure)
            .kill_reason(form.kill_reason);
        Ok(entry.ended(exit))
    }
}

impl From<TaskEntry> for EntryForm {
    fn from(entry: TaskEntry) -> Self {
        let status = entry.status();
        let ended_at = entry.ended_at();
        let (exit_code, signal, leader_exit_code, log_write_failure, kill_reason) =
            match entry.state {
                TaskState::Running => (None, None, None, None, None),
                TaskState::Ended(exit) => (
                    Some(exit.exit_code),
                    exit.signal,
                    exit.leader_exit_code,
                    exit.log_write_failure,
                    exit.kill_reason,
                ),
            };
        Self {
            task_id: entry.task_id,
            pid: entry.pid,
            command: entry.command,
            cwd: entry.cwd,
            output_path: entry.output_path,
            status,
            exit_code,
            signal,
            started_at: entry.started_at,
            ended_at,
            bytes_written: entry.bytes_written,
            leader_exit_code,
            log_write_failure,
            kill_reason,
            stdin: entry.stdin,
            tty: entry.tty,
            detached: entry.detached,
            reported: entry.reported,
            runs_on: entry.runs_on,
        }
    }
}

/// What [`exec_background`](crate::ExecutionContext::exec_background) returns, as soon
/// as the process exists. A context builds it with [`new`](Self::new); users receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BackgroundStarted {
    /// The new task's id.
    pub task_id: TaskId,
    /// Where its output goes.
    pub output_path: PathBuf,
    /// The process id of its leader.
    pub pid: u32,
}

impl BackgroundStarted {
    /// Task `task_id`, its leader `pid`, writing into `output_path`.
    pub fn new(task_id: TaskId, output_path: impl Into<PathBuf>, pid: u32) -> Self {
        Self {
            task_id,
            output_path: output_path.into(),
            pid,
        }
    }
}

/// What [`name_background`](crate::ExecutionContext::name_background) found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Naming {
    /// The held task now has the next id of its handle, its log the name that goes
    /// with it, and it is listed: its start as the session sees it. Its callbacks
    /// report the new id from now on.
    Named(BackgroundStarted),
    /// The task had ended before it could be named: it stays held and unlisted, and
    /// this is its exit (under its provisional id).
    Ended(TaskExitInfo),
    /// This context names every task as it starts (it ignores
    /// [`BackgroundOptions::held`]): the task keeps the id it started with.
    AtStart,
}

/// A task that has been quiet for the stall window: what `on_stall` receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallInfo {
    /// The task.
    pub task_id: TaskId,
    /// The command as given.
    pub command: String,
    /// The task's log file.
    pub output_path: PathBuf,
    /// How long it has been quiet.
    #[serde(rename = "stalled_for_ms", with = "crate::duration_ms")]
    pub stalled_for: Duration,
    /// Bytes written so far.
    pub bytes_written: u64,
    /// What the task's processes are doing, when the context can tell (the local
    /// context reads `/proc`): waiting for terminal input, on a pipe, for a child,
    /// stopped, running on CPU… `None` where nothing can be said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
    /// Whether the task was started to take input (`stdin: pipe`, or a terminal): a
    /// quiet task may be waiting for an answer it can be given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub takes_input: bool,
    /// Whether the task runs in a terminal (its screen can be read).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminal: bool,
}

/// Called exactly once when a task settles.
pub type ExitCallback = Arc<dyn Fn(TaskExitInfo) + Send + Sync>;

/// Called once per quiet period of a task.
pub type StallCallback = Arc<dyn Fn(StallInfo) + Send + Sync>;

/// How to start a background task.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{BackgroundOptions, TaskLimits};
/// let options = BackgroundOptions::new("/tmp/tasks")
///     .limits(
///         TaskLimits::new()
///             .max_output_bytes(10 << 20)
///             .stall_timeout(Duration::from_secs(45)),
///     )
///     .on_exit(|exit| println!("{} ended", exit.task_id));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct BackgroundOptions {
    /// Working directory and extra environment of the task.
    pub spec: CommandSpec,
    /// Directory of the task's log file (created `0700` if missing).
    pub output_dir: PathBuf,
    /// Called exactly once when the task settles. Optional: a durable context records
    /// exits for the caller's `list_background` sweep instead.
    pub on_exit: Option<ExitCallback>,
    /// The task's limits: output cap, stall window (after which `on_stall` fires),
    /// wall-time and CPU-time budgets.
    pub limits: TaskLimits,
    /// Called once per quiet period.
    pub on_stall: Option<StallCallback>,
    /// The task's standard input: closed (the default) or a pipe kept open for
    /// [`write_input`](crate::ExecutionContext::write_input). Ignored with a `tty`,
    /// whose terminal is the input.
    pub stdin: StdinMode,
    /// Runs the task in a terminal of this size (a pseudo-terminal: its stdin, stdout
    /// and stderr, and its controlling terminal), which implies input is open. `None`
    /// (the default): no terminal.
    pub tty: Option<TtySize>,
    /// Starts the task held, for a foreground call that may move to the background: it
    /// runs and logs like any task, but takes no id of its handle's sequence and is not
    /// listed until [`name_background`](crate::ExecutionContext::name_background) names
    /// it; one that ends unnamed is dropped with
    /// [`forget_background`](crate::ExecutionContext::forget_background). Its
    /// [`BackgroundStarted`] carries a provisional id, good for every call on the task
    /// until then. A context that names every task as it starts ignores this.
    pub held: bool,
    /// Detaches the task: it outlives the host that started it and belongs to the
    /// per-user supervisor, which lists it, keeps its exit and tells it once to the
    /// next session of the workspace. Its id is a detached one (`bash_d<n>`). A context
    /// that cannot detach ([`Capabilities::detach`](crate::Capabilities::detach) is
    /// `false`) refuses the start with [`ContextError::Unsupported`](crate::ContextError::Unsupported)
    /// rather than run a task that would die with its host.
    pub detach: bool,
    /// The labels the machine that runs the task must carry (`gpu`, `linux-x86_64`): a
    /// context that places tasks on a fleet ([`Capabilities::placement`](crate::Capabilities::placement))
    /// picks, among the workers carrying all of them, the least loaded; one that does
    /// not refuses a start that names any. Empty (the default): any machine.
    pub labels: Vec<String>,
}

/// The longest label ([`BackgroundOptions::labels`], a worker's own).
pub const MAX_LABEL_LEN: usize = 64;

/// Whether `label` is one: 1 to [`MAX_LABEL_LEN`] ASCII letters, digits, `-`, `_` or `.`
/// (`gpu`, `linux-x86_64`), the same rule for a start's labels and a worker's.
///
/// ```
/// assert!(zidane_context::is_label("linux-x86_64"));
/// assert!(!zidane_context::is_label("two words"));
/// ```
pub fn is_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= MAX_LABEL_LEN
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl BackgroundOptions {
    /// Options writing the log into `output_dir`, with nothing else set.
    pub fn new(output_dir: impl Into<PathBuf>) -> Self {
        Self {
            output_dir: output_dir.into(),
            ..Self::default()
        }
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

    /// Sets the exit callback.
    #[must_use]
    pub fn on_exit(mut self, callback: impl Fn(TaskExitInfo) + Send + Sync + 'static) -> Self {
        self.on_exit = Some(Arc::new(callback));
        self
    }

    /// Sets the task's limits.
    #[must_use]
    pub fn limits(mut self, limits: TaskLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets what the task's stdin is.
    #[must_use]
    pub fn stdin(mut self, stdin: StdinMode) -> Self {
        self.stdin = stdin;
        self
    }

    /// Runs the task in a terminal of `size`.
    #[must_use]
    pub fn tty(mut self, size: TtySize) -> Self {
        self.tty = Some(size);
        self
    }

    /// Starts the task held (see [`held`](Self::held)).
    #[must_use]
    pub fn held(mut self, held: bool) -> Self {
        self.held = held;
        self
    }

    /// Detaches the task (see [`detach`](Self::detach)).
    #[must_use]
    pub fn detach(mut self, detach: bool) -> Self {
        self.detach = detach;
        self
    }

    /// Sets the labels the machine that runs the task must carry (see
    /// [`labels`](Self::labels)).
    #[must_use]
    pub fn labels(mut self, labels: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.labels = labels.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the task is to take input: its stdin a pipe, or a terminal.
    pub const fn takes_input(&self) -> bool {
        !self.stdin.is_closed() || self.tty.is_some()
    }

    /// Sets the stall callback.
    #[must_use]
    pub fn on_stall(mut self, callback: impl Fn(StallInfo) + Send + Sync + 'static) -> Self {
        self.on_stall = Some(Arc::new(callback));
        self
    }
}

impl fmt::Debug for BackgroundOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundOptions")
            .field("spec", &self.spec)
            .field("output_dir", &self.output_dir)
            .field("on_exit", &self.on_exit.as_ref().map(|_| "Fn"))
            .field("limits", &self.limits)
            .field("on_stall", &self.on_stall.as_ref().map(|_| "Fn"))
            .field("stdin", &self.stdin)
            .field("tty", &self.tty)
            .field("held", &self.held)
            .field("detach", &self.detach)
            .finish()
    }
}
