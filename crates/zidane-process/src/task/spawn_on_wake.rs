//! Starting a supervisor without waking a runtime worker: its first poll runs on the
//! calling thread, and it becomes a runtime task only when something wakes it.
//!
//! A supervisor's first poll only registers interest (the output pipe, the kill token,
//! a stall timer) and returns `Pending`; most then sleep until their task ends. Handed
//! to `tokio::spawn` from outside the runtime's workers, that first poll costs a
//! worker wake-up on every start, paid by the caller (the futex wake) and by the
//! children being started (the woken worker takes a core). Here the first poll is done
//! in place, with a waker that spawns the future on the runtime the first time it is
//! woken. The future is boxed before that poll, so what it registered stays where it
//! was when it moves into the runtime's task. What that buys is measured by `cargo xtask
//! bench` (`spawn`, `roundtrip`, `concurrent`); see `benches/RESULTS.md`.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Wake, Waker};

use tokio::runtime::Handle;

use crate::task::output_pipe::OutputPipe;

type Boxed = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Polls `future` once here; if it is not done, spawns it on the current runtime as
/// soon as it is woken. Must be called within a tokio runtime, like `tokio::spawn`.
fn spawn_on_wake(future: impl Future<Output = ()> + Send + 'static) {
    let parked = Arc::new(Parked {
        runtime: Handle::current(),
        state: Mutex::new(State::Polling { woken: false }),
    });
    let mut future: Boxed = Box::pin(future);
    let waker = Waker::from(parked.clone());
    let first = {
        let _in_place = InPlace::enter();
        future.as_mut().poll(&mut Context::from_waker(&waker))
    };
    if first.is_ready() {
        return;
    }
    let mut state = parked.lock();
    if matches!(*state, State::Polling { woken: true }) {
        // Woken while we polled: it has something to do already.
        *state = State::Spawned;
        drop(state);
        parked.runtime.spawn(future);
    } else {
        *state = State::Parked(future);
    }
}

/// How a supervisor gets its first poll: in place ([`spawn_on_wake`]), or on the plain
/// path that the trick must agree with, `tokio::spawn`. Contexts always take the first;
/// the tests run the second beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstPoll {
    /// On the starting thread; onto the runtime when first woken.
    InPlace,
    /// On a runtime worker, as `tokio::spawn` does.
    /// (Only the Unix tests, whose commands are POSIX shell, start tasks this way.)
    #[cfg_attr(any(not(test), windows), allow(dead_code))]
    OnRuntime,
}

impl FirstPoll {
    /// Starts `future` this way. Must be called within a tokio runtime.
    pub(crate) fn start(self, future: impl Future<Output = ()> + Send + 'static) {
        match self {
            Self::InPlace => spawn_on_wake(future),
            Self::OnRuntime => drop(tokio::spawn(future)),
        }
    }
}

thread_local! {
    static IN_PLACE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the caller is in the first poll of a future that [`spawn_on_wake`] runs
/// in place. Such a poll must only register interest: anything that is ready already
/// is work, and work belongs on the runtime's workers, not on the thread that started
/// the task (where, outside any runtime task, nothing would ever make a busy loop
/// yield). So a future that finds something ready then yields first
/// (`tokio::task::yield_now`), which hands it to the runtime at once.
fn polling_in_place() -> bool {
    IN_PLACE.with(Cell::get)
}

/// Waits until a task's output is readable, as `OutputPipe::readable` does, except in the
/// first poll that [`spawn_on_wake`] runs in place: output that is there already is work
/// for the runtime's workers, not for the thread still starting the task, so the future
/// yields first and reports it once a worker polls it.
pub(crate) async fn readable(output: &OutputPipe) -> std::io::Result<()> {
    let ready = output.readable().await;
    if polling_in_place() {
        tokio::task::yield_now().await;
    }
    ready
}

/// Marks the first poll, until dropped (a panicking poll included).
struct InPlace;

impl InPlace {
    fn enter() -> Self {
        IN_PLACE.with(|flag| flag.set(true));
        Self
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        IN_PLACE.with(|flag| flag.set(false));
    }
}

/// A future between its first poll and its first wake-up.
struct Parked {
    runtime: Handle,
    state: Mutex<State>,
}

enum State {
    /// The first poll is running on the calling thread.
    Polling { woken: bool },
    /// Polled once, waiting for its first wake-up.
    Parked(Boxed),
    /// A runtime task now; from its next poll on, its wakers are the task's own.
    Spawned,
}

impl Parked {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The lock only guards moves of the state: a panic cannot leave it half-made.
        zidane_context::lock(&self.state)
    }
}

