//! The time from the model's tool call to its result, through each host and directly:
//! a background start and a foreground `true`, over several rounds. Ignored by default
//! (it only reports numbers, and a loaded machine must not fail CI):
//! `cargo nextest run -p zidane-cli --test cli --run-ignored only --no-capture hosts::latency`.
//!
//! Through a host, the scripted model server times it: from handing the host its tool
//! call to receiving the next request, which carries the result (the host's parsing,
//! its MCP call, its rendering of the result, its next request). Directly, a raw
//! JSON-RPC client times `tools/call` over stdio. Claude Code runs twice: headless
//! (`-p`), and interactive in tmux, where a background start is answered as an MCP task.
//!
//! Interactive Claude Code also wakes the model when a background task ends: the time
//! from the task's exit to the scripted model's receipt of the turn Claude Code starts,
//! for zidane's task (an MCP task Claude Code polls) and for Claude Code's own `Bash`
//! with `run_in_background`; and the CPU time `zidane mcp` and Claude Code spend while a
//! task runs and nothing else happens.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use zidane_test_support::{ScriptedModel, Step, ToolCall, percentiles, poll_until};

use crate::hosts::claude_tasks;
use crate::hosts::host::{BIN, GONE_WAIT, HOST_WAIT, Host, SERVER, Sandbox, describe};
use crate::mcp_support::StdioServer;
use crate::support::tmux_present;

/// Rounds measured, after one warm-up round.
const ROUNDS: usize = 10;

fn background() -> Value {
    json!({ "command": "true", "run_in_background": true })
}

fn foreground() -> Value {
    json!({ "command": "true" })
}

/// How a host is run for a measurement.
#[derive(Clone, Copy)]
enum Run {
    /// Headless (`claude -p`, `codex exec`).
    Headless,
    /// Claude Code's interactive CLI in tmux, which declares the tasks extension: a
    /// background start is answered as an MCP task.
    Interactive,
}

/// `(background starts, foreground calls)` through `host`.
async fn through(host: Host, run: Run) -> Option<(Vec<Duration>, Vec<Duration>)> {
    let sandbox = Sandbox::new(host)?;
    let mut steps = Vec::new();
    for _ in 0..=ROUNDS {
        steps.push(Step::call(host.call("shell", background())));
        steps.push(Step::call(host.call("shell", foreground())));
    }
    steps.push(Step::text("Measured."));
    let ran = match run {
        Run::Headless => sandbox.run(steps, &[]).await,
        Run::Interactive if !tmux_present() => return None,
        Run::Interactive => {
            let ran = claude_tasks::interactive(&sandbox, steps, HOST_WAIT).await;
            // What is timed is the MCP task path: the start answered as a task.
            let start = ran.result_of_step(2);
            assert!(start.contains("started server-side task"), "{start}");
            ran
        }
    };
    let (mut started, mut ran_true) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        started.push(ran.round_trip(2 * round));
        ran_true.push(ran.round_trip(2 * round + 1));
    }
    Some((started, ran_true))
}

/// `(background starts, foreground calls)` by a raw JSON-RPC client over stdio.
async fn direct() -> (Vec<Duration>, Vec<Duration>) {
    let mut server = StdioServer::start().await;
    let mut id = 0;
    let (mut started, mut ran_true) = (Vec::new(), Vec::new());
    for round in 0..=ROUNDS {
        let mut timed = async |arguments: Value| {
            id += 1;
            let began = Instant::now();
            server.call(id, "shell", arguments).await;
            began.elapsed()
        };
        let a = timed(background()).await;
        let b = timed(foreground()).await;
        if round > 0 {
            started.push(a);
            ran_true.push(b);
        }
    }
    // Closing stdin ends the server, which ends its tasks.
    drop(server.stdin.take());
    let _ = tokio::time::timeout(GONE_WAIT, server.child.wait()).await;
    (started, ran_true)
}

