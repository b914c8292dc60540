//! Reading one process's files under `/proc`: its `stat`, its command line, whether it
//! still lives, its environment's variables. What it read, nothing interpreted beyond
//! the kernel's formats; a process that vanishes or refuses a read is `None`.

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

/// Reads a `/proc` file whole. Such files report a size of 0, which makes `fs::read`
/// grow its buffer from a few bytes, a read call each time; one buffer of `expected`
/// bytes takes most in one call.
pub(crate) fn read_proc(path: &Path, expected: usize) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(expected);
    fs::File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

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

pub(crate) fn proc_path(pid: u32, file: &str) -> std::path::PathBuf {
    Path::new(PROC_ROOT).join(pid.to_string()).join(file)
}

fn libc_esrch() -> i32 {
    nix::errno::Errno::ESRCH as i32
}
