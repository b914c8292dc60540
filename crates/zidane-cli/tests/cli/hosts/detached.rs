//! Detached tasks (`shell` with `detach: true`) in real hosts, each in its default mode:
//! a dev server started detached outlives the host's run while a plain background task
//! of the same turn ends with it; `zidane ps` lists it; the next run of the host in the
//! same project dir lists it, and kills it (`shell_kill`) or is told its end, once over
//! that run and the one after. Each test has a runtime dir (`XDG_RUNTIME_DIR`) and a user
//! dir of its own, given to `zidane mcp` through the host's MCP server configuration, so
//! the supervisor is its own; every detached task and the supervisor are ended when the
//! test ends, however it ends.
#![allow(clippy::print_stdout)]

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use zidane_test_support::{Step, Turn, alive, poll_until};

use crate::hosts::host::{GONE_WAIT, Host, Ran, Sandbox, TOKEN_VAR, describe};
use crate::hosts::scenarios::blocks_of;

host_tests!(
    [claude_code => ClaudeCode, codex => Codex],
    a_detached_server_outlives_the_host_and_the_next_run_kills_it,
    a_detached_task_s_end_is_told_once_to_the_next_runs,
);

/// The dev server: Python's, on a free port of 127.0.0.1, unbuffered so its log says
/// the port at once.
const SERVER: &str = "python3 -u -m http.server 0 --bind 127.0.0.1";

/// A task that ticks until the file `go` appears in its working directory, then ends
/// with 3.
const TICKER: &str = "while [ ! -e go ]; do echo tick; sleep 0.1; done; echo finishing; exit 3";

/// The plain background task started in the same turn.
const PLAIN: &str = "sleep 300";

/// The detached task's id: the first of the user dir.
const DETACHED_ID: &str = "bash_d1";

/// A host's sandbox with a private runtime dir, both given to `zidane mcp`; ending every
/// detached task and the supervisor when dropped.
struct Detached {
    // Declared first: the tasks and the supervisor end before the sandbox's cleanup
    // and its dirs go.
    guard: Guard,
    sandbox: Sandbox,
}

