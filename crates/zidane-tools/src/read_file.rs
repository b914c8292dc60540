//! The `read_file` tool: a numbered window of a file's lines.

use std::fmt::Write as _;
use std::path::Path;

use async_trait::async_trait;
use serde_json::json;
use zidane_context::{DEFAULT_READ_LIMIT, ReadRange, ReadResult};

use crate::context::ToolContext;
use crate::input::{ReadFileInput, input_schema, parse};
use crate::tool::{Tool, ToolOutput, ToolSpec};

/// The name of the read tool.
pub const READ_FILE: &str = "read_file";

const DESCRIPTION: &str = "\
Reads a window of lines from a text file, numbered from 1 like `cat -n`. Returns up to \
2000 lines by default; use `offset` (lines to skip) and `limit` to page through a long \
file — the result says how many lines remain and which `offset` continues. Use it to read \
a background task's log at the output path `shell` returned.";

/// The builtin `read_file` tool.
pub(crate) struct ReadFileTool;

#[async_trait]
impl Tool for ReadFileTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: READ_FILE.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ReadFileInput>(),
            aliases: Vec::new(),
        }
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ReadFileInput = match parse(READ_FILE, input) {
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
        let range = ReadRange::new(input.offset.unwrap_or(0), input.limit);
        match context
            .context
            .read_file(context.handle, Path::new(&input.path), range)
            .await
        {
            Ok(window) => render(&window),
            Err(error) => ToolOutput::error(format!("{READ_FILE}: {error}")),
        }
    }
}

/// `cat -n` lines, then a footer saying what is left.
fn render(window: &ReadResult) -> ToolOutput {
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
                 `shell` with `tail`)",
                window.offset
            )
        } else {
            format!(
                "(stopped after {bytes} bytes, before the end of the file: {seen} read so \
                 far; continue with offset {next}, or use `shell` with `tail` for its end)"
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
    let mut data = json!({
        "path": window.path.display().to_string(),
        "offset": window.offset,
        "lines": window.lines.len(),
        "total_lines": window.total_lines,
        "remaining": window.remaining,
    });
    if let Some(bytes) = window.stopped_after_bytes {
        data["stopped_after_bytes"] = json!(bytes);
    }
    ToolOutput::ok(text, data)
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
             `shell` with `tail`)"
        );
        assert_eq!(past.data["stopped_after_bytes"], 268_435_456);
        let some = render(&window(0, &["a"], 120_000));
        assert!(
            some.text.ends_with(
                "(stopped after 268435456 bytes, before the end of the file: 120000 lines \
                 read so far; continue with offset 1, or use `shell` with `tail` for its end)"
            ),
            "{}",
            some.text
        );
    }
}
