//! How a [`ProcessContext`] carries out each call of [`ExecutionContext`]: foreground
//! commands, background tasks and their input, output, screen and end.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use tracing::Instrument;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, CancellationToken, Capabilities, ContextError,
    DetachedTasks, ExecOptions, ExecOutput, ExecutionContext, ExecutionHandle, ExitCallback,
    KillReason, Naming, OutputChunk, Probe, ProbeOutcome, ReadRange, ReadResult, Result,
    SandboxReport, Screen, StdinMode, TaskEntry, TaskExitInfo, TaskId, TaskInput, TtySize,
    validate_command, wait_for_exit,
};

use crate::containment;
use crate::containment::owner_marker::MarkedWork;
use crate::exec::{ForegroundRun, run as run_foreground};
use crate::read::read_file;
use crate::sandbox::denial;
use crate::spawn::TaskIo;
use crate::spawn::launch::Launch;
use crate::spawn::task_shell::{LOG_NAME_ATTEMPTS, start_task_shell};
use crate::spawn::{resolve_cwd, validate_env};
use crate::task::budget::Budgets;
use crate::task::follow::follow;
use crate::task::input::InputEnd;
use crate::task::input_writer::pipe_identity;
use crate::task::kill_wait::kill_and_wait;
use crate::task::log_file::LogWriter;
use crate::task::log_file::create_output_dir;
use crate::task::registry::Named;
use crate::task::supervise::Supervisor;
use crate::task::terminal_screen::TerminalScreen;
use crate::task::timestamp::task_log_path;
use crate::task::watchdog::StallWatch;
use crate::task::{NewTask, Task};

use super::{ProcessContext, TERMINAL_TERM};

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

    fn sandbox(&self) -> SandboxReport {
        self.sandbox.report()
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
        validate_env(&options.spec.env)?;
        let cwd = resolve_cwd(&self.cwd, options.spec.cwd.as_deref())?;
        let serial = self.exec_serial.fetch_add(1, Ordering::Relaxed) + 1;
        let (env, marker) = self.marked_env(&options.spec.env, MarkedWork::Exec(serial));
        let plan = self
            .sandbox
            .plan_for(&options.spec.sandbox, &self.task_log_dirs());
        let prefix = self
            .sandbox
            .prefix(&options.spec.sandbox, plan.as_ref(), &cwd)
            .unwrap_or_default();
        let mut output = run_foreground(ForegroundRun {
            launch: Launch {
                shell: &self.shell,
                path: self.process_path,
                prefix: &prefix,
            },
            command,
            cwd: &cwd,
            env: &env,
            marker,
            timeout: options.timeout,
            cancel: options.cancel,
            max_output_bytes: options.max_output_bytes,
            kill_grace: self.kill_grace,
        })
        .await?;
        if output.exit_code != 0
            && let Some(plan) = plan
            && let Some(line) = denial::explain(&output.output, &plan, &cwd)
        {
            output.push_line(&line);
        }
        Ok(output)
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        self.registry.check(handle)?;
        let path = self.cwd.join(path);
        self.check_readable(&path)?;
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
        // A task of this context ends with it: outliving the host is a supervisor's job
        // (zidane-supervisor's `SupervisedContext`), never silently dropped here.
        if options.detach {
            return Err(ContextError::unsupported("detach"));
        }
        // Labels choose a machine of a fleet; this context has one machine.
        if !options.labels.is_empty() {
            return Err(ContextError::unsupported("labels"));
        }
        validate_command(command)?;
        validate_env(&options.spec.env)?;
        let cwd = resolve_cwd(&self.cwd, options.spec.cwd.as_deref())?;
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

        let reservation = self
            .registry
            .reserve(handle, self.max_background_tasks, options.held)?;
        let task_id = reservation.task_id;
        let mut task_env = options.spec.env;
        if matches!(io, TaskIo::Terminal(_)) {
            task_env
                .entry("TERM".to_owned())
                .or_insert_with(|| TERMINAL_TERM.to_owned());
        }
        let (env, marker) = self.marked_env(&task_env, MarkedWork::Task(task_id));
        let name = (task_id, self.timestamp.as_str());
        let mut task_plan = self.sandbox.plan_for(&options.spec.sandbox, &[]);
        if let Some(plan) = task_plan.take() {
            // Its own log stays readable inside, where zidane's user dir is hidden: the
            // directory is made now so that it can be bound.
            if create_output_dir(&output_dir).is_ok() {
                self.note_task_log_dir(&output_dir);
            }
            task_plan = Some(plan.readable_inside(&self.task_log_dirs()));
        }
        let prefix = self
            .sandbox
            .prefix(&options.spec.sandbox, task_plan.as_ref(), &cwd)
            .unwrap_or_default();
        let launch = Launch {
            shell: &self.shell,
            path: self.process_path,
            prefix: &prefix,
        };
        let started = start_task_shell(&launch, command, &cwd, &env, &output_dir, name, io);
        if started.is_ok() {
            self.note_task_log_dir(&output_dir);
        }
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
            sandbox: task_plan,
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
        Ok(BackgroundStarted::new(task_id, output_path, pid))
    }

    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        self.kill_background_because(handle, task_id, KillReason::Requested)
            .await
    }

    async fn name_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Naming>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        let old_path = task.output_path();
        let rename_to = |id: TaskId| {
            let dir = old_path.parent().unwrap_or_else(|| Path::new(""));
            (0..LOG_NAME_ATTEMPTS)
                .map(|attempt| task_log_path(dir, id, &self.timestamp, attempt))
                .collect()
        };
        Ok(match self.registry.name(handle, task_id, rename_to)? {
            None => None,
            Some(Named::Ended(exit)) => Some(Naming::Ended(exit)),
            Some(Named::Named(id)) => {
                tracing::info!(held = %task_id, task_id = %id, "held task named");
                Some(Naming::Named(BackgroundStarted::new(
                    id,
                    task.output_path(),
                    task.pid,
                )))
            }
        })
    }

    async fn forget_background(&self, handle: ExecutionHandle, task_id: TaskId) -> Result<bool> {
        self.registry.check(handle)?;
        let Some(task) = self.registry.settled_held(handle, task_id) else {
            return Ok(false);
        };
        match std::fs::remove_file(task.output_path()) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(cause) => {
                return Err(ContextError::OutputDir {
                    path: task.output_path(),
                    cause,
                });
            }
        }
        Ok(true)
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

impl ProcessContext {
    /// [`kill_background`](ExecutionContext::kill_background), with the reason its end
    /// will carry: what a host that kills for someone else (a person's `zidane kill`,
    /// [`KillReason::User`]) says instead of [`KillReason::Requested`]. A task that had
    /// already ended keeps its own end.
    ///
    /// Errors: as `kill_background`'s.
    pub async fn kill_background_because(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        reason: KillReason,
    ) -> Result<Option<TaskExitInfo>> {
        let Some(task) = self.registry.task(handle, task_id)? else {
            return Ok(None);
        };
        // The group first (a task that already ended has none left), then whatever
        // left it: `setsid` escapees outlive even a task that exited on its own.
        let exit = match task.exit_info() {
            Some(exit) => exit,
            None => kill_and_wait(&task, reason, self.kill_grace).await?,
        };
        task.processes.end_escapees(self.kill_grace).await;
        Ok(Some(exit))
    }
}
