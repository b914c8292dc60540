//! Asking the person at the terminal before a command runs outside the sandbox: the
//! `shell` tool's [`Approver`] in the terminal host.
//!
//! The question goes to the session's loop as an [`AppEvent::Approval`]: the transcript
//! shows the command and the model's justification, the input line asks `[y/N]`, and the
//! answer comes back through [`TerminalApprover::answer`]. Nobody answering within
//! [`TERMINAL_APPROVAL_TIMEOUT`] is no answer. Without a screen (print mode) nobody can
//! be asked, and the tool tells the model what the user can change instead.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use zidane::tools::{Approval, ApprovalRequest, Approver};

use super::state::AppEvent;

/// How long the person at the terminal has to answer: long enough to read the command
/// (and to come back to the terminal), short enough that the run does not wait for ever.
pub const TERMINAL_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// Asks through the interactive session's screen, once one is connected.
#[derive(Debug, Default)]
pub struct TerminalApprover {
    /// The session loop's inbox; unset without a screen.
    screen: OnceLock<mpsc::UnboundedSender<AppEvent>>,
    /// Where the answer to the question on screen goes.
    pending: Mutex<Option<oneshot::Sender<bool>>>,
    /// One question at a time.
    asking: tokio::sync::Mutex<()>,
}

impl TerminalApprover {
    /// Connects the session's screen: from now on questions are shown there.
    pub fn connect(&self, events: mpsc::UnboundedSender<AppEvent>) {
        let _ = self.screen.set(events);
    }

    /// The person's answer to the question on screen. False when no question waits (it
    /// was answered, or nobody answered in time).
    pub fn answer(&self, approve: bool) -> bool {
        let pending = zidane::context::lock(&self.pending).take();
        pending.is_some_and(|reply| reply.send(approve).is_ok())
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn ask(&self, request: &ApprovalRequest) -> Approval {
        let Some(screen) = self.screen.get() else {
            return Approval::Unavailable(
                "zidane runs without its interactive screen here, so it cannot ask".to_owned(),
            );
        };
        let _one = self.asking.lock().await;
        let (reply, answer) = oneshot::channel();
        *zidane::context::lock(&self.pending) = Some(reply);
        if screen
            .send(AppEvent::Approval(Some(request.clone())))
            .is_err()
        {
            return Approval::Unavailable("the interactive screen has closed".to_owned());
        }
        let outcome = tokio::time::timeout(TERMINAL_APPROVAL_TIMEOUT, answer).await;
        zidane::context::lock(&self.pending).take();
        let _ = screen.send(AppEvent::Approval(None));
        match outcome {
            Ok(Ok(true)) => Approval::Approved,
            Ok(Ok(false)) => Approval::Declined,
            Ok(Err(_)) => Approval::Unavailable("the interactive screen has closed".to_owned()),
            Err(_) => Approval::TimedOut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_question_reaches_the_screen_and_the_answer_the_tool() {
        let approver = std::sync::Arc::new(TerminalApprover::default());
        let request = ApprovalRequest::new("touch ~/x", "a cache in the home dir");
        assert!(matches!(
            approver.ask(&request).await,
            Approval::Unavailable(_)
        ));
        let (events, mut inbox) = mpsc::unbounded_channel();
        approver.connect(events);
        for (approve, expected) in [(true, Approval::Approved), (false, Approval::Declined)] {
            let asking = {
                let approver = std::sync::Arc::clone(&approver);
                let request = request.clone();
                tokio::spawn(async move { approver.ask(&request).await })
            };
            assert_eq!(
                inbox.recv().await,
                Some(AppEvent::Approval(Some(request.clone())))
            );
            assert!(approver.answer(approve));
            assert_eq!(asking.await.unwrap(), expected);
            assert_eq!(inbox.recv().await, Some(AppEvent::Approval(None)));
            assert!(!approver.answer(true), "answered twice");
        }
    }
}
