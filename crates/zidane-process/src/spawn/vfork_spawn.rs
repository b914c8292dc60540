//! Starting `/bin/sh` the cheapest way the kernel allows: a `vfork`-style child that
//! shares our descriptor table and sheds all of it but three descriptors before `exec`.
//!
//! Why not `std::process::Command` (glibc's `posix_spawn`): two of its costs grow with
//! what the host is running, and both sit on the path of every start.
//! - Its child gets a *copy* of our whole descriptor table, and its `exec` closes that
//!   copy again one descriptor at a time. A running task holds two descriptors (its
//!   pipe and its log), so with a thousand tasks running every start copies and closes
//!   two thousand.
//! - It maps a fresh stack for each child (and unmaps it, which in a process with
//!   several threads means a TLB shootdown), and its child asks about each of the 64
//!   signals before it resets them.
//!
//! Here the child shares our table (`CLONE_FILES`) only for its first steps. Then
//! `close_range(keep_below, ~0, CLOSE_RANGE_UNSHARE)` gives it a table of its own
//! holding just the descriptors below `keep_below`: stdio and two slots this module
//! keeps low for the purpose (`/dev/null` and the task's output). It moves those onto 0,
//! 1 and 2, closes everything else, and execs. So a task inherits exactly stdin,
//! stdout and stderr, whatever the host holds open.
//!
//! One of those first steps, for a task, is creating the task's log, into the table it
//! still shares with us, so that the descriptor is ours when the spawn returns.
//! Creating a file can be the dearest part of a start (ext4 scans for recently deleted
//! inodes), and done by the child it is not charged to the thread that starts tasks,
//! which sleeps meanwhile and so does not hold up the next start.
//!
//! This is the crate's only `unsafe` code. The child runs on our memory until it
//! execs, so it keeps to what a `vfork` child may do:
//! - it runs on a stack reserved for it, while the thread that cloned it is suspended
//!   (`CLONE_VFORK`) and the stack is ours alone (the spawn lock);
//! - it makes system calls and nothing else: no allocation, no lock, no unwinding;
//! - every signal is blocked from before the clone until the child has reset each
//!   handler to the default (its handler table is its own copy: no `CLONE_SIGHAND`),
//!   so no handler of ours ever runs on its stack.
//!
//! Where the kernel refuses any of this (`CLOSE_RANGE_UNSHARE` needs Linux 5.9; a
//! seccomp filter may refuse `clone`), [`spawn`] says so once and for all and the
//! caller falls back to `std::process::Command`.

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::sys::stat::Mode;
use nix::unistd::{Pid, dup3};

use crate::spawn::shell::Shell;
#[cfg(doc)]
use crate::task::log_file::open_new;
use crate::task::log_file::{LOG_MODE, LOG_OPEN_FLAGS};

/// The shell of a [`ShellCommand`] not given another ([`ShellCommand::with_shell`]).
pub(crate) const SHELL: &str = "/bin/sh";

/// Stack of the child until it execs; it only makes system calls.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// Signals are numbered below this on Linux (`_NSIG`).
const NSIG: c_int = 65;

/// The spawn slots, made on first use; `None` again after a failure left them unsure.
static SLOTS: Mutex<Option<Slots>> = Mutex::new(None);

/// Set once the kernel refused this way of spawning: the caller uses std from then on.
static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// A command ready to run: every string the child needs, made before the spawn lock
/// (the child itself may not allocate).
pub(crate) struct ShellCommand {
    program: CString,
    /// `argv`: the shell, its flags, then the command.
    args: Vec<CString>,
    /// Our own environment's entries that `env` does not override: the C library's
    /// strings, not copies (see [`inherited_env`]).
    inherited: Vec<*const c_char>,
    /// `env`'s entries.
    env: Vec<CString>,
    cwd: CString,
    /// The log the child creates, if any.
    log: Option<CString>,
}

