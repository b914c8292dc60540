//! `MockContext`: an in-memory `ExecutionContext` with manual control of exits.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::capabilities::{Capabilities, DetachedTasks};
use crate::context::ExecutionContext;
use crate::error::{ContextError, Result};
use crate::exec::{ExecOptions, ExecOutput, ReadRange, ReadResult, validate_command};
use crate::exit_watch::wait_for_exit;
use crate::handle::ExecutionHandle;
use crate::interactive::{Screen, TaskInput, TtySize};
use crate::output::OutputChunk;
use crate::signal::Signal;
use crate::task::{
    BackgroundOptions, BackgroundStarted, ExitCallback, Naming, StallCallback, StallInfo,
    TaskEntry, TaskExitInfo, TaskStatus,
};
use crate::task_id::TaskId;

/// A call made to a [`MockContext`], in the order it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MockCall {
    /// `create_handle` returned this handle.
    CreateHandle(ExecutionHandle),
    /// `destroy(handle)`.
    Destroy(ExecutionHandle),
    /// `exec(handle, command)`.
    Exec(ExecutionHandle, String),
    /// `read_file(handle, path)`.
    ReadFile(ExecutionHandle, PathBuf),
    /// `exec_background(handle, command)`.
    ExecBackground(ExecutionHandle, String),
    /// `kill_background(handle, task_id)`.
    KillBackground(ExecutionHandle, TaskId),
    /// `list_background(handle)`.
    ListBackground(ExecutionHandle),
    /// `wait_background(handle, task_id)`.
    WaitBackground(ExecutionHandle, TaskId),
    /// `name_background(handle, task_id)`.
    NameBackground(ExecutionHandle, TaskId),
    /// `forget_background(handle, task_id)`.
    ForgetBackground(ExecutionHandle, TaskId),
    /// `reassign_background_tasks(from, to)`.
    Reassign(ExecutionHandle, ExecutionHandle),
    /// `write_input(handle, task_id, input)`.
    WriteInput(ExecutionHandle, TaskId, TaskInput),
    /// `read_screen(handle, task_id)`.
    ReadScreen(ExecutionHandle, TaskId),
    /// `resize(handle, task_id, size)`.
    Resize(ExecutionHandle, TaskId, TtySize),
    /// `exits_told(handle, task_ids)`.
    ExitsTold(ExecutionHandle, Vec<TaskId>),
}

type ExecHandler = Arc<dyn Fn(&str, &ExecOptions) -> ExecOutput + Send + Sync>;

struct MockTask {
    handle: ExecutionHandle,
    entry: TaskEntry,
    on_exit: Option<ExitCallback>,
    on_stall: Option<StallCallback>,
    done: watch::Sender<Option<TaskExitInfo>>,
    /// Every byte written to the task's input.
    input: Vec<u8>,
    /// End of input was sent to its pipe.
    input_closed: bool,
    /// What `read_screen` answers for a terminal task (`set_screen`).
    screen: Option<Screen>,
}

#[derive(Default)]
struct State {
    next_handle: u64,
    live_handles: Vec<ExecutionHandle>,
    destroyed_handles: Vec<ExecutionHandle>,
    next_task: u64,
    /// Numbers the provisional ids of held tasks.
    next_held: u64,
    /// Numbers detached tasks (`bash_d<n>`).
    next_detached: u64,
    tasks: BTreeMap<TaskId, MockTask>,
    files: HashMap<PathBuf, Vec<u8>>,
    calls: Vec<MockCall>,
}

struct Config {
    capabilities: Capabilities,
    push_exits: bool,
    reassign: bool,
    destroy_delay: Option<Duration>,
    task_duration: Option<Duration>,
    exec_handler: Option<ExecHandler>,
}

