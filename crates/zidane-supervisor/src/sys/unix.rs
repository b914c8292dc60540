//! Unix: a socket in a private directory, the peer's uid checked on every connection,
//! `setsid` to leave the host's session, SIGTERM to a monitor. The Windows twin is
//! `windows.rs`: a named pipe with this user's access list.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::time::Duration;

use tokio::net::{UnixListener, UnixStream};
use zidane_process::ProcessStamp;

/// A connection to or from the supervisor.
pub(crate) type Stream = UnixStream;

/// Whether this platform runs a supervisor.
pub(crate) const SUPPORTED: bool = true;

/// Creates (or truncates) `path` readable and writable by this user only.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// Makes this process the leader of a new session: out of its parent's process group
/// and session, so what ends those (a terminal closing, a group kill of the host) does
/// not end it.
pub(crate) fn leave_host_session() -> io::Result<()> {
    nix::unistd::setsid().map(drop).map_err(io::Error::from)
}

/// Spawns `command`; the process leaves this one's session itself
/// ([`leave_host_session`]).
pub(crate) fn spawn_detached_std(
    command: &mut std::process::Command,
) -> io::Result<std::process::Child> {
    command.spawn()
}

/// [`spawn_detached_std`] for tokio's `Command`.
pub(crate) fn spawn_detached_tokio(
    command: &mut tokio::process::Command,
) -> io::Result<tokio::process::Child> {
    command.spawn()
}

/// `systemd-run`, where this user's systemd manager runs (its private socket is in the
/// runtime directory) and `systemd-run` is on the `PATH`; `None` elsewhere.
#[cfg(target_os = "linux")]
pub(crate) fn user_manager() -> Option<std::path::PathBuf> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")?;
    if !Path::new(&runtime).join("systemd/private").exists() {
        return None;
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("systemd-run"))
        .find(|candidate| candidate.is_file())
}

/// No systemd outside Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn user_manager() -> Option<std::path::PathBuf> {
    None
}

/// The supervisor's listener: bound in `socket`'s directory, made private (`0700`)
/// before the bind.
pub(crate) struct Listener(UnixListener);

impl Listener {
    /// Binds `socket`, replacing a stale socket file no one listens on.
    pub(crate) async fn bind(socket: &Path) -> io::Result<Self> {
        let dir = socket.parent().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a socket needs a directory")
        })?;
        zidane_process::ensure_runtime_dir(dir)?;
        if std::fs::symlink_metadata(socket).is_ok() {
            if UnixStream::connect(socket).await.is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("a supervisor already listens on {}", socket.display()),
                ));
            }
            std::fs::remove_file(socket)?;
        }
        UnixListener::bind(socket).map(Self)
    }

    /// The next connection from a process of this user; others are dropped unanswered.
    pub(crate) async fn accept(&self) -> io::Result<Stream> {
        let me = nix::unistd::geteuid().as_raw();
        loop {
            let (stream, _) = self.0.accept().await?;
            match stream.peer_cred() {
                Ok(cred) if cred.uid() == me => return Ok(stream),
                Ok(cred) => {
                    tracing::warn!(uid = cred.uid(), "refused a connection from another user");
                }
                Err(error) => tracing::warn!(%error, "refused a connection whose peer is unknown"),
            }
        }
    }
}

/// Connects to the supervisor at `socket`.
pub(crate) async fn connect(socket: &Path) -> io::Result<Stream> {
    UnixStream::connect(socket).await
}

/// Asks a monitor to end its task (SIGTERM), only if it is still the process stamped:
/// a recycled pid is never signalled. False when it no longer runs.
pub(crate) fn terminate(monitor: &ProcessStamp) -> bool {
    if !monitor.runs() {
        return false;
    }
    let Ok(pid) = i32::try_from(monitor.pid) else {
        return false;
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .is_ok()
}

/// SIGTERM, received: the supervisor asks a monitor to end its task.
pub(crate) struct TerminateSignal(tokio::signal::unix::Signal);

impl TerminateSignal {
    /// Listens from now on.
    pub(crate) fn new() -> io::Result<Self> {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).map(Self)
    }

    /// The next SIGTERM.
    pub(crate) async fn recv(&mut self) {
        if self.0.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

/// Ends the process group `leader` leads — TERM, then KILL once `grace` has passed —
/// only while `leader` is still the process stamped; returns once it is gone or KILL
/// was sent.
pub(crate) async fn end_group(leader: &ProcessStamp, grace: Duration) -> io::Result<()> {
    use nix::sys::signal::{Signal, killpg};
    let Ok(pid) = i32::try_from(leader.pid) else {
        return Ok(());
    };
    let group = nix::unistd::Pid::from_raw(pid);
    if !leader.runs() || killpg(group, Signal::SIGTERM).is_err() {
        return Ok(());
    }
    let deadline = tokio::time::Instant::now() + grace;
    while leader.runs() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if leader.runs() {
        let _ = killpg(group, Signal::SIGKILL);
    }
    Ok(())
}
