//! `RestateContext`: an `ExecutionContext` whose background tasks run on workers behind
//! Restate and outlive the host.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, Capabilities, ContextError, DetachedTasks, ExecOptions,
    ExecOutput, ExecutionContext, ExecutionHandle, Probe, ProbeOutcome, ReadRange, ReadResult,
    Result, TaskEntry, TaskExitInfo, TaskId, validate_command,
};
use zidane_context::{CancellationToken, lock};

use crate::error::RestateError;
use crate::ingress::Ingress;
use crate::protocol::{
    ExecRequest, ListRequest, NumberRequest, ProbeRequest, ReadRequest, StartRequest, TaskRef,
    ToldRequest, WaitRequest, object_key, service_name, worker_id_of,
};

/// How long a session counts as alive after it last listed its tasks: hosts on a fleet
/// list every sweep interval, so a session silent this long has died, and the ends it
/// was to tell go to the next session of its handle.
pub const SESSION_LEASE: Duration = Duration::from_secs(10);

/// How long a call to a worker may take before the worker counts as unreachable.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a host should sweep `list_background` for exits while idle.
pub const DEFAULT_SWEEP_INTERVAL: Duration = Duration::from_millis(500);

/// Slack added to a `wait` call's timeout for the round trip through Restate.
const WAIT_SLACK: Duration = Duration::from_secs(5);

/// How long the host asks a worker that did not answer a start whether it ran it.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// How much longer than a start's deadline the host waits for its answer: a start the
/// worker accepted just before its deadline still answers before the host moves on.
const START_SLACK: Duration = Duration::from_secs(2);

/// A durable [`ExecutionContext`]: background tasks run on `zidane-worker`s behind a
/// Restate server and survive the host.
///
/// Starts go to the workers in turn (the next one when a worker does not answer);
/// `list_background` asks every worker and returns what the reachable ones know.
/// Exits are not pushed: `on_exit` is ignored and hosts sweep `list_background`
/// (see [`Capabilities::sweep_interval`]). A handle is a number the host keeps (with its
/// session) to reach the same tasks after a restart: build the agent with it.
#[derive(Debug)]
pub struct RestateContext {
    ingress: Ingress,
    /// Service names, one per worker.
    workers: Vec<String>,
    next_worker: AtomicUsize,
    call_timeout: Duration,
    sweep_interval: Duration,
    /// Per handle: the next task number (known once listed).
    next_task: Mutex<HashMap<u64, u64>>,
    /// Which worker runs a task.
    owners: Mutex<HashMap<(u64, TaskId), usize>>,
    /// Which worker holds a log, so `read_file` asks it first.
    logs: Mutex<HashMap<(u64, PathBuf), usize>>,
    /// This host's session: the one told the ends of the tasks it starts (see
    /// [`RestateContext::session`]); `None`: the handle's.
    session: Option<String>,
    /// The handle every session of one workspace shares, when one was named.
    workspace: Option<u64>,
    /// It only looks: its lists claim no end to tell (see [`RestateContext::looking`]).
    looking: bool,
}

impl RestateContext {
    /// A context reaching Restate's ingress at `ingress` (`http://host:8080`), with
    /// tasks spread over the workers with these ids.
    pub fn new(
        ingress: &str,
        worker_ids: impl IntoIterator<Item = impl Into<String>>,
    ) -> std::result::Result<Self, RestateError> {
        let mut workers = Vec::new();
        for id in worker_ids {
            let id = id.into();
            crate::ids::validate_worker_id(&id)?;
            workers.push(service_name(&id));
        }
        if workers.is_empty() {
            return Err(RestateError::NoWorkers);
        }
        Ok(Self {
            ingress: Ingress::new(ingress)?,
            workers,
            next_worker: AtomicUsize::new(0),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            sweep_interval: DEFAULT_SWEEP_INTERVAL,
            next_task: Mutex::new(HashMap::new()),
            owners: Mutex::new(HashMap::new()),
            logs: Mutex::new(HashMap::new()),
            session: None,
            workspace: None,
            looking: false,
        })
    }

