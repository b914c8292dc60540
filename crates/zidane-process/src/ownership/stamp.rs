//! [`ProcessStamp`]: a pid and the moment its process started, so a recycled pid is
//! never taken for the process once seen.

use serde::{Deserialize, Serialize};

/// A process as seen once: its pid and its start time (clock ticks since boot on Linux,
/// microseconds since the epoch on macOS, 100 ns units since 1601 on Windows).
///
/// A pid alone is not an identity: once its process is reaped the kernel hands it out
/// again. A stamp [`runs`](Self::runs) only while the same process does, so whatever
/// signals a stamped process (a supervisor ending a task another supervisor started)
/// never reaches an unrelated one.
///
/// ```
/// use zidane_process::ProcessStamp;
/// # #[cfg(any(target_os = "linux", windows))] {
/// let me = ProcessStamp::current().expect("this process has a stamp");
/// assert_eq!(me.pid, std::process::id());
/// assert!(me.runs());
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProcessStamp {
    /// The process id.
    pub pid: u32,
    /// When it started, in the process table's own unit.
    pub start_time: u64,
}

impl ProcessStamp {
    /// The stamp of process `pid` now; `None` when it does not run or its start time
    /// cannot be read (no process table here, or the process is gone).
    pub fn of(pid: u32) -> Option<Self> {
        imp::start_time(pid).map(|start_time| Self { pid, start_time })
    }

    /// This process's stamp.
    pub fn current() -> Option<Self> {
        Self::of(std::process::id())
    }

    /// Whether the stamped process still runs: same pid, same start time, not a zombie.
    /// False once it is gone or its pid belongs to another process; also false where
    /// the process table cannot be read, so nothing is ever signalled on a guess.
    pub fn runs(&self) -> bool {
        imp::runs(*self)
    }
}

#[cfg(unix)]
mod imp {
    use super::ProcessStamp;
    use crate::containment::{ProcLiveness, procfs};

    pub(super) fn start_time(pid: u32) -> Option<u64> {
        procfs::start_time(pid)
    }

    pub(super) fn runs(stamp: ProcessStamp) -> bool {
        procfs::liveness(stamp.pid, stamp.start_time) == ProcLiveness::Alive
    }
}

/// Windows: the creation time `GetProcessTimes` reports, read through a handle opened
/// for query; an exited process (whose pid Windows keeps while a handle is open) has
/// none.
#[cfg(windows)]
mod imp {
    use super::ProcessStamp;

    pub(super) fn start_time(pid: u32) -> Option<u64> {
        crate::sys::windows::process_start_time(pid)
    }

    pub(super) fn runs(stamp: ProcessStamp) -> bool {
        start_time(stamp.pid) == Some(stamp.start_time)
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_with_another_start_time_is_not_the_same_process() {
        let me = ProcessStamp::current().unwrap();
        assert!(me.runs());
        let recycled = ProcessStamp {
            start_time: me.start_time + 1,
            ..me
        };
        assert!(!recycled.runs());
    }

    #[test]
    fn a_reaped_child_no_longer_runs() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let stamp = ProcessStamp::of(child.id()).unwrap();
        child.wait().unwrap();
        assert!(!stamp.runs());
    }
}
