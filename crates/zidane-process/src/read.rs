//! `read_file`: a window of a file's lines, streamed.
//!
//! A task log can be gigabytes. The file is read once, in fixed-size blocks: lines
//! outside the window are only counted, lines inside are kept (each cut at
//! [`MAX_LINE_BYTES`]), so memory depends on the window, never on the file.
//! Lines follow `str::lines`: split on `\n`, a trailing `\r` dropped, no empty line
//! after a final newline. Bytes that are not UTF-8 are shown lossily.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use zidane_context::{ReadRange, ReadResult};

/// Bytes kept of one line; the rest of a longer line is replaced by a note.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Read block size.
const BLOCK: usize = 256 * 1024;

/// Reads the lines `range` selects from the file at `path`.
pub(crate) fn read_window(path: &Path, range: ReadRange) -> io::Result<ReadResult> {
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let mut window = Window::new(range);
    let mut reader = BufReader::with_capacity(BLOCK, file);
    loop {
        let block = reader.fill_buf()?;
        if block.is_empty() {
            break;
        }
        let len = block.len();
        window.feed(block);
        reader.consume(len);
    }
    Ok(window.finish(path))
}

/// The line-window state machine, fed block by block.
#[derive(Debug)]
struct Window {
    first: usize,
    end: usize,
    /// Index of the line the next byte belongs to.
    line: usize,
    /// The current line's kept bytes, while it is inside the window.
    current: Vec<u8>,
    /// Bytes of the current line beyond `MAX_LINE_BYTES`.
    current_overflow: u64,
    /// Whether the current line has any byte yet (a final line without `\n`).
    current_open: bool,
    lines: Vec<String>,
}

impl Window {
    fn new(range: ReadRange) -> Self {
        Self {
            first: range.offset,
            end: range.offset.saturating_add(range.limit_or_default()),
            line: 0,
            current: Vec::new(),
            current_overflow: 0,
            current_open: false,
            lines: Vec::new(),
        }
    }

    fn feed(&mut self, mut block: &[u8]) {
        while !block.is_empty() {
            if self.line >= self.end {
                // Past the window: only count. A plain byte count vectorises well.
                let newlines = block.iter().filter(|b| **b == b'\n').count();
                self.line += newlines;
                self.current_open = block.last() != Some(&b'\n');
                return;
            }
            let inside = self.line >= self.first;
            match block.iter().position(|b| *b == b'\n') {
                Some(at) => {
                    if inside {
                        self.keep(&block[..at]);
                        self.close_line(true);
                    }
                    self.line += 1;
                    self.current_open = false;
                    block = &block[at + 1..];
                }
                None => {
                    if inside {
                        self.keep(block);
                    }
                    self.current_open = true;
                    return;
                }
            }
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.current.len());
        let (kept, over) = bytes.split_at(bytes.len().min(room));
        self.current.extend_from_slice(kept);
        self.current_overflow += over.len() as u64;
    }

    /// Ends the current line; `newline`: it ended with `\n` (so a `\r` before it is
    /// part of the line ending).
    fn close_line(&mut self, newline: bool) {
        let mut bytes = std::mem::take(&mut self.current);
        if newline && self.current_overflow == 0 && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if self.current_overflow > 0 {
            text.push_str(&format!(
                " [line truncated: {} more bytes]",
                self.current_overflow
            ));
        }
        self.current_overflow = 0;
        self.lines.push(text);
    }

    fn finish(mut self, path: &Path) -> ReadResult {
        let mut total_lines = self.line;
        if self.current_open {
            // A last line without a newline still counts.
            if self.line >= self.first && self.line < self.end {
                self.close_line(false);
            }
            total_lines += 1;
        }
        let end = self.end.min(total_lines);
        ReadResult {
            path: path.to_owned(),
            offset: self.first,
            lines: self.lines,
            total_lines,
            remaining: total_lines - end,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn window_of(data: &[u8], offset: usize, limit: usize, block: usize) -> ReadResult {
        let mut window = Window::new(ReadRange::new(offset, Some(limit)));
        for chunk in data.chunks(block.max(1)) {
            window.feed(chunk);
        }
        window.finish(Path::new("x"))
    }

    #[test]
    fn lines_like_str_lines() {
        let r = window_of(b"a\r\nb\n\nc", 0, 10, 3);
        assert_eq!(r.lines, ["a", "b", "", "c"]);
        assert_eq!((r.total_lines, r.remaining), (4, 0));
        let r = window_of(b"a\nb\n", 1, 10, 1);
        assert_eq!(r.lines, ["b"]);
        assert_eq!((r.total_lines, r.remaining), (2, 0));
        let r = window_of(b"", 0, 10, 1);
        assert_eq!((r.lines.len(), r.total_lines, r.remaining), (0, 0, 0));
    }

    #[test]
    fn long_lines_are_cut_with_a_note() {
        let mut data = vec![b'x'; MAX_LINE_BYTES + 10];
        data.extend_from_slice(b"\nnext\n");
        let r = window_of(&data, 0, 10, 4096);
        assert_eq!(r.lines.len(), 2);
        assert!(r.lines[0].ends_with(" [line truncated: 10 more bytes]"));
        assert_eq!(r.lines[1], "next");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn matches_str_lines_whatever_the_blocks(
            text in "[ab\r\n]{0,60}",
            offset in 0usize..20,
            limit in 0usize..20,
            block in 1usize..9,
        ) {
            let all: Vec<&str> = text.lines().collect();
            let start = offset.min(all.len());
            let end = offset.saturating_add(limit).min(all.len()).max(start);
            let r = window_of(text.as_bytes(), offset, limit, block);
            prop_assert_eq!(&r.lines, &all[start..end]);
            prop_assert_eq!(r.total_lines, all.len());
            prop_assert_eq!(r.remaining, all.len() - end);
        }
    }
}
