//! A tool's output as an MCP result: the notification blocks first, fitted into the
//! result budget, in both the text and the structured content.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use zidane_agent::Notifications;
use zidane_tools::ToolOutput;

use crate::budget::keep_end;
use crate::schema::ResultText;

/// A tool's output as an MCP result, the drained notification blocks first, fitted into
/// `budget` bytes: the blocks whole (an exit is never cut), then as much of the end of
/// the tool's answer as fits ([`keep_end`]). Hosts show the model either the text or the
/// structured content, so the structured content carries the blocks and the fitted
/// answer too ([`ResultText`]).
pub(crate) fn tool_result(
    output: ToolOutput,
    told: &Notifications,
    budget: usize,
) -> CallToolResult {
    let blocks = told.blocks();
    let mut text = String::new();
    for block in &blocks {
        text.push_str(block);
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    let mut data = match output.data {
        serde_json::Value::Object(data) => Some(data),
        _ => None,
    };
    let room = budget.saturating_sub(text.len());
    let answer = keep_end(
        &output.text,
        room,
        data.as_ref().unwrap_or(&JsonObject::new()),
    );
    text.push_str(&answer);
    let content = vec![ContentBlock::text(text)];
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Some(mut data) = data.take() {
        // A foreground command's output is in the text already: the same end of it.
        if let Some(serde_json::Value::String(full)) = data.get("output") {
            let fitted = keep_end(full, room, &data);
            data.insert("output".to_owned(), fitted.into());
        }
        ResultText {
            notifications: blocks,
            text: answer,
        }
        .add_to(&mut data);
        result.structured_content = Some(serde_json::Value::Object(data));
    }
    result
}
