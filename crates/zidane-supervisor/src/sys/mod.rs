//! What the supervisor asks of the OS, one module per platform: private files, leaving
//! the host's session, the socket and its peers, ending a monitor.

#[cfg(unix)]
#[path = "unix.rs"]
mod imp;
#[cfg(windows)]
#[path = "windows.rs"]
mod imp;

pub(crate) use imp::*;
