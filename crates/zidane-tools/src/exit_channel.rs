//! How a background task's end reaches the model, and what the tools say about it.
//!
//! The texts must be true where they are read: a model told "end your turn, you will be
//! woken" by a host that never wakes it waits forever.

use serde::{Deserialize, Serialize};

/// How a background task's end reaches the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExitChannel {
    /// The agent wakes the model: a `<task-notification>` opens its next turn (zidane's
    /// own run loop and terminal host).
    #[default]
    NextTurn,
    /// Nothing wakes the model: the `<task-notification>` opens the next result of any
    /// of these tools (an MCP host that does not take tasks).
    NextToolResult,
    /// The host wakes the model: the start was answered as a host task, whose result, the
    /// `<task-notification>`, the host delivers when the task ends.
    HostWakes,
}

impl ExitChannel {
    /// The `shell` description's paragraph on what to do after a background start.
    pub(crate) fn after_start(self) -> &'static str {
        match self {
            Self::NextTurn => {
                "After starting a background task, do not poll its log and do not sleep: end \
                 your turn, or carry on with other work. When the task ends, a \
                 `<task-notification>` with its exit code and log path arrives at the start of \
                 your next turn — the notification is the wake-up. Read the log with \
                 `read_file` when you want to check progress or see the result, not in a loop."
            }
            Self::NextToolResult => {
                "After starting a background task, do not poll its log and do not sleep: carry \
                 on with other work. Nothing interrupts you when the task ends: its \
                 `<task-notification>`, with its exit code and log path, comes at the start of \
                 the next result of any of these tools. Read the log with `read_file` when you \
                 want to check progress or see the result, not in a loop."
            }
            Self::HostWakes => {
                "After starting a background task, do not poll its log and do not sleep: end \
                 your turn or carry on with other work. When the task ends you are told: its \
                 `<task-notification>`, with its exit code and log path, is delivered as the \
                 result of the start. Read the log with `read_file` when you want to check \
                 progress or see the result, not in a loop."
            }
        }
    }

    /// What the model reads after a background start, below the `Started …` line.
    pub(crate) fn start_guidance(self) -> &'static str {
        match self {
            Self::NextTurn => {
                "The command is running in the background. Read its log with `read_file` to \
                 check progress. A <task-notification> arrives in your next turn when it ends, \
                 so end your turn (or carry on with other work) instead of polling the log or \
                 sleeping. Use `wait_task` only if your very next step needs the result."
            }
            Self::NextToolResult => {
                "The command is running in the background. Read its log with `read_file` to \
                 check progress. When it ends, a <task-notification> comes at the start of the \
                 next result of any of these tools; nothing arrives while no tool is called. \
                 Carry on with other work instead of polling the log or sleeping, and call \
                 `wait_task` when your next step needs the result."
            }
            Self::HostWakes => {
                "The command is running in the background. Read its log with `read_file` to \
                 check progress. You are told when it ends: its <task-notification> is \
                 delivered as this call's result. Carry on with other work or end your turn \
                 instead of polling the log or sleeping."
            }
        }
    }

    /// The `shell` description's paragraph on `notify_on`, where task logs can be
    /// followed.
    pub(crate) fn events_paragraph(self) -> &'static str {
        match self {
            Self::NextTurn => {
                "To hear about lines that matter while a background task runs — an error, a \
                 failing test, `listening on` — set `notify_on` to a regular expression (or a \
                 list of them). Every new matching line is pushed to you as a `<task-event>` \
                 block naming the line number, the line and the pattern, a few lines at a time \
                 with a count of the rest; if you ended your turn, it wakes you. You need not \
                 poll the log for them. Change or clear the patterns of a running task with \
                 `shell_notify`. The task's `<task-notification>` still tells its end, after \
                 its events."
            }
            Self::NextToolResult | Self::HostWakes => {
                "To hear about lines that matter while a background task runs — an error, a \
                 failing test, `listening on` — set `notify_on` to a regular expression (or a \
                 list of them). Every new matching line is pushed to you as a `<task-event>` \
                 block naming the line number, the line and the pattern, a few lines at a time \
                 with a count of the rest, at the start of the next result of any of these \
                 tools; nothing arrives while no tool is called. You need not read the log \
                 for them. Change or clear the patterns of a running task with \
                 `shell_notify`."
            }
        }
    }

    /// The `wait_task` description's clause on when not to wait.
    pub(crate) fn instead_of_waiting(self) -> &'static str {
        match self {
            Self::NextTurn => {
                "otherwise end your turn — a `<task-notification>` arrives when the task ends."
            }
            Self::NextToolResult => {
                "otherwise keep working — the task's `<task-notification>` comes at the start \
                 of the next result of any of these tools after it ends."
            }
            Self::HostWakes => {
                "otherwise keep working or end your turn — you are told when it ends."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ExitChannel; 3] = [
        ExitChannel::NextTurn,
        ExitChannel::NextToolResult,
        ExitChannel::HostWakes,
    ];

    /// Only where something wakes the model may a text tell it to end its turn.
    #[test]
    fn no_text_says_end_your_turn_where_nothing_wakes_the_model() {
        for channel in ALL {
            let texts = [
                channel.after_start(),
                channel.start_guidance(),
                channel.instead_of_waiting(),
                channel.events_paragraph(),
            ];
            let says_end = texts
                .iter()
                .any(|text| text.contains("end your turn") || text.contains("ended your turn"));
            assert_eq!(
                says_end,
                channel != ExitChannel::NextToolResult,
                "{channel:?}"
            );
        }
    }
}
