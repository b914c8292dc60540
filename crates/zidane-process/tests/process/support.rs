//! Shared helpers: a fixture per test (its own temp dir and context), exit collectors,
//! bounded waits on observable events, and `/proc` probes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use tempfile::TempDir;
use tokio::sync::watch;
use zidane_context::{
    BackgroundOptions, BackgroundStarted, ExecutionContext, ExecutionHandle, StallInfo,
    TaskExitInfo, TaskId,
};
use zidane_process::{ProcessContext, ProcessContextBuilder};
pub use zidane_test_support::kill_pid;

/// Grace between SIGTERM and SIGKILL in tests: short, so escalation tests are quick.
pub const GRACE: Duration = Duration::from_millis(200);

/// Upper bound on any wait for an event that must happen.
pub const WAIT: Duration = Duration::from_secs(15);

/// Tests that count this process's descriptors take it for writing; every other test
/// holds it for reading through its fixture, so the count is not disturbed by them.
static DESCRIPTORS: RwLock<()> = RwLock::new(());

enum Guard {
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    Exclusive(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
}

/// Held by a test that opens descriptors outside a [`Fixture`] (spawning a process with
/// `std::process::Command`, say), so the descriptor-counting test never sees them.
pub fn descriptors_in_use() -> RwLockReadGuard<'static, ()> {
    DESCRIPTORS.read().unwrap_or_else(PoisonError::into_inner)
}

/// A context with a short grace period, one handle, and a private temp dir.
pub struct Fixture {
    pub context: ProcessContext,
    pub handle: ExecutionHandle,
    pub dir: TempDir,
    _guard: Guard,
}

impl Fixture {
    pub async fn new() -> Self {
        Self::with(ProcessContext::builder()).await
    }

    /// A fixture whose context comes from `builder` (the grace and cwd are set here).
    pub async fn with(builder: ProcessContextBuilder) -> Self {
        let guard = Guard::Shared(DESCRIPTORS.read().unwrap_or_else(PoisonError::into_inner));
        Self::build(builder, guard).await
    }

    /// A fixture that runs alone among the fixtures, for counting descriptors.
    pub async fn exclusive() -> Self {
        let guard = Guard::Exclusive(DESCRIPTORS.write().unwrap_or_else(PoisonError::into_inner));
        Self::build(ProcessContext::builder(), guard).await
    }

    async fn build(builder: ProcessContextBuilder, guard: Guard) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let context = builder.kill_grace(GRACE).cwd(dir.path()).build();
        let handle = context.create_handle().await.unwrap();
        Self {
            context,
            handle,
            dir,
            _guard: guard,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn tasks_dir(&self) -> PathBuf {
        self.path("tasks")
    }

    pub fn options(&self) -> BackgroundOptions {
        BackgroundOptions::new(self.tasks_dir())
    }

    /// Starts `command` on the fixture's handle, its exits going to `exits`.
    pub async fn start(&self, command: &str, exits: &Exits) -> BackgroundStarted {
        self.context
            .exec_background(self.handle, command, exits.attach(self.options()))
            .await
            .unwrap()
    }

    /// Kills a task of the fixture's handle, which must know it; returns its exit.
    pub async fn kill(&self, task_id: TaskId) -> TaskExitInfo {
        self.context
            .kill_background(self.handle, task_id)
            .await
            .unwrap()
            .expect("the task is known to the handle")
    }

    /// Waits (bounded) for a task of the fixture's handle to end; returns its exit.
    pub async fn ended(&self, task_id: TaskId) -> TaskExitInfo {
        self.context
            .wait_background(
                self.handle,
                task_id,
                Duration::from_secs(20),
                zidane_context::CancellationToken::new(),
            )
            .await
            .unwrap()
            .expect("the task ends")
    }

    /// Creates the file a task waits for (`wait_for_file NAME`).
    pub fn release(&self, name: &str) {
        std::fs::write(self.path(name), b"").unwrap();
    }
}

/// A shell snippet that waits until `name` exists in the task's cwd: tasks block on
/// the test, not on time.
pub fn wait_for_file(name: &str) -> String {
    format!("while [ ! -e {name} ]; do sleep 0.01; done")
}

/// An exit and, when asked for, the log's content at the moment `on_exit` ran.
pub type ExitWithLog = (TaskExitInfo, Option<Vec<u8>>);

/// Collects `on_exit` calls, and optionally the log's content at the moment of each.
#[derive(Clone)]
pub struct Exits {
    seen: Arc<Mutex<Vec<ExitWithLog>>>,
    count: Arc<watch::Sender<usize>>,
    snapshot_logs: bool,
}

impl Default for Exits {
    fn default() -> Self {
        Self {
            seen: Arc::default(),
            count: Arc::new(watch::Sender::new(0)),
            snapshot_logs: false,
        }
    }
}

impl Exits {
    /// Also reads each task's log inside its `on_exit` (to prove it is complete then).
    pub fn snapshotting_logs() -> Self {
        Self {
            snapshot_logs: true,
            ..Self::default()
        }
    }

    pub fn callback(&self) -> impl Fn(TaskExitInfo) + Send + Sync + 'static {
        let this = self.clone();
        move |exit: TaskExitInfo| {
            let log = this
                .snapshot_logs
                .then(|| std::fs::read(&exit.output_path).unwrap());
            this.seen.lock().unwrap().push((exit, log));
            this.count.send_modify(|n| *n += 1);
        }
    }

