//! Driving an agent from a host instead of a model: the host dispatches tool calls and
//! drains task notifications itself, through the same code the run loop uses.
//!
//! An MCP server is such a host: the model lives in the MCP client, so there is no run
//! loop, but every tool call must still pass the hooks, the background cap, in-flight
//! tracking and suppression, and every exit must still be queued, latched and delivered
//! exactly once. [`Agent::call_tool`] and [`Agent::drain_notifications`] are the run
//! loop's own two steps, made callable; [`Agent::host_driven`] builds an agent that has
//! no model at all.

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use zidane_context::{ExecutionContext, SandboxPolicy, StallInfo, TaskExitInfo, TaskId};
use zidane_tools::{Approver, ExitChannel, ToolOutput};
use zidane_wire::{TaskEventBlock, TaskNotification, TaskStall};

use crate::agent::Agent;
use crate::config::AgentBuilder;
use crate::error::Result;
use zidane_llm::{Model, ModelError, ModelRequest, ModelResponse};

/// One tool call a host dispatches with [`Agent::call_tool`].
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The call's id, as hooks and the task picker show it (the host's request id, or
    /// any string unique among the calls in flight).
    pub call_id: String,
    /// The tool's name or alias.
    pub name: String,
    /// The arguments, as the model sent them.
    pub input: serde_json::Value,
    /// Cancelling it aborts the call (a foreground command's process group is killed, a
    /// `wait_task` returns at once). Background tasks live on.
    pub cancel: CancellationToken,
    /// How this call's background task, if it starts one, tells the model of its end,
    /// when not the agent's way ([`Agent::exit_channel`]): the tool's text says it.
    pub exit_channel: Option<ExitChannel>,
    /// How long this call's foreground command runs before it moves to the background,
    /// when not the agent's
    /// ([`Behavior::foreground_budget`](crate::Behavior::foreground_budget)): an MCP
    /// server sizes it to the client's own request ceiling.
    pub foreground_budget: Option<std::time::Duration>,
    /// Who is asked before this call's command runs outside the sandbox, when not the
    /// agent's ([`AgentBuilder::approver`]): an MCP server asks the client that made
    /// the call.
    pub approver: Option<Arc<dyn Approver>>,
    /// The host's own sandbox for this call, which the commands it starts never run
    /// wider than: an MCP server reads Codex's from the call.
    pub host_sandbox: Option<SandboxPolicy>,
}

impl ToolCall {
    /// A call of `name` with `input`, with a fresh cancellation token.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        input: serde_json::Value,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            input,
            cancel: CancellationToken::new(),
            exit_channel: None,
            foreground_budget: None,
            approver: None,
            host_sandbox: None,
        }
    }

    /// Sets the host's own sandbox for this call.
    #[must_use]
    pub fn host_sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.host_sandbox = Some(policy);
        self
    }

    /// Sets who is asked before this call's command runs outside the sandbox.
    #[must_use]
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Sets how long this call's foreground command runs before it moves to the
    /// background.
    #[must_use]
    pub fn foreground_budget(mut self, budget: std::time::Duration) -> Self {
        self.foreground_budget = Some(budget);
        self
    }

    /// Sets how this call's background task tells the model of its end.
    #[must_use]
    pub fn exit_channel(mut self, channel: ExitChannel) -> Self {
        self.exit_channel = Some(channel);
        self
    }

    /// Sets the cancellation token.
    #[must_use]
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

/// What a drain took for the model: the exits (latched, in completion order, after the
/// `background:reconcile` hook) and the stalls. See [`Agent::drain_notifications`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Notifications {
    /// The exits to tell, in completion order.
    pub exits: Vec<TaskExitInfo>,
    /// The stalls to report.
    pub stalls: Vec<StallInfo>,
    /// The matching lines of running tasks, one block per task (told before any exit
    /// of the same task).
    pub events: Vec<TaskEventBlock>,
}

impl Notifications {
    /// Whether there is nothing to tell.
    pub fn is_empty(&self) -> bool {
        self.exits.is_empty() && self.stalls.is_empty() && self.events.is_empty()
    }

    /// What the model reads: one `<task-event>` block per task with new matching
    /// lines, then one `<task-notification>` block per exit, then one `<task-stall>`
    /// block per stall, rendered by `zidane-wire`.
    pub fn blocks(&self) -> Vec<String> {
        self.events
            .iter()
            .map(TaskEventBlock::render)
            .chain(
                self.exits
                    .iter()
                    .map(|exit| TaskNotification::from_exit(exit).render()),
            )
            .chain(
                self.stalls
                    .iter()
                    .map(|stall| TaskStall::from_stall(stall).render()),
            )
            .collect()
    }
}

/// The model of a host-driven agent: there is none, and nothing calls it (a run is
/// refused before the model is reached).
struct NoModel;

