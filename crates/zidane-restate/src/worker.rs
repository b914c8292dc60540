//! The worker: what one worker process shares between the handlers of its Restate
//! object (`object.rs`) — its identity and boot, the `ProcessContext` that runs tasks
//! on this machine, and the spawn each `start` journals.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use restate_sdk::prelude::*;
use zidane_context::{
    BackgroundOptions, EnvPolicy, ExecutionContext, ExecutionHandle, SandboxMode, SandboxPolicy,
    SandboxScope, TaskId, lock,
};
use zidane_process::ProcessContext;

use crate::ingress::{Ingress, exchange};
use crate::object::{terminal, wake};
use crate::protocol::{Spawned, StartRequest};
use crate::table::{self, Table};

/// How many tasks a worker runs at once, over all sessions, unless told otherwise.
pub const DEFAULT_WORKER_MAX_TASKS: usize = 64;

/// How long one look at the worker's own tables may take while it drains.
const RECORDED_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Who a worker is and where it keeps things.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WorkerOptions {
    /// The worker's id: letters, digits and `_`. Its service is `ZidaneWorker_<id>`; a
    /// worker started with the id of one that died takes over its tasks' records.
    pub worker_id: String,
    /// Where task logs live: `<user_dir>/handles/<handle>/tasks/`.
    pub user_dir: PathBuf,
    /// Restate's ingress, through which the worker reports exits to its own object.
    pub ingress: String,
    /// Most tasks running at once on this worker, over all sessions; a start past it
    /// is refused (see [`DEFAULT_WORKER_MAX_TASKS`]).
    pub max_tasks: usize,
    /// Which of the worker's environment variables its tasks get ([`EnvPolicy::default`]:
    /// all but those named like a secret, never zidane's own credentials). A start's own
    /// variables go on top.
    pub env_policy: EnvPolicy,
    /// What this worker's machine is (`gpu`, `linux-x86_64`): a start that names labels
    /// runs on the least-loaded worker carrying all of them. Each is a label by
    /// [`zidane_context::is_label`]'s rule.
    pub labels: Vec<String>,
    /// What its tasks may touch, as `zidane mcp`'s sandbox does on a laptop (default
    /// `workspace-write`, network on). Its workspace is each task's handle directory,
    /// `<user_dir>/handles/<handle>/`, where the task starts: a task writes there, in the
    /// temp directories and the build caches, and nowhere else (not in another
    /// session's directory, not in the worker user's home); the credential stores and
    /// shell startup files are hidden or read-only, as on a laptop. Workspace roots
    /// given here are ignored for that reason; `writable` and `deny_read` paths apply.
    pub sandbox: SandboxPolicy,
}

impl WorkerOptions {
    /// A config with the default task cap.
    pub fn new(
        worker_id: impl Into<String>,
        user_dir: impl Into<PathBuf>,
        ingress: impl Into<String>,
    ) -> Self {
        Self {
            worker_id: worker_id.into(),
            user_dir: user_dir.into(),
            ingress: ingress.into(),
            max_tasks: DEFAULT_WORKER_MAX_TASKS,
            env_policy: EnvPolicy::default(),
            labels: Vec::new(),
            sandbox: SandboxPolicy::workspace_write(PathBuf::new()),
        }
    }

