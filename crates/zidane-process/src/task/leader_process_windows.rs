//! A leader on Windows: std's child, whose handle tells its exit. Windows keeps no
//! zombies, so a leader nobody waits for any more is simply let go.

use std::io;
use std::process::{Child, ExitStatus};

/// The leader, as std started it.
#[derive(Debug)]
pub(crate) struct LeaderProcess(Child);

impl LeaderProcess {
    /// The leader `child`.
    pub(crate) fn new(child: Child) -> Self {
        Self(child)
    }

    /// Its exit if it has exited, without blocking.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.0.try_wait()
    }

    /// Blocks until it exits.
    pub(crate) fn wait(mut self) -> io::Result<ExitStatus> {
        self.0.wait()
    }
}
