//! The running tasks the footer counts and the picker lists, read from the context off
//! the event loop: again whenever tasks start, end or move (the agent's hooks), or the
//! loop asks (a run ended, the picker ticks). On a remote context a read takes a round
//! trip; the loop never waits for one, so typing never stalls behind it.

use std::sync::Arc;

use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use zidane::agent::{Agent, HookEvent, SubscriptionId};

use super::state::AppEvent;

/// Reads the agent's running tasks in a task of its own and sends each reading to the
/// loop as [`AppEvent::Tasks`]. Dropping it stops the reads.
pub struct TaskWatch {
    agent: Agent,
    changed: Arc<Notify>,
    subscription: SubscriptionId,
    reader: JoinHandle<()>,
}

impl TaskWatch {
    /// Starts watching `agent`'s tasks, with a first reading right away.
    pub fn spawn(agent: Agent, events: mpsc::UnboundedSender<AppEvent>) -> Self {
        let changed = Arc::new(Notify::new());
        let notify = Arc::clone(&changed);
        let subscription = agent.hooks().subscribe(move |event| {
            if matches!(
                event,
                HookEvent::BackgroundStart(_)
                    | HookEvent::BackgroundExit(_)
                    | HookEvent::BackgroundReassign(_)
            ) {
                notify.notify_one();
            }
        });
        let reading = agent.clone();
        let wakes = Arc::clone(&changed);
        let reader = tokio::spawn(async move {
            loop {
                // A change during a read leaves a permit: one more read follows, which
                // began after the change, so the last reading sent is never stale.
                wakes.notified().await;
                match reading.running_tasks().await {
                    Ok(rows) => {
                        if events.send(AppEvent::Tasks(rows)).is_err() {
                            break;
                        }
                    }
                    // The footer keeps the last reading; the next change reads again.
                    Err(error) => tracing::debug!(%error, "reading the running tasks"),
                }
            }
        });
        changed.notify_one();
        Self {
            agent,
            changed,
            subscription,
            reader,
        }
    }

    /// Asks for a new reading (several asks before it starts make one read).
    pub fn changed(&self) {
        self.changed.notify_one();
    }
}

impl Drop for TaskWatch {
    fn drop(&mut self) {
        self.agent.hooks().unsubscribe(self.subscription);
        self.reader.abort();
    }
}
