//! The processes of one task on Unix: its process group, and what carries its owner
//! marker outside the group (see the module above for how the two work together).

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal as NixSignal, killpg};
use nix::unistd::Pid;
use zidane_context::ContextError;

use crate::containment::escapees::{self, EndReport};
use crate::containment::owner_marker::{MarkedWork, OwnerId, OwnerMarker};
use crate::containment::proc_scan::{MarkedProcess, ProcUnavailable, ProcessRef};
use crate::containment::scan_plan::ScanBound;
use crate::containment::swept::SweptProcess;
use crate::containment::{orphan_sweep, pid_escalation, proc_scan};

/// Every process that belongs to one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskProcesses {
    group: Pid,
    /// The marker its processes carry, when they were started with one.
    marker: Option<OwnerMarker>,
    /// Bounds the scans for the task's processes (set when it was spawned).
    bound: Option<ScanBound>,
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
            marker: None,
            bound: None,
        })
    }

    /// The same processes, plus every process carrying `marker` wherever it went.
    /// Call it right after the spawn: it bounds later scans to processes forked after.
    pub(crate) fn with_marker(self, marker: OwnerMarker) -> Self {
        let leader = u32::try_from(self.group.as_raw()).unwrap_or(u32::MAX);
        Self {
            marker: Some(marker),
            bound: Some(ScanBound::spawned_now(leader)),
            ..self
        }
    }

    /// The CPU time the task's processes have used (its group's, from the process
    /// table); `None` when it cannot be read.
    pub(crate) fn cpu_time(&self) -> Option<Duration> {
        crate::task::budget::group_cpu_time(self.leader_pid())
    }

    /// Whether the leader has not exited yet, asked without reaping it.
    pub(crate) fn leader_running(&self) -> bool {
        crate::task::leader::has_not_exited(self.leader_pid())
    }

    /// Why the task is quiet, from what the process table says its group is doing
    /// (see `stall_diagnosis`); `None` when nothing can be read.
    pub(crate) fn diagnose(
        &self,
        log: &std::path::Path,
        input_pipe: Option<u64>,
    ) -> Option<String> {
        crate::task::stall_diagnosis::diagnose(self.leader_pid(), log, input_pipe)
    }

    fn leader_pid(&self) -> u32 {
        self.group.as_raw().unsigned_abs()
    }

    /// Ends whatever still carries this task's marker; see [`end_escapees`].
    pub(crate) async fn end_escapees(&self, grace: Duration) {
        if let Some(marker) = self.marker {
            end_escapees(marker.owner, vec![marker.work], self.bound, grace).await;
        }
    }

    /// Asks the task's process group to end (`SIGTERM`). Its escapees are asked by
    /// [`terminate_escapees`](Self::terminate_escapees), once the group had a moment:
    /// most kills are over by then, without a `/proc` scan.
    pub(crate) fn terminate(&self) {
        self.signal_group(NixSignal::SIGTERM);
    }

    /// Asks every process carrying the task's marker to end (`SIGTERM`), from the
    /// blocking pool: an escapee that holds the log open must not hold the kill.
    pub(crate) fn terminate_escapees(&self) {
        if let Some(marker) = self.marker {
            signal_marked_soon(marker, self.bound, NixSignal::SIGTERM);
        }
    }

    /// Ends every process of the task, in the group or not (`SIGKILL`).
    pub(crate) fn kill(&self) {
        if let Some(marker) = self.marker {
            signal_marked_soon(marker, self.bound, NixSignal::SIGKILL);
        }
        self.signal_group(NixSignal::SIGKILL);
    }

    fn signal_group(&self, signal: NixSignal) {
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

/// Ends whatever still carries the marker of any of `tasks` (processes of one context),
/// in one scan; see [`end_escapees`].
pub(crate) async fn end_escapees_of<'a>(
    tasks: impl IntoIterator<Item = &'a TaskProcesses>,
    grace: Duration,
) {
    let mut owner = None;
    let mut works = Vec::new();
    // One bound covering every task; a task without one makes the scan unbounded.
    let mut bound: Option<Option<ScanBound>> = None;
    for task in tasks {
        let Some(marker) = task.marker else { continue };
        owner.get_or_insert(marker.owner);
        works.push(marker.work);
        bound = Some(match bound {
            None => task.bound,
            Some(joint) => joint.zip(task.bound).map(|(a, b)| a.widen(b)),
        });
    }
    if let Some(owner) = owner {
        end_escapees(owner, works, bound.flatten(), grace).await;
    }
}

