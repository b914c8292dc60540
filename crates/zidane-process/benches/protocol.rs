//! What every driver op returns: the protocol's fields, or a failed check with the
//! fields measured so far (`shared/bench-protocol.md`).

use serde_json::{Map, Value};

/// An op's JSON fields, besides `op` and `ok`.
pub type Fields = Map<String, Value>;

/// A failed check: the fields measured so far and what went wrong.
pub struct Failure {
    /// What was measured before the check failed.
    pub fields: Fields,
    /// What went wrong.
    pub error: String,
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Self {
        Self {
            fields: Fields::new(),
            error: error.to_string(),
        }
    }
}

/// A failure with the fields measured so far.
pub fn fail(fields: Fields, error: impl Into<String>) -> Failure {
    Failure {
        fields,
        error: error.into(),
    }
}
