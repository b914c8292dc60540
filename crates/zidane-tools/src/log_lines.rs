//! Following a task's log line by line, and matching a line against a pattern: the one
//! implementation behind `wait_task`'s `until.pattern` and `shell`'s `notify_on`.
//!
//! The log is read through
//! [`ExecutionContext::follow_output`](zidane_context::ExecutionContext::follow_output),
//! which wakes the follower when the task writes or ends, so nothing polls, and every
//! byte is looked at once. Lines are numbered from 1, as the log's lines.

use regex::Regex;
use zidane_context::{ContextError, ExecutionContext, ExecutionHandle, TaskId};

use crate::line_scan::scan;
use crate::terminal_text::strip_terminal_controls;

/// Bytes of the log read per step of following it.
pub(crate) const FOLLOW_CHUNK: usize = 64 * 1024;
/// Bytes of the log a task event follower reads per step: larger, since most of what it
/// reads is skipped a chunk at a time.
pub(crate) const FILTERED_CHUNK: usize = 1024 * 1024;
/// Bytes of one log line kept for matching; the rest of a longer line is not searched.
pub(crate) const MAX_MATCHED_LINE: usize = 64 * 1024;

/// Splits a byte stream into lines, each seen once.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    partial: Vec<u8>,
    partial_overflow: bool,
}

impl Lines {
    /// The complete lines in `bytes` (and the unterminated last one when `finished`),
    /// without their `\n` or a trailing `\r`.
    pub(crate) fn feed(&mut self, bytes: &[u8], finished: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, complete) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let room = MAX_MATCHED_LINE.saturating_sub(self.partial.len());
            if body.len() > room {
                self.partial_overflow = true;
            }
            self.partial
                .extend_from_slice(&body[..body.len().min(room)]);
            if complete {
                out.push(self.take());
            }
        }
        if finished && (!self.partial.is_empty() || self.partial_overflow) {
            out.push(self.take());
        }
        out
    }

    /// The line being written: bytes after the last newline, not yet a line.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.partial
    }

    fn take(&mut self) -> Vec<u8> {
        let mut line = std::mem::take(&mut self.partial);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        self.partial_overflow = false;
        line
    }
}

/// One step of a [`LogFollower`]: the lines that ended since the last step, numbered.
#[derive(Debug, Default)]
pub(crate) struct Step {
    /// The lines, with their line numbers (when counted from the log's start).
    pub(crate) lines: Vec<(Option<u64>, Vec<u8>)>,
    /// Where in the log each of `lines` ends (the offset past its newline).
    pub(crate) ends: Vec<u64>,
    /// The task ended and every byte of its log has been read: no step follows.
    pub(crate) finished: bool,
}

/// A task's log, followed from an offset: lines split, counted and handed out once.
#[derive(Debug)]
pub(crate) struct LogFollower {
    task_id: TaskId,
    offset: u64,
    lines: Lines,
    /// Lines seen so far, when the follower started at the log's start.
    line_number: Option<u64>,
}

impl LogFollower {
    /// Follows `task_id`'s log from its first byte, counting lines.
    pub(crate) fn from_start(task_id: TaskId) -> Self {
        Self {
            task_id,
            offset: 0,
            lines: Lines::default(),
            line_number: Some(0),
        }
    }

    /// Follows `task_id`'s log from where it ends now (lines are not numbered). `None`
    /// for an unknown task.
    pub(crate) async fn from_now(
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<Self>, ContextError> {
        let end = context.follow_output(handle, task_id, u64::MAX, 0).await?;
        Ok(end.map(|end| Self {
            task_id,
            offset: end.offset,
            lines: Lines::default(),
            line_number: None,
        }))
    }

    /// The number the next line will have, when lines are counted.
    pub(crate) fn next_line_number(&self) -> Option<u64> {
        self.line_number.map(|n| n + 1)
    }

    /// The line being written (not yet ended).
    pub(crate) fn pending(&self) -> &[u8] {
        self.lines.pending()
    }

    /// Waits for the task to write or end, then hands out the lines that ended. `None`
    /// when the task is unknown to the context.
    pub(crate) async fn step(
        &mut self,
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
    ) -> Result<Option<Step>, ContextError> {
        let Some(chunk) = context
            .follow_output(handle, self.task_id, self.offset, FOLLOW_CHUNK)
            .await?
        else {
            return Ok(None);
        };
        self.offset = chunk.next_offset();
        let finished = chunk.ended && chunk.bytes.is_empty();
        let mut ends: Vec<u64> = chunk
            .bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| chunk.offset + i as u64 + 1)
            .collect();
        let lines: Vec<(Option<u64>, Vec<u8>)> = self
            .lines
            .feed(&chunk.bytes, finished)
            .into_iter()
            .map(|line| {
                if let Some(n) = self.line_number.as_mut() {
                    *n += 1;
                }
                (self.line_number, line)
            })
            .collect();
        // The unterminated last line, handed out at the end, ends where the log does.
        ends.resize(lines.len(), self.offset);
        Ok(Some(Step {
            lines,
            ends,
            finished,
        }))
    }
}

