//! A foreground `shell` call under a move budget, over a real `ProcessContext`: a
//! command that outlives the budget moves to the background (its log whole, its exit
//! told once), one that ends in time answers as a foreground call and is never told
//! again, a cancel kills, and `timeout_ms` keeps killing.
#![cfg(unix)]

use std::time::{Duration, Instant};

use insta::assert_snapshot;
use serde_json::json;
use zidane_context::{KillReason, TaskId, TaskStatus};
use zidane_tools::{BackgroundGate, ToolRegistry};

use crate::process::{Session, regex_escape};

/// A session whose foreground commands move after `budget`.
async fn session(budget: Duration) -> Session {
    let mut session = Session::new().await;
    let mut background = session.context.background().clone();
    background.foreground_budget = Some(budget);
    session.context = session.context.with_background(background);
    session
}

/// Ends the session, then checks no exit reached the sink besides those already taken:
/// the handle's destroy settles every task, so a late exit would be there by now.
async fn close_told_nothing_more(mut session: Session) {
    let handle = session.context.handle();
    tokio::time::timeout(
        Duration::from_secs(20),
        session.context.execution().destroy(handle),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(
        session.exits.try_recv().is_err(),
        "an exit was told that the call had answered"
    );
}

fn stable(session: &Session) -> insta::Settings {
    let dir = session.dir.path().display().to_string();
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&dir), "[TMP]");
    settings.add_filter(r"\(pid \d+\)", "(pid [PID])");
    settings.add_filter(r#""pid": \d+"#, r#""pid": "[PID]""#);
    settings.add_filter(r"\.\d{8}-\d{6}-\d{3}\.log", ".[TS].log");
    settings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_outlives_the_budget_moves_and_its_exit_is_told_once() {
    let mut session = session(Duration::from_secs(1)).await;
    let began = Instant::now();
    let output = session
        .call(
            "shell",
            json!({ "command": "echo start; sleep 5; echo done" }),
        )
        .await;
    let returned_after = began.elapsed();
    assert!(
        returned_after < Duration::from_secs(4),
        "the call returned after {returned_after:?}, not at its 1 s budget"
    );
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.data["moved_to_background"], true);
    assert_eq!(output.data["task_id"], "bash_1");
    stable(&session).bind(|| {
        assert_snapshot!(
            "moved_after_budget",
            format!(
                "{}\n--- data\n{}",
                output.text,
                serde_json::to_string_pretty(&output.data).unwrap()
            )
        );
    });

    let exit = session.next_exit().await;
    assert_eq!(exit.task_id.to_string(), "bash_1");
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    let log = std::fs::read_to_string(&exit.output_path).unwrap();
    assert_eq!(
        log, "start\ndone\n",
        "the log holds the output from the first byte"
    );
    close_told_nothing_more(session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_ends_in_time_answers_as_foreground_and_is_not_told() {
    let session = session(Duration::from_secs(20)).await;
    let output = session
        .call(
            "shell",
            json!({ "command": "echo hello; echo oops >&2; exit 3" }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.text, "hello\noops\n\nExit code: 3");
    assert_eq!(output.data["output"], "hello\noops\n");
    assert_eq!(output.data["exit_code"], 3);
    // The exit in the data is what acknowledges it for the agent; its id is the
    // provisional one of a held task, never one of the session's.
    let held: TaskId = output.data["exit"]["task_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(held.is_held(), "{held}");
    assert_eq!(output.data["exit"]["exit_code"], 3);
    assert!(output.data.get("moved_to_background").is_none());
    // A foreground call leaves no task and no log behind.
    let handle = session.context.handle();
    let listed = session.context.execution().list_background(handle).await;
    assert!(listed.unwrap().is_empty());
    let logs = std::fs::read_dir(session.dir.path().join("tasks")).unwrap();
    assert_eq!(logs.count(), 0, "the foreground command's log was kept");
    close_told_nothing_more(session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_calls_take_no_task_id() {
    let session = session(Duration::from_secs(20)).await;
    for n in 0..3 {
        let output = session
            .call("shell", json!({ "command": format!("echo {n}") }))
            .await;
        assert!(!output.is_error, "{}", output.text);
        assert!(output.data.get("task_id").is_none(), "{}", output.data);
    }
    let started = session
        .call(
            "shell",
            json!({ "command": "true", "run_in_background": true }),
        )
        .await;
    assert!(!started.is_error, "{}", started.text);
    assert_eq!(started.data["task_id"], "bash_1");
    let handle = session.context.handle();
    let listed = session
        .context
        .execution()
        .list_background(handle)
        .await
        .unwrap();
    let ids: Vec<String> = listed.iter().map(|e| e.task_id.to_string()).collect();
    assert_eq!(ids, ["bash_1"]);
    session.context.execution().destroy(handle).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_call_takes_the_next_id_after_foreground_calls() {
    let mut session = session(Duration::from_millis(300)).await;
    for _ in 0..2 {
        let output = session.call("shell", json!({ "command": "true" })).await;
        assert!(!output.is_error, "{}", output.text);
    }
    let moved = session
        .call("shell", json!({ "command": "echo moved; sleep 1" }))
        .await;
    assert_eq!(moved.data["moved_to_background"], true, "{}", moved.text);
    assert_eq!(moved.data["task_id"], "bash_1");
    let path = moved.data["output_path"].as_str().unwrap().to_owned();
    assert!(path.contains("bash_1."), "{path}");
    let exit = session.next_exit().await;
    assert_eq!(exit.task_id.to_string(), "bash_1");
    assert_eq!(exit.output_path.display().to_string(), path);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "moved\n");
    let started = session
        .call(
            "shell",
            json!({ "command": "true", "run_in_background": true }),
        )
        .await;
    assert_eq!(started.data["task_id"], "bash_2", "{}", started.text);
    let _ = session.next_exit().await;
    close_told_nothing_more(session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_kills_its_command_and_is_not_told() {
    let session = session(Duration::from_secs(20)).await;
    let began = Instant::now();
    let call = session.call("shell", json!({ "command": "echo begun; sleep 30" }));
    let cancel = session.context.cancel().clone();
    let logs = session.dir.path().join("tasks");
    let output = {
        tokio::pin!(call);
        // Cancel once the command has started writing its log.
        loop {
            tokio::select! {
                output = &mut call => break output,
                () = tokio::time::sleep(Duration::from_millis(20)) => {
                    let started = std::fs::read_dir(&logs).ok().into_iter().flatten().flatten()
                        .any(|entry| std::fs::read_to_string(entry.path()).is_ok_and(|log| log.contains("begun")));
                    if started {
                        cancel.cancel();
                    }
                }
            }
        }
    };
    assert!(began.elapsed() < Duration::from_secs(15));
    assert!(output.is_error, "{}", output.text);
    assert!(
        output.text.starts_with(
            "begun\n\nCancelled: the command and every process it started were killed."
        ),
        "{}",
        output.text
    );
    assert_eq!(output.data["exit"]["status"], "killed");
    close_told_nothing_more(session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_within_the_budget_kills_as_before() {
    let session = session(Duration::from_secs(20)).await;
    let output = session
        .call("shell", json!({ "command": "sleep 30", "timeout_ms": 500 }))
        .await;
    assert!(output.is_error);
    assert!(
        output
            .text
            .contains("Timed out after 500ms: the command and every process"),
        "{}",
        output.text
    );
    assert!(output.data.get("task_id").is_none());
    close_told_nothing_more(session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_past_the_budget_kills_the_moved_task_and_its_end_is_told() {
    let mut session = session(Duration::from_secs(1)).await;
    let output = session
        .call(
            "shell",
            json!({ "command": "sleep 30", "timeout_ms": 3000 }),
        )
        .await;
    assert_eq!(output.data["moved_to_background"], true, "{}", output.text);
    assert!(
        output.text.contains("Its log is empty so far."),
        "{}",
        output.text
    );
    let exit = session.next_exit().await;
    assert_eq!(exit.status, TaskStatus::Killed);
    assert_eq!(
        exit.kill_reason,
        Some(KillReason::WallTime {
            budget: Duration::from_secs(3)
        })
    );
    close_told_nothing_more(session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_trigger_moves_the_call_at_once() {
    let mut session = session(Duration::from_secs(600)).await;
    session.context.move_trigger().cancel();
    let output = session
        .call("shell", json!({ "command": "sleep 30" }))
        .await;
    assert_eq!(output.data["moved_to_background"], true, "{}", output.text);
    assert!(
        output.text.starts_with("Moved by the user after "),
        "{}",
        output.text
    );
    let killed = session
        .call("shell_kill", json!({ "task_id": "bash_1" }))
        .await;
    assert!(!killed.is_error, "{}", killed.text);
    let exit = session.next_exit().await;
    assert_eq!(exit.kill_reason, Some(KillReason::Requested));
    close_told_nothing_more(session).await;
}

#[test]
fn the_description_says_when_a_command_moves() {
    let registry = ToolRegistry::with_default_tools().unwrap();
    let shell = registry.resolve("shell").unwrap();
    let moving = BackgroundGate::open().with_foreground_budget(Some(Duration::from_secs(120)));
    let description = shell.spec(&zidane_tools::SpecView::new(moving)).description;
    assert!(
        description.contains("A command still running after 2 minutes moves to the background"),
        "{description}"
    );
    for gate in [
        BackgroundGate::open(),
        BackgroundGate::closed(zidane_tools::GateReason::Disabled)
            .with_foreground_budget(Some(Duration::from_secs(120))),
    ] {
        assert!(
            !shell
                .spec(&zidane_tools::SpecView::new(gate))
                .description
                .contains("moves to the background")
        );
    }
}
