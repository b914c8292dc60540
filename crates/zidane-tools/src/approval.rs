//! Asking a person: the [`Approver`] seam a host implements, so that a tool can run one
//! command outside the sandbox only once someone said yes.
//!
//! The tools know no terminal and no protocol: the `shell` tool hands the command and
//! the model's justification to the approver its [`ToolContext`](crate::ToolContext)
//! carries, and runs nothing until the answer is [`Approval::Approved`]. A host asks in
//! its own way — `zidane mcp` through MCP elicitation, the terminal host with a prompt.

use std::fmt;

use async_trait::async_trait;

/// What a person is asked to approve: running one command outside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The command, exactly as it will run.
    pub command: String,
    /// Why the model says it needs to run outside the sandbox.
    pub justification: String,
}

impl ApprovalRequest {
    /// A request to run `command` outside the sandbox, for `justification`.
    pub fn new(command: impl Into<String>, justification: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            justification: justification.into(),
        }
    }
}

/// A person's answer, or why there was none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Yes: the command runs outside the sandbox, this once.
    Approved,
    /// No (or the question was dismissed): nothing runs.
    Declined,
    /// Nobody answered in the time the host allows: nothing runs.
    TimedOut,
    /// Nobody can be asked here (the host has no way to ask, or its client cannot show
    /// the question), and why: nothing runs.
    Unavailable(String),
}

/// Asks a person whether a command may run outside the sandbox.
///
/// Implemented by hosts; a tool calls it through
/// [`ToolContext::approver`](crate::ToolContext::approver). An implementation bounds
/// how long it waits, and answers [`Approval::TimedOut`] when nobody answered.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use async_trait::async_trait;
/// use zidane_tools::{Approval, ApprovalRequest, Approver};
///
/// /// Says no to everything.
/// #[derive(Debug)]
/// struct Never;
///
/// #[async_trait]
/// impl Approver for Never {
///     async fn ask(&self, _request: &ApprovalRequest) -> Approval {
///         Approval::Declined
///     }
/// }
///
/// let request = ApprovalRequest::new("touch ~/x", "the test writes to the home dir");
/// assert_eq!(Never.ask(&request).await, Approval::Declined);
/// # });
/// ```
#[async_trait]
pub trait Approver: Send + Sync + fmt::Debug {
    /// Asks whether `request`'s command may run outside the sandbox, and waits for the
    /// answer (bounded by the implementation).
    async fn ask(&self, request: &ApprovalRequest) -> Approval;
}
