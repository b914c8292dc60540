//! Detached tasks: an end told to another session is never told again, and every
//! detached end this session's model learns is told to the context once.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::{BackgroundOptions, ExecutionContext, MockContext, TaskId};

use crate::support::{TASKS, harness_with, notified, until};

fn detached_harness(model: ScriptedModel) -> crate::support::Harness {
    harness_with(model, Arc::new(MockContext::new().with_detach()), |b| b)
}

/// Starts a task on the agent's handle straight on the context (no exit callback: the
/// pull sweep finds its end).
async fn start(h: &crate::support::Harness, command: &str, detach: bool) -> TaskId {
    let handle = h.agent.handle().await.unwrap();
    h.context
        .exec_background(
            handle,
            command,
            BackgroundOptions::new(TASKS).detach(detach),
        )
        .await
        .unwrap()
        .task_id
}

#[tokio::test]
async fn an_end_reported_to_another_session_is_never_delivered() {
    let h = detached_harness(ScriptedModel::new().text("one").text("two"));
    let id = start(&h, "make", true).await;
    h.context.finish(id, 0);
    assert!(h.context.set_reported(id));
    let run = h.agent.run(RunOptions::new("status?")).await.unwrap();
    assert!(run.notified.is_empty(), "{:?}", notified(&run));
    assert_eq!(h.agent.sweep_exits().await.unwrap(), 0);
    assert!(!h.agent.has_pending_task_notifications());
    assert!(h.context.exits_told_calls().is_empty());
}

#[tokio::test]
async fn a_detached_end_delivered_by_a_run_is_told_to_the_context_once() {
    let h = detached_harness(ScriptedModel::new().text("one").text("two"));
    let plain = start(&h, "make", false).await;
    let detached = start(&h, "serve", true).await;
    assert_eq!(detached.to_string(), "bash_d1");
    h.context.finish(plain, 0);
    h.context.finish(detached, 0);
    let run = h.agent.run(RunOptions::new("status?")).await.unwrap();
    assert_eq!(notified(&run), ["bash_1", "bash_d1"]);
    until(|| !h.context.exits_told_calls().is_empty()).await;
    let again = h.agent.run(RunOptions::new("again?")).await.unwrap();
    assert!(again.notified.is_empty());
    assert_eq!(h.context.exits_told_calls(), vec![vec![detached]]);
    assert!(h.context.task(detached).unwrap().reported);
}

#[tokio::test]
async fn a_plain_end_is_never_told_to_the_context() {
    let h = detached_harness(ScriptedModel::new().text("one").text("two"));
    let plain = start(&h, "make", false).await;
    h.context.finish(plain, 0);
    let run = h.agent.run(RunOptions::new("status?")).await.unwrap();
    assert_eq!(notified(&run), ["bash_1"]);
    // A detached end afterwards: the first call the context hears is about it alone.
    let detached = start(&h, "serve", true).await;
    h.context.finish(detached, 0);
    let run = h.agent.run(RunOptions::new("and now?")).await.unwrap();
    assert_eq!(notified(&run), ["bash_d1"]);
    until(|| !h.context.exits_told_calls().is_empty()).await;
    assert_eq!(h.context.exits_told_calls(), vec![vec![detached]]);
}

#[tokio::test]
async fn a_drain_by_the_host_tells_the_context() {
    let h = detached_harness(ScriptedModel::new());
    let detached = start(&h, "serve", true).await;
    h.context.finish(detached, 0);
    let drained = h.agent.drain_notifications().await.unwrap();
    assert_eq!(drained.exits.len(), 1);
    until(|| !h.context.exits_told_calls().is_empty()).await;
    assert_eq!(h.context.exits_told_calls(), vec![vec![detached]]);
}

#[tokio::test]
async fn a_kill_by_the_model_tells_the_context() {
    let model = ScriptedModel::new()
        .tool_call("shell_kill", json!({ "task_id": "bash_d1" }))
        .text("killed");
    let h = detached_harness(model);
    let detached = start(&h, "serve", true).await;
    let run = h.agent.run(RunOptions::new("stop it")).await.unwrap();
    assert!(run.notified.is_empty());
    until(|| !h.context.exits_told_calls().is_empty()).await;
    assert_eq!(h.context.exits_told_calls(), vec![vec![detached]]);
    assert!(!h.agent.has_pending_task_notifications());
}

#[tokio::test]
async fn a_claim_by_the_host_tells_the_context_once() {
    let h = detached_harness(ScriptedModel::new());
    let detached = start(&h, "serve", true).await;
    let plain = start(&h, "make", false).await;
    h.context.finish(detached, 0);
    assert!(h.agent.claim_exit(plain));
    assert!(h.agent.claim_exit(detached));
    assert!(!h.agent.claim_exit(detached), "told already");
    until(|| !h.context.exits_told_calls().is_empty()).await;
    assert_eq!(h.context.exits_told_calls(), vec![vec![detached]]);
}
