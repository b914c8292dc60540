//! The approver a host gives reaches the `shell` tool: the agent's
//! ([`AgentBuilder::approver`]) for every call, a host call's own
//! ([`ToolCall::approver`]) over it. On a real sandboxed context, an approved command
//! writes where the sandbox forbids; a declined one writes nothing.

#![cfg(target_os = "linux")]

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use zidane_agent::{Agent, Behavior, ToolCall};
use zidane_context::{ExecutionContext, SandboxPolicy};
use zidane_process::ProcessContext;
use zidane_tools::{Approval, ApprovalRequest, Approver};

/// Answers every request with one answer, and counts them.
#[derive(Debug)]
struct Person {
    answer: Approval,
    asked: Mutex<usize>,
}

impl Person {
    fn new(answer: Approval) -> Arc<Self> {
        Arc::new(Self {
            answer,
            asked: Mutex::new(0),
        })
    }

    fn asked(&self) -> usize {
        *self.asked.lock().unwrap()
    }
}

#[async_trait]
impl Approver for Person {
    async fn ask(&self, _request: &ApprovalRequest) -> Approval {
        *self.asked.lock().unwrap() += 1;
        self.answer.clone()
    }
}

fn outside(target: &Path) -> serde_json::Value {
    json!({
        "command": format!("echo yes > {}", target.display()),
        "outside_sandbox": true,
        "justification": "the test writes beside the workspace",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_approver_and_a_calls_own_reach_the_shell() {
    // Not under /tmp, which every sandboxed command may write.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (workspace, beside) = (root.path().join("work"), root.path().join("beside"));
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&beside).unwrap();
    let context = Arc::new(
        ProcessContext::builder()
            .cwd(&workspace)
            .sandbox(SandboxPolicy::workspace_write(&workspace))
            .build(),
    );
    if !context.sandbox().enforced() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: no sandbox here: {:?}", context.sandbox().status);
        }
        return;
    }
    let refuses = Person::new(Approval::Declined);
    let agent = Agent::host_driven(context)
        .behavior(Behavior::new().tasks_dir(root.path().join("tasks")))
        .approver(refuses.clone())
        .build()
        .unwrap();

    let declined = beside.join("declined");
    let output = agent
        .call_tool(ToolCall::new("1", "shell", outside(&declined)))
        .await
        .unwrap();
    assert!(
        output.is_error && output.text.contains("declined"),
        "{}",
        output.text
    );
    assert!(!declined.exists(), "a declined command ran");
    assert_eq!(refuses.asked(), 1);

    let approves = Person::new(Approval::Approved);
    let approved = beside.join("approved");
    let output = agent
        .call_tool(ToolCall::new("2", "shell", outside(&approved)).approver(approves.clone()))
        .await
        .unwrap();
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(std::fs::read_to_string(&approved).unwrap(), "yes\n");
    assert_eq!(
        (approves.asked(), refuses.asked()),
        (1, 1),
        "the call's own was asked"
    );
    agent.destroy().await.unwrap();
}
