//! Checking what the OS cannot pass on (environment variables, a working directory),
//! and starting `SHELL [FLAGS] -c COMMAND` (see [`Shell`]) in its own process group with
//! one output pipe: on the fast path through `vfork_spawn` (Linux), on the portable
//! path (and where the kernel refuses the fast one) through `std::process::Command`.
//! Either way the child gets exactly the [`TaskEnv`] it is given, nothing of ours.

#[cfg(unix)]
mod pipe;
pub(crate) mod shell;
pub(crate) mod task_shell;
#[cfg(unix)]
pub(crate) mod terminal;
#[cfg(unix)]
mod unix;
#[cfg(target_os = "linux")]
pub(crate) mod vfork_spawn;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
pub(crate) use unix::Child;
#[cfg(unix)]
pub(crate) use unix::{TaskInput, spawn_shell};
#[cfg(windows)]
pub(crate) use windows::{TaskInput, spawn_shell};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use zidane_context::{ContextError, Result};

use crate::containment::TaskProcesses;
use crate::task::leader::Leader;
use crate::task::output_pipe::OutputPipe;

/// A command's whole environment: the context's [`ChildEnv`](zidane_context::ChildEnv)
/// with the command's own variables and its owner marker on top. A child gets exactly
/// these variables, none of the host's besides.
pub(crate) type TaskEnv = BTreeMap<OsString, OsString>;

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

/// What a task's stdin, stdout and stderr are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskIo {
    /// stdin on `/dev/null`; stdout and stderr one pipe.
    Plain,
    /// stdin a pipe we keep the write end of; stdout and stderr one pipe.
    InputPipe,
    /// stdin, stdout and stderr a new terminal of this size, in a session of its own.
    Terminal(zidane_context::TtySize),
}

/// A started shell: its leader, the read end of its output (a pipe, or a terminal's
/// master), its input when it has one, and its log.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) leader: Leader,
    pub(crate) pid: u32,
    /// Every process of the task: its group (Unix) or its job (Windows).
    pub(crate) processes: TaskProcesses,
    /// Registered with the runtime.
    pub(crate) output: OutputPipe,
    /// Where the task's input is written: the write end of its stdin pipe, or its
    /// terminal's master (another descriptor of the one `output` reads). Non-blocking,
    /// close-on-exec. `None` for [`TaskIo::Plain`].
    pub(crate) input: Option<TaskInput>,
    /// The log created for it, when one was asked for.
    pub(crate) log: Option<std::fs::File>,
}

/// Why a spawn started nothing.
#[derive(Debug)]
pub(crate) enum SpawnError {
    /// The log could not be created.
    Log(io::Error),
    /// The shell could not be started. `log_made`: the log had been created (it is
    /// closed again, but the file is there).
    Start { source: io::Error, log_made: bool },
}

impl SpawnError {
    /// A spawn that failed before it made a log.
    pub(crate) fn start(source: impl Into<io::Error>) -> Self {
        Self::Start {
            source: source.into(),
            log_made: false,
        }
    }

    /// The operating system's error, whatever failed.
    pub(crate) fn into_source(self) -> io::Error {
        match self {
            Self::Log(source) | Self::Start { source, .. } => source,
        }
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
