//! The attached task's terminal, off the event loop: its screen read again whenever the
//! task writes (the context wakes the reader), at most once a frame, and the keys
//! typed written to it in the order they were typed.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use zidane::agent::{Agent, AttachError};
use zidane::context::{ContextError, TaskInput, TtySize};

use super::event_loop::FRAME;
use super::state::AppEvent;

/// How often the screen is read again on a context that cannot wake a follower of a
/// task's output (one without `follow_output`).
const UNFOLLOWED_REFRESH: Duration = Duration::from_millis(250);

/// Bytes of the log each wake reads past (and throws away): the wait only says that the
/// log grew; output beyond it wakes the next wait at once.
const FOLLOW_CHUNK: usize = 4096;

/// How often the screen is read again when the task's log has not grown: output past
/// the task's output cap reaches its terminal but not its log, so it wakes no follower.
const QUIET_REFRESH: Duration = Duration::from_secs(1);

/// What the writer does, in order.
enum Command {
    Input(Vec<u8>),
    Resize(TtySize),
}

/// Reads an attached task's screen and writes its input, each in a task of its own;
/// readings go to the loop as [`AppEvent::Screen`], the end as [`AppEvent::Gone`].
/// Dropping it stops both (detaching leaves the task running).
pub struct AttachWatch {
    commands: mpsc::UnboundedSender<Command>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl AttachWatch {
    /// Attaches to `task_id`: resizes its terminal to `size`, then follows its screen.
    pub fn spawn(
        agent: &Agent,
        task_id: &str,
        size: TtySize,
        events: &mpsc::UnboundedSender<AppEvent>,
    ) -> Self {
        let (commands, queue) = mpsc::unbounded_channel();
        let _ = commands.send(Command::Resize(size));
        let writer = tokio::spawn(write(
            agent.clone(),
            task_id.to_owned(),
            queue,
            events.clone(),
        ));
        let reader = tokio::spawn(follow(agent.clone(), task_id.to_owned(), events.clone()));
        Self {
            commands,
            reader,
            writer,
        }
    }

    /// Sends these bytes to the task, after those sent before.
    pub fn input(&self, bytes: Vec<u8>) {
        let _ = self.commands.send(Command::Input(bytes));
    }

    /// Resizes the task's terminal (the host's screen changed size).
    pub fn resize(&self, size: TtySize) {
        let _ = self.commands.send(Command::Resize(size));
    }
}

impl Drop for AttachWatch {
    fn drop(&mut self) {
        self.reader.abort();
        self.writer.abort();
    }
}

/// Writes what was typed, in order; keys typed faster than a write go in one write.
async fn write(
    agent: Agent,
    task_id: String,
    mut queue: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<AppEvent>,
) {
    let mut next = None;
    loop {
        let command = match next.take() {
            Some(command) => command,
            None => match queue.recv().await {
                Some(command) => command,
                None => return,
            },
        };
        match command {
            Command::Resize(size) => {
                // A terminal that keeps its size is still shown, cut or padded.
                if let Err(error) = agent.resize_task(&task_id, size).await {
                    tracing::debug!(%error, %task_id, "resizing an attached terminal");
                }
            }
            Command::Input(mut bytes) => {
                while let Ok(command) = queue.try_recv() {
                    match command {
                        Command::Input(more) => bytes.extend(more),
                        resize @ Command::Resize(_) => {
                            next = Some(resize);
                            break;
                        }
                    }
                }
                match agent
                    .write_task_input(&task_id, TaskInput::Bytes(bytes))
                    .await
                {
                    Ok(()) => {}
                    // A task that is busy, not reading its input, may read the next keys.
                    Err(AttachError::Context(ContextError::Task { reason, .. })) => {
                        let _ = events.send(AppEvent::Note(format!(
                            "{task_id} did not take what was typed ({reason})"
                        )));
                    }
                    Err(error) => {
                        let _ = events.send(AppEvent::Gone {
                            task_id: task_id.clone(),
                            reason: reason(&error),
                        });
                        return;
                    }
                }
            }
        }
    }
}

/// Reads the screen, waits for the task to write, reads again, until it ends.
async fn follow(agent: Agent, task_id: String, events: mpsc::UnboundedSender<AppEvent>) {
    let gone = |reason: String| {
        let _ = events.send(AppEvent::Gone {
            task_id: task_id.clone(),
            reason,
        });
    };
    // Where the log ends before the screen is first read: whatever the task writes
    // after this wakes the wait below, so no change is missed between the two.
    let mut followed = match agent.follow_task_output(&task_id, u64::MAX, 1).await {
        Ok(chunk) => Some(chunk),
        Err(AttachError::Context(ContextError::Unsupported { .. })) => None,
        Err(error) => return gone(reason(&error)),
    };
    let mut shown = None;
    loop {
        let read_at = tokio::time::Instant::now();
        match agent.read_task_screen(&task_id).await {
            // An unchanged screen (a quiet refresh, output that drew nothing new) asks
            // for no frame.
            Ok(screen) if shown.as_ref() == Some(&screen) => {}
            Ok(screen) => {
                shown = Some(screen.clone());
                let _ = events.send(AppEvent::Screen {
                    task_id: task_id.clone(),
                    screen,
                });
            }
            Err(error) => return gone(reason(&error)),
        }
        match &followed {
            // Its last screen has been read.
            Some(chunk) if chunk.ended => return gone("ended".to_owned()),
            Some(chunk) => {
                let grown = agent.follow_task_output(&task_id, chunk.next_offset(), FOLLOW_CHUNK);
                match tokio::time::timeout(QUIET_REFRESH, grown).await {
                    Ok(Ok(chunk)) => followed = Some(chunk),
                    Ok(Err(error)) => return gone(reason(&error)),
                    Err(_) => {}
                }
            }
            None => tokio::time::sleep(UNFOLLOWED_REFRESH).await,
        }
        // A burst of output is one reading a frame; a key after a quiet spell is read
        // at once.
        tokio::time::sleep_until(read_at + FRAME).await;
    }
}

/// Why an attached task can no longer be typed to, for its title.
fn reason(error: &AttachError) -> String {
    match error {
        AttachError::Context(ContextError::TaskEnded { .. }) => "ended".to_owned(),
        AttachError::Unknown(_) => "gone".to_owned(),
        AttachError::Context(ContextError::NotATerminal { .. }) => "no terminal".to_owned(),
        error => zidane::agent::error_chain(error),
    }
}

#[cfg(test)]
#[path = "attach_watch_tests.rs"]
mod tests;
