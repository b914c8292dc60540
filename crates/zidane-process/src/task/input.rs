//! A task's input: the write end of its stdin pipe, or its terminal's master, and
//! the one way bytes reach it — bounded in time, so a task that never reads its input
//! gets an error back to the caller instead of a hang.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zidane_context::{ContextError, Result, TaskId, TaskInput, TtySize};

use crate::task::input_writer::{InputWriter, is_hangup};

/// How long one [`write_input`](zidane_context::ExecutionContext::write_input) may
/// wait for a task to take its bytes (a full pipe, a terminal nobody reads) before it
/// gives up and says so.
pub(crate) const INPUT_WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// The end-of-file character of a terminal in its default settings (`VEOF`, ctrl-d).
const TERMINAL_EOF: u8 = 0x04;

/// Where a task's input goes.
#[derive(Debug)]
pub(crate) struct InputEnd {
    /// Whether this is a terminal's master (end of input is ctrl-d, and the size can
    /// be set) rather than a pipe.
    terminal: bool,
    /// `None` once closed: end of input sent to a pipe, or the task settled.
    sender: Mutex<Option<Arc<InputWriter>>>,
    /// Set when end of input closed a pipe (as opposed to the task settling).
    eof_sent: std::sync::atomic::AtomicBool,
    /// One write at a time, so two callers' bytes never interleave.
    writing: tokio::sync::Mutex<()>,
}

impl InputEnd {
    /// Wraps `end`: a pipe's write end or a terminal's master.
    pub(crate) fn new(end: crate::spawn::TaskInput, terminal: bool) -> io::Result<Self> {
        let sender = InputWriter::new(end)?;
        Ok(Self {
            terminal,
            sender: Mutex::new(Some(Arc::new(sender))),
            eof_sent: std::sync::atomic::AtomicBool::new(false),
            writing: tokio::sync::Mutex::new(()),
        })
    }

    fn sender(&self, task_id: TaskId) -> Result<Arc<InputWriter>> {
        let sender = zidane_context::lock(&self.sender);
        match sender.as_ref() {
            Some(sender) => Ok(sender.clone()),
            None if self.eof_sent.load(Ordering::Acquire) => {
                Err(ContextError::InputClosed { task_id })
            }
            None => Err(ContextError::TaskEnded { task_id }),
        }
    }

    /// Writes `input` to the task (see `ExecutionContext::write_input`).
    pub(crate) async fn write(&self, task_id: TaskId, input: TaskInput) -> Result<()> {
        let bytes = match input {
            TaskInput::Bytes(bytes) => bytes,
            TaskInput::Eof if self.terminal => vec![TERMINAL_EOF],
            TaskInput::Eof => {
                let _one_at_a_time = self.writing.lock().await;
                let mut sender = zidane_context::lock(&self.sender);
                if sender.take().is_some() {
                    self.eof_sent.store(true, Ordering::Release);
                    return Ok(());
                }
                drop(sender);
                // Sent already: closing twice is no error. Ended: say so.
                return if self.eof_sent.load(Ordering::Acquire) {
                    Ok(())
                } else {
                    Err(ContextError::TaskEnded { task_id })
                };
            }
        };
        let sender = self.sender(task_id)?;
        let _one_at_a_time = self.writing.lock().await;
        let written = Arc::new(AtomicUsize::new(0));
        let total = bytes.len();
        let wrote = tokio::time::timeout(
            INPUT_WRITE_TIMEOUT,
            sender.write_all(bytes, written.clone()),
        )
        .await;
        match wrote {
            Ok(Ok(())) => Ok(()),
            Err(_elapsed) => Err(ContextError::Task {
                task_id,
                reason: format!(
                    "is not reading its input: {} of {total} bytes written in {} s",
                    written.load(Ordering::Acquire),
                    INPUT_WRITE_TIMEOUT.as_secs()
                ),
            }),
            // A pipe nobody reads any more; a terminal whose every process is gone.
            Ok(Err(error)) if is_hangup(&error) => Err(ContextError::Task {
                task_id,
                reason: "no process reads its input any more".to_owned(),
            }),
            Ok(Err(error)) => Err(ContextError::Task {
                task_id,
                reason: format!("writing its input failed: {error}"),
            }),
        }
    }

    /// Sets the size of the task's terminal.
    pub(crate) fn resize(&self, task_id: TaskId, size: TtySize) -> Result<()> {
        if !self.terminal {
            return Err(ContextError::NotATerminal { task_id });
        }
        let sender = self.sender(task_id)?;
        sender.set_size(size).map_err(|error| ContextError::Task {
            task_id,
            reason: format!("setting its terminal's size failed: {error}"),
        })
    }

    /// Closes the input for good: the task settled. A write in flight keeps its own
    /// reference until it is done.
    pub(crate) fn close(&self) {
        zidane_context::lock(&self.sender).take();
    }
}
