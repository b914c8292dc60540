//! The exit report: how a worker tells its own object, through Restate's ingress, that
//! a task it runs has settled.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use zidane_context::{ExecutionContext, ExecutionHandle, TaskExitInfo, TaskId};
use zidane_process::ProcessContext;

use crate::ingress::Ingress;
use crate::protocol::ExitReport;

/// Attempts to deliver one exit report to Restate's ingress before giving up (the task
/// is then reported `lost` once this worker is replaced).
const EXIT_REPORT_ATTEMPTS: u32 = 60;

/// Posts one exit to the worker's own object through Restate's ingress, so the exit is
/// recorded durably by the object's single writer.
#[derive(Clone)]
pub(crate) struct ExitReporter {
    pub(crate) ingress: Ingress,
    pub(crate) service: String,
    pub(crate) key: String,
    pub(crate) task_id: TaskId,
    pub(crate) boot: String,
    pub(crate) local: ExecutionHandle,
    pub(crate) process: Arc<ProcessContext>,
}

impl ExitReporter {
    /// Reports `exit`, retrying with backoff until Restate accepts it.
    pub(crate) async fn report(self, exit: TaskExitInfo) {
        let bytes_written = self
            .process
            .list_background(self.local)
            .await
            .ok()
            .and_then(|entries| entries.into_iter().find(|e| e.task_id == exit.task_id))
            .map_or(0, |entry| entry.bytes_written);
        let report = ExitReport {
            task_id: self.task_id,
            boot: self.boot.clone(),
            status: exit.status,
            exit_code: exit.exit_code,
            signal: exit.signal,
            leader_exit_code: exit.leader_exit_code,
            log_write_failure: exit.log_write_failure.clone(),
            kill_reason: exit.kill_reason,
            ended_at: Utc::now(),
            bytes_written,
        };
        let idempotency = format!("exit-{}-{}-{}", self.key, self.task_id, self.boot);
        let mut delay = Duration::from_millis(50);
        for _ in 0..EXIT_REPORT_ATTEMPTS {
            match self
                .ingress
                .send(
                    &self.service,
                    &self.key,
                    "record_exit",
                    &report,
                    &idempotency,
                )
                .await
            {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(task = %self.task_id, %error, "exit report not accepted yet");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
        tracing::error!(task = %self.task_id, "exit report dropped; the task will read as lost");
    }
}
