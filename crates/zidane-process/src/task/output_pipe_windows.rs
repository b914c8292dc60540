//! The read end of a command's output as its owner sees it on Windows. An anonymous
//! pipe cannot be waited on by the runtime, so one thread per command reads it in
//! chunks and hands them over a channel of one: the thread blocks while a chunk waits,
//! the pipe fills, and the command blocks on its next write (backpressure), so memory
//! stays flat however much it prints. The log writer takes bytes out of the chunk in
//! hand as it would read a pipe.

use std::future::poll_fn;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use tokio::sync::mpsc;

/// How much one read of the pipe takes at most.
const CHUNK: usize = 64 * 1024;

/// What the log writer reads from: the chunks the reading thread handed over.
pub(crate) type PipeRef<'a> = &'a Chunks;

/// The read end of a command's output.
#[derive(Debug)]
pub(crate) struct OutputPipe {
    chunks: Chunks,
    /// Cleared by the reading thread when the pipe reached its end: no process holds
    /// the write end any more.
    open: Arc<AtomicBool>,
}

/// The chunks read from a pipe, and the one being taken apart.
#[derive(Debug)]
pub(crate) struct Chunks(Mutex<Inner>);

#[derive(Debug)]
struct Inner {
    received: mpsc::Receiver<io::Result<Vec<u8>>>,
    /// The chunk in hand and how much of it was taken.
    chunk: Vec<u8>,
    taken: usize,
    /// A read error the thread ended with, not yet reported.
    error: Option<io::Error>,
    /// The thread is done: after the chunk in hand, end of file.
    ended: bool,
}

impl Inner {
    fn has_bytes(&self) -> bool {
        self.taken < self.chunk.len()
    }

    /// Takes one item the thread sent (or learns it is done).
    fn accept(&mut self, item: Option<io::Result<Vec<u8>>>) {
        match item {
            Some(Ok(chunk)) => {
                self.chunk = chunk;
                self.taken = 0;
            }
            Some(Err(error)) => {
                self.error = Some(error);
                self.ended = true;
            }
            None => self.ended = true,
        }
    }
}

impl OutputPipe {
    /// Starts the thread that reads `read` until its end.
    pub(crate) fn new(read: io::PipeReader) -> io::Result<Self> {
        let (send, received) = mpsc::channel(1);
        let open = Arc::new(AtomicBool::new(true));
        let thread_open = open.clone();
        std::thread::Builder::new()
            .name("zidane-output".to_owned())
            .spawn(move || pump(read, &send, &thread_open))?;
        Ok(Self {
            chunks: Chunks(Mutex::new(Inner {
                received,
                chunk: Vec::new(),
                taken: 0,
                error: None,
                ended: false,
            })),
            open,
        })
    }

    /// Waits until there are bytes to read, or the end, or an error.
    pub(crate) async fn readable(&self) -> io::Result<()> {
        poll_fn(|context| {
            let mut inner = self.chunks.lock();
            if inner.has_bytes() || inner.ended {
                return Poll::Ready(Ok(()));
            }
            match inner.received.poll_recv(context) {
                Poll::Ready(item) => {
                    inner.accept(item);
                    Poll::Ready(Ok(()))
                }
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    /// Runs `read` on the chunks; it sees `WouldBlock` when none is in hand.
    pub(crate) fn try_read_with<T>(
        &self,
        read: impl FnOnce(PipeRef<'_>) -> io::Result<T>,
    ) -> io::Result<T> {
        read(&self.chunks)
    }

    /// The chunks to read from directly.
    pub(crate) fn as_source(&self) -> PipeRef<'_> {
        &self.chunks
    }

    /// Whether some process still holds the write end: the thread has not reached the
    /// pipe's end.
    pub(crate) fn is_open(&self) -> bool {
        self.open.load(Ordering::Acquire)
    }
}

impl Chunks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        zidane_context::lock(&self.0)
    }
}

/// Reads the pipe until its end, handing each chunk over; stops early when the owner
/// is gone.
fn pump(mut read: io::PipeReader, send: &mpsc::Sender<io::Result<Vec<u8>>>, open: &AtomicBool) {
    loop {
        let mut chunk = vec![0; CHUNK];
        match read.read(&mut chunk) {
            // A broken pipe is how an anonymous pipe says every writer is gone.
            Ok(0) => break,
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => break,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Ok(n) => {
                chunk.truncate(n);
                if send.blocking_send(Ok(chunk)).is_err() {
                    break;
                }
            }
            Err(error) => {
                open.store(false, Ordering::Release);
                let _ = send.blocking_send(Err(error));
                return;
            }
        }
    }
    open.store(false, Ordering::Release);
}

/// Takes up to `buf.len()` bytes out of the chunks: `Ok(0)` at the end, `WouldBlock`
/// when none has arrived yet.
pub(crate) fn read_pipe(pipe: PipeRef<'_>, buf: &mut [u8]) -> io::Result<usize> {
    let mut inner = pipe.lock();
    if !inner.has_bytes() && !inner.ended {
        let item = match inner.received.try_recv() {
            Ok(item) => Some(item),
            Err(mpsc::error::TryRecvError::Empty) => {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Err(mpsc::error::TryRecvError::Disconnected) => None,
        };
        inner.accept(item);
    }
    if inner.has_bytes() {
        let n = buf.len().min(inner.chunk.len() - inner.taken);
        let from = inner.taken;
        buf[..n].copy_from_slice(&inner.chunk[from..from + n]);
        inner.taken += n;
        return Ok(n);
    }
    match inner.error.take() {
        Some(error) => Err(error),
        None => Ok(0),
    }
}

/// Terminal tasks do not exist on Windows: no read error means a terminal hung up.
pub(crate) fn is_terminal_hangup(_error: &io::Error) -> bool {
    false
}
