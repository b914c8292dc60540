//! Destroy: order, bounds, idempotence, and nothing delivered afterwards.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::Notify;
use zidane_agent::{
    Agent, AgentError, Behavior, DestroyStep, FnResource, HookEvent, RunOptions, ScriptedModel,
    Session, SessionStore, StepOutcome, StopReason,
};
use zidane_context::{ExecutionContext, MockCall, MockContext};

use crate::run_loop::Blocker;
use crate::support::{TASKS, bg, harness_with, notified, tid, until};

#[tokio::test]
async fn destroy_runs_its_steps_in_order() {
    let order = Arc::new(Mutex::new(Vec::<String>::new()));
    let model =
        ScriptedModel::new()
            .respond(
                zidane_agent::ModelResponse::tool_use("s", "shell", bg("npm run dev"))
                    .with_tool_use("b", "block", json!({})),
            )
            .text("never");
    let context = Arc::new(MockContext::new());
    let h = harness_with(model, context.clone(), |b| {
        b.tool(Arc::new(Blocker(Arc::new(Notify::new()))))
    });
    let log = order.clone();
    h.agent.hooks().subscribe(move |event| {
        if let HookEvent::BackgroundExit(exit) = event {
            log.lock().unwrap().push(format!("exit {}", exit.task_id));
        }
    });
    for name in ["first", "second"] {
        let log = order.clone();
        h.agent.register_resource(
            name,
            Arc::new(FnResource::new(move || {
                let log = log.clone();
                async move { log.lock().unwrap().push(format!("close {name}")) }
            })),
        );
    }
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.run(RunOptions::new("go")).await });
    until(|| !h.agent.in_flight_tools().is_empty()).await;

    let report = h.agent.destroy().await.unwrap();
    let steps: Vec<_> = report.steps.iter().map(|(step, _)| *step).collect();
    assert_eq!(
        steps,
        [
            DestroyStep::ClearQueues,
            DestroyStep::AbortRun,
            DestroyStep::CloseResources,
            DestroyStep::DestroyHandle,
            DestroyStep::ClearQueuesAgain,
        ]
    );
    assert!(
        report
            .steps
            .iter()
            .all(|(_, outcome)| *outcome == StepOutcome::Done),
        "{report:?}"
    );
    assert_eq!(run.await.unwrap().unwrap().stop, StopReason::Cancelled);
    assert_eq!(
        *order.lock().unwrap(),
        ["close second", "close first", "exit bash_1"],
        "resources close in reverse, before the handle's tasks are killed"
    );
    let handle = h.agent.current_handle().unwrap();
    assert!(h.context.calls().contains(&MockCall::Destroy(handle)));
    assert!(
        !h.agent.has_pending_task_notifications(),
        "the kill's exit was cleared"
    );
}

#[tokio::test]
async fn destroy_is_idempotent_and_everything_after_it_is_a_typed_error() {
    let h = harness_with(ScriptedModel::new(), Arc::new(MockContext::new()), |b| b);
    let first = h.agent.destroy().await.unwrap();
    assert!(!first.was_already_destroyed());
    assert_eq!(
        first.outcome(DestroyStep::DestroyHandle),
        Some(&StepOutcome::Skipped),
        "no handle yet"
    );
    assert!(h.agent.destroy().await.unwrap().was_already_destroyed());
    assert!(matches!(
        h.agent.run(RunOptions::new("x")).await,
        Err(AgentError::Destroyed)
    ));
    assert!(matches!(h.agent.handle().await, Err(AgentError::Destroyed)));
    assert!(h.agent.kill_background_task("bash_1").await.is_err());
}

#[tokio::test]
async fn a_step_that_does_not_settle_is_abandoned() {
    let context = Arc::new(MockContext::new());
    context.set_destroy_delay(Some(Duration::from_secs(30)));
    let h = harness_with(ScriptedModel::new(), context, |b| {
        b.behavior(
            Behavior::new()
                .tasks_dir(TASKS)
                .destroy_timeout(Duration::from_millis(100)),
        )
    });
    h.agent.handle().await.unwrap();
    h.agent.register_resource(
        "stuck",
        Arc::new(FnResource::new(std::future::pending::<()>)),
    );
    let started = Instant::now();
    let report = h.agent.destroy().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "never hangs");
    assert_eq!(
        report.outcome(DestroyStep::CloseResources),
        Some(&StepOutcome::TimedOut)
    );
    assert_eq!(
        report.outcome(DestroyStep::DestroyHandle),
        Some(&StepOutcome::TimedOut)
    );
    assert_eq!(
        report.outcome(DestroyStep::ClearQueuesAgain),
        Some(&StepOutcome::Done)
    );
}

#[tokio::test]
async fn a_task_killed_by_destroy_is_not_delivered_to_a_later_agent() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let context = Arc::new(MockContext::new());
    let model = ScriptedModel::new()
        .respond(
            zidane_agent::ModelResponse::tool_use("a", "shell", bg("done soon")).with_tool_use(
                "b",
                "shell",
                bg("runs forever"),
            ),
        )
        .text("started");
    let old = Agent::builder(Arc::new(model), context.clone())
        .store(store.clone())
        .session(Session::new("s1"))
        .build()
        .unwrap();
    old.run(RunOptions::new("go")).await.unwrap();
    context.finish(tid(1), 0);
    assert!(old.has_pending_task_notifications());
    // The session is swapped: the old agent is torn down (bash_2 is killed by it).
    old.destroy().await.unwrap();
    assert!(!old.has_pending_task_notifications());
    assert_eq!(context.task(tid(2)), None, "destroyed with its handle");

    let model = ScriptedModel::new().text("fresh");
    let new = Agent::builder(Arc::new(model.clone()), context.clone())
        .store(store.clone())
        .session(store.load("s1").unwrap())
        .build()
        .unwrap();
    assert!(!new.has_pending_task_notifications());
    let run = new.run(RunOptions::new("hello")).await.unwrap();
    assert!(notified(&run).is_empty());
    assert!(model.last_request().unwrap().notifications().is_empty());
    assert_ne!(new.current_handle(), old.current_handle());
    let _ = context
        .list_background(new.current_handle().unwrap())
        .await
        .unwrap();
}
