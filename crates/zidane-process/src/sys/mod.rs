//! Every call into the C library and the kernel that Rust cannot check: `waitpid` and
//! `waitid`, taking ownership of a descriptor the kernel just handed out, and (Linux,
//! in `vfork_child`) the `vfork`-style `clone` and what its child does before
//! `exec`, (macOS, in `darwin`) the process table through `libproc` and `sysctl`. This is the crate's only `unsafe` code; each block says why it is sound.
#![allow(unsafe_code)]

#[cfg(target_os = "macos")]
pub(crate) mod darwin;
#[cfg(target_os = "linux")]
pub(crate) mod vfork_child;

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