impl Detached {
    /// `None` when the hosts are not installed (see `hosts_dir`).
    fn new(host: Host) -> Option<Self> {
        // Under cargo's target dir: a short path (the socket's must stay under 108
        // bytes), not a temp dir every sandbox lets a command write.
        let sandbox = Sandbox::outside_temp(host)?;
        let runtime = sandbox.root().join("run");
        std::fs::create_dir(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let sandbox = sandbox.server_env("XDG_RUNTIME_DIR", runtime.to_str().unwrap());
        let guard = Guard {
            user_dir: sandbox.user_dir(),
            runtime,
            token: sandbox.token().to_owned(),
        };
        Some(Self { guard, sandbox })
    }

    /// A host run of `steps`, in the same project dir every time.
    async fn run(&self, steps: Vec<Step>) -> Ran {
        self.sandbox.run(steps, &[]).await
    }

    /// `zidane ps --all --json` as a person runs it, with the user dir and runtime dir
    /// the host's `zidane mcp` had: one object per task.
    fn ps(&self) -> Vec<Value> {
        self.guard.ps()
    }

    /// The row of `id` in `zidane ps --all --json`.
    fn ps_row(&self, id: &str) -> Value {
        let rows = self.ps();
        rows.iter()
            .find(|row| row["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("zidane ps does not list {id}: {rows:#?}"))
    }

    fn host(&self) -> Host {
        self.sandbox.host
    }

    fn work(&self) -> PathBuf {
        self.sandbox.root().join("work")
    }
}

/// Ends every detached task of the user dir (`zidane kill`), then its supervisor.
struct Guard {
    user_dir: PathBuf,
    runtime: PathBuf,
    token: String,
}

impl Guard {
    /// `zidane ARGS` with the user dir and runtime dir of the run, bounded; `None` when
    /// it could not start or did not end in time (then it is killed).
    fn zidane(&self, args: &[&str]) -> Option<std::process::Output> {
        let mut command = crate::support::zidane(&self.user_dir, args);
        command
            .env("XDG_RUNTIME_DIR", &self.runtime)
            // A supervisor this starts carries the token, as every process of the run.
            .env(TOKEN_VAR, &self.token);
        let mut child = command.spawn().ok()?;
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while child.try_wait().ok()?.is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().ok()
    }

    fn ps(&self) -> Vec<Value> {
        let output = self
            .zidane(&["ps", "--all", "--json"])
            .expect("zidane ps did not end");
        assert!(
            output.status.success(),
            "zidane ps failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// The supervisors of the user dir: `zidane supervisor serve --user-dir DIR`.
    fn supervisors(&self) -> Vec<u32> {
        supervisors_of(&self.user_dir)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Nothing here panics: a failed test unwinding through it would abort the binary.
        if let Some(output) = self.zidane(&["ps", "--all", "--json"])
            && let Ok(rows) = serde_json::from_slice::<Vec<Value>>(&output.stdout)
        {
            for row in rows.iter().filter(|row| row["state"] == "running") {
                if let Some(id) = row["id"].as_str() {
                    let _ = self.zidane(&["kill", id]);
                }
            }
        }
        for pid in self.supervisors() {
            zidane_test_support::kill_pid(pid);
        }
    }
}

/// The live processes whose arguments hold `supervisor`, `serve` and `user_dir`.
fn supervisors_of(user_dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let user_dir = user_dir.as_os_str().as_encoded_bytes();
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                let argv: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                argv.contains(&b"supervisor".as_slice())
                    && argv.contains(&b"serve".as_slice())
                    && argv.contains(&user_dir)
            }) && alive(pid)
        })
        .collect()
}

/// One turn of both calls: `command` detached, then [`PLAIN`] in the background.
fn start_both(host: Host, command: &str) -> Step {
    Step {
        turn: Turn::Calls(vec![
            host.call("shell", json!({ "command": command, "detach": true })),
            host.call(
                "shell",
                json!({ "command": PLAIN, "run_in_background": true }),
            ),
        ]),
        gate: None,
    }
}

/// What the first run's results said of its two starts.
struct Started {
    /// The detached task's pid and log.
    detached_pid: u32,
    detached_log: PathBuf,
    /// The plain task's pid.
    plain_pid: u32,
}

/// The pid and log of `id`'s start among `results`: the structured content each host
/// shows as JSON (Codex after a line of its own).
fn start_of(results: &[String], id: &str) -> Option<(u32, PathBuf)> {
    results.iter().find_map(|result| {
        let start: Value = serde_json::from_str(&result[result.find('{')?..]).ok()?;
        (start["task_id"] == id).then_some(())?;
        Some((
            u32::try_from(start["pid"].as_u64()?).ok()?,
            PathBuf::from(start["output_path"].as_str()?),
        ))
    })
}

/// The entry of `id` in a `list_tasks` result (its structured content, as JSON).
fn listed(result: &str, id: &str) -> Option<Value> {
    let list: Value = serde_json::from_str(&result[result.find('{')?..]).ok()?;
    list["tasks"]
        .as_array()?
        .iter()
        .find(|task| task["task_id"] == id)
        .cloned()
}

/// Runs the host once on [`start_both`] with `command`, and checks what is left once it
/// exited: the detached task runs (by the pid its result gave), the plain one is gone,
/// `zidane ps` lists the detached one as running, and the supervisor's socket is in the
/// test's runtime dir.
async fn first_run(machine: &Detached, command: &str) -> Started {
    let host = machine.host();
    let ran = machine
        .run(vec![
            start_both(host, command),
            Step::text("Started the server; it keeps running."),
        ])
        .await;
    let results = ran.results();
    println!("{host:?}: the starts showed the model: {results:#?}");
    let requests = ran.main_requests();
    let shown = results.join("\n");
    let (detached_pid, detached_log) = start_of(&results, DETACHED_ID).unwrap_or_else(|| {
        panic!(
            "{host:?} did not show the model the detached start:\n{}",
            describe(&requests)
        )
    });
    assert!(
        shown.contains("detached: keeps running after this session"),
        "{shown}"
    );
    let (plain_pid, _) = start_of(&results, "bash_1")
        .unwrap_or_else(|| panic!("{host:?}: no plain start:\n{}", describe(&requests)));

    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        &format!("{host:?}: the plain background task (pid {plain_pid}) outlived its host"),
        || !alive(plain_pid),
    )
    .await;
    assert!(
        alive(detached_pid),
        "{host:?}: the detached task (pid {detached_pid}) died with its host; supervisors: {:?}",
        machine.guard.supervisors()
    );
    let row = machine.ps_row(DETACHED_ID);
    assert_eq!(row["state"], "running", "{row:#}");
    assert_eq!(row["pid"], detached_pid, "{row:#}");
    let sockets: Vec<_> = std::fs::read_dir(machine.guard.runtime.join("zidane"))
        .map(|dir| dir.flatten().map(|entry| entry.file_name()).collect())
        .unwrap_or_default();
    assert!(
        sockets
            .iter()
            .any(|name| name.to_string_lossy().ends_with(".sock")),
        "{host:?}: no supervisor socket in the test's runtime dir (XDG_RUNTIME_DIR did not \
         reach zidane mcp?): {sockets:?}"
    );
    assert_eq!(machine.guard.supervisors().len(), 1);
    Started {
        detached_pid,
        detached_log,
        plain_pid,
    }
}

/// The port the dev server's log says it serves on.
async fn served_port(log: &Path) -> u16 {
    let mut port = None;
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        &format!("the server's log ({}) names no port", log.display()),
        || {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            port = text
                .split("port ")
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|digits| digits.parse().ok());
            port.is_some()
        },
    )
    .await;
    port.unwrap()
}