    /// Names this host's session. Workers keep, per task, which session is told its
    /// end ([`ToldLedger`](zidane_context::ToldLedger)): the one that started it while
    /// it lists its tasks, else the first other session of the handle that lists them;
    /// each end is told once across sessions. A session that has not listed for ten
    /// seconds counts as gone. Default: one session per handle, so a host restarted on
    /// its handle is the session it was; name one when several hosts share a handle
    /// ([`RestateContext::workspace`]).
    #[must_use]
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Makes this context a person's view (`zidane ps`): its lists show every task as it
    /// is, each ended one `reported` only once some session told it, and claim nothing,
    /// so no session's telling of an end is taken over by a look.
    #[must_use]
    pub fn looking(mut self) -> Self {
        self.looking = true;
        self
    }

    /// The id of the worker that runs task `task_id` of `handle`, as the last list or
    /// start found it; `None` before either.
    pub fn worker_of(&self, handle: ExecutionHandle, task_id: TaskId) -> Option<String> {
        let index = *lock(&self.owners).get(&(handle.id(), task_id))?;
        let service = &self.workers[index];
        Some(worker_id_of(service).unwrap_or(service).to_owned())
    }

    /// The session that asks for `handle`'s tasks.
    fn session_for(&self, handle: ExecutionHandle) -> String {
        self.session
            .clone()
            .unwrap_or_else(|| format!("handle-{}", handle.id()))
    }

    /// Shares one handle between every session of a workspace: `create_handle` returns
    /// [`RestateContext::workspace_handle`] of `key` instead of a new one, so a later
    /// session (after a restart, a crash) lists, waits for and kills the tasks earlier
    /// ones started there, and is told the ends nobody was told. Make `key` unique to
    /// the workspace and to the machine and user it belongs to.
    #[must_use]
    pub fn workspace(mut self, key: &str) -> Self {
        self.workspace = Some(crate::ids::workspace_handle(key));
        self
    }

    /// The handle [`RestateContext::workspace`] gives for `key`: the same for every host
    /// and every version.
    pub fn workspace_handle(key: &str) -> ExecutionHandle {
        ExecutionHandle::new(crate::ids::workspace_handle(key))
    }

    /// Sets how long a call may take before its worker counts as unreachable.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the sweep interval hosts are asked for.
    #[must_use]
    pub fn sweep_interval(mut self, every: Duration) -> Self {
        self.sweep_interval = every;
        self
    }

    async fn call<Req: serde::Serialize, Res: serde::de::DeserializeOwned>(
        &self,
        worker: usize,
        handle: ExecutionHandle,
        handler: &str,
        body: &Req,
        timeout: Duration,
    ) -> std::result::Result<Res, RestateError> {
        self.ingress
            .call(
                &self.workers[worker],
                &object_key(handle),
                handler,
                body,
                timeout,
            )
            .await
    }

