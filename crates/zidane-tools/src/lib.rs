//! The model-facing tools of zidane: `shell` (foreground, or a background task),
//! `shell_kill`, `wait_task`, `read_file`, `shell_input`, `shell_screen` and
//! `shell_notify`, over any
//! [`ExecutionContext`](zidane_context::ExecutionContext).
//!
//! A [`Tool`] presents a [`ToolSpec`] (name, description, input schema derived from its
//! argument type, aliases) and answers a call with a [`ToolOutput`]: text for the model, an
//! error flag, and structured data for hosts. Bad input is an error result that says
//! what to fix — a call never panics, and nothing runs on bad input. A [`ToolRegistry`]
//! dispatches by name or alias.
//!
//! Whether the model is offered `run_in_background` is decided once, by a
//! [`BackgroundGate`]: the builtin shell drops the flag and its paragraphs from its spec
//! when background mode could not work, and refuses a forged flag at run time.
//!
//! A foreground `shell` call can move to the background: with a budget in
//! [`BackgroundSettings::foreground_budget`], a command still running when it passes (or
//! when the host fires [`ToolContext::move_trigger`]) becomes a background task —
//! the same process, its log whole — and the call returns its id; one that ends in time
//! answers as a foreground call, its exit in the data so the agent never tells it again.
//!
//! Most users want the `zidane` facade, whose agent builds the [`ToolContext`] of each
//! call.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use serde_json::json;
//! use zidane_context::{ExecutionContext, MockContext};
//! use zidane_tools::{ToolContext, ToolRegistry};
//!
//! let mock = Arc::new(MockContext::new());
//! let handle = mock.create_handle().await?;
//! let context = ToolContext::new(mock.clone(), handle).with_tasks_dir("/tasks");
//! let registry = ToolRegistry::with_default_tools()?;
//!
//! let output = registry
//!     .dispatch(&context, "shell", json!({ "command": "cargo build", "run_in_background": true }))
//!     .await;
//! assert!(output.text.starts_with("Started bash_1 (pid 10001). Output: /tasks/bash_1.mock.log"));
//! assert_eq!(output.data["task_id"], "bash_1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use approval::{Approval, ApprovalRequest, Approver};
pub use context::{
    BackgroundPolicy, BackgroundSettings, BackgroundSinks, StartCallback, ToolContext,
};
pub use data::{
    ReadFileData, ReadyMatch, ShellData, ShellInputData, ShellKillData, ShellNotifyData,
    WaitTaskData,
};
pub use error::ToolError;
pub use exit_channel::ExitChannel;
pub use gate::{BackgroundGate, GateReason};
pub use input::{
    ReadFileArgs, ShellArgs, ShellInputArgs, ShellKillArgs, ShellNotifyArgs, ShellScreenArgs,
    StdinChoice, WaitTaskArgs, input_schema, parse_input,
};
pub use output_schema::output_schema;
pub use read_file::READ_FILE;
pub use readiness::{FIRST_PROBE_GAP, LAST_PROBE_GAP};
pub use registry::ToolRegistry;
pub use shell::{SHELL, ShellToolOptions, create_shell_tool};
pub use shell_input::{INPUT_ANSWER_BYTES, INPUT_SETTLE_MAX, INPUT_SETTLE_QUIET, SHELL_INPUT};
pub use shell_kill::SHELL_KILL;
pub use shell_notify::SHELL_NOTIFY;
pub use shell_screen::SHELL_SCREEN;
pub use task_events::{
    FollowFrom, MAX_EVENT_LINE_CHARS, MAX_NOTIFY_PATTERN_BYTES, MAX_NOTIFY_PATTERNS,
    NotifyPatterns, PatternsChanged, TaskEvent, TaskEventSink, TaskEvents,
};
pub use terminal_text::strip_terminal_controls;
pub use tool::{SpecView, Tool, ToolAnnotations, ToolOutput, ToolSpec};
pub use wait_task::{
    DEFAULT_WAIT_TIMEOUT, MAX_WAIT_TIMEOUT, WAIT_NOT_ENDED_PREFIX, WAIT_TASK, WaitLimits,
    wait_task_description,
};

mod approval;
mod context;
mod data;
mod error;
mod exit_channel;
mod extra_arguments;
mod follow_gate;
mod foreground_move;
mod gate;
mod input;
mod input_error;
mod keys;
mod line_scan;
mod log_lines;
mod near_miss;
mod output_schema;
mod read_file;
mod readiness;
mod registry;
mod schema_generator;
mod shell;
mod shell_input;
mod shell_kill;
mod shell_notify;
mod shell_sandbox;
mod shell_screen;
mod spec_cache;
mod task_events;
mod terminal_text;
mod tool;
mod wait_task;

use std::sync::Arc;

/// The builtin tools, in the order the model sees them: `shell` (its spec follows the
/// session's [`BackgroundGate`]), `shell_kill`, `wait_task`, `read_file`, then
/// `shell_input` and `shell_screen`, which the model is offered only when the gate
/// says tasks can take input and have a terminal, and `shell_notify`, offered only when
/// it says task logs can be followed ([`Tool::offered`]).
pub fn default_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        create_shell_tool(ShellToolOptions::default()),
        Arc::new(shell_kill::ShellKillTool),
        Arc::new(wait_task::WaitTaskTool),
        Arc::new(read_file::ReadFileTool),
        Arc::new(shell_input::ShellInputTool),
        Arc::new(shell_screen::ShellScreenTool),
        Arc::new(shell_notify::ShellNotifyTool),
    ]
}
