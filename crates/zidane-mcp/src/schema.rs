//! Output schemas: what the structured content of each tool's result looks like. The
//! content is the tool's own `ToolOutput::data` with [`ResultText`]'s fields added;
//! these schemas describe it for hosts that validate it.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::clients::ResultShape;

/// What a result's structured content carries beside its tool's data: what the model
/// reads in the text content. Claude Code and Codex show the model the structured
/// content instead of the text when there is some; without these fields a model there
/// would never see a `<task-notification>`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ResultText {
    /// The `<task-event>`, `<task-notification>` and `<task-stall>` blocks of what
    /// happened to background tasks since the last result: the same blocks that open the
    /// text content.
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

/// The field of a tool's data left out of the structured content: what a command
/// printed, which the text carries already (and would otherwise count twice against the
/// host's budget).
pub(crate) const IN_TEXT_ONLY: &str = "output";

/// The output schema of a tool's structured content: the schema of its data (the
/// tool's own `ToolSpec::output_schema`), less what only the text carries, with
/// [`ResultText`]'s fields in the [`ResultShape::Full`] shape.
pub(crate) fn output_schema(mut schema: Value, shape: ResultShape) -> Value {
    if let Some(object) = schema.as_object_mut() {
        if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
            properties.remove(IN_TEXT_ONLY);
        }
        if let Some(required) = object.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|field| field != IN_TEXT_ONLY);
        }
    }
    if shape == ResultShape::Full {
        ResultText::add_schema_to(&mut schema);
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list_tasks::{LIST_TASKS, ListTasksTool};
    use zidane_tools::{
        READ_FILE, SHELL, SHELL_INPUT, SHELL_KILL, SHELL_NOTIFY, SHELL_SCREEN, Tool, WAIT_TASK,
    };

    /// The structured content's schema of the tool named `tool`, among the builtin tools
    /// and `list_tasks`, as a `tools/list` shows it.
    fn output_schema_of(tool: &str) -> Option<Value> {
        zidane_tools::default_tools()
            .into_iter()
            .chain([std::sync::Arc::new(ListTasksTool) as std::sync::Arc<dyn Tool>])
            .map(|each| each.spec(&zidane_tools::SpecView::default()))
            .find(|spec| spec.name == tool)
            .and_then(|spec| spec.output_schema)
            .map(|schema| output_schema(schema, ResultShape::Full))
    }

    /// What a hand-written schema had left out: a lost task, the kill's reason.
    #[test]
    fn the_exit_schema_is_the_type_s_whole_serialised_form() {
        let kill = output_schema_of(SHELL_KILL).unwrap_or_default();
        let exit = &kill["properties"]["exit"];
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
        assert!(kill.get("$defs").is_none(), "inline: {kill}");
        let list = output_schema_of(LIST_TASKS).unwrap_or_default();
        let entry = &list["properties"]["tasks"]["items"];
        assert!(entry["properties"].get("started_at").is_some(), "{entry}");
    }

    /// A wait's readiness answer, which a hand-written schema had left out.
    #[test]
    fn the_wait_schema_has_every_readiness_field() {
        let wait = output_schema_of(WAIT_TASK).unwrap_or_default();
        for field in [
            "exit",
            "ready",
            "timed_out",
            "cancelled",
            "running_ms",
            "last_lines",
            "last_line",
            "last_error",
            "line",
            "line_number",
            "groups",
            "port",
            "url",
            "status",
            "after_ms",
            "text",
        ] {
            assert!(wait["properties"].get(field).is_some(), "{field}: {wait}");
        }
    }

    /// Hosts take an object schema only; what only the text carries is not in it.
    #[test]
    fn every_schema_is_an_object_without_the_text_only_field() {
        for tool in [
            SHELL,
            SHELL_KILL,
            WAIT_TASK,
            READ_FILE,
            SHELL_INPUT,
            SHELL_SCREEN,
            SHELL_NOTIFY,
            LIST_TASKS,
        ] {
            let schema = output_schema_of(tool).unwrap_or_default();
            assert_eq!(schema["type"], "object", "{tool}: {schema}");
            assert!(
                schema["properties"].get(IN_TEXT_ONLY).is_none(),
                "{tool}: {schema}"
            );
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            assert!(
                required.iter().any(|field| field == "text"),
                "{tool}: {schema}"
            );
            assert!(
                !required.iter().any(|field| field == IN_TEXT_ONLY),
                "{tool}: {schema}"
            );
            assert!(schema.get("$defs").is_none(), "{tool}: {schema}");
        }
    }
}
