//! Finding and ending every process of a task: the one seam for it.
//!
//! A task's processes are, first, its process group: the leader is spawned with
//! `process_group(0)`, so its pid is the group id, and everything it forks stays in the
//! group unless it asks to leave. `killpg` ends those at once, atomically with respect
//! to forks.
//!
//! Processes that leave the group (`setsid`, a double fork into a new session) are out
//! of reach of `killpg`. So every process we start also carries an owner marker in its
//! environment ([`OwnerMarker`](owner_marker::OwnerMarker)), which all its descendants inherit, and here a `/proc`
//! scan finds them by that marker:
//! - `TaskProcesses::terminate` and `TaskProcesses::kill` signal the group and, on
//!   the blocking pool, every process carrying the task's marker — so an escapee that
//!   holds the log open dies with the group instead of holding the kill for the grace;
//! - `end_escapees` runs after a kill has settled (kill, destroy, a foreground
//!   timeout) and ends whatever still carries the marker, TERM then KILL, bounded;
//! - `sweep_orphans` ends the processes of hosts that died without cleaning up, and
//!   `find_orphans` lists them, ending none.
//!
//! Where `/proc` cannot be read, the scans find nothing and only the group kill
//! remains. Callers (kill, destroy, foreground exec, the context's drop) go through this
//! module only: a stronger mechanism — a cgroup v2 sub-group per task where the host
//! delegates one, whose `cgroup.kill` ends every member whatever its session or
//! environment — can replace the marker scan here without touching them.
//!
//! On Windows all of this is one job object per task (`job.rs`): everything a task
//! starts is put in its job before it can run, breakaway is refused, and the job ends
//! every member at once, with its host too (kill-on-close). The marker is still set,
//! for the user's own tools, but no scan is needed.

#[cfg(unix)]
pub(crate) mod escapees;
#[cfg(unix)]
mod group;
/// A task's job object, which holds every process it starts (Windows).
#[cfg(windows)]
mod job;
/// What ends a context's processes when its host is killed without a word.
#[cfg(unix)]
pub(crate) mod lifeline;
#[cfg(unix)]
mod liveness;
/// Listing the orphans without ending them (every platform).
pub(crate) mod orphan_list;
#[cfg(unix)]
pub(crate) mod orphan_sweep;
pub(crate) mod owner_marker;
#[cfg(unix)]
pub(crate) mod pid_escalation;
#[cfg(unix)]
pub(crate) mod proc_scan;
#[cfg(unix)]
pub(crate) mod procargs;
/// The process table: `/proc` on Linux (and wherever else it exists), `libproc` and
/// `sysctl` on macOS.
#[cfg(unix)]
#[cfg_attr(target_os = "macos", path = "procfs_macos.rs")]
pub(crate) mod procfs;
#[cfg(unix)]
pub(crate) mod scan_plan;
pub(crate) mod swept;

#[cfg(unix)]
pub(crate) use group::*;
#[cfg(windows)]
pub(crate) use job::*;
#[cfg(unix)]
pub(crate) use liveness::ProcLiveness;
