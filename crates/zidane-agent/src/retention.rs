//! Retention: what is removed of the sessions under a user data dir, and what never is
//! (see [`RetentionPolicy`]).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};

use crate::persist::{SESSION_LOCK_FILE, open_private_io};
use crate::session::{SESSIONS_DIR, validate_session_id};

/// How long an ended session is kept by default: 30 days since its last modification.
pub const DEFAULT_RETENTION_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How many bytes the sessions directory may hold by default before its oldest ended
/// sessions are removed: 1 GiB.
pub const DEFAULT_RETENTION_MAX_BYTES: u64 = 1 << 30;

/// Which ended sessions are removed; live ones never are.
///
/// Every session leaves its directory (`<user_dir>/sessions/<id>/`: its turns and its
/// task logs) behind when it ends. A policy removes the *ended* ones:
///
/// 1. every ended session last modified at least [`max_age`](RetentionPolicy::max_age)
///    ago (default [`DEFAULT_RETENTION_MAX_AGE`], 30 days);
/// 2. then, while the sessions directory still holds more than
///    [`max_bytes`](RetentionPolicy::max_bytes) (default [`DEFAULT_RETENTION_MAX_BYTES`],
///    1 GiB), the oldest ended sessions, one by one.
///
/// A session's last modification is the newest modification time of the files in its
/// directory (`session.json`, its task logs, its lock file), or the directory's own when
/// it holds none. A session is *live* while a process holds its lock
/// ([`SessionStore::hold`](crate::SessionStore::hold), which every agent built on a
/// [`SessionStore`](crate::SessionStore) takes): a live session is never removed,
/// whatever its age or size. The lock is taken before a session is removed, so a host
/// that starts the session at that moment is refused instead of losing it.
///
/// Nothing outside `<user_dir>/sessions/` is touched and no symlink is followed: a
/// `sessions` directory that is a symlink is refused, an entry of it that is not a real
/// directory named like a session is never removed (its size counts), and a symlink
/// inside a session is removed as a link, its target left alone.
///
/// ```
/// use std::time::Duration;
/// use zidane_agent::{RetentionPolicy, Session, SessionStore};
///
/// let dir = tempfile::tempdir()?;
/// let store = SessionStore::new(dir.path());
/// store.save(&Session::new("ended"))?;
/// let live = store.hold("live")?;
///
/// // Every ended session, whatever its age, with no cap on the size.
/// let policy = RetentionPolicy::new().max_age(Some(Duration::ZERO)).max_bytes(None);
/// assert_eq!(policy.plan(dir.path())?.removed.len(), 1); // a dry run
/// let report = policy.apply(dir.path())?;
/// assert_eq!(report.removed[0].id, "ended");
/// assert_eq!(report.kept_live, ["live"]);
/// assert!(!store.session_dir("ended")?.exists());
/// assert!(store.session_dir("live")?.exists());
/// drop(live);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetentionPolicy {
    /// Ended sessions last modified at least this long ago are removed; `None`: none is
    /// removed for its age. Default [`DEFAULT_RETENTION_MAX_AGE`].
    pub max_age: Option<Duration>,
    /// Then, while the sessions directory holds more than this many bytes (live sessions
    /// and stray files counted), the oldest ended sessions are removed; `None`: no cap.
    /// Default [`DEFAULT_RETENTION_MAX_BYTES`].
    pub max_bytes: Option<u64>,
}

impl Default for RetentionPolicy {
    /// [`DEFAULT_RETENTION_MAX_AGE`] and [`DEFAULT_RETENTION_MAX_BYTES`].
    fn default() -> Self {
        Self {
            max_age: Some(DEFAULT_RETENTION_MAX_AGE),
            max_bytes: Some(DEFAULT_RETENTION_MAX_BYTES),
        }
    }
}

impl RetentionPolicy {
    /// The defaults: 30 days, 1 GiB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the age past which an ended session is removed (`None`: never for its age;
    /// `Some(Duration::ZERO)`: every ended session).
    #[must_use]
    pub fn max_age(mut self, age: Option<Duration>) -> Self {
        self.max_age = age;
        self
    }

    /// Sets the cap on the sessions directory's size in bytes (`None`: no cap).
    #[must_use]
    pub fn max_bytes(mut self, bytes: Option<u64>) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Removes the ended sessions under `<user_dir>/sessions/` this policy says to.
    /// A session that cannot be measured or removed is reported in
    /// [`failed`](RetentionReport::failed) and the others go on; the error is for a
    /// sessions directory that cannot be read or is a symlink. No sessions directory is
    /// an empty report.
    pub fn apply(&self, user_dir: &Path) -> Result<RetentionReport, RetentionError> {
        self.run(user_dir, Mode::Remove)
    }

    /// What [`apply`](Self::apply) would remove now, removing nothing: a dry run.
    pub fn plan(&self, user_dir: &Path) -> Result<RetentionReport, RetentionError> {
        self.run(user_dir, Mode::Plan)
    }

