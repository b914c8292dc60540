//! `ToolSpec`: what a model is told of a tool — its name, what it does, its input schema.

use serde::{Deserialize, Serialize};

/// How a tool presents itself to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does and when to use it — a prompt, written for the model.
    pub description: String,
    /// The JSON Schema of the tool's input (an object schema).
    pub input_schema: serde_json::Value,
    /// Older names that still dispatch to this tool, so a renamed tool keeps resumed
    /// sessions working. Not shown to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}
