//! Start, notify, order: a background start returns before the task exits, and its exit
//! opens the next run as a `<task-notification>` — in completion order when several end.

use zidane::prelude::*;
use zidane::wire::exit_summary;

use super::support::{Local, bg, gated, open, texts_of_last_user_turn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_start_returns_before_the_task_exits() {
    let mut local = Local::new(|dir| {
        ScriptedModel::new()
            .tool_call("shell", bg(&gated(&dir.join("go"), "build")))
            .text("started")
    });
    let outcome = local.agent.run(RunOptions::new("build it")).await.unwrap();

    // The run is over while the task cannot have ended: it waits for a file nobody made.
    assert_eq!(outcome.text, "started");
    let listed = local
        .agent
        .context()
        .list_background(local.agent.current_handle().unwrap())
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status(), TaskStatus::Running);
    let started = &local.starts()[0];
    assert_eq!(listed[0].pid, started.pid);
    assert!(
        started.output_path.is_file(),
        "the log exists from the start"
    );
    assert!(!local.agent.has_pending_task_notifications());

    open(&local.path("go"));
    let exit = local.next_exit().await;
    assert_eq!((exit.status, exit.exit_code), (TaskStatus::Exited, 0));
    assert!(local.agent.has_pending_task_notifications());
    local.destroy_and_check().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_run_opens_with_the_notification_xml() {
    let command = "echo out; echo err >&2; exit 3";
    let mut local = Local::new(|_| {
        ScriptedModel::new()
            .tool_call("shell", bg(command))
            .text("started")
            .text("seen")
    });
    local.agent.run(RunOptions::new("run it")).await.unwrap();
    let exit = local.next_exit().await;
    assert_eq!(
        (exit.status, exit.exit_code, exit.signal),
        (TaskStatus::Exited, 3, None)
    );

    let outcome = local
        .agent
        .run(RunOptions::new("what happened?"))
        .await
        .unwrap();
    assert_eq!(outcome.notified, vec![exit.clone()]);

    // The seeded user turn: the block first, then the prompt — byte for byte.
    let request = local.last_request();
    let texts = texts_of_last_user_turn(&request);
    let expected = format!(
        "<task-notification>\n\
         <task-id>bash_1</task-id>\n\
         <status>exited</status>\n\
         <exit-code>3</exit-code>\n\
         <command>echo out; echo err &gt;&amp;2; exit 3</command>\n\
         <output-file>{}</output-file>\n\
         <duration-ms>{}</duration-ms>\n\
         <summary>{}</summary>\n\
         </task-notification>",
        exit.output_path.display(),
        exit.duration.as_millis(),
        exit_summary(&exit)
            .replace('&', "&amp;")
            .replace('>', "&gt;"),
    );
    assert_eq!(texts, vec![expected, "what happened?".to_owned()]);
    assert!(exit_summary(&exit).ends_with("— exited 3"));
    assert_eq!(
        std::fs::read_to_string(&exit.output_path).unwrap(),
        "out\nerr\n"
    );
    local.destroy_and_check().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_tasks_are_notified_in_completion_order() {
    // Started a, b, c; the test ends them c, a, b — waiting for each exit before opening
    // the next gate, so the completion order is a fact.
    let mut local = Local::new(|dir| {
        ScriptedModel::new()
            .respond(
                ModelResponse::tool_use("", "shell", bg(&gated(&dir.join("go_a"), "a")))
                    .with_tool_use("", "shell", bg(&gated(&dir.join("go_b"), "b")))
                    .with_tool_use("", "shell", bg(&gated(&dir.join("go_c"), "c"))),
            )
            .text("three started")
            .text("three ended")
    });
    local
        .agent
        .run(RunOptions::new("start three"))
        .await
        .unwrap();
    let mut ended = Vec::new();
    for gate in ["go_c", "go_a", "go_b"] {
        open(&local.path(gate));
        ended.push(local.next_exit().await.task_id.to_string());
    }
    assert_eq!(ended, ["bash_3", "bash_1", "bash_2"]);

    let outcome = local.agent.run(RunOptions::new("and?")).await.unwrap();
    let notified: Vec<String> = outcome
        .notified
        .iter()
        .map(|exit| exit.task_id.to_string())
        .collect();
    assert_eq!(notified, ["bash_3", "bash_1", "bash_2"]);
    let request = local.last_request();
    let blocks: Vec<String> = request
        .notifications()
        .iter()
        .map(|n| n.task_id.to_string())
        .collect();
    assert_eq!(blocks, ["bash_3", "bash_1", "bash_2"]);
    assert_eq!(texts_of_last_user_turn(&request).last().unwrap(), "and?");

    // Delivered once: the next run has nothing to tell.
    assert!(!local.agent.has_pending_task_notifications());
    local.destroy_and_check().await;
}
