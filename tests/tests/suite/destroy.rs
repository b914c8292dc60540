//! `Agent::destroy` kills every running task, and its logs are complete and closed by the
//! time it returns.

use zidane::agent::{DestroyStep, StepOutcome};
use zidane::prelude::*;
use zidane_test_support::live_processes_in_group;

use super::support::{Local, bg, has_open_descriptor, until};

/// Says it is ready, then on SIGTERM writes a last line and exits 7.
const GRACEFUL: &str =
    "trap 'echo got TERM; exit 7' TERM; echo ready; while :; do sleep 0.05; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_kills_every_task_and_flushes_its_log() {
    let mut local = Local::new(|_| {
        ScriptedModel::new()
            .respond(
                ModelResponse::tool_use("", "shell", bg(GRACEFUL))
                    .with_tool_use("", "shell", bg("sleep 600"))
                    .with_tool_use("", "shell", bg("echo quick")),
            )
            .text("three started")
    });
    local.agent.run(RunOptions::new("start")).await.unwrap();
    let quick = local.next_exit().await;
    assert_eq!(quick.task_id.to_string(), "bash_3");
    let starts = local.starts();
    let graceful_log = starts[0].output_path.clone();
    // The trap must be set before the kill comes: wait for the line printed after it.
    until(|| std::fs::read_to_string(&graceful_log).is_ok_and(|log| log == "ready\n")).await;

    let report = local.agent.destroy().await.unwrap();
    assert_eq!(
        report.outcome(DestroyStep::DestroyHandle),
        Some(&StepOutcome::Done)
    );

    // Killed, both: their exits fired during destroy, and nothing is left to deliver.
    let mut killed = [local.next_exit().await, local.next_exit().await];
    killed.sort_by_key(|exit| exit.task_id);
    assert_eq!(killed[0].task_id.to_string(), "bash_1");
    assert_eq!(
        (killed[0].status, killed[0].exit_code, killed[0].signal),
        (TaskStatus::Killed, 7, None)
    );
    assert_eq!(killed[1].task_id.to_string(), "bash_2");
    assert_eq!(killed[1].status, TaskStatus::Killed);
    assert!(!local.agent.has_pending_task_notifications());

    // Flushed: what the task wrote while dying is on disk when destroy returns.
    // (Some shells also report the killed `sleep`, "Terminated", in between.)
    let log = std::fs::read_to_string(&graceful_log).unwrap();
    assert!(
        log.starts_with("ready\n") && log.ends_with("got TERM\n"),
        "{log:?}"
    );
    for start in &starts {
        assert_eq!(live_processes_in_group(start.pid), Vec::<u32>::new());
        assert!(
            !has_open_descriptor(&start.output_path),
            "{} is still open",
            start.output_path.display()
        );
    }
    assert!(matches!(
        local.agent.run(RunOptions::new("again")).await,
        Err(AgentError::Destroyed)
    ));
}
