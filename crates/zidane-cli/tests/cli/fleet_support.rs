//! A fleet for `zidane mcp --restate` to run on: a throwaway Restate server and two real
//! `zidane-worker`s, each with a disk of its own under one temp dir. Shared by the tests
//! that drive `zidane mcp` through the Python MCP SDK (`fleet.rs`) and through real
//! hosts (`hosts/fleet.rs`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use zidane_restate::testing::RestateServer;

use crate::mcp_support::BIN;

/// Longest a worker may take to say it is ready.
const READY_WAIT: Duration = Duration::from_secs(30);

/// The workers' ids, as `--workers` names them.
pub const WORKERS: &str = "w1,w2";

/// A Restate server and workers `w1` (labelled `linux` by its flag) and `w2` (`gpu` and
/// `linux`, by its environment variable), their disks under a temp dir; the workers are
/// killed, the server stopped and the dir removed on drop.
pub struct Fleet {
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
pub async fn fleet() -> Option<Fleet> {
    fleet_with(|_| {}).await
}

/// [`fleet`], each worker's command given `every_worker` too (a variable that marks
/// the worker and its tasks as a test's own).
pub async fn fleet_with(every_worker: impl Fn(&mut Command)) -> Option<Fleet> {
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
    // Each kept as soon as it runs: a worker that fails to start leaves none behind.
    let w1 = fleet.spawn_worker("w1", |command| {
        command.args(["--label", "linux"]);
        every_worker(command);
    });
    fleet.workers.push(w1);
    let w2 = fleet.spawn_worker("w2", |command| {
        command.env("ZIDANE_WORKER_LABELS", "gpu,linux");
        every_worker(command);
    });
    fleet.workers.push(w2);
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

    /// The Restate server the workers are registered with.
    pub fn server(&self) -> &RestateServer {
        &self.server
    }

    /// The fleet's temp dir: the workers' disks are `worker-<id>/` in it.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Worker `id`'s disk, its `--user-dir`: its tasks' logs are under it.
    pub fn worker_dir(&self, id: &str) -> PathBuf {
        self.dir.path().join(format!("worker-{id}"))
    }

    /// Which worker's disk holds `path`, if any.
    pub fn worker_of(&self, path: &Path) -> Option<&'static str> {
        ["w1", "w2"]
            .into_iter()
            .find(|id| path.starts_with(self.worker_dir(id)))
    }

    /// A workspace in the fleet's dir, made on first use.
    pub fn workspace(&self) -> PathBuf {
        let dir = self.dir.path().join("work");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A user dir for `zidane` in the fleet's dir.
    pub fn user_dir(&self) -> PathBuf {
        self.dir.path().join("user")
    }
}
