//! Integration tests of zidane-agent, one file per behaviour under `tests/agent/`, all
//! compiled as one binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "agent/support.rs"]
mod support;

#[path = "agent/delivery_model.rs"]
mod delivery_model;
#[path = "agent/deltas.rs"]
mod deltas;
#[path = "agent/destroy.rs"]
mod destroy;
#[cfg(unix)]
#[path = "agent/destroy_bound.rs"]
mod destroy_bound;
#[cfg(unix)]
#[path = "agent/full_disk.rs"]
mod full_disk;
#[path = "agent/notify.rs"]
mod notify;
#[path = "agent/picker.rs"]
mod picker;
#[cfg(unix)]
#[path = "agent/process.rs"]
mod process;
#[path = "agent/prompt.rs"]
mod prompt;
#[path = "agent/pull.rs"]
mod pull;
#[path = "agent/read_ack_reload.rs"]
mod read_ack_reload;
#[path = "agent/read_race.rs"]
mod read_race;
#[path = "agent/reconcile.rs"]
mod reconcile;
#[path = "agent/run_loop.rs"]
mod run_loop;
#[path = "agent/session.rs"]
mod session;
#[cfg(unix)]
#[path = "agent/session_safety.rs"]
mod session_safety;
#[path = "agent/spawn.rs"]
mod spawn;
#[cfg(unix)]
#[path = "agent/spawn_process.rs"]
mod spawn_process;
#[path = "agent/suppress.rs"]
mod suppress;
#[path = "agent/wake.rs"]
mod wake;