impl Wake for Parked {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.lock();
        match std::mem::replace(&mut *state, State::Spawned) {
            State::Polling { .. } => *state = State::Polling { woken: true },
            State::Parked(future) => {
                drop(state);
                // On a runtime that is shutting down this drops the future, as it
                // would drop a task.
                self.runtime.spawn(future);
            }
            State::Spawned => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Poll;
    use std::time::Duration;

    use tokio::sync::{Notify, oneshot};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_ready_future_runs_in_place() {
        let (done, ran) = oneshot::channel();
        spawn_on_wake(async move {
            let _ = done.send(std::thread::current().id());
        });
        assert_eq!(ran.await.unwrap(), std::thread::current().id());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_pending_future_moves_to_the_runtime_when_woken() {
        let notify = Arc::new(Notify::new());
        let polls = Arc::new(AtomicUsize::new(0));
        let (done, finished) = oneshot::channel();
        let (n, p) = (notify.clone(), polls.clone());
        spawn_on_wake(async move {
            p.fetch_add(1, Ordering::SeqCst);
            n.notified().await;
            // It keeps working as a runtime task: a timer registered after the move.
            tokio::time::sleep(Duration::from_millis(1)).await;
            let _ = done.send(std::thread::current().id());
        });
        assert_eq!(polls.load(Ordering::SeqCst), 1, "polled once, in place");
        notify.notify_one();
        let finished_on = tokio::time::timeout(Duration::from_secs(10), finished)
            .await
            .expect("the woken future finished")
            .unwrap();
        assert_ne!(finished_on, std::thread::current().id(), "on a worker");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_found_ready_in_place_is_done_on_the_runtime() {
        let (done, finished) = oneshot::channel();
        spawn_on_wake(async move {
            let in_place = polling_in_place();
            if in_place {
                tokio::task::yield_now().await;
            }
            let _ = done.send((in_place, polling_in_place(), std::thread::current().id()));
        });
        let (first, after, thread) = tokio::time::timeout(Duration::from_secs(10), finished)
            .await
            .expect("the yielded future finished")
            .unwrap();
        assert!(first, "the first poll is in place");
        assert!(!after, "the poll after the yield is not");
        assert_ne!(
            thread,
            std::thread::current().id(),
            "it finished on a worker"
        );
        assert!(
            !polling_in_place(),
            "the flag does not outlive the first poll"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wake_during_the_first_poll_is_not_lost() {
        let (done, finished) = oneshot::channel();
        let mut done = Some(done);
        let mut polls = 0;
        spawn_on_wake(std::future::poll_fn(move |cx| {
            polls += 1;
            if polls == 1 {
                // Woken before the first poll even returned: nothing else will wake it.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if let Some(done) = done.take() {
                let _ = done.send(polls);
            }
            Poll::Ready(())
        }));
        let polls = tokio::time::timeout(Duration::from_secs(10), finished)
            .await
            .expect("polled again after the early wake-up")
            .unwrap();
        assert_eq!(polls, 2);
    }
}

// Its commands are POSIX shell.
#[cfg(test)]
#[cfg(unix)]
#[path = "spawn_on_wake_tests.rs"]
mod plain_path_tests;
