//! A scripted model server for real MCP hosts: it speaks the Anthropic Messages API
//! (`POST /v1/messages`, streamed or not, for Claude Code), the OpenAI Responses API
//! (`POST /v1/responses`, streamed, for Codex), OpenAI Chat Completions
//! (`POST /v1/chat/completions`, streamed or not) and the Gemini API
//! (`POST /v1beta/models/<model>:streamGenerateContent` or `:generateContent`) on a
//! free 127.0.0.1 port, plays the model's turns from a script, and records every
//! request: what the host showed the model.
//!
//! A host makes side requests too (token counts, titles, quota checks). Only a request
//! whose tool list offers a tool of the MCP server under test (a name containing the
//! script's marker) is the main conversation, and only such a request takes the next
//! step; every other one gets a short text answer and leaves the script where it is.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};

/// How long a step's gate may hold its reply back: past it the reply goes out anyway
/// and the test's assertions say what was missing.
pub const GATE_WAIT: Duration = Duration::from_secs(20);

/// How often a gate is asked.
const GATE_POLL: Duration = Duration::from_millis(10);

/// The text a request off the script gets, and a main request once the script is done.
pub const OFF_SCRIPT_TEXT: &str = "Done.";

/// A condition a step's reply waits for, such as a background task's log holding its
/// last line: a model that answers only after something happened, without a sleep.
pub type Gate = Arc<dyn Fn() -> bool + Send + Sync>;

/// One tool call of a model turn.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool's name as the host lists it to the model (`mcp__zidane__shell` for
    /// Claude Code; `shell` within the namespace `mcp__zidane` for Codex).
    pub name: String,
    /// The Responses API namespace the tool sits in, when the host groups its tools.
    pub namespace: Option<String>,
    /// The call's arguments.
    pub arguments: Value,
}

/// What the model says in one turn.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Tool calls, then the turn stops for their results.
    Calls(Vec<ToolCall>),
    /// Final text: the turn ends.
    Text(String),
}

/// One step of a script: the model's next turn in the main conversation.
#[derive(Clone)]
pub struct Step {
    /// The turn.
    pub turn: Turn,
    /// Held back until this holds (bounded by [`GATE_WAIT`]).
    pub gate: Option<Gate>,
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step")
            .field("turn", &self.turn)
            .field("gated", &self.gate.is_some())
            .finish()
    }
}

impl Step {
    /// A turn of one tool call.
    pub fn call(call: ToolCall) -> Self {
        Self {
            turn: Turn::Calls(vec![call]),
            gate: None,
        }
    }

    /// A final text.
    pub fn text(text: &str) -> Self {
        Self {
            turn: Turn::Text(text.to_owned()),
            gate: None,
        }
    }

    /// The same step, held back until `gate` holds.
    pub fn gated(mut self, gate: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.gate = Some(Arc::new(gate));
        self
    }
}

/// One request the server received, with what it answered.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request's method.
    pub method: String,
    /// Its path and query.
    pub path: String,
    /// Its body as JSON (`Null` when it was not JSON).
    pub body: Value,
    /// Whether it belonged to the main conversation.
    pub main: bool,
    /// The script step it was answered with (main requests within the script).
    pub step: Option<usize>,
    /// When it arrived.
    pub received: Instant,
    /// When its answer was handed to the connection.
    pub answered: Instant,
}

#[derive(Default)]
struct State {
    marker: String,
    steps: Vec<Step>,
    next: usize,
    log: Vec<Exchange>,
}

