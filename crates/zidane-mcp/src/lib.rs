//! zidane's background shell tasks as an MCP server, for any MCP host.
//!
//! Each MCP session gets its own host-driven [`Agent`](zidane_agent::Agent) on its own
//! local execution context ([`McpSession`]); [`McpServer`] serves sessions to clients of
//! both protocol eras (2025-11-25 with `initialize`, 2026-07-28 without). The tools are
//! zidane-tools' own — `shell`, `shell_kill`, `wait_task`, `read_file`, `shell_input`,
//! `shell_screen`, `shell_notify`, with their schemas, texts and errors — plus [`list_tasks`](LIST_TASKS), and every call goes
//! through [`Agent::call_tool`](zidane_agent::Agent::call_tool), the run loop's own
//! dispatch.
//!
//! A task's exit reaches the model exactly once, by the best channel the client has:
//!
//! 1. **The host wakes the model**: a client that declares the
//!    `io.modelcontextprotocol/tasks` extension gets a background `shell` answered as an
//!    MCP task whose result, when the background task ends, is its `<task-notification>`
//!    ([`Agent::claim_exit`](zidane_agent::Agent::claim_exit) keeps the one latch), and
//!    `wait_task` as an MCP task too.
//! 2. **Piggyback**: the next tool result, whatever the tool, begins with the
//!    `<task-notification>` blocks of the tasks that ended since
//!    ([`Agent::drain_notifications`](zidane_agent::Agent::drain_notifications)), in its
//!    text and its structured content; an error result carries them only for a client
//!    known to show an error once (not qwen-code), else they wait for the next successful
//!    result.
//! 3. **Pushes**: log messages (only once asked for), resource updates; informational,
//!    they latch nothing.
//!
//! When the session ends (stdin closed, an HTTP session deleted, SIGTERM or SIGINT) its
//! agent is destroyed: every task's process group is killed. A server that dies without
//! a word (`SIGKILL`) has its tasks ended by its contexts' lifelines (Linux), and, as
//! the backstop, by the orphan sweep the next server runs as it starts
//! ([`ServeOptions::sweep_orphans`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), zidane_mcp::McpServeError> {
//! use zidane_mcp::{ServeOptions, serve_stdio, shutdown_signal};
//! serve_stdio(ServeOptions::new("/home/me/.local/share/zidane"), shutdown_signal()).await?;
//! # Ok(()) }
//! ```
//!
//! The `zidane mcp` command (crate `zidane-cli`) is this, with flags.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use approval::{APPROVAL_TIMEOUT_ENV, MCP_APPROVAL_TIMEOUT};
pub use budget::{MCP_DEFAULT_RESULT_BUDGET, MCP_MIN_RESULT_BUDGET};
pub use error::McpServeError;
pub use http::{HttpServer, MCP_PATH, serve_http};
pub use list_tasks::LIST_TASKS;
pub use options::{
    MCP_DEFAULT_DESTROY_TIMEOUT, MCP_DEFAULT_KILL_GRACE, MCP_DEFAULT_SESSION_IDLE, McpHttpOptions,
    MoveAfter, RemoteContext, RemoteContexts, RemoteSession, ServeOptions, TOKEN_ENV,
};
pub use origin::{AllowedOrigin, Origin, OriginParseError};
pub use oversized::MAX_REQUEST_BYTES;
pub use server::McpServer;
pub use session::McpSession;
pub use shutdown::shutdown_signal;
pub use stdio::{serve_io, serve_stdio};
pub use token::{TokenFile, generate_token};
pub use waits::MCP_UNKNOWN_CLIENT_WAIT_CAP;

mod approval;
mod budget;
mod clients;
mod codex_sandbox;
mod error;
mod http;
mod joins;
mod list_tasks;
mod mcp_tasks;
mod options;
mod origin;
mod oversized;
mod push;
mod resources;
mod result;
mod roots;
mod schema;
mod server;
mod session;
mod shutdown;
mod startup_sweep;
mod stdio;
mod token;
mod waits;
