//! `list_tasks`: the host-side task listing, as a tool. An MCP host has no task picker,
//! so the model asks for it. Registered on the session's agent like any other tool, so
//! its calls pass the same hooks and the same piggyback.

use async_trait::async_trait;
use chrono::Utc;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zidane_context::{ContextError, TaskEntry, TaskStatus};
use zidane_tools::{
    SpecView, Tool, ToolAnnotations, ToolContext, ToolOutput, ToolSpec, input_schema,
    output_schema, parse_input,
};

/// The name of the listing tool.
pub const LIST_TASKS: &str = "list_tasks";

const DESCRIPTION: &str = "\
Lists this session's background tasks, running and ended: id, status, exit code, runtime, \
command and log path, oldest first; a detached task (`bash_d<n>`, kept after its host \
exits) says `detached`, and a task on a fleet names its worker (`on w2`). Use it to find a task id or a log path you no longer \
have. It is not a way to wait for a task: a `<task-notification>` arrives when a task \
ends.";

/// The arguments of `list_tasks`: none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListTasksArgs {}

/// What `list_tasks` answers besides its text.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ListTasksData {
    /// This session's background tasks, running and ended, oldest first; a detached
    /// task carries `detached: true`.
    pub(crate) tasks: Vec<TaskEntry>,
}

/// The `list_tasks` tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ListTasksTool;

#[async_trait]
impl Tool for ListTasksTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: LIST_TASKS.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ListTasksArgs>(),
            aliases: Vec::new(),
            title: Some("List the background tasks".to_owned()),
            annotations: ToolAnnotations::READ_ONLY,
            output_schema: Some(output_schema::<ListTasksData>()),
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        if let Err(error) = parse_input::<ListTasksArgs>(LIST_TASKS, input) {
            return error;
        }
        let mut entries = match context.execution().list_background(context.handle()).await {
            Ok(entries) => entries,
            Err(ContextError::Unsupported { .. }) => Vec::new(),
            Err(error) => return ToolOutput::error(format!("{LIST_TASKS}: {error}")),
        };
        entries.sort_by_key(|entry| (entry.started_at, entry.task_id));
        let text = render(&entries);
        let data = serde_json::to_value(ListTasksData { tasks: entries });
        ToolOutput::ok(text, data.unwrap_or_default())
    }
}

/// One line per task: `bash_1  running  4.2s  pid 42  make  → /log`, with `detached`
/// after the status for a detached task and `on w2` for one a fleet's worker runs.
fn render(entries: &[TaskEntry]) -> String {
    if entries.is_empty() {
        return "No background tasks in this session.".to_owned();
    }
    let now = Utc::now();
    entries
        .iter()
        .map(|entry| {
            let status = match (entry.status(), entry.exit_code(), entry.signal()) {
                (TaskStatus::Running, _, _) => "running".to_owned(),
                (status, _, Some(signal)) => format!("{status} ({signal})"),
                (status, Some(code), None) => format!("{status} {code}"),
                (status, None, None) => status.to_string(),
            };
            let status = if entry.detached {
                format!("{status}  detached")
            } else {
                status
            };
            let status = match &entry.runs_on {
                Some(worker) => format!("{status}  on {worker}"),
                None => status,
            };
            format!(
                "{}  {status}  {}  pid {}  {}  → {}",
                entry.task_id,
                zidane_wire::format_duration(entry.runtime(now)),
                entry.pid,
                zidane_wire::command_preview(&entry.command),
                entry.output_path.display()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::Utc;
    use zidane_context::{TaskEntry, TaskId, TaskStatus};

    use super::{ListTasksData, render};

    fn entry(task_id: TaskId, detached: bool) -> TaskEntry {
        let entry = TaskEntry::running(task_id, 42, "make", "/w", "/t/x.log", Utc::now())
            .detached(detached);
        let exit = entry.exit_after(TaskStatus::Exited, 0, Duration::from_millis(4200));
        entry.ended(exit)
    }

    #[test]
    fn a_detached_task_says_so_and_a_normal_one_is_unchanged() {
        let plain = entry(TaskId::from_number(1), false);
        let detached = entry(TaskId::detached(2).unwrap(), true);
        let text = render(&[plain.clone(), detached.clone()]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "bash_1  exited 0  4.2s  pid 42  make  → /t/x.log",
                "bash_d2  exited 0  detached  4.2s  pid 42  make  → /t/x.log",
            ]
        );
        let data = serde_json::to_value(ListTasksData {
            tasks: vec![plain, detached],
        })
        .unwrap();
        assert!(data["tasks"][0].get("detached").is_none());
        assert_eq!(data["tasks"][1]["detached"], true);
        assert_eq!(data["tasks"][1]["task_id"], "bash_d2");
    }

    #[test]
    fn a_task_on_a_fleet_names_its_worker() {
        let remote = entry(TaskId::from_number(3), false).runs_on(Some("w2".to_owned()));
        assert_eq!(
            render(std::slice::from_ref(&remote)),
            "bash_3  exited 0  on w2  4.2s  pid 42  make  → /t/x.log"
        );
        let data = serde_json::to_value(ListTasksData {
            tasks: vec![remote],
        })
        .unwrap();
        assert_eq!(data["tasks"][0]["runs_on"], "w2");
    }
}
