//! Integration tests of `zidane-tools`, compiled as one binary: every behaviour, one
//! file each.

// Helpers outside `#[test]` functions unwrap too: a panic there is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_input;
mod budgets;
mod common;
mod detach;
mod doc_lists;
mod follow_gate;
mod foreground_move;
mod forged;
mod gate;
mod labels;
mod process;
mod read_file;
mod readiness;
mod registry;
mod sandbox;
mod schemas;
mod shell;
mod shell_kill;
mod task_events;
mod wait_task;
