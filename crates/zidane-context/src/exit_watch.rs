//! Waiting for a task's exit without losing a wake-up: the part of `wait_background`
//! every in-process context shares.

use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::task::TaskExitInfo;

/// Waits until `done` holds an exit, `timeout` passes or `cancel` fires; the exit, or
/// `None`.
///
/// `done` is a receiver of the watch a context sets to `Some(exit)` when the task
/// settles. A watch keeps its last value, so subscribing before this call is enough: an
/// exit that lands before, during or after it is seen — the no-lost-wake-up guarantee of
/// [`wait_background`](crate::ExecutionContext::wait_background).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use zidane_context::{CancellationToken, wait_for_exit};
/// let (_tx, mut done) = tokio::sync::watch::channel(None);
/// let waited = wait_for_exit(&mut done, Duration::from_millis(5), &CancellationToken::new()).await;
/// assert!(waited.is_none(), "timed out");
/// # });
/// ```
pub async fn wait_for_exit(
    done: &mut watch::Receiver<Option<TaskExitInfo>>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Option<TaskExitInfo> {
    let exit = async {
        done.wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|exit| exit.clone())
    };
    tokio::select! {
        exit = exit => exit,
        () = tokio::time::sleep(timeout) => None,
        () = cancel.cancelled() => None,
    }
}