impl ShellCommand {
    /// `/bin/sh -c command` in `cwd`, with our environment plus `env` (which wins).
    pub(crate) fn new(
        command: &str,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> io::Result<Self> {
        let vars = env
            .iter()
            .map(|(key, value)| entry(key.as_bytes(), value.as_bytes()))
            .collect::<io::Result<_>>()?;
        Ok(Self {
            program: c_string(SHELL.as_bytes())?,
            args: vec![
                c_string(SHELL.as_bytes())?,
                c_string(b"-c")?,
                c_string(command.as_bytes())?,
            ],
            inherited: inherited_env(env),
            env: vars,
            cwd: c_string(cwd.as_os_str().as_bytes())?,
            log: None,
        })
    }

    /// Runs the command under `shell` instead: `SHELL [FLAGS] -c COMMAND`.
    pub(crate) fn with_shell(mut self, shell: &Shell) -> io::Result<Self> {
        let program = c_string(shell.path().as_os_str().as_bytes())?;
        let command = self.args.pop().unwrap_or_default();
        let mut args = Vec::with_capacity(shell.args().len() + 2);
        args.push(program.clone());
        for flag in shell.args() {
            args.push(c_string(flag.as_bytes())?);
        }
        args.push(command);
        self.program = program;
        self.args = args;
        Ok(self)
    }

    /// Has the child create `path` before anything else, as [`open_new`] would
    /// ([`LOG_OPEN_FLAGS`], mode [`LOG_MODE`]). The descriptor comes back in
    /// [`Child::log`].
    pub(crate) fn with_log(mut self, path: &Path) -> io::Result<Self> {
        self.log = Some(c_string(path.as_os_str().as_bytes())?);
        Ok(self)
    }
}

// The C library's environment, `environ(7)`.
unsafe extern "C" {
    static environ: *const *const c_char;
}

/// Our environment's entries whose names `overrides` does not hold, as the C library's
/// own strings.
///
/// Read straight from `environ` rather than through `std::env::vars_os`, which copies
/// every entry (twice) for us to copy again, on the thread that starts
/// tasks, which is the thread that sets the pace of a burst of starts. This is sound for
/// the reason every C library call that reads the environment is: it can only race
/// with `setenv` or `unsetenv` on another thread, which the contract of the unsafe
/// `std::env::set_var` already rules out in a program with more than one thread. And
/// the C library does not free a string it put in the environment while it is there,
/// so each entry outlives the child's `exec`, a few microseconds later on this thread.
fn inherited_env(overrides: &BTreeMap<String, String>) -> Vec<*const c_char> {
    let mut entries = Vec::with_capacity(64);
    // SAFETY: `environ` is null or a null-terminated array of pointers to
    // NUL-terminated strings, not changed under us (see above).
    unsafe {
        let mut cursor = environ;
        if cursor.is_null() {
            return entries;
        }
        while !(*cursor).is_null() {
            if !overridden(overrides, CStr::from_ptr(*cursor).to_bytes()) {
                entries.push(*cursor);
            }
            cursor = cursor.add(1);
        }
    }
    entries
}

/// Whether `entry` (`NAME=value`) sets a variable that `overrides` sets too. As std
/// reads it, the name ends at the first `=` after its first byte.
fn overridden(overrides: &BTreeMap<String, String>, entry: &[u8]) -> bool {
    let name = match entry.iter().skip(1).position(|&byte| byte == b'=') {
        Some(end) => &entry[..=end],
        None => entry,
    };
    std::str::from_utf8(name).is_ok_and(|name| overrides.contains_key(name))
}

fn entry(key: &[u8], value: &[u8]) -> io::Result<CString> {
    let mut bytes = Vec::with_capacity(key.len() + 1 + value.len());
    bytes.extend_from_slice(key);
    bytes.push(b'=');
    bytes.extend_from_slice(value);
    c_string(&bytes)
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "a command, path or environment entry contains a NUL byte",
        )
    })
}

/// A child [`spawn`] started.
#[derive(Debug)]
pub(crate) struct Child {
    pub(crate) pid: Pid,
    /// The log it created, if [`ShellCommand::with_log`] asked for one.
    pub(crate) log: Option<OwnedFd>,
}

