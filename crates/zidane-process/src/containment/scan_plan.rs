//! How a scan for one task's processes picks the pids it reads: the speed trick of
//! containment. While pid order can be trusted, every process forked since a task's
//! leader has a higher pid, so a scan probes that short range pid by pid instead of
//! listing all of `/proc`; otherwise it lists. [`ScanBound::plan`] is the one decision;
//! `proc_scan` carries it out, and a test checks that the probe finds exactly what the
//! full listing finds.

use std::time::{Duration, Instant};

pub(crate) use crate::containment::procfs::last_pid;

/// How long after a task's spawn its scans may trust pid order. Linux hands out pids in
/// increasing order until they wrap at `pid_max`; a wrap since the spawn is seen in
/// `ns_last_pid`, but a *full* turn (every pid used once more) is not. At the smallest
/// common `pid_max` (32768) a full turn within this window needs over 3,000 forks a
/// second; past it, scans read every process.
pub(crate) const PID_ORDER_TRUST: Duration = Duration::from_secs(10);

/// What bounds a scan for one task's processes: its leader's pid and spawn time. Every
/// descendant was forked after the leader, so — while pid order can be trusted — none
/// has a lower pid, and a scan can skip older processes without reading anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScanBound {
    pub(crate) first_pid: u32,
    pub(crate) spawned_at: Instant,
}

impl ScanBound {
    /// The bound of a task whose leader `leader_pid` was spawned just now.
    pub(crate) fn spawned_now(leader_pid: u32) -> Self {
        Self {
            first_pid: leader_pid,
            spawned_at: Instant::now(),
        }
    }

    /// A bound that covers both tasks.
    pub(crate) fn widen(self, other: Self) -> Self {
        Self {
            first_pid: self.first_pid.min(other.first_pid),
            spawned_at: self.spawned_at.min(other.spawned_at),
        }
    }

    /// The pids a scan must read, decided once per scan.
    pub(crate) fn plan(self) -> Plan {
        if self.spawned_at.elapsed() >= PID_ORDER_TRUST {
            return Plan::List { lowest: None };
        }
        match last_pid() {
            // A last pid below the leader's means pids wrapped since the spawn.
            Some(last) if last >= self.first_pid => {
                if last - self.first_pid < PROBE_RANGE {
                    Plan::Probe {
                        first: self.first_pid,
                        last,
                    }
                } else {
                    Plan::List {
                        lowest: Some(self.first_pid),
                    }
                }
            }
            _ => Plan::List { lowest: None },
        }
    }
}

/// The widest pid range a bounded scan reads pid by pid; a wider one lists `/proc`.
///
/// Listing `/proc` costs about as much as probing a hundred pids (the kernel builds an
/// entry for every process and thread group on the machine), and a task's kill usually
/// has only its own few pids to look at.
pub(crate) const PROBE_RANGE: u32 = 128;

/// How many times a probe follows pids handed out while it reads before it lists
/// `/proc` instead: something forks as fast as we read.
pub(crate) const PROBE_ROUNDS: usize = 8;

/// How a scan finds the pids it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Every pid in `first..=last`, then those handed out meanwhile: pid order can be
    /// trusted, so every process forked since the leader is in that range.
    Probe { first: u32, last: u32 },
    /// The listing of `/proc`, from `lowest` up when given.
    List { lowest: Option<u32> },
}