#[async_trait]
impl Model for NoModel {
    async fn complete(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Provider(
            "this agent is driven by its host and has no model".into(),
        ))
    }
}

impl Agent {
    /// Starts building an agent that its host drives: it has no model, [`run`] fails
    /// with [`AgentError::HostDriven`], and the host calls tools with
    /// [`call_tool`](Self::call_tool) and takes task notifications with
    /// [`drain_notifications`](Self::drain_notifications) — an MCP server, whose model
    /// sits in the client, is one.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use zidane_agent::{Agent, AgentError, Behavior, RunOptions, ToolCall};
    /// use zidane_context::{MockContext, TaskId};
    ///
    /// let context = Arc::new(MockContext::new());
    /// let agent = Agent::host_driven(context.clone())
    ///     .behavior(Behavior::new().tasks_dir("/tmp/zidane-doc/tasks"))
    ///     .build()?;
    /// let started = agent
    ///     .call_tool(ToolCall::new("1", "shell", json!({ "command": "make", "run_in_background": true })))
    ///     .await?;
    /// assert_eq!(started.data["task_id"], "bash_1");
    ///
    /// context.finish(TaskId::parse("bash_1")?, 0);
    /// let told = agent.drain_notifications().await?;
    /// assert!(told.blocks()[0].starts_with("<task-notification>"));
    /// assert!(agent.drain_notifications().await?.is_empty()); // exactly once
    /// assert!(matches!(agent.run(RunOptions::new("hi")).await, Err(AgentError::HostDriven)));
    /// agent.destroy().await?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// [`run`]: Self::run
    /// [`AgentError::HostDriven`]: crate::AgentError::HostDriven
    pub fn host_driven(context: Arc<dyn ExecutionContext>) -> AgentBuilder {
        let mut builder = AgentBuilder::new(Arc::new(NoModel), context);
        builder.host_driven = true;
        builder
    }

    /// Whether the agent was built with [`host_driven`](Self::host_driven).
    pub fn is_host_driven(&self) -> bool {
        self.inner.host_driven
    }

    /// Dispatches one tool call exactly as the run loop does: `tool:before`, the
    /// agent's background cap, the call (tracked in flight, so
    /// [`cancel_tool`](Self::cancel_tool) and destroy reach it), the agent's suppression
    /// step (a `shell_kill`, a `wait_task` that returned the exit, a `read_file` of an
    /// ended task's log each drop that task's pending notification), then `tool:after`.
    ///
    /// Tool failures — bad input, an unknown tool, a refused start — are an error
    /// [`ToolOutput`], as the model would see them. Errors:
    /// [`AgentError::Destroyed`](crate::AgentError::Destroyed), or the context's when the
    /// handle cannot be created.
    pub async fn call_tool(&self, call: ToolCall) -> Result<ToolOutput> {
        self.ensure_live()?;
        let handle = self.handle().await?;
        Ok(self
            .dispatch_tool(
                handle,
                &call.cancel,
                &call.call_id,
                &call.name,
                call.input,
                crate::run::CallSettings {
                    exit_channel: call.exit_channel.unwrap_or_else(|| self.exit_channel()),
                    foreground_budget: call.foreground_budget,
                    approver: call.approver,
                    host_sandbox: call.host_sandbox,
                },
            )
            .await)
    }

    /// Takes what the model has not been told yet, exactly as a run does at its start:
    /// the queued exits, plus ended tasks the pull sweep finds unreported, through the
    /// `background:reconcile` hook, latched (so none is ever drained again), and the
    /// queued stalls. Render them with [`Notifications::blocks`].
    ///
    /// The caller takes over delivery: what it drains, the model must be shown (an MCP
    /// server puts the blocks at the head of the tool result it returns). Nothing is
    /// written to the session. Errors:
    /// [`AgentError::Destroyed`](crate::AgentError::Destroyed), or the context's when the
    /// handle cannot be created.
    pub async fn drain_notifications(&self) -> Result<Notifications> {
        self.ensure_live()?;
        let handle = self.handle().await?;
        let notifications = self.drain(handle).await;
        self.tell_exits_told();
        Ok(notifications)
    }

    /// Claims the telling of one task's end for a channel of the host's own (an MCP task
    /// whose result is the task's `<task-notification>`): true when the model has not
    /// been told yet, and the caller must tell it now; false when it was told already
    /// (by a drain, a kill, a completed wait, a read of the ended task's log), and the
    /// caller must not tell it again. Either way no drain delivers it afterwards: one
    /// latch for every channel.
    pub fn claim_exit(&self, task_id: TaskId) -> bool {
        let claimed = self.inner.feeds.delivery().claim(task_id);
        self.tell_exits_told();
        claimed
    }
}
