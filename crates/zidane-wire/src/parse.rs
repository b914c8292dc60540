//! Finding and reading the blocks in a text: the exact inverse of rendering.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use zidane_context::{LogWriteFailure, Signal, TaskId, TaskStatus};

use crate::escape::unescape;
use crate::notification::NOTIFICATION_TAG;
use crate::stall::STALL_TAG;
use crate::{TaskNotification, TaskStall, WireError};

/// One block found in a text by [`parse`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireBlock {
    /// A `<task-notification>` block.
    Notification(TaskNotification),
    /// A `<task-stall>` block.
    Stall(TaskStall),
}

impl WireBlock {
    /// The block's text, as [`TaskNotification::render`] or [`TaskStall::render`] writes it.
    pub fn render(&self) -> String {
        match self {
            Self::Notification(notification) => notification.render(),
            Self::Stall(stall) => stall.render(),
        }
    }

    /// The task the block is about.
    pub fn task_id(&self) -> TaskId {
        match self {
            Self::Notification(notification) => notification.task_id,
            Self::Stall(stall) => stall.task_id,
        }
    }
}

impl From<TaskNotification> for WireBlock {
    fn from(notification: TaskNotification) -> Self {
        Self::Notification(notification)
    }
}

impl From<TaskStall> for WireBlock {
    fn from(stall: TaskStall) -> Self {
        Self::Stall(stall)
    }
}

/// Every `<task-notification>` and `<task-stall>` block in `text`, in order.
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
}

impl Kind {
    const fn tag(self) -> &'static str {
        match self {
            Self::Notification => NOTIFICATION_TAG,
            Self::Stall => STALL_TAG,
        }
    }

    const fn opening(self) -> &'static str {
        match self {
            Self::Notification => "<task-notification>",
            Self::Stall => "<task-stall>",
        }
    }

    const fn closing(self) -> &'static str {
        match self {
            Self::Notification => "</task-notification>",
            Self::Stall => "</task-stall>",
        }
    }
}

/// The next opening tag at or after byte `from`.
fn find_opening(text: &str, from: usize) -> Option<(usize, Kind)> {
    let mut search = from;
    while let Some(i) = text.get(search..)?.find("<task-") {
        let at = search + i;
        let rest = &text[at..];
        for kind in [Kind::Notification, Kind::Stall] {
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
    let mut cursor = Cursor { text, pos: at };
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
    };
    cursor.expect(kind.closing())?;
    Ok((block, cursor.pos))
}

/// Reads a block's elements, one per line, in rendering order.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Whether the text continues with `literal`.
    pub(crate) fn at(&self, literal: &str) -> bool {
        self.text
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(literal))
    }

    /// Consumes `literal`, or fails saying it was expected.
    fn expect(&mut self, literal: &str) -> Result<(), WireError> {
        if self.at(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(WireError::Expected {
                expected: format!("`{}`", literal.escape_debug()),
                offset: self.pos,
            })
        }
    }

    /// Consumes `<name>VALUE</name>\n`; returns the raw value and where it starts.
    fn raw(&mut self, name: &'static str) -> Result<(&'a str, usize), WireError> {
        self.expect(&format!("<{name}>"))?;
        let start = self.pos;
        let text = self.text;
        let closing = format!("</{name}>");
        let end = text
            .get(start..)
            .and_then(|rest| rest.find('<'))
            .map(|i| start + i)
            .ok_or_else(|| WireError::Expected {
                expected: format!("`{closing}`"),
                offset: text.len(),
            })?;
        self.pos = end;
        self.expect(&closing)?;
        self.expect("\n")?;
        Ok((&text[start..end], start))
    }

    /// An escaped string element.
    pub(crate) fn text(&mut self, name: &'static str) -> Result<String, WireError> {
        let (value, start) = self.raw(name)?;
        unescape(value, name, start)
    }

    /// A decimal integer element, in the one spelling rendering writes (no sign on
    /// positives, no leading zeros).
    pub(crate) fn number<T: FromStr + ToString>(
        &mut self,
        name: &'static str,
    ) -> Result<T, WireError> {
        let (value, start) = self.raw(name)?;
        value
            .parse::<T>()
            .ok()
            .filter(|n| n.to_string() == value)
            .ok_or_else(|| invalid(name, value, start, "not a canonical decimal integer"))
    }

    /// The `<task-id>` element.
    pub(crate) fn task_id(&mut self) -> Result<TaskId, WireError> {
        let (value, start) = self.raw("task-id")?;
        TaskId::parse(value).map_err(|err| invalid("task-id", value, start, &err.to_string()))
    }

    /// The `<status>` element.
    pub(crate) fn status(&mut self) -> Result<TaskStatus, WireError> {
        let (value, start) = self.raw("status")?;
        [
            TaskStatus::Exited,
            TaskStatus::Killed,
            TaskStatus::Lost,
            TaskStatus::Running,
        ]
        .into_iter()
        .find(|status| status.as_str() == value)
        .ok_or_else(|| {
            invalid(
                "status",
                value,
                start,
                "not exited, killed, lost or running",
            )
        })
    }

    /// `<name>N{separator}ESCAPED-ERROR</name>`: output a log could not take.
    pub(crate) fn log_write_failure(
        &mut self,
        name: &'static str,
        separator: &str,
    ) -> Result<LogWriteFailure, WireError> {
        let (value, start) = self.raw(name)?;
        let (bytes, error) = value
            .split_once(separator)
            .ok_or_else(|| invalid(name, value, start, "no byte count"))?;
        let bytes_dropped = bytes
            .parse::<u64>()
            .ok()
            .filter(|n| n.to_string() == bytes)
            .ok_or_else(|| invalid(name, value, start, "not a canonical byte count"))?;
        let error = unescape(error, name, start + bytes.len() + separator.len())?;
        Ok(LogWriteFailure {
            bytes_dropped,
            error,
        })
    }

    /// The `<signal>` element.
    pub(crate) fn signal(&mut self) -> Result<Signal, WireError> {
        let (value, start) = self.raw("signal")?;
        value
            .parse::<Signal>()
            .ok()
            // `SIG40` and friends must read back the way they render.
            .filter(|signal| signal.name() == value)
            .ok_or_else(|| invalid("signal", value, start, "not a signal name"))
    }
}

fn invalid(element: &'static str, value: &str, offset: usize, reason: &str) -> WireError {
    WireError::InvalidValue {
        element,
        value: value.to_owned(),
        reason: reason.to_owned(),
        offset,
    }
}
