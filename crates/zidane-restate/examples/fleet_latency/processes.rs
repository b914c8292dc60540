//! The processes of a run and their ends: the directories under its temp dir, the
//! workers, and whatever else names the temp dir (the supervisor a local `zidane mcp`
//! starts).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zidane_restate::testing::RestateServer;

/// Longest an MCP server, a draining worker or a leftover process may take to exit
/// before it is killed.
pub(crate) const STOP_WAIT: Duration = Duration::from_secs(10);
/// Longest a worker may take to say it is ready.
const READY_WAIT: Duration = Duration::from_secs(30);

/// Ends, when dropped, whatever still runs with the run's temp dir on its command line:
/// the supervisor a local `zidane mcp` starts for its tasks (under the private
/// `XDG_RUNTIME_DIR`; it would end itself a second after its last client, perhaps
/// after the dir is gone) and its monitor, or a server that outlived a failure.
pub(crate) struct Leftovers {
    root: PathBuf,
}

impl Leftovers {
    /// Looks for what names `root`, when dropped.
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
        }
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        end_processes_naming(&self.root);
    }
}

/// SIGTERM to every other process whose command line names `root`, then SIGKILL to
/// those still there after [`STOP_WAIT`].
#[cfg(target_os = "linux")]
fn end_processes_naming(root: &Path) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let root = root.to_string_lossy().into_owned();
    let naming = || -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| *pid != i32::try_from(std::process::id()).unwrap_or(0))
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&root))
            })
            // A zombie is gone but for its parent's wait.
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    stat.rsplit_once(')')
                        .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
                })
            })
            .collect()
    };
    for pid in naming() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + STOP_WAIT;
    while !naming().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in naming() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Without `/proc` to look in, the supervisor is left to end itself a second after its
/// last client.
#[cfg(not(target_os = "linux"))]
fn end_processes_naming(_root: &Path) {}

/// The directories of the run, all under its temp dir.
pub(crate) struct Dirs {
    /// The MCP servers' working directory: a local session's workspace.
    workspace: PathBuf,
    /// An empty config dir (`XDG_CONFIG_HOME`): no user's config file applies.
    config: PathBuf,
    /// A private `XDG_RUNTIME_DIR`: no supervisor or socket of the user's is reached.
    runtime: PathBuf,
    /// Where each MCP server's user dir goes.
    pub(crate) users: PathBuf,
}

impl Dirs {
    pub(crate) fn make(root: &Path) -> Self {
        let dirs = Self {
            workspace: root.join("work"),
            config: root.join("config"),
            runtime: root.join("run"),
            users: root.join("users"),
        };
        for dir in [&dirs.workspace, &dirs.config, &dirs.runtime, &dirs.users] {
            std::fs::create_dir_all(dir).unwrap();
        }
        set_private(&dirs.runtime);
        dirs
    }

    /// `zidane mcp` started from the workspace, in this run's environment.
    pub(crate) fn mcp(&self, binary: &Path) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("mcp")
            .current_dir(&self.workspace)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            // Another run's orphans are not this measurement's to end.
            .env("ZIDANE_SWEEP_ORPHANS", "off")
            .env_remove("ZIDANE_RESTATE")
            .env_remove("ZIDANE_WORKERS")
            .env_remove("ZIDANE_RESTATE_ADMIN")
            .env_remove("ZIDANE_USER_DIR");
        command
    }
}

#[cfg(unix)]
fn set_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[cfg(not(unix))]
fn set_private(_dir: &Path) {}

/// The local sessions' sandbox, from `zidane mcp --print-sandbox`: its mode and status
/// (`workspace-write, enforced`).
pub(crate) fn print_sandbox(binary: &Path, dirs: &Dirs) -> String {
    let mut command = dirs.mcp(binary).into_std();
    let output = command
        .arg("--print-sandbox")
        .arg("--user-dir")
        .arg(dirs.users.join("print"))
        .stdin(Stdio::null())
        .output()
        .expect("zidane mcp --print-sandbox runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    let field = |name: &str| {
        printed
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map_or("unknown", str::trim)
            .to_owned()
    };
    format!("{}, {}", field("sandbox:"), field("status:"))
}

/// The workers, each a `zidane-worker` process registered with the server; dropping
/// this drains them (SIGTERM), then kills what is left after [`STOP_WAIT`].
pub(crate) struct Fleet {
    binary: PathBuf,
    dir: PathBuf,
    ingress: String,
    admin: String,
    workers: Vec<Child>,
}

impl Fleet {
    /// No worker yet: `binary` runs them, their disks and logs under `dir`, registered
    /// with `server`.
    pub(crate) fn new(binary: PathBuf, dir: PathBuf, server: &RestateServer) -> Self {
        Self {
            binary,
            dir,
            ingress: server.ingress_url().to_owned(),
            admin: server.admin_url().to_owned(),
            workers: Vec::new(),
        }
    }

    /// Starts workers `w<n>` for each `n` of `numbers`, one after another, each waited
    /// for until it says it is ready.
    pub(crate) fn start(&mut self, numbers: std::ops::RangeInclusive<usize>) {
        // A starting worker sweeps this machine's orphans, which must not race the
        // tests that make orphans and sweep them (Unix's sweep; Windows has none).
        #[cfg(unix)]
        let _lock = zidane_test_support::sweep_lock();
        for n in numbers {
            let id = format!("w{n}");
            std::fs::create_dir_all(&self.dir).unwrap();
            let log = std::fs::File::create(self.dir.join(format!("{id}.log"))).unwrap();
            let child = Command::new(&self.binary)
                .args(["--worker-id", &id, "--listen", "127.0.0.1:0"])
                .args(["--ingress", &self.ingress, "--admin", &self.admin])
                .arg("--user-dir")
                .arg(self.dir.join(&id))
                .arg("--label")
                .arg(labels_of(n).join(","))
                .env_remove("ZIDANE_WORKER_IDENTITY_KEYS")
                .env_remove("ZIDANE_WORKER_IDENTITY_KEY_FILE")
                .env_remove("ZIDANE_WORKER_HEALTH")
                .env_remove("ZIDANE_WORKER_MAX_TASKS")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|error| panic!("{}: {error}", self.binary.display()));
            // Held before it is waited for, so a worker that fails is ended too.
            self.workers.push(child);
            let child = self.workers.last_mut().unwrap();
            let line = zidane_test_support::first_line(child, READY_WAIT).unwrap_or_default();
            assert!(
                line.starts_with("ready "),
                "worker {id} said {line:?}, not ready within {READY_WAIT:?}; its log: {}",
                std::fs::read_to_string(self.dir.join(format!("{id}.log"))).unwrap_or_default()
            );
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            terminate(worker);
        }
        let deadline = Instant::now() + STOP_WAIT;
        for worker in &mut self.workers {
            while matches!(worker.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = worker.kill();
            let _ = worker.wait();
        }
    }
}

/// Asks a worker to drain and exit: it takes no new task, and exits once the exits of
/// its tasks are recorded.
#[cfg(unix)]
fn terminate(worker: &Child) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    if let Ok(pid) = i32::try_from(worker.id()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
}

/// No signal to drain with: the worker is killed after the wait.
#[cfg(not(unix))]
fn terminate(_worker: &Child) {}

/// The labels of worker `w<n>`: `linux` and `rack-<n mod 3>` on every one, `gpu` on the
/// even ones.
pub(crate) fn labels_of(n: usize) -> Vec<String> {
    let mut labels = vec!["linux".to_owned(), format!("rack-{}", n % 3)];
    if n.is_multiple_of(2) {
        labels.push("gpu".to_owned());
    }
    labels
}