fn ms(fields: &serde_json::Map<String, Value>, key: &str) -> String {
    format!(
        "{:.1} ms",
        fields[key].as_f64().unwrap_or_default() / 1000.0
    )
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run on purpose, read its output"]
async fn latency_through_each_host_and_directly() {
    let mut rows = Vec::new();
    let (started, ran_true) = direct().await;
    rows.push(("direct (raw JSON-RPC over stdio)", started, ran_true));
    for (name, host, run) in [
        ("Claude Code (`-p`)", Host::ClaudeCode, Run::Headless),
        (
            "Claude Code (interactive, tasks)",
            Host::ClaudeCode,
            Run::Interactive,
        ),
        ("Codex", Host::Codex, Run::Headless),
    ] {
        let Some((started, ran_true)) = through(host, run).await else {
            return;
        };
        rows.push((name, started, ran_true));
    }
    println!("| path | call | n | p50 | max |");
    println!("|---|---|---|---|---|");
    for (name, mut started, mut ran_true) in rows {
        for (call, samples) in [
            ("background start", &mut started),
            ("foreground `true`", &mut ran_true),
        ] {
            let fields = percentiles(samples);
            println!(
                "| {name} | {call} | {} | {} | {} |",
                fields["n"],
                ms(&fields, "p50_us"),
                ms(&fields, "max_us")
            );
        }
    }
}

/// Rounds of each wake measured, after one warm-up round of each.
const WAKE_ROUNDS: usize = 8;

/// Longest a whole wake measurement may take.
const WAKE_BOUND: Duration = Duration::from_secs(300);

/// How long the CPU time of an idle stretch is measured.
const IDLE_WINDOW: Duration = Duration::from_secs(60);

/// Whose background task a round starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Runner {
    /// zidane's `shell`, answered as an MCP task.
    Zidane,
    /// Claude Code's own `Bash` tool with `run_in_background`.
    ClaudeBash,
}

/// One background task that waits, reading a FIFO, until the test lets it end; its
/// last act is to write the wall-clock time it ended at.
struct Gated {
    fifo: PathBuf,
    stamp: PathBuf,
}

impl Gated {
    fn new(dir: &Path, name: &str) -> Self {
        let fifo = dir.join(format!("{name}.go"));
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", fifo.display());
        Self {
            fifo,
            stamp: dir.join(format!("{name}.ended")),
        }
    }

    fn command(&self) -> String {
        format!(
            "cat {} > /dev/null; date +%s%N > {}",
            self.fifo.display(),
            self.stamp.display()
        )
    }

    /// The model's call that starts the task in the background.
    fn call(&self, runner: Runner) -> ToolCall {
        match runner {
            Runner::Zidane => Host::ClaudeCode.call(
                "shell",
                json!({ "command": self.command(), "run_in_background": true }),
            ),
            Runner::ClaudeBash => ToolCall {
                name: "Bash".to_owned(),
                namespace: None,
                arguments: json!({
                    "command": self.command(),
                    "description": "Wait for the go",
                    "run_in_background": true,
                }),
            },
        }
    }

    /// Lets the task end: opens the FIFO's write end (once the task reads it) and
    /// closes it, which ends the task's `cat`.
    async fn release(&self) {
        let deadline = tokio::time::Instant::now() + GONE_WAIT;
        let mut sender = loop {
            match tokio::net::unix::pipe::OpenOptions::new().open_sender(&self.fifo) {
                Ok(sender) => break sender,
                // No reader yet (ENXIO): the task has not opened its end.
                Err(error) => {
                    assert!(
                        tokio::time::Instant::now() < deadline,
                        "nobody reads {}: {error}",
                        self.fifo.display()
                    );
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        };
        sender.write_all(b"go\n").await.unwrap();
    }

    /// When the task ended, by the wall clock.
    fn ended(&self) -> SystemTime {
        let text = std::fs::read_to_string(&self.stamp)
            .unwrap_or_else(|error| panic!("{}: {error}", self.stamp.display()));
        let nanos: u64 = text.trim().parse().unwrap();
        SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos)
    }
}

/// A monotonic instant read as wall-clock time, by one reading of both clocks.
struct Clocks {
    wall: SystemTime,
    mono: Instant,
}

impl Clocks {
    fn now() -> Self {
        Self {
            wall: SystemTime::now(),
            mono: Instant::now(),
        }
    }

