//! What the end-to-end tests share: the binary and the model it runs on, the processes a
//! session owns, and a private tmux server.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use zidane_test_support::{alive, live_processes_with_env_prefix};

/// The marker every task process carries (zidane-process's `OWNER_MARKER_ENV`); its
/// token starts with `z1:<host pid>:`.
pub const OWNER_MARKER_ENV: &str = zidane::process::OWNER_MARKER_ENV;

/// Turns off the orphan sweep `zidane` and `zidane mcp` run as they start: every test
/// that starts one sets it, but the tests of that sweep. A sweep ends every dead host's
/// processes, whoever's they are, so a binary started by one test could end the orphans
/// another test (in this binary or another, under nextest) made and is looking at; the
/// sweep's own tests hold [`zidane_test_support::sweep_lock`] instead.
pub const NO_SWEEP: (&str, &str) = ("ZIDANE_SWEEP_ORPHANS", "off");

/// Every variable a provider is configured with: removed, so no test depends on the
/// machine's configuration.
pub const PROVIDER_VARS: &[&str] = zidane::models::PROVIDER_ENV_VARS;

/// The built binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_zidane")
}

/// The arguments and environment that choose the model: the built-in demo script.
/// [`provider_env`] gives those of a real provider instead.
pub fn model_args() -> (Vec<String>, Vec<(String, String)>) {
    (vec!["--demo".to_owned()], Vec::new())
}

/// The arguments and environment that choose the OpenAI-compatible provider at
/// `base_url` (the scripted provider server of `zidane-models`), model `scripted`.
pub fn provider_env(base_url: &str) -> (Vec<String>, Vec<(String, String)>) {
    use zidane::models::{MODEL_ENV, OPENAI_API_KEY_ENV, OPENAI_BASE_URL_ENV, PROVIDER_ENV};
    let env = [
        (PROVIDER_ENV, "openai"),
        (MODEL_ENV, "scripted"),
        (OPENAI_BASE_URL_ENV, base_url),
        (OPENAI_API_KEY_ENV, "test"),
    ];
    (
        Vec::new(),
        env.iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect(),
    )
}

/// `zidane ARGS` with the user dir set, provider variables removed, no start-up sweep
/// ([`NO_SWEEP`]), stdin closed.
pub fn zidane(user_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin());
    for var in PROVIDER_VARS {
        command.env_remove(var);
    }
    command
        .env("ZIDANE_USER_DIR", user_dir)
        .env(NO_SWEEP.0, NO_SWEEP.1)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits for a child with a bound, killing it when the bound passes.
pub fn wait_bounded(mut child: Child, bound: Duration) -> Output {
    let deadline = Instant::now() + bound;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "zidane did not end within {bound:?}: {:?}",
                child.wait_with_output()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The live processes whose environment names `host_pid` as their owner: what a
/// session of that host left behind.
pub fn owned_processes(host_pid: u32) -> Vec<u32> {
    live_processes_with_env_prefix(OWNER_MARKER_ENV, &format!("z1:{host_pid}:"))
}

/// utime + stime of a process, in clock ticks.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields after the comm: state is 3, utime 14, stime 15 (1-based over the whole line).
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Whether tmux is here; under CI its absence is a failure (xtask installs it).
pub fn tmux_present() -> bool {
    let present = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success());
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is missing under CI (cargo xtask ci installs it)"
        );
        eprintln!("skipped: tmux is not installed");
    }
    present
}

/// A tmux server of its own (`tmux -L <unique>`) running one `zidane` in a pane;
/// killed on drop.
pub struct Tmux {
    socket: String,
    /// The pane's process: `zidane` itself (`exec`).
    pub pid: u32,
}

impl Tmux {
    /// Starts `zidane ARGS` in a 120×40 terminal, without the start-up sweep
    /// ([`NO_SWEEP`]).
    pub fn start(user_dir: &Path, args: &[String], env: &[(String, String)]) -> Self {
        Self::start_in(None, user_dir, args, env)
    }

