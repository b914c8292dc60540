//! Background gating: the four closed cases, the open case, a host's own shell, and
//! `create_shell_tool`.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use insta::assert_snapshot;
use serde_json::{Value, json};
use zidane_context::{Capabilities, DetachedTasks};
use zidane_tools::{
    BackgroundGate, BackgroundPolicy, GateReason, ShellToolOptions, Tool, ToolContext, ToolOutput,
    ToolRegistry, ToolSpec, create_shell_tool,
};

use super::common::{Harness, show};

fn offers_background(spec: &ToolSpec) -> bool {
    let in_schema = spec.input_schema["properties"]
        .get("run_in_background")
        .is_some();
    let in_description = spec.description.contains("run_in_background")
        || spec.description.contains("task-notification");
    assert_eq!(
        in_schema, in_description,
        "schema and description disagree: {spec:#?}"
    );
    in_schema
}

fn shell_spec(context: &ToolContext) -> ToolSpec {
    let registry = ToolRegistry::with_default_tools().unwrap();
    registry
        .specs(&zidane_tools::SpecView::new(context.gate()))
        .remove(0)
}

fn caps(detached: DetachedTasks) -> Capabilities {
    Capabilities::new(detached)
}

#[test]
fn evaluate_covers_every_case() {
    let dir = Some(Path::new("/tasks"));
    let cases = [
        (
            None,
            BackgroundPolicy::Enabled,
            DetachedTasks::ProcessLifetime,
            Some(GateReason::NoTasksDir),
        ),
        (
            dir,
            BackgroundPolicy::Disabled,
            DetachedTasks::Durable,
            Some(GateReason::Disabled),
        ),
        (
            dir,
            BackgroundPolicy::NonDurable,
            DetachedTasks::ProcessLifetime,
            Some(GateReason::NotDurable),
        ),
        (
            dir,
            BackgroundPolicy::Enabled,
            DetachedTasks::None,
            Some(GateReason::Unsupported),
        ),
        (
            dir,
            BackgroundPolicy::NonDurable,
            DetachedTasks::None,
            Some(GateReason::Unsupported),
        ),
        (
            dir,
            BackgroundPolicy::Enabled,
            DetachedTasks::ProcessLifetime,
            None,
        ),
        (dir, BackgroundPolicy::Enabled, DetachedTasks::Durable, None),
        (
            dir,
            BackgroundPolicy::NonDurable,
            DetachedTasks::Durable,
            None,
        ),
    ];
    for (tasks_dir, policy, detached, reason) in cases {
        let gate = BackgroundGate::evaluate(tasks_dir, policy, caps(detached));
        assert_eq!(
            gate.reason(),
            reason,
            "{tasks_dir:?} {policy:?} {detached:?}"
        );
        assert_eq!(gate.allowed(), reason.is_none());
    }
}

#[test]
fn reasons_read_as_sentences() {
    let reasons = [
        GateReason::NoTasksDir,
        GateReason::Disabled,
        GateReason::Unsupported,
        GateReason::NotDurable,
    ];
    let text: Vec<String> = reasons.iter().map(ToString::to_string).collect();
    assert_snapshot!("gate_reasons", text.join("\n"));
}

