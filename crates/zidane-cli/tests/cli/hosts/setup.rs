//! The one-line setups `docs/MCP.md` gives, run as written in each host that installs
//! here, in a sandbox home with `zidane` on the `PATH`: the host's own `mcp add`, then
//! its own `mcp list`. Claude Code, Gemini CLI and qwen-code start the server to list
//! it, so "Connected" there means `zidane mcp` answered the host; Codex and Copilot CLI
//! list what they stored, which must be `zidane mcp`.

use std::path::Path;
use std::time::Duration;

use tokio::process::Command;
use zidane_test_support::{TokenCleanup, unique_token};

use super::host::{BIN, TOKEN_VAR, hosts_dir};
use crate::support::NO_SWEEP;

/// Longest one `add` or `list` may take.
const STEP: Duration = Duration::from_secs(90);

/// The documented command for each host: (its bin, the `add` words, the `list` words,
/// what `list` must show).
const SETUPS: &[(&str, &[&str], &[&str], &str)] = &[
    (
        "claude",
        &[
            "mcp", "add", "--scope", "user", "zidane", "--", "zidane", "mcp",
        ],
        &["mcp", "list"],
        "zidane: zidane mcp - ✔ Connected",
    ),
    (
        "gemini",
        &[
            "mcp", "add", "--scope", "user", "--trust", "zidane", "zidane", "mcp",
        ],
        &["mcp", "list"],
        "zidane: zidane mcp (stdio) - Connected",
    ),
    (
        "qwen",
        &[
            "mcp", "add", "--scope", "user", "--trust", "zidane", "zidane", "mcp",
        ],
        &["mcp", "list"],
        "zidane: zidane mcp (stdio) - Connected",
    ),
    (
        "codex",
        &["mcp", "add", "zidane", "--", "zidane", "mcp"],
        &["mcp", "list"],
        "zidane  zidane   mcp",
    ),
    (
        "copilot",
        &["mcp", "add", "zidane", "--", "zidane", "mcp"],
        &["mcp", "get", "zidane"],
        "Command: zidane mcp",
    ),
];

/// Runs `bin words` in the sandbox `home`, with `zidane` first on the `PATH`; its
/// stdout and stderr together, without colour.
async fn run(hosts: &Path, home: &Path, token: &str, bin: &str, words: &[&str]) -> String {
    let zidane_dir = Path::new(BIN).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(zidane_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut command = Command::new(hosts.join("node_modules/.bin").join(bin));
    command
        .args(words)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("COPILOT_HOME", home.join(".copilot"))
        .env("COPILOT_PKG_CACHE_HOME", hosts.join("copilot-cache"))
        .env("COPILOT_OFFLINE", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("NO_COLOR", "1")
        // The server each list starts carries the token, so nothing of it outlives
        // the test.
        .env(TOKEN_VAR, token)
        .env(NO_SWEEP.0, NO_SWEEP.1)
        .current_dir(home)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(STEP, command.output())
        .await
        .unwrap_or_else(|_| panic!("`{bin} {}` hung", words.join(" ")))
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "`{bin} {}` failed ({}):\n{text}",
        words.join(" "),
        output.status
    );
    strip_colour(&text)
}

/// `text` without ANSI colour sequences (qwen colours its check mark).
fn strip_colour(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn each_documented_one_line_setup_adds_a_server_the_host_can_list() {
    let Some(hosts) = hosts_dir() else { return };
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/MCP.md"))
            .unwrap();
    for (bin, add, list, shown) in SETUPS {
        let line = format!("{bin} {}", add.join(" "));
        assert!(
            docs.contains(&line),
            "docs/MCP.md does not give the setup this test runs: {line}"
        );
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token("setup"));
        run(&hosts, home.path(), cleanup.token(), bin, add).await;
        let listed = run(&hosts, home.path(), cleanup.token(), bin, list).await;
        let squeezed = listed.split_whitespace().collect::<Vec<_>>().join(" ");
        let want = shown.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            squeezed.contains(&want),
            "`{bin} {}` after `{line}` did not show {shown:?}:\n{listed}",
            list.join(" ")
        );
    }
}
