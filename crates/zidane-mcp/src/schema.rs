//! Output schemas: what the structured content of each tool's result looks like. The
//! content is the tool's own `ToolOutput::data` with [`ResultText`]'s fields added;
//! these schemas describe it for hosts that validate it.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};
use zidane_context::{Screen, TaskEntry, TaskExitInfo};
use zidane_tools::{READ_FILE, SHELL, SHELL_INPUT, SHELL_KILL, SHELL_SCREEN, WAIT_TASK};

use crate::list_tasks::LIST_TASKS;

/// What a result's structured content carries beside its tool's data: what the model
/// reads in the text content. Claude Code and Codex show the model the structured
/// content instead of the text when there is some; without these fields a model there
/// would never see a `<task-notification>`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ResultText {
    /// The `<task-notification>` and `<task-stall>` blocks of what happened to background
    /// tasks since the last result: the same blocks that open the text content.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) notifications: Vec<String>,
    /// The tool's answer as the text content gives it, guidance included.
    pub(crate) text: String,
}

impl ResultText {
    /// Adds these fields to a tool's structured data.
    pub(crate) fn add_to(self, data: &mut Map<String, Value>) {
        if let Ok(Value::Object(fields)) = serde_json::to_value(self) {
            data.extend(fields);
        }
    }

    /// Adds these fields' schemas to a tool's output schema.
    fn add_schema_to(schema: &mut Value) {
        // The tools' own schema maker: a plain object, doc comments as sentences.
        let own = zidane_tools::input_schema::<ResultText>();
        let (Some(properties), Some(into)) = (
            own.get("properties").and_then(Value::as_object),
            schema.as_object_mut(),
        ) else {
            return;
        };
        let into_properties = into.entry("properties").or_insert_with(|| json!({}));
        if let Some(into_properties) = into_properties.as_object_mut() {
            into_properties.extend(properties.clone());
        }
        let required = own.get("required").cloned().unwrap_or_else(|| json!([]));
        let into_required = into.entry("required").or_insert_with(|| json!([]));
        if let (Some(into_required), Some(required)) =
            (into_required.as_array_mut(), required.as_array())
        {
            into_required.extend(required.iter().cloned());
        }
    }
}

/// A task's exit, derived from `TaskExitInfo`.
fn exit_schema() -> Value {
    derived::<TaskExitInfo>()
}

/// A task, running or ended, derived from `TaskEntry`.
fn entry_schema() -> Value {
    derived::<TaskEntry>()
}

/// The schema of `T` as it serialises, every part inline (no `$defs` for a host to
/// resolve), without `$schema` or title.
fn derived<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    unwrap_descriptions(&mut schema);
    schema
}

/// Doc comments as sentences: their line breaks become spaces, paragraphs stay apart.
fn unwrap_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        *text = text
                            .split("\n\n")
                            .map(|paragraph| {
                                paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
                            })
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    _ => unwrap_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

/// The output schema of a tool, for the tools whose results have structure.
pub(crate) fn output_schema(tool: &str) -> Option<Value> {
    let schema = match tool {
        // Foreground: the exit code (the output is in `text`). Background: the task's
        // id, pid and log; answered as an MCP task, the task's exit.
        SHELL => json!({
            "type": "object",
            "properties": {
                "exit_code": { "type": "integer" },
                "exit": exit_schema(),
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
        // What was written (the task's answer is in `text`).
        SHELL_INPUT => json!({
            "type": "object",
            "properties": {
                "task_id": { "type": "string" },
                "bytes_written": { "type": "integer" },
                "eof": { "type": "boolean" },
                "ended": { "type": "boolean" }
            }
        }),
        SHELL_SCREEN => derived::<Screen>(),
        LIST_TASKS => json!({
            "type": "object",
            "properties": { "tasks": { "type": "array", "items": entry_schema() } },
            "required": ["tasks"]
        }),
        _ => return None,
    };
    let mut schema = schema;
    ResultText::add_schema_to(&mut schema);
    Some(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a hand-written schema had left out: a lost task, the kill's reason.
    #[test]
    fn the_exit_schema_is_the_type_s_whole_serialised_form() {
        let exit = exit_schema();
        let status = &exit["properties"]["status"];
        let statuses = status["enum"]
            .as_array()
            .or_else(|| status["oneOf"].as_array())
            .map(|all| {
                all.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        assert!(statuses.contains("lost"), "{status}");
        for field in [
            "kill_reason",
            "leader_exit_code",
            "log_write_failure",
            "duration_ms",
        ] {
            assert!(exit["properties"].get(field).is_some(), "{field}: {exit}");
        }
        assert!(exit.get("$defs").is_none(), "inline: {exit}");
        let entry = entry_schema();
        assert!(entry["properties"].get("started_at").is_some(), "{entry}");
    }
}
