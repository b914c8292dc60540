//! Finding and ending every process of a task: the one seam for it.
//!
//! Today a task's processes are its process group: the leader is spawned with
//! `process_group(0)`, so its pid is the group id, and everything it forks stays in the
//! group unless it asks to leave. Ending the task is `killpg`.
//!
//! Processes that leave the group (`setsid`, a double fork into a new session) or that
//! a crashed host orphaned are out of reach of `killpg`. A later change gives every task
//! an owner marker in its environment and adds a `/proc` scan for that marker here;
//! callers (kill, destroy, foreground exec) go through [`TaskProcesses`] only, so they
//! will not change when it lands.

use nix::errno::Errno;
use nix::sys::signal::{Signal as NixSignal, killpg};
use nix::unistd::Pid;

/// Every process that belongs to one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskProcesses {
    group: Pid,
}

impl TaskProcesses {
    /// The processes of the task whose leader has pid `leader_pid`.
    ///
    /// `None` for pids that cannot be a spawned leader: signalling group 0 would hit our
    /// own group and group 1 is init's.
    pub(crate) fn of_leader(leader_pid: u32) -> Option<Self> {
        let pid = i32::try_from(leader_pid).ok().filter(|pid| *pid > 1)?;
        Some(Self {
            group: Pid::from_raw(pid),
        })
    }

    /// Asks every process of the task to end (`SIGTERM`).
    pub(crate) fn terminate(self) {
        self.signal(NixSignal::SIGTERM);
    }

    /// Ends every process of the task (`SIGKILL`).
    pub(crate) fn kill(self) {
        self.signal(NixSignal::SIGKILL);
    }

    fn signal(self, signal: NixSignal) {
        match killpg(self.group, signal) {
            // ESRCH: the group is already gone. EPERM: what is left of it is no longer
            // ours (e.g. a member exec'd a setuid program). Neither is worth reporting:
            // the caller only wants the task to be over.
            Ok(()) | Err(Errno::ESRCH | Errno::EPERM) => {}
            Err(error) => {
                tracing::warn!(group = self.group.as_raw(), %signal, %error, "killpg failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_pids_that_would_hit_us_or_init() {
        assert!(TaskProcesses::of_leader(0).is_none());
        assert!(TaskProcesses::of_leader(1).is_none());
        assert!(TaskProcesses::of_leader(u32::MAX).is_none());
        assert!(TaskProcesses::of_leader(4242).is_some());
    }
}
