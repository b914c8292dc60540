//! Following a task's log as it grows: the seam a readiness wait reads through.

/// Bytes of a task's log from some offset: what
/// [`follow_output`](crate::ExecutionContext::follow_output) returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputChunk {
    /// Where `bytes` start in the log.
    pub offset: u64,
    /// The bytes read; empty when the task ended with nothing past `offset`, or when
    /// `offset` was past the end of the log (then `offset` is where the log ends).
    pub bytes: Vec<u8>,
    /// Whether the task had ended before these bytes were read: nothing more will come
    /// past them.
    pub ended: bool,
}

impl OutputChunk {
    /// The offset to follow from next: just past these bytes.
    pub fn next_offset(&self) -> u64 {
        self.offset.saturating_add(self.bytes.len() as u64)
    }
}
