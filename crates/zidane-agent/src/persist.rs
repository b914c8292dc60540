//! How a session reaches the disk: private directories we can trust, saves that are
//! atomic and durable, and the lock that keeps a second agent off a session.
//!
//! - Directories are created `0700`. An existing session or tasks directory is refused
//!   when it is a symlink, is owned by another user, or is writable by group or others:
//!   someone else could swap the files under us.
//! - A save writes a uniquely named temporary file (created exclusively, never through a
//!   symlink, mode `0600`), syncs it, renames it over `session.json` and syncs the
//!   directory. A reader sees the old file or the new one, never half of one, and a
//!   power loss after the save returns keeps the new one.
//! - The lock is an advisory `flock` on `session.lock` in the session directory, held
//!   for the agent's life (or an MCP session's: [`SessionStore::hold`]). The file
//!   records the holder's pid for the error a second agent gets. It is also the
//!   session's liveness mark: the OS releases it when the holder dies, however it dies,
//!   so retention ([`crate::RetentionPolicy`]) never removes a session whose lock is
//!   held.
//!
//! [`SessionStore::hold`]: crate::SessionStore::hold

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{AgentError, Result};

/// The lock file inside a session directory.
pub const SESSION_LOCK_FILE: &str = "session.lock";

/// An exclusive hold on one session directory, released when dropped.
#[derive(Debug)]
pub(crate) struct SessionLock {
    // The open file *is* the lock: `flock` is released when it closes.
    _file: File,
}

impl SessionLock {
    /// Takes the lock of the session in `dir` (which must exist), or says who holds it.
    pub(crate) fn acquire(dir: &Path, session_id: &str) -> Result<Self> {
        let path = dir.join(SESSION_LOCK_FILE);
        let mut file = open_private(
            OpenOptions::new().read(true).write(true).create(true),
            &path,
        )?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                // The holder's pid is a courtesy for the message; the lock is what counts.
                let _ = file.read_to_string(&mut text);
                return Err(AgentError::SessionLocked {
                    session_id: session_id.to_owned(),
                    holder_pid: text.trim().parse().ok(),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(AgentError::SessionIo {
                    path,
                    cause: source,
                });
            }
        }
        let io = |source| AgentError::SessionIo {
            path: path.clone(),
            cause: source,
        };
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(Self { _file: file })
    }
}

/// Creates `dir` (and its parents) `0700` if missing, then checks that it can be
/// trusted (see [`check_private_dir`]).
pub(crate) fn ensure_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    // A symlink at `dir` would be followed by `create`: look before making anything.
    check_private_dir(dir)?;
    builder
        .create(dir)
        .map_err(|source| AgentError::SessionIo {
            path: dir.to_owned(),
            cause: source,
        })?;
    check_private_dir(dir)
}

/// Refuses an existing directory that is a symlink, not a directory, owned by another
/// user, or writable by group or others. A missing one is fine.
pub(crate) fn check_private_dir(dir: &Path) -> Result<()> {
    let metadata = match std::fs::symlink_metadata(dir) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(AgentError::SessionIo {
                path: dir.to_owned(),
                cause: source,
            });
        }
    };
    let unsafe_dir = |reason| AgentError::UnsafeSessionDir {
        path: dir.to_owned(),
        reason,
    };
    if metadata.file_type().is_symlink() {
        return Err(unsafe_dir("it is a symlink"));
    }
    if !metadata.is_dir() {
        return Err(unsafe_dir("it is not a directory"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if metadata.uid() != nix::unistd::geteuid().as_raw() {
            return Err(unsafe_dir("it is owned by another user"));
        }
        if metadata.mode() & 0o022 != 0 {
            return Err(unsafe_dir("it is writable by group or others"));
        }
    }
    Ok(())
}

/// Writes `bytes` to `file` atomically and durably (see the module docs).
pub(crate) fn write_atomically(file: &Path, bytes: &[u8]) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = write_then_rename(&temp, file, dir, bytes);
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn write_then_rename(temp: &Path, file: &Path, dir: &Path, bytes: &[u8]) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| AgentError::SessionIo {
            path,
            cause: source,
        }
    };
    let mut out = open_private(OpenOptions::new().write(true).create_new(true), temp)?;
    out.write_all(bytes).map_err(io(temp))?;
    out.sync_all().map_err(io(temp))?;
    drop(out);
    std::fs::rename(temp, file).map_err(io(file))?;
    sync_dir(dir).map_err(io(dir))
}

/// Makes a rename in `dir` durable: on Unix the directory entry is, once the directory
/// is synced.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir).and_then(|d| d.sync_all())
}

/// Windows cannot open a directory as a file to sync it (and std's rename replaces a
/// file in one metadata operation NTFS journals): nothing more to do.
#[cfg(windows)]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Opens with mode `0600`, never following a symlink at `path` (on Windows: the file
/// inherits the private access list of the user's profile, and a reparse point at
/// `path` is opened itself, not followed).
fn open_private(options: &mut OpenOptions, path: &Path) -> Result<File> {
    open_private_io(options, path).map_err(|source| AgentError::SessionIo {
        path: path.to_owned(),
        cause: source,
    })
}

/// [`open_private`], with the OS error as it is.
pub(crate) fn open_private_io(options: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        /// `FILE_FLAG_OPEN_REPARSE_POINT`: the link itself, never its target.
        const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        options.custom_flags(OPEN_REPARSE_POINT);
    }
    options.open(path)
}
