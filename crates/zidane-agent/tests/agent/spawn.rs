//! Subagents over MockContext: a child's surviving tasks become the parent's, its
//! background events bubble up as `child:background:*`, and the depth is capped.

use std::sync::Arc;

use serde_json::json;
use zidane_agent::{
    Agent, HookEvent, ModelError, ModelResponse, RunOptions, SPAWN, ScriptedModel,
    SpawnToolOptions, StopReason, create_spawn_tool,
};
use zidane_context::{ExecutionContext, MockCall, MockContext, TaskStatus};
use zidane_tools::{BackgroundGate, SHELL, ToolContext};

use crate::support::{Harness, TASKS, bg, harness_with, log, tid, until};

fn parent(model: ScriptedModel, context: MockContext, options: SpawnToolOptions) -> Harness {
    harness_with(model, Arc::new(context), |b| b.spawn_tool(options))
}

fn spawn(prompt: &str) -> serde_json::Value {
    json!({ "prompt": prompt, "description": "a subagent" })
}

/// The hook events of the parent with this name.
fn named(h: &Harness, name: &str) -> Vec<HookEvent> {
    h.events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.name() == name)
        .cloned()
        .collect()
}

/// A `Child` event's child id and depth.
fn child_of(event: &HookEvent) -> (String, usize) {
    match event {
        HookEvent::Child {
            child_id, depth, ..
        } => (child_id.clone(), *depth),
        other => panic!("not a child event: {other:?}"),
    }
}

/// What the parent's model read as the spawn call's result (request `n`, 0-based).
fn spawn_result(model: &ScriptedModel, n: usize) -> (String, bool) {
    let request = &model.requests()[n];
    let (_, content, is_error) = request.tool_results()[0];
    (content.to_owned(), is_error)
}

/// The parent starts a child, the child starts `make` in the background and answers.
fn child_starts_make() -> ScriptedModel {
    ScriptedModel::new()
        .tool_call(SPAWN, spawn("build it"))
        .tool_call(SHELL, bg("make"))
        .text("Started bash_1 (make); it keeps running.")
        .text("The subagent started the build.")
}

