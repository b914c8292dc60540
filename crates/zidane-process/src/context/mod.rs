//! `ProcessContext`: the `ExecutionContext` of the local machine. Here its state, how
//! it is made and what it tells about itself; `execution.rs` runs commands and tasks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use zidane_context::{ChildEnv, EnvPolicy, Result, SandboxPolicy, WithheldVar, is_zidane_secret};
#[cfg(doc)]
use zidane_context::{DetachedTasks, ExecutionContext};

use crate::builder::ProcessContextBuilder;
use crate::containment;
#[cfg(unix)]
use crate::containment::lifeline::Lifeline;
use crate::containment::owner_marker::{MarkedWork, OWNER_MARKER_ENV, OwnerId, OwnerMarker};
use crate::containment::swept::SweptProcess;
use crate::process_path::ProcessPath;
use crate::sandbox::Sandbox;
use crate::sandbox::plan::SandboxPlan;
use crate::spawn::TaskEnv;
use crate::spawn::shell::Shell;
use crate::task::registry::Registry;
use crate::task::spawn_on_wake::FirstPoll;
use crate::task::timestamp::next_context_timestamp;

mod execution;

/// How many background tasks may run at once per context, unless configured.
pub const DEFAULT_MAX_BACKGROUND_TASKS: usize = 8;

/// The `TERM` a terminal task gets, unless its options set one: what the screen's
/// emulator understands.
pub(crate) const TERMINAL_TERM: &str = "xterm-256color";

/// Runs commands on the local machine: foreground with [`exec`](ExecutionContext::exec),
/// background with [`exec_background`](ExecutionContext::exec_background).
///
/// Every command runs under the context's [`Shell`] — `/bin/bash --norc --noprofile -c
/// COMMAND` where bash exists, else `/bin/sh -c COMMAND`; see
/// [`ProcessContextBuilder::shell`] — in its own process group with stdin on
/// `/dev/null`. A background task's stdout and stderr go, in write order, into
/// `<output_dir>/<task-id>.<context-timestamp>.log`; see the crate docs for the whole
/// life of a task.
///
/// Methods must be called inside a tokio runtime (multi-thread, or current-thread with
/// I/O and time enabled): each background task is supervised by a tokio task. Share the
/// context as `Arc<ProcessContext>` or `Arc<dyn ExecutionContext>`.
///
/// Dropping the context sends `SIGKILL` to every task still running: its tasks live no
/// longer than it does ([`DetachedTasks::ProcessLifetime`]). Call
/// [`destroy`](ExecutionContext::destroy) for an orderly end with exit callbacks.
///
/// No process escapes: every process it starts carries [`OWNER_MARKER_ENV`] in its
/// environment, so a kill or `destroy` also ends descendants that left the process
/// group, and [`sweep_orphans`](Self::sweep_orphans) ends the tasks of a host that
/// crashed. `docs/PROCESS.md` ("Containment") says how, and what is still out of reach.
#[derive(Debug)]
pub struct ProcessContext {
    registry: Arc<Registry>,
    kill_grace: Duration,
    max_background_tasks: usize,
    read_budget: u64,
    cwd: PathBuf,
    shell: Shell,
    process_path: ProcessPath,
    /// The sandbox every command runs in (see [`ProcessContextBuilder::sandbox`]).
    sandbox: Arc<Sandbox>,
    /// The directories of this context's task logs, as they really are (links
    /// resolved): `read_file` reads them even where the sandbox hides their tree.
    task_log_dirs: Mutex<Vec<PathBuf>>,
    /// The policy commands' environments follow, and what it made of the host's
    /// environment as the context was built: every command starts from these.
    env_policy: EnvPolicy,
    base_env: ChildEnv,
    timestamp: String,
    /// Who this context is in its processes' markers.
    owner: OwnerId,
    /// Numbers foreground commands in their markers (`exec_<n>`).
    exec_serial: AtomicU64,
    /// The result of the sweep asked for with
    /// [`sweep_orphans_on_start`](ProcessContextBuilder::sweep_orphans_on_start):
    /// `None` inside until it is done.
    startup_sweep: Option<watch::Receiver<Option<Vec<SweptProcess>>>>,
    /// How supervisors start: always in place, but for the tests that compare it with
    /// the plain path.
    first_poll: FirstPoll,
    /// Ends this context's processes if the host dies without dropping it. Declared
    /// last: it fires once the drop above has already ended everything. (On Windows a
    /// task's job object does this: it ends with its host.)
    #[cfg(unix)]
    _lifeline: Option<Lifeline>,
}

