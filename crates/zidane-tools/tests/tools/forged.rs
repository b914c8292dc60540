//! Arguments zidane defines that the session's spec does not offer, sent anyway: the
//! call is refused with the reason and nothing runs, whatever the reason they are not
//! offered. Driven through the registry's dispatch, as the agent and `zidane mcp` call.

use insta::assert_snapshot;
use serde_json::json;
use zidane_context::DetachedTasks;
use zidane_tools::{ShellToolOptions, ToolRegistry, create_shell_tool};

use super::common::{Harness, show};

/// A harness whose only tool is a shell built without background mode, the session's
/// gate open.
async fn without_background() -> Harness {
    let mut harness = Harness::new().await;
    assert!(harness.context.gate().allowed());
    let mut registry = ToolRegistry::new();
    registry
        .register(create_shell_tool(
            ShellToolOptions::default().allow_background(false),
        ))
        .unwrap();
    harness.registry = registry;
    harness
}

#[tokio::test]
async fn a_forged_background_flag_on_a_shell_without_background_runs_nothing() {
    let harness = without_background().await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "touch forged; sleep 30", "run_in_background": true }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything(), "a forged flag ran something");
    assert_snapshot!("forged_flag_through_dispatch", show(&output));
}

#[tokio::test]
async fn a_misspelt_background_flag_is_refused_as_the_flag() {
    let harness = without_background().await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "make", "run_in_backgroud": true }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything());
    assert!(
        output.text.contains("without `run_in_background`"),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn every_background_argument_is_refused_where_background_is_not_offered() {
    let harness = without_background().await;
    for (argument, value) in [
        ("notify_on", json!("error")),
        ("stdin", json!("pipe")),
        ("tty", json!(true)),
        ("cpu_time_ms", json!(1000)),
        ("max_output_bytes", json!(100)),
    ] {
        let output = harness
            .call("shell", json!({ "command": "make", argument: value }))
            .await;
        assert!(output.is_error, "{argument}: {}", output.text);
        assert!(
            output
                .text
                .contains(&format!("Run the command without `{argument}`")),
            "{argument}: {}",
            output.text
        );
    }
    assert!(!harness.ran_anything());
}

#[tokio::test]
async fn a_flag_that_asks_for_nothing_runs_the_command_in_the_foreground() {
    let harness = without_background().await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "true", "run_in_background": false }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(!output.text.contains("Note:"), "{}", output.text);
    assert_eq!(output.data["exit_code"], 0);
}

#[tokio::test]
async fn a_terminal_where_the_context_has_none_is_refused_by_name() {
    // The mock's tasks take no input and have no terminal: the gate is open, `tty`
    // and `stdin` are not offered.
    let harness = Harness::detached(DetachedTasks::ProcessLifetime).await;
    assert!(harness.context.gate().allowed() && !harness.context.gate().terminals());
    let output = harness
        .call(
            "shell",
            json!({ "command": "vi", "run_in_background": true, "tty": true }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything());
    assert_snapshot!("forged_tty_through_dispatch", show(&output));
    let output = harness
        .call(
            "shell",
            json!({ "command": "cat", "run_in_background": true, "stdin": "pipe" }),
        )
        .await;
    assert!(output.is_error);
    assert!(output.text.contains("Drop `stdin`"), "{}", output.text);
    assert!(!harness.ran_anything());
}

#[tokio::test]
async fn an_argument_zidane_never_defined_is_dropped_with_a_note() {
    let harness = without_background().await;
    let output = harness
        .call("shell", json!({ "command": "true", "description": "x" }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(
        output
            .text
            .ends_with("Note: shell does not take the argument `description`; it was ignored."),
        "{}",
        output.text
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_forged_flag_over_a_real_context_writes_no_file_and_holds_nothing() {
    use std::sync::Arc;
    use std::time::Duration;

    use zidane_context::ExecutionContext;
    use zidane_process::ProcessContext;
    use zidane_tools::ToolContext;

    let dir = tempfile::tempdir().unwrap();
    let process = Arc::new(ProcessContext::builder().cwd(dir.path()).build());
    let handle = process.create_handle().await.unwrap();
    let context = ToolContext::new(process.clone(), handle).with_tasks_dir(dir.path().join("t"));
    assert!(context.gate().allowed());
    let mut registry = ToolRegistry::new();
    registry
        .register(create_shell_tool(
            ShellToolOptions::default().allow_background(false),
        ))
        .unwrap();
    let marker = dir.path().join("forged");
    let command = format!("touch '{}'; sleep 30", marker.display());
    // Far below the command's own 30 s: a refusal answers at once, a foreground run
    // would not.
    let output = tokio::time::timeout(
        Duration::from_secs(10),
        registry.dispatch(
            &context,
            "shell",
            json!({ "command": command, "run_in_background": true }),
        ),
    )
    .await
    .expect("the forged call held the turn");
    assert!(output.is_error, "{}", output.text);
    assert!(
        output.text.contains("`run_in_background`"),
        "{}",
        output.text
    );
    assert!(!marker.exists(), "the forged command ran");
    assert!(process.list_background(handle).await.unwrap().is_empty());
    process.destroy(handle).await.unwrap();
}
