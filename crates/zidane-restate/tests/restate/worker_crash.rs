//! A worker killed with SIGKILL: its tasks die with it, and when a worker takes over its
//! id every task that ran there reads `lost` — never `running` forever.

use std::time::Duration;

use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::{
    BackgroundOptions, CancellationToken, ExecutionContext, LOST_EXIT_CODE, TaskStatus,
};

use crate::support::{agent, list_until, notified, session_on, status_of, tid, until_group_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_s_tasks_read_lost_and_nothing_is_left_running() {
    let Some((mut cluster, context, handle)) = session_on(&["w1"]).await else {
        return;
    };
    let mut pids = Vec::new();
    for _ in 0..2 {
        let started = context
            .exec_background(
                handle,
                "sleep 1000 & wait",
                BackgroundOptions::new("/unused"),
            )
            .await
            .unwrap();
        pids.push(started.pid);
    }
    // A waiter parked on the awakeable of task 1 when the worker dies.
    let parked = context.clone();
    let waiter = tokio::spawn(async move {
        parked
            .wait_background(
                handle,
                tid(1),
                Duration::from_secs(20),
                CancellationToken::new(),
            )
            .await
    });
    list_until(context.as_ref(), handle, |e| e.len() == 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    cluster.restart_worker(0);
    // The new worker swept its handles as it started: the waiter wakes with no host
    // call in between.
    let woken = tokio::time::timeout(Duration::from_secs(15), waiter)
        .await
        .expect("the parked wait returned")
        .unwrap()
        .unwrap()
        .expect("an exit, not a timeout");
    assert_eq!(woken.status, TaskStatus::Lost);
    // The new worker ended the old one's processes (before it answered).
    for pid in &pids {
        until_group_gone(*pid).await;
    }
    let entries = list_until(context.as_ref(), handle, |e| {
        e.len() == 2 && e.iter().all(|e| e.status() == TaskStatus::Lost)
    })
    .await;
    assert_eq!(entries[0].exit_code(), Some(LOST_EXIT_CODE));
    let exit = context
        .wait_background(
            handle,
            tid(2),
            Duration::from_secs(5),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.status, TaskStatus::Lost);

    // The agent is told, with a status that says so.
    let model = ScriptedModel::new().text("two lost");
    let agent = agent(model, context.clone(), handle, &cluster.store());
    let run = agent.run(RunOptions::new("news?")).await.unwrap();
    assert_eq!(notified(&run), ["bash_1", "bash_2"]);
    let request = agent.session();
    let text = serde_json::to_string(&request.turns).unwrap();
    assert!(text.contains("<status>lost</status>"), "{text}");
    assert!(text.contains("worker lost"), "{text}");

    // The worker runs new tasks after taking over.
    let started = context
        .exec_background(handle, "exit 0", BackgroundOptions::new("/unused"))
        .await
        .unwrap();
    assert_eq!(started.task_id, tid(3));
    let entries = list_until(context.as_ref(), handle, |e| {
        e.len() == 3 && e[2].status().is_terminal()
    })
    .await;
    assert_eq!(status_of(&entries, 3), TaskStatus::Exited);
    context.destroy(handle).await.unwrap();
}
