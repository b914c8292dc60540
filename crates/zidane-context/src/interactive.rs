//! Input and terminals for background tasks: what a task's stdin is, the size of its
//! terminal, the bytes written to it, and the screen its terminal shows.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a background task's standard input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StdinMode {
    /// Closed (`/dev/null`): a read sees end-of-file at once. The default, so that a
    /// command that asks a question fails fast instead of waiting forever.
    #[default]
    Closed,
    /// A pipe kept open, written with
    /// [`write_input`](crate::ExecutionContext::write_input).
    Pipe,
}

impl StdinMode {
    /// Whether this is [`Closed`](Self::Closed) (serde skips the default).
    pub const fn is_closed(&self) -> bool {
        matches!(self, Self::Closed)
    }

    /// The lowercase name used on the wire: `closed`, `pipe`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Pipe => "pipe",
        }
    }
}

impl fmt::Display for StdinMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The size of a task's terminal, in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TtySize {
    /// Lines.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

impl TtySize {
    /// The size a terminal gets when none is asked for: 24 rows of 80 columns.
    pub const DEFAULT: Self = Self { rows: 24, cols: 80 };
    /// The most rows or columns a terminal may have.
    pub const MAX_CELLS: u16 = 1000;

    /// A size of `rows` by `cols`.
    pub const fn new(rows: u16, cols: u16) -> Self {
        Self { rows, cols }
    }

    /// Whether both sides are between 1 and [`MAX_CELLS`](Self::MAX_CELLS).
    pub const fn is_valid(self) -> bool {
        self.rows >= 1
            && self.cols >= 1
            && self.rows <= Self::MAX_CELLS
            && self.cols <= Self::MAX_CELLS
    }
}

impl Default for TtySize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for TtySize {
    /// `24x80` (rows by columns).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

/// What [`write_input`](crate::ExecutionContext::write_input) writes to a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskInput {
    /// These bytes, as they are (for a terminal: as if typed, so `\r` is Enter and
    /// `\x03` is ctrl-c).
    Bytes(Vec<u8>),
    /// End of input: a pipe's write end is closed; a terminal gets its end-of-file
    /// character (ctrl-d), and stays open.
    Eof,
}

impl TaskInput {
    /// The bytes of `text`, as they are.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Bytes(text.into().into_bytes())
    }
}

/// What a task's terminal shows now: its text, line by line, and where the cursor is.
///
/// Only the characters: colours and attributes are left out. A wide character fills
/// its cells once; trailing blanks of each line are trimmed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Screen {
    /// Lines of the terminal.
    pub rows: u16,
    /// Columns of the terminal.
    pub cols: u16,
    /// One string per row, top to bottom (always `rows` of them).
    pub lines: Vec<String>,
    /// The cursor, as `(row, col)` from the top-left corner, 0-based.
    pub cursor: (u16, u16),
    /// Whether the program switched to the alternate screen (a full-screen program:
    /// `less`, `vi`, `top`).
    #[serde(default)]
    pub alternate: bool,
    /// The window title the program set, if it set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl Screen {
    /// A screen of `size` showing `lines` (padded or cut to `size.rows`) with the cursor
    /// at `cursor`.
    pub fn new(size: TtySize, mut lines: Vec<String>, cursor: (u16, u16)) -> Self {
        lines.resize(usize::from(size.rows), String::new());
        Self {
            rows: size.rows,
            cols: size.cols,
            lines,
            cursor,
            alternate: false,
            title: None,
        }
    }

    /// Marks the screen as the alternate one.
    #[must_use]
    pub fn with_alternate(mut self, alternate: bool) -> Self {
        self.alternate = alternate;
        self
    }

    /// Sets the window title.
    #[must_use]
    pub fn with_title(mut self, title: Option<String>) -> Self {
        self.title = title;
        self
    }

    /// The terminal's size.
    pub const fn size(&self) -> TtySize {
        TtySize {
            rows: self.rows,
            cols: self.cols,
        }
    }

    /// The text of the screen: its lines joined by newlines, blank lines at the
    /// bottom left out.
    pub fn text(&self) -> String {
        let last = self
            .lines
            .iter()
            .rposition(|line| !line.is_empty())
            .map_or(0, |at| at + 1);
        self.lines[..last].join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screen_keeps_rows_lines_and_its_text_drops_the_blank_bottom() {
        let screen = Screen::new(
            TtySize::new(4, 10),
            vec!["$ ls".into(), "a b".into()],
            (2, 0),
        );
        assert_eq!(screen.lines.len(), 4);
        assert_eq!(screen.text(), "$ ls\na b");
        assert_eq!(Screen::new(TtySize::new(2, 2), vec![], (0, 0)).text(), "");
    }

    #[test]
    fn sizes_are_bounded_and_read_rows_by_cols() {
        assert!(TtySize::DEFAULT.is_valid());
        assert!(!TtySize::new(0, 80).is_valid());
        assert!(!TtySize::new(24, 1001).is_valid());
        assert_eq!(TtySize::DEFAULT.to_string(), "24x80");
    }
}
