//! The sandbox for the context's own reads: `read_file` runs in zidane, not in a
//! sandboxed command, so it checks the plan itself. It refuses what no command may read
//! (credential stores, denied paths — zidane's user dir among them) and every process's
//! `/proc` entry (zidane's own environment is `/proc/self/environ`), after following
//! links. The logs of the context's own tasks stay readable, wherever they are: they
//! are how the model sees its tasks.

use std::path::{Path, PathBuf};

use crate::sandbox::plan::SandboxPlan;

/// Trees no read reaches when the sandbox is on: the process table and the kernel's
/// view of it.
const HIDDEN_TREES: &[&str] = &["/proc", "/sys"];

/// Why `path` may not be read under `plan`, in one line; `None` when it may. `logs` are
/// the directories of the context's own task logs.
pub(crate) fn refusal(path: &Path, plan: &SandboxPlan, logs: &[PathBuf]) -> Option<String> {
    // Links are followed as the read will follow them; a path that does not resolve is
    // judged as written (the read then fails on its own).
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if real
        .parent()
        .is_some_and(|dir| logs.iter().any(|log_dir| dir == log_dir))
    {
        return None;
    }
    for candidate in [path, real.as_path()] {
        if HIDDEN_TREES.iter().any(|tree| candidate.starts_with(tree)) {
            return Some(format!(
                "sandbox: {} is another process's (or zidane's own) and is not read",
                candidate.display()
            ));
        }
        if !plan.may_read(candidate) {
            return Some(format!(
                "sandbox: {} is hidden from commands and read_file (a credential store or a denied path)",
                candidate.display()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use zidane_context::SandboxPolicy;

    use super::*;

    #[test]
    fn refuses_hidden_paths_through_links_but_not_own_logs() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let user = home.join(".local/share/zidane");
        let logs = user.join("sessions/a/tasks");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "key").unwrap();
        std::fs::write(logs.join("bash_1.log"), "out").unwrap();
        std::fs::write(user.join("token"), "t").unwrap();
        let link = dir.path().join("innocent");
        std::os::unix::fs::symlink(home.join(".ssh/id_ed25519"), &link).unwrap();
        let plan = SandboxPlan::new(
            &SandboxPolicy::workspace_write(dir.path()).deny_read(&user),
            Some(&home),
            &[],
        );
        let logs = [std::fs::canonicalize(&logs).unwrap()];
        assert!(refusal(&home.join(".ssh/id_ed25519"), &plan, &logs).is_some());
        assert!(refusal(&link, &plan, &logs).is_some());
        assert!(refusal(&user.join("token"), &plan, &logs).is_some());
        assert!(refusal(Path::new("/proc/self/environ"), &plan, &logs).is_some());
        assert_eq!(
            refusal(&user.join("sessions/a/tasks/bash_1.log"), &plan, &logs),
            None
        );
        assert_eq!(refusal(&dir.path().join("README.md"), &plan, &logs), None);
    }
}
