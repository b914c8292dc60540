//! `zidane top` on real tasks: a `zidane mcp` session (raw JSON-RPC) starts a detached
//! task whose log grows and a task of its own, in a machine of their own (a user dir and
//! a private runtime dir, so the supervisor is the test's). `--once` prints a frame that
//! lists both; in an 80×24 terminal (tmux) a person sees them, the selected one's log
//! grow, stops it with `x` then `y`, attaches to a terminal task and pages a log from
//! the view, and quits to a restored shell. Every task and the supervisor are ended
//! when a test ends, however it ends.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::detached::supervisors_of;
use crate::mcp_support::{StdioServer, UserDirBy};
use crate::support::{Tmux, tmux_present, zidane};

/// How long one step may take.
const STEP: Duration = Duration::from_secs(20);

/// A task that writes a numbered line five times a second, for minutes.
const TICKER: &str = "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo \"tick $i\"; sleep 0.2; done";

/// A task in a terminal that asks a question and ends with what it was told.
const ASKER: &str = "printf 'name? '; read name; echo \"hello $name\"; sleep 1; exit 7";

/// A `zidane mcp` session with tasks, in a machine of its own; its tasks and its
/// supervisor are ended on drop.
struct Session {
    server: StdioServer,
    runtime: PathBuf,
    _root: tempfile::TempDir,
}

