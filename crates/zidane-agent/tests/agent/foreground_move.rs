//! A foreground `shell` call under the agent's move budget, on the local machine: a
//! command that outlives the budget moves to the background and its end wakes the model
//! exactly once; one that ends in time is answered as a foreground call and never told
//! again; the host's trigger (the terminal's ctrl+b) moves a call at once.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zidane_agent::{
    Agent, Behavior, ModelResponse, ScriptedModel, Session, SessionStore, ToolCall, WakeLoop,
};
use zidane_context::TaskStatus;
use zidane_process::ProcessContext;

use crate::support::{WAIT, next_wake};

/// The longest a call that moved or a task's end may take here.
const BOUND: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_command_wakes_the_model_once_with_its_whole_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": "echo start; sleep 3; echo done" }),
        )
        .react(|request| {
            let (_, content, is_error) = request.tool_results()[0];
            assert!(!is_error, "{content}");
            assert!(
                content.starts_with("Still running after 1.0s: moved to the background as bash_1"),
                "{content}"
            );
            assert!(content.contains("Last lines:\nstart"), "{content}");
            ModelResponse::text("It moved; I will be told when it ends.")
        })
        .react(|request| {
            let notifications = request.notifications();
            assert_eq!(notifications.len(), 1, "{request:?}");
            assert_eq!(notifications[0].status, TaskStatus::Exited);
            ModelResponse::tool_use(
                "",
                "read_file",
                json!({ "path": notifications[0].output_file }),
            )
        })
        .react(|request| {
            let (_, content, _) = request.tool_results()[0];
            ModelResponse::text(format!(
                "whole log: {}",
                content.contains("start") && content.contains("done")
            ))
        });
    let agent = Agent::builder(Arc::new(model), Arc::new(ProcessContext::new()))
        .store(store)
        .session(Session::new("moved"))
        .behavior(Behavior::new().foreground_budget(Duration::from_secs(1)))
        .build()
        .unwrap();
    let wake = WakeLoop::spawn(agent.clone());
    let mut reports = wake.reports();
    let began = std::time::Instant::now();
    let first = wake.prompt("run it").await.unwrap();
    assert!(began.elapsed() < BOUND);
    assert!(first.notified.is_empty());

    let woke = next_wake(&mut reports, BOUND).await;
    let outcome = woke.outcome.unwrap();
    assert_eq!(outcome.text, "whole log: true");
    assert_eq!(outcome.notified.len(), 1);
    drop(wake);
    agent.destroy().await.unwrap();
    assert!(!agent.has_pending_task_notifications());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_ends_in_time_is_answered_and_never_told() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::host_driven(Arc::new(ProcessContext::new()))
        .behavior(
            Behavior::new()
                .tasks_dir(dir.path())
                .foreground_budget(Duration::from_secs(20)),
        )
        .build()
        .unwrap();
    let output = tokio::time::timeout(
        BOUND,
        agent.call_tool(ToolCall::new("1", "shell", json!({ "command": "echo hi" }))),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(output.text, "hi\n\nExit code: 0");
    assert!(output.data["exit"].is_object(), "{}", output.data);
    assert!(agent.drain_notifications().await.unwrap().is_empty());
    // A later drain still tells nothing: the exit is latched, not merely not queued yet.
    let task = output.data["exit"]["task_id"].as_str().unwrap().to_owned();
    assert!(!agent.claim_exit(task.parse().unwrap()));
    agent.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_trigger_moves_a_call_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::host_driven(Arc::new(ProcessContext::new()))
        .behavior(
            Behavior::new()
                .tasks_dir(dir.path())
                .foreground_budget(Duration::from_secs(600)),
        )
        .build()
        .unwrap();
    let call = agent.call_tool(ToolCall::new(
        "1",
        "shell",
        json!({ "command": "sleep 30" }),
    ));
    tokio::pin!(call);
    // Pressed until the call is in flight and answers.
    let output = tokio::time::timeout(WAIT, async {
        loop {
            tokio::select! {
                output = &mut call => break output.unwrap(),
                () = tokio::time::sleep(Duration::from_millis(50)) => {
                    agent.move_calls_to_background();
                }
            }
        }
    })
    .await
    .expect("the call moved");
    assert_eq!(output.data["moved_to_background"], true, "{}", output.text);
    assert!(
        output.text.starts_with("Moved by the user after "),
        "{}",
        output.text
    );
    agent.kill_background_task("bash_1").await.unwrap();
    let told = tokio::time::timeout(BOUND, async {
        loop {
            let told = agent.drain_notifications().await.unwrap();
            if !told.exits.is_empty() {
                break told;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(told.exits.len(), 1);
    agent.destroy().await.unwrap();
}
