//! The driver's `escape` and `orphan` ops (bench-protocol.md), and the hidden
//! `orphan-host` sub-op that `orphan` runs in a copy of the driver.
//!
//! To wire in `driver.rs`: `#[path = "driver/containment.rs"] mod containment;` and
//! dispatch `escape N`, `orphan N` and `orphan-host N TOKEN` to the functions below.
//! Each op returns its JSON line; `ok` is false when anything survived.

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
/// The hidden sub-op's name.
pub const ORPHAN_HOST_OP: &str = "orphan-host";
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
    let context = ProcessContext::builder()
        .max_background_tasks(n)
        .shell(super::protocol_shell())
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
        .filter(|pid| {
            let live = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rfind(')')
                        .and_then(|i| s[i + 1..].trim_start().chars().next())
                })
                .is_some_and(|state| !matches!(state, 'Z' | 'X'));
            live && std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        })
        .collect()
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
