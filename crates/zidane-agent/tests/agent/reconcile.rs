//! The mutable `background:reconcile` hook.

use std::sync::{Arc, Mutex};

use zidane_agent::{ModelResponse, RunOptions, ScriptedModel};

use crate::support::{bg, harness, notified, tid};

fn three_tasks() -> ScriptedModel {
    ScriptedModel::new()
        .respond(
            ModelResponse::tool_use("a", "shell", bg("lint"))
                .with_tool_use("b", "shell", bg("build"))
                .with_tool_use("c", "shell", bg("test")),
        )
        .text("started")
}

#[tokio::test]
async fn the_reconcile_hook_can_filter_and_what_it_drops_is_not_offered_again() {
    let h = harness(three_tasks().text("told").text("again"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    h.agent.hooks().on_reconcile(move |reconcile| {
        log.lock().unwrap().push(
            reconcile
                .exits
                .iter()
                .map(|e| e.task_id.to_string())
                .collect::<Vec<_>>(),
        );
        reconcile.exits.retain(|exit| exit.exit_code != 0);
    });
    h.agent.run(RunOptions::new("go")).await.unwrap();
    h.context.finish(tid(1), 0);
    h.context.finish(tid(2), 2);
    h.context.finish(tid(3), 0);
    let run = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(
        notified(&run),
        ["bash_2"],
        "only the failure is news to this host"
    );
    assert_eq!(h.model.last_request().unwrap().notifications().len(), 1);
    let again = h
        .agent
        .run(RunOptions::new("anything else?"))
        .await
        .unwrap();
    assert!(again.notified.is_empty());
    let seen = seen.lock().unwrap();
    assert_eq!(seen[1], ["bash_1", "bash_2", "bash_3"], "completion order");
    assert!(seen[2].is_empty(), "dropped exits are acknowledged");
}

#[tokio::test]
async fn filtering_everything_out_of_a_drain_only_run_is_nothing_pending() {
    let h = harness(three_tasks());
    h.agent
        .hooks()
        .on_reconcile(|reconcile| reconcile.exits.clear());
    h.agent.run(RunOptions::new("go")).await.unwrap();
    h.context.finish(tid(1), 0);
    assert!(h.agent.has_pending_task_notifications());
    let error = h.agent.run(RunOptions::drain()).await.unwrap_err();
    assert!(matches!(error, zidane_agent::AgentError::NothingPending));
}
