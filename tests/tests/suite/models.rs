//! A real provider client (`zidane::models`) on a local agent with real processes,
//! against the scripted provider server: the model backgrounds a command, the turn
//! ends, the command ends, the wake loop's drain-only run sends the
//! `<task-notification>` in the provider's format, and the model's reply is shown.

use std::sync::Arc;

use serde_json::{Value, json};
use zidane::models::testing::{Reply, ScriptedServer, fixtures};
use zidane::models::{Anthropic, OpenAi};
use zidane::prelude::*;

use super::support::WAIT;

const STARTED: &str = "Building in the background; I will be told when it ends.";
const WOKEN: &str = "echo built ended cleanly.";

/// The text of the last message of a request body, in either provider's format.
fn last_user_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user", "{last}");
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|block| block["text"].as_str().unwrap().to_owned())
            .collect(),
        other => panic!("{other}"),
    }
}

async fn background_then_wake(server: &ScriptedServer, model: Arc<dyn Model>) {
    let dir = tempfile::tempdir().unwrap();
    let agent = zidane::local_agent(model, dir.path())
        .session_id("models")
        // No orphan sweep: it would end what the orphan sweep tests look at.
        .sweep_orphans(false)
        .build()
        .unwrap();
    let wake = WakeLoop::spawn(agent.clone());
    let mut reports = wake.reports();

    let outcome = wake.prompt("build it in the background").await.unwrap();
    assert_eq!(outcome.text, STARTED);
    let woken = tokio::time::timeout(WAIT, async {
        loop {
            let report = reports.recv().await.unwrap();
            if report.trigger != WakeTrigger::Prompt {
                break report.outcome.unwrap();
            }
        }
    })
    .await
    .expect("the task's end wakes the agent");
    assert_eq!(woken.text, WOKEN, "the model's reply is the run's text");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let wake_text = last_user_text(&requests[2].json().unwrap());
    assert!(wake_text.starts_with("<task-notification>\n<task-id>bash_1</task-id>\n<status>exited</status>\n<exit-code>0</exit-code>\n<command>echo built</command>"), "{wake_text}");
    assert!(wake_text.ends_with("</task-notification>"), "{wake_text}");
    agent.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_model_is_woken_by_a_real_task() {
    let server = ScriptedServer::start().await.unwrap();
    let input = json!({ "command": "echo built", "run_in_background": true });
    server.push(Reply::sse(fixtures::openai_tool_call(
        "call_1", "shell", &input,
    )));
    server.push(Reply::sse(fixtures::openai_text(STARTED)));
    server.push(Reply::sse(fixtures::openai_text(WOKEN)));
    let model = OpenAi::builder("gpt-test")
        .base_url(server.url("/v1"))
        .build()
        .unwrap();
    background_then_wake(&server, Arc::new(model)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_model_is_woken_by_a_real_task() {
    let server = ScriptedServer::start().await.unwrap();
    let input = json!({ "command": "echo built", "run_in_background": true });
    server.push(Reply::sse(fixtures::anthropic_tool_use(
        "toolu_1", "shell", &input,
    )));
    server.push(Reply::sse(fixtures::anthropic_text(STARTED)));
    server.push(Reply::sse(fixtures::anthropic_text(WOKEN)));
    let model = Anthropic::builder("claude-test")
        .base_url(server.url(""))
        .api_key("sk-ant-test")
        .build()
        .unwrap();
    background_then_wake(&server, Arc::new(model)).await;
}
