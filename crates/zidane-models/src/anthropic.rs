//! The Anthropic Messages provider (`POST {base}/v1/messages`).

use async_trait::async_trait;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use zidane_llm::{
    DeltaSink, FinishReason, Model, ModelDelta, ModelError, ModelErrorKind, ModelRequest,
    ModelResponse, Usage,
};
use zidane_wire::{ContentBlock, Role};

use crate::assemble::{
    Assemble, Flow, ended_early, malformed, malformed_json, reported_mid_stream, respond,
    tool_input,
};
use crate::choice::ToolChoice;
use crate::error::BuildError;
use crate::http::base_url;
use crate::http::{Endpoint, secret_header};
use crate::key::ApiKey;
use crate::options::HttpOptions;

/// Anthropic's base URL.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent with every request.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The `max_tokens` sent when none is set (the Messages API requires one).
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 8192;

/// A Claude model behind the Anthropic Messages API.
///
/// Streams (`content_block_start` / `_delta` / `_stop`, `input_json_delta` assembled
/// into tool inputs), maps tool results with `is_error`, reports usage with cache reads
/// and writes, and marks the stable prefix — the tool definitions and the system prompt
/// — with `cache_control`, so a long session does not pay for it on every call.
///
/// ```
/// use zidane_models::Anthropic;
///
/// let model = Anthropic::builder("claude-sonnet-4-5").api_key("sk-ant-…").build()?;
/// assert_eq!(model.endpoint(), "https://api.anthropic.com/v1/messages");
/// assert_eq!(format!("{model:?}").contains("sk-ant"), false);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Anthropic {
    endpoint: Endpoint,
    model: String,
    tool_choice: ToolChoice,
    max_tokens: u32,
}

/// Builds an [`Anthropic`] provider.
#[derive(Debug, Clone)]
pub struct AnthropicBuilder {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
    tool_choice: ToolChoice,
    max_tokens: u32,
    http: HttpOptions,
}

impl Anthropic {
    /// A builder for this model name, at Anthropic's URL, without a key.
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            model: model.into(),
            base_url: ANTHROPIC_DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            tool_choice: ToolChoice::Auto,
            max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
            http: HttpOptions::default(),
        }
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.url()
    }

    /// The JSON body sent for `request` (what the provider sees, for tests and logs).
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("max_tokens".into(), json!(self.max_tokens));
        if let Some(system) = &request.system {
            // The cache prefix runs tools, then system: a breakpoint here caches both.
            body.insert(
                "system".into(),
                json!([{ "type": "text", "text": system, "cache_control": { "type": "ephemeral" } }]),
            );
        }
        if !request.tools.is_empty() {
            let count = request.tools.len();
            let tools = request
                .tools
                .iter()
                .enumerate()
                .map(|(i, tool)| {
                    let mut tool = json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                    });
                    // The tools alone are a prefix too (a host may vary the prompt).
                    if i + 1 == count {
                        tool["cache_control"] = json!({ "type": "ephemeral" });
                    }
                    tool
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            body.insert("tool_choice".into(), tool_choice(&self.tool_choice));
        }
        body.insert("messages".into(), Value::Array(messages(request)));
        body.insert("stream".into(), json!(true));
        Value::Object(body)
    }
}

impl AnthropicBuilder {
    /// The base URL, without `/v1` (`/v1/messages` is appended).
    #[must_use]
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The API key, sent as `x-api-key`.
    #[must_use]
    pub fn api_key(mut self, api_key: impl Into<ApiKey>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Whether the model must call a tool.
    #[must_use]
    pub fn tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// The cap on the response's tokens; [`ANTHROPIC_DEFAULT_MAX_TOKENS`] by default.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Timeouts, retries and size limits.
    #[must_use]
    pub fn http_options(mut self, http: HttpOptions) -> Self {
        self.http = http;
        self
    }

    /// The provider. Fails on a base URL that is not http(s), or a key that cannot be a
    /// header.
    pub fn build(self) -> Result<Anthropic, BuildError> {
        let url = format!("{}/v1/messages", base_url(&self.base_url)?);
        let mut headers = vec![(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        )];
        if let Some(key) = &self.api_key {
            headers.push((
                HeaderName::from_static("x-api-key"),
                secret_header(key.expose())?,
            ));
        }
        Ok(Anthropic {
            endpoint: Endpoint::new(self.http, self.api_key, url, headers)?,
            model: self.model,
            tool_choice: self.tool_choice,
            max_tokens: self.max_tokens,
        })
    }
}

#[async_trait]
impl Model for Anthropic {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.stream(request, &DeltaSink::none()).await
    }

    async fn stream(
        &self,
        request: ModelRequest,
        sink: &DeltaSink,
    ) -> Result<ModelResponse, ModelError> {
        self.endpoint
            .stream(&self.request_body(&request), Assembler::default(), sink)
            .await
    }
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({ "type": "auto" }),
        ToolChoice::Required => json!({ "type": "any" }),
        ToolChoice::None => json!({ "type": "none" }),
        ToolChoice::Tool(name) => json!({ "type": "tool", "name": name }),
    }
}

/// Each turn as a message of content blocks. Empty text blocks are left out (the API
/// refuses them), and consecutive turns of one role are merged — a cancelled run leaves
/// a user turn without its answer, and the API wants roles to alternate.
pub(crate) fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut messages: Vec<(Role, Vec<Value>)> = Vec::new();
    for turn in &request.turns {
        let blocks: Vec<Value> = turn
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } if text.is_empty() => None,
                ContentBlock::Text { text } => Some(json!({ "type": "text", "text": text })),
                ContentBlock::ToolUse { id, name, input } => Some(json!({
                    "type": "tool_use", "id": id, "name": name, "input": input,
                })),
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let mut block = json!({
                        "type": "tool_result", "tool_use_id": tool_use_id, "content": content,
                    });
                    if *is_error {
                        block["is_error"] = json!(true);
                    }
                    Some(block)
                }
            })
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((role, content)) if *role == turn.role => content.extend(blocks),
            _ => messages.push((turn.role, blocks)),
        }
    }
    messages
        .into_iter()
        .map(|(role, content)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({ "role": role, "content": content })
        })
        .collect()
}

