//! `Agent`: the session, the model, the tools, the context and handle, the hook bus and
//! the delivery queues — shared behind a cheap, cloneable handle.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, OnceCell, watch};
use tokio_util::sync::CancellationToken;
use zidane_context::{
    BackgroundStarted, DetachedTasks, ExecutionContext, ExecutionHandle, ExitCallback,
    StallCallback, StallInfo, TaskExitInfo, TaskId,
};
use zidane_tools::{
    Approver, BackgroundGate, BackgroundSettings, BackgroundSinks, ExitChannel, FollowFrom,
    NotifyPatterns, StartCallback, TaskEvent, TaskEventSink, TaskEvents, ToolContext, ToolRegistry,
};
use zidane_wire::Turn;

use crate::config::{AgentBuilder, Behavior, DEFAULT_DURABLE_SWEEP_INTERVAL, ReconcileJournal};
use crate::delivery::Delivery;
use crate::error::{AgentError, KillTaskError, Result};
use crate::hooks::{HookBus, HookEvent, TaskStart};
use crate::persist::SessionLock;
use crate::resource::Resource;
use crate::session::{Session, SessionStore};
use zidane_llm::Model;

const LIVE: u8 = 0;
const DESTROYING: u8 = 1;
const DESTROYED: u8 = 2;

/// What the exit, stall and start callbacks reach: the queues and the bus. Kept apart
/// from the agent so a context holding a callback does not keep the agent alive.
pub(crate) struct Feeds {
    pub(crate) delivery: Mutex<Delivery>,
    pub(crate) hooks: HookBus,
    /// Wakes a [`WakeLoop`](crate::WakeLoop) when task events wait, or an exit held for
    /// them is released.
    pub(crate) wake: Notify,
    /// Bumped each time a task's event follower ends.
    pub(crate) drained: watch::Sender<u64>,
}

impl Feeds {
    pub(crate) fn delivery(&self) -> MutexGuard<'_, Delivery> {
        // Never held across a callback or an await; poisoning means a bug in this crate
        // panicked mid-update, and the queues are still a valid (if partial) state.
        zidane_context::lock(&self.delivery)
    }

    /// A task ended: queue it (unless it is not news), then fire `background:exit`.
    pub(crate) fn exit(&self, exit: TaskExitInfo) {
        let queued = self.delivery().push_exit(exit.clone());
        tracing::debug!(task_id = %exit.task_id, status = %exit.status, queued, "background task ended");
        self.hooks.emit(&HookEvent::BackgroundExit(exit));
    }

    fn stall(&self, stall: StallInfo) {
        let queued = self.delivery().push_stall(stall.clone());
        tracing::debug!(task_id = %stall.task_id, queued, "background task stalled");
        self.hooks.emit(&HookEvent::BackgroundStall(stall));
    }

    fn event(&self, event: TaskEvent) {
        let queued = self.delivery().push_event(event.clone());
        if queued {
            self.hooks.emit(&HookEvent::BackgroundEvent(event));
            self.wake.notify_one();
        }
    }

    pub(crate) fn drained(&self, task_id: TaskId) {
        let released = self.delivery().events.drained(task_id);
        tracing::debug!(%task_id, released, "task events drained");
        self.drained.send_modify(|n| *n = n.wrapping_add(1));
        self.wake.notify_one();
    }

    fn start(&self, started: &BackgroundStarted, command: &str) {
        self.delivery()
            .remember_log(started.output_path.clone(), started.task_id);
        self.hooks.emit(&HookEvent::BackgroundStart(TaskStart {
            task_id: started.task_id,
            pid: started.pid,
            command: command.to_owned(),
            output_path: started.output_path.clone(),
        }));
    }
}

/// The agent's end of its task event followers: what they find goes to the feeds, if
/// the agent still lives.
struct EventFeed(Weak<Feeds>);

impl TaskEventSink for EventFeed {
    fn follow(&self, task_id: TaskId, patterns: &[String]) {
        if let Some(feeds) = self.0.upgrade() {
            feeds.delivery().events.follow(task_id, patterns);
        }
    }

    fn event(&self, event: TaskEvent) {
        if let Some(feeds) = self.0.upgrade() {
            feeds.event(event);
        }
    }

