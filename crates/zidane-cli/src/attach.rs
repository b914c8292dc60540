//! `zidane attach`: a person's terminal on a detached terminal task.
//!
//! The task's terminal belongs to its monitor; attaching draws what it shows now, sizes
//! it to the person's terminal, then passes keys in and output out until the person
//! detaches (ctrl+]) or the task ends. Detaching leaves the task running, as it was.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use crossterm::terminal;
use tokio::sync::mpsc;
use zidane::context::{Screen, TaskInput, TtySize};
use zidane::supervisor::{SupervisorClient, SupervisorError, TaskView};
use zidane::wire::exit_summary;

use crate::error::CliError;

/// The key that detaches: ctrl+] (as telnet and docker use), sent as byte 0x1d.
const DETACH_KEY: u8 = 0x1d;

/// How often the task's log is read for new output and the person's terminal for a
/// new size; the task's end is waited on in between, so it is seen at once.
const POLL_EVERY: Duration = Duration::from_millis(30);

/// `zidane attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The task: `bash_d7`, `d7`, `7`, or the start of one. It must run in a terminal
    /// (started with `tty: true`).
    id: String,
}

/// `zidane attach`: exits with the task's code when it ends, 0 when the person detaches.
pub fn attach(args: &AttachArgs) -> Result<ExitCode, CliError> {
    let client = crate::detached::client()?;
    crate::detached::block_on(async {
        let task = client.resolve(&args.id).await?;
        let id = task.record.id;
        if task.record.tty.is_none() {
            return Err(SupervisorError::Refused(format!(
                "{id} has no terminal (attach takes tasks started with `tty: true`); \
                 `zidane logs -f {id}` follows its output"
            ))
            .into());
        }
        if task.exit.is_some() {
            return Err(SupervisorError::Refused(format!(
                "{id} has ended; `zidane logs {id}` prints its output"
            ))
            .into());
        }
        let Some(log) = task.output_path.clone() else {
            return Err(SupervisorError::Refused(format!("{id} has no log yet")).into());
        };
        let mut err = std::io::stderr();
        writeln!(
            err,
            "zidane: attached to {id} ({}); ctrl+] detaches",
            task.record.command
        )?;
        let ended = session(&client, &task, &log).await?;
        match ended {
            Some(exit) => {
                writeln!(std::io::stdout(), "\r\n{}", exit_summary(&exit))?;
                Ok(ExitCode::from(u8::try_from(exit.exit_code).unwrap_or(255)))
            }
            None => {
                writeln!(err, "\r\nzidane: detached from {id}; it runs on")?;
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// Restores the person's terminal however the attach ends.
struct RawMode;

impl RawMode {
    fn enter() -> std::io::Result<Self> {
        terminal::enable_raw_mode()?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
    }
}

/// Passes keys and output until the person detaches (`None`) or the task ends (its end).
async fn session(
    client: &SupervisorClient,
    task: &TaskView,
    log: &std::path::Path,
) -> Result<Option<zidane::context::TaskExitInfo>, CliError> {
    let id = task.record.id;
    let mut file = std::fs::File::open(log)?;
    let mut offset = file.metadata()?.len();
    let mut size = terminal::size().ok();
    if let Some((cols, rows)) = size {
        client.resize(id, TtySize::new(rows, cols)).await?;
    }
    let _raw = RawMode::enter()?;
    let mut out = std::io::stdout().lock();
    // What the terminal shows now, then what it writes from here on.
    match client.screen(id).await {
        Ok(screen) => draw(&mut out, &screen)?,
        Err(SupervisorError::Refused(_)) => {}
        Err(error) => return Err(error.into()),
    }
    let mut keys = keys();
    loop {
        tokio::select! {
            key = keys.recv() => {
                let Some(bytes) = key else {
                    return Ok(None);
                };
                let (typed, detach) = match bytes.iter().position(|byte| *byte == DETACH_KEY) {
                    Some(at) => (bytes[..at].to_vec(), true),
                    None => (bytes, false),
                };
                if !typed.is_empty() {
                    client.input(id, TaskInput::Bytes(typed)).await?;
                }
                if detach {
                    return Ok(None);
                }
            }
            waited = client.wait(id, POLL_EVERY) => {
                offset = crate::task_log::copy_from(&mut file, offset, &mut out)?;
                if let Some(exit) = waited?.exit {
                    return Ok(Some(exit));
                }
                let now = terminal::size().ok();
                if now != size
                    && let Some((cols, rows)) = now
                {
                    size = now;
                    client.resize(id, TtySize::new(rows, cols)).await?;
                }
            }
        }
    }
}

/// Clears the person's terminal and draws `screen`, the cursor where the task's is.
fn draw(out: &mut impl std::io::Write, screen: &Screen) -> std::io::Result<()> {
    write!(out, "\x1b[2J\x1b[H{}", screen.lines.join("\r\n"))?;
    let (row, col) = screen.cursor;
    write!(out, "\x1b[{};{}H", u32::from(row) + 1, u32::from(col) + 1)?;
    out.flush()
}

/// The person's keys, as the terminal sends them, read on a thread of their own (a
/// blocking read of stdin cannot be cancelled; the process leaves without it).
fn keys() -> mpsc::UnboundedReceiver<Vec<u8>> {
    let (send, receive) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buffer = [0u8; 1024];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if send.send(buffer[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receive
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_screen_is_drawn_with_the_cursor_where_the_task_left_it() {
        let screen = Screen::new(
            TtySize::new(3, 20),
            vec!["$ make".to_owned(), "name? ".to_owned()],
            (1, 6),
        );
        let mut out = Vec::new();
        draw(&mut out, &screen).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\x1b[2J\x1b[H$ make\r\nname? \r\n\x1b[2;7H"
        );
    }
}
