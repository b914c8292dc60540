//! The in-place first poll against the plain path: the same tasks, started by a context
//! whose supervisors get their first poll in place and by one whose supervisors are
//! `tokio::spawn`ed, end the same way with the same logs.

use std::time::Duration;

use zidane_context::{
    BackgroundOptions, CancellationToken, ExecutionContext, Signal, TaskLimits, TaskStatus,
};

use crate::context::ProcessContext;

/// What a task's end looks like, less what differs from run to run (times, pids).
#[derive(Debug, PartialEq, Eq)]
struct Ending {
    status: TaskStatus,
    exit_code: i32,
    signal: Option<Signal>,
    log: Vec<u8>,
}

/// Commands that exercise every way a supervisor's first poll can find its task:
/// nothing yet, output already waiting, the leader already gone, a descendant holding
/// the pipe, more output than the pipe holds, stderr interleaved with stdout.
const COMMANDS: &[&str] = &[
    "true",
    "printf 'a\\nb\\n'; exit 3",
    "i=0; while [ $i -lt 200 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done",
    "head -c 300000 /dev/zero",
    "(sleep 0.2; echo late) & echo early",
    "sleep 0.3; echo done",
];

/// Runs every command of [`COMMANDS`] (and a killed and a capped task) on `context`.
async fn endings(context: ProcessContext) -> Vec<Ending> {
    let dir = tempfile::tempdir().unwrap();
    let handle = context.create_handle().await.unwrap();
    let wait = |task_id| {
        context.wait_background(
            handle,
            task_id,
            Duration::from_secs(30),
            CancellationToken::new(),
        )
    };
    let mut started = Vec::new();
    for command in COMMANDS {
        let options = BackgroundOptions::new(dir.path());
        started.push(
            context
                .exec_background(handle, command, options)
                .await
                .unwrap(),
        );
    }
    let capped =
        BackgroundOptions::new(dir.path()).limits(TaskLimits::new().max_output_bytes(1000));
    started.push(
        context
            .exec_background(handle, "head -c 5000 /dev/zero", capped)
            .await
            .unwrap(),
    );
    let killed = context
        .exec_background(handle, "sleep 1000", BackgroundOptions::new(dir.path()))
        .await
        .unwrap();
    let mut endings = Vec::new();
    for task in &started {
        let exit = wait(task.task_id).await.unwrap().expect("the task ended");
        endings.push(Ending {
            status: exit.status,
            exit_code: exit.exit_code,
            signal: exit.signal,
            log: std::fs::read(&task.output_path).unwrap(),
        });
    }
    let exit = context
        .kill_background(handle, killed.task_id)
        .await
        .unwrap()
        .expect("the task was running");
    endings.push(Ending {
        status: exit.status,
        exit_code: exit.exit_code,
        signal: exit.signal,
        log: std::fs::read(&killed.output_path).unwrap(),
    });
    context.destroy(handle).await.unwrap();
    endings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_end_the_same_whether_their_first_poll_is_in_place_or_on_the_runtime() {
    let in_place = endings(ProcessContext::new()).await;
    let plain = endings(ProcessContext::new().on_the_plain_path()).await;
    assert_eq!(in_place.len(), plain.len());
    for (index, (a, b)) in in_place.iter().zip(&plain).enumerate() {
        assert_eq!(a, b, "task {index} ended differently on the plain path");
    }
    assert_eq!(in_place[1].exit_code, 3);
    assert_eq!(in_place[3].log.len(), 300_000);
    assert_eq!(in_place[4].log, b"early\nlate\n");
    assert_eq!(in_place.last().map(|e| e.status), Some(TaskStatus::Killed));
}
