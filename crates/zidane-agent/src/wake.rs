//! The host side of auto-wake: run a drain-only turn when a task ends while the agent is
//! idle, drain again after every run for exits that landed mid-run, and stay quiet after
//! a user abort until the next real prompt. For a context that does not push every exit
//! (a durable one), the loop also sweeps it while the agent is idle, every
//! [`Agent::idle_sweep_interval`]: the context's
//! [`Capabilities::sweep_interval`](zidane_context::Capabilities::sweep_interval), or
//! [`DEFAULT_DURABLE_SWEEP_INTERVAL`](crate::DEFAULT_DURABLE_SWEEP_INTERVAL) for a
//! durable context that declares none.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::error::{AgentError, Result};
use crate::hooks::{HookEvent, SubscriptionId};
use crate::run::{RunOptions, RunOutcome, StopReason};

/// Wake reports kept for a slow subscriber before it starts missing some.
const REPORT_CAPACITY: usize = 64;

/// The least time a wake sweep may take before it is given up.
const SWEEP_BOUND: Duration = Duration::from_secs(5);

/// What started a run of a [`WakeLoop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WakeTrigger {
    /// The user's prompt ([`WakeLoop::prompt`]).
    Prompt,
    /// A task ended (or stalled, or wrote a line matching its `notify_on`) while the
    /// agent was idle: a drain-only run.
    Wake,
    /// Another drain-only run right after a run, for exits that landed during it.
    FollowUp,
}

/// One run a [`WakeLoop`] made, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeReport {
    /// What started it.
    pub trigger: WakeTrigger,
    /// Its outcome, or the error's message.
    pub outcome: Result<RunOutcome, String>,
}

struct Shared {
    agent: Agent,
    /// One run at a time: prompts and wake-ups queue behind each other.
    run_lock: tokio::sync::Mutex<()>,
    /// Set by a user abort, cleared by the next prompt.
    suppressed: AtomicBool,
    current: Mutex<Option<CancellationToken>>,
    reports: broadcast::Sender<WakeReport>,
}

/// The loop's own subscription to its reports, made when it starts, so that
/// [`WakeLoop::next_wake`] sees every wake-up since then, however late it is called.
type WakeQueue = tokio::sync::Mutex<broadcast::Receiver<WakeReport>>;

impl Shared {
    fn current(&self) -> MutexGuard<'_, Option<CancellationToken>> {
        zidane_context::lock(&self.current)
    }

    async fn run(&self, trigger: WakeTrigger, options: RunOptions) -> Result<RunOutcome> {
        *self.current() = Some(options.cancel.clone());
        let outcome = self.agent.run(options).await;
        *self.current() = None;
        let _ = self.reports.send(WakeReport {
            trigger,
            outcome: outcome
                .as_ref()
                .map(Clone::clone)
                .map_err(ToString::to_string),
        });
        outcome
    }

    /// One sweep for exits the context did not push, while the agent is idle and not
    /// suppressed; bounded, so a context that hangs cannot stall the loop.
    async fn sweep(&self, every: Option<Duration>) {
        if self.suppressed.load(Ordering::Acquire)
            || self.agent.is_running()
            || self.agent.is_destroyed()
        {
            return;
        }
        let bound = every.unwrap_or(SWEEP_BOUND).max(SWEEP_BOUND);
        match tokio::time::timeout(bound, self.agent.sweep_exits()).await {
            Ok(Ok(_)) | Ok(Err(AgentError::Destroyed)) => {}
            Ok(Err(error)) => tracing::debug!(%error, "wake sweep failed"),
            Err(_) => tracing::debug!(?bound, "wake sweep timed out"),
        }
    }

    /// Drain-only runs while something is pending, unless suppressed or destroyed.
    async fn drain(&self, mut trigger: WakeTrigger) {
        let _running = self.run_lock.lock().await;
        while !self.suppressed.load(Ordering::Acquire)
            && !self.agent.is_destroyed()
            && self.agent.has_pending_task_notifications()
        {
            tracing::info!(
                session = %self.agent.id(),
                trigger = ?trigger,
                "wake"
            );
            match self.run(trigger, RunOptions::drain()).await {
                Ok(outcome) if outcome.stop != StopReason::Cancelled => {}
                Ok(_) => break,
                Err(AgentError::NothingPending) => break,
                Err(error) => {
                    // A failed save keeps the exits pending; the next exit or prompt
                    // tries again, so a full disk does not make the loop spin.
                    tracing::warn!(%error, "wake run failed");
                    break;
                }
            }
            trigger = WakeTrigger::FollowUp;
        }
    }
}

async fn sleep_or_never(every: Option<Duration>) {
    match every {
        Some(every) => tokio::time::sleep(every).await,
        None => std::future::pending().await,
    }
}

/// Wakes an idle agent when its background tasks end.
///
/// Route the user's prompts through [`prompt`](Self::prompt) and their aborts through
/// [`abort`](Self::abort), so wake-ups never overlap a run and never override a "stop".
/// [`next_wake`](Self::next_wake) awaits the next run the loop made on its own and
/// gives its outcome; [`reports`](Self::reports) streams every run, prompts included.
/// Dropping the loop stops it (the agent is untouched).
///
/// ```no_run
/// # async fn demo(agent: zidane_agent::Agent) -> Result<(), zidane_agent::AgentError> {
/// use zidane_agent::WakeLoop;
/// let wake = WakeLoop::spawn(agent);
/// wake.prompt("build it in the background").await?;
/// // When the build ends while the agent is idle, a drain-only run delivers the
/// // notification: the model's answer to it is that run's outcome.
/// let woken = wake.next_wake().await?;
/// println!("{}", woken.notification_blocks()[0]); // the <task-notification> it read
/// println!("{}", woken.text);
/// # Ok(()) }
/// ```
pub struct WakeLoop {
    shared: Arc<Shared>,
    wakes: WakeQueue,
    stop: CancellationToken,
    subscription: SubscriptionId,
    notify: Arc<Notify>,
}

