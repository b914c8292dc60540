//! A long foreground command inside a real host, under `zidane mcp --move-after-secs 1`:
//! the scripted model runs `echo start; sleep 3; echo done` in the foreground, sees the
//! call answer that it moved to the background, and later sees the task's
//! `<task-notification>` once, at the head of the next tool result after it ended.
#![allow(clippy::print_stdout)]

use serde_json::json;
use zidane_test_support::Step;

use crate::hosts::host::{Host, Sandbox, describe};
use crate::hosts::scenarios::{bash_1_done, blocks_of};

async fn a_long_foreground_command_moves_and_its_end_is_told_once(host: Host) {
    let Some(sandbox) = Sandbox::new(host) else {
        return;
    };
    let long = json!({ "command": "echo start; sleep 3; echo done" });
    let steps = vec![
        Step::call(host.call("shell", long)),
        Step::call(host.call("shell", json!({ "command": "true" }))).gated(bash_1_done(&sandbox)),
        Step::call(host.call("list_tasks", json!({}))),
        Step::text("It moved and ended."),
    ];
    let ran = sandbox.run(steps, &["--move-after-secs", "1"]).await;
    let requests = ran.main_requests();
    assert_eq!(requests.len(), 4, "{}", describe(&requests));

    let moved = ran.result_of_step(0);
    println!("{host:?}: the long foreground command showed the model: {moved}");
    assert!(
        moved.contains("Still running after 1.0s: moved to the background as bash_1"),
        "{host:?} did not show the model the move:\n{moved}"
    );
    let after_true = ran.result_of_step(1);
    assert!(
        blocks_of(&after_true, "bash_1") == 1 && after_true.contains("<exit-code>0</exit-code>"),
        "{host:?} did not show the model bash_1's notification in the next result:\n{after_true}"
    );
    let shown: usize = ran
        .results()
        .iter()
        .map(|result| blocks_of(result, "bash_1"))
        .sum();
    assert_eq!(shown, 1, "{host:?} showed the notification {shown} times");
    // `true` ended in time: answered in the foreground, never told.
    assert!(
        ran.results()
            .iter()
            .all(|result| blocks_of(result, "bash_2") == 0),
        "{:#?}",
        ran.results()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code() {
    a_long_foreground_command_moves_and_its_end_is_told_once(Host::ClaudeCode).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex() {
    a_long_foreground_command_moves_and_its_end_is_told_once(Host::Codex).await;
}
