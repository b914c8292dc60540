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

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, ServerNotification, TaskPayload,
    TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RoleServer};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, TaskOptions};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use zidane_agent::{Agent, Notifications, ToolCall};
use zidane_context::{KillReason, TaskExitInfo, TaskId};
use zidane_tools::{MAX_WAIT_TIMEOUT, ShellData, ToolOutput, WAIT_TASK};
use zidane_wire::TaskNotification;

use crate::error::agent_error;
use crate::result::tool_result;
use crate::session::McpSession;

/// How long a wait's final state stays readable after the longest wait could end.
const TASK_RETENTION_MS: u64 = 60_000;

/// How long an MCP task standing for a background task stays known: a dev server may
/// run for weeks, and a task forgotten before it ends could not tell its end.
const BACKGROUND_TASK_TTL_MS: u64 = 90 * 24 * 3600 * 1000;

/// Where Claude Code reads what to show the model at once of a call answered as an MCP
/// task (`modelImmediateResponse`); without it the model learns no task id or log path
/// until the task ends.
const AGENT_TASK_META: &str = "com.anthropic/agent-task";

/// How often a host should poll an MCP task: a background task's end reaches the model
/// within about this, where the host polls rather than reads `notifications/tasks`.
const POLL_INTERVAL_MS: u64 = 1_000;

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
            Ok(tool_result(output, &Notifications::default(), budget))
        })
    })
}

/// Answers a background start as an MCP task that completes when the background task
/// ends. `started` is the `shell` tool's output for the start.
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
            Ok(tool_result(
                end_output(&agent, &exit),
                &Notifications::default(),
                budget,
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

/// Spawns an MCP task running `work`; when it completes, pushes its final state.
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
            let work = work(context);
            Box::pin(async move {
                let result = work.await?;
                notify_completed(&manager, &task_id, &result, &peer).await;
                Ok(result)
            })
        });
    CreateTaskResult::new(task)
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
