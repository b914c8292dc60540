//! Killing a task and waiting, within a bound, until it settled: the plain path that
//! `destroy` takes for every task.

use std::time::Duration;

use tokio::sync::watch;
use zidane_context::{ContextError, KillReason, Result, TaskExitInfo, TaskId};

use crate::task::Task;
use crate::task::kill::LEADER_REAP_BOUND;

/// Slack on top of the kill bounds before a caller stops waiting for a supervisor that
/// should long have settled its task (only a runtime shutting down gets there).
const SETTLE_SLACK: Duration = Duration::from_secs(5);

/// What a killer waits on: the task's exit, once it settled.
pub(crate) type Settled = watch::Receiver<Option<TaskExitInfo>>;

/// The longest a kill can take: grace, then the bound on reaping after `SIGKILL`.
fn settle_bound(kill_grace: Duration) -> Duration {
    kill_grace + LEADER_REAP_BOUND + SETTLE_SLACK
}

/// Asks `task` to die, for `reason`, and waits until it settled.
pub(crate) async fn kill_and_wait(
    task: &Task,
    reason: KillReason,
    kill_grace: Duration,
) -> Result<TaskExitInfo> {
    let done = task.subscribe();
    task.request_kill(reason);
    wait_settled(task.id(), done, kill_grace).await
}

/// Waits, within the kill's bound, until a killed task settled.
pub(crate) async fn wait_settled(
    task_id: TaskId,
    mut done: Settled,
    kill_grace: Duration,
) -> Result<TaskExitInfo> {
    let settled = tokio::time::timeout(settle_bound(kill_grace), done.wait_for(Option::is_some));
    match settled.await {
        Ok(Ok(exit)) => exit.clone().ok_or_else(|| not_settled(task_id)),
        _ => Err(not_settled(task_id)),
    }
}

fn not_settled(task_id: TaskId) -> ContextError {
    ContextError::Task {
        task_id,
        reason: "the task did not settle after SIGKILL (is the tokio runtime shutting down?)"
            .to_owned(),
    }
}
