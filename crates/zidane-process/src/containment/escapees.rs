//! Finding and ending marked processes: the scan-then-escalate loop shared by the kill
//! of one task (every process carrying that task's marker) and the orphan sweep (every
//! process whose marker names a dead owner).

use std::collections::HashSet;
use std::time::Duration;

use std::time::Instant;

use crate::containment::pid_escalation::{self, KILL_WAIT};
use crate::containment::proc_scan::{self, MarkedProcess, ProcUnavailable, ProcessRef};
use crate::containment::scan_plan::ScanBound;

/// How many scan-and-end rounds one call makes at most. A second round catches children
/// forked by a marked process while it was being terminated; more than a few rounds means
/// something forks as fast as we kill, and the deadline ends the chase.
const MAX_ROUNDS: usize = 4;

/// What a scan-and-end left behind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EndReport {
    /// Processes that were found and are gone now.
    pub(crate) ended: Vec<MarkedProcess>,
    /// Processes that were found and still ran when the time was up (normally none:
    /// only a process the kernel holds in uninterruptible sleep survives SIGKILL).
    pub(crate) survivors: Vec<MarkedProcess>,
}

/// Scans `/proc` for marked processes that `select` picks (within `bound`, when given), and ends them TERM-then-KILL
/// (`grace` between the two), rescanning for processes forked meanwhile.
///
/// Bounded: returns within about `grace + KILL_WAIT` (each round gets only what is left
/// of that budget), whatever the processes do. Blocking: async callers run it with
/// `spawn_blocking`. `Err(ProcUnavailable)` when `/proc`
/// cannot be listed, so the caller knows it has only the group kill.
pub(crate) fn end_marked<F>(
    select: F,
    bound: Option<ScanBound>,
    grace: Duration,
) -> Result<EndReport, ProcUnavailable>
where
    F: Fn(&MarkedProcess) -> bool,
{
    let deadline = Instant::now() + grace + KILL_WAIT;
    let mut report = EndReport::default();
    let mut seen: HashSet<ProcessRef> = HashSet::new();
    for _ in 0..MAX_ROUNDS {
        let found: Vec<MarkedProcess> = proc_scan::scan_marked_bounded(bound)?
            .into_iter()
            .filter(&select)
            .collect();
        let now = Instant::now();
        if found.is_empty() || now >= deadline {
            report.survivors = found;
            return Ok(report);
        }
        let targets: Vec<ProcessRef> = found.iter().map(MarkedProcess::process).collect();
        let stubborn = pid_escalation::end_processes(&targets, grace.min(deadline - now));
        for process in found {
            let target = process.process();
            tracing::debug!(pid = target.pid, command = %zidane_context::command_excerpt(&process.command_line), work = %process.marker.work, "ended a marked process");
            if !stubborn.contains(&target) && seen.insert(target) {
                report.ended.push(process);
            }
        }
    }
    // Out of rounds: whatever still carries the selection is reported, not chased.
    report.survivors = proc_scan::scan_marked_bounded(bound)?
        .into_iter()
        .filter(&select)
        .collect();
    Ok(report)
}

#[cfg(test)]
#[path = "escapees_tests.rs"]
mod tests;
