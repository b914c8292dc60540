//! One directory per detached task, each file written whole or not at all:
//!
//! | file | written by | holds |
//! |---|---|---|
//! | `task.json` | the monitor | who started what, where ([`TaskRecord`]) |
//! | `spec.json` | the monitor | what the monitor runs ([`MonitorSpec`]) |
//! | `started.json` | the monitor | the monitor's stamp and the task's pid ([`Started`]) |
//! | `exit.json` | the monitor | how the task ended ([`TaskExitInfo`]) |
//! | `ledger.json` | the supervisor | who is telling, or told, its end ([`Ledger`]) |
//!
//! A task's end is on disk before anyone hears of it, so a supervisor killed at any
//! moment loses nothing: the next one reads it back. The first three are written by
//! the monitor just after it answered that the task runs (so a start waits for none of
//! them), the record first; a directory holding a log and no `started.json` yet reads
//! as starting.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use zidane_context::{
    CommandSpec, EnvPolicy, SandboxPolicy, StdinMode, TaskExitInfo, TaskId, TaskLimits, TtySize,
};
use zidane_process::ProcessStamp;

use crate::error::{Result, SupervisorError};
use crate::ledger::Ledger;

/// What a task's monitor runs, and how.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MonitorSpec {
    /// The task's id.
    pub id: TaskId,
    /// The command line, run by the shell.
    pub command: String,
    /// Its working directory, extra environment and sandbox scope.
    pub spec: CommandSpec,
    /// Which of the host's environment the command gets.
    pub env_policy: EnvPolicy,
    /// The sandbox it runs in.
    pub sandbox: SandboxPolicy,
    /// Its output cap, stall window and budgets.
    pub limits: TaskLimits,
    /// How long a kill waits after SIGTERM before SIGKILL.
    pub kill_grace: Duration,
    /// Whether its stdin stays open for input (ignored with a `tty`).
    #[serde(default)]
    pub stdin: StdinMode,
    /// Its terminal's size, when it runs in one.
    #[serde(default)]
    pub tty: Option<TtySize>,
}

/// Who started a task, where, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// `bash_d<n>`.
    pub id: TaskId,
    /// The command line.
    pub command: String,
    /// Where it runs.
    pub cwd: PathBuf,
    /// The workspace whose sessions re-adopt it.
    pub workspace: PathBuf,
    /// The session that started it.
    pub session: String,
    /// What started it (`zidane mcp`, `zidane`, a library host), for `zidane ps`.
    pub host: String,
    /// The process of the session that started it, while it runs.
    #[serde(default)]
    pub host_process: Option<ProcessStamp>,
    /// When it was started.
    pub started_at: DateTime<Utc>,
    /// Whether it takes input (`shell_input`, `zidane attach`).
    #[serde(default)]
    pub stdin: StdinMode,
    /// Its terminal's size at start, when it runs in one.
    #[serde(default)]
    pub tty: Option<TtySize>,
}

/// What a monitor writes once its task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    /// The monitor itself: a kill is sent to it, after checking it is still the same
    /// process.
    pub monitor: ProcessStamp,
    /// The task's leader (its process group).
    pub pid: u32,
}

/// A file of a task's directory.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TaskFile {
    Spec,
    Record,
    Started,
    Exit,
    Ledger,
}

impl TaskFile {
    fn name(self) -> &'static str {
        match self {
            Self::Spec => "spec.json",
            Self::Record => "task.json",
            Self::Started => "started.json",
            Self::Exit => "exit.json",
            Self::Ledger => "ledger.json",
        }
    }

    pub(crate) fn path(self, task_dir: &Path) -> PathBuf {
        task_dir.join(self.name())
    }

    /// Whether the file is flushed to the disk before it is renamed into place: an end
    /// and who was told must survive the machine's crash. What a start writes need not:
    /// the crash that could lose it also ends the task it describes, and every process
    /// crash leaves it whole in the page cache.
    fn durable(self) -> bool {
        matches!(self, Self::Exit | Self::Ledger)
    }
}

/// Writes `value` as `file` of `task_dir`: whole (a temporary file renamed over it),
/// private (`0600`), and for a durable file flushed first.
pub(crate) fn write<T: Serialize>(task_dir: &Path, file: TaskFile, value: &T) -> Result<()> {
    let path = file.path(task_dir);
    let bytes = serde_json::to_vec_pretty(value).map_err(|error| SupervisorError::Malformed {
        what: "state",
        detail: error.to_string(),
    })?;
    let temp = task_dir.join(format!(".{}.tmp", file.name()));
    let mut out = crate::sys::create_private(&temp).map_err(SupervisorError::state(&temp))?;
    out.write_all(&bytes)
        .and_then(|()| {
            if file.durable() {
                out.sync_all()
            } else {
                Ok(())
            }
        })
        .map_err(SupervisorError::state(&temp))?;
    std::fs::rename(&temp, &path).map_err(SupervisorError::state(&path))
}

/// Reads `file` of `task_dir`; `Ok(None)` when it is not there (yet).
pub(crate) fn read<T: DeserializeOwned>(task_dir: &Path, file: TaskFile) -> Result<Option<T>> {
    let path = file.path(task_dir);
    match std::fs::read(&path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|error| SupervisorError::Malformed {
                    what: "state file",
                    detail: format!("{}: {error}", path.display()),
                })
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(SupervisorError::State {
            path,
            source: error,
        }),
    }
}

/// Everything known of one task, as read back from its directory.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) record: TaskRecord,
    pub(crate) started: Option<Started>,
    pub(crate) exit: Option<TaskExitInfo>,
    pub(crate) ledger: Ledger,
    pub(crate) output_path: Option<PathBuf>,
}

impl Stored {
    /// Reads a task's directory; `Ok(None)` for one without a record (a start that
    /// never finished writing it).
    pub(crate) fn load(task_dir: &Path) -> Result<Option<Self>> {
        let Some(record) = read::<TaskRecord>(task_dir, TaskFile::Record)? else {
            return Ok(None);
        };
        Ok(Some(Self {
            record,
            started: read(task_dir, TaskFile::Started)?,
            exit: read(task_dir, TaskFile::Exit)?,
            ledger: read(task_dir, TaskFile::Ledger)?.unwrap_or_default(),
            output_path: find_log(task_dir),
        }))
    }
}

/// The task's log in its directory: the one `*.log` file the monitor's context made.
pub(crate) fn find_log(task_dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(task_dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| {
            path.extension().is_some_and(|ext| ext == "log")
                && path
                    .file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with("bash_"))
        })
}

/// Makes `dir` (and its parents) if missing, private to the user (`0700` on Unix).
pub(crate) fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    zidane_process::ensure_runtime_dir(dir)
}
