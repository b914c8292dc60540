//! The agent-level ops of the benchmark driver, speaking the same one-JSON-line protocol
//! as `zidane-process`'s driver (see `bench-protocol.md` in the shared tree) for what
//! only a whole agent can show:
//!
//! | op | arg | what it measures |
//! |---|---|---|
//! | `wake` | `N` | N times, the agent idle: start `true` through the agent's `shell` tool; time from the start until the model is called in the `WakeLoop`'s drain-only run (the process driver's `roundtrip`, plus delivery). Compare with `roundtrip`'s p50 of the same run. |
//! | `idle` | `SECONDS` | an agent with its wake loop and 8 background `sleep` tasks; the CPU time this process uses over `SECONDS` while nothing happens (`cpu_ms`). |
//! | `ready` | `N` | N times: a task prints its ready line 100 ms after start; time from the write (the task stamps it with bash's `$EPOCHREALTIME`) until `wait_task` with `until: {pattern}` returns. |
//! | `event` | `N` | a task with `notify_on` prints N stamped matching lines, 5 ms apart; time from each write until its event is queued (the `background:event` hook). |
//! | `event-wake` | `N` | N times, the agent idle: a task with `notify_on` prints one stamped matching line 100 ms after start; time from the write until the model is called in the `WakeLoop`'s drain-only run. |
//! | `event-cost` | `MIB` | a task writes MIB MiB of 100-byte lines, with a `notify_on` pattern that never matches and with none; time from the start until its exit is told (`drain_notifications`), the median of five interleaved rounds each, and `ratio`, the throughput with the pattern over the throughput without (target ≥ 0.9). |
//!
//! ```text
//! cargo bench -p zidane --bench agent_driver -- <op> <arg>
//! ```
//!
//! Logs go under `$BENCH_DIR` (default: a fresh temporary directory).

// A driver's whole interface is one line on stdout; progress goes to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use zidane::agent::{Agent, Behavior, HookEvent, ModelResponse, ScriptedModel, ToolCall, WakeLoop};
use zidane::context::ExecutionContext;
use zidane::process::{ProcessContext, SH_PATH, Shell};
use zidane::tools::{ToolContext, ToolRegistry};
use zidane_test_support::{percentiles, print_driver_line, round1};

type Fields = Map<String, Value>;

/// Longest any one step of an op may take before the run is declared failed.
const STEP: Duration = Duration::from_secs(30);
/// Tasks the `idle` op keeps running.
const IDLE_TASKS: usize = 8;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| arg != "--bench")
        .collect();
    let op = args.first().cloned().unwrap_or_default();
    let arg = args.get(1).and_then(|a| a.parse::<u64>().ok());
    let result = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run(&op, arg)),
        Err(error) => Err(error.to_string()),
    };
    match result {
        Ok(fields) => print_driver_line(&op, fields, None),
        Err(error) => print_driver_line(&op, Fields::new(), Some(error)),
    }
}

async fn run(op: &str, arg: Option<u64>) -> Result<Fields, String> {
    let dir = bench_dir()?;
    match (op, arg) {
        ("wake", Some(n)) => wake(n, &dir.path).await,
        ("idle", Some(seconds)) => idle(Duration::from_secs(seconds), &dir.path).await,
        ("ready", Some(n)) => ready(n, &dir.path).await,
        ("event", Some(n)) => event(n, &dir.path).await,
        ("event-wake", Some(n)) => event_wake(n, &dir.path).await,
        ("event-cost", Some(mib)) => event_cost(mib, &dir.path).await,
        _ => Err(format!(
            "usage: agent_driver <wake N | idle SECONDS | ready N | event N | event-wake N | \
             event-cost MIB>, got {op:?}"
        )),
    }
}

