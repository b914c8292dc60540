//! Reading `/proc`: which of this user's processes carry an owner marker, and whether a
//! given process still lives.
//!
//! Everything here is best effort by design. Processes come and go while we read, and
//! some are not ours to read: a process that vanishes or refuses a read is skipped,
//! never an error. Only a missing `/proc` as a whole is reported
//! ([`ProcUnavailable`]), so that callers fall back to the process-group kill alone.

use crate::containment::owner_marker::{self, OwnerMarker, Patience, WouldWait};
use crate::containment::procfs::{command_line, list_pids, owner_uid, stat, thread_group};
use crate::containment::scan_plan::{PROBE_RANGE, PROBE_ROUNDS, Plan, ScanBound, last_pid};

/// `/proc` cannot be listed: marker containment is off on this system, and only the
/// process-group kill applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcUnavailable;

/// A live process of ours that carries an owner marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkedProcess {
    /// Its pid.
    pub(crate) pid: u32,
    /// Its start time (clock ticks since boot): with the pid, names this process and no
    /// later one that reuses the pid.
    pub(crate) start_time: u64,
    /// The marker it carries.
    pub(crate) marker: OwnerMarker,
    /// Its command line when scanned (see [`command_line`]), read now because it is
    /// what logs and sweep reports show, and it is gone once the process is.
    pub(crate) command_line: String,
}

/// One process, named so that a recycled pid cannot pass for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ProcessRef {
    /// Its pid.
    pub(crate) pid: u32,
    /// Its start time, clock ticks since boot (field 22 of `/proc/<pid>/stat`).
    pub(crate) start_time: u64,
}

impl MarkedProcess {
    /// This process, named by pid and start time.
    pub(crate) fn process(&self) -> ProcessRef {
        ProcessRef {
            pid: self.pid,
            start_time: self.start_time,
        }
    }
}

/// Every live marked process of our user, except this one: [`scan_marked_bounded`]
/// without a bound.
pub(crate) fn scan_marked() -> Result<Vec<MarkedProcess>, ProcUnavailable> {
    scan_marked_bounded(None)
}

/// Why a scan gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// `/proc` cannot be read at all.
    Unavailable,
    /// A process was caught inside `execve` and the scan was told not to wait.
    WouldWait,
}

impl From<WouldWait> for ScanError {
    fn from(WouldWait: WouldWait) -> Self {
        Self::WouldWait
    }
}

impl From<ProcUnavailable> for ScanError {
    fn from(ProcUnavailable: ProcUnavailable) -> Self {
        Self::Unavailable
    }
}

/// Every live marked process of our user, except this one, within `bound`.
///
/// Cheap checks come first: the pid against the bound (nothing read), then the
/// environment (where the marker is), then the owner of `/proc/<pid>`; `stat` — costly
/// to produce — is read only for marked processes. Processes that cannot be read are
/// skipped: a scan never fails on one.
pub(crate) fn scan_marked_bounded(
    bound: Option<ScanBound>,
) -> Result<Vec<MarkedProcess>, ProcUnavailable> {
    scan(bound, Patience::WaitForExec).map_err(|_| ProcUnavailable)
}

/// [`scan_marked_bounded`] that never blocks: `None` unless `bound` narrows the scan to
/// a few pids that can be probed in microseconds and none of them is caught inside
/// `execve`. Cheap enough to run on an async worker; a caller that gets `None` runs the
/// full scan on the blocking pool.
pub(crate) fn scan_marked_quick(bound: ScanBound) -> Option<Vec<MarkedProcess>> {
    let Plan::Probe { first, last } = bound.plan() else {
        return None;
    };
    if last - first >= QUICK_RANGE {
        return None;
    }
    let mut scan = Scan::new(Patience::Never).ok()?;
    // A probe that would have to fall back to listing /proc is no longer quick.
    scan.probe(first, last)
        .ok()
        .filter(|&complete| complete)
        .map(|_| scan.found)
}

/// The widest pid range [`scan_marked_quick`] probes (a few microseconds per pid).
const QUICK_RANGE: u32 = 16;

fn scan(bound: Option<ScanBound>, patience: Patience) -> Result<Vec<MarkedProcess>, ScanError> {
    let plan = bound.map_or(Plan::List { lowest: None }, ScanBound::plan);
    scan_planned(plan, patience)
}

fn scan_planned(plan: Plan, patience: Patience) -> Result<Vec<MarkedProcess>, ScanError> {
    let mut scan = Scan::new(patience)?;
    match plan {
        Plan::Probe { first, last } => {
            if !scan.probe(first, last)? {
                scan.found.clear();
                scan.list(None)?;
            }
        }
        Plan::List { lowest } => scan.list(lowest)?,
    }
    Ok(scan.found)
}

/// One scan in progress.
struct Scan {
    me: u32,
    my_uid: u32,
    patience: Patience,
    found: Vec<MarkedProcess>,
}

impl Scan {
    fn new(patience: Patience) -> Result<Self, ScanError> {
        let me = std::process::id();
        let my_uid = owner_uid(me).ok_or(ScanError::Unavailable)?;
        Ok(Self {
            me,
            my_uid,
            patience,
            found: Vec::new(),
        })
    }

    /// Reads every pid of `first..=last`, then every pid handed out while it read, until
    /// none was. `Ok(false)`: pid order stopped being trustworthy (pids wrapped, or
    /// forks kept coming), and the caller lists `/proc` instead.
    fn probe(&mut self, first: u32, mut last: u32) -> Result<bool, ScanError> {
        let mut next = first;
        for _ in 0..PROBE_ROUNDS {
            for pid in next..=last {
                self.visit(pid, true)?;
            }
            next = last.saturating_add(1);
            match last_pid() {
                // Nothing forked while we read: every descendant was seen.
                Some(now) if now >= first && now < next => return Ok(true),
                Some(now) if now >= next && now - first < PROBE_RANGE => last = now,
                _ => return Ok(false),
            }
        }
        Ok(false)
    }

    /// Reads every listed pid from `lowest` up (all when `None`).
    fn list(&mut self, lowest: Option<u32>) -> Result<(), ScanError> {
        for pid in list_pids().ok_or(ScanError::Unavailable)? {
            if lowest.is_some_and(|lowest| pid < lowest) {
                continue;
            }
            self.visit(pid, false)?;
        }
        Ok(())
    }

    /// Records `pid` if it is a live, marked process of our user other than this one.
    /// `maybe_thread`: the pid was not listed but guessed, so it may name a thread
    /// (`/proc/<tid>` exists for every thread), whose process has a pid of its own.
    fn visit(&mut self, pid: u32, maybe_thread: bool) -> Result<(), ScanError> {
        if pid == self.me {
            return Ok(());
        }
        let Some(marker) = owner_marker::read_marker(pid, self.patience)? else {
            return Ok(());
        };
        // The owner of /proc/<pid> is the process's effective uid: another user's
        // process is never ours to signal.
        if owner_uid(pid) != Some(self.my_uid) {
            return Ok(());
        }
        let Some(stat) = stat(pid) else {
            return Ok(());
        };
        if stat.is_ending() || (maybe_thread && thread_group(pid) != Some(pid)) {
            return Ok(());
        }
        self.found.push(MarkedProcess {
            pid,
            start_time: stat.start_time,
            marker,
            command_line: command_line(pid).unwrap_or_default(),
        });
        Ok(())
    }
}

/// Linux only: they read `/proc` themselves to check the scan.
#[cfg(all(test, target_os = "linux"))]
#[path = "proc_scan_tests.rs"]
mod tests;
