//! The exit report: how a worker tells its own object, through Restate's ingress, that
//! a task it runs has settled.

use std::time::Duration;

use chrono::Utc;
use zidane_context::{ExecutionContext, ExecutionHandle, TaskExitInfo, TaskId};

use crate::protocol::ExitReport;
use crate::worker::Worker;

/// Attempts to deliver one exit report to Restate's ingress before giving up (the task
/// is then reported `lost` once this worker is replaced).
const EXIT_REPORT_ATTEMPTS: u32 = 60;

impl Worker {
    /// Posts the exit of `task_id` (local handle `local`) to the worker's own object for
    /// `handle` through Restate's ingress, so the exit is recorded durably by the
    /// object's single writer; retries with backoff until Restate accepts it.
    pub(crate) async fn report_exit(
        &self,
        handle: u64,
        task_id: TaskId,
        local: ExecutionHandle,
        exit: TaskExitInfo,
    ) {
        let bytes_written = self
            .process
            .list_background(local)
            .await
            .ok()
            .and_then(|entries| entries.into_iter().find(|e| e.task_id == exit.task_id))
            .map_or(0, |entry| entry.bytes_written);
        let report = ExitReport {
            task_id,
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
        // Counted until Restate has the report: a draining worker waits for it.
        self.reports_in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let _in_flight = InFlight(&self.reports_in_flight);
        let key = handle.to_string();
        let idempotency = format!("exit-{key}-{task_id}-{}", self.boot);
        let mut delay = Duration::from_millis(50);
        for _ in 0..EXIT_REPORT_ATTEMPTS {
            match self
                .ingress
                .send(&self.service, &key, "record_exit", &report, &idempotency)
                .await
            {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(task = %task_id, %error, "exit report not accepted yet");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
        tracing::error!(task = %task_id, "exit report dropped; the task will read as lost");
    }
}

/// Counts one exit report in flight until dropped, however `report_exit` returns.
struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
