//! The kill `kill_background` takes: [`kill_and_wait`], but the supervisor is told
//! only if the task has not settled by [`ESCAPEE_PROBE`], the kill's first deadline.
//!
//! The group gets `SIGTERM` at once all the same (from the caller's thread), and most
//! groups die long before that deadline: the supervisor then wakes once, for their
//! end-of-file, instead of a first time for the request while the group is dying, when
//! that wake-up competes with the dying processes for a core. The result is the plain
//! path's; only who wakes when differs.
//!
//! [`kill_and_wait`]: crate::task::kill_wait::kill_and_wait

use std::time::Duration;

use zidane_context::{CancellationToken, Result, TaskExitInfo};

use crate::task::Task;
use crate::task::kill::ESCAPEE_PROBE;
use crate::task::kill_wait::wait_settled;

/// Kills `task` and waits until it settled, telling its supervisor only when needed.
pub(crate) async fn kill_quietly(task: &Task, kill_grace: Duration) -> Result<TaskExitInfo> {
    let mut done = task.subscribe();
    task.request_kill_quietly();
    // Whatever happens to this future, the supervisor hears of the kill.
    let _tell = CancelOnDrop(&task.kill);
    let early = tokio::time::timeout(ESCAPEE_PROBE, done.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|settled| settled.ok().and_then(|exit| exit.clone()));
    if let Some(exit) = early {
        return Ok(exit);
    }
    task.kill.cancel();
    wait_settled(task.id, done, kill_grace).await
}

/// Cancels the token when dropped.
struct CancelOnDrop<'a>(&'a CancellationToken);

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
