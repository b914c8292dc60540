//! The `shell_input` tool: type into a running background task (a prompt, a REPL, a
//! full-screen program), and see what it printed in answer.

use crate::data::{self, ShellInputData};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;
use zidane_context::{ContextError, ExecutionContext, TaskId, TaskInput};

use crate::context::ToolContext;
use crate::gate::BackgroundGate;
use crate::input::{ShellInputArgs, input_schema, parse, parse_task_id};
use crate::keys::{describe_key, key_bytes};
use crate::output_schema::output_schema;
use crate::terminal_text::strip_terminal_controls;
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the input tool.
pub const SHELL_INPUT: &str = "shell_input";

/// The answer is taken once the task has printed nothing for this long.
pub const INPUT_SETTLE_QUIET: Duration = Duration::from_millis(300);

/// The answer is taken after this long at most, however busy the task is.
pub const INPUT_SETTLE_MAX: Duration = Duration::from_secs(2);

/// Most bytes of the answer shown (its end is kept).
pub const INPUT_ANSWER_BYTES: usize = 4096;

/// Most bytes asked of the log per read while collecting the answer.
const FOLLOW_CHUNK: usize = 64 << 10;

const DESCRIPTION: &str = "\
Types into a running background task that takes input: one started by `shell` with \
`run_in_background: true` and `stdin: \"pipe\"` or `tty: true`. Use it to answer a prompt \
(a question, a confirmation, a password), drive a REPL, or press keys in a full-screen \
program. `text` is written as is, then each of `keys` (such as `enter`, `up`, `tab`, \
`ctrl-c`), then, with `eof: true`, the end of input. The result says what was sent and \
what the task printed in answer (the output until it goes quiet, at most a couple of \
seconds, the end kept when long). Check its log or, for a terminal task, `shell_screen` \
before answering, so you answer what it actually asked.";

/// The builtin `shell_input` tool.
pub(crate) struct ShellInputTool;

#[async_trait]
impl Tool for ShellInputTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: SHELL_INPUT.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ShellInputArgs>(),
            aliases: Vec::new(),
            title: Some("Type into a background task: answer its prompt, drive a REPL".to_owned()),
            annotations: ToolAnnotations {
                read_only: None,
                destructive: Some(true),
                idempotent: None,
                open_world: Some(false),
            },
            output_schema: Some(output_schema::<ShellInputData>()),
        }
    }

    fn offered(&self, gate: &BackgroundGate) -> bool {
        gate.allowed() && gate.task_input()
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ShellInputArgs = match parse(SHELL_INPUT, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        let task_id = match parse_task_id(SHELL_INPUT, &input.task_id) {
            Ok(task_id) => task_id,
            Err(output) => return output,
        };
        let text = input.text.unwrap_or_default();
        let keys = input.keys.unwrap_or_default();
        let eof = input.eof.unwrap_or(false);
        if text.is_empty() && keys.is_empty() && !eof {
            return ToolOutput::error(format!(
                "{SHELL_INPUT}: nothing to send: give `text`, `keys` or `eof: true`"
            ));
        }
        let entries = match context.execution().list_background(context.handle()).await {
            Ok(entries) => entries,
            Err(error) => return context_error(task_id, error),
        };
        let Some(entry) = entries.into_iter().find(|entry| entry.task_id == task_id) else {
            return unknown_task(task_id);
        };
        if !entry.takes_input() {
            return context_error(task_id, ContextError::NoInput { task_id });
        }
        if entry.status().is_terminal() {
            return context_error(task_id, ContextError::TaskEnded { task_id });
        }
        let terminal = entry.tty.is_some();
        let mut bytes = text.clone().into_bytes();
        let mut sent = Vec::new();
        if !text.is_empty() {
            sent.push(format!("{text:?}"));
        }
        for key in &keys {
            match key_bytes(key, terminal) {
                Ok(key_bytes) => bytes.extend_from_slice(&key_bytes),
                Err(error) => return ToolOutput::error(format!("{SHELL_INPUT}: {error}")),
            }
            sent.push(describe_key(key));
        }
        if eof {
            sent.push(if terminal {
                "end of input (ctrl-d)".to_owned()
            } else {
                "end of input (stdin closed)".to_owned()
            });
        }

        // Where the log ends now: the answer is what comes after.
        let start = log_end(context.execution().as_ref(), context, task_id).await;
        if !bytes.is_empty()
            && let Err(output) = write(context, task_id, TaskInput::Bytes(bytes.clone())).await
        {
            return output;
        }
        if eof && let Err(output) = write(context, task_id, TaskInput::Eof).await {
            return output;
        }
        let answer = match start {
            Some(start) => Some(collect_answer(context, task_id, start).await),
            None => None,
        };
        render(task_id, terminal, &sent, bytes.len(), answer)
    }
}

