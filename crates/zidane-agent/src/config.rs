//! How an agent behaves, the defaults it starts from, and the builder that assembles one.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use zidane_context::{ContextError, ExecutionContext, ExecutionHandle, TaskEntry, TaskLimits};
use zidane_tools::{Approver, BackgroundPolicy, ExitChannel, Tool};

use crate::error::Result;
use crate::hooks::HookBus;
use crate::session::{Session, SessionStore};
use crate::spawn_options::SpawnToolOptions;
use zidane_llm::Model;

/// How long a whole destroy may take. It leaves room for a context's kill grace (the
/// local `ProcessContext` waits five seconds between `SIGTERM` and `SIGKILL`), so a task
/// that ignores `SIGTERM` is still confirmed dead before destroy returns.
pub const DEFAULT_DESTROY_TIMEOUT: Duration = Duration::from_secs(10);

/// Model calls a run may make before it stops with [`StopReason::MaxSteps`].
///
/// [`StopReason::MaxSteps`]: crate::StopReason::MaxSteps
pub const DEFAULT_MAX_STEPS: usize = 50;

/// How long a cancelled tool call may take to return its own result before the agent
/// stops waiting for it.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// How often an idle agent on a [`Durable`](zidane_context::DetachedTasks::Durable)
/// context that declares no
/// [`sweep_interval`](zidane_context::Capabilities::sweep_interval) is swept for exits
/// (see [`Agent::idle_sweep_interval`](crate::Agent::idle_sweep_interval)).
///
/// Such a context may push exits, but only to the host that started the task: a host
/// that reloads the session adopts tasks whose exit callbacks died with the host before
/// it, and only a sweep of `list_background` can tell it that they ended.
pub const DEFAULT_DURABLE_SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// How an agent behaves: background mode, limits, the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Behavior {
    /// Directory of background task logs. `None` turns background mode off — unless the
    /// agent has a [`SessionStore`], whose `<user_dir>/sessions/<id>/tasks/` is then used.
    pub tasks_dir: Option<PathBuf>,
    /// Whether the model may start background tasks.
    pub background: BackgroundPolicy,
    /// The limits of every background task where its call sets none of its own: the
    /// output cap, the wall-time and CPU-time budgets (a call may set its own with
    /// `max_output_bytes`, `timeout_ms` and `cpu_time_ms`), and the quiet window after
    /// which a task's stall is reported to the model (always this one). Default: none.
    pub task_limits: TaskLimits,
    /// Running background tasks this agent may have at once. Enforced by the agent
    /// before a `shell` call with `run_in_background` is dispatched (an error result
    /// for the model); the context keeps its own, per-context cap. `None`: only the
    /// context's cap.
    pub max_background_tasks: Option<usize>,
    /// Whether `wait_task`'s `until.url` may probe hosts beyond this machine's loopback
    /// addresses (default: no).
    pub remote_readiness: bool,
    /// How long a whole destroy may take (see [`Agent::destroy`](crate::Agent::destroy)).
    pub destroy_timeout: Duration,
    /// Model calls per run.
    pub max_steps: usize,
    /// The system prompt.
    pub system: Option<String>,
    /// How a background task's end reaches the model, which the tools' texts tell it.
    /// `None`: the agent's own way — the next turn for an agent with a run loop, the next
    /// tool result for a [host-driven](crate::Agent::host_driven) one.
    pub exit_channel: Option<ExitChannel>,
    /// How long a foreground `shell` command runs before it moves to the background,
    /// where background tasks are allowed: the call then returns with the task's id and
    /// log, and the task's end is told like any background task's. `None` (the default):
    /// a foreground command runs to its end.
    pub foreground_budget: Option<Duration>,
}

impl Default for Behavior {
    fn default() -> Self {
        Self {
            tasks_dir: None,
            background: BackgroundPolicy::Enabled,
            task_limits: TaskLimits::default(),
            max_background_tasks: None,
            remote_readiness: false,
            destroy_timeout: DEFAULT_DESTROY_TIMEOUT,
            max_steps: DEFAULT_MAX_STEPS,
            system: None,
            exit_channel: None,
            foreground_budget: None,
        }
    }
}

