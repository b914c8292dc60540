//! The quickstart's whole flow, through the facade, with an assertion at every step:
//! background build → idle → exit → wake loop drain-only run → banner → complete log →
//! dev server started, checked and killed → destroy → no process left.

use serde_json::json;
use zidane::agent::{DestroyStep, SessionStore, StepOutcome};
use zidane::context::Signal;
use zidane::prelude::*;
use zidane_test_support::live_processes_in_group;

use super::support::{Local, WAIT, bg, open, until};

/// The build prints its crates, then waits for the test to let it finish: "the agent is
/// idle while the task runs" is then a fact, not a race.
fn build(gate: &std::path::Path) -> String {
    format!(
        "for n in 1 2 3 4 5 6; do echo \"   Compiling crate-$n v0.1.0\"; done; \
         echo 'warning: unused variable' >&2; \
         while [ ! -e '{}' ]; do sleep 0.02; done; echo '    Finished dev profile'",
        gate.display()
    )
}

const DEV_SERVER: &str =
    "echo 'listening on http://127.0.0.1:8080'; while :; do sleep 1; echo 'GET / 200'; done";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_flow_step_by_step() {
    let mut local = Local::new(|dir| {
        ScriptedModel::new()
            // Run 1: the user's prompt.
            .tool_call("shell", bg(&build(&dir.join("build-may-finish"))))
            .text("Building in the background; I will be woken when it ends.")
            // Run 2: drain-only; the notification opens the turn, and there is no prompt.
            .react(|request| {
                assert_eq!(request.prompt(), "", "a wake-up carries no prompt");
                let notifications = request.notifications();
                assert_eq!(notifications.len(), 1, "{request:?}");
                let ended = &notifications[0];
                assert_eq!(ended.task_id.to_string(), "bash_1");
                assert_eq!((ended.status, ended.exit_code), (TaskStatus::Exited, 0));
                ModelResponse::tool_use("", "read_file", json!({ "path": ended.output_file }))
            })
            .react(|request| {
                let (_, log, is_error) = request.tool_results()[0];
                assert!(!is_error, "{log}");
                let complete = log.matches("Compiling crate-").count() == 6
                    && log.contains("warning: unused variable")
                    && log.contains("Finished dev profile")
                    && log.contains("(end of file; 8 lines in total)");
                ModelResponse::text(format!("complete log: {complete}"))
            })
            // Run 3: the dev server.
            .tool_call("shell", bg(DEV_SERVER))
            .tool_call(
                "wait_task",
                json!({ "task_id": "bash_2", "timeout_ms": 200 }),
            )
            .react(|request| {
                let (_, waited, _) = request.tool_results()[0];
                assert!(waited.starts_with("wait_task: timed out"), "{waited}");
                ModelResponse::tool_use("", "shell_kill", json!({ "task_id": "bash_2" }))
            })
            .react(|request| {
                let (_, killed, is_error) = request.tool_results()[0];
                assert!(!is_error, "{killed}");
                assert!(
                    killed.starts_with("Killed bash_2: killed (SIGTERM) after "),
                    "{killed}"
                );
                ModelResponse::text("stopped")
            })
    });
    let agent = local.agent.clone();
    let wake = WakeLoop::spawn(agent.clone());
    let mut reports = wake.reports();

    // 1. The model starts the build in the background and ends its turn.
    let first = wake
        .prompt("Build the workspace in the background.")
        .await
        .unwrap();
    assert_eq!(first.stop, StopReason::EndTurn);
    assert_eq!(
        first.text,
        "Building in the background; I will be woken when it ends."
    );
    assert!(first.notified.is_empty());
    let started = local.starts();
    assert_eq!(started.len(), 1);
    let build_log = started[0].output_path.clone();
    assert!(build_log.starts_with(agent.tasks_dir().unwrap()));

    // 2. The agent is idle, the task runs, nothing is pending, nothing polls.
    assert!(!agent.is_running());
    let running = agent.running_tasks().await.unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].id, "bash_1");
    assert!(!agent.has_pending_task_notifications());
    until(|| std::fs::read_to_string(&build_log).is_ok_and(|log| log.contains("crate-6"))).await;

    // 3. The task ends; the wake loop runs a drain-only turn on its own.
    open(&local.path("build-may-finish"));
    let exit = local.next_exit().await;
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    let woken = loop {
        let report = tokio::time::timeout(WAIT, reports.recv())
            .await
            .expect("woken in time")
            .unwrap();
        if report.trigger != WakeTrigger::Prompt {
            break report;
        }
    };
    assert_eq!(woken.trigger, WakeTrigger::Wake);
    let woken = woken.outcome.unwrap();
    assert_eq!(woken.notified, vec![exit.clone()]);
    assert_eq!(woken.text, "complete log: true");
    assert!(!agent.has_pending_task_notifications());

    // 4. The host painted a banner for it, once, and never the raw XML.
    let stream = local.stream();
    let banners: Vec<Banner> = stream
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TaskNotification(n) => Some(Banner::for_notification(n)),
            _ => None,
        })
        .collect();
    assert_eq!(banners.len(), 1);
    assert!(
        banners[0].text.starts_with("⌁ bash_1 exited (0) "),
        "{}",
        banners[0].text
    );
    assert!(banners[0].text.ends_with(&build_log.display().to_string()));
    assert_eq!(banners[0].tone, Tone::Dim);
    assert!(!stream.iter().any(|event| matches!(
        event,
        StreamEvent::UserText { text } if text.contains("<task-notification>")
    )));

    // 5. The dev server: started, still up after a bounded wait, killed by the model.
    let served = wake
        .prompt("Start the dev server, check it stays up, then stop it.")
        .await
        .unwrap();
    assert_eq!(served.text, "stopped");
    assert!(served.notified.is_empty());
    let killed = local.next_exit().await;
    assert_eq!(killed.task_id.to_string(), "bash_2");
    assert_eq!(killed.status, TaskStatus::Killed);
    assert_eq!((killed.exit_code, killed.signal), (143, Some(Signal::TERM)));
    assert!(
        !agent.has_pending_task_notifications(),
        "the kill told the model: no notification follows"
    );
    assert!(agent.running_tasks().await.unwrap().is_empty());

    // 6. Destroy; no process is left; the session on disk replays as it was painted.
    drop(wake);
    let report = agent.destroy().await.unwrap();
    assert_eq!(
        report.outcome(DestroyStep::DestroyHandle),
        Some(&StepOutcome::Done)
    );
    for start in local.starts() {
        assert_eq!(live_processes_in_group(start.pid), Vec::<u32>::new());
    }
    let stored = SessionStore::new(local.dir.path()).load("e2e").unwrap();
    assert_eq!(stored, agent.session());
    assert_eq!(stored.events(), local.stream());
    assert!(
        std::fs::read_to_string(&build_log)
            .unwrap()
            .ends_with("Finished dev profile\n")
    );
}
