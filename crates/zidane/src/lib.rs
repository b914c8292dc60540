//! Background shell tasks for LLM agents.
//!
//! A model calls `shell` with `run_in_background: true`, gets `Started bash_1 (pid …).
//! Output: <log>` back at once and ends its turn. The command runs on; its output streams
//! into a log file the model can `read_file` whenever it likes; `shell_kill` stops it and
//! `wait_task` blocks on it when the very next step needs it. When the task ends, the
//! agent is woken and the model's next user turn opens with a `<task-notification>`
//! block — no polling, no sleep loops.
//!
//! This crate is the one dependency a host needs. Each layer of zidane is a module:
//!
//! | module | crate | what it is for |
//! |---|---|---|
//! | [`context`] | `zidane-context` | the [`ExecutionContext`](context::ExecutionContext) trait and every type that crosses it |
//! | `process` | `zidane-process` | `ProcessContext`: tasks on the local machine (feature `process`, on by default) |
//! | [`wire`] | `zidane-wire` | the text the model sees, sessions on disk, replay and banners |
//! | [`llm`] | `zidane-llm` | the model seam: the [`Model`](llm::Model) trait and what crosses it (also in [`agent`]) |
//! | [`tools`] | `zidane-tools` | the model-facing tools: `shell`, `shell_kill`, `wait_task`, `read_file`, `shell_input`, `shell_screen`, `shell_notify` |
//! | [`agent`] | `zidane-agent` | the run loop, delivery (queue, reconcile, latch), the wake loop, destroy |
//! | `mcp` | `zidane-mcp` | the MCP server: these tasks for any MCP host (feature `mcp`) |
//! | `models` | `zidane-models` | model providers: OpenAI-compatible chat completions, Anthropic Messages, `from_env()` (features `openai`, `anthropic`) |
//!
//! The [`prelude`] names what a host usually touches, and `local_agent` assembles the
//! common case — an agent on this machine whose session (turns and task logs) lives under
//! a user data dir, with the default tools and background mode on.
//!
//! ```
//! # #[cfg(feature = "process")]
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! use std::sync::Arc;
//! use zidane::prelude::*;
//!
//! let model = ScriptedModel::new() // stands in for your LLM client: any `impl Model`
//!     .tool_call("shell", serde_json::json!({ "command": "echo built", "run_in_background": true }))
//!     .text("Building in the background; I will be told when it ends.")
//!     .react(|request| ModelResponse::text(request.notifications()[0].summary.clone()));
//! # let user_dir = tempfile::tempdir()?; let user_dir = user_dir.path();
//! let agent = zidane::local_agent(Arc::new(model), user_dir)
//!     .session_id("s1") // loaded if stored, else new
//!     .build()?;
//! let wake = WakeLoop::spawn(agent.clone()); // drain-only runs when a task ends while idle
//!
//! let outcome = wake.prompt("build it in the background").await?;
//! assert_eq!(outcome.text, "Building in the background; I will be told when it ends.");
//! // The task ended: the loop ran the model again, with no prompt.
//! let woken = wake.next_wake().await?;
//! assert!(woken.notification_blocks()[0].starts_with("<task-notification>"));
//! assert!(woken.text.starts_with("echo built (")); // "echo built (5ms) — exited 0"
//! agent.destroy().await?; // kills whatever is still running
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A model of your own implements [`agent::Model`] with `#[async_trait]`, which the
//! prelude re-exports; `tracing` spans and events tell what happens
//! (`RUST_LOG=zidane=debug`); `wire::Painter` paints transcripts for a terminal.
//!
//! Features: `process` (default) — the local context and `local_agent`; `openai`,
//! `anthropic` — real model providers in `zidane::models` (`zidane::models::from_env()`
//! picks one from the environment); `mcp` — the MCP server (`zidane mcp`
//! is its command); `detach` — tasks that outlive their host, run by the per-user
//! supervisor (`zidane::supervisor`); `restate` — durable tasks on a fleet of
//! `zidane-worker`s behind Restate (`zidane::restate`); `mock` — `MockContext` for tests of your own
//! layers; `testing` — `insta` filters for snapshot tests of transcripts, and the
//! scripted provider server when a provider is on. `docs/BACKGROUND_TASKS.md` in the
//! repository describes the whole mechanism.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use zidane_agent as agent;
pub use zidane_context as context;
pub use zidane_llm as llm;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use zidane_mcp as mcp;
#[cfg(any(feature = "openai", feature = "anthropic"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "openai", feature = "anthropic"))))]
pub use zidane_models as models;
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use zidane_process as process;
#[cfg(feature = "restate")]
#[cfg_attr(docsrs, doc(cfg(feature = "restate")))]
pub use zidane_restate as restate;
#[cfg(feature = "detach")]
#[cfg_attr(docsrs, doc(cfg(feature = "detach")))]
pub use zidane_supervisor as supervisor;
pub use zidane_tools as tools;
pub use zidane_wire as wire;

#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use local::{LocalAgentBuilder, local_agent};

pub mod prelude;

#[cfg(feature = "process")]
mod local;

/// The repository README's code sample, run as a doc test so that it cannot drift from
/// the API.
#[cfg(all(doctest, feature = "process", unix))]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
