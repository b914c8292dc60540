//! Suppression in `tool:after`, each row both ways. Exits land mid-run (after the run's
//! drain), the model then learns the outcome — or not — and the next run tells.

use std::sync::Arc;

use serde_json::{Value, json};
use zidane_agent::{HookEvent, ModelResponse, RunOptions, ScriptedModel};
use zidane_context::MockContext;

use crate::support::{Harness, bg, harness_with, log, notified, tid};

/// Run 1: start bash_1 and bash_2; then `ended` end (mid-run) and the model makes
/// `calls`; then it stops. Run 2 ("next") reports what is left.
async fn scenario(ended: &[u64], calls: Vec<(&str, Value)>) -> (Harness, Vec<String>) {
    let context = Arc::new(MockContext::new());
    let ender = context.clone();
    let ended = ended.to_vec();
    let mut response = ModelResponse::default();
    for (i, (name, input)) in calls.into_iter().enumerate() {
        response = response.with_tool_use(format!("c{i}"), name, input);
    }
    let model = ScriptedModel::new()
        .respond(
            ModelResponse::tool_use("a", "shell", bg("job one")).with_tool_use(
                "b",
                "shell",
                bg("job two"),
            ),
        )
        .react(move |_| {
            for n in &ended {
                ender.write_output(tid(*n), b"all done\n");
                ender.finish(tid(*n), 0);
            }
            response.clone()
        })
        .text("done for now")
        .text("next");
    let h = harness_with(model, context, |b| b);
    let first = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert!(first.notified.is_empty());
    // Whatever is still running ends now, before the next run.
    for n in [1, 2] {
        h.context.finish(tid(n), 0);
    }
    let next = h.agent.run(RunOptions::new("next")).await.unwrap();
    let ids = notified(&next);
    (h, ids)
}

#[tokio::test]
async fn without_any_acknowledgement_both_exits_are_notified() {
    let (_, ids) = scenario(&[1, 2], vec![]).await;
    assert_eq!(ids, ["bash_1", "bash_2"]);
}

#[tokio::test]
async fn shell_kill_between_exit_and_next_run_wins() {
    let (h, ids) = scenario(
        &[1, 2],
        vec![("shell_kill", json!({ "task_id": "bash_1" }))],
    )
    .await;
    assert_eq!(ids, ["bash_2"], "the kill wins for bash_1 only");
    let suppressed: Vec<_> = h
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            HookEvent::ToolAfter(after) if after.name == "shell_kill" => {
                Some(after.suppressed.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(suppressed, [vec![tid(1)]]);
}

#[tokio::test]
async fn shell_kill_of_a_running_task_is_not_notified() {
    let (_, ids) = scenario(&[], vec![("shell_kill", json!({ "task_id": "bash_2" }))]).await;
    assert_eq!(ids, ["bash_1"]);
}

#[tokio::test]
async fn a_completed_wait_suppresses() {
    let (_, ids) = scenario(
        &[1],
        vec![(
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": 1000 }),
        )],
    )
    .await;
    assert_eq!(ids, ["bash_2"]);
}

#[tokio::test]
async fn a_timed_out_wait_suppresses_nothing() {
    let (h, ids) = scenario(
        &[],
        vec![(
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": 10 }),
        )],
    )
    .await;
    assert_eq!(ids, ["bash_1", "bash_2"]);
    let request = &h.model.requests()[2];
    assert!(
        request.tool_results()[0]
            .1
            .starts_with("wait_task: timed out")
    );
}

#[tokio::test]
async fn reading_an_ended_tasks_log_suppresses() {
    let (h, ids) = scenario(&[1], vec![("read_file", json!({ "path": log(1) }))]).await;
    assert_eq!(ids, ["bash_2"]);
    let request = &h.model.requests()[2];
    assert!(request.tool_results()[0].1.contains("all done"));
}

#[tokio::test]
async fn reading_a_running_tasks_log_suppresses_nothing() {
    let (_, ids) = scenario(&[2], vec![("read_file", json!({ "path": log(1) }))]).await;
    assert_eq!(ids, ["bash_2", "bash_1"], "bash_1 was running when read");
}

#[tokio::test]
async fn a_failed_kill_acknowledges_nothing() {
    let (_, ids) = scenario(&[1], vec![("shell_kill", json!({ "task_id": "bash_9" }))]).await;
    assert_eq!(ids, ["bash_1", "bash_2"]);
}
