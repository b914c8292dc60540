//! Reading `/proc`: which of this user's processes carry an owner marker, and whether a
//! given process still lives.
//!
//! Everything here is best effort by design. Processes come and go while we read, and
//! some are not ours to read: a process that vanishes or refuses a read is skipped,
//! never an error. Only a missing `/proc` as a whole is reported
//! ([`ProcUnavailable`]), so that callers fall back to the process-group kill alone.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::owner_marker::{OWNER_MARKER_VAR, OwnerMarker};

/// The root of the process filesystem.
const PROC_ROOT: &str = "/proc";

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

/// What `/proc/<pid>/stat` says about a process that we need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatFields {
    /// The one-letter state (`R`, `S`, `Z`, …).
    pub(crate) state: char,
    /// The parent's pid.
    pub(crate) ppid: u32,
    /// Field 9: the kernel's per-process flags (`PF_*`).
    pub(crate) flags: u64,
    /// Field 22: start time in clock ticks since boot.
    pub(crate) start_time: u64,
}

/// `PF_EXITING` (`include/linux/sched.h`): the process is in `do_exit`. It has given up
/// its memory (so its environment reads empty) and can fork no more.
const PF_EXITING: u64 = 0x4;

impl StatFields {
    /// Whether the process is dead or dying: a zombie, or already inside `do_exit`.
    pub(crate) fn is_ending(&self) -> bool {
        is_dead_state(self.state) || self.flags & PF_EXITING != 0
    }
}

/// Whether a process we once saw (pid + start time) still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProcLiveness {
    /// It runs (or sleeps, or is stopped): not a zombie.
    Alive,
    /// It exited (even if its zombie still waits for a reap), or its pid now belongs to
    /// another process.
    Gone,
    /// It could not be told (its stat could not be read for a reason other than absence).
    Unknown,
}

/// Every live marked process of our user, except this one: [`scan_marked_bounded`]
/// without a bound.
pub(crate) fn scan_marked() -> Result<Vec<MarkedProcess>, ProcUnavailable> {
    scan_marked_bounded(None)
}

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
    first_pid: u32,
    spawned_at: Instant,
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

    /// The lowest pid a scan must read, when pid order can be trusted right now.
    fn lowest_pid(self) -> Option<u32> {
        if self.spawned_at.elapsed() >= PID_ORDER_TRUST {
            return None;
        }
        // A last pid below the leader's means pids wrapped since the spawn.
        let last = fs::read_to_string(Path::new(PROC_ROOT).join("sys/kernel/ns_last_pid")).ok()?;
        let last: u32 = last.trim().parse().ok()?;
        (last >= self.first_pid).then_some(self.first_pid)
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
    let entries = fs::read_dir(PROC_ROOT).map_err(|_| ProcUnavailable)?;
    let me = std::process::id();
    let my_uid = fs::metadata(Path::new(PROC_ROOT).join(me.to_string()))
        .map_err(|_| ProcUnavailable)?
        .uid();
    let lowest = bound.and_then(ScanBound::lowest_pid);
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || lowest.is_some_and(|lowest| pid < lowest) {
            continue;
        }
        let Some(marker) = read_marker(pid) else {
            continue;
        };
        // The owner of /proc/<pid> is the process's effective uid: another user's
        // process is never ours to signal.
        if fs::metadata(entry.path()).map(|m| m.uid()).ok() != Some(my_uid) {
            continue;
        }
        let Some(stat) = stat(pid) else {
            continue;
        };
        if stat.is_ending() {
            continue;
        }
        found.push(MarkedProcess {
            pid,
            start_time: stat.start_time,
            marker,
            command_line: command_line(pid).unwrap_or_default(),
        });
    }
    Ok(found)
}

/// How long a scan waits for a process caught in the middle of `execve` to show its
/// new environment.
const EXEC_SETTLE: Duration = Duration::from_millis(20);

