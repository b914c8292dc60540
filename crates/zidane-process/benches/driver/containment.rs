//! The driver's `escape` and `orphan` ops (bench-protocol.md), its own `lifeline` op,
//! and the hidden `orphan-host` and `lifeline-host` sub-ops that `orphan` and
//! `lifeline` run in a copy of the driver.
//!
//! To wire in `driver.rs`: `#[path = "driver/containment.rs"] mod containment;` and
//! dispatch `escape N`, `orphan N`, `lifeline N`, `orphan-host N TOKEN` and
//! `lifeline-host TOKEN` to the functions below. Each op returns its JSON line; `ok` is
//! false when anything survived.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zidane_context::{BackgroundOptions, ExecutionContext};
use zidane_process::ProcessContext;

/// The variable that tags the `escape` op's processes.
const ESCAPE_TOKEN_VAR: &str = "BENCH_ESCAPE_TOKEN";
/// The variable that tags the `orphan` op's processes.
const ORPHAN_TOKEN_VAR: &str = "BENCH_ORPHAN_TOKEN";
/// The variable that tags the `lifeline` op's processes.
const LIFELINE_TOKEN_VAR: &str = "BENCH_LIFELINE_TOKEN";
/// The hidden sub-op's name.
pub const ORPHAN_HOST_OP: &str = "orphan-host";
/// The hidden sub-op of `lifeline`.
pub const LIFELINE_HOST_OP: &str = "lifeline-host";
/// What each `lifeline` host runs: two plain tasks and one whose grandchild leaves its
/// session, so only the owner marker ties it to the host.
const LIFELINE_TASKS: &[&str] = &["sleep 1000", "sleep 1000", ESCAPING];
/// How many of a `lifeline` host's processes run once its escapee does: at least the
/// two plain tasks, the escaping task's shell and its `sleep`, and the escapee.
const LIFELINE_PROCESSES: usize = 4;
/// Longest a `lifeline` host waits for its escapee to run, and the driver for a dead
/// host's processes to be gone.
const LIFELINE_WAIT: Duration = Duration::from_secs(10);
/// How long the driver sleeps between two looks for a dead host's processes.
const LIFELINE_POLL: Duration = Duration::from_millis(1);
/// The escaping command of the `escape` op.
const ESCAPING: &str = "setsid sleep 1000 >/dev/null 2>&1 </dev/null & sleep 1000";
/// How long `escape` lets a task run before the kill.
const SETTLE_BEFORE_KILL: Duration = Duration::from_millis(50);

type OpResult = Result<Value, String>;

/// `escape N`: N times, start the escaping command with a token, wait 50 ms, time kill
/// plus destroy, then count processes holding the token.
pub async fn escape(n: usize, bench_dir: &Path) -> Value {
    let token = token("escape");
    let result = escape_inner(n, bench_dir, &token).await;
    let survivors = end_survivors(ESCAPE_TOKEN_VAR, &token);
    finish("escape", result, survivors)
}

async fn escape_inner(n: usize, bench_dir: &Path, token: &str) -> OpResult {
    let context = ProcessContext::builder()
        .shell(super::protocol_shell())
        .build();
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let handle = context.create_handle().await.map_err(|e| e.to_string())?;
        let options = BackgroundOptions::new(bench_dir).env(ESCAPE_TOKEN_VAR, token);
        let started = context
            .exec_background(handle, ESCAPING, options)
            .await
            .map_err(|e| e.to_string())?;
        tokio::time::sleep(SETTLE_BEFORE_KILL).await;
        let begin = Instant::now();
        context
            .kill_background(handle, started.task_id)
            .await
            .map_err(|e| e.to_string())?;
        context.destroy(handle).await.map_err(|e| e.to_string())?;
        samples.push(begin.elapsed());
    }
    let survivors = holders(ESCAPE_TOKEN_VAR, token).len();
    Ok(json!({ "n": n, "survivors": survivors, "p50_us": p50_us(&mut samples) }))
}

/// `orphan N`: a copy of the driver starts N tasks and SIGKILLs itself; a fresh
/// context's sweep must end them all.
pub async fn orphan(n: usize, bench_dir: &Path) -> Value {
    let token = token("orphan");
    let result = orphan_inner(n, bench_dir, &token).await;
    let survivors = end_survivors(ORPHAN_TOKEN_VAR, &token);
    finish("orphan", result, survivors)
}

