//! What crosses Restate between `RestateContext` and a worker: the requests of each
//! handler and the task record a worker keeps in its object's durable state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use zidane_context::{TaskEntry, TaskId, TaskLimits};

/// The prefix of every worker's service name: `ZidaneWorker_<worker-id>`.
pub(crate) const SERVICE_PREFIX: &str = "ZidaneWorker";

/// The service name of the worker with this id.
pub(crate) fn service_name(worker_id: &str) -> String {
    format!("{SERVICE_PREFIX}_{worker_id}")
}

/// The worker id in a worker's service name ([`service_name`]'s inverse); `None` for a
/// service that is not a worker's.
pub(crate) fn worker_id_of(service: &str) -> Option<&str> {
    service
        .strip_prefix(SERVICE_PREFIX)
        .and_then(|rest| rest.strip_prefix('_'))
}

/// The object key of a handle: its number in decimal.
pub(crate) fn object_key(handle: zidane_context::ExecutionHandle) -> String {
    handle.id().to_string()
}

/// `describe`: what placement needs to know of a worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WorkerInfo {
    /// The worker's labels.
    pub(crate) labels: Vec<String>,
    /// How many tasks run on it now, over every handle.
    pub(crate) running: usize,
    /// It is draining: it starts no new task.
    #[serde(default)]
    pub(crate) draining: bool,
}

/// `start`: run a command as task `task_id` of the object's handle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StartRequest {
    pub task_id: TaskId,
    pub command: String,
    pub cwd: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    /// The task's limits; the worker's local context enforces them.
    #[serde(flatten)]
    pub limits: TaskLimits,
    /// Unix milliseconds after which the worker refuses to start it: a start that
    /// reaches a worker late (it was down) must not run after the host gave up on it.
    pub deadline_ms: i64,
    /// The session that starts it: the one told its end while it lives.
    #[serde(default)]
    pub session: String,
    /// What the host's own sandbox allows (Codex's): the task runs no wider than its
    /// mode and network (its paths are the host machine's, not the worker's).
    #[serde(default)]
    pub sandbox: zidane_context::SandboxScope,
}

/// What the `spawn` side effect journals.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Spawned {
    pub pid: u32,
    pub output_path: PathBuf,
    pub local_task: TaskId,
    pub cwd: PathBuf,
    pub started_at: chrono::DateTime<chrono::Utc>,
}

/// One task in a worker object's durable state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    /// The task as `list_background` shows it (under its session-wide id).
    pub entry: TaskEntry,
    /// The worker process (boot) that started it; a task still `running` under another
    /// boot was lost with its worker.
    pub boot: String,
    /// Its id inside the worker's `ProcessContext`.
    pub local_task: TaskId,
    /// Awakeables of `wait` calls parked on it.
    #[serde(default)]
    pub waiters: Vec<String>,
    /// The session that started it (empty for a host that named none).
    #[serde(default)]
    pub origin: String,
    /// Which session tells its end.
    #[serde(default)]
    pub ledger: zidane_context::ToldLedger<String>,
}

/// `list`: the tasks of the handle as `session` is to see them (which ended ones it is
/// to tell); no session: as nobody tells them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ListRequest {
    #[serde(default)]
    pub session: Option<String>,
}

/// `told`: `session` told its model the ends of `task_ids`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ToldRequest {
    pub session: String,
    pub task_ids: Vec<TaskId>,
}

/// `number`: the next task number of the handle, at least `at_least`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NumberRequest {
    pub at_least: u64,
}

/// `record_exit`: the worker telling its own object that a task settled.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExitReport {
    pub task_id: TaskId,
    pub boot: String,
    pub status: zidane_context::TaskStatus,
    pub exit_code: i32,
    pub signal: Option<zidane_context::Signal>,
    pub ended_at: chrono::DateTime<chrono::Utc>,
    pub bytes_written: u64,
    /// The shell's own exit code when a kill ended what it left running.
    #[serde(default)]
    pub leader_exit_code: Option<i32>,
    /// Output the worker's log could not take.
    #[serde(default)]
    pub log_write_failure: Option<zidane_context::LogWriteFailure>,
    /// Why the worker's kill ended it, when one did.
    #[serde(default)]
    pub kill_reason: Option<zidane_context::KillReason>,
}

/// `kill`, `register_waiter`'s task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TaskRef {
    pub task_id: TaskId,
}

/// `wait`: park until the task ends, at most `timeout_ms`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WaitRequest {
    pub task_id: TaskId,
    pub timeout_ms: u64,
}

/// `register_waiter`: resolve `awakeable` when the task ends.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RegisterWaiter {
    pub task_id: TaskId,
    pub awakeable: String,
}

/// `read_file`: a window of a file under the handle's directory on the worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ReadRequest {
    pub path: PathBuf,
    pub range: zidane_context::ReadRange,
}

/// `exec`: a foreground command.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExecRequest {
    pub command: String,
    pub options: zidane_context::ExecOptions,
}

/// `probe`: one readiness probe on the worker, where its tasks run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ProbeRequest {
    pub task_id: TaskId,
    pub probe: zidane_context::Probe,
    pub timeout_ms: u64,
}
