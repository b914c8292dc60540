//! Why a quiet task is quiet: what `/proc` says each process of its group is doing,
//! put in words for the `<task-stall>` block.
//!
//! For each process of the group: its state (`/proc/<pid>/stat`), the system call it is
//! blocked in and that call's first argument (`/proc/<pid>/syscall`), the descriptor that
//! argument names (`/proc/<pid>/fd/<n>`), and the kernel function it sleeps in
//! (`/proc/<pid>/wchan`). A prompt-like last line of output is added as supporting
//! evidence, never alone: a task whose processes cannot be read gets no diagnosis.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Processes described at most; a larger group is summed up by count.
const MAX_DESCRIBED: usize = 4;
/// Bytes read from the end of the log to find its last line.
const TAIL_BYTES: u64 = 2048;

/// What one process of the group is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Activity {
    /// Stopped by a signal (or a debugger).
    Stopped,
    /// On a CPU, or ready to run.
    Running,
    /// Exited, waiting to be reaped.
    Zombie,
    /// In uninterruptible sleep: disk or other kernel I/O.
    KernelIo,
    /// Blocked reading from a descriptor.
    Reading(Descriptor),
    /// Blocked writing to a descriptor (a full pipe nobody drains).
    Writing(Descriptor),
    /// Waiting for a child process to end.
    WaitingForChild,
    /// Sleeping for a set time.
    Sleeping,
    /// Waiting on several descriptors at once (`poll`, `select`, `epoll`).
    Polling,
    /// Waiting for a connection to a listening socket.
    Accepting,
    /// Opening a FIFO that has no other end yet.
    OpeningFifo,
    /// Waiting on a lock (`futex`).
    Locked,
    /// Asleep somewhere else: the kernel function, when known.
    Asleep(Option<String>),
}

/// What a descriptor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Descriptor {
    pub(crate) fd: i64,
    pub(crate) kind: DescriptorKind,
}

/// What a descriptor points at.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(target_os = "macos", allow(dead_code))] // macOS shows no `/proc` to parse
pub(crate) enum DescriptorKind {
    Terminal(String),
    /// The pipe the task was started with as its stdin, that input is written to.
    InputPipe,
    Pipe,
    Socket,
    Null,
    File(String),
    Unknown,
}

impl DescriptorKind {
    /// Reads what `/proc/<pid>/fd/<fd>` links to.
    #[cfg_attr(target_os = "macos", allow(dead_code))] // macOS shows no `/proc` to parse
    pub(crate) fn from_link(target: &str) -> Self {
        if target.starts_with("pipe:") {
            Self::Pipe
        } else if target.starts_with("socket:") {
            Self::Socket
        } else if target == "/dev/null" {
            Self::Null
        } else if target.starts_with("/dev/pts/")
            || target.starts_with("/dev/tty")
            || target == "/dev/console"
        {
            Self::Terminal(target.to_owned())
        } else if target.starts_with('/') {
            Self::File(target.to_owned())
        } else {
            Self::Unknown
        }
    }
}

/// The system calls a blocked process is recognised by, for this architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Read,
    Write,
    Wait,
    Sleep,
    Poll,
    Accept,
    Futex,
    Other,
}

#[cfg(target_arch = "x86_64")]
fn call_of(nr: i64) -> Call {
    match nr {
        0 | 17 | 19 | 45 | 47 => Call::Read,
        1 | 18 | 20 => Call::Write,
        61 | 247 => Call::Wait,
        35 | 230 => Call::Sleep,
        7 | 23 | 232 | 270 | 271 | 281 | 441 => Call::Poll,
        43 | 288 => Call::Accept,
        202 => Call::Futex,
        _ => Call::Other,
    }
}

