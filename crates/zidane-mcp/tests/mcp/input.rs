//! Interactive tasks over MCP: a prompt answered with `shell_input`, a terminal's screen
//! read with `shell_screen`, each result within the budget, the exit told once.

use serde_json::json;

use crate::support::{is_error, notified, start, structured, text};

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_is_answered_with_shell_input_and_its_exit_told_once() {
    let harness = start().await;
    let started = harness
        .call(
            "shell",
            json!({
                "command": "read -r -p 'Deploy to which region? ' region; echo \"deploying to $region\"",
                "run_in_background": true,
                "tty": true,
            }),
        )
        .await;
    assert!(!is_error(&started), "{}", text(&started));
    let id = structured(&started)["task_id"].as_str().unwrap().to_owned();
    let ready = harness
        .call(
            "wait_task",
            json!({ "task_id": id, "until": { "pattern": "which region" } }),
        )
        .await;
    assert!(!is_error(&ready), "{}", text(&ready));
    let screen = harness.call("shell_screen", json!({ "task_id": id })).await;
    assert!(
        text(&screen).contains("Deploy to which region?"),
        "{}",
        text(&screen)
    );
    let answered = harness
        .call(
            "shell_input",
            json!({ "task_id": id, "text": "eu", "keys": ["enter"] }),
        )
        .await;
    assert!(!is_error(&answered), "{}", text(&answered));
    let shown = text(&answered);
    assert!(
        shown.len() <= zidane_mcp::MCP_DEFAULT_RESULT_BUDGET,
        "{}",
        shown.len()
    );
    assert!(shown.contains("deploying to eu"), "{shown}");
    // The exit: told by this result, or returned by the wait; never again after.
    let waited = harness
        .call("wait_task", json!({ "task_id": id, "timeout_ms": 10_000 }))
        .await;
    assert!(
        notified(&answered) == [id.clone()] || text(&waited).contains("exited 0"),
        "{}",
        text(&waited)
    );
    let after = harness.call("list_tasks", json!({})).await;
    assert!(notified(&after).is_empty(), "{}", text(&after));
    harness.close().await;
}