impl Behavior {
    /// The defaults: background mode enabled (once a tasks dir is known), no caps, no
    /// watchdog, [`DEFAULT_DESTROY_TIMEOUT`], [`DEFAULT_MAX_STEPS`], no system prompt.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the tasks dir.
    #[must_use]
    pub fn tasks_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tasks_dir = Some(dir.into());
        self
    }

    /// Sets the background policy.
    #[must_use]
    pub fn background(mut self, policy: BackgroundPolicy) -> Self {
        self.background = policy;
        self
    }

    /// Sets the limits of background tasks whose calls set none of their own.
    #[must_use]
    pub fn task_limits(mut self, limits: TaskLimits) -> Self {
        self.task_limits = limits;
        self
    }

    /// Sets the agent's cap on running background tasks.
    #[must_use]
    pub fn max_background_tasks(mut self, cap: usize) -> Self {
        self.max_background_tasks = Some(cap);
        self
    }

    /// Sets how a background task's end reaches the model (see
    /// [`Behavior::exit_channel`]).
    #[must_use]
    pub fn exit_channel(mut self, channel: ExitChannel) -> Self {
        self.exit_channel = Some(channel);
        self
    }

    /// Moves a foreground `shell` command still running after `budget` to the
    /// background (see [`Behavior::foreground_budget`]).
    #[must_use]
    pub fn foreground_budget(mut self, budget: Duration) -> Self {
        self.foreground_budget = Some(budget);
        self
    }

    /// Lets `wait_task`'s `until.url` probe hosts beyond loopback.
    #[must_use]
    pub fn remote_readiness(mut self, allow: bool) -> Self {
        self.remote_readiness = allow;
        self
    }

    /// Sets the bound on a whole destroy.
    #[must_use]
    pub fn destroy_timeout(mut self, timeout: Duration) -> Self {
        self.destroy_timeout = timeout;
        self
    }

    /// Sets the step limit of a run.
    #[must_use]
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps;
        self
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }
}

/// The seam through which the pull sweep polls `list_background`.
///
/// The default calls the context directly. A durable host journals the poll as one side
/// effect so a replayed run sees the same list — and the `background:reconcile` hook
/// fires at a stable journal position.
#[async_trait]
pub trait ReconcileJournal: Send + Sync {
    /// Lists the handle's tasks for the sweep at the start of a run.
    async fn list_background(
        &self,
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
    ) -> Result<Vec<TaskEntry>, ContextError>;
}

/// The default [`ReconcileJournal`]: asks the context, records nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirectJournal;

#[async_trait]
impl ReconcileJournal for DirectJournal {
    async fn list_background(
        &self,
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
    ) -> Result<Vec<TaskEntry>, ContextError> {
        context.list_background(handle).await
    }
}

/// Assembles an [`Agent`](crate::Agent). Start with
/// [`Agent::builder`](crate::Agent::builder).
pub struct AgentBuilder {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) context: Arc<dyn ExecutionContext>,
    pub(crate) tools: Option<Vec<Arc<dyn Tool>>>,
    pub(crate) extra_tools: Vec<Arc<dyn Tool>>,
    pub(crate) handle: Option<ExecutionHandle>,
    pub(crate) behavior: Behavior,
    pub(crate) session: Option<Session>,
    pub(crate) store: Option<SessionStore>,
    pub(crate) journal: Arc<dyn ReconcileJournal>,
    pub(crate) hooks: HookBus,
    pub(crate) depth: usize,
    pub(crate) spawn: Option<SpawnToolOptions>,
    pub(crate) host_driven: bool,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    pub(crate) host_sandbox: Option<zidane_context::SandboxPolicy>,
}

impl AgentBuilder {
    pub(crate) fn new(model: Arc<dyn Model>, context: Arc<dyn ExecutionContext>) -> Self {
        Self {
            model,
            context,
            tools: None,
            extra_tools: Vec::new(),
            handle: None,
            behavior: Behavior::default(),
            session: None,
            store: None,
            journal: Arc::new(DirectJournal),
            hooks: HookBus::new(),
            depth: 0,
            spawn: None,
            host_driven: false,
            approver: None,
            host_sandbox: None,
        }
    }

    /// Replaces the tools (default: `zidane_tools::default_tools()` — `shell`,
    /// `shell_kill`, `wait_task`, `read_file`, `shell_input`, `shell_screen`,
    /// `shell_notify`).
    #[must_use]
    pub fn tools(mut self, tools: Vec<Arc<dyn Tool>>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Adds a tool to the defaults (or to the tools given with [`tools`](Self::tools)).
    #[must_use]
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.extra_tools.push(tool);
        self
    }

