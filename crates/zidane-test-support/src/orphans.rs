//! What the tests that make orphans share: the lock that keeps their sweeps apart,
//! tokens that mark their processes, and a helper test that crashes a host.

use std::fs::File;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::procfs::{kill_pid, processes_with_env};

/// The name, in the temp dir, of the file [`sweep_lock`] locks. Tests in different
/// binaries (and crates) coordinate through it, so it never changes between them.
pub const SWEEP_LOCK_FILE: &str = "zidane-process-orphan-sweep-tests.lock";

/// An exclusive lock on [`SWEEP_LOCK_FILE`], released when dropped.
#[must_use = "the lock is released when dropped"]
#[derive(Debug)]
pub struct SweepLock {
    _file: File,
}

/// Sweeps end every dead host's processes, whoever's they are: the tests that make
/// orphans, and those that start something that sweeps (maybe in another process,
/// under nextest), take this lock so that one's sweep does not end or report what
/// another is looking at. Blocks until the lock is free.
pub fn sweep_lock() -> SweepLock {
    let path = std::env::temp_dir().join(SWEEP_LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|error| panic!("cannot open {}: {error}", path.display()));
    file.lock()
        .unwrap_or_else(|error| panic!("cannot lock {}: {error}", path.display()));
    SweepLock { _file: file }
}

/// A token no other test or run uses, starting with `what`.
pub fn unique_token(what: &str) -> String {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
    format!("{what}-{}-{nanos}-{serial}", std::process::id())
}

/// Kills whatever still carries `var=token` when dropped, so a failed test leaves
/// nothing behind, and waits (bounded by [`CLEANUP_WAIT`]) until none does: a process
/// SIGKILLed a moment ago can still show its environment.
#[derive(Debug)]
pub struct TokenCleanup {
    var: &'static str,
    token: String,
}

impl TokenCleanup {
    /// A guard for the processes whose environment holds `var=token`.
    pub fn new(var: &'static str, token: String) -> Self {
        Self { var, token }
    }

    /// The token it cleans up after.
    pub fn token(&self) -> &str {
        &self.token
    }
}

/// Longest a [`TokenCleanup`] waits for what it killed to be gone.
pub const CLEANUP_WAIT: Duration = Duration::from_secs(10);

impl Drop for TokenCleanup {
    fn drop(&mut self) {
        let deadline = Instant::now() + CLEANUP_WAIT;
        loop {
            let carriers = processes_with_env(self.var, &self.token);
            // Past the bound it gives up quietly: a panic in `drop` while a failed test
            // unwinds would abort the whole binary.
            if carriers.is_empty() || Instant::now() >= deadline {
                return;
            }
            for pid in carriers {
                kill_pid(pid);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Ends this process with SIGKILL, so nothing of it runs `Drop` or `destroy`.
fn sigkill_self() -> ! {
    let me = i32::try_from(std::process::id()).unwrap_or_else(|_| panic!("pid out of range"));
    let sent = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(me),
        nix::sys::signal::Signal::SIGKILL,
    );
    panic!("could not SIGKILL this process: {sent:?}");
}

/// A host that crashes: an ignored test of the calling test binary, which re-executes
/// itself to run only that test. The test is inert unless its variable is set, and it
/// works the same under `cargo test` and `cargo nextest run`, which both run the
/// binary with libtest's arguments.
#[derive(Debug, Clone, Copy)]
pub struct CrashingHost {
    test: &'static str,
    var: &'static str,
}

impl CrashingHost {
    /// The helper `test` (its name as libtest knows it inside the binary, such as
    /// `orphan_sweep::crashing_host_helper`), told what to do through variable `var`.
    pub const fn new(test: &'static str, var: &'static str) -> Self {
        Self { test, var }
    }

    /// The body of the helper test: when this binary was re-run as the helper, runs
    /// `start` with what it was given, then SIGKILLs this process; when it runs as an
    /// ordinary (ignored) test, returns at once. `start` returns what it made (its
    /// context or agent, its temp dir): that is never dropped, so nothing of it runs
    /// `Drop` or `destroy`, as in a host that crashes.
    pub async fn crash_after<T>(&self, start: impl AsyncFnOnce(String) -> T) {
        let Ok(input) = std::env::var(self.var) else {
            return;
        };
        let _made = start(input).await;
        sigkill_self();
    }

    /// This binary, set to run only the helper with `input`; no stdio.
    pub fn command(&self, input: &str) -> Command {
        let exe = std::env::current_exe()
            .unwrap_or_else(|error| panic!("cannot find this test binary: {error}"));
        let mut command = Command::new(exe);
        command
            .args(["--exact", self.test, "--ignored", "--nocapture"])
            .args(["--test-threads", "1"])
            .env(self.var, input)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// Runs the helper with `input` to its death (it reaps it), checking that it died
    /// by SIGKILL: what it started is now orphaned.
    pub fn crash(&self, input: &str) {
        let status = self
            .command(input)
            .status()
            .unwrap_or_else(|error| panic!("cannot run {}: {error}", self.test));
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "the helper did not SIGKILL itself: {status}"
        );
    }
}
