//! What a detached task costs beside a session task: `zidane ps --json` with many tasks
//! known to the supervisor, the supervisor's memory idle and with those tasks, the
//! `exec_background` call through `SupervisedContext` with `detach` and without, and
//! the time from start until each one's `on_exit` fired. `cargo xtask bench detached`
//! runs it and records its output in the bench results file.
//!
//! ```text
//! cargo build --release -p zidane-cli --bin zidane
//! cargo run --release -p zidane-supervisor --example detached_latency -- target/release/zidane 1000
//! ```
//!
//! Everything runs in a machine of its own: a temp dir holding the workspace, the user
//! dir and a private `XDG_RUNTIME_DIR` (this program runs itself again with it set),
//! so the supervisor and its socket are this run's; the supervisor is killed at the end.
//! Session and detached tasks run in the sandbox `zidane mcp` gives by default:
//! `workspace-write` on the workspace, the user dir unreadable.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zidane_context::{
    BackgroundOptions, ExecutionContext, ExecutionHandle, SandboxPolicy, SandboxStatus,
    TaskExitInfo,
};
use zidane_process::ProcessContext;
use zidane_supervisor::{
    DetachSettings, Launcher, SupervisedContext, SupervisorClient, SupervisorPaths,
};

/// Set in the copy of this program that measures: the machine's root.
const MACHINE_ENV: &str = "ZIDANE_DETACHED_BENCH_ROOT";
/// Starts of each kind before the measured ones (the supervisor is already running:
/// a ping started it, so no measured start pays for that).
const WARMUP: usize = 5;
/// Measured starts of each kind, interleaved.
const ROUNDS: usize = 200;
/// Runs of each `zidane ps --json`, interleaved.
const PS_RUNS: usize = 30;
/// Seeding stops here, whatever the count, and the output says how many were started.
const SEED_BUDGET: Duration = Duration::from_secs(150);
/// The targets.
const PS_TARGET_MS: f64 = 50.0;
const RSS_BASE_KIB: f64 = 20.0 * 1024.0;
const RSS_PER_TASK_KIB: f64 = 20.0;
const START_RATIO_TARGET: f64 = 1.5;
const TOLD_OVER_TARGET_MS: f64 = 5.0;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let binary = args
        .first()
        .map_or_else(|| PathBuf::from("target/release/zidane"), PathBuf::from);
    let binary = std::fs::canonicalize(&binary)
        .unwrap_or_else(|error| panic!("the zidane binary {}: {error}", binary.display()));
    let tasks: usize = args
        .get(1)
        .map_or(1000, |n| n.parse().expect("TASKS is a number"));
    match std::env::var_os(MACHINE_ENV) {
        Some(root) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(measure(&binary, tasks, Path::new(&root)));
            ExitCode::SUCCESS
        }
        None => in_a_machine_of_its_own(&args),
    }
}

/// Runs this program again in a fresh machine, then removes it, ending the supervisor
/// if the run could not.
fn in_a_machine_of_its_own(args: &[String]) -> ExitCode {
    let root = tempfile::Builder::new()
        .prefix("zidane-detached-bench-")
        .tempdir()
        .unwrap();
    let runtime = root.path().join("run");
    for dir in ["run", "user", "plain-user", "empty-user", "work", "logs"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    set_private(&runtime);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(args)
        .env(MACHINE_ENV, root.path())
        .env("XDG_RUNTIME_DIR", &runtime)
        .status()
        .expect("cannot run the measuring copy");
    // Only if the copy died before ending them: the supervisors it recorded, if those
    // pids are still supervisors of this machine.
    for recorded in ["supervisor.pid", "plain-supervisor.pid"] {
        if let Ok(pid) = std::fs::read_to_string(root.path().join(recorded))
            && let Ok(pid) = pid.trim().parse::<u32>()
            && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                String::from_utf8_lossy(&cmdline).contains(&*root.path().to_string_lossy())
            })
        {
            end(pid);
        }
    }
    drop(root);
    if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(unix)]
fn set_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[cfg(not(unix))]
fn set_private(_dir: &Path) {}