    /// Calls `handler` (no input) of every worker's object for `handle` at once; each
    /// answer comes with its worker's index.
    fn ask_every<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        handle: ExecutionHandle,
        handler: &'static str,
        body: &serde_json::Value,
    ) -> tokio::task::JoinSet<(usize, std::result::Result<T, RestateError>)> {
        let mut calls = tokio::task::JoinSet::new();
        for (index, service) in self.workers.iter().enumerate() {
            let ingress = self.ingress.clone();
            let service = service.clone();
            let key = object_key(handle);
            let timeout = self.call_timeout;
            let body = body.clone();
            calls.spawn(async move {
                let answer = ingress.call(&service, &key, handler, &body, timeout).await;
                (index, answer)
            });
        }
        calls
    }

    /// Lists every reachable worker's tasks of `handle`, noting owners and the next
    /// task number. Fails only when no worker answers.
    async fn list_all(
        &self,
        handle: ExecutionHandle,
    ) -> std::result::Result<Vec<TaskEntry>, RestateError> {
        let asking = serde_json::json!(ListRequest {
            session: (!self.looking).then(|| self.session_for(handle)),
        });
        let mut calls = self.ask_every::<Vec<TaskEntry>>(handle, "list", &asking);
        let mut entries = Vec::new();
        let mut answered = false;
        let mut last_error = None;
        while let Some(joined) = calls.join_next().await {
            let Ok((index, listed)) = joined else {
                continue;
            };
            match listed {
                Ok(listed) => {
                    answered = true;
                    self.note_owner(handle, &listed, index);
                    let worker = worker_id_of(&self.workers[index])
                        .unwrap_or(&self.workers[index])
                        .to_owned();
                    entries.extend(
                        listed
                            .into_iter()
                            .map(|entry| entry.runs_on(Some(worker.clone()))),
                    );
                }
                Err(error) => {
                    tracing::warn!(worker = %self.workers[index], %error, "worker did not list");
                    last_error = Some(error);
                }
            }
        }
        if !answered {
            return Err(RestateError::NoWorker {
                operation: "list_background",
                last: last_error.map(|e| e.to_string()).unwrap_or_default(),
            });
        }
        if last_error.is_none() {
            // Every worker answered: the numbering continues after the highest id.
            let highest = entries
                .iter()
                .map(|e| e.task_id.number())
                .max()
                .unwrap_or(0);
            let mut next = lock(&self.next_task);
            let slot = next.entry(handle.id()).or_insert(highest + 1);
            *slot = (*slot).max(highest + 1);
        }
        entries.sort_by_key(|e| e.task_id);
        Ok(entries)
    }

    /// Every worker's id and its labels and load (`None`: it did not answer in time),
    /// asked at once.
    async fn describe_all(
        &self,
        handle: ExecutionHandle,
    ) -> Vec<(String, Option<crate::protocol::WorkerInfo>)> {
        let mut calls = self.ask_every::<crate::protocol::WorkerInfo>(
            handle,
            "describe",
            &serde_json::Value::Null,
        );
        let mut described: Vec<(String, Option<crate::protocol::WorkerInfo>)> = self
            .workers
            .iter()
            .map(|service| (worker_id_of(service).unwrap_or(service).to_owned(), None))
            .collect();
        while let Some(joined) = calls.join_next().await {
            let Ok((index, answer)) = joined else {
                continue;
            };
            match answer {
                Ok(info) => described[index].1 = Some(info),
                Err(error) => {
                    tracing::warn!(worker = %self.workers[index], %error, "worker did not describe itself");
                }
            }
        }
        described
    }

    /// Remembers that worker `index` runs these tasks and holds their logs.
    fn note_owner(&self, handle: ExecutionHandle, entries: &[TaskEntry], index: usize) {
        let mut owners = lock(&self.owners);
        let mut logs = lock(&self.logs);
        for entry in entries {
            owners.insert((handle.id(), entry.task_id), index);
            logs.insert((handle.id(), entry.output_path.clone()), index);
        }
    }

    /// Task `task_id` as started on `worker`, if that worker has it (asked once, briefly).
    async fn started_on(
        &self,
        worker: usize,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Option<BackgroundStarted> {
        let listed: Vec<TaskEntry> = self
            .call(
                worker,
                handle,
                "list",
                &ListRequest::default(),
                PROBE_TIMEOUT,
            )
            .await
            .ok()?;
        let entry = listed.into_iter().find(|e| e.task_id == task_id)?;
        Some(BackgroundStarted::new(
            task_id,
            entry.output_path,
            entry.pid,
        ))
    }

    /// The next task id of `handle`, listing first when this host has not yet. The
    /// number comes from the first worker (by id) that answers, so the sessions sharing
    /// a handle never take the same one; past every number this host has seen.
    async fn next_task_id(&self, handle: ExecutionHandle) -> Result<TaskId> {
        if !lock(&self.next_task).contains_key(&handle.id()) {
            self.list_all(handle).await?;
        }
        let Some(at_least) = lock(&self.next_task).get(&handle.id()).copied() else {
            return Err(RestateError::NoWorker {
                operation: "exec_background (numbering needs every worker)",
                last: String::new(),
            }
            .into());
        };
        let mut by_id: Vec<usize> = (0..self.workers.len()).collect();
        by_id.sort_by(|a, b| self.workers[*a].cmp(&self.workers[*b]));
        let mut last = None;
        for worker in by_id {
            let request = NumberRequest { at_least };
            match self
                .call::<_, u64>(worker, handle, "number", &request, self.call_timeout)
                .await
            {
                Ok(number) => {
                    let mut next = lock(&self.next_task);
                    let slot = next.entry(handle.id()).or_insert(number + 1);
                    *slot = (*slot).max(number + 1);
                    return Ok(TaskId::from_number(number));
                }
                Err(error) => last = Some(error),
            }
        }
        Err(RestateError::NoWorker {
            operation: "exec_background (numbering)",
            last: last.map(|e| e.to_string()).unwrap_or_default(),
        }
        .into())
    }

    /// The worker running `task_id`, listing when this host does not know it.
    async fn owner(&self, handle: ExecutionHandle, task_id: TaskId) -> Option<usize> {
        if let Some(owner) = lock(&self.owners).get(&(handle.id(), task_id)) {
            return Some(*owner);
        }
        let _ = self.list_all(handle).await;
        lock(&self.owners).get(&(handle.id(), task_id)).copied()
    }
}

