//! The orphan sweep: ending the tasks of hosts that died without cleaning up.
//!
//! A host killed with SIGKILL never runs `destroy`; its tasks are re-parented to init and
//! would run forever. Their environment still names their owner (see
//! [`OWNER_MARKER_ENV`](crate::OWNER_MARKER_ENV)), and the owner's pid plus start time
//! tell whether it still lives. The sweep ends the processes whose owner is gone — and
//! only those: never a process whose owner lives (another session, another context of
//! this host), never one without a marker, never another user's, never this process or
//! one of its ancestors. [`find`] lists the same processes and ends none.

use std::time::Duration;

use crate::containment::escapees;
use crate::containment::proc_scan::{self, MarkedProcess, ProcUnavailable};
use crate::containment::procfs;
use crate::containment::swept::{OrphanOwner, SweptProcess};

/// Finds the processes whose owner is gone and ends them TERM-then-KILL (`grace`
/// between the two). Returns the ones it ended; any that outlived SIGKILL are logged.
/// `Err(ProcUnavailable)` when `/proc` cannot be listed.
/// Blocking: async callers run it with `spawn_blocking`.
pub(crate) fn sweep(grace: Duration) -> Result<Vec<SweptProcess>, ProcUnavailable> {
    let protected = self_and_ancestors();
    let select = |process: &MarkedProcess| is_orphan(process, &protected);
    let report = escapees::end_marked(select, None, grace)?;
    for survivor in &report.survivors {
        tracing::warn!(
            pid = survivor.pid,
            command = %zidane_context::command_excerpt(&survivor.command_line),
            "an orphaned task outlived SIGKILL"
        );
    }
    Ok(report.ended.into_iter().map(swept).collect())
}

/// The processes [`sweep`] would end now, ending none: what a person's check lists.
/// `Err(ProcUnavailable)` when `/proc` cannot be listed. Blocking, as a sweep is.
pub(crate) fn find() -> Result<Vec<SweptProcess>, ProcUnavailable> {
    let protected = self_and_ancestors();
    Ok(proc_scan::scan_marked()?
        .into_iter()
        .filter(|process| is_orphan(process, &protected))
        .map(swept)
        .collect())
}

/// Whether `process` is an orphan to end: its owner is gone and it is not one of
/// `protected` ([`self_and_ancestors`]). An owner read as alive is never swept, and
/// anything short of proof of its death reads as alive (see `OwnerId::is_alive`). An
/// owner that dies during a sweep has orphans too, so its liveness is read afresh for
/// each process.
fn is_orphan(process: &MarkedProcess, protected: &[u32]) -> bool {
    !protected.contains(&process.pid) && !process.marker.owner.is_alive()
}

fn swept(process: MarkedProcess) -> SweptProcess {
    SweptProcess {
        pid: process.pid,
        command_line: process.command_line,
        owner: OrphanOwner {
            pid: process.marker.owner.pid,
            start_time: process.marker.owner.start_time,
        },
        task_id: process.marker.work.task_id(),
    }
}

/// This process and every ancestor up to init: processes a sweep must never end, even
/// when they carry the marker of a dead owner (a host started from a task of a host
/// that has since crashed would otherwise end itself, or its own shell).
pub(crate) fn self_and_ancestors() -> Vec<u32> {
    let mut chain = vec![std::process::id()];
    // Bounded: a ppid chain cannot be longer than the pid space, and a read race could
    // in theory produce a cycle.
    while chain.len() < 4096 {
        let Some(&last) = chain.last() else { break };
        match procfs::stat(last) {
            Some(s) if s.ppid > 1 && !chain.contains(&s.ppid) => chain.push(s.ppid),
            _ => break,
        }
    }
    chain
}

#[cfg(test)]
#[path = "orphan_sweep_tests.rs"]
mod tests;