/// SIGTERM, then SIGKILL if it is still there after two seconds; waits until it is gone
/// (the client that started it reaps it).
#[cfg(unix)]
fn end(pid: u32) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let pid_t = Pid::from_raw(i32::try_from(pid).unwrap());
    let _ = kill(pid_t, Signal::SIGTERM);
    let gone = || !Path::new(&format!("/proc/{pid}")).exists() || zombie(pid);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !gone() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !gone() {
        let _ = kill(pid_t, Signal::SIGKILL);
    }
}

/// No supervisor runs on Windows: there is nothing to end.
#[cfg(not(unix))]
fn end(_pid: u32) {}

#[cfg(unix)]
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// VmRSS and VmHWM of `pid`, in KiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or_default()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The nearest-rank percentile `p` of `samples` (sorted here).
fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let rank = ((p / 100.0) * samples.len() as f64).ceil().max(1.0) as usize;
    samples[rank.min(samples.len()) - 1]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**not met**" }
}

/// A start: how long the call took, how long until its `on_exit` fired, and how long
/// from the call's return (the task, `true`, ends at once) until then: its end told.
struct Timed {
    call: Duration,
    told: Duration,
    exit_to_told: Duration,
}

/// What is started in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A session task.
    Session,
    /// A detached task, its supervisor keeping a monitor ready.
    Detached,
    /// A detached task, its supervisor starting the monitor at the start (the plain
    /// path the ready monitor is measured against).
    DetachedPlain,
}

/// Starts `true` (detached or not), times the call and the exit callback.
async fn start_and_wait(
    context: &SupervisedContext,
    handle: ExecutionHandle,
    logs: &Path,
    detach: bool,
) -> Timed {
    let (sender, receiver) = tokio::sync::oneshot::channel::<(Instant, TaskExitInfo)>();
    let sender = Mutex::new(Some(sender));
    let options = BackgroundOptions::new(logs)
        .detach(detach)
        .on_exit(move |exit| {
            let fired = Instant::now();
            if let Some(sender) = sender.lock().unwrap().take() {
                let _ = sender.send((fired, exit));
            }
        });
    let began = Instant::now();
    let started = context
        .exec_background(handle, "true", options)
        .await
        .expect("a start");
    let call = began.elapsed();
    assert_eq!(started.task_id.is_detached(), detach);
    let (fired, exit) = tokio::time::timeout(Duration::from_secs(30), receiver)
        .await
        .expect("the exit callback fired within 30 s")
        .expect("the exit callback fired");
    assert_eq!(exit.exit_code, 0, "{exit:?}");
    Timed {
        call,
        told: fired - began,
        exit_to_told: fired.saturating_duration_since(began + call),
    }
}

