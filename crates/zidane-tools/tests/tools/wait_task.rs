//! wait_task over a mock: exit, timeout, cap, cancellation, unknown id.

use std::time::Duration;

use insta::assert_snapshot;
use serde_json::json;
use zidane_tools::{DEFAULT_WAIT_TIMEOUT, MAX_WAIT_TIMEOUT};

use super::common::{Harness, show};

const BOUND: Duration = Duration::from_secs(10);

#[tokio::test]
async fn returns_the_exit_summary() {
    let harness = Harness::new().await;
    let task_id = harness.start("npm run build").await;
    let mock = harness.mock.clone();
    let wait = harness.call("wait_task", json!({ "task_id": "bash_1" }));
    let finish = async move {
        tokio::task::yield_now().await;
        mock.finish(task_id, 0);
    };
    let (output, ()) = tokio::time::timeout(BOUND, async { tokio::join!(wait, finish) })
        .await
        .unwrap();
    assert_snapshot!("wait_task_exited", show(&output));
}

#[tokio::test]
async fn an_ended_task_returns_at_once() {
    let harness = Harness::new().await;
    let task_id = harness.start("cargo test").await;
    assert!(harness.mock.finish(task_id, 101));
    let output = tokio::time::timeout(
        BOUND,
        harness.call("wait_task", json!({ "task_id": "bash_1" })),
    )
    .await
    .unwrap();
    assert_snapshot!("wait_task_already_exited", show(&output));
}

#[tokio::test(start_paused = true)]
async fn timeout_leaves_the_task_running() {
    let harness = Harness::new().await;
    let task_id = harness.start("npm run dev").await;
    let output = harness
        .call(
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": 5000 }),
        )
        .await;
    assert!(!harness.mock.task(task_id).unwrap().status().is_terminal());
    let _guard = wall_clock_filtered().bind_to_scope();
    assert_snapshot!("wait_task_timed_out", show(&output));
}

/// Snapshot settings for a wait on paused time: how long the task has run is the wall
/// clock's, a millisecond or two on a slow machine, so it is not pinned.
fn wall_clock_filtered() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"started \d+ms ago", "started [RUNNING] ago");
    settings.add_filter(r#""running_ms": \d+"#, r#""running_ms": "[RUNNING]""#);
    settings
}

#[tokio::test(start_paused = true)]
async fn default_and_capped_timeouts() {
    let harness = Harness::new().await;
    harness.start("npm run dev").await;
    let started = tokio::time::Instant::now();
    let output = harness
        .call("wait_task", json!({ "task_id": "bash_1" }))
        .await;
    assert_eq!(started.elapsed(), DEFAULT_WAIT_TIMEOUT);
    assert!(
        output.text.contains("timed out after 2m 00s"),
        "{}",
        output.text
    );

    let started = tokio::time::Instant::now();
    let output = harness
        .call(
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": 86_400_000 }),
        )
        .await;
    assert_eq!(started.elapsed(), MAX_WAIT_TIMEOUT, "capped, not refused");
    assert!(!output.is_error);
    let _guard = wall_clock_filtered().bind_to_scope();
    assert_snapshot!("wait_task_capped", show(&output));
}

#[tokio::test]
async fn cancellation_returns_and_leaves_the_task_alone() {
    let harness = Harness::new().await;
    let task_id = harness.start("npm run dev").await;
    let cancel = harness.context.cancel().clone();
    let wait = harness.call("wait_task", json!({ "task_id": "bash_1" }));
    let abort = async move {
        tokio::task::yield_now().await;
        cancel.cancel();
    };
    let (output, ()) = tokio::time::timeout(BOUND, async { tokio::join!(wait, abort) })
        .await
        .unwrap();
    assert!(output.is_error);
    assert!(!harness.mock.task(task_id).unwrap().status().is_terminal());
    assert!(harness.events.lock().unwrap().exits.is_empty());
    assert_snapshot!("wait_task_cancelled", show(&output));
}

#[tokio::test]
async fn unknown_id_is_an_error_naming_it() {
    let harness = Harness::new().await;
    let output = tokio::time::timeout(
        BOUND,
        harness.call("wait_task", json!({ "task_id": "bash_7" })),
    )
    .await
    .unwrap();
    assert!(output.is_error);
    assert_snapshot!("wait_task_unknown", show(&output));
}
