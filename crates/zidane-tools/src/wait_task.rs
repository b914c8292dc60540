//! The `wait_task` tool: block until a background task ends, within a bound.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use zidane_context::{ContextError, TaskEntry, TaskExitInfo, TaskId};

use crate::input::{WaitTaskInput, input_schema, parse, parse_task_id};
use crate::{Tool, ToolContext, ToolOutput, ToolSpec};

/// The name of the wait tool.
pub const WAIT_TASK: &str = "wait_task";

/// How long `wait_task` waits when the model gives no `timeout_ms`: 2 minutes.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest `wait_task` waits: 30 minutes. Larger `timeout_ms` values are capped to
/// it, not refused.
pub const MAX_WAIT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

const DESCRIPTION: &str = "\
Waits for a background task started by `shell` to end and returns its exit summary \
(command, duration, exit code). Use it only when your very next step needs the task's \
result; otherwise end your turn — a `<task-notification>` arrives when the task ends. \
Waits at most `timeout_ms` (default 2 minutes, at most 30 minutes); if the task is still \
running then, the call says so and the task keeps running. Read the task's log with \
`read_file` for its output.";

/// The builtin `wait_task` tool.
pub(crate) struct WaitTaskTool;

#[async_trait]
impl Tool for WaitTaskTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: WAIT_TASK.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<WaitTaskInput>(),
            aliases: Vec::new(),
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: WaitTaskInput = match parse(WAIT_TASK, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        let task_id = match parse_task_id(WAIT_TASK, &input.task_id) {
            Ok(task_id) => task_id,
            Err(output) => return output,
        };
        let timeout = match input.timeout_ms {
            None => DEFAULT_WAIT_TIMEOUT,
            Some(ms) => match u64::try_from(ms) {
                Ok(ms) if ms > 0 => Duration::from_millis(ms).min(MAX_WAIT_TIMEOUT),
                _ => {
                    return ToolOutput::error(format!(
                        "{WAIT_TASK}: `timeout_ms` must be a positive number of milliseconds, \
                         got {ms}"
                    ));
                }
            },
        };
        match wait(context, task_id, timeout).await {
            Ok(output) => output,
            Err(ContextError::Unsupported { .. }) => ToolOutput::error(format!(
                "{WAIT_TASK}: background tasks are not supported in this execution context"
            )),
            Err(error) => ToolOutput::error(format!("{WAIT_TASK}: {error}")),
        }
    }
}

async fn wait(
    context: &ToolContext,
    task_id: TaskId,
    timeout: Duration,
) -> Result<ToolOutput, ContextError> {
    // `wait_background` answers `None` alike for an unknown id, a timeout and a
    // cancellation; look the task up first so each gets its own answer.
    if find(context, task_id).await?.is_none() {
        return Ok(ToolOutput::error(format!(
            "{WAIT_TASK}: no background task {task_id} in this session. Use a task id \
             returned by `shell` with `run_in_background`."
        )));
    }
    let waited = context
        .context
        .wait_background(context.handle, task_id, timeout, context.cancel.clone())
        .await?;
    if let Some(exit) = waited {
        return Ok(exit_output(exit));
    }
    // An exit racing the end of the wait still counts as an exit.
    let entry = find(context, task_id).await?;
    if let Some(exit) = entry.as_ref().and_then(TaskEntry::exit_info) {
        return Ok(exit_output(exit));
    }
    let output_path = entry
        .map(|entry| entry.output_path.display().to_string())
        .unwrap_or_default();
    if context.cancel.is_cancelled() {
        return Ok(ToolOutput::error_with(
            format!("{WAIT_TASK}: cancelled; {task_id} is still running. Output: {output_path}"),
            json!({ "cancelled": true, "task_id": task_id.to_string(), "output_path": output_path }),
        ));
    }
    Ok(ToolOutput::ok(
        format!(
            "{WAIT_TASK}: timed out after {}; {task_id} is still running. Output: {output_path}",
            timeout_text(timeout)
        ),
        json!({ "timed_out": true, "task_id": task_id.to_string(), "output_path": output_path }),
    ))
}

/// The timeout as the model gave it: `5s` for whole seconds under a minute (it asked for
/// 5000 ms, not 5.0 s), the summary's duration format otherwise.
fn timeout_text(timeout: Duration) -> String {
    let ms = timeout.as_millis();
    if (1_000..60_000).contains(&ms) && ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        zidane_wire::format_duration(timeout)
    }
}

fn exit_output(exit: TaskExitInfo) -> ToolOutput {
    ToolOutput::ok(zidane_wire::exit_summary(&exit), json!({ "exit": exit }))
}

async fn find(context: &ToolContext, task_id: TaskId) -> Result<Option<TaskEntry>, ContextError> {
    let entries = context.context.list_background(context.handle).await?;
    Ok(entries.into_iter().find(|entry| entry.task_id == task_id))
}
