//! No process escapes: descendants that leave the process group (`setsid`, a double
//! fork) end with their task — on `kill_background` and on `destroy` — because they
//! carry the task's owner marker.

use zidane_context::{BackgroundStarted, ExecutionContext, TaskStatus};
use zidane_test_support::{TokenCleanup, processes_with_env, unique_token};

use crate::support::*;

/// The variable each test puts a unique token in, to find its processes in `/proc`.
pub const TOKEN_VAR: &str = "ZIDANE_TEST_ESCAPE_TOKEN";

/// Live processes (see [`alive`]: one inside `do_exit` is dead too) whose environment
/// holds `TOKEN_VAR=token`: read straight from `/proc`, independently of the crate's
/// own scan.
pub fn processes_with_token(token: &str) -> Vec<u32> {
    processes_with_env(TOKEN_VAR, token)
        .into_iter()
        .filter(|&pid| alive(pid))
        .collect()
}

/// Starts `command` with a fresh token; waits until a process with the token has left
/// the task's group (the escapee exists).
async fn start_escaping(f: &Fixture, command: &str) -> (BackgroundStarted, TokenCleanup) {
    let token = unique_token("escape");
    let options = f.options().env(TOKEN_VAR, &token);
    let started = f
        .context
        .exec_background(f.handle, command, options)
        .await
        .unwrap();
    let cleanup = TokenCleanup::new(TOKEN_VAR, token);
    let leader = started.pid;
    eventually("a process of the task left its group", || {
        processes_with_token(cleanup.token())
            .iter()
            .any(|&pid| !group_members(leader).contains(&pid))
    })
    .await;
    (started, cleanup)
}

/// Commands whose descendants escape the group, with and without holding the log.
const ESCAPING: [&str; 4] = [
    "setsid sleep 1000 & sleep 1000",
    "setsid sleep 1000 >/dev/null 2>&1 </dev/null & sleep 1000",
    "(setsid sh -c 'sleep 1000 & wait' &) ; sleep 1000",
    "(sh -c 'setsid sleep 1000 >/dev/null 2>&1 &' &) ; sleep 1000",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_background_ends_descendants_that_left_the_group() {
    for command in ESCAPING {
        let f = Fixture::new().await;
        let (started, cleanup) = start_escaping(&f, command).await;
        let exit = f.kill(started.task_id).await;
        assert_eq!(exit.status, TaskStatus::Killed, "{command}");
        assert_eq!(
            processes_with_token(cleanup.token()),
            Vec::<u32>::new(),
            "survivors of {command:?} after kill_background"
        );
        f.context.destroy(f.handle).await.unwrap();
    }
}

/// A process that escapes *during* the kill (started by a `TERM` trap, after the
/// signal went out) ends too: the kill looks for escapees only once the task settled.
/// (Looking while the group dies, to overlap the two, was tried and dropped: reading a
/// dying process's environment is dearer than reading it once the group is gone.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_background_ends_what_escapes_while_the_group_dies() {
    for _ in 0..5 {
        let f = Fixture::new().await;
        let token = unique_token("dying");
        let cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
        let exits = Exits::default();
        let options = exits.attach(f.options().env(TOKEN_VAR, &token));
        let command = "trap 'setsid sleep 1000 >/dev/null 2>&1 </dev/null & exit 0' TERM; \
                       echo ready; while :; do sleep 0.01; done";
        let started = f
            .context
            .exec_background(f.handle, command, options)
            .await
            .unwrap();
        log_lines(&started.output_path, 1).await;
        let exit = f.kill(started.task_id).await;
        assert_eq!(exit.status, TaskStatus::Killed);
        assert_eq!(
            processes_with_token(cleanup.token()),
            Vec::<u32>::new(),
            "the trap's escapee survived kill_background"
        );
        f.context.destroy(f.handle).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_ends_descendants_that_left_the_group() {
    for command in ESCAPING {
        let f = Fixture::new().await;
        let (_started, cleanup) = start_escaping(&f, command).await;
        f.context.destroy(f.handle).await.unwrap();
        assert_eq!(
            processes_with_token(cleanup.token()),
            Vec::<u32>::new(),
            "survivors of {command:?} after destroy"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_ends_the_escapee_of_a_task_that_already_exited() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let token = unique_token("exited");
    let cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
    let options = exits.attach(f.options().env(TOKEN_VAR, &token));
    // The task itself exits at once; its daemon lives on outside the group.
    f.context
        .exec_background(
            f.handle,
            "setsid sleep 1000 >/dev/null 2>&1 </dev/null &",
            options,
        )
        .await
        .unwrap();
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.status, TaskStatus::Exited);
    eventually("the daemon runs", || {
        !processes_with_token(&token).is_empty()
    })
    .await;

    f.context.destroy(f.handle).await.unwrap();
    assert_eq!(processes_with_token(cleanup.token()), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_foreground_command_takes_its_escapees() {
    let f = Fixture::new().await;
    let token = unique_token("exec");
    let cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
    let mut options = zidane_context::ExecOptions::default();
    options.spec.env.insert(TOKEN_VAR.to_owned(), token.clone());
    options.timeout = Some(std::time::Duration::from_millis(300));
    let output = f
        .context
        .exec(
            f.handle,
            "setsid sleep 1000 >/dev/null 2>&1 </dev/null & sleep 1000",
            options,
        )
        .await
        .unwrap();
    assert!(output.timed_out);
    assert_eq!(processes_with_token(cleanup.token()), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_process_carries_the_owner_marker() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f.start("echo \"$ZIDANE_TASK_OWNER\"", &exits).await;
    exits.wait_for(1).await;
    let marker = read_log(&started.output_path);
    let marker = marker.trim();
    // z1:<pid>:<start time>:<nonce>:<task id>
    let fields: Vec<&str> = marker.split(':').collect();
    assert_eq!(fields.len(), 5, "{marker:?}");
    assert_eq!(fields[0], "z1");
    assert_eq!(fields[1], std::process::id().to_string());
    assert_eq!(fields[4], started.task_id.to_string());
    assert_eq!(zidane_process::OWNER_MARKER_ENV, "ZIDANE_TASK_OWNER");
}
