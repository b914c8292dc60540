//! The exit of a task started with `notify_on`, held until its follower is announced.
//!
//! A task's events are told before its exit, and the session knows a task has events
//! to wait for only once its follower is announced ([`TaskEventSink::follow`]). The
//! follower can be announced only after the start returns the task's id, and a task that
//! ends at once may settle before that. Its exit callback therefore goes through this
//! gate: held while closed, passed on as the follower is announced, and straight through
//! after. A task without patterns has no follower and takes no gate.
//!
//! [`TaskEventSink::follow`]: crate::TaskEventSink::follow

use std::sync::{Arc, Mutex};

use zidane_context::{ExitCallback, TaskExitInfo};

/// Where the gate is.
enum State {
    /// The follower is not announced yet: an exit waits here.
    Closed(Option<TaskExitInfo>),
    /// Announced: exits pass.
    Open,
}

/// One task's gate, shared by its exit callback and the call that started it.
#[derive(Clone)]
pub(crate) struct FollowGate {
    state: Arc<Mutex<State>>,
    on_exit: ExitCallback,
}

impl FollowGate {
    /// A closed gate in front of `on_exit`.
    pub(crate) fn new(on_exit: ExitCallback) -> Self {
        Self {
            state: Arc::new(Mutex::new(State::Closed(None))),
            on_exit,
        }
    }

    /// The exit callback to start the task with.
    pub(crate) fn callback(&self) -> ExitCallback {
        let gate = self.clone();
        Arc::new(move |exit: TaskExitInfo| {
            let pass = {
                let mut state = zidane_context::lock(&gate.state);
                match &mut *state {
                    State::Closed(held) => {
                        *held = Some(exit.clone());
                        false
                    }
                    State::Open => true,
                }
            };
            if pass {
                (gate.on_exit)(exit);
            }
        })
    }

    /// Opens the gate once the follower is announced, passing on an exit that waited.
    pub(crate) fn open(&self) {
        let held = {
            let mut state = zidane_context::lock(&self.state);
            match std::mem::replace(&mut *state, State::Open) {
                State::Closed(held) => held,
                State::Open => None,
            }
        };
        if let Some(exit) = held {
            (self.on_exit)(exit);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use zidane_context::{TaskExitInfo, TaskId, TaskStatus};

    use super::*;

    fn exit() -> TaskExitInfo {
        TaskExitInfo::new(
            TaskId::from_number(1),
            "true",
            "/t/bash_1.log",
            TaskStatus::Exited,
            0,
            std::time::Duration::ZERO,
        )
    }

    fn recorder() -> (Arc<Mutex<Vec<TaskExitInfo>>>, ExitCallback) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        (seen, Arc::new(move |exit| sink.lock().unwrap().push(exit)))
    }

    #[test]
    fn an_exit_before_the_follower_waits_for_it_and_is_passed_on_once() {
        let (seen, on_exit) = recorder();
        let gate = FollowGate::new(on_exit);
        (gate.callback())(exit());
        assert!(
            seen.lock().unwrap().is_empty(),
            "passed before the follower"
        );
        gate.open();
        gate.open();
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn an_exit_after_the_follower_passes_at_once() {
        let (seen, on_exit) = recorder();
        let gate = FollowGate::new(on_exit);
        gate.open();
        assert!(seen.lock().unwrap().is_empty());
        (gate.callback())(exit());
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}
