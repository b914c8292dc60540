//! [`ProcessContextBuilder`]: how a [`ProcessContext`] is configured and made.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;
use zidane_context::{
    ChildEnv, EnvPolicy, SandboxMode, SandboxPolicy, SandboxStatus, command_excerpt,
};
#[cfg(doc)]
use zidane_context::{ContextError, ExecutionContext};

use crate::containment;
use crate::containment::swept::SweptProcess;
use crate::context::{DEFAULT_MAX_BACKGROUND_TASKS, ProcessContext};
#[cfg(doc)]
use crate::process_path::PROCESS_PATH_ENV;
use crate::process_path::{EnvValueError, ProcessPath};
use crate::read::READ_BUDGET_BYTES;
use crate::sandbox::Sandbox;
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
///
/// Every command a context starts gets the environment its [`EnvPolicy`] computes from
/// the host's as the context is built ([`env_policy`](Self::env_policy)): by default
/// the host's, minus every variable named like a secret and zidane's own credentials.
#[derive(Debug, Clone)]
#[must_use]
pub struct ProcessContextBuilder {
    kill_grace: Duration,
    max_background_tasks: usize,
    read_budget: u64,
    cwd: Option<PathBuf>,
    shell: Option<Shell>,
    sweep_orphans_on_start: bool,
    lifeline: bool,
    process_path: Option<ProcessPath>,
    env_policy: EnvPolicy,
    host_env: Option<Vec<(OsString, OsString)>>,
    sandbox: SandboxPolicy,
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
            lifeline: true,
            process_path: None,
            env_policy: EnvPolicy::default(),
            host_env: None,
            sandbox: SandboxPolicy::off(),
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

    /// Whether the context starts a lifeline: a small process outside the host that
    /// ends every process of the context's tasks, escapees included, the moment the
    /// host dies, however it dies (`SIGKILL` included), and that does nothing while the
    /// host lives. Default: on where `/proc` shows environments (Linux); elsewhere there
    /// is none, and [`sweep_orphans_on_start`](Self::sweep_orphans_on_start) at the next
    /// start is the backstop. Off only for a host that must leave its tasks behind when
    /// it dies (a test of the sweep).
    pub fn lifeline(mut self, lifeline: bool) -> Self {
        self.lifeline = lifeline;
        self
    }

    /// How commands are started and their output moved (default
    /// [`ProcessPath::from_env`]: [`PROCESS_PATH_ENV`], else the platform's default).
    pub fn process_path(mut self, path: ProcessPath) -> Self {
        self.process_path = Some(path);
        self
    }

