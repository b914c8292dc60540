//! `wait_background` never misses an exit that races with it; timeout, cancel and
//! unknown ids are `None`.

use std::time::{Duration, Instant};

use zidane_context::{CancellationToken, ExecutionContext, TaskId};
use zidane_process::ProcessContext;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_racing_the_exit_always_sees_it() {
    let f = Fixture::with(ProcessContext::builder().max_background_tasks(64)).await;
    let exits = Exits::default();
    for round in 0..30 {
        let started = f.start("true", &exits).await;
        // Waits that start before, while and after the exit.
        let (a, b) = tokio::join!(
            f.context
                .wait_background(f.handle, started.task_id, WAIT, Default::default()),
            async {
                if round % 2 == 0 {
                    tokio::task::yield_now().await;
                }
                f.context
                    .wait_background(f.handle, started.task_id, WAIT, Default::default())
                    .await
            },
        );
        let a = a.unwrap().expect("wait saw the exit");
        let b = b.unwrap().expect("wait saw the exit");
        assert_eq!(a, b);
        assert_eq!(a.exit_code, 0);
    }
    exits.wait_for(30).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_after_the_exit_returns_at_once() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f.start("exit 4", &exits).await;
    let exit = exits.wait_for(1).await.remove(0);
    let asked = Instant::now();
    let waited = f
        .context
        .wait_background(f.handle, started.task_id, WAIT, Default::default())
        .await
        .unwrap();
    assert_eq!(waited, Some(exit));
    assert!(asked.elapsed() < WAIT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_cancel_and_unknown_ids_are_none() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f.start(&wait_for_file("go"), &exits).await;

    let timed_out = f
        .context
        .wait_background(
            f.handle,
            started.task_id,
            Duration::from_millis(50),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(timed_out, None);

    let cancel = CancellationToken::new();
    cancel.cancel();
    let cancelled = f
        .context
        .wait_background(f.handle, started.task_id, WAIT, cancel)
        .await
        .unwrap();
    assert_eq!(cancelled, None);
    assert!(alive(started.pid), "waiting never touches the task");

    let unknown = f
        .context
        .wait_background(f.handle, TaskId::from_number(77), WAIT, Default::default())
        .await
        .unwrap();
    assert_eq!(unknown, None);

    f.release("go");
    exits.wait_for(1).await;
}