    /// Sets what its tasks may touch (see [`sandbox`](Self#structfield.sandbox)).
    #[must_use]
    pub fn sandbox(mut self, sandbox: SandboxPolicy) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Sets the worker's labels (see [`labels`](Self#structfield.labels)).
    #[must_use]
    pub fn labels(mut self, labels: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.labels = labels.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the most tasks running at once on this worker.
    #[must_use]
    pub fn max_tasks(mut self, max_tasks: usize) -> Self {
        self.max_tasks = max_tasks;
        self
    }

    /// Sets which of the worker's environment variables its tasks get.
    #[must_use]
    pub fn env_policy(mut self, env_policy: EnvPolicy) -> Self {
        self.env_policy = env_policy;
        self
    }
}

/// A worker: the state one worker process shares between its handlers.
pub struct Worker {
    config: WorkerOptions,
    pub(crate) service: String,
    /// This worker process; differs on every start.
    pub(crate) boot: String,
    pub(crate) process: Arc<ProcessContext>,
    pub(crate) ingress: Ingress,
    runtime: tokio::runtime::Handle,
    /// Local handles by remote handle number.
    pub(crate) handles: Mutex<HashMap<u64, ExecutionHandle>>,
    /// What this boot spawned, so a `spawn` re-run after a lost journal write answers
    /// the same instead of starting the task twice.
    pub(crate) spawned: Mutex<HashMap<(u64, TaskId), Spawned>>,
    /// Set by [`Worker::drain`]: no new task starts here.
    draining: std::sync::atomic::AtomicBool,
    /// Exit reports not yet accepted by Restate's ingress.
    pub(crate) reports_in_flight: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("service", &self.service)
            .field("boot", &self.boot)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker for `config`, made inside a tokio runtime (its exit reports run there).
    /// Its `ProcessContext` first ends the processes that a dead worker on this machine
    /// left behind (see [`Worker::ready`]), and gives its tasks the environment
    /// [`WorkerOptions::env_policy`] computes from the worker's. A policy that cannot be
    /// applied, or a bad `ZIDANE_PROCESS_PATH`, is [`RestateError::Config`](crate::RestateError::Config).
    pub fn new(config: WorkerOptions) -> Result<Self, crate::RestateError> {
        crate::ids::validate_worker_id(&config.worker_id)?;
        if let Some(label) = config
            .labels
            .iter()
            .find(|label| !zidane_context::is_label(label))
        {
            return Err(crate::RestateError::Config(format!(
                "label {label:?} is not one: a label is 1 to {} ASCII letters, digits, `-`, \
                 `_` or `.`",
                zidane_context::MAX_LABEL_LEN
            )));
        }
        config
            .env_policy
            .validate()
            .map_err(|error| crate::RestateError::Config(error.to_string()))?;
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| crate::RestateError::NoRuntime)?;
        let ingress = Ingress::new(&config.ingress)?;
        // The context's workspace is every handle's directory; each task is then held
        // to its own handle's (see `spawn`).
        let sandbox = Self::context_sandbox(&config.sandbox, &config.user_dir);
        let process = Arc::new(
            ProcessContext::builder()
                .cwd(&config.user_dir)
                .max_background_tasks(config.max_tasks)
                .sweep_orphans_on_start(true)
                .env_policy(config.env_policy.clone())
                .sandbox(sandbox)
                .try_build()
                .map_err(|error| crate::RestateError::Config(error.to_string()))?,
        );
        if let Some(plan) = process.sandbox_plan() {
            Self::check_sandbox_plan(&plan, &config.user_dir)?;
        }
        Ok(Self {
            service: crate::protocol::service_name(&config.worker_id),
            boot: crate::ids::random_token(),
            process,
            ingress,
            runtime,
            handles: Mutex::new(HashMap::new()),
            spawned: Mutex::new(HashMap::new()),
            draining: std::sync::atomic::AtomicBool::new(false),
            reports_in_flight: std::sync::atomic::AtomicUsize::new(0),
            config,
        })
    }

    /// Waits until the processes of dead workers on this machine are gone, so nothing
    /// the previous worker started is still running once this one answers.
    pub async fn ready(&self) {
        let _ = self.process.startup_sweep().await;
    }

