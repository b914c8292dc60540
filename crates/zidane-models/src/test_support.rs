//! A conversation that exercises every mapping rule, shared by the providers' tests.

use serde_json::json;
use zidane_llm::ModelRequest;
use zidane_wire::{ContentBlock, Role, TaskId, TaskNotification, TaskStatus, ToolSpec, Turn};

use crate::assemble::{Assemble, Flow};
use zidane_llm::{DeltaSink, ModelDelta, ModelError, ModelResponse};

/// A `<task-notification>` block as the agent renders it.
pub(crate) fn notification() -> String {
    TaskNotification {
        task_id: TaskId::parse("bash_1").unwrap(),
        status: TaskStatus::Exited,
        detached: false,
        exit_code: 2,
        signal: None,
        command: "cargo build".to_owned(),
        output_file: "/home/u/.zidane/sessions/s1/tasks/bash_1.20260523-024147-123.log".to_owned(),
        duration_ms: 4200,
        summary: "cargo build (4.2s) — exited 2".to_owned(),
        log_write_failure: None,
        reason: None,
    }
    .render()
}

fn text(text: &str) -> ContentBlock {
    ContentBlock::Text {
        text: text.to_owned(),
    }
}

/// System prompt, tools, a background call, an error result, the turn's end, and a
/// wake turn opening with a notification, then a prompt.
pub(crate) fn conversation() -> ModelRequest {
    ModelRequest {
        system: Some("You are a careful engineer.".to_owned()),
        turns: vec![
            Turn {
                role: Role::User,
                content: vec![text("Build it in the background.")],
            },
            Turn {
                role: Role::Assistant,
                content: vec![
                    text("Starting the build."),
                    ContentBlock::ToolUse {
                        id: "call_1".to_owned(),
                        name: "shell".to_owned(),
                        input: json!({ "command": "cargo build", "run_in_background": true }),
                    },
                    ContentBlock::ToolUse {
                        id: "call_2".to_owned(),
                        name: "read_file".to_owned(),
                        input: json!({ "path": "missing.txt" }),
                    },
                ],
            },
            Turn {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "call_1".to_owned(),
                        content: "Started bash_1 (pid 4242). Output: /tmp/bash_1.log".to_owned(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "call_2".to_owned(),
                        content: "read_file: missing.txt does not exist".to_owned(),
                        is_error: true,
                    },
                ],
            },
            Turn {
                role: Role::Assistant,
                content: vec![text("Building; I will be told when it ends.")],
            },
            Turn {
                role: Role::User,
                content: vec![text(&notification()), text("Why did it fail?")],
            },
        ],
        tools: vec![ToolSpec {
            name: "shell".to_owned(),
            description: "Runs a command.".to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": { "command": { "type": "string" } },
                "required": ["command"],
            }),
            aliases: vec!["bash".to_owned()],
            ..Default::default()
        }],
    }
}

/// Feeds `(event name, data)` pairs to an assembler, recording deltas.
pub(crate) fn assemble<A: Assemble>(
    mut assembler: A,
    events: &[(&str, &str)],
) -> (Result<ModelResponse, ModelError>, Vec<ModelDelta>) {
    let deltas = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = deltas.clone();
    let sink = DeltaSink::new(move |delta| seen.lock().unwrap().push(delta.clone()));
    let mut done = false;
    for (name, data) in events {
        match assembler.event(name, data, &sink) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Done) => {
                done = true;
                break;
            }
            Err(error) => return (Err(error), deltas.lock().unwrap().clone()),
        }
    }
    let response = assembler.finish(done, &sink);
    let deltas = deltas.lock().unwrap().clone();
    (response, deltas)
}