/// An in-memory [`ExecutionContext`] for testing the layers above.
///
/// Background tasks never run: a test ends them with [`finish`](Self::finish) or
/// [`terminate`](Self::terminate), makes them stall with [`stall`](Self::stall), writes
/// their log with [`write_output`](Self::write_output), and reads back the calls made
/// with [`calls`](Self::calls). It keeps a real context's guarantees: `on_exit` exactly
/// once, idempotent kill, waiters woken on exit, reassign moving tasks and callbacks.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::{Arc, Mutex};
/// use zidane_context::{BackgroundOptions, ExecutionContext, MockContext, TaskStatus};
///
/// let context = MockContext::new();
/// let handle = context.create_handle().await?;
/// let exits = Arc::new(Mutex::new(Vec::new()));
/// let sink = exits.clone();
/// let started = context
///     .exec_background(handle, "make", BackgroundOptions::new("/tasks")
///         .on_exit(move |exit| sink.lock().unwrap().push(exit)))
///     .await?;
/// context.finish(started.task_id, 0);
/// assert_eq!(exits.lock().unwrap()[0].status, TaskStatus::Exited);
/// # Ok::<(), zidane_context::ContextError>(())
/// # }).unwrap();
/// ```
pub struct MockContext {
    state: Mutex<State>,
    config: Mutex<Config>,
    /// Bumped whenever a task writes or ends, for `follow_output`.
    output_changed: watch::Sender<u64>,
}

impl Default for MockContext {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MockContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockContext").finish_non_exhaustive()
    }
}

