//! Linux's `vfork`-style `clone` and what its child does before `exec`, and taking
//! ownership of the log descriptor the child opened. Each `unsafe` block says why it is
//! sound.
//!
//! The child runs on our memory until it execs, so it keeps to what a `vfork` child
//! may do:
//! - it runs on a stack reserved for it, while the thread that cloned it is suspended
//!   (`CLONE_VFORK`) and the stack is the caller's alone (the spawn lock);
//! - it makes system calls and nothing else: no allocation, no lock, no unwinding;
//! - every signal is blocked from before the clone until the child has reset each
//!   handler to the default (its handler table is its own copy: no `CLONE_SIGHAND`),
//!   so no handler of ours ever runs on its stack.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::sys::stat::Mode;
use nix::unistd::Pid;

use crate::log_open::{LOG_MODE, LOG_OPEN_FLAGS};
use crate::sys::Session;

/// Signals are numbered below this on Linux (`_NSIG`).
const NSIG: c_int = 65;

/// Clones a child that runs [`child_main`] with `args` on `stack`, sharing our memory
/// and descriptor table, with every signal blocked around the clone; returns once the
/// child has exec'd or exited (`CLONE_VFORK`).
///
/// The caller must hold `stack` for this child alone (the spawn lock) and keep `args`
/// and every string it points to alive across the call, which a borrow guarantees.
pub(crate) fn clone_vfork_child(args: &ChildArgs, stack: &mut [u128]) -> Result<Pid, Errno> {
    let stack_top = stack.as_mut_ptr_range().end.cast::<c_void>();
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;
    let mut old_mask = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut old_mask),
    )?;
    // SAFETY: `child_main` keeps to what a vfork child may do (module docs). The
    // stack is the caller's alone, and this thread is suspended until the child execs
    // or exits (`CLONE_VFORK`), so `args` and what it points to outlive every use the
    // child makes of them.
    let raw_pid = unsafe {
        libc::clone(
            child_main,
            stack_top,
            flags,
            std::ptr::from_ref(args).cast_mut().cast::<c_void>(),
        )
    };
    let clone_error = Errno::last();
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
    if raw_pid < 0 {
        return Err(clone_error);
    }
    Ok(Pid::from_raw(raw_pid))
}

impl ChildArgs {
    /// The log the child created, if it did: it opened it in the table it shared with
    /// us, so it is ours to own. Call once, after the clone returned.
    pub(crate) fn take_log(&self) -> Option<OwnedFd> {
        let log = self.log_fd.swap(-1, Ordering::AcqRel);
        // SAFETY: the child opened this descriptor in the table it shared with us, and
        // nothing else knows of it (the swap makes this the only owner).
        (log >= 0).then(|| unsafe { OwnedFd::from_raw_fd(log) })
    }
}

/// Where a child that did not reach `exec` stopped.
#[repr(i32)]
pub(crate) enum Stage {
    None = 0,
    Log = 1,
    Group = 2,
    Unshare = 3,
    Stdio = 4,
    Cwd = 5,
    Exec = 6,
    Terminal = 7,
}

/// What the child reads, in the parent's memory; and where it says why it failed.
pub(crate) struct ChildArgs {
    pub(crate) program: *const c_char,
    pub(crate) argv: *const *const c_char,
    pub(crate) envp: *const *const c_char,
    pub(crate) cwd: *const c_char,
    /// Where to create the log; null for none.
    pub(crate) log: *const c_char,
    /// The log's descriptor once created, in the table we share until the unshare.
    pub(crate) log_fd: AtomicI32,
    pub(crate) stdin: RawFd,
    pub(crate) output: RawFd,
    pub(crate) keep_below: c_uint,
    /// The process group and session it starts in.
    pub(crate) session: Session,
    pub(crate) failed_at: AtomicI32,
    pub(crate) errno: AtomicI32,
}

/// The child, from `clone` to `exec`. Only system calls: see the module docs.
extern "C" fn child_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `ChildArgs` that `clone_child` passed, alive until we exec
    // or exit (the thread that owns it is suspended until then).
    let args = unsafe { &*arg.cast_const().cast::<ChildArgs>() };
    // SAFETY: every call below is a plain system call on values the parent prepared;
    // none allocates, locks or unwinds.
    unsafe {
        reset_signal_handlers();
        if !args.log.is_null() {
            // The table is still shared: the descriptor is the parent's.
            let log = libc::open(args.log, LOG_OPEN_FLAGS, LOG_MODE);
            if log < 0 {
                fail(args, Stage::Log);
            }
            args.log_fd.store(log, Ordering::Release);
        }
        let grouped = match args.session {
            Session::Own | Session::Terminal => libc::setsid() >= 0,
            Session::Group => libc::setpgid(0, 0) == 0,
        };
        if !grouped {
            fail(args, Stage::Group);
        }
        // From here on the descriptor table is ours alone.
        if libc::syscall(
            libc::SYS_close_range,
            args.keep_below,
            c_uint::MAX,
            libc::CLOSE_RANGE_UNSHARE,
        ) != 0
        {
            fail(args, Stage::Unshare);
        }
        if libc::dup2(args.stdin, 0) < 0
            || libc::dup2(args.output, 1) < 0
            || libc::dup2(args.output, 2) < 0
            || libc::syscall(libc::SYS_close_range, 3, c_uint::MAX, 0) != 0
        {
            fail(args, Stage::Stdio);
        }
        // The request's type differs between C libraries.
        #[allow(clippy::cast_lossless, trivial_numeric_casts)]
        if args.session == Session::Terminal && libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
            fail(args, Stage::Terminal);
        }
        if libc::chdir(args.cwd) != 0 {
            fail(args, Stage::Cwd);
        }
        let mut unblocked: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut unblocked);
        libc::sigprocmask(
            libc::SIG_SETMASK,
            &raw const unblocked,
            std::ptr::null_mut(),
        );
        libc::execve(args.program, args.argv, args.envp);
        fail(args, Stage::Exec)
    }
}

/// Every handler the parent installed back to the default, before any signal is
/// unblocked; and `SIGPIPE` to the default too, which the Rust runtime ignores but a
/// shell pipeline relies on (as `std::process::Command` does).
///
/// # Safety
/// Only in the child, with every signal blocked.
unsafe fn reset_signal_handlers() {
    // SAFETY: a zeroed `sigaction` is valid; `sigaction` only reads and writes these.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..NSIG {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &raw mut current) != 0 {
                continue;
            }
            let handled =
                current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN;
            if handled || signal == libc::SIGPIPE {
                libc::sigaction(signal, &raw const default, std::ptr::null_mut());
            }
        }
    }
}

/// Records why the child stopped and exits with the shell's "cannot run" status.
///
/// # Safety
/// Only in the child.
unsafe fn fail(args: &ChildArgs, stage: Stage) -> ! {
    args.errno.store(Errno::last_raw(), Ordering::Release);
    args.failed_at.store(stage as i32, Ordering::Release);
    // SAFETY: `_exit` runs no handlers and touches none of the parent's state.
    unsafe { libc::_exit(127) }
}

/// `/dev/null`, close-on-exec, at descriptor 3 or above (a host that closed its stdin
/// would otherwise hand us 0, which the child's `dup2` onto 0 could not make
/// inheritable).
pub(crate) fn open_dev_null() -> io::Result<OwnedFd> {
    let first = open("/dev/null", OFlag::O_RDWR | OFlag::O_CLOEXEC, Mode::empty())?;
    let raw = fcntl(&first, FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: `F_DUPFD_CLOEXEC` just returned this new descriptor, and nothing else
    // owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}
