//! Behaviour of `ProcessContext` on Windows with real processes: each task in a job
//! object, its `start /b` grandchildren included, ended whole by a kill, a budget or
//! the end of the session; the exit told once; the output in one log.
//!
//! The commands are `cmd.exe`'s, so they run on every Windows and under Wine (where
//! `cargo xtask ci` runs them). Waits are bounded; the one negative check (a file that
//! stops growing) says why it watches for a while.
#![cfg(windows)]
// A panic in a test or its helpers is a failed test, not a crashed host.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zidane_context::{
    BackgroundOptions, ExecOptions, ExecutionContext, ExecutionHandle, KillReason, StdinMode,
    TaskExitInfo, TaskInput, TaskLimits, TaskStatus, TtySize,
};
use zidane_process::{ProcessContext, Shell};

/// How long any one event may take.
const WAIT: Duration = Duration::from_secs(60);

/// A command that runs for a long while: `ping` waits a second between its probes.
const LONG: &str = "ping -n 1000 127.0.0.1 >nul";

struct Fixture {
    dir: tempfile::TempDir,
    context: ProcessContext,
    handle: ExecutionHandle,
    exits: Arc<Mutex<Vec<TaskExitInfo>>>,
}

impl Fixture {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // cmd.exe whatever else is installed: the commands below are its.
        let comspec = std::env::var_os("ComSpec").map_or_else(
            || PathBuf::from(r"C:\Windows\System32\cmd.exe"),
            PathBuf::from,
        );
        let context = ProcessContext::builder()
            .cwd(dir.path())
            .shell(Shell::new(comspec))
            .kill_grace(Duration::from_millis(500))
            .build();
        let handle = context.create_handle().await.unwrap();
        Self {
            dir,
            context,
            handle,
            exits: Arc::default(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn options(&self) -> BackgroundOptions {
        let exits = self.exits.clone();
        BackgroundOptions::new(self.path("tasks"))
            .on_exit(move |exit| exits.lock().unwrap().push(exit))
    }

    async fn start(
        &self,
        command: &str,
        options: BackgroundOptions,
    ) -> zidane_context::BackgroundStarted {
        self.context
            .exec_background(self.handle, command, options)
            .await
            .unwrap()
    }

    /// Waits until `n` exits were told, then a moment more to catch a second telling.
    async fn exits(&self, n: usize) -> Vec<TaskExitInfo> {
        poll_until("the exits", || self.exits.lock().unwrap().len() >= n).await;
        self.exits.lock().unwrap().clone()
    }
}

async fn poll_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A grandchild that the task starts with `start /b` and that appends to `file`
/// forever: the process a kill must not leave behind.
fn grandchild(file: &Path) -> String {
    format!(
        "start /b cmd /d /c \"for /l %i in (1,1,1000000) do @(echo %i>>\"{}\" & ping -n 2 127.0.0.1 >nul)\"",
        file.display()
    )
}

/// Whether `file` stopped growing: its size is the same over a few of the grandchild's
/// one-second steps. A live grandchild grows it every step, so this can only pass once
/// it is gone.
async fn stopped_growing(file: &Path) -> bool {
    let size = || std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    let before = size();
    tokio::time::sleep(Duration::from_secs(3)).await;
    size() == before
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_writes_stdout_and_stderr_into_one_log_and_its_exit_is_told_once() {
    let f = Fixture::new().await;
    let started = f
        .start("echo built & echo warned 1>&2 & exit /b 3", f.options())
        .await;
    assert_eq!(started.task_id.to_string(), "bash_1");
    let exits = f.exits(1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(f.exits.lock().unwrap().len(), 1, "the exit was told twice");
    assert_eq!(
        (exits[0].status, exits[0].exit_code),
        (TaskStatus::Exited, 3)
    );
    assert_eq!(read(&started.output_path), "built \r\nwarned  \r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_ends_the_task_and_its_start_b_grandchild() {
    let f = Fixture::new().await;
    let grown = f.path("grown.txt");
    let command = format!("{} & {LONG}", grandchild(&grown));
    let started = f.start(&command, f.options()).await;
    poll_until("the grandchild's first line", || grown.exists()).await;
    let exit = f
        .context
        .kill_background(f.handle, started.task_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(f.exits(1).await.len(), 1);
    assert!(
        stopped_growing(&grown).await,
        "the grandchild outlived the kill"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_time_budget_ends_the_whole_job() {
    let f = Fixture::new().await;
    let grown = f.path("grown.txt");
    let command = format!("{} & {LONG}", grandchild(&grown));
    let options = f
        .options()
        .limits(TaskLimits::new().wall_time(Duration::from_secs(2)));
    f.start(&command, options).await;
    let exit = f.exits(1).await.remove(0);
    assert_eq!(exit.status, TaskStatus::Killed);
    assert!(
        exit.kill_reason.is_some_and(KillReason::is_budget),
        "{exit:?}"
    );
    assert!(grown.exists(), "the grandchild never ran");
    assert!(
        stopped_growing(&grown).await,
        "the grandchild outlived the budget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_session_ends_every_job() {
    let f = Fixture::new().await;
    let grown = f.path("grown.txt");
    let command = format!("{} & {LONG}", grandchild(&grown));
    f.start(&command, f.options()).await;
    poll_until("the grandchild's first line", || grown.exists()).await;
    f.context.destroy(f.handle).await.unwrap();
    assert_eq!(f.exits(1).await.len(), 1);
    assert!(
        stopped_growing(&grown).await,
        "the grandchild outlived the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_context_ends_every_job() {
    let f = Fixture::new().await;
    let grown = f.path("grown.txt");
    let command = format!("{} & {LONG}", grandchild(&grown));
    f.start(&command, f.options()).await;
    poll_until("the grandchild's first line", || grown.exists()).await;
    let Fixture { dir, context, .. } = f;
    drop(context);
    assert!(
        stopped_growing(&grown).await,
        "the grandchild outlived its host's context"
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_the_cap_is_counted_and_dropped() {
    let f = Fixture::new().await;
    let options = f.options().limits(TaskLimits::new().max_output_bytes(100));
    let started = f
        .start("for /l %i in (1,1,500) do @echo line %i", options)
        .await;
    let exit = f.exits(1).await.remove(0);
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    let log = read(&started.output_path);
    let (kept, marker) = log.split_at(100);
    assert!(kept.starts_with("line 1\r\nline 2\r\n"), "{log:?}");
    assert!(
        marker.contains("<output-truncated bytes-dropped="),
        "{log:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_command_returns_its_output_and_code() {
    let f = Fixture::new().await;
    let out = f
        .context
        .exec(f.handle, "echo hello & exit /b 4", ExecOptions::new())
        .await
        .unwrap();
    assert_eq!((out.output.as_str(), out.exit_code), ("hello \r\n", 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_timeout_ends_the_whole_job() {
    let f = Fixture::new().await;
    let grown = f.path("grown.txt");
    let command = format!("{} & {LONG}", grandchild(&grown));
    let mut options = ExecOptions::new();
    options.timeout = Some(Duration::from_secs(3));
    let out = f.context.exec(f.handle, &command, options).await.unwrap();
    assert!(out.timed_out);
    assert!(grown.exists(), "the grandchild never ran");
    assert!(
        stopped_growing(&grown).await,
        "the grandchild outlived the timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_reaches_the_task_through_its_stdin_pipe() {
    let f = Fixture::new().await;
    let options = f.options().stdin(StdinMode::Pipe);
    let started = f
        .start("set /p name=name? & call echo hello %name%", options)
        .await;
    f.context
        .write_input(f.handle, started.task_id, TaskInput::text("zidane\r\n"))
        .await
        .unwrap();
    let exit = f.exits(1).await.remove(0);
    assert_eq!(exit.status, TaskStatus::Exited);
    assert!(
        read(&started.output_path).contains("hello zidane"),
        "{}",
        read(&started.output_path)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_task_is_refused_with_a_clear_error() {
    let f = Fixture::new().await;
    let options = f.options().tty(TtySize { rows: 24, cols: 80 });
    let error = f
        .context
        .exec_background(f.handle, "echo hi", options)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("not supported on Windows"),
        "{error}"
    );
    assert!(!f.context.capabilities().terminals);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_shell_is_one_that_runs() {
    let shell = Shell::detect();
    let context = ProcessContext::builder().shell(shell.clone()).build();
    let handle = context.create_handle().await.unwrap();
    let out = context
        .exec(handle, "echo ok", ExecOptions::new())
        .await
        .unwrap();
    assert_eq!(
        out.exit_code,
        0,
        "{} failed: {}",
        shell.path().display(),
        out.output
    );
    assert!(
        out.output.contains("ok"),
        "{}: {:?}",
        shell.name(),
        out.output
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_task_is_named_while_it_writes_and_its_log_moves_whole() {
    let f = Fixture::new().await;
    // Named while `ping` holds it between its two lines, then it writes the second.
    let command = "echo before & ping -n 6 127.0.0.1 >nul & echo after";
    let held = f.start(command, f.options().held(true)).await;
    assert!(held.task_id.is_held());
    poll_until("the held task wrote", || {
        std::fs::read_to_string(&held.output_path).is_ok_and(|log| log.contains("before"))
    })
    .await;
    assert!(
        f.context
            .list_background(f.handle)
            .await
            .unwrap()
            .is_empty()
    );
    let named = match f
        .context
        .name_background(f.handle, held.task_id)
        .await
        .unwrap()
    {
        Some(zidane_context::Naming::Named(named)) => named,
        other => panic!("a running held task is named, not {other:?}"),
    };
    assert_eq!(named.task_id.to_string(), "bash_1");
    assert!(!held.output_path.exists(), "the old name stayed");
    let exits = f.exits(1).await;
    assert_eq!(exits[0].task_id, named.task_id);
    assert_eq!(exits[0].output_path, named.output_path);
    let log = read(&named.output_path);
    assert!(log.starts_with("before") && log.contains("after"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_task_that_ended_leaves_no_log_once_forgotten() {
    let f = Fixture::new().await;
    let held = f.start("echo done", f.options().held(true)).await;
    f.exits(1).await;
    assert!(held.output_path.exists());
    assert!(
        f.context
            .forget_background(f.handle, held.task_id)
            .await
            .unwrap()
    );
    assert!(!held.output_path.exists());
    let next = f.start("echo next", f.options()).await;
    assert_eq!(next.task_id.to_string(), "bash_1");
}
