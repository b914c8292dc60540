//! [`ProcessContextBuilder`]: how a [`ProcessContext`] is configured and made.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;
use zidane_context::command_excerpt;
#[cfg(doc)]
use zidane_context::{ContextError, ExecutionContext};

use crate::containment;
use crate::containment::orphan_sweep::SweptProcess;
use crate::context::{DEFAULT_MAX_BACKGROUND_TASKS, ProcessContext};
use crate::read::READ_BUDGET_BYTES;
use crate::spawn::shell::Shell;
use crate::task::kill::DEFAULT_KILL_GRACE;

/// Configures a [`ProcessContext`].
///
/// ```
/// use std::time::Duration;
/// use zidane_process::ProcessContext;
///
/// let context = ProcessContext::builder()
///     .kill_grace(Duration::from_secs(2))
///     .max_background_tasks(16)
///     .cwd("/tmp")
///     .build();
/// assert_eq!(context.context_timestamp().len(), 19);
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ProcessContextBuilder {
    kill_grace: Duration,
    max_background_tasks: usize,
    read_budget: u64,
    cwd: Option<PathBuf>,
    shell: Option<Shell>,
    sweep_orphans_on_start: bool,
    process_path: Option<ProcessPath>,
}

/// How a context starts commands and moves their output: the same behaviour either
/// way, by different mechanisms (`docs/PROCESS.md` has the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessPath {
    /// Linux's own mechanisms: a `vfork`-style `clone` that sheds every descriptor but
    /// stdio, and `splice(2)` from the pipe into the log. Elsewhere the same as
    /// [`Portable`](Self::Portable).
    Fast,
    /// What every Unix has: `std::process::Command` with `process_group(0)`, a plain
    /// read/write copy of the pipe into the log, the exit through `waitpid`.
    Portable,
}

/// The environment variable that picks the [`ProcessPath`] of a context whose builder
/// names none: `portable` or `fast`.
pub const PROCESS_PATH_VAR: &str = "ZIDANE_PROCESS_PATH";

impl ProcessPath {
    /// This platform's default: [`Fast`](Self::Fast) on Linux, else
    /// [`Portable`](Self::Portable).
    pub const fn platform_default() -> Self {
        if cfg!(target_os = "linux") {
            Self::Fast
        } else {
            Self::Portable
        }
    }

    /// What [`PROCESS_PATH_VAR`] asks for (`portable` or `fast`, any case), else the
    /// [`platform_default`](Self::platform_default). An unknown value is logged and
    /// ignored.
    pub fn from_env() -> Self {
        match std::env::var(PROCESS_PATH_VAR) {
            Ok(value) => Self::parse(&value).unwrap_or_else(|| {
                tracing::warn!(
                    value = %value,
                    "{PROCESS_PATH_VAR} is neither `portable` nor `fast`; using the default"
                );
                Self::platform_default()
            }),
            Err(_) => Self::platform_default(),
        }
    }

    /// `portable` or `fast` (any case).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "portable" => Some(Self::Portable),
            "fast" => Some(Self::Fast),
            _ => None,
        }
    }

    /// Whether Linux's fast mechanisms are in use: [`Fast`](Self::Fast), on Linux.
    pub(crate) fn is_fast(self) -> bool {
        cfg!(target_os = "linux") && self == Self::Fast
    }
}

impl Default for ProcessContextBuilder {
    fn default() -> Self {
        Self {
            kill_grace: DEFAULT_KILL_GRACE,
            max_background_tasks: DEFAULT_MAX_BACKGROUND_TASKS,
            read_budget: READ_BUDGET_BYTES,
            cwd: None,
            shell: None,
            sweep_orphans_on_start: false,
            process_path: None,
        }
    }
}

impl ProcessContextBuilder {
    /// How long a killed task gets between `SIGTERM` and `SIGKILL`
    /// (default [`DEFAULT_KILL_GRACE`]).
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// How many background tasks may run at once (default
    /// [`DEFAULT_MAX_BACKGROUND_TASKS`]); the next start is
    /// [`ContextError::TooManyTasks`]. Zero refuses every background task.
    pub fn max_background_tasks(mut self, limit: usize) -> Self {
        self.max_background_tasks = limit;
        self
    }

    /// Most bytes one [`read_file`](ExecutionContext::read_file) reads (default
    /// [`READ_BUDGET_BYTES`]); past it the read stops and its result says so.
    pub fn read_budget(mut self, bytes: u64) -> Self {
        self.read_budget = bytes;
        self
    }

    /// The working directory of commands that name none, and the base of relative
    /// paths (default: the process's current directory when the context is built).
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The shell commands run under (default [`Shell::detect`]: `/bin/bash` where it
    /// exists, else `/bin/sh`). The `shell` tool names it to the model.
    pub fn shell(mut self, shell: Shell) -> Self {
        self.shell = Some(shell);
        self
    }

    /// Whether [`build`](Self::build) starts an orphan sweep
    /// ([`ProcessContext::sweep_orphans`]): what a host restarting after a crash wants,
    /// to end the tasks its previous run left behind. Default: off. Inside a tokio
    /// runtime the sweep runs in the background ([`ProcessContext::startup_sweep`]
    /// waits for it); outside one, `build` runs it before returning. What it ended is
    /// also logged (`tracing`, target `zidane_process`).
    pub fn sweep_orphans_on_start(mut self, sweep: bool) -> Self {
        self.sweep_orphans_on_start = sweep;
        self
    }

    /// How commands are started and their output moved (default
    /// [`ProcessPath::from_env`]: [`PROCESS_PATH_VAR`], else the platform's default).
    pub fn process_path(mut self, path: ProcessPath) -> Self {
        self.process_path = Some(path);
        self
    }

    /// The context. Its timestamp is taken now.
    pub fn build(self) -> ProcessContext {
        let cwd = self
            .cwd
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let startup_sweep = self
            .sweep_orphans_on_start
            .then(|| start_sweep(self.kill_grace));
        ProcessContext::configured(
            self.kill_grace,
            self.max_background_tasks,
            self.read_budget,
            cwd,
            self.shell.unwrap_or_else(Shell::detect),
            self.process_path.unwrap_or_else(ProcessPath::from_env),
            startup_sweep,
        )
    }
}

/// Starts the start-up orphan sweep: on the blocking pool inside a runtime, else now.
fn start_sweep(grace: Duration) -> watch::Receiver<Option<Vec<SweptProcess>>> {
    let (done, result) = watch::channel(None);
    let sweep = move || {
        let swept = containment::sweep_orphans_blocking(grace);
        for process in &swept {
            tracing::info!(
                pid = process.pid,
                task = process.task_id.map(|id| id.to_string()),
                command = %command_excerpt(&process.command_line),
                owner_pid = process.owner.pid,
                "ended an orphaned task of a host that is gone"
            );
        }
        if !swept.is_empty() {
            tracing::info!(
                processes = swept.len(),
                "the orphan sweep ended what crashed hosts left running"
            );
        }
        // No receiver left means the context is gone and nobody asks.
        let _ = done.send(Some(swept));
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(sweep)),
        Err(_) => sweep(),
    }
    result
}
