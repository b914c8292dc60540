//! `ProcessContext`: the `ExecutionContext` of the local machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use tokio::sync::watch;
use tracing::Instrument;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, CancellationToken, Capabilities, ContextError,
    DetachedTasks, ExecOptions, ExecOutput, ExecutionContext, ExecutionHandle, ExitCallback,
    KillReason, OutputChunk, Probe, ProbeOutcome, ReadRange, ReadResult, Result, Screen, StdinMode,
    TaskEntry, TaskExitInfo, TaskId, TaskInput, TtySize, validate_command, wait_for_exit,
};
use zidane_context::{ChildEnv, EnvPolicy, WithheldVar, is_zidane_secret};

use crate::builder::{ProcessContextBuilder, ProcessPath};
use crate::containment;
#[cfg(unix)]
use crate::containment::lifeline::Lifeline;
use crate::containment::owner_marker::{MarkedWork, OWNER_MARKER_VAR, OwnerId, OwnerMarker};
use crate::containment::swept::SweptProcess;
use crate::exec::{ForegroundRun, run as run_foreground};
use crate::read::read_file;
use crate::spawn::shell::Shell;
use crate::spawn::task_shell::start_task_shell;
use crate::spawn::{TaskEnv, TaskIo};
use crate::spawn::{resolve_cwd, validate_env};
use crate::task::budget::Budgets;
use crate::task::follow::follow;
use crate::task::input::InputEnd;
use crate::task::input_writer::pipe_identity;
use crate::task::kill_wait::kill_and_wait;
use crate::task::log_file::LogWriter;
use crate::task::registry::Registry;
use crate::task::spawn_on_wake::FirstPoll;
use crate::task::supervise::Supervisor;
use crate::task::terminal_screen::TerminalScreen;
use crate::task::timestamp::next_context_timestamp;
use crate::task::watchdog::StallWatch;
use crate::task::{NewTask, Task};

/// How many background tasks may run at once per context, unless configured.
pub const DEFAULT_MAX_BACKGROUND_TASKS: usize = 8;

/// The `TERM` a terminal task gets, unless its options set one: what the screen's
/// emulator understands.
pub const TERMINAL_TERM: &str = "xterm-256color";

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
/// No process escapes: every process it starts carries [`OWNER_MARKER_VAR`] in its
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
        task_env.insert(OWNER_MARKER_VAR.into(), marker.to_string().into());
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

#[async_trait]
impl ExecutionContext for ProcessContext {
    fn capabilities(&self) -> Capabilities {
        let capabilities = Capabilities::new(DetachedTasks::ProcessLifetime).with_follow_output();
        // Terminal tasks need a pseudo-terminal: Unix has one, Windows' pseudo-console
        // is not wired in.
        if cfg!(unix) {
            capabilities.with_terminals()
        } else {
            capabilities
        }
    }

    fn shell(&self) -> Option<String> {
        Some(self.shell.path().to_string_lossy().into_owned())
    }

