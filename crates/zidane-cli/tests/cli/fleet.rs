//! Tasks on a fleet: `zidane mcp --restate`, driven by the official Python MCP SDK
//! (`fleet.py` beside this file), against a real Restate server and two real
//! `zidane-worker`s, each with a disk of its own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use zidane_restate::testing::RestateServer;

use crate::mcp_support::BIN;
use crate::sdk_script::{run_sdk_script, sdk_python};

/// Longest one case may run.
const CASE_BOUND: Duration = Duration::from_secs(120);
/// Longest a worker may take to say it is ready.
const READY_WAIT: Duration = Duration::from_secs(30);

/// A Restate server and workers `w1` (labelled `linux` by its flag) and `w2` (`gpu` and
/// `linux`, by its environment variable), their disks under a temp dir; the workers are
/// killed and the server stopped on drop.
struct Fleet {
    server: RestateServer,
    dir: tempfile::TempDir,
    workers: Vec<Child>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            let _ = worker.kill();
            let _ = worker.wait();
        }
    }
}

/// `zidane-worker`, built beside `zidane` (the workspace's binaries share a directory).
fn worker_binary() -> PathBuf {
    let path =
        Path::new(BIN).with_file_name(format!("zidane-worker{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built: cargo build -p zidane-restate --bin zidane-worker",
        path.display()
    );
    path
}

/// A server and two workers, or `None` (the reason printed) where no `restate-server`
/// is installed and this is not CI, which must have it.
async fn fleet() -> Option<Fleet> {
    if !zidane_restate::testing::server_installed() {
        return None;
    }
    let server = RestateServer::start().await.unwrap();
    let dir = tempfile::Builder::new()
        .prefix("fleet-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let mut fleet = Fleet {
        server,
        dir,
        workers: Vec::new(),
    };
    let w1 = fleet.spawn_worker("w1", |command| {
        command.args(["--label", "linux"]);
    });
    let w2 = fleet.spawn_worker("w2", |command| {
        command.env("ZIDANE_WORKER_LABELS", "gpu,linux");
    });
    fleet.workers.extend([w1, w2]);
    Some(fleet)
}

impl Fleet {
    /// Starts worker `id` on a free port, registered with the server, `configure`
    /// adding its labels, and waits (bounded) for its ready line.
    fn spawn_worker(&self, id: &str, configure: impl FnOnce(&mut Command)) -> Child {
        // A starting worker sweeps this machine's orphans, which must not race the
        // tests that make orphans and sweep them.
        let _lock = zidane_test_support::sweep_lock();
        let mut command = Command::new(worker_binary());
        command
            .args(["--worker-id", id, "--listen", "127.0.0.1:0"])
            .args(["--ingress", self.server.ingress_url()])
            .args(["--admin", self.server.admin_url()])
            .arg("--user-dir")
            .arg(self.worker_dir(id))
            .env_remove("ZIDANE_WORKER_IDENTITY_KEYS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        configure(&mut command);
        let mut child = command.spawn().unwrap();
        let line = zidane_test_support::first_line(&mut child, READY_WAIT)
            .unwrap_or_else(|| panic!("worker {id} was not ready within {READY_WAIT:?}"));
        assert!(line.starts_with("ready "), "worker {id} said {line:?}");
        child
    }

    fn worker_dir(&self, id: &str) -> PathBuf {
        self.dir.path().join(format!("worker-{id}"))
    }

    fn workspace(&self) -> PathBuf {
        let dir = self.dir.path().join("work");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn user_dir(&self) -> PathBuf {
        self.dir.path().join("user")
    }
}

/// Runs `case` of `fleet.py` against a fresh fleet.
async fn case(case: &str) {
    let Some(python) = sdk_python() else {
        return;
    };
    let Some(fleet) = fleet().await else {
        return;
    };
    run_sdk_script(
        &python,
        "fleet.py",
        case,
        [
            fleet.workspace().into_os_string(),
            fleet.user_dir().into_os_string(),
            fleet.server.ingress_url().into(),
            fleet.server.admin_url().into(),
            fleet.dir.path().as_os_str().to_owned(),
        ],
        &[],
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
    let ingress = fleet.server.ingress_url();
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
