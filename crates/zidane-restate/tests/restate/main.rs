//! zidane-restate against a real Restate server and real worker processes, one file per
//! behaviour, all compiled as one binary.
//!
//! Every test starts its own `restate-server` on free loopback ports (found as
//! `cargo xtask ci` installs it, see `support::cluster`) and its own `zidane-worker`
//! processes, and removes all of it when done.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support.rs"]
mod support;

#[path = "binary.rs"]
mod binary;
#[path = "budgets.rs"]
mod budgets;
#[path = "destroy.rs"]
mod destroy;
mod env_policy;
#[path = "exec.rs"]
mod exec;
#[path = "foreground_move.rs"]
mod foreground_move;
#[path = "host_crash.rs"]
mod host_crash;
#[path = "identity.rs"]
mod identity;
#[path = "idle_wake.rs"]
mod idle_wake;
#[path = "kill.rs"]
mod kill;
#[path = "notify.rs"]
mod notify;
#[path = "placement.rs"]
mod placement;
#[path = "readiness.rs"]
mod readiness;
#[cfg(target_os = "linux")]
#[path = "sandbox.rs"]
mod sandbox;
#[path = "two_workers.rs"]
mod two_workers;
#[path = "wait.rs"]
mod wait;
#[path = "worker_crash.rs"]
mod worker_crash;
#[path = "worker_stop.rs"]
mod worker_stop;
