//! Integration tests of zidane-mcp, driven by rmcp's own client over an in-memory pipe,
//! with real processes. One file per behaviour, all compiled as one binary.
// Its commands are POSIX shell, its checks read Unix process state.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, deprecated)]

mod support;

mod bad_input;
mod codex_sandbox;
mod held_polls;
mod input;
mod mcp_tasks;
mod piggyback;
mod pushes;
mod shapes;
mod snapshots;
mod standard_schemas;
mod teardown;
mod tools;
mod waits;
