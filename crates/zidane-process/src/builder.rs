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
