//! Benchmark driver of `bench-protocol.md` (in the shared tree) over [`ProcessContext`]
//! on Windows, used exactly as a host would: a tokio runtime, a handle,
//! `exec_background` with an `on_exit` callback, `kill_background` — each task in a job
//! object of its own, with `cmd.exe` (`%ComSpec%`) as its shell.
//!
//! ```text
//! cargo bench -p zidane-process --bench windows_driver --target x86_64-pc-windows-gnu --no-run
//! windows_driver-<hash>.exe <op> <arg>
//! ```
//!
//! Ops: `spawn N`, `roundtrip N`, `throughput BYTES`, `interleave LINES`, `kill N`,
//! `concurrent N`, and the hidden `produce BYTES`. The protocol's commands in `cmd.exe`'s
//! words (`windows/common.rs`, shared with `windows_floor.rs`, which runs the same ones
//! on a plain `std::process::Command`):
//!
//! - `true` is `exit /b 0`, `sleep 1` is `ping -n 2 127.0.0.1 >nul`;
//! - `head -c BYTES /dev/zero` is this program's own `produce BYTES`;
//! - the interleave loop is a `for /l` loop of `echo`s;
//! - the kill's tree is `start /b ping -n 1000 127.0.0.1 >nul & ping -n 1000 …`; the op
//!   waits until both `ping`s run before its 20 ms, and counts as survivors the tree's
//!   processes (those of its executables new in the process table since its start)
//!   still running 100 ms after the kill, and ends them.
//!
//! `peak_rss_kib` is the peak working set; `fds_before` and `fds_after` count handles.
//! The kill op also says whether the driver had a `console` (with one, a kill asks with
//! `CTRL_BREAK` first; without, it ends the job at once).
//!
//! Elsewhere than on Windows it only says that it is the Windows driver, and fails.

// A driver's whole interface is one line on stdout; progress goes to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

#[cfg(windows)]
#[path = "windows/common.rs"]
mod common;
#[cfg(windows)]
#[path = "driver/host.rs"]
mod host;
#[cfg(windows)]
#[path = "windows_driver/ops.rs"]
mod ops;
#[cfg(windows)]
#[path = "protocol.rs"]
mod protocol;
// The job and resuming a suspended process are the floor's.
#[cfg(windows)]
#[allow(dead_code)]
#[path = "windows/sys.rs"]
mod sys;

/// The shell every task of the driver runs under: `cmd.exe`, as the floor's.
#[cfg(windows)]
fn protocol_shell() -> zidane_process::Shell {
    zidane_process::Shell::new(common::comspec())
}

#[cfg(windows)]
fn main() -> ExitCode {
    common::serve(ops::run)
}

#[cfg(not(windows))]
fn main() -> ExitCode {
    eprintln!(
        "windows_driver: the benchmark driver of zidane's Windows process path; \
         build it for a Windows target (see benches/driver.rs for this platform's)"
    );
    ExitCode::FAILURE
}
