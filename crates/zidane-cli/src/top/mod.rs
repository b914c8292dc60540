//! `zidane top`: a live view of every task zidane runs for this user on this machine —
//! what `zidane ps` lists, read the same way ([`crate::listing`]) once a second: the
//! detached tasks and the running hosts' own, with their CPU (and its history) and
//! memory, the selected task's log followed below. From it a person stops a task (as
//! `zidane kill` does, after a `y`), attaches to a detached terminal task (`zidane
//! attach` runs, then the view comes back), pages a log in `$PAGER`, filters by
//! workspace or text. Reading starts no supervisor unless tasks are kept, as with `ps`
//! ([`crate::detached::client`]).
//!
//! `zidane top --once` prints one frame of the same view and exits, for scripts and
//! tests: the same widgets, drawn into a buffer ([`view::render`]).
//!
//! The loop draws only when something changed — a key, a reading, new log lines, a
//! stop's answer — and takes every key already typed before it draws.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use chrono::Utc;
use clap::Args;
use crossterm::event::{Event, EventStream, KeyEventKind};
use futures::{FutureExt as _, StreamExt as _};
use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;
use zidane::supervisor::SupervisorClient;
use zidane::wire::{Painter, Tone, format_duration};

use crate::detached::Stopped;
use crate::error::CliError;
use crate::host::Stop;
use crate::interactive::terminal::{self, Screen};

#[cfg(test)]
mod fixtures;
mod follow;
mod keys;
mod state;
mod view;

use follow::Follow;
use keys::Action;
use state::{LogLines, Top};

/// How often the tasks are read again.
const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// How often the selected task's log is read for what it gained.
const FOLLOW_EVERY: Duration = Duration::from_millis(250);

/// Between the two readings `--once` takes, so that its CPU column has a value.
const ONCE_SAMPLE: Duration = Duration::from_millis(500);

/// The frame `--once` prints where `COLUMNS` and `LINES` do not say.
const ONCE_COLUMNS: u16 = 80;
const ONCE_LINES: u16 = 24;

/// Stops asked for whose answer the view has not taken yet.
const STOPS_IN_FLIGHT: usize = 8;

/// The pager where `PAGER` names none.
const DEFAULT_PAGER: &str = "less";

/// `zidane top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// Print one frame of the view and exit (as wide as $COLUMNS, as tall as $LINES,
    /// else 80×24; coloured only on a terminal).
    #[arg(long)]
    once: bool,
    /// Also the ended tasks whose end was told already.
    #[arg(long)]
    all: bool,
}

/// Runs `zidane top`.
pub fn run(args: &TopArgs) -> Result<ExitCode, CliError> {
    let client = crate::detached::client()?;
    let here = std::env::current_dir().map_err(CliError::WorkingDir)?;
    let mut top = Top::new(here, args.all, Utc::now());
    if args.once {
        return once(&client, &mut top);
    }
    if !crate::interactive::has_terminal() {
        return Err(CliError::TopNotATerminal);
    }
    crate::detached::block_on(live(&client, &mut top)).map(|()| ExitCode::SUCCESS)
}

/// `--once`: two readings, the selected (first) task's log, one frame on stdout.
fn once(client: &SupervisorClient, top: &mut Top) -> Result<ExitCode, CliError> {
    crate::detached::block_on(async {
        read(client, top).await;
        if top.tasks.iter().any(state::Task::running) {
            tokio::time::sleep(ONCE_SAMPLE).await;
            read(client, top).await;
        }
        Ok(())
    })?;
    follow_selected(&mut None, top);
    let size = |name: &str, default: u16| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.trim().parse::<u16>().ok())
            .filter(|value| *value > 0)
            .unwrap_or(default)
    };
    let buffer = view::render(
        top,
        size("COLUMNS", ONCE_COLUMNS),
        size("LINES", ONCE_LINES),
    )?;
    let text = view::frame_text(&buffer, Painter::for_stdout().colour());
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the tasks again into `top`; a failure becomes its note and the last reading
/// stays.
async fn read(client: &SupervisorClient, top: &mut Top) {
    match crate::listing::local_rows(client, |_| true).await {
        Ok(rows) => top.update(rows, Instant::now(), Utc::now()),
        Err(error) => top.note = Some((format!("cannot read the tasks: {error}"), Tone::Error)),
    }
}

/// Keeps `follow` on the selected task's log and its last lines in `top`; whether they
/// changed.
fn follow_selected(follow: &mut Option<Follow>, top: &mut Top) -> bool {
    let Some(task) = top.selected_task() else {
        *follow = None;
        return std::mem::take(&mut top.log) != LogLines::default();
    };
    let id = task.row.id.clone();
    let Some(path) = task.row.output_path.clone() else {
        *follow = None;
        return missing(top, id, "no log yet".to_owned());
    };
    let read = match follow {
        Some(followed) if followed.id == id && followed.path == path => followed.read_more(),
        _ => match Follow::open(&id, &path) {
            Ok(opened) => {
                *follow = Some(opened);
                Ok(true)
            }
            Err(error) => Err(error),
        },
    };
    match read {
        Ok(false) if top.log.id == id && top.log.missing.is_none() => false,
        Ok(_) => {
            let lines = follow.as_ref().map(Follow::lines).unwrap_or_default();
            top.log = LogLines {
                id,
                lines,
                missing: None,
            };
            true
        }
        Err(error) => {
            *follow = None;
            missing(top, id, format!("cannot read {}: {error}", path.display()))
        }
    }
}

/// Says in `top` why `id`'s log shows nothing; whether that changed.
fn missing(top: &mut Top, id: String, why: String) -> bool {
    let log = LogLines {
        id,
        lines: Vec::new(),
        missing: Some(why),
    };
    let changed = top.log != log;
    top.log = log;
    changed
}

