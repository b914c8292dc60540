//! Channel 3: a client that declares the MCP tasks extension gets `wait_task` as a task.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, GetTaskParams, TaskPayload};
use serde_json::json;

use crate::support::{Pushed, WAIT, notified, start, start_task, start_with_tasks, text};

#[tokio::test(flavor = "multi_thread")]
async fn wait_task_becomes_an_mcp_task_for_a_client_that_declares_them() {
    let mut harness = start_with_tasks().await;
    let (id, _, _) = start_task(&harness, "sleep 0.3; exit 2").await;
    let serde_json::Value::Object(arguments) = json!({ "task_id": id }) else {
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
            Pushed::TaskStatus(id, status) => break (id, status),
            _ => continue,
        }
    };
    assert_eq!(pushed, (task_id.clone(), "completed".to_owned()));

    // And the poll.
    let deadline = tokio::time::Instant::now() + WAIT;
    let result = loop {
        let got = harness
            .client
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .unwrap();
        if let TaskPayload::Completed { result } = got.task.payload {
            break result;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the MCP task did not complete"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(result["structuredContent"]["exit"]["exit_code"], 2);
    let summary = result["content"][0]["text"].as_str().unwrap();
    assert!(summary.starts_with("sleep 0.3; exit 2 ("), "{summary}");

    // The completed wait told the model: no block follows.
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_tasks_gets_a_plain_result() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "true").await;
    let waited = harness.call("wait_task", json!({ "task_id": id })).await;
    assert!(text(&waited).starts_with("true ("), "{}", text(&waited));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_mcp_task_stops_the_wait_not_the_background_task() {
    let harness = start_with_tasks().await;
    let (id, pid, _) = start_task(&harness, "sleep 30").await;
    let serde_json::Value::Object(arguments) = json!({ "task_id": id }) else {
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
        .cancel_task(rmcp::model::CancelTaskParams::new(task_id.clone()))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let got = harness
            .client
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .unwrap();
        if matches!(got.task.payload, TaskPayload::Cancelled) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the wait was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