async fn orphan_inner(n: usize, bench_dir: &Path, token: &str) -> OpResult {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let status = Command::new(exe)
        .args([ORPHAN_HOST_OP, &n.to_string(), token])
        .env("BENCH_DIR", bench_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if std::os::unix::process::ExitStatusExt::signal(&status) != Some(9) {
        return Err(format!("the orphan host did not SIGKILL itself: {status}"));
    }
    let orphans = holders(ORPHAN_TOKEN_VAR, token);
    if orphans.is_empty() {
        return Err("the orphan host left no task behind".into());
    }
    let begin = Instant::now();
    let swept = ProcessContext::new()
        .sweep_orphans()
        .await
        .map_err(|e| e.to_string())?;
    let sweep_us = micros(begin.elapsed());
    let swept = swept.iter().filter(|s| orphans.contains(&s.pid)).count();
    let survivors = holders(ORPHAN_TOKEN_VAR, token).len();
    Ok(json!({ "n": n, "survivors": survivors, "swept": swept, "sweep_us": sweep_us }))
}

/// The hidden sub-op: N background `sleep 1000` with the token, then SIGKILL to self.
/// Only returns on failure.
pub async fn orphan_host(n: usize, token: &str, bench_dir: &Path) -> String {
    // Without a lifeline, which would end the tasks the moment the host dies and leave
    // the sweep nothing (or a racing part) to end: this op is the sweep's.
    let context = ProcessContext::builder()
        .max_background_tasks(n)
        .shell(super::protocol_shell())
        .lifeline(false)
        .build();
    let handle = match context.create_handle().await {
        Ok(handle) => handle,
        Err(error) => return error.to_string(),
    };
    for _ in 0..n {
        let options = BackgroundOptions::new(bench_dir).env(ORPHAN_TOKEN_VAR, token);
        if let Err(error) = context.exec_background(handle, "sleep 1000", options).await {
            return error.to_string();
        }
    }
    let me = nix::unistd::Pid::this();
    match nix::sys::signal::kill(me, nix::sys::signal::Signal::SIGKILL) {
        Ok(()) => "SIGKILL did not end the orphan host".into(),
        Err(error) => error.to_string(),
    }
}

/// `lifeline N`: N rounds of a copy of the driver that starts [`LIFELINE_TASKS`] on a
/// context with its lifeline (the default) and SIGKILLs itself once the escapee runs;
/// each round times, from the moment the host's `waitpid` returns, until the last
/// process holding its token is gone (looking every [`LIFELINE_POLL`]). Nothing but
/// the lifeline ends them: the driver sweeps nothing, and ends survivors itself only
/// after [`LIFELINE_WAIT`], as a failure.
pub async fn lifeline(n: usize, bench_dir: &Path) -> Value {
    let token = token("lifeline");
    let result = lifeline_inner(n, bench_dir, &token).await;
    let survivors = end_survivors(LIFELINE_TOKEN_VAR, &token);
    finish("lifeline", result, survivors)
}

async fn lifeline_inner(n: usize, bench_dir: &Path, token: &str) -> OpResult {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut samples = Vec::with_capacity(n);
    let mut at_death = Vec::with_capacity(n);
    let mut survivors = 0;
    for _ in 0..n {
        let status = Command::new(&exe)
            .args([LIFELINE_HOST_OP, token])
            .env("BENCH_DIR", bench_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        let died = Instant::now();
        if std::os::unix::process::ExitStatusExt::signal(&status) != Some(9) {
            return Err(format!(
                "the lifeline host did not SIGKILL itself: {status}"
            ));
        }
        // Between two full scans, only the pids a scan found are looked at: a scan
        // reads every process's environment, dearer than the resolution wanted here.
        let mut marked = holders(LIFELINE_TOKEN_VAR, token);
        at_death.push(marked.len());
        let gone = loop {
            marked.retain(|&pid| is_live(pid));
            if marked.is_empty() {
                let took = died.elapsed();
                // Confirmed by a full scan: a process caught inside `execve` by the
                // first one showed no environment then.
                marked = holders(LIFELINE_TOKEN_VAR, token);
                if marked.is_empty() {
                    break Some(took);
                }
            }
            if died.elapsed() > LIFELINE_WAIT {
                break None;
            }
            tokio::time::sleep(LIFELINE_POLL).await;
        };
        match gone {
            Some(took) => samples.push(took),
            None => survivors += end_survivors(LIFELINE_TOKEN_VAR, token),
        }
    }
    at_death.sort_unstable();
    let mut fields = zidane_test_support::percentiles(&mut samples);
    fields.insert("n".into(), json!(n));
    fields.insert("survivors".into(), json!(survivors));
    fields.insert(
        "processes_at_death_p50".into(),
        json!(
            at_death
                .get(n.div_ceil(2).saturating_sub(1))
                .copied()
                .unwrap_or(0)
        ),
    );
    Ok(Value::Object(fields))
}

/// The hidden sub-op of `lifeline`: [`LIFELINE_TASKS`] with the token on a context with
/// its lifeline, then, once the escapee leads its own session, SIGKILL to self. Only
/// returns on failure.
pub async fn lifeline_host(token: &str, bench_dir: &Path) -> String {
    let context = ProcessContext::builder()
        .shell(super::protocol_shell())
        .build();
    let handle = match context.create_handle().await {
        Ok(handle) => handle,
        Err(error) => return error.to_string(),
    };
    for command in LIFELINE_TASKS {
        let options = BackgroundOptions::new(bench_dir).env(LIFELINE_TOKEN_VAR, token);
        if let Err(error) = context.exec_background(handle, command, options).await {
            return error.to_string();
        }
    }
    let deadline = Instant::now() + LIFELINE_WAIT;
    loop {
        let running = holders(LIFELINE_TOKEN_VAR, token);
        if running.len() >= LIFELINE_PROCESSES && running.iter().any(|&pid| leads_session(pid)) {
            break;
        }
        if Instant::now() > deadline {
            return format!("the escapee did not start: {running:?}");
        }
        tokio::time::sleep(LIFELINE_POLL).await;
    }
    let me = nix::unistd::Pid::this();
    match nix::sys::signal::kill(me, nix::sys::signal::Signal::SIGKILL) {
        Ok(()) => "SIGKILL did not end the lifeline host".into(),
        Err(error) => error.to_string(),
    }
}

/// Whether `pid` leads a session of its own (field 6 of `/proc/<pid>/stat`): the
/// escapee, after `setsid`.
fn leads_session(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, fields) = stat.rsplit_once(')')?;
            fields.split_whitespace().nth(3)?.parse::<u32>().ok()
        })
        == Some(pid)
}

