//! What running the model's tasks on a fleet costs beside running them here:
//!
//! 1. **start → result**: an MCP `tools/call` of `shell` with
//!    `{"command":"true","run_in_background":true}`, from rmcp's client over stdio, to
//!    `zidane mcp --restate INGRESS --workers w1,w2` (a real `restate-server`, two real
//!    `zidane-worker`s) beside the same call to a local `zidane mcp`, as it starts by
//!    default and with `--sandbox off` (the fleet has no sandbox of this machine's);
//! 2. **result → told**: from that result until the task's end reaches the client
//!    unpolled: its `<task-notification>` opening that very result (the server drains
//!    the session's exits into every result, a fleet session sweeping its workers for
//!    them, and one told there is not pushed again), else the `notifications/message`
//!    whose `data.event` is `task_exit` (the client asked with `logging/setLevel info`),
//!    which a local session pushes at the exit and a fleet session once its sweep of the
//!    workers, every `DEFAULT_SWEEP_INTERVAL` (500 ms), finds it. A `true` on the fleet
//!    has ended by the time its start answers, so the same is timed for `sleep 0.1`,
//!    which ends after its result on every path: the delay until the push tells the
//!    client, the fleet's set by its sweep (the model reads the end at the head of its
//!    next tool result);
//! 3. **placement**: `RestateContext` over ten workers, `exec_background` of `true`
//!    naming labels (which asks every worker's `describe`) beside one naming none (the
//!    workers in turn).
//!
//! Every kind is timed in the same rounds, its order rotated each round; medians and
//! p99 are nearest-rank. `cargo xtask bench fleet` runs it and records its output in
//! the bench results file.
//!
//! ```text
//! cargo build --release -p zidane-cli --bin zidane -p zidane-restate --bin zidane-worker
//! cargo run --release -p zidane-restate --example fleet_latency -- target/release/zidane 200
//! ```
//!
//! Needs `restate-server` (`cargo xtask restate` installs it, or set
//! ZIDANE_RESTATE_SERVER) and `zidane-worker` beside the `zidane` binary. Everything it
//! starts lives under one temp dir, removed at the end: the server's data, the workers'
//! disks (their stderr in `<id>.log` there), the MCP servers' user dirs, an empty
//! config dir and a private `XDG_RUNTIME_DIR`. The MCP servers are closed, the workers
//! sent SIGTERM (then SIGKILL), the server killed and, on Linux, whatever else names the
//! temp dir on its command line (the supervisor a local `zidane mcp` starts) ended: on
//! the way out of a panic or a Ctrl-C too.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
// Log messages belong to the protocol before 2026-07-28, which `zidane mcp` still serves:
// they are how it tells a client of an exit unasked.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use zidane_context::{
    BackgroundOptions, CancellationToken, ExecutionContext, ExecutionHandle, TaskStatus,
};
use zidane_restate::testing::RestateServer;
use zidane_restate::{DEFAULT_SWEEP_INTERVAL, RestateContext};

use crate::mcp::{McpServer, Told};
use crate::processes::{Dirs, Fleet, Leftovers, print_sandbox};

mod mcp;
mod processes;

/// Rounds when none is given.
const DEFAULT_ROUNDS: usize = 200;
/// A command that ends after its start's result on every path (a fleet start answers
/// in ~10 ms), so its end comes by a push: the fleet's, once its sweep finds it.
const LATE_COMMAND: &str = "sleep 0.1";
/// Rounds run before the measured ones, of every kind (connections, the sessions'
/// handles, the workers' objects).
const WARMUP: usize = 5;
/// The workers of the placement measurement; the MCP servers use the first two.
const FLEET: usize = 10;
/// The labels a placed start asks for: every worker carries `linux`, the even ones
/// `gpu` too (see [`processes::labels_of`]).
const WANTED: [&str; 2] = ["gpu", "linux"];
/// Longest a task's end may take to be recorded in the placement rounds.
const END_WAIT: Duration = Duration::from_secs(10);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let binary = args
        .next()
        .filter(|arg| !arg.is_empty())
        .unwrap_or_else(|| "target/release/zidane".to_owned());
    let binary = std::fs::canonicalize(&binary)
        .unwrap_or_else(|error| panic!("the zidane binary {binary}: {error}"));
    let worker_binary =
        binary.with_file_name(format!("zidane-worker{}", std::env::consts::EXE_SUFFIX));
    assert!(
        worker_binary.is_file(),
        "{} is not built: cargo build --release -p zidane-restate --bin zidane-worker",
        worker_binary.display()
    );
    let rounds: usize = args
        .next()
        .map_or(DEFAULT_ROUNDS, |n| n.parse().expect("ROUNDS is a number"));
    assert!(rounds > 0, "ROUNDS is at least 1");
    // Interrupted, the measurement is dropped where it stands: what it started is ended
    // and its temp dir removed, as on its way out of a failure.
    tokio::select! {
        () = measure(&binary, worker_binary, rounds) => ExitCode::SUCCESS,
        _ = tokio::signal::ctrl_c() => ExitCode::from(130),
    }
}

