//! The structured data of each tool's result ([`ToolOutput::data`](crate::ToolOutput)):
//! one type per tool, which the tool fills and serialises, so a host's output schema is
//! derived from what the tool really writes (`schemars::schema_for!(WaitTaskData)`).
//!
//! Each type is one object whose fields are present or not by case: a host's output
//! schema must be an object, not a choice of objects.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use zidane_context::TaskExitInfo;

/// What `shell` answers besides its text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ShellData {
    /// Foreground: what the command printed, as the text gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Foreground: the command's exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Background: the task's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Background: the pid of the task's shell (the leader of its process group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Background: the task's log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
    /// Background, where the result waits for the task to end (an MCP task): its exit.
    /// Foreground, when the command ran as a task that could move to the background and
    /// ended in time: that task's exit, which the call has told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<TaskExitInfo>,
    /// A foreground command that ran past its budget (or was moved by the user) and now
    /// runs as the background task `task_id`: `true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to_background: Option<bool>,
}

/// What `shell_kill` answers besides its text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ShellKillData {
    /// The killed task's exit.
    pub exit: TaskExitInfo,
}

/// What `shell_notify` answers besides its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ShellNotifyData {
    /// The task.
    pub task_id: String,
    /// Its patterns now (empty: cleared).
    pub notify_on: Vec<String>,
}

/// What `wait_task` answers besides its text: the exit, a readiness condition that
/// held, or a wait that ended (timed out or cancelled) with the task still running.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct WaitTaskData {
    /// The task ended: its exit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<TaskExitInfo>,
    /// With `until`: whether the condition held (`false` when the task ended first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    /// The wait's timeout passed with the task still running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// The wait was cancelled; the task still runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<bool>,
    /// The task waited on, when it still runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The task's log, when it still runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
    /// A plain wait that timed out: how long the task has run, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_ms: Option<u64>,
    /// The last lines of the task's log, for a plain wait that timed out or a task that
    /// ended before it was ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_lines: Option<Vec<String>>,
    /// A wait with `until` that timed out: the last line it read (`line` condition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_line: Option<String>,
    /// A wait with `until` that timed out: its last probe's failure (`port` or `url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// What made the task ready.
    #[serde(flatten)]
    pub matched: ReadyMatch,
}

/// What made a task ready: the line that matched, or the probe that succeeded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ReadyMatch {
    /// `line`: the log line that matched (escape sequences removed where that matched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// `line`: its number in the log, counted from 1, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_number: Option<u64>,
    /// `line`: the regex's capture groups, in order (`null` for one that took no part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<Option<String>>>,
    /// `port`: the loopback port that accepted a connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// `url`: the URL that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `url`: the HTTP status it answered with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `port` or `url`: milliseconds from the wait's start to the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_ms: Option<u64>,
}

/// What `read_file` answers besides the lines themselves (which are in its text).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReadFileData {
    /// The file read.
    pub path: String,
    /// The 0-based index of the window's first line (counted from `bytes_before` when
    /// that is set).
    pub offset: usize,
    /// How many lines the window holds.
    pub lines: usize,
    /// Lines in the file (only those seen, when `stopped_after_bytes` or `bytes_before`
    /// is set).
    pub total_lines: usize,
    /// Lines after the window, not shown.
    pub remaining: usize,
    /// The read stopped after this many bytes, before the window was complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_after_bytes: Option<u64>,
    /// A read from the end: the bytes before the window, not counted in lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_before: Option<u64>,
}

/// What `shell_input` answers besides its text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ShellInputData {
    /// The task written to.
    pub task_id: String,
    /// Bytes written to its stdin or terminal.
    pub bytes_written: usize,
    /// Whether the input was closed after writing.
    pub eof: bool,
    /// What the task printed in answer, bounded (a terminal's escape sequences removed).
    pub output: String,
    /// Whether the task ended while it was answering.
    pub ended: bool,
}

/// `data` as the JSON value a [`ToolOutput`](crate::ToolOutput) carries.
pub(crate) fn to_value(data: &impl Serialize) -> Value {
    serde_json::to_value(data).unwrap_or(Value::Null)
}
