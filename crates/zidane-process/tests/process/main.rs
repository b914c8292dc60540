//! Behaviour of `ProcessContext` with real processes, one file per behaviour.
//!
//! Every test has its own temp dir and context, a short kill grace, and waits on
//! events with a bound — never on a sleep that hopes.
#![cfg(unix)]
// A panic in a test or its helpers is a failed test, not a crashed host.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod bad_input;
mod cap;
mod closed_output;
mod complete_output;
mod concurrency_cap;
mod destroy;
mod env_policy;
pub mod escape;
mod exec;
mod exit_once;
mod held;
mod ids;
mod input;
mod interleave;
mod kill_group;
mod killed_after_leader;
mod lifecycle_model;
mod lifeline;
mod list;
mod log_write_failure;
mod orphan_sweep;
mod permissions;
mod process_path;
mod read_file;
mod reassign;
mod sandbox;
mod sandbox_macos;
mod shell;
mod stall;
mod terminal;
mod wait_race;
