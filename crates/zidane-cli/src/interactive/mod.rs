//! The interactive session: a transcript, an input line with history, a footer, and the
//! `ctrl+k` picker, on ratatui and crossterm; from the picker, attaching to a task's
//! terminal (its screen shown, keys sent to it, `ctrl+]` back).
//!
//! The loop draws only when something happened — a key, a resize, an agent event
//! (stream, hook, the end of a run, an attached terminal's new screen) — and at most
//! once a frame, however many happened. Nothing ticks while the session is idle; only
//! an open picker ticks, once a second, to advance its runtimes, and an attached
//! terminal is read again when its task writes.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use crossterm::event::EventStream;
use tokio::sync::{broadcast, mpsc};
use zidane::agent::{HookEvent, ModelDelta};

use crate::error::CliError;
use crate::host::{Host, Stop};

mod approval;
mod attach_watch;
mod event_loop;
mod input;
mod keys;
mod state;
mod task_watch;
// `zidane top` enters and leaves the terminal, and fits text to it, the same way.
pub(crate) mod terminal;
mod view;
pub(crate) mod wrap;

pub use approval::TerminalApprover;
pub use state::{App, AppEvent};

/// Whether stdin and stdout are a terminal, as the session needs.
pub fn has_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Runs the session until the user quits (or a signal ends it), then destroys the agent.
pub async fn run(host: Host) -> Result<ExitCode, CliError> {
    let agent = host.agent.clone();
    let (events, mut inbox) = mpsc::unbounded_channel();
    let forward_reports = forward(&host, &events);
    host.approver.connect(events.clone());

    let mut app = App::new(host.model_name.clone(), agent.id());
    if host.resumed {
        for event in agent.session().events() {
            app.apply(AppEvent::Stream(event));
        }
        app.note(&format!("resumed session {}", agent.id()));
    } else {
        app.note("type a prompt and press enter; ctrl+k lists what runs; ctrl+d quits");
    }

    let tasks = task_watch::TaskWatch::spawn(agent.clone(), events.clone());
    let mut screen = terminal::Screen::enter()?;
    // Whatever ends the loop — a quit, a signal, a terminal error — the agent is
    // destroyed and the terminal restored.
    let ended = match Stop::new() {
        Ok(mut stop) => {
            let inputs = event_loop::Inputs {
                keys: EventStream::new(),
                inbox: &mut inbox,
                events: &events,
                tasks: &tasks,
            };
            event_loop::event_loop(&host, &mut app, &mut screen, inputs, stop.recv()).await
        }
        Err(error) => Err(error.into()),
    };
    app.picker = None;
    app.attached = None;
    app.note("quitting: destroying the session's tasks…");
    event_loop::show_agent(&host, &mut app);
    let _ = screen.terminal.draw(|frame| {
        view::draw(frame, &app);
    });
    drop(tasks);
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

/// Sends the agent's events to the loop — the transcript, the streaming text, tool calls
/// that start or end — and the wake loop's reports, until the returned task is
/// aborted.
fn forward(host: &Host, events: &mpsc::UnboundedSender<AppEvent>) -> tokio::task::JoinHandle<()> {
    let agent = &host.agent;
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
    // Tasks that start or end reach the screen through the task watch's readings.
    agent.hooks().subscribe(move |event| {
        if matches!(event, HookEvent::ToolBefore(_) | HookEvent::ToolAfter(_)) {
            let _ = sender.send(AppEvent::Changed);
        }
    });
    let mut reports = host.wake.reports();
    let sender = events.clone();
    tokio::spawn(async move {
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
    })
}
