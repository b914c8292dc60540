//! A background task that asks a question, answered through the agent: the model is
//! offered the input and screen tools by the local context, a terminal prompt is
//! awaited, answered with `shell_input`, and the task's exit is delivered.

use serde_json::json;
use zidane::agent::ToolCall;
use zidane::prelude::*;

use super::support::Local;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_prompt_is_answered_through_the_agent() {
    let mut local = Local::new(|_| ScriptedModel::new().text("ready"));
    // What the model is offered: the local context takes input and has terminals.
    local.agent.run(RunOptions::new("hi")).await.unwrap();
    let offered: Vec<String> = local
        .last_request()
        .tools
        .iter()
        .map(|tool| tool.name.clone())
        .collect();
    assert!(
        offered.iter().any(|n| n == "shell_input") && offered.iter().any(|n| n == "shell_screen"),
        "{offered:?}"
    );

    let call = |id: &str, tool: &str, input: serde_json::Value| {
        local.agent.call_tool(ToolCall::new(id, tool, input))
    };
    let started = call(
        "c1",
        "shell",
        json!({
            "command": "read -p 'Deploy to production? [y/N] ' answer; echo \"answer=$answer\"",
            "run_in_background": true,
            "tty": true,
        }),
    )
    .await
    .unwrap();
    assert!(!started.is_error, "{}", started.text);
    let task_id = started.data["task_id"].as_str().unwrap().to_owned();
    let ready = call(
        "c2",
        "wait_task",
        json!({ "task_id": task_id, "until": { "pattern": "\\[y/N\\] $" } }),
    )
    .await
    .unwrap();
    assert!(!ready.is_error, "{}", ready.text);
    let answered = call(
        "c3",
        "shell_input",
        json!({ "task_id": task_id, "text": "y", "keys": ["enter"] }),
    )
    .await
    .unwrap();
    assert!(!answered.is_error, "{}", answered.text);
    assert!(answered.text.contains("answer=y"), "{}", answered.text);

    let exit = local.next_exit().await;
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    assert!(local.agent.has_pending_task_notifications());
    local.destroy_and_check().await;
}
