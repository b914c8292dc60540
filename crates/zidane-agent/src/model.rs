//! The `Model` trait and what crosses it: `ModelRequest` in, `ModelResponse` out.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use zidane_tools::ToolSpec;
use zidane_wire::{ContentBlock, Role, TaskNotification, TaskStall, Turn, WireBlock};

/// The language model an [`Agent`](crate::Agent) talks to.
///
/// Used as `Arc<dyn Model>`. An implementation turns a request (system prompt, the
/// session's turns, the tools the model may call) into one assistant response. A
/// response without tool uses ends the run.
///
/// The trait is object safe through [`macro@async_trait`], re-exported here (and in the
/// `zidane` prelude): put `#[async_trait]` on your `impl` too — a plain `async fn`
/// without it does not match the trait's signature (E0195). No dependency on the
/// `async-trait` crate is needed.
///
/// ```
/// use zidane_agent::{async_trait, Model, ModelError, ModelRequest, ModelResponse};
///
/// /// Answers every request by repeating the prompt (your LLM client goes here).
/// struct Echo;
///
/// #[async_trait]
/// impl Model for Echo {
///     async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
///         Ok(ModelResponse::text(format!("you said: {}", request.prompt())))
///     }
/// }
///
/// let model: std::sync::Arc<dyn Model> = std::sync::Arc::new(Echo);
/// # let _ = model;
/// ```
#[async_trait]
pub trait Model: Send + Sync {
    /// Completes one step of the conversation.
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError>;
}

/// What the model is asked: the system prompt, the whole conversation so far, and the
/// tools it may call (their specs under the agent's background gate — without
/// `run_in_background` when background mode cannot work).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt, if the agent has one.
    pub system: Option<String>,
    /// The session's turns; the last one is a user turn.
    pub turns: Vec<Turn>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
}

impl ModelRequest {
    /// The last turn, if it is a user turn.
    pub fn last_user_turn(&self) -> Option<&Turn> {
        self.turns.last().filter(|turn| turn.role == Role::User)
    }

    /// The text of the last user turn's text blocks that are not notification or stall
    /// blocks (the prompt), joined by newlines.
    pub fn prompt(&self) -> String {
        let Some(turn) = self.last_user_turn() else {
            return String::new();
        };
        turn.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } if !is_wire_block(text) => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The `<task-notification>` blocks at the head of the last user turn, parsed.
    pub fn notifications(&self) -> Vec<TaskNotification> {
        self.wire_blocks()
            .into_iter()
            .filter_map(|block| match block {
                WireBlock::Notification(notification) => Some(notification),
                WireBlock::Stall(_) => None,
            })
            .collect()
    }

    /// The `<task-stall>` blocks of the last user turn, parsed.
    pub fn stalls(&self) -> Vec<TaskStall> {
        self.wire_blocks()
            .into_iter()
            .filter_map(|block| match block {
                WireBlock::Stall(stall) => Some(stall),
                WireBlock::Notification(_) => None,
            })
            .collect()
    }

    /// The tool results of the last user turn: `(tool_use_id, content, is_error)`.
    pub fn tool_results(&self) -> Vec<(&str, &str, bool)> {
        let Some(turn) = self.last_user_turn() else {
            return Vec::new();
        };
        turn.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => Some((tool_use_id.as_str(), content.as_str(), *is_error)),
                _ => None,
            })
            .collect()
    }

    fn wire_blocks(&self) -> Vec<WireBlock> {
        let Some(turn) = self.last_user_turn() else {
            return Vec::new();
        };
        turn.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => zidane_wire::parse(text).ok(),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

/// Whether a text block is a `<task-notification>` or `<task-stall>` block.
pub(crate) fn is_wire_block(text: &str) -> bool {
    zidane_wire::parse(text).is_ok_and(|blocks| !blocks.is_empty())
}

/// One assistant response: text and tool uses. No tool uses means the model is done.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The response's blocks, in order (`Text` and `ToolUse`).
    pub content: Vec<ContentBlock>,
}

impl ModelResponse {
    /// A response of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// A response of one tool use. An empty `id` is filled in by [`ScriptedModel`]
    /// (`call_<n>`); other models should always give one.
    ///
    /// [`ScriptedModel`]: crate::ScriptedModel
    pub fn tool_use(
        id: impl Into<String>,
        name: impl Into<String>,
        input: serde_json::Value,
    ) -> Self {
        Self::default().with_tool_use(id, name, input)
    }

    /// Adds a text block.
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(ContentBlock::Text { text: text.into() });
        self
    }

    /// Adds a tool use.
    #[must_use]
    pub fn with_tool_use(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        input: serde_json::Value,
    ) -> Self {
        self.content.push(ContentBlock::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        });
        self
    }

    /// Whether the response calls at least one tool.
    pub fn has_tool_uses(&self) -> bool {
        self.content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolUse { .. }))
    }

    /// The text blocks, joined by newlines.
    pub fn joined_text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why a model could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A [`ScriptedModel`](crate::ScriptedModel) was asked for more responses than its
    /// script holds.
    #[error("the scripted model's script is exhausted after {calls} responses")]
    ScriptExhausted {
        /// How many responses the script gave before it ran out.
        calls: usize,
    },
    /// The model or its provider failed (network, rate limit, refusal…).
    #[error("{0}")]
    Provider(String),
}
