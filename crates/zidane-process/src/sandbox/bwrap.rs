//! The Linux sandbox: the command runs under bubblewrap (`bwrap`), in user, PID and IPC
//! namespaces of its own (and a network namespace with `--network off`), on a read-only
//! view of the file system with the plan's writable directories bound back writable,
//! the held paths bound read-only over them and the denied paths hidden.
//!
//! Why bubblewrap: it is the sandbox Flatpak, Codex and Claude Code's sandbox runtime run
//! on Linux, kept by the Flatpak project, packaged by every distribution, and it works
//! unprivileged wherever user namespaces do. What it does not do is left out on purpose:
//! no `--new-session` (the task's process group and its terminal must stay ours to
//! signal), no `--die-with-parent` (the death signal follows the thread that spawned,
//! not the process; zidane's lifeline ends tasks instead).
//!
//! Inside, the task sees a `/proc` of its own PID namespace: zidane, the host and every
//! other process are not there, so their environments cannot be read and they cannot
//! be signalled or traced.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use zidane_context::NetworkAccess;

use crate::sandbox::plan::SandboxPlan;

/// The variable that names the bubblewrap program to use (a path); unset: `bwrap` on
/// `PATH`.
pub const BWRAP_ENV: &str = "ZIDANE_BWRAP";

/// The bubblewrap program: [`BWRAP_ENV`], else `bwrap` found on `PATH`.
pub(crate) fn find() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(BWRAP_ENV).filter(|path| !path.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "bubblewrap was not found at {} ({BWRAP_ENV})",
                path.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            "bubblewrap (bwrap) is not installed; install the `bubblewrap` package".to_owned()
        })
}

/// Checks that `bwrap` can build the namespaces here, by running `true` in them: a
/// container or a kernel that refuses unprivileged user namespaces (Ubuntu 24.04's
/// AppArmor restriction) fails here, with bubblewrap's own words as the reason.
pub(crate) fn probe(bwrap: &Path, network: NetworkAccess) -> Result<(), String> {
    let mut args = namespaces(network);
    args.extend(
        [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--",
            "true",
        ]
        .map(OsString::from),
    );
    let output = Command::new(bwrap)
        .args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|error| format!("bubblewrap at {} cannot be run: {error}", bwrap.display()))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim();
    Err(if said.is_empty() {
        format!("bubblewrap cannot build a sandbox here ({})", output.status)
    } else {
        format!("bubblewrap cannot build a sandbox here: {said}")
    })
}

fn namespaces(network: NetworkAccess) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["--unshare-user", "--unshare-pid", "--unshare-ipc"]
        .map(OsString::from)
        .into();
    if network == NetworkAccess::Off {
        args.push("--unshare-net".into());
    }
    args
}

/// `bwrap ARGS --`: what goes before the shell's own `argv` to run it under `plan` in
/// `cwd`. Paths of the plan that do not exist are skipped (a missing credential store
/// has nothing to hide).
pub(crate) fn prefix(bwrap: &Path, plan: &SandboxPlan, cwd: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![bwrap.as_os_str().to_owned()];
    args.extend(namespaces(plan.network));
    let mut push = |flag: &str, from: &Path, to: &Path| {
        args.push(flag.into());
        args.push(from.as_os_str().to_owned());
        args.push(to.as_os_str().to_owned());
    };
    // A held directory that is missing is made first, so it can be held; one that
    // cannot be made (a file in the way) is left to the bind, which then skips it.
    for dir in &plan.made {
        if std::fs::symlink_metadata(dir).is_err() {
            let _ = std::fs::create_dir_all(dir);
        }
    }
    push("--ro-bind", Path::new("/"), Path::new("/"));
    for dir in outermost(existing(&plan.writable)) {
        push("--bind", &dir, &dir);
    }
    for held in existing(&plan.read_only) {
        push("--ro-bind", &held, &held);
    }
    // A denied path is hidden where it really is: a link to it leads there too.
    for denied in &existing(&plan.denied) {
        match std::fs::symlink_metadata(denied) {
            Ok(meta) if meta.is_dir() => {
                args.extend(["--tmpfs".into(), denied.as_os_str().to_owned()]);
                // What stays readable inside is bound back before the cover turns
                // read-only (its mount points are made in the cover).
                for dir in existing(&plan.readable) {
                    if dir.starts_with(denied) {
                        args.extend([
                            "--ro-bind".into(),
                            dir.as_os_str().to_owned(),
                            dir.as_os_str().to_owned(),
                        ]);
                    }
                }
                args.extend(["--remount-ro".into(), denied.as_os_str().to_owned()]);
            }
            Ok(_) => {
                args.extend([
                    "--ro-bind".into(),
                    "/dev/null".into(),
                    denied.as_os_str().to_owned(),
                ]);
            }
            Err(_) => {}
        }
    }
    args.extend(["--dev", "/dev", "--proc", "/proc", "--chdir"].map(OsString::from));
    args.push(cwd.as_os_str().to_owned());
    args.push("--".into());
    args
}

/// The paths that exist, as they really are (links resolved, so a bind lands where a
/// command's path leads), each once. Every bind costs bubblewrap a remount: one for a
/// path that is not there is not made.
fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut real: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths {
        if let Ok(path) = std::fs::canonicalize(path)
            && !real.contains(&path)
        {
            real.push(path);
        }
    }
    real
}

/// Of `dirs`, those not inside another: a bind is recursive, so the outer one covers
/// them.
fn outermost(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    dirs.iter()
        .filter(|dir| {
            !dirs
                .iter()
                .any(|other| other != *dir && dir.starts_with(other))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use zidane_context::SandboxPolicy;

    use super::*;

    #[test]
    fn binds_in_order_and_skips_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".netrc"), "machine x").unwrap();
        let work = dir.path().join("work");
        let plan = SandboxPlan::new(
            &SandboxPolicy::workspace_write(&work).network(NetworkAccess::Off),
            Some(&home),
            &[PathBuf::from("/tmp")],
        );
        let args: Vec<String> = prefix(Path::new("/usr/bin/bwrap"), &plan, &work)
            .into_iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let text = args.join(" ");
        let ssh = home.join(".ssh").display().to_string();
        let netrc = home.join(".netrc").display().to_string();
        assert!(
            text.starts_with(
                "/usr/bin/bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-net --ro-bind / / --bind /tmp /tmp"
            ),
            "{text}"
        );
        // The workspace lies under /tmp here: the bind of /tmp covers it.
        assert!(
            !text.contains(&format!("--bind {}", work.display())),
            "{text}"
        );
        assert!(
            text.contains(&format!("--tmpfs {ssh} --remount-ro {ssh}")),
            "{text}"
        );
        assert!(
            text.contains(&format!("--ro-bind /dev/null {netrc}")),
            "{text}"
        );
        assert!(!text.contains(".aws"), "{text}");
        assert!(
            text.ends_with(&format!("--chdir {} --", work.display())),
            "{text}"
        );
    }
}