/// `$BENCH_DIR`, or a temporary directory removed when dropped.
struct BenchDir {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

fn bench_dir() -> Result<BenchDir, String> {
    match std::env::var_os("BENCH_DIR") {
        Some(dir) => {
            let path = PathBuf::from(dir).join("agent");
            std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
            Ok(BenchDir { path, _temp: None })
        }
        None => {
            let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
            Ok(BenchDir {
                path: temp.path().to_owned(),
                _temp: Some(temp),
            })
        }
    }
}

fn background(command: &str) -> Value {
    json!({ "command": command, "run_in_background": true })
}

async fn wake(n: u64, dir: &std::path::Path) -> Result<Fields, String> {
    let (called, mut calls) = mpsc::unbounded_channel::<Instant>();
    let mut model = ScriptedModel::new();
    for _ in 0..n {
        let called = called.clone();
        model = model.react(move |_| {
            let _ = called.send(Instant::now());
            ModelResponse::text("woken")
        });
    }
    let context = Arc::new(ProcessContext::builder().shell(Shell::new(SH_PATH)).build());
    let agent = Agent::builder(Arc::new(model), context)
        .behavior(Behavior::new().tasks_dir(dir.join("wake")))
        .build()
        .map_err(|e| e.to_string())?;
    let wake = WakeLoop::spawn(agent.clone());
    // The handle is made before the clock starts, as a running agent's already is.
    agent.handle().await.map_err(|e| e.to_string())?;
    let mut samples = Vec::new();
    for i in 0..n {
        // Started as the model's `shell` tool starts it, while the agent is idle.
        let call = ToolCall::new(format!("wake-{i}"), "shell", background("true"));
        let start = Instant::now();
        let started = agent.call_tool(call).await.map_err(|e| e.to_string())?;
        if started.is_error {
            return Err(started.text);
        }
        let at = tokio::time::timeout(STEP, calls.recv())
            .await
            .map_err(|_| "no wake-up within the step bound".to_owned())?
            .ok_or("the model is gone")?;
        samples.push(at.duration_since(start));
        // The wake run has ended before the next start, so every start finds the agent idle.
        wake.next_wake().await.map_err(|e| e.to_string())?;
    }
    drop(wake);
    agent.destroy().await.map_err(|e| e.to_string())?;
    Ok(percentiles(&mut samples))
}

async fn idle(window: Duration, dir: &std::path::Path) -> Result<Fields, String> {
    let sleep = format!("sleep {}", window.as_secs() + 5);
    let mut first = ModelResponse::default();
    for i in 0..IDLE_TASKS {
        first = first.with_tool_use(format!("t{i}"), "shell", background(&sleep));
    }
    let model = ScriptedModel::new()
        .respond(first)
        .text("eight tasks started");
    let agent = zidane::local_agent(Arc::new(model), dir.join("idle"))
        .build()
        .map_err(|e| e.to_string())?;
    let wake = WakeLoop::spawn(agent.clone());
    wake.prompt("start eight tasks")
        .await
        .map_err(|e| e.to_string())?;
    let running = agent.running_tasks().await.map_err(|e| e.to_string())?;
    if running.len() != IDLE_TASKS {
        return Err(format!("{} tasks running, not {IDLE_TASKS}", running.len()));
    }
    let before = cpu_time()?;
    tokio::time::sleep(window).await;
    let used = cpu_time()?.saturating_sub(before);
    drop(wake);
    agent.destroy().await.map_err(|e| e.to_string())?;
    let mut fields = Fields::new();
    fields.insert("seconds".into(), json!(window.as_secs()));
    fields.insert("tasks".into(), json!(IDLE_TASKS));
    fields.insert("cpu_ms".into(), json!(round1(used.as_secs_f64() * 1e3)));
    Ok(fields)
}

/// CPU time of every thread of this process so far (`/proc/self/task/*/schedstat`, in
/// nanoseconds: finer than the clock ticks of `/proc/self/stat`).
fn cpu_time() -> Result<Duration, String> {
    let mut total = 0_u64;
    let threads = std::fs::read_dir("/proc/self/task").map_err(|e| e.to_string())?;
    for thread in threads.flatten() {
        let Ok(text) = std::fs::read_to_string(thread.path().join("schedstat")) else {
            continue; // a thread that just ended
        };
        let ns = text
            .split_ascii_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("unreadable schedstat: {text:?}"))?;
        total += ns;
    }
    Ok(Duration::from_nanos(total))
}