    /// [`Tmux::start`] with `cwd` as the working directory (the session's workspace).
    pub fn start_in(
        cwd: Option<&Path>,
        user_dir: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> Self {
        Self::start_sized(cwd, user_dir, args, env, (120, 40))
    }

    /// [`Tmux::start_in`] in a terminal of `columns` by `rows`.
    pub fn start_sized(
        cwd: Option<&Path>,
        user_dir: &Path,
        args: &[String],
        env: &[(String, String)],
        (columns, rows): (u16, u16),
    ) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let socket = format!(
            "zidane-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        // A shell stays in the pane after zidane, to show how it left the terminal.
        let mut line = "env".to_owned();
        for var in PROVIDER_VARS {
            line.push_str(&format!(" -u {var}"));
        }
        let dir = quote(&user_dir.display().to_string());
        line.push_str(&format!(
            " ZIDANE_USER_DIR={dir} {}={}",
            NO_SWEEP.0, NO_SWEEP.1
        ));
        for (key, value) in env {
            line.push_str(&format!(" {key}={}", quote(value)));
        }
        line.push_str(&format!(" {}", quote(bin())));
        for arg in args {
            line.push_str(&format!(" {}", quote(arg)));
        }
        line.push_str("; echo \"zidane exited $?\"; stty -a; sleep 600");
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-c",
                &cwd.map_or_else(
                    || std::env::current_dir().unwrap().display().to_string(),
                    |cwd| cwd.display().to_string(),
                ),
                "-s",
                "z",
                "-x",
                &columns.to_string(),
                "-y",
                &rows.to_string(),
                &line,
            ])
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        let mut tmux = Self { socket, pid: 0 };
        let shell: u32 = tmux
            .run(&["display-message", "-p", "-t", "z", "#{pane_pid}"])
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        tmux.pid = loop {
            let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
                .unwrap_or_default();
            if let Some(pid) = children.split_whitespace().next() {
                break pid.parse().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "zidane did not start in the pane"
            );
            std::thread::sleep(Duration::from_millis(2));
        };
        tmux
    }

    /// Runs a tmux command on this server; its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen as text.
    pub fn capture(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "z"])
    }

    /// Types text (literally), or a key name such as `Enter` or `C-k`.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "z"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits until the screen satisfies `ready`, within `bound`; the screen then.
    pub fn wait_for(&self, what: &str, bound: Duration, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + bound;
        loop {
            let screen = self.capture();
            if ready(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} within {bound:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the screen shows `text`.
    pub fn wait_text(&self, text: &str, bound: Duration) -> String {
        self.wait_for(text, bound, |screen| screen.contains(text))
    }

    /// How long a quit (a destroy) may take before the terminal is checked.
    const STEP_AFTER_QUIT: Duration = Duration::from_secs(15);

    /// After `zidane` ended: the terminal left the alternate screen and shows its cursor.
    pub fn assert_restored(&self) {
        // Quitting destroys the agent first: wait until the process has really ended.
        self.wait_text("zidane exited", Self::STEP_AFTER_QUIT);
        let state = self.run(&[
            "display-message",
            "-p",
            "-t",
            "z",
            "#{alternate_on} #{cursor_flag}",
        ]);
        assert_eq!(
            state.trim(),
            "0 1",
            "alternate screen, cursor visible:\n{}",
            self.capture()
        );
    }

    /// Waits (bounded by `bound`) until `zidane` has ended, saying `what` ended it if it
    /// does not.
    pub fn wait_ended(&self, what: &str, bound: Duration) {
        let deadline = Instant::now() + bound;
        while self.alive() {
            assert!(
                Instant::now() < deadline,
                "zidane did not end on {what}:\n{}",
                self.capture()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether `zidane` (the pane's process) still runs.
    pub fn alive(&self) -> bool {
        alive(self.pid)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
