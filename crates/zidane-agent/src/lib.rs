//! The agent of zidane: the run loop that wakes the model, exactly once, for every
//! background task that ends.
//!
//! An [`Agent`] owns a [`Session`] (its turns), a [`Model`], the tools (by default
//! `shell`, `shell_kill`, `wait_task`, `read_file`, `shell_input`, `shell_screen`,
//! `shell_notify`), an execution context and handle, a [`HookBus`], and two queues —
//! exits and stalls.
//!
//! - **Push**: every task's exit fires `background:exit` and queues the exit.
//! - **Pull**: at the start of every [`run`](Agent::run), ended tasks from
//!   `list_background` the model was not told about are merged in (through a
//!   [`ReconcileJournal`] for durable hosts).
//! - The merged list, in completion order, passes the mutable `background:reconcile`
//!   hook, is latched (before rendering, so a racing kill cannot double-fire), and
//!   becomes `<task-notification>` blocks at the head of the seeded user turn.
//! - **Suppression**: a `shell_kill`, a `wait_task` that returned an exit, and a
//!   `read_file` of an ended task's log each drop the pending notification.
//! - **Host-driven**: [`Agent::host_driven`] builds an agent without a model for a host
//!   that holds the model elsewhere (an MCP server): [`Agent::call_tool`] and
//!   [`Agent::drain_notifications`] are the run loop's own two steps.
//! - **Auto-wake**: [`Agent::has_pending_task_notifications`], drain-only runs with an
//!   empty prompt, and the host-side [`WakeLoop`].
//! - **Destroy**: bounded, ordered teardown ([`Agent::destroy`]).
//! - **Subagents**: [`AgentBuilder::spawn_tool`] gives the model a `spawn` tool that runs
//!   a child agent and returns its answer. A background task the child leaves running
//!   becomes the parent's (reassigned to its handle, `background:reassign`, its exit
//!   notified to the parent); the child's `background:*` events reach the parent as
//!   `child:background:*` with the child's id and depth. See [`SpawnToolOptions`].
//! - **Retention**: a session is live while a process holds it ([`SessionStore::hold`]);
//!   a [`RetentionPolicy`] removes ended sessions past an age, then the oldest while
//!   the sessions take more than a size, never a live one.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use serde_json::json;
//! use zidane_agent::{Agent, Behavior, RunOptions, ScriptedModel};
//! use zidane_context::{MockContext, TaskId};
//!
//! let context = Arc::new(MockContext::new());
//! let model = ScriptedModel::new()
//!     .tool_call("shell", json!({ "command": "make", "run_in_background": true }))
//!     .text("Building in the background; I will be told when it ends.")
//!     .react(|request| {
//!         let ended = &request.notifications()[0];
//!         zidane_agent::ModelResponse::text(format!("{} ended: {}", ended.task_id, ended.summary))
//!     });
//! let agent = Agent::builder(Arc::new(model.clone()), context.clone())
//!     .behavior(Behavior::new().tasks_dir("/tmp/zidane-doc/tasks"))
//!     .build()?;
//!
//! agent.run(RunOptions::new("build it")).await?;
//! context.finish(TaskId::parse("bash_1")?, 0);
//! assert!(agent.has_pending_task_notifications());
//!
//! let woken = agent.run(RunOptions::drain()).await?;
//! assert!(woken.text.starts_with("bash_1 ended: make"));
//! agent.destroy().await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use agent::Agent;
pub use config::{
    AgentBuilder, Behavior, CANCEL_GRACE, DEFAULT_DESTROY_TIMEOUT, DEFAULT_DURABLE_SWEEP_INTERVAL,
    DEFAULT_MAX_STEPS, DirectJournal, ReconcileJournal,
};
pub use destroy::{DestroyReport, DestroyStep, StepOutcome};
pub use error::{AgentError, AttachError, KillTaskError, Result};
pub use events::{EVENT_COOLDOWN, EVENT_LINES_SHOWN, EventLedger};
pub use hooks::{
    HookBus, HookEvent, Reconcile, SubscriptionId, TaskReassign, TaskStart, ToolCallEvent,
    ToolResultEvent,
};
pub use host::{Notifications, ToolCall};
pub use listing::{SessionListing, SessionSummary, UnreadableSession};
pub use persist::SESSION_LOCK_FILE;
pub use picker::{PickerKind, PickerRow};
pub use resource::{FnResource, Resource};
pub use retention::{
    DEFAULT_RETENTION_MAX_AGE, DEFAULT_RETENTION_MAX_BYTES, RemovalReason, RemovedSession,
    RetentionError, RetentionFailure, RetentionPolicy, RetentionReport,
};
pub use run::{RunOptions, RunOutcome, StopReason};
pub use scripted::{ScriptStep, ScriptedModel};
pub use session::{
    AcknowledgedLog, MAX_SESSION_ID_LEN, SESSION_FILE, SESSIONS_DIR, Session, SessionHold,
    SessionStore, TASKS_DIR, delete_session, resolve_session_dir, resolve_tasks_dir,
    validate_session_id,
};
pub use spawn::{SpawnArgs, create_spawn_tool};
pub use spawn_options::{DEFAULT_MAX_SPAWN_DEPTH, SPAWN, SpawnToolOptions};
pub use wake::{WakeLoop, WakeReport, WakeTrigger};
/// The attribute a [`Model`] implementation needs on its `impl` block (re-exported so
/// hosts need no `async-trait` dependency of their own).
pub use zidane_llm::async_trait;
// The model seam (`zidane-llm`): the `Model` trait and what crosses it, named here too so
// that a host needs only this crate.
pub use zidane_llm::{
    DeltaSink, ErrorSource, FinishReason, Model, ModelDelta, ModelError, ModelErrorKind,
    ModelRequest, ModelResponse, Usage, error_chain,
};

mod agent;
mod config;
mod delivery;
mod destroy;
mod error;
mod events;
mod hooks;
mod host;
mod listing;
mod persist;
mod picker;
mod resource;
mod retention;
mod run;
mod scripted;
mod session;
mod spawn;
mod spawn_options;
mod subagent;
mod suppress;
mod terminal;
mod wake;