    fn drained(&self, task_id: TaskId) {
        if let Some(feeds) = self.0.upgrade() {
            feeds.drained(task_id);
        }
    }
}

/// A tool call in flight, as the task picker shows it.
#[derive(Debug, Clone)]
pub(crate) struct InFlightCall {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) started_at: DateTime<Utc>,
    pub(crate) cancel: CancellationToken,
    /// Fired to move the call's foreground command to the background now.
    pub(crate) move_now: CancellationToken,
}

#[derive(Debug, Default)]
pub(crate) struct RunState {
    pub(crate) run: Option<CancellationToken>,
    pub(crate) calls: Vec<InFlightCall>,
}

pub(crate) struct Inner {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) tools: ToolRegistry,
    pub(crate) context: Arc<dyn ExecutionContext>,
    pub(crate) handle: OnceCell<ExecutionHandle>,
    pub(crate) injected_handle: bool,
    pub(crate) behavior: Behavior,
    pub(crate) tasks_dir: Option<PathBuf>,
    pub(crate) journal: Arc<dyn ReconcileJournal>,
    pub(crate) store: Option<SessionStore>,
    pub(crate) session: Mutex<Session>,
    /// Held from build until destroy ends (or the agent is dropped).
    pub(crate) session_lock: Mutex<Option<SessionLock>>,
    pub(crate) feeds: Arc<Feeds>,
    pub(crate) run_state: Mutex<RunState>,
    /// `true` while a run is in flight.
    pub(crate) running: watch::Sender<bool>,
    pub(crate) lifecycle: AtomicU8,
    pub(crate) resources: Mutex<Vec<(String, Arc<dyn Resource>)>>,
    pub(crate) depth: usize,
    /// No model: the host calls tools and drains notifications itself.
    pub(crate) host_driven: bool,
    /// The followers of tasks with `notify_on` patterns.
    pub(crate) task_events: TaskEvents,
    /// Set once the followers of an earlier life of the session were started again.
    pub(crate) events_resumed: std::sync::atomic::AtomicBool,
    /// Asked before a command runs outside the sandbox, where a call brings none.
    pub(crate) approver: Option<Arc<dyn Approver>>,
    /// The host's sandbox every command runs within, where a call brings none.
    pub(crate) host_sandbox: Option<zidane_context::SandboxPolicy>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Followers would otherwise read logs for an agent nobody holds.
        self.task_events.stop();
    }
}

/// An LLM agent with background shell tasks: it runs the model and its tools over a
/// session, and wakes the model — exactly once — for every background task that ends.
///
/// Cheap to clone: clones share everything (a host keeps one for its UI, hands one to a
/// [`WakeLoop`](crate::WakeLoop)). Build it with [`Agent::builder`].
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

impl Agent {
    /// Starts building an agent over `model` and `context`.
    pub fn builder(model: Arc<dyn Model>, context: Arc<dyn ExecutionContext>) -> AgentBuilder {
        AgentBuilder::new(model, context)
    }