/// The status line of `GET /` on 127.0.0.1:`port`.
fn get(port: u16) -> std::io::Result<String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer.lines().next().unwrap_or_default().to_owned())
}

/// The `<task-notification>` blocks of [`DETACHED_ID`] over every tool result of `ran`.
fn told_in(ran: &Ran) -> usize {
    ran.results()
        .iter()
        .map(|result| blocks_of(result, DETACHED_ID))
        .sum()
}

/// A dev server started detached, with a plain background task in the same turn: once
/// the host exited the server still runs — and answers, but under Codex, whose default
/// sandbox has no network — and the plain task is gone. The next run
/// lists the server and kills it with `shell_kill`, whose result is the telling of its
/// end: no `<task-notification>` of it in that run or the one after, which no longer
/// lists it as running.
async fn a_detached_server_outlives_the_host_and_the_next_run_kills_it(host: Host) {
    let Some(machine) = Detached::new(host) else {
        return;
    };
    let started = first_run(&machine, SERVER).await;
    let port = served_port(&started.detached_log).await;
    if host == Host::Codex {
        // Codex's default sandbox (`read-only`, network `restricted`) comes with every
        // call, and zidane runs the call's commands no wider: without network, in a
        // network namespace of their own. The server listens there, out of reach.
        let refused = get(port);
        assert!(
            refused.is_err(),
            "Codex's default sandbox has no network, yet the server answers: {refused:?}"
        );
    } else {
        let status = get(port).unwrap_or_else(|error| {
            panic!("{host:?}: the detached server does not answer on port {port}: {error}")
        });
        assert!(status.contains(" 200 "), "{status}");
    }
    assert!(!alive(started.plain_pid));

    let second = machine
        .run(vec![
            Step::call(host.call("list_tasks", json!({}))),
            Step::call(host.call("shell_kill", json!({ "task_id": DETACHED_ID }))),
            Step::call(host.call("list_tasks", json!({}))),
            Step::text("Stopped the server."),
        ])
        .await;
    let requests = second.main_requests();
    assert_eq!(requests.len(), 4, "{}", describe(&requests));
    let shown = second.result_of_step(0);
    println!("{host:?}: list_tasks in the next run showed the model: {shown}");
    let entry = listed(&shown, DETACHED_ID)
        .unwrap_or_else(|| panic!("{host:?}: the next run does not list {DETACHED_ID}:\n{shown}"));
    assert!(
        entry["status"] == "running" && entry["detached"] == true,
        "{host:?}: {DETACHED_ID} is not listed as running and detached:\n{shown}"
    );
    let killed = second.result_of_step(1);
    println!("{host:?}: shell_kill showed the model: {killed}");
    assert!(
        killed.contains(DETACHED_ID) && killed.to_lowercase().contains("kill"),
        "{host:?}: shell_kill did not say {DETACHED_ID} was killed:\n{killed}"
    );
    poll_until(
        GONE_WAIT,
        Duration::from_millis(20),
        &format!("{host:?}: the detached server outlived shell_kill"),
        || !alive(started.detached_pid),
    )
    .await;
    assert!(
        get(port).is_err(),
        "the server still answers after its kill"
    );
    assert_ne!(machine.ps_row(DETACHED_ID)["state"], "running");

    let third = machine
        .run(vec![
            Step::call(host.call("list_tasks", json!({}))),
            Step::text("Nothing runs."),
        ])
        .await;
    let shown = third.result_of_step(0);
    println!("{host:?}: list_tasks in the third run showed the model: {shown}");
    let entry = listed(&shown, DETACHED_ID);
    assert!(
        entry.is_none_or(|task| task["status"] == "killed"),
        "{host:?}: the third run lists the killed task otherwise than killed:\n{shown}"
    );
    assert_eq!(
        told_in(&second) + told_in(&third),
        0,
        "{host:?}: the kill's own result told the end; it was notified too:\n{:#?}\n{:#?}",
        second.results(),
        third.results()
    );
}

