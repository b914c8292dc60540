//! `TaskEventBlock`: the `<task-event>` block that tells the model of new lines of a
//! running task's log that matched its `notify_on` patterns.

use serde::{Deserialize, Serialize};
use zidane_context::TaskId;

use crate::cursor::Cursor;
use crate::error::WireError;
use crate::escape::{push_element, push_raw_element};

/// The element name of an event block.
pub(crate) const EVENT_TAG: &str = "task-event";

/// One matching line shown in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLine {
    /// The line's number in the task's log, from 1.
    pub line_number: u64,
    /// The pattern that matched it.
    pub pattern: String,
    /// The line.
    pub line: String,
}

/// Matching lines counted, not shown: "and 9997 more matching lines (lines 4–10000)".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoreLines {
    /// How many.
    pub count: u64,
    /// The first one's line number.
    pub first_line: u64,
    /// The last one's line number.
    pub last_line: u64,
}

impl MoreLines {
    /// `and 9997 more matching lines (lines 4–10000)`; `and 1 more matching line (line 4)`.
    pub fn text(&self) -> String {
        if self.count == 1 {
            format!("and 1 more matching line (line {})", self.first_line)
        } else {
            format!(
                "and {} more matching lines (lines {}–{})",
                self.count, self.first_line, self.last_line
            )
        }
    }

    fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix("and ")?;
        let (count, rest) = rest.split_once(' ')?;
        let count: u64 = count.parse().ok()?;
        let more = if count == 1 {
            let line = rest
                .strip_prefix("more matching line (line ")?
                .strip_suffix(')')?
                .parse()
                .ok()?;
            Self {
                count,
                first_line: line,
                last_line: line,
            }
        } else {
            let (first, last) = rest
                .strip_prefix("more matching lines (lines ")?
                .strip_suffix(')')?
                .split_once('–')?;
            Self {
                count,
                first_line: first.parse().ok()?,
                last_line: last.parse().ok()?,
            }
        };
        (more.text() == text).then_some(more)
    }
}

/// New lines of a running task's log that matched its patterns, coalesced: the first few
/// in full, the rest counted.
///
/// [`render`](Self::render) writes (no trailing line break):
///
/// ```xml
/// <task-event>
/// <task-id>bash_1</task-id>
/// <match>
/// <line-number>12</line-number>
/// <pattern>error</pattern>
/// <line>error[E0308]: mismatched types</line>
/// </match>
/// <more>and 4 more matching lines (lines 30–71)</more>
/// </task-event>
/// ```
///
/// ```
/// use zidane_context::TaskId;
/// use zidane_wire::{EventLine, MoreLines, TaskEventBlock, WireBlock, parse};
///
/// let block = TaskEventBlock {
///     task_id: TaskId::from_number(1),
///     lines: vec![EventLine { line_number: 12, pattern: "error".into(), line: "error: boom".into() }],
///     more: Some(MoreLines { count: 4, first_line: 30, last_line: 71 }),
/// };
/// assert!(block.render().contains("<more>and 4 more matching lines (lines 30–71)</more>"));
/// assert_eq!(parse(&block.render())?, vec![WireBlock::Event(block)]);
/// # Ok::<(), zidane_wire::WireError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskEventBlock {
    /// The task.
    pub task_id: TaskId,
    /// The lines shown in full, in log order (at least one).
    pub lines: Vec<EventLine>,
    /// The matching lines after them, counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more: Option<MoreLines>,
}

impl TaskEventBlock {
    /// How many matching lines the block tells of, shown or counted.
    pub fn line_count(&self) -> u64 {
        self.lines.len() as u64 + self.more.map_or(0, |more| more.count)
    }

    /// The last line number the block tells of.
    pub fn last_line(&self) -> Option<u64> {
        self.more
            .map(|more| more.last_line)
            .or_else(|| self.lines.last().map(|line| line.line_number))
    }

    /// The one line a host's banner shows: `⌁ bash_1 line 12: error: boom (+4 more,
    /// lines 30–71)`, the first line shown and a count of the rest. Control characters
    /// of the line are not filtered here: a painter does that.
    pub fn banner_text(&self) -> String {
        let mut text = format!("{} {}", crate::TASK_GLYPH, self.task_id);
        match self.lines.first() {
            Some(first) => text.push_str(&format!(" line {}: {}", first.line_number, first.line)),
            None => text.push_str(" matched"),
        }
        let rest = self.line_count().saturating_sub(1);
        if rest > 0 {
            let last = self.last_line().unwrap_or_default();
            text.push_str(&format!(" (+{rest} more, up to line {last})"));
        }
        text
    }

    /// The `<task-event>` block, without a trailing line break.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(128 + self.lines.len() * 160);
        out.push_str("<task-event>\n");
        push_raw_element(&mut out, "task-id", &self.task_id.to_string());
        for line in &self.lines {
            out.push_str("<match>\n");
            push_raw_element(&mut out, "line-number", &line.line_number.to_string());
            push_element(&mut out, "pattern", &line.pattern);
            push_element(&mut out, "line", &line.line);
            out.push_str("</match>\n");
        }
        if let Some(more) = &self.more {
            push_raw_element(&mut out, "more", &more.text());
        }
        out.push_str("</task-event>");
        out
    }

    /// Reads the elements between `<task-event>\n` and the closing tag.
    pub(crate) fn parse_body(cursor: &mut Cursor<'_>) -> Result<Self, WireError> {
        let task_id = cursor.task_id()?;
        let mut lines = Vec::new();
        // A block tells at least one line in full.
        loop {
            cursor.expect("<match>\n")?;
            lines.push(EventLine {
                line_number: cursor.number("line-number")?,
                pattern: cursor.text("pattern")?,
                line: cursor.text("line")?,
            });
            cursor.expect("</match>\n")?;
            if !cursor.at("<match>\n") {
                break;
            }
        }
        let more = if cursor.at("<more>") {
            let offset = cursor.pos();
            let text = cursor.text("more")?;
            let more = MoreLines::parse(&text);
            Some(more.ok_or(WireError::InvalidValue {
                element: "more",
                value: text,
                reason: "not \"and N more matching lines (lines A–B)\"".to_owned(),
                offset,
            })?)
        } else {
            None
        };
        Ok(Self {
            task_id,
            lines,
            more,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_more_line_reads_back() {
        for more in [
            MoreLines {
                count: 1,
                first_line: 4,
                last_line: 4,
            },
            MoreLines {
                count: 9997,
                first_line: 4,
                last_line: 10000,
            },
        ] {
            assert_eq!(MoreLines::parse(&more.text()), Some(more));
        }
        assert_eq!(MoreLines::parse("and x more"), None);
        assert_eq!(
            MoreLines::parse("and 01 more matching line (line 4)"),
            None,
            "only what rendering writes"
        );
    }
}
