//! The run loop: dispatch, aliases, limits, cancellation, the gate, errors.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use zidane_agent::{
    Agent, AgentError, Behavior, HookEvent, ModelError, ModelResponse, RunOptions, ScriptedModel,
    StopReason,
};
use zidane_context::{MockContext, TaskStatus};
use zidane_tools::{Tool, ToolContext, ToolOutput, ToolSpec};

use crate::support::{bg, harness, harness_with, tid, until};

/// A tool that blocks until notified or cancelled.
pub struct Blocker(pub Arc<Notify>);

#[async_trait]
impl Tool for Blocker {
    fn spec(&self, _view: &zidane_tools::SpecView) -> ToolSpec {
        ToolSpec {
            name: "block".into(),
            description: "Blocks until released.".into(),
            input_schema: json!({ "type": "object" }),
            aliases: vec!["old_block".into()],
            ..Default::default()
        }
    }

    async fn call(&self, context: &ToolContext, _input: serde_json::Value) -> ToolOutput {
        tokio::select! {
            () = self.0.notified() => ToolOutput::ok("released", serde_json::Value::Null),
            () = context.cancel().cancelled() => ToolOutput::error("block: cancelled"),
        }
    }
}

#[tokio::test]
async fn a_tool_is_dispatched_by_alias_between_its_hooks() {
    let gate = Arc::new(Notify::new());
    gate.notify_one();
    let model = ScriptedModel::new()
        .tool_call("old_block", json!({}))
        .text("done");
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.tool(Arc::new(Blocker(gate)))
    });
    let outcome = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(outcome.steps, 2);
    let events = h.events.lock().unwrap().clone();
    let [HookEvent::ToolBefore(before), HookEvent::ToolAfter(after)] = events.as_slice() else {
        panic!("{events:?}");
    };
    assert_eq!(before.name, "old_block");
    assert_eq!(before.tool.as_deref(), Some("block"));
    assert_eq!(after.output.text, "released");
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_result_and_the_run_goes_on() {
    let model = ScriptedModel::new()
        .tool_call("bash_output", json!({}))
        .react(|request| {
            let (_, content, is_error) = request.tool_results()[0];
            assert!(is_error);
            ModelResponse::text(content.to_owned())
        });
    let h = harness(model);
    let outcome = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert!(
        outcome.text.contains("unknown tool `bash_output`"),
        "{}",
        outcome.text
    );
}

#[tokio::test]
async fn a_run_stops_at_the_step_limit() {
    let model = ScriptedModel::new()
        .tool_call("read_file", json!({ "path": "/nope" }))
        .tool_call("read_file", json!({ "path": "/nope" }))
        .tool_call("read_file", json!({ "path": "/nope" }));
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.behavior(Behavior::new().max_steps(2))
    });
    let outcome = h.agent.run(RunOptions::new("loop")).await.unwrap();
    assert_eq!(outcome.stop, StopReason::MaxSteps);
    assert_eq!(outcome.steps, 2);
    assert_eq!(h.model.remaining(), 1);
}

#[tokio::test]
async fn cancelling_a_run_aborts_the_foreground_call_and_background_tasks_live_on() {
    let model = ScriptedModel::new()
        .respond(
            ModelResponse::tool_use("s", "shell", bg("npm run dev"))
                .with_tool_use("b", "block", json!({}))
                .with_tool_use("after", "read_file", json!({ "path": "/x" })),
        )
        .text("fresh run");
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.tool(Arc::new(Blocker(Arc::new(Notify::new()))))
    });
    let cancel = CancellationToken::new();
    let agent = h.agent.clone();
    let token = cancel.clone();
    let run = tokio::spawn(async move { agent.run(RunOptions::new("go").cancel(token)).await });
    until(|| {
        h.agent
            .in_flight_tools()
            .iter()
            .any(|row| row.label == "block")
    })
    .await;
    cancel.cancel();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert_eq!(
        h.context.task(tid(1)).unwrap().status(),
        TaskStatus::Running,
        "the background task lives on"
    );
    let results = outcome.turns.last().unwrap();
    assert_eq!(results.content.len(), 3, "every tool use has a result");
    assert!(format!("{results:?}").contains("block: cancelled"));
    assert!(format!("{results:?}").contains("aborted before this call started"));
    let next = h.agent.run(RunOptions::new("again")).await.unwrap();
    assert_eq!(next.text, "fresh run");
}

#[tokio::test]
async fn the_picker_can_cancel_one_call_and_the_run_goes_on() {
    let model = ScriptedModel::new()
        .tool_call("block", json!({}))
        .react(|request| ModelResponse::text(request.tool_results()[0].1.to_owned()));
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.tool(Arc::new(Blocker(Arc::new(Notify::new()))))
    });
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.run(RunOptions::new("go")).await });
    until(|| !h.agent.in_flight_tools().is_empty()).await;
    let row = h.agent.in_flight_tools().remove(0);
    assert!(h.agent.cancel_tool(&row.id));
    assert!(!h.agent.cancel_tool("nope"));
    let outcome = run.await.unwrap().unwrap();
    assert_eq!(outcome.stop, StopReason::EndTurn);
    assert_eq!(outcome.text, "block: cancelled");
}

#[tokio::test]
async fn the_agent_enforces_its_background_cap() {
    let model = ScriptedModel::new()
        .tool_call("shell", bg("one"))
        .tool_call("shell", bg("two"))
        .react(|request| ModelResponse::text(request.tool_results()[0].1.to_owned()));
    let h = harness_with(model, Arc::new(MockContext::new()), |b| {
        b.behavior(
            Behavior::new()
                .tasks_dir(crate::support::TASKS)
                .max_background_tasks(1),
        )
    });
    let outcome = h.agent.run(RunOptions::new("go")).await.unwrap();
    assert!(
        outcome
            .text
            .starts_with("too many background tasks: 1 are already running")
    );
    assert!(h.context.task(tid(2)).is_none(), "never started");
}

#[tokio::test]
async fn the_model_sees_run_in_background_only_when_the_gate_is_open() {
    let model = ScriptedModel::new().text("a").text("b");
    let open = harness(model.clone());
    open.agent.run(RunOptions::new("x")).await.unwrap();
    let schema = |request: &zidane_agent::ModelRequest| {
        request
            .tools
            .iter()
            .find(|t| t.name == "shell")
            .unwrap()
            .input_schema
            .to_string()
    };
    assert!(schema(&model.requests()[0]).contains("run_in_background"));
    let closed = Agent::builder(Arc::new(model.clone()), Arc::new(MockContext::new()))
        .build()
        .unwrap();
    assert!(!closed.background_gate().allowed(), "no tasks dir");
    closed.run(RunOptions::new("x")).await.unwrap();
    assert!(!schema(&model.requests()[1]).contains("run_in_background"));
}

#[tokio::test]
async fn a_model_error_is_returned_and_the_script_says_when_it_ran_out() {
    let model = ScriptedModel::new().fail(ModelError::Provider("overloaded".into()));
    let h = harness(model);
    let error = h.agent.run(RunOptions::new("x")).await.unwrap_err();
    assert!(matches!(error, AgentError::Model(ModelError::Provider(_))));
    let error = h.agent.run(RunOptions::new("y")).await.unwrap_err();
    assert!(
        matches!(
            error,
            AgentError::Model(ModelError::ScriptExhausted { calls: 1 })
        ),
        "{error}"
    );
}
