//! The common case in a few lines: an agent on the local machine whose session lives
//! under a user data dir. It only composes the layers' own APIs.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use zidane_agent::{
    Agent, AgentBuilder, Behavior, Model, Result, Session, SessionStore, resolve_tasks_dir,
};
use zidane_context::{EnvPolicy, SandboxPolicy};
use zidane_process::ProcessContext;

type Configure = Box<dyn FnOnce(AgentBuilder) -> AgentBuilder>;

/// Starts building an agent on the local machine, with its sessions under `user_dir`.
///
/// What [`build`](LocalAgentBuilder::build) assembles, all of it from the layers:
///
/// - the context: a [`ProcessContext`] with its defaults (or the one given with
///   [`context`](LocalAgentBuilder::context)), which starts by ending the background
///   tasks that hosts of this user left running when they crashed
///   ([`ProcessContext::sweep_orphans`]; logged with `tracing` at `info`, target
///   `zidane_process`); opt out with
///   [`sweep_orphans`](LocalAgentBuilder::sweep_orphans); its commands get the
///   environment [`env_policy`](LocalAgentBuilder::env_policy) computes (by default the
///   host's minus every variable named like a secret), and they run in the sandbox
///   [`sandbox`](LocalAgentBuilder::sandbox) sets (by default none, as a library's
///   context: the host decides);
/// - the session: the one stored under the id given with
///   [`session_id`](LocalAgentBuilder::session_id), a new one with that id, or a new one
///   with a generated id ([`Session::generate`]);
/// - a [`SessionStore`] on `user_dir`, so the session is saved as
///   `<user_dir>/sessions/<id>/session.json` after every turn;
/// - background mode on, with task logs in `<user_dir>/sessions/<id>/tasks/`
///   ([`resolve_tasks_dir`]) — deleting the session deletes its logs too;
/// - the default tools: `shell`, `shell_kill`, `wait_task`, `read_file`, `shell_input`,
///   `shell_screen`, `shell_notify`.
///
/// ```
/// use std::sync::Arc;
/// use zidane::prelude::*;
///
/// let user_dir = tempfile::tempdir()?;
/// let agent = zidane::local_agent(Arc::new(ScriptedModel::new()), user_dir.path())
///     .session_id("s1")
///     .build()?;
/// assert_eq!(agent.id(), "s1");
/// assert_eq!(agent.tasks_dir(), Some(user_dir.path().join("sessions/s1/tasks").as_path()));
/// assert!(agent.background_gate().allowed());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn local_agent(model: Arc<dyn Model>, user_dir: impl Into<PathBuf>) -> LocalAgentBuilder {
    LocalAgentBuilder {
        model,
        user_dir: user_dir.into(),
        session: SessionChoice::Generate,
        context: None,
        sweep_orphans: true,
        env_policy: EnvPolicy::default(),
        sandbox: SandboxPolicy::off(),
        behavior: Behavior::new(),
        configure: Vec::new(),
        #[cfg(feature = "detach")]
        detach: None,
        remote: None,
    }
}

enum SessionChoice {
    Generate,
    Id(String),
    Given(Session),
}

/// Assembles an agent on the local machine. Start with [`local_agent`].
///
/// For anything this builder does not cover — your own tools, a hook bus, a host-owned
/// handle — reach the layer's own [`AgentBuilder`] with
/// [`configure`](Self::configure).
#[must_use]
pub struct LocalAgentBuilder {
    model: Arc<dyn Model>,
    user_dir: PathBuf,
    session: SessionChoice,
    context: Option<Arc<ProcessContext>>,
    sweep_orphans: bool,
    env_policy: EnvPolicy,
    sandbox: SandboxPolicy,
    behavior: Behavior,
    configure: Vec<Configure>,
    #[cfg(feature = "detach")]
    detach: Option<zidane_supervisor::SupervisorClient>,
    remote: Option<(
        Arc<dyn zidane_context::ExecutionContext>,
        zidane_context::ExecutionHandle,
    )>,
}

