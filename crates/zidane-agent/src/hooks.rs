//! The hook bus: typed events with subscriber callbacks, the mutable reconcile hook, and
//! the stream of `StreamEvent`s hosts paint.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use zidane_context::{ExecutionHandle, StallInfo, TaskEntry, TaskExitInfo, TaskId};
use zidane_tools::{TaskEvent, ToolOutput};
use zidane_wire::StreamEvent;

use zidane_llm::ModelDelta;

/// Something that happened on an agent, delivered to every [`HookBus::subscribe`]r.
///
/// [`name`](Self::name) gives the hook's name (`background:exit`, `tool:after`, …).
/// Subagents (a `spawn` tool) mirror their children's background events on the parent's
/// bus as [`Child`](Self::Child).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HookEvent {
    /// `background:start`: a background task was started by a tool call.
    BackgroundStart(TaskStart),
    /// `background:exit`: a task ended (fires for every exit, notified or not).
    BackgroundExit(TaskExitInfo),
    /// `background:stall`: a task has been quiet for the stall window.
    BackgroundStall(StallInfo),
    /// `background:event`: a new line of a task's log matched its `notify_on` patterns
    /// (fires once per line queued for the model).
    BackgroundEvent(TaskEvent),
    /// `background:reassign`: a task moved to this agent's handle from a child's.
    BackgroundReassign(TaskReassign),
    /// `tool:before`: a tool call is about to run.
    ToolBefore(ToolCallEvent),
    /// `tool:after`: a tool call finished (after the agent's own suppression step).
    ToolAfter(ToolResultEvent),
    /// `child:<name>`: an event of a child agent, mirrored on its parent.
    Child {
        /// The child agent's id.
        child_id: String,
        /// How deep the child is (1 for a direct child).
        depth: usize,
        /// The child's event.
        event: Box<HookEvent>,
    },
}

impl HookEvent {
    /// The hook's name: `background:start`, `background:exit`, `background:stall`,
    /// `background:event`,
    /// `background:reassign`, `tool:before`, `tool:after`, or `child:` followed by the
    /// child's event name.
    pub fn name(&self) -> Cow<'static, str> {
        match self {
            Self::BackgroundStart(_) => Cow::Borrowed("background:start"),
            Self::BackgroundExit(_) => Cow::Borrowed("background:exit"),
            Self::BackgroundStall(_) => Cow::Borrowed("background:stall"),
            Self::BackgroundEvent(_) => Cow::Borrowed("background:event"),
            Self::BackgroundReassign(_) => Cow::Borrowed("background:reassign"),
            Self::ToolBefore(_) => Cow::Borrowed("tool:before"),
            Self::ToolAfter(_) => Cow::Borrowed("tool:after"),
            Self::Child { event, .. } => Cow::Owned(format!("child:{}", event.name())),
        }
    }

    /// This event as seen from a parent agent: wrapped in [`Child`](Self::Child).
    pub fn mirrored(self, child_id: impl Into<String>, depth: usize) -> Self {
        Self::Child {
            child_id: child_id.into(),
            depth,
            event: Box::new(self),
        }
    }
}

/// A background task that has just started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStart {
    /// The task.
    pub task_id: TaskId,
    /// Its leader's process id.
    pub pid: u32,
    /// The command as given.
    pub command: String,
    /// Its log file.
    pub output_path: PathBuf,
}

/// A task that moved between handles (a child agent's task adopted by its parent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskReassign {
    /// The task as it was when it moved.
    pub task: TaskEntry,
    /// The handle it left.
    pub from: ExecutionHandle,
    /// The handle it joined.
    pub to: ExecutionHandle,
    /// The child agent whose handle it left (the one that started it, or that had
    /// adopted it from a child of its own).
    pub child_id: String,
}

/// A tool call about to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallEvent {
    /// The model's id for the call.
    pub call_id: String,
    /// The name the model called (possibly an alias).
    pub name: String,
    /// The registered tool's own name, when the name resolved.
    pub tool: Option<String>,
    /// The input the model sent.
    pub input: serde_json::Value,
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultEvent {
    /// The model's id for the call.
    pub call_id: String,
    /// The name the model called (possibly an alias).
    pub name: String,
    /// The registered tool's own name, when the name resolved.
    pub tool: Option<String>,
    /// What the tool returned.
    pub output: ToolOutput,
    /// How long the call took.
    pub duration: Duration,
    /// Pending notifications this call suppressed (the model learned the outcome here).
    pub suppressed: Vec<TaskId>,
}

/// The mutable `background:reconcile` hook's argument: the exits about to be notified,
/// in completion order. A subscriber may drop, reorder or edit them; what is left is
/// rendered. Dropped exits count as acknowledged and are not offered again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconcile {
    /// The exits about to become `<task-notification>` blocks.
    pub exits: Vec<TaskExitInfo>,
}

impl Subscribers {
    fn count(&self) -> usize {
        self.events.len() + self.stream.len() + self.reconcile.len() + self.deltas.len()
    }
}

/// Identifies a subscription, to [`unsubscribe`](HookBus::unsubscribe) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

type EventFn = Arc<dyn Fn(&HookEvent) + Send + Sync>;
type StreamFn = Arc<dyn Fn(&StreamEvent) + Send + Sync>;
type ReconcileFn = Arc<dyn Fn(&mut Reconcile) + Send + Sync>;
type DeltaFn = Arc<dyn Fn(&ModelDelta) + Send + Sync>;

