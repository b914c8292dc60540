//! The host's wake loop: drain-only runs on exits while idle, follow-up drains after a
//! run, no wake-ups after an abort until the next prompt.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::{Notify, broadcast};
use zidane_agent::{ModelResponse, ScriptedModel, StopReason, WakeLoop, WakeReport, WakeTrigger};
use zidane_context::MockContext;

use crate::run_loop::Blocker;
use crate::support::{WAIT, bg, harness, harness_with, tid};

/// A model that starts `cargo build` in the background, ends its turn, and when woken
/// answers `woken by <task id>`.
fn build_then_woken() -> ScriptedModel {
    ScriptedModel::new()
        .tool_call("shell", bg("cargo build"))
        .text("building; I will be told")
        .react(|request| {
            ModelResponse::text(format!("woken by {}", request.notifications()[0].task_id))
        })
}

async fn next(reports: &mut broadcast::Receiver<WakeReport>) -> WakeReport {
    tokio::time::timeout(WAIT, reports.recv())
        .await
        .expect("a wake report in time")
        .expect("the loop is alive")
}

#[tokio::test]
async fn an_exit_while_idle_wakes_the_agent_with_a_drain_only_run() {
    let h = harness(build_then_woken());
    let wake = WakeLoop::spawn(h.agent.clone());
    let mut reports = wake.reports();
    wake.prompt("build").await.unwrap();
    assert_eq!(next(&mut reports).await.trigger, WakeTrigger::Prompt);

    h.context.finish(tid(1), 0);
    let report = next(&mut reports).await;
    assert_eq!(report.trigger, WakeTrigger::Wake);
    let outcome = report.outcome.unwrap();
    assert_eq!(outcome.text, "woken by bash_1");
    assert_eq!(
        h.model.last_request().unwrap().prompt(),
        "",
        "no user prompt echoed"
    );
    assert!(!h.agent.has_pending_task_notifications());
}

#[tokio::test]
async fn exits_that_land_mid_run_are_drained_right_after_it() {
    let gate = Arc::new(Notify::new());
    let context = Arc::new(MockContext::new());
    let model = ScriptedModel::new()
        .tool_call("shell", bg("make"))
        .text("started")
        .tool_call("block", json!({}))
        .text("prompt run done")
        .react(|request| {
            ModelResponse::text(format!("follow-up for {}", request.notifications().len()))
        });
    let h = harness_with(model, context, |b| b.tool(Arc::new(Blocker(gate.clone()))));
    let wake = WakeLoop::spawn(h.agent.clone());
    let mut reports = wake.reports();
    wake.prompt("start").await.unwrap();
    next(&mut reports).await;

    let prompt = wake.prompt("block for a while");
    let finisher = async {
        crate::support::until(|| !h.agent.in_flight_tools().is_empty()).await;
        h.context.finish(tid(1), 0); // lands mid-run
        gate.notify_one();
    };
    let (outcome, ()) = tokio::join!(prompt, finisher);
    let outcome = outcome.unwrap();
    assert!(
        outcome.notified.is_empty(),
        "not injected into the run in flight"
    );
    assert_eq!(next(&mut reports).await.trigger, WakeTrigger::Prompt);
    let follow = next(&mut reports).await;
    assert_eq!(follow.outcome.unwrap().text, "follow-up for 1");
}