/// Runs the three measurements and prints them.
async fn measure(binary: &Path, worker_binary: PathBuf, rounds: usize) {
    // Declared first, dropped last: the server and the workers are gone before their
    // directories are removed.
    // Beside the binary, not in a temp directory: every sandboxed task may write those,
    // and a worker refuses a user dir there.
    let scratch = tempfile::Builder::new()
        .prefix("zidane-fleet-bench-")
        .tempdir_in(binary.parent().unwrap_or(Path::new(".")))
        .unwrap();
    let _leftovers = Leftovers::new(scratch.path());
    let dirs = Dirs::make(scratch.path());
    let server = RestateServer::start()
        .await
        .expect("restate-server starts (cargo xtask restate installs it)");
    let mut fleet = Fleet::new(worker_binary, scratch.path().join("workers"), &server);
    fleet.start(1..=2);

    let sandbox = print_sandbox(binary, &dirs);
    let local = McpServer::start("zidane mcp", binary, &dirs, "local", &[]).await;
    let unsandboxed = McpServer::start(
        "zidane mcp --sandbox off",
        binary,
        &dirs,
        "unsandboxed",
        &["--sandbox", "off"],
    )
    .await;
    let remote = McpServer::start(
        "zidane mcp --restate, w1,w2",
        binary,
        &dirs,
        "remote",
        &["--restate", server.ingress_url(), "--workers", "w1,w2"],
    )
    .await;
    let mut servers = [local, unsandboxed, remote];
    let mut calls: [Vec<Duration>; 3] = Default::default();
    let mut told: [Vec<Duration>; 3] = Default::default();
    let mut hows: [Vec<Told>; 3] = Default::default();
    let mut late_told: [Vec<Duration>; 3] = Default::default();
    let mut late_hows: [Vec<Told>; 3] = Default::default();
    let started = Instant::now();
    for round in 0..WARMUP + rounds {
        for turn in 0..servers.len() {
            let which = (round + turn) % servers.len();
            let timed = servers[which].run_in_background("true").await;
            if round >= WARMUP {
                calls[which].push(timed.call);
                told[which].push(timed.told);
                hows[which].push(timed.how);
            }
        }
        for turn in 0..servers.len() {
            let which = (round + turn) % servers.len();
            let timed = servers[which].run_in_background(LATE_COMMAND).await;
            if round >= WARMUP {
                late_told[which].push(timed.told);
                late_hows[which].push(timed.how);
            }
        }
    }
    let mcp_took = started.elapsed();
    for server in servers.iter_mut() {
        server.close().await;
    }

    fleet.start(3..=FLEET);
    let ids: Vec<String> = (1..=FLEET).map(|i| format!("w{i}")).collect();
    let restate = RestateContext::new(server.ingress_url(), ids.iter().map(String::as_str))
        .expect("a context over the fleet");
    let handle = restate.create_handle().await.unwrap();
    let mut unplaced = Vec::with_capacity(rounds);
    let mut placed = Vec::with_capacity(rounds);
    let started = Instant::now();
    for round in 0..WARMUP + rounds {
        let mut kinds = [false, true];
        kinds.rotate_left(round % 2);
        for labelled in kinds {
            let options = if labelled {
                BackgroundOptions::new("/unused").labels(WANTED)
            } else {
                BackgroundOptions::new("/unused")
            };
            let call = start_and_end(&restate, handle, options).await;
            if round >= WARMUP {
                let kind = if labelled { &mut placed } else { &mut unplaced };
                kind.push(call);
            }
        }
    }
    let placement_took = started.elapsed();
    restate.destroy(handle).await.unwrap();

    println!(
        "restate-server on loopback, release zidane-worker processes beside {}; \
         {rounds} rounds after {WARMUP} warm-up rounds; no targets are set for these",
        binary.display()
    );
    println!(
        "local `zidane mcp` sandbox: {sandbox}; each MCP server with a private \
         XDG_RUNTIME_DIR, an empty config dir and ZIDANE_SWEEP_ORPHANS=off"
    );
    println!();
    println!(
        "start → result: `tools/call` `shell` {{\"command\":\"true\",\"run_in_background\":true}} \
         from rmcp's client over stdio, the three servers in turn each round, the fleet \
         of two workers (these rounds, with the `{LATE_COMMAND}` ones below, took {:.1} s)",
        mcp_took.as_secs_f64()
    );
    for (i, server) in servers.iter().enumerate() {
        line(&server.name, &mut calls[i], "");
    }
    over("fleet − local p50", &calls[2], &calls[0]);
    println!();
    println!(
        "result → told: from that result until the task's end reached the client, \
         nothing polled: its <task-notification> opening that very result (the server \
         drains the session's exits into every result; a fleet session sweeps its workers \
         for them, and what it told there it does not push), else its \
         `notifications/message` `task_exit` (asked for with logging/setLevel info), \
         pushed at the exit by a local session, and by a fleet session once its sweep of \
         the workers, every {} ms, finds it; the block in the result, or a push before \
         it, counts as 0",
        DEFAULT_SWEEP_INTERVAL.as_millis()
    );
    for (i, server) in servers.iter().enumerate() {
        line(&server.name, &mut told[i], &ways(&hows[i]));
    }
    over("fleet − local p50", &told[2], &told[0]);
    println!();
    println!(
        "result → told of `{LATE_COMMAND}`, started the same way in the same rounds, after \
         the `true`s: it ends after its result, so its end comes by the push (the model \
         itself reads it at the head of its next tool result); the fleet's extra delay is \
         its sweep's"
    );
    for (i, server) in servers.iter().enumerate() {
        line(&server.name, &mut late_told[i], &ways(&late_hows[i]));
    }
    over("fleet − local p50", &late_told[2], &late_told[0]);
    println!();
    println!(
        "placement: RestateContext over {FLEET} zidane-workers (every one `linux` and a \
         `rack-N`, w2, w4, … w{FLEET} `gpu` too), exec_background `true`, the two kinds in \
         turn each round, every task waited for (untimed) before the next start ({:.1} s in all)",
        placement_took.as_secs_f64()
    );
    line("no labels (workers in turn)", &mut unplaced, "");
    line(
        &format!("labels {} (describe of every worker)", WANTED.join(",")),
        &mut placed,
        "",
    );
    let cost = |p: f64, placed: &mut [Duration], unplaced: &mut [Duration]| {
        ms(percentile(placed, p)) - ms(percentile(unplaced, p))
    };
    println!(
        "placement cost (labels − none): p50 {:.3} ms   p99 {:.3} ms",
        cost(50.0, &mut placed, &mut unplaced),
        cost(99.0, &mut placed, &mut unplaced)
    );
}