#[cfg(target_arch = "aarch64")]
fn call_of(nr: i64) -> Call {
    match nr {
        63 | 65 | 67 | 207 | 212 => Call::Read,
        64 | 66 | 68 => Call::Write,
        260 | 95 => Call::Wait,
        101 | 115 => Call::Sleep,
        72 | 73 | 22 | 441 => Call::Poll,
        202 | 242 => Call::Accept,
        98 => Call::Futex,
        _ => Call::Other,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn call_of(_: i64) -> Call {
    Call::Other
}

/// Classifies a process from what `/proc` showed: its state letter, the first two
/// fields of its `syscall` file (number, first argument), its `wchan`, and a lookup of
/// its descriptors.
pub(crate) fn classify(
    state: char,
    syscall: Option<(i64, i64)>,
    wchan: Option<&str>,
    descriptor: impl Fn(i64) -> DescriptorKind,
) -> Activity {
    match state {
        'T' | 't' => return Activity::Stopped,
        'R' => return Activity::Running,
        'Z' | 'X' => return Activity::Zombie,
        'D' => return Activity::KernelIo,
        _ => {}
    }
    let wchan = wchan.filter(|w| !w.is_empty() && *w != "0");
    if wchan == Some("wait_for_partner") {
        return Activity::OpeningFifo;
    }
    if let Some((nr, arg)) = syscall {
        let fd = || Descriptor {
            fd: arg,
            kind: descriptor(arg),
        };
        match call_of(nr) {
            Call::Read => return Activity::Reading(fd()),
            Call::Write => return Activity::Writing(fd()),
            Call::Wait => return Activity::WaitingForChild,
            Call::Sleep => return Activity::Sleeping,
            Call::Poll => return Activity::Polling,
            Call::Accept => return Activity::Accepting,
            Call::Futex => return Activity::Locked,
            Call::Other => {}
        }
    }
    match wchan {
        Some("do_wait" | "kernel_wait4") => Activity::WaitingForChild,
        Some("pipe_read" | "pipe_wait") => Activity::Reading(Descriptor {
            fd: -1,
            kind: DescriptorKind::Pipe,
        }),
        Some("n_tty_read" | "wait_woken") => Activity::Reading(Descriptor {
            fd: -1,
            kind: DescriptorKind::Terminal("a terminal".to_owned()),
        }),
        Some("hrtimer_nanosleep" | "do_nanosleep") => Activity::Sleeping,
        Some("do_select" | "do_sys_poll" | "ep_poll") => Activity::Polling,
        Some("futex_wait_queue" | "futex_wait_queue_me") => Activity::Locked,
        other => Activity::Asleep(other.map(str::to_owned)),
    }
}

/// The words for an activity.
pub(crate) fn describe(activity: &Activity) -> String {
    let fd_text = |d: &Descriptor| {
        let which = match d.fd {
            0 => "its stdin".to_owned(),
            n if n >= 0 => format!("descriptor {n}"),
            _ => "a descriptor".to_owned(),
        };
        match &d.kind {
            DescriptorKind::Terminal(path) => format!("{which}, a terminal ({path})"),
            DescriptorKind::InputPipe => format!("{which}, the pipe its input is written to"),
            DescriptorKind::Pipe => format!("{which}, a pipe"),
            DescriptorKind::Socket => format!("{which}, a socket"),
            DescriptorKind::Null => format!("{which} (/dev/null)"),
            DescriptorKind::File(path) => format!("{which} ({path})"),
            DescriptorKind::Unknown => which,
        }
    };
    match activity {
        Activity::Stopped => "stopped by a signal (SIGSTOP/SIGTSTP, or a debugger)".to_owned(),
        Activity::Running => "running on CPU".to_owned(),
        Activity::Zombie => "exited, not yet reaped".to_owned(),
        Activity::KernelIo => {
            "in uninterruptible kernel I/O (disk or network file system)".to_owned()
        }
        Activity::Reading(d) => match d.kind {
            DescriptorKind::Terminal(_) => {
                format!("waiting for input from a terminal: reading {}", fd_text(d))
            }
            DescriptorKind::InputPipe => format!("waiting for input: reading {}", fd_text(d)),
            _ => format!("waiting to read from {}", fd_text(d)),
        },
        Activity::Writing(d) => {
            format!("waiting to write to {} (nobody is reading it)", fd_text(d))
        }
        Activity::WaitingForChild => "waiting for a child process".to_owned(),
        Activity::Sleeping => "sleeping (a timed wait)".to_owned(),
        Activity::Polling => {
            "waiting on several descriptors (poll/select), e.g. sockets or a terminal".to_owned()
        }
        Activity::Accepting => "waiting for an incoming connection".to_owned(),
        Activity::OpeningFifo => "opening a FIFO that has no other end yet".to_owned(),
        Activity::Locked => "waiting on a lock or another thread (futex)".to_owned(),
        Activity::Asleep(Some(wchan)) => format!("asleep in the kernel ({wchan})"),
        Activity::Asleep(None) => "asleep".to_owned(),
    }
}

/// Whether a process is blocked reading what someone would type: a terminal, or its
/// stdin.
fn reads_input(activity: &Activity) -> bool {
    matches!(
        activity,
        Activity::Reading(Descriptor {
            kind: DescriptorKind::Terminal(_) | DescriptorKind::InputPipe,
            ..
        })
    )
}

/// Whether the last line of output looks like a question waiting for an answer.
pub(crate) fn looks_like_prompt(line: &str) -> bool {
    let line = line.trim_end();
    if line.is_empty() {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    lower.contains("password")
        || lower.contains("passphrase")
        || lower.contains("[y/n]")
        || lower.contains("(y/n)")
        || lower.contains("[yes/no]")
        || lower.contains("(yes/no")
        || line.ends_with('?')
        || line.ends_with(':')
        || line.ends_with('>')
}

/// The diagnosis of the task whose group is `pgid` and whose log is `log`, or `None`
/// when `/proc` cannot tell. `input_pipe`: the inode of the pipe the task's input is
/// written to, if it has one (a read from it is a wait for input, a read from any other
/// pipe is not).
pub(crate) fn diagnose(pgid: u32, log: &Path, input_pipe: Option<u64>) -> Option<String> {
    let processes = group_members(pgid, input_pipe)?;
    if processes.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = processes
        .iter()
        .take(MAX_DESCRIBED)
        .map(|(pid, name, activity)| format!("{name} (pid {pid}) is {}", describe(activity)))
        .collect();
    if processes.len() > MAX_DESCRIBED {
        parts.push(format!(
            "{} more processes",
            processes.len() - MAX_DESCRIBED
        ));
    }
    // Said first and plainly: it is what the model can act on.
    let waiting_for_input = processes
        .iter()
        .any(|(_, _, activity)| reads_input(activity));
    let mut text = if waiting_for_input {
        "Waiting for input. ".to_owned()
    } else {
        String::new()
    };
    text.push_str(&parts.join("; "));
    text.push('.');
    if let Some(line) = last_line(log).filter(|l| looks_like_prompt(l)) {
        text.push_str(&format!(" Its last output looks like a prompt: {line:?}."));
    }
    Some(text)
}

/// `(pid, name, activity)` of every process in the group, leader first: on macOS from
/// the process states alone (no system call or wait channel is shown there).
#[cfg(target_os = "macos")]
fn group_members(pgid: u32, _input_pipe: Option<u64>) -> Option<Vec<(u32, String, Activity)>> {
    let mut members: Vec<_> = crate::containment::procfs::group_members(pgid)?
        .into_iter()
        .map(|(pid, name, state)| {
            let activity = classify(state, None, None, |_| DescriptorKind::Unknown);
            (pid, name, activity)
        })
        .collect();
    members.sort_by_key(|(pid, _, _)| (*pid != pgid, *pid));
    Some(members)
}

/// `(pid, name, activity)` of every process in the group, leader first.
#[cfg(not(target_os = "macos"))]
fn group_members(pgid: u32, input_pipe: Option<u64>) -> Option<Vec<(u32, String, Activity)>> {
    let input_link = input_pipe.map(|inode| format!("pipe:[{inode}]"));
    let mut members = Vec::new();
    for (pid, stat) in crate::containment::procfs::processes_with_stat()? {
        let Some((name, state, group)) = parse_stat(&stat) else {
            continue;
        };
        if group != pgid {
            continue;
        }
        let syscall = fs::read_to_string(format!("/proc/{pid}/syscall"))
            .ok()
            .and_then(|s| parse_syscall(&s));
        let wchan = fs::read_to_string(format!("/proc/{pid}/wchan")).ok();
        let activity = classify(state, syscall, wchan.as_deref(), |fd| {
            fs::read_link(format!("/proc/{pid}/fd/{fd}"))
                .map(|t| {
                    let target = t.to_string_lossy();
                    if input_link.as_deref() == Some(&*target) {
                        DescriptorKind::InputPipe
                    } else {
                        DescriptorKind::from_link(&target)
                    }
                })
                .unwrap_or(DescriptorKind::Unknown)
        });
        members.push((pid, name, activity));
    }
    members.sort_by_key(|(pid, _, _)| (*pid != pgid, *pid));
    Some(members)
}

/// `(name, state, process group)` from the text of `/proc/<pid>/stat`.
#[cfg_attr(target_os = "macos", allow(dead_code))] // macOS shows no `/proc` to parse
pub(crate) fn parse_stat(text: &str) -> Option<(String, char, u32)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_owned();
    let mut fields = text.get(close + 1..)?.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((name, state, pgrp))
}

/// `(number, first argument)` from `/proc/<pid>/syscall`; `None` while the process runs
/// (`running`) or when it is not in a call.
#[cfg_attr(target_os = "macos", allow(dead_code))] // macOS shows no `/proc` to parse
pub(crate) fn parse_syscall(text: &str) -> Option<(i64, i64)> {
    let mut fields = text.split_ascii_whitespace();
    let nr = fields.next()?.parse::<i64>().ok()?;
    let arg = fields.next()?;
    let arg = i64::from_str_radix(arg.trim_start_matches("0x"), 16).ok()?;
    Some((nr, arg))
}

/// The last non-empty line of the log.
fn last_line(log: &Path) -> Option<String> {
    let mut file = fs::File::open(log).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))
        .ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let text = String::from_utf8_lossy(&tail);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take(200).collect())
}

#[cfg(test)]
#[path = "stall_diagnosis_tests.rs"]
mod tests;
