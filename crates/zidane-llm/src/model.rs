//! The `Model` trait and what crosses it: `ModelRequest` in, `ModelResponse` out, and
//! `ModelDelta`s through a `DeltaSink` while the response is generated.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use zidane_wire::{
    ContentBlock, Role, TaskEventBlock, TaskNotification, TaskStall, ToolSpec, Turn, WireBlock,
    is_wire_block,
};

/// The language model an agent (zidane-agent's `Agent`) talks to.
///
/// Used as `Arc<dyn Model>`. An implementation turns a request (system prompt, the
/// session's turns, the tools the model may call) into one assistant response. A
/// response without tool uses ends the run.
///
/// The agent calls [`stream`](Self::stream), so a host can show the response while it
/// is generated. An implementation that only has whole responses implements
/// [`complete`](Self::complete) and keeps the default `stream`, which hands the finished
/// response to the sink as deltas. A streaming provider implements `stream` and has
/// `complete` call it with [`DeltaSink::none`].
///
/// Dropping the returned future must stop the work (a cancelled run drops it): an HTTP
/// provider's request is aborted with it.
///
/// The trait is object safe through [`macro@async_trait`], re-exported here (and by
/// `zidane-agent` and the `zidane` prelude): put `#[async_trait]` on your `impl` too —
/// a plain `async fn` without it does not match the trait's signature (E0195). No
/// dependency on the `async-trait` crate is needed.
///
/// ```
/// use zidane_llm::{async_trait, Model, ModelError, ModelRequest, ModelResponse};
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

    /// Completes one step, handing `sink` each piece of the response as it arrives.
    /// What is returned is the whole response, the same blocks the deltas described.
    async fn stream(
        &self,
        request: ModelRequest,
        sink: &DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        let response = self.complete(request).await?;
        sink.emit_response(&response);
        Ok(response)
    }
}

/// A piece of a response, handed to a [`DeltaSink`] as soon as the model produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelDelta {
    /// More text of the response.
    Text(String),
    /// The model began a tool call (its input follows; the call runs once the response
    /// is complete).
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
    },
    /// Tokens the response cost, once the provider reports them (at the end).
    Usage(Usage),
}

type DeltaFn = Arc<dyn Fn(&ModelDelta) + Send + Sync>;

/// Where a [`Model`] puts [`ModelDelta`]s. Cheap to clone.
///
/// The agent passes one that delivers to its hook bus's `subscribe_deltas` subscribers.
#[derive(Clone, Default)]
pub struct DeltaSink {
    callback: Option<DeltaFn>,
}

impl DeltaSink {
    /// A sink that calls `callback` with every delta.
    pub fn new(callback: impl Fn(&ModelDelta) + Send + Sync + 'static) -> Self {
        Self {
            callback: Some(Arc::new(callback)),
        }
    }

    /// A sink that drops every delta.
    pub fn none() -> Self {
        Self::default()
    }

    /// Hands one delta on.
    pub fn emit(&self, delta: ModelDelta) {
        if let Some(callback) = &self.callback {
            callback(&delta);
        }
    }

    /// Hands on a whole response as deltas: each text block, each tool call's start,
    /// then its usage if it has one.
    pub fn emit_response(&self, response: &ModelResponse) {
        if self.callback.is_none() {
            return;
        }
        for block in &response.content {
            match block {
                ContentBlock::Text { text } => self.emit(ModelDelta::Text(text.clone())),
                ContentBlock::ToolUse { id, name, .. } => self.emit(ModelDelta::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                }),
                ContentBlock::ToolResult { .. } => {}
            }
        }
        if let Some(usage) = response.usage {
            self.emit(ModelDelta::Usage(usage));
        }
    }
}

impl fmt::Debug for DeltaSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaSink")
            .field("connected", &self.callback.is_some())
            .finish()
    }
}

