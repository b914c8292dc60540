use serde_json::json;
use zidane_llm::{FinishReason, ModelDelta, ModelError, ModelErrorKind, Usage};
use zidane_wire::ContentBlock;

use super::*;
use crate::test_support::{assemble, conversation};

fn provider() -> OpenAi {
    OpenAi::builder("gpt-4.1-mini")
        .api_key("sk-test-secret")
        .build()
        .unwrap()
}

#[test]
fn a_conversation_maps_to_chat_messages() {
    insta::assert_json_snapshot!("openai_request", provider().request_body(&conversation()));
}

#[test]
fn tool_choice_and_max_tokens_are_sent_only_when_they_apply() {
    let model = OpenAi::builder("m")
        .tool_choice(ToolChoice::Tool("shell".into()))
        .max_tokens(256)
        .build()
        .unwrap();
    let body = model.request_body(&conversation());
    assert_eq!(
        body["tool_choice"],
        json!({ "type": "function", "function": { "name": "shell" } })
    );
    assert_eq!(body["max_tokens"], 256);
    let mut request = conversation();
    request.tools.clear();
    let body = model.request_body(&request);
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

#[test]
fn the_key_is_a_bearer_header_that_debug_hides() {
    let model = provider();
    let shown = format!("{model:?}");
    assert!(!shown.contains("sk-test-secret"), "{shown}");
    let header = model.endpoint.headers().get(AUTHORIZATION).unwrap();
    assert!(header.is_sensitive());
    assert_eq!(header.to_str().unwrap(), "Bearer sk-test-secret");
}

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] }).to_string()
}

/// Feeds the chunks' data, as events without a name, to an assembler.
fn run(data: &[impl AsRef<str>]) -> (Result<ModelResponse, ModelError>, Vec<ModelDelta>) {
    let events: Vec<(&str, &str)> = data.iter().map(|data| ("", data.as_ref())).collect();
    assemble(Assembler::default(), &events)
}

#[test]
fn interleaved_tool_call_deltas_assemble_by_index() {
    let events = [
        chunk(json!({ "content": "Two calls." }), None),
        chunk(json!({ "tool_calls": [{ "index": 1, "id": "b", "function": { "name": "read_file", "arguments": "{\"pa" } }] }), None),
        chunk(json!({ "tool_calls": [{ "index": 0, "id": "a", "function": { "name": "shell", "arguments": "" } }] }), None),
        chunk(json!({ "tool_calls": [{ "index": 1, "function": { "arguments": "th\": \"x\"}" } }] }), None),
        chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"command\": \"ls\"}" } }] }), None),
        chunk(json!({}), Some("tool_calls")),
        json!({ "choices": [], "usage": { "prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": { "cached_tokens": 8 } } }).to_string(),
        "[DONE]".to_owned(),
    ];
    let (response, deltas) = run(&events);
    let response = response.unwrap();
    assert_eq!(
        response.content,
        [
            ContentBlock::Text {
                text: "Two calls.".into()
            },
            ContentBlock::ToolUse {
                id: "a".into(),
                name: "shell".into(),
                input: json!({ "command": "ls" })
            },
            ContentBlock::ToolUse {
                id: "b".into(),
                name: "read_file".into(),
                input: json!({ "path": "x" })
            },
        ]
    );
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 5,
        cached_input_tokens: 8,
        cache_write_tokens: 0,
    };
    assert_eq!(response.usage, Some(usage));
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
    assert_eq!(
        deltas,
        [
            ModelDelta::Text("Two calls.".into()),
            ModelDelta::ToolCallStarted {
                id: "b".into(),
                name: "read_file".into()
            },
            ModelDelta::ToolCallStarted {
                id: "a".into(),
                name: "shell".into()
            },
            ModelDelta::Usage(usage),
        ]
    );
}

#[test]
fn finish_reasons_map() {
    for (wire, reason) in [
        ("stop", FinishReason::EndTurn),
        ("length", FinishReason::MaxTokens),
        ("content_filter", FinishReason::ContentFilter),
        ("eos", FinishReason::Other("eos".into())),
    ] {
        let (response, _) = run(&[chunk(json!({ "content": "x" }), Some(wire))]);
        assert_eq!(response.unwrap().finish_reason, Some(reason), "{wire}");
    }
}

#[test]
fn a_stream_that_stops_early_or_breaks_is_an_error() {
    let first = chunk(json!({ "content": "partial" }), None);
    let (response, _) = run(&[first]);
    assert_eq!(
        response.unwrap_err().kind(),
        Some(ModelErrorKind::Transport)
    );

    let (response, _) = run(&["{\"choices\": ["]);
    let error = response.unwrap_err();
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
    assert!(matches!(&error, ModelError::Request { cause: Some(_), .. }));

    let bad_args = chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "a", "function": { "name": "shell", "arguments": "{\"comm" } }] }),
        Some("length"),
    );
    let (response, _) = run(&[bad_args.as_str(), "[DONE]"]);
    let error = response.unwrap_err();
    assert_eq!(error.kind(), Some(ModelErrorKind::MalformedStream));
    assert!(error.to_string().contains("not JSON"), "{error}");

    let mid_error =
        json!({ "error": { "message": "overloaded", "type": "server_error" } }).to_string();
    let (response, _) = run(&[mid_error]);
    assert_eq!(response.unwrap_err().kind(), Some(ModelErrorKind::Server));
}

#[test]
fn a_call_without_id_gets_one_and_empty_arguments_are_an_empty_object() {
    let events = [
        chunk(
            json!({ "tool_calls": [{ "function": { "name": "wait_task" } }] }),
            Some("tool_calls"),
        ),
        "[DONE]".to_owned(),
    ];
    let (response, _) = run(&events);
    let response = response.unwrap();
    let [ContentBlock::ToolUse { id, name, input }] = response.content.as_slice() else {
        panic!("{response:?}");
    };
    assert!(id.starts_with("call_0_"), "{id}");
    assert_eq!(name, "wait_task");
    assert_eq!(input, &json!({}));
}

#[test]
fn the_base_url_is_checked_and_its_trailing_slash_dropped() {
    let model = OpenAi::builder("m")
        .base_url("http://127.0.0.1:8080/v1/")
        .build()
        .unwrap();
    assert_eq!(
        model.endpoint(),
        "http://127.0.0.1:8080/v1/chat/completions"
    );
    for bad in ["127.0.0.1:8080/v1", "ftp://host/v1", "https://", ""] {
        let error = OpenAi::builder("m").base_url(bad).build().unwrap_err();
        assert!(
            matches!(&error, BuildError::InvalidBaseUrl { url } if url == bad),
            "{bad}: {error}"
        );
    }
}
