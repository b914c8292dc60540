//! The output pipe of a command: both ends close-on-exec, so no other child inherits
//! them and the read end sees end-of-file once the command's processes are gone.

use std::io;
use std::os::fd::OwnedFd;

/// A pipe whose two ends are close-on-exec from the start (`pipe2(O_CLOEXEC)`).
#[cfg(target_os = "linux")]
pub(crate) fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

/// A pipe whose two ends are made close-on-exec right after `pipe(2)` (no `pipe2`
/// here). A child another thread forks in between would inherit them; `std`'s own
/// spawn on these systems marks its pipes the same way.
#[cfg(not(target_os = "linux"))]
pub(crate) fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    let (read, write) = nix::unistd::pipe()?;
    for end in [&read, &write] {
        fcntl(end, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    Ok((read, write))
}