#[tokio::test]
async fn no_wake_up_after_an_abort_until_the_next_prompt() {
    let gate = Arc::new(Notify::new());
    let model = ScriptedModel::new()
        .tool_call("shell", bg("npm test"))
        .tool_call("block", json!({}))
        .react(|request| {
            ModelResponse::text(format!(
                "{} with {} notification",
                request.prompt(),
                request.notifications().len()
            ))
        });
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.tool(Arc::new(Blocker(gate)))
    });
    let wake = WakeLoop::spawn(h.agent.clone());
    let mut reports = wake.reports();
    let aborted = async {
        crate::support::until(|| !h.agent.in_flight_tools().is_empty()).await;
        wake.abort();
    };
    let (outcome, ()) = tokio::join!(wake.prompt("test it"), aborted);
    assert_eq!(outcome.unwrap().stop, StopReason::Cancelled);
    assert!(wake.is_suppressed());
    next(&mut reports).await;

    h.context.finish(tid(1), 1);
    assert!(h.agent.has_pending_task_notifications());
    // No wake-up: a bounded wait sees no report while the exit stays queued.
    let quiet = tokio::time::timeout(std::time::Duration::from_millis(300), reports.recv()).await;
    assert!(quiet.is_err(), "woke after an abort: {quiet:?}");
    assert!(h.agent.has_pending_task_notifications());

    // The next real prompt lifts the suppression and carries the exit at its head.
    let outcome = wake.prompt("status").await.unwrap();
    assert_eq!(outcome.text, "status with 1 notification");
    assert!(!wake.is_suppressed());
}

#[tokio::test]
async fn dropping_the_loop_stops_wake_ups() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("sleep"))
        .text("ok");
    let h = harness(model);
    let wake = WakeLoop::spawn(h.agent.clone());
    wake.prompt("go").await.unwrap();
    drop(wake);
    h.context.finish(tid(1), 0);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(
        h.agent.has_pending_task_notifications(),
        "nobody drained it"
    );
}

#[tokio::test]
async fn an_exit_only_a_sweep_can_see_wakes_the_idle_agent_once() {
    use zidane_context::{Capabilities, DetachedTasks};
    let model = ScriptedModel::new()
        .tool_call("shell", bg("deploy"))
        .text("deploying on a durable runner")
        .react(|request| {
            ModelResponse::text(format!("swept {}", request.notifications()[0].task_id))
        });
    // A durable context: it records exits and never pushes them.
    let context = Arc::new(
        MockContext::new()
            .with_capabilities(
                Capabilities::new(DetachedTasks::Durable)
                    .with_sweep_interval(std::time::Duration::from_millis(20)),
            )
            .without_exit_push(),
    );
    let h = harness_with(model, context, |b| b);
    let wake = WakeLoop::spawn(h.agent.clone());
    let mut reports = wake.reports();
    wake.prompt("deploy it").await.unwrap();
    assert_eq!(next(&mut reports).await.trigger, WakeTrigger::Prompt);

    h.context.finish(tid(1), 0);
    assert!(
        !h.agent.has_pending_task_notifications(),
        "nothing was pushed"
    );
    let woke = next(&mut reports).await;
    assert_eq!(woke.trigger, WakeTrigger::Wake);
    let outcome = woke.outcome.unwrap();
    assert_eq!(outcome.text, "swept bash_1");
    assert_eq!(outcome.notified.len(), 1);
    assert!(h.event_names().contains(&"background:exit".to_owned()));

    // Later sweeps find nothing new: no second wake.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(matches!(
        reports.try_recv(),
        Err(broadcast::error::TryRecvError::Empty)
    ));
}

