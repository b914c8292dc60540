//! The input line: text and a cursor, edited a character at a time.

use crossterm::event::KeyCode;

use super::wrap::char_columns;

/// One line of input with a cursor (a char index, `0..=len`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputLine {
    chars: Vec<char>,
    cursor: usize,
}

impl InputLine {
    /// The text.
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set(&mut self, text: &str) {
        self.chars = text.chars().collect();
        self.cursor = self.chars.len();
    }

    /// Empties the line.
    pub fn clear(&mut self) {
        self.set("");
    }

    /// Inserts text at the cursor; line breaks (a paste) become spaces, other control
    /// characters are dropped.
    pub fn insert(&mut self, text: &str) {
        for c in text.chars() {
            let c = if c == '\n' || c == '\t' { ' ' } else { c };
            if c == '\r' || c.is_control() {
                continue;
            }
            self.chars.insert(self.cursor, c);
            self.cursor += 1;
        }
    }

    /// Deletes the character before the cursor.
    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            self.chars.remove(self.cursor);
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.chars.len() {
            self.chars.remove(self.cursor);
        }
    }

    /// Moves the cursor one character left.
    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    /// Moves the cursor one character right.
    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.chars.len());
    }

    /// Moves the cursor to the start.
    pub fn home(&mut self) {
        self.cursor = 0;
    }

    /// Moves the cursor to the end.
    pub fn end(&mut self) {
        self.cursor = self.chars.len();
    }

    /// Applies an editing key: a character to insert, Backspace and Delete, the
    /// arrows, Home and End (also Ctrl-A and Ctrl-E), Ctrl-U to clear. Any other key
    /// leaves the line as it is.
    pub fn edit(&mut self, code: KeyCode, ctrl: bool) {
        match code {
            KeyCode::Char('a') if ctrl => self.home(),
            KeyCode::Char('e') if ctrl => self.end(),
            KeyCode::Char('u') if ctrl => self.clear(),
            KeyCode::Char(c) if !ctrl => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left => self.left(),
            KeyCode::Right => self.right(),
            KeyCode::Home => self.home(),
            KeyCode::End => self.end(),
            _ => {}
        }
    }

    /// What fits in `width` columns with the cursor in view, and the cursor's column
    /// in it — by display width: a CJK character or an emoji takes two columns.
    pub fn window(&self, width: usize) -> (String, usize) {
        let width = width.max(1);
        // The cursor's own cell: the character under it, or one column past the end.
        let mut used = self
            .chars
            .get(self.cursor)
            .map_or(1, |&c| char_columns(c).max(1));
        let mut start = self.cursor;
        while let Some(&c) = start
            .checked_sub(1)
            .and_then(|before| self.chars.get(before))
        {
            if used + char_columns(c) > width {
                break;
            }
            used += char_columns(c);
            start -= 1;
        }
        let mut shown = String::new();
        let mut shown_columns = 0;
        for &c in &self.chars[start..] {
            shown_columns += char_columns(c);
            if shown_columns > width {
                break;
            }
            shown.push(c);
        }
        let column = self.chars[start..self.cursor]
            .iter()
            .map(|&c| char_columns(c))
            .sum();
        (shown, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_at_the_cursor() {
        let mut line = InputLine::default();
        line.insert("helo");
        line.left();
        line.insert("l");
        assert_eq!(line.text(), "hello");
        line.home();
        line.delete();
        line.end();
        line.backspace();
        assert_eq!(line.text(), "ell");
        line.insert("o\nworld\x1b");
        assert_eq!(line.text(), "ello world");
    }

    #[test]
    fn the_window_keeps_the_cursor_in_view() {
        let mut line = InputLine::default();
        line.insert("abcdefghij");
        assert_eq!(line.window(4), ("hij".to_owned(), 3));
        line.home();
        assert_eq!(line.window(4), ("abcd".to_owned(), 0));
        assert_eq!(line.window(20), ("abcdefghij".to_owned(), 0));
    }

    #[test]
    fn the_window_counts_display_columns() {
        let mut line = InputLine::default();
        line.insert("日本語のテキスト🎉");
        // Two columns a character, one more for the cursor past the end.
        assert_eq!(line.window(7), ("スト🎉".to_owned(), 6));
        line.home();
        assert_eq!(line.window(7), ("日本語".to_owned(), 0));
        line.right();
        line.right();
        assert_eq!(line.window(7), ("日本語".to_owned(), 4));
    }
}
