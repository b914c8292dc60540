//! Start→notified latency through Restate on loopback, beside `ProcessContext`'s, and
//! 100 concurrent durable tasks. Prints markdown tables (docs/DURABLE.md has a run).
//!
//! ```text
//! cargo run --release -p zidane-restate --example durable_latency [ROUNDS]
//! ```
//!
//! Needs `restate-server` (`cargo xtask ci` installs it, or set ZIDANE_RESTATE_SERVER).
//! The worker runs in this process, served on a loopback port like `zidane-worker`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use zidane_context::{
    BackgroundOptions, CancellationToken, ExecutionContext, ExecutionHandle, TaskStatus,
};
use zidane_process::ProcessContext;
use zidane_restate::testing::RestateServer;
use zidane_restate::{IdentityKeys, RestateContext, Worker, WorkerOptions, register, serve};

const CONCURRENT: usize = 100;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(200, |n| n.parse().expect("ROUNDS is a number"));
    let scratch = tempfile_dir();
    let server = RestateServer::start().await.expect("restate-server starts");
    let worker = Arc::new(
        Worker::new(
            WorkerOptions::new("bench", scratch.join("worker"), server.ingress_url())
                .max_tasks(2 * CONCURRENT)
                // Like the `ProcessContext` it is measured against: no sandbox.
                .sandbox(zidane_context::SandboxPolicy::off()),
        )
        .unwrap(),
    );
    worker.ready().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serving = tokio::spawn(serve(
        worker,
        listener,
        IdentityKeys::none(),
        std::future::pending(),
    ));
    register(server.admin_url(), &format!("http://{address}"))
        .await
        .unwrap();
    let restate = RestateContext::new(server.ingress_url(), ["bench"]).unwrap();
    let local = ProcessContext::new();
    let tasks = scratch.join("local-tasks");

    // Warm up connections and the object's state on both.
    let rh = restate.create_handle().await.unwrap();
    let lh = local.create_handle().await.unwrap();
    for _ in 0..5 {
        start_and_wait(&restate, rh).await;
    }

    let mut process = Vec::new();
    for _ in 0..rounds {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let tx = std::sync::Mutex::new(Some(tx));
        let started = Instant::now();
        local
            .exec_background(
                lh,
                "true",
                BackgroundOptions::new(&tasks).on_exit(move |_| {
                    if let Some(tx) = tx.lock().unwrap().take() {
                        let _ = tx.send(Instant::now());
                    }
                }),
            )
            .await
            .unwrap();
        let notified = rx.await.unwrap();
        process.push(notified - started);
    }

    let mut awakeable = Vec::new();
    let mut start_call = Vec::new();
    for _ in 0..rounds {
        let (start, notified) = start_and_wait(&restate, rh).await;
        start_call.push(start);
        awakeable.push(notified);
    }

    restate.destroy(rh).await.unwrap();
    let rh = restate.create_handle().await.unwrap();
    let mut sweep = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let s = restate
            .exec_background(rh, "true", BackgroundOptions::new("/unused"))
            .await
            .unwrap();
        loop {
            let entries = restate.list_background(rh).await.unwrap();
            if entries
                .iter()
                .any(|e| e.task_id == s.task_id && e.status().is_terminal())
            {
                break;
            }
        }
        sweep.push(started.elapsed());
    }
    restate.destroy(rh).await.unwrap();

    println!("start → notified, `true`, {rounds} rounds each (one handle per path, whose");
    println!("table grows to {rounds} tasks), loopback:\n");
    println!("| path | p50 | p99 | max |");
    println!("|---|---|---|---|");
    row("ProcessContext (on_exit)", &mut process);
    row(
        "RestateContext, wait_background (awakeable)",
        &mut awakeable,
    );
    row(
        "… of which exec_background (journaled start)",
        &mut start_call,
    );
    row("RestateContext, list_background back to back", &mut sweep);

    let restate = Arc::new(restate);
    println!("\n{CONCURRENT} concurrent durable tasks (`sleep 1`):\n");
    println!("| handles | all started | one start p50 / p99 | all exits recorded |");
    println!("|---|---|---|---|");
    for handles in [1, 10] {
        concurrent(&restate, handles).await;
    }
    local.destroy(lh).await.unwrap();
    serving.abort();
    drop(server);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Starts `true` on `handle` and waits for its exit through an awakeable: how long the
/// start call took, and how long until the exit was known.
async fn start_and_wait(restate: &RestateContext, handle: ExecutionHandle) -> (Duration, Duration) {
    let started = Instant::now();
    let task = restate
        .exec_background(handle, "true", BackgroundOptions::new("/unused"))
        .await
        .unwrap();
    let start_call = started.elapsed();
    let exit = restate
        .wait_background(
            handle,
            task.task_id,
            Duration::from_secs(10),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .expect("the task ends");
    assert_eq!(exit.status, TaskStatus::Exited);
    (start_call, started.elapsed())
}

/// Starts [`CONCURRENT`] tasks at once over `handles` handles and waits until every
/// exit is recorded.
async fn concurrent(restate: &Arc<RestateContext>, handles: usize) {
    let mut hs = Vec::new();
    for _ in 0..handles {
        hs.push(restate.create_handle().await.unwrap());
    }
    let started = Instant::now();
    let mut starts = tokio::task::JoinSet::new();
    for i in 0..CONCURRENT {
        let restate = Arc::clone(restate);
        let h = hs[i % handles];
        starts.spawn(async move {
            let t = Instant::now();
            restate
                .exec_background(h, "sleep 1", BackgroundOptions::new("/unused"))
                .await
                .unwrap();
            t.elapsed()
        });
    }
    let mut start_latency = Vec::new();
    while let Some(joined) = starts.join_next().await {
        start_latency.push(joined.unwrap());
    }
    let all_started = started.elapsed();
    for h in &hs {
        loop {
            let entries = restate.list_background(*h).await.unwrap();
            if entries.len() == CONCURRENT / handles
                && entries.iter().all(|e| e.status() == TaskStatus::Exited)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let all_recorded = started.elapsed();
    start_latency.sort();
    println!(
        "| {handles} | {all_started:.2?} | {:.2?} / {:.2?} | {all_recorded:.2?} |",
        pct(&start_latency, 50),
        pct(&start_latency, 99)
    );
    for h in hs {
        restate.destroy(h).await.unwrap();
    }
}

fn row(name: &str, samples: &mut [Duration]) {
    samples.sort();
    println!(
        "| {name} | {:.2?} | {:.2?} | {:.2?} |",
        pct(samples, 50),
        pct(samples, 99),
        samples[samples.len() - 1]
    );
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zidane-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