/// One streaming event, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ApiError,
    },
    /// Event types added to the API later are skipped, as the API's versioning asks.
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageStart {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking and other blocks: not part of our turns.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ApiError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        start_input: Value,
        json: String,
    },
    Skipped,
}

/// Assembles events into a response.
#[derive(Default)]
pub(crate) struct Assembler {
    blocks: Vec<Option<Block>>,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    reported_usage: bool,
    finish: Option<FinishReason>,
}

impl Assemble for Assembler {
    fn event(&mut self, _name: &str, data: &str, sink: &DeltaSink) -> Result<Flow, ModelError> {
        let event: Event =
            serde_json::from_str(data).map_err(|error| malformed_json(data, error))?;
        match event {
            Event::MessageStart { message } => self.usage(message.usage),
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    StartBlock::Text { text } => {
                        if !text.is_empty() {
                            sink.emit(ModelDelta::Text(text.clone()));
                        }
                        Block::Text(text)
                    }
                    StartBlock::ToolUse { id, name, input } => {
                        sink.emit(ModelDelta::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Block::ToolUse {
                            id,
                            name,
                            start_input: input,
                            json: String::new(),
                        }
                    }
                    StartBlock::Other => Block::Skipped,
                };
                if self.blocks.len() <= index {
                    self.blocks.resize_with(index + 1, || None);
                }
                if self.blocks[index].is_some() {
                    return Err(malformed(format!("content block {index} started twice")));
                }
                self.blocks[index] = Some(block);
            }
            Event::ContentBlockDelta { index, delta } => {
                let Some(Some(block)) = self.blocks.get_mut(index) else {
                    return Err(malformed(format!(
                        "a delta for content block {index}, which was not started"
                    )));
                };
                match (block, delta) {
                    (Block::Text(text), BlockDelta::TextDelta { text: more }) => {
                        text.push_str(&more);
                        sink.emit(ModelDelta::Text(more));
                    }
                    (Block::ToolUse { json, .. }, BlockDelta::InputJsonDelta { partial_json }) => {
                        json.push_str(&partial_json);
                    }
                    (Block::Skipped, _) | (_, BlockDelta::Other) => {}
                    _ => {
                        return Err(malformed(format!(
                            "a delta that does not fit content block {index}"
                        )));
                    }
                }
            }
            Event::ContentBlockStop { index } => {
                if !matches!(self.blocks.get(index), Some(Some(_))) {
                    return Err(malformed(format!(
                        "content block {index} stopped but was not started"
                    )));
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.finish = Some(stop_reason(&reason));
                }
                self.usage(usage);
            }
            Event::MessageStop => return Ok(Flow::Done),
            Event::Ping | Event::Unknown => {}
            Event::Error { error } => {
                let kind = match error.kind.as_str() {
                    "authentication_error" | "permission_error" => ModelErrorKind::Auth,
                    "rate_limit_error" => ModelErrorKind::RateLimit,
                    "invalid_request_error" | "not_found_error" => ModelErrorKind::BadRequest,
                    "request_too_large" => ModelErrorKind::ContextTooLong,
                    _ => ModelErrorKind::Server,
                };
                return Err(reported_mid_stream(kind, &error.kind, &error.message));
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(self, done: bool, sink: &DeltaSink) -> Result<ModelResponse, ModelError> {
        if !done {
            return Err(ended_early("message_stop"));
        }
        let mut content = Vec::new();
        for (index, block) in self.blocks.into_iter().enumerate() {
            match block {
                Some(Block::Text(text)) if !text.is_empty() => {
                    content.push(ContentBlock::Text { text });
                }
                Some(Block::ToolUse {
                    id,
                    name,
                    start_input,
                    json,
                }) => {
                    // No deltas: the input came whole with the block's start.
                    let input = if json.trim().is_empty() && !start_input.is_null() {
                        start_input
                    } else {
                        tool_input(&json, |json| {
                            format!("the input of tool use {index} ({name}) is not JSON: {json}")
                        })?
                    };
                    content.push(ContentBlock::ToolUse { id, name, input });
                }
                Some(Block::Text(_) | Block::Skipped) | None => {}
            }
        }
        let usage = self.reported_usage.then_some(Usage {
            input_tokens: self.input + self.cache_read + self.cache_write,
            output_tokens: self.output,
            cached_input_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
        });
        Ok(respond(content, usage, self.finish, sink))
    }
}

impl Assembler {
    /// Takes the counts an event reports; `message_delta`'s are cumulative.
    fn usage(&mut self, usage: Option<WireUsage>) {
        let Some(usage) = usage else { return };
        self.reported_usage = true;
        if let Some(input) = usage.input_tokens {
            self.input = input;
        }
        if let Some(output) = usage.output_tokens {
            self.output = output;
        }
        if let Some(read) = usage.cache_read_input_tokens {
            self.cache_read = read;
        }
        if let Some(write) = usage.cache_creation_input_tokens {
            self.cache_write = write;
        }
    }
}

fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" => FinishReason::EndTurn,
        "tool_use" => FinishReason::ToolUse,
        "max_tokens" => FinishReason::MaxTokens,
        "stop_sequence" => FinishReason::StopSequence,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