/// The live view, until the person quits or a signal ends it.
async fn live(client: &SupervisorClient, top: &mut Top) -> Result<(), CliError> {
    // The first frame shows the tasks, not an empty list.
    read(client, top).await;
    let mut follow = None;
    follow_selected(&mut follow, top);
    let mut screen = Screen::enter()?;
    let mut stop = Stop::new()?;
    let (stopped, mut answers) = mpsc::channel(STOPS_IN_FLIGHT);
    let mut keys = EventStream::new();
    let start = tokio::time::Instant::now();
    let mut refresh = tokio::time::interval_at(start + REFRESH_EVERY, REFRESH_EVERY);
    refresh.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut follow_tick = tokio::time::interval_at(start + FOLLOW_EVERY, FOLLOW_EVERY);
    follow_tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut dirty = true;
    loop {
        if dirty {
            screen.terminal.draw(|frame| view::draw(frame, top))?;
            dirty = false;
        }
        tokio::select! {
            _ = refresh.tick() => {
                read(client, top).await;
                follow_selected(&mut follow, top);
                dirty = true;
            }
            _ = follow_tick.tick() => dirty |= follow_selected(&mut follow, top),
            Some(note) = answers.recv() => {
                top.note = Some(note);
                // Show the end it asked for now, not at the next reading.
                refresh.reset_immediately();
                dirty = true;
            }
            () = stop.recv() => return Ok(()),
            event = keys.next() => {
                let Some(event) = event else { return Ok(()) };
                let mut events = vec![event?];
                // Every event already there is taken before the next draw.
                while let Some(Some(event)) = keys.next().now_or_never() {
                    events.push(event?);
                }
                for event in events {
                    let action = match event {
                        Event::Key(key) if key.kind != KeyEventKind::Release => keys::on_key(top, key),
                        Event::Paste(text) => {
                            keys::on_paste(top, &text);
                            None
                        }
                        _ => None,
                    };
                    match action {
                        None => {}
                        Some(Action::Quit) => return Ok(()),
                        Some(Action::Stop(id)) => stop_task(client, id, stopped.clone()),
                        Some(Action::Attach(id)) => {
                            let mut attach = std::process::Command::new(std::env::current_exe()?);
                            attach.arg("attach").arg(&id);
                            let ran;
                            (keys, ran) = lend(&mut screen, keys, &mut stop, attach).await?;
                            top.note = Some(match ran {
                                Ok(_) => (format!("back from {id}"), Tone::Dim),
                                Err(error) => (format!("cannot run zidane attach: {error}"), Tone::Error),
                            });
                            refresh.reset_immediately();
                        }
                        Some(Action::Page(path)) => {
                            let ran;
                            (keys, ran) = lend(&mut screen, keys, &mut stop, pager(&path)).await?;
                            if let Err(error) = ran {
                                top.note = Some((format!("cannot run the pager: {error}"), Tone::Error));
                            }
                        }
                    }
                }
                follow_selected(&mut follow, top);
                dirty = true;
            }
        }
    }
}

/// Stops task `id` the way `zidane kill` does, off the loop; its answer comes back on
/// `answers` as a note.
fn stop_task(client: &SupervisorClient, id: String, answers: mpsc::Sender<(String, Tone)>) {
    let client = client.clone();
    tokio::spawn(async move {
        let stopped = match crate::detached::resolve(&client, &id).await {
            Ok(target) => crate::detached::stop(&client, target).await,
            Err(error) => Err(error),
        };
        let note = match stopped {
            Ok(Stopped::Detached(task)) => match &task.exit {
                // The command is in the table: the note says how it ended.
                Some(exit) => {
                    let how = match exit.signal {
                        Some(signal) => format!("killed ({signal})"),
                        None => crate::listing::state(&task),
                    };
                    let after = format_duration(exit.duration);
                    (format!("{id} {how} after {after}"), Tone::Dim)
                }
                None => (format!("{id}: asked to end, still running"), Tone::Warn),
            },
            Ok(stopped @ Stopped::Host(_)) => (stopped.said(), Tone::Dim),
            Err(error) => (format!("cannot stop {id}: {error}"), Tone::Error),
        };
        let _ = answers.send(note).await;
    });
}

/// `$PAGER` (its words: a program and its arguments; default `less`) on `log`.
fn pager(log: &Path) -> std::process::Command {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|pager| !pager.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_PAGER.to_owned());
    let mut words = pager.split_whitespace();
    let mut command = std::process::Command::new(words.next().unwrap_or(DEFAULT_PAGER));
    command.args(words).arg(log);
    command
}

/// What [`lend`] gives back: the keys read anew, and how the program ran (an error when
/// it could not start).
type Lent = (EventStream, std::io::Result<std::process::ExitStatus>);

/// Lends the terminal to `command` until it ends, then takes it back: nothing of this
/// process reads the keys meanwhile.
async fn lend(
    screen: &mut Screen,
    keys: EventStream,
    stop: &mut Stop,
    mut command: std::process::Command,
) -> Result<Lent, CliError> {
    // Dropped first: its reader thread holds crossterm's reader, waiting for a key,
    // until it is told to stop; a new stream before would wait for it, and that key.
    drop(keys);
    terminal::restore();
    let ran = tokio::task::spawn_blocking(move || command.status())
        .await
        .map_err(std::io::Error::other)?;
    screen.resume()?;
    // A ctrl+c typed to the program reached this process too: it was not a quit.
    while stop.recv().now_or_never().is_some() {}
    Ok((EventStream::new(), ran))
}
