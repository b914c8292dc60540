//! The move: a foreground `shell` command that outlives its budget becomes a background
//! task — the same process, its log whole from the first byte, its end told once like any
//! background task's.
//!
//! The command starts as a [held](zidane_context::BackgroundOptions::held) background
//! task: it takes no task id of the session and is not listed, and its exit and stall
//! callbacks are held back while the call is still in the foreground. The call then
//! races the task's end against the budget, the host's move trigger and a cancellation:
//! - the task ends first: the call answers as a foreground call does, from the log's tail,
//!   and the held task's log is removed — a foreground call leaves no task behind. Its
//!   structured data carries the exit, which acknowledges it where a context named it
//!   as it started (nothing tells it again);
//! - the budget passes or the host fires the trigger: the task is named (the session's
//!   next task id, its log renamed to match), the call says where it went, and from
//!   then on the task's callbacks reach the session's sinks;
//! - the call is cancelled (or dropped): the task is killed, as a foreground command is,
//!   and its exit is not told.
//!
//! One lock decides between "ended in the foreground" and "moved", so an exit racing the
//! budget is either answered or told, never both and never neither.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, DEFAULT_EXEC_OUTPUT_BYTES, ExecOutput, ExecutionContext,
    ExecutionHandle, KillReason, Naming, ReadRange, SandboxScope, StallInfo, TaskExitInfo, TaskId,
    TaskStatus,
};

use crate::context::ToolContext;
use crate::data::{self, ShellData};
use crate::shell::{SHELL, render_foreground};
use crate::tool::ToolOutput;

/// Lines of the log quoted when a command moves to the background.
const MOVED_TAIL_LINES: usize = 5;

/// Where the call is, as the task's callbacks see it.
enum Phase {
    /// The call still waits: an exit is kept for its answer, a stall for later.
    Foreground {
        exit: Option<Box<TaskExitInfo>>,
        stall: Option<Box<StallInfo>>,
    },
    /// The call answered "moved": callbacks go to the session's sinks.
    Moved,
}

/// The phase behind its lock, shared with the task's callbacks.
#[derive(Clone)]
struct Latch(Arc<Mutex<Phase>>);

impl Latch {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(Phase::Foreground {
            exit: None,
            stall: None,
        })))
    }

    fn lock(&self) -> MutexGuard<'_, Phase> {
        // Never held across a callback or an await; a poisoned lock still holds a phase.
        zidane_context::lock(&self.0)
    }

    /// The exit kept while the call waited, if the task ended.
    fn kept_exit(&self) -> Option<Box<TaskExitInfo>> {
        match &*self.lock() {
            Phase::Foreground { exit, .. } => exit.clone(),
            Phase::Moved => None,
        }
    }

    /// Moves the call: from now on the callbacks reach the session's sinks. Returns
    /// what was held back while the call waited — a stall, and the exit of a task that
    /// ended after it was named — for the caller to pass on, once.
    fn release(&self) -> (Option<Box<StallInfo>>, Option<Box<TaskExitInfo>>) {
        let mut phase = self.lock();
        match std::mem::replace(&mut *phase, Phase::Moved) {
            Phase::Foreground { exit, stall } => (stall, exit),
            Phase::Moved => (None, None),
        }
    }
}

/// Kills the task if the call is dropped before it answered (a host that gives up on
/// the call): a foreground command does not outlive its call unless it moved.
struct KillOnDrop {
    context: Arc<dyn ExecutionContext>,
    handle: ExecutionHandle,
    task_id: TaskId,
    armed: bool,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (context, handle, task_id) = (Arc::clone(&self.context), self.handle, self.task_id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                // Nobody is left to tell of a failure: the call that would carry it is gone.
                let _ = context.kill_background(handle, task_id).await;
                let _ = context.forget_background(handle, task_id).await;
            });
        }
    }
}

/// How the race ended.
enum Outcome {
    Ended(TaskExitInfo),
    Move { by_trigger: bool },
    Cancelled,
    Failed(zidane_context::ContextError),
}

