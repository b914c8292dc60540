//! An exit waits for its task's event follower only while there is something to
//! follow: a task started without `notify_on`, or whose patterns were cleared, is told
//! as soon as its exit callback fires — no follower, no hand-off, nothing to wait for.
//!
//! The runtime is single-threaded and nothing here yields between the exit callback
//! and the check, so a follower task could not have run: an exit that needed one would
//! still be held.

use serde_json::json;
use zidane_agent::ScriptedModel;

use crate::support::{bg, harness, tid};

#[tokio::test]
async fn a_task_started_without_patterns_is_deliverable_when_its_exit_fires() {
    let h = harness(ScriptedModel::new());
    let started = h
        .agent
        .call_tool(zidane_agent::ToolCall::new("1", "shell", bg("make")))
        .await
        .unwrap();
    assert!(!started.is_error, "{}", started.text);

    assert!(h.context.finish(tid(1), 0));
    assert!(h.agent.has_pending_task_notifications());
    let told = h.agent.drain_notifications().await.unwrap();
    assert_eq!(told.exits.len(), 1);
    assert_eq!(told.exits[0].task_id, tid(1));
    assert!(told.events.is_empty());
}

#[tokio::test]
async fn a_task_whose_patterns_were_cleared_is_deliverable_when_its_exit_fires() {
    let h = harness(ScriptedModel::new());
    let mut start = bg("make");
    start["notify_on"] = json!("error");
    let started = h
        .agent
        .call_tool(zidane_agent::ToolCall::new("1", "shell", start))
        .await
        .unwrap();
    assert!(!started.is_error, "{}", started.text);
    let cleared = h
        .agent
        .call_tool(zidane_agent::ToolCall::new(
            "2",
            "shell_notify",
            json!({ "task_id": "bash_1", "notify_on": [] }),
        ))
        .await
        .unwrap();
    assert!(
        cleared.text.contains("patterns cleared"),
        "{}",
        cleared.text
    );

    // Its follower has not run since the patterns were cleared.
    assert!(h.context.finish(tid(1), 0));
    assert!(
        h.agent.has_pending_task_notifications(),
        "the exit of a task with nothing to follow is not held"
    );
    let told = h.agent.drain_notifications().await.unwrap();
    assert_eq!(told.exits.len(), 1);
    assert_eq!(told.exits[0].task_id, tid(1));
}
