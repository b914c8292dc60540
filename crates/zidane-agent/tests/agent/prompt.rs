//! Promptless runs: legal only while something is pending.

use zidane_agent::{AgentError, RunOptions, ScriptedModel};

use crate::support::{bg, harness, tid};

#[tokio::test]
async fn an_empty_prompt_with_nothing_pending_is_a_typed_error() {
    let h = harness(ScriptedModel::new());
    let error = h.agent.run(RunOptions::drain()).await.unwrap_err();
    assert!(matches!(error, AgentError::NothingPending), "{error}");
    let error = h.agent.run(RunOptions::new("  \n")).await.unwrap_err();
    assert!(matches!(error, AgentError::NothingPending));
    assert!(h.agent.session().turns.is_empty(), "nothing was appended");
    assert!(h.model.requests().is_empty(), "the model was not called");
}

#[tokio::test]
async fn an_empty_prompt_is_legal_while_an_exit_is_pending() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .text("started")
        .text("make finished");
    let h = harness(model);
    h.agent.run(RunOptions::new("go")).await.unwrap();
    assert!(!h.agent.has_pending_task_notifications());
    assert!(matches!(
        h.agent.run(RunOptions::drain()).await,
        Err(AgentError::NothingPending)
    ));
    h.context.finish(tid(1), 0);
    assert!(h.agent.has_pending_task_notifications());
    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(woken.text, "make finished");
    assert_eq!(
        woken.turns[0].content.len(),
        1,
        "the seeded turn carries only the notification"
    );
    assert!(!h.agent.has_pending_task_notifications());
}

#[tokio::test]
async fn a_second_run_while_one_is_in_flight_is_busy() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let model = ScriptedModel::new()
        .tool_call("block", serde_json::json!({}))
        .text("done");
    let h = crate::support::harness_with(
        model,
        std::sync::Arc::new(zidane_context::MockContext::new()),
        |b| b.tool(std::sync::Arc::new(crate::run_loop::Blocker(gate.clone()))),
    );
    let agent = h.agent.clone();
    let running = tokio::spawn(async move { agent.run(RunOptions::new("block")).await });
    crate::support::until(|| !h.agent.in_flight_tools().is_empty()).await;
    assert!(h.agent.is_running());
    assert!(matches!(
        h.agent.run(RunOptions::new("again")).await,
        Err(AgentError::Busy)
    ));
    gate.notify_one();
    running.await.unwrap().unwrap();
    assert!(!h.agent.is_running());
}