async fn ready(n: u64, dir: &std::path::Path) -> Result<Fields, String> {
    let context = Arc::new(ProcessContext::new());
    if !context.shell().is_bash() {
        return Err("the ready op needs bash (for $EPOCHREALTIME)".into());
    }
    let handle = context.create_handle().await.map_err(|e| e.to_string())?;
    let tools = ToolContext::new(context.clone(), handle).with_tasks_dir(dir.join("ready"));
    let registry = ToolRegistry::with_default_tools().map_err(|e| e.to_string())?;
    let mut samples = Vec::new();
    for _ in 0..n {
        let started = registry
            .dispatch(
                &tools,
                "shell",
                background("sleep 0.1; echo \"READY $EPOCHREALTIME\"; sleep 0.05"),
            )
            .await;
        let task_id = started.data["task_id"]
            .as_str()
            .ok_or(started.text.clone())?
            .to_owned();
        let waited = tokio::time::timeout(
            STEP,
            registry.dispatch(
                &tools,
                "wait_task",
                json!({ "task_id": task_id, "until": { "pattern": "^READY ([0-9.]+)$" } }),
            ),
        )
        .await
        .map_err(|_| "wait_task did not return within the step bound".to_owned())?;
        let returned = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?;
        let written = waited.data["groups"][0]
            .as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| format!("no ready stamp: {}", waited.text))?;
        samples.push(returned.saturating_sub(Duration::from_secs_f64(written)));
        context
            .wait_background(
                handle,
                zidane::context::TaskId::parse(&task_id).map_err(|e| e.to_string())?,
                STEP,
                zidane::context::CancellationToken::new(),
            )
            .await
            .map_err(|e| e.to_string())?;
    }
    context.destroy(handle).await.map_err(|e| e.to_string())?;
    Ok(percentiles(&mut samples))
}

/// The time since the epoch stamped at the end of `line` (bash's `$EPOCHREALTIME`).
fn stamp_of(line: &str) -> Option<Duration> {
    let stamp = line.rsplit(' ').next()?.parse::<f64>().ok()?;
    Some(Duration::from_secs_f64(stamp))
}

fn since_epoch() -> Result<Duration, String> {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())
}

async fn event(n: u64, dir: &std::path::Path) -> Result<Fields, String> {
    let context = Arc::new(ProcessContext::new());
    if !context.shell().is_bash() {
        return Err("the event op needs bash (for $EPOCHREALTIME)".into());
    }
    let agent = Agent::host_driven(context)
        .behavior(Behavior::new().tasks_dir(dir.join("event")))
        .build()
        .map_err(|e| e.to_string())?;
    let (queued, mut lags) = mpsc::unbounded_channel::<Option<Duration>>();
    agent.hooks().subscribe(move |event| {
        if let HookEvent::BackgroundEvent(event) = event {
            let now = since_epoch().ok();
            let lag = now
                .zip(stamp_of(&event.line))
                .map(|(now, stamp)| now.saturating_sub(stamp));
            let _ = queued.send(lag);
        }
    });
    let command = format!(
        "i=0; while [ $i -lt {n} ]; do echo \"EV $EPOCHREALTIME\"; sleep 0.005; i=$((i+1)); done"
    );
    let mut input = background(&command);
    input["notify_on"] = json!("^EV ");
    let started = agent
        .call_tool(ToolCall::new("event", "shell", input))
        .await
        .map_err(|e| e.to_string())?;
    if started.is_error {
        return Err(started.text);
    }
    let mut samples = Vec::new();
    for _ in 0..n {
        let lag = tokio::time::timeout(STEP, lags.recv())
            .await
            .map_err(|_| "no event within the step bound".to_owned())?
            .ok_or("the hook is gone")?
            .ok_or("an event without a stamp")?;
        samples.push(lag);
    }
    agent.destroy().await.map_err(|e| e.to_string())?;
    Ok(percentiles(&mut samples))
}

