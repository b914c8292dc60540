//! The macOS sandbox: the command runs under `sandbox-exec` with a Seatbelt profile
//! generated from the plan. Everything is denied but what the profile allows: reading
//! files (but the denied paths), writing the plan's writable directories (but the held
//! paths inside them), starting processes, signalling and inspecting only processes of
//! the same sandbox, the system services a shell and its tools need, and the network
//! when it is on.
//!
//! The profile is built on every OS, so its text is pinned by a snapshot here; only a
//! Mac runs it.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use zidane_context::NetworkAccess;

use crate::sandbox::plan::SandboxPlan;

/// The program that applies a profile and runs the command.
pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What every profile allows, whatever the plan: the process itself, system
/// information, the services a shell, git and compilers use, the terminal devices.
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow file-read-metadata)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.coreservices.launchservicesd")
  (global-name "com.apple.lsd.mapdb"))
(allow ipc-posix-sem)
(allow ipc-posix-shm-read* ipc-posix-shm-write-data)
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/ptmx")
  (regex #"^/dev/ttys[0-9]+$") (literal "/dev/dtracehelper"))
(allow file-read* (literal "/dev/random") (literal "/dev/urandom"))
(allow file-read* file-write* (subpath "/dev/fd"))
"#;

/// `sandbox-exec -p PROFILE`: what goes before the shell's `argv`.
pub(crate) fn prefix(plan: &SandboxPlan, _cwd: &Path) -> Vec<OsString> {
    vec![SANDBOX_EXEC.into(), "-p".into(), profile(plan).into()]
}

/// The Seatbelt profile of `plan`.
pub(crate) fn profile(plan: &SandboxPlan) -> String {
    let mut profile = String::from(BASE);
    profile.push_str("(allow file-read*)\n");
    push_rule(&mut profile, "deny file-read* file-write*", &plan.denied);
    push_rule(&mut profile, "allow file-read*", &plan.readable);
    push_rule(&mut profile, "allow file-write*", &plan.writable);
    push_rule(&mut profile, "deny file-write*", &plan.read_only);
    push_rule(&mut profile, "deny file-write*", &plan.denied);
    if plan.network == NetworkAccess::On {
        profile.push_str("(allow network*)\n(allow system-socket)\n");
        profile.push_str("(allow mach-lookup (global-name \"com.apple.dnssd.service\"))\n");
    } else {
        profile.push_str("(allow network* (remote unix-socket))\n");
    }
    profile
}

/// `(RULE (subpath "a") (subpath "b"))`, or nothing for no paths. Seatbelt matches
/// real paths (`/tmp` is `/private/tmp`), so a path whose real one differs is named
/// both ways. A path is quoted as a Seatbelt string: backslashes and double quotes
/// escaped.
fn push_rule(profile: &mut String, rule: &str, paths: &[std::path::PathBuf]) {
    if paths.is_empty() {
        return;
    }
    let mut all: Vec<std::path::PathBuf> = Vec::with_capacity(paths.len());
    for path in paths {
        let real = std::fs::canonicalize(path).ok();
        for named in std::iter::once(path.clone()).chain(real) {
            if !all.contains(&named) {
                all.push(named);
            }
        }
    }
    let _ = write!(profile, "({rule}");
    for path in &all {
        let quoted = path
            .to_string_lossy()
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        let _ = write!(profile, "\n  (subpath \"{quoted}\")");
    }
    profile.push_str(")\n");
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use zidane_context::SandboxPolicy;

    use super::*;

    #[test]
    fn the_profile_denies_after_it_allows() {
        let plan = SandboxPlan::new(
            &SandboxPolicy::workspace_write("/Users/ada/app"),
            Some(Path::new("/Users/ada")),
            &[PathBuf::from("/private/tmp")],
        );
        let prefix = prefix(&plan, Path::new("/Users/ada/app"));
        assert_eq!(prefix[0], SANDBOX_EXEC);
        let profile = profile(&plan);
        let read_all = profile.find("(allow file-read*)\n").unwrap();
        let deny_ssh = profile.find("(subpath \"/Users/ada/.ssh\")").unwrap();
        assert!(read_all < deny_ssh, "{profile}");
        assert!(profile.contains("(subpath \"/Users/ada/app\")"));
        assert!(profile.contains("(allow network*)"));
    }

    /// The whole profile of a workspace-write plan with the network off, pinned: a
    /// change to what a Mac allows shows in review.
    #[test]
    fn the_profile_is_pinned() {
        let home = Path::new("/Users/ada");
        let plan = SandboxPlan::new(
            &SandboxPolicy::workspace_write("/Users/ada/app")
                .network(zidane_context::NetworkAccess::Off)
                .deny_read("/Users/ada/Library/Application Support/zidane"),
            Some(home),
            &[
                PathBuf::from("/private/tmp"),
                PathBuf::from("/private/var/folders/x"),
            ],
        );
        insta::assert_snapshot!(profile(&plan));
    }
}
