//! Detached tasks, driven as a host and a person would: `zidane mcp` sessions started
//! and ended one after another by the official Python MCP SDK (`detached.py` beside
//! this file), the supervisor they start, and `zidane ps / logs / wait / kill`. Each test
//! runs in a machine of its own — a workspace, a user dir and a private runtime
//! directory, so its supervisor is its own — on both process paths where the task's
//! process matters.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::sdk_script::{run_sdk_script, sdk_python};
use crate::support::{Tmux, model_args, tmux_present, zidane};

/// Longest one case may run: a few sessions, each a handful of calls.
const CASE_BOUND: Duration = Duration::from_secs(120);

/// A workspace, a user dir and a runtime dir, under the build's temp dir; removed on
/// drop.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("detached-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let machine = Self { root };
        for dir in [machine.workspace(), machine.user_dir(), machine.runtime()] {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::set_permissions(machine.runtime(), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        machine
    }

    fn workspace(&self) -> PathBuf {
        self.root.path().join("work")
    }

    fn user_dir(&self) -> PathBuf {
        self.root.path().join("user")
    }

    fn runtime(&self) -> PathBuf {
        self.root.path().join("run")
    }
}

/// Runs `case` of `detached.py` on `path` in a fresh machine.
async fn case(case: &str, path: &str) {
    let Some(python) = sdk_python() else {
        return;
    };
    let machine = Machine::new();
    let runtime = machine.runtime();
    run_sdk_script(
        &python,
        "detached.py",
        case,
        [machine.workspace(), machine.user_dir()],
        &[
            ("ZIDANE_PROCESS_PATH", path),
            ("XDG_RUNTIME_DIR", runtime.to_str().unwrap()),
        ],
        CASE_BOUND,
        &format!("{case} on the {path} path"),
    )
    .await;
}

async fn on_both_paths(name: &str) {
    for path in ["fast", "portable"] {
        case(name, path).await;
    }
}

/// A detached task outlives its `zidane mcp` closing its stdin, while a plain background
/// task of the same session ends; the next session lists it, reads its log, waits for
/// it; no later session is told its end again.
#[tokio::test(flavor = "multi_thread")]
async fn a_detached_task_outlives_its_host_closing_stdin() {
    on_both_paths("outlives-eof").await;
}

/// The same when `zidane mcp` is sent SIGTERM.
#[tokio::test(flavor = "multi_thread")]
async fn a_detached_task_outlives_a_sigterm_of_its_host() {
    on_both_paths("outlives-sigterm").await;
}

/// The same when `zidane mcp` is SIGKILLed.
#[tokio::test(flavor = "multi_thread")]
async fn a_detached_task_outlives_a_sigkill_of_its_host() {
    on_both_paths("outlives-sigkill").await;
}

/// An end that came while no session was connected is told once, at the next session's
/// first result, and to no session after it.
#[tokio::test(flavor = "multi_thread")]
async fn an_end_while_no_one_listens_is_told_once_to_the_next_session() {
    on_both_paths("told-once-later").await;
}

/// The supervisor SIGKILLed mid-task: the task runs on, its exit code is recorded, and
/// the next supervisor re-adopts it and answers the wait.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_supervisor_loses_no_task_and_no_exit() {
    on_both_paths("supervisor-killed").await;
}

/// `zidane ps`, `logs -n`, `logs -f`, `kill` (a `setsid` escapee included) and `wait`
/// (the task's code) on a real task; the connected session is told the kill once;
/// another user (`nobody`) sees no task and kills none.
#[tokio::test(flavor = "multi_thread")]
async fn a_person_lists_follows_waits_for_and_kills_a_detached_task() {
    on_both_paths("person").await;
}

/// A monitor's pid given to an unrelated process is never signalled.
#[tokio::test(flavor = "multi_thread")]
async fn a_recycled_pid_is_never_signalled() {
    on_both_paths("pid-reuse").await;
}

/// With two sessions of the workspace connected, the one that started the task is told
/// its end, once, and the other never.
#[tokio::test(flavor = "multi_thread")]
async fn with_two_sessions_connected_the_starting_one_is_told() {
    on_both_paths("two-sessions").await;
}

