//! `TaskStall`: the `<task-stall>` block that tells the model a task has gone quiet.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use zidane_context::{StallInfo, TaskId};

use crate::cursor::Cursor;
use crate::error::WireError;
use crate::escape::{push_element, push_raw_element};

/// The element name of a stall block.
pub(crate) const STALL_TAG: &str = "task-stall";

/// The optional element that says what the task's processes are doing.
const DIAGNOSIS_TAG: &str = "diagnosis";

/// The `<hint>` of a stall block built by [`TaskStall::from_stall`].
pub const STALL_HINT: &str = "The task is still running but has produced no output for \
the reported window. It may be waiting for input it will never get (stdin is closed) or \
be stuck. Read the tail of the output file, then decide: kill it with shell_kill and \
re-run it with its input piped in or a non-interactive flag such as --yes, or keep \
waiting if the silence is expected.";

/// The `<hint>` of a stall block for a task started with its stdin open
/// (`stdin: pipe`): it can be answered.
pub const STALL_INPUT_HINT: &str = "The task is still running but has produced no output \
for the reported window. Its stdin is open, so it may be waiting for an answer: read the \
tail of the output file to see what it asked, then answer it with shell_input (text, and \
keys such as enter). Or kill it with shell_kill, or keep waiting if the silence is \
expected.";

/// The `<hint>` of a stall block for a task that runs in a terminal: it can be
/// answered, and its screen read.
pub const STALL_TERMINAL_HINT: &str = "The task is still running but has produced no \
output for the reported window. It runs in a terminal, so it may be waiting for an answer \
or a key: look at its screen with shell_screen to see what it asks, then answer it with \
shell_input (text, and keys such as enter, or ctrl-c to interrupt it). Or kill it with \
shell_kill, or keep waiting if the silence is expected.";

/// A task that has produced no output for the stall window: a one-shot block queued for
/// the model's next user turn. The task is not killed.
///
/// [`render`](Self::render) writes (no trailing line break):
///
/// ```xml
/// <task-stall>
/// <task-id>bash_1</task-id>
/// <command>npm init</command>
/// <output-file>/home/u/.zidane/sessions/s1/tasks/bash_1.20260523-024147-123.log</output-file>
/// <stalled-for-ms>45000</stalled-for-ms>
/// <bytes-written>128</bytes-written>
/// <diagnosis>sudo (pid 4242) is waiting for input from a terminal: …</diagnosis>
/// <hint>The task is still running but has produced no output …</hint>
/// </task-stall>
/// ```
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{StallInfo, TaskId};
/// use zidane_wire::{parse, TaskStall, WireBlock};
///
/// let stall = TaskStall::from_stall(&StallInfo {
///     task_id: TaskId::from_number(1),
///     command: "npm init".into(),
///     output_path: "/tmp/tasks/bash_1.log".into(),
///     stalled_for: Duration::from_secs(45),
///     bytes_written: 128,
///     diagnosis: None,
///     takes_input: false,
///     terminal: false,
/// });
/// assert!(stall.render().contains("<stalled-for-ms>45000</stalled-for-ms>"));
/// assert_eq!(parse(&stall.render())?, vec![WireBlock::Stall(stall)]);
/// # Ok::<(), zidane_wire::WireError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStall {
    /// The task.
    pub task_id: TaskId,
    /// The command as given.
    pub command: String,
    /// The task's log file.
    pub output_file: String,
    /// How long the task has been quiet, in milliseconds.
    pub stalled_for_ms: u64,
    /// Bytes the task has written so far.
    pub bytes_written: u64,
    /// What the model should do about it: [`STALL_HINT`] unless a host chose otherwise.
    pub hint: String,
    /// What the task's processes are doing, when the context could tell (see
    /// `StallInfo::diagnosis`). Rendered as `<diagnosis>` after `<bytes-written>`; blocks
    /// written before that element existed parse as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<String>,
}

impl TaskStall {
    /// The stall block of a stall report, with [`STALL_HINT`] — or, for a task that
    /// takes input, [`STALL_INPUT_HINT`] ([`STALL_TERMINAL_HINT`] in a terminal), which
    /// name the tool that answers it.
    ///
    /// A log path that is not valid UTF-8 is rendered lossily (`U+FFFD` for bad bytes).
    pub fn from_stall(info: &StallInfo) -> Self {
        Self {
            task_id: info.task_id,
            command: info.command.clone(),
            output_file: info.output_path.to_string_lossy().into_owned(),
            stalled_for_ms: u64::try_from(info.stalled_for.as_millis()).unwrap_or(u64::MAX),
            bytes_written: info.bytes_written,
            hint: if info.terminal {
                STALL_TERMINAL_HINT
            } else if info.takes_input {
                STALL_INPUT_HINT
            } else {
                STALL_HINT
            }
            .to_owned(),
            diagnosis: info.diagnosis.clone(),
        }
    }

    /// The quiet window as a [`Duration`].
    pub fn stalled_for(&self) -> Duration {
        Duration::from_millis(self.stalled_for_ms)
    }

    /// The `<task-stall>` block, without a trailing line break.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(256 + self.hint.len() + self.command.len() * 2);
        out.push_str("<task-stall>\n");
        push_raw_element(&mut out, "task-id", &self.task_id.to_string());
        push_element(&mut out, "command", &self.command);
        push_element(&mut out, "output-file", &self.output_file);
        push_raw_element(&mut out, "stalled-for-ms", &self.stalled_for_ms.to_string());
        push_raw_element(&mut out, "bytes-written", &self.bytes_written.to_string());
        if let Some(diagnosis) = &self.diagnosis {
            push_element(&mut out, DIAGNOSIS_TAG, diagnosis);
        }
        push_element(&mut out, "hint", &self.hint);
        out.push_str("</task-stall>");
        out
    }

    /// Reads the elements between `<task-stall>\n` and the closing tag.
    pub(crate) fn parse_body(cursor: &mut Cursor<'_>) -> Result<Self, WireError> {
        Ok(Self {
            task_id: cursor.task_id()?,
            command: cursor.text("command")?,
            output_file: cursor.text("output-file")?,
            stalled_for_ms: cursor.number("stalled-for-ms")?,
            bytes_written: cursor.number("bytes-written")?,
            diagnosis: if cursor.at("<diagnosis>") {
                Some(cursor.text(DIAGNOSIS_TAG)?)
            } else {
                None
            },
            hint: cursor.text("hint")?,
        })
    }
}

impl From<&StallInfo> for TaskStall {
    fn from(info: &StallInfo) -> Self {
        Self::from_stall(info)
    }
}
