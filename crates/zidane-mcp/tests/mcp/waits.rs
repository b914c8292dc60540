//! `wait_task` sized to the client: its default and cap under the client's request
//! ceiling, said in its description, and progress while it waits.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
use serde_json::json;

use crate::support::{Pushed, WAIT, start, start_task, start_with, text};

#[tokio::test(flavor = "multi_thread")]
async fn a_client_not_known_here_is_told_a_cap_under_a_minute() {
    let harness = start().await;
    let tools = harness.client.list_all_tools().await.unwrap();
    let wait = tools.iter().find(|tool| tool.name == "wait_task").unwrap();
    let description = wait.description.as_deref().unwrap();
    assert!(
        description.contains("(default 50 seconds, at most 50 seconds)"),
        "{description}"
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wait_stops_at_the_cap_with_a_still_running_answer() {
    let harness = start_with(|options| options.wait_cap(Duration::from_secs(1))).await;
    let (id, _, _) = start_task(&harness, "echo warming up; exec sleep 60").await;
    for timeout_ms in [None, Some(600_000)] {
        let mut arguments = json!({ "task_id": id });
        if let Some(ms) = timeout_ms {
            arguments["timeout_ms"] = json!(ms);
        }
        let result = harness.call("wait_task", arguments).await;
        let shown = text(&result);
        assert!(
            shown.starts_with("wait_task: timed out after 1s; bash_1 is still running (started "),
            "{shown}"
        );
        assert!(
            shown.contains("Last lines of its log:\n  warming up\n"),
            "{shown}"
        );
        assert_eq!(result.is_error, Some(false));
    }
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wait_with_a_progress_token_reports_progress() {
    let mut harness = start_with(|options| options.wait_cap(Duration::from_secs(2))).await;
    let (id, _, _) = start_task(&harness, "exec sleep 60").await;
    let mut params = CallToolRequestParams::new("wait_task")
        .with_arguments(json!({ "task_id": id }).as_object().unwrap().clone());
    params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        NumberOrString::Number(7),
    )));
    let result = tokio::time::timeout(WAIT, harness.client.call_tool(params))
        .await
        .unwrap()
        .unwrap();
    assert!(text(&result).contains("still running"));
    // Sent before the result; the client may hand them to its handler after it.
    let mut progress = Vec::new();
    while progress.len() < 2 {
        if let Pushed::Progress(waited, message) = harness.next_push().await {
            progress.push((waited, message));
        }
    }
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(
        progress.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "{progress:?}"
    );
    assert!(
        progress[0].1.starts_with("still waiting after "),
        "{progress:?}"
    );
    harness.close().await;
}

/// A second wait on the same task joins the one in progress: it returns with it, at the
/// task's exit, not at its own shorter timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_wait_on_the_same_task_joins_the_one_in_progress() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "sleep 0.6; exit 4").await;
    let first = harness.call("wait_task", json!({ "task_id": id, "timeout_ms": 20_000 }));
    let second = async {
        // After the first is in flight.
        tokio::time::sleep(Duration::from_millis(150)).await;
        harness
            .call("wait_task", json!({ "task_id": id, "timeout_ms": 100 }))
            .await
    };
    let (first, second) = tokio::join!(first, second);
    for waited in [&first, &second] {
        let text = text(waited);
        assert!(
            text.starts_with("bash_1 ended: sleep 0.6; exit 4 ("),
            "{text}"
        );
    }
    harness.close().await;
}
