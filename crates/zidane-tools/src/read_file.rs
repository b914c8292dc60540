//! The `read_file` tool: a numbered window of a file's lines.

use crate::data::{self, ReadFileData};
use std::fmt::Write as _;
use std::path::Path;

use async_trait::async_trait;
use zidane_context::{DEFAULT_READ_LIMIT, ReadRange, ReadResult};

use crate::context::ToolContext;
use crate::input::{ReadFileArgs, input_schema, parse};
use crate::output_schema::output_schema;
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the read tool.
pub const READ_FILE: &str = "read_file";

const DESCRIPTION: &str = "\
Reads a window of lines from a text file, numbered from 1 like `cat -n`. Returns up to \
2000 lines by default; use `offset` (lines to skip) and `limit` to page through a long \
file — the result says how many lines remain and which `offset` continues. A negative \
`offset` counts from the end, like `tail`: -50 gives the last 50 lines of a file of any \
size. Use it to read a background task's log at the output path `shell` returned.";

/// The builtin `read_file` tool.
pub(crate) struct ReadFileTool;

#[async_trait]
impl Tool for ReadFileTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: READ_FILE.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ReadFileArgs>(),
            aliases: Vec::new(),
            title: Some("Read a file or a task's log, from its start or its end".to_owned()),
            annotations: ToolAnnotations::READ_ONLY,
            output_schema: Some(output_schema::<ReadFileData>()),
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ReadFileArgs = match parse(READ_FILE, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        if input.path.trim().is_empty() {
            return ToolOutput::error(format!("{READ_FILE}: `path` is empty; give a file path"));
        }
        if input.path.contains('\0') {
            return ToolOutput::error(format!(
                "{READ_FILE}: `path` contains a NUL byte, which no file path can carry"
            ));
        }
        if input.limit == Some(0) {
            return ToolOutput::error(format!(
                "{READ_FILE}: `limit` must be at least 1 (default {DEFAULT_READ_LIMIT})"
            ));
        }
        let range = range(input.offset.unwrap_or(0), input.limit);
        match context
            .execution()
            .read_file(context.handle(), Path::new(&input.path), range)
            .await
        {
            Ok(window) => render(&window),
            Err(error) => ToolOutput::error(format!("{READ_FILE}: {error}")),
        }
    }
}

/// The range an `offset` asks for: from the start, or for a negative one, `-offset` lines
/// before the end (`limit` lines from there, no further than the end).
fn range(offset: i64, limit: Option<usize>) -> ReadRange {
    let Ok(back) = usize::try_from(offset.unsigned_abs()) else {
        return ReadRange::from_end(usize::MAX, limit);
    };
    if offset >= 0 {
        return ReadRange::new(back, limit);
    }
    let take = limit.unwrap_or(DEFAULT_READ_LIMIT).min(back);
    ReadRange::from_end(back - take, Some(take))
}

/// `cat -n` lines, then a footer saying what is left.
fn render(window: &ReadResult) -> ToolOutput {
    if let Some(before) = window.bytes_before {
        return render_tail(window, before);
    }
    let mut text = String::new();
    for (i, line) in window.lines.iter().enumerate() {
        let _ = writeln!(text, "{:>6}\t{line}", window.offset + i + 1);
    }
    let next = window.offset + window.lines.len();
    let footer = if let Some(bytes) = window.stopped_after_bytes {
        let seen = lines(window.total_lines);
        if window.lines.is_empty() {
            format!(
                "(stopped after {bytes} bytes, before the end of the file: only {seen} \
                 read, so offset {} was not reached; for the end of a file this large use \
                 a negative offset, e.g. -100 for its last 100 lines)",
                window.offset
            )
        } else {
            format!(
                "(stopped after {bytes} bytes, before the end of the file: {seen} read so \
                 far; continue with offset {next}, or use a negative offset for its end)"
            )
        }
    } else if window.total_lines == 0 {
        "(the file is empty)".to_owned()
    } else if window.lines.is_empty() && window.offset >= window.total_lines {
        format!(
            "(offset {} is past the end: the file has {})",
            window.offset,
            lines(window.total_lines)
        )
    } else if window.remaining > 0 {
        format!(
            "({} more {}; continue with offset {next})",
            window.remaining,
            noun(window.remaining)
        )
    } else {
        format!("(end of file; {} in total)", lines(window.total_lines))
    };
    text.push_str(&footer);
    ToolOutput::ok(text, data(window))
}

