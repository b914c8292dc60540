//! The shell tool over a mock: foreground results, background starts, sinks.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use insta::assert_snapshot;
use serde_json::json;
use zidane_context::{
    Capabilities, DetachedTasks, ExecOptions, ExecOutput, ExecutionContext, ExecutionHandle,
    ReadRange, ReadResult, Result, Signal,
};
use zidane_tools::ToolContext;

use super::common::{Harness, show};

fn exec_output(output: &str, exit_code: i32) -> ExecOutput {
    ExecOutput {
        output: output.to_owned(),
        exit_code,
        signal: None,
        timed_out: false,
        cancelled: false,
        truncated_bytes: 0,
        duration: Duration::from_millis(5),
    }
}

#[tokio::test]
async fn foreground_output_and_exit_code() {
    let harness = Harness::new().await;
    harness
        .mock
        .set_exec_handler(|command, _| exec_output(&format!("ran {command}\n"), 0));
    let output = harness.call("shell", json!({ "command": "echo hi" })).await;
    assert_snapshot!("shell_foreground", show(&output));
}

#[tokio::test]
async fn foreground_nonzero_exit_is_not_a_tool_error() {
    let harness = Harness::new().await;
    harness
        .mock
        .set_exec_handler(|_, _| exec_output("error: no such file\n", 2));
    let output = harness
        .call("shell", json!({ "command": "cat nope" }))
        .await;
    assert_snapshot!("shell_foreground_exit_2", show(&output));
}

#[tokio::test]
async fn foreground_empty_output() {
    let harness = Harness::new().await;
    let output = harness.call("shell", json!({ "command": "true" })).await;
    assert_snapshot!("shell_foreground_no_output", show(&output));
}

#[tokio::test]
async fn foreground_signal_and_truncation() {
    let harness = Harness::new().await;
    harness.mock.set_exec_handler(|_, _| ExecOutput {
        signal: Some(Signal::from_number(11).unwrap()),
        truncated_bytes: 4096,
        ..exec_output("...tail of the output\n", 139)
    });
    let output = harness.call("shell", json!({ "command": "./crash" })).await;
    assert_snapshot!("shell_foreground_signal_truncated", show(&output));
}

#[tokio::test]
async fn foreground_timeout_is_passed_and_reported() {
    let harness = Harness::new().await;
    let seen = Arc::new(Mutex::new(None));
    let sink = seen.clone();
    harness
        .mock
        .set_exec_handler(move |_, options: &ExecOptions| {
            *sink.lock().unwrap() = Some((options.timeout, options.cancel.is_some()));
            ExecOutput {
                signal: Some(Signal::TERM),
                timed_out: true,
                ..exec_output("started\n", 143)
            }
        });
    let output = harness
        .call(
            "shell",
            json!({ "command": "sleep 60", "timeout_ms": 5000 }),
        )
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        Some((Some(Duration::from_secs(5)), true)),
        "timeout and cancel token reach the context"
    );
    assert_snapshot!("shell_foreground_timeout", show(&output));
}

#[tokio::test]
async fn foreground_cancellation_is_passed_and_reported() {
    let harness = Harness::new().await;
    harness.context.cancel().cancel();
    harness.mock.set_exec_handler(|_, options: &ExecOptions| {
        let cancelled = options.cancel.as_ref().is_some_and(|c| c.is_cancelled());
        ExecOutput {
            signal: Some(Signal::TERM),
            cancelled,
            ..exec_output("", 143)
        }
    });
    let output = harness
        .call("shell", json!({ "command": "sleep 60" }))
        .await;
    assert_snapshot!("shell_foreground_cancelled", show(&output));
}

#[tokio::test]
async fn background_start_text_data_and_sinks() {
    let mut harness = Harness::new().await;
    let mut background = harness.context.background().clone();
    background.limits.stall_timeout = Some(Duration::from_secs(45));
    harness.context = harness.context.with_background(background);
    let output = harness
        .call(
            "shell",
            json!({ "command": "npm run build", "run_in_background": true }),
        )
        .await;
    assert_snapshot!("shell_background_started", show(&output));

    let task_id = "bash_1".parse().unwrap();
    {
        let events = harness.events.lock().unwrap();
        assert_eq!(
            events.starts.len(),
            1,
            "on_start fires once, after the start"
        );
        assert_eq!(events.starts[0].0.task_id, task_id);
        assert_eq!(events.starts[0].1, "npm run build");
    }
    let entry = harness.mock.task(task_id).unwrap();
    assert_eq!(
        entry.output_path,
        Path::new("/session/tasks/bash_1.mock.log"),
        "the tasks dir is the output dir"
    );
    assert!(harness.mock.stall(task_id, Duration::from_secs(45)));
    assert!(harness.mock.finish(task_id, 0));
    let events = harness.events.lock().unwrap();
    assert_eq!(
        events.stalls.len(),
        1,
        "the stall sink is the task's on_stall"
    );
    assert_eq!(events.exits.len(), 1, "the exit sink is the task's on_exit");
    assert_eq!(events.exits[0].exit_code, 0);
}

#[tokio::test]
async fn background_budgets_in_the_foreground_are_refused() {
    let harness = Harness::new().await;
    let output = harness
        .call("shell", json!({ "command": "make", "cpu_time_ms": 1000 }))
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything());
    assert_snapshot!("shell_foreground_with_cpu_budget", show(&output));
}

#[tokio::test]
async fn background_start_failure_is_an_error_result() {
    let harness = Harness::new().await;
    harness
        .mock
        .destroy(harness.context.handle())
        .await
        .unwrap();
    let output = harness
        .call(
            "shell",
            json!({ "command": "make", "run_in_background": true }),
        )
        .await;
    assert!(output.is_error);
    assert!(harness.events.lock().unwrap().starts.is_empty());
    assert_snapshot!("shell_background_start_failed", show(&output));
}

/// A context that claims background support but implements none of it.
struct Claims;

#[async_trait]
impl ExecutionContext for Claims {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new(DetachedTasks::ProcessLifetime)
    }
    async fn create_handle(&self) -> Result<ExecutionHandle> {
        Ok(ExecutionHandle::new(1))
    }
    async fn destroy(&self, _: ExecutionHandle) -> Result<()> {
        Ok(())
    }
    async fn exec(&self, _: ExecutionHandle, _: &str, _: ExecOptions) -> Result<ExecOutput> {
        Ok(exec_output("", 0))
    }
    async fn read_file(&self, _: ExecutionHandle, _: &Path, _: ReadRange) -> Result<ReadResult> {
        Err(zidane_context::ContextError::unsupported("read_file"))
    }
}

#[tokio::test]
async fn a_context_without_background_methods() {
    let registry = zidane_tools::ToolRegistry::with_default_tools().unwrap();
    let context = ToolContext::new(Arc::new(Claims), ExecutionHandle::new(1))
        .with_tasks_dir("/session/tasks");
    assert!(context.gate().allowed());
    let mut texts = Vec::new();
    for (tool, input) in [
        (
            "shell",
            json!({ "command": "make", "run_in_background": true }),
        ),
        ("shell_kill", json!({ "task_id": "bash_1" })),
        ("wait_task", json!({ "task_id": "bash_1" })),
    ] {
        let output = registry.dispatch(&context, tool, input).await;
        assert!(output.is_error, "{tool}");
        texts.push(output.text);
    }
    assert_snapshot!("background_unsupported_by_context", texts.join("\n"));
}
