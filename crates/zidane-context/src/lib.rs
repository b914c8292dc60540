//! The contract between every layer of zidane: the [`ExecutionContext`] trait and the
//! types that cross it.
//!
//! An execution context is where commands run. It runs foreground commands
//! ([`exec`](ExecutionContext::exec)), reads files for the model
//! ([`read_file`](ExecutionContext::read_file)) and — optionally — background tasks:
//! [`exec_background`](ExecutionContext::exec_background) returns a [`TaskId`] and a log
//! path at once; the task's [`on_exit`](BackgroundOptions::on_exit) callback fires
//! exactly once with a [`TaskExitInfo`] when it ends.
//!
//! This crate knows nothing of processes. Most users want the `zidane` facade; depend on
//! this crate alone to implement a new context or to write a layer that works over any
//! context.
//!
//! # Features
//!
//! - `runtime` (default): the async side of the contract — the [`ExecutionContext`]
//!   trait, [`wait_for_exit`], the [`CancellationToken`] re-export and
//!   [`ExecOptions::cancel`]. It brings tokio, tokio-util and async-trait. Without it
//!   (`default-features = false`) the crate is the data types alone — [`TaskId`],
//!   [`TaskExitInfo`], [`TaskEntry`], [`Signal`], [`TaskLimits`], [`EnvPolicy`], … — on
//!   serde, thiserror and chrono: what a crate that only reads or writes them needs.
//! - `mock`: `MockContext`, an in-memory context for tests (turns on `runtime`).
//! - `schema`: `schemars::JsonSchema` for the types a host shows as structured data.
//!
//! ```
//! use std::time::Duration;
//! use zidane_context::{TaskExitInfo, TaskId, TaskStatus, Signal};
//!
//! let exit = TaskExitInfo::new(
//!     TaskId::parse("bash_1")?,
//!     "npm run dev",
//!     "/tmp/tasks/bash_1.20260523-024147-123.log",
//!     TaskStatus::Killed,
//!     Signal::TERM.exit_code(),
//!     Duration::from_millis(1200),
//! )
//! .signal(Signal::TERM);
//! assert_eq!(exit.exit_code, 143);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
// The data types' docs name the trait methods that take or return them; without the
// `runtime` feature the trait is not built and those links have no target.
#![cfg_attr(not(feature = "runtime"), allow(rustdoc::broken_intra_doc_links))]

pub use capabilities::{Capabilities, DetachedTasks};
pub use command::CommandSpec;
#[cfg(feature = "runtime")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
pub use context::ExecutionContext;
pub use env_policy::{
    CORE_ENV_VARS, ChildEnv, DEFAULT_ENV_EXCLUDES, EnvInherit, EnvPattern, EnvPolicy,
    EnvPolicyError, MCP_TOKEN_ENV, WithheldReason, WithheldVar, ZIDANE_SECRET_ENV_VARS,
    is_zidane_secret, parse_env_assignment,
};
pub use error::{COMMAND_EXCERPT_CHARS, ContextError, Result, command_excerpt};
pub use exec::{
    DEFAULT_EXEC_OUTPUT_BYTES, DEFAULT_READ_LIMIT, ExecOptions, ExecOutput, ReadRange, ReadResult,
    validate_command,
};
#[cfg(feature = "runtime")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
pub use exit_watch::wait_for_exit;
pub use handle::ExecutionHandle;
pub use interactive::{Screen, StdinMode, TaskInput, TtySize};
pub use limits::TaskLimits;
#[cfg(feature = "mock")]
#[cfg_attr(docsrs, doc(cfg(feature = "mock")))]
pub use mock::{MockCall, MockContext};
pub use output::OutputChunk;
pub use probe::{Probe, ProbeOutcome};
pub use sandbox::{
    NetworkAccess, SandboxMode, SandboxPolicy, SandboxReport, SandboxScope, SandboxSettingError,
    SandboxStatus,
};
pub use signal::{Signal, SignalParseError};
pub use sync::lock;
pub use task::{
    BackgroundOptions, BackgroundStarted, ExitCallback, KillReason, LOST_EXIT_CODE,
    LogWriteFailure, MAX_LABEL_LEN, Naming, StallCallback, StallInfo, TaskEntry, TaskExitInfo,
    TaskState, TaskStatus, is_label,
};
pub use task_id::{
    DETACHED_TASK_ID_PREFIX, DETACHED_TASK_NUMBERS, HELD_TASK_NUMBERS, TASK_ID_PREFIX, TaskId,
};
/// Re-exported so implementors and callers name one `CancellationToken`.
#[cfg(feature = "runtime")]
#[cfg_attr(docsrs, doc(cfg(feature = "runtime")))]
pub use tokio_util::sync::CancellationToken;
pub use told_ledger::{Claimant, TellOffer, ToldLedger};

pub mod duration_ms;

mod capabilities;
mod command;
#[cfg(feature = "runtime")]
mod context;
/// Which of the host's environment variables a task gets.
mod env_policy;
mod error;
mod exec;
#[cfg(feature = "runtime")]
mod exit_watch;
mod handle;
mod interactive;
mod limits;
#[cfg(feature = "mock")]
mod mock;
mod output;
mod probe;
mod sandbox;
mod signal;
mod sync;
mod task;
mod task_id;
mod told_ledger;

#[cfg(test)]
mod serde_tests;