impl MockContext {
    /// A mock with process-lifetime background tasks and reassignment support.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State {
                next_handle: 1,
                next_task: 1,
                next_held: 1,
                next_detached: 1,
                ..State::default()
            }),
            output_changed: watch::Sender::new(0),
            config: Mutex::new(Config {
                capabilities: Capabilities::new(DetachedTasks::ProcessLifetime)
                    .with_follow_output(),
                push_exits: true,
                reassign: true,
                destroy_delay: None,
                task_duration: None,
                exec_handler: None,
            }),
        }
    }

    /// Reports `detached` as the background capability (`None` also refuses background
    /// calls with `Unsupported`).
    #[must_use]
    pub fn with_detached_tasks(self, detached: DetachedTasks) -> Self {
        let capabilities = Capabilities::new(detached);
        // The mock follows the logs of whatever tasks it runs.
        self.config().capabilities = if detached.supported() {
            capabilities.with_follow_output()
        } else {
            capabilities
        };
        self
    }

    /// Reports these capabilities (for example a durable context that asks hosts to
    /// sweep: `Capabilities::new(DetachedTasks::Durable).with_sweep_interval(…)`).
    #[must_use]
    pub fn with_capabilities(self, capabilities: Capabilities) -> Self {
        self.config().capabilities = capabilities;
        self
    }

    /// Offers detached tasks ([`Capabilities::detach`]): a start with
    /// [`BackgroundOptions::detach`] gets a detached id (`bash_d1`, `bash_d2`, …) and a
    /// detached entry; without this such a start is refused with `Unsupported`.
    /// [`exits_told`](ExecutionContext::exits_told) marks entries
    /// [`reported`](TaskEntry::reported), as a supervisor shared by sessions would.
    #[must_use]
    pub fn with_detach(self) -> Self {
        let mut config = self.config();
        config.capabilities = config.capabilities.with_detach();
        drop(config);
        self
    }

    /// Places tasks by labels ([`Capabilities::placement`]): a start's labels are
    /// accepted, as a fleet's context would; without this they are refused.
    #[must_use]
    pub fn with_placement(self) -> Self {
        let mut config = self.config();
        config.capabilities = config.capabilities.with_placement();
        drop(config);
        self
    }

    /// Never calls `on_exit`: exits are only recorded, for `list_background` and
    /// `wait_background` to find — like a durable context whose tasks outlive the host
    /// that started them.
    #[must_use]
    pub fn without_exit_push(self) -> Self {
        self.config().push_exits = false;
        self
    }

    /// Makes `reassign_background_tasks` return `Unsupported`, like a context that
    /// cannot move tasks.
    #[must_use]
    pub fn without_reassign(self) -> Self {
        self.config().reassign = false;
        self
    }

    /// Makes `destroy` take this long before it does anything (to test timeouts).
    pub fn set_destroy_delay(&self, delay: Option<Duration>) {
        self.config().destroy_delay = delay;
    }

    /// Makes every exit report this duration (for stable snapshots); `None`: real time.
    pub fn set_task_duration(&self, duration: Option<Duration>) {
        self.config().task_duration = duration;
    }

    /// Answers `exec` with this function (default: empty output, exit code 0).
    pub fn set_exec_handler(
        &self,
        handler: impl Fn(&str, &ExecOptions) -> ExecOutput + Send + Sync + 'static,
    ) {
        self.config().exec_handler = Some(Arc::new(handler));
    }

    /// Puts a file in the mock's file system, for `read_file`.
    pub fn set_file(&self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        self.state().files.insert(path.into(), contents.into());
    }

    /// Appends to a task's log and counts the bytes. False for an unknown or ended task.
    pub fn write_output(&self, task_id: TaskId, bytes: &[u8]) -> bool {
        let mut state = self.state();
        let Some(task) = state.tasks.get_mut(&task_id) else {
            return false;
        };
        if task.entry.status().is_terminal() {
            return false;
        }
        task.entry.bytes_written += bytes.len() as u64;
        let path = task.entry.output_path.clone();
        state
            .files
            .entry(path)
            .or_default()
            .extend_from_slice(bytes);
        drop(state);
        self.output_changed.send_modify(|n| *n += 1);
        true
    }

    /// Ends a running task on its own with `exit_code`. Fires `on_exit` and wakes
    /// waiters. False if the task is unknown or already ended (nothing fires twice).
    pub fn finish(&self, task_id: TaskId, exit_code: i32) -> bool {
        self.settle(task_id, TaskStatus::Exited, exit_code, None)
    }

    /// Ends a running task by a signal it did not get from us (status `Exited`,
    /// exit code `128 + signo`). False if unknown or already ended.
    pub fn terminate(&self, task_id: TaskId, signal: Signal) -> bool {
        self.settle(
            task_id,
            TaskStatus::Exited,
            signal.exit_code(),
            Some(signal),
        )
    }

    /// Fires the task's `on_stall` as if it had been quiet for `stalled_for`. False if
    /// the task is unknown, ended, or has no stall callback.
    pub fn stall(&self, task_id: TaskId, stalled_for: Duration) -> bool {
        let (callback, info) = {
            let state = self.state();
            let Some(task) = state.tasks.get(&task_id) else {
                return false;
            };
            let Some(callback) = task.on_stall.clone() else {
                return false;
            };
            if task.entry.status().is_terminal() {
                return false;
            }
            let info = StallInfo {
                task_id,
                command: task.entry.command.clone(),
                output_path: task.entry.output_path.clone(),
                stalled_for,
                bytes_written: task.entry.bytes_written,
                diagnosis: None,
                takes_input: task.entry.takes_input(),
                terminal: task.entry.tty.is_some(),
            };
            (callback, info)
        };
        callback(info);
        true
    }

    /// Marks a task's end as told to another session
    /// ([`TaskEntry::reported`]), as a supervisor does when another session's model was
    /// told it. False for an unknown task.
    pub fn set_reported(&self, task_id: TaskId) -> bool {
        let mut state = self.state();
        match state.tasks.get_mut(&task_id) {
            Some(task) => {
                task.entry.reported = true;
                true
            }
            None => false,
        }
    }

    /// The task ids of every `exits_told` call so far, one list per call, in order.
    pub fn exits_told_calls(&self) -> Vec<Vec<TaskId>> {
        self.state()
            .calls
            .iter()
            .filter_map(|call| match call {
                MockCall::ExitsTold(_, ids) => Some(ids.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every byte written to a task's input so far (`write_input`; a terminal's end of
    /// input is its ctrl-d byte). Empty for an unknown task.
    pub fn input(&self, task_id: TaskId) -> Vec<u8> {
        self.state()
            .tasks
            .get(&task_id)
            .map(|t| t.input.clone())
            .unwrap_or_default()
    }

    /// Sets what `read_screen` answers for a terminal task (a blank screen of its size
    /// until this is called). False if the task is unknown or has no terminal.
    pub fn set_screen(&self, task_id: TaskId, screen: Screen) -> bool {
        let mut state = self.state();
        match state.tasks.get_mut(&task_id) {
            Some(task) if task.entry.tty.is_some() => {
                task.screen = Some(screen);
                true
            }
            _ => false,
        }
    }

    /// The task of `handle` for an input or terminal call: `Ok(None)` when unknown.
    fn interactive_task(
        state: &mut State,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<&mut MockTask>> {
        Self::check_handle(state, handle)?;
        Ok(state.tasks.get_mut(&task_id).filter(|t| t.handle == handle))
    }

    /// Every call made so far, in order.
    pub fn calls(&self) -> Vec<MockCall> {
        self.state().calls.clone()
    }

    /// The current entry of a task, whatever its handle.
    pub fn task(&self, task_id: TaskId) -> Option<TaskEntry> {
        self.state().tasks.get(&task_id).map(|t| t.entry.clone())
    }

    /// The handle that owns a task now.
    pub fn task_handle(&self, task_id: TaskId) -> Option<ExecutionHandle> {
        self.state().tasks.get(&task_id).map(|t| t.handle)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock only happens in a failing test; keep going.
        crate::lock(&self.state)
    }

    fn config(&self) -> MutexGuard<'_, Config> {
        crate::lock(&self.config)
    }

    fn now_and_end(&self, started_at: DateTime<Utc>) -> DateTime<Utc> {
        match self.config().task_duration {
            Some(d) => started_at + chrono::Duration::from_std(d).unwrap_or_default(),
            None => Utc::now(),
        }
    }

    /// The one place a task ends: under the lock, exactly once; callbacks outside it.
    fn settle(
        &self,
        task_id: TaskId,
        status: TaskStatus,
        exit_code: i32,
        signal: Option<Signal>,
    ) -> bool {
        let started_at = match self.state().tasks.get(&task_id) {
            Some(task) => task.entry.started_at,
            None => return false,
        };
        let ended_at = self.now_and_end(started_at);
        let (callback, exit, done) = {
            let mut state = self.state();
            let Some(task) = state.tasks.get_mut(&task_id) else {
                return false;
            };
            if task.entry.status().is_terminal() {
                return false;
            }
            let exit = task
                .entry
                .exit_at(status, exit_code, ended_at)
                .signal(signal);
            task.entry.end(exit.clone());
            (task.on_exit.take(), exit, task.done.clone())
        };
        done.send_replace(Some(exit.clone()));
        self.output_changed.send_modify(|n| *n += 1);
        let push = self.config().push_exits;
        if let (true, Some(callback)) = (push, callback) {
            callback(exit);
        }
        true
    }

    fn check_handle(state: &State, handle: ExecutionHandle) -> Result<()> {
        if state.destroyed_handles.contains(&handle) {
            Err(ContextError::Destroyed(handle))
        } else if state.live_handles.contains(&handle) {
            Ok(())
        } else {
            Err(ContextError::UnknownHandle(handle))
        }
    }

    fn check_background(&self) -> Result<()> {
        if self.config().capabilities.detached_tasks.supported() {
            Ok(())
        } else {
            Err(ContextError::unsupported("exec_background"))
        }
    }

    fn record(&self, call: MockCall) {
        self.state().calls.push(call);
    }
}

#[async_trait]
impl ExecutionContext for MockContext {
    fn capabilities(&self) -> Capabilities {
        self.config().capabilities
    }

    async fn create_handle(&self) -> Result<ExecutionHandle> {
        let mut state = self.state();
        let handle = ExecutionHandle::new(state.next_handle);
        state.next_handle += 1;
        state.live_handles.push(handle);
        state.calls.push(MockCall::CreateHandle(handle));
        Ok(handle)
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<()> {
        self.record(MockCall::Destroy(handle));
        let delay = self.config().destroy_delay;
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        let running: Vec<TaskId> = {
            let state = self.state();
            if state.destroyed_handles.contains(&handle) {
                return Ok(());
            }
            Self::check_handle(&state, handle)?;
            state
                .tasks
                .iter()
                .filter(|(_, t)| t.handle == handle && !t.entry.status().is_terminal())
                .map(|(id, _)| *id)
                .collect()
        };
        for task_id in running {
            self.settle(
                task_id,
                TaskStatus::Killed,
                Signal::TERM.exit_code(),
                Some(Signal::TERM),
            );
        }
        let mut state = self.state();
        state.tasks.retain(|_, t| t.handle != handle);
        state.live_handles.retain(|h| *h != handle);
        state.destroyed_handles.push(handle);
        Ok(())
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput> {
        {
            let mut state = self.state();
            state.calls.push(MockCall::Exec(handle, command.to_owned()));
            Self::check_handle(&state, handle)?;
        }
        validate_command(command)?;
        let handler = self.config().exec_handler.clone();
        Ok(match handler {
            Some(handler) => handler(command, &options),
            None => ExecOutput {
                output: String::new(),
                exit_code: 0,
                signal: None,
                timed_out: false,
                cancelled: false,
                truncated_bytes: 0,
                duration: Duration::ZERO,
            },
        })
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        let mut state = self.state();
        state
            .calls
            .push(MockCall::ReadFile(handle, path.to_owned()));
        Self::check_handle(&state, handle)?;
        let bytes = state.files.get(path).ok_or_else(|| {
            ContextError::io(path, std::io::Error::from(std::io::ErrorKind::NotFound))
        })?;
        let text = String::from_utf8_lossy(bytes);
        let all: Vec<&str> = text.lines().collect();
        let total_lines = all.len();
        let (offset, start, end) = if range.from_end {
            let end = total_lines.saturating_sub(range.offset);
            let start = end.saturating_sub(range.limit_or_default());
            (start, start, end)
        } else {
            let start = range.offset.min(total_lines);
            let end = start
                .saturating_add(range.limit_or_default())
                .min(total_lines);
            (range.offset, start, end)
        };
        Ok(ReadResult {
            path: path.to_owned(),
            offset,
            lines: all[start..end].iter().map(|l| (*l).to_owned()).collect(),
            total_lines,
            remaining: total_lines - end,
            stopped_after_bytes: None,
            bytes_before: None,
        })
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        self.record(MockCall::ExecBackground(handle, command.to_owned()));
        self.check_background()?;
        if options.detach && !self.config().capabilities.detach {
            return Err(ContextError::unsupported("detach"));
        }
        if !options.labels.is_empty() && !self.config().capabilities.placement {
            return Err(ContextError::unsupported("labels"));
        }
        validate_command(command)?;
        let mut state = self.state();
        Self::check_handle(&state, handle)?;
        let detached = if options.detach {
            let n = state.next_detached;
            state.next_detached += 1;
            TaskId::detached(n)
        } else {
            None
        };
        let task_id = if let Some(id) = detached {
            id
        } else if options.held {
            state.next_held += 1;
            TaskId::held(state.next_held - 1)
        } else {
            state.next_task += 1;
            TaskId::from_number(state.next_task - 1)
        };
        let output_path = mock_log_path(&options.output_dir, task_id);
        let pid = 10_000 + u32::try_from(task_id.number() % 1_000_000).unwrap_or(0);
        let cwd = options
            .spec
            .cwd
            .clone()
            .unwrap_or_else(|| PathBuf::from("/"));
        let stdin = if options.takes_input() {
            crate::StdinMode::Pipe
        } else {
            crate::StdinMode::Closed
        };
        let entry = TaskEntry::running(task_id, pid, command, cwd, output_path.clone(), Utc::now())
            .stdin(stdin)
            .tty(options.tty)
            .detached(options.detach);
        state.files.insert(output_path.clone(), Vec::new());
        state.tasks.insert(
            task_id,
            MockTask {
                handle,
                entry,
                on_exit: options.on_exit,
                on_stall: options.on_stall,
                done: watch::Sender::new(None),
                input: Vec::new(),
                input_closed: false,
                screen: None,
            },
        );
        Ok(BackgroundStarted::new(task_id, output_path, pid))
    }

    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        self.record(MockCall::KillBackground(handle, task_id));
        self.check_background()?;
        {
            let state = self.state();
            Self::check_handle(&state, handle)?;
            match state.tasks.get(&task_id) {
                Some(task) if task.handle == handle => {}
                _ => return Ok(None),
            }
        }
        self.settle(
            task_id,
            TaskStatus::Killed,
            Signal::TERM.exit_code(),
            Some(Signal::TERM),
        );
        Ok(self.task(task_id).and_then(|entry| entry.exit_info()))
    }

    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        self.record(MockCall::ListBackground(handle));
        self.check_background()?;
        let state = self.state();
        Self::check_handle(&state, handle)?;
        Ok(state
            .tasks
            .values()
            .filter(|t| t.handle == handle && !t.entry.task_id.is_held())
            .map(|t| t.entry.clone())
            .collect())
    }

    async fn name_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Naming>> {
        self.record(MockCall::NameBackground(handle, task_id));
        self.check_background()?;
        let mut state = self.state();
        Self::check_handle(&state, handle)?;
        let held = state
            .tasks
            .get(&task_id)
            .filter(|task| task.handle == handle && task_id.is_held());
        let Some(task) = held else {
            return Ok(None);
        };
        if let Some(exit) = task.entry.exit_info() {
            return Ok(Some(Naming::Ended(exit)));
        }
        let named = TaskId::from_number(state.next_task);
        state.next_task += 1;
        let Some(mut task) = state.tasks.remove(&task_id) else {
            return Ok(None);
        };
        let old_path = task.entry.output_path.clone();
        let output_dir = old_path.parent().map(PathBuf::from).unwrap_or_default();
        let output_path = mock_log_path(&output_dir, named);
        let log = state.files.remove(&old_path).unwrap_or_default();
        state.files.insert(output_path.clone(), log);
        task.entry.task_id = named;
        task.entry.output_path = output_path.clone();
        let pid = task.entry.pid;
        state.tasks.insert(named, task);
        Ok(Some(Naming::Named(BackgroundStarted::new(
            named,
            output_path,
            pid,
        ))))
    }

    async fn forget_background(&self, handle: ExecutionHandle, task_id: TaskId) -> Result<bool> {
        self.record(MockCall::ForgetBackground(handle, task_id));
        self.check_background()?;
        let mut state = self.state();
        Self::check_handle(&state, handle)?;
        let ended = state.tasks.get(&task_id).is_some_and(|task| {
            task.handle == handle && task_id.is_held() && task.entry.status().is_terminal()
        });
        if !ended {
            return Ok(false);
        }
        let log = state
            .tasks
            .get(&task_id)
            .map(|task| task.entry.output_path.clone());
        if let Some(log) = log {
            state.files.remove(&log);
        }
        Ok(true)
    }

    async fn wait_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Option<TaskExitInfo>> {
        self.record(MockCall::WaitBackground(handle, task_id));
        self.check_background()?;
        let mut done = {
            let state = self.state();
            Self::check_handle(&state, handle)?;
            match state.tasks.get(&task_id) {
                Some(task) if task.handle == handle => task.done.subscribe(),
                _ => return Ok(None),
            }
        };
        // The watch holds the exit once sent, so an exit racing this wait is never lost.
        Ok(wait_for_exit(&mut done, timeout, &cancel).await)
    }

    async fn follow_output(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        offset: u64,
        max: usize,
    ) -> Result<Option<OutputChunk>> {
        self.check_background()?;
        let mut changed = self.output_changed.subscribe();
        loop {
            changed.borrow_and_update();
            {
                let state = self.state();
                Self::check_handle(&state, handle)?;
                let Some(task) = state.tasks.get(&task_id).filter(|t| t.handle == handle) else {
                    return Ok(None);
                };
                let ended = task.entry.status().is_terminal();
                let log = state
                    .files
                    .get(&task.entry.output_path)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                let len = log.len() as u64;
                if offset > len {
                    return Ok(Some(OutputChunk {
                        offset: len,
                        bytes: Vec::new(),
                        ended,
                    }));
                }
                if offset < len || ended {
                    let start = usize::try_from(offset).unwrap_or(log.len());
                    let end = start.saturating_add(max).min(log.len());
                    return Ok(Some(OutputChunk {
                        offset,
                        bytes: log[start..end].to_vec(),
                        ended,
                    }));
                }
            }
            // The sender lives as long as the mock, so this only waits.
            let _ = changed.changed().await;
        }
    }

    async fn reassign_background_tasks(
        &self,
        from: ExecutionHandle,
        to: ExecutionHandle,
        on_exit: Option<ExitCallback>,
    ) -> Result<Vec<TaskEntry>> {
        self.record(MockCall::Reassign(from, to));
        self.check_background()?;
        if !self.config().reassign {
            return Err(ContextError::unsupported("reassign_background_tasks"));
        }
        let mut state = self.state();
        Self::check_handle(&state, from)?;
        Self::check_handle(&state, to)?;
        let mut moved = Vec::new();
        for task in state.tasks.values_mut() {
            if task.handle == from && !task.entry.status().is_terminal() {
                task.handle = to;
                task.on_exit.clone_from(&on_exit);
                moved.push(task.entry.clone());
            }
        }
        Ok(moved)
    }

    /// Records the call, and marks the tasks' entries [`reported`](TaskEntry::reported)
    /// (a detached task's end, told to one session, is told to no other).
    async fn exits_told(&self, handle: ExecutionHandle, task_ids: &[TaskId]) -> Result<()> {
        let mut state = self.state();
        state
            .calls
            .push(MockCall::ExitsTold(handle, task_ids.to_vec()));
        Self::check_handle(&state, handle)?;
        for task_id in task_ids {
            if let Some(task) = state.tasks.get_mut(task_id) {
                task.entry.reported = true;
            }
        }
        Ok(())
    }

    /// Input to a task started with `stdin: Pipe` or a `tty`, recorded for
    /// [`input`](MockContext::input). `Unsupported` unless the capabilities say
    /// `task_input`.
    async fn write_input(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        input: TaskInput,
    ) -> Result<Option<()>> {
        self.record(MockCall::WriteInput(handle, task_id, input.clone()));
        if !self.config().capabilities.task_input {
            return Err(ContextError::unsupported("write_input"));
        }
        let mut state = self.state();
        let Some(task) = Self::interactive_task(&mut state, handle, task_id)? else {
            return Ok(None);
        };
        if !task.entry.takes_input() {
            return Err(ContextError::NoInput { task_id });
        }
        if task.entry.status().is_terminal() {
            return Err(ContextError::TaskEnded { task_id });
        }
        if task.input_closed {
            return Err(ContextError::InputClosed { task_id });
        }
        match input {
            TaskInput::Bytes(bytes) => task.input.extend_from_slice(&bytes),
            TaskInput::Eof if task.entry.tty.is_some() => task.input.push(0x04),
            TaskInput::Eof => task.input_closed = true,
        }
        Ok(Some(()))
    }

    /// The screen set with [`set_screen`](MockContext::set_screen), else a blank one
    /// of the task's size. `Unsupported` unless the capabilities say `terminals`.
    async fn read_screen(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Screen>> {
        self.record(MockCall::ReadScreen(handle, task_id));
        if !self.config().capabilities.terminals {
            return Err(ContextError::unsupported("read_screen"));
        }
        let mut state = self.state();
        let Some(task) = Self::interactive_task(&mut state, handle, task_id)? else {
            return Ok(None);
        };
        let Some(size) = task.entry.tty else {
            return Err(ContextError::NotATerminal { task_id });
        };
        Ok(Some(
            task.screen
                .clone()
                .unwrap_or_else(|| Screen::new(size, Vec::new(), (0, 0))),
        ))
    }

    /// Records the new size in the task's entry. `Unsupported` unless the capabilities
    /// say `terminals`.
    async fn resize(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        size: TtySize,
    ) -> Result<Option<()>> {
        self.record(MockCall::Resize(handle, task_id, size));
        if !self.config().capabilities.terminals {
            return Err(ContextError::unsupported("resize"));
        }
        let mut state = self.state();
        let Some(task) = Self::interactive_task(&mut state, handle, task_id)? else {
            return Ok(None);
        };
        if task.entry.tty.is_none() {
            return Err(ContextError::NotATerminal { task_id });
        }
        if task.entry.status().is_terminal() {
            return Err(ContextError::TaskEnded { task_id });
        }
        task.entry.tty = Some(size);
        Ok(Some(()))
    }
}

/// Where the mock says a task's log is: `<output_dir>/<task-id>.mock.log`, joined with the
/// separator the directory is written with. Tests pass Unix paths such as
/// `/session/tasks`; kept as `/` on Windows too, their snapshots read the same on every
/// OS.
fn mock_log_path(output_dir: &std::path::Path, task_id: TaskId) -> std::path::PathBuf {
    let name = format!("{task_id}.mock.log");
    match output_dir.to_str() {
        Some(dir) if dir.contains('/') && !dir.contains('\\') => {
            format!("{}/{name}", dir.trim_end_matches('/')).into()
        }
        _ => output_dir.join(name),
    }
}

#[cfg(test)]
#[path = "mock_tests.rs"]
mod tests;
