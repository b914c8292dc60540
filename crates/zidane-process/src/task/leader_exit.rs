//! How a task's leader ended: its exit code, and the signal that ended it if one did.

use zidane_context::Signal;

/// How a task's leader ended, as `TaskExitInfo` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeaderExit {
    /// The exit code; `128 + signo` for a signal.
    pub(crate) code: i32,
    /// The signal that ended it, if one did.
    pub(crate) signal: Option<Signal>,
}

impl LeaderExit {
    /// A status we could not learn (the leader was reaped elsewhere): reported as a
    /// failure, never as success.
    pub(crate) const LOST: Self = Self {
        code: -1,
        signal: None,
    };

    /// The exit of a process ended by `signal`.
    pub(crate) fn signalled(signal: Signal) -> Self {
        Self {
            code: signal.exit_code(),
            signal: Some(signal),
        }
    }

    /// Reads a wait status the POSIX shell way: a signal `n` is exit code `128 + n`.
    #[cfg(unix)]
    pub(crate) fn from_status(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal().and_then(Signal::from_number)) {
            (Some(code), _) => Self { code, signal: None },
            (None, Some(signal)) => Self::signalled(signal),
            // Neither an exit nor a known signal cannot come out of a completed wait;
            // report it as a failure rather than as success.
            (None, None) => Self::LOST,
        }
    }

    /// Reads an exit status on Windows, where every process ends with a code: a job
    /// terminated by a kill ends its processes with [`Signal::KILL`]'s code, and is
    /// reported as that signal, as on Unix.
    #[cfg(windows)]
    pub(crate) fn from_status(status: std::process::ExitStatus) -> Self {
        match status.code() {
            Some(code) if code == Signal::KILL.exit_code() => Self::signalled(Signal::KILL),
            Some(code) => Self { code, signal: None },
            None => Self::LOST,
        }
    }
}
