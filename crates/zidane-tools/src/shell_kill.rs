//! The `shell_kill` tool: stop a background task.

use crate::data::{self, ShellKillData};
use async_trait::async_trait;
use zidane_context::{ContextError, TaskExitInfo};

use crate::context::ToolContext;
use crate::input::{ShellKillArgs, input_schema, parse, parse_task_id};
use crate::output_schema::output_schema;
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the kill tool.
pub const SHELL_KILL: &str = "shell_kill";

const DESCRIPTION: &str = "\
Stops a background task started by `shell` with `run_in_background`. The task's whole \
process group gets SIGTERM (then SIGKILL if it lingers), and the call returns once it is \
gone, saying how it ended. Killing a task that has already ended is harmless: you get how \
it ended. No `<task-notification>` follows for a task you killed.";

/// The builtin `shell_kill` tool.
pub(crate) struct ShellKillTool;

#[async_trait]
impl Tool for ShellKillTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: SHELL_KILL.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ShellKillArgs>(),
            aliases: Vec::new(),
            title: Some("Stop a background task".to_owned()),
            annotations: ToolAnnotations {
                read_only: None,
                destructive: Some(true),
                idempotent: Some(true),
                open_world: Some(false),
            },
            output_schema: Some(output_schema::<ShellKillData>()),
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ShellKillArgs = match parse(SHELL_KILL, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        let task_id = match parse_task_id(SHELL_KILL, &input.task_id) {
            Ok(task_id) => task_id,
            Err(output) => return output,
        };
        match context
            .execution()
            .kill_background(context.handle(), task_id)
            .await
        {
            Ok(Some(exit)) => {
                let mut text = format!(
                    "Killed {}: {} after {}",
                    exit.task_id,
                    exit_phrase(&exit),
                    zidane_wire::format_duration(exit.duration)
                );
                if let Some(code) = exit.leader_exit_code {
                    // The command itself had finished; the kill ended what it left
                    // running (a daemon holding its output).
                    text.push_str(&format!(
                        "; its shell had already exited {code}, the kill ended what it left running"
                    ));
                }
                if let Some(failure) = &exit.log_write_failure {
                    text.push_str(&format!("; log incomplete: {failure}"));
                }
                text.push_str(&format!(". Output: {}", exit.output_path.display()));
                ToolOutput::ok(text, data::to_value(&ShellKillData { exit }))
            }
            Ok(None) => ToolOutput::error(format!(
                "{SHELL_KILL}: no background task {task_id} in this session. Use a task id \
                 returned by `shell` with `run_in_background`."
            )),
            Err(ContextError::Unsupported { .. }) => ToolOutput::error(format!(
                "{SHELL_KILL}: background tasks are not supported in this execution context"
            )),
            Err(error) => ToolOutput::error(format!("{SHELL_KILL}: {error}")),
        }
    }
}

/// `exited 0`, or `killed (SIGTERM)` when a signal ended the task — the same words as
/// the exit summary of the notification.
fn exit_phrase(exit: &TaskExitInfo) -> String {
    match exit.signal {
        Some(signal) => format!("killed ({signal})"),
        None => format!("exited {}", exit.exit_code),
    }
}
