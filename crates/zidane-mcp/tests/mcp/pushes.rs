//! Channel 2: log messages and resource updates are pushed, under `logging/setLevel`,
//! and latch nothing.

use std::time::Duration;

use rmcp::model::{LoggingLevel, SetLevelRequestParams, SubscribeRequestParams};
use serde_json::json;

use crate::support::{Pushed, notified, start, start_task, until_ended};

#[tokio::test(flavor = "multi_thread")]
async fn an_exit_is_pushed_as_a_log_message_and_a_resource_update() {
    let mut harness = start().await;
    harness
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let (id, _, _) = start_task(&harness, "sleep 0.3").await;
    harness
        .client
        .subscribe(SubscribeRequestParams::new(format!("task://{id}")))
        .await
        .unwrap();
    let mut pushed = vec![harness.next_push().await, harness.next_push().await];
    pushed.sort_by_key(|p| matches!(p, Pushed::Updated(_)));
    let Pushed::Log(level, data) = &pushed[0] else {
        panic!("{pushed:?}")
    };
    assert_eq!(level, "info");
    assert_eq!(data["event"], "task_exit");
    assert_eq!(data["uri"], "task://bash_1");
    assert_eq!(data["exit"]["exit_code"], 0);
    assert_eq!(pushed[1], Pushed::Updated("task://bash_1".to_owned()));
    // The pushes latch nothing: the next result still tells the model.
    let next = harness.call("list_tasks", json!({})).await;
    assert_eq!(notified(&next), ["bash_1"]);
    harness.close().await;
}

/// A log message nobody asked for is one the 2026-07-28 protocol forbids.
#[tokio::test(flavor = "multi_thread")]
async fn no_log_message_is_pushed_before_the_client_asks_for_them() {
    let mut harness = start().await;
    let (id, _, _) = start_task(&harness, "sleep 0.3").await;
    harness
        .client
        .subscribe(SubscribeRequestParams::new(format!("task://{id}")))
        .await
        .unwrap();
    assert_eq!(
        harness.next_push().await,
        Pushed::Updated("task://bash_1".to_owned())
    );
    let next = harness.call("list_tasks", json!({})).await;
    assert_eq!(notified(&next), ["bash_1"]);
    let late = tokio::time::timeout(Duration::from_millis(300), harness.pushed.recv()).await;
    assert!(late.is_err(), "pushed unasked: {late:?}");
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn set_level_filters_the_log_messages() {
    let mut harness = start().await;
    harness
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    let (quiet, _, _) = start_task(&harness, "true").await;
    until_ended(&harness, &quiet).await;
    start_task(&harness, "exit 3").await;
    let Pushed::Log(level, data) = harness.next_push().await else {
        panic!("expected a log message")
    };
    assert_eq!(level, "warning");
    assert_eq!(data["exit"]["task_id"], "bash_2");
    assert!(harness.pushed.try_recv().is_err());
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn subscribing_to_something_that_is_not_a_task_is_refused() {
    let harness = start().await;
    let refused = harness
        .client
        .subscribe(SubscribeRequestParams::new("file:///etc/passwd"))
        .await;
    assert!(refused.is_err());
    harness.close().await;
}
