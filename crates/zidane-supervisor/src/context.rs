//! [`SupervisedContext`]: a session's `ProcessContext`, with detached tasks handed to
//! the supervisor and the workspace's detached tasks shown beside the session's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, Capabilities, ContextError, ExecOptions, ExecOutput,
    ExecutionContext, ExecutionHandle, ExitCallback, KillReason, Naming, OutputChunk, Probe,
    ProbeOutcome, ReadRange, ReadResult, Result, SandboxReport, Screen, StdinMode, TaskEntry,
    TaskExitInfo, TaskId, TaskInput, TtySize,
};
use zidane_process::{ProcessContext, ProcessStamp};

use crate::client::SupervisorClient;
use crate::error::SupervisorError;
use crate::ledger::Teller;
use crate::protocol::{HostTask, StartRequest, TaskView};
use crate::store::MonitorSpec;

/// How often an idle host sweeps for the ends of detached tasks it re-adopted (the
/// tasks it started itself push theirs).
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// How long one wait of a started task's exit watcher lasts before it waits again.
const WATCH_ROUND: Duration = Duration::from_secs(60 * 60);

/// How long a host waits before asking again for kills when no supervisor answers.
const KILLS_RETRY: Duration = Duration::from_secs(2);

/// Who a session is, for the supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetachSettings {
    /// The workspace whose detached tasks the session sees and re-adopts: the host's
    /// working directory (canonical), or its first MCP root.
    pub workspace: PathBuf,
    /// The session's id.
    pub session: String,
    /// What the host is, for `zidane ps` (`zidane mcp`, `zidane`).
    pub host: String,
}

/// An [`ExecutionContext`] over a session's [`ProcessContext`] that runs `detach: true`
/// tasks under the per-user supervisor.
///
/// Every call on the session's own tasks goes to the process context. A detached task
/// (`bash_d<n>`) is started by the supervisor, in the session's sandbox and with its
/// environment policy; its exit is pushed to the session that started it; `list_background`
/// shows every detached task of the workspace, so a later session re-adopts them, and an
/// ended one is offered to exactly one session's model (see [`Ledger`](crate::Ledger)).
/// `destroy` leaves detached tasks running: that is what they are for.
pub struct SupervisedContext {
    inner: Arc<ProcessContext>,
    client: SupervisorClient,
    settings: DetachSettings,
    me: Teller,
    /// Reads detached tasks' logs, which lie outside the session's own readable dirs.
    reader: OnceCell<(ProcessContext, ExecutionHandle)>,
    /// The handle each of the session's own tasks runs under, for a person's kill.
    handles: Arc<Mutex<HashMap<TaskId, ExecutionHandle>>>,
    /// Whether the wait for a person's kills runs (from the first task registered).
    watching: AtomicBool,
    /// Ends that wait with this context.
    stop: CancellationToken,
    /// Wakes that wait when a task was registered (a supervisor runs now).
    registered: Arc<tokio::sync::Notify>,
}

