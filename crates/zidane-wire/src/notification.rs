//! `TaskNotification`: the `<task-notification>` block that wakes the model when a
//! background task ends.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use zidane_context::{KillReason, LogWriteFailure, Signal, TaskExitInfo, TaskId, TaskStatus};

use crate::cursor::Cursor;
use crate::error::WireError;
use crate::escape::{escape, push_element, push_raw_element};
use crate::summary::exit_summary;

/// The element name of a notification block.
pub(crate) const NOTIFICATION_TAG: &str = "task-notification";

/// The element that says the task was detached.
const DETACHED_TAG: &str = "detached";

/// The element that says why our kill ended the task.
const REASON_TAG: &str = "reason";

/// The element that reports output the log could not take.
const LOG_WRITE_FAILED_TAG: &str = "log-write-failed";

/// Between the byte count and the error in [`LOG_WRITE_FAILED_TAG`].
const LOG_WRITE_FAILED_SEPARATOR: &str = " bytes not written: ";

/// How a background task ended, as the model reads it in its next user turn.
///
/// [`render`](Self::render) writes exactly this (no trailing line break):
///
/// ```xml
/// <task-notification>
/// <task-id>bash_1</task-id>
/// <status>exited</status>
/// <exit-code>0</exit-code>
/// <command>npm run build</command>
/// <output-file>/home/u/.zidane/sessions/s1/tasks/bash_1.20260523-024147-123.log</output-file>
/// <duration-ms>4200</duration-ms>
/// <summary>npm run build (4.2s) — exited 0</summary>
/// </task-notification>
/// ```
///
/// with `<detached>true</detached>` right after `<status>` only for a detached task (one
/// that outlived the host that started it), `<signal>SIGTERM</signal>` right after
/// `<exit-code>` only when a signal ended the task, and
/// `<log-write-failed>7906957 bytes not written: No space left on device (os error 28)</log-write-failed>`
/// right after `<summary>` only when part of the output could not be written to the log
/// (blocks written before that element existed parse as before). Every string is escaped (see `docs/WIRE.md`), so [`parse`](crate::parse) gives
/// back exactly this value for any command.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{TaskExitInfo, TaskId, TaskStatus};
/// use zidane_wire::{parse, TaskNotification, WireBlock};
///
/// let exit = TaskExitInfo::new(
///     TaskId::from_number(1),
///     "echo '<done>' && true",
///     "/tmp/tasks/bash_1.log",
///     TaskStatus::Exited,
///     0,
///     Duration::from_millis(4200),
/// );
/// let notification = TaskNotification::from_exit(&exit);
/// let xml = notification.render();
/// assert!(xml.contains("<command>echo &apos;&lt;done&gt;&apos; &amp;&amp; true</command>"));
/// assert_eq!(parse(&xml)?, vec![WireBlock::Notification(notification)]);
/// # Ok::<(), zidane_wire::WireError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNotification {
    /// The task.
    pub task_id: TaskId,
    /// `exited` or `killed`.
    pub status: TaskStatus,
    /// Whether the task was detached: it outlived the host that started it. Rendered as
    /// `<detached>true</detached>` after `<status>`, and left out when `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detached: bool,
    /// The exit code; `128 + signo` when a signal ended the task.
    pub exit_code: i32,
    /// The signal that ended the task, if one did.
    pub signal: Option<Signal>,
    /// The command as given.
    pub command: String,
    /// The task's log file.
    pub output_file: String,
    /// From start to settle, in milliseconds.
    pub duration_ms: u64,
    /// One line for people and the model: see [`exit_summary`](crate::exit_summary).
    pub summary: String,
    /// Output the log could not take (a full disk), when some was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_write_failure: Option<LogWriteFailure>,
    /// Why our kill ended the task, when one did ([`kill_reason_text`]): a kill asked
    /// for, the end of the session, or a budget. Rendered as `<reason>` last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl TaskNotification {
    /// The notification of an exit, its summary from [`exit_summary`](crate::exit_summary).
    ///
    /// A log path that is not valid UTF-8 is rendered lossily (`U+FFFD` for bad bytes).
    pub fn from_exit(exit: &TaskExitInfo) -> Self {
        Self {
            task_id: exit.task_id,
            status: exit.status,
            detached: exit.detached,
            exit_code: exit.exit_code,
            signal: exit.signal,
            command: exit.command.clone(),
            output_file: exit.output_path.to_string_lossy().into_owned(),
            duration_ms: u64::try_from(exit.duration.as_millis()).unwrap_or(u64::MAX),
            summary: exit_summary(exit),
            log_write_failure: exit.log_write_failure.clone(),
            reason: exit.kill_reason.map(kill_reason_text),
        }
    }

    /// The duration as a [`Duration`].
    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.duration_ms)
    }

    /// The `<task-notification>` block, without a trailing line break.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(256 + self.command.len() * 2);
        out.push_str("<task-notification>\n");
        push_raw_element(&mut out, "task-id", &self.task_id.to_string());
        push_raw_element(&mut out, "status", self.status.as_str());
        if self.detached {
            push_raw_element(&mut out, DETACHED_TAG, "true");
        }
        push_raw_element(&mut out, "exit-code", &self.exit_code.to_string());
        if let Some(signal) = self.signal {
            push_raw_element(&mut out, "signal", &signal.name());
        }
        push_element(&mut out, "command", &self.command);
        push_element(&mut out, "output-file", &self.output_file);
        push_raw_element(&mut out, "duration-ms", &self.duration_ms.to_string());
        push_element(&mut out, "summary", &self.summary);
        if let Some(failure) = &self.log_write_failure {
            let value = format!(
                "{}{LOG_WRITE_FAILED_SEPARATOR}{}",
                failure.bytes_dropped,
                escape(&failure.error)
            );
            push_raw_element(&mut out, LOG_WRITE_FAILED_TAG, &value);
        }
        if let Some(reason) = &self.reason {
            push_element(&mut out, REASON_TAG, reason);
        }
        out.push_str("</task-notification>");
        out
    }

    /// Reads the elements between `<task-notification>\n` and the closing tag.
    pub(crate) fn parse_body(cursor: &mut Cursor<'_>) -> Result<Self, WireError> {
        let task_id = cursor.task_id()?;
        let status = cursor.status()?;
        // Only `true` is ever written: the element is left out otherwise.
        let detached = cursor.at("<detached>");
        if detached {
            cursor.expect("<detached>true</detached>\n")?;
        }
        let exit_code = cursor.number("exit-code")?;
        let signal = if cursor.at("<signal>") {
            Some(cursor.signal()?)
        } else {
            None
        };
        Ok(Self {
            task_id,
            status,
            detached,
            exit_code,
            signal,
            command: cursor.text("command")?,
            output_file: cursor.text("output-file")?,
            duration_ms: cursor.number("duration-ms")?,
            summary: cursor.text("summary")?,
            log_write_failure: if cursor.at("<log-write-failed>") {
                Some(cursor.log_write_failure(LOG_WRITE_FAILED_TAG, LOG_WRITE_FAILED_SEPARATOR)?)
            } else {
                None
            },
            reason: if cursor.at("<reason>") {
                Some(cursor.text(REASON_TAG)?)
            } else {
                None
            },
        })
    }
}

/// The words of `<reason>` for each way our kill ends a task.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::KillReason;
/// use zidane_wire::kill_reason_text;
/// assert_eq!(
///     kill_reason_text(KillReason::WallTime { budget: Duration::from_secs(600) }),
///     "wall-time budget of 10m 00s"
/// );
/// assert_eq!(kill_reason_text(KillReason::Requested), "killed on request (shell_kill or the host)");
/// ```
pub fn kill_reason_text(reason: KillReason) -> String {
    match reason {
        KillReason::Requested => "killed on request (shell_kill or the host)".to_owned(),
        KillReason::Destroyed => "its session ended (destroy)".to_owned(),
        KillReason::User => "killed by the user (zidane kill)".to_owned(),
        KillReason::WallTime { budget } => {
            format!("wall-time budget of {}", crate::format_duration(budget))
        }
        KillReason::CpuTime { budget } => {
            format!("CPU-time budget of {}", crate::format_duration(budget))
        }
        _ => "killed".to_owned(),
    }
}

impl From<&TaskExitInfo> for TaskNotification {
    fn from(exit: &TaskExitInfo) -> Self {
        Self::from_exit(exit)
    }
}