    fn run(&self, user_dir: &Path, mode: Mode) -> Result<RetentionReport, RetentionError> {
        let root = user_dir.join(SESSIONS_DIR);
        let metadata = match std::fs::symlink_metadata(&root) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(RetentionReport::default());
            }
            Err(cause) => return Err(RetentionError::Io { path: root, cause }),
        };
        if metadata.file_type().is_symlink() {
            return Err(RetentionError::Unsafe {
                path: root,
                reason: "it is a symlink, which retention never follows",
            });
        }
        if !metadata.is_dir() {
            return Err(RetentionError::Unsafe {
                path: root,
                reason: "it is not a directory",
            });
        }
        let mut report = RetentionReport::default();
        let scan = scan(&root, &mut report.failed)?;
        let mut total = scan.total_bytes;
        let now = SystemTime::now();
        for session in scan.sessions {
            let age = now.duration_since(session.modified).unwrap_or_default();
            let reason = if self.max_age.is_some_and(|max| age >= max) {
                RemovalReason::Age
            } else if self.max_bytes.is_some_and(|cap| total > cap) {
                RemovalReason::Size
            } else {
                // Oldest first: no later session is older, and the total only shrinks.
                break;
            };
            match take(&session.dir, mode) {
                Ok(Taken::Live) => report.kept_live.push(session.id),
                Ok(Taken::Removed) => {
                    total = total.saturating_sub(session.bytes);
                    report.bytes_freed += session.bytes;
                    report.removed.push(RemovedSession {
                        id: session.id,
                        dir: session.dir,
                        bytes: session.bytes,
                        modified: DateTime::<Utc>::from(session.modified),
                        reason,
                    });
                }
                Err(error) => report.failed.push(RetentionFailure {
                    dir: session.dir,
                    error,
                }),
            }
        }
        report.total_bytes = total;
        Ok(report)
    }
}

/// What a [`RetentionPolicy`] removed, or would remove ([`RetentionPolicy::plan`]).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct RetentionReport {
    /// The sessions removed (or that would be), oldest first.
    pub removed: Vec<RemovedSession>,
    /// The bytes they held.
    pub bytes_freed: u64,
    /// The sessions the policy would have removed but a process holds: left alone.
    pub kept_live: Vec<String>,
    /// Sessions that could not be measured or removed, left as they were (a removal
    /// that failed halfway leaves what it could not remove).
    pub failed: Vec<RetentionFailure>,
    /// The bytes under the sessions directory afterwards (or as they would be).
    pub total_bytes: u64,
}

/// One session a [`RetentionPolicy`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemovedSession {
    /// The session's id.
    pub id: String,
    /// Its directory, gone now (or to be, in a plan).
    pub dir: PathBuf,
    /// The bytes of its files.
    pub bytes: u64,
    /// Its last modification: the newest of its files'.
    pub modified: DateTime<Utc>,
    /// Which rule removed it.
    pub reason: RemovalReason,
}

/// Which rule of a [`RetentionPolicy`] removed a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemovalReason {
    /// It was older than [`max_age`](RetentionPolicy::max_age).
    Age,
    /// The sessions were over [`max_bytes`](RetentionPolicy::max_bytes), and it was the
    /// oldest ended one left.
    Size,
}

/// A session directory retention could not measure or remove, and why.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetentionFailure {
    /// The directory.
    pub dir: PathBuf,
    /// Why.
    pub error: RetentionError,
}

/// Why retention could not read or remove something.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetentionError {
    /// A file or directory could not be read, locked or removed.
    #[error("retention: I/O error on {}: {cause}", path.display())]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// A path retention will not touch.
    #[error("retention: refusing {}: {reason}", path.display())]
    Unsafe {
        /// The path concerned.
        path: PathBuf,
        /// Why it is refused.
        reason: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plan,
    Remove,
}

enum Taken {
    Live,
    Removed,
}

/// A session directory as the scan found it.
struct Scanned {
    id: String,
    dir: PathBuf,
    bytes: u64,
    modified: SystemTime,
}

struct Scan {
    /// Oldest first (ties by id).
    sessions: Vec<Scanned>,
    /// Everything under the sessions directory.
    total_bytes: u64,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> RetentionError + '_ {
    move |cause| RetentionError::Io {
        path: path.to_owned(),
        cause,
    }
}

/// Measures every entry of the sessions directory `root`; only real directories named
/// like a session are candidates.
fn scan(root: &Path, failed: &mut Vec<RetentionFailure>) -> Result<Scan, RetentionError> {
    let mut sessions = Vec::new();
    let mut total_bytes = 0u64;
    for entry in std::fs::read_dir(root).map_err(io_error(root))? {
        let entry = entry.map_err(io_error(root))?;
        let path = entry.path();
        let measured = entry
            .file_type()
            .map_err(io_error(&path))
            .and_then(|file_type| {
                if file_type.is_dir() {
                    measure(&path).map(Some)
                } else {
                    // A stray file or a symlink: it counts, but is never removed.
                    let len = entry.metadata().map_err(io_error(&path))?.len();
                    total_bytes += len;
                    Ok(None)
                }
            });
        let (bytes, modified) = match measured {
            Ok(Some(measured)) => measured,
            Ok(None) => continue,
            Err(error) => {
                failed.push(RetentionFailure { dir: path, error });
                continue;
            }
        };
        total_bytes += bytes;
        let id = entry.file_name().to_str().map(str::to_owned);
        if let Some(id) = id.filter(|id| validate_session_id(id).is_ok()) {
            sessions.push(Scanned {
                id,
                dir: path,
                bytes,
                modified,
            });
        }
    }
    sessions.sort_by(|a, b| a.modified.cmp(&b.modified).then_with(|| a.id.cmp(&b.id)));
    Ok(Scan {
        sessions,
        total_bytes,
    })
}

