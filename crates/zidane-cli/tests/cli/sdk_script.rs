//! Running a client script of the official Python MCP SDK (PyPI `mcp`, installed by
//! `cargo xtask ci` into `target/mcp-venv`) beside this file against `zidane mcp`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::mcp_support::BIN;
use crate::support::NO_SWEEP;

/// The Python MCP SDK's interpreter, or `None` (with the reason) outside CI.
pub fn sdk_python() -> Option<PathBuf> {
    zidane_test_support::mcp_sdk_python(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// `python SCRIPT` for `script` beside this file, without the start-up sweep
/// ([`NO_SWEEP`]).
pub fn sdk_command(python: &Path, script: &str) -> Command {
    let mut command = Command::new(python);
    command
        .arg(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/cli")
                .join(script),
        )
        .env(NO_SWEEP.0, NO_SWEEP.1);
    command
}

/// Runs `python SCRIPT CASE BIN ARGS…` with `env` added to its environment (and without
/// `ZIDANE_BWRAP`), nothing on its stdin, killed past `bound`; fails, saying `what` with
/// what the client said, unless it exits 0 with `ok` last on its stdout.
pub async fn run_sdk_script(
    python: &Path,
    script: &str,
    case: &str,
    args: impl IntoIterator<Item = impl AsRef<OsStr>>,
    env: &[(&str, &str)],
    bound: Duration,
    what: &str,
) {
    let client = sdk_command(python, script)
        .arg(case)
        .arg(BIN)
        .args(args)
        .envs(env.iter().copied())
        .env_remove("ZIDANE_BWRAP")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(bound, client)
        .await
        .unwrap_or_else(|_| panic!("{what}: the client hung"))
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.trim_end().ends_with("ok"),
        "{what} ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}