/// For each closed case: the flag is not offered, and a forged flag is refused naming
/// the reason, with nothing run.
async fn assert_gated(harness: Harness, snapshot: &str) {
    assert!(!harness.context.gate().allowed());
    assert!(!offers_background(&shell_spec(&harness.context)));
    let output = harness
        .call(
            "shell",
            json!({ "command": "make", "run_in_background": true }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything(), "a forged flag ran something");
    assert_snapshot!(snapshot, show(&output));
}

#[tokio::test]
async fn no_tasks_dir() {
    let harness = Harness::with(zidane_context::MockContext::new(), None).await;
    assert_gated(harness, "forged_no_tasks_dir").await;
}

#[tokio::test]
async fn policy_disabled() {
    let mut harness = Harness::detached(DetachedTasks::Durable).await;
    let mut background = harness.context.background().clone();
    background.policy = BackgroundPolicy::Disabled;
    harness.context = harness.context.with_background(background);
    assert_gated(harness, "forged_disabled").await;
}

#[tokio::test]
async fn non_durable_policy_on_a_process_lifetime_context() {
    let mut harness = Harness::detached(DetachedTasks::ProcessLifetime).await;
    let mut background = harness.context.background().clone();
    background.policy = BackgroundPolicy::NonDurable;
    harness.context = harness.context.with_background(background);
    assert_gated(harness, "forged_not_durable").await;
}

#[tokio::test]
async fn context_without_background_tasks() {
    let harness = Harness::detached(DetachedTasks::None).await;
    assert_gated(harness, "forged_unsupported").await;
}

#[tokio::test]
async fn open_gate_offers_the_flag() {
    let harness = Harness::new().await;
    assert!(offers_background(&shell_spec(&harness.context)));
    let mut durable = Harness::detached(DetachedTasks::Durable).await;
    let mut background = durable.context.background().clone();
    background.policy = BackgroundPolicy::NonDurable;
    durable.context = durable.context.with_background(background);
    assert!(offers_background(&shell_spec(&durable.context)));
}

#[tokio::test]
async fn run_in_background_false_runs_in_the_foreground_even_when_gated() {
    let harness = Harness::detached(DetachedTasks::None).await;
    let output = harness
        .call(
            "shell",
            json!({ "command": "true", "run_in_background": false }),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.data["exit_code"], 0);
}

/// A host's own tool named `shell`.
struct HostShell;

#[async_trait]
impl Tool for HostShell {
    fn spec(&self, _view: &zidane_tools::SpecView) -> ToolSpec {
        ToolSpec {
            name: "shell".into(),
            description: "The host's shell. Supports run_in_background.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "command": { "type": "string" }, "run_in_background": { "type": "boolean" } },
                "required": ["command"]
            }),
            aliases: vec!["bash".into()],
            ..Default::default()
        }
    }

    async fn call(&self, _context: &ToolContext, _input: Value) -> ToolOutput {
        ToolOutput::ok("host shell ran", Value::Null)
    }
}

#[tokio::test]
async fn a_host_shell_keeps_its_spec() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(HostShell)).unwrap();
    for gate in [
        BackgroundGate::open(),
        BackgroundGate::closed(GateReason::NoTasksDir),
        BackgroundGate::closed(GateReason::Unsupported),
    ] {
        assert_eq!(
            registry.specs(&zidane_tools::SpecView::new(gate)),
            vec![HostShell.spec(&zidane_tools::SpecView::default())]
        );
    }
    let harness = Harness::detached(DetachedTasks::None).await;
    let output = registry
        .dispatch(
            &harness.context,
            "bash",
            json!({ "command": "x", "run_in_background": true }),
        )
        .await;
    assert_eq!(output.text, "host shell ran");
}

#[tokio::test]
async fn create_shell_tool_without_background_never_offers_it() {
    let shell = create_shell_tool(ShellToolOptions::default().allow_background(false));
    assert!(!offers_background(
        &shell.spec(&zidane_tools::SpecView::default())
    ));
    assert!(!offers_background(
        &shell.spec(&zidane_tools::SpecView::new(BackgroundGate::open()))
    ));
    let harness = Harness::new().await;
    assert!(harness.context.gate().allowed());
    let output = shell
        .call(
            &harness.context,
            json!({ "command": "make", "run_in_background": true }),
        )
        .await;
    assert!(output.is_error);
    assert!(!harness.ran_anything());
    assert_snapshot!("forged_tool_without_background", show(&output));
}

#[tokio::test]
async fn create_shell_tool_with_background_follows_the_gate() {
    let shell = create_shell_tool(ShellToolOptions::default().allow_background(true));
    assert!(offers_background(
        &shell.spec(&zidane_tools::SpecView::default())
    ));
    assert!(offers_background(
        &shell.spec(&zidane_tools::SpecView::new(BackgroundGate::open()))
    ));
    assert!(!offers_background(&shell.spec(
        &zidane_tools::SpecView::new(BackgroundGate::closed(GateReason::NotDurable))
    )));
}
