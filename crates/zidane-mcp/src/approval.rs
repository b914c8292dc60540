//! Asking the person at the client before a command runs outside the sandbox: the
//! `shell` tool's [`Approver`] in `zidane mcp`, by MCP elicitation.
//!
//! Asked only of a client that declared form elicitation at `initialize`; any other
//! answers [`Approval::Unavailable`] with the reason, and the tool tells the model what
//! the user can change instead. The question is one required boolean (some clients,
//! opencode among them, accept booleans only): the command, the model's justification,
//! "run it once, outside the sandbox?". Accepted with `true` approves; accepted with
//! `false`, declined or dismissed declines. A client that does not answer within
//! [`MCP_APPROVAL_TIMEOUT`] (or `ZIDANE_APPROVAL_TIMEOUT_MS`, see
//! [`APPROVAL_TIMEOUT_ENV`]) is taken as no answer: nothing runs.

use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer, ServiceError};
use zidane_tools::{Approval, ApprovalRequest, Approver};

/// How long a person at the client has to answer whether a command may run outside
/// the sandbox: long enough to read the command, short enough that a question left
/// unseen does not hold the call for ever.
pub const MCP_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// The environment variable that sets, in milliseconds, how long an approval is waited
/// for instead of [`MCP_APPROVAL_TIMEOUT`] (a positive whole number; anything else is
/// ignored).
pub const APPROVAL_TIMEOUT_ENV: &str = "ZIDANE_APPROVAL_TIMEOUT_MS";

/// The one field of the question.
const APPROVE_FIELD: &str = "approve";

/// How long an approval is waited for: [`APPROVAL_TIMEOUT_ENV`] where it is set to a
/// positive number of milliseconds, else [`MCP_APPROVAL_TIMEOUT`].
pub(crate) fn approval_timeout() -> Duration {
    std::env::var(APPROVAL_TIMEOUT_ENV)
        .ok()
        .and_then(|value| value.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(MCP_APPROVAL_TIMEOUT, Duration::from_millis)
}

/// Asks through the client that made the call.
#[derive(Debug)]
pub(crate) struct ElicitationApprover {
    peer: Peer<RoleServer>,
    timeout: Duration,
}

impl ElicitationApprover {
    /// An approver that asks `peer`'s user, waiting at most `timeout`.
    pub(crate) fn new(peer: Peer<RoleServer>, timeout: Duration) -> Self {
        Self { peer, timeout }
    }
}

#[async_trait]
impl Approver for ElicitationApprover {
    async fn ask(&self, request: &ApprovalRequest) -> Approval {
        if !self
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Approval::Unavailable(
                "this MCP client did not declare elicitation, so it cannot show the question"
                    .to_owned(),
            );
        }
        let schema = match ElicitationSchema::builder()
            .required_bool_with(APPROVE_FIELD, |field| {
                field
                    .title("Run outside the sandbox")
                    .description("Run this one command once, without the sandbox")
                    .with_default(false)
            })
            .build()
        {
            Ok(schema) => schema,
            Err(error) => {
                return Approval::Unavailable(format!("the question is malformed: {error}"));
            }
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message(request),
            requested_schema: schema,
        };
        match self
            .peer
            .create_elicitation_with_timeout(params, Some(self.timeout))
            .await
        {
            Ok(result) => match result.action {
                ElicitationAction::Accept
                    if result
                        .content
                        .as_ref()
                        .and_then(|content| content.get(APPROVE_FIELD))
                        == Some(&serde_json::Value::Bool(true)) =>
                {
                    Approval::Approved
                }
                _ => Approval::Declined,
            },
            Err(ServiceError::Timeout { .. }) => Approval::TimedOut,
            Err(error) => {
                Approval::Unavailable(format!("the MCP client could not be asked: {error}"))
            }
        }
    }
}

/// The question as the person reads it: what runs, and why the model says it must.
fn message(request: &ApprovalRequest) -> String {
    format!(
        "zidane: the model asks to run a command OUTSIDE the sandbox, with every right you \
         have.\n\nCommand:\n{}\n\nWhy: {}\n\nRun it this once?",
        request.command, request.justification
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_shows_the_command_and_the_justification() {
        let text = message(&ApprovalRequest::new("rm -rf ~/x", "a stale cache"));
        assert!(text.contains("\nrm -rf ~/x\n"), "{text}");
        assert!(text.contains("Why: a stale cache"), "{text}");
    }
}
