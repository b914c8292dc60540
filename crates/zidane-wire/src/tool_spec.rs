//! `ToolSpec`: what a model is told of a tool — its name, what it does, its input schema —
//! and what a host is told beside it: a title, hints of its effects, the shape of its
//! structured result.

use serde::{Deserialize, Serialize};

/// How a tool presents itself to the model, and to a host that lists it.
///
/// The model sees the name, description and input schema; the serialised form carries
/// those (and the aliases) only. [`title`](Self::title), [`annotations`](Self::annotations)
/// and [`output_schema`](Self::output_schema) are for hosts (an MCP `tools/list`), so a
/// model request stays what it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// A short human-readable title for a host's tool list. Not shown to the model.
    #[serde(skip)]
    pub title: Option<String>,
    /// What calling the tool may do to the world. Not shown to the model.
    #[serde(skip)]
    pub annotations: ToolAnnotations,
    /// The JSON Schema of the tool's structured data (`ToolOutput::data`), for the tools
    /// whose results have structure. Not shown to the model.
    #[serde(skip)]
    pub output_schema: Option<serde_json::Value>,
}

/// Hints of what calling a tool does, in MCP's terms. `None` leaves a hint unsaid, so a
/// host applies its own default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ToolAnnotations {
    /// The tool changes nothing.
    pub read_only: Option<bool>,
    /// A change it makes may destroy something (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling it again with the same input changes nothing more.
    pub idempotent: Option<bool>,
    /// It reaches beyond the session's own tasks and files (other programs, the network).
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// A tool that changes nothing.
    pub const READ_ONLY: Self = Self {
        read_only: Some(true),
        destructive: None,
        idempotent: None,
        open_world: None,
    };
}
