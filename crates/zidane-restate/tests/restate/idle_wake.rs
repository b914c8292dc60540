//! A task that ends on a worker while nobody prompts wakes the idle agent: `RestateContext`
//! pushes no exit, so the `WakeLoop`'s sweep finds it and its drain-only run tells the
//! model, exactly once.

use std::time::Duration;

use zidane_agent::{ModelResponse, ScriptedModel, WakeLoop};
use zidane_context::{ExecutionContext, TaskStatus};

use crate::support::{WAIT, agent, all_ended, bg, cluster, list_until, notified};

/// How long the test waits for a second wake that must not come: several sweeps.
const NO_SECOND_WAKE: Duration = Duration::from_secs(3);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_on_a_worker_wakes_the_idle_agent_once() {
    let Some(cluster) = cluster(&["w1"]).await else {
        return;
    };
    let context = cluster.context();
    assert!(
        context.capabilities().sweep_interval.is_some(),
        "a durable context asks to be swept"
    );
    let handle = context.create_handle().await.unwrap();
    // Exactly one step reacts to a notification: a second wake would exhaust the script
    // and fail, which `next_wake` reports.
    let model = ScriptedModel::new()
        .tool_call("shell", bg("sleep 1"))
        .text("started")
        .react(|request| {
            let ids: Vec<String> = request
                .notifications()
                .iter()
                .map(|n| n.task_id.to_string())
                .collect();
            ModelResponse::text(format!("ended: {}", ids.join(",")))
        });
    let agent = agent(model.clone(), context.clone(), handle, &cluster.store());
    let wake = WakeLoop::spawn(agent);

    let started = wake.prompt("build in the background").await.unwrap();
    assert!(started.notified.is_empty());
    assert_eq!(started.text, "started");

    // Nobody prompts: the task ends on the worker and the sweep wakes the agent.
    let woken = tokio::time::timeout(WAIT, wake.next_wake())
        .await
        .expect("woken within the bound")
        .unwrap();
    assert_eq!(notified(&woken), ["bash_1"]);
    assert_eq!(woken.notified[0].exit_code, 0);
    assert_eq!(woken.text, "ended: bash_1");
    let blocks = woken.notification_blocks();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert!(
        blocks[0].starts_with("<task-notification>\n<task-id>bash_1</task-id>\n"),
        "{}",
        blocks[0]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "prompt, tool result, wake");
    assert!(requests[..2].iter().all(|r| r.notifications().is_empty()));
    assert_eq!(requests[2].prompt(), "", "a drain-only run has no prompt");
    assert!(!wake.agent().has_pending_task_notifications());

    let entries = list_until(context.as_ref(), handle, |e| all_ended(e, 1)).await;
    assert_eq!(entries[0].status(), TaskStatus::Exited);

    // Later sweeps list the same exit again: it is not told twice.
    let again = tokio::time::timeout(NO_SECOND_WAKE, wake.next_wake()).await;
    assert!(again.is_err(), "a second wake: {again:?}");
    assert_eq!(model.requests().len(), 3);

    let agent = wake.agent().clone();
    drop(wake);
    agent.destroy().await.unwrap();
    // The host injected the handle, so it ends it.
    context.destroy(handle).await.unwrap();
}
