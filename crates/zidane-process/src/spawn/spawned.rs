//! What starting a command takes and gives back, on every platform: its environment,
//! its stdin and output, the started shell, why a spawn started nothing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;

use crate::containment::TaskProcesses;
use crate::task::leader::Leader;
use crate::task::output_pipe::OutputPipe;

/// A command's whole environment: the context's [`ChildEnv`](zidane_context::ChildEnv)
/// with the command's own variables and its owner marker on top. A child gets exactly
/// these variables, none of the host's besides.
pub(crate) type TaskEnv = BTreeMap<OsString, OsString>;

/// The write end of a task's input: its stdin pipe, or its terminal's master.
#[cfg(unix)]
pub(crate) type TaskInput = std::os::fd::OwnedFd;

/// A child a spawn started.
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct Child {
    pub(crate) pid: nix::unistd::Pid,
    /// The log it created, if one was asked for.
    pub(crate) log: Option<std::os::fd::OwnedFd>,
}

/// The write end of a task's stdin pipe.
#[cfg(windows)]
pub(crate) type TaskInput = io::PipeWriter;

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