#[tokio::test]
async fn a_childs_running_task_is_reassigned_and_its_exit_is_notified_to_the_parent_once() {
    let model = child_starts_make()
        .react(|request| {
            let notified = request.notifications();
            ModelResponse::text(format!("notified: {}", notified.len()))
        })
        .react(|request| ModelResponse::text(format!("again: {}", request.notifications().len())));
    let h = parent(model.clone(), MockContext::new(), SpawnToolOptions::new());

    let outcome = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert_eq!(outcome.text, "The subagent started the build.");
    let (result, is_error) = spawn_result(&model, 3);
    assert!(!is_error, "{result}");
    assert!(result.starts_with("Started bash_1 (make); it keeps running."));
    assert!(result.contains("now yours"), "{result}");
    assert!(result.contains(&log(1)), "{result}");

    // Moved to the parent's handle before the child's handle was destroyed.
    let parent_handle = h.agent.current_handle().unwrap();
    assert_eq!(h.context.task_handle(tid(1)), Some(parent_handle));
    let calls = h.context.calls();
    let reassign = calls
        .iter()
        .position(|c| matches!(c, MockCall::Reassign(_, to) if *to == parent_handle))
        .expect("reassigned");
    let MockCall::Reassign(child_handle, _) = calls[reassign] else {
        unreachable!()
    };
    assert_ne!(child_handle, parent_handle);
    let destroyed = calls
        .iter()
        .position(|c| *c == MockCall::Destroy(child_handle))
        .expect("child destroyed");
    assert!(reassign < destroyed, "{calls:?}");
    assert_eq!(
        h.context.task(tid(1)).unwrap().status(),
        TaskStatus::Running,
        "destroying the child did not kill the adopted task"
    );

    let reassigns = named(&h, "background:reassign");
    assert_eq!(reassigns.len(), 1);
    let HookEvent::BackgroundReassign(moved) = &reassigns[0] else {
        unreachable!()
    };
    assert_eq!(moved.task.task_id, tid(1));
    assert_eq!(
        (moved.from, moved.to, moved.child_id.as_str()),
        (child_handle, parent_handle, "s1.1")
    );
    assert_eq!(named(&h, "child:background:start").len(), 1);
    assert!(!h.agent.has_pending_task_notifications());

    // The exit now fires on the parent's bus and queues on the parent.
    assert!(h.context.finish(tid(1), 0));
    assert!(h.agent.has_pending_task_notifications());
    assert_eq!(named(&h, "background:exit").len(), 1);
    assert!(named(&h, "child:background:exit").is_empty());

    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(woken.text, "notified: 1");
    assert_eq!(woken.notified[0].task_id, tid(1));
    let again = h
        .agent
        .run(RunOptions::new("anything else?"))
        .await
        .unwrap();
    assert_eq!(again.text, "again: 0", "notified exactly once");
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn the_parents_listing_shows_an_adopted_task_and_its_kill_finds_it() {
    let h = parent(
        child_starts_make(),
        MockContext::new(),
        SpawnToolOptions::new(),
    );
    h.agent.run(RunOptions::new("go")).await.unwrap();

    let rows = h.agent.picker_rows().await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].id, "bash_1");
    let running = h.agent.running_tasks().await.unwrap();
    assert_eq!(running[0].id, "bash_1");

    assert!(h.agent.kill_background_task("bash_1").await.is_ok());
    assert_eq!(h.context.task(tid(1)).unwrap().status(), TaskStatus::Killed);
    // The user, not the model, ended it: the parent's model is told.
    assert_eq!(h.agent.pending_exits()[0].task_id, tid(1));
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn with_a_shared_handle_nothing_is_reassigned_and_the_parent_still_hears_the_exit() {
    let model = child_starts_make()
        .react(|request| ModelResponse::text(format!("{}", request.notifications().len())));
    let h = parent(
        model.clone(),
        MockContext::new(),
        SpawnToolOptions::new().share_handle(true),
    );
    h.agent.run(RunOptions::new("go")).await.unwrap();

    let parent_handle = h.agent.current_handle().unwrap();
    let calls = h.context.calls();
    assert!(
        !calls.iter().any(|c| matches!(c, MockCall::Reassign(..))),
        "{calls:?}"
    );
    assert!(
        !calls.iter().any(|c| matches!(c, MockCall::Destroy(_))),
        "the child must not destroy the shared handle: {calls:?}"
    );
    assert!(
        calls
            .iter()
            .filter(|c| matches!(c, MockCall::CreateHandle(_)))
            .count()
            == 1
    );
    assert_eq!(h.context.task_handle(tid(1)), Some(parent_handle));
    assert!(named(&h, "background:reassign").is_empty());
    assert_eq!(named(&h, "child:background:start").len(), 1);
    let (result, _) = spawn_result(&model, 3);
    assert!(result.contains("now yours"), "{result}");

    assert!(h.context.finish(tid(1), 0));
    assert!(h.agent.has_pending_task_notifications());
    assert_eq!(named(&h, "background:exit").len(), 1);
    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(woken.text, "1");
    assert!(!h.agent.has_pending_task_notifications());
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn a_context_that_cannot_reassign_gets_the_childs_tasks_killed() {
    let model = child_starts_make();
    let h = parent(
        model.clone(),
        MockContext::new().without_reassign(),
        SpawnToolOptions::new(),
    );
    h.agent.run(RunOptions::new("go")).await.unwrap();

    assert!(named(&h, "background:reassign").is_empty());
    // Killed when the child was destroyed; observability does not depend on
    // ownership: the kill still bubbles.
    let exits = named(&h, "child:background:exit");
    assert_eq!(exits.len(), 1);
    assert_eq!(child_of(&exits[0]), ("s1.1".to_owned(), 1));
    let HookEvent::Child { event, .. } = &exits[0] else {
        unreachable!()
    };
    assert!(
        matches!(&**event, HookEvent::BackgroundExit(e) if e.task_id == tid(1) && e.status == TaskStatus::Killed),
        "{event:?}"
    );
    assert!(
        h.context.task(tid(1)).is_none(),
        "cleared with the child's handle"
    );
    assert!(h.agent.running_tasks().await.unwrap().is_empty());
    assert!(!h.agent.has_pending_task_notifications());
    let (result, _) = spawn_result(&model, 3);
    assert!(!result.contains("now yours"), "{result}");
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn background_events_bubble_with_ids_and_depth_from_two_deep() {
    let context = MockContext::new();
    let model = ScriptedModel::new()
        .tool_call(SPAWN, spawn("delegate the build"))
        .tool_call(SPAWN, spawn("build it"))
        .tool_call(SHELL, bg("make"))
        .text("Started bash_1.")
        .text("My child started bash_1.")
        .text("Delegated.");
    let h = parent(model, context, SpawnToolOptions::new());
    h.agent.run(RunOptions::new("go")).await.unwrap();

    let starts = named(&h, "child:background:start");
    assert_eq!(starts.len(), 1);
    assert_eq!(child_of(&starts[0]), ("s1.1.1".to_owned(), 2));
    let HookEvent::Child { event, .. } = &starts[0] else {
        unreachable!()
    };
    assert!(matches!(&**event, HookEvent::BackgroundStart(s) if s.task_id == tid(1)));

    // The grandchild's task moved to the child (seen from the top as the child's
    // reassign), then to the parent (the parent's own reassign).
    let child_reassigns = named(&h, "child:background:reassign");
    assert_eq!(child_reassigns.len(), 1);
    assert_eq!(child_of(&child_reassigns[0]), ("s1.1".to_owned(), 1));
    let HookEvent::Child { event, .. } = &child_reassigns[0] else {
        unreachable!()
    };
    let HookEvent::BackgroundReassign(first) = &**event else {
        panic!("{event:?}")
    };
    assert_eq!(first.child_id, "s1.1.1");
    let reassigns = named(&h, "background:reassign");
    assert_eq!(reassigns.len(), 1);
    let HookEvent::BackgroundReassign(second) = &reassigns[0] else {
        unreachable!()
    };
    assert_eq!(second.child_id, "s1.1");
    assert_eq!(second.from, first.to);
    assert_eq!(Some(second.to), h.agent.current_handle());

    assert!(h.context.finish(tid(1), 0));
    assert_eq!(named(&h, "background:exit").len(), 1);
    assert!(h.agent.has_pending_task_notifications());
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn an_exit_during_a_grandchilds_run_bubbles_and_reaches_the_parent() {
    let context = Arc::new(MockContext::new());
    let ends = context.clone();
    let model = ScriptedModel::new()
        .tool_call(SPAWN, spawn("delegate"))
        .tool_call(SPAWN, spawn("build"))
        .tool_call(SHELL, bg("make"))
        .react(move |_| {
            // The task ends while the grandchild is still running.
            assert!(ends.finish(tid(1), 2));
            ModelResponse::text("make ran.")
        })
        .text("done")
        .text("done")
        .react(|request| {
            let notified = request.notifications();
            ModelResponse::text(format!("{} {}", notified.len(), notified[0].exit_code))
        });
    let h = harness_with(model, context, |b| b.spawn_tool(SpawnToolOptions::new()));
    h.agent.run(RunOptions::new("go")).await.unwrap();

    // The exit as it happened (the grandchild's), then as the child took it over
    // (nobody down the tree was told), then on the parent, where it is queued.
    let exits = named(&h, "child:background:exit");
    let seen: Vec<_> = exits.iter().map(child_of).collect();
    assert_eq!(seen, [("s1.1.1".to_owned(), 2), ("s1.1".to_owned(), 1)]);
    assert_eq!(named(&h, "background:exit").len(), 1);
    assert!(h.agent.has_pending_task_notifications());
    let woken = h.agent.run(RunOptions::drain()).await.unwrap();
    assert_eq!(woken.text, "1 2");
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn a_spawn_past_the_depth_cap_is_an_error_result() {
    let model = ScriptedModel::new()
        .tool_call(SPAWN, spawn("delegate"))
        .tool_call(SPAWN, spawn("delegate further"))
        .react(|request| {
            let (_, content, is_error) = request.tool_results()[0];
            ModelResponse::text(format!("{is_error}: {content}"))
        })
        .text("done");
    let h = parent(
        model.clone(),
        MockContext::new(),
        SpawnToolOptions::new().max_depth(1),
    );
    let outcome = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert_eq!(outcome.text, "done");
    let (result, is_error) = spawn_result(&model, 3);
    assert!(!is_error);
    assert!(
        result.starts_with("true: spawn: cannot start a subagent at depth 2"),
        "{result}"
    );
    assert!(result.contains("at most 1 deep"), "{result}");
    // Only one child was ever built.
    let handles = h
        .context
        .calls()
        .iter()
        .filter(|c| matches!(c, MockCall::CreateHandle(_)))
        .count();
    assert_eq!(handles, 2, "the parent's and one child's");
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn a_child_that_fails_still_hands_its_tasks_over() {
    let model = ScriptedModel::new()
        .tool_call(SPAWN, spawn("build it"))
        .tool_call(SHELL, bg("make"))
        .fail(ModelError::Provider("overloaded".into()))
        .text("The subagent failed.");
    let h = parent(model.clone(), MockContext::new(), SpawnToolOptions::new());
    h.agent.run(RunOptions::new("go")).await.unwrap();

    let (result, is_error) = spawn_result(&model, 3);
    assert!(is_error);
    assert!(
        result.starts_with("spawn: the subagent failed: model error: overloaded"),
        "{result}"
    );
    assert!(result.contains("bash_1"), "{result}");
    assert_eq!(h.context.task_handle(tid(1)), h.agent.current_handle());
    assert_eq!(named(&h, "background:reassign").len(), 1);
    h.agent.destroy().await.unwrap();
    let exits = named(&h, "background:exit");
    assert!(
        matches!(&exits[..], [HookEvent::BackgroundExit(e)] if e.status == TaskStatus::Killed),
        "destroying the parent killed the adopted task: {exits:?}"
    );
}

#[tokio::test]
async fn a_cancelled_child_still_hands_its_tasks_over() {
    let h_cancel = tokio_util::sync::CancellationToken::new();
    let cancel = h_cancel.clone();
    let model = ScriptedModel::new()
        .tool_call(SPAWN, spawn("build it"))
        .tool_call(SHELL, bg("make"))
        .react(move |_| {
            cancel.cancel();
            ModelResponse::text("unreachable")
        });
    let h = parent(model, MockContext::new(), SpawnToolOptions::new());
    let outcome = h
        .agent
        .run(RunOptions::new("go").cancel(h_cancel))
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Cancelled);
    until(|| h.context.task_handle(tid(1)) == h.agent.current_handle()).await;
    assert_eq!(named(&h, "background:reassign").len(), 1);
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn the_childs_shell_says_that_a_background_task_outlives_it() {
    let model = child_starts_make();
    let h = parent(model.clone(), MockContext::new(), SpawnToolOptions::new());
    h.agent.run(RunOptions::new("go")).await.unwrap();

    let requests = model.requests();
    let shell_description = |n: usize| {
        requests[n]
            .tools
            .iter()
            .find(|t| t.name == SHELL)
            .unwrap()
            .description
            .clone()
    };
    assert!(!shell_description(0).contains("You are a subagent"));
    assert!(shell_description(1).contains("You are a subagent"));
    assert!(shell_description(1).contains("A background task you start outlives you"));
    // The child has its own spawn tool.
    assert!(requests[1].tools.iter().any(|t| t.name == SPAWN));
    let (_, started, _) = requests[2].tool_results()[0];
    assert!(started.starts_with("Started bash_1 (pid "), "{started}");
    assert!(started.contains("outlives you"), "{started}");
    assert!(!started.contains("next turn"), "{started}");
    h.agent.destroy().await.unwrap();
}

#[tokio::test]
async fn the_spawn_schema_is_pinned() {
    let h = parent(
        ScriptedModel::new(),
        MockContext::new(),
        SpawnToolOptions::new(),
    );
    let spec = h
        .agent
        .tools()
        .resolve(SPAWN)
        .unwrap()
        .spec(&zidane_tools::SpecView::new(BackgroundGate::open()));
    insta::assert_json_snapshot!("spawn_schema", spec.input_schema);
}

#[tokio::test]
async fn a_spawn_tool_whose_parent_is_gone_refuses() {
    let context = Arc::new(MockContext::new());
    let agent = Agent::builder(Arc::new(ScriptedModel::new()), context.clone())
        .build()
        .unwrap();
    let tool = create_spawn_tool(&agent, SpawnToolOptions::new());
    drop(agent);
    let handle = context.create_handle().await.unwrap();
    let output = tool
        .call(
            &ToolContext::new(context.clone(), handle).with_tasks_dir(TASKS),
            json!({ "prompt": "hi" }),
        )
        .await;
    assert!(output.is_error);
    assert!(output.text.contains("is gone"), "{}", output.text);

    let output = tool
        .call(&ToolContext::new(context, handle), json!({ "prompt": " " }))
        .await;
    assert!(output.text.contains("`prompt` is empty"), "{}", output.text);
}

#[tokio::test]
async fn a_parent_destroyed_mid_spawn_takes_nothing_over_and_the_childs_tasks_die() {
    let slot: Arc<std::sync::OnceLock<Agent>> = Arc::new(std::sync::OnceLock::new());
    let parent_agent = slot.clone();
    let model = ScriptedModel::new()
        .tool_call(SPAWN, spawn("build it"))
        .tool_call(SHELL, bg("make"))
        .react(move |_| {
            // While the child waits on its task, the host tears the parent down.
            let agent = parent_agent.get().unwrap().clone();
            tokio::spawn(async move { agent.destroy().await });
            ModelResponse::tool_use("", "wait_task", json!({ "task_id": "bash_1" }))
        });
    let h = parent(model, MockContext::new(), SpawnToolOptions::new());
    slot.set(h.agent.clone()).unwrap();

    let outcome = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert_eq!(outcome.stop, StopReason::Cancelled);
    until(|| h.agent.is_destroyed()).await;
    until(|| !named(&h, "child:background:exit").is_empty()).await;
    assert!(named(&h, "background:reassign").is_empty());
    assert!(
        !h.context
            .calls()
            .iter()
            .any(|c| matches!(c, MockCall::Reassign(..)))
    );
    let exits = named(&h, "child:background:exit");
    let HookEvent::Child { event, .. } = &exits[0] else {
        unreachable!()
    };
    assert!(
        matches!(&**event, HookEvent::BackgroundExit(e) if e.status == TaskStatus::Killed),
        "{event:?}"
    );
}
