//! Start → exit → the agent's next run carries the notification, exactly once.

use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::{ExecutionContext, ReadRange, TaskStatus};

use crate::support::{agent, all_ended, bg, list_until, notified, session_on};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_reaches_the_next_run_exactly_once() {
    let Some((cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let model = ScriptedModel::new()
        .tool_call("shell", bg("echo built; exit 3"))
        .text("started")
        .text("told")
        .text("nothing new");
    let agent = agent(model, context.clone(), handle, &cluster.store());
    let first = agent.run(RunOptions::new("build")).await.unwrap();
    assert!(first.notified.is_empty());

    let entries = list_until(context.as_ref(), handle, |e| all_ended(e, 1)).await;
    assert_eq!(entries[0].status(), TaskStatus::Exited);
    assert_eq!(entries[0].exit_code(), Some(3));
    let log = std::fs::read_to_string(&entries[0].output_path).unwrap();
    assert_eq!(log, "built\n", "the log is on the worker's disk");
    let window = context
        .read_file(handle, &entries[0].output_path, ReadRange::default())
        .await
        .unwrap();
    assert_eq!(
        window.lines,
        ["built"],
        "served by the worker through Restate"
    );
    let outside = context
        .read_file(
            handle,
            std::path::Path::new("/etc/hostname"),
            ReadRange::default(),
        )
        .await;
    assert!(outside.is_err(), "a worker serves the handle's files only");

    let told = agent.run(RunOptions::new("status?")).await.unwrap();
    assert_eq!(notified(&told), ["bash_1"]);
    assert_eq!(told.notified[0].exit_code, 3);
    let again = agent.run(RunOptions::new("anything else?")).await.unwrap();
    assert!(again.notified.is_empty(), "notified once");
    agent.destroy().await.unwrap();
    // The host injected the handle, so it ends it.
    context.destroy(handle).await.unwrap();
}
