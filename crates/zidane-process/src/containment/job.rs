//! The processes of one task on Windows: its job object.
//!
//! The shell is started suspended, put in a job of its own and only then resumed, so
//! nothing it starts runs outside the job, and the job refuses breakaway: every
//! descendant, `start /b` included, is a member for good. The job ends all of them at
//! once (`TerminateJobObject`), and is kill-on-close: when its last handle closes —
//! the task's record dropped, the host exiting, crashing or killed outright — Windows
//! ends every process still in it. So there is no marker scan and no orphan to sweep.
//!
//! The polite stop first is `CTRL_BREAK_EVENT` to the task's console process group,
//! which reaches it when the task shares the host's console; a host without one cannot
//! ask politely, and its kill is the job's end at once.

use std::os::windows::io::{AsHandle, OwnedHandle};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use zidane_context::ContextError;

use crate::containment::owner_marker::{OwnerId, OwnerMarker};
use crate::containment::swept::SweptProcess;
use crate::sys::windows::{self as sys, Job};

/// The exit code every process of a killed job ends with: what a shell reports for a
/// process ended by `SIGKILL`, so a kill reads the same on every platform.
const KILLED_EXIT_CODE: u32 = 137;

/// At most this many processes are named in a stall diagnosis.
const MAX_DESCRIBED: usize = 5;

/// Every process that belongs to one task: the members of its job.
#[derive(Debug, Clone)]
pub(crate) struct TaskProcesses {
    job: Arc<Job>,
    /// The leader's pid, and a handle of its own, which keeps that pid from naming
    /// another process while the task is known.
    leader: u32,
    leader_handle: Arc<OwnedHandle>,
}

impl TaskProcesses {
    /// The processes of `job`, whose first member is the leader `leader`.
    pub(crate) fn in_job(job: Job, leader: &std::process::Child) -> std::io::Result<Self> {
        Ok(Self {
            job: Arc::new(job),
            leader: leader.id(),
            leader_handle: Arc::new(leader.as_handle().try_clone_to_owned()?),
        })
    }

    /// The job holds every process, marked or not: the marker adds nothing here.
    pub(crate) fn with_marker(self, _marker: OwnerMarker) -> Self {
        self
    }

    /// The CPU time every process of the job has used, those that ended included.
    pub(crate) fn cpu_time(&self) -> Option<Duration> {
        self.job.cpu_time().ok()
    }

    /// Whether the leader is still a member of the job (its members are the processes
    /// that have not exited).
    pub(crate) fn leader_running(&self) -> bool {
        self.job
            .process_ids()
            .map_or(true, |members| members.contains(&self.leader))
    }

    /// Why the task is quiet, as far as Windows tells: which processes its job holds.
    /// What each of them waits for is not readable here, and the text says so.
    pub(crate) fn diagnose(&self, _log: &Path, _input_pipe: Option<u64>) -> Option<String> {
        let members = self.job.process_ids().ok()?;
        if members.is_empty() {
            return None;
        }
        let described = sys::describe_processes(&members).unwrap_or_default();
        let mut parts: Vec<String> = described
            .iter()
            .take(MAX_DESCRIBED)
            .map(|process| format!("{} (pid {})", process.exe, process.pid))
            .collect();
        if members.len() > parts.len() {
            parts.push(format!("{} more processes", members.len() - parts.len()));
        }
        Some(format!(
            "Its job holds {}; what each waits for cannot be read on Windows.",
            parts.join(", ")
        ))
    }

    /// Ends whatever is still in the job (`start /b` children of a task that exited):
    /// after a kill settled, the job's end.
    pub(crate) async fn end_escapees(&self, _grace: Duration) {
        self.kill();
    }

    /// Asks the task to end: `CTRL_BREAK_EVENT` to its console process group, or the
    /// job's end where that cannot be sent (a host without a console).
    pub(crate) fn terminate(&self) {
        if let Err(error) = sys::send_ctrl_break(self.leader_handle.as_handle()) {
            tracing::debug!(%error, "no CTRL_BREAK for a task: ending its job");
            self.kill();
        }
    }

    /// Nothing to do: nothing escapes a job, and its end reaches every member.
    pub(crate) fn terminate_escapees(&self) {}

    /// Ends every process of the task (`TerminateJobObject`).
    pub(crate) fn kill(&self) {
        if let Err(error) = self.job.terminate(KILLED_EXIT_CODE) {
            tracing::warn!(%error, "TerminateJobObject failed");
        }
    }
}

/// Ends whatever is left in the jobs of `tasks`.
pub(crate) async fn end_escapees_of<'a>(
    tasks: impl IntoIterator<Item = &'a TaskProcesses>,
    _grace: Duration,
) {
    for task in tasks {
        task.kill();
    }
}

/// Nothing to do: a task's job ends with its record, or with its host.
pub(crate) fn kill_owned_now(_owner: OwnerId) {}

/// There are no orphans to sweep: a host's jobs end with it (kill-on-close).
pub(crate) async fn sweep_orphans(_grace: Duration) -> Result<Vec<SweptProcess>, ContextError> {
    Ok(Vec::new())
}

/// [`sweep_orphans`] without a runtime.
pub(crate) fn sweep_orphans_blocking(_grace: Duration) -> Vec<SweptProcess> {
    Vec::new()
}

/// There are no orphans to find: a host's jobs end with it.
pub(crate) fn find_orphans() -> Option<Vec<SweptProcess>> {
    Some(Vec::new())
}
