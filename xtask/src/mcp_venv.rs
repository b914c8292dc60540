//! The Python MCP SDK (PyPI `mcp`) in a virtual environment under `target/`, for the
//! foreign-client tests of `zidane mcp` (crates/zidane-cli/tests/cli/python.rs).
//! Idempotent: a venv that already imports `mcp` is left as it is.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the venv lives, relative to the workspace root.
pub const VENV_DIR: &str = "target/mcp-venv";

/// The variable the tests read the venv's location from.
pub const VENV_ENV: &str = "ZIDANE_MCP_VENV";

/// Creates the venv and installs `mcp` unless it is already there; returns its path.
pub fn ensure() -> Result<PathBuf, String> {
    let venv = std::env::current_dir()
        .map_err(|e| format!("mcp venv: no current dir: {e}"))?
        .join(VENV_DIR);
    let python = venv.join("bin/python");
    if imports_mcp(&python) {
        println!("==> mcp venv: {} (already installed)", venv.display());
        return Ok(venv);
    }
    println!(
        "==> mcp venv: installing the Python MCP SDK into {}",
        venv.display()
    );
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", "mcp"]))?;
    if imports_mcp(&python) {
        Ok(venv)
    } else {
        Err(format!(
            "mcp venv: {} cannot import mcp after install",
            python.display()
        ))
    }
}

fn imports_mcp(python: &Path) -> bool {
    python.exists()
        && Command::new(python)
            .args(["-c", "import mcp.client.stdio, mcp.client.streamable_http"])
            .output()
            .is_ok_and(|out| out.status.success())
}

fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("mcp venv: cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("mcp venv: {command:?} failed: {status}"))
    }
}
