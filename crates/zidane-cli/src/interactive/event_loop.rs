//! The session's loop: keys, agent events and signals in, at most one draw a frame out.
//!
//! It takes every event that is ready before it draws, so a burst — a paste typed key by
//! key, a stream of tokens, a task ending while the model answers — costs one draw, and
//! under a flood it still draws once a frame. What the frame shows of the agent is read
//! without waiting: the run state and the tool calls in flight live in the agent, and
//! the running tasks come from a [`TaskWatch`] that reads the context off the loop.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use crossterm::event::{Event, KeyEventKind};
use futures::{Stream, StreamExt as _};
use tokio::sync::mpsc;
use tokio::time::Instant;
use zidane::agent::PickerKind;

use super::attach_watch::AttachWatch;
use super::state::{Action, App, AppEvent};
use super::task_watch::TaskWatch;
use super::view::attached_terminal_size;
use crate::error::CliError;
use crate::host::Host;

/// The shortest time between two draws.
pub const FRAME: Duration = Duration::from_millis(16);

/// How often an open picker refreshes its runtimes.
const PICKER_TICK: Duration = Duration::from_secs(1);

/// Where the loop draws the [`App`]: the terminal, or a test's buffer.
pub trait Surface {
    /// Draws one frame.
    fn draw(&mut self, app: &App) -> std::io::Result<()>;

    /// Its size, as `(columns, rows)`.
    fn size(&self) -> std::io::Result<(u16, u16)>;
}

/// What the loop keeps beside the [`App`]: the open picker's tick, the attached task's
/// watch, the screen's size.
struct Beside {
    picker_tick: Option<tokio::time::Interval>,
    attach: Option<AttachWatch>,
    size: (u16, u16),
}

/// What the loop reads from.
pub struct Inputs<'a, K> {
    /// The terminal's events.
    pub keys: K,
    /// The agent's events, and the loop's own (notes of a kill, task readings).
    pub inbox: &'a mut mpsc::UnboundedReceiver<AppEvent>,
    /// Where spawned work sends its outcome back.
    pub events: &'a mpsc::UnboundedSender<AppEvent>,
    /// The running tasks' watch.
    pub tasks: &'a TaskWatch,
}

/// One thing that happened.
enum Input {
    Key(Option<std::io::Result<Event>>),
    Event(AppEvent),
    PickerTick,
    Stop,
    Frame,
}

/// Runs the screen until the user quits or `stop` completes (a signal).
pub async fn event_loop<K>(
    host: &Host,
    app: &mut App,
    surface: &mut impl Surface,
    mut inputs: Inputs<'_, K>,
    stop: impl Future<Output = ()>,
) -> Result<(), CliError>
where
    K: Stream<Item = std::io::Result<Event>> + Unpin,
{
    tokio::pin!(stop);
    let mut beside = Beside {
        picker_tick: None,
        attach: None,
        size: surface.size()?,
    };
    let mut dirty = true;
    let mut next_frame = Instant::now();
    loop {
        let first = tokio::select! {
            biased;
            () = &mut stop => Input::Stop,
            key = inputs.keys.next() => Input::Key(key),
            Some(event) = inputs.inbox.recv() => Input::Event(event),
            _ = tick(&mut beside.picker_tick), if app.picker.is_some() => Input::PickerTick,
            () = tokio::time::sleep_until(next_frame), if dirty => Input::Frame,
        };
        // Everything ready goes into this frame; a flood is cut at a frame's worth.
        let started = Instant::now();
        let mut input = Some(first);
        while let Some(next) = input.take() {
            let Some(changed) = handle(host, app, &inputs, &mut beside, next) else {
                return Ok(());
            };
            dirty |= changed;
            if started.elapsed() < FRAME {
                input = ready(&mut inputs).await;
            }
        }
        if app.picker.is_none() {
            beside.picker_tick = None;
        }
        if app.attached.is_none() {
            beside.attach = None;
        }
        if dirty && Instant::now() >= next_frame {
            show_agent(host, app);
            surface.draw(app)?;
            dirty = false;
            next_frame = Instant::now() + FRAME;
        }
    }
}

