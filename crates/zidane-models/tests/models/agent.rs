//! End to end through `Agent`, with each provider against the scripted server: a
//! background `shell` call, the turn ends, the task ends, the wake run sends the
//! `<task-notification>` in the provider's format, and the model's reply is the run's
//! text.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use zidane_agent::{Agent, Behavior, Model, ModelDelta, RunOptions, StopReason};
use zidane_context::{MockContext, TaskId};
use zidane_models::HttpOptions;
use zidane_models::testing::{Reply, ScriptedServer, fixtures};

use crate::support::{Provider, streamed_text};

const TASKS: &str = "/home/u/.zidane/sessions/s1/tasks";
const STARTED: &str = "Building in the background; I will be told when it ends.";
const WOKEN: &str = "The build finished cleanly (exit 0).";

/// The body of a request, its tool definitions cut to their names (the tools crate
/// pins their text).
fn pinned(mut body: Value) -> Value {
    if let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut) {
        for tool in tools {
            let name = tool
                .pointer("/function/name")
                .or_else(|| tool.get("name"))
                .cloned()
                .unwrap_or_default();
            *tool = name;
        }
    }
    body
}

struct Replies {
    tool_call: String,
    started: String,
    woken: String,
}

/// The `shell` call's input both providers' fixtures carry.
fn background_build() -> Value {
    json!({ "command": "cargo build", "run_in_background": true })
}

/// Runs the round trip against `provider` and pins the wake request's body as
/// `snapshot`.
async fn wake_request_is_pinned(snapshot: &str, provider: Provider, replies: Replies) {
    let server = ScriptedServer::start().await.unwrap();
    let model = provider.model(&server, HttpOptions::new());
    let body = round_trip(&server, model, replies).await;
    let _guard = zidane_wire::testing::settings().bind_to_scope();
    insta::assert_json_snapshot!(snapshot, body);
}

async fn round_trip(server: &ScriptedServer, model: Arc<dyn Model>, replies: Replies) -> Value {
    let context = Arc::new(MockContext::new());
    let agent = Agent::builder(model, context.clone())
        .behavior(
            Behavior::new()
                .tasks_dir(TASKS)
                .system("You are a careful engineer."),
        )
        .build()
        .unwrap();
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let seen = deltas.clone();
    agent
        .hooks()
        .subscribe_deltas(move |delta| seen.lock().unwrap().push(delta.clone()));

    server.push(Reply::sse(replies.tool_call));
    server.push(Reply::sse(replies.started));
    let outcome = agent
        .run(RunOptions::new("Build it in the background."))
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(outcome.steps, 2);
    assert_eq!(outcome.text, STARTED);
    {
        let deltas = deltas.lock().unwrap();
        assert!(
            matches!(
                deltas.first(),
                Some(ModelDelta::ToolCallStarted { name, .. }) if name == "shell"
            ),
            "{deltas:?}"
        );
        assert_eq!(streamed_text(&deltas), STARTED);
    }
    let requests = server.requests();
    let results = &requests[1].json().unwrap();
    assert!(
        results.to_string().contains("Started bash_1"),
        "the second request carries the shell result: {results}"
    );

    assert!(!agent.has_pending_task_notifications());
    context.finish(TaskId::parse("bash_1").unwrap(), 0);
    assert!(agent.has_pending_task_notifications());

    server.push(Reply::sse(replies.woken));
    let woken = agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(woken.stop, StopReason::EndTurn);
    assert_eq!(woken.text, WOKEN, "the model's reply is the run's text");
    assert_eq!(woken.notified.len(), 1);
    assert_eq!(server.requests().len(), 3);
    agent.destroy().await.unwrap();
    pinned(server.requests()[2].json().unwrap())
}

#[tokio::test]
async fn openai_background_shell_then_wake() {
    let replies = Replies {
        tool_call: fixtures::openai_tool_call("call_bg1", "shell", &background_build()),
        started: fixtures::openai_text(STARTED),
        woken: fixtures::openai_text(WOKEN),
    };
    wake_request_is_pinned("openai_wake_request", Provider::OpenAi, replies).await;
}

#[tokio::test]
async fn anthropic_background_shell_then_wake() {
    let replies = Replies {
        tool_call: fixtures::anthropic_tool_use("toolu_bg1", "shell", &background_build()),
        started: fixtures::anthropic_text(STARTED),
        woken: fixtures::anthropic_text(WOKEN),
    };
    wake_request_is_pinned("anthropic_wake_request", Provider::Anthropic, replies).await;
}
