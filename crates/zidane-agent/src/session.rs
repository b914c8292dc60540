//! Sessions: the persisted conversation, its directory layout, and the latch history a
//! loaded session carries.
//!
//! Layout under a user data dir:
//! ```text
//! <user_dir>/sessions/<id>/session.json   the turns (zidane-wire's serde format)
//! <user_dir>/sessions/<id>/tasks/         background task logs
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use zidane_context::TaskId;
use zidane_tools::{SHELL_KILL, WAIT_NOT_ENDED_PREFIX, WAIT_TASK};
use zidane_wire::{ContentBlock, StreamEvent, Turn, WireBlock};

use crate::delivery::HistoricalAck;
use crate::error::{AgentError, Result};
use crate::events::EventLedger;
use crate::persist;

/// The directory of all sessions under a user data dir.
pub const SESSIONS_DIR: &str = "sessions";
/// The file a session's turns are stored in, inside its directory.
pub const SESSION_FILE: &str = "session.json";
/// The directory of a session's task logs, inside its directory.
pub const TASKS_DIR: &str = "tasks";
/// The longest session id accepted.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// A conversation: its id and its turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The session's id; names its directory (`[A-Za-z0-9._-]`, not `.`/`..`).
    pub id: String,
    /// The turns so far.
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// Task logs the model read after their task had ended: such a read tells the model
    /// the exit as a notification would, but leaves nothing in `turns` that says the task
    /// had ended by then. Kept so that an agent rebuilt from this session never notifies
    /// those tasks again (notifications, kills and completed waits are rebuilt from
    /// `turns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acknowledged_logs: Vec<AcknowledgedLog>,
    /// The tasks with `notify_on` patterns, and the last line of each the model was told
    /// of: an agent rebuilt from this session follows them on from the next line, so
    /// no event is told twice or lost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_events: Vec<EventLedger>,
}

/// A task log the model read after the task had ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcknowledgedLog {
    /// The task whose log it is.
    pub task_id: TaskId,
    /// The log.
    pub output_path: PathBuf,
}

impl Session {
    /// An empty session with this id (checked when it touches a path).
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            turns: Vec::new(),
            acknowledged_logs: Vec::new(),
            task_events: Vec::new(),
        }
    }

    /// An empty session with a fresh id: `s-<UTC timestamp>-<pid>-<n>`.
    pub fn generate() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S-%3f");
        Self::new(format!("s-{stamp}-{}-{n}", std::process::id()))
    }

    /// The events a host paints for this session (`zidane_wire::events_from_turns`):
    /// the same events the live runs emitted.
    pub fn events(&self) -> Vec<StreamEvent> {
        zidane_wire::events_from_turns(&self.turns)
    }
}

/// Checks that a session id can name a directory.
pub fn validate_session_id(id: &str) -> Result<()> {
    let invalid = |reason| AgentError::InvalidSessionId {
        id: id.to_owned(),
        reason,
    };
    if id.is_empty() {
        return Err(invalid("a session id cannot be empty"));
    }
    if id.len() > MAX_SESSION_ID_LEN {
        return Err(invalid("a session id is at most 128 bytes"));
    }
    if id == "." || id == ".." {
        return Err(invalid("a session id cannot be `.` or `..`"));
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err(invalid(
            "only ASCII letters, digits, `.`, `_` and `-` are allowed",
        ));
    }
    Ok(())
}

/// `<user_dir>/sessions/<session_id>/`.
pub fn resolve_session_dir(user_dir: &Path, session_id: &str) -> Result<PathBuf> {
    validate_session_id(session_id)?;
    Ok(user_dir.join(SESSIONS_DIR).join(session_id))
}

/// `<user_dir>/sessions/<session_id>/tasks/`: where the session's task logs go (the
/// agent's `tasks_dir`).
pub fn resolve_tasks_dir(user_dir: &Path, session_id: &str) -> Result<PathBuf> {
    Ok(resolve_session_dir(user_dir, session_id)?.join(TASKS_DIR))
}

/// Deletes a session: its turns and its task logs. False if there was nothing to delete.
pub fn delete_session(user_dir: &Path, session_id: &str) -> Result<bool> {
    SessionStore::new(user_dir).delete(session_id)
}

/// Sessions stored under a user data dir.
///
/// ```
/// use zidane_agent::{Session, SessionStore};
/// let dir = tempfile::tempdir()?;
/// let store = SessionStore::new(dir.path());
/// store.save(&Session::new("s1"))?;
/// assert_eq!(store.load("s1")?.id, "s1");
/// assert!(store.tasks_dir("s1")?.ends_with("sessions/s1/tasks"));
/// assert!(store.delete("s1")?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStore {
    user_dir: PathBuf,
}

impl SessionStore {
    /// Sessions under `user_dir` (created on first save).
    pub fn new(user_dir: impl Into<PathBuf>) -> Self {
        Self {
            user_dir: user_dir.into(),
        }
    }

    /// The user data dir.
    pub fn user_dir(&self) -> &Path {
        &self.user_dir
    }

    /// `<user_dir>/sessions/<id>/`.
    pub fn session_dir(&self, id: &str) -> Result<PathBuf> {
        resolve_session_dir(&self.user_dir, id)
    }

    /// `<user_dir>/sessions/<id>/session.json`.
    pub fn session_file(&self, id: &str) -> Result<PathBuf> {
        Ok(self.session_dir(id)?.join(SESSION_FILE))
    }

    /// `<user_dir>/sessions/<id>/tasks/`.
    pub fn tasks_dir(&self, id: &str) -> Result<PathBuf> {
        resolve_tasks_dir(&self.user_dir, id)
    }

