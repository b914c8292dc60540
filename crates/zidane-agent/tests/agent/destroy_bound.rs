//! `destroy_timeout` bounds the whole destroy, the default leaves room for the kill
//! grace, and whatever could not be confirmed dead is named in the report.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use zidane_agent::{
    Agent, Behavior, DestroyStep, HookEvent, RunOptions, ScriptedModel, StepOutcome,
};
use zidane_process::ProcessContext;

use crate::support::{WAIT, until};

/// A task that ignores `SIGTERM`, so only the escalation to `SIGKILL` ends it.
const STUBBORN: &str = "trap '' TERM; echo ready; while :; do sleep 0.05; done";

fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

async fn start_stubborn(agent: &Agent) -> u32 {
    agent.run(RunOptions::new("start it")).await.unwrap();
    let tasks = agent.running_tasks().await.unwrap();
    assert_eq!(tasks.len(), 1);
    let handle = agent.current_handle().unwrap();
    let entries = agent.context().list_background(handle).await.unwrap();
    let pid = entries[0].pid;
    // The trap is set once the task has printed.
    let log = entries[0].output_path.clone();
    until(|| std::fs::read_to_string(&log).is_ok_and(|s| s.contains("ready"))).await;
    pid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_defaults_a_term_ignoring_task_is_confirmed_dead() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": STUBBORN, "run_in_background": true }),
        )
        .text("started");
    let agent = Agent::builder(Arc::new(model), Arc::new(ProcessContext::new()))
        .behavior(Behavior::new().tasks_dir(dir.path().join("tasks")))
        .build()
        .unwrap();
    let pid = start_stubborn(&agent).await;

    let report = agent.destroy().await.unwrap();
    assert_eq!(
        report.outcome(DestroyStep::DestroyHandle),
        Some(&StepOutcome::Done),
        "{report:?}"
    );
    assert!(report.survivors.is_empty(), "{report:?}");
    assert!(!alive(pid), "the task's leader is gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_with_a_kill_in_flight_keeps_to_its_timeout_and_names_the_survivor() {
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_millis(800);
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": STUBBORN, "run_in_background": true }),
        )
        .text("started")
        .tool_call("shell_kill", json!({ "task_id": "bash_1" }))
        .text("never reached");
    let context = Arc::new(
        ProcessContext::builder()
            .kill_grace(Duration::from_secs(3))
            .build(),
    );
    let agent = Agent::builder(Arc::new(model), context)
        .behavior(
            Behavior::new()
                .tasks_dir(dir.path().join("tasks"))
                .destroy_timeout(timeout),
        )
        .build()
        .unwrap();
    let pid = start_stubborn(&agent).await;

    // The model's shell_kill waits out the kill grace: destroy starts while it is in flight.
    let (kill_started, started) = tokio::sync::oneshot::channel();
    let kill_started = std::sync::Mutex::new(Some(kill_started));
    agent.hooks().subscribe(move |event| {
        if let HookEvent::ToolBefore(call) = event
            && call.name == "shell_kill"
            && let Some(tx) = kill_started.lock().unwrap().take()
        {
            let _ = tx.send(());
        }
    });
    let runner = agent.clone();
    let run = tokio::spawn(async move { runner.run(RunOptions::new("kill it")).await });
    tokio::time::timeout(WAIT, started).await.unwrap().unwrap();

    let began = Instant::now();
    let report = agent.destroy().await.unwrap();
    let took = began.elapsed();
    // A bound, not a benchmark: the whole destroy, not each step, keeps to the timeout.
    assert!(
        took < timeout + Duration::from_millis(400),
        "took {took:?}: {report:?}"
    );
    assert_eq!(
        report.survivors.iter().map(|t| t.pid).collect::<Vec<_>>(),
        [pid],
        "{report:?}"
    );
    let _ = tokio::time::timeout(WAIT, run).await;

    // The kill goes on in the background and ends it after the grace.
    let deadline = Instant::now() + WAIT;
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if alive(pid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        );
        panic!("the task outlived its kill");
    }
}
