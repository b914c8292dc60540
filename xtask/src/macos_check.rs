//! The macOS type-check: the whole workspace checked for `aarch64-apple-darwin` and
//! `x86_64-apple-darwin` on a Linux machine, where no macOS SDK can be had.
//!
//! The targets' std comes from rustup (`crate::cross`); a stand-in C compiler that
//! writes an empty object serves the build scripts that compile C (ring), since a check
//! never links. Skipped, saying why, where there is no rustup (on a Mac,
//! `cargo check --workspace --all-targets` does the same).

use std::path::{Path, PathBuf};

use crate::cross;

/// The targets checked.
const TARGETS: [&str; 2] = ["aarch64-apple-darwin", "x86_64-apple-darwin"];

/// The stand-in C compiler: creates the object a build script asks for, empty.
const STAND_IN_CC: &str = r#"#!/bin/sh
# A C compiler for a type-check that never links: writes an empty object.
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -o*) out="${1#-o}"; shift ;;
    *) shift ;;
  esac
done
[ -n "$out" ] && : > "$out"
exit 0
"#;

/// Checks the workspace (`--all-targets`) for both macOS targets; `Ok` with a note when
/// this machine cannot (no rustup to add their std).
pub fn check(workspace: &Path) -> Result<(), String> {
    if !cross::ensure_std("macos-check", workspace, &TARGETS)? {
        return Ok(());
    }
    let target_dir = cross::target_dir(workspace, "macos-check");
    std::fs::create_dir_all(&target_dir)
        .map_err(|e| format!("macos-check: cannot create {}: {e}", target_dir.display()))?;
    let cc = write_stand_in_cc(&target_dir)?;
    for target in TARGETS {
        let env_target = target.replace('-', "_");
        cross::run(
            &format!("macos-check {target}"),
            cross::cargo(workspace, &target_dir)
                .args(["check", "--target", target, "--workspace", "--all-targets"])
                .env(format!("CC_{env_target}"), &cc)
                .env(format!("AR_{env_target}"), "/bin/true"),
        )?;
    }
    Ok(())
}

fn write_stand_in_cc(dir: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("stand-in-cc");
    std::fs::write(&path, STAND_IN_CC)
        .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)))
        .map_err(|e| format!("macos-check: cannot write {}: {e}", path.display()))?;
    Ok(path)
}
