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
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zidane_test_support::{Step, percentiles};

use crate::hosts::claude_tasks;
use crate::hosts::host::{GONE_WAIT, HOST_WAIT, Host, Sandbox};
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
