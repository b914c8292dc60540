//! Orphans of a crashed host: a host killed with SIGKILL leaves its tasks running; a
//! new context's `sweep_orphans` ends them, and nothing else.
//!
//! The crashed host is this test binary itself, re-executed to run only
//! [`crashing_host_helper`] (ignored, and inert unless [`HOST`]'s variable is set): it
//! works the same under `cargo test` and `cargo nextest run`, which both run the
//! binary with libtest's arguments.

use std::process::{Command, Stdio};

use zidane_context::{BackgroundOptions, ExecutionContext, TaskId};
use zidane_process::ProcessContext;
use zidane_test_support::{CrashingHost, TokenCleanup, sweep_lock, unique_token};

use crate::escape::{TOKEN_VAR, processes_with_token};
use crate::support::*;

/// The helper, and the variable that gives it the token its task must carry.
const HOST: CrashingHost = CrashingHost::new(
    "orphan_sweep::crashing_host_helper",
    "ZIDANE_TEST_CRASHING_HOST_TOKEN",
);

/// Not a test: the host that crashes. Starts one background task carrying the token
/// it was given, then SIGKILLs itself, so its context never runs `destroy` or `Drop`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for sweep_orphans_ends_the_tasks_of_a_crashed_host"]
async fn crashing_host_helper() {
    HOST.crash_after(async |token| {
        let dir = tempfile::tempdir().unwrap();
        // Without a lifeline, the one thing that would end its tasks at once: what the
        // sweep is for is a host that had none.
        let context = ProcessContext::builder()
            .cwd(dir.path())
            .lifeline(false)
            .build();
        let handle = context.create_handle().await.unwrap();
        context
            .exec_background(
                handle,
                "sleep 1000",
                BackgroundOptions::new(dir.path()).env(TOKEN_VAR, &token),
            )
            .await
            .unwrap();
        (dir, context)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_orphans_ends_the_tasks_of_a_crashed_host() {
    let _lock = tokio::task::spawn_blocking(sweep_lock).await.unwrap();
    let orphan_token = unique_token("orphan");
    let orphan = TokenCleanup::new(TOKEN_VAR, orphan_token.clone());
    // A live context's task and an unrelated process: neither may be touched.
    let live = Fixture::new().await;
    let live_token = unique_token("live");
    let live_cleanup = TokenCleanup::new(TOKEN_VAR, live_token.clone());
    let live_task = live
        .context
        .exec_background(
            live.handle,
            "sleep 1000",
            live.options().env(TOKEN_VAR, &live_token),
        )
        .await
        .unwrap();
    let unrelated_token = unique_token("unrelated");
    let _unrelated_cleanup = TokenCleanup::new(TOKEN_VAR, unrelated_token.clone());
    let mut unrelated = Command::new("sleep")
        .arg("1000")
        .env(TOKEN_VAR, &unrelated_token)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();

    HOST.crash(&orphan_token);
    // The task's shell, or the `sleep` it forked or became: the host died right after
    // starting it, so which of them exist by now is a race, but one at least does.
    let orphans = orphans_with(&orphan_token).await;

    let swept = ProcessContext::new().sweep_orphans().await.unwrap();

    let ours: Vec<_> = swept
        .iter()
        .filter(|s| processes_had_token(&orphans, s.pid))
        .collect();
    assert_eq!(ours.len(), orphans.len(), "{swept:?}");
    for process in ours {
        assert!(process.command_line.ends_with("sleep 1000"), "{process:?}");
        assert_eq!(process.task_id, Some(TaskId::from_number(1)));
        assert_ne!(process.owner.pid, std::process::id());
    }
    assert_eq!(processes_with_token(orphan.token()), Vec::<u32>::new());
    assert!(alive(live_task.pid), "a live context's task was swept");
    assert!(
        swept
            .iter()
            .all(|s| !processes_with_token(live_cleanup.token()).contains(&s.pid))
    );
    assert_eq!(
        unrelated.try_wait().unwrap(),
        None,
        "an unmarked process was swept"
    );
    assert!(swept.iter().all(|s| s.pid != unrelated.id()));

    live.context.destroy(live.handle).await.unwrap();
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_built_to_sweep_on_start_ends_orphans_and_reports_them() {
    let _lock = tokio::task::spawn_blocking(sweep_lock).await.unwrap();
    let token = unique_token("startup");
    let cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
    {
        // No fixture holds the descriptor guard here: hold it while the helper's
        // spawn has descriptors open.
        let _descriptors = descriptors_in_use();
        HOST.crash(&token);
    }
    let orphans = orphans_with(&token).await;

    let context = ProcessContext::builder()
        .sweep_orphans_on_start(true)
        .build();
    let swept = tokio::time::timeout(WAIT, context.startup_sweep())
        .await
        .unwrap()
        .expect("a startup sweep was asked for");
    for orphan in &orphans {
        assert!(
            swept.iter().any(|s| s.pid == *orphan),
            "{orphan} not in {swept:?}"
        );
    }
    assert_eq!(processes_with_token(cleanup.token()), Vec::<u32>::new());
    assert_eq!(ProcessContext::new().startup_sweep().await, None);
}

/// The live processes carrying `token`, once there is one. A process caught inside
/// `execve` (the shell becoming `sleep`) shows an empty environment for a moment, so a
/// single look right after the crash can miss the task that outlived its host.
async fn orphans_with(token: &str) -> Vec<u32> {
    let mut found = Vec::new();
    eventually("the task outlives its crashed host", || {
        found = processes_with_token(token);
        !found.is_empty()
    })
    .await;
    found
}

fn processes_had_token(orphans: &[u32], pid: u32) -> bool {
    orphans.contains(&pid)
}
