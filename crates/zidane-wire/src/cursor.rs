//! The parser's cursor: reads a block's elements, one per line, and says where a bad
//! one starts.

use std::str::FromStr;

use zidane_context::{LogWriteFailure, Signal, TaskId, TaskStatus};

use crate::error::WireError;
use crate::escape::unescape;

/// Reads a block's elements, one per line, in rendering order.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor on `text` at byte `pos`.
    pub(crate) fn new(text: &'a str, pos: usize) -> Self {
        Self { text, pos }
    }

    /// The byte offset reached so far.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Whether the text continues with `literal`.
    pub(crate) fn at(&self, literal: &str) -> bool {
        self.text
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(literal))
    }

    /// Consumes `literal`, or fails saying it was expected.
    pub(crate) fn expect(&mut self, literal: &str) -> Result<(), WireError> {
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
