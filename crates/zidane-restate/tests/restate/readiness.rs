//! `wait_task … until.port` for a task on a worker: the worker probes its own machine,
//! where the task listens, and says so in its log.

use std::process::Stdio;

use serde_json::json;
use zidane_agent::{RunOptions, ScriptedModel};
use zidane_context::ExecutionContext;

use crate::support::{Cluster, agent, bg, cluster, tool_results};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_is_probed_on_the_worker_that_runs_the_task() {
    let Some(mut cluster) = cluster(&[]).await else {
        return;
    };
    let log = cluster.dir.path().join("worker-w1.stderr");
    let worker = spawn_logging_worker(&cluster, &log);
    cluster.workers.push(worker);
    let context = cluster.context();
    let handle = context.create_handle().await.unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            bg(&format!(
                "sleep 0.3; exec python3 -m http.server {port} --bind 127.0.0.1"
            )),
        )
        .tool_call(
            "wait_task",
            json!({ "task_id": "bash_1", "timeout_ms": 20000, "until": { "port": port } }),
        )
        .tool_call("shell_kill", json!({ "task_id": "bash_1" }))
        .text("served");
    let agent = agent(model, context.clone(), handle, &cluster.store());
    agent.run(RunOptions::new("serve")).await.unwrap();
    let results = tool_results(&agent);
    assert!(
        results.iter().any(|r| r.starts_with(&format!(
            "wait_task: bash_1 is ready: 127.0.0.1:{port} accepted a connection"
        ))),
        "{results:#?}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("readiness probe") && logged.contains(&format!("port: {port}")),
        "the worker did not log the probe:\n{logged}"
    );
    context.destroy(handle).await.unwrap();
}

/// Worker `w1` with its stderr in `log`, logging at `info`.
fn spawn_logging_worker(cluster: &Cluster, log: &std::path::Path) -> crate::support::WorkerProcess {
    let file = std::fs::File::create(log).unwrap();
    cluster.spawn_worker_with("w1", "127.0.0.1:0".parse().unwrap(), |command| {
        command
            .env("RUST_LOG", "zidane_restate=info")
            .stderr(Stdio::from(file));
    })
}
