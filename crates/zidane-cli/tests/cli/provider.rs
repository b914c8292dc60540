//! The interactive session against a real provider over HTTP — the scripted provider
//! server of `zidane-models` speaking OpenAI's format — not `--demo`: a prompt starts a
//! background build, the wake-up after its exit sends the `<task-notification>` to the
//! provider, and its answer appears with nobody typing.

use std::time::Duration;

use serde_json::Value;
use zidane::models::testing::{RecordedRequest, Reply, ScriptedServer, fixtures};

use crate::support::{Tmux, owned_processes, provider_env, tmux_present};

/// Bound on each step a person would see happen.
const STEP: Duration = Duration::from_secs(20);

/// The texts of the user messages of a chat completions request.
fn user_texts(request: &RecordedRequest) -> Vec<String> {
    let body = request.json().unwrap();
    let messages = body["messages"].as_array().unwrap().clone();
    messages
        .iter()
        .filter(|message| message["role"] == "user")
        .flat_map(|message| match &message["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(parts) => parts
                .iter()
                .filter_map(|part| part["text"].as_str().map(str::to_owned))
                .collect(),
            other => panic!("user content {other}"),
        })
        .collect()
}

/// Whether a user message of `request` carries the notification of `bash_1`.
fn notifies_bash_1(request: &RecordedRequest) -> bool {
    user_texts(request).iter().any(|text| {
        text.starts_with("<task-notification>") && text.contains("<task-id>bash_1</task-id>")
    })
}

#[test]
fn a_provider_session_is_woken_by_a_background_exit() {
    if !tmux_present() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(ScriptedServer::start()).unwrap();
    let call = serde_json::json!({ "command": "sleep 1; echo built", "run_in_background": true });
    server.push(Reply::sse(fixtures::openai_tool_call(
        "call_1", "shell", &call,
    )));
    server.push(Reply::sse(fixtures::openai_text(
        "Building in the background.",
    )));
    server.push(Reply::sse(fixtures::openai_text("The build finished.")));

    let dir = tempfile::tempdir().unwrap();
    let (args, env) = provider_env(&server.url("/v1"));
    let tmux = Tmux::start(dir.path(), &args, &env);
    let screen = tmux.wait_text("ctrl+k cancel", STEP);
    assert!(
        screen
            .lines()
            .any(|line| line.trim_start().starts_with("scripted · ")),
        "the footer names the model:\n{screen}"
    );

    // A prompt: the build starts in the background and the turn ends.
    tmux.keys(&["-l", "build it"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("Started bash_1", STEP);
    tmux.wait_text("Building in the background.", STEP);
    // Nobody types: the exit's banner and the provider's answer to it arrive.
    let screen = tmux.wait_text("The build finished.", STEP);
    assert!(screen.contains("⌁ bash_1 exited (0)"), "{screen}");
    assert_eq!(
        screen.matches("you › ").count(),
        1,
        "the wake-up echoed no prompt:\n{screen}"
    );
    let banner = screen.find("⌁ bash_1 exited (0)").unwrap();
    assert!(
        banner < screen.find("The build finished.").unwrap(),
        "{screen}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert_eq!(server.remaining(), 0);
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.json().unwrap()["model"], "scripted");
    }
    assert!(
        user_texts(&requests[0])
            .iter()
            .any(|text| text == "build it"),
        "{:?}",
        user_texts(&requests[0])
    );
    assert!(!notifies_bash_1(&requests[0]), "{}", requests[0].body);
    assert!(!notifies_bash_1(&requests[1]), "{}", requests[1].body);
    assert!(notifies_bash_1(&requests[2]), "{}", requests[2].body);

    tmux.keys(&["C-d"]);
    tmux.wait_ended("ctrl+d", STEP);
    assert_eq!(owned_processes(tmux.pid), Vec::<u32>::new());
    tmux.assert_restored();
    assert_eq!(server.requests().len(), 3, "nothing more was asked");
}