/// How a [`spawn`] went, when it did not fail.
#[derive(Debug)]
pub(crate) enum Spawn {
    Started(Child),
    /// This kernel does not allow this way of spawning: the caller should use std (as
    /// every later spawn will). `log` is the log, if the child created it before the
    /// kernel said no.
    Refused {
        log: Option<OwnedFd>,
    },
}

/// Why a [`spawn`] started nothing.
#[derive(Debug)]
pub(crate) enum SpawnError {
    /// The log could not be created.
    Log(io::Error),
    /// The shell could not be started. `log_made`: the log had been created (it is
    /// closed again, but the file is there).
    Start { source: io::Error, log_made: bool },
}

impl SpawnError {
    /// A spawn that failed before it made a log.
    pub(crate) fn start(source: impl Into<io::Error>) -> Self {
        Self::Start {
            source: source.into(),
            log_made: false,
        }
    }

    /// The operating system's error, whatever failed.
    pub(crate) fn into_source(self) -> io::Error {
        match self {
            Self::Log(source) | Self::Start { source, .. } => source,
        }
    }
}

/// Starts `shell` in a new process group, stdin on `/dev/null`, stdout and stderr
/// both `output`, after its log (if any) is created. Returns once the child has
/// exec'd (or failed to).
pub(crate) fn spawn(shell: &ShellCommand, output: BorrowedFd<'_>) -> Result<Spawn, SpawnError> {
    if UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(Spawn::Refused { log: None });
    }
    let mut guard = lock_slots();
    let slots = match guard.as_mut() {
        Some(slots) => slots,
        None => guard.insert(Slots::open().map_err(SpawnError::start)?),
    };
    dup3(output, &mut slots.output, OFlag::O_CLOEXEC).map_err(SpawnError::start)?;
    let spawned = slots.clone_child(shell);
    // Our copy of the task's output must go at once: the task's pipe only reaches
    // end-of-file when no copy of its write end is left.
    if dup3(slots.stdin.as_fd(), &mut slots.output, OFlag::O_CLOEXEC).is_err() {
        // Closing both slots drops that copy; the next spawn opens new ones.
        *guard = None;
    }
    drop(guard);
    spawned
}

/// The slots, or fresh ones if a panic left them in an unknown state.
fn lock_slots() -> MutexGuard<'static, Option<Slots>> {
    SLOTS.lock().unwrap_or_else(|poisoned| {
        SLOTS.clear_poison();
        let mut guard = poisoned.into_inner();
        *guard = None;
        guard
    })
}

/// Two descriptors kept low (so that the child's unshare copies little) and the
/// child's stack.
struct Slots {
    /// `/dev/null`: the child's stdin, and what `output` holds between spawns.
    stdin: OwnedFd,
    /// The task's output while a spawn runs.
    output: OwnedFd,
    /// `u128`s: the stack must be 16-byte aligned.
    stack: Vec<u128>,
}

impl Slots {
    fn open() -> io::Result<Self> {
        Ok(Self {
            stdin: open_dev_null()?,
            output: open_dev_null()?,
            stack: vec![0; CHILD_STACK_BYTES / size_of::<u128>()],
        })
    }

    /// Clones the child with every signal blocked, and reports how it went.
    fn clone_child(&mut self, shell: &ShellCommand) -> Result<Spawn, SpawnError> {
        let argv = null_terminated(shell.args.iter().map(|arg| arg.as_ptr()));
        let envp = null_terminated(
            (shell.inherited.iter().copied()).chain(shell.env.iter().map(|entry| entry.as_ptr())),
        );
        let keep_below = self.stdin.as_raw_fd().max(self.output.as_raw_fd()) + 1;
        let args = ChildArgs {
            program: shell.program.as_ptr(),
            argv: argv.as_ptr(),
            envp: envp.as_ptr(),
            cwd: shell.cwd.as_ptr(),
            log: shell
                .log
                .as_ref()
                .map_or(std::ptr::null(), |log| log.as_ptr()),
            log_fd: AtomicI32::new(-1),
            stdin: self.stdin.as_raw_fd(),
            output: self.output.as_raw_fd(),
            keep_below: c_uint::try_from(keep_below).unwrap_or(c_uint::MAX),
            failed_at: AtomicI32::new(Stage::None as i32),
            errno: AtomicI32::new(0),
        };
        let stack_top = self.stack.as_mut_ptr_range().end.cast::<c_void>();
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;

        let mut old_mask = SigSet::empty();
        pthread_sigmask(
            SigmaskHow::SIG_SETMASK,
            Some(&SigSet::all()),
            Some(&mut old_mask),
        )
        .map_err(SpawnError::start)?;
        // SAFETY: `child_main` keeps to what a vfork child may do (module docs). The
        // stack is ours alone: the spawn lock is held, and this thread is suspended
        // until the child execs or exits (`CLONE_VFORK`), so `args`, `argv`, `envp`
        // and the strings they point to outlive every use the child makes of them.
        let raw_pid = unsafe {
            libc::clone(
                child_main,
                stack_top,
                flags,
                std::ptr::from_ref(&args).cast_mut().cast::<c_void>(),
            )
        };
        let clone_error = Errno::last();
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);

