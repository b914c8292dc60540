//! `wait_task` parks on the awakeable and returns the exit; a timeout returns `None`
//! and leaves the task running.

use std::time::{Duration, Instant};

use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::{BackgroundOptions, CancellationToken, ExecutionContext, TaskStatus};

use crate::support::{agent, bg, session_on, tid, tool_results};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_task_parks_on_the_awakeable_and_returns_the_exit() {
    let Some((cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let model = ScriptedModel::new()
        .tool_call("shell", bg("sleep 1; echo done; exit 4"))
        .tool_call("wait_task", serde_json::json!({ "task_id": "bash_1" }))
        .text("it ended");
    let agent = agent(model, context.clone(), handle, &cluster.store());
    let started = Instant::now();
    agent.run(RunOptions::new("build and wait")).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "the wait parked until the exit"
    );
    let results = tool_results(&agent);
    assert!(
        results.iter().any(|r| r.contains("exited 4")),
        "wait_task returned the exit: {results:?}"
    );

    // Directly: at once for an ended task, `None` on a timeout.
    let exit = context
        .wait_background(
            handle,
            tid(1),
            Duration::from_secs(5),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 4));
    let long = context
        .exec_background(handle, "sleep 30", BackgroundOptions::new("/unused"))
        .await
        .unwrap();
    let timed_out = context
        .wait_background(
            handle,
            long.task_id,
            Duration::from_millis(300),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(timed_out, None);
    let parked = context.clone();
    let waiter = tokio::spawn(async move {
        parked
            .wait_background(
                handle,
                long.task_id,
                Duration::from_secs(15),
                CancellationToken::new(),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let killed = context
        .kill_background(handle, long.task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(killed.status, TaskStatus::Killed);
    let woken = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(woken, Some(killed), "the kill resolved the parked wait");
    context.destroy(handle).await.unwrap();
}
