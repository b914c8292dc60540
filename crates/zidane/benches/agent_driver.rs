//! The agent-level ops of the benchmark driver, speaking the same one-JSON-line protocol
//! as `zidane-process`'s driver (see `bench-protocol.md` in the shared tree) for what
//! only a whole agent can show:
//!
//! | op | arg | what it measures |
//! |---|---|---|
//! | `wake` | `N` | N times, the agent idle: start `true` through the agent's `shell` tool; time from the start until the model is called in the `WakeLoop`'s drain-only run (the process driver's `roundtrip`, plus delivery). Compare with `roundtrip`'s p50 of the same run. |
//! | `idle` | `SECONDS` | an agent with its wake loop and 8 background `sleep` tasks; the CPU time this process uses over `SECONDS` while nothing happens (`cpu_ms`). |
//! | `ready` | `N` | N times: a task prints its ready line 100 ms after start; time from the write (the task stamps it with bash's `$EPOCHREALTIME`) until `wait_task` with `until: {pattern}` returns. |
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
use zidane::agent::{Agent, Behavior, ModelResponse, ScriptedModel, ToolCall, WakeLoop};
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
        _ => Err(format!(
            "usage: agent_driver <wake N | idle SECONDS | ready N>, got {op:?}"
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