/// Tokens one model call cost, as its provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token, cached or not.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache (a part of `input_tokens`).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Input tokens written to the provider's prompt cache (a part of `input_tokens`;
    /// providers that cache implicitly report none).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// The model finished its answer.
    EndTurn,
    /// The model stopped to call tools.
    ToolUse,
    /// The output token limit cut the answer short.
    MaxTokens,
    /// A stop sequence ended the answer.
    StopSequence,
    /// The provider's content filter ended the answer.
    ContentFilter,
    /// Another reason, as the provider named it.
    Other(String),
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
                WireBlock::Stall(_) | WireBlock::Event(_) => None,
            })
            .collect()
    }

    /// The `<task-stall>` blocks of the last user turn, parsed.
    pub fn stalls(&self) -> Vec<TaskStall> {
        self.wire_blocks()
            .into_iter()
            .filter_map(|block| match block {
                WireBlock::Stall(stall) => Some(stall),
                WireBlock::Notification(_) | WireBlock::Event(_) => None,
            })
            .collect()
    }

    /// The `<task-event>` blocks of the last user turn, parsed.
    pub fn task_events(&self) -> Vec<TaskEventBlock> {
        self.wire_blocks()
            .into_iter()
            .filter_map(|block| match block {
                WireBlock::Event(event) => Some(event),
                WireBlock::Notification(_) | WireBlock::Stall(_) => None,
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

/// One assistant response: text and tool uses. No tool uses means the model is done.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The response's blocks, in order (`Text` and `ToolUse`).
    pub content: Vec<ContentBlock>,
    /// Tokens the call cost, when the model reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the model stopped, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
}

impl ModelResponse {
    /// A response of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().with_text(text)
    }

    /// A response of one tool use. An empty `id` is filled in by zidane-agent's
    /// `ScriptedModel` (`call_<n>`); other models should always give one.
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
    /// A scripted model (zidane-agent's `ScriptedModel`) was asked for more responses
    /// than its script holds.
    #[error("the scripted model's script is exhausted after {calls} responses")]
    ScriptExhausted {
        /// How many responses the script gave before it ran out.
        calls: usize,
    },
    /// The model or its provider failed (network, rate limit, refusal…): the error
    /// itself, its message and its chain. `"overloaded".into()` makes one from a message.
    #[error(transparent)]
    Provider(ErrorSource),
    /// A request to a model provider failed; `kind` says how, for a host that retries,
    /// compacts or asks for a new key.
    #[error(
        "{kind}{}: {detail}{}",
        status.map(|status| format!(" (HTTP {status})")).unwrap_or_default(),
        cause.as_ref().map(|cause| format!(": {cause}")).unwrap_or_default()
    )]
    Request {
        /// What kind of failure.
        kind: ModelErrorKind,
        /// The HTTP status, when the provider answered with one.
        status: Option<u16>,
        /// What happened, with a short excerpt of the provider's answer when it sent
        /// one. Never holds the API key.
        detail: String,
        /// The underlying error (the HTTP client's, a JSON parser's), if any. Printed
        /// after `detail` in the message, so not also a `source()`.
        cause: Option<ErrorSource>,
    },
}

impl ModelError {
    /// The kind of a [`Request`](Self::Request) failure; `None` for other variants.
    pub fn kind(&self) -> Option<ModelErrorKind> {
        match self {
            Self::Request { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

/// How a request to a model provider failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The API key is missing, wrong or lacks permission (401, 403).
    Auth,
    /// Too many requests (429), still so after the retries.
    RateLimit,
    /// The conversation does not fit the model's context window.
    ContextTooLong,
    /// The provider refused the request as malformed (other 4xx).
    BadRequest,
    /// The provider failed or is overloaded (5xx), still so after the retries.
    Server,
    /// The connection failed, was reset, or timed out.
    Transport,
    /// The response stream broke the provider's format or a size limit.
    MalformedStream,
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auth => "authentication refused",
            Self::RateLimit => "rate limited",
            Self::ContextTooLong => "context too long",
            Self::BadRequest => "bad request",
            Self::Server => "provider server error",
            Self::Transport => "transport error",
            Self::MalformedStream => "malformed stream",
        })
    }
}

/// The error behind a [`ModelError::Provider`] or [`ModelError::Request`]: any error, shared so that a `ModelError`
/// stays `Clone`. Two are equal when they are the same error. Its message is the
/// wrapped error's whole [`error_chain`](crate::error_chain), so it has no `source()`.
#[derive(Clone)]
pub struct ErrorSource(Arc<dyn std::error::Error + Send + Sync>);

impl ErrorSource {
    /// Wraps an error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Arc::new(error))
    }
}

impl fmt::Debug for ErrorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for ErrorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::error_chain(&*self.0))
    }
}

// The whole chain is in the message (a wrapper that prints this one's message would
// otherwise cut a foreign error's chain off).
impl std::error::Error for ErrorSource {}

impl From<String> for ErrorSource {
    /// An error that is only a message.
    fn from(message: String) -> Self {
        Self::new(Message(message))
    }
}

impl From<&str> for ErrorSource {
    /// An error that is only a message.
    fn from(message: &str) -> Self {
        Self::from(message.to_owned())
    }
}

/// An error that is only a message, for [`ErrorSource`]'s `From<String>`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Message(String);

impl PartialEq for ErrorSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ErrorSource {}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