/// A sandboxed command, in a session or detached, cannot reach the supervisor's socket;
/// also when tasks (and so the monitor) do not get `XDG_RUNTIME_DIR`.
#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_task_cannot_reach_the_supervisor() {
    on_both_paths("sandbox-socket").await;
    case("sandbox-socket-core-env", "fast").await;
}

/// `zidane clean` removes ended detached tasks whose end was told, with their logs, and
/// keeps a running one and one whose end no model was told yet.
#[tokio::test(flavor = "multi_thread")]
async fn clean_removes_told_tasks_and_keeps_running_and_untold_ones() {
    case("clean", "fast").await;
}

/// `zidane ps` lists a running host's own session tasks with their CPU and memory;
/// `zidane logs` reads one, `zidane kill` ends it and its session is told; once the host
/// is gone the supervisor, which keeps no task, leaves too.
#[tokio::test(flavor = "multi_thread")]
async fn a_person_sees_and_stops_a_running_hosts_own_task() {
    on_both_paths("host-tasks").await;
}

/// How long one step in a terminal may take.
const STEP: Duration = Duration::from_secs(20);

/// Runs `case` of `detached.py` (one that leaves a task in the workspace and ends its
/// session abruptly), then `person` in the same machine, on a thread of its own: the
/// user dir, the workspace and the runtime dir. Every supervisor of the machine is
/// ended after. Nothing runs without tmux or the Python SDK.
async fn left_in_the_workspace(
    case: &'static str,
    person: impl FnOnce(&std::path::Path, &std::path::Path, &str) + Send + 'static,
) {
    if !tmux_present() {
        return;
    }
    let Some(python) = sdk_python() else {
        return;
    };
    let machine = Machine::new();
    let runtime = machine.runtime().to_str().unwrap().to_owned();
    run_sdk_script(
        &python,
        "detached.py",
        case,
        [machine.workspace(), machine.user_dir()],
        &[("XDG_RUNTIME_DIR", runtime.as_str())],
        CASE_BOUND,
        &format!("{case}: a detached task left in the workspace"),
    )
    .await;
    let user_dir = machine.user_dir();
    let workspace = machine.workspace();
    tokio::task::spawn_blocking(move || {
        person(&user_dir, &workspace, &runtime);
        // Its supervisor, which keeps the ended task, is this test's to end.
        for pid in supervisors_of(&user_dir) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    })
    .await
    .unwrap();
    drop(machine);
}

/// The terminal host's `ctrl+k` picker lists the detached task a `zidane mcp` session
/// left in its workspace, and kills it from there.
#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_picker_shows_and_kills_the_workspaces_detached_task() {
    left_in_the_workspace("start-one", |user_dir, workspace, runtime| {
        let (args, mut env) = model_args();
        env.push(("XDG_RUNTIME_DIR".to_owned(), runtime.to_owned()));
        let tmux = Tmux::start_in(Some(workspace), user_dir, &args, &env);
        tmux.wait_text("ctrl+k cancel", STEP);
        tmux.keys(&["C-k"]);
        let picker = tmux.wait_text("enter cancels a call / kills a task", STEP);
        assert!(picker.contains("bash_d1"), "{picker}");
        tmux.keys(&["Enter"]);
        tmux.wait_text("killed bash_d1", STEP);
        tmux.keys(&["C-d"]);
        tmux.wait_ended("ctrl+d", STEP);
        let listed = zidane(user_dir, &["ps", "--all", "--json"])
            .env("XDG_RUNTIME_DIR", runtime)
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
        assert!(listed.contains("\"state\": \"killed\""), "{listed}");
    })
    .await;
}

/// Detached tasks waiting for input, on a pipe and in a terminal, are typed into and
/// read as a screen by the next session of the workspace once their host is gone.
#[tokio::test(flavor = "multi_thread")]
async fn the_next_session_types_into_a_detached_task_and_reads_its_screen() {
    on_both_paths("input-after-restart").await;
}

