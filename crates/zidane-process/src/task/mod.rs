//! One background task as the rest of the crate sees it: what it is, how far it got, and
//! the single gate through which it settles.

pub(crate) mod budget;
pub(crate) mod follow;
pub(crate) mod input;
/// The platform's half of a task's input: how bytes are written and a size is set.
#[cfg_attr(windows, path = "input_writer_windows.rs")]
pub(crate) mod input_writer;
pub(crate) mod kill;
pub(crate) mod kill_wait;
pub(crate) mod leader;
mod leader_exit;
/// The platform's half of a leader: how its exit is read.
#[cfg_attr(windows, path = "leader_process_windows.rs")]
mod leader_process;
pub(crate) mod log_file;
/// Moving a held task's log to its name: a new link (Unix), a move that does not
/// replace (Windows).
#[cfg_attr(windows, path = "log_move_windows.rs")]
mod log_move;
#[cfg(target_os = "linux")]
pub(crate) mod log_splice;
/// The read end of a command's output: a pipe on the reactor (Unix), a reader thread's
/// chunks (Windows).
#[cfg_attr(windows, path = "output_pipe_windows.rs")]
pub(crate) mod output_pipe;
pub(crate) mod registry;
pub(crate) mod spawn_on_wake;
#[cfg(unix)]
pub(crate) mod stall_diagnosis;
pub(crate) mod supervise;
pub(crate) mod terminal_screen;
pub(crate) mod timestamp;
pub(crate) mod watchdog;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::containment::TaskProcesses;
use crate::sandbox::denial;
use crate::sandbox::plan::SandboxPlan;
use crate::task::input::InputEnd;
use crate::task::leader::LeaderExit;
use crate::task::output_pipe::OutputPipe;
use crate::task::terminal_screen::TerminalScreen;
use chrono::{DateTime, Utc};
use tokio::sync::watch;
use zidane_context::{
    CancellationToken, ExitCallback, KillReason, LogWriteFailure, Signal, TaskEntry, TaskExitInfo,
    TaskId, TaskStatus,
};

/// What the first kill request of a task found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KillRequest {
    /// The leader had not exited when the kill was asked for (and `SIGTERM` went to
    /// the group): the task ends `Killed`, not `Exited`.
    pub(crate) leader_was_running: bool,
    /// The leader had exited, but something it started still held the output open:
    /// the task ends `Killed` too, by the signal that closed the output, with the
    /// leader's own exit beside it.
    pub(crate) output_was_open: bool,
    /// When it was asked for: the grace period runs from here, however late the
    /// supervisor hears of it.
    pub(crate) at: tokio::time::Instant,
    /// Who asked, or which budget ran out: the first request's reason is the task's.
    pub(crate) reason: KillReason,
}

/// A background task, shared by the registry, its supervisor and its waiters.
#[derive(Debug)]
pub(crate) struct Task {
    pub(crate) pid: u32,
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    pub(crate) started_at: DateTime<Utc>,
    /// Every process of the task: how it is asked to end, and killed.
    pub(crate) processes: TaskProcesses,
    /// Bytes written so far (kept and dropped), updated live by the supervisor.
    pub(crate) bytes_written: AtomicU64,
    /// Bumped by the supervisor whenever output reaches the log, so a follower of the
    /// log waits instead of polling it.
    pub(crate) output_moved: watch::Sender<u64>,
    /// Cancelled to ask the supervisor to kill the task.
    pub(crate) kill: CancellationToken,
    /// Set by the first [`request_kill`](Self::request_kill).
    kill_request: OnceLock<KillRequest>,
    /// The read end of the output pipe, shared with the supervisor until it closes it,
    /// so a kill can see whether anything still holds the write end.
    output: Mutex<Option<Arc<OutputPipe>>>,
    /// Where input is written, for a task started to take it.
    pub(crate) input: Option<InputEnd>,
    /// The inode of the pipe that is the task's stdin, when it has one: how a stall
    /// diagnosis tells a wait for input from a read of an inner pipe.
    pub(crate) input_pipe: Option<u64>,
    /// The screen of a task that runs in a terminal.
    pub(crate) terminal: Option<Arc<TerminalScreen>>,
    /// The sandbox it runs in, if any.
    sandbox: Option<SandboxPlan>,
    state: Mutex<State>,
    /// `Some(exit)` once settled. A watch keeps the value, so a waiter that subscribes
    /// after the exit still sees it: no lost wake-up.
    done: watch::Sender<Option<TaskExitInfo>>,
}

