//! The owner marker: an environment variable every task process carries, naming the
//! context that owns it.
//!
//! A process group is not a container: a task that calls `setsid` (or double-forks into a
//! new session) leaves it, and a host killed with SIGKILL never kills anything. The
//! environment, though, is inherited by every descendant unless it is deliberately
//! scrubbed, and Linux shows it to the same user in `/proc/<pid>/environ`. So each task
//! is started with [`OWNER_MARKER_ENV`] set to a token that names
//!
//! - the owning **process**, by pid *and* start time (field 22 of `/proc/<pid>/stat`), so
//!   that a later scan can tell whether that owner still lives — a recycled pid has a
//!   different start time and cannot pass for the dead owner;
//! - the owning **context** inside that process, by a random nonce, so that two contexts
//!   of one host never touch each other's tasks;
//! - the **work** — a background task, or one foreground command — so that killing
//!   `bash_3` ends `bash_3`'s escapees and nothing else.
//!
//! The token reads `z1:<pid>:<start-time>:<nonce, 16 hex digits>:<work>`, e.g.
//! `z1:4242:987654:00c0ffee12345678:bash_3`, where `<work>` is a task id or `exec_<n>`. The leading version lets a later format
//! coexist with this one: a token this code cannot parse is not ours, and is left alone.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(unix)]
use std::time::{Duration, Instant};
use std::time::{SystemTime, UNIX_EPOCH};

use zidane_context::TaskId;

#[cfg(unix)]
use crate::containment::procfs::{self, ProcLiveness, environ, stat};

/// The environment variable that carries a task's owner marker.
///
/// Set on every process a `ProcessContext` starts, and so inherited by all their
/// descendants. A nested host (zidane running inside a zidane task) overwrites it for its
/// own tasks: the innermost owner is the one that ends them.
pub const OWNER_MARKER_ENV: &str = "ZIDANE_TASK_OWNER";

/// The format version at the head of every token.
const MARKER_VERSION: &str = "z1";

/// The process and context that own tasks: the part of a marker shared by every task of
/// one context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OwnerId {
    /// The host process's pid.
    pub(crate) pid: u32,
    /// The host process's start time, in clock ticks since boot (field 22 of
    /// `/proc/<pid>/stat`); `0` where `/proc` cannot be read, which no live process can
    /// match, so such an owner is never mistaken for a recycled pid.
    pub(crate) start_time: u64,
    /// Tells apart the contexts of one host process.
    pub(crate) nonce: u64,
}

impl OwnerId {
    /// The owner id for a new context in this process, with a fresh nonce.
    pub(crate) fn for_new_context() -> Self {
        let pid = std::process::id();
        Self {
            pid,
            start_time: start_time(pid),
            nonce: fresh_nonce(),
        }
    }

    /// What every marker of this owner starts with, `z1:<pid>:<start-time>:<nonce>:`:
    /// a scan for it finds every process of this context, whatever its work.
    // Only the lifeline asks for it, which is Unix's.
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn context_prefix(self) -> String {
        format!(
            "{MARKER_VERSION}:{}:{}:{:016x}:",
            self.pid, self.start_time, self.nonce
        )
    }

    /// The marker of one background task or foreground command of this owner.
    pub(crate) fn marker(self, work: MarkedWork) -> OwnerMarker {
        OwnerMarker { owner: self, work }
    }

    /// Whether the owning process still runs: same pid, same start time, not a zombie.
    #[cfg(unix)]
    ///
    /// Anything short of proof that it is gone counts as alive — a sweep must never end
    /// the tasks of a live host because one read failed.
    pub(crate) fn is_alive(self) -> bool {
        match procfs::liveness(self.pid, self.start_time) {
            ProcLiveness::Gone => false,
            ProcLiveness::Alive | ProcLiveness::Unknown => true,
        }
    }
}

/// The start time of process `pid` as markers carry it; `0` where it cannot be read.
#[cfg(unix)]
fn start_time(pid: u32) -> u64 {
    procfs::start_time(pid).unwrap_or(0)
}

/// On Windows a task's job object, not its marker, decides what ends with it: no
/// process table is read, and every marker carries `0`.
#[cfg(windows)]
fn start_time(_pid: u32) -> u64 {
    0
}

/// What a marker names inside its owner's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MarkedWork {
    /// A background task: `bash_<n>`.
    Task(TaskId),
    /// A foreground command, numbered per context: `exec_<n>`. Foreground commands have
    /// no task id, but their escapees and orphans need a name all the same.
    Exec(u64),
}

/// The prefix of a foreground command's name in a marker.
const EXEC_PREFIX: &str = "exec_";

// Only Unix reads markers back (its scans); a Windows job needs none.
#[cfg_attr(windows, allow(dead_code))]
impl MarkedWork {
    fn parse(s: &str) -> Option<Self> {
        match s.strip_prefix(EXEC_PREFIX) {
            Some(digits) => parse_decimal(digits).map(Self::Exec),
            None => TaskId::parse(s).ok().map(Self::Task),
        }
    }

