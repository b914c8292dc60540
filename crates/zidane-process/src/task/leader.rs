//! The leader process of a task or foreground command, and what is known of its exit.
//!
//! A command's output pipe reaches end-of-file when its last holder exits, and for
//! almost every command that is the leader itself. So the owner waits for the pipe and
//! then asks the leader's exit without blocking; only a leader that outlives its output
//! (it closed or redirected stdout and stderr, or a kill stopped waiting for
//! end-of-file) is waited for on a blocking-pool thread. How the exit is asked is the
//! platform's ([`LeaderProcess`]): a `waitpid` by pid on Unix, the child's handle on
//! Windows.
//!
//! Why not a pidfd per leader on Linux: without it a running task holds two descriptors
//! (its pipe and its log) and one reactor registration, and every exit costs one
//! wake-up instead of two. (On the fast path a descriptor held costs later spawns
//! nothing, since `vfork_spawn`'s child keeps only stdio of our table; on the portable
//! path every spawn's child copies the whole table, so one more per task would add up.)

use std::io;
use std::process::ExitStatus;

use tokio::task::JoinHandle;

pub(crate) use crate::task::leader_exit::LeaderExit;
pub(crate) use crate::task::leader_process::LeaderProcess;
#[cfg(unix)]
pub(crate) use crate::task::leader_process::has_not_exited;

/// How many times a leader whose output just closed is polled (yielding in between)
/// before a thread is set to wait for it: a dying process closes its descriptors a
/// moment before its exit can be read.
const POLLS_AFTER_EOF: usize = 4;

/// A spawned leader and what we know of its exit.
#[derive(Debug)]
pub(crate) struct Leader {
    state: State,
}

#[derive(Debug)]
enum State {
    /// Its exit not read yet; nobody is waiting for it.
    Running(LeaderProcess),
    /// A blocking-pool thread is waiting for it.
    Waiting(JoinHandle<io::Result<ExitStatus>>),
    /// Exited (or given up on).
    Exited(LeaderExit),
}

impl Leader {
    /// The leader `process`, which we spawned.
    pub(crate) fn new(process: LeaderProcess) -> Self {
        Self {
            state: State::Running(process),
        }
    }

    /// The exit, once known.
    pub(crate) fn exit(&self) -> Option<LeaderExit> {
        match self.state {
            State::Exited(exit) => Some(exit),
            State::Running(_) | State::Waiting(_) => None,
        }
    }

    /// Reads the leader's exit if it has exited, without blocking.
    pub(crate) fn poll_now(&mut self) -> Option<LeaderExit> {
        if let State::Running(process) = &mut self.state {
            let exit = match process.try_wait() {
                Ok(Some(status)) => LeaderExit::from_status(status),
                Ok(None) => return None,
                Err(error) => lost_status(&error),
            };
            self.state = State::Exited(exit);
        }
        self.exit()
    }

    /// The output closed: read the exit now, or soon, or have a thread wait for it.
    pub(crate) async fn after_eof(&mut self) {
        for _ in 0..POLLS_AFTER_EOF {
            if self.poll_now().is_some() {
                return;
            }
            tokio::task::yield_now().await;
        }
        self.wait_in_background();
    }

    /// Has a blocking-pool thread wait for the leader (no-op if already waiting or
    /// exited); [`waited`](Self::waited) resolves when it is done.
    pub(crate) fn wait_in_background(&mut self) {
        if self.poll_now().is_some() {
            return;
        }
        let state = std::mem::replace(&mut self.state, State::Exited(LeaderExit::LOST));
        self.state = match state {
            State::Running(process) => {
                State::Waiting(tokio::task::spawn_blocking(move || process.wait()))
            }
            other => other,
        };
    }

    /// Whether a thread is waiting for the leader.
    pub(crate) fn is_waiting(&self) -> bool {
        matches!(self.state, State::Waiting(_))
    }

    /// Resolves once the waiting thread saw the leader exit; never while none waits.
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

/// The exit of a leader whose status could not be read (someone else reaped it).
/// Never reported as success.
fn lost_status(error: &io::Error) -> LeaderExit {
    tracing::warn!(%error, "could not read a leader's exit status");
    LeaderExit::LOST
}