async fn write(context: &ToolContext, task_id: TaskId, input: TaskInput) -> Result<(), ToolOutput> {
    match context
        .execution()
        .write_input(context.handle(), task_id, input)
        .await
    {
        Ok(Some(())) => Ok(()),
        Ok(None) => Err(unknown_task(task_id)),
        Err(error) => Err(context_error(task_id, error)),
    }
}

fn unknown_task(task_id: TaskId) -> ToolOutput {
    ToolOutput::error(format!(
        "{SHELL_INPUT}: no background task {task_id} in this session. Use a task id returned \
         by `shell` with `run_in_background`."
    ))
}

fn context_error(task_id: TaskId, error: ContextError) -> ToolOutput {
    ToolOutput::error(match error {
        ContextError::NoInput { .. } => format!(
            "{SHELL_INPUT}: {task_id} takes no input: it was started with its stdin closed. \
             To answer a command's prompts, start it again with `run_in_background: true` and \
             `stdin: \"pipe\"` (or `tty: true` if it needs a terminal)."
        ),
        ContextError::TaskEnded { .. } => {
            format!("{SHELL_INPUT}: {task_id} has ended; it takes no more input.")
        }
        ContextError::InputClosed { .. } => format!(
            "{SHELL_INPUT}: the input of {task_id} is closed (end of input was sent); it takes no \
             more."
        ),
        ContextError::Unsupported { .. } => {
            format!("{SHELL_INPUT}: this execution context cannot write to background tasks")
        }
        error => format!("{SHELL_INPUT}: {error}"),
    })
}

/// Where the task's log ends now (`None` when the context cannot follow logs).
async fn log_end(
    execution: &dyn ExecutionContext,
    context: &ToolContext,
    task_id: TaskId,
) -> Option<u64> {
    match execution
        .follow_output(context.handle(), task_id, u64::MAX, 0)
        .await
    {
        Ok(Some(chunk)) => Some(chunk.offset),
        _ => None,
    }
}

/// What the task printed after `start`: until it is quiet for
/// [`INPUT_SETTLE_QUIET`], it ends, or [`INPUT_SETTLE_MAX`] passed.
#[derive(Debug, Default)]
struct Answer {
    /// The end of it, at most [`INPUT_ANSWER_BYTES`].
    bytes: Vec<u8>,
    /// Bytes before `bytes` that are not shown.
    dropped: u64,
    /// The task ended meanwhile.
    ended: bool,
}

async fn collect_answer(context: &ToolContext, task_id: TaskId, start: u64) -> Answer {
    let deadline = Instant::now() + INPUT_SETTLE_MAX;
    let mut answer = Answer::default();
    let mut offset = start;
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let quiet = INPUT_SETTLE_QUIET.min(deadline - now);
        let next =
            context
                .execution()
                .follow_output(context.handle(), task_id, offset, FOLLOW_CHUNK);
        // Quiet for the window, or the log cannot be read: the answer is complete.
        let Ok(Ok(Some(chunk))) = tokio::time::timeout(quiet, next).await else {
            break;
        };
        offset = chunk.offset + chunk.bytes.len() as u64;
        answer.bytes.extend_from_slice(&chunk.bytes);
        if answer.bytes.len() > INPUT_ANSWER_BYTES {
            let cut = answer.bytes.len() - INPUT_ANSWER_BYTES;
            answer.bytes.drain(..cut);
            answer.dropped += cut as u64;
        }
        if chunk.ended && chunk.bytes.is_empty() {
            answer.ended = true;
            break;
        }
    }
    answer
}

fn render(
    task_id: TaskId,
    terminal: bool,
    sent: &[String],
    bytes: usize,
    answer: Option<Answer>,
) -> ToolOutput {
    let mut text = format!("Sent to {task_id}: {}", sent.join(" + "));
    if bytes > 0 {
        text.push_str(&format!(" ({bytes} bytes)"));
    }
    text.push('.');
    let mut shown = String::new();
    let mut ended = false;
    if let Some(answer) = &answer {
        ended = answer.ended;
        shown = if terminal {
            strip_terminal_controls(&answer.bytes)
        } else {
            String::from_utf8_lossy(&answer.bytes).into_owned()
        };
        if shown.trim().is_empty() {
            text.push_str(&format!(
                "\n\nIt printed nothing in answer within {} ms.",
                INPUT_SETTLE_QUIET.as_millis()
            ));
        } else {
            text.push_str("\n\nIt printed in answer:\n");
            if answer.dropped > 0 {
                text.push_str(&format!("[{} earlier bytes not shown]\n", answer.dropped));
            }
            text.push_str(shown.trim_end_matches('\n'));
        }
        if ended {
            text.push_str(
                "\n\nThe task has ended; its <task-notification> arrives in your next turn.",
            );
        } else if terminal {
            text.push_str("\n\nUse `shell_screen` to see its whole screen.");
        }
    }
    ToolOutput::ok(
        text,
        data::to_value(&ShellInputData {
            task_id: task_id.to_string(),
            bytes_written: bytes,
            eof: sent.last().is_some_and(|s| s.starts_with("end of input")),
            output: shown,
            ended,
        }),
    )
}
