//! Repaints a stored session as a host would: the same events the live run painted,
//! with each `<task-notification>` as a `⌁` banner — never the raw XML.
//!
//! ```text
//! cargo run --example replay [SESSION]
//! ```
//!
//! `SESSION` is a session directory (`<user_dir>/sessions/<id>/`) or its `session.json`.
//! Without it, the example replays the newest session the `quickstart` example saved
//! (under `$ZIDANE_USER_DIR`, else `<temp dir>/zidane-quickstart`), found with
//! `SessionStore::list`. Piped into a reader that stops early (`| head -1`), it stops
//! quietly.

// An example prints its transcript: that is its whole purpose.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::error::Error;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use zidane::agent::SESSION_FILE;
use zidane::prelude::*;

/// The env var that chooses the quickstart's user dir.
const USER_DIR_VAR: &str = "ZIDANE_USER_DIR";

fn main() -> ExitCode {
    match replay() {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`| head -1`): nothing is wrong, and nobody is listening.
        Err(error)
            if error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("replay: {error}");
            ExitCode::FAILURE
        }
    }
}

fn replay() -> Result<(), Box<dyn Error>> {
    let file = match std::env::args_os().nth(1).map(PathBuf::from) {
        Some(path) if path.is_dir() => path.join(SESSION_FILE),
        Some(path) => path,
        None => newest_quickstart_session()?,
    };
    let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let session: Session = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a session: {e}", file.display()))?;

    let mut out = std::io::stdout().lock();
    writeln!(out, "replaying session {} ({})", session.id, file.display())?;
    let painter = Painter::for_stdout();
    let events = session.events();
    for event in &events {
        out.write_all(painter.event(event).as_bytes())?;
    }
    let notifications = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::TaskNotification(_)))
        .count();
    writeln!(
        out,
        "\n{} turns, {} events, {notifications} task notification(s).",
        session.turns.len(),
        events.len()
    )?;
    out.flush()?;
    Ok(())
}

/// The most recently saved session under the quickstart's user dir.
fn newest_quickstart_session() -> Result<PathBuf, Box<dyn Error>> {
    let user_dir = std::env::var_os(USER_DIR_VAR).map_or_else(
        || std::env::temp_dir().join("zidane-quickstart"),
        PathBuf::from,
    );
    let store = SessionStore::new(&user_dir);
    let listing = store.list()?;
    match listing.sessions.first() {
        Some(newest) => Ok(store.session_file(&newest.id)?),
        None => Err(format!(
            "no session under {}: run `cargo run --example quickstart` first, \
             or give a session: cargo run --example replay -- <user_dir>/sessions/<id>",
            user_dir.join(zidane::agent::SESSIONS_DIR).display()
        )
        .into()),
    }
}