/// The owner marker in a process's environment, if it carries a well-formed one.
///
/// A process in the middle of `execve` shows an empty environment for a moment (its new
/// memory map exists, its environment is not on it yet): an escapee caught then would be
/// missed. So an empty environment of a live user process is read again, briefly,
/// until the exec completes. Kernel threads (pid 2 and its children), zombies and
/// processes inside `do_exit` have an empty environment for good and are not waited for.
pub(crate) fn read_marker(pid: u32) -> Option<OwnerMarker> {
    let mut environ = fs::read(proc_path(pid, "environ")).ok()?;
    if environ.is_empty() {
        let stat = stat(pid)?;
        if pid == KTHREADD || stat.ppid == KTHREADD || stat.is_ending() {
            return None;
        }
        let deadline = Instant::now() + EXEC_SETTLE;
        while environ.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            environ = fs::read(proc_path(pid, "environ")).ok()?;
        }
    }
    let value = env_value(&environ, OWNER_MARKER_VAR)?;
    OwnerMarker::parse(std::str::from_utf8(value).ok()?)
}

/// The kernel threads' parent: its children never carry an environment.
const KTHREADD: u32 = 2;

/// The value of `var` in a NUL-separated environment block (`/proc/<pid>/environ`).
/// The first entry wins, as `getenv` would find it.
pub(crate) fn env_value<'a>(environ: &'a [u8], var: &str) -> Option<&'a [u8]> {
    environ.split(|&b| b == 0).find_map(|entry| {
        entry
            .strip_prefix(var.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
    })
}

/// A process's command line, arguments joined by spaces (lossy UTF-8); `None` if it
/// cannot be read, empty for a kernel thread or a zombie.
pub(crate) fn command_line(pid: u32) -> Option<String> {
    let raw = fs::read(proc_path(pid, "cmdline")).ok()?;
    let args: Vec<_> = raw
        .split(|&b| b == 0)
        .filter(|arg| !arg.is_empty())
        .map(String::from_utf8_lossy)
        .collect();
    Some(args.join(" "))
}

/// A process's start time (field 22 of its stat).
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|s| s.start_time)
}

/// Whether the process `pid` that started at `start_time` still runs.
pub(crate) fn liveness(pid: u32, start_time: u64) -> ProcLiveness {
    match fs::read_to_string(proc_path(pid, "stat")) {
        Ok(text) => match parse_stat(&text) {
            Some(stat) if stat.start_time != start_time || is_dead_state(stat.state) => {
                ProcLiveness::Gone
            }
            Some(_) => ProcLiveness::Alive,
            None => ProcLiveness::Unknown,
        },
        // ESRCH shows up when the process exits between open and read.
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc_esrch()) => {
            ProcLiveness::Gone
        }
        Err(_) => ProcLiveness::Unknown,
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
        match stat(last) {
            Some(s) if s.ppid > 1 && !chain.contains(&s.ppid) => chain.push(s.ppid),
            _ => break,
        }
    }
    chain
}

/// The parsed fields of `/proc/<pid>/stat`.
pub(crate) fn stat(pid: u32) -> Option<StatFields> {
    parse_stat(&fs::read_to_string(proc_path(pid, "stat")).ok()?)
}

/// Parses the text of `/proc/<pid>/stat`.
///
/// The second field (the command name) is in parentheses and may itself hold spaces and
/// parentheses, so fields are counted from the *last* `)`.
pub(crate) fn parse_stat(text: &str) -> Option<StatFields> {
    let after_comm = &text[text.rfind(')')? + 1..];
    let mut fields = after_comm.split_ascii_whitespace();
    // Field 3 is the state, field 4 the ppid, field 9 the flags (5 after the ppid);
    // field 22 the start time (13 after the flags).
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let flags = fields.nth(4)?.parse().ok()?;
    let start_time = fields.nth(12)?.parse().ok()?;
    Some(StatFields {
        state,
        ppid,
        flags,
        start_time,
    })
}

/// A zombie (`Z`) or dying (`X`) process has exited: it holds no memory, runs no code,
/// and only waits for its parent to reap it.
fn is_dead_state(state: char) -> bool {
    matches!(state, 'Z' | 'X' | 'x')
}

fn proc_path(pid: u32, file: &str) -> std::path::PathBuf {
    Path::new(PROC_ROOT).join(pid.to_string()).join(file)
}

fn libc_esrch() -> i32 {
    nix::errno::Errno::ESRCH as i32
}

#[cfg(test)]
#[path = "proc_scan_tests.rs"]
mod tests;
