//! The shell and the sandbox: its description states the context's policy in one line;
//! `outside_sandbox` is offered only where there is a sandbox, refused with the reason
//! where there is none, and where offered runs nothing until the host's approver says
//! yes — then the command runs with `SandboxScope::Outside`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use insta::assert_snapshot;
use serde_json::{Value, json};
use zidane_context::{
    BackgroundOptions, BackgroundStarted, Capabilities, ContextError, ExecOptions, ExecOutput,
    ExecutionContext, ExecutionHandle, MockContext, ReadRange, ReadResult, SandboxPolicy,
    SandboxReport, SandboxScope, SandboxStatus,
};
use zidane_tools::{
    Approval, ApprovalRequest, Approver, BackgroundGate, SpecView, ToolContext, ToolOutput,
    ToolRegistry,
};

use super::common::show;

const TASKS_DIR: &str = "/tasks";

/// A mock context that reports `report` as its sandbox and records the sandbox scope
/// each command asked for.
struct Sandboxed {
    mock: MockContext,
    report: SandboxReport,
    scopes: Mutex<Vec<(String, SandboxScope)>>,
}

#[async_trait]
impl ExecutionContext for Sandboxed {
    fn capabilities(&self) -> Capabilities {
        self.mock.capabilities()
    }

    fn sandbox(&self) -> SandboxReport {
        self.report.clone()
    }

    async fn create_handle(&self) -> Result<ExecutionHandle, ContextError> {
        self.mock.create_handle().await
    }

    async fn destroy(&self, handle: ExecutionHandle) -> Result<(), ContextError> {
        self.mock.destroy(handle).await
    }

    async fn exec(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: ExecOptions,
    ) -> Result<ExecOutput, ContextError> {
        zidane_context::lock(&self.scopes).push((command.to_owned(), options.spec.sandbox.clone()));
        self.mock.exec(handle, command, options).await
    }

    async fn read_file(
        &self,
        handle: ExecutionHandle,
        path: &Path,
        range: ReadRange,
    ) -> Result<ReadResult, ContextError> {
        self.mock.read_file(handle, path, range).await
    }

    async fn exec_background(
        &self,
        handle: ExecutionHandle,
        command: &str,
        options: BackgroundOptions,
    ) -> Result<BackgroundStarted, ContextError> {
        zidane_context::lock(&self.scopes).push((command.to_owned(), options.spec.sandbox.clone()));
        self.mock.exec_background(handle, command, options).await
    }
}

/// Answers every request with one answer, and keeps the requests.
#[derive(Debug)]
struct Person {
    answer: Approval,
    asked: Mutex<Vec<ApprovalRequest>>,
}

#[async_trait]
impl Approver for Person {
    async fn ask(&self, request: &ApprovalRequest) -> Approval {
        zidane_context::lock(&self.asked).push(request.clone());
        self.answer.clone()
    }
}

fn enforced() -> SandboxReport {
    SandboxReport::new(
        SandboxPolicy::workspace_write("/work/app"),
        SandboxStatus::Enforced,
    )
}

struct Harness {
    context: Arc<Sandboxed>,
    tools: ToolContext,
    registry: ToolRegistry,
    person: Option<Arc<Person>>,
}

impl Harness {
    /// A session in a context with `report`, whose approver (if any) answers `answer`.
    async fn new(report: SandboxReport, answer: Option<Approval>) -> Self {
        let context = Arc::new(Sandboxed {
            mock: MockContext::new(),
            report,
            scopes: Mutex::new(Vec::new()),
        });
        let handle = context.create_handle().await.unwrap();
        let mut tools = ToolContext::new(context.clone(), handle).with_tasks_dir(TASKS_DIR);
        let person = answer.map(|answer| {
            Arc::new(Person {
                answer,
                asked: Mutex::new(Vec::new()),
            })
        });
        if let Some(person) = &person {
            tools = tools.with_approver(person.clone());
        }
        Self {
            context,
            tools,
            registry: ToolRegistry::with_default_tools().unwrap(),
            person,
        }
    }

    async fn shell(&self, input: Value) -> ToolOutput {
        self.registry.dispatch(&self.tools, "shell", input).await
    }

    fn scopes(&self) -> Vec<(String, SandboxScope)> {
        zidane_context::lock(&self.context.scopes).clone()
    }

    fn asked(&self) -> Vec<ApprovalRequest> {
        self.person
            .as_ref()
            .map(|person| zidane_context::lock(&person.asked).clone())
            .unwrap_or_default()
    }
}

fn shell_spec(report: SandboxReport) -> zidane_tools::ToolSpec {
    let registry = ToolRegistry::with_default_tools().unwrap();
    let view = SpecView {
        sandbox: report,
        ..SpecView::new(BackgroundGate::open())
    };
    registry.specs(&view).remove(0)
}

fn offers_outside(spec: &zidane_tools::ToolSpec) -> bool {
    let properties = &spec.input_schema["properties"];
    let outside = properties.get("outside_sandbox").is_some();
    assert_eq!(outside, properties.get("justification").is_some());
    outside
}

#[test]
fn the_description_states_the_sandbox_and_offers_the_way_out() {
    let spec = shell_spec(enforced());
    assert!(offers_outside(&spec));
    assert_snapshot!("description_shell_sandboxed", spec.description);
    let line = enforced().line().unwrap();
    assert!(spec.description.contains(&line), "{}", spec.description);
    let foreground = ToolRegistry::with_default_tools()
        .unwrap()
        .specs(&SpecView {
            sandbox: enforced(),
            ..SpecView::new(BackgroundGate::closed(zidane_tools::GateReason::Disabled))
        });
    assert!(foreground[0].description.contains(&line));
    assert!(offers_outside(&foreground[0]));
}

