//! The `read_file` tool: a numbered window of a file's lines.

use std::fmt::Write as _;
use std::path::Path;

use async_trait::async_trait;
use serde_json::json;
use zidane_context::{DEFAULT_READ_LIMIT, ReadRange, ReadResult};

use crate::input::{ReadFileInput, input_schema, parse};
use crate::{Tool, ToolContext, ToolOutput, ToolSpec};

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
    let footer = if window.total_lines == 0 {
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
    ToolOutput::ok(
        text,
        json!({
            "path": window.path.display().to_string(),
            "offset": window.offset,
            "lines": window.lines.len(),
            "total_lines": window.total_lines,
            "remaining": window.remaining,
        }),
    )
}

fn lines(n: usize) -> String {
    format!("{n} {}", noun(n))
}

fn noun(n: usize) -> &'static str {
    if n == 1 { "line" } else { "lines" }
}
