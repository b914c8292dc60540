//! The agent's plumbing, which only the crate itself reaches: what every tool call gets.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use zidane_context::{ExecutionContext, MockCall, MockContext, TaskId, TaskLimits, TaskStatus};

use crate::agent::Agent;
use crate::config::{AgentBuilder, Behavior};
use crate::destroy::{DestroyStep, StepOutcome};
use crate::hooks::HookEvent;
use crate::run::RunOptions;
use crate::scripted::ScriptedModel;
use crate::session::Session;

const TASKS: &str = "/home/u/.zidane/sessions/s1/tasks";

fn build(
    model: ScriptedModel,
    context: Arc<MockContext>,
    configure: impl FnOnce(AgentBuilder) -> AgentBuilder,
) -> Agent {
    let builder = Agent::builder(Arc::new(model), context)
        .behavior(Behavior::new().tasks_dir(TASKS))
        .session(Session::new("s1"));
    configure(builder).build().unwrap()
}

#[tokio::test]
async fn behaviour_reaches_every_tool_call_and_child_events_mirror_by_name() {
    let agent = build(ScriptedModel::new(), Arc::new(MockContext::new()), |b| {
        b.behavior(
            Behavior::new()
                .tasks_dir(TASKS)
                .task_limits(
                    TaskLimits::new()
                        .max_output_bytes(1 << 20)
                        .stall_timeout(std::time::Duration::from_secs(45)),
                )
                .background(zidane_tools::BackgroundPolicy::NonDurable),
        )
    });
    let settings = agent.background_settings();
    assert_eq!(settings.limits.max_output_bytes, Some(1 << 20));
    assert_eq!(
        settings.limits.stall_timeout,
        Some(std::time::Duration::from_secs(45))
    );
    assert!(
        !agent.background_gate().allowed(),
        "non-durable policy on a process-lifetime context"
    );
    let handle = agent.handle().await.unwrap();
    let context = agent.tool_context(handle, CancellationToken::new());
    assert!(context.sinks().on_exit.is_some() && context.sinks().on_stall.is_some());

    let exit = HookEvent::BackgroundStart(crate::TaskStart {
        task_id: TaskId::from_number(1),
        pid: 1,
        command: "make".into(),
        output_path: "/t/bash_1.log".into(),
    });
    let mirrored = exit.mirrored("child-1", 1);
    assert_eq!(mirrored.name(), "child:background:start");
}

#[tokio::test]
async fn an_injected_handle_is_left_to_the_host() {
    let context = Arc::new(MockContext::new());
    let handle = context.create_handle().await.unwrap();
    let model = ScriptedModel::new()
        .tool_call(
            "shell",
            json!({ "command": "serve", "run_in_background": true }),
        )
        .text("ok");
    let agent = build(model, context.clone(), |b| b.handle(handle));
    assert!(agent.handle_is_injected());
    agent.run(RunOptions::new("go")).await.unwrap();
    let report = agent.destroy().await.unwrap();
    assert_eq!(
        report.outcome(DestroyStep::DestroyHandle),
        Some(&StepOutcome::Skipped)
    );
    assert_eq!(
        context.task(TaskId::from_number(1)).unwrap().status(),
        TaskStatus::Running
    );
    assert!(!context.calls().contains(&MockCall::Destroy(handle)));
}
