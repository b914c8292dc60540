//! Codex's sandbox, followed: the server declares `codex/sandbox-state-meta`, and a
//! call that carries Codex's sandbox state runs its commands no wider, on a server
//! whose own sandbox is off; a call without it runs as before, and one whose state
//! cannot be read runs read-only. Needs bubblewrap (`cargo xtask ci` installs it).
#![cfg(target_os = "linux")]

use std::path::Path;

use rmcp::model::{CallToolRequestParams, CallToolResult, RequestMetaObject};
use serde_json::{Value, json};

use crate::support::{Harness, WAIT, start};

const SANDBOX_META: &str = "codex/sandbox-state-meta";

/// Codex's state in `workspace-write` on `work` (the shape it sends, abridged), or in
/// `read-only` without a writable entry.
fn codex_state(work: &Path, writable: bool) -> Value {
    let mut entries = vec![
        json!({ "path": { "type": "special", "value": { "kind": "root" } }, "access": "read" }),
    ];
    if writable {
        entries.push(json!({ "path": { "type": "path", "path": work }, "access": "write" }));
        entries.push(
            json!({ "path": { "type": "path", "path": work.join(".git") },
            "access": "read", "missing_path_behavior": "skip" }),
        );
    }
    json!({
        "permissionProfile": { "type": "managed", "network": "restricted",
            "file_system": { "type": "restricted", "entries": entries } },
        "sandboxCwd": format!("file://{}", work.display()),
        "useLegacyLandlock": false,
    })
}

async fn shell_with(harness: &Harness, command: String, state: Option<Value>) -> CallToolResult {
    let Value::Object(arguments) = json!({ "command": command }) else {
        unreachable!()
    };
    let mut params = CallToolRequestParams::new("shell").with_arguments(arguments);
    if let Some(state) = state {
        let mut meta = RequestMetaObject::default();
        meta.0.0.insert(SANDBOX_META.to_owned(), state);
        params.meta = Some(meta);
    }
    tokio::time::timeout(WAIT, harness.client.call_tool(params))
        .await
        .expect("the call timed out")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_runs_within_codexs_sandbox() {
    let harness = start().await;
    let declared = harness
        .client
        .peer_info()
        .and_then(|info| info.capabilities.experimental.clone())
        .is_some_and(|experimental| experimental.contains_key(SANDBOX_META));
    assert!(declared, "the server must declare {SANDBOX_META}");
    // Outside the temp directories, which every sandbox lets a command write.
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (root, git) = (work.path(), work.path().join(".git"));
    std::fs::create_dir(&git).unwrap();
    let write = |name: &str| format!("echo x > '{}'", root.join(name).display());
    let cases = [
        ("read_only", Some(codex_state(root, false)), false),
        ("workspace_write", Some(codex_state(root, true)), true),
        (
            "unreadable",
            Some(json!({ "permissionProfile": "?" })),
            false,
        ),
        ("no_state", None, true),
    ];
    for (name, state, writes) in cases {
        shell_with(&harness, write(name), state).await;
        assert_eq!(root.join(name).exists(), writes, "{name}");
    }
    let into_git = format!("echo x > '{}'", git.join("hook").display());
    shell_with(&harness, into_git, Some(codex_state(root, true))).await;
    assert!(!git.join("hook").exists(), "Codex holds .git read-only");
    harness.close().await;
}
