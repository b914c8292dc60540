//! The Unix start: a pipe (or a terminal) for the output, the shell in its own process
//! group, on the fast path through `vfork_spawn` (Linux), on the portable path (and
//! where the kernel refuses the fast one) through `std::process::Command`.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::containment::TaskProcesses;
use crate::spawn::launch::Launch;
use crate::spawn::pipe::cloexec_pipe;
use crate::spawn::spawned::{Child, SpawnError, Spawned, TaskEnv, TaskIo};
use crate::spawn::terminal::open_terminal;
#[cfg(target_os = "linux")]
use crate::spawn::vfork_spawn;
use crate::sys::Session;
use crate::task::leader::{Leader, LeaderProcess};
use crate::task::log_file::open_new;
use crate::task::output_pipe::OutputPipe;

/// The descriptors a child is started with: its stdout and stderr (`output`), its
/// stdin (`None`: `/dev/null`), and the session it starts in (its own on that stdin for a
/// terminal).
#[derive(Debug)]
pub(crate) struct ChildIo {
    pub(crate) output: OwnedFd,
    pub(crate) input: Option<OwnedFd>,
    pub(crate) session: Session,
}

/// Starts `command` under `shell` in a new process group, stdout and stderr both the
/// write end of one pipe (so their bytes stay in write order), stdin on `/dev/null`
/// ([`TaskIo::Plain`]) or a pipe ([`TaskIo::InputPipe`]); or, for
/// [`TaskIo::Terminal`], in a session of its own whose controlling terminal is a new
/// pseudo-terminal, its stdin, stdout and stderr. With `log`, that file is created
/// first, as [`open_new`] does (by the spawn's child when it can: see `vfork_spawn`);
/// if it cannot be, nothing is started. `launch` says what runs the command (a
/// sandbox's program, the shell) and by which mechanism.
///
/// Every descriptor made here is close-on-exec, so no other task inherits this one's
/// pipe; the parent's copies of the write end (of the terminal's slave) are gone when
/// this returns, so the read end sees end-of-file as soon as the last process holding
/// it exits.
pub(crate) fn spawn_shell(
    launch: &Launch<'_>,
    command: &str,
    cwd: &Path,
    env: &TaskEnv,
    log: Option<&Path>,
    io: TaskIo,
) -> Result<Spawned, SpawnError> {
    let (read, child_io, input) = match io {
        TaskIo::Plain | TaskIo::InputPipe => {
            let (read, write) = cloexec_pipe().map_err(SpawnError::start)?;
            // Only our end is non-blocking: the task must block on a full pipe
            // (backpressure), not get EAGAIN. O_NONBLOCK lives on the open file
            // description of each end.
            fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(SpawnError::start)?;
            let (child_input, input) = if io == TaskIo::InputPipe {
                let (child_end, our_end) = cloexec_pipe().map_err(SpawnError::start)?;
                fcntl(&our_end, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(SpawnError::start)?;
                (Some(child_end), Some(our_end))
            } else {
                (None, None)
            };
            let child_io = ChildIo {
                output: write,
                input: child_input,
                // A sandboxed task leaves our session, and with it our controlling
                // terminal, which it could otherwise open and type into (TIOCSTI).
                session: if launch.prefix.is_empty() {
                    Session::Group
                } else {
                    Session::Own
                },
            };
            (read, child_io, input)
        }
        TaskIo::Terminal(size) => {
            let terminal = open_terminal(size).map_err(SpawnError::start)?;
            let child_io = ChildIo {
                input: Some(terminal.slave.try_clone().map_err(SpawnError::start)?),
                output: terminal.slave,
                session: Session::Terminal,
            };
            (terminal.master, child_io, Some(terminal.input))
        }
    };
    #[cfg(target_os = "linux")]
    let child = if launch.path.is_fast() {
        spawn_fast(launch, command, cwd, env, log, child_io)?
    } else {
        start_with_std(launch, command, cwd, env, log, None, child_io)?
    };
    // Off Linux every path is the portable one.
    #[cfg(not(target_os = "linux"))]
    let child = {
        let _ = launch.path;
        start_with_std(launch, command, cwd, env, log, None, child_io)?
    };
    // Only the child holds the write end now.
    let log_made = child.log.is_some();
    let leader = Leader::new(LeaderProcess::new(child.pid));
    let pid = child.pid.as_raw().unsigned_abs();
    let processes = TaskProcesses::of_leader(pid).ok_or_else(|| SpawnError::Start {
        source: io::Error::other("spawned child has an impossible pid"),
        log_made,
    })?;
    let output = OutputPipe::new(read).map_err(|source| {
        // It runs, but we could not watch its output: end it rather than leave it
        // loose (dropping `leader` reaps it once it is gone).
        let _ = killpg(child.pid, Signal::SIGKILL);
        SpawnError::Start { source, log_made }
    })?;
    Ok(Spawned {
        leader,
        pid,
        processes,
        output,
        input,
        log: child.log.map(File::from),
    })
}

/// The fast start ([`vfork_spawn`]), or [`start_with_std`] where the kernel refuses it.
#[cfg(target_os = "linux")]
fn spawn_fast(
    launch: &Launch<'_>,
    command: &str,
    cwd: &Path,
    env: &TaskEnv,
    log: Option<&Path>,
    io: ChildIo,
) -> Result<Child, SpawnError> {
    use std::os::fd::AsFd;

    use vfork_spawn::{ShellCommand, Spawn};
    let mut prepared = ShellCommand::new(command, cwd, env)
        .and_then(|prepared| prepared.with_launch(launch))
        .map_err(SpawnError::start)?;
    if let Some(path) = log {
        prepared = prepared.with_log(path).map_err(SpawnError::start)?;
    }
    let started = vfork_spawn::spawn(
        &prepared,
        io.output.as_fd(),
        io.input.as_ref().map(AsFd::as_fd),
        io.session,
    )?;
    match started {
        Spawn::Started(child) => Ok(child),
        Spawn::Refused { log: made } => start_with_std(launch, command, cwd, env, log, made, io),
    }
}

/// The portable start, also where the kernel refused `vfork_spawn`'s way: the log (unless the
/// refused child made it already, `made`), then the shell through std.
fn start_with_std(
    launch: &Launch<'_>,
    command: &str,
    cwd: &Path,
    env: &TaskEnv,
    log: Option<&Path>,
    made: Option<OwnedFd>,
    io: ChildIo,
) -> Result<Child, SpawnError> {
    let log = match (made, log) {
        (Some(made), _) => Some(made),
        (None, Some(path)) => Some(open_new(path).map_err(SpawnError::Log)?.into()),
        (None, None) => None,
    };
    let log_made = log.is_some();
    let pid = spawn_with_std(launch, command, cwd, env, io)
        .map_err(|source| SpawnError::Start { source, log_made })?;
    Ok(Child { pid, log })
}

/// The start through `std::process::Command`: the portable path, and where the kernel
/// refuses `vfork_spawn`'s way. The child inherits every descriptor of ours that is not
/// close-on-exec (std's behaviour), and of our environment nothing: it gets `env`.
fn spawn_with_std(
    launch: &Launch<'_>,
    command: &str,
    cwd: &Path,
    env: &TaskEnv,
    io: ChildIo,
) -> io::Result<Pid> {
    // `try_clone` dups with F_DUPFD_CLOEXEC.
    let write_for_stderr = io.output.try_clone()?;
    let mut child = Command::new(launch.program());
    child
        .args(launch.args())
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(io.input.map_or_else(Stdio::null, Stdio::from))
        .stdout(Stdio::from(io.output))
        .stderr(Stdio::from(write_for_stderr));
    match io.session {
        Session::Terminal => crate::sys::start_session_on_terminal(&mut child),
        Session::Own => crate::sys::start_own_session(&mut child),
        Session::Group => {
            child.process_group(0);
        }
    }
    // Dropping the `Child` neither waits for nor kills it: `Leader` reaps it by pid.
    let spawned = child.spawn()?;
    i32::try_from(spawned.id())
        .map(Pid::from_raw)
        .map_err(|_| io::Error::other("spawned child has an impossible pid"))
    // `child` drops here, and with it this side's copies of the write end.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process_path::ProcessPath;
    use crate::spawn::shell::Shell;

    fn sh() -> Shell {
        Shell::new("/bin/sh")
    }

    fn plain(output: OwnedFd) -> ChildIo {
        ChildIo {
            output,
            input: None,
            session: Session::Group,
        }
    }

    /// The fallback creates the log itself, as the child would have, and refuses to
    /// start when it cannot.
    #[test]
    fn std_fallback_creates_the_log_first_or_starts_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bash_1.log");
        let marker = dir.path().join("ran");
        let command = format!("touch '{}'", marker.display());
        let no_env = TaskEnv::new();
        // Each start gets its own pipe; its read end lives as long as the caller keeps it.
        let start = || {
            let (read, write) = cloexec_pipe().unwrap();
            let shell = sh();
            let started = start_with_std(
                &Launch::plain(&shell, ProcessPath::platform_default()),
                &command,
                dir.path(),
                &no_env,
                Some(&path),
                None,
                plain(write),
            );
            (started, read)
        };

        let (started, _read) = start();
        let child = started.unwrap();
        assert!(
            crate::sys::reap(child.pid, true)
                .unwrap()
                .unwrap()
                .success()
        );
        assert!(child.log.is_some() && marker.exists());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);

        // The name is taken now: an error, and the command does not run again.
        std::fs::remove_file(&marker).unwrap();
        match start().0 {
            Err(SpawnError::Log(error)) => {
                assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
            }
            other => panic!("expected a log error, got {other:?}"),
        }
        assert!(!marker.exists());
    }

    /// The fallback for kernels that refuse `vfork_spawn`: same group, same output.
    #[test]
    fn std_fallback_starts_the_shell_in_its_own_group() {
        use std::io::Read;
        let (read, write) = cloexec_pipe().unwrap();
        let env = TaskEnv::from([("GREETING".into(), "hi".into())]);
        let command = "echo $GREETING; echo err >&2; read -r _ _ _ _ group _ </proc/$$/stat; \
                       [ $group = $$ ] && echo leads; exit 4";
        let shell = sh();
        let launch = Launch::plain(&shell, ProcessPath::platform_default());
        let pid = spawn_with_std(&launch, command, Path::new("/"), &env, plain(write)).unwrap();
        let mut output = String::new();
        std::fs::File::from(read)
            .read_to_string(&mut output)
            .unwrap();
        let status = crate::sys::reap(pid, true).unwrap().unwrap();
        assert_eq!(output, "hi\nerr\nleads\n");
        assert_eq!(status.code(), Some(4));
    }
}
