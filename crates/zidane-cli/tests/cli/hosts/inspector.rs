//! The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`, the TypeScript SDK's
//! client) lists zidane's tools and calls `shell` over stdio.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::process::Command;
use zidane_test_support::{TokenCleanup, poll_until, unique_token};

use crate::hosts::host::{BIN, GONE_WAIT, HOST_WAIT, TOKEN_VAR, hosts_dir};

/// One `--cli` invocation against `zidane mcp --user-dir <user_dir>`; its JSON answer.
async fn inspect(hosts: &Path, user_dir: &Path, token: &str, method: &[&str]) -> Value {
    let package = hosts.join("node_modules/@modelcontextprotocol/inspector-cli");
    let mut command = Command::new(hosts.join("node_modules/.bin/mcp-inspector-cli"));
    command
        // 1.0.3 checks for its `package.json` relative to the working directory but
        // imports it relative to its module: only from `build/` do the two agree.
        .current_dir(package.join("build"))
        .arg("--cli")
        .args(["-e", &format!("{TOKEN_VAR}={token}")])
        .arg(BIN)
        .args(["mcp", "--user-dir"])
        .arg(user_dir)
        .args(method)
        .env(TOKEN_VAR, token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(HOST_WAIT, command.output())
        .await
        .expect("the inspector hung")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "inspector failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // The answer is the JSON document on stdout, after any banner lines.
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {stdout}"));
    serde_json::from_str(&stdout[start..]).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_lists_the_tools_and_calls_shell() {
    let Some(hosts) = hosts_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token("inspector"));
    let listed = inspect(
        &hosts,
        dir.path(),
        cleanup.token(),
        &["--method", "tools/list"],
    )
    .await;
    let mut names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "list_tasks",
            "read_file",
            "shell",
            "shell_input",
            "shell_kill",
            "shell_screen",
            "wait_task"
        ]
    );

    let called = inspect(
        &hosts,
        dir.path(),
        cleanup.token(),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "shell",
            "--tool-arg",
            "command=echo inspected",
        ],
    )
    .await;
    assert_eq!(called["isError"], Value::Bool(false), "{called}");
    let text = called["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("inspected"), "{called}");
    assert_eq!(called["structuredContent"]["exit_code"], 0, "{called}");
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        "zidane mcp outlived the inspector",
        || zidane_test_support::processes_with_env(TOKEN_VAR, cleanup.token()).is_empty(),
    )
    .await;
}