/// The server; it stops when dropped.
pub struct ScriptedModel {
    addr: std::net::SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    /// Listens on a free 127.0.0.1 port. `marker` picks the main conversation out of the
    /// requests: one whose tools include a name containing it (`zidane`).
    pub async fn start(marker: &str, steps: Vec<Step>) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            marker: marker.to_owned(),
            steps,
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        let router = Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
            let state = Arc::clone(&shared);
            async move { answer(&state, &method, &uri, &body).await }
        });
        let task = tokio::spawn(async move {
            // An error here ends the server; the host then fails to connect, which the
            // test reports.
            let _ = axum::serve(listener, router).await;
        });
        Ok(Self { addr, state, task })
    }

    /// The server's base URL, `http://127.0.0.1:<port>`, without a path.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in order of arrival.
    pub fn exchanges(&self) -> Vec<Exchange> {
        lock(&self.state).log.clone()
    }

    /// The requests of the main conversation, in order.
    pub fn main_requests(&self) -> Vec<Exchange> {
        self.exchanges().into_iter().filter(|e| e.main).collect()
    }

    /// How many steps are still to be played.
    pub fn remaining(&self) -> usize {
        let state = lock(&self.state);
        state.steps.len().saturating_sub(state.next)
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A test that panicked while holding the lock left nothing half-written.
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether a request body offers a tool whose name contains `marker`, whichever API it
/// speaks: a Messages or Responses API tool (a namespace of tools counts by its own
/// name), a Chat Completions `function` tool, or one of a Gemini tool's
/// `functionDeclarations`.
fn offers_tool(body: &Value, marker: &str) -> bool {
    let named = |name: &Value| name.as_str().is_some_and(|n| n.contains(marker));
    body["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|tool| {
            named(&tool["name"])
                || named(&tool["function"]["name"])
                || ["functionDeclarations", "function_declarations"]
                    .iter()
                    .flat_map(|key| tool[*key].as_array().into_iter().flatten())
                    .any(|declaration| named(&declaration["name"]))
        })
    })
}

/// Whether a request on `path` asks for a model turn (and not, say, a token count).
fn is_turn_path(path: &str) -> bool {
    path.ends_with("/messages")
        || path.ends_with("/responses")
        || path.ends_with("/chat/completions")
        || path.ends_with(":generateContent")
        || path.ends_with(":streamGenerateContent")
}

async fn answer(state: &Mutex<State>, method: &Method, uri: &Uri, body: &[u8]) -> Response {
    let received = Instant::now();
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), ToString::to_string);
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let (main, step) = {
        let mut state = lock(state);
        // A token count carries the conversation's tools too, but is not a turn.
        let main = is_turn_path(uri.path()) && offers_tool(&body, &state.marker);
        let step = if main && state.next < state.steps.len() {
            state.next += 1;
            Some((state.next - 1, state.steps[state.next - 1].clone()))
        } else {
            None
        };
        (main, step)
    };
    if let Some(gate) = step.as_ref().and_then(|(_, step)| step.gate.clone()) {
        let deadline = Instant::now() + GATE_WAIT;
        while !gate() && Instant::now() < deadline {
            tokio::time::sleep(GATE_POLL).await;
        }
    }
    let turn = step.as_ref().map_or_else(
        || Turn::Text(OFF_SCRIPT_TEXT.to_owned()),
        |(_, step)| step.turn.clone(),
    );
    let ordinal = lock(state).log.len();
    let uri_path = uri.path();
    let response = if method != Method::POST {
        json_response(&json!({ "data": [], "object": "list" }))
    } else if uri_path.ends_with("/count_tokens") {
        json_response(&json!({ "input_tokens": 100 }))
    } else if uri_path.ends_with("/messages") {
        let model = body["model"].as_str().unwrap_or("scripted");
        if body["stream"] == Value::Bool(true) {
            sse_response(anthropic_stream(&turn, model, ordinal))
        } else {
            json_response(&anthropic_message(&turn, model, ordinal))
        }
    } else if uri_path.ends_with("/responses") {
        sse_response(responses_stream(&turn, ordinal))
    } else if uri_path.ends_with(":countTokens") {
        json_response(&json!({ "totalTokens": 100 }))
    } else if uri_path.ends_with(":streamGenerateContent") {
        sse_response(gemini_stream(&turn, gemini_model(uri_path), ordinal))
    } else if uri_path.ends_with(":generateContent") {
        json_response(&gemini_response(&turn, gemini_model(uri_path), ordinal))
    } else if uri_path.ends_with("/chat/completions") {
        let model = body["model"].as_str().unwrap_or("scripted");
        if body["stream"] == Value::Bool(true) {
            sse_response(chat_stream(&turn, model, ordinal))
        } else {
            json_response(&chat_completion(&turn, model, ordinal))
        }
    } else {
        json_response(&json!({}))
    };
    lock(state).log.push(Exchange {
        method: method.to_string(),
        path,
        body,
        main,
        step: step.map(|(index, _)| index),
        received,
        answered: Instant::now(),
    });
    response
}

