//! Killed means killed: a task whose shell already exited, while something it started
//! still holds the log open, is `Killed` by the signal that ended it when our kill or
//! `destroy` ends it, with the shell's own exit code beside it.

use zidane_context::{ExecutionContext, Signal, TaskStatus};

use crate::support::*;

/// Starts `command` (which prints `started` and leaves its shell's child running) and
/// waits until the line is in the log and the shell itself has exited.
async fn start_with_shell_gone(
    f: &Fixture,
    command: &str,
    exits: &Exits,
) -> zidane_context::BackgroundStarted {
    let started = f.start(command, exits).await;
    log_lines(&started.output_path, 1).await;
    // Exited as its parent sees it (a zombie), not only inside `do_exit`: a kill that
    // comes sooner finds the shell still running, and is rightly told apart.
    eventually("the task's shell exited", || exited(started.pid)).await;
    // Its child still holds the output open: the task runs on.
    assert!(exits.all().is_empty());
    started
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_after_the_shell_exited_reports_killed_by_sigterm() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = start_with_shell_gone(&f, "sleep 300 & echo started; exit 3", &exits).await;

    let exit = f.kill(started.task_id).await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::TERM));
    assert_eq!(exit.exit_code, 143);
    assert_eq!(exit.leader_exit_code, Some(3));
    assert_eq!(exits.wait_for(1).await, vec![exit.clone()]);
    let entry = &f.context.list_background(f.handle).await.unwrap()[0];
    assert_eq!(entry.exit_info().unwrap().leader_exit_code, Some(3));
    assert_eq!(
        (entry.status(), entry.signal()),
        (TaskStatus::Killed, Some(Signal::TERM))
    );
    assert_eq!(group_members(started.pid), Vec::<u32>::new());
}

/// A child that ignores SIGTERM is ended by SIGKILL after the grace: that is the
/// signal reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_ignores_sigterm_is_reported_killed_by_sigkill() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let command = "sh -c 'trap \"\" TERM; echo trapped; sleep 300' & echo started";
    let started = start_with_shell_gone(&f, command, &exits).await;
    // The child ignores SIGTERM only once its trap is set.
    log_lines(&started.output_path, 2).await;

    let exit = f.kill(started.task_id).await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!((exit.signal, exit.exit_code), (Some(Signal::KILL), 137));
    assert_eq!(exit.leader_exit_code, Some(0));
    assert_eq!(group_members(started.pid), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_after_the_shell_exited_reports_killed() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = start_with_shell_gone(&f, "sleep 300 & echo started", &exits).await;

    f.context.destroy(f.handle).await.unwrap();
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::TERM));
    assert_eq!(exit.leader_exit_code, Some(0));
    assert_eq!(group_members(started.pid), Vec::<u32>::new());
}

/// A task that ended on its own before the kill stays `Exited`, with no leader code
/// beside it: the kill changed nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_after_the_task_ended_keeps_its_own_exit() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f.start("exit 4", &exits).await;
    let ended = exits.wait_for(1).await.remove(0);
    let exit = f.kill(started.task_id).await;
    assert_eq!(exit, ended);
    assert_eq!(
        (exit.status, exit.exit_code, exit.signal),
        (TaskStatus::Exited, 4, None)
    );
    assert_eq!(exit.leader_exit_code, None);
}
