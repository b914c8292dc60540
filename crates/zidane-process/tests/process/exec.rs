//! Foreground `exec`: output and exit code; timeout, cancel and a dropped call kill
//! the whole group; huge output keeps its tail behind a marker.

use std::time::Duration;

use zidane_context::{CancellationToken, ExecOptions, ExecutionContext, Signal};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_returns_interleaved_output_and_the_exit_code() {
    let f = Fixture::new().await;
    let out = f
        .context
        .exec(
            f.handle,
            "echo out; echo err >&2; exit 3",
            ExecOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.output, "out\nerr\n");
    assert_eq!(out.exit_code, 3);
    assert_eq!(out.signal, None);
    assert!(!out.timed_out && !out.cancelled);
    assert_eq!(out.truncated_bytes, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_whole_group_and_says_so() {
    let f = Fixture::new().await;
    let out = f
        .context
        .exec(
            f.handle,
            "sh -c 'sleep 1000 & echo $!; wait' & echo $$; wait",
            // Long enough for both shells to print their pids on a loaded 2-core machine.
            ExecOptions::new().timeout(Duration::from_secs(2)),
        )
        .await
        .unwrap();
    assert!(out.timed_out);
    assert!(!out.cancelled);
    assert_eq!(out.signal, Some(Signal::TERM));
    assert_eq!(out.exit_code, 143);
    let lines: Vec<String> = out.output.lines().map(str::to_owned).collect();
    let pids = pids_in(&lines);
    assert_eq!(pids.len(), 2, "{lines:?}");
    for pid in pids {
        assert!(!alive(pid), "{pid} survived the timeout");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_kills_the_group() {
    let f = Fixture::new().await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let marker = f.path("started");
    let waiter = tokio::spawn(async move {
        eventually("the command started", || marker.exists()).await;
        trigger.cancel();
    });
    let out = f
        .context
        .exec(
            f.handle,
            // The pid is on the pipe before `started` exists, so a cancel cannot beat it.
            "echo $$; touch started; sleep 1000",
            ExecOptions::new().cancel(cancel),
        )
        .await
        .unwrap();
    waiter.await.unwrap();
    assert!(out.cancelled && !out.timed_out);
    assert_eq!(out.exit_code, 143);
    let pid: u32 = out.output.trim().parse().unwrap();
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_call_kills_the_group() {
    let f = Fixture::new().await;
    let call = f.context.exec(
        f.handle,
        "echo $$ > pid.tmp && mv pid.tmp pid; sleep 1000",
        ExecOptions::new(),
    );
    let pid_file = f.path("pid");
    let dropped = tokio::time::timeout(WAIT, async {
        tokio::select! {
            _ = call => panic!("sleep 1000 finished"),
            () = eventually("the command started", || pid_file.exists()) => {}
        }
    })
    .await;
    assert!(dropped.is_ok());
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    eventually("the dropped command dies", || !alive(pid)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_output_keeps_its_tail_behind_a_marker() {
    let f = Fixture::new().await;
    let out = f
        .context
        .exec(
            f.handle,
            "seq 1 200000",
            ExecOptions::new().max_output_bytes(1000),
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, 0);
    let full_len: u64 = (1..=200_000u64)
        .map(|n| n.to_string().len() as u64 + 1)
        .sum();
    assert_eq!(out.truncated_bytes, full_len - 1000);
    let (marker, tail) = out.output.split_once('\n').unwrap();
    assert_eq!(
        marker,
        format!(
            "[output truncated: the first {} bytes were dropped, the tail follows]",
            full_len - 1000
        )
    );
    assert_eq!(tail.len(), 1000);
    assert!(tail.ends_with("199999\n200000\n"));
}
