//! Replay: the host-facing events of a transcript, the same live and from disk.

use serde::{Deserialize, Serialize};

use crate::event::TaskEventBlock;
use crate::notification::TaskNotification;
use crate::parse::WireBlock;
use crate::parse::{Segment, segments};
use crate::stall::TaskStall;
use crate::turn::{ContentBlock, Role, Turn};

/// What a host paints: one event of a transcript.
///
/// Serialises with a `type` tag (`user_text`, `assistant_text`, `tool_call`,
/// `tool_result`, `task_notification`, `task_stall`, `task_event`); the last three carry the block's
/// fields alongside the tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Text on the user's side (never a notification or stall block).
    UserText {
        /// The text.
        text: String,
    },
    /// Text from the model.
    AssistantText {
        /// The text.
        text: String,
    },
    /// The model calls a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments.
        input: serde_json::Value,
    },
    /// A tool's answer.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: String,
        /// The text the model read.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// A background task ended (paint a [`Banner`](crate::Banner)).
    TaskNotification(TaskNotification),
    /// A background task went quiet.
    TaskStall(TaskStall),
    /// New lines of a running task's log matched its patterns.
    TaskEvent(TaskEventBlock),
}

impl From<WireBlock> for StreamEvent {
    fn from(block: WireBlock) -> Self {
        match block {
            WireBlock::Notification(notification) => Self::TaskNotification(notification),
            WireBlock::Stall(stall) => Self::TaskStall(stall),
            WireBlock::Event(event) => Self::TaskEvent(event),
        }
    }
}

/// The events of one turn, in order.
///
/// - A user text block yields a structured [`TaskNotification`](StreamEvent::TaskNotification)
///   or [`TaskStall`](StreamEvent::TaskStall) event for each well-formed block in it, and
///   the text around the blocks as [`UserText`](StreamEvent::UserText) — trimmed, and
///   left out when only whitespace remains. The raw block text is never emitted, so a
///   host does not paint a notification twice. A user text block without blocks is
///   emitted unchanged. Text that merely looks like a block but does not parse stays
///   text: nothing is lost.
/// - Assistant text is [`AssistantText`](StreamEvent::AssistantText), as is: the model
///   cannot forge a notification.
/// - Tool calls and results map one to one, whichever the role.
///
/// Use this for live events too, so a live run and a replay paint the same thing.
///
/// ```
/// use std::time::Duration;
/// use zidane_context::{TaskExitInfo, TaskId, TaskStatus};
/// use zidane_wire::{events_from_turn, ContentBlock, StreamEvent, TaskNotification, Turn};
///
/// let notification = TaskNotification::from_exit(&TaskExitInfo::new(
///     TaskId::from_number(1),
///     "npm run build",
///     "/tmp/tasks/bash_1.log",
///     TaskStatus::Exited,
///     0,
///     Duration::from_millis(4200),
/// ));
/// let turn = Turn::user(vec![
///     ContentBlock::text(notification.render()),
///     ContentBlock::text("Build done? Deploy it."),
/// ]);
/// assert_eq!(
///     events_from_turn(&turn),
///     vec![
///         StreamEvent::TaskNotification(notification),
///         StreamEvent::UserText { text: "Build done? Deploy it.".into() },
///     ]
/// );
/// ```
pub fn events_from_turn(turn: &Turn) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    for block in &turn.content {
        match block {
            ContentBlock::Text { text } => match turn.role {
                Role::User => push_user_text(&mut events, text),
                Role::Assistant => events.push(StreamEvent::AssistantText { text: text.clone() }),
            },
            ContentBlock::ToolUse { id, name, input } => events.push(StreamEvent::ToolCall {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            }),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => events.push(StreamEvent::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: content.clone(),
                is_error: *is_error,
            }),
        }
    }
    events
}

/// The events of a whole transcript: [`events_from_turn`] of each turn, in order.
pub fn events_from_turns(turns: &[Turn]) -> Vec<StreamEvent> {
    turns.iter().flat_map(events_from_turn).collect()
}

fn push_user_text(events: &mut Vec<StreamEvent>, text: &str) {
    let pieces = segments(text);
    if !pieces
        .iter()
        .any(|piece| matches!(piece, Segment::Block(_)))
    {
        events.push(StreamEvent::UserText {
            text: text.to_owned(),
        });
        return;
    }
    for piece in pieces {
        match piece {
            Segment::Block(block) => events.push(block.into()),
            Segment::Text(text) => {
                let text = text.trim();
                if !text.is_empty() {
                    events.push(StreamEvent::UserText {
                        text: text.to_owned(),
                    });
                }
            }
        }
    }
}