impl WakeLoop {
    /// Starts the loop on the current tokio runtime.
    pub fn spawn(agent: Agent) -> Self {
        let notify = Arc::new(Notify::new());
        let signal = Arc::clone(&notify);
        // The subscriber holds only the Notify: no cycle through the agent.
        let subscription = agent.hooks().subscribe(move |event| {
            if matches!(
                event,
                HookEvent::BackgroundExit(_) | HookEvent::BackgroundStall(_)
            ) {
                signal.notify_one();
            }
        });
        let (reports, wakes) = broadcast::channel(REPORT_CAPACITY);
        let shared = Arc::new(Shared {
            agent,
            run_lock: tokio::sync::Mutex::new(()),
            suppressed: AtomicBool::new(false),
            current: Mutex::new(None),
            reports,
        });
        let stop = CancellationToken::new();
        let task_shared = Arc::clone(&shared);
        let task_notify = Arc::clone(&notify);
        let task_stop = stop.clone();
        // A context that does not push every exit is swept while idle.
        let sweep_every = shared.agent.idle_sweep_interval();
        tokio::spawn(async move {
            loop {
                // Task events wait out their task's cool-down before they wake the model.
                let events_due = task_shared.agent.task_events_due_in();
                let feeds = Arc::clone(&task_shared.agent.inner.feeds);
                tokio::select! {
                    biased;
                    () = task_stop.cancelled() => break,
                    () = task_notify.notified() => {}
                    () = feeds.wake.notified() => {}
                    () = sleep_or_never(events_due) => {}
                    () = sleep_or_never(sweep_every) => {
                        // Its `background:exit` events wake this loop for the drain.
                        task_shared.sweep(sweep_every).await;
                        continue;
                    }
                }
                if task_stop.is_cancelled() || task_shared.agent.is_destroyed() {
                    break;
                }
                task_shared.drain(WakeTrigger::Wake).await;
            }
        });
        // Exits that were queued before the loop existed.
        notify.notify_one();
        Self {
            shared,
            wakes: tokio::sync::Mutex::new(wakes),
            stop,
            subscription,
            notify,
        }
    }

    /// Runs the user's prompt (after any run in flight), lifting an abort's suppression.
    /// Exits that land during the run are drained right after it, by the loop.
    pub async fn prompt(&self, prompt: impl Into<String>) -> Result<RunOutcome> {
        let outcome = {
            let _running = self.shared.run_lock.lock().await;
            self.shared.suppressed.store(false, Ordering::Release);
            self.shared
                .run(WakeTrigger::Prompt, RunOptions::new(prompt))
                .await
        };
        self.notify.notify_one();
        outcome
    }

    /// The user's abort: cancels the run in flight (background tasks live on) and
    /// suppresses wake-ups until the next [`prompt`](Self::prompt). Exits keep queuing
    /// and are delivered at the head of that prompt's turn.
    pub fn abort(&self) {
        self.shared.suppressed.store(true, Ordering::Release);
        if let Some(cancel) = self.shared.current().as_ref() {
            cancel.cancel();
        }
    }

    /// Whether wake-ups are suppressed by an abort.
    pub fn is_suppressed(&self) -> bool {
        self.shared.suppressed.load(Ordering::Acquire)
    }

    /// Waits for the next run the loop made on its own — a wake-up or a follow-up, never
    /// a prompt's run — and returns its outcome: what the model answered to the
    /// notifications at the head of its turn ([`RunOutcome::notified`],
    /// [`RunOutcome::notification_blocks`]).
    ///
    /// Every such run since the loop was spawned is returned once, in order, however
    /// late this is called (up to the last 64; older ones are skipped). A run that
    /// failed is [`AgentError::WakeRun`]. It waits as long as no task ends: bound it
    /// with a timeout where that matters.
    pub async fn next_wake(&self) -> Result<RunOutcome> {
        let mut wakes = self.wakes.lock().await;
        loop {
            match wakes.recv().await {
                Ok(report) if report.trigger == WakeTrigger::Prompt => {}
                Ok(report) => return report.outcome.map_err(AgentError::WakeRun),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                // Not reached while `self` holds the sender; kept total.
                Err(broadcast::error::RecvError::Closed) => return Err(AgentError::Destroyed),
            }
        }
    }

    /// Every run the loop makes from now on (prompts included), as it ends.
    pub fn reports(&self) -> broadcast::Receiver<WakeReport> {
        self.shared.reports.subscribe()
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.shared.agent
    }
}

impl Drop for WakeLoop {
    fn drop(&mut self) {
        self.stop.cancel();
        self.shared.agent.hooks().unsubscribe(self.subscription);
    }
}

impl std::fmt::Debug for WakeLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WakeLoop")
            .field("agent", &self.shared.agent)
            .field("suppressed", &self.is_suppressed())
            .finish_non_exhaustive()
    }
}
