//! How a step of `cargo xtask` runs a command, announced and timed (`step` for a cargo
//! command, `run` for any), and building the workspace for another OS on this Linux
//! machine, shared by the macOS check and the Windows step: the target's std, the tools
//! from Debian's archive, the cargo command both run.
//!
//! The std is rustup's prebuilt one for the pinned toolchain (`rustup target add`), so
//! the cross builds use the compiler every other step uses. Debian's own Rust
//! (`rustc-web` with `-Zbuild-std`) cannot serve: bookworm's is 1.85, older than the
//! workspace's `rust-version` and the let chains it uses.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Adds `targets`' std to the pinned toolchain (quick when it is there); `Ok(false)` with
/// a note where there is no rustup to add it.
pub fn ensure_std(step: &str, workspace: &Path, targets: &[&str]) -> Result<bool, String> {
    if Command::new("rustup").arg("--version").output().is_err() {
        println!(
            "==> {step}: skipped: no rustup to add the std for {}",
            targets.join(", ")
        );
        return Ok(false);
    }
    run(
        &format!("{step}: std"),
        // In the workspace, rustup picks the toolchain rust-toolchain.toml pins.
        Command::new("rustup")
            .current_dir(workspace)
            .args(["target", "add"])
            .args(targets),
    )?;
    Ok(true)
}

/// Makes sure the tools `present` looks for are installed, with apt-get from `packages`
/// where they are missing; `Ok(false)` with a note (`elsewhere`: what to do instead)
/// where there is no apt-get.
pub fn ensure_tools(
    step: &str,
    packages: &[&str],
    present: impl Fn() -> bool,
    elsewhere: &str,
) -> Result<bool, String> {
    if present() {
        return Ok(true);
    }
    if !crate::apt::available() {
        println!(
            "==> {step}: skipped: no apt-get to install Debian's {} ({elsewhere})",
            packages.join(", ")
        );
        return Ok(false);
    }
    println!("==> {step}: apt-get install {}", packages.join(" "));
    let started = Instant::now();
    crate::apt::install(step, packages)?;
    println!("<== {step}: installed in {:.1?}", started.elapsed());
    if present() {
        Ok(true)
    } else {
        Err(format!(
            "{step}: installed {}, but the tools are still missing",
            packages.join(", ")
        ))
    }
}

/// The build directory of a cross step: `name` under the target directory
/// (`CARGO_TARGET_DIR` when set, as cargo reads it, else the workspace's `target/`), so
/// its artifacts never mix with the host's.
pub fn target_dir(workspace: &Path, name: &str) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .and_then(|dir| std::path::absolute(dir).ok())
        .unwrap_or_else(|| workspace.join("target"))
        .join(name)
}

/// The pinned toolchain's cargo, in the workspace, building into `target_dir`.
pub fn cargo(workspace: &Path, target_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(workspace)
        .env("CARGO_TARGET_DIR", target_dir)
        // A run that builds everything once gains nothing from incremental builds.
        .env("CARGO_INCREMENTAL", "0")
        // Code another platform compiles is held to the same bar as this one's clippy:
        // a warning there (dead code behind a `cfg`, say) fails the step.
        .env("RUSTFLAGS", "-D warnings");
    command
}

/// Runs `command` to its end as the step `name`, printing what runs and how long it took.
pub fn run(name: &str, command: &mut Command) -> Result<(), String> {
    println!("==> {name}: {}", shown(command));
    let started = Instant::now();
    let status = command
        .status()
        .map_err(|e| format!("{name}: cannot start {}: {e}", shown(command)))?;
    report(name, started, status)
}

/// Says how the step `name`, started at `started`, ended: `ok in …`, or an error.
pub fn report(
    name: &str,
    started: Instant,
    status: std::process::ExitStatus,
) -> Result<(), String> {
    let elapsed = started.elapsed();
    if status.success() {
        println!("<== {name}: ok in {elapsed:.1?}");
        Ok(())
    } else {
        Err(format!("{name}: failed ({status}) after {elapsed:.1?}"))
    }
}

/// A command line as a reader would type it (without its environment).
pub fn shown(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs one `cargo` step, printing its name and duration.
pub fn step(name: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let mut command = Command::new(env!("CARGO"));
    command.args(args).envs(env.iter().copied());
    run(name, &mut command)
}