    /// Runs on a handle the host created and owns: the agent never destroys it.
    /// Without it the agent creates its own handle on first use and destroys it in
    /// [`Agent::destroy`](crate::Agent::destroy).
    #[must_use]
    pub fn handle(mut self, handle: ExecutionHandle) -> Self {
        self.handle = Some(handle);
        self
    }

    /// Sets the behaviour.
    #[must_use]
    pub fn behavior(mut self, behavior: Behavior) -> Self {
        self.behavior = behavior;
        self
    }

    /// Starts from this session (default: [`Session::generate`]). Its history rebuilds
    /// the `notified` latch, so a pull sweep never re-notifies what it already told.
    #[must_use]
    pub fn session(mut self, session: Session) -> Self {
        self.session = Some(session);
        self
    }

    /// Saves the session to this store after every turn, and defaults the tasks dir to
    /// the session's `tasks/` directory.
    #[must_use]
    pub fn store(mut self, store: SessionStore) -> Self {
        self.store = Some(store);
        self
    }

    /// Routes the pull sweep's `list_background` through a journal (durable hosts).
    #[must_use]
    pub fn journal(mut self, journal: Arc<dyn ReconcileJournal>) -> Self {
        self.journal = journal;
        self
    }

    /// Asks this person before a command runs outside the sandbox (`shell`'s
    /// `outside_sandbox`); without one such a command is refused (default: none). A
    /// [`ToolCall`](crate::ToolCall) may bring an approver of its own.
    #[must_use]
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Runs every command of this agent within a host's own sandbox, where a call
    /// brings none of its own (a subagent started in a call Codex sandboxes keeps
    /// Codex's sandbox). Default: none.
    #[must_use]
    pub fn host_sandbox(mut self, policy: zidane_context::SandboxPolicy) -> Self {
        self.host_sandbox = Some(policy);
        self
    }

    /// Uses this hook bus (default: a new one). Subscribe before the first run.
    #[must_use]
    pub fn hooks(mut self, hooks: HookBus) -> Self {
        self.hooks = hooks;
        self
    }

    /// How deep this agent is in a tree of subagents (0 for a top-level agent).
    #[must_use]
    pub fn depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }

    /// Gives the agent a `spawn` tool bound to itself: the model can run a subagent
    /// (see [`SpawnToolOptions`]). The tool holds only a weak reference to the agent, so
    /// it never keeps it alive; its subagents get a `spawn` tool of their own, bound to
    /// them, with the same options.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use zidane_agent::{Agent, Behavior, RunOptions, ScriptedModel, SpawnToolOptions};
    /// use zidane_context::{MockContext, TaskId};
    ///
    /// let context = Arc::new(MockContext::new());
    /// let model = ScriptedModel::new()
    ///     .tool_call("spawn", json!({ "prompt": "start the build" })) // the parent
    ///     .tool_call("shell", json!({ "command": "make", "run_in_background": true })) // the child
    ///     .text("Started bash_1 (make).") // the child's answer
    ///     .text("A subagent started the build."); // the parent
    /// let agent = Agent::builder(Arc::new(model), context.clone())
    ///     .behavior(Behavior::new().tasks_dir("/tmp/zidane-doc/tasks"))
    ///     .spawn_tool(SpawnToolOptions::new())
    ///     .build()?;
    ///
    /// agent.run(RunOptions::new("build it")).await?;
    /// // The child is gone; the task it left running is the parent's now.
    /// assert_eq!(agent.running_tasks().await?[0].id, "bash_1");
    /// context.finish(TaskId::parse("bash_1")?, 0);
    /// assert!(agent.has_pending_task_notifications());
    /// agent.destroy().await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn spawn_tool(mut self, options: SpawnToolOptions) -> Self {
        self.spawn = Some(options);
        self
    }
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("handle", &self.handle)
            .field("behavior", &self.behavior)
            .field("session", &self.session.as_ref().map(|s| &s.id))
            .field("store", &self.store)
            .field("depth", &self.depth)
            .field("spawn", &self.spawn)
            .finish_non_exhaustive()
    }
}