impl Drop for SupervisedContext {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl std::fmt::Debug for SupervisedContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SupervisedContext")
            .field("client", &self.client)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SupervisedContext {
    /// `inner`'s tasks, and detached ones through `client` (give it a
    /// [`Launcher`](crate::Launcher), so the first detached start can start the
    /// supervisor).
    pub fn new(
        inner: Arc<ProcessContext>,
        client: SupervisorClient,
        settings: DetachSettings,
    ) -> Self {
        let me = Teller {
            session: settings.session.clone(),
            host: ProcessStamp::current(),
        };
        Self {
            inner,
            client,
            settings,
            me,
            reader: OnceCell::new(),
            handles: Arc::default(),
            watching: AtomicBool::new(false),
            stop: CancellationToken::new(),
            registered: Arc::default(),
        }
    }

    /// Remembers which handle `task_id` runs under, and from the first one waits for
    /// the kills a person asks of the session's tasks (`zidane kill <host pid>:bash_3`),
    /// so they are ended here and told as the user's.
    fn remember(&self, task_id: TaskId, handle: ExecutionHandle) {
        self.handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(task_id, handle);
        if !self.watching.swap(true, Ordering::SeqCst) {
            tokio::spawn(watch_kills(
                SupervisorClient::new(self.client.paths().clone()),
                self.settings.session.clone(),
                Arc::downgrade(&self.inner),
                Arc::clone(&self.handles),
                Arc::clone(&self.registered),
                self.stop.clone(),
            ));
        }
    }

    /// The session's own context.
    pub fn process(&self) -> &Arc<ProcessContext> {
        &self.inner
    }

    /// Who this session is.
    pub fn settings(&self) -> &DetachSettings {
        &self.settings
    }

    /// The workspace's detached tasks; with `claim`, the ended ones this session is to
    /// tell are claimed for it.
    async fn workspace_tasks(
        &self,
        claim: bool,
    ) -> std::result::Result<Vec<TaskView>, SupervisorError> {
        self.client
            .for_looking()
            .list(Some(&self.settings.workspace), claim.then_some(&self.me))
            .await
    }

    /// The detached task `task_id` of this workspace; `None` for another workspace's or
    /// an unknown one, so no session reaches beyond its workspace.
    async fn own_task(&self, task_id: TaskId) -> Result<Option<TaskView>> {
        Ok(self
            .workspace_tasks(false)
            .await
            .map_err(to_context)?
            .into_iter()
            .find(|task| task.record.id == task_id))
    }

    async fn start_detached(
        &self,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        if !crate::SUPPORTED {
            return Err(ContextError::unsupported("detached tasks"));
        }
        let mut spec = options.spec;
        if spec.cwd.is_none() {
            spec.cwd = Some(self.inner.cwd().to_path_buf());
        }
        let monitor = MonitorSpec {
            // The supervisor gives the id.
            id: TaskId::from_number(0),
            command: command.to_owned(),
            spec,
            env_policy: self.inner.env_policy().clone(),
            sandbox: self.inner.sandbox_policy(),
            limits: options.limits,
            kill_grace: self.inner.kill_grace(),
            stdin: options.stdin,
            tty: options.tty,
        };
        // Only what the session's tasks get leaves this process: its secrets never reach
        // the supervisor (the monitor applies the same policy again).
        let passed = self.inner.passed_env_names();
        let env = std::env::vars_os()
            .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
            .filter(|(key, _)| passed.binary_search(key).is_ok())
            .collect();
        let task = self
            .client
            .start(StartRequest {
                monitor,
                env,
                workspace: self.settings.workspace.clone(),
                session: self.me.clone(),
                host: self.settings.host.clone(),
            })
            .await
            .map_err(|error| {
                ContextError::spawn(command, std::io::Error::other(error.to_string()))
            })?;
        let id = task.record.id;
        if let Some(on_exit) = options.on_exit {
            tokio::spawn(watch_exit(self.client.clone(), id, on_exit));
        }
        Ok(BackgroundStarted::new(
            id,
            task.output_path.unwrap_or_default(),
            task.pid.unwrap_or_default(),
        ))
    }

    /// A session task as `zidane ps` shows it; `None` when its leader has no stamp (it
    /// ended, or there is no process table).
    fn host_task(
        &self,
        id: TaskId,
        pid: u32,
        command: &str,
        cwd: &Path,
        output_path: &Path,
        started_at: chrono::DateTime<chrono::Utc>,
    ) -> Option<HostTask> {
        Some(HostTask {
            id,
            leader: ProcessStamp::of(pid)?,
            command: command.to_owned(),
            cwd: cwd.to_path_buf(),
            output_path: output_path.to_path_buf(),
            started_at,
            session: self.settings.session.clone(),
            host: self.settings.host.clone(),
            host_process: self.me.host,
        })
    }

    async fn reader(&self) -> Result<&(ProcessContext, ExecutionHandle)> {
        self.reader
            .get_or_try_init(|| async {
                let reader = ProcessContext::builder()
                    .lifeline(false)
                    .sweep_orphans_on_start(false)
                    .build();
                let handle = reader.create_handle().await?;
                Ok((reader, handle))
            })
            .await
    }
}

/// Waits for a started task's end and pushes it, as a session task's is pushed.
async fn watch_exit(client: SupervisorClient, id: TaskId, on_exit: ExitCallback) {
    loop {
        match client.wait(id, WATCH_ROUND).await {
            Ok(view) => {
                if let Some(exit) = view.exit {
                    on_exit(exit);
                    return;
                }
            }
            Err(error) => {
                // The supervisor went away; the next one re-adopts the task, and the
                // pull sweep tells its end.
                tracing::debug!(%id, %error, "stopped watching a detached task");
                return;
            }
        }
    }
}

/// Ends each of the session's tasks a person asks to kill, with [`KillReason::User`],
/// until `stop`; waits again after each answer, and a while after each failure (no
/// supervisor runs: then no person can ask).
async fn watch_kills(
    client: SupervisorClient,
    session: String,
    inner: Weak<ProcessContext>,
    handles: Arc<Mutex<HashMap<TaskId, ExecutionHandle>>>,
    registered: Arc<tokio::sync::Notify>,
    stop: CancellationToken,
) {
    loop {
        let asked = tokio::select! {
            () = stop.cancelled() => return,
            asked = client.host_kills(&session) => asked,
        };
        let Ok(ids) = asked else {
            tokio::select! {
                () = stop.cancelled() => return,
                () = registered.notified() => continue,
                () = tokio::time::sleep(KILLS_RETRY) => continue,
            }
        };
        for id in ids {
            let Some(inner) = inner.upgrade() else {
                return;
            };
            let handle = handles
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&id)
                .copied();
            if let Some(handle) = handle {
                // A kill waits out its grace: the next wait does not wait for it.
                tokio::spawn(async move {
                    if let Err(error) = inner
                        .kill_background_because(handle, id, KillReason::User)
                        .await
                    {
                        tracing::debug!(%id, %error, "a person's kill failed");
                    }
                });
            }
        }
    }
}

