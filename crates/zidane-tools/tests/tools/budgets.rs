//! Budgets of background tasks, on real processes: wall time and CPU time kill the task
//! and say why; an output cap keeps it running; a kill asked for, a destroy and a budget
//! are told apart.
#![cfg(unix)]

use std::time::Duration;

use serde_json::json;
use zidane_context::{KillReason, Signal, TaskStatus};
use zidane_wire::TaskNotification;

use super::process::Session;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_time_budget_kills_the_task_and_the_notification_says_why() {
    let mut session = Session::new().await;
    let started = session
        .call(
            "shell",
            json!({ "command": "sleep 30", "run_in_background": true, "timeout_ms": 300 }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    let exit = session.next_exit().await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::TERM));
    assert_eq!(
        exit.kill_reason,
        Some(KillReason::WallTime {
            budget: Duration::from_millis(300)
        })
    );
    assert!(exit.duration >= Duration::from_millis(300), "{exit:?}");
    let block = TaskNotification::from_exit(&exit).render();
    assert!(
        block.contains("<reason>wall-time budget of 300ms</reason>"),
        "{block}"
    );
    assert!(
        block.contains("— killed (SIGTERM): wall-time budget of 300ms</summary>"),
        "{block}"
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_time_budget_counts_every_process_of_the_group() {
    let mut session = Session::new().await;
    // Two busy children: the group's CPU time, not one process's, runs out.
    let command = "(while :; do :; done) & (while :; do :; done) & wait";
    let started = session
        .call(
            "shell",
            json!({ "command": command, "run_in_background": true, "cpu_time_ms": 400 }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    let exit = session.next_exit().await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(
        exit.kill_reason,
        Some(KillReason::CpuTime {
            budget: Duration::from_millis(400)
        })
    );
    assert!(
        zidane_wire::exit_summary(&exit).ends_with("killed (SIGTERM): CPU-time budget of 400ms"),
        "{}",
        zidane_wire::exit_summary(&exit)
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_budget_keeps_the_task_running_and_marks_the_log() {
    let mut session = Session::new().await;
    let started = session
        .call(
            "shell",
            json!({
                "command": "yes a | head -c 100000; echo done",
                "run_in_background": true,
                "max_output_bytes": 1000
            }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    let exit = session.next_exit().await;
    assert_eq!(exit.status, TaskStatus::Exited);
    assert_eq!(exit.exit_code, 0);
    assert_eq!(exit.kill_reason, None);
    let log = std::fs::read_to_string(&exit.output_path).unwrap();
    assert!(log.starts_with("a\na\n"), "{log}");
    assert!(!log.contains("done"), "later output is dropped: {log}");
    assert!(log.contains("<output-truncated"), "{log}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_kill_a_destroy_and_a_budget_are_told_apart() {
    let mut session = Session::new().await;
    let killed = session.start("sleep 30").await;
    let output = session
        .call("shell_kill", json!({ "task_id": killed }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(
        session.next_exit().await.kill_reason,
        Some(KillReason::Requested)
    );
    session.start("sleep 30").await;
    let handle = session.context.handle();
    session.context.execution().destroy(handle).await.unwrap();
    assert_eq!(
        session.next_exit().await.kill_reason,
        Some(KillReason::Destroyed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_in_the_wrong_units_are_clear_errors() {
    let session = Session::new().await;
    for (input, field) in [
        (
            json!({ "command": "true", "run_in_background": true, "cpu_time_ms": 0 }),
            "cpu_time_ms",
        ),
        (
            json!({ "command": "true", "run_in_background": true, "max_output_bytes": -5 }),
            "max_output_bytes",
        ),
        (
            json!({ "command": "true", "run_in_background": true, "timeout_ms": -1 }),
            "timeout_ms",
        ),
    ] {
        let output = session.call("shell", input).await;
        assert!(output.is_error);
        assert!(
            output
                .text
                .contains(&format!("`{field}` must be a positive")),
            "{}",
            output.text
        );
    }
    session.close().await;
}
