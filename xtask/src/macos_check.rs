//! The macOS type-check: the whole workspace checked for `aarch64-apple-darwin` and
//! `x86_64-apple-darwin` on a Linux machine, where no macOS SDK or target std can be
//! downloaded.
//!
//! Debian's `rustc-web`, `cargo-web` and `rust-web-src` (a Rust with the std sources)
//! make it possible: that cargo and rustc (Debian's, not rustup's proxies) build std for
//! the target from source (`-Zbuild-std`, allowed by `RUSTC_BOOTSTRAP=1`), and a
//! stand-in C compiler that writes an empty object serves the build scripts that
//! compile C (ring), since a check never links. Installed with apt-get where missing;
//! skipped, saying why, where there is no apt (a developer's Mac, where a plain
//! `cargo check` does the same).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The targets checked.
const TARGETS: [&str; 2] = ["aarch64-apple-darwin", "x86_64-apple-darwin"];

/// Debian's cargo and rustc, which build std from the sources `rust-web-src` ships.
const CARGO: &str = "/usr/bin/cargo";
const RUSTC: &str = "/usr/bin/rustc";
const RUSTDOC: &str = "/usr/bin/rustdoc";
/// Where `rust-web-src` puts the std sources.
const STD_SOURCES: &str = "/usr/lib/rustlib/src/rust/library";

const PACKAGES: [&str; 3] = ["rustc-web", "cargo-web", "rust-web-src"];

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
/// this machine cannot (no apt-get to install Debian's Rust).
pub fn check(workspace: &Path) -> Result<(), String> {
    if !ensure_toolchain()? {
        return Ok(());
    }
    let target_dir = workspace.join("target").join("macos-check");
    std::fs::create_dir_all(&target_dir)
        .map_err(|e| format!("macos-check: cannot create {}: {e}", target_dir.display()))?;
    let cc = write_stand_in_cc(&target_dir)?;
    for target in TARGETS {
        let name = format!("macos-check {target}");
        println!(
            "==> {name}: {CARGO} check -Zbuild-std=std,panic_abort --target {target} --workspace --all-targets"
        );
        let started = Instant::now();
        let env_target = target.replace('-', "_");
        let mut command = Command::new(CARGO);
        command
            .current_dir(workspace)
            .args([
                "check",
                "-Zbuild-std=std,panic_abort",
                "--target",
                target,
                "--workspace",
                "--all-targets",
            ])
            // rustup's toolchain must not leak into Debian's cargo.
            .env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTFLAGS")
            .env("RUSTC", RUSTC)
            .env("RUSTDOC", RUSTDOC)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("CARGO_INCREMENTAL", "0")
            .env(format!("CC_{env_target}"), &cc)
            .env(format!("AR_{env_target}"), "/bin/true");
        let status = command
            .status()
            .map_err(|e| format!("{name}: cannot start {CARGO}: {e}"))?;
        let elapsed = started.elapsed();
        if !status.success() {
            return Err(format!("{name}: failed ({status}) after {elapsed:.1?}"));
        }
        println!("<== {name}: ok in {elapsed:.1?}");
    }
    Ok(())
}

/// Makes sure Debian's Rust with the std sources is there; `Ok(false)` (and why) where
/// it cannot be installed.
fn ensure_toolchain() -> Result<bool, String> {
    if present() {
        return Ok(true);
    }
    if Command::new("apt-get").arg("--version").output().is_err() {
        println!(
            "==> macos-check: skipped: no apt-get to install Debian's {} (on a Mac, \
             `cargo check --workspace --all-targets` does this check)",
            PACKAGES.join(", ")
        );
        return Ok(false);
    }
    println!("==> macos-check: apt-get install {}", PACKAGES.join(" "));
    crate::apt::install("macos-check", &PACKAGES)?;
    if present() {
        Ok(true)
    } else {
        Err(format!(
            "macos-check: installed {}, but {CARGO} or {STD_SOURCES} is still missing",
            PACKAGES.join(", ")
        ))
    }
}

fn present() -> bool {
    Path::new(STD_SOURCES).is_dir()
        && Command::new(CARGO)
            .arg("--version")
            .env_remove("RUSTUP_TOOLCHAIN")
            .output()
            .is_ok_and(|out| out.status.success())
}

fn write_stand_in_cc(dir: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("stand-in-cc");
    std::fs::write(&path, STAND_IN_CC)
        .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)))
        .map_err(|e| format!("macos-check: cannot write {}: {e}", path.display()))?;
    Ok(path)
}