    async fn create_handle(&self) -> Result<ExecutionHandle> {
        Ok(self.registry.create_handle())
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<()> {
        let Some(tasks) = self.registry.destroy(handle)? else {
            return Ok(());
        };
        // Ask every task first so their grace periods run side by side.
        for task in &tasks {
            task.request_kill(KillReason::Destroyed);
        }
        let mut failure = None;
        for task in &tasks {
            if let Err(error) = kill_and_wait(task, KillReason::Destroyed, self.kill_grace).await {
                failure.get_or_insert(error);
            }
        }
        // Then whatever left the groups, of running and ended tasks alike.
        containment::end_escapees_of(tasks.iter().map(|task| &task.processes), self.kill_grace)
            .await;
        failure.map_or(Ok(()), Err)
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput> {
        self.registry.check(handle)?;
        validate_command(command)?;
        validate_env(&options.env)?;
        let cwd = resolve_cwd(&self.cwd, options.cwd.as_deref())?;
        let serial = self.exec_serial.fetch_add(1, Ordering::Relaxed) + 1;
        let (env, marker) = self.marked_env(&options.env, MarkedWork::Exec(serial));
        run_foreground(ForegroundRun {
            shell: &self.shell,
            path: self.process_path,
            command,
            cwd: &cwd,
            env: &env,
            marker,
            timeout: options.timeout,
            cancel: options.cancel,
            max_output_bytes: options.max_output_bytes,
            kill_grace: self.kill_grace,
        })
        .await
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        self.registry.check(handle)?;
        let path = self.cwd.join(path);
        read_file(path, range, self.read_budget).await
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        // Everything that can be refused is refused before a slot, an id or a file is taken.
        self.registry.check(handle)?;
        validate_command(command)?;
        validate_env(&options.env)?;
        let cwd = resolve_cwd(&self.cwd, options.cwd.as_deref())?;
        if options.output_dir.as_os_str().is_empty() {
            return Err(ContextError::OutputDir {
                path: options.output_dir,
                cause: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "no output directory given",
                ),
            });
        }
        let output_dir = self.cwd.join(&options.output_dir);
        let io = match (options.tty, options.stdin) {
            (Some(size), _) if !size.is_valid() => {
                return Err(ContextError::InvalidCommand {
                    reason: "a terminal's rows and columns must each be between 1 and 1000",
                });
            }
            (Some(size), _) => TaskIo::Terminal(size),
            (None, StdinMode::Pipe) => TaskIo::InputPipe,
            (None, _) => TaskIo::Plain,
        };

        let reservation = self.registry.reserve(handle, self.max_background_tasks)?;
        let task_id = reservation.task_id;
        let mut task_env = options.env;
        if matches!(io, TaskIo::Terminal(_)) {
            task_env
                .entry("TERM".to_owned())
                .or_insert_with(|| TERMINAL_TERM.to_owned());
        }
        let (env, marker) = self.marked_env(&task_env, MarkedWork::Task(task_id));
        let name = (task_id, self.timestamp.as_str());
        let started = start_task_shell(
            (&self.shell, self.process_path),
            command,
            &cwd,
            &env,
            &output_dir,
            name,
            io,
        );
        let (mut spawned, log, output_path) = match started {
            Ok(started) => started,
            Err(error) => {
                self.registry.cancel(reservation);
                return Err(error);
            }
        };
        let started_at = Utc::now();
        let pid = spawned.pid;
        let processes = spawned.processes.with_marker(marker);
        let output = Arc::new(spawned.output);
        let terminal = match io {
            TaskIo::Terminal(size) => Some(Arc::new(TerminalScreen::new(size))),
            TaskIo::Plain | TaskIo::InputPipe => None,
        };
        let input_pipe = match (&spawned.input, &terminal) {
            (Some(end), None) => pipe_identity(end),
            _ => None,
        };
        let input = match spawned
            .input
            .take()
            .map(|fd| InputEnd::new(fd, terminal.is_some()))
        {
            None => None,
            Some(Ok(input)) => Some(input),
            Some(Err(source)) => {
                // It runs, but its input could not be watched: end it rather than
                // leave it loose (dropping the leader reaps it once it is gone).
                processes.kill();
                self.registry.cancel(reservation);
                let _ = std::fs::remove_file(&output_path);
                return Err(ContextError::spawn(command, source));
            }
        };

        let task = Arc::new(Task::new(NewTask {
            id: task_id,
            pid,
            command: command.to_owned(),
            cwd,
            output_path: output_path.clone(),
            started_at,
            processes: processes.clone(),
            on_exit: options.on_exit,
            output: output.clone(),
            input,
            input_pipe,
            terminal: terminal.clone(),
        }));
        let stall = match (options.limits.stall_timeout, options.on_stall) {
            (Some(window), Some(callback)) => Some(StallWatch::new(
                window,
                callback,
                tokio::time::Instant::now(),
            )),
            _ => None,
        };
        let inserted = self.registry.insert(handle, task.clone());
        if inserted.is_err() {
            // The handle was destroyed while this task started: it must not outlive
            // it. The caller never learns of the task, so it gets no exit callback.
            task.reassign(None);
            task.kill.cancel();
        }
        // The task outlives the call that started it: its own root span, linked to
        // the caller's (the `tool_call` of a run, when an agent started it).
        let span = tracing::info_span!(parent: None, "task", task_id = %task_id, pid);
        span.follows_from(tracing::Span::current());
        tracing::info!(
            parent: &span,
            task_id = %task_id,
            pid,
            command = %command,
            output_file = %output_path.display(),
            "task started"
        );
        // Its first poll here, not on a worker woken for it: see spawn_on_wake.rs.
        self.first_poll.start(
            Supervisor {
                task,
                leader: spawned.leader,
                output,
                log: {
                    let log =
                        LogWriter::new(log, options.limits.max_output_bytes, self.process_path);
                    match terminal {
                        Some(terminal) => log.with_terminal(terminal),
                        None => log,
                    }
                },
                processes,
                kill_grace: self.kill_grace,
                stall,
                budgets: Budgets::new(
                    tokio::time::Instant::now(),
                    options.limits.wall_time,
                    options.limits.cpu_time,
                ),
                registry: self.registry.clone(),
            }
            .run()
            .instrument(span),
        );
        inserted?;
        Ok(BackgroundStarted {
            task_id,
            output_path,
            pid,
        })
    }

    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        // The group first (a task that already ended has none left), then whatever
        // left it: `setsid` escapees outlive even a task that exited on its own.
        let exit = match task.exit_info() {
            Some(exit) => exit,
            None => kill_and_wait(&task, KillReason::Requested, self.kill_grace).await?,
        };
        task.processes.end_escapees(self.kill_grace).await;
        Ok(Some(exit))
    }

    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        Ok(self
            .registry
            .tasks(handle)?
            .iter()
            .map(|task| task.entry())
            .collect())
    }

    async fn wait_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Option<TaskExitInfo>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        // Subscribing to the watch that holds the exit: an exit before, during or
        // after this line is seen.
        let mut done = task.subscribe();
        drop(task);
        Ok(wait_for_exit(&mut done, timeout, &cancel).await)
    }

    async fn follow_output(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        offset: u64,
        max: usize,
    ) -> Result<Option<OutputChunk>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        follow(task, offset, max).await.map(Some)
    }

    async fn reassign_background_tasks(
        &self,
        from: ExecutionHandle,
        to: ExecutionHandle,
        on_exit: Option<ExitCallback>,
    ) -> Result<Vec<TaskEntry>> {
        self.registry.reassign(from, to, on_exit.as_ref())
    }

    async fn write_input(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        input: TaskInput,
    ) -> Result<Option<()>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        let Some(end) = &task.input else {
            return Err(ContextError::NoInput { task_id });
        };
        if !task.is_running() {
            return Err(ContextError::TaskEnded { task_id });
        }
        end.write(task_id, input).await.map(Some)
    }

    async fn read_screen(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Screen>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        match &task.terminal {
            Some(terminal) => Ok(Some(terminal.screen())),
            None => Err(ContextError::NotATerminal { task_id }),
        }
    }

    async fn probe(
        &self,
        handle: ExecutionHandle,
        _task_id: TaskId,
        probe: Probe,
        timeout: Duration,
    ) -> Result<ProbeOutcome> {
        // Every task of this context runs on this machine: the handle must be this
        // context's, and the probe is the machine's.
        self.registry.check(handle)?;
        Ok(crate::probe::run(probe, timeout).await)
    }

    async fn resize(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        size: TtySize,
    ) -> Result<Option<()>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        let (Some(terminal), Some(end)) = (&task.terminal, &task.input) else {
            return Err(ContextError::NotATerminal { task_id });
        };
        if !size.is_valid() {
            return Err(ContextError::InvalidCommand {
                reason: "a terminal's rows and columns must each be between 1 and 1000",
            });
        }
        if !task.is_running() {
            return Err(ContextError::TaskEnded { task_id });
        }
        end.resize(task_id, size)?;
        terminal.resize(size);
        Ok(Some(()))
    }
}
