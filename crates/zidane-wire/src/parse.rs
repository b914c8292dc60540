//! Finding and reading the blocks in a text: the exact inverse of rendering.

use serde::{Deserialize, Serialize};
use zidane_context::TaskId;

use crate::cursor::Cursor;
use crate::error::WireError;
use crate::event::{EVENT_TAG, TaskEventBlock};
use crate::notification::NOTIFICATION_TAG;
use crate::notification::TaskNotification;
use crate::stall::STALL_TAG;
use crate::stall::TaskStall;

/// One block found in a text by [`parse`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireBlock {
    /// A `<task-notification>` block.
    Notification(TaskNotification),
    /// A `<task-stall>` block.
    Stall(TaskStall),
    /// A `<task-event>` block.
    Event(TaskEventBlock),
}

impl WireBlock {
    /// The block's text, as [`TaskNotification::render`] or [`TaskStall::render`] writes it.
    pub fn render(&self) -> String {
        match self {
            Self::Notification(notification) => notification.render(),
            Self::Stall(stall) => stall.render(),
            Self::Event(event) => event.render(),
        }
    }

    /// The task the block is about.
    pub fn task_id(&self) -> TaskId {
        match self {
            Self::Notification(notification) => notification.task_id,
            Self::Stall(stall) => stall.task_id,
            Self::Event(event) => event.task_id,
        }
    }
}

impl From<TaskNotification> for WireBlock {
    fn from(notification: TaskNotification) -> Self {
        Self::Notification(notification)
    }
}

impl From<TaskEventBlock> for WireBlock {
    fn from(event: TaskEventBlock) -> Self {
        Self::Event(event)
    }
}

impl From<TaskStall> for WireBlock {
    fn from(stall: TaskStall) -> Self {
        Self::Stall(stall)
    }
}

/// Every `<task-notification>`, `<task-stall>` and `<task-event>` block in `text`, in
/// order.
///
/// Text around and between blocks is ignored; a text without blocks gives an empty
/// list. A block is recognised by its opening tag anywhere in the text; if what follows
/// is not exactly what rendering writes, the whole parse fails with a [`WireError`]
/// (never a panic). To keep lookalikes as text instead, use
/// [`events_from_turn`](crate::events_from_turn).
///
/// ```
/// use zidane_wire::{parse, WireBlock};
/// let text = "Two tasks ended.\n<task-notification>\n<task-id>bash_2</task-id>\n\
///     <status>exited</status>\n<exit-code>1</exit-code>\n<command>make</command>\n\
///     <output-file>/t/bash_2.log</output-file>\n<duration-ms>850</duration-ms>\n\
///     <summary>make (850ms) — exited 1</summary>\n</task-notification>";
/// let blocks = parse(text)?;
/// assert_eq!(blocks.len(), 1);
/// assert_eq!(blocks[0].task_id().to_string(), "bash_2");
/// assert!(parse("<task-stall>\n<task-id>bash_1</task-id>").is_err());
/// # Ok::<(), zidane_wire::WireError>(())
/// ```
pub fn parse(text: &str) -> Result<Vec<WireBlock>, WireError> {
    let mut blocks = Vec::new();
    let mut search = 0;
    while let Some((at, kind)) = find_opening(text, search) {
        let (block, end) = block_at(text, at, kind)?;
        blocks.push(block);
        search = end;
    }
    Ok(blocks)
}

/// Whether a text block is a `<task-notification>` or `<task-stall>` block: it holds
/// at least one block and [`parse`]s cleanly.
///
/// ```
/// use zidane_wire::is_wire_block;
/// let block = "<task-notification>\n<task-id>bash_2</task-id>\n<status>exited</status>\n\
///     <exit-code>1</exit-code>\n<command>make</command>\n<output-file>/t/bash_2.log</output-file>\n\
///     <duration-ms>850</duration-ms>\n<summary>make (850ms) — exited 1</summary>\n\
///     </task-notification>";
/// assert!(is_wire_block(block));
/// assert!(!is_wire_block("What happened?"));
/// assert!(!is_wire_block("<task-stall>\n<task-id>bash_1</task-id>"));
/// ```
pub fn is_wire_block(text: &str) -> bool {
    parse(text).is_ok_and(|blocks| !blocks.is_empty())
}

/// A piece of a text split by [`segments`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment<'a> {
    /// Text between blocks (lookalikes that failed to parse included).
    Text(&'a str),
    /// A well-formed block.
    Block(WireBlock),
}

/// Splits `text` into text and well-formed blocks, in order. Never fails: an opening tag
/// whose block does not parse stays part of the surrounding text, and scanning resumes
/// right after that tag, so a valid block following a lookalike is still found.
pub(crate) fn segments(text: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut text_start = 0;
    let mut search = 0;
    while let Some((at, kind)) = find_opening(text, search) {
        match block_at(text, at, kind) {
            Ok((block, end)) => {
                if at > text_start {
                    out.push(Segment::Text(&text[text_start..at]));
                }
                out.push(Segment::Block(block));
                text_start = end;
                search = end;
            }
            Err(_) => search = at + kind.opening().len(),
        }
    }
    if text_start < text.len() {
        out.push(Segment::Text(&text[text_start..]));
    }
    out
}

/// Which block an opening tag starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Notification,
    Stall,
    Event,
}

impl Kind {
    const fn tag(self) -> &'static str {
        match self {
            Self::Notification => NOTIFICATION_TAG,
            Self::Stall => STALL_TAG,
            Self::Event => EVENT_TAG,
        }
    }

    const fn opening(self) -> &'static str {
        match self {
            Self::Notification => "<task-notification>",
            Self::Stall => "<task-stall>",
            Self::Event => "<task-event>",
        }
    }

    const fn closing(self) -> &'static str {
        match self {
            Self::Notification => "</task-notification>",
            Self::Stall => "</task-stall>",
            Self::Event => "</task-event>",
        }
    }
}

/// The next opening tag at or after byte `from`.
fn find_opening(text: &str, from: usize) -> Option<(usize, Kind)> {
    let mut search = from;
    while let Some(i) = text.get(search..)?.find("<task-") {
        let at = search + i;
        let rest = &text[at..];
        for kind in [Kind::Notification, Kind::Stall, Kind::Event] {
            if rest.starts_with(kind.opening()) {
                return Some((at, kind));
            }
        }
        // `<` is one byte, so this stays on a character boundary.
        search = at + 1;
    }
    None
}

/// Reads the block whose opening tag starts at byte `at`; returns it and its end.
fn block_at(text: &str, at: usize, kind: Kind) -> Result<(WireBlock, usize), WireError> {
    let mut cursor = Cursor::new(text, at);
    read_block(&mut cursor, kind).map_err(|err| {
        if text[at..].contains(kind.closing()) {
            err
        } else {
            WireError::Unclosed {
                block: kind.tag(),
                offset: at,
            }
        }
    })
}

fn read_block(cursor: &mut Cursor<'_>, kind: Kind) -> Result<(WireBlock, usize), WireError> {
    cursor.expect(kind.opening())?;
    cursor.expect("\n")?;
    let block = match kind {
        Kind::Notification => WireBlock::Notification(TaskNotification::parse_body(cursor)?),
        Kind::Stall => WireBlock::Stall(TaskStall::parse_body(cursor)?),
        Kind::Event => WireBlock::Event(TaskEventBlock::parse_body(cursor)?),
    };
    cursor.expect(kind.closing())?;
    Ok((block, cursor.pos()))
}
