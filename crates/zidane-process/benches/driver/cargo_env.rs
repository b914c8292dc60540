//! Starting the driver's tasks with the environment the other drivers' tasks get.
//!
//! The harness runs this driver through `cargo bench`, and cargo hands the programs it
//! runs variables of its own: `CARGO_PKG_*` and friends, rustup's proxy variables, and
//! — the one that costs — `LD_LIBRARY_PATH` with the target and toolchain directories
//! in front. Every task inherits them, and every dynamically linked program a task
//! starts (`sh`, `sleep`) then looks for its libraries in those four directories before
//! the system's: a few failed `openat`s per program, about 10 % of the `concurrent`
//! op's time. The floor and node drivers are started directly and their tasks never
//! see these variables; a host is not started by cargo either. So, when it finds
//! cargo's variables, the driver execs itself once without what cargo added, and
//! keeps everything else of the caller's environment.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The variables cargo sets for a program it runs (see "Environment variables Cargo sets
/// for crates" in the Cargo book), and those rustup's proxy adds on the way.
const ADDED: &[&str] = &[
    "CARGO",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "RUSTUP_TOOLCHAIN",
    "RUSTUP_TOOLCHAIN_SOURCE",
    "RUST_RECURSION_COUNT",
];

/// All of `CARGO_PKG_NAME`, `CARGO_PKG_VERSION`, ….
const ADDED_PREFIX: &str = "CARGO_PKG_";

/// Execs this driver again, same arguments, without cargo's additions; returns (having
/// done nothing) when they are not there, or when the exec fails.
pub(crate) fn reexec_without_cargo_env() {
    if std::env::var_os("CARGO_MANIFEST_DIR").is_none() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    // The driver is `<target>/<profile>/deps/driver-<hash>`; cargo puts
    // `<target>/<profile>` and its `deps` on the library path.
    let Some(profile_dir) = exe.parent().and_then(Path::parent).map(Path::to_owned) else {
        return;
    };
    let toolchains = rustup_home().join("toolchains");
    let ours = |entry: &Path| entry.starts_with(&profile_dir) || entry.starts_with(&toolchains);
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (name, value) in std::env::vars_os() {
        let added = name
            .to_str()
            .is_some_and(|name| ADDED.contains(&name) || name.starts_with(ADDED_PREFIX));
        if added {
            continue;
        }
        if name == "LD_LIBRARY_PATH" {
            let kept: Vec<PathBuf> = std::env::split_paths(&value)
                .filter(|entry| !ours(entry))
                .collect();
            if kept.is_empty() {
                continue;
            }
            if let Ok(joined) = std::env::join_paths(kept) {
                env.push((name, joined));
            }
            continue;
        }
        env.push((name, value));
    }
    let error = Command::new(&exe)
        .args(std::env::args_os().skip(1))
        .env_clear()
        .envs(env)
        .exec();
    eprintln!(
        "[zidane] could not re-exec {} without cargo's environment ({error}); tasks inherit it",
        exe.display()
    );
}

/// Where rustup keeps its toolchains: `$RUSTUP_HOME`, else `~/.rustup`.
fn rustup_home() -> PathBuf {
    std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".rustup")))
        .unwrap_or_default()
}
