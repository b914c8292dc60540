//! A Restate server, `zidane-worker` processes and agents over `RestateContext`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zidane_agent::{Agent, ScriptedModel, Session, SessionStore};
use zidane_context::{ExecutionContext, ExecutionHandle, TaskEntry, TaskId, TaskStatus};
use zidane_restate::RestateContext;
use zidane_restate::testing::RestateServer;
use zidane_test_support::{first_line, live_processes_in_group, poll_until, sweep_lock};

/// Longest a test waits for something that should happen.
pub const WAIT: Duration = Duration::from_secs(20);

/// A Restate server with workers, and a temp dir for their disks and the sessions.
pub struct Cluster {
    pub server: RestateServer,
    pub dir: tempfile::TempDir,
    pub workers: Vec<WorkerProcess>,
}

/// A `zidane-worker` child; killed (SIGKILL) on drop.
pub struct WorkerProcess {
    pub id: String,
    pub address: SocketAddr,
    pub user_dir: PathBuf,
    /// What it printed when ready: `ready <address> <service> identity: …`.
    pub ready_line: String,
    child: Child,
}

impl WorkerProcess {
    /// The worker process's pid.
    #[cfg(target_os = "linux")]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the worker with SIGKILL and reaps it: it cannot clean anything up.
    pub fn kill_hard(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl WorkerProcess {
    /// Sends the worker SIGTERM, on which it drains, and returns at once.
    pub fn terminate(&self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    }

    /// How the worker ended, once it has, waiting at most `wait`.
    pub fn exit_within(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops the worker at once as an operator would: SIGTERM (it drains), SIGTERM
    /// again (it stops draining and ends its tasks), then SIGKILL if it is still there
    /// after five seconds. Idempotent: a worker already reaped is not signalled again
    /// (its pid may be another's by now).
    pub fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        self.terminate();
        // The second stop only once the first was taken (two pending SIGTERMs are one).
        if self.exit_within(Duration::from_millis(200)).is_some() {
            return;
        }
        self.terminate();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

pub use zidane_restate::testing::server_installed;

/// A server and workers `ids`, or `None` (with the reason printed) when no
/// A scratch directory for workers' user dirs, removed on drop. Not in a temp
/// directory: every sandboxed task may write those, and a worker refuses a user dir
/// there.
pub fn worker_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("worker-scratch-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// `restate-server` is installed and this is not CI — under CI it must be there.
pub async fn cluster(ids: &[&str]) -> Option<Cluster> {
    if !server_installed() {
        return None;
    }
    let server = RestateServer::start().await.unwrap();
    let dir = worker_scratch();
    let mut cluster = Cluster {
        server,
        dir,
        workers: Vec::new(),
    };
    for id in ids {
        let worker = cluster.spawn_worker(id, "127.0.0.1:0".parse().unwrap());
        cluster.workers.push(worker);
    }
    Some(cluster)
}

/// A cluster of workers `ids`, a context over them and a fresh handle on it; `None` as
/// for [`cluster`].
pub async fn session_on(ids: &[&str]) -> Option<(Cluster, Arc<RestateContext>, ExecutionHandle)> {
    let cluster = cluster(ids).await?;
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    Some((cluster, context, handle))
}

impl Cluster {
    /// Starts worker `id` listening on `listen`, its disk under the cluster's dir, and
    /// waits (bounded) until it registered with Restate.
    pub fn spawn_worker(&self, id: &str, listen: SocketAddr) -> WorkerProcess {
        self.spawn_worker_with(id, listen, |_| {})
    }

    /// [`Cluster::spawn_worker`], with `configure` adding flags or environment.
    pub fn spawn_worker_with(
        &self,
        id: &str,
        listen: SocketAddr,
        configure: impl FnOnce(&mut Command),
    ) -> WorkerProcess {
        // A starting worker sweeps the orphans of dead hosts on this machine, which
        // must not race the zidane-process tests that make orphans and sweep them.
        let _lock = sweep_lock();
        let user_dir = self.dir.path().join(format!("worker-{id}"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_zidane-worker"));
        command
            .args(["--worker-id", id, "--listen", &listen.to_string()])
            .args(["--ingress", self.server.ingress_url()])
            .args(["--admin", self.server.admin_url()])
            .arg("--user-dir")
            .arg(&user_dir)
            .env_remove("ZIDANE_WORKER_IDENTITY_KEYS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        configure(&mut command);
        let mut child = command.spawn().unwrap();
        let line = first_line(&mut child, WAIT).expect("the worker is ready in time");
        let address = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("worker said {line:?}"))
            .parse()
            .unwrap();
        WorkerProcess {
            id: id.to_owned(),
            address,
            user_dir,
            ready_line: line.trim_end().to_owned(),
            child,
        }
    }

    /// Kills worker `index` with SIGKILL and starts one with its id on its address.
    pub fn restart_worker(&mut self, index: usize) {
        let (id, address) = {
            let old = &mut self.workers[index];
            old.kill_hard();
            (old.id.clone(), old.address)
        };
        let new = self.spawn_worker(&id, address);
        self.workers[index] = new;
    }

    /// A context over every worker of the cluster.
    pub fn context(&self) -> Arc<RestateContext> {
        let ids: Vec<String> = self.workers.iter().map(|w| w.id.clone()).collect();
        Arc::new(
            RestateContext::new(self.server.ingress_url(), ids)
                .unwrap()
                .call_timeout(Duration::from_secs(2)),
        )
    }

    /// Where the sessions live.
    pub fn store(&self) -> SessionStore {
        SessionStore::new(self.dir.path().join("host"))
    }
}

/// An agent over `context` on `handle`, with session `s1` from `store` (new or stored).
pub fn agent(
    model: ScriptedModel,
    context: Arc<RestateContext>,
    handle: ExecutionHandle,
    store: &SessionStore,
) -> Agent {
    let session = store.load("s1").unwrap_or_else(|_| Session::new("s1"));
    Agent::builder(Arc::new(model), context)
        .handle(handle)
        .store(store.clone())
        .session(session)
        .build()
        .unwrap()
}

/// A background shell call.
pub fn bg(command: &str) -> Value {
    json!({ "command": command, "run_in_background": true })
}

pub fn tid(n: u64) -> TaskId {
    TaskId::from_number(n)
}

/// The task ids of the notifications a run delivered.
pub fn notified(outcome: &zidane_agent::RunOutcome) -> Vec<String> {
    outcome
        .notified
        .iter()
        .map(|e| e.task_id.to_string())
        .collect()
}

/// Lists until `done` holds for the list, at most [`WAIT`]; returns that list.
pub async fn list_until(
    context: &dyn ExecutionContext,
    handle: ExecutionHandle,
    mut done: impl FnMut(&[TaskEntry]) -> bool,
) -> Vec<TaskEntry> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Ok(entries) = context.list_background(handle).await
            && done(&entries)
        {
            return entries;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "list condition not met within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether every listed task has ended.
pub fn all_ended(entries: &[TaskEntry], count: usize) -> bool {
    entries.len() == count && entries.iter().all(|e| e.status().is_terminal())
}

/// Whether any live (not zombie) process is left in process group `pgid`: a killed
/// worker's orphans are reaped by whoever adopts them, maybe late, so `/proc` is read.
pub fn group_alive(pgid: u32) -> bool {
    !live_processes_in_group(pgid).is_empty()
}

/// Waits (bounded) until process group `pgid` is empty.
pub async fn until_group_gone(pgid: u32) {
    let failure = format!("process group {pgid} still alive after {WAIT:?}");
    poll_until(WAIT, Duration::from_millis(20), &failure, || {
        !group_alive(pgid)
    })
    .await;
}

/// Whether `path` lies under `dir`.
pub fn under(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

/// The status of task `n` in `entries`.
pub fn status_of(entries: &[TaskEntry], n: u64) -> TaskStatus {
    entries
        .iter()
        .find(|e| e.task_id == tid(n))
        .map(|e| e.status())
        .unwrap_or_else(|| panic!("bash_{n} not listed in {entries:?}"))
}

/// The texts of every tool result in `agent`'s session, oldest first.
pub fn tool_results(agent: &Agent) -> Vec<String> {
    agent
        .session()
        .turns
        .iter()
        .flat_map(|t| &t.content)
        .filter_map(|b| match b {
            zidane_wire::ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

/// Runs `zidane-worker` with `args` and `env`; it must fail at once. Its stderr.
pub fn worker_refuses(args: &[&str], env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let user_dir = dir.path().join("worker");
    let mut child = Command::new(env!("CARGO_BIN_EXE_zidane-worker"))
        .args(["--worker-id", "w1", "--listen", "127.0.0.1:0"])
        .args(["--ingress", "http://127.0.0.1:9"])
        .arg("--user-dir")
        .arg(&user_dir)
        .args(args)
        .env_remove("ZIDANE_WORKER_IDENTITY_KEYS")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} {env:?}: {stderr}");
    assert!(!user_dir.exists(), "a refused worker created its user dir");
    stderr
}