    /// Which of the host's environment variables every command gets (default
    /// [`EnvPolicy::default`]: all but those named like a secret, and never zidane's
    /// own credentials). Applied to the host's environment once, as the context is
    /// built; what it withholds is logged then (`tracing`, `debug`, target
    /// `zidane_process`) and kept in [`ProcessContext::withheld_env`]. A command's own
    /// variables ([`BackgroundOptions::env`](zidane_context::BackgroundOptions::env))
    /// go on top, but for zidane's own credentials, which no command gets.
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env_policy = policy;
        self
    }

    /// The host environment [`env_policy`](Self::env_policy) is applied to, in place of
    /// this process's own (the default): for a process that runs commands for another,
    /// as a detached task's monitor does for the session that started it.
    pub fn host_env<K: Into<OsString>, V: Into<OsString>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.host_env = Some(
            vars.into_iter()
                .map(|(key, value)| (key.into(), value.into()))
                .collect(),
        );
        self
    }

    /// What its commands may touch (default: [`SandboxPolicy::off`], every right of the
    /// user). A `workspace-write` policy without a workspace root takes the context's
    /// working directory as its root.
    ///
    /// The default is off here because a library host decides its own trust boundary
    /// (it may already run inside a container or a sandbox of its own, where a second
    /// one cannot be built); `zidane` and `zidane mcp`, which run a model's commands on
    /// a person's machine, turn it on by default. Where the OS cannot build the sandbox
    /// the context still runs every command, unsandboxed, and
    /// [`sandbox`](ExecutionContext::sandbox) says why: a host that must not run
    /// unsandboxed checks [`SandboxReport::enforced`](zidane_context::SandboxReport::enforced).
    ///
    /// ```
    /// use zidane_context::{ExecutionContext, SandboxPolicy};
    /// use zidane_process::ProcessContext;
    ///
    /// let context = ProcessContext::builder()
    ///     .cwd("/tmp")
    ///     .sandbox(SandboxPolicy::workspace_write("/tmp"))
    ///     .build();
    /// // Enforced, or unavailable with the reason on a machine without bubblewrap.
    /// let report = context.sandbox();
    /// assert!(report.line().is_some());
    /// ```
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = policy;
        self
    }

    /// The context, or the error of a [`PROCESS_PATH_ENV`] that holds a value it does
    /// not accept (when no [`process_path`](Self::process_path) was given). What a
    /// binary calls, so that bad configuration stops it.
    pub fn try_build(mut self) -> Result<ProcessContext, EnvValueError> {
        if self.process_path.is_none() {
            self.process_path = Some(ProcessPath::from_env()?);
        }
        Ok(self.build())
    }

    /// The context. Its timestamp is taken now, and its environment computed
    /// ([`env_policy`](Self::env_policy)). A [`PROCESS_PATH_ENV`] it does not accept
    /// is logged (`warn`) and the platform's default used: [`try_build`](Self::try_build)
    /// refuses it instead.
    pub fn build(self) -> ProcessContext {
        let process_path = self.process_path.unwrap_or_else(|| {
            ProcessPath::from_env().unwrap_or_else(|error| {
                tracing::warn!("{error}; using the platform's default");
                ProcessPath::platform_default()
            })
        });
        let env = match self.host_env {
            Some(vars) => self.env_policy.apply(vars),
            None => self.env_policy.apply_to_host(),
        };
        log_withheld(&self.env_policy, &env);
        let cwd = self
            .cwd
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let startup_sweep = self
            .sweep_orphans_on_start
            .then(|| start_sweep(self.kill_grace));
        let context = ProcessContext::configured(
            self.kill_grace,
            self.max_background_tasks,
            self.read_budget,
            cwd,
            self.shell.unwrap_or_else(Shell::detect),
            process_path,
            startup_sweep,
        )
        .with_env(self.env_policy, env);
        let mut policy = self.sandbox;
        if policy.mode == SandboxMode::WorkspaceWrite && policy.workspace.is_empty() {
            policy.workspace.push(context.cwd().to_path_buf());
        }
        let sandbox = Sandbox::new(policy);
        if let SandboxStatus::Unavailable(reason) = sandbox.report().status {
            tracing::warn!("unsandboxed: {reason}");
        }
        let context = context.with_sandbox(sandbox);
        if self.lifeline {
            context.with_lifeline()
        } else {
            context
        }
    }
}

/// Says, at `debug`, which of the host's variables the context's commands do not get,
/// and why: names only, never values.
fn log_withheld(policy: &EnvPolicy, env: &ChildEnv) {
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let withheld: Vec<String> = env
        .withheld
        .iter()
        .map(|var| format!("{} ({})", var.name, var.reason))
        .collect();
    tracing::debug!(
        inherit = %policy.inherit,
        passed = env.vars.len(),
        withheld = ?withheld,
        "environment policy: these variables of the host are withheld from every task"
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_host_environment_replaces_this_processs_under_the_same_policy() {
        let context = ProcessContext::builder()
            .lifeline(false)
            .host_env([
                ("ZIDANE_GIVEN_ONLY", "1"),
                ("GITHUB_TOKEN", "ghp_secret"),
                ("ZIDANE_API_KEY", "zk"),
            ])
            .build();
        let names = context.passed_env_names();
        assert!(names.contains(&"ZIDANE_GIVEN_ONLY".to_owned()), "{names:?}");
        // The policy still withholds what looks like a secret and zidane's own keys.
        assert!(!names.contains(&"GITHUB_TOKEN".to_owned()), "{names:?}");
        assert!(!names.contains(&"ZIDANE_API_KEY".to_owned()), "{names:?}");
        // Nothing of this process's own environment comes along.
        assert!(std::env::var_os("PATH").is_some());
        assert!(!names.contains(&"PATH".to_owned()), "{names:?}");
    }
}