impl LocalAgentBuilder {
    /// Uses the session stored under this id, or starts a new one with it
    /// ([`SessionStore::load_or_new`]). A loaded session's history rebuilds the
    /// `notified` latch, so nothing it already told the model is told again.
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session = SessionChoice::Id(id.into());
        self
    }

    /// Starts from this session (saved under its id in the user dir).
    pub fn session(mut self, session: Session) -> Self {
        self.session = SessionChoice::Given(session);
        self
    }

    /// Offers `shell`'s `detach: true`: such tasks are run by the per-user supervisor
    /// `client` reaches (give it a [`Launcher`](zidane_supervisor::Launcher) so the
    /// first detached start starts it), outlive this host, and are re-adopted by the
    /// next agent whose working directory is the same workspace
    /// ([`SupervisedContext`](zidane_supervisor::SupervisedContext)).
    #[cfg(feature = "detach")]
    #[cfg_attr(docsrs, doc(cfg(feature = "detach")))]
    pub fn detach(mut self, client: zidane_supervisor::SupervisorClient) -> Self {
        self.detach = Some(client);
        self
    }

    /// Runs every task elsewhere: on `context` (a fleet's, such as `zidane-restate`'s
    /// `RestateContext`), on `handle`, which the agent never destroys, so its tasks
    /// outlive it and the next agent given the handle re-adopts them. This machine's
    /// context, its sandbox, environment policy and `detach` are then not used.
    pub fn remote(
        mut self,
        context: Arc<dyn zidane_context::ExecutionContext>,
        handle: zidane_context::ExecutionHandle,
    ) -> Self {
        self.remote = Some((context, handle));
        self
    }

    /// Runs on this context instead of a default [`ProcessContext`] — to set its kill
    /// grace, its task cap or its working directory, or to share one context between
    /// agents. It sweeps orphans only if it was built to.
    pub fn context(mut self, context: Arc<ProcessContext>) -> Self {
        self.context = Some(context);
        self
    }

    /// Whether the default context ends, as it is built, the background tasks of this
    /// user's hosts that crashed (default: yes). A host restarting after a crash wants
    /// it: otherwise its previous run's tasks keep running with nobody to hear of them.
    /// Only processes whose owner marker names a host that is gone are touched; see
    /// [`ProcessContext::sweep_orphans`]. Built outside a tokio runtime, `build` runs
    /// the sweep before it returns; inside one, in the background.
    ///
    /// A context given with [`context`](Self::context) sweeps as it was built to
    /// ([`ProcessContextBuilder::sweep_orphans_on_start`](zidane_process::ProcessContextBuilder::sweep_orphans_on_start)).
    pub fn sweep_orphans(mut self, sweep: bool) -> Self {
        self.sweep_orphans = sweep;
        self
    }

    /// Which of the host's environment variables the default context's commands get
    /// (default [`EnvPolicy::default`]: all but those named like a secret — keys,
    /// tokens, secrets, passwords — and never zidane's own credentials); see
    /// [`ProcessContextBuilder::env_policy`](zidane_process::ProcessContextBuilder::env_policy).
    /// A context given with [`context`](Self::context) keeps its own.
    pub fn env_policy(mut self, policy: EnvPolicy) -> Self {
        self.env_policy = policy;
        self
    }

    /// What the default context's commands may touch (default [`SandboxPolicy::off`]);
    /// see [`ProcessContextBuilder::sandbox`](zidane_process::ProcessContextBuilder::sandbox),
    /// which takes the context's working directory as the workspace of a
    /// `workspace-write` policy that names none. A context given with
    /// [`context`](Self::context) keeps its own.
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = policy;
        self
    }

    /// Sets the behaviour (caps, stall watchdog, destroy timeout, system prompt). Its
    /// tasks dir, when it names none, becomes the session's `tasks/` directory.
    pub fn behavior(mut self, behavior: Behavior) -> Self {
        self.behavior = behavior;
        self
    }

    /// Adjusts the [`AgentBuilder`] before it builds: add or replace tools, bring a hook
    /// bus, inject a handle. Runs after this builder's own settings, in call order.
    pub fn configure(
        mut self,
        configure: impl FnOnce(AgentBuilder) -> AgentBuilder + 'static,
    ) -> Self {
        self.configure.push(Box::new(configure));
        self
    }

    /// Builds the agent.
    ///
    /// Errors (from `zidane-agent`): the session id cannot name a directory, or a stored
    /// session cannot be read or parsed, or two tools claim one name.
    pub fn build(self) -> Result<Agent> {
        let store = SessionStore::new(self.user_dir);
        let session = match self.session {
            SessionChoice::Generate => Session::generate(),
            SessionChoice::Id(id) => store.load_or_new(&id)?,
            SessionChoice::Given(session) => session,
        };
        let mut behavior = self.behavior;
        if behavior.tasks_dir.is_none() {
            behavior.tasks_dir = Some(resolve_tasks_dir(store.user_dir(), &session.id)?);
        }
        if let Some((context, handle)) = self.remote {
            let mut builder = Agent::builder(self.model, context)
                .store(store)
                .session(session)
                .behavior(behavior)
                .handle(handle);
            for configure in self.configure {
                builder = configure(builder);
            }
            return builder.build();
        }
        let sweep_orphans = self.sweep_orphans;
        let env_policy = self.env_policy;
        let sandbox = self.sandbox;
        let context = self.context.unwrap_or_else(|| {
            Arc::new(
                ProcessContext::builder()
                    .sweep_orphans_on_start(sweep_orphans)
                    .env_policy(env_policy)
                    .sandbox(sandbox)
                    .build(),
            )
        });
        #[cfg(feature = "detach")]
        let context: Arc<dyn zidane_context::ExecutionContext> = match self.detach {
            Some(client) => {
                let workspace = std::fs::canonicalize(context.cwd())
                    .unwrap_or_else(|_| context.cwd().to_path_buf());
                Arc::new(zidane_supervisor::SupervisedContext::new(
                    context,
                    client,
                    zidane_supervisor::DetachSettings {
                        workspace,
                        session: session.id.clone(),
                        host: "zidane".to_owned(),
                    },
                ))
            }
            None => context,
        };
        let mut builder = Agent::builder(self.model, context)
            .store(store)
            .session(session)
            .behavior(behavior);
        for configure in self.configure {
            builder = configure(builder);
        }
        builder.build()
    }
}

impl fmt::Debug for LocalAgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = match &self.session {
            SessionChoice::Generate => "(generated)",
            SessionChoice::Id(id) => id.as_str(),
            SessionChoice::Given(session) => session.id.as_str(),
        };
        f.debug_struct("LocalAgentBuilder")
            .field("user_dir", &self.user_dir)
            .field("session", &session)
            .field("context", &self.context)
            .field("sweep_orphans", &self.sweep_orphans)
            .field("env_policy", &self.env_policy)
            .field("sandbox", &self.sandbox)
            .field("behavior", &self.behavior)
            .field("configure", &self.configure.len())
            .finish_non_exhaustive()
    }
}
