//! `read_file`: a window of a file's lines, streamed.
//!
//! A task log can be gigabytes. The file is read once, in fixed-size blocks: lines
//! outside the window are only counted, lines inside are kept (each cut at
//! [`MAX_LINE_BYTES`]), so memory depends on the window, never on the file.
//! Lines follow `str::lines`: split on `\n`, a trailing `\r` dropped, no empty line
//! after a final newline. Bytes that are not UTF-8 are shown lossily.
//!
//! A read never hangs and never runs unbounded: only regular files are read (a FIFO
//! without a writer would block forever, `/dev/zero` never ends), checked before the
//! file is opened and again on the open file, which is opened non-blocking; at most
//! [`READ_BUDGET_BYTES`] are read, and the result says where it stopped; and a
//! cancelled read stops between blocks.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane_context::{ContextError, ReadRange, ReadResult};

use crate::file_at::read_exact_at;

/// Bytes kept of one line; the rest of a longer line is replaced by a note.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Most bytes one `read_file` reads. Past it the read stops and its result says so
/// ([`ReadResult::stopped_after_bytes`]): lines are counted from the start of the file,
/// so a window far into a huge file costs a scan of everything before it, and this
/// bounds that work.
pub const READ_BUDGET_BYTES: u64 = 256 << 20;

/// Read block size.
const BLOCK: usize = 256 * 1024;

/// Reads the lines `range` selects from the file at `path`, at most `budget` bytes of
/// it; stops with an `Interrupted` error once `cancelled` is set.
pub(crate) fn read_window(
    path: &Path,
    range: ReadRange,
    budget: u64,
    cancelled: &AtomicBool,
) -> io::Result<ReadResult> {
    // Refused before opening: opening a device can have effects of its own.
    refuse_unless_regular(&std::fs::metadata(path)?)?;
    // Non-blocking: should the path have become a FIFO since, opening it cannot wait
    // for a writer, and the check below refuses it.
    let file = open_for_reading(path)?;
    let metadata = file.metadata()?;
    refuse_unless_regular(&metadata)?;
    if range.from_end {
        return read_tail(path, &file, metadata.len(), range, budget, cancelled)
            .map(|(result, _)| result);
    }
    let mut window = Window::new(range);
    let mut reader = BufReader::with_capacity(BLOCK, file.take(budget));
    let mut read = 0u64;
    loop {
        if cancelled.load(Ordering::Relaxed) {
            return Err(cancelled_error());
        }
        let block = reader.fill_buf()?;
        if block.is_empty() {
            break;
        }
        let len = block.len();
        window.feed(block);
        reader.consume(len);
        read += len as u64;
    }
    let stopped_after =
        (read >= budget && more_to_read(reader.into_inner().into_inner())?).then_some(read);
    Ok(window.finish(path, stopped_after))
}

/// A from-the-end read of the first `len` bytes of `file` (bytes a running task appends
/// meanwhile are left for the next read): reads backwards in blocks from `len`, only
/// counting newlines, until the window's first line is found, then reads forward from
/// there through the window. Work depends on the window, not on the file. The backward
/// scan stops after `budget` bytes; the result then starts at the earliest line the scan
/// saw whole. Also returns the bytes read, both ways.
fn read_tail(
    path: &Path,
    file: &File,
    len: u64,
    range: ReadRange,
    budget: u64,
    cancelled: &AtomicBool,
) -> io::Result<(ReadResult, u64)> {
    let need = range.offset.saturating_add(range.limit_or_default());
    let mut block = vec![0u8; BLOCK];
    let mut read = 0u64;
    // A final `\n` ends the last line rather than starting another.
    let mut end = len;
    if len > 0 {
        read_exact_at(file, &mut block[..1], len - 1)?;
        read += 1;
        if block[0] == b'\n' {
            end -= 1;
        }
    }
    let mut pos = end;
    let mut newlines = 0usize;
    // (start of the window's region, lines in it, stopped after this many bytes)
    let mut found = None;
    while found.is_none() && pos > 0 && need > 0 {
        if cancelled.load(Ordering::Relaxed) {
            return Err(cancelled_error());
        }
        if read >= budget {
            break;
        }
        let take = (pos.min(BLOCK as u64)).min(budget - read) as usize;
        let from = pos - take as u64;
        read_exact_at(file, &mut block[..take], from)?;
        read += take as u64;
        for (i, byte) in block[..take].iter().enumerate().rev() {
            if *byte == b'\n' {
                newlines += 1;
                if newlines == need {
                    found = Some((from + i as u64 + 1, need));
                    break;
                }
            }
        }
        pos = from;
    }
    let mut stopped = None;
    let (start, region_lines) = match found {
        Some(found) => found,
        None if need == 0 => (len, 0),
        None if pos == 0 => (0, if len > 0 { newlines + 1 } else { 0 }),
        None => {
            // Out of budget: start after the earliest newline seen, so no line is cut.
            stopped = Some(read);
            match earliest_newline(file, pos, end)? {
                Some(at) => (at + 1, newlines),
                None => (len, 0),
            }
        }
    };
    let last = region_lines.saturating_sub(range.offset);
    let first = last.saturating_sub(range.limit_or_default());
    let mut window = Window::new(ReadRange::new(first, Some(last - first)));
    let mut at = start;
    while at < len {
        if cancelled.load(Ordering::Relaxed) {
            return Err(cancelled_error());
        }
        let take = (len - at).min(BLOCK as u64) as usize;
        read_exact_at(file, &mut block[..take], at)?;
        read += take as u64;
        window.feed(&block[..take]);
        at += take as u64;
    }
    let mut result = window.finish(path, stopped);
    if start > 0 {
        result.bytes_before = Some(start);
    }
    Ok((result, read))
}

