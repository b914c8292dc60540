//! `shell_kill` through Restate kills the task's whole process group on the worker.

use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::{ExecutionContext, TaskStatus};

use crate::support::{agent, bg, group_alive, list_until, session_on, status_of, until_group_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_kill_kills_the_group_on_the_worker() {
    let Some((cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let model = ScriptedModel::new()
        .tool_call("shell", bg("sleep 1000 & sleep 1000 & wait"))
        .text("started")
        .tool_call("shell_kill", serde_json::json!({ "task_id": "bash_1" }))
        .text("killed");
    let agent = agent(model, context.clone(), handle, &cluster.store());
    agent.run(RunOptions::new("serve")).await.unwrap();
    let entries = list_until(context.as_ref(), handle, |e| e.len() == 1).await;
    let pgid = entries[0].pid;
    assert!(group_alive(pgid), "the task and its children run");

    let run = agent.run(RunOptions::new("stop it")).await.unwrap();
    assert!(run.notified.is_empty(), "the kill told the model already");
    until_group_gone(pgid).await;
    let entries = context.list_background(handle).await.unwrap();
    assert_eq!(status_of(&entries, 1), TaskStatus::Killed);
    // Idempotent: a second kill returns the same exit.
    let again = context
        .kill_background(handle, entries[0].task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.status, TaskStatus::Killed);
    context.destroy(handle).await.unwrap();
}
