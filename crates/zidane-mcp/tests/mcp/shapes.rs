//! One result, every way a host shows it: the text alone (Gemini CLI, opencode), the
//! structured content alone (Claude Code, Codex, and any client not known), or both one
//! after the other (qwen-code, Copilot CLI, the Inspector). Each way, the model reads
//! every `<task-notification>` exactly once and the whole result fits the budget.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use zidane_mcp::MCP_DEFAULT_RESULT_BUDGET;

use crate::support::{
    Harness, is_error, start, start_as, start_task, start_with_tasks_as, structured, text,
    until_ended,
};

/// How a host shows a result to its model.
#[derive(Debug, Clone, Copy)]
enum Shows {
    Text,
    Structured,
    Both,
}

/// What the model reads of `result` in a host that shows it as `shows` does.
fn shown(result: &CallToolResult, shows: Shows) -> String {
    let json = || {
        result
            .structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    };
    match shows {
        Shows::Text => text(result),
        Shows::Structured if result.structured_content.is_some() => json(),
        Shows::Structured => text(result),
        Shows::Both if result.structured_content.is_some() => {
            format!("{}\n\n{}", text(result), json())
        }
        Shows::Both => text(result),
    }
}

/// The clients of each way of showing, by the names the hosts send, and one that no
/// table knows (shown the structured content alone: the shape that loses nothing).
const CLIENTS: &[(Option<&str>, Shows)] = &[
    (Some("gemini-cli-mcp-client"), Shows::Text),
    (Some("opencode"), Shows::Text),
    (Some("claude-code"), Shows::Structured),
    (Some("codex-mcp-client"), Shows::Structured),
    (None, Shows::Structured),
    (Some("qwen-cli-mcp-client-zidane"), Shows::Both),
    (Some("copilot-cli"), Shows::Both),
    (Some("inspector-cli"), Shows::Both),
];

async fn client(name: Option<&'static str>) -> Harness {
    match name {
        Some(name) => start_as(name).await,
        None => start().await,
    }
}

fn blocks_of(shown: &str, task: &str) -> usize {
    shown.matches(&format!("<task-id>{task}</task-id>")).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_way_of_showing_shows_each_exit_once() {
    for &(name, shows) in CLIENTS {
        let harness = client(name).await;
        let (id, _, log) = start_task(&harness, "echo done").await;
        until_ended(&harness, &id).await;
        let first = harness.call("shell", json!({ "command": "true" })).await;
        let seen = shown(&first, shows);
        assert_eq!(
            blocks_of(&seen, &id),
            1,
            "{name:?} ({shows:?}) read:\n{seen}"
        );
        assert!(seen.contains(&log), "{name:?}: no log path in\n{seen}");
        assert!(
            seen.contains("Exit code: 0"),
            "{name:?}: no answer in\n{seen}"
        );
        let second = harness.call("list_tasks", json!({})).await;
        let seen = shown(&second, shows);
        assert_eq!(blocks_of(&seen, &id), 0, "{name:?} read it again:\n{seen}");
        harness.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_way_of_showing_keeps_a_large_output_s_end_within_the_budget() {
    for &(name, shows) in CLIENTS {
        let harness = client(name).await;
        let (id, _, _) = start_task(&harness, "echo done").await;
        until_ended(&harness, &id).await;
        let result = harness
            .call("shell", json!({ "command": "seq 1 400000" }))
            .await;
        let seen = shown(&result, shows);
        assert_eq!(
            blocks_of(&seen, &id),
            1,
            "{name:?} ({shows:?}) read:\n{seen}"
        );
        assert!(
            seen.contains("399999\n400000") || seen.contains("399999\\n400000"),
            "{name:?} ({shows:?}): the end is missing:\n{seen}"
        );
        // A host that shows both puts a blank line between them.
        assert!(
            seen.len() <= MCP_DEFAULT_RESULT_BUDGET + 2,
            "{name:?} ({shows:?}): {} bytes shown",
            seen.len()
        );
        harness.close().await;
    }
}

/// A client that shows the text carries the tool's data still, for what reads fields,
/// and its tools' output schemas do not ask for the text a second time.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_shows_the_text_gets_the_data_alone() {
    let harness = start_as("copilot-cli").await;
    let (id, pid, log) = start_task(&harness, "sleep 30").await;
    let killed = harness.call("shell_kill", json!({ "task_id": id })).await;
    let data = structured(&killed);
    assert_eq!(data["exit"]["task_id"], id.as_str(), "{data}");
    assert!(
        data.get("text").is_none() && data.get("notifications").is_none(),
        "{data}"
    );
    let said = text(&killed);
    assert!(said.contains(&id) && said.contains(&log), "{said}");
    crate::support::until_dead(pid).await;
    let listed = harness.client.list_all_tools().await.unwrap();
    for tool in listed {
        if let Some(schema) = tool.output_schema {
            let required = schema.get("required").cloned().unwrap_or_default();
            assert!(
                !required
                    .as_array()
                    .is_some_and(|r| r.iter().any(|f| f == "text")),
                "{}: {schema:?}",
                tool.name
            );
        }
    }
    harness.close().await;
}

/// The Inspector declares the MCP tasks extension but reads a task handle as the call's
/// result: it gets a plain result, structured content and all.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_declares_tasks_but_does_not_follow_them_gets_a_plain_result() {
    let harness = start_with_tasks_as("inspector-cli").await;
    let started = harness
        .call(
            "shell",
            json!({ "command": "sleep 30", "run_in_background": true }),
        )
        .await;
    assert!(!is_error(&started), "{}", text(&started));
    assert_eq!(structured(&started)["task_id"], "bash_1", "{started:?}");
    assert!(
        text(&started).starts_with("Started bash_1"),
        "{}",
        text(&started)
    );
    harness.close().await;
}