    fn wall(&self, at: Instant) -> SystemTime {
        self.wall + at.duration_since(self.mono)
    }
}

/// One round of a wake measurement: a background start, the model's text ending the
/// turn, the task let go a while later; the next main request is the wake.
struct WakeRound {
    runner: Runner,
    gated: Gated,
    /// The step whose text ends the turn after the start.
    idle_step: usize,
    /// How long after that text the task is let go: spread over a second so the exits
    /// fall at every phase of a host's poll cycle.
    after: Duration,
}

/// The wakes by zidane's MCP task and by Claude Code's own background `Bash`, and what
/// the model was handed by the first of each.
async fn wakes() -> Option<(Vec<Duration>, Vec<Duration>, Vec<String>)> {
    let sandbox = Sandbox::new(Host::ClaudeCode)?;
    if !tmux_present() {
        return None;
    }
    let dir = sandbox.root().join("work");
    let mut steps = Vec::new();
    let mut rounds = Vec::new();
    for round in 0..=WAKE_ROUNDS {
        for runner in [Runner::Zidane, Runner::ClaudeBash] {
            let gated = Gated::new(&dir, &format!("{runner:?}-{round}"));
            steps.push(Step::call(gated.call(runner)));
            steps.push(Step::text("Started; I will hear when it ends."));
            let spread =
                u64::try_from(round * 2 + usize::from(runner == Runner::ClaudeBash)).unwrap() * 389
                    % 1000;
            rounds.push(WakeRound {
                runner,
                gated,
                idle_step: steps.len() - 1,
                after: Duration::from_millis(500 + spread),
            });
        }
    }
    steps.push(Step::text("Measured."));
    let model = ScriptedModel::start(SERVER, steps).await.unwrap();
    let clocks = Clocks::now();
    let release = async {
        for round in &rounds {
            let failure = format!(
                "the model never ended the turn of step {}:\n{}",
                round.idle_step,
                describe(&model.exchanges())
            );
            poll_until(WAKE_BOUND, Duration::from_millis(10), &failure, || {
                model.main_requests().len() > round.idle_step
            })
            .await;
            // The exit's phase against the host's poll cycle, not a wait for an event.
            tokio::time::sleep(round.after).await;
            round.gated.release().await;
        }
    };
    tokio::join!(
        claude_tasks::drive(&sandbox, &model, &["Bash"], WAKE_BOUND, || false),
        release
    );
    let requests = model.main_requests();
    let (mut by_zidane, mut by_bash, mut handed) = (Vec::new(), Vec::new(), Vec::new());
    for (index, round) in rounds.iter().enumerate() {
        let wake = &requests[round.idle_step + 1];
        let woke = clocks.wall(wake.received);
        let ended = round.gated.ended();
        let took = woke.duration_since(ended).unwrap_or_else(|_| {
            panic!(
                "{:?} round {index}: the model was woken before the task ended",
                round.runner
            )
        });
        if index < 2 {
            handed.push(format!(
                "{:?}: {}",
                round.runner,
                wake.body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ));
            continue;
        }
        match round.runner {
            Runner::Zidane => by_zidane.push(took),
            Runner::ClaudeBash => by_bash.push(took),
        }
    }
    Some((by_zidane, by_bash, handed))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run on purpose, read its output"]
async fn wake_after_a_background_task_ends() {
    let Some((by_zidane, by_bash, handed)) = wakes().await else {
        return;
    };
    for line in handed {
        println!("woken with {line}");
    }
    println!(
        "| task ended → model woken (interactive Claude Code) | n | p50 | max | samples (ms) |"
    );
    println!("|---|---|---|---|---|");
    for (name, mut samples) in [
        ("zidane `shell` (MCP task)", by_zidane),
        ("Claude Code's own `Bash` (run_in_background)", by_bash),
    ] {
        let listed: Vec<String> = samples
            .iter()
            .map(|d| format!("{:.0}", d.as_secs_f64() * 1000.0))
            .collect();
        let fields = percentiles(&mut samples);
        println!(
            "| {name} | {} | {} | {} | {} |",
            fields["n"],
            ms(&fields, "p50_us"),
            ms(&fields, "max_us"),
            listed.join(" ")
        );
    }
}

/// CPU time (user + system, with reaped children) of a process so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    // The fields after the command, which is in parentheses and may hold spaces.
    let Some((_, rest)) = stat.rsplit_once(") ") else {
        return 0;
    };
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime, stime, cutime, cstime: fields 14–17 of the whole line.
    fields[11..15]
        .iter()
        .map(|field| field.parse::<u64>().unwrap_or(0))
        .sum()
}

/// The sandbox's processes by what they are: `zidane mcp`, Claude Code (its binary and
/// any helper it runs), and the rest (the background tasks).
fn classify(sandbox: &Sandbox) -> (Vec<u32>, Vec<u32>) {
    let (mut zidane, mut claude) = (Vec::new(), Vec::new());
    for pid in sandbox.processes() {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        if exe == Path::new(BIN) {
            zidane.push(pid);
        } else if exe.to_string_lossy().contains("claude") {
            claude.push(pid);
        }
    }
    (zidane, claude)
}

fn ticks_of(pids: &[u32]) -> u64 {
    pids.iter().map(|&pid| cpu_ticks(pid)).sum()
}

/// The CPU time `zidane mcp` and Claude Code spend over [`IDLE_WINDOW`]: `(zidane,
/// claude)` in milliseconds.
async fn idle_cpu(sandbox: &Sandbox) -> (f64, f64) {
    let tick_ms = 1000.0
        / String::from_utf8(
            std::process::Command::new("getconf")
                .arg("CLK_TCK")
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .parse::<f64>()
        .unwrap();
    let (zidane, claude) = classify(sandbox);
    assert!(
        !zidane.is_empty() && !claude.is_empty(),
        "no zidane or claude process"
    );
    let before = (ticks_of(&zidane), ticks_of(&claude));
    tokio::time::sleep(IDLE_WINDOW).await;
    let after = (ticks_of(&zidane), ticks_of(&claude));
    #[allow(clippy::cast_precision_loss)]
    (
        (after.0 - before.0) as f64 * tick_ms,
        (after.1 - before.1) as f64 * tick_ms,
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run on purpose, read its output"]
async fn cpu_while_a_background_task_runs_idle() {
    let Some(sandbox) = Sandbox::new(Host::ClaudeCode) else {
        return;
    };
    if !tmux_present() {
        return;
    }
    let dir = sandbox.root().join("work");
    let by_zidane = Gated::new(&dir, "idle-zidane");
    let by_bash = Gated::new(&dir, "idle-bash");
    let steps = vec![
        Step::call(by_zidane.call(Runner::Zidane)),
        Step::text("Started; I will hear when it ends."),
        Step::call(by_bash.call(Runner::ClaudeBash)),
        Step::text("Started; I will hear when it ends."),
        Step::text("Both ended."),
    ];
    let model = ScriptedModel::start(SERVER, steps).await.unwrap();
    // The CPU time of a window once the model's turn `after` has ended (Claude Code
    // idle), then `release` lets its task end.
    let idle_after = async |step: usize, release: Option<&Gated>| {
        let failure = format!(
            "the model was never asked for step {step}:\n{}",
            describe(&model.exchanges())
        );
        poll_until(HOST_WAIT, Duration::from_millis(10), &failure, || {
            model.main_requests().len() > step
        })
        .await;
        let cpu = idle_cpu(&sandbox).await;
        if let Some(gated) = release {
            gated.release().await;
        }
        cpu
    };
    let measuring = std::cell::Cell::new(true);
    let measure = async {
        let load = load_average();
        let zidane_running = idle_after(1, Some(&by_zidane)).await;
        let bash_running = idle_after(3, Some(&by_bash)).await;
        let quiet = idle_after(4, None).await;
        measuring.set(false);
        (load, zidane_running, bash_running, quiet)
    };
    let bound = HOST_WAIT + 3 * IDLE_WINDOW;
    let ((), (load, zidane_running, bash_running, quiet)) = tokio::join!(
        claude_tasks::drive(&sandbox, &model, &["Bash"], bound, || measuring.get()),
        measure
    );
    println!("load average at the start: {load}");
    println!(
        "| {}s window, Claude Code idle | zidane mcp CPU | claude CPU |",
        IDLE_WINDOW.as_secs()
    );
    println!("|---|---|---|");
    for (name, (zidane, claude)) in [
        (
            "a zidane background task running (an MCP task)",
            zidane_running,
        ),
        ("a Claude Code `Bash` background task running", bash_running),
        ("nothing running", quiet),
    ] {
        println!("| {name} | {zidane:.0} ms | {claude:.0} ms |");
    }
}
