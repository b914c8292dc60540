//! What the person's commands list: every task zidane runs for this user on this
//! machine — the detached tasks the supervisor keeps and the running hosts' own — and a
//! fleet's, one [`Row`] each. `zidane ps` prints the rows, `zidane top` shows them live.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use zidane::context::TaskStatus;
use zidane::process::{ProcessTable, TreeUsage};
use zidane::supervisor::{HostTask, SupervisorClient, SupervisorError, TaskView};

use crate::error::CliError;

/// The detached tasks and the running hosts' tasks, or none when no supervisor runs
/// (then none is running).
async fn tasks(client: &SupervisorClient) -> Result<(Vec<TaskView>, Vec<HostTask>), CliError> {
    let detached = match client.list(None, None).await {
        Ok(tasks) => tasks,
        Err(SupervisorError::Unreachable { .. }) => return Ok((Vec::new(), Vec::new())),
        Err(error) => return Err(error.into()),
    };
    Ok((detached, client.host_tasks().await?))
}

/// One line of `zidane ps` and `zidane top`: a detached task, a running host's, or a
/// fleet's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// How a person names it: `bash_d7`, `<host pid>:bash_3`, `bash_3` on a fleet.
    pub(crate) id: String,
    /// `detached`, `session` (a running host's) or `fleet`.
    pub(crate) kind: &'static str,
    /// `running`, `exited <code>`, `killed`, `lost`.
    pub(crate) state: String,
    pub(crate) exit_code: Option<i32>,
    pub(crate) pid: Option<u32>,
    pub(crate) started_at: DateTime<Utc>,
    /// Its process tree's CPU time and memory, while it runs on this machine.
    pub(crate) usage: Option<TreeUsage>,
    /// What started it (`zidane mcp`, `zidane`, `worker w1`).
    pub(crate) host: String,
    pub(crate) session: String,
    pub(crate) cwd: PathBuf,
    pub(crate) workspace: Option<PathBuf>,
    pub(crate) command: String,
    pub(crate) output_path: Option<PathBuf>,
    pub(crate) told: Option<bool>,
    /// It runs in a terminal of its own (`zidane attach` takes it).
    pub(crate) tty: bool,
}

impl Row {
    pub(crate) fn detached(task: &TaskView, table: Option<&ProcessTable>) -> Self {
        let running = task.exit.is_none();
        Self {
            id: task.record.id.to_string(),
            kind: "detached",
            state: state(task),
            exit_code: task.exit.as_ref().map(|exit| exit.exit_code),
            pid: task.pid,
            started_at: task.record.started_at,
            usage: task
                .pid
                .filter(|_| running)
                .and_then(|pid| table?.tree_usage(pid)),
            host: task.record.host.clone(),
            session: task.record.session.clone(),
            cwd: task.record.cwd.clone(),
            workspace: Some(task.record.workspace.clone()),
            command: task.record.command.clone(),
            output_path: task.output_path.clone(),
            told: Some(task.told),
            tty: task.record.tty.is_some(),
        }
    }

    pub(crate) fn host(task: &HostTask, table: Option<&ProcessTable>) -> Self {
        Self {
            id: task.person_id(),
            kind: "session",
            state: "running".to_owned(),
            exit_code: None,
            pid: Some(task.leader.pid),
            started_at: task.started_at,
            usage: table.and_then(|table| table.tree_usage(task.leader.pid)),
            host: task.host.clone(),
            session: task.session.clone(),
            cwd: task.cwd.clone(),
            workspace: None,
            command: task.command.clone(),
            output_path: Some(task.output_path.clone()),
            told: None,
            tty: false,
        }
    }

    /// A task of this workspace on a fleet: its host is the worker that runs it (its
    /// usage is that machine's, not read here).
    pub(crate) fn fleet(entry: &zidane::context::TaskEntry, worker: &str) -> Self {
        Self {
            id: entry.task_id.to_string(),
            kind: "fleet",
            state: match entry.exit_info() {
                None => "running".to_owned(),
                Some(exit) => match exit.status {
                    TaskStatus::Killed => "killed".to_owned(),
                    TaskStatus::Lost => "lost".to_owned(),
                    _ => format!("exited {}", exit.exit_code),
                },
            },
            exit_code: entry.exit_code(),
            pid: Some(entry.pid),
            started_at: entry.started_at,
            usage: None,
            host: format!("worker {worker}"),
            session: String::new(),
            cwd: entry.cwd.clone(),
            workspace: None,
            command: entry.command.clone(),
            output_path: Some(entry.output_path.clone()),
            told: Some(entry.reported),
            tty: false,
        }
    }

    pub(crate) fn cells(&self, now: DateTime<Utc>) -> [String; 9] {
        [
            self.id.clone(),
            self.state.clone(),
            self.pid
                .map_or_else(|| "-".to_owned(), |pid| pid.to_string()),
            age(self.started_at, now),
            self.usage.map_or_else(
                || "-".to_owned(),
                |usage| format!("{:.1}s", usage.cpu.as_secs_f64()),
            ),
            self.usage
                .map_or_else(|| "-".to_owned(), |usage| mebibytes(usage.rss_bytes)),
            self.host.clone(),
            self.cwd.display().to_string(),
            self.command.lines().next().unwrap_or_default().to_owned(),
        ]
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "kind": self.kind,
            "state": self.state_word(),
            "exit_code": self.exit_code,
            "pid": self.pid,
            "command": self.command,
            "cwd": self.cwd,
            "workspace": self.workspace,
            "started_at": self.started_at,
            "cpu_ms": self.usage.map(|usage| u64::try_from(usage.cpu.as_millis()).unwrap_or(u64::MAX)),
            "rss_bytes": self.usage.map(|usage| usage.rss_bytes),
            "host": self.host,
            "session": self.session,
            "output_path": self.output_path,
            "told": self.told,
        })
    }

    /// The state without its exit code: `running`, `exited`, `killed`, `lost`.
    pub(crate) fn state_word(&self) -> &str {
        self.state.split(' ').next().unwrap_or_default()
    }
}

/// A detached task's state as a row says it.
pub(crate) fn state(task: &TaskView) -> String {
    match &task.exit {
        None => "running".to_owned(),
        Some(exit) => match exit.status {
            TaskStatus::Killed => "killed".to_owned(),
            TaskStatus::Lost => "lost".to_owned(),
            _ => format!("exited {}", exit.exit_code),
        },
    }
}

/// How long ago `started_at` was at `now`, in its largest unit: `42s`, `5m`, `3h`, `2d`.
pub(crate) fn age(started_at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let seconds = (now - started_at).num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86_400 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86_400),
    }
}

/// Bytes as MiB, one decimal.
pub(crate) fn mebibytes(bytes: u64) -> String {
    // Display only: the precision lost in the cast does not show in one decimal.
    #[allow(clippy::cast_precision_loss)]
    let mib = bytes as f64 / (1024.0 * 1024.0);
    format!("{mib:.1}M")
}

/// The rows of the tasks on this machine, read once: the detached tasks `keep` keeps,
/// then the running hosts' own, their usage from one reading of the process table.
pub(crate) async fn local_rows(
    client: &SupervisorClient,
    keep: impl Fn(&TaskView) -> bool,
) -> Result<Vec<Row>, CliError> {
    let (detached, hosts) = tasks(client).await?;
    let table = ProcessTable::read();
    Ok(detached
        .iter()
        .filter(|task| keep(task))
        .map(|task| Row::detached(task, table.as_ref()))
        .chain(hosts.iter().map(|task| Row::host(task, table.as_ref())))
        .collect())
}
