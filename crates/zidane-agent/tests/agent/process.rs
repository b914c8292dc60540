//! End to end on the local machine: a real background task ends, the idle agent wakes,
//! and the model receives its notification and reads the complete log.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{Agent, ModelResponse, ScriptedModel, Session, SessionStore, WakeLoop};
use zidane_context::TaskStatus;
use zidane_process::ProcessContext;

use crate::support::{WAIT, next_wake};

const LINES: usize = 500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_task_ends_and_the_idle_agent_wakes_and_reads_its_whole_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let command = format!(
        "echo start; sleep 0.3; i=1; while [ $i -le {LINES} ]; do echo \"line $i\"; i=$((i+1)); done; echo DONE >&2"
    );
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": command, "run_in_background": true }),
        )
        .text("Started in the background; I will be told when it ends.")
        .react(|request| {
            let notifications = request.notifications();
            assert_eq!(notifications.len(), 1, "{request:?}");
            let n = &notifications[0];
            assert_eq!(n.status, TaskStatus::Exited);
            assert_eq!(n.exit_code, 0);
            ModelResponse::tool_use("", "read_file", json!({ "path": n.output_file }))
        })
        .react(|request| {
            let (_, content, is_error) = request.tool_results()[0];
            assert!(!is_error, "{content}");
            let complete = content.contains("start")
                && content.contains(&format!("line {LINES}"))
                && content.contains("DONE");
            ModelResponse::text(format!("complete log: {complete}"))
        });
    let agent = Agent::builder(Arc::new(model.clone()), Arc::new(ProcessContext::new()))
        .store(store.clone())
        .session(Session::new("e2e"))
        .build()
        .unwrap();
    let wake = WakeLoop::spawn(agent.clone());
    let mut reports = wake.reports();

    let started = wake.prompt("run the long job").await.unwrap();
    assert!(started.notified.is_empty());
    let running = agent.running_tasks().await.unwrap();
    assert_eq!(running.len(), 1, "returned before the task ended");
    let log_path = running[0].log_path.clone().unwrap();
    assert!(log_path.starts_with(store.tasks_dir("e2e").unwrap()));

    let woke = next_wake(&mut reports, WAIT).await;
    let outcome = woke.outcome.unwrap();
    assert_eq!(outcome.text, "complete log: true");
    assert_eq!(outcome.notified.len(), 1);
    assert!(!agent.has_pending_task_notifications());

    let stored = store.load("e2e").unwrap();
    assert_eq!(stored, agent.session());
    drop(wake);
    agent.destroy().await.unwrap();
    assert!(store.delete("e2e").unwrap());
    assert!(!log_path.exists());
}