#[async_trait]
impl ExecutionContext for RestateContext {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new(DetachedTasks::Durable)
            .with_sweep_interval(self.sweep_interval)
            .with_placement()
    }

    async fn create_handle(&self) -> Result<ExecutionHandle> {
        // Random, and within JSON's exact integers: handles are minted by many hosts.
        Ok(ExecutionHandle::new(
            self.workspace
                .unwrap_or_else(|| crate::ids::random_u64() >> 11),
        ))
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<()> {
        let mut failed = None;
        for worker in 0..self.workers.len() {
            let destroyed: std::result::Result<(), RestateError> = self
                .call(
                    worker,
                    handle,
                    "destroy",
                    &serde_json::Value::Null,
                    self.call_timeout * 4,
                )
                .await;
            if let Err(error) = destroyed {
                failed = Some(error);
            }
        }
        lock(&self.owners).retain(|(h, _), _| *h != handle.id());
        lock(&self.logs).retain(|(h, _), _| *h != handle.id());
        lock(&self.next_task).remove(&handle.id());
        match failed {
            Some(error) => Err(error.into()),
            None => Ok(()),
        }
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput> {
        validate_command(command)?;
        let worker = self.next_worker.fetch_add(1, Ordering::Relaxed) % self.workers.len();
        let timeout = options.timeout.map_or(Duration::from_secs(24 * 3600), |t| {
            t + self.call_timeout + WAIT_SLACK
        });
        let request = ExecRequest {
            command: command.to_owned(),
            options,
        };
        Ok(self.call(worker, handle, "exec", &request, timeout).await?)
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult> {
        let request = ReadRequest {
            path: path.to_owned(),
            range,
        };
        // The worker known to hold the file first, then the others (each refuses what
        // is not its own).
        let known = lock(&self.logs)
            .get(&(handle.id(), path.to_owned()))
            .copied();
        let order = known
            .into_iter()
            .chain((0..self.workers.len()).filter(|w| Some(*w) != known));
        let mut last = None;
        for worker in order {
            match self
                .call(worker, handle, "read_file", &request, self.call_timeout)
                .await
            {
                Ok(result) => return Ok(result),
                Err(error) => last = Some(error),
            }
        }
        Err(ContextError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                last.map(|e| e.to_string()).unwrap_or_default(),
            ),
        ))
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted> {
        validate_command(command)?;
        if options.takes_input() {
            // A durable task outlives the host that could type into it.
            return Err(ContextError::unsupported(
                "exec_background with input or a terminal",
            ));
        }
        // Labels are checked before a task number is taken: a start no worker fits
        // leaves nothing behind.
        let first = self.next_worker.fetch_add(1, Ordering::Relaxed);
        let order: Vec<usize> = if options.labels.is_empty() {
            (0..self.workers.len())
                .map(|attempt| (first + attempt) % self.workers.len())
                .collect()
        } else {
            let described = self.describe_all(handle).await;
            crate::placement::order(&described, &options.labels, first).map_err(|known| {
                ContextError::NoMatchingWorker {
                    wanted: options.labels.join(", "),
                    known,
                }
            })?
        };
        let task_id = self.next_task_id(handle).await?;
        let mut request = StartRequest {
            task_id,
            command: command.to_owned(),
            cwd: options.spec.cwd,
            env: options.spec.env,
            limits: options.limits,
            deadline_ms: 0,
            session: self.session_for(handle),
            sandbox: options.spec.sandbox,
        };
        let mut last = None;
        for worker in order {
            // A start still queued (behind others of the handle, or for a worker that
            // is down) when its deadline passes is refused by the worker; the host waits
            // a little longer than that for the answer.
            let deadline = Utc::now() + self.call_timeout;
            request.deadline_ms = deadline.timestamp_millis();
            let answer = self
                .call::<_, BackgroundStarted>(
                    worker,
                    handle,
                    "start",
                    &request,
                    self.call_timeout + START_SLACK,
                )
                .await;
            let started = match answer {
                Ok(started) => Some(started),
                // The worker answered: it refused, and nothing runs there.
                Err(error @ RestateError::Handler { .. }) => {
                    last = Some(error);
                    None
                }
                // No answer: the start may yet run, or have run, on that worker. Past its
                // deadline it cannot start any more, so ask then, before moving on.
                Err(error) => {
                    tracing::warn!(worker = %self.workers[worker], %error, "start unanswered");
                    last = Some(error);
                    let wait = (deadline - Utc::now()).to_std().unwrap_or_default();
                    tokio::time::sleep(wait).await;
                    self.started_on(worker, handle, task_id).await
                }
            };
            if let Some(started) = started {
                lock(&self.owners).insert((handle.id(), task_id), worker);
                lock(&self.logs).insert((handle.id(), started.output_path.clone()), worker);
                return Ok(started);
            }
        }
        Err(RestateError::NoWorker {
            operation: "exec_background",
            last: last.map(|e| e.to_string()).unwrap_or_default(),
        }
        .into())
    }

    async fn kill_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
    ) -> Result<Option<TaskExitInfo>> {
        let Some(worker) = self.owner(handle, task_id).await else {
            return Ok(None);
        };
        let request = TaskRef { task_id };
        Ok(self
            .call(worker, handle, "kill", &request, self.call_timeout * 4)
            .await?)
    }

    async fn list_background(&self, handle: ExecutionHandle) -> Result<Vec<TaskEntry>> {
        Ok(self.list_all(handle).await?)
    }

    async fn exits_told(&self, handle: ExecutionHandle, task_ids: &[TaskId]) -> Result<()> {
        if task_ids.is_empty() || self.looking {
            return Ok(());
        }
        // Every worker: each records the ones it runs and ignores the rest.
        let request = serde_json::json!(ToldRequest {
            session: self.session_for(handle),
            task_ids: task_ids.to_vec(),
        });
        let mut calls = self.ask_every::<()>(handle, "told", &request);
        let (mut answered, mut last) = (false, None);
        while let Some(joined) = calls.join_next().await {
            match joined {
                Ok((_, Ok(()))) => answered = true,
                Ok((index, Err(error))) => {
                    tracing::warn!(worker = %self.workers[index], %error, "worker did not record a told end");
                    last = Some(error);
                }
                Err(_) => {}
            }
        }
        match last {
            Some(error) if !answered => Err(error.into()),
            _ => Ok(()),
        }
    }

    async fn probe(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        probe: Probe,
        timeout: Duration,
    ) -> Result<ProbeOutcome> {
        // On the worker that runs the task: its ports are the ones the task listens on.
        let Some(worker) = self.owner(handle, task_id).await else {
            return Ok(ProbeOutcome::NotReady {
                reason: format!("no worker runs {task_id}"),
            });
        };
        let request = ProbeRequest {
            task_id,
            probe,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
        Ok(self
            .call(
                worker,
                handle,
                "probe",
                &request,
                timeout + self.call_timeout,
            )
            .await?)
    }

    async fn wait_background(
        &self,
        handle: ExecutionHandle,
        task_id: TaskId,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> Result<Option<TaskExitInfo>> {
        let Some(worker) = self.owner(handle, task_id).await else {
            return Ok(None);
        };
        let request = WaitRequest {
            task_id,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
        tokio::select! {
            waited = self.call(worker, handle, "wait", &request, timeout + WAIT_SLACK) => Ok(waited?),
            () = cancel.cancelled() => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_worker_ids_is_its_own_error() {
        let error = RestateContext::new("http://127.0.0.1:8080", Vec::<String>::new())
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("no worker ids given: a context needs at least one worker to run tasks on")
        );
        let bad = RestateContext::new("http://127.0.0.1:8080", [""]).err();
        assert!(
            matches!(bad, Some(RestateError::InvalidWorkerId(ref id)) if id.is_empty()),
            "{bad:?}"
        );
    }
}
