//! Windows: no supervisor yet. A named pipe with the user's access list is its
//! listener to come; until then every call says so and `detach` is not offered.

use std::fs::File;
use std::io;
use std::path::Path;

use zidane_process::ProcessStamp;

/// A connection to or from the supervisor (none on Windows yet).
pub(crate) type Stream = tokio::io::DuplexStream;

/// Whether this platform runs a supervisor.
pub(crate) const SUPPORTED: bool = false;

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "detached tasks are not available on Windows yet",
    )
}

/// Creates (or truncates) `path`; the user's profile keeps it private.
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    File::create(path)
}

/// Nothing to leave: a process started detached has no console session to share.
pub(crate) fn leave_host_session() -> io::Result<()> {
    Ok(())
}

/// The listener to come.
pub(crate) struct Listener;

impl Listener {
    /// Not on Windows yet.
    pub(crate) async fn bind(_socket: &Path) -> io::Result<Self> {
        Err(unsupported())
    }

    /// Not on Windows yet.
    pub(crate) async fn accept(&self) -> io::Result<Stream> {
        Err(unsupported())
    }
}

/// Not on Windows yet.
pub(crate) async fn connect(_socket: &Path) -> io::Result<Stream> {
    Err(unsupported())
}

/// Not on Windows yet: nothing is signalled.
pub(crate) fn terminate(_monitor: &ProcessStamp) -> bool {
    false
}

/// No monitor runs on Windows yet: nothing is ever received.
pub(crate) struct TerminateSignal;

impl TerminateSignal {
    /// Listens for nothing.
    pub(crate) fn new() -> io::Result<Self> {
        Ok(Self)
    }

    /// Never.
    pub(crate) async fn recv(&mut self) {
        std::future::pending::<()>().await;
    }
}

/// Not on Windows yet: nothing is signalled.
pub(crate) async fn end_group(_leader: &ProcessStamp, _grace: std::time::Duration) {}
