//! A host-driven agent: no model, tools called by the host through `Agent::call_tool`,
//! notifications taken with `Agent::drain_notifications` — the run loop's own two steps,
//! sharing its latch.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{Agent, AgentError, Behavior, RunOptions, ScriptedModel, ToolCall};
use zidane_context::MockContext;

use crate::support::{TASKS, bg, harness, log, tid};

fn host_agent(context: Arc<MockContext>) -> Agent {
    Agent::host_driven(context)
        .behavior(Behavior::new().tasks_dir(TASKS).max_background_tasks(1))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_host_driven_agent_has_no_run() {
    let agent = host_agent(Arc::new(MockContext::new()));
    assert!(agent.is_host_driven());
    assert!(matches!(
        agent.run(RunOptions::new("hi")).await,
        Err(AgentError::HostDriven)
    ));
    agent.destroy().await.unwrap();
    assert!(matches!(
        agent
            .call_tool(ToolCall::new("1", "shell", bg("make")))
            .await,
        Err(AgentError::Destroyed)
    ));
}

#[tokio::test]
async fn call_tool_fires_the_hooks_applies_the_cap_and_suppresses() {
    let context = Arc::new(MockContext::new());
    let agent = host_agent(context.clone());
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    agent
        .hooks()
        .subscribe(move |event| sink.lock().unwrap().push(event.name().into_owned()));

    let started = agent
        .call_tool(ToolCall::new("c1", "shell", bg("make")))
        .await
        .unwrap();
    assert_eq!(started.data["task_id"], "bash_1");
    // The agent's cap of one running task, before the context is asked.
    let refused = agent
        .call_tool(ToolCall::new("c2", "shell", bg("make")))
        .await
        .unwrap();
    assert!(refused.is_error && refused.text.starts_with("too many background tasks"));

    context.finish(tid(1), 0);
    assert!(agent.has_pending_task_notifications());
    let killed = agent
        .call_tool(ToolCall::new(
            "c3",
            "shell_kill",
            json!({ "task_id": "bash_1" }),
        ))
        .await
        .unwrap();
    assert!(!killed.is_error, "{}", killed.text);
    assert!(!agent.has_pending_task_notifications());
    assert!(agent.drain_notifications().await.unwrap().is_empty());
    let names = events.lock().unwrap().clone();
    assert_eq!(
        names.iter().filter(|n| *n == "tool:after").count(),
        3,
        "{names:?}"
    );
    agent.destroy().await.unwrap();
}

#[tokio::test]
async fn a_drained_exit_is_latched_for_runs_too() {
    let h = harness(ScriptedModel::new().text("nothing to add"));
    h.agent
        .call_tool(ToolCall::new("c1", "shell", bg("make")))
        .await
        .unwrap();
    h.context.finish(tid(1), 0);
    let told = h.agent.drain_notifications().await.unwrap();
    assert_eq!(told.exits.len(), 1);
    assert_eq!(told.exits[0].output_path.display().to_string(), log(1));
    assert!(told.blocks()[0].starts_with("<task-notification>\n<task-id>bash_1</task-id>"));
    assert!(h.agent.drain_notifications().await.unwrap().is_empty());
    // The run loop shares the latch: nothing is left for a drain-only run.
    assert!(matches!(
        h.agent.run(RunOptions::drain()).await,
        Err(AgentError::NothingPending)
    ));
    h.agent.destroy().await.unwrap();
}
