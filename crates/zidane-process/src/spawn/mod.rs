//! Checking what the OS cannot pass on (environment variables, a working directory),
//! and starting `SHELL [FLAGS] -c COMMAND` (see [`Shell`]) in its own process group with
//! one output pipe: on the fast path through `vfork_spawn` (Linux), on the portable
//! path (and where the kernel refuses the fast one) through `std::process::Command`.
//! Either way the child gets exactly the [`TaskEnv`] it is given, nothing of ours.

pub(crate) mod launch;
#[cfg(unix)]
mod pipe;
pub(crate) mod shell;
mod spawned;
pub(crate) mod task_shell;
#[cfg(unix)]
pub(crate) mod terminal;
#[cfg(unix)]
mod unix;
#[cfg(target_os = "linux")]
pub(crate) mod vfork_spawn;
#[cfg(windows)]
mod windows;

pub(crate) use spawned::{SpawnError, Spawned, TaskEnv, TaskInput, TaskIo};
#[cfg(unix)]
pub(crate) use unix::spawn_shell;
#[cfg(windows)]
pub(crate) use windows::spawn_shell;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use zidane_context::{ContextError, Result};

/// Refuses environment variables the OS cannot pass on. Checked before spawning, so a
/// bad variable never leaves a half-started task behind.
pub(crate) fn validate_env(env: &BTreeMap<String, String>) -> Result<()> {
    for (key, value) in env {
        if key.is_empty() || key.contains(['=', '\0']) {
            return Err(ContextError::InvalidCommand {
                reason: "an environment variable name is empty or contains `=` or a NUL byte",
            });
        }
        if value.contains('\0') {
            return Err(ContextError::InvalidCommand {
                reason: "an environment variable value contains a NUL byte",
            });
        }
    }
    Ok(())
}

/// Resolves the working directory (relative to `base`) and checks it is a directory.
pub(crate) fn resolve_cwd(base: &Path, cwd: Option<&Path>) -> Result<PathBuf> {
    let Some(cwd) = cwd else {
        return Ok(base.to_owned());
    };
    let path = base.join(cwd);
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => Ok(path),
        Ok(_) => Err(ContextError::InvalidCwd {
            path,
            cause: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        }),
        Err(source) => Err(ContextError::InvalidCwd {
            path,
            cause: source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_env_the_os_cannot_pass() {
        let one = |k: &str, v: &str| BTreeMap::from([(k.to_owned(), v.to_owned())]);
        assert!(validate_env(&one("", "x")).is_err());
        assert!(validate_env(&one("A=B", "x")).is_err());
        assert!(validate_env(&one("A\0", "x")).is_err());
        assert!(validate_env(&one("A", "x\0")).is_err());
        assert!(validate_env(&one("A", "x=y")).is_ok());
    }
}
