//! Locking the server's small shared tables.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`. Never held across an await or a callback, so a poisoned lock only means
/// a panic mid-update of a table that is still valid: its guard is taken all the same.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
