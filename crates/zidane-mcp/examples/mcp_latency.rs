//! What `zidane mcp` adds to a tool call: a foreground `true` through the binary over
//! stdio (rmcp's client, one JSON-RPC round trip per call) against the same call
//! dispatched in-process with `Agent::call_tool`.
//!
//! ```text
//! cargo build --release -p zidane-cli
//! cargo run --release -p zidane-mcp --example mcp_latency -- target/release/zidane 1000
//! ```
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use zidane_agent::ToolCall;
use zidane_mcp::{McpSession, ServeOptions};

const WARMUP: usize = 20;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let binary = args
        .next()
        .unwrap_or_else(|| "target/release/zidane".to_owned());
    let calls: usize = args
        .next()
        .map_or(500, |n| n.parse().expect("a call count"));
    let dir = tempfile::tempdir().unwrap();
    let arguments = json!({ "command": "true" });
    let serde_json::Value::Object(arguments) = arguments else {
        unreachable!()
    };

    let mut child = tokio::process::Command::new(&binary)
        .args(["mcp", "--user-dir"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start the zidane binary");
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve(transport).await.unwrap();
    let mut over_stdio = Vec::with_capacity(calls);
    for i in 0..WARMUP + calls {
        let started = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new("shell").with_arguments(arguments.clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
        if i >= WARMUP {
            over_stdio.push(started.elapsed());
        }
    }
    client.cancel().await.unwrap();
    child.wait().await.unwrap();

    let session = McpSession::new(&ServeOptions::new(dir.path())).unwrap();
    let agent = session.agent();
    let mut in_process = Vec::with_capacity(calls);
    for i in 0..WARMUP + calls {
        let started = Instant::now();
        let output = agent
            .call_tool(ToolCall::new(
                i.to_string(),
                "shell",
                json!({ "command": "true" }),
            ))
            .await
            .unwrap();
        assert!(!output.is_error);
        if i >= WARMUP {
            in_process.push(started.elapsed());
        }
    }
    session.teardown().await;

    println!("foreground `true`, {calls} calls after {WARMUP} warm-up calls");
    report("zidane mcp over stdio", &mut over_stdio);
    report("Agent::call_tool in-process", &mut in_process);
}

fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let mean = samples.iter().sum::<Duration>() / u32::try_from(samples.len()).unwrap();
    println!(
        "{what:<30} p50 {:>8.3} ms   p99 {:>8.3} ms   mean {:>8.3} ms",
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        mean.as_secs_f64() * 1e3
    );
}