    /// Writes the session atomically and durably: a uniquely named `0600` temporary file,
    /// created exclusively and never through a symlink, synced, renamed over
    /// `session.json`, and the directory synced. The session directory is created
    /// `0700`; an existing session or tasks directory that is a symlink, owned by another
    /// user or writable by group or others is refused ([`AgentError::UnsafeSessionDir`]) and nothing is written.
    pub fn save(&self, session: &Session) -> Result<()> {
        let dir = self.session_dir(&session.id)?;
        persist::ensure_private_dir(&dir)?;
        persist::check_private_dir(&dir.join(TASKS_DIR))?;
        let file = dir.join(SESSION_FILE);
        let json =
            serde_json::to_vec_pretty(session).map_err(|source| AgentError::SessionFormat {
                path: file.clone(),
                cause: source,
            })?;
        persist::write_atomically(&file, &json)
    }

    /// Prepares a session's directories for an agent and takes the session's lock, held
    /// until the returned guard drops: the session directory is created `0700` and it
    /// and its tasks directory, if present, are checked as [`save`](Self::save) checks.
    /// A second hold on the same session fails with [`AgentError::SessionLocked`].
    pub(crate) fn lock(&self, id: &str) -> Result<persist::SessionLock> {
        let dir = self.session_dir(id)?;
        persist::ensure_private_dir(&dir)?;
        persist::check_private_dir(&dir.join(TASKS_DIR))?;
        persist::SessionLock::acquire(&dir, id)
    }

    /// Marks the session live for as long as the returned guard is kept: the session
    /// directory is prepared and the session's lock taken as an agent built on this
    /// store takes it (a host that runs a session without a store, as an MCP server
    /// does, holds it this way). The lock is an advisory lock on
    /// [`SESSION_LOCK_FILE`](crate::SESSION_LOCK_FILE) that the OS releases when the
    /// process dies, however it dies; while it is held, retention
    /// ([`RetentionPolicy`](crate::RetentionPolicy)) never removes the session and no
    /// agent can take the session over. A session already held, by this process or
    /// another, is [`AgentError::SessionLocked`].
    ///
    /// ```
    /// use zidane_agent::{AgentError, SessionStore};
    /// let dir = tempfile::tempdir()?;
    /// let store = SessionStore::new(dir.path());
    /// let hold = store.hold("s1")?;
    /// assert!(matches!(store.hold("s1"), Err(AgentError::SessionLocked { .. })));
    /// drop(hold);
    /// store.hold("s1")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hold(&self, id: &str) -> Result<SessionHold> {
        Ok(SessionHold {
            _lock: self.lock(id)?,
        })
    }

    /// Reads a stored session.
    pub fn load(&self, id: &str) -> Result<Session> {
        let file = self.session_file(id)?;
        let bytes = std::fs::read(&file).map_err(|source| AgentError::SessionIo {
            path: file.clone(),
            cause: source,
        })?;
        serde_json::from_slice(&bytes).map_err(|source| AgentError::SessionFormat {
            path: file,
            cause: source,
        })
    }

    /// Reads a stored session, or starts an empty one with this id if none is stored.
    pub fn load_or_new(&self, id: &str) -> Result<Session> {
        if self.session_file(id)?.exists() {
            self.load(id)
        } else {
            Ok(Session::new(id))
        }
    }

    /// Deletes a session's directory: its turns and its task logs. False if it did not
    /// exist.
    pub fn delete(&self, id: &str) -> Result<bool> {
        let dir = self.session_dir(id)?;
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(AgentError::SessionIo {
                path: dir,
                cause: source,
            }),
        }
    }
}

/// A session marked live ([`SessionStore::hold`]): the mark lasts until this is dropped
/// or the process dies.
#[derive(Debug)]
#[must_use = "the session is live only while the hold is kept"]
pub struct SessionHold {
    _lock: persist::SessionLock,
}

/// What a stored conversation says the model already knows: every task named by a
/// `<task-notification>` block, killed by a successful `shell_kill`, waited for by a
/// `wait_task` that did not time out, or whose log it read after the task ended.
/// `canonical` maps a called name (maybe an alias) to the tool's own name.
pub(crate) fn acknowledged_in(
    session: &Session,
    canonical: impl Fn(&str) -> Option<String>,
) -> Vec<HistoricalAck> {
    let mut acks: Vec<HistoricalAck> = session
        .acknowledged_logs
        .iter()
        .map(|log| HistoricalAck {
            task_id: log.task_id,
            output_path: Some(log.output_path.clone()),
        })
        .collect();
    let mut calls: HashMap<&str, (Option<String>, &serde_json::Value)> = HashMap::new();
    for block in session.turns.iter().flat_map(|turn| &turn.content) {
        match block {
            ContentBlock::Text { text } => {
                for wire in zidane_wire::parse(text).unwrap_or_default() {
                    if let WireBlock::Notification(n) = wire {
                        acks.push(HistoricalAck {
                            task_id: n.task_id,
                            output_path: Some(PathBuf::from(n.output_file)),
                        });
                    }
                }
            }
            ContentBlock::ToolUse { id, name, input } => {
                calls.insert(id.as_str(), (canonical(name), input));
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let Some((Some(tool), input)) = calls.get(tool_use_id.as_str()) else {
                    continue;
                };
                let knows_exit = !is_error
                    && (tool == SHELL_KILL
                        || (tool == WAIT_TASK && !content.starts_with(WAIT_NOT_ENDED_PREFIX)));
                let task_id = input
                    .get("task_id")
                    .and_then(serde_json::Value::as_str)
                    .and_then(|id| TaskId::parse(id).ok());
                if let (true, Some(task_id)) = (knows_exit, task_id) {
                    acks.push(HistoricalAck {
                        task_id,
                        output_path: None,
                    });
                }
            }
        }
    }
    acks
}