    /// Once registered: asks Restate's admin API (`admin`) which handles have tasks on
    /// this worker's object and sends each a `sweep`, so what a dead worker left
    /// `running` reads `lost` — and parked waiters wake — without waiting for a host to
    /// ask. Returns how many handles were told.
    pub async fn sweep_lost(&self, admin: &str) -> Result<usize, crate::RestateError> {
        let target = format!("{}/query", admin.trim_end_matches('/'));
        // The name is `ZidaneWorker_` and a validated id: nothing in it needs quoting.
        let query = format!(
            "SELECT DISTINCT service_key FROM state WHERE service_name = '{}'",
            self.service
        );
        let request = reqwest::Client::new()
            .post(&target)
            .header("accept", "application/json")
            .timeout(Duration::from_secs(30));
        let bytes = exchange(request, &serde_json::json!({ "query": query }), &target).await?;
        let answer: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|source| crate::RestateError::Decode {
                target: target.clone(),
                cause: source,
            })?;
        let keys: Vec<String> = answer
            .get("rows")
            .and_then(|rows| rows.as_array())
            .map(|rows| {
                rows.iter()
                    .filter_map(|row| row.get("service_key")?.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        for key in &keys {
            let idempotency = format!("sweep-{}-{key}", self.boot);
            self.ingress
                .send(
                    &self.service,
                    key,
                    "sweep",
                    &serde_json::Value::Null,
                    &idempotency,
                )
                .await?;
        }
        Ok(keys.len())
    }

    /// The service name this worker registers: `ZidaneWorker_<id>`.
    pub fn service_name(&self) -> &str {
        &self.service
    }

    /// This worker process's boot id.
    pub fn boot(&self) -> &str {
        &self.boot
    }

    pub(crate) fn local_handle_if_any(&self, handle: u64) -> Option<ExecutionHandle> {
        lock(&self.handles).get(&handle).copied()
    }

    pub(crate) async fn local_handle(&self, handle: u64) -> Result<ExecutionHandle, HandlerError> {
        if let Some(local) = self.local_handle_if_any(handle) {
            return Ok(local);
        }
        let local = self.process.create_handle().await.map_err(terminal)?;
        Ok(*lock(&self.handles).entry(handle).or_insert(local))
    }

    /// What placement asks of this worker: its labels, and how many tasks run on it.
    pub(crate) async fn describe(&self) -> crate::protocol::WorkerInfo {
        let locals: Vec<ExecutionHandle> = lock(&self.handles).values().copied().collect();
        let mut running = 0;
        for local in locals {
            if let Ok(entries) = self.process.list_background(local).await {
                running += entries
                    .iter()
                    .filter(|entry| entry.status() == zidane_context::TaskStatus::Running)
                    .count();
            }
        }
        crate::protocol::WorkerInfo {
            labels: self.config.labels.clone(),
            running,
            draining: self.is_draining(),
        }
    }

    /// Stops taking tasks: every later start is refused (a host's context then tries
    /// another worker, and placement skips this one), while running tasks go on and
    /// their exits are recorded as ever. See [`Worker::drained`].
    pub fn drain(&self) {
        self.draining
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether [`Worker::drain`] was called.
    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether nothing is left to wait for: no task runs on this worker and Restate has
    /// accepted every exit report.
    pub async fn drained(&self) -> bool {
        self.describe().await.running == 0
            && self
                .reports_in_flight
                .load(std::sync::atomic::Ordering::SeqCst)
                == 0
    }

    /// Whether every task this worker ran reads ended in its object's durable tables,
    /// asked through Restate's ingress (so behind any exit still being recorded).
    pub async fn recorded(&self) -> bool {
        self.every_own_task(|entry| !entry.is_running()).await
    }

    /// Whether every task this worker ran reads ended and told to some session's model
    /// (its end read from this worker's tables while it still serves them).
    pub async fn told(&self) -> bool {
        self.every_own_task(|entry| !entry.is_running() && entry.reported)
            .await
    }

    /// Whether `holds` holds for every task of every handle this worker ran, as its
    /// tables read through Restate's ingress (listed by nobody, so claiming nothing).
    async fn every_own_task(&self, holds: impl Fn(&zidane_context::TaskEntry) -> bool) -> bool {
        let handles: Vec<u64> = lock(&self.handles).keys().copied().collect();
        for handle in handles {
            let listed: Result<Vec<zidane_context::TaskEntry>, crate::RestateError> = self
                .ingress
                .call(
                    &self.service,
                    &handle.to_string(),
                    "list",
                    &crate::protocol::ListRequest::default(),
                    RECORDED_CHECK_TIMEOUT,
                )
                .await;
            if !listed.is_ok_and(|entries| entries.iter().all(&holds)) {
                return false;
            }
        }
        true
    }

    /// Ends every task still running here (each end recorded, its kill reason the
    /// request); for a drain past its deadline.
    pub async fn end_tasks(&self) {
        let locals: Vec<ExecutionHandle> = lock(&self.handles).values().copied().collect();
        for local in locals {
            let Ok(entries) = self.process.list_background(local).await else {
                continue;
            };
            for entry in entries
                .iter()
                .filter(|entry| entry.status() == zidane_context::TaskStatus::Running)
            {
                if let Err(error) = self.process.kill_background(local, entry.task_id).await {
                    tracing::warn!(task = %entry.task_id, %error, "a draining worker could not end a task");
                }
            }
        }
    }

    pub(crate) fn handle_dir(&self, handle: u64) -> PathBuf {
        self.config
            .user_dir
            .join("handles")
            .join(handle.to_string())
    }

    /// The policy of a worker's context: `sandbox` with every handle's directory under
    /// `user_dir` as its workspace (each task is then held to its own: see `spawn`).
    pub fn context_sandbox(sandbox: &SandboxPolicy, user_dir: &std::path::Path) -> SandboxPolicy {
        let mut sandbox = sandbox.clone();
        sandbox.workspace = vec![user_dir.join("handles")];
        sandbox
    }

    /// Refuses a sandbox whose writable directories hold the sessions' directories
    /// (`user_dir` under a temp directory, or a `writable` directory above it): a task
    /// could then write into another session's files. `plan` is what the worker's
    /// context enforces ([`Worker::context_sandbox`]).
    pub fn check_sandbox_plan(
        plan: &zidane_process::SandboxPlan,
        user_dir: &std::path::Path,
    ) -> Result<(), crate::RestateError> {
        let handles = user_dir.join("handles");
        let real = |path: &std::path::Path| std::fs::canonicalize(path).unwrap_or(path.to_owned());
        let (handles_real, user_real) = (real(&handles), real(user_dir));
        let wide = plan.writable.iter().find(|dir| {
            let dir = real(dir);
            dir != handles_real && (handles_real.starts_with(&dir) || user_real.starts_with(&dir))
        });
        match wide {
            Some(dir) => Err(crate::RestateError::Config(format!(
                "the user dir {} is inside {}, which every sandboxed task may write: a task                  of one session could write another's files. Keep the user dir elsewhere                  (/var/lib/zidane-worker), or run tasks without a sandbox (--sandbox off)",
                user_dir.display(),
                dir.display()
            ))),
            None => Ok(()),
        }
    }

    /// What a task of the handle whose directory is `workspace` may touch: the worker's
    /// policy, under `workspace-write` held to that directory (no other handle's), and
    /// no wider than the mode and network of the host's own sandbox (`host`: Codex's
    /// read-only makes the task read-only here too). The host's paths are its own
    /// machine's and mean nothing here; an approval to run outside the host's sandbox
    /// does not lift the worker's. With the worker's sandbox off, tasks run as it says.
    fn task_sandbox(&self, workspace: &std::path::Path, host: &SandboxScope) -> SandboxScope {
        let own = &self.config.sandbox;
        if own.mode == SandboxMode::Off {
            return SandboxScope::Context;
        }
        let mut policy = own.clone();
        policy.workspace = if own.mode == SandboxMode::WorkspaceWrite {
            vec![workspace.to_path_buf()]
        } else {
            Vec::new()
        };
        if let SandboxScope::Within(host) = host {
            let mut limits = SandboxPolicy::read_only().network(host.network);
            limits.mode = host.mode;
            if host.mode != SandboxMode::Off {
                // Only the host's mode and network: its writable paths are kept ours.
                let ours = policy.workspace.clone();
                limits.workspace = ours;
                limits.writable.clone_from(&policy.writable);
                policy = policy.narrowed_by(&limits);
            }
        }
        SandboxScope::Within(policy)
    }

    /// The side effect of `start`: spawn the process (once per boot and task).
    pub(crate) async fn spawn(
        self: &Arc<Self>,
        handle: u64,
        request: StartRequest,
    ) -> Result<Spawned, HandlerError> {
        if let Some(done) = lock(&self.spawned).get(&(handle, request.task_id)) {
            return Ok(done.clone());
        }
        // Inside the journaled spawn: a replay reads this refusal back, as it would a
        // spawn.
        if self.is_draining() {
            return Err(TerminalError::new(format!(
                "worker {} is draining: it starts no new task ({} not started)",
                self.config.worker_id, request.task_id
            ))
            .into());
        }
        if Utc::now().timestamp_millis() > request.deadline_ms {
            return Err(TerminalError::new(format!(
                "{} reached worker {} after its deadline: not started",
                request.task_id, self.config.worker_id
            ))
            .into());
        }
        let local = self.local_handle(handle).await?;
        let workspace = self.handle_dir(handle);
        // Made now: a task starts there, and its sandbox binds it.
        std::fs::create_dir_all(&workspace)
            .map_err(|error| TerminalError::new(format!("{}: {error}", workspace.display())))?;
        let mut options = BackgroundOptions::new(workspace.join("tasks"));
        options.spec.env = request.env.clone();
        let cwd = request.cwd.clone().unwrap_or_else(|| workspace.clone());
        options.spec.cwd = Some(cwd.clone());
        options.spec.sandbox = self.task_sandbox(&workspace, &request.sandbox);
        options.limits = request.limits;
        // Weak: the worker owns its context, which owns this callback. A strong
        // reference would keep both alive forever, and a stopped worker would leave its
        // tasks running instead of ending them as its context drops.
        let worker = Arc::downgrade(self);
        let runtime = self.runtime.clone();
        let task_id = request.task_id;
        options = options.on_exit(move |exit| {
            if let Some(worker) = worker.upgrade() {
                runtime
                    .spawn(async move { worker.report_exit(handle, task_id, local, exit).await });
            }
        });
        let started = self
            .process
            .exec_background(local, &request.command, options)
            .await
            .map_err(terminal)?;
        let spawned = Spawned {
            pid: started.pid,
            output_path: started.output_path,
            local_task: started.task_id,
            cwd,
            started_at: Utc::now(),
        };
        lock(&self.spawned).insert((handle, request.task_id), spawned.clone());
        Ok(spawned)
    }

    /// Marks `running` records of other boots `lost` (their worker died), answering
    /// their waiters. Returns whether anything changed.
    pub(crate) async fn mark_lost(
        &self,
        ctx: &ObjectContext<'_>,
        tasks: &mut Table,
    ) -> Result<bool, HandlerError> {
        let gone = table::lost(tasks, &self.boot);
        if gone.is_empty() {
            return Ok(false);
        }
        let now = ctx
            .run(|| async { Ok(Utc::now().timestamp_millis()) })
            .name("lost_at")
            .await?;
        let at = chrono::DateTime::from_timestamp_millis(now).unwrap_or_else(Utc::now);
        wake(ctx, table::mark_lost(tasks, &gone, at));
        Ok(true)
    }
}

// The paths are Unix's, where the sandbox is.
#[cfg(all(test, unix))]
mod tests {
    use std::path::Path;

    use super::*;

    fn plan(user_dir: &Path, temp: &[&str], writable: &[&str]) -> zidane_process::SandboxPlan {
        let mut policy = Worker::context_sandbox(&SandboxPolicy::workspace_write(""), user_dir);
        for dir in writable {
            policy = policy.writable(*dir);
        }
        let temp: Vec<PathBuf> = temp.iter().map(PathBuf::from).collect();
        zidane_process::SandboxPlan::new(&policy, Some(Path::new("/home/w")), &temp)
    }

    #[test]
    fn a_user_dir_every_task_may_write_is_refused() {
        let user_dir = Path::new("/srv/zidane-worker");
        assert!(Worker::check_sandbox_plan(&plan(user_dir, &["/tmp"], &[]), user_dir).is_ok());
        let in_tmp = Path::new("/tmp/zidane-worker");
        let refused = Worker::check_sandbox_plan(&plan(in_tmp, &["/tmp"], &[]), in_tmp);
        assert!(
            matches!(&refused, Err(crate::RestateError::Config(why)) if why.contains("/tmp")),
            "{refused:?}"
        );
        let below = Worker::check_sandbox_plan(&plan(user_dir, &["/tmp"], &["/srv"]), user_dir);
        assert!(below.is_err(), "{below:?}");
    }
}
