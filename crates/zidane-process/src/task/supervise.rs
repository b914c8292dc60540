//! The life of one background task after it started: copy its output into the log,
//! watch for its leader's exit, carry out a kill, report stalls, and settle it.
//!
//! Each task has one supervisor (a tokio task) and only the supervisor settles it, so
//! `on_exit` fires once by construction; kill, destroy and reassign only *ask* (the
//! kill token, after `Task::request_kill` sent the first `SIGTERM`) or rewire (the
//! callback, under the task's lock).
//!
//! A task settles when its leader has exited **and** its output pipe reached end-of-file
//! (descendants that still hold the pipe keep it running). A kill bounds that: once
//! the grace period is over and `SIGKILL` went out, the leader's exit is enough.
//!
//! A task is `Killed` when our kill ended it: its leader was still running when the
//! kill was asked for, or the leader had exited but something it started still held
//! the output open. In the second case the exit reports the signal that closed the
//! output (`SIGTERM`, or `SIGKILL` once the grace was over), and the leader's own exit
//! code beside it.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;
use zidane_context::{KillReason, Signal, StallInfo, TaskStatus};

use crate::containment::TaskProcesses;
use crate::task::budget::Budgets;
use crate::task::kill::{Escalation, Next};
use crate::task::leader::Leader;
use crate::task::leader::LeaderExit;
use crate::task::log_file::{LogWriter, Pumped};
use crate::task::output_pipe::OutputPipe;
use crate::task::registry::Registry;
use crate::task::spawn_on_wake;
use crate::task::watchdog::StallWatch;
use crate::task::{Settlement, Task};

/// Most bytes copied per wake-up before other tasks get a turn.
const PUMP_BUDGET: usize = 16 << 20;

/// Most bytes drained from the pipe when settling without end-of-file: whatever is
/// left out of reach may keep writing forever.
const FINAL_DRAIN_LIMIT: usize = 4 << 20;

/// Everything a supervisor needs.
pub(crate) struct Supervisor {
    pub(crate) task: Arc<Task>,
    pub(crate) leader: Leader,
    /// Shared with [`Task`] (for [`Task::request_kill`]'s look) until settling.
    pub(crate) output: Arc<OutputPipe>,
    pub(crate) log: LogWriter,
    pub(crate) processes: TaskProcesses,
    pub(crate) kill_grace: Duration,
    pub(crate) stall: Option<StallWatch>,
    /// Wall-time and CPU-time budgets: the task is killed when one runs out.
    pub(crate) budgets: Budgets,
    pub(crate) registry: Arc<Registry>,
}

