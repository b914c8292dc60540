//! A foreground `shell` call under a move budget on a durable context: a command that
//! ends in time is answered as a foreground call and never told; one that outlives the
//! budget moves to the background on its worker, and its end reaches the next run exactly
//! once through the pull sweep.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zidane_agent::{Agent, Behavior, ModelResponse, RunOptions, ScriptedModel, Session};
use zidane_context::ExecutionContext;

use crate::support::{all_ended, list_until, notified, session_on};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_past_its_budget_moves_to_its_worker_and_is_told_once() {
    let Some((cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let model = ScriptedModel::new()
        .tool_call("shell", json!({ "command": "echo fast" }))
        .react(|request| {
            let (_, content, is_error) = request.tool_results()[0];
            assert!(!is_error, "{content}");
            assert_eq!(content, "fast\n\nExit code: 0");
            ModelResponse::tool_use(
                "",
                "shell",
                json!({ "command": "echo start; sleep 3; echo done" }),
            )
        })
        .react(|request| {
            let (_, content, is_error) = request.tool_results()[0];
            assert!(!is_error, "{content}");
            assert!(
                content.starts_with("Still running after 1.0s: moved to the background as bash_2"),
                "{content}"
            );
            ModelResponse::text("moved")
        })
        .text("told")
        .text("nothing new");
    let agent = Agent::builder(Arc::new(model), context.clone())
        .handle(handle)
        .store(cluster.store())
        .session(Session::new("s1"))
        .behavior(Behavior::new().foreground_budget(Duration::from_secs(1)))
        .build()
        .unwrap();
    let first = agent.run(RunOptions::new("run both")).await.unwrap();
    assert!(first.notified.is_empty());

    let entries = list_until(context.as_ref(), handle, |e| all_ended(e, 2)).await;
    let log = std::fs::read_to_string(&entries[1].output_path).unwrap();
    assert_eq!(log, "start\ndone\n", "the moved task's log is whole");
    let told = agent.run(RunOptions::new("status?")).await.unwrap();
    assert_eq!(
        notified(&told),
        ["bash_2"],
        "the fast command is never told"
    );
    let again = agent.run(RunOptions::new("anything else?")).await.unwrap();
    assert!(again.notified.is_empty(), "told once");
    agent.destroy().await.unwrap();
    context.destroy(handle).await.unwrap();
}
