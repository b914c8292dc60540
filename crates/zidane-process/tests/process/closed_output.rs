//! A leader that closes its output and keeps running: the task settles at its exit,
//! with its real exit code, and can still be killed.

use std::time::Instant;

use zidane_context::{ExecOptions, ExecutionContext, Signal, TaskStatus};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_settles_at_its_exit_not_at_end_of_file() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let command = format!(
        "echo before; exec >/dev/null 2>&1; {}; exit 5",
        wait_for_file("go")
    );
    let started = f.start(&command, &exits).await;
    log_lines(&started.output_path, 1).await;
    // The output is closed, the leader runs: the task is still running.
    let entry = f.context.list_background(f.handle).await.unwrap().remove(0);
    assert_eq!(entry.status(), TaskStatus::Running);
    assert!(exits.all().is_empty());

    f.release("go");
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 5));
    assert_eq!(read_log(&started.output_path), "before\n");
    assert!(!alive(started.pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_with_closed_output_can_be_killed() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f
        .start("exec >/dev/null 2>&1; echo gone; sleep 1000", &exits)
        .await;
    eventually("the output closed", || {
        std::fs::read_link(format!("/proc/{}/fd/1", started.pid))
            .is_ok_and(|target| target.to_str() == Some("/dev/null"))
    })
    .await;
    let asked = Instant::now();
    let exit = f.kill(started.task_id).await;
    assert!(asked.elapsed() < WAIT);
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::TERM));
    assert_eq!(group_members(started.pid), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_command_with_closed_output_returns_its_exit() {
    let f = Fixture::new().await;
    let out = f
        .context
        .exec(
            f.handle,
            "echo visible; exec >/dev/null 2>&1; sleep 0.2; exit 6",
            ExecOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.output, "visible\n");
    assert_eq!(out.exit_code, 6);
}
