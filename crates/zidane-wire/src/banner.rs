//! The one-line banner a host paints for a task notification.

use std::fmt;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::notification::TaskNotification;
use crate::summary::format_duration;

/// The glyph that marks background tasks in a transcript (and their rows in task pickers).
pub const TASK_GLYPH: &str = "⌁";
/// The glyph that marks an in-flight tool call's row in a task picker.
pub const TOOL_GLYPH: &str = "·";

/// How loudly a banner should be painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    /// A clean exit (code 0).
    Dim,
    /// A non-zero exit.
    Warn,
    /// Ended by a signal.
    Error,
}

impl Tone {
    /// The ANSI SGR sequence that starts this tone: dim, yellow or red.
    pub const fn sgr(self) -> &'static str {
        match self {
            Self::Dim => "\x1b[2m",
            Self::Warn => "\x1b[33m",
            Self::Error => "\x1b[31m",
        }
    }
}

/// The ANSI sequence that ends a tone.
pub(crate) const SGR_RESET: &str = "\x1b[0m";

/// One line for a host's transcript: `⌁ bash_1 exited (0) 4.2s PATH`, or
/// `⌁ bash_1 killed (SIGTERM) 1.2s PATH` when a signal ended the task, with
/// `log incomplete` before the path when part of the output could not be written to it.
///
/// [`text`](Self::text) is the plain line, ending with the path; [`ansi`](Self::ansi)
/// colours it by [`tone`](Self::tone) and makes the path an OSC 8 hyperlink that
/// terminals which support it open as a file.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{TaskExitInfo, TaskId, TaskStatus};
/// use zidane_wire::{Banner, TaskNotification, Tone};
///
/// let notification = TaskNotification::from_exit(&TaskExitInfo::new(
///     TaskId::from_number(1),
///     "npm run build",
///     "/tmp/tasks/bash_1.log",
///     TaskStatus::Exited,
///     0,
///     Duration::from_millis(4200),
/// ));
/// let banner = Banner::for_notification(&notification);
/// assert_eq!(banner.text, "⌁ bash_1 exited (0) 4.2s /tmp/tasks/bash_1.log");
/// assert_eq!(banner.tone, Tone::Dim);
/// assert!(banner.ansi().contains("\x1b]8;;file:///tmp/tasks/bash_1.log\x1b\\"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Banner {
    /// The plain line, path last. Control characters in the path show as `U+FFFD`, so
    /// printing it can never drive the terminal.
    pub text: String,
    /// How loudly to paint it.
    pub tone: Tone,
    /// The log path, as the notification gave it.
    pub path: String,
}

impl Banner {
    /// The banner of a notification. Tone: [`Tone::Error`] when a signal ended the
    /// task, else [`Tone::Warn`] for a non-zero exit code or an incomplete log, else
    /// [`Tone::Dim`].
    pub fn for_notification(notification: &TaskNotification) -> Self {
        let (outcome, mut tone) = match notification.signal {
            Some(signal) => (format!("killed ({signal})"), Tone::Error),
            None if notification.exit_code != 0 => {
                (format!("exited ({})", notification.exit_code), Tone::Warn)
            }
            None => ("exited (0)".to_owned(), Tone::Dim),
        };
        let incomplete = if notification.log_write_failure.is_some() {
            if tone == Tone::Dim {
                tone = Tone::Warn;
            }
            " log incomplete"
        } else {
            ""
        };
        let text = format!(
            "{TASK_GLYPH} {} {outcome} {}{incomplete} {}",
            notification.task_id,
            format_duration(notification.duration()),
            printable(&notification.output_file),
        );
        Self {
            text,
            tone,
            path: notification.output_file.clone(),
        }
    }

    /// The line for a terminal: coloured by tone, the path an OSC 8 `file://` link.
    ///
    /// A relative path is not linked (a `file://` URL must be absolute).
    pub fn ansi(&self) -> String {
        let shown_path = printable(&self.path);
        let mut out = String::from(self.tone.sgr());
        match self.text.strip_suffix(shown_path.as_str()) {
            Some(head) if self.path.starts_with('/') => {
                let _ = write!(
                    out,
                    "{head}\x1b]8;;{url}\x1b\\{shown_path}\x1b]8;;\x1b\\",
                    url = file_url(&self.path),
                );
            }
            _ => out.push_str(&printable(&self.text)),
        }
        out.push_str(SGR_RESET);
        out
    }
}

impl fmt::Display for Banner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `s` with every control character replaced by `U+FFFD`.
pub(crate) fn printable(s: &str) -> String {
    replace_controls(s, |_| false)
}

/// One line of text for a terminal: like [`printable`], but tabs stay.
pub(crate) fn printable_line(s: &str) -> String {
    replace_controls(s, |c| c == '\t')
}

fn replace_controls(s: &str, keep: impl Fn(char) -> bool) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && !keep(c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// A `file://` URL for an absolute path: every byte outside the URL-path-safe set
/// (`A–Z a–z 0–9 - . _ ~ /`) percent-encoded, UTF-8 first.
pub fn file_url(path: &str) -> String {
    let mut url = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            url.push(char::from(byte));
        } else {
            let _ = write!(url, "%{byte:02X}");
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_incomplete_log_is_said_and_warned() {
        let mut notification = TaskNotification {
            task_id: zidane_context::TaskId::from_number(4),
            status: zidane_context::TaskStatus::Exited,
            detached: false,
            exit_code: 0,
            signal: None,
            command: "yes".into(),
            output_file: "/t/bash_4.log".into(),
            duration_ms: 350,
            summary: String::new(),
            log_write_failure: Some(zidane_context::LogWriteFailure {
                bytes_dropped: 7,
                error: "No space left on device (os error 28)".into(),
            }),
            reason: None,
        };
        let banner = Banner::for_notification(&notification);
        assert_eq!(
            banner.text,
            "⌁ bash_4 exited (0) 350ms log incomplete /t/bash_4.log"
        );
        assert_eq!(banner.tone, Tone::Warn);
        assert!(banner.ansi().contains("\x1b]8;;file:///t/bash_4.log"));
        notification.signal = Some(zidane_context::Signal::TERM);
        assert_eq!(Banner::for_notification(&notification).tone, Tone::Error);
    }

    #[test]
    fn file_urls_percent_encode() {
        assert_eq!(file_url("/a b/é#?.log"), "file:///a%20b/%C3%A9%23%3F.log");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let banner = Banner::for_notification(&TaskNotification {
            task_id: zidane_context::TaskId::from_number(1),
            status: zidane_context::TaskStatus::Exited,
            detached: false,
            exit_code: 0,
            signal: None,
            command: "true".into(),
            output_file: "/t/\u{1b}]0;x\u{7}.log".into(),
            duration_ms: 1000,
            summary: "true (1.0s) — exited 0".into(),
            log_write_failure: None,
            reason: None,
        });
        assert_eq!(
            banner.text,
            "⌁ bash_1 exited (0) 1.0s /t/\u{FFFD}]0;x\u{FFFD}.log"
        );
        let ansi = banner.ansi();
        assert!(!ansi.contains('\u{7}'));
        assert!(ansi.contains("file:///t/%1B%5D0%3Bx%07.log"), "{ansi:?}");
        assert!(!ansi.contains("\u{1b}]0;"));
    }
}
