//! The host's task picker and its kill action.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::Notify;
use zidane_agent::{Agent, ModelResponse, PickerKind, RunOptions, ScriptedModel};
use zidane_context::{DetachedTasks, MockContext, TaskStatus};

use crate::run_loop::Blocker;
use crate::support::{bg, harness_with, log, notified, tid, until};

#[tokio::test]
async fn running_tasks_are_listed_beside_in_flight_calls_and_can_be_killed() {
    let gate = Arc::new(Notify::new());
    let model = ScriptedModel::new()
        .respond(
            ModelResponse::tool_use("s1", "shell", bg("npm run dev -- --port 3000\nsecond line"))
                .with_tool_use("s2", "shell", bg("cargo build")),
        )
        .tool_call("block", json!({}))
        .text("done")
        .text("noted");
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.tool(Arc::new(Blocker(gate.clone())))
    });
    assert!(
        h.agent.kill_background_task("bash_1").await.is_err(),
        "no handle yet"
    );
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.run(RunOptions::new("go")).await });
    until(|| !h.agent.in_flight_tools().is_empty()).await;
    h.context.finish(tid(2), 0);

    let rows = h.agent.picker_rows().await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].kind, PickerKind::Tool);
    assert_eq!(rows[0].label, "block");
    assert_eq!(rows[0].glyph(), "·");
    assert_eq!(rows[1].kind, PickerKind::Task);
    assert_eq!(rows[1].id, "bash_1");
    assert_eq!(rows[1].label, "npm run dev -- --port 3000…");
    assert_eq!(rows[1].status, TaskStatus::Running);
    assert_eq!(rows[1].log_path.as_deref(), Some(log(1).as_ref()));
    assert_eq!(rows[1].glyph(), "⌁");

    assert!(h.agent.kill_background_task("bash_1").await.is_ok());
    assert!(
        h.agent.kill_background_task("bash_99").await.is_err(),
        "unknown id"
    );
    assert!(
        h.agent.kill_background_task("../etc").await.is_err(),
        "malformed id"
    );
    assert!(h.agent.running_tasks().await.unwrap().is_empty());
    gate.notify_one();
    run.await.unwrap().unwrap();
    let next = h.agent.run(RunOptions::new("?")).await.unwrap();
    assert_eq!(
        notified(&next),
        ["bash_2", "bash_1"],
        "a user's kill is news to the model"
    );
}

#[tokio::test]
async fn a_context_without_background_tasks_has_no_rows_and_kills_nothing() {
    let context = Arc::new(MockContext::new().with_detached_tasks(DetachedTasks::None));
    let agent = Agent::builder(Arc::new(ScriptedModel::new()), context)
        .build()
        .unwrap();
    agent.handle().await.unwrap();
    assert!(agent.running_tasks().await.unwrap().is_empty());
    assert!(agent.kill_background_task("bash_1").await.is_err());
}
