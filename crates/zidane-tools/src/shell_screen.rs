//! The `shell_screen` tool: what a terminal task's screen shows now, as text.

use async_trait::async_trait;
use serde_json::json;
use zidane_context::{ContextError, Screen};

use crate::context::ToolContext;
use crate::gate::BackgroundGate;
use crate::input::{ShellScreenArgs, input_schema, parse, parse_task_id};
use crate::output_schema::output_schema;
use crate::tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};

/// The name of the screen tool.
pub const SHELL_SCREEN: &str = "shell_screen";

const DESCRIPTION: &str = "\
Shows what the terminal of a background task started with `tty: true` displays right now, \
as text: every line of the screen and where the cursor is. Use it for programs that redraw \
the screen (`less`, `top`, `vi`, progress bars, menus) where the log holds escape \
sequences rather than what you would see, and to check what a prompt asks before answering \
it with `shell_input`.";

/// The builtin `shell_screen` tool.
pub(crate) struct ShellScreenTool;

#[async_trait]
impl Tool for ShellScreenTool {
    fn spec(&self, _view: &SpecView) -> ToolSpec {
        ToolSpec {
            name: SHELL_SCREEN.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: input_schema::<ShellScreenArgs>(),
            aliases: Vec::new(),
            title: Some("Read a terminal task's screen".to_owned()),
            annotations: ToolAnnotations::READ_ONLY,
            output_schema: Some(output_schema::<Screen>()),
        }
    }

    fn offered(&self, gate: &BackgroundGate) -> bool {
        gate.allowed() && gate.terminals()
    }

    async fn call(&self, context: &ToolContext, input: serde_json::Value) -> ToolOutput {
        let input: ShellScreenArgs = match parse(SHELL_SCREEN, input) {
            Ok(input) => input,
            Err(output) => return output,
        };
        let task_id = match parse_task_id(SHELL_SCREEN, &input.task_id) {
            Ok(task_id) => task_id,
            Err(output) => return output,
        };
        match context
            .execution()
            .read_screen(context.handle(), task_id)
            .await
        {
            Ok(Some(screen)) => ToolOutput::ok(render(task_id, &screen), json!(screen)),
            Ok(None) => ToolOutput::error(format!(
                "{SHELL_SCREEN}: no background task {task_id} in this session. Use a task id \
                 returned by `shell` with `run_in_background`."
            )),
            Err(ContextError::NotATerminal { .. }) => ToolOutput::error(format!(
                "{SHELL_SCREEN}: {task_id} has no terminal (it was not started with `tty: true`); \
                 read its log with `read_file` instead."
            )),
            Err(ContextError::Unsupported { .. }) => ToolOutput::error(format!(
                "{SHELL_SCREEN}: this execution context has no terminals"
            )),
            Err(error) => ToolOutput::error(format!("{SHELL_SCREEN}: {error}")),
        }
    }
}

/// `Screen of bash_1 (24x80, cursor at line 3, column 5):` and the lines, each
/// prefixed by `│` so blank lines and leading spaces stay visible; blank lines at the
/// bottom left out.
fn render(task_id: zidane_context::TaskId, screen: &Screen) -> String {
    let (row, col) = screen.cursor;
    let mut text = format!(
        "Screen of {task_id} ({}, cursor at line {}, column {}{}):",
        screen.size(),
        row + 1,
        col + 1,
        if screen.alternate {
            "; a full-screen program"
        } else {
            ""
        }
    );
    if let Some(title) = &screen.title {
        text.push_str(&format!("\nTitle: {title}"));
    }
    let shown = screen.text();
    if shown.is_empty() {
        text.push_str("\n(the screen is blank)");
    } else {
        for line in shown.split('\n') {
            text.push_str("\n│");
            text.push_str(line);
        }
    }
    text
}
