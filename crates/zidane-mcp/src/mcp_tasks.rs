//! Tool calls answered as MCP tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663, as `rmcp` implements it), for a client that declares the extension. An MCP
//! task is the protocol's handle for a long request; it is not a background task, though
//! here it may stand for one.
//!
//! - **A background start** is answered as a task that completes when the background
//!   task ends, its result the task's `<task-notification>`: a host that takes tasks
//!   moves the call to its own background and hands the model that result when it
//!   arrives — the host itself wakes the model. The `Started …` line is the task's
//!   status message, and the whole start text is in the handle's `_meta` where Claude
//!   Code reads what to show the model at once (`com.anthropic/agent-task`). One latch decides who
//!   tells ([`Agent::claim_exit`]): if the exit was told first another way, the result
//!   says so and repeats nothing; once the result tells it, no later tool result does.
//!   Cancelling the MCP task kills the background task.
//! - **`wait_task`** is answered as a task, so a host with a short request timeout can
//!   still wait long. The wait is the same `Agent::call_tool` as always: a wait that
//!   returns the exit acknowledges it. Its result carries no piggybacked blocks — a task's
//!   result may be read late, or never — so other exits stay pending for the next plain
//!   tool result.
//!
//! When an MCP task ends, `notifications/tasks` pushes its final state.
//!
//! **Held polls.** Claude Code reads no `notifications/tasks`: it learns an MCP task's
//! end only from `tasks/get`, which it sends in a loop — a poll, its answer, a sleep of
//! the task's `pollIntervalMs` (which it clamps to at least 250 ms), the next poll — and
//! gives each poll 60 s before counting it failed. At a fixed interval, an end waits up
//! to that interval to be seen, and a short interval means a poll every moment for a
//! task that may run for hours. So for a client known to poll that way (the clients
//! table's `polls_tasks_in_a_loop`), `tasks/get` of a working MCP task is held open until the task
//! ends, the client cancels the request, or [`HOLD`] passes, and the answer tells it to
//! poll again after [`HELD_POLL_INTERVAL_MS`]: an end reaches it at once, and while
//! nothing happens it asks a few times a minute. Holding a request is plain protocol,
//! but it is only safe for such a client: one that polls on a timer regardless of
//! answers would pile held requests up, and one with a shorter request timeout would
//! see its polls fail. Every other client gets the task's state at once and
//! [`POLL_INTERVAL_MS`].

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, Implementation, ServerNotification,
    TaskPayload, TaskStatus, TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, TaskOptions};
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use zidane_agent::{Agent, Notifications, ToolCall};
use zidane_context::{KillReason, TaskExitInfo, TaskId};
use zidane_tools::{MAX_WAIT_TIMEOUT, ShellData, ToolOutput, WAIT_TASK};
use zidane_wire::TaskNotification;

use crate::clients::ResultShape;
use crate::error::agent_error;
use crate::result::tool_result;
use crate::session::McpSession;
use zidane_context::lock;

/// How long a wait's final state stays readable after the longest wait could end.
const TASK_RETENTION_MS: u64 = 60_000;

/// How long an MCP task standing for a background task stays known: a dev server may
/// run for weeks, and a task forgotten before it ends could not tell its end.
const BACKGROUND_TASK_TTL_MS: u64 = 90 * 24 * 3600 * 1000;

/// Where Claude Code reads what to show the model at once of a call answered as an MCP
/// task (`modelImmediateResponse`); without it the model learns no task id or log path
/// until the task ends.
const AGENT_TASK_META: &str = "com.anthropic/agent-task";

/// How often a client whose polls are not held should poll an MCP task: a background
/// task's end reaches it within about this, where it polls rather than reads
/// `notifications/tasks`.
const POLL_INTERVAL_MS: u64 = 1_000;

/// Longest a held `tasks/get` waits for its MCP task to end: a third of the shortest
/// request timeout of the clients whose polls are held (Claude Code: 60 s), so a slow
/// machine still answers in time.
const HOLD: Duration = Duration::from_secs(20);

/// The poll interval a held client is told: Claude Code's floor. An end can only miss a
/// held poll in this gap between two.
const HELD_POLL_INTERVAL_MS: u64 = 250;

