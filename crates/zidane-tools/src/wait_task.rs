//! The `wait_task` tool: block until a background task ends, within a bound.

use crate::data::{self, WaitTaskData};
use std::time::Duration;

use async_trait::async_trait;
use zidane_context::{ContextError, ReadRange, TaskEntry, TaskExitInfo, TaskId};

use crate::context::ToolContext;
use crate::exit_channel::ExitChannel;
use crate::input::{WaitTaskArgs, input_schema, parse, parse_task_id};
use crate::output_schema::output_schema;
use crate::readiness::{LastSeen, Until, Waited, log_tail, wait_ready};
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the wait tool.
pub const WAIT_TASK: &str = "wait_task";

/// How long `wait_task` waits when the model gives no `timeout_ms`: 2 minutes.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(120);

/// The start of every `wait_task` result that does not report the task's exit (a
/// timeout, a readiness wait that succeeded, a cancel). A result that reports the exit —
/// so the model knows how the task ended — starts with the exit summary instead.
pub const WAIT_NOT_ENDED_PREFIX: &str = "wait_task: ";

/// How long the answer to a readiness wait whose task ended waits for the exit to settle.
const ENDED_LOOKUP: Duration = Duration::from_secs(5);

/// Lines of the log quoted when a task ended before it was ready.
const TAIL_LINES: usize = 5;

/// The longest `wait_task` waits: 30 minutes. Larger `timeout_ms` values are capped to
/// it, not refused.
pub const MAX_WAIT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long `wait_task` waits by default and at most. A host whose client gives up on a
/// call sooner (an MCP host's request ceiling) serves the tool with smaller limits and
/// describes them with [`wait_task_description`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitLimits {
    /// The wait when the model gives no `timeout_ms`.
    pub default: Duration,
    /// The longest wait; larger `timeout_ms` values are capped to it, not refused.
    pub max: Duration,
}

impl WaitLimits {
    /// The limits of an in-process agent: [`DEFAULT_WAIT_TIMEOUT`], [`MAX_WAIT_TIMEOUT`].
    pub const STANDARD: Self = Self {
        default: DEFAULT_WAIT_TIMEOUT,
        max: MAX_WAIT_TIMEOUT,
    };

    /// `timeout_ms` as these limits take it: the default when absent, capped at the max.
    pub fn apply(&self, timeout_ms: Option<u64>) -> Duration {
        timeout_ms.map_or(self.default, |ms| Duration::from_millis(ms).min(self.max))
    }
}

/// The `wait_task` description for these limits, in a session whose exits reach the
/// model by `channel`: what it waits for, for how long, and what to do instead.
pub fn wait_task_description(limits: WaitLimits, channel: ExitChannel) -> String {
    format!(
        "Waits for a background task started by `shell` to end and returns its exit summary \
         (command, duration, exit code). Use it only when your very next step needs the \
         task's result; {} Waits at most `timeout_ms` (default {}, at most {}); if the task is still \
         running then, the call says so, with the last lines of its log, and the task keeps \
         running: call it again to wait longer. Read the task's log with `read_file` for its \
         output.\n\n{UNTIL}",
        channel.instead_of_waiting(),
        limit_text(limits.default),
        limit_text(limits.max),
    )
}

