//! Channel 1: the next tool result carries the exit, exactly once, under the agent's
//! suppression rules.

use serde_json::json;

use crate::support::{
    WAIT, is_error, notified, start, start_as, start_task, structured, text, until_ended,
};

#[tokio::test(flavor = "multi_thread")]
async fn the_next_result_carries_the_block_and_the_one_after_does_not() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "echo done").await;
    until_ended(&harness, &id).await;
    let first = harness.call("list_tasks", json!({})).await;
    assert_eq!(notified(&first), ["bash_1"]);
    assert!(text(&first).starts_with("<task-notification>\n<task-id>bash_1</task-id>"));
    assert!(text(&first).contains("</task-notification>\n\nbash_1  exited 0"));
    let second = harness.call("list_tasks", json!({})).await;
    assert!(notified(&second).is_empty(), "{}", text(&second));
    harness.close().await;
}

/// A host that shows the model the structured content (Claude Code, Codex) shows it the
/// same block and the same answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_structured_content_carries_the_block_and_the_text_too() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "echo done").await;
    until_ended(&harness, &id).await;
    let first = structured(&harness.call("list_tasks", json!({})).await);
    let blocks = first["notifications"].as_array().expect("notifications");
    assert_eq!(blocks.len(), 1, "{first}");
    let block = blocks[0].as_str().unwrap();
    assert!(
        block.starts_with("<task-notification>\n<task-id>bash_1</task-id>")
            && block.contains("<exit-code>0</exit-code>")
            && block.contains("<output-file>"),
        "{block}"
    );
    assert!(
        first["text"]
            .as_str()
            .unwrap()
            .starts_with("bash_1  exited 0"),
        "{first}"
    );
    assert_eq!(first["tasks"][0]["task_id"], "bash_1");
    let second = structured(&harness.call("list_tasks", json!({})).await);
    assert!(second.get("notifications").is_none(), "{second}");
    harness.close().await;
}

/// For a client known to show an error result once (Codex), a call that fails carries
/// the blocks like any other.
#[tokio::test(flavor = "multi_thread")]
async fn any_tool_carries_it_even_a_failing_one() {
    let harness = start_as("codex-mcp-client").await;
    let (id, _, _) = start_task(&harness, "exit 4").await;
    until_ended(&harness, &id).await;
    let failed = harness
        .call("wait_task", json!({ "task_id": "nope" }))
        .await;
    assert!(is_error(&failed), "{}", text(&failed));
    assert_eq!(notified(&failed), ["bash_1"]);
    assert!(text(&failed).contains("<exit-code>4</exit-code>"));
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

/// qwen-code shows the model an error's content twice, and a client not known may: for
/// them a failing call carries no block, and the next successful result carries it, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_call_leaves_it_to_the_next_success_where_an_error_may_show_twice() {
    for name in [Some("qwen-cli-mcp-client-zidane"), None] {
        let harness = match name {
            Some(name) => start_as(name).await,
            None => start().await,
        };
        let (id, _, _) = start_task(&harness, "exit 4").await;
        until_ended(&harness, &id).await;
        let failed = harness
            .call("wait_task", json!({ "task_id": "nope" }))
            .await;
        assert!(is_error(&failed), "{name:?}: {}", text(&failed));
        assert!(
            !text(&failed).contains("<task-notification>"),
            "{name:?}: {}",
            text(&failed)
        );
        let next = harness.call("list_tasks", json!({})).await;
        assert!(!is_error(&next), "{name:?}: {}", text(&next));
        assert_eq!(notified(&next), ["bash_1"], "{name:?}: {}", text(&next));
        assert!(text(&next).contains("<exit-code>4</exit-code>"));
        let after = harness.call("list_tasks", json!({})).await;
        assert!(notified(&after).is_empty(), "{name:?}: {}", text(&after));
        harness.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reading_an_unrelated_file_is_not_learning_the_exit() {
    let harness = start().await;
    let other = harness.dir.path().join("notes.txt");
    std::fs::write(&other, "unrelated\n").unwrap();
    let (id, _, _) = start_task(&harness, "echo done").await;
    until_ended(&harness, &id).await;
    // The resource says "ended" as the task settles; its exit reaches the session's
    // queue a moment later. A read of an unrelated file never takes the exit for told,
    // so one of the reads carries it, and only once.
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut told = Vec::new();
    while told.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no read carried the exit"
        );
        let read = harness
            .call("read_file", json!({ "path": other.display().to_string() }))
            .await;
        told = notified(&read);
    }
    assert_eq!(told, ["bash_1"]);
    let next = harness
        .call("read_file", json!({ "path": other.display().to_string() }))
        .await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reading_the_log_after_the_exit_is_learning_it() {
    let harness = start().await;
    let (id, _, log) = start_task(&harness, "echo done").await;
    until_ended(&harness, &id).await;
    let read = harness.call("read_file", json!({ "path": log })).await;
    assert!(notified(&read).is_empty(), "{}", text(&read));
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_task_is_not_notified() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "sleep 30").await;
    let killed = harness.call("shell_kill", json!({ "task_id": id })).await;
    assert!(notified(&killed).is_empty(), "{}", text(&killed));
    let next = harness.call("list_tasks", json!({})).await;
    assert!(notified(&next).is_empty(), "{}", text(&next));
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_completed_wait_is_learning_it_and_a_timed_out_one_is_not() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "sleep 0.1").await;
    let waited = harness.call("wait_task", json!({ "task_id": id })).await;
    assert!(notified(&waited).is_empty());
    let (id, _, _) = start_task(&harness, "sleep 0.3").await;
    let timed_out = harness
        .call("wait_task", json!({ "task_id": id, "timeout_ms": 20 }))
        .await;
    assert!(
        text(&timed_out).starts_with("wait_task: timed out after 20ms"),
        "{}",
        text(&timed_out)
    );
    until_ended(&harness, &id).await;
    let next = harness.call("list_tasks", json!({})).await;
    assert_eq!(notified(&next), ["bash_2"]);
    harness.close().await;
}
