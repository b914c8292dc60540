//! The official Python MCP SDK (PyPI `mcp`), a foreign client the tests drive `zidane
//! mcp` with: `cargo xtask ci` installs it into a venv and names it in
//! `ZIDANE_MCP_VENV`.

use std::path::{Path, PathBuf};

/// The variable xtask names the venv in.
pub const MCP_VENV_ENV: &str = "ZIDANE_MCP_VENV";

/// The venv's python: `$ZIDANE_MCP_VENV`, else `target/mcp-venv` of the workspace whose
/// root is `workspace`. `None`, with the reason printed, when it is not installed outside
/// CI; under `CI=true` a missing venv panics, so CI cannot skip the test.
pub fn mcp_sdk_python(workspace: &Path) -> Option<PathBuf> {
    let venv = std::env::var_os(MCP_VENV_ENV)
        .map_or_else(|| workspace.join("target/mcp-venv"), PathBuf::from);
    let python = venv.join("bin/python");
    if python.exists() {
        return Some(python);
    }
    let reason = format!(
        "no Python MCP SDK at {} (run `cargo xtask ci`, or set {MCP_VENV_ENV})",
        venv.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
    #[allow(clippy::print_stderr)]
    {
        eprintln!("skipped: {reason}");
    }
    None
}