/// Runs `command` in the foreground under the move budget `budget`; `None` when the
/// command could not start as a task (the caller runs it with a plain `exec`).
pub(crate) async fn run_movable(
    context: &ToolContext,
    command: &str,
    timeout: Option<Duration>,
    budget: Duration,
    tasks_dir: PathBuf,
    sandbox: SandboxScope,
) -> Option<ToolOutput> {
    let latch = Latch::new();
    let mut options = BackgroundOptions::new(tasks_dir).held(true);
    options.spec.sandbox = sandbox;
    // `timeout_ms` keeps its meaning: the command is killed then, moved or not. No CPU
    // budget: a foreground answer has no words for one.
    let limits = context.background().limits;
    options.limits = limits
        .wall_time(timeout.or(limits.wall_time))
        .cpu_time(None);
    let exit_latch = latch.clone();
    let on_exit = context.sinks().on_exit.clone();
    options.on_exit = Some(Arc::new(move |exit: TaskExitInfo| {
        let forward = {
            let mut phase = exit_latch.lock();
            match &mut *phase {
                Phase::Foreground { exit: kept, .. } => {
                    *kept = Some(Box::new(exit.clone()));
                    false
                }
                Phase::Moved => true,
            }
        };
        if forward && let Some(on_exit) = &on_exit {
            on_exit(exit);
        }
    }));
    let stall_latch = latch.clone();
    let on_stall = context.sinks().on_stall.clone();
    options.on_stall = Some(Arc::new(move |stall: StallInfo| {
        let forward = {
            let mut phase = stall_latch.lock();
            match &mut *phase {
                Phase::Foreground { stall: kept, .. } => {
                    *kept = Some(Box::new(stall.clone()));
                    false
                }
                Phase::Moved => true,
            }
        };
        if forward && let Some(on_stall) = &on_stall {
            on_stall(stall);
        }
    }));
    let started_at = Instant::now();
    let started = context
        .execution()
        .exec_background(context.handle(), command, options)
        .await
        .ok()?;
    let mut guard = KillOnDrop {
        context: Arc::clone(context.execution()),
        handle: context.handle(),
        task_id: started.task_id,
        armed: true,
    };
    let outcome = tokio::select! {
        waited = context.execution().wait_background(
            context.handle(),
            started.task_id,
            budget,
            zidane_context::CancellationToken::new(),
        ) => match waited {
            Ok(Some(exit)) => Outcome::Ended(exit),
            Ok(None) => Outcome::Move { by_trigger: false },
            Err(error) => Outcome::Failed(error),
        },
        () = context.move_trigger().cancelled() => Outcome::Move { by_trigger: true },
        () = context.cancel().cancelled() => Outcome::Cancelled,
    };
    let output = match outcome {
        Outcome::Ended(exit) => {
            guard.armed = false;
            answer_foreground(context, exit, timeout).await
        }
        Outcome::Move { by_trigger } => {
            let named = match latch.kept_exit() {
                // Ended as the budget passed: still a foreground answer.
                Some(exit) => Ok(Some(Naming::Ended(*exit))),
                None => {
                    context
                        .execution()
                        .name_background(context.handle(), started.task_id)
                        .await
                }
            };
            let named = match named {
                Ok(Some(Naming::Named(named))) => named,
                Ok(Some(Naming::AtStart)) => started.clone(),
                Ok(Some(Naming::Ended(exit))) => {
                    guard.armed = false;
                    return Some(answer_foreground(context, exit, timeout).await);
                }
                Ok(None) | Ok(Some(_)) => {
                    drop(guard);
                    return Some(ToolOutput::error(format!(
                        "{SHELL}: the command's task {} was gone before it could move to \
                         the background",
                        started.task_id
                    )));
                }
                Err(error) => {
                    // The guard kills the task: it cannot move, and the call ends here.
                    drop(guard);
                    return Some(ToolOutput::error(format!(
                        "{SHELL}: the command could not move to the background, so it was \
                         killed: {error}"
                    )));
                }
            };
            guard.armed = false;
            let (stall, exit) = latch.release();
            if let Some(on_start) = &context.sinks().on_start {
                on_start(&named, command);
            }
            if let (Some(mut stall), Some(on_stall)) = (stall, &context.sinks().on_stall) {
                // Held back under the provisional name: told under the task's own.
                stall.task_id = named.task_id;
                stall.output_path.clone_from(&named.output_path);
                on_stall(*stall);
            }
            let waited = if by_trigger {
                Moved::ByTrigger(started_at.elapsed())
            } else {
                Moved::AfterBudget(budget)
            };
            let answer = answer_moved(context, &named, waited).await;
            // Named, then ended before the call could say so: a background task's end,
            // told as any is, after the answer that names it.
            if let (Some(exit), Some(on_exit)) = (exit, &context.sinks().on_exit) {
                on_exit(*exit);
            }
            answer
        }
        Outcome::Cancelled => {
            // Armed while the kill runs: a host that stops waiting for the call must
            // not leave the command running.
            let killed = context
                .execution()
                .kill_background(context.handle(), started.task_id)
                .await;
            guard.armed = false;
            match killed {
                Ok(Some(exit)) => answer_foreground(context, exit, timeout).await,
                Ok(None) => ToolOutput::error(format!(
                    "{SHELL}: cancelled; the command's task {} was already gone",
                    started.task_id
                )),
                Err(error) => ToolOutput::error(format!(
                    "{SHELL}: cancelled, but the command could not be killed: {error}"
                )),
            }
        }
        Outcome::Failed(error) => {
            // The guard kills the task: the call cannot follow it.
            drop(guard);
            ToolOutput::error(format!("{SHELL}: {error}"))
        }
    };
    Some(output)
}

