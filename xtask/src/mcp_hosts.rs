//! Real MCP hosts from npm (Claude Code, Codex, Gemini CLI, qwen-code, opencode, GitHub
//! Copilot CLI, the MCP Inspector and its older CLI) under
//! `target/`, for the tests that run `zidane mcp` inside them against a scripted model
//! (crates/zidane-cli/tests/hosts), and `playwright-core`, which drives the Inspector's
//! web UI in Debian's Chromium. Pinned, so a test pins what a known version shows
//! the model. Idempotent: packages already installed at their versions are left as
//! they are.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the hosts live (an npm prefix), relative to the workspace root.
pub const HOSTS_DIR: &str = "target/mcp-hosts";

/// The variable the tests read the hosts' location from.
pub const HOSTS_ENV: &str = "ZIDANE_MCP_HOSTS";

/// Claude Code's pinned version.
const CLAUDE_CODE: &str = "2.1.332";

/// Codex's pinned version.
const CODEX: &str = "0.169.0";

/// Each host's npm package and the version the tests were written against.
pub const PACKAGES: &[(&str, &str)] = &[
    ("@anthropic-ai/claude-code", CLAUDE_CODE),
    ("@openai/codex", CODEX),
    ("@google/gemini-cli", "0.61.0"),
    ("@qwen-code/qwen-code", "0.24.4"),
    ("opencode-ai", "1.18.33"),
    ("@github/copilot", "1.0.102"),
    ("@modelcontextprotocol/inspector", "2.12.0"),
    ("@modelcontextprotocol/inspector-cli", "1.0.3"),
    // A library only: it downloads no browser of its own (the `playwright` package
    // would), the test points it at Debian's Chromium.
    ("playwright-core", "1.65.2"),
];

/// The binaries the tests run, under `node_modules/.bin`.
const BINS: &[&str] = &[
    "claude",
    "codex",
    "gemini",
    "qwen",
    "opencode",
    "copilot",
    "mcp-inspector",
    "mcpdo",
    "mcp-inspector-cli",
];

/// The hosts whose `--version` must name their pinned version: Claude Code's bin is a
/// placeholder until its install script has put the native binary in its place.
const VERSIONED: &[(&str, &str)] = &[("claude", CLAUDE_CODE), ("codex", CODEX)];

/// Installs the pinned hosts unless they are already there; returns the prefix.
pub fn ensure() -> Result<PathBuf, String> {
    let prefix = std::env::current_dir()
        .map_err(|e| format!("mcp hosts: no current dir: {e}"))?
        .join(HOSTS_DIR);
    let missing: Vec<String> = PACKAGES
        .iter()
        .filter(|(name, version)| installed_version(&prefix, name).as_deref() != Some(*version))
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    if missing.is_empty() && runnable(&prefix) {
        println!("==> mcp hosts: {} (already installed)", prefix.display());
        return Ok(prefix);
    }
    let every: Vec<String> = PACKAGES
        .iter()
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    println!(
        "==> mcp hosts: installing {} into {}",
        every.join(" "),
        prefix.display()
    );
    std::fs::create_dir_all(&prefix)
        .map_err(|e| format!("mcp hosts: cannot create {}: {e}", prefix.display()))?;
    // `--save-exact` keeps the prefix's own package.json pinned too, so a later plain
    // `npm install` there cannot move a host to another version.
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--save-exact",
            "--prefix",
        ])
        .arg(&prefix)
        .args(&every)
        .status()
        .map_err(|e| format!("mcp hosts: cannot run npm: {e}"))?;
    if !status.success() {
        return Err(format!("mcp hosts: npm install failed: {status}"));
    }
    for (name, version) in PACKAGES {
        let found = installed_version(&prefix, name);
        if found.as_deref() != Some(*version) {
            return Err(format!(
                "mcp hosts: {name} is at {found:?} after install, not {version}"
            ));
        }
    }
    if runnable(&prefix) {
        Ok(prefix)
    } else {
        Err(format!(
            "mcp hosts: one of {BINS:?} under {} is missing or does not answer `--version` \
             with its pinned version after install (did npm skip an install script?)",
            prefix.join("node_modules/.bin").display()
        ))
    }
}

/// The version in an installed package's `package.json`, if it is installed.
fn installed_version(prefix: &Path, name: &str) -> Option<String> {
    let manifest = prefix.join("node_modules").join(name).join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// Whether every binary is there and the versioned ones name their version.
fn runnable(prefix: &Path) -> bool {
    let bin = |name: &str| prefix.join("node_modules/.bin").join(name);
    BINS.iter().all(|name| bin(name).exists())
        && VERSIONED.iter().all(|(name, version)| {
            Command::new(bin(name))
                .arg("--version")
                .output()
                .is_ok_and(|out| {
                    out.status.success() && String::from_utf8_lossy(&out.stdout).contains(version)
                })
        })
}
