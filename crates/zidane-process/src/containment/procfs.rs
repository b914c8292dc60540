//! The process table on Linux (and any Unix with a Linux-style `/proc`): reading one
//! process's files under `/proc` — its `stat`, its command line, whether it still
//! lives, its environment, its owner — and listing the pids. What it read, nothing
//! interpreted beyond the kernel's formats; a process that vanishes or refuses a read
//! is `None`. `procfs_macos.rs` answers the same questions on macOS.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// The root of the process filesystem.
pub(crate) const PROC_ROOT: &str = "/proc";

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

pub(crate) use crate::containment::ProcLiveness;

/// Reads a `/proc` file whole. Such files report a size of 0, which makes `fs::read`
/// grow its buffer from a few bytes, a read call each time; one buffer of `expected`
/// bytes takes most in one call.
pub(crate) fn read_proc(path: &Path, expected: usize) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(expected);
    fs::File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Bytes read up front for an environment: most fit in one read.
const ENVIRON_BYTES: usize = 16 << 10;

/// A process's environment, NUL-separated (`/proc/<pid>/environ`); empty while it
/// execs or once it is exiting.
pub(crate) fn environ(pid: u32) -> io::Result<Vec<u8>> {
    read_proc(&proc_path(pid, "environ"), ENVIRON_BYTES)
}

/// The effective uid of `pid` (the owner of `/proc/<pid>`); `None` for our own pid when
/// `/proc` cannot be read at all.
pub(crate) fn owner_uid(pid: u32) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(proc_path(pid, "")).map(|m| m.uid()).ok()
}

/// Every pid listed in `/proc`; `None` when it cannot be listed.
pub(crate) fn list_pids() -> Option<impl Iterator<Item = u32>> {
    let entries = fs::read_dir(PROC_ROOT).ok()?;
    Some(
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok()),
    )
}

/// The thread group (process) that `pid` belongs to: itself for a process, another pid
/// for a thread (`/proc/<tid>` exists for every thread).
pub(crate) fn thread_group(pid: u32) -> Option<u32> {
    let status = read_proc(&proc_path(pid, "status"), 2048).ok()?;
    let status = String::from_utf8_lossy(&status);
    status
        .lines()
        .find_map(|line| line.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()
}

/// The last pid the kernel handed out in our pid namespace.
pub(crate) fn last_pid() -> Option<u32> {
    let text = read_proc(&Path::new(PROC_ROOT).join("sys/kernel/ns_last_pid"), 32).ok()?;
    std::str::from_utf8(&text).ok()?.trim().parse().ok()
}

/// A process's command line, arguments joined by spaces (lossy UTF-8); `None` if it
/// cannot be read, empty for a kernel thread or a zombie.
pub(crate) fn command_line(pid: u32) -> Option<String> {
    let raw = read_proc(&proc_path(pid, "cmdline"), 1024).ok()?;
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
    match read_proc(&proc_path(pid, "stat"), 512) {
        Ok(text) => match std::str::from_utf8(&text).ok().and_then(parse_stat) {
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

/// The parsed fields of `/proc/<pid>/stat`.
pub(crate) fn stat(pid: u32) -> Option<StatFields> {
    parse_stat(std::str::from_utf8(&read_proc(&proc_path(pid, "stat"), 512).ok()?).ok()?)
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

/// Every process listed in `/proc` with the text of its `stat` file, or `None` when
/// `/proc` cannot be listed. Processes that end while being read are skipped.
pub(crate) fn processes_with_stat() -> Option<impl Iterator<Item = (u32, String)>> {
    let entries = std::fs::read_dir(PROC_ROOT).ok()?;
    Some(entries.flatten().filter_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
        let stat = std::fs::read_to_string(proc_path(pid, "stat")).ok()?;
        Some((pid, stat))
    }))
}

fn proc_path(pid: u32, file: &str) -> std::path::PathBuf {
    Path::new(PROC_ROOT).join(pid.to_string()).join(file)
}

fn libc_esrch() -> i32 {
    nix::errno::Errno::ESRCH as i32
}