struct State {
    /// The task's id: provisional while it is held, its handle's next once named.
    id: TaskId,
    /// Its log, named after `id`.
    output_path: PathBuf,
    /// `Some` once settled: how the task ended.
    exit: Option<TaskExitInfo>,
    on_exit: Option<ExitCallback>,
}

/// How a task ended, as its supervisor settles it.
#[derive(Debug)]
pub(crate) struct Settlement {
    pub(crate) status: TaskStatus,
    pub(crate) exit: LeaderExit,
    /// The leader's own exit code, when our kill ended the task after it.
    pub(crate) leader_exit_code: Option<i32>,
    pub(crate) bytes_written: u64,
    pub(crate) log_write_failure: Option<LogWriteFailure>,
    /// Why our kill ended it, when one did.
    pub(crate) kill_reason: Option<KillReason>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("id", &self.id)
            .field("output_path", &self.output_path)
            .field("exit", &self.exit)
            .finish_non_exhaustive()
    }
}

/// What a new task is made of.
pub(crate) struct NewTask {
    pub(crate) id: TaskId,
    pub(crate) pid: u32,
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    pub(crate) output_path: PathBuf,
    pub(crate) started_at: DateTime<Utc>,
    pub(crate) processes: TaskProcesses,
    pub(crate) on_exit: Option<ExitCallback>,
    pub(crate) output: Arc<OutputPipe>,
    pub(crate) input: Option<InputEnd>,
    pub(crate) input_pipe: Option<u64>,
    pub(crate) terminal: Option<Arc<TerminalScreen>>,
    /// The sandbox it runs in, if any: a failure is read for the rule it met.
    pub(crate) sandbox: Option<SandboxPlan>,
}

