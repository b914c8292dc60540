//! Helpers the tests and bench drivers of the zidane crates share, so that each lives
//! once: (on Unix) `/proc` probes, a tmpfs for a real full disk, the orphan-sweep lock and the
//! plumbing of a helper test that crashes a host, a bounded async wait, the `--help` and
//! `--version` check of a binary, the Python MCP SDK's venv, a scripted model server for real MCP hosts, the
//! output line and percentile summary of the bench drivers, and (feature `json-schema`) the
//! strict check that a published schema is standard JSON Schema 2020-12.
//!
//! Dev-only (`publish = false`): crates name it under `[dev-dependencies]`. It depends
//! on no zidane crate, so every zidane crate can use it without a cycle; what needs a
//! zidane type (a marker variable's name, a context) is passed in by the caller.
//!
//! ```
//! # #[cfg(unix)] {
//! use zidane_test_support::{TokenCleanup, alive, processes_with_env, unique_token};
//!
//! // A process marked with a token no other test uses, found again through `/proc`.
//! let token = unique_token("doc");
//! let cleanup = TokenCleanup::new("ZIDANE_DOC_TOKEN", token.clone());
//! let mut child = std::process::Command::new("sleep")
//!     .arg("1000")
//!     .env("ZIDANE_DOC_TOKEN", &token)
//!     .spawn()?;
//! let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
//! while !processes_with_env("ZIDANE_DOC_TOKEN", &token).contains(&child.id()) {
//!     assert!(std::time::Instant::now() < deadline, "sleep did not start");
//!     std::thread::sleep(std::time::Duration::from_millis(5));
//! }
//! assert!(alive(child.id()));
//! drop(cleanup); // SIGKILLs every process still carrying the token
//! child.wait()?;
//! assert_eq!(processes_with_env("ZIDANE_DOC_TOKEN", &token), Vec::<u32>::new());
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::bench::{percentiles, print_driver_line, round1};
pub use crate::binary::assert_answers_help_and_version;
pub use crate::env_lines::env_of;
pub use crate::file_age::age_files;
pub use crate::first_line::first_line;
#[cfg(feature = "json-schema")]
pub use crate::json_schema::{STANDARD_FORMATS, assert_standard_schema, standard_schema_problems};
pub use crate::model_server::{
    Exchange, GATE_WAIT, Gate, OFF_SCRIPT_TEXT, ScriptedModel, Step, ToolCall, Turn, tool_results,
};
// Processes by pid, signals and `/proc`: the Unix process tests' helpers.
#[cfg(unix)]
pub use crate::orphans::{
    CLEANUP_WAIT, CrashingHost, SWEEP_LOCK_FILE, SweepLock, TokenCleanup, sweep_lock, unique_token,
};
pub use crate::poll::poll_until;
#[cfg(unix)]
pub use crate::procfs::{
    alive, kill_pid, live_processes_in_group, live_processes_with_env_prefix, processes_with_env,
};
pub use crate::python_sdk::{MCP_VENV_ENV, mcp_sdk_python};
#[cfg(unix)]
pub use crate::tmpfs::Tmpfs;

mod bench;
mod binary;
mod env_lines;
mod file_age;
mod first_line;
#[cfg(feature = "json-schema")]
mod json_schema;
mod model_server;
#[cfg(unix)]
mod orphans;
mod poll;
#[cfg(unix)]
mod procfs;
mod python_sdk;
#[cfg(unix)]
mod tmpfs;
