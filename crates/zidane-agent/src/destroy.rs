//! Teardown: what happened inside the session first, then what the session stood on.
//!
//! 1. clear the queues (a session swap must not replay stale notifications);
//! 2. abort the in-flight run and every per-call cancel, and wait for the run to end;
//! 3. close host-registered resources (reverse registration order);
//! 4. `context.destroy(handle)` — unless the host injected the handle, or none was made;
//! 5. clear the queues again (a task killed in step 4 can report its exit).
//!
//! [`Behavior::destroy_timeout`](crate::Behavior::destroy_timeout) bounds the whole
//! teardown. Steps 2 and 3 may each take at most half of what is left, so the handle's
//! destroy — the step that kills processes — always keeps the larger share. A step that
//! does not settle in its share is abandoned (it keeps going in the background), logged,
//! and teardown moves on; the report then names every task whose processes could not be
//! confirmed dead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use zidane_context::TaskEntry;

use crate::agent::Agent;
use crate::config::CANCEL_GRACE;
use crate::error::Result;

/// Kept from the handle's share to ask the context which tasks are still running when
/// its destroy did not settle.
const CONFIRM_RESERVE: Duration = Duration::from_millis(100);

/// What is left until `deadline`, less the [`CONFIRM_RESERVE`].
fn before_confirming(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .saturating_sub(CONFIRM_RESERVE)
}

/// A step of [`Agent::destroy`], in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DestroyStep {
    /// 1. Clear the exit and stall queues.
    ClearQueues,
    /// 2. Abort the in-flight run and every per-call cancel.
    AbortRun,
    /// 3. Close host-registered resources.
    CloseResources,
    /// 4. Destroy the execution handle (kills every surviving background task).
    DestroyHandle,
    /// 5. Clear the queues again.
    ClearQueuesAgain,
}

/// How a destroy step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepOutcome {
    /// It settled.
    Done,
    /// Nothing to do (no run in flight, no resources, an injected or absent handle).
    Skipped,
    /// It did not settle within the destroy timeout and was abandoned.
    TimedOut,
    /// It failed; teardown went on.
    Failed(String),
}

/// What [`Agent::destroy`] did, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DestroyReport {
    /// The steps in the order they ran. Empty when the agent was already destroyed.
    pub steps: Vec<(DestroyStep, StepOutcome)>,
    /// Tasks that were running when teardown began and whose processes could not be
    /// confirmed dead when it returned (the handle's destroy did not settle in time, or
    /// failed). Their kill goes on in the background. Empty when the context confirmed
    /// the destroy.
    pub survivors: Vec<TaskEntry>,
}

impl DestroyReport {
    /// The outcome of a step, if it ran.
    pub fn outcome(&self, step: DestroyStep) -> Option<&StepOutcome> {
        self.steps.iter().find(|(s, _)| *s == step).map(|(_, o)| o)
    }

    /// Whether destroy had already happened (this call did nothing).
    pub fn was_already_destroyed(&self) -> bool {
        self.steps.is_empty()
    }
}

impl Agent {
    /// Tears the agent down (see the module docs for the order): every background task
    /// of its own handle is killed, nothing it queued is delivered. Never takes much
    /// longer than [`Behavior::destroy_timeout`](crate::Behavior::destroy_timeout) as a
    /// whole; [`DestroyReport::survivors`] names what could not be confirmed dead by then.
    ///
    /// Idempotent: a second call does nothing and returns an empty report. Every other
    /// call after it fails with [`AgentError::Destroyed`](crate::AgentError::Destroyed).
    pub async fn destroy(&self) -> Result<DestroyReport> {
        if !self.begin_destroy() {
            return Ok(DestroyReport::default());
        }
        let deadline = Instant::now() + self.inner.behavior.destroy_timeout;
        let left = || deadline.saturating_duration_since(Instant::now());
        let mut report = DestroyReport::default();

        self.inner.feeds.delivery().close();
        report
            .steps
            .push((DestroyStep::ClearQueues, StepOutcome::Done));

        // A cancelled run ends within the cancel grace of its tool call; waiting longer
        // would only take time from the kill.
        let abort = self
            .abort_run((left() / 2).min(CANCEL_GRACE + Duration::from_millis(500)))
            .await;
        report.steps.push((DestroyStep::AbortRun, abort));

        let close = self.close_resources(left() / 2).await;
        report.steps.push((DestroyStep::CloseResources, close));

        let (destroy, survivors) = self.destroy_handle(deadline).await;
        report.steps.push((DestroyStep::DestroyHandle, destroy));
        report.survivors = survivors;

        self.inner.feeds.delivery().close();
        report
            .steps
            .push((DestroyStep::ClearQueuesAgain, StepOutcome::Done));

        self.finish_destroy();
        if !report.survivors.is_empty() {
            let pids: Vec<u32> = report.survivors.iter().map(|t| t.pid).collect();
            tracing::warn!(session = %self.id(), ?pids, "destroy returned before these tasks were confirmed dead; their kill goes on");
        }
        tracing::debug!(session = %self.id(), ?report, "agent destroyed");
        Ok(report)
    }

