//! Builders shared by the tests.

use std::time::Duration;

use zidane_context::{Signal, StallInfo, TaskExitInfo, TaskId, TaskStatus};
use zidane_wire::{TaskNotification, TaskStall};

/// The log path of task `n` in a typical session.
pub fn log_path(n: u64) -> String {
    format!("/home/u/.zidane/sessions/s1/tasks/bash_{n}.20260523-024147-123.log")
}

/// An exit of task `n`; `signal` set means a signal ended it (exit code `128 + signo`).
pub fn exit(n: u64, command: &str, ms: u64, code: i32, signal: Option<Signal>) -> TaskExitInfo {
    TaskExitInfo::new(
        TaskId::from_number(n),
        command.to_owned(),
        log_path(n),
        if signal.is_some() {
            TaskStatus::Killed
        } else {
            TaskStatus::Exited
        },
        signal.map_or(code, Signal::exit_code),
        Duration::from_millis(ms),
    )
    .signal(signal)
}

/// The notification of [`exit`].
pub fn notification(
    n: u64,
    command: &str,
    ms: u64,
    code: i32,
    signal: Option<Signal>,
) -> TaskNotification {
    TaskNotification::from_exit(&exit(n, command, ms, code, signal))
}

/// A stall of task `n`.
pub fn stall(n: u64, command: &str, quiet_ms: u64, bytes: u64) -> TaskStall {
    TaskStall::from_stall(&StallInfo {
        task_id: TaskId::from_number(n),
        command: command.to_owned(),
        output_path: log_path(n).into(),
        stalled_for: Duration::from_millis(quiet_ms),
        bytes_written: bytes,
        diagnosis: None,
        takes_input: false,
        terminal: false,
    })
}