fn json_response(body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn sse_response(events: String) -> Response {
    let mut response = Response::new(Body::from(events));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    response
}

fn event(out: &mut String, name: &str, data: &Value) {
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

fn usage() -> Value {
    json!({ "input_tokens": 100, "output_tokens": 10 })
}

/// The content blocks and stop reason of a turn, in the Messages API's shape.
fn anthropic_content(turn: &Turn, ordinal: usize) -> (Vec<Value>, &'static str) {
    match turn {
        Turn::Text(text) => (vec![json!({ "type": "text", "text": text })], "end_turn"),
        Turn::Calls(calls) => (
            calls
                .iter()
                .enumerate()
                .map(|(n, call)| {
                    json!({
                        "type": "tool_use",
                        "id": format!("toolu_{ordinal}_{n}"),
                        "name": call.name,
                        "input": call.arguments,
                    })
                })
                .collect(),
            "tool_use",
        ),
    }
}

fn anthropic_message(turn: &Turn, model: &str, ordinal: usize) -> Value {
    let (content, stop) = anthropic_content(turn, ordinal);
    json!({
        "id": format!("msg_{ordinal}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": usage(),
    })
}

fn anthropic_stream(turn: &Turn, model: &str, ordinal: usize) -> String {
    let (content, stop) = anthropic_content(turn, ordinal);
    let mut out = String::new();
    event(
        &mut out,
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": format!("msg_{ordinal}"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": { "input_tokens": 100, "output_tokens": 1 },
            },
        }),
    );
    for (index, block) in content.iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            (
                json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
                json!({ "type": "input_json_delta", "partial_json": block["input"].to_string() }),
            )
        } else {
            (
                json!({ "type": "text", "text": "" }),
                json!({ "type": "text_delta", "text": block["text"] }),
            )
        };
        event(
            &mut out,
            "content_block_start",
            &json!({ "type": "content_block_start", "index": index, "content_block": start }),
        );
        event(
            &mut out,
            "content_block_delta",
            &json!({ "type": "content_block_delta", "index": index, "delta": delta }),
        );
        event(
            &mut out,
            "content_block_stop",
            &json!({ "type": "content_block_stop", "index": index }),
        );
    }
    event(
        &mut out,
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": { "stop_reason": stop, "stop_sequence": null },
            "usage": { "output_tokens": 10 },
        }),
    );
    event(&mut out, "message_stop", &json!({ "type": "message_stop" }));
    out
}

fn responses_stream(turn: &Turn, ordinal: usize) -> String {
    let id = format!("resp_{ordinal}");
    let items: Vec<Value> = match turn {
        Turn::Text(text) => vec![json!({
            "type": "message",
            "id": format!("msg_{ordinal}"),
            "role": "assistant",
            "status": "completed",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }],
        })],
        Turn::Calls(calls) => calls
            .iter()
            .enumerate()
            .map(|(n, call)| {
                let mut item = json!({
                    "type": "function_call",
                    "id": format!("fc_{ordinal}_{n}"),
                    "call_id": format!("call_{ordinal}_{n}"),
                    "name": call.name,
                    "arguments": call.arguments.to_string(),
                    "status": "completed",
                });
                if let Some(namespace) = &call.namespace {
                    item["namespace"] = json!(namespace);
                }
                item
            })
            .collect(),
    };
    let mut out = String::new();
    let mut sequence = 0;
    let mut emit = |out: &mut String, mut data: Value| {
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        let name = data["type"].as_str().unwrap_or_default().to_owned();
        event(out, &name, &data);
    };
    emit(
        &mut out,
        json!({ "type": "response.created", "response": { "id": id, "status": "in_progress", "output": [] } }),
    );
    for (index, item) in items.iter().enumerate() {
        emit(
            &mut out,
            json!({ "type": "response.output_item.added", "output_index": index, "item": item }),
        );
        emit(
            &mut out,
            json!({ "type": "response.output_item.done", "output_index": index, "item": item }),
        );
    }
    emit(
        &mut out,
        json!({
            "type": "response.completed",
            "response": {
                "id": id,
                "status": "completed",
                "output": items,
                "usage": {
                    "input_tokens": 100,
                    "input_tokens_details": { "cached_tokens": 0 },
                    "output_tokens": 10,
                    "output_tokens_details": { "reasoning_tokens": 0 },
                    "total_tokens": 110,
                },
            },
        }),
    );
    out
}

/// A turn's tool calls in the Chat Completions shape, with their indexes (a stream's
/// deltas name the call they extend by index).
fn chat_tool_calls(calls: &[ToolCall], ordinal: usize) -> Vec<Value> {
    calls
        .iter()
        .enumerate()
        .map(|(n, call)| {
            json!({
                "index": n,
                "id": format!("call_{ordinal}_{n}"),
                "type": "function",
                "function": { "name": call.name, "arguments": call.arguments.to_string() },
            })
        })
        .collect()
}