    pub(crate) fn from_builder(builder: AgentBuilder) -> Result<Self> {
        let mut tools = ToolRegistry::new();
        let base = builder.tools.unwrap_or_else(zidane_tools::default_tools);
        for tool in base.into_iter().chain(builder.extra_tools) {
            tools.register(tool)?;
        }
        let session = builder.session.unwrap_or_else(Session::generate);
        // Taken before anything else touches the session's directory, so a second agent
        // fails here instead of overwriting the first one's turns.
        let session_lock = match &builder.store {
            Some(store) => Some(store.lock(&session.id)?),
            None => None,
        };
        let tasks_dir = match (&builder.behavior.tasks_dir, &builder.store) {
            (Some(dir), _) => Some(dir.clone()),
            (None, Some(store)) => Some(store.tasks_dir(&session.id)?),
            (None, None) => None,
        };
        let history = crate::session::acknowledged_in(&session, |name| {
            tools
                .resolve(name)
                .map(|tool| tool.spec(&zidane_tools::SpecView::default()).name)
        });
        let handle = match builder.handle {
            Some(handle) => OnceCell::new_with(Some(handle)),
            None => OnceCell::new(),
        };
        let ledger = session.task_events.clone();
        let mut delivery = Delivery::with_ledger(history, &ledger);
        if builder.context.capabilities().detached_tasks == DetachedTasks::Durable {
            delivery = delivery.sharing_every_task();
        }
        let feeds = Arc::new(Feeds {
            delivery: Mutex::new(delivery),
            hooks: builder.hooks,
            wake: Notify::new(),
            drained: watch::Sender::new(0),
        });
        let task_events = TaskEvents::new(Arc::new(EventFeed(Arc::downgrade(&feeds))));
        let agent = Self {
            inner: Arc::new(Inner {
                model: builder.model,
                tools,
                context: builder.context,
                handle,
                injected_handle: builder.handle.is_some(),
                behavior: builder.behavior,
                tasks_dir,
                journal: builder.journal,
                store: builder.store,
                session: Mutex::new(session),
                session_lock: Mutex::new(session_lock),
                feeds,
                run_state: Mutex::new(RunState::default()),
                running: watch::Sender::new(false),
                lifecycle: AtomicU8::new(LIVE),
                resources: Mutex::new(Vec::new()),
                depth: builder.depth,
                host_driven: builder.host_driven,
                task_events,
                events_resumed: std::sync::atomic::AtomicBool::new(false),
                approver: builder.approver,
                host_sandbox: builder.host_sandbox,
            }),
        };
        Ok(agent)
    }

    /// The session's id.
    pub fn id(&self) -> String {
        self.session_lock().id.clone()
    }

    /// How deep this agent is in a tree of subagents (0 for a top-level agent).
    pub fn depth(&self) -> usize {
        self.inner.depth
    }

    /// A snapshot of the session.
    pub fn session(&self) -> Session {
        self.session_lock().clone()
    }

    /// The hook bus (subscribe to events, the stream, the reconcile hook).
    pub fn hooks(&self) -> &HookBus {
        &self.inner.feeds.hooks
    }

    /// The behaviour the agent was built with.
    pub fn behavior(&self) -> &Behavior {
        &self.inner.behavior
    }

    /// The tasks dir in effect (from the behaviour, or the store's session layout).
    pub fn tasks_dir(&self) -> Option<&std::path::Path> {
        self.inner.tasks_dir.as_deref()
    }

    /// The execution context.
    pub fn context(&self) -> &Arc<dyn ExecutionContext> {
        &self.inner.context
    }

    /// The tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// The model.
    pub fn model(&self) -> &Arc<dyn Model> {
        &self.inner.model
    }

    /// Whether background mode can work for this agent (the same gate the tools see).
    pub fn background_gate(&self) -> BackgroundGate {
        BackgroundGate::evaluate(
            self.inner.tasks_dir.as_deref(),
            self.inner.behavior.background,
            self.inner.context.capabilities(),
        )
        .with_exit_channel(self.exit_channel())
        .with_foreground_budget(self.inner.behavior.foreground_budget)
    }

    /// How a background task's end reaches this agent's model
    /// ([`Behavior::exit_channel`](crate::Behavior::exit_channel), or the agent's own way).
    pub fn exit_channel(&self) -> ExitChannel {
        self.inner
            .behavior
            .exit_channel
            .unwrap_or(if self.inner.host_driven {
                ExitChannel::NextToolResult
            } else {
                ExitChannel::NextTurn
            })
    }

    /// The execution handle, if one was injected or created yet.
    pub fn current_handle(&self) -> Option<ExecutionHandle> {
        self.inner.handle.get().copied()
    }

    /// Whether the handle was injected by the host (then the agent never destroys it).
    pub(crate) fn handle_is_injected(&self) -> bool {
        self.inner.injected_handle
    }

    /// The execution handle, created on first use.
    pub async fn handle(&self) -> Result<ExecutionHandle> {
        self.ensure_live()?;
        let context = &self.inner.context;
        let handle = self
            .inner
            .handle
            .get_or_try_init(|| context.create_handle())
            .await?;
        Ok(*handle)
    }

    /// Whether an exit or stall is queued for the model: the host's wake signal. A run
    /// with an empty prompt is legal exactly then (or when the pull sweep finds an
    /// unreported exit).
    pub fn has_pending_task_notifications(&self) -> bool {
        self.inner.feeds.delivery().has_pending()
    }

