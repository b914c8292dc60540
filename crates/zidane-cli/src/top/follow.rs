//! Following the selected task's log: its last lines when it is selected, then what it
//! writes, as printable text — a terminal task's escape sequences dropped, a progress
//! bar's carriage returns resolved to what it shows last.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::task_log::copy_from;

/// How much of a log's end is read at once: when its task is selected, and when it
/// wrote more than that since the last read (the lines before are not shown anyway).
const TAIL_BYTES: u64 = 64 * 1024;

/// How many of the last lines are kept: more than any screen shows.
pub const KEPT_LINES: usize = 500;

/// Columns between tab stops, as a terminal sets them.
const TAB: usize = 8;

/// One task's log, followed.
#[derive(Debug)]
pub struct Follow {
    /// The task whose log it is.
    pub id: String,
    /// The log.
    pub path: PathBuf,
    file: std::fs::File,
    /// How far it was read.
    offset: u64,
    /// The last line read, not yet ended.
    partial: Vec<u8>,
    lines: VecDeque<String>,
}

impl Follow {
    /// Opens `id`'s log at `path` and reads its last lines.
    pub fn open(id: &str, path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        let mut follow = Self {
            id: id.to_owned(),
            path: path.to_owned(),
            file,
            offset: 0,
            partial: Vec::new(),
            lines: VecDeque::new(),
        };
        follow.read_more()?;
        Ok(follow)
    }

    /// Reads what the log gained since; whether it gained anything.
    pub fn read_more(&mut self) -> std::io::Result<bool> {
        let length = self.file.metadata()?.len();
        if length < self.offset {
            // Cut short under us: read it again from where it now ends.
            self.offset = 0;
            self.partial.clear();
            self.lines.clear();
        }
        if length == self.offset {
            return Ok(false);
        }
        let from = length.saturating_sub(TAIL_BYTES);
        if from <= self.offset {
            let mut bytes = Vec::new();
            self.offset = copy_from(&mut self.file, self.offset, &mut bytes)?;
            self.take(&bytes);
            return Ok(true);
        }
        // More than the tail was written: what came before is not shown. Read from the
        // byte before, so that a line starting right at `from` is kept whole.
        self.partial.clear();
        self.lines.clear();
        let mut bytes = Vec::new();
        self.offset = copy_from(&mut self.file, from - 1, &mut bytes)?;
        let start = bytes
            .iter()
            .position(|byte| *byte == b'\n')
            .map_or(bytes.len(), |at| at + 1);
        self.take(&bytes[start..]);
        Ok(true)
    }

    /// Splits `bytes` into lines, after the partial one.
    fn take(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|byte| *byte == b'\n') {
            self.partial.extend_from_slice(piece);
            if piece.ends_with(b"\n") {
                let line = std::mem::take(&mut self.partial);
                self.push(printable(&String::from_utf8_lossy(&line[..line.len() - 1])));
            }
        }
    }

    fn push(&mut self, line: String) {
        if self.lines.len() == KEPT_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The last lines, the one being written included.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.lines.iter().cloned().collect();
        if !self.partial.is_empty() {
            lines.push(printable(&String::from_utf8_lossy(&self.partial)));
        }
        lines
    }
}

/// One line of output as a terminal would leave it, in characters a frame can hold:
/// what follows its last carriage return (a progress bar's last state), without escape
/// sequences (CSI, OSC and the like) or other control characters, tabs expanded.
pub fn printable(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = line.rsplit('\r').next().unwrap_or(line);
    let plain = zidane::tools::strip_terminal_controls(line.as_bytes());
    let mut out = String::with_capacity(plain.len());
    let mut columns = 0;
    for c in plain.chars() {
        match c {
            '\t' => {
                let pad = TAB - columns % TAB;
                out.extend(std::iter::repeat_n(' ', pad));
                columns += pad;
            }
            '\n' => {}
            c => {
                out.push(c);
                columns += crate::interactive::wrap::char_columns(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn a_line_as_a_terminal_leaves_it() {
        assert_eq!(printable("\x1b[1;32mok\x1b[0m done"), "ok done");
        assert_eq!(printable(" 10%\r 50%\r100%\r"), "100%");
        assert_eq!(printable("\x1b]0;title\x07a\tb\x08"), "a       b");
        assert_eq!(printable("日本\tx"), "日本    x");
    }

    #[test]
    fn the_log_is_followed_as_it_grows_its_last_line_shown_before_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bash_d1.log");
        let mut log = std::fs::File::create(&path).unwrap();
        log.write_all(b"one\ntw").unwrap();
        let mut follow = Follow::open("bash_d1", &path).unwrap();
        assert_eq!(follow.lines(), ["one", "tw"]);
        assert!(!follow.read_more().unwrap());
        log.write_all("o\nthr\u{e9}e\n".as_bytes()).unwrap();
        assert!(follow.read_more().unwrap());
        assert_eq!(follow.lines(), ["one", "two", "thrée"]);
    }

    #[test]
    fn a_long_log_is_read_from_its_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bash_d1.log");
        let lines: Vec<String> = (0..20_000).map(|n| format!("line {n}")).collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let follow = Follow::open("bash_d1", &path).unwrap();
        let read = follow.lines();
        assert_eq!(read.len(), KEPT_LINES);
        assert_eq!(read.last().unwrap(), "line 19999");
        // Every line kept is whole.
        assert!(read.iter().all(|line| lines.contains(line)), "{read:?}");
    }
}
