//! Whether a host lets a long tool call finish: a `wait_task` of 150 s on a task that
//! runs longer, with zidane's own cap lifted above it. Ignored by default (it takes
//! minutes): `cargo nextest run -p zidane-cli --test cli --run-ignored only hosts::ceiling`.

use std::time::Duration;

use serde_json::json;
use zidane_test_support::Step;

use crate::hosts::host::{HOST_WAIT, Host, Sandbox};

/// How long the wait asks for: what docs/MCP.md reports each tested host let finish.
const WAIT: Duration = Duration::from_secs(150);

async fn a_long_wait_is_answered(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let timeout_ms = u64::try_from(WAIT.as_millis()).unwrap();
    let steps = vec![
        Step::call(host.call(
            "shell",
            json!({ "command": "sleep 600", "run_in_background": true }),
        )),
        Step::call(host.call(
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": timeout_ms }),
        )),
        Step::text("Waited."),
    ];
    let ran = sandbox
        .run_within(WAIT + HOST_WAIT, steps, &["--wait-cap-secs", "600"])
        .await;
    let answer = ran.result_of_step(1);
    assert!(
        answer.contains("bash_1") && answer.contains("still running"),
        "{host:?} did not pass on the wait's own answer after {:?}:\n{answer}",
        ran.round_trip(1)
    );
    assert!(ran.round_trip(1) >= WAIT, "{:?}", ran.round_trip(1));
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "takes minutes: run on purpose"]
async fn claude_code() {
    a_long_wait_is_answered(Host::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "takes minutes: run on purpose"]
async fn codex() {
    a_long_wait_is_answered(Host::Codex).await;
}
