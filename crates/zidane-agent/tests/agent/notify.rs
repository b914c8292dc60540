//! Push delivery: an exit is notified at the next run, as exact XML, in completion order.

use std::time::Duration;

use zidane_agent::{ModelResponse, RunOptions, ScriptedModel, StopReason};
use zidane_context::{Signal, TaskLimits};
use zidane_wire::{ContentBlock, Role};

use crate::support::{bg, harness, log, notified, tid};

#[tokio::test]
async fn an_exit_is_injected_at_the_next_run_as_exact_xml() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("npm run build"))
        .text("Started; I will be told when it ends.")
        .react(|request| {
            let n = &request.notifications()[0];
            ModelResponse::text(format!("read {}", n.output_file))
        });
    let h = harness(model);
    h.context
        .set_task_duration(Some(Duration::from_millis(4200)));

    let first = h.agent.run(RunOptions::new("build it")).await.unwrap();
    assert_eq!(first.stop, StopReason::EndTurn);
    assert!(!h.agent.has_pending_task_notifications());

    assert!(h.context.finish(tid(1), 0));
    assert!(h.agent.has_pending_task_notifications());

    let woken = h
        .agent
        .run(RunOptions::new("what happened?"))
        .await
        .unwrap();
    assert_eq!(notified(&woken), ["bash_1"]);
    assert_eq!(woken.text, format!("read {}", log(1)));

    let seeded = &woken.turns[0];
    assert_eq!(seeded.role, Role::User);
    let texts: Vec<&str> = seeded
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.as_str(),
            other => panic!("unexpected block {other:?}"),
        })
        .collect();
    assert_eq!(
        texts.len(),
        2,
        "one block per notification, then the prompt"
    );
    assert_eq!(texts[1], "what happened?");
    insta::assert_snapshot!("notification_exit_0", texts[0]);
    assert_eq!(
        h.stream(),
        h.agent.session().events(),
        "live events equal replay"
    );
}

#[tokio::test]
async fn a_signal_exit_carries_its_signal() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("npm run dev"))
        .text("started")
        .text("noted");
    let h = harness(model);
    h.context
        .set_task_duration(Some(Duration::from_millis(1200)));
    h.agent.run(RunOptions::new("serve")).await.unwrap();
    h.context.terminate(tid(1), Signal::TERM);
    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    let ContentBlock::Text { text } = &woken.turns[0].content[0] else {
        panic!("not text");
    };
    insta::assert_snapshot!("notification_sigterm", text);
}

#[tokio::test]
async fn several_exits_are_notified_in_completion_order() {
    let model = ScriptedModel::new()
        .respond(
            ModelResponse::tool_use("a", "shell", bg("job one"))
                .with_tool_use("b", "shell", bg("job two"))
                .with_tool_use("c", "shell", bg("job three")),
        )
        .text("three started")
        .text("all done");
    let h = harness(model);
    h.agent.run(RunOptions::new("start three")).await.unwrap();
    for n in [2, 3, 1] {
        assert!(h.context.finish(tid(n), 0));
    }
    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(notified(&woken), ["bash_2", "bash_3", "bash_1"]);
    let request = h.model.last_request().unwrap();
    let ids: Vec<String> = request
        .notifications()
        .iter()
        .map(|n| n.task_id.to_string())
        .collect();
    assert_eq!(ids, ["bash_2", "bash_3", "bash_1"]);
    assert_eq!(request.prompt(), "", "a drain-only run has no prompt");
}

#[tokio::test]
async fn exits_that_land_mid_run_wait_for_the_next_run() {
    let context = std::sync::Arc::new(zidane_context::MockContext::new());
    let during = context.clone();
    let model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .react(move |_| {
            // The task ends while the model is thinking.
            during.finish(tid(1), 0);
            ModelResponse::text("started")
        })
        .text("got it");
    let h = crate::support::harness_with(model, context, |b| b);
    let first = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert!(first.notified.is_empty());
    assert!(h.agent.has_pending_task_notifications());
    let second = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(notified(&second), ["bash_1"]);
}

#[tokio::test]
async fn start_and_exit_fire_their_hooks() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .text("started");
    let h = harness(model);
    h.agent.run(RunOptions::new("go")).await.unwrap();
    h.context.finish(tid(1), 2);
    let names = h.event_names();
    assert_eq!(
        names,
        [
            "tool:before",
            "background:start",
            "tool:after",
            "background:exit"
        ]
    );
}

#[tokio::test]
async fn a_stall_is_reported_once_and_an_exit_replaces_it() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("npm init"))
        .text("started")
        .text("it is waiting for input")
        .text("ok");
    let h = harness_with_stall(model);
    h.agent.run(RunOptions::new("init")).await.unwrap();
    assert!(h.context.stall(tid(1), Duration::from_secs(45)));
    assert!(h.agent.has_pending_task_notifications());
    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(woken.stalls.len(), 1);
    assert!(woken.notified.is_empty());
    let request = h.model.last_request().unwrap();
    assert_eq!(request.stalls()[0].stalled_for_ms, 45_000);
    assert!(!h.agent.has_pending_task_notifications(), "one-shot");
    assert!(h.event_names().contains(&"background:stall".to_owned()));

    // A second quiet period stalls again; the task then ends before the next run.
    h.context.stall(tid(1), Duration::from_secs(90));
    h.context.finish(tid(1), 1);
    let next = h.agent.run(RunOptions::new("and now?")).await.unwrap();
    assert!(next.stalls.is_empty(), "the exit says more than the stall");
    assert_eq!(notified(&next), ["bash_1"]);
}

fn harness_with_stall(model: ScriptedModel) -> crate::support::Harness {
    crate::support::harness_with(
        model,
        std::sync::Arc::new(zidane_context::MockContext::new()),
        |b| {
            b.behavior(
                zidane_agent::Behavior::new()
                    .tasks_dir(crate::support::TASKS)
                    .task_limits(TaskLimits::new().stall_timeout(Duration::from_secs(45))),
            )
        },
    )
}
