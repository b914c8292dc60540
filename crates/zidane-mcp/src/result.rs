//! A tool's output as an MCP result: the notification blocks first, fitted into the
//! result budget. The text carries them always; the structured content carries them too
//! for a client that may show its model the structured content alone, and only the
//! tool's data for one that shows the text (see [`ResultShape`]), so each block reaches
//! the model once whichever of the three ways its host shows a result.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use zidane_agent::Notifications;
use zidane_tools::ToolOutput;

use crate::budget::keep_end;
use crate::clients::ResultShape;
use crate::schema::ResultText;

/// Refits before giving up on making the structured content fit: each one shrinks the
/// text by what the last one overran.
const REFITS: usize = 4;

/// A tool's output as an MCP result, the drained notification blocks first, fitted into
/// `budget` bytes: the blocks whole (an exit is never cut), then as much of the end of
/// the tool's answer as fits ([`keep_end`]). The structured content never carries a
/// foreground command's `output` a second time. In the [`ResultShape::Full`] shape it
/// carries the blocks and the fitted answer too ([`ResultText`]) and fits the budget as
/// serialised JSON, escapes included; in [`ResultShape::DataOnly`] it is the tool's data
/// alone, and the text fits in what the data's JSON leaves of the budget, since a host
/// that shows both shows them together.
pub(crate) fn tool_result(
    output: ToolOutput,
    told: &Notifications,
    budget: usize,
    shape: ResultShape,
) -> CallToolResult {
    let blocks = told.blocks();
    let mut head = String::new();
    for block in &blocks {
        head.push_str(block);
        head.push('\n');
    }
    if !head.is_empty() {
        head.push('\n');
    }
    let mut data = match output.data {
        serde_json::Value::Object(mut data) => {
            // What a command printed is the text's already (see `schema::output_schema`).
            data.remove(crate::schema::IN_TEXT_ONLY);
            Some(data)
        }
        _ => None,
    };
    let empty = JsonObject::new();
    let mut room = budget.saturating_sub(head.len());
    if shape == ResultShape::DataOnly {
        room = room.saturating_sub(json_len(data.as_ref().unwrap_or(&empty)) + SEPARATOR);
        // Data too large to leave the answer room is itself a listing the text repeats;
        // the answer keeps a share of the budget rather than vanish.
        room = room.max(budget / 4);
    }
    let mut answer = keep_end(&output.text, room, data.as_ref().unwrap_or(&empty));
    let mut structured = None;
    if shape == ResultShape::DataOnly {
        structured = data.take().map(serde_json::Value::Object);
    }
    if let Some(data) = data.take() {
        let mut fitted = with_text(&data, &blocks, &answer);
        for _ in 0..REFITS {
            let size = json_len(&fitted);
            if size <= budget || room == 0 {
                break;
            }
            room = room.saturating_sub(size - budget);
            answer = keep_end(&output.text, room, &data);
            fitted = with_text(&data, &blocks, &answer);
        }
        structured = Some(serde_json::Value::Object(fitted));
    }
    let content = vec![ContentBlock::text(format!("{head}{answer}"))];
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured;
    result
}

/// What a host that shows both puts between the text and the structured content's JSON
/// (Copilot CLI: a blank line).
const SEPARATOR: usize = 2;

fn json_len(data: &JsonObject) -> usize {
    serde_json::to_string(data).map_or(0, |json| json.len())
}

/// The tool's data with what the model reads added.
fn with_text(data: &JsonObject, blocks: &[String], answer: &str) -> JsonObject {
    let mut data = data.clone();
    ResultText {
        notifications: blocks.to_vec(),
        text: answer.to_owned(),
    }
    .add_to(&mut data);
    data
}
