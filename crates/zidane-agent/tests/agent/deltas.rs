//! The model's deltas reach the hook bus's delta subscribers during a run — a
//! `ScriptedModel` drives them too — and stay off the event stream.

use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_agent::{
    DeltaSink, FinishReason, Model, ModelDelta, ModelError, ModelErrorKind, ModelRequest,
    ModelResponse, RunOptions, ScriptedModel, Usage,
};

use crate::support::{bg, harness};

#[tokio::test]
async fn a_run_hands_each_response_to_delta_subscribers() {
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 7,
        cached_input_tokens: 64,
        cache_write_tokens: 0,
    };
    let mut answer = ModelResponse::text("started");
    answer.usage = Some(usage);
    let model = ScriptedModel::new()
        .respond(ModelResponse::tool_use("", "shell", bg("make")).with_text("on it"))
        .respond(answer);
    let h = harness(model);
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let seen = deltas.clone();
    let id = h
        .agent
        .hooks()
        .subscribe_deltas(move |delta| seen.lock().unwrap().push(delta.clone()));
    h.agent.run(RunOptions::new("go")).await.unwrap();
    assert_eq!(
        *deltas.lock().unwrap(),
        [
            ModelDelta::ToolCallStarted {
                id: "call_1".into(),
                name: "shell".into()
            },
            ModelDelta::Text("on it".into()),
            ModelDelta::Text("started".into()),
            ModelDelta::Usage(usage),
        ]
    );
    // Deltas are not hook events: the event log is what it always was.
    assert_eq!(
        h.event_names(),
        ["tool:before", "background:start", "tool:after"]
    );
    assert!(h.agent.hooks().unsubscribe(id));
}

#[tokio::test]
async fn the_default_stream_calls_complete_and_emits_the_whole_response() {
    let model = ScriptedModel::new().text("hello");
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let seen = deltas.clone();
    let sink = DeltaSink::new(move |delta| seen.lock().unwrap().push(delta.clone()));
    let request = ModelRequest {
        system: None,
        turns: vec![],
        tools: vec![],
    };
    let response = model.stream(request, &sink).await.unwrap();
    assert_eq!(response.joined_text(), "hello");
    assert_eq!(*deltas.lock().unwrap(), [ModelDelta::Text("hello".into())]);
    DeltaSink::none().emit(ModelDelta::Text("dropped".into()));
}

#[test]
fn a_response_without_usage_or_finish_reason_still_parses() {
    let response: ModelResponse =
        serde_json::from_value(json!({ "content": [{ "type": "text", "text": "hi" }] })).unwrap();
    assert_eq!(response, ModelResponse::text("hi"));
    assert_eq!(
        serde_json::to_value(&response).unwrap(),
        json!({ "content": [{ "type": "text", "text": "hi" }] })
    );
    let mut full = response;
    full.finish_reason = Some(FinishReason::Other("eos".into()));
    let back: ModelResponse = serde_json::from_value(serde_json::to_value(&full).unwrap()).unwrap();
    assert_eq!(back, full);
}

#[test]
fn a_request_error_says_its_kind_status_and_cause_once() {
    let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
    let error = ModelError::Request {
        kind: ModelErrorKind::RateLimit,
        status: Some(429),
        detail: "https://api.example/v1: slow down".into(),
        cause: Some(zidane_agent::ErrorSource::new(io)),
    };
    assert_eq!(
        error.to_string(),
        "rate limited (HTTP 429): https://api.example/v1: slow down: reset by peer"
    );
    // The cause is in the message; the io error has nothing behind it.
    assert!(std::error::Error::source(&error).is_none());
    assert_eq!(error.kind(), Some(ModelErrorKind::RateLimit));
    assert_eq!(error.clone(), error);
    assert_eq!(ModelError::Provider("x".into()).kind(), None);
}
