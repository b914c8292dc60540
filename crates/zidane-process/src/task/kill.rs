//! Kill escalation: `SIGTERM` to every process of the task, `SIGKILL` after the grace
//! period, and a hard bound after that, so that a kill never hangs.
//!
//! The state machine is shared by background tasks and timed-out foreground commands.
//! Its owner polls [`Escalation::deadline`] and calls [`Escalation::on_deadline`] when
//! it passes.

use std::time::Duration;

use tokio::time::Instant;
use zidane_context::Signal;

use crate::containment::TaskProcesses;

/// How long a task may take to end after `SIGTERM` before it gets `SIGKILL`.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);

/// How long a leader may take to be reaped after `SIGKILL`. Only a process stuck in
/// uninterruptible sleep (a dead NFS mount, a hung device) outlives `SIGKILL` for long;
/// past this bound the task settles without its exit status rather than hang its
/// caller, and the process is reaped in the background whenever it finally dies.
pub(crate) const LEADER_REAP_BOUND: Duration = Duration::from_secs(2);

/// How long after `SIGTERM` a task that has not settled gets its escapees looked for.
/// Most tasks settle within it, and then no `/proc` scan is spent on their kill; one
/// that does not may have a process outside its group holding the log open, which is
/// found by its marker and terminated too, rather than holding the kill for the grace.
pub(crate) const ESCAPEE_PROBE: Duration = Duration::from_millis(25);

/// Where a kill stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Escalation {
    /// No kill asked for.
    #[default]
    Idle,
    /// `SIGTERM` sent to the group; its escapees get it at `probe_at` (if still due),
    /// `SIGKILL` goes out at `kill_at`.
    Terminating {
        kill_at: Instant,
        probe_at: Option<Instant>,
    },
    /// `SIGKILL` sent; the leader is waited for until `give_up_at`.
    Killing { give_up_at: Instant },
}

/// What the owner must do after a deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Keep waiting as before: the escapees were sent `SIGTERM`, the grace goes on.
    Probed,
    /// Keep waiting (for the leader's exit, now that it has `SIGKILL`).
    Wait,
    /// Stop waiting for end-of-file: whatever still holds the output pipe open has had
    /// `SIGTERM`, the grace period and `SIGKILL`, and is out of our reach.
    StopWaitingForEof,
    /// Stop waiting for the leader too: it did not die within [`LEADER_REAP_BOUND`] of
    /// `SIGKILL`.
    Abandon,
}

impl Escalation {
    /// Whether a kill was asked for.
    pub(crate) fn started(self) -> bool {
        !matches!(self, Self::Idle)
    }

    /// Sends `SIGTERM` and starts the grace period. Does nothing if already started.
    pub(crate) fn start(&mut self, processes: &TaskProcesses, grace: Duration) {
        if self.started() {
            return;
        }
        processes.terminate();
        self.start_terminated(Instant::now(), grace);
    }

    /// Starts the grace period of a task whose group the caller sent `SIGTERM` at
    /// `sent` (see `Task::request_kill`). Does nothing if already started.
    pub(crate) fn start_terminated(&mut self, sent: Instant, grace: Duration) {
        if self.started() {
            return;
        }
        *self = Self::Terminating {
            kill_at: sent + grace,
            probe_at: Some(sent + ESCAPEE_PROBE.min(grace)),
        };
    }

    /// When [`on_deadline`](Self::on_deadline) must be called next, if ever.
    pub(crate) fn deadline(self) -> Option<Instant> {
        match self {
            Self::Idle => None,
            Self::Terminating { kill_at, probe_at } => {
                Some(probe_at.map_or(kill_at, |probe| probe.min(kill_at)))
            }
            Self::Killing { give_up_at } => Some(give_up_at),
        }
    }

    /// Advances the kill once its deadline passed. `leader_reaped`: the leader's exit
    /// status is already known.
    pub(crate) fn on_deadline(&mut self, processes: &TaskProcesses, leader_reaped: bool) -> Next {
        match *self {
            Self::Idle => Next::Wait,
            Self::Terminating {
                kill_at,
                probe_at: Some(_),
            } if Instant::now() < kill_at => {
                processes.terminate_escapees();
                *self = Self::Terminating {
                    kill_at,
                    probe_at: None,
                };
                Next::Probed
            }
            Self::Terminating { .. } => {
                // In the task's span (the supervisor's): the grace period is over.
                tracing::info!(signal = "SIGKILL", "task kill");
                processes.kill();
                *self = Self::Killing {
                    give_up_at: Instant::now() + LEADER_REAP_BOUND,
                };
                if leader_reaped {
                    Next::StopWaitingForEof
                } else {
                    Next::Wait
                }
            }
            Self::Killing { .. } => {
                // Whatever survived the first SIGKILL gets another before we let go.
                processes.kill();
                if leader_reaped {
                    Next::StopWaitingForEof
                } else {
                    Next::Abandon
                }
            }
        }
    }

    /// The last signal this kill sent to the group: `None` before the kill, `SIGTERM`
    /// during the grace period, `SIGKILL` after it.
    pub(crate) fn signal_sent(self) -> Option<Signal> {
        match self {
            Self::Idle => None,
            Self::Terminating { .. } => Some(Signal::TERM),
            Self::Killing { .. } => Some(Signal::KILL),
        }
    }

    /// Whether, with the leader reaped, the task must settle now without end-of-file:
    /// true once `SIGKILL` went out (the grace period is over).
    pub(crate) fn past_grace(self) -> bool {
        matches!(self, Self::Killing { .. })
    }
}