        if raw_pid < 0 {
            if matches!(clone_error, Errno::ENOSYS | Errno::EPERM | Errno::EINVAL) {
                refused(clone_error);
                return Ok(Spawn::Refused { log: None });
            }
            return Err(SpawnError::start(clone_error));
        }
        let pid = Pid::from_raw(raw_pid);
        let log = args.log_fd.load(Ordering::Acquire);
        // SAFETY: the child opened this descriptor in the table it shared with us, and
        // nothing else knows of it: it is ours to own.
        let log = (log >= 0).then(|| unsafe { OwnedFd::from_raw_fd(log) });
        let failed_at = args.failed_at.load(Ordering::Acquire);
        if failed_at == Stage::None as i32 {
            return Ok(Spawn::Started(Child { pid, log }));
        }
        let errno = Errno::from_raw(args.errno.load(Ordering::Acquire));
        // It exited (status 127) before exec: reap it.
        let _ = reap(pid, true);
        if failed_at == Stage::Log as i32 {
            return Err(SpawnError::Log(errno.into()));
        }
        if failed_at == Stage::Unshare as i32
            && matches!(errno, Errno::ENOSYS | Errno::EINVAL | Errno::EPERM)
        {
            refused(errno);
            return Ok(Spawn::Refused { log });
        }
        Err(SpawnError::Start {
            source: errno.into(),
            log_made: log.is_some(),
        })
    }
}

fn refused(errno: Errno) {
    tracing::debug!(%errno, "the kernel refused a CLONE_FILES spawn; using std::process from now on");
    UNSUPPORTED.store(true, Ordering::Relaxed);
}

/// `/dev/null`, close-on-exec, at descriptor 3 or above (a host that closed its stdin
/// would otherwise hand us 0, which the child's `dup2` onto 0 could not make
/// inheritable).
fn open_dev_null() -> io::Result<OwnedFd> {
    let first = open("/dev/null", OFlag::O_RDWR | OFlag::O_CLOEXEC, Mode::empty())?;
    let raw = fcntl(&first, FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: `F_DUPFD_CLOEXEC` just returned this new descriptor, and nothing else
    // owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn null_terminated(strings: impl Iterator<Item = *const c_char>) -> Vec<*const c_char> {
    strings.chain(std::iter::once(std::ptr::null())).collect()
}

/// Where a child that did not reach `exec` stopped.
#[repr(i32)]
enum Stage {
    None = 0,
    Log = 1,
    Group = 2,
    Unshare = 3,
    Stdio = 4,
    Cwd = 5,
    Exec = 6,
}

/// What the child reads, in the parent's memory; and where it says why it failed.
struct ChildArgs {
    program: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
    cwd: *const c_char,
    /// Where to create the log; null for none.
    log: *const c_char,
    /// The log's descriptor once created, in the table we share until the unshare.
    log_fd: AtomicI32,
    stdin: RawFd,
    output: RawFd,
    keep_below: c_uint,
    failed_at: AtomicI32,
    errno: AtomicI32,
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
        if libc::setpgid(0, 0) != 0 {
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

#[cfg(test)]
#[path = "vfork_spawn_tests.rs"]
mod tests;