fn chat_usage() -> Value {
    json!({ "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110 })
}

/// A turn as a Chat Completions assistant message, and its finish reason.
fn chat_message(turn: &Turn, ordinal: usize) -> (Value, &'static str) {
    match turn {
        Turn::Text(text) => (json!({ "role": "assistant", "content": text }), "stop"),
        Turn::Calls(calls) => (
            json!({
                "role": "assistant",
                "content": null,
                "tool_calls": chat_tool_calls(calls, ordinal),
            }),
            "tool_calls",
        ),
    }
}

/// A non-streamed Chat Completions answer.
fn chat_completion(turn: &Turn, model: &str, ordinal: usize) -> Value {
    let (message, finish) = chat_message(turn, ordinal);
    json!({
        "id": format!("chatcmpl-{ordinal}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        "usage": chat_usage(),
    })
}

/// A streamed Chat Completions answer: a chunk with the whole turn as one delta (each
/// call whole: id, name and arguments), a chunk with the finish reason and the usage,
/// then `[DONE]`.
fn chat_stream(turn: &Turn, model: &str, ordinal: usize) -> String {
    // One delta carries the whole message.
    let (delta, finish) = chat_message(turn, ordinal);
    let chunk = |choice: Value, usage: Value| {
        json!({
            "id": format!("chatcmpl-{ordinal}"),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
            "usage": usage,
        })
    };
    let mut out = String::new();
    for data in [
        chunk(
            json!({ "index": 0, "delta": delta, "finish_reason": null }),
            Value::Null,
        ),
        chunk(
            json!({ "index": 0, "delta": {}, "finish_reason": finish }),
            chat_usage(),
        ),
    ] {
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// The model a Gemini API path names: `/v1beta/models/<model>:<method>`.
fn gemini_model(path: &str) -> &str {
    path.rsplit_once("/models/")
        .and_then(|(_, rest)| rest.split_once(':'))
        .map_or("scripted", |(model, _)| model)
}

/// A Gemini API `GenerateContentResponse`: one candidate whose parts are the turn's
/// `functionCall`s or its text.
fn gemini_response(turn: &Turn, model: &str, ordinal: usize) -> Value {
    let parts: Vec<Value> = match turn {
        Turn::Text(text) => vec![json!({ "text": text })],
        Turn::Calls(calls) => calls
            .iter()
            .enumerate()
            .map(|(n, call)| {
                json!({ "functionCall": {
                    "id": format!("call_{ordinal}_{n}"),
                    "name": call.name,
                    "args": call.arguments,
                } })
            })
            .collect(),
    };
    json!({
        "candidates": [{
            "content": { "role": "model", "parts": parts },
            // The API ends a turn of function calls with `STOP` too.
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 10,
            "totalTokenCount": 110,
        },
        "modelVersion": model,
        "responseId": format!("resp_{ordinal}"),
    })
}

/// A streamed Gemini API answer (`alt=sse`): the whole response as one `data:` event.
fn gemini_stream(turn: &Turn, model: &str, ordinal: usize) -> String {
    format!("data: {}\n\n", gemini_response(turn, model, ordinal))
}

/// The texts of the tool results a request shows the model, oldest first, whichever
/// API it speaks: a Messages API `tool_result` block's content, a Responses API
/// `function_call_output`'s output, a Chat Completions `tool` message's content (text
/// parts joined), a Gemini API `functionResponse`'s `response` as the JSON text the
/// model reads (Gemini CLI puts the tool's text there as `{"output": "…"}`).
pub fn tool_results(body: &Value) -> Vec<String> {
    let mut results = Vec::new();
    let text_of = |content: &Value| match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            results.push(text_of(&message["content"]));
            continue;
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                results.push(text_of(&block["content"]));
            }
        }
    }
    for content in body["contents"].as_array().into_iter().flatten() {
        for part in content["parts"].as_array().into_iter().flatten() {
            let response = &part["functionResponse"]["response"];
            if !response.is_null() {
                results.push(response.to_string());
            }
        }
    }
    for item in body["input"].as_array().into_iter().flatten() {
        if item["type"] == "function_call_output" {
            results.push(text_of(&item["output"]));
        }
    }
    results
}

#[cfg(test)]
#[path = "model_server_tests.rs"]
mod tests;