/// A window read from the end of a file whose start was not reached, so whose line
/// numbers from the start are unknown: its lines are numbered from the end (-1 is the
/// last), the numbers a negative `offset` takes.
fn render_tail(window: &ReadResult, before: u64) -> ToolOutput {
    let from_end = |i: usize| window.total_lines.saturating_sub(window.offset + i);
    let mut text = String::new();
    for (i, line) in window.lines.iter().enumerate() {
        let _ = writeln!(text, "{:>6}\t{line}", -(from_end(i) as i128));
    }
    let first = from_end(0);
    let shown = window.lines.len();
    let after = if window.remaining > 0 {
        format!(
            ", then {} more {}",
            window.remaining,
            noun(window.remaining)
        )
    } else {
        String::new()
    };
    let stopped = match window.stopped_after_bytes {
        Some(bytes) => format!("stopped after {bytes} bytes read back from the end; "),
        None => String::new(),
    };
    let _ = write!(
        text,
        "({stopped}{} read from the end of the file{after}; numbered from the end, -1 is \
         the last; the {before} bytes before line -{first} were not counted; continue back \
         with offset -{})",
        lines(shown),
        first + shown.max(1),
    );
    ToolOutput::ok(text, data(window))
}

/// The structured form of a window.
fn data(window: &ReadResult) -> serde_json::Value {
    data::to_value(&ReadFileData {
        path: window.path.display().to_string(),
        offset: window.offset,
        lines: window.lines.len(),
        total_lines: window.total_lines,
        remaining: window.remaining,
        stopped_after_bytes: window.stopped_after_bytes,
        bytes_before: window.bytes_before,
    })
}

fn lines(n: usize) -> String {
    format!("{n} {}", noun(n))
}

fn noun(n: usize) -> &'static str {
    if n == 1 { "line" } else { "lines" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(offset: usize, lines: &[&str], total_lines: usize) -> ReadResult {
        ReadResult {
            path: "/t/huge.log".into(),
            offset,
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
            total_lines,
            remaining: total_lines - (offset + lines.len()).min(total_lines),
            stopped_after_bytes: Some(268_435_456),
            bytes_before: None,
        }
    }

    #[test]
    fn a_read_that_stopped_says_where_and_what_to_do() {
        let past = render(&window(1_000_000, &[], 120_000));
        assert_eq!(
            past.text,
            "(stopped after 268435456 bytes, before the end of the file: only 120000 lines \
             read, so offset 1000000 was not reached; for the end of a file this large use \
             a negative offset, e.g. -100 for its last 100 lines)"
        );
        assert_eq!(past.data["stopped_after_bytes"], 268_435_456);
        let some = render(&window(0, &["a"], 120_000));
        assert!(
            some.text.ends_with(
                "(stopped after 268435456 bytes, before the end of the file: 120000 lines \
                 read so far; continue with offset 1, or use a negative offset for its end)"
            ),
            "{}",
            some.text
        );
    }

    #[test]
    fn a_negative_offset_is_a_window_counted_from_the_end() {
        assert_eq!(range(3, Some(4)), ReadRange::new(3, Some(4)));
        assert_eq!(range(-3, None), ReadRange::from_end(0, Some(3)));
        assert_eq!(range(-10, Some(4)), ReadRange::from_end(6, Some(4)));
        assert_eq!(range(i64::MIN, Some(1)).limit, Some(1));
    }

    #[test]
    fn a_tail_whose_start_is_unknown_is_numbered_from_the_end() {
        let tail = ReadResult {
            path: "/t/huge.log".into(),
            offset: 1,
            lines: vec!["b".to_owned(), "c".to_owned()],
            total_lines: 4,
            remaining: 1,
            stopped_after_bytes: None,
            bytes_before: Some(1_000),
        };
        let output = render(&tail);
        assert_eq!(
            output.text,
            "    -3\tb\n    -2\tc\n(2 lines read from the end of the file, then 1 more line; \
             numbered from the end, -1 is the last; the 1000 bytes before line -3 were not \
             counted; continue back with offset -5)"
        );
        assert_eq!(output.data["bytes_before"], 1_000);
    }
}
