//! `ToolChoice`: whether and which tool the model must call.

/// Whether the model must call a tool. Sent only when the request has tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must not call a tool.
    None,
    /// The model must call this tool.
    Tool(String),
}
