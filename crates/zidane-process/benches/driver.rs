//! Benchmark driver of `bench-protocol.md` (in the shared tree) over [`ProcessContext`],
//! used exactly as a host would: a tokio runtime, a handle, `exec_background` with an
//! `on_exit` callback, `kill_background` — with `/bin/sh` as its shell, as the protocol
//! and the other drivers have it.
//!
//! ```text
//! cargo bench -p zidane-process --bench driver -- <op> <arg>
//! ```
//!
//! Ops: `spawn N`, `roundtrip N`, `throughput BYTES`, `interleave LINES`, `kill N`,
//! `concurrent N`, `escape N`, `orphan N` (and `orphan`'s hidden `orphan-host N TOKEN`),
//! and this driver's own `input N`, `input-tty N` and `spawn-tty N` (see
//! `driver/interactive.rs`) and `lifeline N` (N rounds of a host SIGKILLed with its
//! tasks and an escapee running, timed from its death until its lifeline has ended the
//! last of them; its hidden `lifeline-host TOKEN`; see `driver/containment.rs`). Prints one JSON line on stdout and exits 0, or 1 with `"ok": false`
//! and an `"error"` when a check fails. Logs go under `$BENCH_DIR` (default: a fresh
//! temporary directory). The `--bench` flag cargo appends is ignored.
//!
//! Started by cargo, the driver first execs itself without the variables cargo added
//! (see `driver/cargo_env.rs`), so that its tasks see the environment the other
//! drivers' tasks see.
//!
//! `ZIDANE_BENCH_RUNTIME=current_thread` runs on a current-thread runtime instead of
//! the default multi-thread one (for comparing the two; hosts usually run the latter).
//! `ZIDANE_BENCH_SANDBOX=workspace-write` (or `read-only`) runs every task in that
//! sandbox (bubblewrap on Linux), the op's directory as the workspace, and fails an op
//! whose sandbox is not enforced (see `driver/host.rs`).

// A driver's whole interface is one line on stdout; progress goes to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zidane_context::{ExecutionContext, TtySize};
use zidane_process::{SH_PATH, Shell};
use zidane_test_support::{percentiles, print_driver_line, round1};

/// The shell of every context the driver makes: `/bin/sh`, as the protocol's commands
/// and the other drivers assume (a host's default is bash where it exists).
fn protocol_shell() -> Shell {
    Shell::new(SH_PATH)
}

#[path = "driver/cargo_env.rs"]
mod cargo_env;
#[path = "driver/host.rs"]
mod host;
#[path = "protocol.rs"]
mod protocol;

use host::Host;
use protocol::{Failure, Fields, bench_dir, check_interleave, fail, round3};
#[path = "driver/containment.rs"]
mod containment;
#[path = "driver/interactive.rs"]
mod interactive;

/// The hidden sub-op of `orphan`: `orphan-host N TOKEN` starts N tasks and SIGKILLs
/// itself, so it only returns (with a failure) when something went wrong.
fn orphan_host(args: &[String]) -> ExitCode {
    let (Some(n), Some(token)) = (args.get(1).and_then(|n| n.parse().ok()), args.get(2)) else {
        eprintln!("usage: driver {} N TOKEN", containment::ORPHAN_HOST_OP);
        return ExitCode::FAILURE;
    };
    let error = match bench_dir("bench-zidane-") {
        Ok((dir, _temp)) => match tokio::runtime::Runtime::new() {
            Ok(runtime) => runtime.block_on(containment::orphan_host(n, token, &dir)),
            Err(error) => error.to_string(),
        },
        Err(failure) => failure.error,
    };
    eprintln!("[zidane] orphan-host: {error}");
    ExitCode::FAILURE
}