/// How long an ended MCP task's final state stays here for a held poll: the state is
/// told here before `rmcp` records it, and a poll that comes in between reads it here.
const END_RETENTION: Duration = Duration::from_secs(60);

/// One wait on the context, of a background task that may run for days.
const WAIT_SLICE: Duration = Duration::from_secs(3600);

/// Starts `wait_task` with `input` as an MCP task; returns its handle.
pub(crate) fn spawn_wait(
    session: &Arc<McpSession>,
    call_id: String,
    input: serde_json::Value,
    peer: Peer<RoleServer>,
) -> CreateTaskResult {
    let agent = session.agent().clone();
    let budget = session.result_budget;
    let ttl_ms =
        u64::try_from(MAX_WAIT_TIMEOUT.as_millis()).unwrap_or(u64::MAX) + TASK_RETENTION_MS;
    let options = TaskOptions::new()
        .with_ttl_ms(ttl_ms)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message("waiting for the background task");
    spawn(session, options, peer, move |context| {
        Box::pin(async move {
            let cancel = CancellationToken::new();
            let waiting =
                agent.call_tool(ToolCall::new(call_id, WAIT_TASK, input).cancel(cancel.clone()));
            tokio::pin!(waiting);
            let output = tokio::select! {
                output = &mut waiting => output,
                () = context.cancelled() => {
                    // Let the tool see the cancel and return, so the call leaves the
                    // in-flight list the way every call does.
                    cancel.cancel();
                    let _ = waiting.await;
                    return Err(TaskExit::Cancelled);
                }
            };
            let output = output.map_err(|error| TaskExit::Error(agent_error(error)))?;
            // Only a client that shows the structured content alone takes tasks.
            Ok(tool_result(
                output,
                &Notifications::default(),
                budget,
                ResultShape::Full,
            ))
        })
    })
}

/// Answers a background start as an MCP task that completes when the background task
/// ends. `started` is the `shell` tool's output for the start.
/// How long the end of a background task answered as an MCP task waits for the task's
/// event follower to read the rest of its log.
const EVENTS_DRAIN_BOUND: Duration = Duration::from_secs(5);

pub(crate) fn spawn_background(
    session: &Arc<McpSession>,
    task_id: TaskId,
    started: &ToolOutput,
    peer: Peer<RoleServer>,
) -> CreateTaskResult {
    let agent = session.agent().clone();
    let budget = session.result_budget;
    // The `Started …` line: what the model needs to read the log or stop the task. The
    // guidance after it is the host's to give (Claude Code says it will tell the model),
    // and a host quotes a short note where it would drop a long one.
    let started_line = started.text.lines().next().unwrap_or_default().to_owned();
    let options = TaskOptions::new()
        .with_ttl_ms(BACKGROUND_TASK_TTL_MS)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
        .with_status_message(started_line);
    let immediate = started.text.clone();
    let mut created = spawn(session, options, peer, move |context| {
        Box::pin(async move {
            let exit = tokio::select! {
                exit = wait_for_end(&agent, task_id) => exit?,
                () = context.cancelled() => {
                    // The host stopped the call: stop what it stands for. The host told
                    // the model so, so the exit is not told again.
                    if let Err(error) = agent.kill_background_task(&task_id.to_string()).await {
                        tracing::debug!(%error, %task_id, "cancelled MCP task: nothing to kill");
                    }
                    agent.claim_exit(task_id);
                    return Err(TaskExit::Cancelled);
                }
            };
            // The task's last events come before its end, in the same result.
            let mut told = Notifications::default();
            told.events
                .extend(agent.take_task_events(task_id, EVENTS_DRAIN_BOUND).await);
            Ok(tool_result(
                end_output(&agent, &exit),
                &told,
                budget,
                ResultShape::Full,
            ))
        })
    });
    // Claude Code hands the model this at once, in place of the result to come.
    let mut meta = rmcp::model::MetaObject::default();
    meta.0.insert(
        AGENT_TASK_META.to_owned(),
        json!({ "modelImmediateResponse": immediate }),
    );
    created.meta = Some(meta);
    created
}

