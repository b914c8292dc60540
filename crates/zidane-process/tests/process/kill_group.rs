//! A kill ends the whole process group: TERM, KILL after the grace period, bounded.

use std::time::Instant;

use zidane_context::{ExecutionContext, Signal, TaskId, TaskStatus};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_takes_children_and_grandchildren() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    // A child and a grandchild, each printing its pid.
    let started = f
        .start(
            "sleep 1000 & echo $!; sh -c 'sleep 1000 & echo $!; wait' & wait",
            &exits,
        )
        .await;
    let pids = pids_in(&log_lines(&started.output_path, 2).await);
    assert_eq!(pids.len(), 2);
    eventually("the group has its four processes", || {
        group_members(started.pid).len() >= 4
    })
    .await;

    let exit = f.kill(started.task_id).await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::TERM));
    assert_eq!(exit.exit_code, 143);
    // Settled means every holder of the output pipe is gone: nothing of the group lives.
    assert_eq!(group_members(started.pid), Vec::<u32>::new());
    for pid in pids {
        assert!(!alive(pid), "descendant {pid} survived the kill");
    }
    assert_eq!(exits.all(), vec![exit]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_ignoring_term_is_escalated_to_kill() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    // Ignored signals stay ignored across exec, so the sleeps ignore TERM too.
    let started = f
        .start(
            "trap '' TERM; echo ready; while :; do sleep 1; done",
            &exits,
        )
        .await;
    log_lines(&started.output_path, 1).await;

    let asked = Instant::now();
    let exit = f.kill(started.task_id).await;
    let took = asked.elapsed();
    assert!(
        took >= GRACE,
        "SIGKILL came before the grace period ended: {took:?}"
    );
    assert!(took < GRACE + WAIT, "kill took {took:?}");
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::KILL));
    assert_eq!(exit.exit_code, 137);
    assert_eq!(group_members(started.pid), Vec::<u32>::new());
    assert_eq!(read_log(&started.output_path), "ready\n");
}

/// `kill_background` tells the task's supervisor of the kill only if the group has not
/// died by the first escalation deadline; a caller that gives up before then (its
/// future dropped) must not leave a task that ignores `SIGTERM` running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_whose_caller_gives_up_still_escalates() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f
        .start(
            "trap '' TERM; echo ready; while :; do sleep 1; done",
            &exits,
        )
        .await;
    log_lines(&started.output_path, 1).await;

    let asked = Instant::now();
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(5),
        f.context.kill_background(f.handle, started.task_id),
    )
    .await;
    assert!(
        gave_up.is_err(),
        "a TERM-ignoring task cannot be killed in 5 ms"
    );
    let exit = exits.wait_for(1).await.remove(0);
    let took = asked.elapsed();
    assert!(
        took >= GRACE,
        "SIGKILL came before the grace period ended: {took:?}"
    );
    assert!(took < GRACE + WAIT, "the kill took {took:?}");
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::KILL));
    // The leader's child may still be inside `exit` (it has closed the log already).
    eventually("the group is gone", || {
        group_members(started.pid).is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_is_bounded_when_an_escaped_process_holds_the_log_open() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    // `setsid` leaves the group (and killpg's reach) but keeps the output pipe.
    let started = f.start("setsid sleep 1000 & echo $!; wait", &exits).await;
    let escaped = pids_in(&log_lines(&started.output_path, 1).await)[0];
    eventually("the escaped process runs", || alive(escaped)).await;

    let asked = Instant::now();
    let exit = f.kill(started.task_id).await;
    let took = asked.elapsed();
    kill_pid(escaped);
    assert!(took < GRACE + WAIT, "kill took {took:?}");
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.exit_code, 143);
    assert_eq!(exits.all().len(), 1);
    assert_eq!(read_log(&started.output_path), format!("{escaped}\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_is_idempotent_and_returns_the_cached_exit() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f.start("exit 7", &exits).await;
    let natural = exits.wait_for(1).await.remove(0);
    assert_eq!((natural.status, natural.exit_code), (TaskStatus::Exited, 7));

    // The group is long gone (ESRCH): the kill is silent and returns the cached exit.
    for _ in 0..2 {
        let exit = f
            .context
            .kill_background(f.handle, started.task_id)
            .await
            .unwrap();
        assert_eq!(exit.as_ref(), Some(&natural));
    }
    assert_eq!(exits.all().len(), 1, "on_exit fired again");

    let unknown = TaskId::from_number(99);
    assert_eq!(
        f.context.kill_background(f.handle, unknown).await.unwrap(),
        None
    );
    let other = f.context.create_handle().await.unwrap();
    assert_eq!(
        f.context
            .kill_background(other, started.task_id)
            .await
            .unwrap(),
        None,
        "another handle's task is unknown here"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_we_did_not_send_is_an_exit_with_128_plus_signo() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    f.start("kill -USR1 $$", &exits).await;
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.status, TaskStatus::Exited);
    assert_eq!(exit.signal, Some(Signal::from_number(10).unwrap()));
    assert_eq!(exit.exit_code, 138);
}

/// The caller of a kill sends `SIGTERM` itself, so the task may die of it before its
/// supervisor has even seen the request: it must still end `Killed`, every time (a
/// task once ended `Exited` here when the request was recorded after the signal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_dies_of_our_term_at_once_still_ends_killed() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    for round in 0..100 {
        let started = f.start("sleep 1000", &exits).await;
        let exit = f.kill(started.task_id).await;
        assert_eq!(
            (exit.status, exit.signal),
            (TaskStatus::Killed, Some(Signal::TERM)),
            "round {round}"
        );
    }
}
