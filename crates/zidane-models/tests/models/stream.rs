//! The recorded fixtures, streamed over HTTP, assemble into the responses they describe.

use serde_json::json;
use zidane_llm::{FinishReason, Model, ModelDelta, ModelResponse, Usage};
use zidane_models::testing::{Reply, ScriptedServer, fixtures};
use zidane_wire::ContentBlock;

use crate::support::{Provider, anthropic, fast, prompt, recording_sink, streamed_text};

const TEXT: &str = "The build passed — 42 tests, no failures ✓";

fn two_calls() -> Vec<ContentBlock> {
    vec![
        ContentBlock::Text {
            text: "Starting both.".into(),
        },
        ContentBlock::ToolUse {
            id: String::new(),
            name: "shell".into(),
            input: json!({ "command": "cargo build", "run_in_background": true }),
        },
        ContentBlock::ToolUse {
            id: String::new(),
            name: "read_file".into(),
            input: json!({ "path": "Cargo.toml" }),
        },
    ]
}

/// `fixture` streamed by a fresh server to `provider` for a request of `text`: the
/// server (it keeps what it was sent), the response, and the deltas it produced.
async fn streamed(
    provider: Provider,
    fixture: &str,
    text: &str,
) -> (ScriptedServer, ModelResponse, Vec<ModelDelta>) {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::sse(fixture));
    let (sink, deltas) = recording_sink();
    let response = provider
        .model(&server, fast())
        .stream(prompt(text), &sink)
        .await
        .unwrap();
    let deltas = deltas.lock().unwrap().clone();
    (server, response, deltas)
}

fn without_ids(mut content: Vec<ContentBlock>) -> Vec<ContentBlock> {
    for block in &mut content {
        if let ContentBlock::ToolUse { id, .. } = block {
            id.clear();
        }
    }
    content
}

#[tokio::test]
async fn openai_text_streams_its_deltas_and_usage() {
    let (server, response, deltas) =
        streamed(Provider::OpenAi, fixtures::OPENAI_TEXT, "build it").await;
    assert_eq!(response.joined_text(), TEXT);
    let usage = Usage {
        input_tokens: 1843,
        output_tokens: 14,
        cached_input_tokens: 1536,
        cache_write_tokens: 0,
    };
    assert_eq!(response.usage, Some(usage));
    assert_eq!(response.finish_reason, Some(FinishReason::EndTurn));
    assert_eq!(streamed_text(&deltas), TEXT);
    assert_eq!(
        deltas.len(),
        4,
        "three text deltas, then the usage: {deltas:?}"
    );
    assert_eq!(deltas.last(), Some(&ModelDelta::Usage(usage)));

    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-key"));
    let body = request.json().unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({ "include_usage": true }));
}

#[tokio::test]
async fn openai_tool_calls_assemble_in_index_order() {
    let (_server, response, deltas) =
        streamed(Provider::OpenAi, fixtures::OPENAI_TOOL_CALLS, "go").await;
    assert_eq!(without_ids(response.content.clone()), two_calls());
    assert!(
        matches!(&response.content[1], ContentBlock::ToolUse { id, .. } if id == "call_Kq1yV2")
    );
    assert!(
        matches!(&response.content[2], ContentBlock::ToolUse { id, .. } if id == "call_Zp8wM4")
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
    let started: Vec<String> = deltas
        .iter()
        .filter_map(|delta| match delta {
            ModelDelta::ToolCallStarted { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["shell", "read_file"]);
}

#[tokio::test]
async fn anthropic_text_streams_its_deltas_and_cache_reads() {
    let (server, response, deltas) =
        streamed(Provider::Anthropic, fixtures::ANTHROPIC_TEXT, "build it").await;
    assert_eq!(response.joined_text(), TEXT);
    let usage = Usage {
        input_tokens: 12 + 1830,
        output_tokens: 14,
        cached_input_tokens: 1830,
        cache_write_tokens: 0,
    };
    assert_eq!(response.usage, Some(usage));
    assert_eq!(response.finish_reason, Some(FinishReason::EndTurn));
    assert_eq!(streamed_text(&deltas), TEXT);

    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test]
async fn anthropic_tool_uses_assemble_from_input_json_deltas() {
    let server = ScriptedServer::start().await.unwrap();
    server.push(Reply::sse(fixtures::ANTHROPIC_TOOL_USE));
    let response = anthropic(&server, fast())
        .complete(prompt("go"))
        .await
        .unwrap();
    assert_eq!(without_ids(response.content.clone()), two_calls());
    assert!(
        matches!(&response.content[1], ContentBlock::ToolUse { id, .. } if id == "toolu_01T1x1fJ34qAmk2tNTrN7Up6")
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
    assert_eq!(response.usage.unwrap().cache_write_tokens, 1838);
}
