//! Starting a task's shell with its log: the log created first (by the spawn's child),
//! the output directory made when the log says it is missing, a taken name skipped.

use std::path::{Path, PathBuf};

use zidane_context::{ContextError, Result, TaskId};

use crate::spawn::launch::Launch;
use crate::spawn::{SpawnError, Spawned, TaskEnv, TaskIo, spawn_shell};
use crate::task::log_file::{create_output_dir, log_error};
use crate::task::timestamp::task_log_path;

/// How many names a task's log tries before its start fails: the plain one, then
/// suffixed ones (see [`task_log_path`]). A name is taken only if something else made
/// a file there (a planted file or link, another program), never by us.
pub(crate) const LOG_NAME_ATTEMPTS: u32 = 8;

/// Starts a task's shell, its log created first (by the spawn's child, see
/// `vfork_spawn`), and the output directory created if the log says it is missing.
/// A log name that is taken is never opened: the next suffixed name is tried.
/// Returns the log's path; fails with the error a caller should see, leaving nothing
/// behind.
pub(crate) fn start_task_shell(
    launch: &Launch<'_>,
    command: &str,
    cwd: &Path,
    env: &TaskEnv,
    output_dir: &Path,
    name: (TaskId, &str),
    io: TaskIo,
) -> Result<(Spawned, std::fs::File, PathBuf)> {
    let mut attempt = 0;
    let mut created_dir = false;
    loop {
        let output_path = task_log_path(output_dir, name.0, name.1, attempt);
        let error = match spawn_shell(launch, command, cwd, env, Some(&output_path), io) {
            Ok(mut spawned) => match spawned.log.take() {
                Some(log) => return Ok((spawned, log, output_path)),
                // Not reached: a spawn asked for a log fails when it cannot make one.
                None => SpawnError::Log(std::io::Error::other("no log was created")),
            },
            Err(error) => error,
        };
        match error {
            SpawnError::Log(error)
                if error.kind() == std::io::ErrorKind::NotFound && !created_dir =>
            {
                create_output_dir(output_dir)?;
                created_dir = true;
            }
            SpawnError::Log(error)
                if error.kind() == std::io::ErrorKind::AlreadyExists
                    && attempt + 1 < LOG_NAME_ATTEMPTS =>
            {
                tracing::warn!(path = %output_path.display(), "a task log's name is taken by a file we did not make; trying the next name");
                attempt += 1;
            }
            SpawnError::Log(source) => return Err(log_error(output_dir, &output_path, source)),
            SpawnError::Start { source, log_made } => {
                if log_made {
                    // The empty log is ours and names a task that never ran.
                    let _ = std::fs::remove_file(&output_path);
                }
                return Err(ContextError::spawn(command, source));
            }
        }
    }
}