    async fn abort_run(&self, timeout: Duration) -> StepOutcome {
        let had_run = {
            let run_state = self.run_state();
            for call in &run_state.calls {
                call.cancel.cancel();
            }
            match &run_state.run {
                Some(run) => {
                    run.cancel();
                    true
                }
                None => false,
            }
        };
        if !had_run && !self.is_running() {
            return StepOutcome::Skipped;
        }
        let mut running = self.inner.running.subscribe();
        match tokio::time::timeout(timeout, running.wait_for(|running| !*running)).await {
            Ok(_) => StepOutcome::Done,
            Err(_) => {
                tracing::warn!(
                    ?timeout,
                    "destroy: the in-flight run did not stop in time; abandoned"
                );
                StepOutcome::TimedOut
            }
        }
    }

    async fn close_resources(&self, timeout: Duration) -> StepOutcome {
        let resources = std::mem::take(&mut *zidane_context::lock(&self.inner.resources));
        if resources.is_empty() {
            return StepOutcome::Skipped;
        }
        // Spawned, so a close that overruns is abandoned but still runs to its end.
        let closing = tokio::spawn(async move {
            for (name, resource) in resources.iter().rev() {
                tracing::debug!(resource = %name, "destroy: closing resource");
                resource.close().await;
            }
        });
        settle("closing resources", timeout, closing).await
    }

    /// Step 4, bounded by what is left before `deadline`; returns the tasks that were
    /// running and could not be confirmed dead.
    async fn destroy_handle(&self, deadline: Instant) -> (StepOutcome, Vec<TaskEntry>) {
        if self.handle_is_injected() {
            return (StepOutcome::Skipped, Vec::new());
        }
        let Some(handle) = self.current_handle() else {
            return (StepOutcome::Skipped, Vec::new());
        };
        let context = Arc::clone(&self.inner.context);
        let budget = before_confirming(deadline);
        let running = match tokio::time::timeout(budget, context.list_background(handle)).await {
            Ok(Ok(entries)) => entries
                .into_iter()
                .filter(|e| !e.status().is_terminal())
                .collect(),
            _ => Vec::new(),
        };
        let budget = before_confirming(deadline);
        let destroying = {
            let context = Arc::clone(&context);
            tokio::spawn(async move { context.destroy(handle).await })
        };
        let outcome = match tokio::time::timeout(budget, destroying).await {
            Ok(Ok(Ok(()))) => return (StepOutcome::Done, Vec::new()),
            Ok(Ok(Err(error))) => {
                tracing::warn!(%error, %handle, "destroy: the context failed to destroy the handle");
                StepOutcome::Failed(error.to_string())
            }
            Ok(Err(join)) => {
                tracing::warn!(%join, %handle, "destroy: the context's destroy panicked");
                StepOutcome::Failed(join.to_string())
            }
            Err(_) => {
                tracing::warn!(?budget, %handle, "destroy: the context did not destroy the handle in time; abandoned");
                StepOutcome::TimedOut
            }
        };
        // Not confirmed: ask once more, briefly, which of them are still running.
        let confirm = deadline
            .saturating_duration_since(Instant::now())
            .max(CONFIRM_RESERVE);
        let survivors = match tokio::time::timeout(confirm, context.list_background(handle)).await {
            Ok(Ok(now)) => running
                .into_iter()
                .filter(|task| {
                    now.iter()
                        .find(|e| e.task_id == task.task_id)
                        .is_none_or(|e| !e.status().is_terminal())
                })
                .collect(),
            _ => running,
        };
        (outcome, survivors)
    }
}

async fn settle(what: &str, timeout: Duration, task: tokio::task::JoinHandle<()>) -> StepOutcome {
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(())) => StepOutcome::Done,
        Ok(Err(join)) => {
            tracing::warn!(%join, "destroy: {what} panicked");
            StepOutcome::Failed(join.to_string())
        }
        Err(_) => {
            tracing::warn!(
                ?timeout,
                "destroy: {what} did not finish in time; abandoned"
            );
            StepOutcome::TimedOut
        }
    }
}