/// A detached task as the session lists it.
fn entry(task: TaskView) -> TaskEntry {
    let ended = task.exit.is_some();
    let mut entry = TaskEntry::running(
        task.record.id,
        task.pid.unwrap_or_default(),
        task.record.command,
        task.record.cwd,
        task.output_path.unwrap_or_default(),
        task.record.started_at,
    )
    .detached(true)
    .reported(ended && !task.tell)
    .stdin(if task.record.tty.is_some() {
        StdinMode::Pipe
    } else {
        task.record.stdin
    })
    .tty(task.record.tty);
    if let Some(exit) = task.exit {
        entry = entry.ended(exit);
    }
    entry
}

fn to_context(error: SupervisorError) -> ContextError {
    ContextError::Io {
        path: None,
        cause: std::io::Error::other(format!("the task supervisor: {error}")),
    }
}

#[async_trait]
impl ExecutionContext for SupervisedContext {
    fn capabilities(&self) -> Capabilities {
        let inner = self.inner.capabilities();
        if crate::SUPPORTED {
            inner.with_detach().with_sweep_interval(SWEEP_EVERY)
        } else {
            inner
        }
    }

    fn shell(&self) -> Option<String> {
        ExecutionContext::shell(self.inner.as_ref())
    }

    fn sandbox(&self) -> SandboxReport {
        self.inner.sandbox()
    }

    async fn create_handle(&self) -> Result<ExecutionHandle> {
        self.inner.create_handle().await
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<()> {
        self.inner.destroy(handle).await
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput> {
        self.inner.exec(handle, command, options).await
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        if path.starts_with(self.client.paths().tasks_dir()) {
            let own = self
                .workspace_tasks(false)
                .await
                .map_err(to_context)?
                .into_iter()
                .any(|task| task.output_path.as_deref() == Some(path));
            if own {
                let (reader, reader_handle) = self.reader().await?;
                return reader.read_file(*reader_handle, path, range).await;
            }
        }
        self.inner.read_file(handle, path, range).await
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        if options.detach {
            return self.start_detached(command, options).await;
        }
        let held = options.held;
        let started = self.inner.exec_background(handle, command, options).await?;
        self.remember(started.task_id, handle);
        // A held task's id is provisional: it is registered once listed under its name.
        if !held
            && let Some(task) = self.host_task(
                started.task_id,
                started.pid,
                command,
                self.inner.cwd(),
                &started.output_path,
                chrono::Utc::now(),
            )
        {
            let client = self.client.clone();
            let registered = Arc::clone(&self.registered);
            tokio::spawn(async move {
                match client.register(task).await {
                    Ok(()) => registered.notify_one(),
                    Err(error) => {
                        tracing::debug!(%error, "a task could not be registered for zidane ps");
                    }
                }
            });
        }
        Ok(started)
    }

    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        if !task_id.is_detached() {
            return self.inner.kill_background(handle, task_id).await;
        }
        if self.own_task(task_id).await?.is_none() {
            return Ok(None);
        }
        Ok(self.client.kill(task_id).await.map_err(to_context)?.exit)
    }

    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        let mut entries = self.inner.list_background(handle).await?;
        for entry in &entries {
            if entry.status() == zidane_context::TaskStatus::Running {
                self.remember(entry.task_id, handle);
            }
        }
        let own = entries
            .iter()
            .filter(|entry| entry.status() == zidane_context::TaskStatus::Running)
            .filter_map(|entry| {
                self.host_task(
                    entry.task_id,
                    entry.pid,
                    &entry.command,
                    &entry.cwd,
                    &entry.output_path,
                    entry.started_at,
                )
            })
            .collect();
        let listed = self
            .client
            .for_looking()
            .list_for_session(&self.settings.workspace, &self.me, own)
            .await;
        match listed {
            Ok(tasks) => entries.extend(tasks.into_iter().map(entry)),
            // No supervisor runs: no detached task was started since it left, and the
            // next one reads every task back.
            Err(error) => tracing::debug!(%error, "no detached tasks listed"),
        }
        Ok(entries)
    }

