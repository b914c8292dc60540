//! Starting task monitors, and keeping one started ahead of its task.
//!
//! A monitor is the `zidane` binary; starting it (the process, its runtime) is a cost a
//! start would otherwise pay before its task even begins. So the supervisor keeps one
//! monitor started and waiting on its stdin, hands it the next task, and starts the
//! next one in the background. [`Monitors::plain`] starts each monitor at its task's
//! start instead: the same monitor, the same assignment, only later — what the bench
//! compares against, and what a start falls back to when no monitor is ready. The
//! monitor kept ready is also given the last start's policy, to build its context
//! while it waits (see [`crate::prepared`]).

use std::ffi::OsString;

use crate::client::Launcher;
use crate::error::{Result, SupervisorError};
use crate::monitor::MonitorInput;
use crate::paths::SupervisorPaths;
use crate::prepared::Preparation;

/// A started monitor, waiting on its stdin for its task.
pub(crate) struct Waiting {
    /// The number of the task it will run: its directory is made and its control
    /// socket bound before the task comes.
    pub(crate) number: u64,
    /// The process (reaped by whoever takes it).
    pub(crate) child: tokio::process::Child,
    /// Where its task is given.
    pub(crate) stdin: tokio::process::ChildStdin,
    /// Where it says its task runs.
    pub(crate) stdout: tokio::io::BufReader<tokio::process::ChildStdout>,
}

/// How a supervisor starts its monitors.
pub(crate) struct Monitors {
    launcher: Launcher,
    paths: SupervisorPaths,
    /// Whether one is kept started ahead of its task.
    keep_ready: bool,
    ready: tokio::sync::Mutex<Option<Waiting>>,
    /// The last start's policy and environment, which the monitor kept ready builds
    /// its context for while it waits.
    last: std::sync::Mutex<Option<Preparation>>,
}

impl Monitors {
    /// One monitor kept ready at all times.
    pub(crate) fn ready(launcher: Launcher, paths: SupervisorPaths) -> Self {
        Self {
            launcher,
            paths,
            keep_ready: true,
            ready: tokio::sync::Mutex::new(None),
            last: std::sync::Mutex::new(None),
        }
    }

    /// Each monitor started at its task's start.
    pub(crate) fn plain(launcher: Launcher, paths: SupervisorPaths) -> Self {
        Self {
            keep_ready: false,
            ..Self::ready(launcher, paths)
        }
    }

    /// Remembers what the next start most likely needs: this one's policy.
    pub(crate) fn expect(&self, preparation: Preparation) {
        *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(preparation);
    }

    /// The monitor kept ready, or a new one given the task number `number` gives.
    pub(crate) async fn take(&self, number: impl FnOnce() -> Result<u64>) -> Result<Waiting> {
        let ready = self.ready.lock().await.take();
        match ready {
            Some(waiting) => Ok(waiting),
            None => self.start(number()?).await,
        }
    }

    /// Has a monitor started and waiting, given the task number `number` gives, unless
    /// one is or none is kept.
    pub(crate) async fn refill(&self, number: impl FnOnce() -> Result<u64>) {
        if !self.keep_ready {
            return;
        }
        let mut ready = self.ready.lock().await;
        if ready.is_some() {
            return;
        }
        let started = match number() {
            Ok(n) => self.start(n).await,
            Err(error) => Err(error),
        };
        let mut waiting = match started {
            Ok(waiting) => waiting,
            Err(error) => {
                tracing::warn!(%error, "no monitor could be made ready");
                return;
            }
        };
        let expected = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(preparation) = expected {
            // A monitor that cannot take it is replaced when a task comes.
            let _ =
                crate::wire::send(&mut waiting.stdin, &MonitorInput::Prepare(preparation)).await;
        }
        *ready = Some(waiting);
    }

    /// Starts a monitor for task `number`, waiting for its task: this process's
    /// environment (what the supervisor was started with, no secret), its stderr in
    /// the supervisor's log.
    pub(crate) async fn start(&self, number: u64) -> Result<Waiting> {
        let log_path = self.paths.log_file();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(SupervisorError::state(&log_path))?;
        let mut args: Vec<OsString> = self.launcher.args.clone();
        args.extend([
            "--socket".into(),
            self.paths.socket.clone().into_os_string(),
            "--state".into(),
            self.paths.state.clone().into_os_string(),
        ]);
        let mut command = tokio::process::Command::new(&self.launcher.program);
        command
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(log);
        let mut child = crate::sys::spawn_detached_tokio(&mut command).map_err(|error| {
            SupervisorError::StartFailed(format!("{}: {error}", self.launcher.program.display()))
        })?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SupervisorError::StartFailed(
                "the monitor has no stdin or stdout".to_owned(),
            ));
        };
        // A monitor that cannot take it is replaced when its task comes.
        let _ = crate::wire::send(&mut stdin, &MonitorInput::Ready { number }).await;
        Ok(Waiting {
            number,
            child,
            stdin,
            stdout: tokio::io::BufReader::new(stdout),
        })
    }
}