/// Sends `signal` to every process carrying `marker`, from the blocking pool when a
/// runtime is at hand (the escalation that calls this must not wait on a `/proc` scan),
/// else right here.
fn signal_marked_soon(marker: OwnerMarker, bound: Option<ScanBound>, signal: NixSignal) {
    let job = move || {
        if let Ok(found) = proc_scan::scan_marked_bounded(bound) {
            let targets: Vec<ProcessRef> = found
                .iter()
                .filter(|p| p.marker == marker)
                .map(MarkedProcess::process)
                .collect();
            pid_escalation::signal_each(&targets, signal);
        }
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(job)),
        Err(_) => job(),
    }
}

/// After a kill settled: finds every process that still carries the marker of one of
/// `works` of `owner` (descendants that left the group), within `bound` when given, and
/// ends it, TERM then KILL after `grace`. Bounded by about `grace` + [`pid_escalation::KILL_WAIT`]; survivors
/// (only a process stuck in the kernel outlives SIGKILL) are logged, not waited for.
pub(crate) async fn end_escapees(
    owner: OwnerId,
    works: Vec<MarkedWork>,
    bound: Option<ScanBound>,
    grace: Duration,
) {
    if works.is_empty() {
        return;
    }
    let select = move |p: &MarkedProcess| p.marker.owner == owner && works.contains(&p.marker.work);
    // Most kills have nothing outside the group, and only their own few pids to look
    // at: probing those takes microseconds, right here. Only a find (or a scan that
    // would have to wait) goes to the blocking pool.
    if let Some(found) = bound.and_then(proc_scan::scan_marked_quick)
        && !found.iter().any(&select)
    {
        return;
    }
    let ended =
        tokio::task::spawn_blocking(move || escapees::end_marked(select, bound, grace)).await;
    match ended {
        Ok(Ok(EndReport { ended, survivors })) => {
            if !ended.is_empty() {
                tracing::debug!(
                    count = ended.len(),
                    "ended processes that had left their task's group"
                );
            }
            for survivor in survivors {
                tracing::warn!(pid = survivor.pid, command = %zidane_context::command_excerpt(&survivor.command_line), "a task's process outlived SIGKILL");
            }
        }
        Ok(Err(ProcUnavailable)) => {
            tracing::debug!("/proc is unavailable: only the process group was killed");
        }
        Err(error) => tracing::warn!(%error, "the search for a task's escaped processes failed"),
    }
}

/// `SIGKILL`s, without waiting, every process carrying a marker of `owner`: the last
/// resort when a context is dropped without `destroy`.
pub(crate) fn kill_owned_now(owner: OwnerId) {
    if let Ok(found) = proc_scan::scan_marked() {
        let targets: Vec<ProcessRef> = found
            .iter()
            .filter(|p| p.marker.owner == owner)
            .map(MarkedProcess::process)
            .collect();
        pid_escalation::signal_each(&targets, NixSignal::SIGKILL);
    }
}

/// Ends the processes whose owning host is gone; see [`orphan_sweep`]. Where `/proc`
/// is unavailable there is nothing to find: `Ok` with nothing swept.
pub(crate) async fn sweep_orphans(grace: Duration) -> Result<Vec<SweptProcess>, ContextError> {
    match tokio::task::spawn_blocking(move || orphan_sweep::sweep(grace)).await {
        Ok(Ok(swept)) => Ok(swept),
        Ok(Err(ProcUnavailable)) => {
            tracing::debug!("/proc is unavailable: no orphan sweep");
            Ok(Vec::new())
        }
        Err(error) => Err(ContextError::Io {
            path: Some("/proc".into()),
            cause: std::io::Error::other(error),
        }),
    }
}

/// [`sweep_orphans`] without a runtime, for a context built outside one.
pub(crate) fn sweep_orphans_blocking(grace: Duration) -> Vec<SweptProcess> {
    orphan_sweep::sweep(grace).unwrap_or_default()
}

/// The processes [`sweep_orphans`] would end now, ending none; `None` where `/proc`
/// cannot be listed. Blocking.
pub(crate) fn find_orphans() -> Option<Vec<SweptProcess>> {
    orphan_sweep::find().ok()
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
