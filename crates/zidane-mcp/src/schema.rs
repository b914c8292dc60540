//! Output schemas: what the structured content of each tool's result looks like. The
//! content itself is the tool's own `ToolOutput::data`, passed through untouched; these
//! schemas describe it for hosts that validate it.

use serde_json::{Value, json};
use zidane_tools::{READ_FILE, SHELL, SHELL_KILL, WAIT_TASK};

use crate::list_tasks::LIST_TASKS;

/// A task's exit, as `TaskExitInfo` serialises.
fn exit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "task_id": { "type": "string" },
            "status": { "type": "string", "enum": ["exited", "killed"] },
            "exit_code": { "type": "integer" },
            "signal": { "type": ["string", "null"] },
            "output_path": { "type": "string" },
            "duration_ms": { "type": "integer" },
            "command": { "type": "string" }
        },
        "required": ["task_id", "status", "exit_code", "output_path", "duration_ms", "command"]
    })
}

/// A task, running or ended, as `TaskEntry` serialises.
fn entry_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "task_id": { "type": "string" },
            "pid": { "type": "integer" },
            "command": { "type": "string" },
            "cwd": { "type": "string" },
            "output_path": { "type": "string" },
            "status": { "type": "string", "enum": ["running", "exited", "killed"] },
            "exit_code": { "type": ["integer", "null"] },
            "signal": { "type": ["string", "null"] },
            "started_at": { "type": "string" },
            "ended_at": { "type": ["string", "null"] },
            "bytes_written": { "type": "integer" }
        },
        "required": ["task_id", "pid", "command", "output_path", "status", "started_at"]
    })
}

/// The output schema of a tool, for the tools whose results have structure.
pub(crate) fn output_schema(tool: &str) -> Option<Value> {
    let schema = match tool {
        // Foreground: output and exit code. Background: the task's id, pid and log.
        SHELL => json!({
            "type": "object",
            "properties": {
                "output": { "type": "string" },
                "exit_code": { "type": "integer" },
                "task_id": { "type": "string" },
                "pid": { "type": "integer" },
                "output_path": { "type": "string" }
            }
        }),
        SHELL_KILL => json!({
            "type": "object",
            "properties": { "exit": exit_schema() },
            "required": ["exit"]
        }),
        // The exit, or a timed-out (or cancelled) wait on a task that still runs.
        WAIT_TASK => json!({
            "type": "object",
            "properties": {
                "exit": exit_schema(),
                "timed_out": { "type": "boolean" },
                "cancelled": { "type": "boolean" },
                "task_id": { "type": "string" },
                "output_path": { "type": "string" }
            }
        }),
        READ_FILE => json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "offset": { "type": "integer" },
                "lines": { "type": "integer" },
                "total_lines": { "type": "integer" },
                "remaining": { "type": "integer" }
            },
            "required": ["path", "offset", "lines", "total_lines", "remaining"]
        }),
        LIST_TASKS => json!({
            "type": "object",
            "properties": { "tasks": { "type": "array", "items": entry_schema() } },
            "required": ["tasks"]
        }),
        _ => return None,
    };
    Some(schema)
}
