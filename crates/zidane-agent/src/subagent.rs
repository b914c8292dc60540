//! A child agent's life: built from its parent, run once, its surviving background
//! tasks handed to the parent, then destroyed.
//!
//! Two things tie a child to its parent, and they are kept apart:
//!
//! - **Observability** — a bridge on the child's bus mirrors every `background:*` event
//!   of the child on the parent's bus as `child:background:*` (with the child's id and
//!   depth), and forwards the child's own `child:*` mirrors unchanged, so a grandchild's
//!   events reach the top with the grandchild's id and depth.
//! - **Ownership** — when the child's run ends (answer, error or cancel), and *before*
//!   the child is destroyed, its still-running tasks become the parent's:
//!   - on its own handle, through `reassign_background_tasks(child, parent, parent's exit
//!     sink)`, with a `background:reassign` on the parent per task moved; destroying the
//!     child then kills only what did not move (a context that cannot reassign, or a
//!     reassign that failed);
//!   - on the parent's handle (`share_handle`), the tasks are the parent's already; the
//!     bridge delivers their later exits to the parent's exit sink.
//!
//!   Exits the child queued but its model never saw are passed to the parent too: the
//!   child has no next run to be told in.
//!
//! From the moment of hand-over, a surviving task's exit is the parent's own
//! `background:exit` — it is not also mirrored as `child:background:exit`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use zidane_context::{
    ContextError, ExecutionHandle, ExitCallback, TaskEntry, TaskExitInfo, TaskId, TaskStatus,
};
use zidane_tools::{
    FollowFrom, NotifyPatterns, SHELL, SpecView, Tool, ToolContext, ToolOutput, ToolSpec,
};

use crate::agent::Agent;
use crate::error::Result;
use crate::hooks::{HookBus, HookEvent, TaskReassign};
use crate::run::{RunOptions, RunOutcome};
use crate::session::Session;
use crate::spawn_options::{SPAWN, SpawnToolOptions};

/// What the child's `shell` description adds, when it offers background mode.
pub(crate) const SUBAGENT_SHELL_GUIDANCE: &str = "\
You are a subagent: you have no next turn of your own, so no <task-notification> reaches \
you once you have answered. A background task you start outlives you: it is handed to the \
agent that spawned you, which is notified when it ends. So after starting one, end your \
turn with an answer that names its task id and log path — this overrides the advice above \
about waiting for a notification. Use `wait_task` only when your answer needs the result.";

/// What the child reads after a background start, instead of the parent's guidance.
const SUBAGENT_START_GUIDANCE: &str = "\
This task outlives you and is handed to the agent that spawned you when you answer. Name \
its task id and log path in your answer and end your turn; use `wait_task` only if your \
answer needs the result.";

/// How long a hand-over waits for the child's event followers to end.
const HAND_OVER_EVENTS_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

/// A child agent ready to run, and what its hand-over needs.
pub(crate) struct Subagent {
    child: Agent,
    child_id: String,
    parent: Agent,
    parent_handle: ExecutionHandle,
    share_handle: bool,
    /// Set at hand-over on a shared handle: the bridge then sends the child's exits to
    /// the parent's exit sink.
    adopted: Arc<AtomicBool>,
    /// Tasks the child itself started (not its children), in order.
    started: Arc<Mutex<Vec<TaskId>>>,
}

/// How a child's life ended.
#[derive(Debug)]
pub(crate) struct ChildReport {
    pub(crate) child_id: String,
    pub(crate) outcome: Result<RunOutcome>,
    pub(crate) shared_handle: bool,
    /// Tasks still running when the child ended that are now the parent's.
    pub(crate) left_running: Vec<TaskEntry>,
}

impl Subagent {
    /// Builds the child of `parent` that a `spawn` call with `tool_context` (the
    /// parent's call, on the parent's handle) runs.
    pub(crate) fn build(
        parent: &Agent,
        options: &SpawnToolOptions,
        child_id: String,
        depth: usize,
        tool_context: &ToolContext,
    ) -> Result<Self> {
        let model = options
            .model
            .clone()
            .unwrap_or_else(|| Arc::clone(parent.model()));
        let base = match &options.tools {
            Some(tools) => tools.clone(),
            None => parent.tools().tools().to_vec(),
        };
        // The child's own spawn tool (bound to it) replaces the parent's.
        let tools: Vec<Arc<dyn Tool>> = base
            .into_iter()
            .filter(|tool| tool.spec(&zidane_tools::SpecView::default()).name != SPAWN)
            .map(subagent_shell)
            .collect();
        let mut behavior = options
            .behavior
            .clone()
            .unwrap_or_else(|| parent.behavior().clone());
        if behavior.tasks_dir.is_none() {
            behavior.tasks_dir = parent.tasks_dir().map(std::path::Path::to_path_buf);
        }

        let adopted = Arc::new(AtomicBool::new(false));
        let started = Arc::new(Mutex::new(Vec::new()));
        let hooks = HookBus::new();
        hooks.subscribe(bridge(
            parent.hooks().clone(),
            parent.exit_sink(),
            child_id.clone(),
            depth,
            Arc::clone(&adopted),
            Arc::clone(&started),
        ));

        let mut builder = Agent::builder(model, Arc::clone(parent.context()))
            .tools(tools)
            .behavior(behavior)
            .session(Session::new(child_id.clone()))
            .hooks(hooks)
            .depth(depth)
            .spawn_tool(options.clone());
        if let Some(approver) = tool_context.approver() {
            // The person who answers the parent's calls answers the child's.
            builder = builder.approver(Arc::clone(approver));
        }
        if let Some(policy) = tool_context.host_sandbox() {
            // The host's sandbox of the parent's call holds the child's commands too.
            builder = builder.host_sandbox(policy.clone());
        }
        if options.share_handle {
            // Injected: the child never destroys the parent's handle.
            builder = builder.handle(tool_context.handle());
        }
        Ok(Self {
            child: builder.build()?,
            child_id,
            parent: parent.clone(),
            parent_handle: tool_context.handle(),
            share_handle: options.share_handle,
            adopted,
            started,
        })
    }

