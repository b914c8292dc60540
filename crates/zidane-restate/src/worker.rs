//! The worker: a Restate virtual object, keyed by execution handle, that runs a
//! session's tasks with a [`ProcessContext`] on this machine and keeps their table in
//! the object's durable state.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::Utc;
use restate_sdk::prelude::*;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, ExecOutput, ExecutionContext, ExecutionHandle,
    ReadResult, TaskEntry, TaskExitInfo, TaskId, TaskStatus,
};
use zidane_process::ProcessContext;

use crate::exit_report::ExitReporter;
use crate::ingress::Ingress;
use crate::protocol::{
    ExecRequest, ExitReport, ReadRequest, RegisterWaiter, Spawned, StartRequest, TaskRecord,
    TaskRef, WaitRequest,
};
use crate::table::{self, Table};

/// The state key of a handle's task table.
const TASKS: &str = "tasks";

/// How many tasks a worker runs at once, over all sessions, unless told otherwise.
pub const DEFAULT_WORKER_MAX_TASKS: usize = 64;

/// Who a worker is and where it keeps things.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
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
}

impl WorkerConfig {
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
        }
    }
}

/// A worker: the state one worker process shares between its handlers.
pub struct Worker {
    config: WorkerConfig,
    service: String,
    /// This worker process; differs on every start.
    boot: String,
    process: Arc<ProcessContext>,
    ingress: Ingress,
    runtime: tokio::runtime::Handle,
    /// Local handles by remote handle number.
    handles: Mutex<HashMap<u64, ExecutionHandle>>,
    /// What this boot spawned, so a `spawn` re-run after a lost journal write answers
    /// the same instead of starting the task twice.
    spawned: Mutex<HashMap<(u64, TaskId), Spawned>>,
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
    /// left behind (see [`Worker::ready`]).
    pub fn new(config: WorkerConfig) -> Result<Self, crate::RestateError> {
        crate::validate_worker_id(&config.worker_id)?;
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| crate::RestateError::NoRuntime)?;
        let ingress = Ingress::new(&config.ingress)?;
        let process = Arc::new(
            ProcessContext::builder()
                .cwd(&config.user_dir)
                .max_background_tasks(config.max_tasks)
                .sweep_orphans_on_start(true)
                .build(),
        );
        Ok(Self {
            service: crate::protocol::service_name(&config.worker_id),
            boot: crate::random_token(),
            process,
            ingress,
            runtime,
            handles: Mutex::new(HashMap::new()),
            spawned: Mutex::new(HashMap::new()),
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
        let http = reqwest::Client::new();
        let response = http
            .post(&target)
            .header("accept", "application/json")
            .json(&serde_json::json!({ "query": query }))
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|source| crate::RestateError::Http {
                target: target.clone(),
                source,
            })?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|source| crate::RestateError::Http {
                target: target.clone(),
                source,
            })?;
        if !status.is_success() {
            return Err(crate::RestateError::Handler {
                target,
                status: status.as_u16(),
                message: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        let answer: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|source| crate::RestateError::Decode {
                target: target.clone(),
                source,
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

    fn local_handle_if_any(&self, handle: u64) -> Option<ExecutionHandle> {
        lock(&self.handles).get(&handle).copied()
    }

    async fn local_handle(&self, handle: u64) -> Result<ExecutionHandle, HandlerError> {
        if let Some(local) = self.local_handle_if_any(handle) {
            return Ok(local);
        }
        let local = self.process.create_handle().await.map_err(terminal)?;
        Ok(*lock(&self.handles).entry(handle).or_insert(local))
    }

    fn handle_dir(&self, handle: u64) -> PathBuf {
        self.config
            .user_dir
            .join("handles")
            .join(handle.to_string())
    }

    /// The side effect of `start`: spawn the process (once per boot and task).
    async fn spawn(&self, handle: u64, request: StartRequest) -> Result<Spawned, HandlerError> {
        if let Some(done) = lock(&self.spawned).get(&(handle, request.task_id)) {
            return Ok(done.clone());
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
        options.env = request.env.clone();
        options.cwd = request.cwd.clone();
        options.max_output_bytes = request.max_output_bytes;
        let reporter = ExitReporter {
            ingress: self.ingress.clone(),
            service: self.service.clone(),
            key: handle.to_string(),
            task_id: request.task_id,
            boot: self.boot.clone(),
            local,
            process: Arc::clone(&self.process),
        };
        let runtime = self.runtime.clone();
        options = options.on_exit(move |exit| {
            let reporter = reporter.clone();
            runtime.spawn(async move { reporter.report(exit).await });
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
    async fn mark_lost(
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

/// The Restate object. Its service name is replaced by `ZidaneWorker_<id>` when served
/// (see `serve.rs`).
pub(crate) struct ZidaneWorker(pub(crate) Arc<Worker>);

#[restate_sdk::object]
impl ZidaneWorker {
    /// Starts a task (idempotent per task id).
    #[handler]
    async fn start(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<StartRequest>,
    ) -> HandlerResult<Json<BackgroundStarted>> {
        let handle = handle_of(ctx.key())?;
        let mut tasks = load(&ctx).await?;
        let mut changed = self.0.mark_lost(&ctx, &mut tasks).await?;
        let key = request.task_id.to_string();
        if !tasks.contains_key(&key) {
            // Journaled: a replayed `start` reads the spawn back instead of spawning.
            let worker = Arc::clone(&self.0);
            let Json(spawned) = ctx
                .run(|| {
                    let request = request.clone();
                    async move { worker.spawn(handle, request).await.map(Json) }
                })
                .name("spawn")
                .await?;
            let entry = TaskEntry {
                task_id: request.task_id,
                pid: spawned.pid,
                command: request.command.clone(),
                cwd: spawned.cwd,
                output_path: spawned.output_path,
                status: TaskStatus::Running,
                exit_code: None,
                signal: None,
                started_at: spawned.started_at,
                ended_at: None,
                bytes_written: 0,
            };
            let record = TaskRecord {
                entry,
                boot: self.0.boot.clone(),
                local_task: spawned.local_task,
                waiters: Vec::new(),
            };
            tasks.insert(key.clone(), record);
            changed = true;
        }
        if changed {
            save(&ctx, &tasks);
        }
        let entry = &tasks[&key].entry;
        Ok(Json(BackgroundStarted {
            task_id: entry.task_id,
            output_path: entry.output_path.clone(),
            pid: entry.pid,
        }))
    }

    /// Records a task's exit (sent by the worker that ran it) and wakes its waiters.
    #[handler]
    async fn record_exit(
        &self,
        ctx: ObjectContext<'_>,
        Json(report): Json<ExitReport>,
    ) -> HandlerResult<()> {
        let mut tasks = load(&ctx).await?;
        let status = |tasks: &Table| table::record(tasks, report.task_id).map(|r| r.entry.status);
        let before = status(&tasks);
        wake(&ctx, table::record_exit(&mut tasks, &report));
        if status(&tasks) != before {
            save(&ctx, &tasks);
        }
        Ok(())
    }

    /// Kills a task's process group; returns its exit, `None` for an unknown id.
    #[handler]
    async fn kill(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<TaskRef>,
    ) -> HandlerResult<Json<Option<TaskExitInfo>>> {
        let handle = handle_of(ctx.key())?;
        let mut tasks = load(&ctx).await?;
        let mut changed = self.0.mark_lost(&ctx, &mut tasks).await?;
        let Some(record) = table::record(&tasks, request.task_id) else {
            return Ok(Json(None));
        };
        if record.entry.status == TaskStatus::Running {
            let worker = Arc::clone(&self.0);
            let local_task = record.local_task;
            let task_id = request.task_id;
            let Json(exit) = ctx
                .run(|| async move {
                    let Some(local) = worker.local_handle_if_any(handle) else {
                        return Ok(Json(None));
                    };
                    let exit = worker
                        .process
                        .kill_background(local, local_task)
                        .await
                        .map_err(terminal)?;
                    // The session's id, not the worker's own.
                    Ok(Json(exit.map(|exit| {
                        (TaskExitInfo { task_id, ..exit }, Utc::now())
                    })))
                })
                .name("kill")
                .await?;
            if let Some((exit, ended_at)) = exit {
                wake(&ctx, table::record_kill(&mut tasks, &exit, ended_at));
                changed = true;
            }
        }
        let exit = table::record(&tasks, request.task_id).and_then(|r| r.entry.exit_info());
        if changed {
            save(&ctx, &tasks);
        }
        Ok(Json(exit))
    }

    /// Marks what an earlier boot left `running` as lost (sent to every handle with
    /// tasks when a worker starts, see [`Worker::sweep_lost`]).
    #[handler]
    async fn sweep(&self, ctx: ObjectContext<'_>) -> HandlerResult<()> {
        let mut tasks = load(&ctx).await?;
        if self.0.mark_lost(&ctx, &mut tasks).await? {
            save(&ctx, &tasks);
        }
        Ok(())
    }

    /// Every task of the handle, from durable state (running ones with their current
    /// byte count).
    #[handler]
    async fn list(&self, ctx: ObjectContext<'_>) -> HandlerResult<Json<Vec<TaskEntry>>> {
        let handle = handle_of(ctx.key())?;
        let mut tasks = load(&ctx).await?;
        if self.0.mark_lost(&ctx, &mut tasks).await? {
            save(&ctx, &tasks);
        }
        // Live byte counts are read, not journaled: they only inform the answer.
        let live: HashMap<TaskId, u64> = match self.0.local_handle_if_any(handle) {
            Some(local) => self
                .0
                .process
                .list_background(local)
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|entry| (entry.task_id, entry.bytes_written))
                .collect(),
            None => HashMap::new(),
        };
        let mut entries: Vec<TaskEntry> = tasks
            .into_values()
            .map(|record| {
                let mut entry = record.entry;
                if entry.status == TaskStatus::Running
                    && let Some(bytes) = live.get(&record.local_task)
                {
                    entry.bytes_written = *bytes;
                }
                entry
            })
            .collect();
        entries.sort_by_key(|entry| entry.task_id);
        Ok(Json(entries))
    }

    /// Parks until the task ends (an awakeable the exit resolves) or the timeout;
    /// `None` on timeout or for an unknown id. Shared, so it never blocks the object.
    #[handler]
    async fn wait(
        &self,
        ctx: SharedObjectContext<'_>,
        Json(request): Json<WaitRequest>,
    ) -> HandlerResult<Json<Option<TaskExitInfo>>> {
        let tasks: Table = ctx
            .get::<Json<Table>>(TASKS)
            .await?
            .map(|Json(tasks)| tasks)
            .unwrap_or_default();
        let Some(record) = table::record(&tasks, request.task_id) else {
            return Ok(Json(None));
        };
        if let Some(exit) = record.entry.exit_info() {
            return Ok(Json(Some(exit)));
        }
        let (awakeable, exited) = ctx.awakeable::<Json<Option<TaskExitInfo>>>();
        // The object's writer registers the awakeable (and resolves it at once if the
        // task ended in between, or was lost).
        let _ = ctx
            .request::<_, ()>(
                restate_sdk::context::RequestTarget::object(
                    self.0.service.clone(),
                    ctx.key(),
                    "register_waiter",
                ),
                Json(RegisterWaiter {
                    task_id: request.task_id,
                    awakeable,
                }),
            )
            .send();
        restate_sdk::select! {
            exit = exited => Ok(exit?),
            _ = ctx.sleep(Duration::from_millis(request.timeout_ms)) => Ok(Json(None)),
        }
    }

    /// Adds an awakeable to a task's waiters, or resolves it at once when the task has
    /// already ended.
    #[handler]
    async fn register_waiter(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<RegisterWaiter>,
    ) -> HandlerResult<()> {
        let mut tasks = load(&ctx).await?;
        self.0.mark_lost(&ctx, &mut tasks).await?;
        wake(
            &ctx,
            table::add_waiter(&mut tasks, request.task_id, request.awakeable),
        );
        save(&ctx, &tasks);
        Ok(())
    }

    /// A window of lines of a file under the handle's directory on this worker.
    #[handler]
    async fn read_file(
        &self,
        ctx: SharedObjectContext<'_>,
        Json(request): Json<ReadRequest>,
    ) -> HandlerResult<Json<ReadResult>> {
        let handle = handle_of(ctx.key())?;
        let root = self.0.handle_dir(handle);
        let path = inside(&root, &request.path)?;
        let local = self.0.local_handle(handle).await?;
        let result = self
            .0
            .process
            .read_file(local, &path, request.range)
            .await
            .map_err(terminal)?;
        Ok(Json(result))
    }

    /// Runs a foreground command on this worker.
    #[handler]
    async fn exec(
        &self,
        ctx: SharedObjectContext<'_>,
        Json(request): Json<ExecRequest>,
    ) -> HandlerResult<Json<ExecOutput>> {
        let handle = handle_of(ctx.key())?;
        let worker = Arc::clone(&self.0);
        let output = ctx
            .run(|| async move {
                let local = worker.local_handle(handle).await?;
                worker
                    .process
                    .exec(local, &request.command, request.options)
                    .await
                    .map(Json)
                    .map_err(terminal)
            })
            .name("exec")
            .await?;
        Ok(output)
    }

    /// Kills every task of the handle on this worker and forgets the handle.
    #[handler]
    async fn destroy(&self, ctx: ObjectContext<'_>) -> HandlerResult<()> {
        let handle = handle_of(ctx.key())?;
        let mut tasks = load(&ctx).await?;
        let worker = Arc::clone(&self.0);
        ctx.run(|| async move {
            let local = lock(&worker.handles).remove(&handle);
            if let Some(local) = local {
                worker.process.destroy(local).await.map_err(terminal)?;
            }
            lock(&worker.spawned).retain(|(h, _), _| *h != handle);
            Ok(())
        })
        .name("destroy")
        .await?;
        // Waiters learn the handle is gone: nothing more will end.
        wake(&ctx, table::clear(&mut tasks));
        ctx.clear_all();
        Ok(())
    }
}

/// Resolves each awakeable with its answer.
fn wake(ctx: &ObjectContext<'_>, wakes: Vec<table::Wake>) {
    for (awakeable, exit) in wakes {
        ctx.resolve_awakeable(&awakeable, Json(exit));
    }
}

async fn load(ctx: &ObjectContext<'_>) -> Result<Table, HandlerError> {
    Ok(ctx
        .get::<Json<Table>>(TASKS)
        .await?
        .map(|Json(tasks)| tasks)
        .unwrap_or_default())
}

fn save(ctx: &ObjectContext<'_>, tasks: &Table) {
    ctx.set(TASKS, Json(tasks.clone()));
}

fn handle_of(key: &str) -> Result<u64, HandlerError> {
    key.parse().map_err(|_| {
        TerminalError::new(format!("object key {key:?} is not a handle number")).into()
    })
}

/// `path` if it lies under `root` (both resolved), else a terminal error: a worker
/// serves a handle's own files, not its whole disk.
fn inside(root: &Path, path: &Path) -> Result<PathBuf, HandlerError> {
    let refused = || TerminalError::new(format!("{} is not a file of this handle", path.display()));
    let root = root.canonicalize().map_err(|_| refused())?;
    let path = path.canonicalize().map_err(|_| refused())?;
    if path.starts_with(&root) {
        Ok(path)
    } else {
        Err(refused().into())
    }
}

fn terminal(error: zidane_context::ContextError) -> HandlerError {
    TerminalError::new(error.to_string()).into()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_serves_only_the_files_of_the_handle() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("handles/7");
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        let log = root.join("tasks/bash_1.log");
        std::fs::write(&log, "x\n").unwrap();
        std::fs::write(dir.path().join("secret"), "x\n").unwrap();
        assert!(inside(&root, &log).is_ok());
        assert!(inside(&root, &root.join("tasks/../tasks/bash_1.log")).is_ok());
        assert!(inside(&root, &root.join("../../secret")).is_err());
        assert!(inside(&root, &dir.path().join("secret")).is_err());
        assert!(inside(&root, &root.join("missing.log")).is_err());
    }

    #[test]
    fn handle_keys_are_numbers() {
        assert_eq!(handle_of("42").unwrap(), 42);
        assert!(handle_of("h42").is_err());
    }
}
