//! The host's task picker: running background tasks beside in-flight tool calls.

use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use zidane_context::{ContextError, TaskStatus, TtySize};
use zidane_wire::{TASK_GLYPH, TOOL_GLYPH};

use crate::agent::Agent;

/// What a picker row stands for, and what selecting it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PickerKind {
    /// An in-flight tool call: selecting it routes to [`Agent::cancel_tool`].
    Tool,
    /// A running background task: selecting it routes to
    /// [`Agent::kill_background_task`].
    Task,
}

/// One row of the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerRow {
    /// Tool call or task.
    pub kind: PickerKind,
    /// The call id (tool) or the task id (task) — what the action takes.
    pub id: String,
    /// The tool's name (tool) or a one-line command preview (task).
    pub label: String,
    /// `running` for both kinds.
    pub status: TaskStatus,
    /// How long it has been running.
    pub runtime: Duration,
    /// The task's log (tasks only).
    pub log_path: Option<PathBuf>,
    /// The task's terminal and its size, when it runs in one (tasks only): a host can
    /// attach to it ([`Agent::read_task_screen`], [`Agent::write_task_input`]).
    pub tty: Option<TtySize>,
}

impl PickerRow {
    /// The row's glyph: `zidane_wire`'s [`TASK_GLYPH`] or [`TOOL_GLYPH`].
    pub fn glyph(&self) -> &'static str {
        match self.kind {
            PickerKind::Task => TASK_GLYPH,
            PickerKind::Tool => TOOL_GLYPH,
        }
    }
}

impl Agent {
    /// The running background tasks of this agent's handle (tasks adopted from
    /// subagents included), oldest first. Empty without a handle or background support.
    pub async fn running_tasks(&self) -> Result<Vec<PickerRow>, ContextError> {
        let Some(handle) = self.current_handle() else {
            return Ok(Vec::new());
        };
        let entries = match self.context().list_background(handle).await {
            Ok(entries) => entries,
            Err(ContextError::Unsupported { .. }) => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        let now = Utc::now();
        let mut rows: Vec<_> = entries
            .into_iter()
            .filter(|entry| entry.status() == TaskStatus::Running)
            .map(|entry| {
                (
                    entry.started_at,
                    PickerRow {
                        kind: PickerKind::Task,
                        id: entry.task_id.to_string(),
                        label: zidane_wire::command_preview(&entry.command),
                        status: entry.status(),
                        runtime: entry.runtime(now),
                        log_path: Some(entry.output_path),
                        tty: entry.tty,
                    },
                )
            })
            .collect();
        rows.sort_by_key(|(started_at, _)| *started_at);
        Ok(rows.into_iter().map(|(_, row)| row).collect())
    }

    /// The tool calls in flight, oldest first.
    pub fn in_flight_tools(&self) -> Vec<PickerRow> {
        let now = Utc::now();
        self.run_state()
            .calls
            .iter()
            .map(|call| PickerRow {
                kind: PickerKind::Tool,
                id: call.call_id.clone(),
                label: call.name.clone(),
                status: TaskStatus::Running,
                runtime: (now - call.started_at).to_std().unwrap_or_default(),
                log_path: None,
                tty: None,
            })
            .collect()
    }

    /// The whole picker: in-flight tool calls, then running tasks.
    pub async fn picker_rows(&self) -> Result<Vec<PickerRow>, ContextError> {
        let mut rows = self.in_flight_tools();
        rows.extend(self.running_tasks().await?);
        Ok(rows)
    }
}
