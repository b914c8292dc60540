//! The types of a background task's life: options in, started, entry, exit, stall.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Running, exited or killed.
    pub status: TaskStatus,
    /// Set once the task has ended.
    pub exit_code: Option<i32>,
    /// Set when a signal ended the task.
    pub signal: Option<Signal>,
    /// When the task started.
    pub started_at: DateTime<Utc>,
    /// When the task settled (exited and its log was closed).
    pub ended_at: Option<DateTime<Utc>>,
    /// Bytes the task has written so far (including bytes dropped past an output cap).
    pub bytes_written: u64,
    /// Set once the task has ended, when it was killed after its shell had already
    /// exited: see [`TaskExitInfo::leader_exit_code`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_exit_code: Option<i32>,
    /// Set once the task has ended, when part of its output could not be written to
    /// its log: see [`TaskExitInfo::log_write_failure`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_write_failure: Option<LogWriteFailure>,
    /// Why our kill ended the task: see [`TaskExitInfo::kill_reason`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_reason: Option<KillReason>,
    /// Whether the task takes input ([`write_input`](crate::ExecutionContext::write_input)):
    /// `pipe` for a task started with its stdin open or with a terminal.
    #[serde(default, skip_serializing_if = "StdinMode::is_closed")]
    pub stdin: StdinMode,
    /// The task's terminal and its current size, when it runs in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<TtySize>,
}

impl TaskEntry {
    /// Whether the task was started to take input (a pipe or a terminal); whether it
    /// still does depends on it running.
    pub const fn takes_input(&self) -> bool {
        !self.stdin.is_closed() || self.tty.is_some()
    }

    /// The exit info of an ended task, or `None` while it runs.
    pub fn exit_info(&self) -> Option<TaskExitInfo> {
        let ended_at = self.ended_at?;
        if !self.status.is_terminal() {
            return None;
        }
        Some(TaskExitInfo {
            task_id: self.task_id,
            status: self.status,
            exit_code: self.exit_code?,
            signal: self.signal,
            output_path: self.output_path.clone(),
            duration: (ended_at - self.started_at).to_std().unwrap_or_default(),
            command: self.command.clone(),
            leader_exit_code: self.leader_exit_code,
            log_write_failure: self.log_write_failure.clone(),
            kill_reason: self.kill_reason,
        })
    }

    /// How long the task has run: until `ended_at`, or until `now` while it runs.
    pub fn runtime(&self, now: DateTime<Utc>) -> Duration {
        (self.ended_at.unwrap_or(now) - self.started_at)
            .to_std()
            .unwrap_or_default()
    }
}

/// What [`exec_background`](crate::ExecutionContext::exec_background) returns, as soon
/// as the process exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundStarted {
    /// The new task's id.
    pub task_id: TaskId,
    /// Where its output goes.
    pub output_path: PathBuf,
    /// The process id of its leader.
    pub pid: u32,
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
///     .limits(TaskLimits {
///         max_output_bytes: Some(10 << 20),
///         stall_timeout: Some(Duration::from_secs(45)),
///         ..TaskLimits::default()
///     })
///     .on_exit(|exit| println!("{} ended", exit.task_id));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct BackgroundOptions {
    /// Working directory (default: the context's).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables for the task.
    pub env: BTreeMap<String, String>,
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
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
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
            .field("cwd", &self.cwd)
            .field("env", &self.env)
            .field("output_dir", &self.output_dir)
            .field("on_exit", &self.on_exit.as_ref().map(|_| "Fn"))
            .field("limits", &self.limits)
            .field("on_stall", &self.on_stall.as_ref().map(|_| "Fn"))
            .field("stdin", &self.stdin)
            .field("tty", &self.tty)
            .finish()
    }
}
