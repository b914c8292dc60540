//! Checking what the OS cannot pass on (environment variables, a working directory),
//! and starting `/bin/sh -c COMMAND` in its own process group with one output pipe.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::net::unix::pipe::Receiver;
use zidane_context::{ContextError, Result};

use crate::leader::Leader;

/// The shell every command runs under.
const SHELL: &str = "/bin/sh";

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
            source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
        }),
        Err(source) => Err(ContextError::InvalidCwd { path, source }),
    }
}

/// A started shell: its leader and the read end of its output pipe.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) leader: Leader,
    pub(crate) pid: u32,
    /// Non-blocking, close-on-exec, registered with the runtime's reactor.
    pub(crate) output: Receiver,
}

/// Starts `/bin/sh -c command` in a new process group, stdin on `/dev/null`, stdout and
/// stderr both the write end of one pipe (so their bytes stay in write order).
///
/// Every descriptor made here is close-on-exec, so no other task inherits this one's
/// pipe; the parent's copies of the write end are gone when this returns, so the read
/// end sees end-of-file as soon as the last process holding it exits.
pub(crate) fn spawn_shell(
    command: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> io::Result<Spawned> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    // Only our end is non-blocking: the task must block on a full pipe (backpressure),
    // not get EAGAIN. O_NONBLOCK lives on the open file description of each end.
    fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    // `try_clone` dups with F_DUPFD_CLOEXEC.
    let write_for_stderr = write.try_clone()?;

    let child = {
        let mut shell = Command::new(SHELL);
        shell
            .arg("-c")
            .arg(command)
            .current_dir(cwd)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::from(write))
            .stderr(Stdio::from(write_for_stderr))
            .process_group(0);
        // std spawns through posix_spawn (vfork-like: nothing of our address space is
        // copied). The leader is reaped by `Leader`, not by a pidfd: see leader.rs.
        shell.spawn()?
        // `shell` drops here, and with it the parent's copies of the write end.
    };
    let pid = child.id();
    // "Unchecked" only skips tokio's fstat that the descriptor is a readable pipe: we
    // just made it one, and made it non-blocking above.
    let output = Receiver::from_owned_fd_unchecked(read)?;
    Ok(Spawned {
        leader: Leader::new(child),
        pid,
        output,
    })
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
