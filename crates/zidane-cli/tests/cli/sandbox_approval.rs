//! A command outside the sandbox through `zidane mcp`, asked of a person by MCP
//! elicitation, driven by the official Python MCP SDK (`sandbox_approval.py` beside this
//! file): approved, it writes a file the sandbox forbids; declined, refused with
//! `approve: false`, unanswered (`ZIDANE_APPROVAL_TIMEOUT_MS`), or asked of a client
//! without elicitation, nothing runs — checked by the result and on disk.

use std::time::Duration;

use crate::sdk_script::{run_sdk_script, sdk_python};

/// Longest one case's client may run: a few calls and, at most, the short approval
/// timeout the script sets.
const CASE_BOUND: Duration = Duration::from_secs(60);

/// Runs `case` of `sandbox_approval.py` against `zidane mcp` with default settings in a
/// fresh home, workspace and outside dir (none under `/tmp`, which the sandbox lets every
/// command write); returns whether the outside dir holds the stamp afterwards.
async fn run(case: &str) -> Option<bool> {
    let python = sdk_python()?;
    let root = tempfile::Builder::new()
        .prefix("approval-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let dirs = ["home", "work", "user", "outside"].map(|name| root.path().join(name));
    for dir in &dirs {
        std::fs::create_dir_all(dir).unwrap();
    }
    run_sdk_script(
        &python,
        "sandbox_approval.py",
        case,
        &dirs,
        &[],
        CASE_BOUND,
        case,
    )
    .await;
    Some(dirs[3].join("stamp").exists())
}

/// Approved: the command runs outside the sandbox and writes where the sandbox forbids.
#[tokio::test(flavor = "multi_thread")]
async fn an_approved_command_writes_outside_the_sandbox() {
    if let Some(written) = run("accept").await {
        assert!(written, "the approved command wrote nothing");
    }
}

/// Declined, or accepted with `approve: false`: an error result says so, nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_declined_command_runs_nothing() {
    for case in ["decline", "refuse"] {
        if let Some(written) = run(case).await {
            assert!(!written, "{case}: the command ran");
        }
    }
}

/// Nobody answers within the approval timeout: nothing runs, and the session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_request_times_out_and_runs_nothing() {
    if let Some(written) = run("timeout").await {
        assert!(!written, "an unanswered request ran the command");
    }
}

/// A client that declared no elicitation is never asked: the refusal names the settings
/// the user changes, and nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_elicitation_is_refused_with_the_settings_to_change() {
    if let Some(written) = run("no-elicitation").await {
        assert!(!written, "the command ran without anyone asked");
    }
}