    /// How long until a task event may wake the model (its task's cool-down,
    /// [`EVENT_COOLDOWN`](crate::EVENT_COOLDOWN), is over): zero when one may now,
    /// `None` when no event waits. A [`WakeLoop`](crate::WakeLoop) sleeps that long.
    pub fn task_events_due_in(&self) -> Option<Duration> {
        self.inner.feeds.delivery().events.due_in(Instant::now())
    }

    /// For a channel of the host's own that tells a task's end (an MCP task's result):
    /// waits, at most `bound`, until the task's event follower has read its log to the
    /// end, then takes the task's events not told yet, recorded as told. The caller puts
    /// them before the task's `<task-notification>`.
    pub async fn take_task_events(
        &self,
        task_id: TaskId,
        bound: Duration,
    ) -> Option<zidane_wire::TaskEventBlock> {
        let mut drained = self.inner.feeds.drained.subscribe();
        let followed = async {
            while self.inner.feeds.delivery().events.holds_exit(task_id) {
                if drained.changed().await.is_err() {
                    break;
                }
            }
        };
        if tokio::time::timeout(bound, followed).await.is_err() {
            tracing::debug!(%task_id, "task events: the follower did not drain in time");
        }
        self.inner
            .feeds
            .delivery()
            .events
            .take_task(task_id, Instant::now())
    }

    /// Starts again the followers of tasks an earlier life of the session followed,
    /// from the line after the last one told (once per agent).
    pub(crate) fn resume_task_events(&self, handle: ExecutionHandle) {
        if self.inner.events_resumed.swap(true, Ordering::AcqRel) {
            return;
        }
        let resume = self.inner.feeds.delivery().events.to_resume();
        if resume.is_empty() || !self.inner.context.capabilities().follow_output {
            return;
        }
        for entry in resume {
            let Ok(patterns) = NotifyPatterns::parse(&serde_json::json!(entry.notify_on)) else {
                continue;
            };
            self.inner.task_events.follow(
                Arc::clone(&self.inner.context),
                handle,
                entry.task_id,
                patterns,
                FollowFrom {
                    after_line: entry.told_through,
                    after_offset: 0,
                },
            );
        }
    }

    /// The exits queued for the next run, in completion order.
    pub fn pending_exits(&self) -> Vec<TaskExitInfo> {
        self.inner.feeds.delivery().pending_exits()
    }

    /// How often an idle host sweeps this agent for exits nobody pushed
    /// ([`sweep_exits`](Self::sweep_exits)): the context's
    /// [`Capabilities::sweep_interval`](zidane_context::Capabilities::sweep_interval);
    /// for a [`Durable`](zidane_context::DetachedTasks::Durable) context that declares
    /// none, [`DEFAULT_DURABLE_SWEEP_INTERVAL`](crate::DEFAULT_DURABLE_SWEEP_INTERVAL),
    /// since the tasks this agent adopted from a previous host report their exits to that
    /// host's callbacks, not to this one's. `None`: every exit is pushed to this agent.
    pub fn idle_sweep_interval(&self) -> Option<Duration> {
        let capabilities = self.inner.context.capabilities();
        capabilities
            .sweep_interval
            .or((capabilities.detached_tasks == DetachedTasks::Durable)
                .then_some(DEFAULT_DURABLE_SWEEP_INTERVAL))
    }

    /// Asks the context for tasks that ended without telling the agent (a durable
    /// context records exits instead of pushing them) and queues the ones the model was
    /// not told about, firing `background:exit` for each, as a pushed exit would. Returns
    /// how many it queued. The first sweep (or drain) of an agent rebuilt from a session
    /// also follows again the tasks with `notify_on` patterns, from the line after the
    /// last one told. A [`WakeLoop`](crate::WakeLoop) calls this every
    /// [`idle_sweep_interval`](Self::idle_sweep_interval) while the agent is idle; hosts
    /// without one call it themselves that often.
    ///
    /// Errors: the context's, or [`AgentError::Destroyed`].
    pub async fn sweep_exits(&self) -> Result<usize> {
        self.ensure_live()?;
        let Some(handle) = self.current_handle() else {
            return Ok(0);
        };
        self.resume_task_events(handle);
        let entries = self.inner.context.list_background(handle).await?;
        let news = self.inner.feeds.delivery().pull(&entries);
        for exit in &news {
            tracing::debug!(task_id = %exit.task_id, status = %exit.status, "swept an exit that was not pushed");
            self.inner
                .feeds
                .hooks
                .emit(&HookEvent::BackgroundExit(exit.clone()));
        }
        Ok(news.len())
    }

