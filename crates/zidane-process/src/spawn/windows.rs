//! The Windows start: one anonymous pipe for stdout and stderr, the shell started
//! suspended, put in a job object of its own and only then resumed, so nothing it
//! starts runs outside the job (see `containment/job.rs`).

use std::io;
use std::os::windows::io::AsHandle;
use std::os::windows::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::containment::TaskProcesses;
use crate::spawn::launch::Launch;
use crate::spawn::shell::windows::add_command;
use crate::spawn::spawned::{SpawnError, Spawned, TaskEnv, TaskIo};
use crate::sys::windows::{self as sys, Job};
use crate::task::leader::{Leader, LeaderProcess};
use crate::task::log_file::open_new;
use crate::task::output_pipe::OutputPipe;

/// Starts `command` under `shell` in a job object of its own, stdout and stderr both
/// the write end of one pipe (so their bytes stay in write order), stdin on `NUL`
/// ([`TaskIo::Plain`]) or a pipe ([`TaskIo::InputPipe`]). With `log`, that file is
/// created first; if it cannot be, nothing is started. Terminal tasks are refused:
/// pseudo-consoles are not wired in. There is one mechanism (`launch.path` is ignored).
///
/// The parent's copies of the pipe's write end are closed before this returns, so the
/// output reaches its end as soon as the last process holding it exits.
pub(crate) fn spawn_shell(
    launch: &Launch<'_>,
    command: &str,
    cwd: &Path,
    env: &TaskEnv,
    log: Option<&Path>,
    io: TaskIo,
) -> Result<Spawned, SpawnError> {
    // No sandbox runs on Windows (the prefix is always empty), and one mechanism.
    debug_assert!(launch.prefix.is_empty());
    let (shell, _) = (launch.shell, launch.path);
    if let TaskIo::Terminal(_) = io {
        return Err(SpawnError::start(io::Error::new(
            io::ErrorKind::Unsupported,
            "terminal tasks are not supported on Windows; run the command without a terminal",
        )));
    }
    let log = log
        .map(|path| open_new(path).map_err(SpawnError::Log))
        .transpose()?;
    let log_made = log.is_some();
    let failed = |source: io::Error| SpawnError::Start { source, log_made };

    let (read, write) = io::pipe().map_err(failed)?;
    let write_for_stderr = write.try_clone().map_err(failed)?;
    let (stdin, input) = match io {
        TaskIo::InputPipe => {
            let (child_end, our_end) = io::pipe().map_err(failed)?;
            (Stdio::from(child_end), Some(our_end))
        }
        TaskIo::Plain | TaskIo::Terminal(_) => (Stdio::null(), None),
    };
    let job = Job::new().map_err(failed)?;
    let mut process = Command::new(shell.path());
    add_command(shell, &mut process, command);
    process
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(stdin)
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(write_for_stderr))
        .creation_flags(sys::task_creation_flags());
    let mut child = process.spawn().map_err(failed)?;
    // Only the child holds the write ends now.
    drop(process);
    let pid = child.id();
    let held = job
        .assign(child.as_handle())
        .and_then(|()| sys::resume_threads(pid));
    if let Err(source) = held {
        // Suspended, or out of the job: it must not run loose.
        let _ = child.kill();
        let _ = child.wait();
        return Err(failed(source));
    }
    let processes = match TaskProcesses::in_job(job, &child) {
        Ok(processes) => processes,
        Err(source) => {
            // Dropping the job ends the child with it (kill-on-close).
            return Err(failed(source));
        }
    };
    let output = OutputPipe::new(read).map_err(|source| {
        processes.kill();
        failed(source)
    })?;
    Ok(Spawned {
        leader: Leader::new(LeaderProcess::new(child)),
        pid,
        processes,
        output,
        input,
        log,
    })
}
