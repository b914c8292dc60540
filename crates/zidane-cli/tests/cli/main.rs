//! End-to-end tests of the `zidane` binary: print mode, sessions and replay as
//! processes, and the interactive session in a real terminal (tmux). One file per
//! behaviour, one test binary. Linux only: they read `/proc`.
#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

mod support;

mod interactive;
mod measure;
mod no_provider;
mod print_wait;
mod sessions_replay;