impl Session {
    /// A session that started `bash_d1` (the ticker, detached) and `bash_1` (`sleep 300`,
    /// its own), both listed by `zidane ps`.
    async fn start() -> Self {
        // Under cargo's target dir: a short path (the socket's must stay under 108 bytes).
        let root = tempfile::Builder::new()
            .prefix("top-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let runtime = root.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let user_dir = tempfile::Builder::new()
            .prefix("user-")
            .tempdir_in(root.path())
            .unwrap();
        let server = StdioServer::start_in(
            user_dir,
            UserDirBy::Env,
            &[],
            &[("XDG_RUNTIME_DIR", runtime.to_str().unwrap())],
        )
        .await;
        let mut session = Self {
            server,
            runtime,
            _root: root,
        };
        let detached = session
            .server
            .call(1, "shell", json!({ "command": TICKER, "detach": true }))
            .await;
        assert_eq!(
            detached["structuredContent"]["task_id"], "bash_d1",
            "{detached}"
        );
        let own = session.server.start_background(2, "sleep 300").await;
        assert_eq!(own["structuredContent"]["task_id"], "bash_1", "{own}");
        let own_id = session.own_id();
        session.wait_for("both tasks in zidane ps", |rows| {
            row_of(rows, "bash_d1").is_some() && row_of(rows, &own_id).is_some()
        });
        session
    }

    fn user_dir(&self) -> &Path {
        self.server._dir.path()
    }

    /// How a person names the session's own task: `<host pid>:bash_1`.
    fn own_id(&self) -> String {
        format!("{}:bash_1", self.server.pid())
    }

    /// The environment `zidane` commands of this machine run with.
    fn env(&self) -> Vec<(String, String)> {
        vec![(
            "XDG_RUNTIME_DIR".to_owned(),
            self.runtime.display().to_string(),
        )]
    }

    /// `zidane ARGS` of this machine; its output.
    fn zidane(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
        let output = zidane(self.user_dir(), args)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "zidane {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// `zidane ps --all --json`.
    fn ps(&self) -> Vec<Value> {
        serde_json::from_slice(&self.zidane(&["ps", "--all", "--json"], &[]).stdout).unwrap()
    }

    /// Waits until `zidane ps` satisfies `ready`; its rows then.
    fn wait_for(&self, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + STEP;
        loop {
            let rows = self.ps();
            if ready(&rows) {
                return rows;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} within {STEP:?}: {rows:#?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The detached tasks outlive the session: they, then the supervisor, are ended.
        let rows: Vec<Value> = zidane(self.user_dir(), &["ps", "--json"])
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .output()
            .ok()
            .and_then(|output| serde_json::from_slice(&output.stdout).ok())
            .unwrap_or_default();
        for row in rows {
            if row["kind"] == "detached" && row["state"] == "running" {
                let _ = zidane(
                    self.user_dir(),
                    &["kill", row["id"].as_str().unwrap_or_default()],
                )
                .env("XDG_RUNTIME_DIR", &self.runtime)
                .output();
            }
        }
        for pid in supervisors_of(self.user_dir()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
    }
}

fn row_of<'a>(rows: &'a [Value], id: &str) -> Option<&'a Value> {
    rows.iter().find(|row| row["id"] == id)
}

/// The table's row of `id`: the line whose first cell (after the selection's mark) is
/// `id`, not a longer id's.
fn line_of<'a>(screen: &'a str, id: &str) -> Option<&'a str> {
    screen.lines().find(|line| {
        line.trim_start_matches('›')
            .split_whitespace()
            .next()
            .is_some_and(|cell| cell == id)
    })
}

/// The highest `tick N` on the screen.
fn last_tick(screen: &str) -> u32 {
    screen
        .lines()
        .filter_map(|line| line.trim().strip_prefix("tick "))
        .filter_map(|n| n.trim().parse().ok())
        .max()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn top_once_prints_one_frame_listing_the_tasks() {
    let session = Session::start().await;
    let own = session.own_id();
    let output = session.zidane(&["top", "--once"], &[("COLUMNS", "80"), ("LINES", "24")]);
    let frame = String::from_utf8(output.stdout).unwrap();
    assert_eq!(frame.lines().count(), 24, "{frame}");
    assert!(!frame.contains('\x1b'), "no ANSI off a terminal: {frame:?}");
    assert!(
        frame.lines().all(|line| line.chars().count() <= 80),
        "{frame}"
    );
    assert!(
        frame.starts_with("zidane top · 2 tasks, 2 running"),
        "{frame}"
    );
    let heading = frame.lines().nth(1).unwrap();
    for column in [
        "ID", "STATE", "HOST", "AGE", "CPU", "MEM", "HISTORY", "COMMAND",
    ] {
        assert!(heading.contains(column), "{column} missing: {heading}");
    }
    // The detached task first and selected, then the session's own.
    let detached = line_of(&frame, "bash_d1").unwrap();
    assert!(detached.starts_with("› bash_d1"), "{frame}");
    assert!(
        detached.contains("running") && detached.contains("zidane mcp"),
        "{detached}"
    );
    assert!(detached.contains("i=0; while"), "{detached}");
    let host = line_of(&frame, &own).unwrap();
    assert!(
        host.contains("running") && host.contains("sleep 300"),
        "{host}"
    );
    // Two readings: a running task has a CPU share and a memory size.
    assert!(host.contains('%') && host.contains('M'), "{host}");
    // Below, the selected task's log.
    assert!(frame.contains("─ bash_d1 · zidane mcp"), "{frame}");
    assert!(last_tick(&frame) > 0, "{frame}");
    assert!(
        frame
            .lines()
            .last()
            .unwrap()
            .starts_with("↑↓ select · x stop"),
        "{frame}"
    );

    // Wider and taller, the session shows; a narrow frame still lists both.
    let output = session.zidane(&["top", "--once"], &[("COLUMNS", "120"), ("LINES", "40")]);
    let frame = String::from_utf8(output.stdout).unwrap();
    assert_eq!(frame.lines().count(), 40, "{frame}");
    assert!(frame.lines().nth(1).unwrap().contains("SESSION"), "{frame}");
    let output = session.zidane(&["top", "--once"], &[("COLUMNS", "40"), ("LINES", "10")]);
    let frame = String::from_utf8(output.stdout).unwrap();
    assert!(
        line_of(&frame, "bash_d1").is_some() && line_of(&frame, &own).is_some(),
        "{frame}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn top_in_a_terminal_follows_the_log_and_stops_the_selected_task() {
    if !tmux_present() {
        return;
    }
    let session = Session::start().await;
    let own = session.own_id();
    let tmux = Tmux::start_sized(
        None,
        session.user_dir(),
        &["top".to_owned()],
        &session.env(),
        (80, 24),
    );
    let screen = tmux.wait_for("both tasks and the log", STEP, |screen| {
        line_of(screen, "bash_d1").is_some_and(|line| line.starts_with("› bash_d1"))
            && line_of(screen, &own).is_some()
            && last_tick(screen) > 0
    });
    // The log grows on screen by itself.
    let first = last_tick(&screen);
    tmux.wait_for("more ticks", STEP, |screen| last_tick(screen) > first + 2);

    // x asks, y stops: the row says killed, and so does the supervisor.
    tmux.keys(&["x"]);
    tmux.wait_text("stop bash_d1? y stops it", STEP);
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("bash_d1 killed", STEP, |screen| {
        line_of(screen, "bash_d1").is_some_and(|line| line.contains("killed"))
    });
    assert!(
        screen.contains("bash_d1 killed (SIG"),
        "the note says how: {screen}"
    );
    let rows = session.ps();
    assert_eq!(
        row_of(&rows, "bash_d1").unwrap()["state"],
        "killed",
        "{rows:#?}"
    );
    assert_eq!(
        row_of(&rows, &own).unwrap()["state"],
        "running",
        "{rows:#?}"
    );
    // The log stopped growing where the task ended.
    let ended = last_tick(&screen);
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        last_tick(&tmux.capture()) <= ended + 1,
        "{}",
        tmux.capture()
    );

    // The other task is still there to select; q quits to the shell, restored.
    tmux.keys(&["j"]);
    tmux.wait_for("the session's task selected", STEP, |screen| {
        line_of(screen, &own).is_some_and(|line| line.starts_with('›'))
    });
    tmux.keys(&["q"]);
    tmux.wait_ended("q", STEP);
    tmux.assert_restored();
    assert_eq!(row_of(&session.ps(), &own).unwrap()["state"], "running");
}

#[tokio::test(flavor = "multi_thread")]
async fn top_attaches_to_a_terminal_task_and_pages_a_log_then_comes_back() {
    if !tmux_present() {
        return;
    }
    let mut session = Session::start().await;
    let asker = session
        .server
        .call(
            3,
            "shell",
            json!({ "command": ASKER, "detach": true, "tty": true, "rows": 10, "cols": 50 }),
        )
        .await;
    assert_eq!(asker["structuredContent"]["task_id"], "bash_d2", "{asker}");
    let env = {
        let mut env = session.env();
        env.push(("PAGER".to_owned(), "less".to_owned()));
        env
    };
    let tmux = Tmux::start_sized(
        None,
        session.user_dir(),
        &["top".to_owned()],
        &env,
        (80, 24),
    );
    tmux.wait_for("the terminal task", STEP, |screen| {
        line_of(screen, "bash_d2").is_some()
    });
    // bash_d1 is selected: it has no terminal, and says so.
    tmux.keys(&["a"]);
    tmux.wait_text("bash_d1 has no terminal", STEP);
    tmux.keys(&["j"]);
    tmux.wait_for("bash_d2 selected", STEP, |screen| {
        line_of(screen, "bash_d2").is_some_and(|line| line.starts_with('›'))
    });

    // a: zidane attach takes the terminal; the answer reaches the task, which ends; the
    // view comes back and shows it ended.
    tmux.keys(&["a"]);
    // Its question at the top of the terminal: attach's screen, not the view's log.
    tmux.wait_for("zidane attach", STEP, |screen| screen.starts_with("name?"));
    tmux.keys(&["-l", "bob"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("hello bob", STEP);
    let screen = tmux.wait_for("the view back, bash_d2 ended", STEP, |screen| {
        screen.starts_with("zidane top")
            && line_of(screen, "bash_d2").is_some_and(|line| line.contains("exited 7"))
    });
    assert!(screen.contains("back from bash_d2"), "{screen}");

    // l: the log in the pager; q leaves it, back to the view.
    tmux.keys(&["k"]);
    tmux.wait_for("bash_d1 selected", STEP, |screen| {
        line_of(screen, "bash_d1").is_some_and(|line| line.starts_with('›'))
    });
    tmux.keys(&["l"]);
    tmux.wait_for("the pager on the log", STEP, |screen| {
        screen.lines().any(|line| line == "tick 1") && !screen.contains("zidane top")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("the view back", STEP, |screen| {
        screen.starts_with("zidane top")
    });
    assert!(tmux.alive(), "{}", tmux.capture());
    tmux.keys(&["C-c"]);
    tmux.wait_ended("ctrl+c", STEP);
    tmux.assert_restored();
}
