//! The screen of a task that runs in a terminal: its output fed through a terminal
//! emulator (`vt100`) as the log takes it, so the current screen can be read as text.
//! Only terminal tasks have one; a plain task's output never passes through here.

use std::sync::{Mutex, MutexGuard};

use zidane_context::{Screen, TtySize};

/// Lines the emulator keeps above the screen: none, the log holds the history.
const SCROLLBACK_LINES: usize = 0;

/// A terminal task's screen, shared by its output pump and `read_screen`.
pub(crate) struct TerminalScreen {
    parser: Mutex<vt100::Parser>,
}

impl std::fmt::Debug for TerminalScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalScreen")
            .field("size", &self.size())
            .finish_non_exhaustive()
    }
}

impl TerminalScreen {
    /// A blank screen of `size`.
    pub(crate) fn new(size: TtySize) -> Self {
        Self {
            parser: Mutex::new(vt100::Parser::new(size.rows, size.cols, SCROLLBACK_LINES)),
        }
    }

    fn parser(&self) -> MutexGuard<'_, vt100::Parser> {
        // The parser is only ever fed whole chunks; a panic inside it leaves a screen
        // that is still worth showing.
        zidane_context::lock(&self.parser)
    }

    /// Takes bytes the task wrote to its terminal.
    pub(crate) fn feed(&self, bytes: &[u8]) {
        self.parser().process(bytes);
    }

    /// The terminal's size now.
    pub(crate) fn size(&self) -> TtySize {
        let (rows, cols) = self.parser().screen().size();
        TtySize::new(rows, cols)
    }

    /// The terminal's size is now `size` (the terminal itself was resized).
    pub(crate) fn resize(&self, size: TtySize) {
        self.parser().set_size(size.rows, size.cols);
    }

    /// What the screen shows now.
    pub(crate) fn screen(&self) -> Screen {
        let parser = self.parser();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        let lines = screen
            .rows(0, cols)
            .map(|line| line.trim_end().to_owned())
            .collect();
        let title = Some(screen.title().to_owned()).filter(|title| !title.is_empty());
        Screen::new(TtySize::new(rows, cols), lines, screen.cursor_position())
            .with_alternate(screen.alternate_screen())
            .with_title(title)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_screen_shows_what_the_escapes_draw() {
        let screen = TerminalScreen::new(TtySize::new(4, 20));
        screen.feed(b"hello\r\nworld\x1b[1;3HX\x1b]0;my title\x07");
        let shown = screen.screen();
        assert_eq!(shown.lines, ["heXlo", "world", "", ""]);
        assert_eq!(shown.cursor, (0, 3));
        assert_eq!(shown.title.as_deref(), Some("my title"));
        assert!(!shown.alternate);
        screen.feed(b"\x1b[?1049h\x1b[2J\x1b[Hfull screen");
        let shown = screen.screen();
        assert!(shown.alternate);
        assert_eq!(shown.text(), "full screen");
        screen.resize(TtySize::new(2, 10));
        assert_eq!(screen.size(), TtySize::new(2, 10));
        assert_eq!(screen.screen().lines.len(), 2);
    }
}
