//! `WireError`: why a text is not a well-formed notification or stall block.

/// A malformed `<task-notification>` or `<task-stall>` block.
///
/// Offsets are byte offsets into the text given to [`parse`](crate::parse). Parsing
/// never panics: every way a block can be wrong is one of these variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// An opening tag with no closing tag after it.
    #[error("<{block}> at byte {offset} is never closed")]
    Unclosed {
        /// `task-notification` or `task-stall`.
        block: &'static str,
        /// Where the opening tag starts.
        offset: usize,
    },
    /// The block's structure differs from what rendering writes: a missing, extra or
    /// out-of-order element, or stray text between elements.
    #[error("expected {expected} at byte {offset}")]
    Expected {
        /// What should have been there, e.g. `` `<exit-code>` ``.
        expected: String,
        /// Where it should have been.
        offset: usize,
    },
    /// A raw character that rendering always escapes (`<`, `>`, a control character).
    #[error("unescaped {found:?} in <{element}> at byte {offset}")]
    Unescaped {
        /// The element whose value holds it.
        element: &'static str,
        /// The character.
        found: char,
        /// Where it is.
        offset: usize,
    },
    /// An entity or character reference that is unknown or names no character.
    #[error("bad reference {reference:?} in <{element}> at byte {offset}")]
    BadReference {
        /// The element whose value holds it.
        element: &'static str,
        /// The reference as written (cut short if very long).
        reference: String,
        /// Where it starts.
        offset: usize,
    },
    /// A value that does not parse as its element's type (a task id, a status, a
    /// number, a signal name).
    #[error("invalid <{element}> value {value:?} at byte {offset}: {reason}")]
    InvalidValue {
        /// The element.
        element: &'static str,
        /// The (decoded) value.
        value: String,
        /// Why it is refused.
        reason: String,
        /// Where the value starts.
        offset: usize,
    },
}
