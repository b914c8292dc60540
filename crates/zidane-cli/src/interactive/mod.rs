//! The interactive session: a transcript, an input line with history, a footer, and the
//! `ctrl+k` picker, on ratatui and crossterm.
//!
//! The loop redraws only when something happened: a key, a resize, an agent event
//! (stream, hook, the end of a run). Nothing ticks while the session is idle; only an
//! open picker ticks, once a second, to advance its runtimes.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyEventKind};
use futures::StreamExt as _;
use tokio::sync::{broadcast, mpsc};
use zidane::agent::{HookEvent, ModelDelta, PickerKind};

use crate::error::CliError;
use crate::host::{Host, Stop};

mod input;
mod state;
mod terminal;
mod view;

pub use state::{Action, App, AppEvent};

/// How often an open picker refreshes its runtimes.
const PICKER_TICK: Duration = Duration::from_secs(1);

/// Whether stdin and stdout are a terminal, as the session needs.
pub fn has_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Runs the session until the user quits (or a signal ends it), then destroys the agent.
pub async fn run(host: Host) -> Result<ExitCode, CliError> {
    let agent = host.agent.clone();
    let (events, mut inbox) = mpsc::unbounded_channel();
    let sender = events.clone();
    agent.hooks().subscribe_stream(move |event| {
        let _ = sender.send(AppEvent::Stream(event.clone()));
    });
    let sender = events.clone();
    // Text as the model generates it; the whole turn replaces it when it ends.
    agent.hooks().subscribe_deltas(move |delta| {
        if let ModelDelta::Text(text) = delta {
            let _ = sender.send(AppEvent::Delta(text.clone()));
        }
    });
    let sender = events.clone();
    agent.hooks().subscribe(move |event| {
        if matches!(
            event,
            HookEvent::BackgroundStart(_)
                | HookEvent::BackgroundExit(_)
                | HookEvent::BackgroundReassign(_)
                | HookEvent::ToolBefore(_)
                | HookEvent::ToolAfter(_)
        ) {
            let _ = sender.send(AppEvent::Changed);
        }
    });
    let mut reports = host.wake.reports();
    let sender = events.clone();
    let forward_reports = tokio::spawn(async move {
        loop {
            match reports.recv().await {
                Ok(report) => {
                    if sender.send(AppEvent::RunEnded(report)).is_err() {
                        break;
                    }
                }
                // Missed reports only cost their notes; the footer reads the agent.
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });

    let mut app = App::new(host.model_name.clone(), agent.id());
    if host.resumed {
        for event in agent.session().events() {
            app.apply(AppEvent::Stream(event));
        }
        app.note(&format!("resumed session {}", agent.id()));
    } else {
        app.note("type a prompt and press enter; ctrl+k lists what runs; ctrl+d quits");
    }

    let mut screen = terminal::Screen::enter()?;
    // Whatever ends the loop — a quit, a signal, a terminal error — the agent is
    // destroyed and the terminal restored.
    let ended = event_loop(&host, &mut app, &mut screen, &mut inbox, &events).await;
    app.picker = None;
    app.note("quitting: destroying the session's tasks…");
    refresh(&host, &mut app).await;
    let _ = screen.terminal.draw(|frame| {
        view::draw(frame, &app);
    });
    forward_reports.abort();
    let id = agent.id();
    let has_turns = !agent.session().turns.is_empty();
    let report = host.shut_down().await;
    drop(screen);
    let mut err = std::io::stderr().lock();
    match report {
        Ok(report) if report.survivors.is_empty() => {}
        Ok(report) => {
            let _ = writeln!(err, "zidane: not confirmed dead: {:?}", report.survivors);
        }
        Err(error) => {
            let _ = writeln!(
                err,
                "zidane: destroy: {}",
                zidane::agent::error_chain(&error)
            );
        }
    }
    if has_turns {
        let _ = writeln!(
            err,
            "session {id} saved; resume it with: zidane --resume {id}"
        );
    }
    ended.map(|()| ExitCode::SUCCESS)
}

/// Runs the screen until the user quits or a signal arrives.
async fn event_loop(
    host: &Host,
    app: &mut App,
    screen: &mut terminal::Screen,
    inbox: &mut mpsc::UnboundedReceiver<AppEvent>,
    events: &mpsc::UnboundedSender<AppEvent>,
) -> Result<(), CliError> {
    let agent = &host.agent;
    let mut keys = EventStream::new();
    let mut stop = Stop::new()?;
    let mut picker_tick: Option<tokio::time::Interval> = None;
    let mut dirty = true;
    let mut quit = false;
    while !quit {
        if dirty {
            refresh(host, app).await;
            let mut links = Vec::new();
            screen
                .terminal
                .draw(|frame| links = view::draw(frame, app))?;
            screen.paint_links(&links)?;
            dirty = false;
        }
        let action = tokio::select! {
            key = keys.next() => match key {
                Some(Ok(Event::Key(key))) if key.kind != KeyEventKind::Release => {
                    dirty = true;
                    app.handle_key(key)
                }
                Some(Ok(Event::Paste(text))) => {
                    app.paste(&text);
                    dirty = true;
                    None
                }
                Some(Ok(Event::Resize(..))) => { dirty = true; None }
                Some(Ok(_)) => None,
                // The terminal went away: nothing more can be read.
                Some(Err(_)) | None => Some(Action::Quit),
            },
            Some(event) = inbox.recv() => {
                app.apply(event);
                dirty = true;
                None
            }
            _ = tick(&mut picker_tick), if app.picker.is_some() => {
                dirty = true;
                None
            }
            () = stop.recv() => Some(Action::Quit),
        };
        if app.picker.is_none() {
            picker_tick = None;
        }
        match action {
            None => {}
            Some(Action::Quit) => quit = true,
            Some(Action::Prompt(prompt)) => {
                let wake = Arc::clone(&host.wake);
                // The outcome comes back through the loop's reports.
                tokio::spawn(async move { wake.prompt(prompt).await });
            }
            Some(Action::Abort) => {
                host.wake.abort();
                app.note(
                    "aborted; background tasks run on, and wake-ups wait for your next prompt",
                );
            }
            Some(Action::OpenPicker) => {
                app.open_picker(agent.picker_rows().await.unwrap_or_default());
                let mut interval = tokio::time::interval(PICKER_TICK);
                interval.reset();
                picker_tick = Some(interval);
            }
            Some(Action::Cancel(row)) => match row.kind {
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
                    let sender = events.clone();
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

    Ok(())
}

/// Reads what the footer and the picker show from the agent.
async fn refresh(host: &Host, app: &mut App) {
    let agent = &host.agent;
    let rows = agent.picker_rows().await.unwrap_or_default();
    app.in_flight = rows.len();
    app.running = agent.is_running();
    app.suppressed = host.wake.is_suppressed();
    if app.picker.is_some() {
        app.apply(AppEvent::PickerRows(rows));
    }
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}
