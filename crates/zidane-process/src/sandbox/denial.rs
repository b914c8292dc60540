//! Telling the model which rule a failed command ran into: a command's output is read
//! for the errors a denial causes (`Read-only file system`, `No such file or
//! directory` under a hidden path, `Permission denied`), and the path they name is
//! checked against the plan. One line comes back, naming the path and the rule.

use std::path::{Path, PathBuf};

use crate::sandbox::plan::SandboxPlan;

/// The errors a sandbox's denial shows up as.
const DENIAL_ERRORS: &[&str] = &[
    "Read-only file system",
    "No such file or directory",
    "Permission denied",
    "Operation not permitted",
];

/// The line naming the rule a failed command ran into, if its output shows one.
/// Relative paths are taken from `cwd`.
pub(crate) fn explain(output: &str, plan: &SandboxPlan, cwd: &Path) -> Option<String> {
    for line in output.lines() {
        let Some(at) = DENIAL_ERRORS.iter().find_map(|error| line.find(error)) else {
            continue;
        };
        let read_only = line.contains("Read-only file system");
        // The path nearest before the error is the one it is about (`/bin/sh: 1: cannot
        // create /x: …` names the shell first); Python names it after.
        let (before, after) = line.split_at(at);
        let mut paths = paths_in(before, cwd);
        paths.reverse();
        paths.extend(paths_in(after, cwd));
        for path in paths {
            if !plan.may_read(&path) {
                return Some(format!(
                    "sandbox: {} is hidden from commands (a credential store or a denied path)",
                    path.display()
                ));
            }
            if read_only && let Some(denial) = plan.write_denial(&path) {
                return Some(denial);
            }
        }
    }
    None
}

/// Most bytes of a failed task's log read for a denial: its end, where the error is.
const LOG_TAIL_BYTES: u64 = 16 * 1024;

/// [`explain`] of the end of a task's log at `path`; `None` when it cannot be read.
pub(crate) fn explain_log(path: &Path, plan: &SandboxPlan, cwd: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(LOG_TAIL_BYTES)))
        .ok()?;
    let mut tail = Vec::new();
    file.take(LOG_TAIL_BYTES).read_to_end(&mut tail).ok()?;
    explain(&String::from_utf8_lossy(&tail), plan, cwd)
}

/// The paths a piece of error output names: words holding a `/`, without the quotes,
/// colons and brackets around them.
fn paths_in(line: &str, cwd: &Path) -> Vec<PathBuf> {
    line.split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| {
                matches!(c, '\'' | '"' | ':' | ',' | '`' | '‘' | '’' | '(' | ')')
            })
        })
        .filter(|word| word.contains('/'))
        .map(|word| {
            let path = Path::new(word);
            if path.is_absolute() {
                path.to_path_buf()
            } else {
                cwd.join(path)
            }
        })
        .collect()
}

// Unix paths: a sandbox runs, and its denials are told, only on Unix.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use zidane_context::SandboxPolicy;

    use super::*;

    fn plan() -> SandboxPlan {
        SandboxPlan::new(
            &SandboxPolicy::workspace_write("/work"),
            Some(Path::new("/home/u")),
            &[PathBuf::from("/tmp")],
        )
    }

    #[test]
    fn names_the_rule_from_the_shells_words() {
        let cwd = Path::new("/work");
        for output in [
            "/bin/sh: 1: cannot create /home/u/.bashrc: Read-only file system",
            "bash: line 1: /home/u/.bashrc: Read-only file system",
            "touch: cannot touch '/home/u/.bashrc': Read-only file system",
            "PermissionError: [Errno 30] Read-only file system: '/home/u/.bashrc'",
        ] {
            assert_eq!(
                explain(output, &plan(), cwd).as_deref(),
                Some("sandbox: /home/u/.bashrc is outside the writable roots (workspace-write)"),
                "{output}"
            );
        }
        assert_eq!(
            explain(
                "cat: /home/u/.ssh/id_ed25519: No such file or directory",
                &plan(),
                cwd
            )
            .as_deref(),
            Some(
                "sandbox: /home/u/.ssh/id_ed25519 is hidden from commands (a credential store or a denied path)"
            )
        );
        assert_eq!(
            explain(
                "touch: cannot touch '.git/hooks/pre-commit': Read-only file system",
                &plan(),
                cwd
            )
            .as_deref(),
            Some(
                "sandbox: /work/.git/hooks/pre-commit is kept read-only inside the writable roots"
            )
        );
    }

    #[test]
    fn says_nothing_of_other_failures() {
        let cwd = Path::new("/work");
        assert_eq!(
            explain(
                "cat: /work/missing: No such file or directory",
                &plan(),
                cwd
            ),
            None
        );
        assert_eq!(
            explain("error[E0308]: mismatched types", &plan(), cwd),
            None
        );
        assert_eq!(
            explain(
                "touch: cannot touch '/tmp/x': Read-only file system",
                &plan(),
                cwd
            ),
            None
        );
    }
}
