//! Two workers behind one Restate: tasks spread over both, and losing one loses only
//! its own tasks.

use zidane_context::{BackgroundOptions, ExecutionContext, TaskStatus};

use crate::support::{list_until, session_on, status_of, under, until_group_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_one_worker_loses_only_its_tasks() {
    let Some((mut cluster, context, handle)) = session_on(&["w1", "w2"]).await else {
        return;
    };
    let mut started = Vec::new();
    for _ in 0..4 {
        started.push(
            context
                .exec_background(
                    handle,
                    "sleep 3; echo done",
                    BackgroundOptions::new("/unused"),
                )
                .await
                .unwrap(),
        );
    }
    let on = |dir: &std::path::Path| {
        started
            .iter()
            .filter(|s| under(&s.output_path, dir))
            .map(|s| s.task_id.number())
            .collect::<Vec<_>>()
    };
    let on_w1 = on(&cluster.workers[0].user_dir);
    let on_w2 = on(&cluster.workers[1].user_dir);
    assert_eq!(
        (on_w1.len(), on_w2.len()),
        (2, 2),
        "spread over both workers"
    );

    cluster.workers[0].kill_hard();
    // w2's tasks run to their end while w1 is down (the list holds what w2 knows).
    let entries = list_until(context.as_ref(), handle, |e| {
        e.len() == 2 && e.iter().all(|e| e.status() == TaskStatus::Exited)
    })
    .await;
    for n in &on_w2 {
        assert_eq!(status_of(&entries, *n), TaskStatus::Exited);
    }
    // A start while w1 is down: w1's turn goes unanswered, w2 runs it.
    let late = context
        .exec_background(handle, "echo late", BackgroundOptions::new("/unused"))
        .await
        .unwrap();
    assert!(under(&late.output_path, &cluster.workers[1].user_dir));

    let address = cluster.workers[0].address;
    cluster.workers[0] = cluster.spawn_worker("w1", address);
    // Five, not six: w1, back, refused the start it got too late.
    let entries = list_until(context.as_ref(), handle, |e| {
        e.len() == 5 && e.iter().all(|e| e.status().is_terminal())
    })
    .await;
    assert_eq!(
        status_of(&entries, late.task_id.number()),
        TaskStatus::Exited
    );
    for n in &on_w1 {
        assert_eq!(status_of(&entries, *n), TaskStatus::Lost);
    }
    for n in &on_w2 {
        assert_eq!(status_of(&entries, *n), TaskStatus::Exited);
    }
    for s in &started {
        until_group_gone(s.pid).await;
    }
    context.destroy(handle).await.unwrap();
}
