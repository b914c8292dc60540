//! The session's end — the client closing it, or the server's shutdown signal — kills
//! every task.

use zidane_test_support::alive;

use crate::support::{start, start_task, until_dead};

#[tokio::test(flavor = "multi_thread")]
async fn closing_the_session_kills_every_task() {
    let harness = start().await;
    let (_, first, _) = start_task(&harness, "sleep 60").await;
    let (_, second, _) = start_task(&harness, "trap '' TERM; sleep 60").await;
    assert!(alive(first) && alive(second));
    harness.close().await;
    // The teardown returned: nothing may be left.
    assert!(!alive(first), "pid {first} survived the session");
    assert!(!alive(second), "pid {second} survived the session");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shutdown_signal_kills_every_task() {
    let harness = start().await;
    let (_, pid, _) = start_task(&harness, "sleep 60").await;
    harness.stop.notify_one();
    tokio::time::timeout(crate::support::WAIT, harness.server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    until_dead(pid).await;
}