/// The position of the first `\n` in `from..end` of `file`.
fn earliest_newline(file: &File, from: u64, end: u64) -> io::Result<Option<u64>> {
    let mut block = vec![0u8; BLOCK];
    let mut at = from;
    while at < end {
        let take = (end - at).min(BLOCK as u64) as usize;
        read_exact_at(file, &mut block[..take], at)?;
        if let Some(i) = block[..take].iter().position(|b| *b == b'\n') {
            return Ok(Some(at + i as u64));
        }
        at += take as u64;
    }
    Ok(None)
}

fn cancelled_error() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the read was cancelled")
}

/// Whether `file` has at least one more byte.
fn more_to_read(mut file: File) -> io::Result<bool> {
    let mut byte = [0u8; 1];
    loop {
        match file.read(&mut byte) {
            Ok(n) => return Ok(n > 0),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

/// Opens `path` to read. On Unix non-blocking and without taking a controlling
/// terminal: should the path have become a FIFO or a device since it was checked,
/// opening it cannot wait for a writer or change the session.
fn open_for_reading(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    options.open(path)
}

/// Refuses anything but a regular file, naming what it is.
fn refuse_unless_regular(metadata: &Metadata) -> io::Result<()> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    if kind.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory, not a regular file",
        ));
    }
    let what = special_kind(kind);
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {what}; only regular files can be read"),
    ))
}

/// What a special file is, in words.
#[cfg(unix)]
fn special_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// What a special file is, in words: Windows' metadata tells only files, directories
/// and links apart.
#[cfg(windows)]
fn special_kind(_kind: std::fs::FileType) -> &'static str {
    "not a regular file"
}

/// How many `\n` bytes `block` holds.
fn count_newlines(block: &[u8]) -> usize {
    block.iter().filter(|b| **b == b'\n').count()
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
        // A block that ends before the window, or one past it, is only counted: a plain
        // byte count vectorises well, where finding each line does not.
        if self.line < self.first || self.line >= self.end {
            let newlines = count_newlines(block);
            if self.line >= self.end || self.line + newlines < self.first {
                self.line += newlines;
                if !block.is_empty() {
                    self.current_open = block.last() != Some(&b'\n');
                }
                return;
            }
        }
        while !block.is_empty() {
            if self.line >= self.end {
                let newlines = count_newlines(block);
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

    /// The result; `stopped_after`: the read stopped after this many bytes, before the
    /// end of the file.
    fn finish(mut self, path: &Path, stopped_after: Option<u64>) -> ReadResult {
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
            stopped_after_bytes: stopped_after,
            bytes_before: None,
        }
    }
}

/// Reads `range` of `path` on the blocking pool (a large file is blocking work, kept off
/// the async workers). If this future is dropped (the caller cancelled), the thread
/// stops too.
pub(crate) async fn read_file(
    path: PathBuf,
    range: ReadRange,
    budget: u64,
) -> zidane_context::Result<ReadResult> {
    let cancelled = Arc::new(AtomicBool::new(false));
    let _stop = SetOnDrop(cancelled.clone());
    let read = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || read_window(&path, range, budget, &cancelled))
    };
    match read.await {
        Ok(result) => result.map_err(|source| ContextError::io(path, source)),
        Err(join) => Err(ContextError::io(path, std::io::Error::other(join))),
    }
}