    pub(crate) fn child_id(&self) -> &str {
        &self.child_id
    }

    /// Runs the child once on `prompt`, hands its surviving tasks over, destroys it.
    pub(crate) async fn run(self, prompt: String, cancel: CancellationToken) -> ChildReport {
        let outcome = self.child.run(RunOptions::new(prompt).cancel(cancel)).await;
        let left_running = self.hand_over().await;
        if let Err(error) = self.child.destroy().await {
            tracing::warn!(child_id = %self.child_id, %error, "destroying a subagent failed");
        }
        ChildReport {
            child_id: self.child_id,
            outcome,
            shared_handle: self.share_handle,
            left_running,
        }
    }

    /// Makes the child's still-running tasks the parent's; returns them.
    async fn hand_over(&self) -> Vec<TaskEntry> {
        if self.parent.is_destroyed() {
            // The parent is being torn down: nothing can become its. Destroying the
            // child (own handle) or the parent (shared handle) kills what is left.
            return Vec::new();
        }
        // Before the tasks move: an exit that reaches the parent at once waits for the
        // events the parent's follower will find.
        let followed = self.child.inner.feeds.delivery().events.followed();
        for (task_id, notify_on) in &followed {
            self.parent
                .inner
                .feeds
                .delivery()
                .events
                .follow(*task_id, notify_on);
        }
        let left_running = if self.share_handle {
            self.adopted.store(true, Ordering::Release);
            self.still_running_on_shared_handle().await
        } else {
            self.reassign().await
        };
        self.hand_over_events(&left_running).await;
        // Exits the child's model never saw: the child has no next run to be told in.
        let parent_exit = self.parent.exit_sink();
        for exit in self.child.pending_exits() {
            parent_exit(exit);
        }
        left_running
    }

    /// Moves the child's task events to the parent: the lines its model was not told,
    /// and a follower on the parent for each task with patterns that now runs there,
    /// from the line after the last one the child queued.
    async fn hand_over_events(&self, left_running: &[TaskEntry]) {
        let child = &self.child.inner;
        // A follower of a task that ended reads its log to the end on its own; the
        // others stop now. A follower mid-step may still queue that step's lines, so the
        // hand-over waits until each has ended.
        let running: Vec<TaskId> = left_running.iter().map(|e| e.task_id).collect();
        let mut drained = child.feeds.drained.subscribe();
        let ended_drained = async {
            loop {
                let reading = child.feeds.delivery().events.holds_exit_besides(&running);
                if !reading || drained.changed().await.is_err() {
                    break;
                }
            }
        };
        if tokio::time::timeout(HAND_OVER_EVENTS_BOUND, ended_drained)
            .await
            .is_err()
        {
            tracing::debug!(child_id = %self.child_id, "a subagent's ended task was still being followed at hand-over");
        }
        child.task_events.stop();
        let stopped = async {
            while child.feeds.delivery().events.holds_exit_besides(&[]) {
                if drained.changed().await.is_err() {
                    break;
                }
            }
        };
        if tokio::time::timeout(HAND_OVER_EVENTS_BOUND, stopped)
            .await
            .is_err()
        {
            tracing::debug!(child_id = %self.child_id, "a subagent's event follower did not stop in time");
        }
        let handed = child.feeds.delivery().events.hand_over();
        let parent = &self.parent.inner;
        let follows = parent.context.capabilities().follow_output;
        for handed in handed {
            let (task_id, from) = (handed.task_id, handed.queued_through);
            let patterns = NotifyPatterns::parse(&serde_json::json!(handed.notify_on)).ok();
            parent.feeds.delivery().events.adopt(handed);
            match patterns {
                Some(patterns) if follows && !patterns.is_empty() && running.contains(&task_id) => {
                    parent.task_events.follow(
                        Arc::clone(&parent.context),
                        self.parent_handle,
                        task_id,
                        patterns,
                        FollowFrom {
                            after_line: from,
                            after_offset: 0,
                        },
                    );
                }
                // No follower here: an exit held for one is released.
                _ => parent.feeds.drained(task_id),
            }
        }
        // A follower the parent would have started on the way is not coming.
        parent.feeds.wake.notify_one();
    }

