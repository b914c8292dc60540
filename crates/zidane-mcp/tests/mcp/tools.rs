//! Every tool, through MCP: zidane-tools' own specs, texts and structured data.

use serde_json::json;
use zidane_tools::{BackgroundGate, ToolRegistry};

use crate::support::{is_error, start, start_task, structured, text, until_dead};

#[tokio::test(flavor = "multi_thread")]
async fn the_tools_are_zidane_tools_own_plus_list_tasks() {
    let harness = start().await;
    let tools = harness.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "shell",
            "shell_kill",
            "wait_task",
            "read_file",
            "shell_input",
            "shell_screen",
            "shell_notify",
            "list_tasks"
        ]
    );
    let registry = ToolRegistry::with_default_tools().unwrap();
    // The server's sessions run on the local context, whose shell the description names.
    let local = zidane_process::ProcessContext::new();
    // This client takes no MCP tasks: an exit comes with the next tool result.
    let gate = BackgroundGate::open()
        .with_exit_channel(zidane_tools::ExitChannel::NextToolResult)
        // A foreground command moves under the client's ceiling, as a wait is capped.
        .with_foreground_budget(Some(zidane_mcp::MCP_UNKNOWN_CLIENT_WAIT_CAP));
    for spec in registry.specs(&zidane_tools::SpecView::in_context(gate, &local)) {
        let tool = tools.iter().find(|t| t.name == spec.name).unwrap();
        // The wait's limits are the client's (`waits.rs`); its text is the tool's own.
        let description = if spec.name == "wait_task" {
            zidane_tools::wait_task_description(
                zidane_tools::WaitLimits {
                    default: zidane_mcp::MCP_UNKNOWN_CLIENT_WAIT_CAP,
                    max: zidane_mcp::MCP_UNKNOWN_CLIENT_WAIT_CAP,
                },
                zidane_tools::ExitChannel::NextToolResult,
            )
        } else {
            spec.description.clone()
        };
        assert_eq!(tool.description.as_deref(), Some(description.as_str()));
        assert_eq!(
            serde_json::Value::Object((*tool.input_schema).clone()),
            spec.input_schema,
            "{} input schema",
            spec.name
        );
        assert!(tool.output_schema.is_some(), "{} output schema", spec.name);
    }
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreground_command_returns_its_output_and_exit_code() {
    let harness = start().await;
    let result = harness
        .call("shell", json!({ "command": "echo hi; exit 3" }))
        .await;
    assert!(!is_error(&result));
    assert_eq!(text(&result), "hi\n\nExit code: 3");
    assert_eq!(
        structured(&result),
        // The output once: in `text`, as the model reads it.
        json!({ "exit_code": 3, "text": "hi\n\nExit code: 3" })
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn background_tasks_start_are_killed_waited_read_and_listed() {
    let harness = start().await;
    let (id, pid, log) = start_task(&harness, "sleep 30").await;
    assert_eq!(id, "bash_1");
    assert!(log.contains("/sessions/") && log.contains("/tasks/bash_1."));

    let killed = harness
        .call("shell_kill", json!({ "task_id": "bash_1" }))
        .await;
    assert!(
        text(&killed).starts_with("Killed bash_1: killed (SIGTERM) after"),
        "{}",
        text(&killed)
    );
    assert_eq!(structured(&killed)["exit"]["status"], "killed");
    until_dead(pid).await;

    let (id, _, log) = start_task(&harness, "echo out; sleep 0.2").await;
    let waited = harness.call("wait_task", json!({ "task_id": id })).await;
    assert!(
        text(&waited).starts_with(&format!("{id} ended: echo out; sleep 0.2 (")),
        "{}",
        text(&waited)
    );
    assert_eq!(structured(&waited)["exit"]["exit_code"], 0);

    let read = harness.call("read_file", json!({ "path": log })).await;
    assert!(text(&read).starts_with("     1\tout\n"), "{}", text(&read));
    assert_eq!(structured(&read)["total_lines"], 1);

    let listed = harness.call("list_tasks", json!({})).await;
    let tasks = structured(&listed)["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0]["status"], "killed");
    assert_eq!(tasks[1]["status"], "exited");
    assert!(
        text(&listed).starts_with("bash_1  killed (SIGTERM)  "),
        "{}",
        text(&listed)
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_resource_shows_status_and_log() {
    let harness = start().await;
    let (id, _, _) = start_task(&harness, "echo logged").await;
    harness.call("wait_task", json!({ "task_id": id })).await;
    let read = harness
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new("task://bash_1"))
        .await
        .unwrap();
    let texts: Vec<String> = read
        .contents
        .iter()
        .map(|c| match c {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let status: serde_json::Value = serde_json::from_str(&texts[0]).unwrap();
    assert_eq!(status["status"], "exited");
    assert_eq!(texts[1], "logged\n");
    let missing = harness
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new("task://bash_9"))
        .await;
    assert!(missing.is_err());
    harness.close().await;
}

/// A long answer fits the result budget by its end, in the text and in the structured
/// content alike, and says what was cut.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_output_keeps_its_end_within_the_budget() {
    let harness = start().await;
    let result = harness
        .call(
            "shell",
            json!({ "command": "seq 1 100000; echo failed: the error >&2; exit 1" }),
        )
        .await;
    let shown = text(&result);
    assert!(
        shown.len() <= zidane_mcp::MCP_DEFAULT_RESULT_BUDGET,
        "{}",
        shown.len()
    );
    assert!(
        shown.ends_with("100000\nfailed: the error\n\nExit code: 1"),
        "{shown}"
    );
    assert!(
        shown.starts_with("[") && shown.contains(" bytes (") && shown.contains("run_in_background"),
        "{shown}"
    );
    let data = structured(&result);
    assert!(data.get("output").is_none(), "the output twice: {data}");
    assert_eq!(data["text"], shown);
    assert!(data.to_string().len() <= zidane_mcp::MCP_DEFAULT_RESULT_BUDGET);

    // A log read names the file the rest is in.
    let log = harness.dir.path().join("big.log");
    std::fs::write(
        &log,
        (1..=5000)
            .map(|i| format!("line {i}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let read = harness
        .call("read_file", json!({ "path": log.display().to_string() }))
        .await;
    let shown = text(&read);
    assert!(shown.len() <= zidane_mcp::MCP_DEFAULT_RESULT_BUDGET);
    assert!(
        shown.contains(&format!("the whole of it is in {}", log.display())),
        "{shown}"
    );
    assert!(
        shown.ends_with("(3000 more lines; continue with offset 2000)"),
        "{shown}"
    );
    harness.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn foreground_calls_take_no_task_id_and_are_not_listed() {
    let harness = start().await;
    for n in 0..3 {
        let ran = harness
            .call("shell", json!({ "command": format!("echo {n}") }))
            .await;
        assert!(!is_error(&ran), "{}", text(&ran));
        assert!(structured(&ran).get("task_id").is_none(), "{}", text(&ran));
    }
    let (id, _, _) = start_task(&harness, "echo background").await;
    assert_eq!(id, "bash_1");
    let listed = harness.call("list_tasks", json!({})).await;
    let tasks = structured(&listed)["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 1, "{}", text(&listed));
    assert_eq!(tasks[0]["task_id"], "bash_1");
    harness.close().await;
}