/// Sets the flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
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
        window.finish(Path::new("x"), None)
    }

    fn write_temp(data: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, data).unwrap();
        file
    }

    #[test]
    fn a_read_stops_at_its_budget_and_says_where() {
        let file = write_temp(b"a\nb\nc\nd\n");
        let never = AtomicBool::new(false);
        let r = read_window(file.path(), ReadRange::new(0, None), 4, &never).unwrap();
        assert_eq!(r.lines, ["a", "b"]);
        assert_eq!((r.total_lines, r.stopped_after_bytes), (2, Some(4)));
        // Exactly the budget, and nothing after it: not stopped.
        let r = read_window(file.path(), ReadRange::new(0, None), 8, &never).unwrap();
        assert_eq!((r.total_lines, r.stopped_after_bytes), (4, None));
    }

    #[test]
    fn a_cancelled_read_stops() {
        let file = write_temp(b"a\n");
        let cancelled = AtomicBool::new(true);
        let error =
            read_window(file.path(), ReadRange::default(), 1 << 20, &cancelled).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::Interrupted);
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

    fn tail_of(data: &[u8], skip: usize, limit: usize, budget: u64) -> (ReadResult, u64) {
        let file = write_temp(data);
        let never = AtomicBool::new(false);
        let open = File::open(file.path()).unwrap();
        read_tail(
            file.path(),
            &open,
            data.len() as u64,
            ReadRange::from_end(skip, Some(limit)),
            budget,
            &never,
        )
        .unwrap()
    }

    #[test]
    fn the_end_of_a_large_sparse_file_is_read_without_scanning_it() {
        let file = tempfile::NamedTempFile::new().unwrap();
        file.as_file().set_len(1 << 30).unwrap();
        let mut f = file.reopen().unwrap();
        io::Seek::seek(&mut f, io::SeekFrom::End(0)).unwrap();
        std::io::Write::write_all(&mut f, b"\nsecond to last\nlast").unwrap();
        let never = AtomicBool::new(false);
        let open = File::open(file.path()).unwrap();
        let len = open.metadata().unwrap().len();
        let (r, read) = read_tail(
            file.path(),
            &open,
            len,
            ReadRange::from_end(0, Some(2)),
            READ_BUDGET_BYTES,
            &never,
        )
        .unwrap();
        assert_eq!(r.lines, ["second to last", "last"]);
        assert_eq!((r.offset, r.total_lines, r.remaining), (0, 2, 0));
        assert_eq!(r.bytes_before, Some((1 << 30) + 1));
        assert!(read <= 2 * BLOCK as u64, "read {read} bytes");
    }

    #[test]
    fn a_tail_out_of_budget_starts_at_a_whole_line_and_says_so() {
        let (r, _) = tail_of(b"aaaa\nbbbb\ncccc\n", 0, 10, 7);
        assert_eq!(r.lines, ["cccc"]);
        assert_eq!(r.stopped_after_bytes, Some(7));
        assert_eq!(r.bytes_before, Some(10));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn a_tail_is_the_last_lines(
            text in "[ab\r\n]{0,60}",
            skip in 0usize..20,
            limit in 0usize..20,
        ) {
            let all: Vec<&str> = text.lines().collect();
            let end = all.len().saturating_sub(skip);
            let start = end.saturating_sub(limit);
            let (r, _) = tail_of(text.as_bytes(), skip, limit, u64::MAX);
            prop_assert_eq!(&r.lines, &all[start..end]);
            match r.bytes_before {
                // Reached the start: absolute line numbers.
                None => {
                    prop_assert_eq!(r.offset, start);
                    prop_assert_eq!(r.total_lines, all.len());
                }
                Some(before) => {
                    let before = usize::try_from(before).unwrap();
                    prop_assert_eq!(text[..before].lines().count(), start);
                    prop_assert_eq!(r.offset, 0);
                }
            }
            prop_assert_eq!(r.remaining, skip.min(all.len()));
        }
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