/// An input that is ready now, without waiting.
async fn ready<K>(inputs: &mut Inputs<'_, K>) -> Option<Input>
where
    K: Stream<Item = std::io::Result<Event>> + Unpin,
{
    // Polled with the loop's own waker: crossterm's stream keeps the first waker it is
    // given while it waits, so a throwaway one would lose the next key's wake-up.
    let key = std::future::poll_fn(|cx| {
        Poll::Ready(match inputs.keys.poll_next_unpin(cx) {
            Poll::Ready(key) => Some(key),
            Poll::Pending => None,
        })
    })
    .await;
    if let Some(key) = key {
        return Some(Input::Key(key));
    }
    inputs.inbox.try_recv().ok().map(Input::Event)
}

/// Applies one input; `None` when the session is to end, else whether the screen changed.
fn handle<K>(
    host: &Host,
    app: &mut App,
    inputs: &Inputs<'_, K>,
    beside: &mut Beside,
    input: Input,
) -> Option<bool> {
    let action = match input {
        Input::Key(Some(Ok(Event::Key(key)))) if key.kind != KeyEventKind::Release => {
            app.handle_key(key)
        }
        Input::Key(Some(Ok(Event::Paste(text)))) => app.paste(&text),
        Input::Key(Some(Ok(Event::Resize(columns, rows)))) => {
            beside.size = (columns, rows);
            if let Some(attach) = &beside.attach {
                attach.resize(attached_terminal_size(columns, rows));
            }
            None
        }
        Input::Key(Some(Ok(_))) => return Some(false),
        // The terminal went away: nothing more can be read.
        Input::Key(Some(Err(_)) | None) | Input::Stop => return None,
        Input::Event(event) => {
            if matches!(event, AppEvent::RunEnded(_)) {
                inputs.tasks.changed();
            }
            app.apply(event);
            None
        }
        Input::PickerTick => {
            inputs.tasks.changed();
            None
        }
        Input::Frame => return Some(false),
    };
    match action {
        None => {}
        Some(Action::Quit) => return None,
        Some(Action::Input(bytes)) => {
            // Nothing changes on screen until the task answers: drawing now would only
            // push its answer's frame back.
            if let Some(attach) = &beside.attach {
                attach.input(bytes);
            }
            return Some(false);
        }
        Some(action) => carry_out(host, app, inputs, beside, action),
    }
    Some(true)
}

/// Carries out what a key asked for; what takes time runs in a task of its own.
fn carry_out<K>(
    host: &Host,
    app: &mut App,
    inputs: &Inputs<'_, K>,
    beside: &mut Beside,
    action: Action,
) {
    let agent = &host.agent;
    match action {
        // Handled before: they need no frame, or end the loop.
        Action::Quit | Action::Input(_) => {}
        Action::Prompt(prompt) => {
            let wake = Arc::clone(&host.wake);
            // The outcome comes back through the loop's reports.
            tokio::spawn(async move { wake.prompt(prompt).await });
        }
        Action::Abort => {
            host.wake.abort();
            app.note("aborted; background tasks run on, and wake-ups wait for your next prompt");
        }
        Action::MoveToBackground => {
            if agent.move_calls_to_background() == 0 {
                app.note("no command is running in the foreground");
            }
        }
        Action::OpenPicker => {
            app.open_picker(app.rows(agent.in_flight_tools()));
            inputs.tasks.changed();
            let mut interval = tokio::time::interval(PICKER_TICK);
            interval.reset();
            beside.picker_tick = Some(interval);
        }
        Action::Attach(row) => {
            let (columns, rows) = beside.size;
            beside.attach = Some(AttachWatch::spawn(
                agent,
                &row.id,
                attached_terminal_size(columns, rows),
                inputs.events,
            ));
        }
        Action::Detach => beside.attach = None,
        Action::Approve(approve) => {
            if !host.approver.answer(approve) {
                app.note("too late: the request had already ended");
            }
        }
        Action::Cancel(row) => match row.kind {
            PickerKind::Tool => {
                let text = if agent.cancel_tool(&row.id) {
                    format!("cancelled tool call {} ({})", row.id, row.label)
                } else {
                    format!("tool call {} had already ended", row.id)
                };
                app.note(&text);
            }
            PickerKind::Task => {
                app.note(&format!("killing {} (its whole process group)…", row.id));
                let agent = agent.clone();
                let sender = inputs.events.clone();
                tokio::spawn(async move {
                    let text = match agent.kill_background_task(&row.id).await {
                        Ok(()) => format!("killed {}", row.id),
                        Err(error) => {
                            tracing::debug!(%error, "picker kill");
                            format!("{} had already ended", row.id)
                        }
                    };
                    let _ = sender.send(AppEvent::Note(text));
                });
            }
        },
    }
}

/// Reads what the footer and the picker show of the agent, none of it from the context:
/// the run state, the tool calls in flight, wake-ups paused.
pub fn show_agent(host: &Host, app: &mut App) {
    app.show_in_flight(host.agent.in_flight_tools());
    app.running = host.agent.is_running();
    app.suppressed = host.wake.is_suppressed();
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
#[path = "event_loop_tests.rs"]
mod tests;
