//! A worker stopped with SIGTERM ends its tasks as it goes: nothing it started outlives
//! it, and once a worker with its id is back the tasks read `lost`.

use zidane_context::{BackgroundOptions, ExecutionContext, LOST_EXIT_CODE, TaskStatus};

use crate::support::{group_alive, list_until, session_on, until_group_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_worker_ends_its_running_tasks() {
    let Some((mut cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let started = context
        .exec_background(
            handle,
            "sleep 1000 & sleep 1000",
            BackgroundOptions::new("/unused"),
        )
        .await
        .unwrap();
    list_until(context.as_ref(), handle, |e| e.len() == 1).await;
    assert!(group_alive(started.pid), "the task and its child run");

    cluster.workers[0].stop();
    until_group_gone(started.pid).await;

    cluster.restart_worker(0);
    let entries = list_until(context.as_ref(), handle, |e| {
        e.len() == 1 && e[0].status() == TaskStatus::Lost
    })
    .await;
    assert_eq!(entries[0].exit_code(), Some(LOST_EXIT_CODE));
    context.destroy(handle).await.unwrap();
}
