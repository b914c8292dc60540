//! A client that declares the MCP tasks extension gets a background start and
//! `wait_task` as MCP tasks: the start's result is the task's `<task-notification>`,
//! told once across every channel.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, TaskPayload,
};
use serde_json::{Value, json};

use crate::support::{
    Harness, Pushed, WAIT, notified, start, start_as_mcp_task, start_task, start_with_tasks, text,
};

/// The MCP task's end: its final payload, polled with `tasks/get`.
async fn settled(harness: &Harness, mcp_task: &str) -> TaskPayload {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let got = harness
            .client
            .get_task(GetTaskParams::new(mcp_task.to_owned()))
            .await
            .unwrap();
        if !matches!(got.task.payload, TaskPayload::Working) {
            return got.task.payload;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the MCP task did not settle"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn completed(payload: TaskPayload) -> serde_json::Map<String, Value> {
    match payload {
        TaskPayload::Completed { result } => result,
        other => panic!("expected a completed MCP task, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_start_is_an_mcp_task_whose_result_is_the_notification() {
    let harness = start_with_tasks().await;
    let (id, _, mcp_task) = start_as_mcp_task(&harness, "sleep 0.3; exit 2").await;
    assert_eq!(id, "bash_1");
    let result = completed(settled(&harness, &mcp_task).await);
    let told = result["content"][0]["text"].as_str().unwrap();
    assert!(told.starts_with("<task-notification>"), "{told}");
    assert!(told.contains("<task-id>bash_1</task-id>"), "{told}");
    assert!(told.contains("<exit-code>2</exit-code>"), "{told}");
    assert_eq!(result["structuredContent"]["exit"]["exit_code"], 2);
    // Told by the MCP task: never again by a tool result.
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exit_told_first_by_a_kill_is_not_told_again_by_the_mcp_task() {
    let harness = start_with_tasks().await;
    let (id, _, mcp_task) = start_as_mcp_task(&harness, "sleep 30").await;
    let killed = harness.call("shell_kill", json!({ "task_id": id })).await;
    assert!(text(&killed).contains("bash_1"), "{}", text(&killed));
    let result = completed(settled(&harness, &mcp_task).await);
    let told = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        told,
        "bash_1 has ended; its <task-notification> was already delivered."
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_background_start_s_mcp_task_kills_the_task() {
    let harness = start_with_tasks().await;
    let (_, pid, mcp_task) = start_as_mcp_task(&harness, "sleep 30").await;
    harness
        .client
        .cancel_task(CancelTaskParams::new(mcp_task.clone()))
        .await
        .unwrap();
    assert!(matches!(
        settled(&harness, &mcp_task).await,
        TaskPayload::Cancelled
    ));
    let deadline = tokio::time::Instant::now() + WAIT;
    while zidane_test_support::alive(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cancelled MCP task's process lives on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The host told the model it stopped the task: nothing is told again.
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_task_becomes_an_mcp_task_for_a_client_that_declares_them() {
    let mut harness = start_with_tasks().await;
    let (id, _, started) = start_as_mcp_task(&harness, "sleep 0.3; exit 2").await;
    let Value::Object(arguments) = json!({ "task_id": id }) else {
        unreachable!()
    };
    let response = harness
        .client
        .call_tool_once(CallToolRequestParams::new("wait_task").with_arguments(arguments))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("expected a task handle, got {response:?}")
    };
    let task_id = created.task.task_id.clone();

    // The push: notifications/tasks with the final state.
    let pushed = loop {
        match harness.next_push().await {
            Pushed::TaskStatus(id, status) if id == task_id => break status,
            _ => continue,
        }
    };
    assert_eq!(pushed, "completed");

    let result = completed(settled(&harness, &task_id).await);
    assert_eq!(result["structuredContent"]["exit"]["exit_code"], 2);
    let summary = result["content"][0]["text"].as_str().unwrap();
    assert!(
        summary.starts_with("bash_1 ended: sleep 0.3; exit 2 ("),
        "{summary}"
    );

    // One of the two told the model, and the other did not tell it again.
    let start = completed(settled(&harness, &started).await);
    let told = start["content"][0]["text"].as_str().unwrap();
    assert!(
        told.starts_with("<task-notification>") || told.contains("already delivered"),
        "{told}"
    );
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_tasks_gets_a_plain_result() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "true").await;
    let waited = harness.call("wait_task", json!({ "task_id": id })).await;
    assert!(
        text(&waited).starts_with(&format!("{id} ended: true (")),
        "{}",
        text(&waited)
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_mcp_task_stops_the_wait_not_the_background_task() {
    let harness = start_with_tasks().await;
    let (id, pid, _) = start_as_mcp_task(&harness, "sleep 30").await;
    let Value::Object(arguments) = json!({ "task_id": id }) else {
        unreachable!()
    };
    let CallToolResponse::Task(created) = harness
        .client
        .call_tool_once(CallToolRequestParams::new("wait_task").with_arguments(arguments))
        .await
        .unwrap()
    else {
        panic!("expected a task handle")
    };
    let task_id = created.task.task_id.clone();
    harness
        .client
        .cancel_task(CancelTaskParams::new(task_id.clone()))
        .await
        .unwrap();
    assert!(matches!(
        settled(&harness, &task_id).await,
        TaskPayload::Cancelled
    ));
    assert!(
        zidane_test_support::alive(pid),
        "cancelling the wait killed the task"
    );
    let listed = harness.call("list_tasks", json!({})).await;
    assert!(
        text(&listed).contains("bash_1  running"),
        "{}",
        text(&listed)
    );
    harness.close().await;
}