/// A detached task gets the starting session's variables under its policy, never its
/// secrets, whichever session started the supervisor.
#[tokio::test(flavor = "multi_thread")]
async fn a_detached_task_gets_its_sessions_environment_and_none_of_its_secrets() {
    on_both_paths("environment").await;
}

/// The monitor kept ready, killed by hand, is replaced at the next start, which runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_ready_monitor_is_replaced_at_the_next_start() {
    on_both_paths("ready-monitor-killed").await;
}

/// Where the user's systemd manager runs the supervisor starts in a scope of its own
/// through `systemd-run` (a stand-in here); where that fails, unscoped.
#[tokio::test(flavor = "multi_thread")]
async fn the_supervisor_starts_in_a_systemd_scope_where_a_user_manager_runs() {
    case("systemd-scope", "fast").await;
    case("systemd-scope-fails", "fast").await;
}

/// `zidane attach` on a detached terminal task a `zidane mcp` session left: it shows
/// the question asked, sizes the task's terminal to the person's, detaches on ctrl+]
/// leaving the task running, and on a second attach takes the answers and exits with
/// the task's code.
#[tokio::test(flavor = "multi_thread")]
async fn a_person_attaches_to_a_detached_terminal_task_detaches_and_answers_it() {
    left_in_the_workspace("start-terminal", |user_dir, workspace, runtime| {
        let env = [("XDG_RUNTIME_DIR".to_owned(), runtime.to_owned())];
        let attach = ["attach".to_owned(), "d1".to_owned()];
        let first = Tmux::start_in(Some(workspace), user_dir, &attach, &env);
        first.wait_text("name?", STEP);
        first.keys(&["C-]"]);
        first.wait_text("detached from bash_d1; it runs on", STEP);
        first.wait_text("zidane exited 0", STEP);
        let listed = zidane(user_dir, &["ps", "--json"])
            .env("XDG_RUNTIME_DIR", runtime)
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
        assert!(listed.contains("\"state\": \"running\""), "{listed}");
        drop(first);
        let second = Tmux::start_in(Some(workspace), user_dir, &attach, &env);
        second.wait_text("name?", STEP);
        second.keys(&["bob", "Enter"]);
        let screen = second.wait_text("hello bob", STEP);
        // The task's terminal took the person's size (120x40), not the model's (50x10).
        second.wait_text("40 120", STEP);
        assert!(!screen.contains("10 50"), "{screen}");
        second.keys(&["yes", "Enter"]);
        second.wait_text("zidane exited 5", STEP);
    })
    .await;
}

/// The terminal host's picker attaches to a detached terminal task a `zidane mcp`
/// session left: its question shows, the answer typed there reaches it.
#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_picker_attaches_to_a_detached_terminal_task() {
    left_in_the_workspace("start-terminal", |user_dir, workspace, runtime| {
        let (args, mut env) = model_args();
        env.push(("XDG_RUNTIME_DIR".to_owned(), runtime.to_owned()));
        let tmux = Tmux::start_in(Some(workspace), user_dir, &args, &env);
        tmux.wait_text("ctrl+k cancel", STEP);
        tmux.keys(&["C-k"]);
        tmux.wait_text("a attaches to a [tty] task", STEP);
        tmux.keys(&["a"]);
        tmux.wait_text("attached to bash_d1", STEP);
        tmux.wait_text("name?", STEP);
        tmux.keys(&["bob", "Enter"]);
        tmux.wait_text("hello bob", STEP);
        tmux.keys(&["yes", "Enter"]);
        tmux.wait_text("any key returns", STEP);
        tmux.keys(&["Escape"]);
        tmux.keys(&["C-d"]);
        tmux.wait_ended("ctrl+d", STEP);
    })
    .await;
}

/// The `zidane supervisor serve --user-dir USER_DIR` processes running.
pub(crate) fn supervisors_of(user_dir: &std::path::Path) -> Vec<u32> {
    let user_dir = user_dir.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let argv: Vec<&[u8]> = cmdline.split(|byte| *byte == 0).collect();
                argv.contains(&b"serve".as_slice()) && argv.contains(&user_dir)
            })
        })
        .collect()
}
