//! A new pseudo-terminal for a task: its master (ours: the task's output is read
//! from it and its input written to it) and its slave (the task's stdin, stdout and
//! stderr, and its controlling terminal).

use std::io;
use std::os::fd::OwnedFd;

use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::pty::{Winsize, openpty};
use zidane_context::TtySize;

/// The descriptors of a new terminal, all close-on-exec.
#[derive(Debug)]
pub(crate) struct Terminal {
    /// The master, non-blocking: the task's output is read here.
    pub(crate) master: OwnedFd,
    /// Another descriptor of the master, for writing the task's input and setting the
    /// terminal's size.
    pub(crate) input: OwnedFd,
    /// The slave: the task's stdin, stdout and stderr.
    pub(crate) slave: OwnedFd,
}

/// Opens a pseudo-terminal of `size`.
///
/// `openpty` cannot make its descriptors close-on-exec, so they are marked right
/// after; a child that another thread starts through a plain `fork` in between would
/// inherit them (the fast spawn closes every descriptor it was not given).
pub(crate) fn open_terminal(size: TtySize) -> io::Result<Terminal> {
    let winsize = Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&winsize), None)?;
    for end in [&pty.master, &pty.slave] {
        fcntl(end, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    // O_NONBLOCK lives on the open file description, so the input descriptor (a dup)
    // is non-blocking too: a write never blocks a runtime thread.
    fcntl(&pty.master, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    let input = pty.master.try_clone()?;
    Ok(Terminal {
        master: pty.master,
        input,
        slave: pty.slave,
    })
}