fn finish(op: &str, result: OpResult, survivors_ended: usize) -> Value {
    match result {
        Ok(mut fields) => {
            let survivors = fields["survivors"].as_u64().unwrap_or(u64::MAX);
            fields["op"] = json!(op);
            fields["ok"] = json!(survivors == 0);
            if survivors != 0 {
                fields["error"] = json!(format!("{survivors} processes survived"));
            }
            fields
        }
        Err(error) => json!({
            "op": op, "ok": false, "error": error, "survivors": survivors_ended,
        }),
    }
}

/// Live processes whose environment holds `var=token` (zombies excluded).
fn holders(var: &str, token: &str) -> Vec<u32> {
    let entry = format!("{var}={token}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            is_live(pid)
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        })
        .collect()
}

/// Whether `pid` names a live process (not a zombie).
fn is_live(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rfind(')')
                .and_then(|i| s[i + 1..].trim_start().chars().next())
        })
        .is_some_and(|state| !matches!(state, 'Z' | 'X'))
}

/// Ends whatever still holds the token, so the driver leaves nothing behind; returns
/// how many it found.
fn end_survivors(var: &str, token: &str) -> usize {
    let survivors = holders(var, token);
    for pid in &survivors {
        if let Ok(raw) = i32::try_from(*pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(raw),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    survivors.len()
}

fn token(op: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{op}-{}-{nanos}", std::process::id())
}

/// Nearest-rank p50 in microseconds.
fn p50_us(samples: &mut [Duration]) -> u64 {
    samples.sort();
    match samples.len() {
        0 => 0,
        len => micros(samples[len.div_ceil(2) - 1]),
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
