//! Locking a shared value so that one panicked holder cannot take the host down.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking its guard even when a thread panicked while holding it.
///
/// A poisoned mutex only says that some holder panicked. zidane holds its locks for
/// plain updates, never across an await or a callback, so what they guard is whole
/// either way; making every later `lock` panic too would turn one bug (a tool's, a
/// hook's, a failing test's) into a host that stops serving every session. Every crate
/// locks its shared state through this one function.
///
/// ```
/// use std::sync::Mutex;
/// use zidane_context::lock;
///
/// let counter = Mutex::new(0);
/// let _ = std::panic::catch_unwind(|| {
///     let _guard = lock(&counter);
///     panic!("a holder panics");
/// });
/// assert!(counter.is_poisoned());
/// *lock(&counter) += 1;
/// assert_eq!(*lock(&counter), 1);
/// ```
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
