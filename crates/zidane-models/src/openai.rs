//! The OpenAI-compatible chat completions provider (`POST {base}/chat/completions`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::header::AUTHORIZATION;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use zidane_llm::{
    DeltaSink, FinishReason, Model, ModelDelta, ModelError, ModelErrorKind, ModelRequest,
    ModelResponse, Usage,
};
use zidane_wire::{ContentBlock, Role, Turn};

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

/// OpenAI's own base URL.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// What a tool result that is an error starts with: chat completions have no error flag
/// on a tool message, so the model is told in words.
pub(crate) const TOOL_ERROR_PREFIX: &str = "Error: ";

/// A model behind an OpenAI-compatible chat completions endpoint: OpenAI, OpenRouter,
/// vLLM, llama.cpp's `llama-server`, Ollama.
///
/// Streams (`stream: true` with `stream_options.include_usage`), assembles tool-call
/// deltas by index into whole calls, and reports usage (with cached prompt tokens) and
/// the finish reason.
///
/// ```
/// use zidane_models::OpenAi;
///
/// let model = OpenAi::builder("gpt-4.1-mini")
///     .base_url("http://127.0.0.1:8080/v1") // llama-server; OpenAI's is the default
///     .build()?;
/// assert_eq!(model.endpoint(), "http://127.0.0.1:8080/v1/chat/completions");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAi {
    endpoint: Endpoint,
    model: String,
    tool_choice: ToolChoice,
    max_tokens: Option<u32>,
}

/// Builds an [`OpenAi`] provider.
#[derive(Debug, Clone)]
pub struct OpenAiBuilder {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
    tool_choice: ToolChoice,
    max_tokens: Option<u32>,
    http: HttpOptions,
}

impl OpenAi {
    /// A builder for this model name, at OpenAI's URL, without a key.
    pub fn builder(model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder {
            model: model.into(),
            base_url: OPENAI_DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            tool_choice: ToolChoice::Auto,
            max_tokens: None,
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
        body.insert("messages".into(), Value::Array(messages(request)));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        }
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            body.insert("tool_choice".into(), tool_choice(&self.tool_choice));
        }
        if let Some(max_tokens) = self.max_tokens {
            body.insert("max_tokens".into(), json!(max_tokens));
        }
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({ "include_usage": true }));
        Value::Object(body)
    }
}

impl OpenAiBuilder {
    /// The base URL, up to and including `/v1` (`…/chat/completions` is appended).
    #[must_use]
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The API key, sent as `Authorization: Bearer …`. Local servers need none.
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

    /// A cap on the response's tokens (`max_tokens`); none by default.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
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
    pub fn build(self) -> Result<OpenAi, BuildError> {
        let url = format!("{}/chat/completions", base_url(&self.base_url)?);
        let key = match &self.api_key {
            Some(key) => Some((
                AUTHORIZATION,
                secret_header(&format!("Bearer {}", key.expose()))?,
            )),
            None => None,
        };
        Ok(OpenAi {
            endpoint: Endpoint::new(self.http, self.api_key, url, key)?,
            model: self.model,
            tool_choice: self.tool_choice,
            max_tokens: self.max_tokens,
        })
    }
}

#[async_trait]
impl Model for OpenAi {
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
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Tool(name) => json!({ "type": "function", "function": { "name": name } }),
    }
}

/// The system prompt, then each turn as chat messages: a user turn's tool results become
/// `tool` messages (first, right after the assistant message that called them), its text
/// blocks one `user` message; an assistant turn one message with its text and
/// `tool_calls`.
pub(crate) fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for turn in &request.turns {
        match turn.role {
            Role::User => user_messages(turn, &mut messages),
            Role::Assistant => messages.push(assistant_message(turn)),
        }
    }
    messages
}

fn user_messages(turn: &Turn, messages: &mut Vec<Value>) {
    let mut texts = Vec::new();
    for block in &turn.content {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let content = if *is_error {
                    format!("{TOOL_ERROR_PREFIX}{content}")
                } else {
                    content.clone()
                };
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": tool_use_id,
                    "content": content,
                }));
            }
            ContentBlock::Text { text } => texts.push(text.as_str()),
            ContentBlock::ToolUse { .. } => {}
        }
    }
    match texts.as_slice() {
        [] => {}
        // One block as a plain string: every compatible server reads that.
        [text] => messages.push(json!({ "role": "user", "content": text })),
        // Several (notifications, then the prompt) stay separate parts.
        texts => {
            let parts: Vec<Value> = texts
                .iter()
                .map(|text| json!({ "type": "text", "text": text }))
                .collect();
            messages.push(json!({ "role": "user", "content": parts }));
        }
    }
}

fn assistant_message(turn: &Turn) -> Value {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in &turn.content {
        match block {
            ContentBlock::Text { text } => texts.push(text.as_str()),
            ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                "id": id,
                "type": "function",
                "function": { "name": name, "arguments": input.to_string() },
            })),
            ContentBlock::ToolResult { .. } => {}
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    let content = if texts.is_empty() {
        Value::Null
    } else {
        json!(texts.join("\n"))
    };
    message.insert("content".into(), content);
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(message)
}

/// One `chat.completion.chunk`; unknown fields (`reasoning_content`, `logprobs`…) are
/// ignored.
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Default, Deserialize)]
struct Delta {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Assembles chunks into a response.
#[derive(Default)]
pub(crate) struct Assembler {
    text: String,
    calls: BTreeMap<u64, Call>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
}

impl Assemble for Assembler {
    fn event(&mut self, _name: &str, data: &str, sink: &DeltaSink) -> Result<Flow, ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|error| malformed_json(data, error))?;
        if let Some(error) = chunk.error {
            return Err(reported_mid_stream(
                ModelErrorKind::Server,
                "an error",
                &error.to_string(),
            ));
        }
        // One choice is asked for (no `n`); others would be another answer.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                self.text.push_str(&text);
                sink.emit(ModelDelta::Text(text));
            }
            for (position, delta) in choice.delta.tool_calls.into_iter().enumerate() {
                self.tool_call(position, delta, sink);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(finish_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            let cached = usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens)
                .unwrap_or(0);
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                cached_input_tokens: cached,
                cache_write_tokens: 0,
            });
        }
        Ok(Flow::Continue)
    }

    fn finish(self, done: bool, sink: &DeltaSink) -> Result<ModelResponse, ModelError> {
        if !done && self.finish.is_none() {
            return Err(ended_early(
                "the response did (no finish_reason, no [DONE])",
            ));
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(ContentBlock::Text { text: self.text });
        }
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(malformed(format!("tool call {index} has no name")));
            }
            let input = tool_input(&call.arguments, |arguments| {
                format!(
                    "the arguments of tool call {index} ({}) are not JSON: {arguments}",
                    call.name
                )
            })?;
            let id = if call.id.is_empty() {
                format!("call_{index}_{:08x}", fastrand::u32(..))
            } else {
                call.id
            };
            content.push(ContentBlock::ToolUse {
                id,
                name: call.name,
                input,
            });
        }
        Ok(respond(content, self.usage, self.finish, sink))
    }
}

impl Assembler {
    /// Adds a tool-call delta to the call of its index (a server that leaves the index
    /// out sends whole calls, in order).
    fn tool_call(&mut self, position: usize, delta: ToolCallDelta, sink: &DeltaSink) {
        let index = delta.index.unwrap_or(position as u64);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                call.name.push_str(&name);
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            sink.emit(ModelDelta::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::EndTurn,
        "tool_calls" | "function_call" => FinishReason::ToolUse,
        "length" => FinishReason::MaxTokens,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
