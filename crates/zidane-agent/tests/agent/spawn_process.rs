//! Subagents on the local machine: a real background task started by a child outlives
//! the child, wakes the parent when it ends, and dies with the parent.

use std::sync::{Arc, Mutex};

use serde_json::json;
use zidane_agent::{
    Agent, Behavior, HookEvent, ModelResponse, RunOptions, SPAWN, ScriptedModel, Session,
    SpawnToolOptions, WakeLoop,
};
use zidane_context::TaskStatus;
use zidane_process::ProcessContext;
use zidane_tools::SHELL;

use crate::support::{WAIT, next_wake, until};

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) state …`: the state follows the last `)`.
    stat.rsplit_once(") ")
        .is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// A parent with a spawn tool on a ProcessContext, and the pids its children started.
fn parent(model: &ScriptedModel, tasks: &std::path::Path) -> (Agent, Arc<Mutex<Vec<u32>>>) {
    let agent = Agent::builder(Arc::new(model.clone()), Arc::new(ProcessContext::new()))
        .behavior(Behavior::new().tasks_dir(tasks))
        .session(Session::new("p"))
        .spawn_tool(SpawnToolOptions::new())
        .build()
        .unwrap();
    let pids = Arc::new(Mutex::new(Vec::new()));
    let seen = pids.clone();
    agent.hooks().subscribe(move |event| {
        if let HookEvent::Child { event, .. } = event
            && let HookEvent::BackgroundStart(start) = &**event
        {
            seen.lock().unwrap().push(start.pid);
        }
    });
    (agent, pids)
}

fn child_starts(command: &str) -> ScriptedModel {
    ScriptedModel::new()
        .tool_call(SPAWN, json!({ "prompt": "start it" }))
        .tool_call(
            SHELL,
            json!({ "command": command, "run_in_background": true }),
        )
        .text("Started bash_1.")
        .text("The subagent started bash_1.")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_real_task_outlives_it_and_wakes_the_parent_when_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let model = child_starts("sleep 1; echo done").react(|request| {
        let notifications = request.notifications();
        assert_eq!(notifications.len(), 1, "{request:?}");
        let n = &notifications[0];
        assert_eq!((n.status, n.exit_code), (TaskStatus::Exited, 0));
        ModelResponse::text(format!("{} ended", n.task_id))
    });
    let (agent, pids) = parent(&model, dir.path());
    let wake = WakeLoop::spawn(agent.clone());
    let mut reports = wake.reports();

    let started = wake.prompt("start it through a subagent").await.unwrap();
    assert_eq!(started.text, "The subagent started bash_1.");
    let pid = pids.lock().unwrap()[0];
    // The child is gone (destroyed when spawn returned); its task is not.
    assert!(alive(pid), "the task died with the child");
    let running = agent.running_tasks().await.unwrap();
    assert_eq!(running.len(), 1, "listed as the parent's own");
    let log = running[0].log_path.clone().unwrap();

    let woke = next_wake(&mut reports, WAIT).await;
    assert_eq!(woke.outcome.unwrap().text, "bash_1 ended");
    assert_eq!(std::fs::read_to_string(&log).unwrap().trim(), "done");
    until(|| !alive(pid)).await;
    drop(wake);
    agent.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroying_the_parent_kills_the_task_its_child_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let model = child_starts("sleep 1000");
    let (agent, pids) = parent(&model, dir.path());

    agent.run(RunOptions::new("start it")).await.unwrap();
    let pid = pids.lock().unwrap()[0];
    assert!(alive(pid));
    assert_eq!(agent.running_tasks().await.unwrap().len(), 1);

    agent.destroy().await.unwrap();
    until(|| !alive(pid)).await;
}

/// A child's task with `notify_on` keeps being followed once it is the parent's: every
/// matching line, from before and after the hand-over, is told to the parent once, in
/// order, and then the exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_task_events_are_told_to_the_parent_each_once_then_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    let model = ScriptedModel::new()
        .tool_call(SPAWN, json!({ "prompt": "start it" }))
        .tool_call(
            SHELL,
            json!({
                "command": "echo hit 1; echo quiet; sleep 1; echo hit 2; echo hit 3",
                "run_in_background": true,
                "notify_on": "^hit",
            }),
        )
        .text("Started bash_1.")
        .text("The subagent started bash_1.");
    let (agent, _pids) = parent(&model, dir.path());
    let answer = agent.run(RunOptions::new("start it")).await.unwrap();
    assert_eq!(answer.text, "The subagent started bash_1.");

    let mut told = Vec::new();
    let mut exits = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT * 2;
    while exits.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no exit told: {told:?}"
        );
        let drained = agent.drain_notifications().await.unwrap();
        for block in &drained.events {
            assert!(exits.is_empty(), "an event after the exit: {block:?}");
            told.extend(block.lines.iter().map(|l| (l.line_number, l.line.clone())));
        }
        exits.extend(drained.exits);
        // Waiting on the task's own pace (it sleeps a second), in small steps.
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        told,
        [
            (1, "hit 1".to_owned()),
            (3, "hit 2".to_owned()),
            (4, "hit 3".to_owned())
        ]
    );
    assert_eq!(exits.len(), 1);
    assert!(agent.drain_notifications().await.unwrap().is_empty());
    agent.destroy().await.unwrap();
}
