//! The stall watchdog: one `on_stall` per quiet period, re-armed by fresh output.
//!
//! It never kills anything. It only needs the time of the last output: rather than
//! resetting a timer on every write, the supervisor sleeps until
//! [`deadline`](StallWatch::deadline) and asks [`check`](StallWatch::check), which
//! fires only if the task really was quiet for the whole window.

use std::time::Duration;

use tokio::time::Instant;
use zidane_context::StallCallback;

/// Watches one task for quiet periods.
pub(crate) struct StallWatch {
    window: Duration,
    last_output: Instant,
    fired: bool,
    callback: StallCallback,
}

impl std::fmt::Debug for StallWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StallWatch")
            .field("window", &self.window)
            .field("fired", &self.fired)
            .finish_non_exhaustive()
    }
}

impl StallWatch {
    /// A watch whose first quiet period starts now.
    pub(crate) fn new(window: Duration, callback: StallCallback, now: Instant) -> Self {
        Self {
            window,
            last_output: now,
            fired: false,
            callback,
        }
    }

    /// The task wrote something: a new quiet period starts.
    pub(crate) fn on_output(&mut self, now: Instant) {
        self.last_output = now;
        self.fired = false;
    }

    /// When the current quiet period would fire; `None` once it has fired.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        (!self.fired).then(|| self.last_output + self.window)
    }

    /// If the task has been quiet for the whole window, marks the period as reported
    /// and returns the callback and how long it has been quiet.
    pub(crate) fn check(&mut self, now: Instant) -> Option<(StallCallback, Duration)> {
        let quiet = now.saturating_duration_since(self.last_output);
        if self.fired || quiet < self.window {
            return None;
        }
        self.fired = true;
        Some((self.callback.clone(), quiet))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn fires_once_per_quiet_period_and_rearms_on_output() {
        let start = Instant::now();
        let window = Duration::from_millis(100);
        let mut watch = StallWatch::new(window, Arc::new(|_| {}), start);
        assert!(watch.check(start + Duration::from_millis(50)).is_none());
        let (_, quiet) = watch.check(start + window).unwrap();
        assert_eq!(quiet, window);
        assert!(watch.deadline().is_none());
        assert!(watch.check(start + 5 * window).is_none(), "fired twice");
        watch.on_output(start + 5 * window);
        assert_eq!(watch.deadline(), Some(start + 6 * window));
        assert!(watch.check(start + 6 * window).is_some());
    }
}
