//! Installs the Restate server the `zidane-restate` tests run against: the npm package
//! `@restatedev/restate-server` (a static binary), into `target/restate/`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The npm package of the Restate server.
const PACKAGE: &str = "@restatedev/restate-server";

/// The Restate version (a range: the newest patch of it) the tests are written for; the
/// compose file runs Restate's image of the same (`crate::deploy` checks it).
pub const TESTED_VERSION: &str = "1.7";

/// The binary inside the install prefix (the linux-x64 build the package ships).
const BINARY: &str = "node_modules/@restatedev/restate-server-linux-x64/bin/restate-server";

/// The variable the tests read (`zidane_restate::SERVER_ENV`).
pub const SERVER_ENV: &str = "ZIDANE_RESTATE_SERVER";

/// Makes sure `restate-server` is installed and returns its path; does nothing but a
/// version check when it already is.
pub fn install() -> Result<PathBuf, String> {
    // The workspace's target dir, wherever xtask is run from.
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let prefix = target.join("restate");
    let binary = prefix.join(BINARY);
    if runs(&binary) {
        return absolute(&binary);
    }
    let package = format!("{PACKAGE}@{TESTED_VERSION}");
    println!(
        "==> restate: npm install {package} into {}",
        prefix.display()
    );
    std::fs::create_dir_all(&prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(&package)
        .status()
        .map_err(|e| format!("restate: cannot run npm (is Node.js installed?): {e}"))?;
    if !status.success() {
        return Err(format!("restate: npm install {package} failed ({status})"));
    }
    if !runs(&binary) {
        return Err(format!(
            "restate: {} missing or not runnable after install",
            binary.display()
        ));
    }
    absolute(&binary)
}

/// Whether `binary` exists and answers `--version`.
fn runs(binary: &Path) -> bool {
    Command::new(binary)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))
}
