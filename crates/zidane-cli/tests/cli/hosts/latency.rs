//! The time from the model's tool call to its result, through each host and directly:
//! a background start and a foreground `true`, over several rounds. Ignored by default
//! (it only reports numbers, and a loaded machine must not fail CI):
//! `cargo nextest run -p zidane-cli --test cli --run-ignored only --no-capture hosts::latency`.
//!
//! Through a host, the scripted model server times it: from handing the host its tool
//! call to receiving the next request, which carries the result (the host's parsing,
//! its MCP call, its rendering of the result, its next request). Directly, a raw
//! JSON-RPC client times `tools/call` over stdio.
#![allow(clippy::print_stdout)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use zidane_test_support::{Step, percentiles};

use crate::hosts::host::{BIN, Host, Sandbox};

/// Rounds measured, after one warm-up round.
const ROUNDS: usize = 10;

fn background() -> Value {
    json!({ "command": "true", "run_in_background": true })
}

fn foreground() -> Value {
    json!({ "command": "true" })
}

/// `(background starts, foreground calls)` through `host`.
async fn through(host: Host) -> Option<(Vec<Duration>, Vec<Duration>)> {
    let sandbox = Sandbox::new(host)?;
    let mut steps = Vec::new();
    for _ in 0..=ROUNDS {
        steps.push(Step::call(host.call("shell", background())));
        steps.push(Step::call(host.call("shell", foreground())));
    }
    steps.push(Step::text("Measured."));
    let ran = sandbox.run(steps, &[]).await;
    let (mut started, mut ran_true) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        started.push(ran.round_trip(2 * round));
        ran_true.push(ran.round_trip(2 * round + 1));
    }
    Some((started, ran_true))
}

/// A raw JSON-RPC client of `zidane mcp` over stdio.
struct Client {
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: u64,
}

impl Client {
    async fn send(&mut self, message: &Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    /// Sends a request; returns how long its answer took.
    async fn request(&mut self, method: &str, params: Value) -> Duration {
        self.id += 1;
        let id = self.id;
        let began = Instant::now();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return began.elapsed();
            }
        }
    }
}

/// `(background starts, foreground calls)` by a raw JSON-RPC client over stdio.
async fn direct() -> (Vec<Duration>, Vec<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["mcp", "--user-dir"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut client = Client {
        stdin: child.stdin.take().unwrap(),
        lines: BufReader::new(child.stdout.take().unwrap()).lines(),
        id: 0,
    };
    client
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "latency", "version": "0" }
            }),
        )
        .await;
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let call = |arguments: Value| json!({ "name": "shell", "arguments": arguments });
    let (mut started, mut ran_true) = (Vec::new(), Vec::new());
    for round in 0..=ROUNDS {
        let a = client.request("tools/call", call(background())).await;
        let b = client.request("tools/call", call(foreground())).await;
        if round > 0 {
            started.push(a);
            ran_true.push(b);
        }
    }
    drop(client);
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
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
    for (name, host) in [("Claude Code", Host::ClaudeCode), ("Codex", Host::Codex)] {
        let Some((started, ran_true)) = through(host).await else {
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