    async fn wait_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Option<TaskExitInfo>> {
        if !task_id.is_detached() {
            return self
                .inner
                .wait_background(handle, task_id, timeout, cancel)
                .await;
        }
        if self.own_task(task_id).await?.is_none() {
            return Ok(None);
        }
        tokio::select! {
            waited = self.client.wait(task_id, timeout) => Ok(waited.map_err(to_context)?.exit),
            () = cancel.cancelled() => Ok(None),
        }
    }

    async fn follow_output(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        offset: u64,
        max: usize,
    ) -> Result<Option<OutputChunk>> {
        if task_id.is_detached() {
            return Err(ContextError::unsupported("following a detached task's log"));
        }
        self.inner.follow_output(handle, task_id, offset, max).await
    }

    async fn name_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Naming>> {
        if task_id.is_detached() {
            return Ok(Some(Naming::AtStart));
        }
        self.inner.name_background(handle, task_id).await
    }

    async fn forget_background(&self, handle: ExecutionHandle, task_id: TaskId) -> Result<bool> {
        if task_id.is_detached() {
            return Ok(false);
        }
        self.inner.forget_background(handle, task_id).await
    }

    async fn reassign_background_tasks(
        &self,
        from: ExecutionHandle,
        to: ExecutionHandle,
        on_exit: Option<ExitCallback>,
    ) -> Result<Vec<TaskEntry>> {
        self.inner
            .reassign_background_tasks(from, to, on_exit)
            .await
    }

    async fn write_input(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        input: TaskInput,
    ) -> Result<Option<()>> {
        if !task_id.is_detached() {
            return self.inner.write_input(handle, task_id, input).await;
        }
        let Some(task) = self.own_task(task_id).await? else {
            return Ok(None);
        };
        if task.exit.is_some() {
            return Ok(None);
        }
        if task.record.stdin == StdinMode::Closed && task.record.tty.is_none() {
            return Err(ContextError::NoInput { task_id });
        }
        self.client
            .input(task_id, input)
            .await
            .map(Some)
            .map_err(to_context)
    }

    async fn read_screen(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Screen>> {
        if !task_id.is_detached() {
            return self.inner.read_screen(handle, task_id).await;
        }
        let Some(task) = self.own_task(task_id).await? else {
            return Ok(None);
        };
        if task.record.tty.is_none() {
            return Err(ContextError::NotATerminal { task_id });
        }
        if task.exit.is_some() {
            return Ok(None);
        }
        self.client
            .screen(task_id)
            .await
            .map(Some)
            .map_err(to_context)
    }

    async fn probe(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        probe: Probe,
        timeout: Duration,
    ) -> Result<ProbeOutcome> {
        if task_id.is_detached() {
            return Err(ContextError::unsupported("probing a detached task"));
        }
        self.inner.probe(handle, task_id, probe, timeout).await
    }

    async fn resize(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        size: TtySize,
    ) -> Result<Option<()>> {
        if !task_id.is_detached() {
            return self.inner.resize(handle, task_id, size).await;
        }
        let Some(task) = self.own_task(task_id).await? else {
            return Ok(None);
        };
        if task.record.tty.is_none() {
            return Err(ContextError::NotATerminal { task_id });
        }
        if task.exit.is_some() {
            return Ok(None);
        }
        self.client
            .resize(task_id, size)
            .await
            .map(Some)
            .map_err(to_context)
    }

    async fn exits_told(&self, handle: ExecutionHandle, task_ids: &[TaskId]) -> Result<()> {
        let detached: Vec<TaskId> = task_ids
            .iter()
            .copied()
            .filter(|id| id.is_detached())
            .collect();
        if !detached.is_empty() {
            self.client
                .told(&self.settings.session, detached)
                .await
                .map_err(to_context)?;
        }
        self.inner.exits_told(handle, task_ids).await
    }
}
