//! The Restate object a worker serves: its handlers, each a step of a session's task
//! table on this worker (the rules of the table itself are in `table.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use restate_sdk::prelude::*;
use zidane_context::{
    BackgroundStarted, ExecOutput, ExecutionContext, ProbeOutcome, ReadResult, TaskEntry,
    TaskExitInfo, TaskId, TaskStatus, lock,
};

use crate::protocol::{
    ExecRequest, ExitReport, ListRequest, NumberRequest, ProbeRequest, ReadRequest, RegisterWaiter,
    StartRequest, TaskRecord, TaskRef, ToldRequest, WaitRequest,
};
use crate::table::{self, Table};
use crate::worker::Worker;

/// The state key of a handle's task table.
const TASKS: &str = "tasks";

/// The state key of the handle's sessions' last visits (see `table::visit`).
const VISITS: &str = "visits";

/// The state key of the handle's next task number (see the `number` handler).
const NEXT: &str = "next";

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
            let entry = TaskEntry::running(
                request.task_id,
                spawned.pid,
                request.command.clone(),
                spawned.cwd,
                spawned.output_path,
                spawned.started_at,
            );
            let record = TaskRecord {
                entry,
                boot: self.0.boot.clone(),
                local_task: spawned.local_task,
                waiters: Vec::new(),
                origin: request.session.clone(),
                ledger: zidane_context::ToldLedger::default(),
            };
            tasks.insert(key.clone(), record);
            changed = true;
        }
        if changed {
            save(&ctx, &tasks);
        }
        let entry = &tasks[&key].entry;
        Ok(Json(BackgroundStarted::new(
            entry.task_id,
            entry.output_path.clone(),
            entry.pid,
        )))
    }

    /// Records a task's exit (sent by the worker that ran it) and wakes its waiters.
    #[handler]
    async fn record_exit(
        &self,
        ctx: ObjectContext<'_>,
        Json(report): Json<ExitReport>,
    ) -> HandlerResult<()> {
        let mut tasks = load(&ctx).await?;
        let status = |tasks: &Table| table::record(tasks, report.task_id).map(|r| r.entry.status());
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
        if record.entry.is_running() {
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
                    Ok(Json(exit.map(|mut exit| {
                        exit.task_id = task_id;
                        (exit, Utc::now())
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
    /// byte count). Asked by a session, each ended task is marked `reported` unless
    /// that session is the one to tell it (the ledger's claim is kept); asked by
    /// nobody, unless nobody told it yet.
    #[handler]
    async fn list(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<Option<ListRequest>>,
    ) -> HandlerResult<Json<Vec<TaskEntry>>> {
        let handle = handle_of(ctx.key())?;
        let mut tasks = load(&ctx).await?;
        let mut changed = self.0.mark_lost(&ctx, &mut tasks).await?;
        match request.and_then(|request| request.session) {
            Some(session) => {
                let now = ctx
                    .run(|| async { Ok(Utc::now().timestamp_millis()) })
                    .name("visited_at")
                    .await?;
                let mut visits: table::Visits = ctx
                    .get::<Json<table::Visits>>(VISITS)
                    .await?
                    .map(|Json(visits)| visits)
                    .unwrap_or_default();
                if table::visit(&mut visits, &session, now) {
                    ctx.set(VISITS, Json(visits.clone()));
                }
                changed |= table::offer_ends(&mut tasks, &visits, &session, now);
            }
            None => table::show_told(&mut tasks),
        }
        if changed {
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
                if entry.status() == TaskStatus::Running
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

    /// Records that a session told its model these tasks' ends: no session tells them
    /// again.
    #[handler]
    async fn told(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<ToldRequest>,
    ) -> HandlerResult<()> {
        let mut tasks = load(&ctx).await?;
        if table::told(&mut tasks, &request.session, &request.task_ids) {
            save(&ctx, &tasks);
        }
        Ok(())
    }

    /// The handle's next task number (at least the one asked for, past every task this
    /// worker has): every session of a workspace numbers its tasks here, on the first
    /// worker that answers, so two never take the same number.
    #[handler]
    async fn number(
        &self,
        ctx: ObjectContext<'_>,
        Json(request): Json<NumberRequest>,
    ) -> HandlerResult<Json<u64>> {
        let tasks = load(&ctx).await?;
        let counter = ctx.get::<Json<u64>>(NEXT).await?.map_or(0, |Json(n)| n);
        let number = table::next_number(&tasks, counter, request.at_least);
        ctx.set(NEXT, Json(number + 1));
        Ok(Json(number))
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

    /// This worker's labels and load, for placing a start (any key: it reads no
    /// handle's state).
    #[handler]
    async fn describe(
        &self,
        _ctx: SharedObjectContext<'_>,
    ) -> HandlerResult<Json<crate::protocol::WorkerInfo>> {
        Ok(Json(self.0.describe().await))
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

    /// One readiness probe of this worker's machine (a port, a URL), for a task of the
    /// handle that runs here. Not journaled: a probe's answer is news, never replayed.
    #[handler]
    async fn probe(
        &self,
        ctx: SharedObjectContext<'_>,
        Json(request): Json<ProbeRequest>,
    ) -> HandlerResult<Json<ProbeOutcome>> {
        let handle = handle_of(ctx.key())?;
        let local = self.0.local_handle(handle).await?;
        // Operators see where a readiness wait's probes ran.
        tracing::info!(
            worker = self.0.service_name(),
            task = %request.task_id,
            probe = ?request.probe,
            "readiness probe"
        );
        let outcome = self
            .0
            .process
            .probe(
                local,
                // The worker's own context runs every task on this machine.
                request.task_id,
                request.probe,
                Duration::from_millis(request.timeout_ms),
            )
            .await
            .map_err(terminal)?;
        Ok(Json(outcome))
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
pub(crate) fn wake(ctx: &ObjectContext<'_>, wakes: Vec<table::Wake>) {
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

pub(crate) fn terminal(error: zidane_context::ContextError) -> HandlerError {
    TerminalError::new(error.to_string()).into()
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
