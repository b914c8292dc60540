//! Recorded streams in each provider's documented format, and builders of streams for
//! scripts of your own.
//!
//! The recorded ones hold the shapes real servers send: OpenAI's first chunk with
//! `role` and empty content, tool-call deltas by index with arguments cut mid-token and
//! two calls interleaved, a trailing usage chunk with cached tokens, `[DONE]`;
//! Anthropic's `message_start` usage with cache reads or writes, `ping`s between
//! blocks, `input_json_delta`s, `message_delta` with the stop reason.

use serde_json::{Value, json};

/// An OpenAI stream: text only, with non-ASCII characters, usage with cached tokens.
pub const OPENAI_TEXT: &str = include_str!("../../fixtures/openai_text.sse");
/// An OpenAI stream: text, then two tool calls (`shell` in the background and
/// `read_file`) whose argument deltas interleave.
pub const OPENAI_TOOL_CALLS: &str = include_str!("../../fixtures/openai_tool_calls.sse");
/// An Anthropic stream: text only, with non-ASCII characters, a cache read.
pub const ANTHROPIC_TEXT: &str = include_str!("../../fixtures/anthropic_text.sse");
/// An Anthropic stream: text, then two tool uses (`shell` in the background and
/// `read_file`), a cache write.
pub const ANTHROPIC_TOOL_USE: &str = include_str!("../../fixtures/anthropic_tool_use.sse");

/// Cuts `text` into about `parts` pieces on character boundaries, as a server streams
/// tokens.
fn pieces(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts.max(1)).max(1);
    chars
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

fn openai_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_735_689_600,
        "model": "scripted",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
    });
    format!("data: {chunk}\n\n")
}

fn openai_end(finish_reason: &str) -> String {
    let usage = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_735_689_600,
        "model": "scripted",
        "choices": [],
        "usage": { "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
                   "prompt_tokens_details": { "cached_tokens": 0 } },
    });
    format!(
        "{}data: {usage}\n\ndata: [DONE]\n\n",
        openai_chunk(json!({}), Some(finish_reason))
    )
}

/// An OpenAI stream that answers `text`, in a few deltas.
pub fn openai_text(text: &str) -> String {
    let mut stream = openai_chunk(json!({ "role": "assistant", "content": "" }), None);
    for piece in pieces(text, 3) {
        stream.push_str(&openai_chunk(json!({ "content": piece }), None));
    }
    stream.push_str(&openai_end("stop"));
    stream
}

/// An OpenAI stream that calls one tool, its arguments in a few deltas.
pub fn openai_tool_call(id: &str, name: &str, input: &Value) -> String {
    let mut stream = openai_chunk(
        json!({ "role": "assistant", "content": null, "tool_calls": [
            { "index": 0, "id": id, "type": "function", "function": { "name": name, "arguments": "" } }
        ]}),
        None,
    );
    for piece in pieces(&input.to_string(), 3) {
        stream.push_str(&openai_chunk(
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }),
            None,
        ));
    }
    stream.push_str(&openai_end("tool_calls"));
    stream
}

fn anthropic_event(data: &Value) -> String {
    let name = data["type"].as_str().unwrap_or_default();
    format!("event: {name}\ndata: {data}\n\n")
}

fn anthropic_message(blocks: &[Value], stop_reason: &str) -> String {
    let mut stream = anthropic_event(&json!({
        "type": "message_start",
        "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "content": [],
            "model": "scripted", "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": 100, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 0, "output_tokens": 1 },
        },
    }));
    for (index, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("text") => {
                stream.push_str(&anthropic_event(&json!({
                    "type": "content_block_start", "index": index,
                    "content_block": { "type": "text", "text": "" },
                })));
                for piece in pieces(block["text"].as_str().unwrap_or_default(), 3) {
                    stream.push_str(&anthropic_event(&json!({
                        "type": "content_block_delta", "index": index,
                        "delta": { "type": "text_delta", "text": piece },
                    })));
                }
            }
            _ => {
                stream.push_str(&anthropic_event(&json!({
                    "type": "content_block_start", "index": index,
                    "content_block": { "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} },
                })));
                for piece in pieces(&block["input"].to_string(), 3) {
                    stream.push_str(&anthropic_event(&json!({
                        "type": "content_block_delta", "index": index,
                        "delta": { "type": "input_json_delta", "partial_json": piece },
                    })));
                }
            }
        }
        stream.push_str(&anthropic_event(
            &json!({ "type": "content_block_stop", "index": index }),
        ));
    }
    stream.push_str(&anthropic_event(&json!({
        "type": "message_delta",
        "delta": { "stop_reason": stop_reason, "stop_sequence": null },
        "usage": { "output_tokens": 10 },
    })));
    stream.push_str(&anthropic_event(&json!({ "type": "message_stop" })));
    stream
}

/// An Anthropic stream that answers `text`, in a few deltas.
pub fn anthropic_text(text: &str) -> String {
    anthropic_message(&[json!({ "type": "text", "text": text })], "end_turn")
}

/// An Anthropic stream that calls one tool, its input in a few `input_json_delta`s.
pub fn anthropic_tool_use(id: &str, name: &str, input: &Value) -> String {
    anthropic_message(
        &[json!({ "type": "tool_use", "id": id, "name": name, "input": input })],
        "tool_use",
    )
}