    /// Whether a run is in flight.
    pub fn is_running(&self) -> bool {
        *self.inner.running.borrow()
    }

    /// Whether [`destroy`](Self::destroy) has begun.
    pub fn is_destroyed(&self) -> bool {
        self.inner.lifecycle.load(Ordering::Acquire) != LIVE
    }

    /// The exit callback of this agent: fires `background:exit` on its bus and queues the
    /// exit for its next run. A subagent `spawn` tool passes it to
    /// `reassign_background_tasks` so adopted tasks report here.
    pub(crate) fn exit_sink(&self) -> ExitCallback {
        let feeds = Arc::clone(&self.inner.feeds);
        Arc::new(move |exit| feeds.exit(exit))
    }

    /// The sinks every tool call of this agent gets.
    pub(crate) fn sinks(&self) -> BackgroundSinks {
        let exit_feeds = Arc::clone(&self.inner.feeds);
        let stall_feeds = Arc::clone(&self.inner.feeds);
        let start_feeds = Arc::clone(&self.inner.feeds);
        let on_exit: ExitCallback = Arc::new(move |exit| exit_feeds.exit(exit));
        let on_stall: StallCallback = Arc::new(move |stall| stall_feeds.stall(stall));
        let on_start: StartCallback =
            Arc::new(move |started, command| start_feeds.start(started, command));
        BackgroundSinks {
            on_start: Some(on_start),
            on_exit: Some(on_exit),
            on_stall: Some(on_stall),
            on_event: Some(self.inner.task_events.clone()),
        }
    }

    /// The background settings every tool call of this agent gets.
    pub(crate) fn background_settings(&self) -> BackgroundSettings {
        let behavior = &self.inner.behavior;
        BackgroundSettings {
            tasks_dir: self.inner.tasks_dir.clone(),
            policy: behavior.background,
            remote_readiness: behavior.remote_readiness,
            limits: behavior.task_limits,
            exit_channel: self.exit_channel(),
            foreground_budget: behavior.foreground_budget,
        }
    }

    /// The context a tool call runs with, on `handle` with `cancel`.
    pub(crate) fn tool_context(
        &self,
        handle: ExecutionHandle,
        cancel: CancellationToken,
    ) -> ToolContext {
        let context = ToolContext::new(Arc::clone(&self.inner.context), handle)
            .with_background(self.background_settings())
            .with_sinks(self.sinks())
            .with_cancel(cancel);
        let context = match &self.inner.approver {
            Some(approver) => context.with_approver(Arc::clone(approver)),
            None => context,
        };
        match &self.inner.host_sandbox {
            Some(policy) => context.with_host_sandbox(policy.clone()),
            None => context,
        }
    }