impl Default for ProcessContext {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessContext {
    /// A context with these settings; its timestamp and owner identity are taken now.
    pub(crate) fn configured(
        kill_grace: Duration,
        max_background_tasks: usize,
        read_budget: u64,
        cwd: PathBuf,
        shell: Shell,
        process_path: ProcessPath,
        startup_sweep: Option<watch::Receiver<Option<Vec<SweptProcess>>>>,
    ) -> Self {
        Self {
            registry: Arc::new(Registry::default()),
            kill_grace,
            max_background_tasks,
            read_budget,
            cwd,
            shell,
            process_path,
            sandbox: Arc::new(Sandbox::off()),
            task_log_dirs: Mutex::new(Vec::new()),
            env_policy: EnvPolicy::default(),
            base_env: EnvPolicy::default().apply_to_host(),
            timestamp: next_context_timestamp(),
            owner: OwnerId::for_new_context(),
            exec_serial: AtomicU64::new(0),
            startup_sweep,
            first_poll: FirstPoll::InPlace,
            #[cfg(unix)]
            _lifeline: None,
        }
    }

    /// The same context with this sandbox.
    pub(crate) fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Arc::new(sandbox);
        self
    }

    /// The paths its commands may write, may not write and may not read, when they run
    /// sandboxed; `None` when they do not (the policy is `off`, or this machine cannot
    /// build the sandbox: [`sandbox`](ExecutionContext::sandbox) says why).
    pub fn sandbox_plan(&self) -> Option<SandboxPlan> {
        self.sandbox
            .report()
            .enforced()
            .then(|| self.sandbox.plan())
    }