impl Task {
    pub(crate) fn new(new: NewTask) -> Self {
        Self {
            pid: new.pid,
            command: new.command,
            cwd: new.cwd,
            started_at: new.started_at,
            processes: new.processes,
            bytes_written: AtomicU64::new(0),
            output_moved: watch::Sender::new(0),
            kill: CancellationToken::new(),
            kill_request: OnceLock::new(),
            output: Mutex::new(Some(new.output)),
            input: new.input,
            input_pipe: new.input_pipe,
            terminal: new.terminal,
            sandbox: new.sandbox,
            state: Mutex::new(State {
                id: new.id,
                output_path: new.output_path,
                exit: None,
                on_exit: new.on_exit,
            }),
            done: watch::Sender::new(None),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding this lock; if something ever did, the data is
        // still consistent (every update is a plain field store), so keep going.
        zidane_context::lock(&self.state)
    }

    /// The task's id (provisional while it is held).
    pub(crate) fn id(&self) -> TaskId {
        self.state().id
    }

    /// Where its output goes.
    pub(crate) fn output_path(&self) -> PathBuf {
        self.state().output_path.clone()
    }

    /// Gives a held task its id for good and moves its log to the first of
    /// `candidates` not taken, unless it settled first: then its exit. Under the lock
    /// settle takes, so the exit carries one name or the other, never half of each.
    pub(crate) fn rename(
        &self,
        id: TaskId,
        candidates: impl IntoIterator<Item = PathBuf>,
    ) -> std::io::Result<Result<(), TaskExitInfo>> {
        let mut state = self.state();
        if let Some(exit) = &state.exit {
            return Ok(Err(exit.clone()));
        }
        let mut taken = None;
        for candidate in candidates {
            match log_move::move_log(&state.output_path, &candidate) {
                Ok(()) => {
                    state.id = id;
                    state.output_path = candidate;
                    return Ok(Ok(()));
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    taken = Some(error);
                }
                Err(error) => return Err(error),
            }
        }
        Err(taken.unwrap_or_else(|| std::io::Error::other("no name was offered for the log")))
    }

    /// A snapshot for `list_background`, with live `bytes_written`.
    pub(crate) fn entry(&self) -> TaskEntry {
        let state = self.state();
        let stdin = if self.input.is_some() {
            zidane_context::StdinMode::Pipe
        } else {
            zidane_context::StdinMode::Closed
        };
        let entry = TaskEntry::running(
            state.id,
            self.pid,
            self.command.clone(),
            self.cwd.clone(),
            state.output_path.clone(),
            self.started_at,
        )
        .bytes_written(self.bytes_written.load(Ordering::Relaxed))
        .stdin(stdin)
        .tty(self.terminal.as_ref().map(|terminal| terminal.size()));
        match &state.exit {
            Some(exit) => entry.ended(exit.clone()),
            None => entry,
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.state().exit.is_none()
    }

    /// Asks for the task to be killed: `SIGTERM` goes to its group right here, rather
    /// than a thread hop later when the supervisor wakes, and the supervisor carries the
    /// escalation on from there. Only the first request signals. It first looks
    /// (without reaping) whether the leader still runs and records that *before*
    /// signalling, so that a supervisor settling a leader that died of this very signal
    /// already finds the request, and does not mistake the kill for an exit of its own.
    pub(crate) fn request_kill(&self, reason: KillReason) {
        self.terminate_once(reason);
        self.kill.cancel();
    }

    /// Records the first kill request (and why) and sends its `SIGTERM`; later ones do
    /// nothing.
    fn terminate_once(&self, reason: KillReason) {
        let leader_was_running = self.processes.leader_running();
        let output_was_open = !leader_was_running && self.output_is_open();
        let first = self
            .kill_request
            .set(KillRequest {
                leader_was_running,
                output_was_open,
                at: tokio::time::Instant::now(),
                reason,
            })
            .is_ok();
        // A settled task's leader is reaped and its group may be gone: nothing to
        // signal. Before that, the group cannot have been handed to anyone else.
        if first && self.is_running() {
            tracing::info!(task_id = %self.id(), pid = self.pid, signal = %Signal::TERM, "task kill");
            self.processes.terminate();
        }
    }

    /// Whether some process still holds the write end of the output pipe, asked of the
    /// kernel (`POLLHUP` is set once the last writer closed it), not of what the
    /// supervisor has read so far.
    fn output_is_open(&self) -> bool {
        let output = zidane_context::lock(&self.output);
        let Some(output) = output.as_ref() else {
            // The supervisor closed it: the output had ended.
            return false;
        };
        output.is_open()
    }

    /// Lets go of the output pipe and closes the input: called by the supervisor
    /// before it closes the output.
    pub(crate) fn release_output(&self) {
        zidane_context::lock(&self.output).take();
        if let Some(input) = &self.input {
            input.close();
        }
    }

    /// What the first kill request found, if one was made.
    pub(crate) fn kill_request(&self) -> Option<KillRequest> {
        self.kill_request.get().copied()
    }

    /// The exit, once settled.
    pub(crate) fn exit_info(&self) -> Option<TaskExitInfo> {
        self.done.borrow().clone()
    }

    /// A receiver that holds the exit once settled (immediately if it already is).
    pub(crate) fn subscribe(&self) -> watch::Receiver<Option<TaskExitInfo>> {
        self.done.subscribe()
    }

    /// Replaces the exit callback of a running task. `None` (and nothing changed) if the
    /// task already settled: its old callback has fired, or is firing, exactly once.
    pub(crate) fn reassign(&self, on_exit: Option<ExitCallback>) -> Option<TaskEntry> {
        {
            let mut state = self.state();
            if state.exit.is_some() {
                return None;
            }
            state.on_exit = on_exit;
        }
        Some(self.entry())
    }

    /// The settle gate: records the exit and hands back the callback, exactly once.
    ///
    /// Returns `None` if the task already settled. The caller fires the callback
    /// (outside every lock) and then [`publish`](Self::publish)es the exit.
    pub(crate) fn settle(
        &self,
        settlement: Settlement,
    ) -> Option<(Option<ExitCallback>, TaskExitInfo)> {
        let Settlement {
            status,
            exit,
            leader_exit_code,
            bytes_written,
            log_write_failure,
            kill_reason,
        } = settlement;
        self.bytes_written.store(bytes_written, Ordering::Relaxed);
        let denial = match &self.sandbox {
            Some(plan) if status == TaskStatus::Exited && exit.code != 0 => {
                denial::explain_log(&self.output_path(), plan, &self.cwd)
            }
            _ => None,
        };
        let ended_at = Utc::now();
        let mut state = self.state();
        if state.exit.is_some() {
            return None;
        }
        let info = TaskExitInfo::new(
            state.id,
            self.command.clone(),
            state.output_path.clone(),
            status,
            exit.code,
            (ended_at - self.started_at).to_std().unwrap_or_default(),
        )
        .signal(exit.signal)
        .leader_exit_code(leader_exit_code)
        .log_write_failure(log_write_failure)
        .kill_reason(kill_reason)
        .sandbox_denial(denial);
        state.exit = Some(info.clone());
        Some((state.on_exit.take(), info))
    }

    /// Wakes every waiter with the exit.
    pub(crate) fn publish(&self, exit: TaskExitInfo) {
        self.done.send_replace(Some(exit));
    }
}
