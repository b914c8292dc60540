//! The `shell_notify` tool: replace or clear the `notify_on` patterns of a running
//! background task; and the checks `shell`'s own `notify_on` shares with it.

use std::sync::Arc;

use async_trait::async_trait;
use zidane_context::TaskId;

use crate::context::ToolContext;
use crate::data::{self, ShellNotifyData};
use crate::gate::BackgroundGate;
use crate::input::{ShellNotifyArgs, input_schema, parse, parse_task_id};
use crate::output_schema::output_schema;
use crate::task_events::{FollowFrom, NotifyPatterns, PatternsChanged, TaskEvents};
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the notify tool.
pub const SHELL_NOTIFY: &str = "shell_notify";

const DESCRIPTION: &str = "\
Sets which lines of a running background task's log are pushed to you as `<task-event>` \
blocks: `notify_on` is a regular expression (Rust regex syntax) or a list of them, and \
replaces the task's patterns for every line not matched yet (a task started without \
`notify_on` is matched from the lines it writes after this call). `[]` clears them: no \
more events for that task. Use it when you learn what to look for after the start (a \
new error message, the line a server prints when it is ready).";

/// The builtin `shell_notify` tool.
pub(crate) struct ShellNotifyTool;

/// The session's followers, when `patterns` can be followed here: `Ok(None)` for no
/// patterns, an error result naming why not otherwise.
pub(crate) fn events_for(
    context: &ToolContext,
    gate: &BackgroundGate,
    patterns: &NotifyPatterns,
) -> Result<Option<TaskEvents>, ToolOutput> {
    if patterns.is_empty() {
        return Ok(None);
    }
    unavailable(context, gate).map(Some)
}

/// Why `notify_on` is refused where the context cannot follow a log.
pub(crate) const NOTIFY_ON_UNFOLLOWED: &str = "`notify_on` is not available: this execution \
     context cannot follow a task's log as it grows. Drop `notify_on`; read the log with \
     `read_file`, or wait with `wait_task`.";

/// The followers, or why `notify_on` cannot work in this session.
fn unavailable(context: &ToolContext, gate: &BackgroundGate) -> Result<TaskEvents, ToolOutput> {
    if !gate.task_events() {
        return Err(ToolOutput::error(NOTIFY_ON_UNFOLLOWED));
    }
    context.sinks().on_event.clone().ok_or_else(|| {
        ToolOutput::error(
            "`notify_on` is not available: this host does not deliver task events. Drop \
             `notify_on`; read the log with `read_file`, or wait with `wait_task`.",
        )
    })
}

/// Starts the follower of a task `shell` has just started with `patterns`.
pub(crate) fn follow_started(
    context: &ToolContext,
    events: Option<TaskEvents>,
    task_id: TaskId,
    patterns: NotifyPatterns,
) {
    if let Some(events) = events {
        events.follow(
            Arc::clone(context.execution()),
            context.handle(),
            task_id,
            patterns,
            FollowFrom::default(),
        );
    }
}

#[async_trait]
impl Tool for ShellNotifyTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: SHELL_NOTIFY.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ShellNotifyArgs>(),
            aliases: Vec::new(),
            title: Some("Choose which log lines of a background task you are told of".to_owned()),
            annotations: ToolAnnotations {
                read_only: None,
                destructive: Some(false),
                idempotent: Some(true),
                open_world: Some(false),
            },
            output_schema: Some(output_schema::<ShellNotifyData>()),
        }
    }

    fn offered(&self, gate: &BackgroundGate) -> bool {
        gate.allowed() && gate.task_events()
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ShellNotifyArgs = match parse(SHELL_NOTIFY, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        let task_id = match parse_task_id(SHELL_NOTIFY, &input.task_id) {
            Ok(task_id) => task_id,
            Err(output) => return output,
        };
        let patterns = match NotifyPatterns::parse(&input.notify_on) {
            Ok(patterns) => patterns,
            Err(error) => return ToolOutput::error(format!("{SHELL_NOTIFY}: {error}")),
        };
        let gate = context.gate();
        if !gate.allowed() {
            return ToolOutput::error(format!(
                "{SHELL_NOTIFY}: there are no background tasks in this session"
            ));
        }
        let events = match unavailable(context, &gate) {
            Ok(events) => events,
            Err(output) => return ToolOutput::error(format!("{SHELL_NOTIFY}: {}", output.text)),
        };
        match context
            .execution()
            .follow_output(context.handle(), task_id, u64::MAX, 0)
            .await
        {
            Ok(Some(end)) if !end.ended => {}
            Ok(Some(_)) => {
                return ToolOutput::error(format!(
                    "{SHELL_NOTIFY}: {task_id} has ended; its log will not grow, so there is \
                     nothing to watch. Read it with `read_file`."
                ));
            }
            Ok(None) => {
                return ToolOutput::error(format!(
                    "{SHELL_NOTIFY}: no background task {task_id} in this session. Use a task \
                     id returned by `shell` with `run_in_background`."
                ));
            }
            Err(error) => return ToolOutput::error(format!("{SHELL_NOTIFY}: {error}")),
        }
        let sources = patterns.sources();
        let changed = events
            .set_patterns(
                Arc::clone(context.execution()),
                context.handle(),
                task_id,
                patterns,
            )
            .await;
        let shown = sources
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let text = match changed {
            PatternsChanged::Replaced => {
                format!("{task_id}: lines not matched yet are now matched against {shown}.")
            }
            PatternsChanged::Started => {
                format!("{task_id}: lines it writes from now on are matched against {shown}.")
            }
            PatternsChanged::Cleared => {
                format!("{task_id}: patterns cleared; no more <task-event> blocks for it.")
            }
            PatternsChanged::Unchanged => {
                format!("{task_id} had no patterns; nothing changed.")
            }
        };
        ToolOutput::ok(
            text,
            data::to_value(&ShellNotifyData {
                task_id: task_id.to_string(),
                notify_on: sources,
            }),
        )
    }
}
