//! Behaviour of `ProcessContext` with real processes, one file per behaviour.
//!
//! Every test has its own temp dir and context, a short kill grace, and waits on
//! events with a bound — never on a sleep that hopes.
#![cfg(unix)]
// A panic in a test or its helpers is a failed test, not a crashed host.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "process/support.rs"]
mod support;

#[path = "process/bad_input.rs"]
mod bad_input;
#[path = "process/cap.rs"]
mod cap;
#[path = "process/closed_output.rs"]
mod closed_output;
#[path = "process/complete_output.rs"]
mod complete_output;
#[path = "process/concurrency_cap.rs"]
mod concurrency_cap;
#[path = "process/destroy.rs"]
mod destroy;
#[path = "process/escape.rs"]
mod escape;
#[path = "process/exec.rs"]
mod exec;
#[path = "process/exit_once.rs"]
mod exit_once;
#[path = "process/ids.rs"]
mod ids;
#[path = "process/interleave.rs"]
mod interleave;
#[path = "process/kill_group.rs"]
mod kill_group;
#[path = "process/killed_after_leader.rs"]
mod killed_after_leader;
#[path = "process/lifecycle_model.rs"]
mod lifecycle_model;
#[path = "process/list.rs"]
mod list;
#[path = "process/log_write_failure.rs"]
mod log_write_failure;
#[path = "process/orphan_sweep.rs"]
mod orphan_sweep;
#[path = "process/permissions.rs"]
mod permissions;
#[path = "process/read_file.rs"]
mod read_file;
#[path = "process/reassign.rs"]
mod reassign;
#[path = "process/shell.rs"]
mod shell;
#[path = "process/stall.rs"]
mod stall;
#[path = "process/wait_race.rs"]
mod wait_race;