    /// Kills a background task of this agent (the task picker's action): a full group
    /// kill, not a call cancel. The exit is then notified to the model at its next run
    /// like any other — the user, not the model, ended it.
    ///
    /// Errors say why nothing was killed: a malformed id, no handle yet, an id this
    /// agent does not know, or the context's refusal (a context without background
    /// tasks among them).
    pub async fn kill_background_task(&self, task_id: &str) -> Result<(), KillTaskError> {
        let task_id = TaskId::parse(task_id).map_err(KillTaskError::InvalidId)?;
        let handle = self.current_handle().ok_or(KillTaskError::NoHandle)?;
        match self.inner.context.kill_background(handle, task_id).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(KillTaskError::Unknown(task_id)),
            Err(error) => {
                tracing::debug!(%task_id, %error, "kill_background_task failed");
                Err(KillTaskError::Context(error))
            }
        }
    }

    /// Cancels one in-flight tool call (the picker's action on a tool row): its
    /// cancellation token fires, the model gets an error result, the run goes on. False
    /// if no such call is in flight.
    pub fn cancel_tool(&self, call_id: &str) -> bool {
        let run_state = self.run_state();
        match run_state.calls.iter().find(|c| c.call_id == call_id) {
            Some(call) => {
                call.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Moves the foreground commands of the calls in flight to the background now (the
    /// terminal host's ctrl+b): each such `shell` call returns at once with its task's id
    /// and log, and the task's end is told like any background task's. Only calls that
    /// can move do ([`Behavior::foreground_budget`](crate::Behavior::foreground_budget)
    /// set, background tasks allowed); others go on. Returns how many calls were asked.
    pub fn move_calls_to_background(&self) -> usize {
        let run_state = self.run_state();
        for call in &run_state.calls {
            call.move_now.cancel();
        }
        run_state.calls.len()
    }

    /// Registers something the agent must close on destroy (after the run is aborted,
    /// before the context handle is destroyed). Closed in reverse registration order.
    pub fn register_resource(&self, name: impl Into<String>, resource: Arc<dyn Resource>) {
        zidane_context::lock(&self.inner.resources).push((name.into(), resource));
    }

    /// Appends a turn to the session: emits its stream events, then saves the session
    /// when a store is set. A turn whose save fails stays in memory (the next save
    /// carries it) and the error is returned.
    pub(crate) fn append_turn(&self, turn: Turn) -> Result<()> {
        let events = zidane_wire::events_from_turn(&turn);
        let snapshot = {
            let mut session = self.session_lock();
            session.turns.push(turn);
            self.inner.store.as_ref().map(|_| session.clone())
        };
        for event in &events {
            self.inner.feeds.hooks.emit_stream(event);
        }
        self.save(snapshot)
    }

    /// Appends a turn only if it can be persisted: when the save fails the turn is taken
    /// back out and no event is emitted, so what it carried can be delivered again.
    pub(crate) fn append_turn_persisted(&self, turn: Turn) -> Result<()> {
        let events = zidane_wire::events_from_turn(&turn);
        let ledger = self.inner.feeds.delivery().events.ledger();
        let (index, snapshot) = {
            let mut session = self.session_lock();
            session.turns.push(turn);
            session.task_events = ledger;
            (
                session.turns.len() - 1,
                self.inner.store.as_ref().map(|_| session.clone()),
            )
        };
        if let Err(error) = self.save(snapshot) {
            let mut session = self.session_lock();
            if session.turns.len() == index + 1 {
                session.turns.pop();
            }
            return Err(error);
        }
        for event in &events {
            self.inner.feeds.hooks.emit_stream(event);
        }
        Ok(())
    }

    fn save(&self, snapshot: Option<Session>) -> Result<()> {
        let (Some(store), Some(session)) = (&self.inner.store, snapshot) else {
            return Ok(());
        };
        // After destroy the session's lock is released: another agent may own it now.
        if self.inner.lifecycle.load(Ordering::Acquire) == DESTROYED {
            return Err(AgentError::Destroyed);
        }
        store.save(&session)
    }

    pub(crate) fn ensure_live(&self) -> Result<()> {
        if self.is_destroyed() {
            Err(AgentError::Destroyed)
        } else {
            Ok(())
        }
    }

    /// Moves the lifecycle from live to destroying; false if it already left live.
    pub(crate) fn begin_destroy(&self) -> bool {
        self.inner
            .lifecycle
            .compare_exchange(LIVE, DESTROYING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    pub(crate) fn finish_destroy(&self) {
        self.inner.lifecycle.store(DESTROYED, Ordering::Release);
        // The session is safe for another agent once this one can no longer save it.
        *zidane_context::lock(&self.inner.session_lock) = None;
    }

    pub(crate) fn session_lock(&self) -> MutexGuard<'_, Session> {
        zidane_context::lock(&self.inner.session)
    }

    pub(crate) fn run_state(&self) -> MutexGuard<'_, RunState> {
        zidane_context::lock(&self.inner.run_state)
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("session", &self.id())
            .field("handle", &self.current_handle())
            .field("injected_handle", &self.inner.injected_handle)
            .field("behavior", &self.inner.behavior)
            .field("tools", &self.inner.tools)
            .field("running", &self.is_running())
            .field("destroyed", &self.is_destroyed())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
