//! The leader process of a task or foreground command, reaped without a pidfd.
//!
//! A command's output pipe reaches end-of-file when its last holder exits, and for
//! almost every command that is the leader itself. So the owner waits for the pipe and
//! then reaps the leader with a non-blocking `waitpid`; only a leader that outlives its
//! output (it closed or redirected stdout and stderr, or a kill stopped waiting for
//! end-of-file) is waited for on a blocking-pool thread.
//!
//! Why not a pidfd per leader: without it a running task holds two descriptors (its
//! pipe and its log) and one reactor registration, and every exit costs one wake-up
//! instead of two. (A descriptor held used to cost every later spawn too, when each
//! child copied our whole table; `vfork_spawn` no longer does.)

use std::io;
use std::process::ExitStatus;

use nix::unistd::Pid;

use tokio::task::JoinHandle;

use crate::sys::{self, reap};
pub(crate) use crate::task::leader_exit::LeaderExit;

/// How many times a leader whose output just closed is polled (yielding in between)
/// before a thread is set to wait for it: the kernel closes a dying process's
/// descriptors a moment before it becomes reapable.
const REAP_POLLS_AFTER_EOF: usize = 4;

/// A spawned leader and what we know of its exit.
#[derive(Debug)]
pub(crate) struct Leader {
    state: State,
}

#[derive(Debug)]
enum State {
    /// Not reaped; nobody is waiting for it.
    Running(Pid),
    /// A blocking-pool thread is waiting for it.
    Waiting(JoinHandle<io::Result<ExitStatus>>),
    /// Reaped (or given up on).
    Exited(LeaderExit),
}

impl Leader {
    /// A leader we spawned (and so may reap) with this pid.
    pub(crate) fn new(pid: Pid) -> Self {
        Self {
            state: State::Running(pid),
        }
    }

    /// The exit, once known.
    pub(crate) fn exit(&self) -> Option<LeaderExit> {
        match self.state {
            State::Exited(exit) => Some(exit),
            State::Running(_) | State::Waiting(_) => None,
        }
    }

    /// Reaps the leader if it has exited, without blocking.
    pub(crate) fn poll_now(&mut self) -> Option<LeaderExit> {
        if let State::Running(pid) = self.state {
            let exit = match reap(pid, false) {
                Ok(Some(status)) => LeaderExit::from_status(status),
                Ok(None) => return None,
                Err(error) => lost_status(&error),
            };
            self.state = State::Exited(exit);
        }
        self.exit()
    }

    /// The output closed: reap the leader now, or soon, or have a thread wait for it.
    pub(crate) async fn after_eof(&mut self) {
        for _ in 0..REAP_POLLS_AFTER_EOF {
            if self.poll_now().is_some() {
                return;
            }
            tokio::task::yield_now().await;
        }
        self.wait_in_background();
    }

    /// Has a blocking-pool thread wait for the leader (no-op if already waiting or
    /// reaped); [`waited`](Self::waited) resolves when it is done.
    pub(crate) fn wait_in_background(&mut self) {
        if self.poll_now().is_some() {
            return;
        }
        let state = std::mem::replace(&mut self.state, State::Exited(LeaderExit::LOST));
        self.state = match state {
            State::Running(pid) => State::Waiting(tokio::task::spawn_blocking(move || {
                reap(pid, true)?.ok_or_else(|| io::Error::other("a blocking wait came back early"))
            })),
            other => other,
        };
    }

    /// Whether a thread is waiting for the leader.
    pub(crate) fn is_waiting(&self) -> bool {
        matches!(self.state, State::Waiting(_))
    }

    /// Resolves once the waiting thread reaped the leader; never while none waits.
    /// Cancel-safe: the thread keeps waiting if this future is dropped.
    pub(crate) async fn waited(&mut self) -> LeaderExit {
        let State::Waiting(handle) = &mut self.state else {
            return std::future::pending().await;
        };
        let exit = match handle.await {
            Ok(Ok(status)) => LeaderExit::from_status(status),
            Ok(Err(error)) => lost_status(&error),
            Err(join) => lost_status(&io::Error::other(join)),
        };
        self.state = State::Exited(exit);
        exit
    }
}

impl Drop for Leader {
    /// A leader nobody waits for any more (a settled kill that gave up on it, a dropped
    /// `exec`) is still reaped whenever it dies, so it never stays a zombie.
    fn drop(&mut self) {
        let State::Running(pid) =
            std::mem::replace(&mut self.state, State::Exited(LeaderExit::LOST))
        else {
            // Reaped, or a detached blocking-pool thread reaps it.
            return;
        };
        if matches!(reap(pid, false), Ok(Some(_)) | Err(_)) {
            return;
        }
        let wait = move || {
            let _ = reap(pid, true);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(wait)),
            Err(_) => drop(std::thread::spawn(wait)),
        }
    }
}

/// Whether our child `pid` has not exited yet, asked without reaping it; see
/// [`sys::has_not_exited`].
pub(crate) fn has_not_exited(pid: u32) -> bool {
    i32::try_from(pid).is_ok_and(|raw| sys::has_not_exited(Pid::from_raw(raw)))
}

/// The exit of a leader whose status could not be read (someone else reaped it).
/// Never reported as success.
fn lost_status(error: &io::Error) -> LeaderExit {
    tracing::warn!(%error, "could not read a leader's exit status");
    LeaderExit::LOST
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn has_not_exited_peeks_without_reaping() {
        let mut child = crate::test_children::sleep_1000(&[]);
        let pid = child.id();
        assert!(has_not_exited(pid));
        child.kill().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while has_not_exited(pid) {
            assert!(Instant::now() < deadline, "the child never became a zombie");
            std::thread::sleep(Duration::from_millis(1));
        }
        // The peek left the zombie for its owner: the status is still there to read.
        assert!(child.wait().unwrap().signal().is_some());
        assert!(!has_not_exited(pid), "a reaped child has exited");
    }
}