    /// The task id, for a background task.
    pub(crate) fn task_id(self) -> Option<TaskId> {
        match self {
            Self::Task(id) => Some(id),
            Self::Exec(_) => None,
        }
    }
}

impl fmt::Display for MarkedWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Task(id) => write!(f, "{id}"),
            Self::Exec(n) => write!(f, "{EXEC_PREFIX}{n}"),
        }
    }
}

/// One marker: an owner and the work it names. `Display` is the token that goes into
/// the environment; [`OwnerMarker::parse`] reads it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OwnerMarker {
    /// Who owns the task.
    pub(crate) owner: OwnerId,
    /// Which task or command of that owner.
    pub(crate) work: MarkedWork,
}

impl OwnerMarker {
    /// Parses a token; `None` for anything that is not exactly a token of this format
    /// (another version, a forged or truncated value), which callers leave alone.
    // Only Unix reads markers back (its scans); a Windows job needs none.
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn parse(token: &str) -> Option<Self> {
        let mut parts = token.split(':');
        if parts.next()? != MARKER_VERSION {
            return None;
        }
        let pid = parse_decimal(parts.next()?)?;
        let start_time = parse_decimal(parts.next()?)?;
        let nonce_hex = parts.next()?;
        if nonce_hex.len() != 16 || !nonce_hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let nonce = u64::from_str_radix(nonce_hex, 16).ok()?;
        let work = MarkedWork::parse(parts.next()?)?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            owner: OwnerId {
                pid: u32::try_from(pid).ok()?,
                start_time,
                nonce,
            },
            work,
        })
    }
}

impl fmt::Display for OwnerMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{MARKER_VERSION}:{}:{}:{:016x}:{}",
            self.owner.pid, self.owner.start_time, self.owner.nonce, self.work
        )
    }
}

/// Canonical decimal only (no sign, no leading zeros), so one marker has one spelling
/// and a token matches byte for byte or not at all.
#[cfg_attr(windows, allow(dead_code))]
fn parse_decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

/// A nonce that differs between contexts of one process and between processes.
///
/// Not a secret — the marker only has to be unique, not unguessable (a process that can
/// read our tasks' environment can signal them anyway). `RandomState` is seeded from the
/// OS once per thread and then stepped, so mixing in a process-wide counter and the clock
/// is enough without pulling in a random-number crate.
fn fresh_nonce() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    RandomState::new().hash_one((count, nanos, std::process::id()))
}

// Reading a process's marker: only this module parses one.

/// What a scan does on meeting a live process caught in the middle of `execve` (see
/// [`read_marker`]).
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patience {
    /// Wait, briefly, for its new environment: the read blocks up to [`EXEC_SETTLE`].
    WaitForExec,
    /// Give up at once ([`WouldWait`]): the caller cannot block.
    Never,
}

/// A process was caught inside `execve` and the read was told not to wait.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WouldWait;

/// How long a scan waits for a process caught in the middle of `execve` to show its
/// new environment.
#[cfg(unix)]
const EXEC_SETTLE: Duration = Duration::from_millis(20);

/// The owner marker in a process's environment, if it carries a well-formed one.
///
/// A process in the middle of `execve` shows an empty environment for a moment (its new
/// memory map exists, its environment is not on it yet): an escapee caught then would be
/// missed. So an empty environment of a live user process is read again, briefly,
/// until the exec completes (or, with [`Patience::Never`], the read gives up). Kernel
/// threads (pid 2 and its children), zombies and processes inside `do_exit` have an
/// empty environment for good and are not waited for.
#[cfg(unix)]
pub(crate) fn read_marker(pid: u32, patience: Patience) -> Result<Option<OwnerMarker>, WouldWait> {
    let Ok(mut block) = environ(pid) else {
        return Ok(None);
    };
    if block.is_empty() {
        let Some(stat) = stat(pid) else {
            return Ok(None);
        };
        if pid == KTHREADD || stat.ppid == KTHREADD || stat.is_ending() {
            return Ok(None);
        }
        if patience == Patience::Never {
            return Err(WouldWait);
        }
        let deadline = Instant::now() + EXEC_SETTLE;
        while block.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            let Ok(again) = environ(pid) else {
                return Ok(None);
            };
            block = again;
        }
    }
    Ok(env_value(&block, OWNER_MARKER_ENV)
        .and_then(|value| std::str::from_utf8(value).ok())
        .and_then(OwnerMarker::parse))
}

/// The value of `var` in a NUL-separated environment block. The first entry wins, as
/// `getenv` would find it.
#[cfg(unix)]
pub(crate) fn env_value<'a>(environ: &'a [u8], var: &str) -> Option<&'a [u8]> {
    environ.split(|&b| b == 0).find_map(|entry| {
        entry
            .strip_prefix(var.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
    })
}

/// The kernel threads' parent: its children never carry an environment.
#[cfg(unix)]
const KTHREADD: u32 = 2;

#[cfg(test)]
#[cfg(unix)]
#[path = "owner_marker_tests.rs"]
mod tests;
