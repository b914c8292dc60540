//! zidane's per-user supervisor: background tasks that outlive their host.
//!
//! A task started with `detach: true` is handed to one supervisor per user dir instead
//! of the session's own context. The supervisor is started on demand by the first
//! zidane process that needs it, listens on a private socket in the user's runtime
//! directory (peer uid checked, never TCP), and runs each task under a small monitor of
//! its own that writes the task's end to disk — so neither the host's exit nor the
//! supervisor's own death loses a task or its exit code. The next session of the same
//! workspace lists the task again, waits for it, kills it, reads its log, and is told
//! its end exactly once (the [`Ledger`] rules).
//!
//! [`SupervisedContext`] is the seam: an `ExecutionContext` over a session's
//! `ProcessContext` that sends detached starts to the supervisor and shows the
//! workspace's detached tasks beside the session's own. [`SupervisorClient`] is what
//! `zidane ps / logs / wait / kill` use.
//!
//! ```no_run
//! use zidane_supervisor::{SupervisorClient, SupervisorPaths};
//!
//! # async fn ps() -> Result<(), zidane_supervisor::SupervisorError> {
//! let client = SupervisorClient::new(SupervisorPaths::for_user_dir("/home/ada/.local/share/zidane".as_ref()));
//! for task in client.list(None, None).await? {
//!     println!("{} {}", task.record.id, task.record.command);
//! }
//! # Ok(()) }
//! ```

pub use client::{Launcher, SupervisorClient};
pub use context::{DetachSettings, SupervisedContext};
pub use error::{Result, SupervisorError};
pub use ledger::{Ledger, Offer, Teller};
pub use monitor::run_monitor;
pub use paths::{STATE_DIR_NAME, SupervisorPaths};
pub use protocol::{
    HOST_KILLS_WAIT, HostTask, MAX_LINE_BYTES, Request, Response, StartRequest, TaskView,
};
pub use scope::SCOPE_PREFIX;
pub use server::{DEFAULT_DETACHED_RETENTION, SupervisorOptions, serve};
pub use store::{MonitorSpec, Started, TaskRecord};

/// Talking to the supervisor, and starting it.
mod client;
/// The `ExecutionContext` that hands detached tasks to the supervisor.
mod context;
/// A monitor's control socket: input, screen, resize, kill.
mod control;
mod error;
/// Who tells a detached task's end.
mod ledger;
/// The per-task monitor.
mod monitor;
/// Starting monitors, one kept ready.
mod monitors;
/// Task numbers, reserved in blocks.
mod numbers;
/// Where the socket and the state live.
mod paths;
/// A monitor's context built before its task comes.
mod prepared;
/// What crosses the socket.
mod protocol;
/// A systemd user scope for the supervisor, where a user manager runs.
mod scope;
/// The supervisor itself.
mod server;
/// The task directories on disk.
mod store;
/// The OS: private files, sessions, the socket, signals.
mod sys;
/// One JSON line each way.
mod wire;

/// Whether this platform runs a supervisor (detached tasks are offered only where it
/// does).
pub const SUPPORTED: bool = sys::SUPPORTED;