/// The hidden sub-op of `lifeline`: `lifeline-host TOKEN` starts its tasks and SIGKILLs
/// itself, so it only returns (with a failure) when something went wrong.
fn lifeline_host(args: &[String]) -> ExitCode {
    let Some(token) = args.get(1) else {
        eprintln!("usage: driver {} TOKEN", containment::LIFELINE_HOST_OP);
        return ExitCode::FAILURE;
    };
    let error = match bench_dir("bench-zidane-") {
        Ok((dir, _temp)) => match tokio::runtime::Runtime::new() {
            Ok(runtime) => runtime.block_on(containment::lifeline_host(token, &dir)),
            Err(error) => error.to_string(),
        },
        Err(failure) => failure.error,
    };
    eprintln!("[zidane] lifeline-host: {error}");
    ExitCode::FAILURE
}

/// A containment op's JSON line as this driver's fields (`op` and `ok` are added back
/// by `main`).
fn containment_fields(line: Value) -> Result<Fields, Failure> {
    let mut fields = match line {
        Value::Object(fields) => fields,
        other => return Err(fail(Fields::new(), format!("not an object: {other}"))),
    };
    fields.remove("op");
    let ok = fields.remove("ok") == Some(Value::Bool(true));
    let error = fields.remove("error");
    if ok {
        Ok(fields)
    } else {
        let error = error.and_then(|e| e.as_str().map(str::to_owned));
        Err(fail(fields, error.unwrap_or_else(|| "check failed".into())))
    }
}

fn main() -> ExitCode {
    cargo_env::reexec_without_cargo_env();
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| arg != "--bench")
        .collect();
    let op = args.first().cloned().unwrap_or_default();
    if op == containment::ORPHAN_HOST_OP {
        return orphan_host(&args);
    }
    if op == containment::LIFELINE_HOST_OP {
        return lifeline_host(&args);
    }
    let result = run(&op, args.get(1).map(String::as_str));
    match result {
        Ok(fields) => print_driver_line(&op, fields, None),
        Err(failure) => print_driver_line(&op, failure.fields, Some(failure.error)),
    }
}

fn run(op: &str, arg: Option<&str>) -> Result<Fields, Failure> {
    let n: u64 = arg
        .and_then(|a| a.parse().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("usage: driver <op> <positive integer>, got {arg:?}"))?;
    let (dir, _temp) = bench_dir("bench-zidane-")?;
    eprintln!("[zidane] {op} {n} -> {}", dir.display());
    let runtime = match std::env::var("ZIDANE_BENCH_RUNTIME").as_deref() {
        Ok("current_thread") => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
    };
    let count = usize::try_from(n)?;
    runtime.block_on(async {
        match op {
            "spawn" => spawn(&dir, count, false).await,
            "roundtrip" => roundtrip(&dir, count).await,
            "throughput" => throughput(&dir, n).await,
            "interleave" => interleave(&dir, n).await,
            "kill" => kill(&dir, count).await,
            "concurrent" => concurrent(&dir, count).await,
            "escape" => containment_fields(containment::escape(count, &dir).await),
            "orphan" => containment_fields(containment::orphan(count, &dir).await),
            "lifeline" => containment_fields(containment::lifeline(count, &dir).await),
            "input" => interactive::input(&dir, count, false).await,
            "input-tty" => interactive::input(&dir, count, true).await,
            "spawn-tty" => spawn(&dir, count, true).await,
            other => Err(format!("unknown op {other}").into()),
        }
    })
}

/// `spawn N`; with `tty`, the driver's own `spawn-tty N`: each task in a terminal of
/// its own, what a terminal costs a start.
async fn spawn(dir: &Path, n: usize, tty: bool) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, n).await?;
    host.time_starts(n, "true", |options| {
        if tty {
            options.tty(TtySize::DEFAULT)
        } else {
            options
        }
    })
    .await
}

async fn roundtrip(dir: &Path, n: usize) -> Result<Fields, Failure> {
    Host::new(dir, 1).await?.time_roundtrips(n, "true").await
}

