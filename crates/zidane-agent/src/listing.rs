//! Listing the sessions stored under a user data dir, newest first — what a host shows
//! in a "resume a session" picker. It only reads `session.json` files: listing never
//! changes a session, and a broken session directory is reported, not fatal.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use zidane_wire::{ContentBlock, Role};

use crate::agent::Agent;
use crate::error::{AgentError, Result};
use crate::session::{SESSION_FILE, SESSIONS_DIR, Session, SessionStore};
use zidane_wire::is_wire_block;

/// One stored session, as a picker shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session's id (its directory name).
    pub id: String,
    /// The text of the first user prompt (notification blocks left out), if there is one.
    pub first_prompt: Option<String>,
    /// How many turns the session holds.
    pub turns: usize,
    /// When `session.json` was last written.
    pub updated_at: DateTime<Utc>,
    /// How many of its background tasks are running, when known: `None` for a session
    /// read from disk (a file cannot say what is running now); `Some` from
    /// [`Agent::summary`], which asks the agent's execution context.
    pub running_tasks: Option<usize>,
}

impl SessionSummary {
    /// The summary of a session last written at `updated_at`.
    pub fn of(session: &Session, updated_at: DateTime<Utc>) -> Self {
        let first_prompt = session
            .turns
            .iter()
            .filter(|turn| turn.role == Role::User)
            .find_map(|turn| {
                let text: Vec<&str> = turn
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text { text } if !is_wire_block(text) => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                (!text.is_empty()).then(|| text.join("\n"))
            });
        Self {
            id: session.id.clone(),
            first_prompt,
            turns: session.turns.len(),
            updated_at,
            running_tasks: None,
        }
    }
}

/// A directory under `sessions/` that could not be listed, and why.
#[derive(Debug)]
pub struct UnreadableSession {
    /// The directory.
    pub dir: PathBuf,
    /// Why: an id that cannot name a session, a missing or unreadable `session.json`,
    /// or a file that is not a session.
    pub error: AgentError,
}

/// What [`SessionStore::list`] found.
#[derive(Debug, Default)]
pub struct SessionListing {
    /// The readable sessions, most recently updated first (ties by id).
    pub sessions: Vec<SessionSummary>,
    /// Directories that are not readable sessions, in directory-name order.
    pub unreadable: Vec<UnreadableSession>,
}

impl SessionStore {
    /// Every session under `<user_dir>/sessions/`, newest first.
    ///
    /// A directory that is not a readable session (a bad id, no `session.json` yet, a
    /// truncated file) goes into [`unreadable`](SessionListing::unreadable) and the
    /// rest are still listed; files beside the directories are ignored. No `sessions/`
    /// directory is an empty listing. Only a `sessions/` that exists but cannot be read
    /// is an error.
    ///
    /// ```
    /// use zidane_agent::{Session, SessionStore};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let store = SessionStore::new(dir.path());
    /// store.save(&Session::new("s1"))?;
    /// let listing = store.list()?;
    /// assert_eq!(listing.sessions[0].id, "s1");
    /// assert_eq!(listing.sessions[0].first_prompt, None);
    /// assert!(listing.unreadable.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn list(&self) -> Result<SessionListing> {
        let sessions_dir = self.user_dir().join(SESSIONS_DIR);
        let entries = match std::fs::read_dir(&sessions_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(SessionListing::default());
            }
            Err(source) => {
                return Err(AgentError::SessionIo {
                    path: sessions_dir,
                    cause: source,
                });
            }
        };
        let mut listing = SessionListing::default();
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(std::result::Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            match self.summarise(&dir) {
                Ok(summary) => listing.sessions.push(summary),
                Err(error) => listing.unreadable.push(UnreadableSession { dir, error }),
            }
        }
        listing.sessions.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(listing)
    }

    fn summarise(&self, dir: &std::path::Path) -> Result<SessionSummary> {
        let id = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let session = self.load(&id)?;
        let file = dir.join(SESSION_FILE);
        let updated_at = std::fs::metadata(&file)
            .and_then(|meta| meta.modified())
            .map_err(|source| AgentError::SessionIo {
                path: file,
                cause: source,
            })?;
        Ok(SessionSummary::of(&session, updated_at.into()))
    }
}

impl Agent {
    /// This agent's session as a listing shows it, with its running tasks counted by
    /// the execution context (`running_tasks` is `Some`) and `updated_at` now.
    pub async fn summary(&self) -> Result<SessionSummary> {
        let running = self.running_tasks().await?;
        let mut summary = SessionSummary::of(&self.session(), Utc::now());
        summary.running_tasks = Some(running.len());
        Ok(summary)
    }
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
