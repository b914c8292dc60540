//! The client's MCP roots become the session's workspace roots under `zidane mcp`'s
//! default `workspace-write` sandbox, driven by the official Python MCP SDK
//! (`mcp_roots.py` beside this file): a listed root is writable, a dir that is not one
//! is not, a root added by `roots/list_changed` becomes writable and a removed one stays
//! so; a client without roots, or one that never answers `roots/list`, gets no root and
//! no wait.

use std::time::Duration;

use crate::sdk_script::{run_sdk_script, sdk_python};

/// Longest one case's client may run: a few dozen calls and a bounded wait for a root.
const CASE_BOUND: Duration = Duration::from_secs(90);

/// Runs `case` of `mcp_roots.py` against `zidane mcp` with default settings, in a fresh
/// home, workspace, two root dirs (one with a space in its name) and a dir that is never
/// a root, none under `/tmp` (which every sandboxed command may write). `None` without
/// the Python SDK.
async fn run(case: &str) -> Option<()> {
    let python = sdk_python()?;
    let root = tempfile::Builder::new()
        .prefix("roots-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let dirs = ["home", "work", "user", "root one", "root two", "other"]
        .map(|name| root.path().join(name));
    for dir in &dirs {
        std::fs::create_dir_all(dir).unwrap();
    }
    run_sdk_script(&python, "mcp_roots.py", case, &dirs, &[], CASE_BOUND, case).await;
    // The script removes each stamp it sees written; none is left behind.
    for dir in &dirs[3..] {
        assert!(
            !dir.join("stamp").exists(),
            "{case}: {} holds a stamp",
            dir.display()
        );
    }
    Some(())
}

/// A client that declares roots: its `file://` roots become writable (a percent-encoded
/// one too), other URIs are skipped, a dir that is no root stays read-only; a root added
/// on `roots/list_changed` becomes writable and the one it dropped stays writable.
#[tokio::test(flavor = "multi_thread")]
async fn a_clients_roots_become_writable() {
    run("roots").await;
}

/// A client that declares no roots is not asked, and gets no root.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_roots_gets_none() {
    run("no-roots").await;
}

/// A client that never answers `roots/list` is answered at once all the same, and gets
/// no root.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_answers_roots_list_holds_nothing_up() {
    run("silent").await;
}
