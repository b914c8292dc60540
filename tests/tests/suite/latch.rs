//! The `notified` latch: when the model learned how a task ended by killing it or by
//! reading its log after the exit, no notification follows. A read of a running task's
//! log does not count.
//!
//! Each task here ends in the middle of a run (the model waits for the exit between two
//! calls), which is the only place a kill or a read can come between an exit and the
//! next run.

use serde_json::json;
use zidane::context::Signal;
use zidane::prelude::*;

use super::support::{Local, bg, gated, open};

const SERVER: &str = "echo up; while :; do sleep 1; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_kill_latches_the_notification() {
    let mut local = Local::new(|_| {
        ScriptedModel::new()
            .tool_call("shell", bg(SERVER))
            .text("running")
            .tool_call("shell_kill", json!({ "task_id": "bash_1" }))
            .text("stopped")
            .react(|request| {
                assert!(request.notifications().is_empty(), "{request:?}");
                ModelResponse::text("nothing new")
            })
    });
    local.agent.run(RunOptions::new("serve")).await.unwrap();
    let stopped = local.agent.run(RunOptions::new("stop it")).await.unwrap();
    assert_eq!(stopped.text, "stopped");

    // The kill ended the task during the run; the exit reached the agent and was latched.
    let exit = local.next_exit().await;
    assert_eq!(
        (exit.status, exit.signal),
        (TaskStatus::Killed, Some(Signal::TERM))
    );
    assert!(!local.agent.has_pending_task_notifications());
    let next = local
        .agent
        .run(RunOptions::new("anything new?"))
        .await
        .unwrap();
    assert!(next.notified.is_empty());
    assert_eq!(next.text, "nothing new");
    local.destroy_and_check().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_kill_after_the_exit_latches_it_too() {
    // The task ends on its own mid-run; the model kills it anyway (idempotent: the cached
    // exit comes back) and so knows how it ended.
    let mut local = Local::waiting(
        |dir| {
            ScriptedModel::new()
                .tool_call("shell", bg(&gated(&dir.join("go"), "job")))
                .tool_call("shell_kill", json!({ "task_id": "bash_1" }))
                .react(|request| {
                    let (_, killed, is_error) = request.tool_results()[0];
                    assert!(!is_error, "{killed}");
                    assert!(
                        killed.starts_with("Killed bash_1: exited 0 after "),
                        "{killed}"
                    );
                    ModelResponse::text("it had finished")
                })
                .react(|request| {
                    assert!(request.notifications().is_empty(), "{request:?}");
                    ModelResponse::text("nothing new")
                })
        },
        1,
    );
    let gate = local.path("go");
    let run = {
        let agent = local.agent.clone();
        tokio::spawn(async move { agent.run(RunOptions::new("job")).await })
    };
    // Let the task end while the model "thinks" before its second call.
    super::support::until(|| !local.starts().is_empty()).await;
    open(&gate);
    let exit = local.next_exit().await;
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    assert_eq!(run.await.unwrap().unwrap().text, "it had finished");

    assert!(!local.agent.has_pending_task_notifications());
    let next = local
        .agent
        .run(RunOptions::new("anything new?"))
        .await
        .unwrap();
    assert!(next.notified.is_empty());
    local.destroy_and_check().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_the_log_after_the_exit_latches_the_notification() {
    let mut local = Local::waiting(
        |dir| {
            ScriptedModel::new()
                .tool_call("shell", bg(&gated(&dir.join("go"), "job")))
                .react(|request| {
                    let (_, started, _) = request.tool_results()[0];
                    let path = started
                        .lines()
                        .next()
                        .and_then(|line| line.split_once("Output: "))
                        .map(|(_, path)| path.to_owned())
                        .unwrap();
                    ModelResponse::tool_use("", "read_file", json!({ "path": path }))
                })
                .react(|request| {
                    let (_, log, _) = request.tool_results()[0];
                    assert!(log.contains("done job"), "{log}");
                    ModelResponse::text("read it all")
                })
                .react(|request| {
                    assert!(request.notifications().is_empty(), "{request:?}");
                    ModelResponse::text("nothing new")
                })
        },
        1,
    );
    let gate = local.path("go");
    let run = {
        let agent = local.agent.clone();
        tokio::spawn(async move { agent.run(RunOptions::new("job")).await })
    };
    super::support::until(|| !local.starts().is_empty()).await;
    open(&gate);
    local.next_exit().await;
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.text, "read it all");

    assert!(!local.agent.has_pending_task_notifications());
    let next = local
        .agent
        .run(RunOptions::new("anything new?"))
        .await
        .unwrap();
    assert!(next.notified.is_empty());
    local.destroy_and_check().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_a_running_task_log_does_not_latch() {
    let mut local = Local::new(|dir| {
        ScriptedModel::new()
            .tool_call("shell", bg(&gated(&dir.join("go"), "job")))
            .react(|request| {
                let (_, started, _) = request.tool_results()[0];
                let (_, path) = started
                    .lines()
                    .next()
                    .unwrap()
                    .split_once("Output: ")
                    .unwrap();
                ModelResponse::tool_use("", "read_file", json!({ "path": path }))
            })
            .text("still running")
            .react(|request| {
                let notifications = request.notifications();
                assert_eq!(notifications.len(), 1, "{request:?}");
                ModelResponse::text(notifications[0].summary.clone())
            })
    });
    let outcome = local.agent.run(RunOptions::new("job")).await.unwrap();
    assert_eq!(outcome.text, "still running");
    open(&local.path("go"));
    local.next_exit().await;
    assert!(local.agent.has_pending_task_notifications());
    let next = local.agent.run(RunOptions::new("and now?")).await.unwrap();
    assert_eq!(next.notified.len(), 1);
    assert!(next.text.ends_with("— exited 0"), "{}", next.text);
    local.destroy_and_check().await;
}