/// What the model reads when a background task answered as an MCP task ends: its
/// `<task-notification>`, unless the model was told another way first.
fn end_output(agent: &Agent, exit: &TaskExitInfo) -> ToolOutput {
    let data = serde_json::to_value(ShellData {
        exit: Some(exit.clone()),
        ..ShellData::default()
    })
    .unwrap_or_default();
    // A kill on request is the model's own `shell_kill` (this server has no other), whose
    // result tells the exit; it may end this wait before that call's own latch.
    let stopped_by_the_model = exit.kill_reason == Some(KillReason::Requested);
    if agent.claim_exit(exit.task_id) && !stopped_by_the_model {
        ToolOutput::ok(TaskNotification::from_exit(exit).render(), data)
    } else {
        ToolOutput::ok(
            format!(
                "{} has ended; its <task-notification> was already delivered.",
                exit.task_id
            ),
            data,
        )
    }
}

/// Waits for a background task's end, however long it runs.
async fn wait_for_end(agent: &Agent, task_id: TaskId) -> Result<TaskExitInfo, TaskExit> {
    let handle = agent
        .handle()
        .await
        .map_err(|error| TaskExit::Error(agent_error(error)))?;
    let context = agent.context();
    let failed = |error: zidane_context::ContextError| {
        TaskExit::Error(rmcp::ErrorData::internal_error(
            format!("cannot wait for {task_id}: {error}"),
            None,
        ))
    };
    loop {
        let waited = context
            .wait_background(handle, task_id, WAIT_SLICE, CancellationToken::new())
            .await
            .map_err(failed)?;
        if let Some(exit) = waited {
            return Ok(exit);
        }
        // A timed-out slice, or a task the context no longer knows.
        let entries = context.list_background(handle).await.map_err(failed)?;
        match entries.iter().find(|entry| entry.task_id == task_id) {
            None => {
                return Err(TaskExit::Error(rmcp::ErrorData::internal_error(
                    format!("{task_id} is no longer known to the session"),
                    None,
                )));
            }
            Some(entry) => {
                if let Some(exit) = entry.exit_info() {
                    return Ok(exit);
                }
            }
        }
    }
}

/// Spawns an MCP task running `work`; when it ends, tells its held polls and, when it
/// completed, pushes its final state.
fn spawn(
    session: &Arc<McpSession>,
    options: TaskOptions,
    peer: Peer<RoleServer>,
    work: impl FnOnce(TaskContext) -> TaskFuture + Send + 'static,
) -> CreateTaskResult {
    let manager = session.mcp_tasks.clone();
    let task = session
        .mcp_tasks
        .spawn(options, move |context: TaskContext| -> TaskFuture {
            let task_id = context.task_id().to_owned();
            // Known before the handle is returned, so before any poll.
            let end = End::register(&task_id);
            let work = work(context);
            Box::pin(async move {
                let outcome = work.await;
                end.tell(final_payload(&outcome));
                let result = outcome?;
                notify_completed(&manager, &task_id, &result, &peer).await;
                Ok(result)
            })
        });
    CreateTaskResult::new(task)
}

