//! Integration tests of zidane-agent, one file per behaviour under `tests/agent/`, all
//! compiled as one binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

mod approver;
mod delivery_model;
mod deltas;
mod destroy;
#[cfg(unix)]
mod destroy_bound;
mod detached;
mod event_hold;
#[cfg(unix)]
mod foreground_move;
#[cfg(unix)]
mod full_disk;
mod host;
mod notify;
mod picker;
#[cfg(unix)]
mod process;
mod prompt;
mod pull;
mod read_ack_reload;
mod read_race;
mod reconcile;
mod run_loop;
mod session;
#[cfg(unix)]
mod session_safety;
mod spawn;
// Its tests read `/proc`.
#[cfg(target_os = "linux")]
mod spawn_process;
mod suppress;
#[cfg(unix)]
mod task_events;
mod wake;
