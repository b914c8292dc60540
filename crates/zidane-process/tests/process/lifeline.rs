//! A host killed with SIGKILL takes its tasks with it: the context's lifeline, a small
//! process outside the host, sees the host's end of its pipe close and ends every
//! process carrying the context's marker, the escapee that left the task's session
//! included. Nothing waits for a later sweep.
//!
//! The crashed host is this test binary re-executed to run only
//! [`crashing_host_helper`] (ignored, and inert unless [`HOST`]'s variable is set).
#![allow(clippy::print_stderr)]

use std::time::{Duration, Instant};

use zidane_context::{BackgroundOptions, ExecutionContext, SandboxPolicy};
use zidane_process::ProcessContext;
use zidane_test_support::{CrashingHost, TokenCleanup, sweep_lock, unique_token};

use crate::escape::{TOKEN_VAR, processes_with_token};
use crate::support::eventually;

/// The helper, and the variable that gives it `token|dir`.
const HOST: CrashingHost = CrashingHost::new(
    "lifeline::crashing_host_helper",
    "ZIDANE_TEST_LIFELINE_HOST",
);

/// How long the lifeline may take to end everything: its TERM, the grace, its rescans.
const GONE_WITHIN: Duration = Duration::from_secs(10);

/// Not a test: the host that crashes. Starts one background task that puts an escapee
/// in a session of its own, waits until the escapee runs, then SIGKILLs itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for a_sigkilled_host_leaves_nothing_running"]
async fn crashing_host_helper() {
    HOST.crash_after(async |input| {
        let mut fields = input.split('|');
        let (token, dir, sandbox) = (
            fields.next().unwrap(),
            fields.next().unwrap(),
            fields.next() == Some("sandboxed"),
        );
        let dir = std::path::PathBuf::from(dir);
        let mut builder = ProcessContext::builder()
            .cwd(&dir)
            .kill_grace(Duration::from_millis(200));
        if sandbox {
            builder = builder.sandbox(SandboxPolicy::default());
        }
        let context = builder.build();
        let handle = context.create_handle().await.unwrap();
        let escaped = dir.join("escaped");
        context
            .exec_background(
                handle,
                &format!(
                    "setsid sh -c 'echo $$ > {}; exec sleep 1000' & exec sleep 1000",
                    escaped.display()
                ),
                BackgroundOptions::new(&dir).env(TOKEN_VAR, token),
            )
            .await
            .unwrap();
        eventually("the escapee runs", || escaped.exists()).await;
        context
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_host_leaves_nothing_running() {
    host_dies_and_its_tasks_end("plain").await;
}

/// The same with the task in the sandbox: its processes are in namespaces of their
/// own, and the lifeline, outside them, still finds and ends every one.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_hosts_sandboxed_tasks_end_too() {
    host_dies_and_its_tasks_end("sandboxed").await;
}

async fn host_dies_and_its_tasks_end(how: &str) {
    // The helper is a host that dies: no sweep may run meanwhile and take the credit.
    let _lock = tokio::task::spawn_blocking(sweep_lock).await.unwrap();
    let token = unique_token("lifeline");
    let _cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
    let dir = tempfile::tempdir().unwrap();
    HOST.crash(&format!("{token}|{}|{how}", dir.path().display()));
    let died = Instant::now();
    let escapee: u32 = std::fs::read_to_string(dir.path().join("escaped"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = died + GONE_WITHIN;
    loop {
        let left = processes_with_token(&token);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{left:?} still run {GONE_WITHIN:?} after their host died (escapee {escapee})"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // What this machine took, for the record: the measurement itself is the bench's.
    eprintln!(
        "the last process of the SIGKILLed host was gone {:?} after it died",
        died.elapsed()
    );
}