/// A ticking task started detached, with a plain background task in the same turn; the
/// next run lists it running, the test ends it (the file it waits for) and the run's
/// next result tells its end (exit 3) — once: not again in that run (a `wait_task` after
/// it returns the exit without a notification), nor in the run after.
async fn a_detached_task_s_end_is_told_once_to_the_next_runs(host: Host) {
    let Some(machine) = Detached::new(host) else {
        return;
    };
    let started = first_run(&machine, TICKER).await;
    let ticks = |log: &Path| {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .matches("tick")
            .count()
    };
    let before = ticks(&started.detached_log);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        ticks(&started.detached_log) > before,
        "{host:?}: the detached task's log does not grow after the host exited"
    );

    let go = machine.work().join("go");
    let pid = started.detached_pid;
    let ended = move || {
        // Ends the task (once the step before was answered), then holds the step until
        // its process is gone.
        let _ = std::fs::write(&go, "");
        !alive(pid)
    };
    let second = machine
        .run(vec![
            Step::call(host.call("list_tasks", json!({}))),
            Step::call(host.call("list_tasks", json!({}))).gated(ended),
            Step::call(host.call("wait_task", json!({ "task_id": DETACHED_ID }))),
            Step::call(host.call("list_tasks", json!({}))),
            Step::text("It ended."),
        ])
        .await;
    let requests = second.main_requests();
    assert_eq!(requests.len(), 5, "{}", describe(&requests));
    let shown = second.result_of_step(0);
    println!("{host:?}: list_tasks in the next run showed the model: {shown}");
    assert!(
        listed(&shown, DETACHED_ID).is_some_and(|task| task["status"] == "running"),
        "{host:?}: the next run does not list {DETACHED_ID} running:\n{shown}"
    );
    let after_end = second.result_of_step(1);
    println!("{host:?}: the first result after the end showed the model: {after_end}");
    assert!(
        blocks_of(&after_end, DETACHED_ID) == 1 && after_end.contains("<exit-code>3</exit-code>"),
        "{host:?}: the first result after the end did not tell it (exit 3):\n{after_end}"
    );
    let waited = second.result_of_step(2);
    println!("{host:?}: wait_task showed the model: {waited}");
    assert!(
        waited.contains(DETACHED_ID)
            && (waited.contains("exit code 3")
                || waited.contains("exited 3")
                || waited.contains("\"exit_code\":3")),
        "{host:?}: wait_task did not give {DETACHED_ID}'s exit 3:\n{waited}"
    );

    let third = machine
        .run(vec![
            Step::call(host.call("list_tasks", json!({}))),
            Step::text("Nothing new."),
        ])
        .await;
    println!(
        "{host:?}: list_tasks in the third run showed the model: {}",
        third.result_of_step(0)
    );
    assert_eq!(
        told_in(&second) + told_in(&third),
        1,
        "{host:?}: the end was not told exactly once over the two runs:\n{:#?}\n{:#?}",
        second.results(),
        third.results()
    );
}
