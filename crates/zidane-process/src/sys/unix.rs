//! The Unix calls: `waitpid` and `waitid`, a terminal's session and window size.

use std::ffi::c_int;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::unistd::Pid;

/// Reaps our child `pid`: blocks until it exits if `block`, else returns `Ok(None)`
/// while it runs. The status is std's, so that every signal (realtime ones included,
/// which `nix` cannot name) reads the same as through `std::process::Child`.
pub(crate) fn reap(pid: Pid, block: bool) -> io::Result<Option<ExitStatus>> {
    let flags = if block { 0 } else { libc::WNOHANG };
    let mut status: c_int = 0;
    loop {
        // SAFETY: `waitpid` writes only `status`, a local.
        let reaped = unsafe { libc::waitpid(pid.as_raw(), &raw mut status, flags) };
        match reaped {
            0 => return Ok(None),
            r if r > 0 => return Ok(Some(ExitStatus::from_raw(status))),
            _ => match io::Error::last_os_error() {
                error if error.kind() == io::ErrorKind::Interrupted => {}
                error => return Err(error),
            },
        }
    }
}

/// Whether our child `pid` has not exited yet, asked without reaping it (`waitid` with
/// `WNOWAIT`), so its owner still reaps it and reads its status. A zombie, or a child
/// already reaped, has exited.
pub(crate) fn has_not_exited(pid: Pid) -> bool {
    let Ok(id) = libc::id_t::try_from(pid.as_raw()) else {
        return false;
    };
    // SAFETY: a zeroed `siginfo_t` is valid; `waitid` writes only into it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: `waitid` writes only `info`, a local.
    if unsafe { libc::waitid(libc::P_PID, id, &raw mut info, flags) } != 0 {
        return false;
    }
    // With WNOHANG, no child in a waitable state leaves the pid zero.
    signalled_pid(&info) == 0
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn signalled_pid(info: &libc::siginfo_t) -> libc::pid_t {
    // SAFETY: `waitid` filled the child fields of this `siginfo_t` (or left it zeroed).
    unsafe { info.si_pid() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn signalled_pid(info: &libc::siginfo_t) -> libc::pid_t {
    info.si_pid
}

/// Where a child starts: which process group and session it leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Session {
    /// A process group of its own, in our session (`setpgid(0, 0)`).
    Group,
    /// A session of its own, without a controlling terminal (`setsid`): a sandboxed
    /// task, which then cannot open ours (`/dev/tty`) to push keystrokes into it.
    Own,
    /// A session of its own whose controlling terminal is its stdin (`setsid`, then
    /// `TIOCSCTTY`): a terminal task.
    Terminal,
}

/// Has a child that `command` starts lead a session of its own, without a
/// controlling terminal (`setsid`). Use instead of `process_group(0)`: a process that
/// already leads a group cannot start a session.
pub(crate) fn start_own_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe system call; it allocates nothing and touches no lock.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Has a child that `command` starts make its stdin its controlling terminal: a new
/// session (`setsid`, so the child leads its own session and process group), then
/// `TIOCSCTTY` on descriptor 0. Use instead of `process_group(0)`: a process that
/// already leads a group cannot start a session.
pub(crate) fn start_session_on_terminal(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and makes only two
    // async-signal-safe system calls (`setsid`, `ioctl`); it allocates nothing and
    // touches no lock.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // The request's type differs between C libraries (an int on musl, an
            // unsigned long on glibc and macOS).
            #[allow(clippy::cast_lossless, trivial_numeric_casts)]
            if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Sets the size of the terminal whose master (or slave) is `terminal`; the kernel
/// sends `SIGWINCH` to its foreground process group.
pub(crate) fn set_window_size(
    terminal: std::os::fd::BorrowedFd<'_>,
    rows: u16,
    cols: u16,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: `TIOCSWINSZ` only reads the `winsize` it is given, a local.
    #[allow(clippy::cast_lossless, trivial_numeric_casts)]
    let done = unsafe { libc::ioctl(terminal.as_raw_fd(), libc::TIOCSWINSZ as _, &raw const size) };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Closes this process to inspection by others: no core dump (it would carry the
/// process's memory: keys, tokens), and on Linux not dumpable, so other processes of
/// the same user can neither read its `/proc/<pid>/environ` and `mem` nor trace it; on
/// macOS no debugger may attach (`PT_DENY_ATTACH`).
pub(crate) fn harden() -> io::Result<()> {
    let none = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads the struct we pass; it lives through the call.
    if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &raw const none) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_DUMPABLE takes one integer argument and touches no memory.
        if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(target_os = "macos")]
    {
        // SAFETY: PT_DENY_ATTACH takes no address or data and touches no memory.
        if unsafe { libc::ptrace(libc::PT_DENY_ATTACH, 0, std::ptr::null_mut(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
