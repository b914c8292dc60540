//! Durable background tasks for zidane on [Restate](https://restate.dev): tasks run on
//! worker machines and outlive the host whose agent started them.
//!
//! Two halves:
//! - **Worker** ([`Worker`], [`serve`], the `zidane-worker` binary): a Restate virtual
//!   object, one per worker (`ZidaneWorker_<id>`), keyed by execution handle — one
//!   writer per session's task table. It runs tasks with `zidane-process`'s
//!   `ProcessContext` on its machine, journals each start, records each exit in the
//!   object's durable state, resolves the awakeables of waiters, and serves log windows
//!   from its disk.
//! - **Context** ([`RestateContext`]): an `ExecutionContext` with
//!   [`DetachedTasks::Durable`](zidane_context::DetachedTasks), talking to Restate's
//!   ingress over HTTP. Exits are not pushed: hosts sweep `list_background` at
//!   [`sweep_interval`](zidane_context::Capabilities::sweep_interval).
//!
//! A worker that dies takes its tasks with it; the worker that takes over its id reports
//! each of them [`TaskStatus::Lost`](zidane_context::TaskStatus::Lost). `docs/DURABLE.md`
//! in the repository has the whole picture. The `testing` feature adds
//! `zidane_restate::testing`: a throwaway Restate server for tests and benchmarks.
//!
//! ```no_run
//! use std::time::Duration;
//! use zidane_context::{BackgroundOptions, ExecutionContext};
//! use zidane_restate::RestateContext;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // Workers w1 and w2 run `zidane-worker` and registered with this Restate server.
//! let context = RestateContext::new("http://127.0.0.1:8080", ["w1", "w2"])?;
//! let handle = context.create_handle().await?; // keep it with the session
//! let started = context
//!     .exec_background(handle, "cargo build", BackgroundOptions::new("/unused"))
//!     .await?;
//! let exit = context
//!     .wait_background(handle, started.task_id, Duration::from_secs(60), Default::default())
//!     .await?;
//! println!("{exit:?}");
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use context::{DEFAULT_CALL_TIMEOUT, DEFAULT_SWEEP_INTERVAL, RestateContext, SESSION_LEASE};
pub use discover::registered_workers;
pub use error::RestateError;
pub use health::serve_health;
pub use identity::IdentityKeys;
pub use ids::random_token;
pub use serve::{register, serve};
pub use worker::{DEFAULT_WORKER_MAX_TASKS, Worker, WorkerOptions};

mod context;
mod discover;
mod error;
mod exit_report;
mod health;
mod identity;
mod ids;
mod ingress;
mod object;
mod placement;
mod protocol;
mod serve;
mod table;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
mod worker;
