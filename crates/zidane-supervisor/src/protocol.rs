//! What crosses the supervisor's socket: one JSON request per connection, one JSON
//! answer, each on one line.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use zidane_context::{Screen, TaskExitInfo, TaskId, TaskInput, TtySize};
use zidane_process::ProcessStamp;

use crate::ledger::Teller;
use crate::store::{MonitorSpec, TaskRecord};

/// How long a host's wait for kills ([`Request::HostKills`]) is held before it is
/// answered empty.
pub const HOST_KILLS_WAIT: Duration = Duration::from_secs(60);

/// The most bytes of one line either side reads: a start carries the host's
/// environment, nothing carries output.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// A request to the supervisor.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Request {
    /// Is it there? Answered with [`Response::Pong`].
    Ping,
    /// Start a detached task. Answered with [`Response::Task`] once it runs.
    Start(Box<StartRequest>),
    /// Every task, or a workspace's. With `asker`, each ended task says whether that
    /// session is to tell it ([`TaskView::tell`]), and is claimed for it when it is.
    List {
        /// Only the tasks started in this workspace.
        #[serde(default)]
        workspace: Option<PathBuf>,
        /// The session asking.
        #[serde(default)]
        asker: Option<Teller>,
        /// The asking session's own running tasks, replacing those it registered before
        /// (so a supervisor started since learns them).
        #[serde(default)]
        own: Option<Vec<HostTask>>,
    },
    /// A running host's session task, for `zidane ps` (a host registers each one it
    /// starts). Answered with [`Response::Done`].
    Register(Box<HostTask>),
    /// The tasks of running hosts. Answered with [`Response::HostTasks`].
    HostTasks,
    /// A running host waits for the kills a person asks of its own tasks, so that it
    /// ends them itself and tells its model who did. Answered with [`Response::Kills`]
    /// at the first kill, or empty after [`HOST_KILLS_WAIT`]; the host asks again.
    HostKills {
        /// The host's session.
        session: String,
    },
    /// Ends a running host's task: by its host, when the host waits for kills
    /// ([`Request::HostKills`]); else its process group, TERM then KILL after `grace`,
    /// if its leader is still the process registered. Answered with [`Response::Done`].
    KillHostTask {
        /// The host's pid.
        host_pid: u32,
        /// The task's id in its session.
        id: TaskId,
        /// Between TERM and KILL.
        grace: Duration,
    },
    /// Ends a task's whole tree. Answered with [`Response::Task`] once it ended.
    Kill {
        /// The task.
        id: TaskId,
        /// A person asked (`zidane kill`), not a session's model: its end says so.
        #[serde(default)]
        by_user: bool,
    },
    /// Writes to a running task's input (its stdin pipe, or its terminal). Answered
    /// with [`Response::Done`].
    Input {
        /// The task.
        id: TaskId,
        /// What to write.
        input: TaskInput,
    },
    /// What a running terminal task's screen shows. Answered with [`Response::Screen`].
    Screen {
        /// The task.
        id: TaskId,
    },
    /// Resizes a running task's terminal. Answered with [`Response::Done`].
    Resize {
        /// The task.
        id: TaskId,
        /// The new size.
        size: TtySize,
    },
    /// Waits for a task's end, at most `timeout`. [`Response::Task`] (running when the
    /// time ran out).
    Wait {
        /// The task.
        id: TaskId,
        /// How long to wait.
        timeout: Duration,
    },
    /// A session's model was told these tasks' ends.
    Told {
        /// The session.
        session: String,
        /// The tasks.
        ids: Vec<TaskId>,
    },
    /// A monitor recorded its task's end (sent by the monitor itself).
    Ended {
        /// The task.
        id: TaskId,
    },
    /// Forgets ended tasks whose end was told, with their logs: every one, or those
    /// that ended at least `older_than` ago. A running task, or one whose end no model
    /// was told yet, is never removed. Answered with [`Response::Tasks`]: those
    /// removed (with `dry_run`, those that would be).
    Clean {
        /// Only those that ended at least this long ago.
        #[serde(default)]
        older_than: Option<Duration>,
        /// List them, remove nothing.
        #[serde(default)]
        dry_run: bool,
    },
}

/// A start: what to run, and who asks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartRequest {
    /// What the monitor runs (its `id` is filled in by the supervisor).
    pub monitor: MonitorSpec,
    /// The environment the command starts from, before the policy: the asking host's.
    pub env: Vec<(String, String)>,
    /// The workspace whose sessions re-adopt it.
    pub workspace: PathBuf,
    /// The session starting it.
    pub session: Teller,
    /// What is starting it, for `zidane ps`.
    pub host: String,
}

/// The supervisor's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Response {
    /// It is there.
    Pong {
        /// Its process id.
        pid: u32,
        /// Its state directory.
        state: PathBuf,
    },
    /// One task.
    Task(Box<TaskView>),
    /// Several.
    Tasks {
        /// The tasks, oldest first.
        tasks: Vec<TaskView>,
    },
    /// The tasks of running hosts.
    HostTasks {
        /// The tasks, oldest first.
        tasks: Vec<HostTask>,
    },
    /// A terminal task's screen.
    Screen(Box<Screen>),
    /// The tasks of the asking host a person asked to kill.
    Kills {
        /// Their ids in the host's session.
        ids: Vec<TaskId>,
    },
    /// Done.
    Done,
    /// Refused, and why.
    Error {
        /// Why, for a person.
        message: String,
    },
}

/// A task as the supervisor sees it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    /// Who started what, where.
    pub record: TaskRecord,
    /// The task's leader, once it runs.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Its log.
    #[serde(default)]
    pub output_path: Option<PathBuf>,
    /// How it ended; `None` while it runs.
    #[serde(default)]
    pub exit: Option<TaskExitInfo>,
    /// Some session's model was told its end.
    #[serde(default)]
    pub told: bool,
    /// In a [`Request::List`] with an asker: the asker is to tell this ended task now.
    #[serde(default)]
    pub tell: bool,
}

/// A session task of a running host (not detached: it ends with its host), as the host
/// registered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostTask {
    /// Its id in its session (`bash_3`).
    pub id: TaskId,
    /// Its leader (its process group), stamped: a kill reaches only this process.
    pub leader: ProcessStamp,
    /// The command line.
    pub command: String,
    /// Where it runs.
    pub cwd: PathBuf,
    /// Its log.
    pub output_path: PathBuf,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// The session that runs it.
    pub session: String,
    /// What the host is (`zidane mcp`, `zidane`).
    pub host: String,
    /// The host's process.
    pub host_process: Option<ProcessStamp>,
}

impl HostTask {
    /// How a person names it: `<host pid>:<id>`, unique per user while its host runs.
    pub fn person_id(&self) -> String {
        let host = self.host_process.map_or(0, |host| host.pid);
        format!("{host}:{}", self.id)
    }

    /// Whether it still runs: its leader and its host.
    pub fn runs(&self) -> bool {
        self.leader.runs() && self.host_process.is_none_or(|host| host.runs())
    }
}
