//! What every session command shares: the agent on this machine, the wake
//! loop, and the teardown that leaves no process behind.

use std::sync::Arc;
use std::time::Duration;

#[cfg(unix)]
use tokio::signal::unix::{Signal, SignalKind, signal};
use zidane::agent::{Agent, Behavior, DestroyReport, Model, SessionStore, WakeLoop};
use zidane::context::{EnvPolicy, SandboxPolicy};

use crate::env_config;
use crate::error::CliError;
use crate::interactive::TerminalApprover;
use crate::user_dir::user_dir;

/// Where a session's tasks run when not on this machine: a fleet's context on the
/// workspace's handle, made for the session `session` (see [`crate::fleet`]).
pub struct Remote {
    /// The fleet's context.
    pub context: Arc<dyn zidane::context::ExecutionContext>,
    /// The workspace's handle.
    pub handle: zidane::context::ExecutionHandle,
    /// The session's id (the resumed one's, or a new one).
    pub session: String,
}

/// The stored session `id`, or [`CliError::UnknownSession`].
pub fn stored_session(store: &SessionStore, id: &str) -> Result<zidane::agent::Session, CliError> {
    if !store.session_file(id)?.is_file() {
        return Err(CliError::UnknownSession {
            id: id.to_owned(),
            dir: store
                .user_dir()
                .join(zidane::agent::SESSIONS_DIR)
                .display()
                .to_string(),
        });
    }
    Ok(store.load(id)?)
}

/// A running session: the agent, its wake loop, and what the footer names.
pub struct Host {
    /// The agent on this machine.
    pub agent: Agent,
    /// Wakes the agent when a task ends while it is idle; every prompt and abort goes
    /// through it.
    pub wake: Arc<WakeLoop>,
    /// The model's name, for the footer.
    pub model_name: String,
    /// Whether the session was resumed from disk (its transcript is repainted first).
    pub resumed: bool,
    /// Asks the person at the terminal before a command runs outside the sandbox, once
    /// the interactive screen connects it; without one (print mode) nobody is asked.
    pub approver: Arc<TerminalApprover>,
}

impl Host {
    /// Builds the agent — the stored session `resume`, or a new one, its tasks'
    /// environment computed by `env_policy`, its commands run in `sandbox` — and starts its wake loop. Must run inside
    /// the tokio runtime. A foreground command still running after `move_after` moves to
    /// the background (`None`: never). Its context ends, in the background, what crashed
    /// hosts of this user left running, unless
    /// [`SWEEP_ORPHANS_VAR`](crate::env_config::SWEEP_ORPHANS_VAR) turns that off.
    pub fn start(
        model: Arc<dyn Model>,
        model_name: String,
        resume: Option<&str>,
        env_policy: EnvPolicy,
        sandbox: SandboxPolicy,
        move_after: Option<Duration>,
        remote: Option<Remote>,
    ) -> Result<Self, CliError> {
        let user_dir = user_dir()?;
        let mut behavior = Behavior::new();
        behavior.foreground_budget = move_after;
        let approver = Arc::new(TerminalApprover::default());
        let asks: Arc<dyn zidane::tools::Approver> = approver.clone();
        let mut builder = zidane::local_agent(model, &user_dir)
            .configure(move |agent| agent.approver(asks))
            .behavior(behavior)
            .env_policy(env_policy)
            .sandbox(sandbox)
            .sweep_orphans(env_config::sweep_orphans()?);
        if let Some(id) = resume {
            stored_session(&SessionStore::new(&user_dir), id)?;
            builder = builder.session_id(id);
        }
        match remote {
            Some(remote) => {
                builder = builder
                    .remote(remote.context, remote.handle)
                    .session_id(remote.session);
            }
            None if zidane::supervisor::SUPPORTED => {
                let paths = zidane::supervisor::SupervisorPaths::for_user_dir(&user_dir);
                let launcher = crate::detached::launcher(&user_dir)?;
                builder = builder
                    .detach(zidane::supervisor::SupervisorClient::new(paths).launcher(launcher));
            }
            None => {}
        }
        let agent = builder.build()?;
        let wake = Arc::new(WakeLoop::spawn(agent.clone()));
        Ok(Self {
            agent,
            wake,
            model_name,
            resumed: resume.is_some(),
            approver,
        })
    }

    /// Opens the session's handle now rather than at the first prompt: the workspace's
    /// detached tasks are then in the picker, and an end no session was told of wakes
    /// the model, before anything is typed.
    pub async fn open(&self) -> Result<(), CliError> {
        self.agent.handle().await?;
        Ok(())
    }

    /// Stops the wake loop and destroys the agent: every task's group killed, its log
    /// flushed; bounded by the agent's destroy timeout.
    pub async fn shut_down(self) -> Result<DestroyReport, CliError> {
        drop(self.wake);
        Ok(self.agent.destroy().await?)
    }
}

/// The signals that end a session the way a quit does: `SIGTERM`, `SIGHUP`, `SIGINT`.
#[cfg(unix)]
pub struct Stop {
    terminate: Signal,
    hangup: Signal,
    interrupt: Signal,
}

#[cfg(unix)]
impl Stop {
    /// Starts listening (the signals no longer kill the process outright).
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for one of them.
    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.hangup.recv() => {}
            _ = self.interrupt.recv() => {}
        }
    }
}

/// The console events that end a session the way a quit does: ctrl-c, ctrl-break and
/// the console's close.
#[cfg(windows)]
pub struct Stop {
    interrupt: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
    close: tokio::signal::windows::CtrlClose,
}

#[cfg(windows)]
impl Stop {
    /// Starts listening (the events no longer end the process outright).
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: tokio::signal::windows::ctrl_c()?,
            brk: tokio::signal::windows::ctrl_break()?,
            close: tokio::signal::windows::ctrl_close()?,
        })
    }

    /// Waits for one of them.
    pub async fn recv(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.brk.recv() => {}
            _ = self.close.recv() => {}
        }
    }
}
