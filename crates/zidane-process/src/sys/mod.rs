//! Every call into the C library, the kernel or the Windows API that Rust cannot
//! check: this is the crate's only `unsafe` code, one module per platform; each block
//! says why it is sound.
//!
//! - `unix`: `waitpid` and `waitid`, a terminal's session and window size; on Linux
//!   (`vfork_child`) the `vfork`-style `clone` and what its child does before `exec`;
//!   on macOS (`darwin`) the process table through `libproc` and `sysctl`.
//! - `windows`: job objects, a suspended start, console control events and the
//!   process table, through `windows-sys`.
#![allow(unsafe_code)]

#[cfg(target_os = "macos")]
pub(crate) mod darwin;
#[cfg(unix)]
mod unix;
#[cfg(target_os = "linux")]
pub(crate) mod vfork_child;
#[cfg(windows)]
pub(crate) mod windows;
// Beside the module, not inside it: the Windows benches include `windows.rs` itself.
#[cfg(test)]
#[cfg(windows)]
mod windows_tests;

#[cfg(unix)]
pub(crate) use unix::*;
