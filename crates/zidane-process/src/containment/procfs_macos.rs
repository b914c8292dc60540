//! The process table on macOS, answering what `procfs.rs` answers on Linux: the pids
//! (`proc_listallpids`), a process's parent, owner, state and start time
//! (`proc_pidinfo`), its command line and environment (`KERN_PROCARGS2`). A process
//! that vanishes or refuses a read is `None`.

use std::io;
use std::time::Duration;

pub(crate) use crate::containment::ProcLiveness;
use crate::containment::procargs::split_procargs;
use crate::sys::darwin;

/// `pbi_status` of a zombie (`SZOMB`, `sys/proc.h`).
const SZOMB: u32 = 5;
/// `P_WEXIT` (`sys/proc.h`): the process is exiting.
const P_WEXIT: u32 = 0x2000;

/// What the kernel says about a process that we need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatFields {
    /// The state, as a Linux-style letter (`R`, `S`, `T`, `Z`, `I`).
    pub(crate) state: char,
    /// The parent's pid.
    pub(crate) ppid: u32,
    /// Whether it is exiting (`P_WEXIT`).
    exiting: bool,
    /// Start time, microseconds since the epoch.
    pub(crate) start_time: u64,
}

impl StatFields {
    /// Whether the process is dead or dying: a zombie, or already exiting.
    pub(crate) fn is_ending(&self) -> bool {
        self.state == 'Z' || self.exiting
    }
}

fn from_info(info: &libc::proc_bsdinfo) -> StatFields {
    let state = match info.pbi_status {
        1 => 'I',
        2 => 'R',
        3 => 'S',
        4 => 'T',
        SZOMB => 'Z',
        _ => '?',
    };
    StatFields {
        state,
        ppid: info.pbi_ppid,
        exiting: info.pbi_flags & P_WEXIT != 0,
        start_time: info
            .pbi_start_tvsec
            .saturating_mul(1_000_000)
            .saturating_add(info.pbi_start_tvusec),
    }
}

fn raw_pid(pid: u32) -> Option<libc::pid_t> {
    libc::pid_t::try_from(pid).ok()
}

/// A process's parent, state and start time.
pub(crate) fn stat(pid: u32) -> Option<StatFields> {
    darwin::bsd_info(raw_pid(pid)?)
        .ok()
        .map(|info| from_info(&info))
}

/// A process's start time.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|s| s.start_time)
}

/// Whether the process `pid` that started at `start_time` still runs.
pub(crate) fn liveness(pid: u32, start_time: u64) -> ProcLiveness {
    let Some(raw) = raw_pid(pid) else {
        return ProcLiveness::Gone;
    };
    match darwin::bsd_info(raw) {
        Ok(info) => {
            let stat = from_info(&info);
            if stat.start_time != start_time || stat.state == 'Z' {
                ProcLiveness::Gone
            } else {
                ProcLiveness::Alive
            }
        }
        Err(error) if error.raw_os_error() == Some(libc::ESRCH) => ProcLiveness::Gone,
        Err(_) => ProcLiveness::Unknown,
    }
}

/// A process's command line, arguments joined by spaces (lossy UTF-8).
pub(crate) fn command_line(pid: u32) -> Option<String> {
    let block = darwin::proc_args(raw_pid(pid)?).ok()?;
    let (args, _) = split_procargs(&block)?;
    let args: Vec<_> = args
        .into_iter()
        .filter(|arg| !arg.is_empty())
        .map(String::from_utf8_lossy)
        .collect();
    Some(args.join(" "))
}

/// A process's environment as it was exec'd, NUL-separated.
pub(crate) fn environ(pid: u32) -> io::Result<Vec<u8>> {
    let raw = raw_pid(pid).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    let block = darwin::proc_args(raw)?;
    split_procargs(&block)
        .map(|(_, env)| env.to_vec())
        .ok_or_else(|| io::Error::other("malformed KERN_PROCARGS2 block"))
}

/// The effective uid of `pid`.
pub(crate) fn owner_uid(pid: u32) -> Option<u32> {
    darwin::bsd_info(raw_pid(pid)?)
        .ok()
        .map(|info| info.pbi_uid)
}

/// Every pid on the machine; `None` when they cannot be listed.
pub(crate) fn list_pids() -> Option<impl Iterator<Item = u32>> {
    let pids = darwin::list_all_pids().ok()?;
    Some(pids.into_iter().filter_map(|pid| u32::try_from(pid).ok()))
}

/// A pid on macOS always names a process, never a thread.
pub(crate) fn thread_group(pid: u32) -> Option<u32> {
    Some(pid)
}

/// macOS does not say which pid it handed out last: scans list every process.
pub(crate) fn last_pid() -> Option<u32> {
    None
}

/// `(pid, name, state)` of every process in group `pgid`; `None` when the pids cannot
/// be listed.
pub(crate) fn group_members(pgid: u32) -> Option<Vec<(u32, String, char)>> {
    let members = darwin::list_all_pids()
        .ok()?
        .into_iter()
        .filter_map(|pid| darwin::bsd_info(pid).ok())
        .filter(|info| info.pbi_pgid == pgid)
        .map(|info| {
            let name: Vec<u8> = info
                .pbi_comm
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c.to_ne_bytes()[0])
                .collect();
            let stat = from_info(&info);
            (
                info.pbi_pid,
                String::from_utf8_lossy(&name).into_owned(),
                stat.state,
            )
        })
        .collect();
    Some(members)
}

/// The CPU time the live processes of group `pgid` have used, with what each reaped of
/// its children; `None` when the pids cannot be listed.
pub(crate) fn group_cpu_time(pgid: u32) -> Option<Duration> {
    let mut nanos = 0_u64;
    for pid in darwin::list_all_pids().ok()? {
        if darwin::bsd_info(pid).is_ok_and(|info| info.pbi_pgid == pgid)
            && let Ok(used) = darwin::cpu_nanos(pid)
        {
            nanos = nanos.saturating_add(used);
        }
    }
    Some(Duration::from_nanos(nanos))
}
