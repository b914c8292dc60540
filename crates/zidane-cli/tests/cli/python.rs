//! A foreign client: the official Python MCP SDK (PyPI `mcp`, installed by
//! `cargo xtask ci` into `target/mcp-venv`) drives `zidane mcp` over stdio and over
//! streamable HTTP, with `mcp_client.py` beside this file.

use std::path::Path;
use std::time::Duration;

use crate::http::start_http;
use crate::mcp_support::BIN;
use crate::sdk_script::{sdk_command, sdk_python};
use crate::support::owned_processes;

/// Runs `mcp_client.py ARGS`; fails unless it exits 0 and prints `ok` and the pids it
/// saw end. Not [`run_sdk_script`](crate::sdk_script::run_sdk_script): it leaves the
/// client its stdin and `ZIDANE_BWRAP`, and not every mode starts the binary itself.
async fn run_script(python: &Path, args: &[&str]) {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        sdk_command(python, "mcp_client.py").args(args).output(),
    )
    .await
    .expect("the Python client hung")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.starts_with("ok "),
        "python client failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_over_stdio() {
    let Some(python) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, &["stdio", BIN, dir.path().to_str().unwrap()]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_over_streamable_http() {
    let Some(python) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // No token given: the server generates one, and the client reads it from the file
    // the server names.
    let served = start_http(&[], None, dir.path()).await;
    let owner = served.child.id().unwrap();
    let token_file = served.token_file.clone().expect(&served.how);
    run_script(
        &python,
        &["http", &served.url, token_file.to_str().unwrap()],
    )
    .await;
    assert_eq!(owned_processes(owner), Vec::<u32>::new());
    let status = served.stop().await;
    assert!(status.success(), "{status}");
}

/// The same SDK starts `zidane mcp` with secrets in its environment: no command, in the
/// foreground or the background, sees them; PATH, HOME and an `--env-set` variable it
/// does.
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_sees_no_secret_of_the_server_in_a_command() {
    let Some(python) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, &["env", BIN, dir.path().to_str().unwrap()]).await;
}

/// The same SDK against `zidane mcp --move-after-secs 1`: a foreground command past the
/// second moves to the background and its end is told once; one that ends in time is
/// answered as before and never told.
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_sees_a_long_foreground_command_move() {
    let Some(python) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    run_script(&python, &["move", BIN, dir.path().to_str().unwrap()]).await;
}