/// Runs `zidane ps --json` once with `user_dir`; its wall time (spawn to exit) and how
/// many tasks it listed.
async fn ps(binary: &Path, user_dir: &Path) -> (Duration, usize) {
    let began = Instant::now();
    let output = tokio::process::Command::new(binary)
        .args(["ps", "--json"])
        .env("ZIDANE_USER_DIR", user_dir)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("zidane ps runs");
    let took = began.elapsed();
    assert!(
        output.status.success(),
        "zidane ps: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    (took, rows.len())
}

async fn measure(binary: &Path, tasks: usize, root: &Path) {
    let user = root.join("user");
    let empty_user = root.join("empty-user");
    let work = std::fs::canonicalize(root.join("work")).unwrap();
    let logs = root.join("logs");
    let runtime = root.join("run");
    let paths = SupervisorPaths::for_user_dir(&user);
    assert!(
        paths.socket.starts_with(&runtime),
        "the socket {} is not in this run's runtime dir",
        paths.socket.display()
    );
    let launcher = Launcher {
        program: binary.to_path_buf(),
        args: vec![
            OsString::from("supervisor"),
            OsString::from("serve"),
            OsString::from("--user-dir"),
            user.clone().into_os_string(),
        ],
    };
    let client = SupervisorClient::new(paths).launcher(launcher);
    // A second supervisor, of its own user dir, that starts each monitor at its start.
    let plain_user = root.join("plain-user");
    let plain_client =
        SupervisorClient::new(SupervisorPaths::for_user_dir(&plain_user)).launcher(Launcher {
            program: binary.to_path_buf(),
            args: vec![
                OsString::from("supervisor"),
                OsString::from("serve"),
                OsString::from("--user-dir"),
                plain_user.clone().into_os_string(),
                OsString::from("--no-ready-monitor"),
            ],
        });
    // `zidane mcp`'s default: workspace-write on its working directory, the user dir
    // unreadable.
    let process = Arc::new(
        ProcessContext::builder()
            .cwd(&work)
            .sandbox(
                SandboxPolicy::workspace_write(&work)
                    .deny_read(&user)
                    .deny_read(&plain_user),
            )
            .try_build()
            .unwrap(),
    );
    let sandbox = match process.sandbox().status {
        SandboxStatus::Enforced => "workspace-write, enforced".to_owned(),
        SandboxStatus::Off => "off".to_owned(),
        SandboxStatus::Unavailable(reason) => format!("workspace-write, unavailable: {reason}"),
    };
    let context = Arc::new(SupervisedContext::new(
        Arc::clone(&process),
        client.clone(),
        DetachSettings {
            workspace: work.clone(),
            session: "bench".to_owned(),
            host: "detached_latency".to_owned(),
        },
    ));
    let plain_context = Arc::new(SupervisedContext::new(
        Arc::clone(&process),
        plain_client.clone(),
        DetachSettings {
            workspace: work.clone(),
            session: "bench-plain".to_owned(),
            host: "detached_latency".to_owned(),
        },
    ));
    let handle = context.create_handle().await.unwrap();

    // The supervisor, started by a ping, idle with no task.
    let (pid, _) = client.ping().await.expect("the supervisor starts");
    std::fs::write(root.join("supervisor.pid"), pid.to_string()).unwrap();
    let (plain_pid, _) = plain_client
        .ping()
        .await
        .expect("the plain supervisor starts");
    std::fs::write(root.join("plain-supervisor.pid"), plain_pid.to_string()).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (idle_rss, idle_hwm) = memory(pid);

    // Starts of each kind, interleaved (which goes first rotates).
    let start = |kind: Kind| {
        let (context, detach) = match kind {
            Kind::Session => (&context, false),
            Kind::Detached => (&context, true),
            Kind::DetachedPlain => (&plain_context, true),
        };
        start_and_wait(context, handle, &logs, detach)
    };
    let kinds = [Kind::Session, Kind::Detached, Kind::DetachedPlain];
    for _ in 0..WARMUP {
        for kind in kinds {
            start(kind).await;
        }
    }
    let mut detached = Vec::with_capacity(ROUNDS);
    let mut session = Vec::with_capacity(ROUNDS);
    let mut plain = Vec::with_capacity(ROUNDS);
    // A ping each round: one request and its answer, the least any start that crosses
    // to the supervisor pays beside the spawn itself.
    let mut pings = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let began = Instant::now();
        client.ping().await.expect("a ping");
        pings.push(began.elapsed());
        for at in 0..kinds.len() {
            let kind = kinds[(round + at) % kinds.len()];
            let timed = start(kind).await;
            match kind {
                Kind::Session => session.push(timed),
                Kind::Detached => detached.push(timed),
                Kind::DetachedPlain => plain.push(timed),
            }
        }
    }

    // Seed the rest of the tasks, all for real, one after another: concurrent starts
    // can be given the same task number by the supervisor, and one of them fails.
    let already = WARMUP + ROUNDS;
    let wanted = tasks.saturating_sub(already);
    let seeding = Instant::now();
    let mut launched = 0;
    while launched < wanted && seeding.elapsed() < SEED_BUDGET {
        context
            .exec_background(handle, "true", BackgroundOptions::new(&logs).detach(true))
            .await
            .expect("a seeding start");
        launched += 1;
    }
    let seeded_in = seeding.elapsed();
    // Every task ended.
    let known = loop {
        let listed = client.list(None, None).await.unwrap();
        if listed.iter().all(|task| task.exit.is_some()) {
            break listed.len();
        }
        assert!(seeding.elapsed() < SEED_BUDGET + Duration::from_secs(60));
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (full_rss, full_hwm) = memory(pid);

    // `zidane ps --json` with every task, against the same binary with a user dir that
    // has none (no supervisor reached: the floor of starting the binary).
    let mut listed = Vec::with_capacity(PS_RUNS);
    let mut floor = Vec::with_capacity(PS_RUNS);
    for run in 0..PS_RUNS {
        let full_first = run % 2 == 0;
        for full in [full_first, !full_first] {
            if full {
                let (took, rows) = ps(binary, &user).await;
                assert_eq!(rows, known, "zidane ps --json lists every task");
                listed.push(took);
            } else {
                let (took, rows) = ps(binary, &empty_user).await;
                assert_eq!(rows, 0);
                floor.push(took);
            }
        }
    }
    let (after_rss, after_hwm) = memory(pid);

    context.destroy(handle).await.unwrap();
    end(pid);
    end(plain_pid);

    let calls = |timed: &[Timed]| timed.iter().map(|t| t.call).collect::<Vec<_>>();
    let told = |timed: &[Timed]| timed.iter().map(|t| t.told).collect::<Vec<_>>();
    let mut detached_calls = calls(&detached);
    let mut plain_calls = calls(&plain);
    let mut session_calls = calls(&session);
    let mut detached_told = told(&detached);
    let mut session_told = told(&session);
    let exit_to_told = |timed: &[Timed]| timed.iter().map(|t| t.exit_to_told).collect::<Vec<_>>();
    let mut detached_end = exit_to_told(&detached);
    let mut session_end = exit_to_told(&session);

    println!(
        "sandbox: {sandbox}; supervisor and monitors: {}; a private XDG_RUNTIME_DIR and user dir",
        binary.display()
    );
    println!();
    let seeded_all = launched == wanted;
    println!(
        "{known} tasks known to the supervisor, every one a real `true` started through SupervisedContext: \
         {already} by the rounds below, {launched} more one after another in {:.1} s{}",
        seeded_in.as_secs_f64(),
        if seeded_all {
            String::new()
        } else {
            format!(
                " (stopped at the {} s budget, short of {tasks})",
                SEED_BUDGET.as_secs()
            )
        }
    );
    let listed_p50 = percentile(&mut listed, 50.0);
    println!(
        "{:<36}median {:8.3} ms   p90 {:8.3} ms   ({PS_RUNS} runs, spawn to exit)",
        format!("zidane ps --json, {known} tasks"),
        ms(listed_p50),
        ms(percentile(&mut listed, 90.0)),
    );
    println!(
        "{:<36}median {:8.3} ms   p90 {:8.3} ms   (interleaved with the above: the binary's floor)",
        "zidane ps --json, no supervisor",
        ms(percentile(&mut floor, 50.0)),
        ms(percentile(&mut floor, 90.0)),
    );
    println!();
    println!("supervisor memory (/proc/{pid}/status of `zidane supervisor serve`)");
    println!("idle, no task                       VmRSS {idle_rss:6} KiB   VmHWM {idle_hwm:6} KiB");
    println!(
        "{known} ended tasks                   VmRSS {full_rss:6} KiB   VmHWM {full_hwm:6} KiB"
    );
    println!(
        "after the {} ps runs              VmRSS {after_rss:6} KiB   VmHWM {after_hwm:6} KiB",
        2 * PS_RUNS
    );
    println!();
    println!(
        "`true` started, {ROUNDS} of each kind interleaved after {WARMUP} warm-up starts of each \
         (the supervisors already running: the first start, which would start one, is not counted)"
    );
    let detached_p50 = percentile(&mut detached_calls, 50.0);
    let session_p50 = percentile(&mut session_calls, 50.0);
    println!(
        "exec_background detached           p50 {:8.3} ms   p99 {:8.3} ms",
        ms(detached_p50),
        ms(percentile(&mut detached_calls, 99.0)),
    );
    println!(
        "exec_background session task       p50 {:8.3} ms   p99 {:8.3} ms",
        ms(session_p50),
        ms(percentile(&mut session_calls, 99.0)),
    );
    let plain_p50 = percentile(&mut plain_calls, 50.0);
    println!(
        "exec_background detached, monitor started at the start (--no-ready-monitor)   p50 {:8.3} ms   p99 {:8.3} ms",
        ms(plain_p50),
        ms(percentile(&mut plain_calls, 99.0)),
    );
    let ping_p50 = percentile(&mut pings, 50.0);
    println!(
        "a ping to the supervisor            p50 {:8.3} ms   p99 {:8.3} ms   (one round trip, no spawn)",
        ms(ping_p50),
        ms(percentile(&mut pings, 99.0)),
    );
    let detached_told_p50 = percentile(&mut detached_told, 50.0);
    let session_told_p50 = percentile(&mut session_told, 50.0);
    println!(
        "start → on_exit detached            p50 {:8.3} ms   p99 {:8.3} ms",
        ms(detached_told_p50),
        ms(percentile(&mut detached_told, 99.0)),
    );
    println!(
        "start → on_exit session task        p50 {:8.3} ms   p99 {:8.3} ms",
        ms(session_told_p50),
        ms(percentile(&mut session_told, 99.0)),
    );
    let detached_end_p50 = percentile(&mut detached_end, 50.0);
    let session_end_p50 = percentile(&mut session_end, 50.0);
    println!(
        "start returned → on_exit detached   p50 {:8.3} ms   p99 {:8.3} ms",
        ms(detached_end_p50),
        ms(percentile(&mut detached_end, 99.0)),
    );
    println!(
        "start returned → on_exit session    p50 {:8.3} ms   p99 {:8.3} ms",
        ms(session_end_p50),
        ms(percentile(&mut session_end, 99.0)),
    );
    println!();
    let ratio = detached_p50.as_secs_f64() / session_p50.as_secs_f64();
    // The end told: from the start's return (`true` ends at once) to `on_exit`, so the
    // start's own cost, compared above, is not counted twice.
    let over = ms(detached_end_p50) - ms(session_end_p50);
    let rss_target = RSS_BASE_KIB + RSS_PER_TASK_KIB * known as f64;
    println!(
        "- zidane ps --json median with {known} tasks = {:.1} ms (target ≤ {PS_TARGET_MS} ms): {}",
        ms(listed_p50),
        verdict(ms(listed_p50) <= PS_TARGET_MS)
    );
    println!(
        "- supervisor VmHWM with {known} tasks = {:.1} MiB (target ≤ 20 MiB + 20 KiB a task = {:.1} MiB): {}",
        full_hwm.max(after_hwm) as f64 / 1024.0,
        rss_target / 1024.0,
        verdict(full_hwm.max(after_hwm) as f64 <= rss_target)
    );
    println!(
        "- detached start p50 = {ratio:.2}× the session task's (target ≤ {START_RATIO_TARGET}×): {}",
        verdict(ratio <= START_RATIO_TARGET)
    );
    println!(
        "- the floor of a start another process makes: a ping + the session start = {:.3} ms = {:.2}× the session task's",
        ms(ping_p50 + session_p50),
        (ping_p50 + session_p50).as_secs_f64() / session_p50.as_secs_f64()
    );
    let gain = 1.0 - detached_p50.as_secs_f64() / plain_p50.as_secs_f64();
    println!(
        "- the monitor kept ready: detached start p50 {:.3} ms against {:.3} ms started at the start, {:.1}% less (a speed trick stays at ≥ 5%): {}",
        ms(detached_p50),
        ms(plain_p50),
        gain * 100.0,
        if gain >= 0.05 { "kept" } else { "**below 5%**" }
    );
    println!(
        "- exit to told (start returned → on_exit) p50, detached − session = {over:.3} ms (target ≤ {TOLD_OVER_TARGET_MS} ms): {}",
        verdict(over <= TOLD_OVER_TARGET_MS)
    );
}