async fn throughput(dir: &Path, bytes: u64) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, 1).await?;
    let (started, exit, seconds) = host.run_once(&format!("head -c {bytes} /dev/zero")).await?;
    let size = std::fs::metadata(&started.output_path)?.len();
    let mut fields = Fields::new();
    fields.insert("bytes".into(), json!(bytes));
    fields.insert("seconds".into(), json!(round3(seconds)));
    fields.insert(
        "mib_per_s".into(),
        json!(round1(bytes as f64 / 1_048_576.0 / seconds)),
    );
    fields.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
    if exit.exit_code != 0 {
        return Err(fail(fields, format!("head exited {}", exit.exit_code)));
    }
    if size != bytes {
        return Err(fail(
            fields,
            format!("log holds {size} bytes, expected {bytes}"),
        ));
    }
    Ok(fields)
}

async fn interleave(dir: &Path, lines: u64) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, 1).await?;
    let command =
        format!("i=0; while [ $i -lt {lines} ]; do echo out$i; echo err$i >&2; i=$((i+1)); done");
    let (started, exit, seconds) = host.run_once(&command).await?;

    let log = std::fs::read(&started.output_path)?;
    let (fields, error) = check_interleave(&log, lines, seconds);
    if exit.exit_code != 0 {
        return Err(fail(fields, format!("loop exited {}", exit.exit_code)));
    }
    if let Some(error) = error {
        return Err(fail(fields, error));
    }
    Ok(fields)
}

async fn kill(dir: &Path, n: usize) -> Result<Fields, Failure> {
    let host = Host::new(dir, 1).await?;
    let mut samples = Vec::with_capacity(n);
    let mut survivors = 0;
    for _ in 0..n {
        let started = host
            .context
            .exec_background(
                host.handle,
                "sh -c 'sleep 1000 & sleep 1000'",
                host.options(),
            )
            .await?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        let t0 = Instant::now();
        let exit = host
            .context
            .kill_background(host.handle, started.task_id)
            .await?
            .ok_or("kill_background did not know the task")?;
        samples.push(t0.elapsed());
        if exit.exit_code != 143 {
            return Err(format!(
                "leader of group {} ended with {}, expected 143",
                started.pid, exit.exit_code
            )
            .into());
        }
        // Like the floor: give the kernel up to 100 ms to finish tearing the group down.
        let mut alive = group_members(started.pid);
        for _ in 0..100 {
            if alive.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            alive = group_members(started.pid);
        }
        if !alive.is_empty() {
            survivors += alive.len();
            for pid in alive {
                kill_pid(pid);
            }
        }
    }
    let mut fields = percentiles(&mut samples);
    fields.insert("survivors".into(), json!(survivors));
    if survivors > 0 {
        return Err(fail(
            fields,
            format!("{survivors} process(es) survived the group kill"),
        ));
    }
    Ok(fields)
}

async fn concurrent(dir: &Path, n: usize) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, n).await?;
    // Warm up (as the floor does) before descriptors are counted.
    host.warm_up("true").await?;
    let fds_before = open_fds();
    let (seconds, bad) = host.start_all(n, "sleep 1").await?;
    let fds_after = open_fds();
    let mut fields = Fields::new();
    fields.insert("n".into(), json!(n));
    fields.insert("seconds".into(), json!(round3(seconds)));
    fields.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
    fields.insert("fds_before".into(), json!(fds_before));
    fields.insert("fds_after".into(), json!(fds_after));
    if bad > 0 {
        return Err(fail(fields, format!("{bad} of {n} tasks exited non-zero")));
    }
    if fds_after > fds_before {
        return Err(fail(
            fields,
            format!("fd leak: {fds_before} before, {fds_after} after"),
        ));
    }
    Ok(fields)
}

/// This process's peak resident set (`VmHWM`), in KiB; -1 if unknown.
fn peak_rss_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(-1)
}

/// Open descriptors of this process (the directory listing's own excluded).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|dir| dir.count().saturating_sub(1))
        .unwrap_or(0)
}

/// Live (non-zombie) members of process group `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some(rest) = stat.rfind(')').and_then(|i| stat.get(i + 2..)) else {
                return false;
            };
            let mut fields = rest.split(' ');
            let state = fields.next().unwrap_or("Z");
            let group = fields.nth(1).and_then(|g| g.parse::<u32>().ok());
            group == Some(pgid) && state != "Z" && state != "X"
        })
        .collect()
}

fn kill_pid(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}