impl Supervisor {
    /// Runs the task to settlement.
    pub(crate) async fn run(self) {
        let Self {
            task,
            mut leader,
            output,
            mut log,
            processes,
            kill_grace,
            mut stall,
            mut budgets,
            registry,
        } = self;
        let mut eof = false;
        let mut escalation = Escalation::default();
        // Killed means: our kill reached the task while its leader was still alive...
        let mut killed_by_us = false;
        // ...or after it exited, while the output was still open.
        let mut output_cut = false;
        // The last signal our kill sent before the output closed.
        let mut eof_after: Option<Signal> = None;
        // Set when the leader outlived SIGKILL and we stopped waiting for it.
        let mut abandoned: Option<LeaderExit> = None;

        loop {
            if eof && leader.exit().is_none() && !leader.is_waiting() {
                leader.after_eof().await;
            }
            if leader.exit().is_some() && (eof || escalation.past_grace()) {
                break;
            }
            let deadline = earliest(
                earliest(
                    escalation.deadline(),
                    stall.as_ref().and_then(StallWatch::deadline),
                ),
                if escalation.started() {
                    None
                } else {
                    budgets.deadline()
                },
            );
            tokio::select! {
                _ = leader.waited(), if leader.is_waiting() => {}
                ready = spawn_on_wake::readable(&output), if !eof => {
                    match ready {
                        Ok(()) => {
                            let outcome = pump(&mut log, &output, PUMP_BUDGET);
                            eof = outcome.eof;
                            if eof {
                                eof_after = escalation.signal_sent();
                            }
                            if outcome.moved > 0 {
                                task.bytes_written.store(log.total(), Ordering::Relaxed);
                                task.output_moved.send_replace(log.total());
                                if let Some(stall) = stall.as_mut() {
                                    stall.on_output(Instant::now());
                                }
                            }
                        }
                        Err(error) => {
                            tracing::warn!(task = %task.id(), %error, "polling a task's output failed");
                            eof = true;
                        }
                    }
                }
                () = task.kill.cancelled(), if !escalation.started() => {
                    if let Some(request) = task.kill_request() {
                        // SIGTERM is out already (request_kill).
                        killed_by_us = request.leader_was_running;
                        output_cut = request.output_was_open;
                        escalation.start_terminated(request.at, kill_grace);
                    } else {
                        killed_by_us = leader.poll_now().is_none();
                        output_cut = !killed_by_us && !eof;
                        escalation.start(&processes, kill_grace);
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    let now = Instant::now();
                    if escalation.deadline().is_some_and(|at| at <= now) {
                        let reaped = leader.poll_now().is_some();
                        match escalation.on_deadline(&processes, reaped) {
                            Next::Probed | Next::StopWaitingForEof => {}
                            // SIGKILL is out: learn when the leader dies even if the
                            // pipe never closes.
                            Next::Wait => leader.wait_in_background(),
                            Next::Abandon => {
                                tracing::warn!(task = %task.id(), "task leader survived SIGKILL; settling without its status");
                                abandoned = Some(LeaderExit::signalled(Signal::KILL));
                                break;
                            }
                        }
                    }
                    if let Some(stall) = stall.as_mut()
                        && let Some((callback, quiet)) = stall.check(now)
                    {
                        fire_stall(&task, log.total(), &callback, quiet);
                    }
                    if !escalation.started()
                        && let Some(reason) = budgets.check(now, || processes.cpu_time())
                    {
                        // The usual kill: SIGTERM now, then the kill token starts the
                        // escalation on the next turn of this loop.
                        tracing::info!(task_id = %task.id(), ?reason, "task budget ran out");
                        task.request_kill(reason);
                    }
                }
            }
        }

        if !eof {
            // Settling without end-of-file (a kill whose grace is over): keep what the
            // pipe already holds, but do not wait for more.
            drain(&mut log, &output, FINAL_DRAIN_LIMIT);
        }
        // Close every descriptor of the task before anyone hears it ended, so a caller
        // that counts descriptors right after on_exit finds none left.
        task.release_output();
        drop(output);
        let outcome = log.finish();
        if let Some(error) = &outcome.marker_error {
            tracing::warn!(task = %task.id(), %error, "appending a marker line to a task log failed");
        }
        // A kill request signals the group itself, so the task may have died of it
        // before this loop ever saw the request.
        let request = task.kill_request();
        let killed_by_us = killed_by_us || request.is_some_and(|r| r.leader_was_running);
        let output_cut =
            !killed_by_us && (output_cut || request.is_some_and(|r| r.output_was_open));
        let leader_exit = abandoned
            .or_else(|| leader.exit())
            .unwrap_or(LeaderExit::signalled(Signal::KILL));
        // A leader we gave up on is reaped in the background (`Leader`'s drop).
        drop(leader);
        let (status, exit, leader_exit_code) = if killed_by_us {
            (TaskStatus::Killed, leader_exit, None)
        } else if output_cut {
            // Without end-of-file the output was still open after SIGKILL.
            let signal = if eof {
                eof_after.unwrap_or(Signal::TERM)
            } else {
                Signal::KILL
            };
            (
                TaskStatus::Killed,
                LeaderExit::signalled(signal),
                Some(leader_exit.code),
            )
        } else {
            (TaskStatus::Exited, leader_exit, None)
        };
        settle(
            &task,
            &registry,
            Settlement {
                status,
                exit,
                leader_exit_code,
                bytes_written: outcome.bytes_written,
                log_write_failure: outcome.failure,
                kill_reason: (status == TaskStatus::Killed)
                    .then(|| request.map_or(KillReason::Requested, |r| r.reason)),
            },
        );
    }
}

/// Records the exit, frees the running slot, fires `on_exit`, then wakes waiters.
///
/// `on_exit` fires before waiters wake, so a caller whose `kill_background` or
/// `wait_background` returned knows the callback already ran.
pub(crate) fn settle(task: &Task, registry: &Registry, settlement: Settlement) {
    let bytes_written = settlement.bytes_written;
    let Some((callback, info)) = task.settle(settlement) else {
        return;
    };
    tracing::info!(
        task_id = %info.task_id,
        status = %info.status,
        exit_code = info.exit_code,
        signal = info.signal.map(tracing::field::display),
        duration_ms = u64::try_from(info.duration.as_millis()).unwrap_or(u64::MAX),
        bytes_written,
        log_write_failure = info.log_write_failure.as_ref().map(tracing::field::display),
        "task exited"
    );
    registry.release();
    if let Some(callback) = callback {
        let exit = info.clone();
        // A panicking callback must not keep the waiters asleep forever.
        if catch_unwind(AssertUnwindSafe(|| callback(exit))).is_err() {
            tracing::error!(task = %task.id(), "on_exit callback panicked");
        }
    }
    task.publish(info);
}

/// What one round of pumping found.
#[derive(Debug, Default)]
struct PumpOutcome {
    moved: usize,
    eof: bool,
}

/// Copies from the pipe into the log until it is empty, closed, or `budget` bytes moved.
///
/// Goes through the reactor's `try_io`, so an empty pipe clears its readiness and the
/// next `readable()` waits for the kernel's next event.
fn pump(log: &mut LogWriter, output: &OutputPipe, budget: usize) -> PumpOutcome {
    let mut outcome = PumpOutcome::default();
    while outcome.moved < budget {
        match output.try_read_with(|pipe| log.pump(pipe)) {
            Ok(Pumped::Moved(n)) => outcome.moved += n,
            Ok(Pumped::Eof) => {
                outcome.eof = true;
                break;
            }
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
            Err(error) => {
                // Reading our own pipe failed: nothing more can come out of it.
                tracing::warn!(%error, "reading a task's output failed");
                outcome.eof = true;
                break;
            }
        }
    }
    outcome
}

/// Takes what the pipe holds right now, without asking the reactor (whose readiness
/// may be stale): used once, when settling without end-of-file.
fn drain(log: &mut LogWriter, output: &OutputPipe, limit: usize) {
    let mut moved = 0;
    while moved < limit {
        match log.pump(output.as_source()) {
            Ok(Pumped::Moved(n)) => moved += n,
            Ok(Pumped::Eof) | Err(_) => break,
        }
    }
}

fn fire_stall(
    task: &Task,
    bytes_written: u64,
    callback: &zidane_context::StallCallback,
    quiet: Duration,
) {
    tracing::info!(
        task_id = %task.id(),
        stalled_for_ms = u64::try_from(quiet.as_millis()).unwrap_or(u64::MAX),
        bytes_written,
        "task stalled"
    );
    let info = StallInfo {
        task_id: task.id(),
        command: task.command.clone(),
        output_path: task.output_path(),
        stalled_for: quiet,
        bytes_written,
        // The group is still there to ask: the task has not ended.
        diagnosis: task
            .processes
            .diagnose(&task.output_path(), task.input_pipe),
        takes_input: task.input.is_some(),
        terminal: task.terminal.is_some(),
    };
    if catch_unwind(AssertUnwindSafe(|| callback(info))).is_err() {
        tracing::error!(task = %task.id(), "on_stall callback panicked");
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `select!` builds every branch's future, even a disabled one; far in the future when
/// there is no deadline.
fn sleep_until(deadline: Option<Instant>) -> tokio::time::Sleep {
    tokio::time::sleep_until(
        deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400)),
    )
}