async fn event_wake(n: u64, dir: &std::path::Path) -> Result<Fields, String> {
    let (called, mut calls) = mpsc::unbounded_channel::<Option<Duration>>();
    let mut model = ScriptedModel::new();
    // An event run and an exit run per task, with room to spare.
    for _ in 0..n * 3 {
        let called = called.clone();
        model = model.react(move |request| {
            let now = since_epoch().ok();
            let lag = request
                .task_events()
                .first()
                .and_then(|block| block.lines.first())
                .and_then(|line| stamp_of(&line.line))
                .zip(now)
                .map(|(stamp, now)| now.saturating_sub(stamp));
            let _ = called.send(lag);
            ModelResponse::text("woken")
        });
    }
    let context = Arc::new(ProcessContext::new());
    if !context.shell().is_bash() {
        return Err("the event-wake op needs bash (for $EPOCHREALTIME)".into());
    }
    let agent = Agent::builder(Arc::new(model), context)
        .behavior(Behavior::new().tasks_dir(dir.join("event-wake")))
        .build()
        .map_err(|e| e.to_string())?;
    let wake = WakeLoop::spawn(agent.clone());
    agent.handle().await.map_err(|e| e.to_string())?;
    let mut samples = Vec::new();
    for i in 0..n {
        let mut input = background("sleep 0.1; echo \"EV $EPOCHREALTIME\"; sleep 0.2");
        input["notify_on"] = json!("^EV ");
        let started = agent
            .call_tool(ToolCall::new(format!("event-wake-{i}"), "shell", input))
            .await
            .map_err(|e| e.to_string())?;
        if started.is_error {
            return Err(started.text);
        }
        // The first wake tells the event; the task's exit wakes the model once more.
        let mut lag = None;
        let mut exit_told = false;
        while lag.is_none() || !exit_told {
            let woken = tokio::time::timeout(STEP, wake.next_wake())
                .await
                .map_err(|_| "no wake-up within the step bound".to_owned())?
                .map_err(|e| e.to_string())?;
            exit_told |= !woken.notified.is_empty();
            while let Ok(seen) = calls.try_recv() {
                lag = lag.or(seen);
            }
        }
        samples.push(lag.unwrap_or_default());
    }
    drop(wake);
    agent.destroy().await.map_err(|e| e.to_string())?;
    Ok(percentiles(&mut samples))
}

/// Rounds of `event-cost`, each task once per round.
const COST_ROUNDS: usize = 5;
/// A line of the `event-cost` task: 99 bytes and its newline.
const COST_LINE: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

async fn event_cost(mib: u64, dir: &std::path::Path) -> Result<Fields, String> {
    let bytes = mib * 1024 * 1024;
    let command = format!("yes {COST_LINE} | head -c {bytes}");
    // Interleaved rounds, so both runs see the same machine, and the median of each.
    let mut timed: [Vec<Duration>; 2] = Default::default();
    for round in 0..COST_ROUNDS {
        for (i, notify_on) in [None, Some("^NEVER MATCHES$")].into_iter().enumerate() {
            let name = format!("event-cost-{round}-{i}");
            let context = Arc::new(ProcessContext::new());
            let agent = Agent::host_driven(context)
                .behavior(Behavior::new().tasks_dir(dir.join(&name)))
                .build()
                .map_err(|e| e.to_string())?;
            let mut input = background(&command);
            if let Some(pattern) = notify_on {
                input["notify_on"] = json!(pattern);
            }
            let start = Instant::now();
            let started = agent
                .call_tool(ToolCall::new(name.clone(), "shell", input))
                .await
                .map_err(|e| e.to_string())?;
            if started.is_error {
                return Err(started.text);
            }
            let deadline = start + STEP * 4;
            loop {
                let told = agent
                    .drain_notifications()
                    .await
                    .map_err(|e| e.to_string())?;
                if !told.exits.is_empty() {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("{name}: the exit was not told in time"));
                }
                // A bench's own wait for the end: a millisecond is far below what it
                // measures.
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            timed[i].push(start.elapsed());
            agent.destroy().await.map_err(|e| e.to_string())?;
            std::fs::remove_dir_all(dir.join(&name)).map_err(|e| e.to_string())?;
        }
    }
    let [none, never] = timed.map(|mut times| {
        times.sort();
        times[times.len() / 2]
    });
    let mut fields = Fields::new();
    fields.insert("mib".into(), json!(mib));
    fields.insert("none_ms".into(), json!(round1(none.as_secs_f64() * 1e3)));
    fields.insert("never_ms".into(), json!(round1(never.as_secs_f64() * 1e3)));
    fields.insert(
        "ratio".into(),
        json!((none.as_secs_f64() / never.as_secs_f64() * 100.0).round() / 100.0),
    );
    Ok(fields)
}
