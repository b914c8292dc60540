//! One MCP session: a host-driven agent on its own execution context, the pushes to the
//! client, and a teardown that runs once however the session ends.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};
use rmcp::task_manager::TaskManager;
use tokio::sync::{OnceCell, mpsc};
use tokio_util::sync::CancellationToken;
use zidane_agent::{Agent, Behavior, HookEvent, Session, SubscriptionId, resolve_tasks_dir};
use zidane_context::ExecutionContext;
use zidane_process::ProcessContext;

use crate::error::McpServeError;
use crate::list_tasks::ListTasksTool;
use crate::options::ServeOptions;
use crate::push::{self, Push};

/// The MCP log levels, lowest first (`logging/setLevel` filters by this order).
pub(crate) const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// What a session's handler, its pushes and its server share.
pub(crate) struct SessionCore {
    pub(crate) agent: Agent,
    /// The client, once it has initialized: where pushes go.
    pub(crate) peer: OnceLock<Peer<RoleServer>>,
    /// The least level the client asked for with `logging/setLevel`, as an index into
    /// [`LEVELS`]; `None`: everything is sent.
    min_level: Mutex<Option<usize>>,
    /// `task://` URIs the client subscribed to.
    subscriptions: Mutex<HashSet<String>>,
    /// `wait_task` calls served as MCP tasks.
    pub(crate) tasks: TaskManager,
    /// Most bytes of one result's text ([`ServeOptions::result_budget`]).
    pub(crate) result_budget: usize,
    /// `wait_task`'s cap when the server was given one ([`ServeOptions::wait_cap`]).
    pub(crate) wait_cap: Option<Duration>,
    hook: SubscriptionId,
    stop_pushes: CancellationToken,
    torn_down: OnceCell<()>,
}

impl SessionCore {
    /// A new session: its own `ProcessContext`, a host-driven agent with the default
    /// tools and `list_tasks`, logs in `<user_dir>/sessions/<id>/tasks/`, and the push
    /// forwarder running.
    pub(crate) fn start(options: &ServeOptions) -> Result<Arc<Self>, McpServeError> {
        let context: Arc<dyn ExecutionContext> = Arc::new(
            ProcessContext::builder()
                .kill_grace(options.kill_grace)
                .build(),
        );
        let session = Session::generate();
        let tasks_dir = resolve_tasks_dir(&options.user_dir, &session.id)?;
        let agent = Agent::host_driven(context)
            .session(session)
            .behavior(
                Behavior::new()
                    .tasks_dir(tasks_dir)
                    .destroy_timeout(options.destroy_timeout),
            )
            .tool(Arc::new(ListTasksTool))
            .build()?;
        let (sender, receiver) = mpsc::unbounded_channel();
        // The hook runs on whatever thread ends the task: hand the event to the forwarder.
        let hook = agent.hooks().subscribe(move |event| {
            let push = match event {
                HookEvent::BackgroundExit(exit) => Push::Exit(exit.clone()),
                HookEvent::BackgroundStall(stall) => Push::Stall(stall.clone()),
                HookEvent::BackgroundStart(_) => Push::Started,
                _ => return,
            };
            let _ = sender.send(push);
        });
        tracing::debug!(session = %agent.id(), "MCP session started");
        let core = Arc::new(Self {
            agent,
            peer: OnceLock::new(),
            min_level: Mutex::new(None),
            subscriptions: Mutex::new(HashSet::new()),
            tasks: TaskManager::new(),
            result_budget: options.result_budget,
            wait_cap: options.wait_cap,
            hook,
            stop_pushes: CancellationToken::new(),
            torn_down: OnceCell::new(),
        });
        tokio::spawn(push::forward(
            Arc::downgrade(&core),
            receiver,
            core.stop_pushes.clone(),
        ));
        Ok(core)
    }

    /// Remembers the client, for pushes (the first one wins: one client per session).
    pub(crate) fn remember_peer(&self, peer: &Peer<RoleServer>) {
        let _ = self.peer.set(peer.clone());
    }

    /// Sets the least level of pushed log messages.
    pub(crate) fn set_min_level(&self, level: usize) {
        *lock(&self.min_level) = Some(level);
    }

    /// Whether a log message at `level` (an index into [`LEVELS`]) goes out.
    pub(crate) fn wants_level(&self, level: usize) -> bool {
        lock(&self.min_level).is_none_or(|min| level >= min)
    }

    pub(crate) fn subscribe(&self, uri: String) {
        lock(&self.subscriptions).insert(uri);
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }

    /// Ends the session: pushes stop, the agent is destroyed (every task's process group
    /// killed, bounded by the destroy timeout). Runs once; a second caller waits for the
    /// first to finish.
    pub(crate) async fn teardown(&self) {
        self.torn_down
            .get_or_init(|| async {
                self.stop_pushes.cancel();
                self.agent.hooks().unsubscribe(self.hook);
                let report = self.agent.destroy().await;
                // Every wait was cancelled by the destroy; drop what is left of them.
                self.tasks.shutdown();
                match report {
                    Ok(report) if !report.survivors.is_empty() => {
                        let pids: Vec<u32> = report.survivors.iter().map(|t| t.pid).collect();
                        tracing::warn!(session = %self.agent.id(), ?pids, "session ended before these tasks were confirmed dead");
                    }
                    Ok(_) => tracing::debug!(session = %self.agent.id(), "MCP session ended"),
                    Err(error) => tracing::warn!(%error, "session teardown failed"),
                }
            })
            .await;
    }

    pub(crate) fn is_torn_down(&self) -> bool {
        self.torn_down.initialized()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Never held across an await or a callback; a poisoned set is still a valid set.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
