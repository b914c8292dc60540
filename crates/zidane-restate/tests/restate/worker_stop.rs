//! Stopping a worker. One SIGTERM drains it: it takes no new task, says so on its
//! health endpoint, lets its running tasks end with their exits recorded (or ends them
//! at its deadline, recorded too), then exits by itself. A second SIGTERM stops it at
//! once: its tasks end as it goes, nothing it started outlives it, and once a worker
//! with its id is back they read `lost`.

use std::time::Duration;

use zidane_context::{
    BackgroundOptions, ContextError, ExecutionContext, KillReason, LOST_EXIT_CODE, TaskStatus,
};

use crate::support::{
    Cluster, WAIT, cluster, group_alive, list_until, session_on, status_of, under, until_group_gone,
};

/// `GET /health` of the worker whose ready line names its health address: the status.
async fn health(ready_line: &str) -> u16 {
    let url = ready_line
        .split("health: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no health address in {ready_line:?}"));
    reqwest::get(url).await.unwrap().status().as_u16()
}

/// Waits (bounded) for worker 0, terminated, to leave by itself with success, then starts
/// a worker with its id on its address: its tables answer only once one is back, and
/// what they say then is what the drained worker recorded (a task it did not record
/// would read `lost`).
fn leaves_then_comes_back(cluster: &mut Cluster) {
    let status = tokio::task::block_in_place(|| cluster.workers[0].exit_within(WAIT))
        .expect("the drained worker exits by itself");
    assert!(status.success(), "{status}");
    let address = cluster.workers[0].address;
    cluster.workers[0] = cluster.spawn_worker("w1", address);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_worker_drains_takes_no_new_task_and_records_the_running_ones_end() {
    let Some(mut cluster) = cluster(&[]).await else {
        return;
    };
    let listen = "127.0.0.1:0".parse().unwrap();
    let w1 = cluster.spawn_worker_with("w1", listen, |command| {
        command.args(["--label", "first", "--health", "127.0.0.1:0"]);
    });
    let w2 = cluster.spawn_worker("w2", listen);
    cluster.workers.extend([w1, w2]);
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    assert_eq!(health(&cluster.workers[0].ready_line).await, 200);
    let running = context
        .exec_background(
            handle,
            "sleep 4; exit 7",
            BackgroundOptions::new("/unused").labels(["first"]),
        )
        .await
        .unwrap();
    assert!(under(&running.output_path, &cluster.workers[0].user_dir));

    cluster.workers[0].terminate();
    let deadline = tokio::time::Instant::now() + WAIT;
    while health(&cluster.workers[0].ready_line).await != 503 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "w1 never said it drains"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // No new task lands on it: placement says why, and a start without labels goes to w2.
    let refused = context
        .exec_background(
            handle,
            "true",
            BackgroundOptions::new("/unused").labels(["first"]),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ContextError::NoMatchingWorker { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("w1: draining"), "{refused}");
    for _ in 0..2 {
        let elsewhere = context
            .exec_background(handle, "true", BackgroundOptions::new("/unused"))
            .await
            .unwrap();
        assert!(
            under(&elsewhere.output_path, &cluster.workers[1].user_dir),
            "{elsewhere:?}"
        );
    }
    assert!(
        group_alive(running.pid),
        "the running task was ended by the drain"
    );

    // The task ends on its own; its exit is recorded; then the worker leaves by itself.
    // The end was recorded before it left, so the task reads exited with its code.
    leaves_then_comes_back(&mut cluster);
    let entries = list_until(context.as_ref(), handle, |e| e.len() == 3).await;
    let ended = entries
        .iter()
        .find(|e| e.task_id == running.task_id)
        .expect("the drained task is listed");
    assert_eq!(ended.status(), TaskStatus::Exited, "{ended:?}");
    assert_eq!(ended.exit_code(), Some(7), "{ended:?}");
    context.destroy(handle).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_past_its_deadline_ends_the_tasks_and_records_their_end() {
    let Some(mut cluster) = cluster(&[]).await else {
        return;
    };
    let listen = "127.0.0.1:0".parse().unwrap();
    let w1 = cluster.spawn_worker_with("w1", listen, |command| {
        command.env("ZIDANE_WORKER_DRAIN_TIMEOUT", "1");
    });
    cluster.workers.push(w1);
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    let started = context
        .exec_background(
            handle,
            "sleep 1000 & sleep 1000",
            BackgroundOptions::new("/unused"),
        )
        .await
        .unwrap();
    list_until(context.as_ref(), handle, |e| e.len() == 1).await;

    cluster.workers[0].terminate();
    // Past its deadline the drain ended the task and recorded it before the worker left:
    // the task reads killed, not lost.
    leaves_then_comes_back(&mut cluster);
    until_group_gone(started.pid).await;
    let entries = list_until(context.as_ref(), handle, |e| e.len() == 1).await;
    assert_eq!(
        status_of(&entries, started.task_id.number()),
        TaskStatus::Killed,
        "{entries:?}"
    );
    assert_eq!(
        entries[0].kill_reason(),
        Some(KillReason::Requested),
        "{entries:?}"
    );
    context.destroy(handle).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stopped_twice_ends_its_running_tasks_at_once() {
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
