//! Ending a set of single processes — the escapees of a task — TERM first, KILL after a
//! grace period, bounded in time.
//!
//! These processes are not our children (they left the group, or their parent died), so
//! there is nothing to `wait` on and no exit event to await: their end is observed by
//! polling `/proc`, with a short, growing interval and a hard deadline. The polling is
//! plain blocking code — async callers run it on the blocking pool — so that it also
//! serves where no runtime is at hand (a context being built or dropped). Each one is named
//! by pid *and* start time, and re-checked just before every signal, so a pid the kernel
//! has recycled since the scan is never signalled.

use std::thread::sleep;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::containment::proc_scan::ProcessRef;
use crate::containment::procfs::{self, ProcLiveness};

/// How long to keep looking after SIGKILL before calling a process a survivor. SIGKILL
/// cannot be caught; what delays the end is the kernel (a process in uninterruptible
/// sleep, e.g. on a hung NFS mount), and a kill must not hang on that.
pub(crate) const KILL_WAIT: Duration = Duration::from_secs(1);

/// The first and the largest pause between two polls of `/proc`.
const FIRST_POLL: Duration = Duration::from_millis(1);
const MAX_POLL: Duration = Duration::from_millis(25);

impl ProcessRef {
    fn is_gone(self) -> bool {
        procfs::liveness(self.pid, self.start_time) == ProcLiveness::Gone
    }
}

/// Sends `signal` to every target that is still the process we saw. A process that is
/// gone or not ours (ESRCH, EPERM) is skipped silently: it is not running on our behalf.
pub(crate) fn signal_each(targets: &[ProcessRef], signal: Signal) {
    for target in targets {
        // kill(0) and kill(-1) would reach our own group or every process we may signal;
        // pid 1 is init. None of them is ever an escapee.
        let Ok(raw) = i32::try_from(target.pid) else {
            continue;
        };
        if raw <= 1 || procfs::liveness(target.pid, target.start_time) != ProcLiveness::Alive {
            continue;
        }
        match kill(Pid::from_raw(raw), signal) {
            Ok(()) | Err(Errno::ESRCH | Errno::EPERM) => {}
            Err(error) => tracing::debug!(pid = target.pid, %error, "signal to escapee failed"),
        }
    }
}

/// Waits until every target is gone or `deadline` passes; returns those still alive.
pub(crate) fn wait_gone(targets: &[ProcessRef], deadline: Instant) -> Vec<ProcessRef> {
    let mut remaining: Vec<ProcessRef> = targets.to_vec();
    let mut pause = FIRST_POLL;
    loop {
        remaining.retain(|t| !t.is_gone());
        let now = Instant::now();
        if remaining.is_empty() || now >= deadline {
            return remaining;
        }
        sleep(pause.min(deadline - now));
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// Ends `targets`: SIGTERM, up to `grace` for them to go, SIGKILL for the rest, up to
/// [`KILL_WAIT`] more. Returns the processes that still ran at the end (normally none).
/// Bounded: it returns within `grace + KILL_WAIT` plus scheduling noise.
pub(crate) fn end_processes(targets: &[ProcessRef], grace: Duration) -> Vec<ProcessRef> {
    if targets.is_empty() {
        return Vec::new();
    }
    signal_each(targets, Signal::SIGTERM);
    let stubborn = wait_gone(targets, Instant::now() + grace);
    if stubborn.is_empty() {
        return stubborn;
    }
    signal_each(&stubborn, Signal::SIGKILL);
    wait_gone(&stubborn, Instant::now() + KILL_WAIT)
}

#[cfg(test)]
#[path = "pid_escalation_tests.rs"]
mod tests;
