//! A leader on Unix: our child by pid, reaped with `waitpid`, and never left a zombie.

use std::io;
use std::process::ExitStatus;

use nix::unistd::Pid;

use crate::sys::{self, reap};

/// Our child `pid`, not reaped yet.
#[derive(Debug)]
pub(crate) struct LeaderProcess {
    pid: Pid,
    /// Its status was read (or can never be): nothing is left to reap.
    reaped: bool,
}

impl LeaderProcess {
    /// Our child `pid`, which only its `LeaderProcess` reaps.
    pub(crate) fn new(pid: Pid) -> Self {
        Self { pid, reaped: false }
    }

    /// Reaps it if it has exited, without blocking.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let reaped = reap(self.pid, false);
        self.reaped = !matches!(reaped, Ok(None));
        reaped
    }

    /// Blocks until it exits and reaps it.
    pub(crate) fn wait(mut self) -> io::Result<ExitStatus> {
        self.reaped = true;
        reap(self.pid, true)?.ok_or_else(|| io::Error::other("a blocking wait came back early"))
    }
}

impl Drop for LeaderProcess {
    /// A leader nobody waits for any more (a settled kill that gave up on it, a dropped
    /// `exec`) is still reaped whenever it dies, so it never stays a zombie.
    fn drop(&mut self) {
        if self.reaped || matches!(reap(self.pid, false), Ok(Some(_)) | Err(_)) {
            return;
        }
        let pid = self.pid;
        let wait = move || {
            let _ = reap(pid, true);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(wait)),
            Err(_) => drop(std::thread::spawn(wait)),
        }
    }
}

/// Whether our child `pid` has not exited yet, asked without reaping it; see
/// [`sys::has_not_exited`].
pub(crate) fn has_not_exited(pid: u32) -> bool {
    i32::try_from(pid).is_ok_and(|raw| sys::has_not_exited(Pid::from_raw(raw)))
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn has_not_exited_peeks_without_reaping() {
        let mut child = crate::test_children::sleep_1000(&[]);
        let pid = child.id();
        assert!(has_not_exited(pid));
        child.kill().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while has_not_exited(pid) {
            assert!(Instant::now() < deadline, "the child never became a zombie");
            std::thread::sleep(Duration::from_millis(1));
        }
        // The peek left the zombie for its owner: the status is still there to read.
        assert!(child.wait().unwrap().signal().is_some());
        assert!(!has_not_exited(pid), "a reaped child has exited");
    }
}