/// Why the call moved.
enum Moved {
    /// The budget passed.
    AfterBudget(Duration),
    /// The host's trigger fired, this long after the start.
    ByTrigger(Duration),
}

/// The foreground answer of a task that ended while the call waited: the log's tail as
/// `exec` would have returned it, and the exit in the data (which acknowledges it). The
/// held task's log is removed once read.
async fn answer_foreground(
    context: &ToolContext,
    exit: TaskExitInfo,
    timeout: Option<Duration>,
) -> ToolOutput {
    let (output, truncated_bytes) = log_tail_bytes(context, &exit).await;
    // A log left behind costs a file, not the answer: the answer stands either way.
    let _ = context
        .execution()
        .forget_background(context.handle(), exit.task_id)
        .await;
    let timed_out = matches!(exit.kill_reason, Some(KillReason::WallTime { .. }));
    let cancelled = exit.status == TaskStatus::Killed && !timed_out;
    let mut exec = ExecOutput {
        output,
        exit_code: exit.exit_code,
        signal: exit.signal,
        timed_out,
        cancelled,
        truncated_bytes,
        duration: exit.duration,
    };
    // The rule a sandboxed command met, told as `exec` tells it.
    if let Some(line) = &exit.sandbox_denial {
        exec.push_line(line);
    }
    let mut answer = render_foreground(&exec, timeout);
    let mut data: ShellData = ShellData {
        output: Some(exec.output),
        exit_code: Some(exec.exit_code),
        ..ShellData::default()
    };
    data.exit = Some(exit);
    answer.data = data::to_value(&data);
    answer
}

/// The last [`DEFAULT_EXEC_OUTPUT_BYTES`] of an ended task's log, and how many bytes
/// came before them; the last lines through `read_file` where the context cannot follow
/// a log.
async fn log_tail_bytes(context: &ToolContext, exit: &TaskExitInfo) -> (String, u64) {
    let follow = |offset, max| {
        context
            .execution()
            .follow_output(context.handle(), exit.task_id, offset, max)
    };
    if let Ok(Some(end)) = follow(u64::MAX, 0).await {
        let end = end.offset;
        let start = end.saturating_sub(DEFAULT_EXEC_OUTPUT_BYTES);
        let mut bytes = Vec::new();
        let mut offset = start;
        let max = usize::try_from(DEFAULT_EXEC_OUTPUT_BYTES).unwrap_or(usize::MAX);
        while offset < end {
            match follow(offset, max).await {
                Ok(Some(chunk)) if !chunk.bytes.is_empty() => {
                    offset = chunk.next_offset();
                    bytes.extend_from_slice(&chunk.bytes);
                }
                _ => break,
            }
        }
        return (String::from_utf8_lossy(&bytes).into_owned(), start);
    }
    let lines = context
        .execution()
        .read_file(
            context.handle(),
            &exit.output_path,
            ReadRange::from_end(0, None),
        )
        .await
        .map(|window| window.lines)
        .unwrap_or_default();
    (lines.join("\n"), 0)
}

/// The answer of a call that moved: where the task went, its last lines, and what the
/// session's channel does with its end.
async fn answer_moved(
    context: &ToolContext,
    started: &BackgroundStarted,
    moved: Moved,
) -> ToolOutput {
    let head = match moved {
        Moved::AfterBudget(budget) => {
            format!(
                "Still running after {}",
                zidane_wire::format_duration(budget)
            )
        }
        Moved::ByTrigger(elapsed) => format!(
            "Moved by the user after {}",
            zidane_wire::format_duration(elapsed)
        ),
    };
    let mut text = format!(
        "{head}: moved to the background as {} (pid {}). Output: {}\n\n",
        started.task_id,
        started.pid,
        started.output_path.display()
    );
    let tail = context
        .execution()
        .read_file(
            context.handle(),
            &started.output_path,
            ReadRange::from_end(0, Some(MOVED_TAIL_LINES)),
        )
        .await
        .map(|window| window.lines)
        .unwrap_or_default();
    if tail.is_empty() {
        text.push_str("Its log is empty so far.");
    } else {
        text.push_str("Last lines:\n");
        text.push_str(&tail.join("\n"));
    }
    text.push_str("\n\n");
    text.push_str(context.background().exit_channel.start_guidance());
    ToolOutput::ok(
        text,
        data::to_value(&ShellData {
            task_id: Some(started.task_id.to_string()),
            output_path: Some(started.output_path.display().to_string()),
            pid: Some(started.pid),
            moved_to_background: Some(true),
            ..ShellData::default()
        }),
    )
}