/// Answers `tasks/get`: the MCP task's state, held open first for a client that polls
/// in a loop while the task is working (see the module docs).
pub(crate) async fn get_task(
    session: &McpSession,
    task_id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<DetailedTask, rmcp::ErrorData> {
    let current = session.mcp_tasks.get_task(task_id)?;
    if !polls_in_a_loop(context.client_info().as_ref()) {
        return Ok(current);
    }
    if current.status() != TaskStatus::Working {
        return Ok(held_answer(current));
    }
    let told = match ended(task_id) {
        None => None,
        Some(end) => tokio::select! {
            told = told_end(end) => told,
            () = tokio::time::sleep(HOLD) => None,
            () = context.ct.cancelled() => None,
        },
    };
    let latest = session.mcp_tasks.get_task(task_id)?;
    Ok(held_answer(match told {
        // Told its end before `rmcp` recorded it.
        Some(payload) if latest.status() == TaskStatus::Working => {
            DetailedTask::new(latest.task, payload)
        }
        _ => latest,
    }))
}

/// Whether the client is known to poll an MCP task in a loop (the clients table).
fn polls_in_a_loop(client: Option<&Implementation>) -> bool {
    crate::clients::known(client).is_some_and(|known| known.polls_tasks_in_a_loop)
}

/// `task` as a held client is answered: told to poll again soon, as the next poll is
/// held again.
fn held_answer(mut task: DetailedTask) -> DetailedTask {
    task.task.poll_interval_ms = Some(HELD_POLL_INTERVAL_MS);
    task
}

/// The state an MCP task settles in after `outcome`, as `rmcp` records it.
fn final_payload(outcome: &Result<CallToolResult, TaskExit>) -> TaskPayload {
    let object = |value: Result<serde_json::Value, serde_json::Error>| match value {
        Ok(serde_json::Value::Object(object)) => object,
        _ => rmcp::model::JsonObject::new(),
    };
    match outcome {
        Ok(result) => TaskPayload::Completed {
            result: object(serde_json::to_value(result)),
        },
        Err(TaskExit::Cancelled) => TaskPayload::Cancelled,
        Err(TaskExit::Error(error)) => TaskPayload::Failed {
            error: object(serde_json::to_value(error)),
        },
    }
}

/// Each MCP task's end, by its id (unique across sessions): its final state once told.
/// Kept a while after the end ([`END_RETENTION`]); dropped at once for an MCP task whose
/// work was dropped unfinished, whose state `rmcp` recorded first.
static ENDS: LazyLock<Mutex<HashMap<String, Ending>>> = LazyLock::new(Mutex::default);

/// One MCP task's entry in [`ENDS`].
struct Ending {
    end: watch::Receiver<Option<TaskPayload>>,
    /// When the end was told.
    told: Option<Instant>,
}

/// The telling side of an MCP task's end, held by its work.
struct End {
    task_id: String,
    sender: watch::Sender<Option<TaskPayload>>,
    told: bool,
}

impl End {
    /// Registers an MCP task that is starting; forgets ends told long ago.
    fn register(task_id: &str) -> Self {
        let (sender, end) = watch::channel(None);
        let mut ends = lock(&ENDS);
        ends.retain(|_, ending| ending.told.is_none_or(|at| at.elapsed() < END_RETENTION));
        ends.insert(task_id.to_owned(), Ending { end, told: None });
        Self {
            task_id: task_id.to_owned(),
            sender,
            told: false,
        }
    }

    /// Tells the MCP task's held polls its final state.
    fn tell(mut self, payload: TaskPayload) {
        if let Some(ending) = lock(&ENDS).get_mut(&self.task_id) {
            ending.told = Some(Instant::now());
        }
        self.sender.send_replace(Some(payload));
        self.told = true;
    }
}

impl Drop for End {
    fn drop(&mut self) {
        // Dropped untold: the work was stopped (the MCP task expired, or the session
        // ended) after `rmcp` recorded its state. Held polls wake on the closed channel.
        if !self.told {
            lock(&ENDS).remove(&self.task_id);
        }
    }
}

/// The end of the MCP task `task_id` to wait on, unless it is long over.
fn ended(task_id: &str) -> Option<watch::Receiver<Option<TaskPayload>>> {
    lock(&ENDS).get(task_id).map(|ending| ending.end.clone())
}

/// The MCP task's final state once told; `None` if its work was dropped untold.
async fn told_end(mut end: watch::Receiver<Option<TaskPayload>>) -> Option<TaskPayload> {
    end.wait_for(Option::is_some).await.ok()?.clone()
}

async fn notify_completed(
    manager: &rmcp::task_manager::TaskManager,
    task_id: &str,
    result: &CallToolResult,
    peer: &Peer<RoleServer>,
) {
    let Ok(current) = manager.get_task(task_id) else {
        return;
    };
    let object = match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => rmcp::model::JsonObject::new(),
    };
    let done = DetailedTask::new(current.task, TaskPayload::Completed { result: object });
    let notification = TaskStatusNotification::new(TaskStatusNotificationParams::new(done));
    // A client that went away makes this fail; it reads the task with tasks/get if at all.
    let _ = peer
        .send_notification(ServerNotification::TaskStatusNotification(notification))
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claude_code_has_its_polls_held() {
        let named = |name: &str| polls_in_a_loop(Some(&Implementation::new(name, "1.0")));
        assert!(named("claude-code"));
        assert!(!named("inspector-cli"));
        assert!(!named("codex-mcp-client"));
        assert!(!polls_in_a_loop(None));
    }
}
