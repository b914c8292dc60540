//! Background shell tasks on the local machine: [`ProcessContext`], zidane's
//! [`ExecutionContext`](zidane_context::ExecutionContext) for the host it runs on.
//!
//! An agent starts a long command, gets a task id and a log path back at once, and
//! hears about the exit through a callback — no polling. This crate is the only one in
//! zidane that touches processes, signals and file descriptors.
//!
//! - **Start**: `/bin/bash --norc --noprofile -c COMMAND` (or `/bin/sh -c COMMAND` where
//!   there is no bash; see [`Shell`]) in a new process group, stdin on `/dev/null`; on
//!   Windows PowerShell (or `cmd.exe`) in a job object of its own, stdin on `NUL`.
//!   [`exec_background`](zidane_context::ExecutionContext::exec_background) returns
//!   `bash_1`, `bash_2`, … with the log path and pid as soon as the process exists.
//! - **Log**: stdout and stderr share one pipe, so they reach
//!   `<output_dir>/<task-id>.<context-timestamp>.log` in the order they were written.
//!   The log is created new (`O_EXCL`, mode `0600`; a missing directory is created
//!   `0700`) and fed with `splice(2)` (Linux's fast path) or a read/write copy through
//!   one small buffer (the portable path): memory stays flat however much a task prints.
//! - **Settle**: a task ends when its leader exited *and* its output reached
//!   end-of-file. Then the log is closed, `on_exit` fires exactly once, and waiters wake.
//! - **Kill**: `SIGTERM` to the group, `SIGKILL` after the grace period, bounded even if
//!   something outside the group holds the log open; on Windows `CTRL_BREAK` to the
//!   task's console group, then the job's end.
//! - **Limits**: an output cap (later bytes counted and dropped, a marker line at the
//!   end), a stall watchdog (one `on_stall` per quiet period, never a kill), and a cap
//!   on running tasks per context.
//!
//! `docs/PROCESS.md` in the repository describes all of it in detail, with what the
//! benchmark driver (`benches/driver.rs`) measures.
//!
//! ```
//! use std::sync::mpsc;
//! use zidane_context::{BackgroundOptions, ExecutionContext, TaskStatus};
//! use zidane_process::{ProcessContext, parse_task_log_filename};
//!
//! # let runtime = tokio::runtime::Runtime::new()?;
//! # runtime.block_on(async {
//! let tasks = tempfile::tempdir()?;
//! let context = ProcessContext::new();
//! let handle = context.create_handle().await?;
//!
//! let (exits, exited) = mpsc::channel();
//! let options = BackgroundOptions::new(tasks.path())
//!     .on_exit(move |exit| exits.send(exit).unwrap());
//! // bash on Unix; on Windows the same in PowerShell's or cmd.exe's words.
//! # #[cfg(windows)]
//! # let command = if context.shell().is_powershell() {
//! #     "'built'; [Console]::Error.WriteLine('warned')"
//! # } else {
//! #     "echo built& echo warned>&2"
//! # };
//! # #[cfg(unix)]
//! let command = "echo built; echo warned >&2";
//! let started = context.exec_background(handle, command, options).await?;
//! assert_eq!(started.task_id.to_string(), "bash_1");
//!
//! let exit = context
//!     .wait_background(handle, started.task_id, std::time::Duration::from_secs(10), Default::default())
//!     .await?
//!     .expect("the task ends");
//! assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
//! assert_eq!(exited.recv()?, exit);
//! let log = std::fs::read_to_string(&started.output_path)?;
//! assert_eq!(log.lines().collect::<Vec<_>>(), ["built", "warned"]);
//!
//! let name = started.output_path.file_name().unwrap().to_str().unwrap();
//! assert_eq!(parse_task_log_filename(name).unwrap().1, context.context_timestamp());
//! context.destroy(handle).await?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Supported on Linux, macOS and Windows; other Unix systems run the portable path
//! ([`ProcessPath::Portable`]). On Linux the fast path uses `splice`, `close_range`, a
//! `vfork`-style `clone` and `/proc`; the portable path uses std's spawn, a plain
//! read/write copy and `waitpid`; Windows puts each task in a kill-on-close job object
//! and reads its output on a thread (no terminal tasks there). The only `unsafe` code is
//! in `sys`, one module per platform; see `docs/PROCESS.md`.

pub use builder::ProcessContextBuilder;
pub use containment::orphan_list::find_orphans;
pub use containment::owner_marker::OWNER_MARKER_ENV;
pub use containment::swept::{OrphanOwner, SweptProcess};
pub use context::{DEFAULT_MAX_BACKGROUND_TASKS, ProcessContext};
pub use hardening::harden_process;
pub use ownership::{
    ProcessStamp, ProcessTable, RUNTIME_DIR_NAME, TreeUsage, ensure_runtime_dir, runtime_dir,
};
pub use process_path::{EnvValueError, PROCESS_PATH_ENV, ProcessPath};
pub use read::{MAX_LINE_BYTES, READ_BUDGET_BYTES};
#[cfg(target_os = "linux")]
pub use sandbox::bwrap::BWRAP_ENV;
pub use sandbox::plan::{
    CACHES_IN_HOME, DENIED_IN_HOME, HELD_FILES_IN_WORKSPACE, READ_ONLY_IN_WORKSPACE,
    STARTUP_FILES_IN_HOME, SandboxPlan,
};
pub use spawn::shell::{BASH_PATH, SH_PATH, Shell};
pub use task::kill::DEFAULT_KILL_GRACE;
pub use task::timestamp::{format_context_timestamp, parse_task_log_filename};

/// How a context is configured and made.
mod builder;
/// Ending every process of a task: the owner marker, the `/proc` scan, escapees and
/// the orphan sweep.
mod containment;
/// The context's entry point: the `ExecutionContext` implementation that wires the
/// rooms together.
mod context;
mod exec;
/// Reading a file at an offset, without moving a shared cursor.
mod file_at;
mod hardening;
mod log_open;
/// Owning tasks across hosts: process stamps and the user's private runtime directory.
mod ownership;
/// Readiness probes of this machine: a port's connect, a URL's GET.
mod probe;
mod process_path;
mod read;
/// The sandbox commands run in.
mod sandbox;
/// Starting a command: the shell, validation, the spawn and its fallback.
mod spawn;
/// Every call Rust cannot check: the crate's only `unsafe` code.
mod sys;
/// A running task: registry, supervisor, leader, log file, watchdog and kill.
mod task;
#[cfg(test)]
#[cfg(unix)]
mod test_children;