/// Starts `true` on `handle` with `options`, then waits (untimed) until it ended, so
/// the next start meets an idle fleet: how long the start call took.
async fn start_and_end(
    restate: &RestateContext,
    handle: ExecutionHandle,
    options: BackgroundOptions,
) -> Duration {
    let started = Instant::now();
    let task = restate
        .exec_background(handle, "true", options)
        .await
        .unwrap();
    let call = started.elapsed();
    let exit = restate
        .wait_background(handle, task.task_id, END_WAIT, CancellationToken::new())
        .await
        .unwrap()
        .expect("the task ends");
    assert_eq!(exit.status, TaskStatus::Exited);
    call
}

/// One result line: p50 and p99 in milliseconds, and `note`.
fn line(what: &str, samples: &mut [Duration], note: &str) {
    let p50 = percentile(samples, 50.0);
    let p99 = percentile(samples, 99.0);
    let text = format!(
        "{what:<44} p50 {:8.3} ms   p99 {:8.3} ms   {note}",
        ms(p50),
        ms(p99)
    );
    println!("{}", text.trim_end());
}

/// How the ends were told: `(of N: … in the start's own result, … pushed before it, …
/// pushed after it)`.
fn ways(hows: &[Told]) -> String {
    let count = |how: Told| hows.iter().filter(|h| **h == how).count();
    format!(
        "(of {}: {} in the start's own result, {} pushed before it, {} pushed after it)",
        hows.len(),
        count(Told::InResult),
        count(Told::PushedFirst),
        count(Told::Pushed)
    )
}

/// How much `slower`'s median is over `faster`'s.
fn over(what: &str, slower: &[Duration], faster: &[Duration]) {
    let p50 = |samples: &[Duration]| ms(percentile(&mut samples.to_vec(), 50.0));
    let difference = p50(slower) - p50(faster);
    println!("{what} = {difference:.3} ms");
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
