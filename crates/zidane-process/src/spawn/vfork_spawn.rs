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
//! The clone itself and what the child does before `exec` live in `crate::sys::vfork_child`, in the
//! crate's only `unsafe` code; this module prepares what the child reads and owns the
//! descriptors and the stack it runs on.
//!
//! Where the kernel refuses any of this (`CLOSE_RANGE_UNSHARE` needs Linux 5.9; a
//! seccomp filter may refuse `clone`), [`spawn`] says so once and for all and the
//! caller falls back to `std::process::Command`, the portable path.

use std::ffi::{CString, c_char, c_uint};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::unistd::dup3;

use crate::spawn::launch::Launch;
use crate::spawn::spawned::{Child, SpawnError, TaskEnv};
use crate::sys::vfork_child::{self, ChildArgs, Stage, open_dev_null};
use crate::sys::{Session, reap};
#[cfg(doc)]
use crate::task::log_file::open_new;

/// The shell of a [`ShellCommand`] not given another ([`ShellCommand::with_launch`]).
pub(crate) const SHELL: &str = "/bin/sh";

/// Stack of the child until it execs; it only makes system calls.
const CHILD_STACK_BYTES: usize = 64 * 1024;

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
    /// The whole environment, `NAME=value` each: nothing of ours besides.
    env: Vec<CString>,
    cwd: CString,
    /// The log the child creates, if any.
    log: Option<CString>,
}

impl ShellCommand {
    /// `/bin/sh -c command` in `cwd`, with exactly the environment `env`.
    pub(crate) fn new(command: &str, cwd: &Path, env: &TaskEnv) -> io::Result<Self> {
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
            env: vars,
            cwd: c_string(cwd.as_os_str().as_bytes())?,
            log: None,
        })
    }

    /// Runs the command as `launch` says: `[PREFIX…] SHELL [FLAGS] -c COMMAND`.
    pub(crate) fn with_launch(mut self, launch: &Launch<'_>) -> io::Result<Self> {
        let program = c_string(launch.program().as_bytes())?;
        let command = self.args.pop().unwrap_or_default();
        let mut args = Vec::with_capacity(launch.prefix.len() + 4);
        args.push(program.clone());
        for arg in launch.args() {
            args.push(c_string(arg.as_bytes())?);
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

/// Starts `shell` in a new process group, stdin on `input` (`/dev/null` when `None`),
/// stdout and stderr both `output`, after its log (if any) is created. With `session`
/// [`Session::Own`] the child starts a new session instead; with [`Session::Terminal`]
/// it also makes its stdin (a terminal) its
/// controlling terminal. Returns once the child has exec'd (or failed to).
pub(crate) fn spawn(
    shell: &ShellCommand,
    output: BorrowedFd<'_>,
    input: Option<BorrowedFd<'_>>,
    session: Session,
) -> Result<Spawn, SpawnError> {
    if UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(Spawn::Refused { log: None });
    }
    let mut guard = lock_slots();
    let slots = match guard.as_mut() {
        Some(slots) => slots,
        None => guard.insert(Slots::open().map_err(SpawnError::start)?),
    };
    dup3(output, &mut slots.output, OFlag::O_CLOEXEC).map_err(SpawnError::start)?;
    if let Some(input) = input
        && let Err(errno) = dup3(input, &mut slots.input, OFlag::O_CLOEXEC)
    {
        if dup3(slots.stdin.as_fd(), &mut slots.output, OFlag::O_CLOEXEC).is_err() {
            *guard = None;
        }
        return Err(SpawnError::start(errno));
    }
    let spawned = slots.clone_child(shell, input.is_some(), session);
    // Our copies of the task's output and input must go at once: the task's pipe only
    // reaches end-of-file when no copy of its write end is left.
    let output_dropped = dup3(slots.stdin.as_fd(), &mut slots.output, OFlag::O_CLOEXEC).is_ok();
    let input_dropped =
        input.is_none() || dup3(slots.stdin.as_fd(), &mut slots.input, OFlag::O_CLOEXEC).is_ok();
    if !(output_dropped && input_dropped) {
        // Closing the slots drops those copies; the next spawn opens new ones.
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

/// Three descriptors kept low (so that the child's unshare copies little) and the
/// child's stack.
struct Slots {
    /// `/dev/null`: the child's stdin, and what `output` and `input` hold between
    /// spawns.
    stdin: OwnedFd,
    /// The task's output while a spawn runs.
    output: OwnedFd,
    /// The task's input (a pipe's read end, a terminal) while a spawn that has one
    /// runs.
    input: OwnedFd,
    /// `u128`s: the stack must be 16-byte aligned.
    stack: Vec<u128>,
}

impl Slots {
    fn open() -> io::Result<Self> {
        Ok(Self {
            stdin: open_dev_null()?,
            output: open_dev_null()?,
            input: open_dev_null()?,
            stack: vec![0; CHILD_STACK_BYTES / size_of::<u128>()],
        })
    }

    /// Clones the child with every signal blocked, and reports how it went.
    fn clone_child(
        &mut self,
        shell: &ShellCommand,
        has_input: bool,
        session: Session,
    ) -> Result<Spawn, SpawnError> {
        let argv = null_terminated(shell.args.iter().map(|arg| arg.as_ptr()));
        let envp = null_terminated(shell.env.iter().map(|entry| entry.as_ptr()));
        let keep_below = self
            .stdin
            .as_raw_fd()
            .max(self.output.as_raw_fd())
            .max(self.input.as_raw_fd())
            + 1;
        let stdin = if has_input { &self.input } else { &self.stdin };
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
            stdin: stdin.as_raw_fd(),
            output: self.output.as_raw_fd(),
            keep_below: c_uint::try_from(keep_below).unwrap_or(c_uint::MAX),
            session,
            failed_at: AtomicI32::new(Stage::None as i32),
            errno: AtomicI32::new(0),
        };
        let pid = match vfork_child::clone_vfork_child(&args, &mut self.stack) {
            Ok(pid) => pid,
            Err(errno @ (Errno::ENOSYS | Errno::EPERM | Errno::EINVAL)) => {
                refused(errno);
                return Ok(Spawn::Refused { log: None });
            }
            Err(errno) => return Err(SpawnError::start(errno)),
        };
        let log = args.take_log();
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

fn null_terminated(strings: impl Iterator<Item = *const c_char>) -> Vec<*const c_char> {
    strings.chain(std::iter::once(std::ptr::null())).collect()
}

#[cfg(test)]
#[path = "vfork_spawn_tests.rs"]
mod tests;
