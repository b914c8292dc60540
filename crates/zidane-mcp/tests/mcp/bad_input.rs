//! Bad input is an error result or a JSON-RPC error, never a crash, and the session's
//! tasks keep running.

use rmcp::model::CallToolRequestParams;
use serde_json::json;
use zidane_test_support::alive;

use crate::support::{is_error, start, start_task, text};

#[tokio::test(flavor = "multi_thread")]
async fn bad_calls_are_errors_and_tasks_live_on() {
    let harness = start().await;
    let (_, pid, _) = start_task(&harness, "sleep 30").await;

    let unknown = harness
        .call("bash_output", json!({ "task_id": "bash_1" }))
        .await;
    assert!(is_error(&unknown));
    assert_eq!(
        text(&unknown),
        "unknown tool `bash_output`. Available tools: shell, shell_kill, wait_task, read_file, shell_input, shell_screen, shell_notify, list_tasks."
    );

    let wrong = harness.call("shell_kill", json!({ "task_id": 1 })).await;
    assert!(is_error(&wrong));
    assert_eq!(
        text(&wrong),
        "shell_kill: `task_id` must be the id `shell` returned, such as bash_1, got 1"
    );

    let forged = harness
        .call("wait_task", json!({ "task_id": "../../etc" }))
        .await;
    assert!(is_error(&forged));
    assert!(text(&forged).starts_with("wait_task: invalid task_id"));

    // An argument the tool does not take, and that resembles none it does, is ignored
    // and named; one a host adds to every tool is ignored silently.
    let extra = harness.call("list_tasks", json!({ "all": true })).await;
    assert!(!is_error(&extra), "{}", text(&extra));
    assert!(
        text(&extra)
            .ends_with("Note: list_tasks does not take the argument `all`; it was ignored."),
        "{}",
        text(&extra)
    );
    let added = harness
        .call("list_tasks", json!({ "wait_for_previous": true }))
        .await;
    assert!(!is_error(&added), "{}", text(&added));
    assert!(!text(&added).contains("Note:"), "{}", text(&added));

    // No arguments at all: the tool says what is missing.
    let bare = harness
        .client
        .call_tool(CallToolRequestParams::new("shell"))
        .await
        .unwrap();
    assert!(is_error(&bare));
    assert_eq!(
        text(&bare),
        "shell: `command` is missing: give the command to run, as a string"
    );

    let huge = "x".repeat(4 << 20);
    let big = harness
        .call("shell", json!({ "command": format!("echo {huge}") }))
        .await;
    assert!(is_error(&big) || text(&big).contains("Exit code"));

    assert!(alive(pid), "the task died on bad input");
    let listed = harness.call("list_tasks", json!({})).await;
    assert!(
        text(&listed).contains("bash_1  running"),
        "{}",
        text(&listed)
    );
    harness.close().await;
}
