//! The run loop: drain, seed a user turn, call the model, dispatch its tool calls,
//! repeat.

use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use zidane_context::{ContextError, ExecutionHandle, StallInfo, TaskExitInfo, TaskId};
use zidane_tools::{ExitChannel, SHELL, ToolOutput};
use zidane_wire::{ContentBlock, Role, TaskEventBlock, Turn};

use crate::agent::Agent;
use crate::agent::InFlightCall;
use crate::config::CANCEL_GRACE;
use crate::error::{AgentError, Result};
use crate::hooks::{HookEvent, Reconcile, ToolCallEvent, ToolResultEvent};
use crate::host::Notifications;
use crate::session::AcknowledgedLog;
use crate::suppress::{Acknowledgement, acknowledgement};
use zidane_llm::ModelRequest;

/// What to run: a prompt (empty for a drain-only run) and a cancellation token.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// The user's prompt. Empty: a drain-only run, legal only while a task notification
    /// is pending.
    pub prompt: String,
    /// Cancelling it aborts the run: the model call or the in-flight foreground tool
    /// call. Background tasks live on.
    pub cancel: CancellationToken,
}

impl RunOptions {
    /// A run of this prompt.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            cancel: CancellationToken::new(),
        }
    }

    /// A drain-only run: delivers pending notifications and lets the model react.
    pub fn drain() -> Self {
        Self::default()
    }

    /// Sets the cancellation token.
    #[must_use]
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling a tool.
    EndTurn,
    /// The run made [`Behavior::max_steps`](crate::Behavior::max_steps) model calls.
    MaxSteps,
    /// The run was cancelled (by its token, or by destroy).
    Cancelled,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// Why it stopped.
    pub stop: StopReason,
    /// Model calls made.
    pub steps: usize,
    /// The text of the last assistant turn.
    pub text: String,
    /// The exits notified at the head of the seeded turn, in completion order.
    pub notified: Vec<TaskExitInfo>,
    /// The stalls reported at the head of the seeded turn.
    pub stalls: Vec<StallInfo>,
    /// The task events told at the head of the seeded turn, one block per task.
    pub events: Vec<TaskEventBlock>,
    /// The turns this run appended to the session.
    pub turns: Vec<Turn>,
}

impl RunOutcome {
    /// The `<task-notification>` and `<task-stall>` blocks the model read at the head of
    /// this run's user turn, exactly as it received them (empty when none were
    /// delivered).
    pub fn notification_blocks(&self) -> Vec<&str> {
        let Some(first) = self.turns.first().filter(|turn| turn.role == Role::User) else {
            return Vec::new();
        };
        first
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text }
                    if zidane_wire::parse(text).is_ok_and(|blocks| !blocks.is_empty()) =>
                {
                    Some(text.as_str())
                }
                _ => None,
            })
            .collect()
    }
}

/// Clears the in-flight state when a run ends, however it ends.
struct RunGuard<'a> {
    agent: &'a Agent,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        let mut run_state = self.agent.run_state();
        run_state.run = None;
        run_state.calls.clear();
        drop(run_state);
        self.agent.inner.running.send_replace(false);
    }
}

impl Agent {
    /// Runs the agent: drains exits and stalls into `<task-notification>` /
    /// `<task-stall>` blocks at the head of a new user turn (before the prompt), then
    /// calls the model and its tools until it stops calling tools or the step limit.
    ///
    /// Errors: [`AgentError::Destroyed`], [`AgentError::Busy`] (a run is in flight),
    /// [`AgentError::NothingPending`] (empty prompt and nothing to deliver), a model
    /// error, or a session save error ([`AgentError::SessionIo`], with the path). Delivery
    /// is transactional: when the turn that carries the notifications cannot be saved (a
    /// full disk), the turn is not kept, the notifications stay pending, and the next run
    /// delivers them at the head of its turn. A cancelled run is `Ok` with
    /// [`StopReason::Cancelled`].
    pub async fn run(&self, options: RunOptions) -> Result<RunOutcome> {
        let span = tracing::info_span!(
            "run",
            session = %self.id(),
            drain_only = options.prompt.trim().is_empty()
        );
        let outcome = self.run_in_span(options).instrument(span.clone()).await;
        match &outcome {
            Ok(outcome) => tracing::info!(
                parent: &span,
                stop = ?outcome.stop,
                steps = outcome.steps,
                notified = outcome.notified.len(),
                "run ended"
            ),
            Err(error) => tracing::info!(parent: &span, %error, "run failed"),
        }
        outcome
    }