    pub fn attach(&self, options: BackgroundOptions) -> BackgroundOptions {
        options.on_exit(self.callback())
    }

    pub fn all(&self) -> Vec<TaskExitInfo> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(e, _)| e.clone())
            .collect()
    }

    pub fn with_logs(&self) -> Vec<ExitWithLog> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits (bounded) until at least `n` exits arrived; returns them all.
    pub async fn wait_for(&self, n: usize) -> Vec<TaskExitInfo> {
        let mut rx = self.count.subscribe();
        tokio::time::timeout(WAIT, rx.wait_for(|count| *count >= n))
            .await
            .unwrap_or_else(|_| panic!("only {} of {n} exits arrived", self.all().len()))
            .unwrap();
        self.all()
    }
}

/// Collects `on_stall` calls.
#[derive(Clone)]
pub struct Stalls {
    seen: Arc<Mutex<Vec<StallInfo>>>,
    count: Arc<watch::Sender<usize>>,
}

impl Default for Stalls {
    fn default() -> Self {
        Self {
            seen: Arc::default(),
            count: Arc::new(watch::Sender::new(0)),
        }
    }
}

impl Stalls {
    pub fn callback(&self) -> impl Fn(StallInfo) + Send + Sync + 'static {
        let this = self.clone();
        move |info: StallInfo| {
            this.seen.lock().unwrap().push(info);
            this.count.send_modify(|n| *n += 1);
        }
    }

    pub fn all(&self) -> Vec<StallInfo> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits (bounded) for a stall matching `pred`.
    pub async fn wait_until(&self, what: &str, pred: impl Fn(&StallInfo) -> bool) {
        let mut rx = self.count.subscribe();
        let seen = self.seen.clone();
        tokio::time::timeout(
            WAIT,
            rx.wait_for(|_| seen.lock().unwrap().iter().any(&pred)),
        )
        .await
        .unwrap_or_else(|_| panic!("no stall {what}: {:?}", self.all()))
        .unwrap();
    }
}

/// Polls `condition` until it holds, failing the test after [`WAIT`]. For conditions
/// only the OS can tell (a log line written, a process gone).
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until the log at `path` holds at least `lines` complete lines; returns them.
pub async fn log_lines(path: &Path, lines: usize) -> Vec<String> {
    eventually(&format!("{lines} lines in {}", path.display()), || {
        read_log(path).lines().count() >= lines
    })
    .await;
    read_log(path).lines().map(str::to_owned).collect()
}

pub fn read_log(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}

/// `PF_EXITING` (`include/linux/sched.h`): the process is inside `do_exit`.
const PF_EXITING: u64 = 0x4;

/// What `/proc/<pid>/stat` says of a process, if it exists.
struct Stat {
    state: char,
    pgrp: i32,
    flags: u64,
}

impl Stat {
    /// Zombies only wait to be reaped, and a process inside `do_exit` never runs user
    /// code again: both are dead for a test. (A killed process that has closed its
    /// descriptors, so that its pipe reached EOF, can still be in `do_exit` a moment.)
    fn dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X') || self.flags & PF_EXITING != 0
    }
}

/// Whether `pid` has finished exiting: a zombie, or gone. Stricter than `!alive`: a
/// process still inside `do_exit` is dead for a test, yet not exited for its parent.
pub fn exited(pid: u32) -> bool {
    stat(pid).is_none_or(|s| matches!(s.state, 'Z' | 'X'))
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp session tty_nr tpgid flags …`: fields follow the last `)`.
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    let flags = fields.nth(3)?.parse().ok()?;
    Some(Stat { state, pgrp, flags })
}

/// Whether `pid` is a live process (see [`Stat::dead`] for what counts as dead).
pub fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|s| !s.dead())
}

/// Live members of process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(pgid) = i32::try_from(pgid) else {
        return Vec::new();
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| stat(*pid).is_some_and(|s| s.pgrp == pgid && !s.dead()))
        .collect()
}

/// What every open descriptor of this process points to.
pub fn open_fds() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            std::fs::read_link(e.path())
                .ok()
                .map(|target| target.display().to_string())
        })
        .collect()
}

/// Parses the pids a task printed, one per line, skipping other lines.
pub fn pids_in(lines: &[String]) -> Vec<u32> {
    lines.iter().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Waits (bounded by [`WAIT`]) until the log of `task_id` holds `needle`, following it
/// without polling; returns the whole log read so far, lossily decoded.
pub async fn log_holds(f: &Fixture, task_id: TaskId, needle: &str) -> String {
    let mut log = Vec::new();
    let follow = async {
        loop {
            let text = String::from_utf8_lossy(&log).into_owned();
            if text.contains(needle) {
                return text;
            }
            let chunk = f
                .context
                .follow_output(f.handle, task_id, log.len() as u64, 1 << 20)
                .await
                .unwrap()
                .expect("the task is known");
            log.extend_from_slice(&chunk.bytes);
            if chunk.ended && chunk.bytes.is_empty() {
                panic!("{task_id} ended without writing {needle:?}: {text:?}");
            }
        }
    };
    tokio::time::timeout(WAIT, follow)
        .await
        .unwrap_or_else(|_| panic!("{task_id} never wrote {needle:?}"))
}

/// Writes `text` to the input of `task_id`.
pub async fn type_in(f: &Fixture, task_id: TaskId, text: &str) {
    f.context
        .write_input(f.handle, task_id, zidane_context::TaskInput::text(text))
        .await
        .unwrap()
        .expect("the task is known");
}