impl LogFollower {
    /// [`step`](Self::step), skipping without splitting the complete lines of a chunk
    /// that `prefilter` says hold no match (they are counted, not handed out). Only a
    /// chunk that holds no terminal control and is valid UTF-8 is offered to the
    /// prefilter, so a line that would match as written or without its escapes is never
    /// skipped; the first line of a chunk, which may have begun in the last one, is
    /// always handed out.
    pub(crate) async fn step_filtered(
        &mut self,
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
        prefilter: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Option<Step>, ContextError> {
        let Some(chunk) = context
            .follow_output(handle, self.task_id, self.offset, FILTERED_CHUNK)
            .await?
        else {
            return Ok(None);
        };
        self.offset = chunk.next_offset();
        let finished = chunk.ended && chunk.bytes.is_empty();
        let bytes = &chunk.bytes;
        let mut step = Step {
            finished,
            ..Step::default()
        };
        let newlines = (
            bytes.iter().position(|b| *b == b'\n'),
            bytes.iter().rposition(|b| *b == b'\n'),
        );
        let (first, last) = match newlines {
            (Some(first), Some(last)) if first < last => (first, last),
            _ => {
                self.hand_out(&mut step, bytes, chunk.offset, finished);
                return Ok(Some(step));
            }
        };
        self.hand_out(&mut step, &bytes[..=first], chunk.offset, false);
        let middle = &bytes[first + 1..=last];
        let middle_at = chunk.offset + first as u64 + 1;
        let (newlines, suspect) = scan(middle);
        let plain = !(suspect && holds_controls(middle));
        match std::str::from_utf8(middle) {
            Ok(text) if plain && !prefilter(text) => {
                if let Some(n) = self.line_number.as_mut() {
                    *n += newlines;
                }
            }
            _ => self.hand_out(&mut step, middle, middle_at, false),
        }
        let tail_at = chunk.offset + last as u64 + 1;
        self.hand_out(&mut step, &bytes[last + 1..], tail_at, finished);
        Ok(Some(step))
    }

    /// Feeds `bytes` (which start at `offset` of the log) and adds the lines that ended
    /// to `step`, numbered, with where each ends.
    fn hand_out(&mut self, step: &mut Step, bytes: &[u8], offset: u64, finished: bool) {
        let mut ends = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| offset + i as u64 + 1);
        for line in self.lines.feed(bytes, finished) {
            if let Some(n) = self.line_number.as_mut() {
                *n += 1;
            }
            step.lines.push((self.line_number, line));
            // The unterminated last line, handed out at the end, ends where the log does.
            step.ends
                .push(ends.next().unwrap_or(offset + bytes.len() as u64));
        }
    }
}

/// Whether `text` holds a byte that [`strip_terminal_controls`] would drop, other than
/// a line's own `\n` or the `\r` before it.
fn holds_controls(text: &[u8]) -> bool {
    text.iter().enumerate().any(|(i, b)| match *b {
        b'\n' | b'\t' => false,
        b'\r' => text.get(i + 1) != Some(&b'\n'),
        b => b < 0x20 || b == 0x7f || b == 0xc2,
    })
}

/// A line a pattern matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineMatch {
    /// The line as matched: without its terminal escape sequences when that is what
    /// matched, else as written (lossy UTF-8).
    pub(crate) text: String,
    /// The pattern's capture groups (`None` for a group that took no part).
    pub(crate) groups: Vec<Option<String>>,
}

/// Whether `regex` matches `line`, or `line` without its terminal escape sequences (a
/// terminal task's output is full of them).
pub(crate) fn match_line(regex: &Regex, line: &[u8]) -> Option<LineMatch> {
    let raw = String::from_utf8_lossy(line);
    if !may_hold_controls(line) {
        // Nothing to strip: the line as written is the plain line, searched once.
        let captures = regex.captures(&raw)?;
        let groups = groups_of(&captures);
        return Some(LineMatch {
            text: raw.into_owned(),
            groups,
        });
    }
    let plain = strip_terminal_controls(line);
    if let Some(captures) = regex.captures(&plain) {
        let groups = groups_of(&captures);
        return Some(LineMatch {
            text: plain,
            groups,
        });
    }
    let captures = regex.captures(&raw)?;
    let groups = groups_of(&captures);
    Some(LineMatch {
        text: raw.into_owned(),
        groups,
    })
}

/// Whether [`strip_terminal_controls`] could change `line`: it holds an ASCII control
/// other than tab, or the lead byte of a C1 control (`0xC2`), or is not UTF-8 at all
/// (checked by the caller's lossy decoding only when this is true).
fn may_hold_controls(line: &[u8]) -> bool {
    line.iter()
        .any(|b| (*b < 0x20 && *b != b'\t') || *b == 0x7f || *b == 0xc2)
        || std::str::from_utf8(line).is_err()
}

fn groups_of(captures: &regex::Captures<'_>) -> Vec<Option<String>> {
    captures
        .iter()
        .skip(1)
        .map(|g| g.map(|g| g.as_str().to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path (nothing to strip) and the stripping path agree.
    #[test]
    fn a_line_matches_as_written_or_without_its_escapes() {
        let regex = Regex::new("^error: (\\w+)").unwrap();
        let plain = match_line(&regex, b"error: boom").unwrap();
        assert_eq!(
            (plain.text.as_str(), plain.groups.clone()),
            ("error: boom", vec![Some("boom".to_owned())])
        );
        let coloured = match_line(&regex, b"\x1b[31merror\x1b[0m: boom").unwrap();
        assert_eq!(coloured, plain);
        assert!(match_line(&regex, b"no error: here").is_none());
        let tab = match_line(&Regex::new("a\tb").unwrap(), b"a\tb").unwrap();
        assert_eq!(tab.text, "a\tb");
        let latin1 = match_line(&Regex::new("caf").unwrap(), b"caf\xe9").unwrap();
        assert_eq!(latin1.text, "caf\u{fffd}");
    }
}
