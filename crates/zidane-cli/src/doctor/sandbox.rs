//! The sandbox `zidane` and `zidane mcp` run commands in with no flags (the config
//! file's `[sandbox]` table): what this machine makes of it, as `--print-sandbox`
//! checks it, and when it cannot build it, why and the one line that lets it.

use std::path::Path;

use zidane::context::SandboxStatus;

use super::finding::{Finding, Status};
use super::here::Here;
use crate::sandbox_config::{SandboxArgs, SandboxFile};

/// The check's name.
const CHECK: &str = "sandbox";

/// The sandbox of `file` in the working directory, with `user_dir` hidden, checked the
/// way every context checks it (on Linux by running bubblewrap once).
pub(crate) fn sandbox(here: &Here, file: &SandboxFile, user_dir: &Path) -> Finding {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(error) => {
            return Finding::new(
                CHECK,
                Status::Broken,
                format!("sandbox: the working directory, its workspace, cannot be read: {error}"),
            );
        }
    };
    let settings = SandboxArgs::default().over(file, &cwd, &[user_dir.to_owned()]);
    let check = settings.check();
    let policy = &check.report.policy;
    match &check.report.status {
        SandboxStatus::Enforced => Finding::ok(
            CHECK,
            format!(
                "sandbox: enforced ({}, network {})",
                policy.mode, policy.network
            ),
        ),
        SandboxStatus::Off => Finding::new(
            CHECK,
            Status::Info,
            "sandbox: off, as the config file says: commands have every right of the user",
        ),
        SandboxStatus::Unavailable(reason) => {
            let consequence = match &settings.required_by {
                Some(setting) => format!("`zidane` and `zidane mcp` refuse to start ({setting})"),
                None => "commands run unsandboxed".to_owned(),
            };
            let finding = Finding::new(
                CHECK,
                Status::Broken,
                format!("sandbox: unavailable, {consequence}: {reason}"),
            );
            match fix(here) {
                Some(fix) => finding.fix(fix),
                None => finding,
            }
        }
    }
}

/// The line that lets this machine build the sandbox, judged from the machine itself
/// rather than the reason's words: the bubblewrap `ZIDANE_BWRAP` names, else one on
/// `PATH`, else user namespaces.
#[cfg(target_os = "linux")]
fn fix(here: &Here) -> Option<String> {
    use zidane::process::BWRAP_ENV;
    let named = std::env::var_os(BWRAP_ENV).filter(|path| !path.is_empty());
    if let Some(named) = &named {
        let named = Path::new(named);
        if !named.is_file() {
            return Some(format!(
                "unset {BWRAP_ENV}, or point it at bubblewrap (`command -v bwrap`)"
            ));
        }
        if !super::here::is_executable(named) {
            return Some(format!("chmod +x {}", named.display()));
        }
    }
    if named.is_none() && here.which("bwrap").is_none() {
        return Some(install_bubblewrap(
            &std::fs::read_to_string("/etc/os-release").unwrap_or_default(),
        ));
    }
    Some(allow_user_namespaces(&|name| {
        std::fs::read_to_string(Path::new("/proc/sys").join(name)).ok()
    }))
}

/// macOS always has `sandbox-exec`, and Windows has no sandbox yet: nothing to run.
#[cfg(not(target_os = "linux"))]
fn fix(_here: &Here) -> Option<String> {
    None
}

/// The package manager's line that installs bubblewrap, by the distribution
/// `/etc/os-release` (its text) names.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn install_bubblewrap(os_release: &str) -> String {
    let ids: Vec<&str> = os_release
        .lines()
        .filter_map(|line| {
            line.strip_prefix("ID=")
                .or_else(|| line.strip_prefix("ID_LIKE="))
        })
        .flat_map(|value| value.trim_matches('"').split_whitespace())
        .collect();
    let has = |names: &[&str]| ids.iter().any(|id| names.contains(id));
    if has(&["debian", "ubuntu"]) {
        "sudo apt install bubblewrap".to_owned()
    } else if has(&["fedora", "rhel", "centos"]) {
        "sudo dnf install bubblewrap".to_owned()
    } else if has(&["arch"]) {
        "sudo pacman -S bubblewrap".to_owned()
    } else if has(&["suse", "opensuse"]) {
        "sudo zypper install bubblewrap".to_owned()
    } else if has(&["alpine"]) {
        "sudo apk add bubblewrap".to_owned()
    } else {
        "install your distribution's `bubblewrap` package".to_owned()
    }
}

/// The sysctl that refuses unprivileged user namespaces here, read through `sysctl`
/// (a name under `/proc/sys` to its value), and the line that allows them; a machine
/// none of them refuses is a container's seccomp or AppArmor policy.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn allow_user_namespaces(sysctl: &dyn Fn(&str) -> Option<String>) -> String {
    let is = |name: &str, value: &str| sysctl(name).is_some_and(|read| read.trim() == value);
    if is("kernel/apparmor_restrict_unprivileged_userns", "1") {
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (AppArmor refuses \
         user namespaces; a file in /etc/sysctl.d/ keeps it)"
            .to_owned()
    } else if is("kernel/unprivileged_userns_clone", "0") {
        "sudo sysctl -w kernel.unprivileged_userns_clone=1 (a file in /etc/sysctl.d/ keeps it)"
            .to_owned()
    } else if is("user/max_user_namespaces", "0") {
        "sudo sysctl -w user.max_user_namespaces=15000 (a file in /etc/sysctl.d/ keeps it)"
            .to_owned()
    } else {
        "the kernel allows user namespaces but something refuses them (a container?): start \
         it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined, or \
         set `mode = \"off\"` in [sandbox] of the config file to run without one"
            .to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bubblewrap_is_installed_with_the_distributions_own_tool() {
        let release = |text: &str| install_bubblewrap(text);
        assert_eq!(release("ID=debian\n"), "sudo apt install bubblewrap");
        assert_eq!(
            release("ID=pop\nID_LIKE=\"ubuntu debian\"\n"),
            "sudo apt install bubblewrap"
        );
        assert_eq!(release("ID=\"fedora\"\n"), "sudo dnf install bubblewrap");
        assert_eq!(release("ID=arch\n"), "sudo pacman -S bubblewrap");
        assert_eq!(
            release(""),
            "install your distribution's `bubblewrap` package"
        );
    }

    #[test]
    fn the_sysctl_that_refuses_user_namespaces_is_named() {
        let machine = |name: &'static str, value: &'static str| {
            move |asked: &str| (asked == name).then(|| format!("{value}\n"))
        };
        let fix = allow_user_namespaces(&machine(
            "kernel/apparmor_restrict_unprivileged_userns",
            "1",
        ));
        assert!(fix.starts_with("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"));
        let fix = allow_user_namespaces(&machine("kernel/unprivileged_userns_clone", "0"));
        assert!(fix.starts_with("sudo sysctl -w kernel.unprivileged_userns_clone=1"));
        let fix = allow_user_namespaces(&machine("user/max_user_namespaces", "0"));
        assert!(fix.starts_with("sudo sysctl -w user.max_user_namespaces="));
        let fix = allow_user_namespaces(&machine("user/max_user_namespaces", "63000"));
        assert!(fix.contains("seccomp=unconfined"), "{fix}");
    }
}