#[derive(Default)]
struct Subscribers {
    events: Vec<(SubscriptionId, EventFn)>,
    stream: Vec<(SubscriptionId, StreamFn)>,
    reconcile: Vec<(SubscriptionId, ReconcileFn)>,
    deltas: Vec<(SubscriptionId, DeltaFn)>,
}

/// An agent's hook bus. Cheap to clone; clones share subscribers.
///
/// Callbacks run synchronously on the thread that emits (a context's exit callback, the
/// run loop), in subscription order, outside any lock of the bus — a callback may
/// subscribe, unsubscribe or emit. Keep them short; hand heavy work to a task.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use zidane_agent::{HookBus, HookEvent};
///
/// let bus = HookBus::new();
/// let names = Arc::new(Mutex::new(Vec::new()));
/// let seen = names.clone();
/// bus.subscribe(move |event| seen.lock().unwrap().push(event.name().into_owned()));
/// bus.on_reconcile(|reconcile| reconcile.exits.retain(|exit| exit.exit_code != 0));
/// # let _ = HookEvent::name;
/// ```
#[derive(Clone, Default)]
pub struct HookBus {
    subscribers: Arc<Mutex<Subscribers>>,
    next_id: Arc<AtomicU64>,
}

impl HookBus {
    /// A bus with no subscribers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `callback` with every [`HookEvent`].
    pub fn subscribe(
        &self,
        callback: impl Fn(&HookEvent) + Send + Sync + 'static,
    ) -> SubscriptionId {
        let id = self.next_id();
        self.lock().events.push((id, Arc::new(callback)));
        id
    }

    /// Calls `callback` with every [`StreamEvent`] the agent emits live — exactly the
    /// events `zidane_wire::events_from_turns` gives for the persisted session.
    pub fn subscribe_stream(
        &self,
        callback: impl Fn(&StreamEvent) + Send + Sync + 'static,
    ) -> SubscriptionId {
        let id = self.next_id();
        self.lock().stream.push((id, Arc::new(callback)));
        id
    }

    /// Adds a `background:reconcile` hook: it may edit the exits about to be notified.
    pub fn on_reconcile(
        &self,
        callback: impl Fn(&mut Reconcile) + Send + Sync + 'static,
    ) -> SubscriptionId {
        let id = self.next_id();
        self.lock().reconcile.push((id, Arc::new(callback)));
        id
    }

    /// Calls `callback` with every [`ModelDelta`] of the agent's model calls, as the
    /// model produces it: text to show while it is generated, a tool call starting, the
    /// usage at the end. Kept apart from [`subscribe`](Self::subscribe) because a delta
    /// comes every few tokens.
    pub fn subscribe_deltas(
        &self,
        callback: impl Fn(&ModelDelta) + Send + Sync + 'static,
    ) -> SubscriptionId {
        let id = self.next_id();
        self.lock().deltas.push((id, Arc::new(callback)));
        id
    }

    /// Removes a subscription of any kind. False if it was not there.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut subscribers = self.lock();
        let before = subscribers.count();
        subscribers.events.retain(|(i, _)| *i != id);
        subscribers.stream.retain(|(i, _)| *i != id);
        subscribers.reconcile.retain(|(i, _)| *i != id);
        subscribers.deltas.retain(|(i, _)| *i != id);
        subscribers.count() < before
    }

    /// Delivers a model delta to every delta subscriber.
    pub(crate) fn emit_delta(&self, delta: &ModelDelta) {
        let callbacks: Vec<DeltaFn> = self.lock().deltas.iter().map(|(_, f)| f.clone()).collect();
        for callback in callbacks {
            callback(delta);
        }
    }

    /// Delivers `event` to every event subscriber (hosts and subagent tools emit the
    /// `background:reassign` and `child:*` events this way).
    pub fn emit(&self, event: &HookEvent) {
        let callbacks: Vec<EventFn> = self.lock().events.iter().map(|(_, f)| f.clone()).collect();
        for callback in callbacks {
            callback(event);
        }
    }

    /// Delivers a stream event to every stream subscriber.
    pub(crate) fn emit_stream(&self, event: &StreamEvent) {
        let callbacks: Vec<StreamFn> = self.lock().stream.iter().map(|(_, f)| f.clone()).collect();
        for callback in callbacks {
            callback(event);
        }
    }

    /// Runs every reconcile hook, in subscription order, over `reconcile`.
    pub(crate) fn reconcile(&self, reconcile: &mut Reconcile) {
        let callbacks: Vec<ReconcileFn> = self
            .lock()
            .reconcile
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        for callback in callbacks {
            callback(reconcile);
        }
    }

    fn next_id(&self) -> SubscriptionId {
        SubscriptionId(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn lock(&self) -> MutexGuard<'_, Subscribers> {
        // A subscriber never runs under this lock, so poisoning only follows a panic in
        // the bus itself; the list is still consistent.
        zidane_context::lock(&self.subscribers)
    }
}

impl fmt::Debug for HookBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subscribers = self.lock();
        f.debug_struct("HookBus")
            .field("events", &subscribers.events.len())
            .field("stream", &subscribers.stream.len())
            .field("reconcile", &subscribers.reconcile.len())
            .field("deltas", &subscribers.deltas.len())
            .finish()
    }
}
