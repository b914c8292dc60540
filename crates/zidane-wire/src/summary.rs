//! The one-line summary of an exit, and the duration format it (and banners) use.

use std::time::Duration;

use zidane_context::{Signal, TaskExitInfo, TaskStatus};

/// The most characters of the command a summary shows, the `…` included.
pub(crate) const SUMMARY_COMMAND_CHARS: usize = 80;

/// A task's command as a one-line preview: its first non-blank line, trimmed, cut to
/// 80 characters (not bytes), ending in `…` when anything was
/// left out — the rest of a long line, or further lines.
///
/// ```
/// use zidane_wire::command_preview;
/// assert_eq!(command_preview("npm run build"), "npm run build");
/// assert_eq!(command_preview("cd web\nnpm test"), "cd web…");
/// assert_eq!(command_preview(&"x".repeat(100)).chars().count(), 80);
/// ```
pub fn command_preview(command: &str) -> String {
    let mut lines = command
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let more_lines = lines.next().is_some();
    if !more_lines && first.chars().nth(SUMMARY_COMMAND_CHARS).is_none() {
        return first.to_owned();
    }
    // Something is left out: cut so the ellipsis fits inside the limit.
    let mut cut: String = first.chars().take(SUMMARY_COMMAND_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// A duration for people: under 1 s `850ms`; under 60 s one decimal `4.2s`; under 1 h
/// `2m 03s`; else `1h 02m`. Each unit is truncated, never rounded up, so a value never
/// reads as the next unit (59 999 ms is `59.9s`).
///
/// ```
/// use std::time::Duration;
/// use zidane_wire::format_duration;
/// assert_eq!(format_duration(Duration::from_millis(850)), "850ms");
/// assert_eq!(format_duration(Duration::from_millis(4200)), "4.2s");
/// assert_eq!(format_duration(Duration::from_secs(123)), "2m 03s");
/// assert_eq!(format_duration(Duration::from_secs(3720)), "1h 02m");
/// ```
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{}.{}s", ms / 1_000, ms % 1_000 / 100)
    } else if ms < 3_600_000 {
        format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1_000)
    } else {
        format!("{}h {:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000)
    }
}

/// The summary line of an exit: `npm run build (4.2s) — exited 0`,
/// `npm run dev (1.2s) — killed (SIGTERM)` when a signal ended the task, or
/// `npm test (3m 10s) — worker lost` when the worker that ran it died. When part of
/// the output could not be written to the log, it says so:
/// `… — exited 0 — log incomplete: 7906957 bytes not written (No space left on device (os error 28))`.
///
/// The command part is [`command_preview`]. This is the `<summary>` of a
/// [`TaskNotification`](crate::TaskNotification), and the text the tools use when a
/// kill or a wait returns an exit.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{Signal, TaskExitInfo, TaskId, TaskStatus};
/// use zidane_wire::exit_summary;
///
/// let exit = TaskExitInfo::new(
///     TaskId::from_number(1),
///     "npm run dev",
///     "/tmp/bash_1.log",
///     TaskStatus::Killed,
///     143,
///     Duration::from_millis(1200),
/// )
/// .signal(Signal::TERM);
/// assert_eq!(exit_summary(&exit), "npm run dev (1.2s) — killed (SIGTERM)");
/// ```
pub fn exit_summary(exit: &TaskExitInfo) -> String {
    let line = summary(
        &exit.command,
        exit.duration,
        exit.status,
        exit.exit_code,
        exit.signal,
    );
    // A detached task outlived the host that started it: say whose it was.
    let line = if exit.detached {
        format!("{line} (detached)")
    } else {
        line
    };
    // A budget is news the status alone does not tell; a kill asked for or a destroy
    // is what "killed" already says.
    let line = match exit.kill_reason {
        Some(reason) if reason.is_budget() => {
            format!("{line}: {}", crate::kill_reason_text(reason))
        }
        _ => line,
    };
    // The sandbox rule a failed command met, as its foreground answer tells it.
    let line = match &exit.sandbox_denial {
        Some(rule) => format!("{line} — {rule}"),
        None => line,
    };
    match &exit.log_write_failure {
        Some(failure) => format!(
            "{line} — log incomplete: {} bytes not written ({})",
            failure.bytes_dropped, failure.error
        ),
        None => line,
    }
}

