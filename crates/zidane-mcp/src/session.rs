//! One MCP session: a host-driven agent on its own execution context, its pushes, its
//! MCP tasks, and a teardown that runs once however the session ends.
//!
//! What a session is depends on the transport and the protocol era: a stdio connection
//! is one; over streamable HTTP, a session that began with `initialize` is one, and the
//! requests of the 2026-07-28 era, which carry no session, share one per server (see
//! [`serve_http`](crate::serve_http)).

use std::sync::Arc;
use std::time::Duration;

use rmcp::task_manager::TaskManager;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use zidane_agent::{
    Agent, Behavior, HookEvent, Session, SessionHold, SessionStore, SubscriptionId,
    resolve_tasks_dir,
};
use zidane_context::ExecutionContext;
use zidane_process::ProcessContext;
use zidane_supervisor::{DetachSettings, SupervisedContext};

use crate::error::McpServeError;
use crate::joins::Joins;
use crate::list_tasks::ListTasksTool;
use crate::options::{RemoteSession, ServeOptions};
use crate::push::{self, Push, PushTargets};

/// One MCP session: its own agent (and so its own background tasks), killed with it.
///
/// [`McpServer`](crate::McpServer) serves it to a client; [`teardown`](Self::teardown)
/// ends it.
pub struct McpSession {
    agent: Agent,
    /// The agent's context, typed: the client's roots are added to it. `None` when the
    /// tasks run elsewhere ([`ServeOptions::remote`]).
    process: Option<Arc<ProcessContext>>,
    pub(crate) pushes: Arc<PushTargets>,
    /// Tool calls answered as MCP tasks (the protocol's handles for a long request, not
    /// the agent's background tasks).
    pub(crate) mcp_tasks: TaskManager,
    /// Waits in progress, which a repeated wait on the same task joins.
    pub(crate) joins: Joins,
    /// Most bytes of one result's text ([`ServeOptions::result_budget`]).
    pub(crate) result_budget: usize,
    /// `wait_task`'s cap when the server was given one ([`ServeOptions::wait_cap`]).
    pub(crate) wait_cap: Option<Duration>,
    /// When foreground commands move to the background ([`ServeOptions::move_after`]).
    pub(crate) move_after: crate::options::MoveAfter,
    hook: SubscriptionId,
    stop_pushes: CancellationToken,
    torn_down: OnceCell<()>,
    /// The session's liveness mark, held until the teardown has run: retention never
    /// removes the directory of a session that is held.
    hold: std::sync::Mutex<Option<SessionHold>>,
}

impl McpSession {
    /// A new session: its own `ProcessContext` (its tasks' environment computed by
    /// [`ServeOptions::env_policy`], its commands in the [`ServeOptions::sandbox`]), or
    /// the context [`ServeOptions::remote`] makes; a host-driven agent with the default
    /// tools and `list_tasks`, logs in `<user_dir>/sessions/<id>/tasks/`, the session
    /// held live ([`SessionStore::hold`]) until its teardown, the push forwarder
    /// running, and, for a remote context, a sweep for the exits it records. Call inside a tokio runtime. A bad `ZIDANE_PROCESS_PATH`, a policy that
    /// cannot be applied or a remote context that cannot be made is
    /// [`McpServeError::Config`].
    pub fn new(options: &ServeOptions) -> Result<Arc<Self>, McpServeError> {
        options
            .env_policy
            .validate()
            .map_err(|error| McpServeError::Config(error.to_string()))?;
        let session = Session::generate();
        let (process, context, handle) = match &options.remote {
            Some(remote) => {
                let made = remote
                    .make(&RemoteSession {
                        session: session.id.clone(),
                        workspace: canonical_cwd(),
                    })
                    .map_err(McpServeError::Config)?;
                (None, made.context, Some(made.handle))
            }
            None => {
                let (process, context) = local_context(options, &session)?;
                (Some(process), context, None)
            }
        };
        Self::on_context(options, session, process, context, handle)
    }

