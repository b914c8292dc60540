//! The Windows floor of `bench-protocol.md` (in the shared tree): the least a program
//! does to run the protocol's commands in the background on Windows with
//! `std::process::Command` alone — `CreateProcess` of `cmd.exe` (`%ComSpec%`) with one
//! anonymous pipe for stdout and stderr, copied into the log file — beside which
//! `windows_driver.rs` measures zidane. Both run the same command lines
//! (`windows/common.rs`).
//!
//! ```text
//! cargo bench -p zidane-process --bench windows_floor --target x86_64-pc-windows-gnu --no-run
//! windows_floor-<hash>.exe <op> <arg>
//! ```
//!
//! Per op:
//! - `spawn N`: the timed start is creating the log, the pipe, `Command::spawn` and the
//!   thread that copies the pipe into the log (a background task's output must flow
//!   while the caller goes on); then every child is waited for and every copy joined.
//! - `roundtrip N`, `throughput BYTES`, `interleave LINES`: the start, the copy on the
//!   calling thread until the pipe's end, the wait.
//! - `kill N`: the tree is started suspended, put in a kill-on-close Job object of its
//!   own and resumed (else `cmd.exe` could start a child before the job holds it); the
//!   timed kill is `TerminateJobObject`, the wait for the shell and the copy's end (the
//!   pipe ends when its last holder, the `start /b` child included, is gone). Survivors
//!   are counted as the driver counts them.
//! - `concurrent N`: N starts as for `spawn`, then every wait and join.
//!
//! The job is `windows-sys`, as zidane's own is, in the small `sys` module the two
//! programs share: a job crate would add a dependency for four calls.
//!
//! Elsewhere than on Windows it only says that it is the Windows floor, and fails.

// A driver's whole interface is one line on stdout; progress goes to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

#[cfg(windows)]
#[path = "windows/common.rs"]
mod common;
#[cfg(windows)]
#[path = "windows_floor/ops.rs"]
mod ops;
#[cfg(windows)]
#[path = "protocol.rs"]
mod protocol;
#[cfg(windows)]
#[path = "windows/sys.rs"]
mod sys;

#[cfg(windows)]
fn main() -> ExitCode {
    common::serve(ops::run)
}

#[cfg(not(windows))]
fn main() -> ExitCode {
    eprintln!(
        "windows_floor: the Windows floor beside zidane's Windows benchmark driver; \
         build it for a Windows target (the harness's C floor is this platform's)"
    );
    ExitCode::FAILURE
}