/// A host that reloads a session on a durable context adopts its running tasks, whose
/// exit callbacks died with the host that started them: even when the context declares
/// no sweep interval, the idle loop sweeps and wakes the agent for their exits. Whether
/// the context pushes exits (to the old host's callback) or never does, the new host
/// learns of the exit only by that sweep.
#[tokio::test(start_paused = true)]
async fn a_reloaded_host_is_woken_by_an_adopted_task_on_a_durable_context_without_an_interval() {
    use zidane_agent::{DEFAULT_DURABLE_SWEEP_INTERVAL, RunOptions, Session, SessionStore};
    use zidane_context::{DetachedTasks, ExecutionContext};

    use crate::support::{notified, stored_agent};

    for pushes_to_the_old_host in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let context = MockContext::new().with_detached_tasks(DetachedTasks::Durable);
        let context = Arc::new(if pushes_to_the_old_host {
            context
        } else {
            context.without_exit_push()
        });
        assert_eq!(context.capabilities().sweep_interval, None);
        let handle = context.create_handle().await.unwrap();

        let model = ScriptedModel::new()
            .tool_call("shell", bg("deploy"))
            .text("deploying on a durable runner");
        let first = stored_agent(model, &context, handle, &store, Session::new("s1"));
        first.run(RunOptions::new("deploy it")).await.unwrap();
        // The first host goes away; the task runs on.
        drop(first);

        let model = ScriptedModel::new().react(|request| {
            ModelResponse::text(format!("adopted {}", request.notifications()[0].task_id))
        });
        let second = stored_agent(model, &context, handle, &store, store.load("s1").unwrap());
        assert_eq!(
            second.idle_sweep_interval(),
            Some(DEFAULT_DURABLE_SWEEP_INTERVAL)
        );
        let wake = WakeLoop::spawn(second.clone());

        context.finish(tid(1), 0);
        assert!(
            !second.has_pending_task_notifications(),
            "nothing reached the new host ({pushes_to_the_old_host})"
        );
        // Time is paused: it advances to the loop's next timer, the sweep, unless the
        // loop has none; then it reaches this bound and the test fails.
        let woken = tokio::time::timeout(WAIT, wake.next_wake())
            .await
            .expect("woken by the idle sweep")
            .unwrap();
        assert_eq!(woken.text, "adopted bash_1");
        assert_eq!(notified(&woken), ["bash_1"]);
        assert!(!second.has_pending_task_notifications());
        drop(wake);
        second.destroy().await.unwrap();
    }
}

#[test]
fn a_durable_context_is_swept_while_idle_at_its_interval_or_the_default() {
    use std::time::Duration;

    use zidane_context::{Capabilities, DetachedTasks};

    let interval = |capabilities: Option<Capabilities>| {
        let context = MockContext::new();
        let context = match capabilities {
            Some(capabilities) => context.with_capabilities(capabilities),
            None => context,
        };
        harness_with(ScriptedModel::new(), Arc::new(context), |b| b)
            .agent
            .idle_sweep_interval()
    };
    // Every exit of a process-lifetime context is pushed to the one host there is.
    assert_eq!(interval(None), None);
    assert_eq!(
        interval(Some(Capabilities::new(DetachedTasks::Durable))),
        Some(zidane_agent::DEFAULT_DURABLE_SWEEP_INTERVAL)
    );
    let declared = Duration::from_millis(250);
    assert_eq!(
        interval(Some(
            Capabilities::new(DetachedTasks::Durable).with_sweep_interval(declared)
        )),
        Some(declared),
        "a declared interval wins"
    );
}

#[tokio::test]
async fn next_wake_gives_the_outcome_of_the_run_a_wake_made_however_late_it_is_asked() {
    let h = harness(build_then_woken());
    let wake = WakeLoop::spawn(h.agent.clone());
    let mut reports = wake.reports();
    wake.prompt("build").await.unwrap();
    h.context.finish(tid(1), 0);
    // The wake-up has run before anyone asks for it: next_wake still returns it.
    assert_eq!(next(&mut reports).await.trigger, WakeTrigger::Prompt);
    assert_eq!(next(&mut reports).await.trigger, WakeTrigger::Wake);

    let woken = tokio::time::timeout(WAIT, wake.next_wake())
        .await
        .expect("the wake-up in time")
        .unwrap();
    assert_eq!(woken.text, "woken by bash_1");
    assert_eq!(woken.notified.len(), 1);
    let blocks = woken.notification_blocks();
    assert_eq!(blocks.len(), 1);
    assert!(
        blocks[0].starts_with("<task-notification>\n<task-id>bash_1</task-id>"),
        "{blocks:?}"
    );
    // The prompt's own run is never a wake-up: nothing more is waiting.
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(50), wake.next_wake())
            .await
            .is_err()
    );
}