    /// The sandbox policy its commands run under now, with the workspace roots added
    /// since it was built: what a process that runs commands on its behalf (a per-user
    /// supervisor) applies to them.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        self.sandbox.policy()
    }

    /// Adds workspace roots to a `workspace-write` sandbox while the context runs (an
    /// MCP client's roots): the commands started from now on may write them. Relative
    /// paths, and every root under another mode, are ignored.
    pub fn add_workspace_roots(&self, roots: &[PathBuf]) {
        self.sandbox.add_workspace_roots(roots);
    }

    /// The directories of this context's task logs known so far.
    pub(crate) fn task_log_dirs(&self) -> Vec<PathBuf> {
        zidane_context::lock(&self.task_log_dirs).clone()
    }

    /// Refuses a `read_file` of what the sandbox hides (see `sandbox::read_gate`).
    pub(crate) fn check_readable(&self, path: &Path) -> Result<()> {
        #[cfg(unix)]
        if let Some(plan) = self.sandbox_plan() {
            let logs = self.task_log_dirs();
            if let Some(rule) = crate::sandbox::read_gate::refusal(path, &plan, &logs) {
                return Err(zidane_context::ContextError::SandboxDenied {
                    path: path.to_path_buf(),
                    rule,
                });
            }
        }
        #[cfg(not(unix))]
        let _ = path;
        Ok(())
    }

    /// Remembers `dir` as holding this context's task logs.
    pub(crate) fn note_task_log_dir(&self, dir: &Path) {
        let Ok(real) = std::fs::canonicalize(dir) else {
            return;
        };
        let mut dirs = zidane_context::lock(&self.task_log_dirs);
        if !dirs.contains(&real) {
            dirs.push(real);
        }
    }

    /// The same context with this environment policy and what it computed.
    pub(crate) fn with_env(mut self, policy: EnvPolicy, env: ChildEnv) -> Self {
        self.env_policy = policy;
        self.base_env = env;
        self
    }

    /// The same context with a lifeline for its processes (see
    /// [`ProcessContextBuilder::lifeline`]).
    #[cfg(unix)]
    pub(crate) fn with_lifeline(mut self) -> Self {
        self._lifeline = Lifeline::start(self.owner, self.kill_grace);
        self
    }

    /// Windows needs no lifeline: every task's job object ends with its host.
    #[cfg(windows)]
    pub(crate) fn with_lifeline(self) -> Self {
        self
    }

    /// The same context starting its supervisors on the plain path (`tokio::spawn`).
    #[cfg(test)]
    #[cfg(unix)]
    pub(crate) fn on_the_plain_path(mut self) -> Self {
        self.first_poll = FirstPoll::OnRuntime;
        self
    }

    /// A context with the defaults: [`DEFAULT_KILL_GRACE`](crate::DEFAULT_KILL_GRACE),
    /// [`DEFAULT_MAX_BACKGROUND_TASKS`], the current directory.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for a configured context.
    pub fn builder() -> ProcessContextBuilder {
        ProcessContextBuilder::default()
    }

    /// This context's timestamp, `YYYYMMDD-HHMMSS-mmm` (UTC): the middle part of every
    /// log file name it creates.
    pub fn context_timestamp(&self) -> &str {
        &self.timestamp
    }

    /// The grace period between `SIGTERM` and `SIGKILL`.
    pub fn kill_grace(&self) -> Duration {
        self.kill_grace
    }

    /// The cap on running background tasks.
    pub fn max_background_tasks(&self) -> usize {
        self.max_background_tasks
    }

    /// The most bytes one `read_file` reads.
    pub fn read_budget(&self) -> u64 {
        self.read_budget
    }

    /// The default working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The shell commands run under.
    pub fn shell(&self) -> &Shell {
        &self.shell
    }

    /// The policy its commands' environments follow
    /// ([`ProcessContextBuilder::env_policy`]).
    pub fn env_policy(&self) -> &EnvPolicy {
        &self.env_policy
    }

    /// The host's variables its commands do not get, by name, and why: what the policy
    /// withheld as the context was built. Never their values.
    pub fn withheld_env(&self) -> &[WithheldVar] {
        &self.base_env.withheld
    }

    /// The names of the host's variables (and the policy's `set` ones) its commands
    /// get, sorted. Each command also gets its own variables and the owner marker.
    pub fn passed_env_names(&self) -> Vec<String> {
        self.base_env.names()
    }

    /// How this context starts commands and moves their output.
    pub fn process_path(&self) -> ProcessPath {
        self.process_path
    }

    /// Ends every process, of any host of this user, whose owner marker names a host
    /// that is no longer alive — the background tasks (and their descendants) of a host
    /// that was killed before it could `destroy` them — TERM first, KILL after the
    /// grace period. Returns what it ended.
    ///
    /// It never touches a process whose owner is alive (another session, another
    /// context of this process), a process without a marker, another user's process,
    /// or this process and its ancestors; a process it cannot read is skipped. Where
    /// `/proc` is unavailable it finds nothing and returns an empty list. Bounded by
    /// about the grace period plus a second.
    pub async fn sweep_orphans(&self) -> Result<Vec<SweptProcess>> {
        let swept = containment::sweep_orphans(self.kill_grace).await?;
        tracing::info!(ended = swept.len(), "orphan sweep");
        Ok(swept)
    }

    /// Waits for the sweep that
    /// [`sweep_orphans_on_start`](ProcessContextBuilder::sweep_orphans_on_start) asked
    /// for and returns what it ended; `None` if none was asked for.
    pub async fn startup_sweep(&self) -> Option<Vec<SweptProcess>> {
        let mut result = self.startup_sweep.clone()?;
        let done = result.wait_for(Option::is_some).await.ok()?;
        done.clone()
    }

    /// A command's whole environment: what the policy passed of the host's, `env` on
    /// top (but for zidane's own credentials, which no command gets), and the owner
    /// marker of `work`.
    fn marked_env(
        &self,
        env: &BTreeMap<String, String>,
        work: MarkedWork,
    ) -> (TaskEnv, OwnerMarker) {
        let marker = self.owner.marker(work);
        let mut own = env.clone();
        self.shell.neutralise_startup_files(&mut own);
        let mut task_env = self.base_env.vars.clone();
        for (name, value) in own {
            if !is_zidane_secret(&name) {
                task_env.insert(name.into(), value.into());
            }
        }
        // Inserted last: a caller's variable of the same name cannot unmark the task.
        task_env.insert(OWNER_MARKER_ENV.into(), marker.to_string().into());
        (task_env, marker)
    }
}

impl Drop for ProcessContext {
    fn drop(&mut self) {
        for task in self.registry.all_tasks() {
            if task.is_running() {
                task.processes.kill();
            }
        }
        // Escapees of any of our tasks or commands, running or ended: nothing of ours
        // outlives the context.
        containment::kill_owned_now(self.owner);
    }
}