#[test]
fn no_sandbox_no_line_and_no_way_out() {
    let spec = shell_spec(SandboxReport::off());
    assert!(!offers_outside(&spec));
    assert!(!spec.description.contains("andbox"), "{}", spec.description);
}

#[test]
fn a_sandbox_asked_for_but_unavailable_says_so() {
    let report = SandboxReport::new(
        SandboxPolicy::workspace_write("/w"),
        SandboxStatus::Unavailable("bubblewrap (bwrap) is not installed".into()),
    );
    let spec = shell_spec(report);
    assert!(
        spec.description
            .contains("unsandboxed: bubblewrap (bwrap) is not installed"),
        "{}",
        spec.description
    );
    assert!(offers_outside(&spec));
}

#[tokio::test]
async fn a_forged_outside_sandbox_where_there_is_none_runs_nothing() {
    let harness = Harness::new(SandboxReport::off(), Some(Approval::Approved)).await;
    let output = harness
        .shell(json!({
            "command": "touch ~/forged",
            "outside_sandbox": true,
            "justification": "because",
        }))
        .await;
    assert!(output.is_error);
    assert!(harness.scopes().is_empty(), "{:?}", harness.scopes());
    assert!(harness.asked().is_empty());
    assert_snapshot!("forged_outside_sandbox", show(&output));
    // Sent as false it asks for nothing, and the command runs in the context's sandbox.
    let output = harness
        .shell(json!({ "command": "ls", "outside_sandbox": false }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(harness.scopes(), [("ls".to_owned(), SandboxScope::Context)]);
}

#[tokio::test]
async fn an_approved_command_runs_outside_in_the_foreground_and_background() {
    let harness = Harness::new(enforced(), Some(Approval::Approved)).await;
    let output = harness
        .shell(json!({
            "command": "touch ~/.cache/x",
            "outside_sandbox": true,
            "justification": "the tool writes its cache in the home dir",
        }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    let output = harness
        .shell(json!({
            "command": "make install",
            "outside_sandbox": true,
            "justification": "installs into /usr/local",
            "run_in_background": true,
        }))
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(
        harness.scopes(),
        [
            ("touch ~/.cache/x".to_owned(), SandboxScope::Outside),
            ("make install".to_owned(), SandboxScope::Outside),
        ]
    );
    assert_eq!(
        harness.asked(),
        [
            ApprovalRequest::new(
                "touch ~/.cache/x",
                "the tool writes its cache in the home dir"
            ),
            ApprovalRequest::new("make install", "installs into /usr/local"),
        ]
    );
}

#[tokio::test]
async fn a_command_without_the_flag_runs_in_the_sandbox_and_asks_nobody() {
    let harness = Harness::new(enforced(), Some(Approval::Approved)).await;
    let output = harness.shell(json!({ "command": "ls" })).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(harness.scopes(), [("ls".to_owned(), SandboxScope::Context)]);
    assert!(harness.asked().is_empty());
}

#[tokio::test]
async fn declined_timed_out_and_nobody_to_ask_run_nothing() {
    let mut report = String::new();
    for answer in [
        Some(Approval::Declined),
        Some(Approval::TimedOut),
        Some(Approval::Unavailable(
            "the client did not declare elicitation".into(),
        )),
        None,
    ] {
        let harness = Harness::new(enforced(), answer.clone()).await;
        let output = harness
            .shell(json!({
                "command": "rm -rf ~/.ssh/known_hosts",
                "outside_sandbox": true,
                "justification": "a stale host key",
            }))
            .await;
        assert!(output.is_error);
        assert!(harness.scopes().is_empty(), "{answer:?} ran something");
        report.push_str(&format!("{answer:?}\n  → {}\n", output.text));
    }
    assert_snapshot!("outside_sandbox_refusals", report);
}

#[tokio::test]
async fn a_request_without_a_justification_asks_nobody() {
    let harness = Harness::new(enforced(), Some(Approval::Approved)).await;
    for input in [
        json!({ "command": "touch ~/x", "outside_sandbox": true }),
        json!({ "command": "touch ~/x", "outside_sandbox": true, "justification": "  " }),
        json!({ "command": "touch ~/x", "justification": "why not" }),
    ] {
        let output = harness.shell(input.clone()).await;
        assert!(output.is_error, "{input}");
        assert!(output.text.contains("`justification`"), "{}", output.text);
    }
    assert!(harness.scopes().is_empty());
    assert!(harness.asked().is_empty());
}

/// A host's own sandbox on the call (Codex's): every command the call starts runs
/// within it, in the foreground and in the background, and one a person let out of
/// zidane's sandbox stays in the host's.
#[tokio::test]
async fn a_hosts_sandbox_holds_every_command_of_the_call() {
    let mut harness = Harness::new(enforced(), Some(Approval::Approved)).await;
    let host = SandboxPolicy::read_only().network(zidane_context::NetworkAccess::Off);
    harness.tools = harness.tools.clone().with_host_sandbox(host.clone());
    for input in [
        json!({ "command": "true" }),
        json!({ "command": "sleep 1", "run_in_background": true }),
        json!({ "command": "make install", "outside_sandbox": true, "justification": "installs" }),
    ] {
        let output = harness.shell(input).await;
        assert!(!output.is_error, "{}", output.text);
    }
    let within = SandboxScope::Within(host);
    assert_eq!(
        harness.scopes(),
        [
            ("true".to_owned(), within.clone()),
            ("sleep 1".to_owned(), within.clone()),
            ("make install".to_owned(), within),
        ]
    );
}