/// [`exit_summary`] from its parts.
pub(crate) fn summary(
    command: &str,
    duration: Duration,
    status: TaskStatus,
    exit_code: i32,
    signal: Option<Signal>,
) -> String {
    let preview = command_preview(command);
    let duration = format_duration(duration);
    match (status, signal) {
        // Nobody saw how it ended: say so rather than invent a code.
        (TaskStatus::Lost, _) => format!("{preview} ({duration}) — worker lost"),
        (_, Some(signal)) => format!("{preview} ({duration}) — killed ({signal})"),
        (_, None) => format!("{preview} ({duration}) — exited {exit_code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_sandbox_denial_is_told_in_the_summary() {
        let exit = TaskExitInfo::new(
            zidane_context::TaskId::parse("bash_2").unwrap(),
            "echo evil >> ~/.bashrc",
            "/tmp/t/bash_2.log",
            zidane_context::TaskStatus::Exited,
            1,
            Duration::from_millis(20),
        )
        .sandbox_denial(
            "sandbox: /home/ada/.bashrc is outside the writable roots (workspace-write)".to_owned(),
        );
        assert_eq!(
            exit_summary(&exit),
            "echo evil >> ~/.bashrc (20ms) — exited 1 — sandbox: /home/ada/.bashrc is outside \
             the writable roots (workspace-write)"
        );
    }

    #[test]
    fn a_detached_task_is_said_in_the_summary() {
        let exit = TaskExitInfo::new(
            zidane_context::TaskId::detached(3).unwrap(),
            "npm run dev",
            "/tmp/t/bash_d3.log",
            zidane_context::TaskStatus::Killed,
            143,
            Duration::from_millis(1200),
        )
        .signal(Signal::TERM)
        .detached(true);
        assert_eq!(
            exit_summary(&exit),
            "npm run dev (1.2s) — killed (SIGTERM) (detached)"
        );
        assert_eq!(
            exit_summary(&exit.detached(false)),
            "npm run dev (1.2s) — killed (SIGTERM)"
        );
    }

    #[test]
    fn duration_boundaries() {
        let cases = [
            (0, "0ms"),
            (999, "999ms"),
            (1_000, "1.0s"),
            (4_250, "4.2s"),
            (59_999, "59.9s"),
            (60_000, "1m 00s"),
            (123_456, "2m 03s"),
            (3_599_999, "59m 59s"),
            (3_600_000, "1h 00m"),
            (3_720_000, "1h 02m"),
            (90_000_000, "25h 00m"),
        ];
        for (ms, text) in cases {
            assert_eq!(format_duration(Duration::from_millis(ms)), text, "{ms} ms");
        }
        assert_eq!(format_duration(Duration::from_micros(1_500)), "1ms");
        assert_eq!(format_duration(Duration::MAX).chars().last(), Some('m'));
    }

    #[test]
    fn preview_cuts_by_chars_and_marks_dropped_lines() {
        assert_eq!(command_preview(""), "");
        assert_eq!(command_preview("\n  \n  ls -la  \n"), "ls -la");
        assert_eq!(command_preview("a\r\nb"), "a…");
        let long = "é".repeat(80);
        assert_eq!(
            command_preview(&long),
            long,
            "exactly 80 chars is kept whole"
        );
        let longer = "é".repeat(81);
        let preview = command_preview(&longer);
        assert_eq!(preview.chars().count(), 80);
        assert!(preview.ends_with("é…"));
    }

    #[test]
    fn summaries() {
        let exited = TaskStatus::Exited;
        let s = summary(
            "npm run build",
            Duration::from_millis(4200),
            exited,
            0,
            None,
        );
        assert_eq!(s, "npm run build (4.2s) — exited 0");
        let s = summary("make", Duration::from_millis(850), exited, 2, None);
        assert_eq!(s, "make (850ms) — exited 2");
        let s = summary(
            "npm run dev",
            Duration::from_millis(1200),
            TaskStatus::Killed,
            143,
            Some(Signal::TERM),
        );
        assert_eq!(s, "npm run dev (1.2s) — killed (SIGTERM)");
        let s = summary(
            "npm test",
            Duration::from_secs(190),
            TaskStatus::Lost,
            zidane_context::LOST_EXIT_CODE,
            None,
        );
        assert_eq!(s, "npm test (3m 10s) — worker lost");
    }

    proptest! {
        #[test]
        fn preview_is_one_line_of_at_most_80_chars(command in any::<String>()) {
            let preview = command_preview(&command);
            prop_assert!(preview.chars().count() <= SUMMARY_COMMAND_CHARS);
            prop_assert!(!preview.contains(['\n', '\r']));
        }
    }
}
