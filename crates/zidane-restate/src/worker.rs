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
    BackgroundOptions, EnvPolicy, ExecutionContext, ExecutionHandle, TaskId, lock,
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
        }
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
        let process = Arc::new(
            ProcessContext::builder()
                .cwd(&config.user_dir)
                .max_background_tasks(config.max_tasks)
                .sweep_orphans_on_start(true)
                .env_policy(config.env_policy.clone())
                .try_build()
                .map_err(|error| crate::RestateError::Config(error.to_string()))?,
        );
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
            let ended = listed.is_ok_and(|entries| {
                entries
                    .iter()
                    .all(|entry| entry.status() != zidane_context::TaskStatus::Running)
            });
            if !ended {
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
        let mut options = BackgroundOptions::new(self.handle_dir(handle).join("tasks"));
        options.spec.env = request.env.clone();
        options.spec.cwd = request.cwd.clone();
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
            cwd: request
                .cwd
                .clone()
                .unwrap_or_else(|| self.process.cwd().to_owned()),
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
