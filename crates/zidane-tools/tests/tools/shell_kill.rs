//! shell_kill over a mock: a kill, a kill of an ended task, unknown and invalid ids.

use insta::assert_snapshot;
use serde_json::json;
use zidane_context::Signal;

use super::common::{Harness, show};

#[tokio::test]
async fn kills_a_running_task() {
    let harness = Harness::new().await;
    let task_id = harness.start("npm run dev").await;
    let output = harness
        .call("shell_kill", json!({ "task_id": "bash_1" }))
        .await;
    assert_snapshot!("shell_kill_killed", show(&output));
    assert_eq!(harness.events.lock().unwrap().exits.len(), 1);
    assert!(harness.mock.task(task_id).unwrap().status().is_terminal());
}

#[tokio::test]
async fn an_ended_task_returns_its_cached_exit() {
    let harness = Harness::new().await;
    let task_id = harness.start("npm run build").await;
    assert!(harness.mock.finish(task_id, 0));
    let first = harness
        .call("shell_kill", json!({ "task_id": "bash_1" }))
        .await;
    let second = harness
        .call("shell_kill", json!({ "task_id": "bash_1" }))
        .await;
    assert_eq!(first, second, "idempotent");
    assert_eq!(harness.events.lock().unwrap().exits.len(), 1);
    assert_snapshot!("shell_kill_already_exited", show(&first));
}

#[tokio::test]
async fn a_task_ended_by_a_foreign_signal() {
    let harness = Harness::new().await;
    let task_id = harness.start("./server").await;
    assert!(harness.mock.terminate(task_id, Signal::KILL));
    let output = harness
        .call("shell_kill", json!({ "task_id": "bash_1" }))
        .await;
    assert_snapshot!("shell_kill_already_signalled", show(&output));
}

#[tokio::test]
async fn unknown_id_is_an_error_naming_it() {
    let harness = Harness::new().await;
    let output = harness
        .call("shell_kill", json!({ "task_id": "bash_9" }))
        .await;
    assert!(output.is_error);
    assert!(output.text.contains("bash_9"));
    assert_snapshot!("shell_kill_unknown", show(&output));
}