    fn on_context(
        options: &ServeOptions,
        session: Session,
        process: Option<Arc<ProcessContext>>,
        context: Arc<dyn ExecutionContext>,
        handle: Option<zidane_context::ExecutionHandle>,
    ) -> Result<Arc<Self>, McpServeError> {
        let hold = SessionStore::new(&options.user_dir).hold(&session.id)?;
        let tasks_dir = resolve_tasks_dir(&options.user_dir, &session.id)?;
        let mut agent = Agent::host_driven(context);
        if let Some(handle) = handle {
            agent = agent.handle(handle);
        }
        let agent = agent
            .session(session)
            .behavior(
                Behavior::new()
                    .tasks_dir(tasks_dir)
                    .destroy_timeout(options.destroy_timeout),
            )
            .tool(Arc::new(ListTasksTool))
            .build()?;
        let (sender, receiver) = push::queue();
        let events = push::EventPushes::default();
        let hook = agent.hooks().subscribe(move |event| {
            let event = match event {
                HookEvent::BackgroundExit(exit) => Push::Exit(exit.clone()),
                HookEvent::BackgroundStall(stall) => Push::Stall(stall.clone()),
                HookEvent::BackgroundStart(_) => Push::Started,
                HookEvent::BackgroundEvent(line) if events.admit(line.task_id) => {
                    Push::Event(line.clone())
                }
                _ => return,
            };
            push::offer(&sender, event);
        });
        tracing::debug!(session = %agent.id(), "MCP session started");
        let pushes = Arc::new(PushTargets::default());
        let stop_pushes = CancellationToken::new();
        tokio::spawn(push::forward(
            Arc::clone(&pushes),
            receiver,
            stop_pushes.clone(),
        ));
        // A remote context records exits for a sweep to find (a local one pushes them,
        // and the supervisor's are told at the first result or the wake-up).
        if let (None, Some(every)) = (&process, agent.idle_sweep_interval()) {
            tokio::spawn(sweep_exits(agent.clone(), every, stop_pushes.clone()));
        }
        Ok(Arc::new(Self {
            agent,
            process,
            pushes,
            mcp_tasks: TaskManager::new(),
            joins: Joins::default(),
            result_budget: options.result_budget,
            wait_cap: options.wait_cap,
            move_after: options.move_after,
            hook,
            stop_pushes,
            torn_down: OnceCell::new(),
            hold: std::sync::Mutex::new(Some(hold)),
        }))
    }

    /// The session's agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The session's context, where the client's roots become workspace roots; `None`
    /// when its tasks run elsewhere.
    pub(crate) fn process(&self) -> Option<&ProcessContext> {
        self.process.as_deref()
    }

    /// Ends the session: pushes stop, the agent is destroyed (every task's process group
    /// killed, bounded by the destroy timeout), the MCP tasks dropped. Runs once; a
    /// second caller waits for the first to finish.
    pub async fn teardown(&self) {
        self.torn_down
            .get_or_init(|| async {
                self.stop_pushes.cancel();
                self.agent.hooks().unsubscribe(self.hook);
                let report = self.agent.destroy().await;
                // Every wait was cancelled by the destroy; drop what is left of them.
                self.mcp_tasks.shutdown();
                match report {
                    Ok(report) if !report.survivors.is_empty() => {
                        let pids: Vec<u32> = report.survivors.iter().map(|t| t.pid).collect();
                        tracing::warn!(session = %self.agent.id(), ?pids, "session ended before these tasks were confirmed dead");
                    }
                    Ok(_) => tracing::debug!(session = %self.agent.id(), "MCP session ended"),
                    Err(error) => tracing::warn!(%error, "session teardown failed"),
                }
                // Ended: its directory is retention's to remove from now on.
                drop(zidane_context::lock(&self.hold).take());
            })
            .await;
    }

    /// Whether [`teardown`](Self::teardown) has run.
    pub fn is_torn_down(&self) -> bool {
        self.torn_down.initialized()
    }
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

/// A session's own context on this machine: a `ProcessContext` (its tasks' environment
/// computed by the server's policy, its commands in the server's sandbox), under the
/// supervisor when the server offers `detach`.
fn local_context(
    options: &ServeOptions,
    session: &Session,
) -> Result<(Arc<ProcessContext>, Arc<dyn ExecutionContext>), McpServeError> {
    let process = Arc::new(
        ProcessContext::builder()
            .kill_grace(options.kill_grace)
            .env_policy(options.env_policy.clone())
            .sandbox(options.sandbox.clone())
            .try_build()
            .map_err(|error| McpServeError::Config(error.to_string()))?,
    );
    let context: Arc<dyn ExecutionContext> = match &options.detach {
        Some(client) => Arc::new(SupervisedContext::new(
            Arc::clone(&process),
            client.clone(),
            DetachSettings {
                workspace: workspace_of(&process),
                session: session.id.clone(),
                host: "zidane mcp".to_owned(),
            },
        )),
        None => Arc::clone(&process) as _,
    };
    Ok((process, context))
}

/// Sweeps `agent` for the exits its context records rather than pushes, every `every`
/// until `stop`: each one found is told as a pushed one would be (the hook, then the
/// push to the client).
async fn sweep_exits(agent: Agent, every: std::time::Duration, stop: CancellationToken) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {
                if let Err(error) = agent.sweep_exits().await {
                    tracing::debug!(%error, "a sweep for exits failed");
                }
            }
        }
    }
}

/// The workspace whose detached tasks a session re-adopts: the server's working
/// directory, as the process context sees it, made canonical so every spelling of it
/// is one workspace.
fn workspace_of(process: &ProcessContext) -> std::path::PathBuf {
    std::fs::canonicalize(process.cwd()).unwrap_or_else(|_| process.cwd().to_path_buf())
}

/// The workspace of a session whose tasks run elsewhere: the server's working
/// directory, made canonical as [`workspace_of`] does.
fn canonical_cwd() -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    std::fs::canonicalize(&cwd).unwrap_or(cwd)
}
