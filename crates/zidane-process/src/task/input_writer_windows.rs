//! Writing a task's input on Windows: the write end of its stdin pipe, an anonymous
//! pipe that cannot be made non-blocking, written from the blocking pool.

use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use zidane_context::TtySize;

/// How much is written per call, so that a caller that gives up can say how far a
/// write got.
const WRITE_CHUNK: usize = 4096;

/// Where a task's input bytes are written.
#[derive(Debug)]
pub(crate) struct InputWriter(Arc<Mutex<io::PipeWriter>>);

impl InputWriter {
    /// Wraps the write end of the task's stdin pipe.
    pub(crate) fn new(pipe: io::PipeWriter) -> io::Result<Self> {
        Ok(Self(Arc::new(Mutex::new(pipe))))
    }

    /// Writes all of `bytes` from a blocking-pool thread, counting them into `written`
    /// as they go. A caller that stops waiting leaves the thread to finish (or to fail
    /// once the task is gone and the pipe breaks).
    pub(crate) async fn write_all(
        &self,
        bytes: Vec<u8>,
        written: Arc<AtomicUsize>,
    ) -> io::Result<()> {
        let pipe = self.0.clone();
        tokio::task::spawn_blocking(move || {
            let mut pipe = zidane_context::lock(&pipe);
            for chunk in bytes.chunks(WRITE_CHUNK) {
                pipe.write_all(chunk)?;
                written.fetch_add(chunk.len(), Ordering::AcqRel);
            }
            pipe.flush()
        })
        .await
        .map_err(io::Error::other)?
    }

    /// Terminal tasks do not exist on Windows, so there is no size to set.
    pub(crate) fn set_size(&self, _size: TtySize) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "terminal tasks are not supported on Windows",
        ))
    }
}

/// Whether a write error means nobody reads the input any more (the pipe is broken or
/// being closed).
pub(crate) fn is_hangup(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe
}

/// Nothing identifies a pipe for a stall diagnosis on Windows, which cannot read what a
/// process waits for.
pub(crate) fn pipe_identity(_end: &io::PipeWriter) -> Option<u64> {
    None
}
