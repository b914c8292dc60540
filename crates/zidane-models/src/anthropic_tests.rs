use serde_json::json;
use zidane_llm::{FinishReason, ModelDelta, ModelErrorKind, Usage};
use zidane_wire::{ContentBlock, Role, Turn};

use super::*;
use crate::test_support::{assemble, conversation};

fn provider() -> Anthropic {
    Anthropic::builder("claude-sonnet-4-5")
        .api_key("sk-ant-secret")
        .max_tokens(1024)
        .build()
        .unwrap()
}

#[test]
fn a_conversation_maps_to_messages_with_the_prefix_cached() {
    insta::assert_json_snapshot!(
        "anthropic_request",
        provider().request_body(&conversation())
    );
}

#[test]
fn headers_carry_the_version_and_a_hidden_key() {
    let model = provider();
    assert_eq!(
        model.endpoint.headers()["anthropic-version"],
        ANTHROPIC_VERSION
    );
    assert!(model.endpoint.headers()["x-api-key"].is_sensitive());
    assert!(!format!("{model:?}").contains("sk-ant-secret"));
}

#[test]
fn consecutive_turns_of_a_role_merge_and_empty_text_is_dropped() {
    let mut request = conversation();
    request.turns.truncate(1);
    // A cancelled run left the first prompt unanswered.
    request.turns.push(Turn {
        role: Role::User,
        content: vec![
            ContentBlock::Text {
                text: String::new(),
            },
            ContentBlock::Text {
                text: "Again.".into(),
            },
        ],
    });
    assert_eq!(
        messages(&request),
        [json!({ "role": "user", "content": [
            { "type": "text", "text": "Build it in the background." },
            { "type": "text", "text": "Again." },
        ]})]
    );
}

fn events(data: &[serde_json::Value]) -> Vec<(String, String)> {
    data.iter()
        .map(|d| (d["type"].as_str().unwrap().to_owned(), d.to_string()))
        .collect()
}

fn run(data: &[serde_json::Value]) -> (Result<ModelResponse, ModelError>, Vec<ModelDelta>) {
    let events = events(data);
    let events: Vec<(&str, &str)> = events
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_str()))
        .collect();
    assemble(Assembler::default(), &events)
}

#[test]
fn blocks_and_usage_assemble() {
    let (response, deltas) = run(&[
        json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 1 } } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "thinking", "thinking": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "thinking_delta", "thinking": "hmm" } }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "text", "text": "" } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "text_delta", "text": "On it." } }),
        json!({ "type": "content_block_stop", "index": 1 }),
        json!({ "type": "content_block_start", "index": 2, "content_block": { "type": "tool_use", "id": "toolu_1", "name": "wait_task", "input": {} } }),
        json!({ "type": "content_block_stop", "index": 2 }),
        json!({ "type": "some_future_event" }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 30 } }),
        json!({ "type": "message_stop" }),
    ]);
    let response = response.unwrap();
    assert_eq!(
        response.content,
        [
            ContentBlock::Text {
                text: "On it.".into()
            },
            ContentBlock::ToolUse {
                id: "toolu_1".into(),
                name: "wait_task".into(),
                input: json!({})
            },
        ]
    );
    let usage = Usage {
        input_tokens: 125,
        output_tokens: 30,
        cached_input_tokens: 100,
        cache_write_tokens: 20,
    };
    assert_eq!(response.usage, Some(usage));
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
    assert_eq!(
        deltas,
        [
            ModelDelta::Text("On it.".into()),
            ModelDelta::ToolCallStarted {
                id: "toolu_1".into(),
                name: "wait_task".into()
            },
            ModelDelta::Usage(usage),
        ]
    );
}

#[test]
fn broken_streams_are_errors() {
    let start = json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } });
    for (broken, events, kind) in [
        (
            "no message_stop",
            vec![start.clone()],
            ModelErrorKind::Transport,
        ),
        (
            "a delta for a block that was not started",
            vec![
                start.clone(),
                json!({ "type": "content_block_delta", "index": 3, "delta": { "type": "text_delta", "text": "x" } }),
            ],
            ModelErrorKind::MalformedStream,
        ),
        (
            "a tool input delta for a text block",
            vec![
                start.clone(),
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": "{" } }),
            ],
            ModelErrorKind::MalformedStream,
        ),
    ] {
        let (response, _) = run(&events);
        assert_eq!(response.unwrap_err().kind(), Some(kind), "{broken}");
    }

    let (response, _) = run(&[
        start,
        json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
    ]);
    let error = response.unwrap_err();
    assert_eq!(error.kind(), Some(ModelErrorKind::Server));
    assert!(error.to_string().contains("overloaded_error"), "{error}");

    let (response, _) = assemble(Assembler::default(), &[("message_start", "{not json")]);
    assert_eq!(
        response.unwrap_err().kind(),
        Some(ModelErrorKind::MalformedStream)
    );
}

#[test]
fn stop_reasons_map() {
    for (wire, reason) in [
        ("end_turn", FinishReason::EndTurn),
        ("max_tokens", FinishReason::MaxTokens),
        ("stop_sequence", FinishReason::StopSequence),
        ("refusal", FinishReason::ContentFilter),
        ("pause_turn", FinishReason::Other("pause_turn".into())),
    ] {
        let (response, _) = run(&[
            json!({ "type": "message_delta", "delta": { "stop_reason": wire } }),
            json!({ "type": "message_stop" }),
        ]);
        assert_eq!(response.unwrap().finish_reason, Some(reason), "{wire}");
    }
}