    async fn run_in_span(&self, options: RunOptions) -> Result<RunOutcome> {
        self.ensure_live()?;
        if self.inner.host_driven {
            return Err(AgentError::HostDriven);
        }
        if !self.inner.running.send_if_modified(|running| {
            let was_idle = !*running;
            *running = true;
            was_idle
        }) {
            return Err(AgentError::Busy);
        }
        let run_token = options.cancel.child_token();
        self.run_state().run = Some(run_token.clone());
        let _guard = RunGuard { agent: self };
        // Destroy may have begun between the check and the registration above.
        self.ensure_live()?;
        let handle = self.handle().await?;

        let drained = self.drain(handle).await;
        let prompt = options.prompt.trim();
        if prompt.is_empty() && drained.is_empty() {
            return Err(AgentError::NothingPending);
        }
        if !drained.is_empty() {
            tracing::info!(
                exits = drained.exits.len(),
                stalls = drained.stalls.len(),
                events = drained.events.len(),
                task_ids = %drained
                    .exits
                    .iter()
                    .map(|exit| exit.task_id.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                "delivering task notifications"
            );
        }
        let mut content: Vec<ContentBlock> = drained
            .blocks()
            .into_iter()
            .map(|text| ContentBlock::Text { text })
            .collect();
        if !prompt.is_empty() {
            content.push(ContentBlock::Text {
                text: options.prompt.clone(),
            });
        }
        let first = self.session_lock().turns.len();
        // An exit leaves the queue for good only once the turn that tells it is on disk.
        if let Err(error) = self.append_turn_persisted(Turn {
            role: Role::User,
            content,
        }) {
            tracing::warn!(%error, exits = drained.exits.len(), "the delivering turn could not be saved; its notifications stay pending");
            self.inner
                .feeds
                .delivery()
                .restore(drained.exits, drained.stalls, drained.events);
            return Err(error);
        }
        // Told for good: a context that shares detached tasks hears it now.
        self.tell_exits_told();

        let mut outcome = RunOutcome {
            stop: StopReason::MaxSteps,
            steps: 0,
            text: String::new(),
            notified: drained.exits,
            stalls: drained.stalls,
            events: drained.events,
            turns: Vec::new(),
        };
        outcome.stop = self.steps(handle, &run_token, &mut outcome).await?;
        outcome.turns = self.session_lock().turns[first..].to_vec();
        Ok(outcome)
    }

    async fn steps(
        &self,
        handle: ExecutionHandle,
        run_token: &CancellationToken,
        outcome: &mut RunOutcome,
    ) -> Result<StopReason> {
        let gate = self.background_gate();
        let hooks = self.hooks().clone();
        let sink = zidane_llm::DeltaSink::new(move |delta| hooks.emit_delta(delta));
        while outcome.steps < self.inner.behavior.max_steps {
            let request = ModelRequest {
                system: self.inner.behavior.system.clone(),
                turns: self.session_lock().turns.clone(),
                tools: self.inner.tools.specs(&zidane_tools::SpecView::in_context(
                    gate,
                    self.inner.context.as_ref(),
                )),
            };
            outcome.steps += 1;
            let span = tracing::info_span!("model_call", step = outcome.steps);
            // A cancel drops the model call (aborting its HTTP request); the assistant
            // turn is appended only once whole, so a session never holds half of one.
            let call = self
                .inner
                .model
                .stream(request, &sink)
                .instrument(span.clone());
            let response = tokio::select! {
                response = call => response?,
                () = run_token.cancelled() => return Ok(StopReason::Cancelled),
            };
            tracing::debug!(
                parent: &span,
                blocks = response.content.len(),
                tool_uses = response.content.iter().filter(|b| matches!(b, ContentBlock::ToolUse { .. })).count(),
                "model answered"
            );
            outcome.text = response.joined_text();
            let calls: Vec<(String, String, serde_json::Value)> = response
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            self.append_turn(Turn {
                role: Role::Assistant,
                content: response.content,
            })?;
            if calls.is_empty() {
                return Ok(StopReason::EndTurn);
            }
            let mut results = Vec::with_capacity(calls.len());
            for (call_id, name, input) in calls {
                let output = if run_token.is_cancelled() {
                    ToolOutput::error("cancelled: the run was aborted before this call started")
                } else {
                    let span = tracing::info_span!("tool_call", tool = %name, call_id = %call_id);
                    let output = self
                        .dispatch_tool(
                            handle,
                            run_token,
                            &call_id,
                            &name,
                            input,
                            CallSettings {
                                exit_channel: self.exit_channel(),
                                foreground_budget: None,
                                approver: None,
                                host_sandbox: None,
                            },
                        )
                        .instrument(span.clone())
                        .await;
                    tracing::debug!(parent: &span, is_error = output.is_error, "tool result");
                    output
                };
                results.push(ContentBlock::ToolResult {
                    tool_use_id: call_id,
                    content: output.text,
                    is_error: output.is_error,
                });
            }
            // Every tool use gets its result, even in a cancelled run, so the session
            // stays a valid conversation.
            self.append_turn(Turn {
                role: Role::User,
                content: results,
            })?;
            if run_token.is_cancelled() {
                return Ok(StopReason::Cancelled);
            }
        }
        Ok(StopReason::MaxSteps)
    }

    /// Push queue + pull sweep → reconcile hook → latch → what to render. The run's
    /// first step, and [`Agent::drain_notifications`] for hosts.
    pub(crate) async fn drain(&self, handle: ExecutionHandle) -> Notifications {
        let swept = if self.inner.context.capabilities().detached_tasks.supported() {
            match self
                .inner
                .journal
                .list_background(self.inner.context.as_ref(), handle)
                .await
            {
                Ok(entries) => entries,
                Err(ContextError::Unsupported { .. }) => Vec::new(),
                Err(error) => {
                    tracing::warn!(%error, "pull sweep failed; delivering pushed exits only");
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        self.resume_task_events(handle);
        // `take` latches every exit before the hook sees it or anything is rendered.
        let taken = self.inner.feeds.delivery().take(&swept);
        let mut reconcile = Reconcile { exits: taken.exits };
        self.inner.feeds.hooks.reconcile(&mut reconcile);
        {
            // A hook may have added exits; they are delivered now, so latch them too.
            let mut delivery = self.inner.feeds.delivery();
            for exit in &reconcile.exits {
                delivery.latch(exit.task_id);
            }
        }
        Notifications {
            exits: reconcile.exits,
            stalls: taken.stalls,
            events: taken.events,
        }
    }

    /// Tells the context, without waiting and without the delivery lock, which detached
    /// tasks' ends the model of this session now knows (latched by a drain, a claim, a
    /// kill, a completed wait or a read), so a context that shares them across sessions
    /// tells no other session. Failures are logged: the worst outcome is that another
    /// session tells the end again.
    pub(crate) fn tell_exits_told(&self) {
        let task_ids = self.inner.feeds.delivery().take_told();
        if task_ids.is_empty() {
            return;
        }
        let Some(handle) = self.current_handle() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                ?task_ids,
                "no runtime to tell the context these ends were told"
            );
            return;
        };
        let context = Arc::clone(&self.inner.context);
        runtime.spawn(async move {
            if let Err(error) = context.exits_told(handle, &task_ids).await {
                tracing::warn!(%error, ?task_ids, "the context could not record that these ends were told");
            }
        });
    }

    /// One tool call, hooks to hooks: the run loop's, and [`Agent::call_tool`] for
    /// hosts.
    pub(crate) async fn dispatch_tool(
        &self,
        handle: ExecutionHandle,
        run_token: &CancellationToken,
        call_id: &str,
        name: &str,
        input: serde_json::Value,
        settings: CallSettings,
    ) -> ToolOutput {
        let tool = self.inner.tools.name_of(name).map(str::to_owned);
        self.hooks().emit(&HookEvent::ToolBefore(ToolCallEvent {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            tool: tool.clone(),
            input: input.clone(),
        }));
        let cancel = run_token.child_token();
        let move_now = CancellationToken::new();
        let started_at = Utc::now();
        let started = Instant::now();
        self.run_state().calls.push(InFlightCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            started_at,
            cancel: cancel.clone(),
            move_now: move_now.clone(),
        });

        let output = match self
            .check_background_cap(tool.as_deref(), &input, handle)
            .await
        {
            Some(refused) => refused,
            None => {
                let context = self
                    .tool_context(handle, cancel.clone())
                    .with_move_trigger(move_now);
                let mut background = context.background().clone();
                background.exit_channel = settings.exit_channel;
                if let Some(budget) = settings.foreground_budget {
                    background.foreground_budget = Some(budget);
                }
                let mut context = context.with_background(background);
                if let Some(approver) = settings.approver {
                    context = context.with_approver(approver);
                }
                if let Some(policy) = settings.host_sandbox {
                    context = context.with_host_sandbox(policy);
                }
                let call = self.inner.tools.dispatch(&context, name, input);
                tokio::pin!(call);
                tokio::select! {
                    output = &mut call => output,
                    () = cancel.cancelled() => {
                        // The tool sees the same token: give it a moment to stop its
                        // command and say so itself.
                        tokio::time::timeout(CANCEL_GRACE, &mut call)
                            .await
                            .unwrap_or_else(|_| ToolOutput::error("cancelled: the call was aborted"))
                    }
                }
            }
        };
        self.run_state().calls.retain(|c| c.call_id != call_id);

        let suppressed = match tool.as_deref() {
            Some(tool) => self.suppress(tool, &output, started_at, handle).await,
            None => Vec::new(),
        };
        self.tell_exits_told();
        self.hooks().emit(&HookEvent::ToolAfter(ToolResultEvent {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            tool,
            output: output.clone(),
            duration: started.elapsed(),
            suppressed,
        }));
        output
    }

    /// The agent's own `tool:after` step: drop the pending notifications this call made
    /// redundant.
    async fn suppress(
        &self,
        tool: &str,
        output: &ToolOutput,
        started_at: chrono::DateTime<Utc>,
        handle: ExecutionHandle,
    ) -> Vec<TaskId> {
        match acknowledgement(tool, output) {
            Some(Acknowledgement::Exit(task_id)) => {
                self.inner.feeds.delivery().suppress_task(task_id);
                vec![task_id]
            }
            Some(Acknowledgement::Read(path)) => {
                let (suppressed, known) = {
                    let mut delivery = self.inner.feeds.delivery();
                    (
                        delivery.suppress_read(&path, started_at),
                        delivery.task_of_log(&path),
                    )
                };
                if !suppressed.is_empty() {
                    self.remember_read(&suppressed, &path);
                    return suppressed;
                }
                // Not queued: a task that ended without a push (a durable context) is
                // acknowledged too if it had ended before the read began.
                let Some(task_id) = known else {
                    return Vec::new();
                };
                let Ok(entries) = self.inner.context.list_background(handle).await else {
                    return Vec::new();
                };
                let ended_before_read = entries.iter().any(|entry| {
                    entry.task_id == task_id
                        && entry.output_path == path
                        && entry.ended_at().is_some_and(|ended| ended <= started_at)
                });
                if ended_before_read {
                    self.inner.feeds.delivery().suppress_task(task_id);
                    self.remember_read(&[task_id], &path);
                    vec![task_id]
                } else {
                    Vec::new()
                }
            }
            None => Vec::new(),
        }
    }

    /// Records in the session that the model read these ended tasks' log, so an agent
    /// rebuilt from it knows (the turns alone do not say the task had ended by then).
    fn remember_read(&self, task_ids: &[TaskId], path: &std::path::Path) {
        let mut session = self.session_lock();
        for task_id in task_ids {
            let log = AcknowledgedLog {
                task_id: *task_id,
                output_path: path.to_owned(),
            };
            if !session.acknowledged_logs.contains(&log) {
                session.acknowledged_logs.push(log);
            }
        }
    }

    /// Refuses a background `shell` call when this agent already runs
    /// `max_background_tasks` tasks.
    async fn check_background_cap(
        &self,
        tool: Option<&str>,
        input: &serde_json::Value,
        handle: ExecutionHandle,
    ) -> Option<ToolOutput> {
        let cap = self.inner.behavior.max_background_tasks?;
        let backgrounded = input
            .get("run_in_background")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if tool != Some(SHELL) || !backgrounded {
            return None;
        }
        let entries = self.inner.context.list_background(handle).await.ok()?;
        let running = entries.iter().filter(|e| !e.status().is_terminal()).count();
        (running >= cap).then(|| {
            ToolOutput::error(format!(
                "too many background tasks: {running} are already running (this agent's cap is {cap}). \
                 Wait for one to end, or kill one with shell_kill, then start this one."
            ))
        })
    }
}

/// What one call runs with besides its input: how a background task's end reaches the
/// model, and a move budget and an approver of the host's own for this call (else the
/// agent's), and the host's own sandbox.
#[derive(Debug, Clone)]
pub(crate) struct CallSettings {
    pub(crate) exit_channel: ExitChannel,
    pub(crate) foreground_budget: Option<std::time::Duration>,
    pub(crate) approver: Option<std::sync::Arc<dyn zidane_tools::Approver>>,
    pub(crate) host_sandbox: Option<zidane_context::SandboxPolicy>,
}