    /// Own handle: moves every running task to the parent's handle, its exit rewired to
    /// the parent, and fires `background:reassign` on the parent per task.
    async fn reassign(&self) -> Vec<TaskEntry> {
        let Some(child_handle) = self.child.current_handle() else {
            return Vec::new();
        };
        let context = self.child.context();
        if !context.capabilities().detached_tasks.supported() {
            return Vec::new();
        }
        let moved = match context
            .reassign_background_tasks(
                child_handle,
                self.parent_handle,
                Some(self.parent.exit_sink()),
            )
            .await
        {
            Ok(moved) => moved,
            Err(ContextError::Unsupported { .. }) => {
                tracing::debug!(child_id = %self.child_id, "the context cannot reassign; the subagent's tasks die with it");
                return Vec::new();
            }
            Err(error) => {
                tracing::warn!(child_id = %self.child_id, %error, "reassigning a subagent's tasks failed; they die with it");
                return Vec::new();
            }
        };
        for task in &moved {
            self.parent
                .hooks()
                .emit(&HookEvent::BackgroundReassign(TaskReassign {
                    task: task.clone(),
                    from: child_handle,
                    to: self.parent_handle,
                    child_id: self.child_id.clone(),
                }));
        }
        moved
    }

    /// Shared handle: the tasks the child started that are still running.
    async fn still_running_on_shared_handle(&self) -> Vec<TaskEntry> {
        let started = zidane_context::lock(&self.started).clone();
        if started.is_empty() {
            return Vec::new();
        }
        match self
            .child
            .context()
            .list_background(self.parent_handle)
            .await
        {
            Ok(entries) => entries
                .into_iter()
                .filter(|e| e.status() == TaskStatus::Running && started.contains(&e.task_id))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// The child-bus subscriber that mirrors the child's background events on the parent.
fn bridge(
    parent_hooks: HookBus,
    parent_exit: ExitCallback,
    child_id: String,
    depth: usize,
    adopted: Arc<AtomicBool>,
    started: Arc<Mutex<Vec<TaskId>>>,
) -> impl Fn(&HookEvent) + Send + Sync + 'static {
    move |event| match event {
        HookEvent::BackgroundExit(exit) if adopted.load(Ordering::Acquire) => {
            // A shared-handle task that outlived the child: its exit is the parent's.
            parent_exit(TaskExitInfo::clone(exit));
        }
        HookEvent::BackgroundStart(_)
        | HookEvent::BackgroundExit(_)
        | HookEvent::BackgroundStall(_)
        | HookEvent::BackgroundReassign(_) => {
            if let HookEvent::BackgroundStart(start) = event {
                zidane_context::lock(&started).push(start.task_id);
            }
            parent_hooks.emit(&event.clone().mirrored(child_id.clone(), depth));
        }
        // A grandchild's mirror already carries its own id and depth.
        HookEvent::Child { .. } => parent_hooks.emit(event),
        _ => {}
    }
}

/// Wraps the `shell` tool so a child's model learns that its background tasks outlive
/// it; every other tool (and a shell already wrapped) passes through.
fn subagent_shell(tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
    let spec = tool.spec(&zidane_tools::SpecView::default());
    if spec.name != SHELL || spec.description.contains(SUBAGENT_SHELL_GUIDANCE) {
        return tool;
    }
    Arc::new(SubagentShell { shell: tool })
}

/// A child's `shell`: the parent's, with subagent guidance in its description and in a
/// background start's result.
struct SubagentShell {
    shell: Arc<dyn Tool>,
}

impl SubagentShell {
    fn with_guidance(mut spec: ToolSpec) -> ToolSpec {
        let offers_background = spec
            .input_schema
            .get("properties")
            .and_then(|p| p.get("run_in_background"))
            .is_some();
        if offers_background {
            spec.description = format!("{}\n\n{SUBAGENT_SHELL_GUIDANCE}", spec.description);
        }
        spec
    }
}

#[async_trait]
impl Tool for SubagentShell {
    fn spec(&self, view: &SpecView) -> ToolSpec {
        Self::with_guidance(self.shell.spec(view))
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let mut output = self.shell.call(context, input).await;
        let started = !output.is_error && output.data.get("task_id").is_some();
        if started {
            // Keep the `Started …` line; the guidance after it speaks of a next turn the
            // child does not have.
            let head = output
                .text
                .split_once("\n\n")
                .map_or(output.text.as_str(), |(head, _)| head);
            output.text = format!("{head}\n\n{SUBAGENT_START_GUIDANCE}");
        }
        output
    }
}
