//! The session content model: turns of content blocks, persisted as JSON.

use serde::{Deserialize, Serialize};

/// Who said a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user — and everything the framework says on the user's side: tool results,
    /// task notifications.
    User,
    /// The model.
    Assistant,
}

/// One turn of a session: a role and its content blocks.
///
/// Serialises as `{"role": "user", "content": [{"type": "text", "text": "hi"}]}`; this
/// is the persisted session format (see `docs/WIRE.md`).
///
/// ```
/// use zidane_wire::{ContentBlock, Role, Turn};
/// let turn = Turn::user_text("hi");
/// assert_eq!(turn.role, Role::User);
/// assert_eq!(turn.content, vec![ContentBlock::text("hi")]);
/// let json = serde_json::to_string(&turn)?;
/// assert_eq!(json, r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who said it.
    pub role: Role,
    /// What was said, in order.
    pub content: Vec<ContentBlock>,
}

impl Turn {
    /// A turn of `role` with these blocks.
    pub fn new(role: Role, content: Vec<ContentBlock>) -> Self {
        Self { role, content }
    }

    /// A user turn with these blocks.
    pub fn user(content: Vec<ContentBlock>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant turn with these blocks.
    pub fn assistant(content: Vec<ContentBlock>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A user turn of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(vec![ContentBlock::text(text)])
    }

    /// An assistant turn of one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::assistant(vec![ContentBlock::text(text)])
    }

    /// The turn's text blocks joined with line breaks (tool blocks left out).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One block of a turn's content.
///
/// Serialises with a `type` tag: `{"type": "text", "text": …}`,
/// `{"type": "tool_use", "id": …, "name": …, "input": {…}}`,
/// `{"type": "tool_result", "tool_use_id": …, "content": …, "is_error": false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text. In user turns this includes `<task-notification>` and `<task-stall>`
    /// blocks, each in its own text block.
    Text {
        /// The text.
        text: String,
    },
    /// The model calls a tool.
    ToolUse {
        /// The call's id, echoed by its result.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, as the model wrote them.
        input: serde_json::Value,
    },
    /// A tool's answer to a call.
    ToolResult {
        /// The id of the [`ToolUse`](ContentBlock::ToolUse) this answers.
        tool_use_id: String,
        /// The text the model reads.
        content: String,
        /// Whether the call failed. Absent in JSON means `false`.
        #[serde(default)]
        is_error: bool,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A tool call.
    pub fn tool_use(
        id: impl Into<String>,
        name: impl Into<String>,
        input: serde_json::Value,
    ) -> Self {
        Self::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    /// A tool result.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Self::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: content.into(),
            is_error,
        }
    }

    /// The text of a text block, `None` for tool blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::ToolUse { .. } | Self::ToolResult { .. } => None,
        }
    }
}
