//! End-to-end tests of the `zidane` binary: print mode, sessions and replay as
//! processes, the interactive session in a real terminal (tmux) on the demo model and
//! on a scripted provider server, and `zidane mcp` over stdio and streamable HTTP, by raw
//! JSON-RPC, by a foreign client (the Python `mcp` SDK) and inside real MCP hosts
//! (Claude Code, Codex) against a scripted model. One file per behaviour, one
//! test binary. Linux only: they read `/proc`.
#![cfg(target_os = "linux")]
// The tests build with the pinned toolchain: the MSRV is the binary's, not theirs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::incompatible_msrv,
    missing_docs
)]

mod fleet_support;
mod mcp_support;
mod sdk_script;
mod support;

mod attach;
mod binary;
mod clean;
mod detached;
mod doctor;
mod env_policy;
mod errors;
mod fleet;
mod hardening;
mod hosts;
mod http;
mod interactive;
mod mcp_roots;
mod measure;
mod no_provider;
mod orphan_sweep;
mod print_wait;
mod provider;
mod python;
mod sandbox_approval;
mod sandbox_escapes;
mod sandbox_settings;
mod sessions_replay;
mod stdio;
mod top;