/// A limit as a person says it: `2 minutes`, `50 seconds`.
pub(crate) fn limit_text(limit: Duration) -> String {
    let secs = limit.as_secs();
    let (n, unit) = if secs >= 60 && secs.is_multiple_of(60) {
        (secs / 60, "minute")
    } else {
        (secs, "second")
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

const UNTIL: &str = "\
With `until`, it waits for the task to be ready rather than ended — a log line matching \
a pattern, a port accepting connections, or a URL answering — and returns as soon as it \
is, while the task keeps running. After starting a dev server or any service in the \
background, use `until` instead of `sleep` or polling the log. If the task ends first, \
the call returns at once with its exit and last log lines.";

/// The builtin `wait_task` tool.
pub(crate) struct WaitTaskTool;

#[async_trait]
impl Tool for WaitTaskTool {
    fn spec(&self, view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: WAIT_TASK.to_owned(),
            description: wait_task_description(WaitLimits::STANDARD, view.gate.exit_channel()),
            input_schema: input_schema::<WaitTaskArgs>(),
            aliases: Vec::new(),
            title: Some("Wait for a background task to end".to_owned()),
            annotations: ToolAnnotations::READ_ONLY,
            output_schema: Some(output_schema::<WaitTaskData>()),
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: WaitTaskArgs = match parse(WAIT_TASK, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        let task_id = match parse_task_id(WAIT_TASK, &input.task_id) {
            Ok(task_id) => task_id,
            Err(output) => return output,
        };
        let timeout = match input.timeout_ms {
            None => WaitLimits::STANDARD.apply(None),
            Some(ms) => match u64::try_from(ms) {
                Ok(ms) if ms > 0 => WaitLimits::STANDARD.apply(Some(ms)),
                _ => {
                    return ToolOutput::error(format!(
                        "{WAIT_TASK}: `timeout_ms` must be a positive number of milliseconds, \
                         got {ms}"
                    ));
                }
            },
        };
        let until = match input.until.as_ref().filter(|v| !v.is_null()) {
            None => None,
            Some(value) => match Until::parse(value, context.background().remote_readiness) {
                Ok(until) => Some(until),
                Err(message) => {
                    return ToolOutput::error(format!("{WAIT_TASK}: invalid input: {message}"));
                }
            },
        };
        let waited = match &until {
            None => wait(context, task_id, timeout).await,
            Some(until) => wait_until(context, task_id, until, timeout).await,
        };
        match waited {
            Ok(output) => output,
            Err(ContextError::Unsupported { operation: "probe" }) => ToolOutput::error(format!(
                "{WAIT_TASK}: this execution context cannot check a port or a URL where its \
                 tasks run; wait for a line of the task's log instead, with \
                 `until: {{\"pattern\": …}}`"
            )),
            Err(ContextError::Unsupported { .. }) => ToolOutput::error(format!(
                "{WAIT_TASK}: background tasks are not supported in this execution context"
            )),
            Err(error) => ToolOutput::error(format!("{WAIT_TASK}: {error}")),
        }
    }
}

async fn wait(
    context: &ToolContext,
    task_id: TaskId,
    timeout: Duration,
) -> Result<ToolOutput, ContextError> {
    // `wait_background` answers `None` alike for an unknown id, a timeout and a
    // cancellation; look the task up first so each gets its own answer.
    if find(context, task_id).await?.is_none() {
        return Ok(unknown_task(task_id));
    }
    let waited = context
        .execution()
        .wait_background(context.handle(), task_id, timeout, context.cancel().clone())
        .await?;
    if let Some(exit) = waited {
        return Ok(exit_output(exit));
    }
    // An exit racing the end of the wait still counts as an exit.
    let entry = find(context, task_id).await?;
    if let Some(exit) = entry.as_ref().and_then(TaskEntry::exit_info) {
        return Ok(exit_output(exit));
    }
    let output_path = entry
        .as_ref()
        .map(|entry| entry.output_path.display().to_string())
        .unwrap_or_default();
    if context.cancel().is_cancelled() {
        return Ok(ToolOutput::error_with(
            format!("{WAIT_TASK}: cancelled; {task_id} is still running. Output: {output_path}"),
            cancelled(task_id, &output_path),
        ));
    }
    let running_for = entry
        .as_ref()
        .map(|entry| entry.runtime(chrono::Utc::now()));
    // Not `log_tail`: following a running task's empty log would wait for it to write.
    let tail = match &entry {
        Some(entry) => context
            .execution()
            .read_file(
                context.handle(),
                &entry.output_path,
                ReadRange::from_end(0, Some(TAIL_LINES)),
            )
            .await
            .map(|window| window.lines)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let mut text = format!(
        "{WAIT_TASK}: timed out after {}; {task_id} is still running",
        timeout_text(timeout)
    );
    if let Some(running_for) = running_for {
        text.push_str(&format!(
            " (started {} ago)",
            zidane_wire::format_duration(running_for)
        ));
    }
    text.push('.');
    push_tail(&mut text, &tail, " Its log is empty so far.");
    text.push_str(if tail.is_empty() { " " } else { "\n" });
    text.push_str(&format!(
        "Call wait_task again to wait longer. Output: {output_path}"
    ));
    Ok(ToolOutput::ok(
        text,
        data::to_value(&WaitTaskData {
            timed_out: Some(true),
            task_id: Some(task_id.to_string()),
            output_path: Some(output_path),
            running_ms: running_for.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            last_lines: Some(tail),
            ..WaitTaskData::default()
        }),
    ))
}

/// Waits for `until` to hold, for the task to end first, or for the timeout.
async fn wait_until(
    context: &ToolContext,
    task_id: TaskId,
    until: &Until,
    timeout: Duration,
) -> Result<ToolOutput, ContextError> {
    let Some(entry) = find(context, task_id).await? else {
        return Ok(unknown_task(task_id));
    };
    let output_path = entry.output_path.display().to_string();
    if entry.status().is_terminal() {
        return ended_before_ready(context, task_id, until).await;
    }
    let seen = std::sync::Mutex::new(LastSeen::default());
    let waited = tokio::select! {
        waited = wait_ready(context, task_id, until, &seen) => Some(waited?),
        () = tokio::time::sleep(timeout) => None,
        () = context.cancel().cancelled() => {
            return Ok(ToolOutput::error_with(
                format!("{WAIT_TASK}: cancelled; {task_id} is still running. Output: {output_path}"),
                cancelled(task_id, &output_path),
            ));
        }
    };
    let seen = seen.into_inner().unwrap_or_else(|e| e.into_inner());
    match waited {
        Some(Waited::Ready { text, matched }) => {
            let data = data::to_value(&WaitTaskData {
                ready: Some(true),
                task_id: Some(task_id.to_string()),
                output_path: Some(output_path.clone()),
                matched,
                ..WaitTaskData::default()
            });
            Ok(ToolOutput::ok(
                format!(
                    "{WAIT_NOT_ENDED_PREFIX}{task_id} is ready: {text}. It keeps running; its \
                     exit will be notified. Output: {output_path}"
                ),
                data,
            ))
        }
        Some(Waited::Ended) => ended_before_ready(context, task_id, until).await,
        Some(Waited::Gone) => Ok(unknown_task(task_id)),
        None => Ok(ToolOutput::ok(
            format!(
                "{WAIT_NOT_ENDED_PREFIX}timed out after {} waiting for {}; {task_id} is still \
                 running. {} Output: {output_path}",
                timeout_text(timeout),
                until.describe(),
                seen.describe()
            ),
            data::to_value(&WaitTaskData {
                timed_out: Some(true),
                task_id: Some(task_id.to_string()),
                output_path: Some(output_path),
                last_line: seen.line,
                last_error: seen.error,
                ..WaitTaskData::default()
            }),
        )),
    }
}

/// The task ended before it was ready: its exit summary (the model now knows the exit,
/// as from a plain wait) and the last lines of its log.
async fn ended_before_ready(
    context: &ToolContext,
    task_id: TaskId,
    until: &Until,
) -> Result<ToolOutput, ContextError> {
    let exit = context
        .execution()
        .wait_background(
            context.handle(),
            task_id,
            ENDED_LOOKUP,
            context.cancel().clone(),
        )
        .await?;
    let Some(exit) = exit else {
        return Ok(unknown_task(task_id));
    };
    let tail = log_tail(context, task_id, TAIL_LINES).await;
    let mut text = format!(
        "{} ended before it was ready (waiting for {}): {}. Output: {}",
        exit.task_id,
        until.describe(),
        zidane_wire::exit_summary(&exit),
        exit.output_path.display()
    );
    push_tail(&mut text, &tail, " Its log is empty.");
    Ok(ToolOutput::ok(
        text,
        data::to_value(&WaitTaskData {
            exit: Some(exit),
            ready: Some(false),
            last_lines: Some(tail),
            ..WaitTaskData::default()
        }),
    ))
}

/// `tail` quoted, indented, one line each, or `empty` when there is none.
fn push_tail(text: &mut String, tail: &[String], empty: &str) {
    if tail.is_empty() {
        text.push_str(empty);
        return;
    }
    text.push_str(" Last lines of its log:");
    for line in tail {
        text.push_str("\n  ");
        text.push_str(line);
    }
}

fn unknown_task(task_id: TaskId) -> ToolOutput {
    ToolOutput::error(format!(
        "{WAIT_TASK}: no background task {task_id} in this session. Use a task id \
         returned by `shell` with `run_in_background`."
    ))
}

/// The timeout as the model gave it: `5s` for whole seconds under a minute (it asked for
/// 5000 ms, not 5.0 s), the summary's duration format otherwise.
fn timeout_text(timeout: Duration) -> String {
    let ms = timeout.as_millis();
    if (1_000..60_000).contains(&ms) && ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        zidane_wire::format_duration(timeout)
    }
}

fn exit_output(exit: TaskExitInfo) -> ToolOutput {
    ToolOutput::ok(
        ended_line(&exit),
        data::to_value(&WaitTaskData {
            exit: Some(exit),
            ..WaitTaskData::default()
        }),
    )
}

/// `bash_1 ended: make (2.4s) — exited 0. Output: <log>`: which task, how it ended and
/// where its log is, so the text stands alone in a host that shows the model no
/// structured content (the path last, so no stop sticks to it).
fn ended_line(exit: &TaskExitInfo) -> String {
    format!(
        "{} ended: {}. Output: {}",
        exit.task_id,
        zidane_wire::exit_summary(exit),
        exit.output_path.display()
    )
}

/// The data of a wait that was cancelled while its task still runs.
fn cancelled(task_id: TaskId, output_path: &str) -> serde_json::Value {
    data::to_value(&WaitTaskData {
        cancelled: Some(true),
        task_id: Some(task_id.to_string()),
        output_path: Some(output_path.to_owned()),
        ..WaitTaskData::default()
    })
}

async fn find(context: &ToolContext, task_id: TaskId) -> Result<Option<TaskEntry>, ContextError> {
    let entries = context
        .execution()
        .list_background(context.handle())
        .await?;
    Ok(entries.into_iter().find(|entry| entry.task_id == task_id))
}
