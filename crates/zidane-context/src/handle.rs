//! `ExecutionHandle`: the scope of everything one session owns in a context.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Scopes everything a session owns in a context: its background tasks and their logs.
///
/// Created by [`ExecutionContext::create_handle`](crate::ExecutionContext::create_handle)
/// and ended by [`ExecutionContext::destroy`](crate::ExecutionContext::destroy). Cheap to
/// copy; serialises as its number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExecutionHandle(u64);

impl ExecutionHandle {
    /// A handle with this id. Contexts mint ids; callers only pass handles back.
    pub const fn new(id: u64) -> Self {
        Self(id)
    }

    /// The handle's id, unique within the context that minted it.
    pub const fn id(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ExecutionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "h{}", self.0)
    }
}

impl fmt::Debug for ExecutionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutionHandle({})", self.0)
    }
}
