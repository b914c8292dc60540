//! Unit tests of what crosses the seam: reading a request's last user turn, the default
//! `stream`, and how errors say what happened.

use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use zidane_wire::{
    ContentBlock, STALL_HINT, TaskExitInfo, TaskId, TaskNotification, TaskStall, TaskStatus, Turn,
};

use super::*;

fn notification() -> TaskNotification {
    TaskNotification::from_exit(&TaskExitInfo::new(
        TaskId::from_number(1),
        "make",
        "/tmp/tasks/bash_1.log",
        TaskStatus::Exited,
        2,
        Duration::from_millis(4200),
    ))
}

fn stall() -> TaskStall {
    TaskStall {
        task_id: TaskId::from_number(2),
        command: "npm init".into(),
        output_file: "/tmp/tasks/bash_2.log".into(),
        stalled_for_ms: 45_000,
        bytes_written: 128,
        hint: STALL_HINT.to_owned(),
        diagnosis: None,
    }
}

fn request(turns: Vec<Turn>) -> ModelRequest {
    ModelRequest {
        system: None,
        turns,
        tools: Vec::new(),
    }
}

#[test]
fn the_prompt_is_the_last_user_turn_without_its_wire_blocks() {
    let request = request(vec![
        Turn::user_text("an older prompt"),
        Turn::assistant_text("done"),
        Turn::user(vec![
            ContentBlock::text(notification().render()),
            ContentBlock::text(stall().render()),
            ContentBlock::text("What failed?"),
            ContentBlock::text("Fix it."),
        ]),
    ]);
    assert_eq!(request.prompt(), "What failed?\nFix it.");
    assert_eq!(request.notifications(), vec![notification()]);
    assert_eq!(request.stalls(), vec![stall()]);
}

#[test]
fn a_request_that_ends_with_the_model_has_no_prompt() {
    let request = request(vec![
        Turn::user(vec![ContentBlock::text(notification().render())]),
        Turn::assistant_text("noted"),
    ]);
    assert!(request.last_user_turn().is_none());
    assert_eq!(request.prompt(), "");
    assert!(request.notifications().is_empty());
    assert!(request.tool_results().is_empty());
}

#[test]
fn tool_results_are_read_from_the_last_user_turn() {
    let request = request(vec![
        Turn::assistant(vec![ContentBlock::tool_use("c1", "shell", json!({}))]),
        Turn::user(vec![
            ContentBlock::tool_result("c1", "exit 0", false),
            ContentBlock::tool_result("c2", "no such task", true),
        ]),
    ]);
    assert_eq!(
        request.tool_results(),
        vec![("c1", "exit 0", false), ("c2", "no such task", true)]
    );
}

/// A model with only whole responses: the default `stream` hands them on.
struct Whole(ModelResponse);

#[async_trait]
impl Model for Whole {
    async fn complete(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn the_default_stream_hands_a_whole_response_on_in_order() {
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 3,
        ..Usage::default()
    };
    let mut response = ModelResponse::text("Building.")
        .with_tool_use("c1", "shell", json!({ "command": "make" }))
        .with_text("Then testing.");
    response.usage = Some(usage);
    let (sent, seen) = mpsc::channel();
    let sink = DeltaSink::new(move |delta: &ModelDelta| sent.send(delta.clone()).unwrap());

    let streamed = Whole(response.clone())
        .stream(request(vec![Turn::user_text("go")]), &sink)
        .await;

    assert_eq!(streamed, Ok(response));
    assert_eq!(
        seen.try_iter().collect::<Vec<_>>(),
        vec![
            ModelDelta::Text("Building.".into()),
            ModelDelta::ToolCallStarted {
                id: "c1".into(),
                name: "shell".into(),
            },
            ModelDelta::Text("Then testing.".into()),
            ModelDelta::Usage(usage),
        ]
    );
}

#[test]
fn a_request_error_says_its_kind_status_detail_and_cause() {
    let error = ModelError::Request {
        kind: ModelErrorKind::RateLimit,
        status: Some(429),
        detail: "slow down".into(),
        cause: Some("quota exhausted".into()),
    };
    assert_eq!(
        error.to_string(),
        "rate limited (HTTP 429): slow down: quota exhausted"
    );
    assert_eq!(error.kind(), Some(ModelErrorKind::RateLimit));
    let bare = ModelError::Request {
        kind: ModelErrorKind::Transport,
        status: None,
        detail: "connection reset".into(),
        cause: None,
    };
    assert_eq!(bare.to_string(), "transport error: connection reset");
    assert_eq!(ModelError::ScriptExhausted { calls: 2 }.kind(), None);
}

/// A foreign error that keeps its cause only as a `source()`.
#[derive(Debug, thiserror::Error)]
#[error("request failed")]
struct Outer(#[source] std::io::Error);

#[test]
fn an_error_source_says_the_whole_chain_and_equals_only_itself() {
    let source = ErrorSource::new(Outer(std::io::Error::other("connection refused")));
    assert_eq!(source.to_string(), "request failed: connection refused");
    assert!(std::error::Error::source(&source).is_none());
    assert_eq!(source, source.clone());
    assert_ne!(
        ErrorSource::from("overloaded"),
        ErrorSource::from("overloaded")
    );
    assert_eq!(
        ModelError::Provider("overloaded".into()).to_string(),
        "overloaded"
    );
}
