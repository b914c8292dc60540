//! Channel 3: `wait_task` as an MCP task (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663, as `rmcp` implements it) for a client that declares the extension.
//!
//! The call returns a task handle at once instead of holding the request open, so a host
//! with a short request timeout can still wait long. The wait itself is the same
//! `Agent::call_tool` as always: a wait that returns the exit acknowledges it, and the
//! task's result is the tool's own result. It carries no piggybacked blocks — a task's
//! result may be read late, or never — so other exits stay pending for the next plain
//! tool result. When the wait ends, `notifications/tasks` pushes the final state.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, ServerNotification, TaskPayload,
    TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RoleServer};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, TaskOptions};
use tokio_util::sync::CancellationToken;
use zidane_agent::{Notifications, ToolCall};
use zidane_tools::{MAX_WAIT_TIMEOUT, WAIT_TASK};

use crate::handler::{agent_error, tool_result};
use crate::session::SessionCore;

/// How long a task's final state stays readable after the longest wait could end.
const TASK_RETENTION_MS: u64 = 60_000;

/// Starts `wait_task` with `input` as an MCP task; returns its handle.
pub(crate) fn spawn_wait(
    core: &Arc<SessionCore>,
    call_id: String,
    input: serde_json::Value,
    peer: Peer<RoleServer>,
) -> CreateTaskResult {
    let agent = core.agent.clone();
    let manager = core.tasks.clone();
    let budget = core.result_budget;
    let ttl_ms =
        u64::try_from(MAX_WAIT_TIMEOUT.as_millis()).unwrap_or(u64::MAX) + TASK_RETENTION_MS;
    let options = TaskOptions::new()
        .with_ttl_ms(ttl_ms)
        .with_status_message("waiting for the background task");
    let task = core
        .tasks
        .spawn(options, move |context: TaskContext| -> TaskFuture {
            Box::pin(async move {
                let cancel = CancellationToken::new();
                let waiting = agent
                    .call_tool(ToolCall::new(call_id, WAIT_TASK, input).cancel(cancel.clone()));
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
                let result = tool_result(output, &Notifications::default(), budget);
                if let Ok(current) = manager.get_task(context.task_id()) {
                    let done = DetailedTask::new(
                        current.task,
                        TaskPayload::Completed {
                            result: result_object(&result),
                        },
                    );
                    let notification =
                        TaskStatusNotification::new(TaskStatusNotificationParams::new(done));
                    let _ = peer
                        .send_notification(ServerNotification::TaskStatusNotification(notification))
                        .await;
                }
                Ok(result)
            })
        });
    CreateTaskResult::new(task)
}

fn result_object(result: &CallToolResult) -> rmcp::model::JsonObject {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => rmcp::model::JsonObject::new(),
    }
}