/// The bytes of the files under `dir` and the newest of their modification times (the
/// directory's own when it holds no file), following no symlink.
fn measure(dir: &Path) -> Result<(u64, SystemTime), RetentionError> {
    let mut bytes = 0u64;
    let mut newest: Option<SystemTime> = None;
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).map_err(io_error(&current))? {
            let entry = entry.map_err(io_error(&current))?;
            let path = entry.path();
            let file_type = entry.file_type().map_err(io_error(&path))?;
            if file_type.is_dir() {
                pending.push(path);
                continue;
            }
            // `DirEntry::metadata` does not follow a symlink: a link counts as itself.
            let metadata = entry.metadata().map_err(io_error(&path))?;
            bytes += metadata.len();
            let modified = metadata.modified().map_err(io_error(&path))?;
            newest = Some(newest.map_or(modified, |newest| newest.max(modified)));
        }
    }
    let modified = match newest {
        Some(modified) => modified,
        None => std::fs::symlink_metadata(dir)
            .and_then(|metadata| metadata.modified())
            .map_err(io_error(dir))?,
    };
    Ok((bytes, modified))
}

/// Removes the session in `dir` unless it is live (in a plan, only asks).
fn take(dir: &Path, mode: Mode) -> Result<Taken, RetentionError> {
    // It was a real directory at the scan; it must still be one.
    let metadata = std::fs::symlink_metadata(dir).map_err(io_error(dir))?;
    if metadata.file_type().is_symlink() || !metadata.is_dir() {
        return Err(RetentionError::Unsafe {
            path: dir.to_owned(),
            reason: "it is no longer a directory",
        });
    }
    let lock_path = dir.join(SESSION_LOCK_FILE);
    let lock = match mode {
        // Only asks: a session whose lock file is missing was never held.
        Mode::Plan => match open_private_io(OpenOptions::new().read(true), &lock_path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Taken::Removed),
            Err(cause) => {
                return Err(RetentionError::Io {
                    path: lock_path,
                    cause,
                });
            }
        },
        // The lock is taken (its file made if missing) and held while the session is
        // removed: a host starting it now is refused rather than losing it.
        Mode::Remove => open_private_io(
            OpenOptions::new().read(true).write(true).create(true),
            &lock_path,
        )
        .map_err(io_error(&lock_path))?,
    };
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Taken::Live),
        Err(std::fs::TryLockError::Error(cause)) => {
            return Err(RetentionError::Io {
                path: lock_path,
                cause,
            });
        }
    }
    if mode == Mode::Remove {
        remove_locked(dir, &lock_path, lock)?;
    }
    Ok(Taken::Removed)
}

/// Removes the session directory `dir` whose lock `lock` (at `lock_path`) is held: its
/// entries but the lock file, then the lock file and the directory.
fn remove_locked(dir: &Path, lock_path: &Path, lock: File) -> Result<(), RetentionError> {
    for entry in std::fs::read_dir(dir).map_err(io_error(dir))? {
        let entry = entry.map_err(io_error(dir))?;
        if entry.file_name() == SESSION_LOCK_FILE {
            continue;
        }
        let path = entry.path();
        let file_type = entry.file_type().map_err(io_error(&path))?;
        let removed = if file_type.is_dir() {
            // A real directory (`file_type` follows no link): std removes its contents
            // without following the symlinks in it.
            std::fs::remove_dir_all(&path)
        } else {
            // A file, or a symlink removed as itself (on Windows a link to a directory
            // is removed as a directory).
            std::fs::remove_file(&path).or_else(|error| {
                if file_type.is_symlink() {
                    std::fs::remove_dir(&path)
                } else {
                    Err(error)
                }
            })
        };
        removed.map_err(io_error(&path))?;
    }
    // On Unix an open file can be unlinked: the lock is held until the directory is
    // gone. Windows cannot remove a directory while a file in it is open: the lock is
    // let go first.
    #[cfg(unix)]
    {
        std::fs::remove_file(lock_path).map_err(io_error(lock_path))?;
        std::fs::remove_dir(dir).map_err(io_error(dir))?;
        drop(lock);
    }
    #[cfg(not(unix))]
    {
        drop(lock);
        std::fs::remove_file(lock_path).map_err(io_error(lock_path))?;
        std::fs::remove_dir(dir).map_err(io_error(dir))?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
