//! Tasks on a fleet: `zidane mcp --restate`, driven by the official Python MCP SDK
//! (`fleet.py` beside this file), against a real Restate server and two real
//! `zidane-worker`s, each with a disk of its own.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::fleet_support::fleet;
use crate::mcp_support::BIN;
use crate::sdk_script::{run_sdk_script, sdk_python};

/// Longest one case may run.
const CASE_BOUND: Duration = Duration::from_secs(180);

/// Runs `case` of `fleet.py` against a fresh fleet.
async fn case(case: &str) {
    let Some(python) = sdk_python() else {
        return;
    };
    let Some(fleet) = fleet().await else {
        return;
    };
    // A worker the script starts again takes the lock the tests' worker starts take.
    let sweep_lock = std::env::temp_dir().join(zidane_test_support::SWEEP_LOCK_FILE);
    run_sdk_script(
        &python,
        "fleet.py",
        case,
        [
            fleet.workspace().into_os_string(),
            fleet.user_dir().into_os_string(),
            fleet.server().ingress_url().into(),
            fleet.server().admin_url().into(),
            fleet.dir().as_os_str().to_owned(),
        ],
        &[("ZIDANE_TEST_SWEEP_LOCK", &sweep_lock.to_string_lossy())],
        CASE_BOUND,
        case,
    )
    .await;
}

/// `zidane mcp --restate --restate-admin`: the workers are found through the admin API;
/// a background task runs on one of them (its log on that worker's disk, read back
/// through the worker), and its end is told to the model once, at a later result,
/// with no wait asked; nothing of this machine's (`detach`, a terminal) is offered.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_runs_on_a_worker_found_through_the_admin_api_and_its_end_is_told_once() {
    case("runs-there").await;
}

/// `--workers w1,w2` named: two tasks go to the two workers.
#[tokio::test(flavor = "multi_thread")]
async fn named_workers_share_the_tasks() {
    case("named-workers").await;
}

/// `zidane mcp` SIGKILLed mid-task: its tasks run on their workers; the next session in
/// the same workspace lists them, is told once an end that came while nobody was
/// connected, waits for the other, numbers a new task past them; a session after that
/// is told nothing again.
#[tokio::test(flavor = "multi_thread")]
async fn the_next_session_in_the_workspace_re_adopts_the_tasks_and_is_told_each_end_once() {
    case("re-adopted").await;
}

/// Two sessions of one workspace at once share its tasks: no two tasks get one number,
/// and each end is told to the session that started it, not to the other.
#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_of_a_workspace_never_share_a_number_nor_an_end() {
    case("two-sessions").await;
}

/// `zidane ps / logs [-n] [-f] / wait / kill --restate` in the workspace reach the tasks
/// its sessions started on the fleet, as do the config file's `[fleet]` settings; an
/// unknown id is refused by name; the session is still told each end once.
#[tokio::test(flavor = "multi_thread")]
async fn a_person_lists_reads_waits_for_and_kills_the_fleets_tasks() {
    case("persons-commands").await;
}

/// The terminal host in print mode, on the fleet its config file names: its task runs
/// on a worker and is told; a later `zidane mcp` session there lists it, told already.
#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_host_runs_its_tasks_on_the_fleet_of_its_config_file() {
    case("terminal-host").await;
}

/// A worker SIGTERMed drains under a session: a start only it could take is refused,
/// another lands on the other worker, its running task ends and is told once, as it
/// ended, and the worker exits by itself; a worker SIGKILLed with a task running: that
/// task is told lost, once, when a worker with its id is back.
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_worker_drains_and_a_killed_workers_task_is_told_lost_once() {
    case("worker-stops").await;
}

/// `labels` is offered on a fleet; a task that needs a GPU runs on the worker that has
/// one, and one that needs what no worker has is refused, naming what each carries,
/// with nothing started.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_runs_on_the_worker_carrying_its_labels() {
    case("labels").await;
}

/// What cannot work is refused at the start, naming what is wrong: a worker id that is
/// none, `--restate` without workers or an admin API, an admin API not reached.
#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_that_cannot_work_is_refused_at_the_start() {
    let Some(fleet) = fleet().await else {
        return;
    };
    let refused = |args: &[&str], says: &str| {
        let output = Command::new(BIN)
            .arg("mcp")
            .arg("--user-dir")
            .arg(fleet.user_dir())
            .args(args)
            .env_remove("ZIDANE_RESTATE")
            .env_remove("ZIDANE_WORKERS")
            .env_remove("ZIDANE_RESTATE_ADMIN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} started");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    let ingress = fleet.server().ingress_url();
    refused(
        &["--restate", ingress, "--workers", "w1,no-such!"],
        "no-such!",
    );
    refused(&["--restate", ingress], "--workers");
    // Nothing listens on the discard port.
    refused(
        &[
            "--restate",
            ingress,
            "--restate-admin",
            "http://127.0.0.1:9",
        ],
        "finding the workers",
    );
}
