//! Repaints a stored session as a host would: the same events the live run painted,
//! with each `<task-notification>` as a `⌁` banner — never the raw XML.
//!
//! ```text
//! cargo run --example replay [SESSION]
//! ```
//!
//! `SESSION` is a session directory (`<user_dir>/sessions/<id>/`) or its `session.json`.
//! Without it, the example replays the newest session the `quickstart` example saved
//! (under `$ZIDANE_USER_DIR`, else `<temp dir>/zidane-quickstart`).

// An example prints its transcript: that is its whole purpose.
#![allow(clippy::print_stdout)]

#[path = "common/paint.rs"]
mod paint;

use std::error::Error;
use std::path::{Path, PathBuf};

use zidane::agent::{SESSION_FILE, SESSIONS_DIR};
use zidane::prelude::*;

use paint::Painter;

/// The env var that chooses the quickstart's user dir.
const USER_DIR_VAR: &str = "ZIDANE_USER_DIR";

fn main() -> Result<(), Box<dyn Error>> {
    let file = match std::env::args_os().nth(1).map(PathBuf::from) {
        Some(path) if path.is_dir() => path.join(SESSION_FILE),
        Some(path) => path,
        None => newest_quickstart_session()?,
    };
    let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let session: Session = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a session: {e}", file.display()))?;

    println!("replaying session {} ({})", session.id, file.display());
    let painter = Painter::stdout();
    let events = session.events();
    for event in &events {
        painter.event(event);
    }
    let notifications = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::TaskNotification(_)))
        .count();
    println!(
        "\n{} turns, {} events, {notifications} task notification(s).",
        session.turns.len(),
        events.len()
    );
    Ok(())
}

/// The most recently saved session under the quickstart's user dir.
fn newest_quickstart_session() -> Result<PathBuf, Box<dyn Error>> {
    let user_dir = std::env::var_os(USER_DIR_VAR).map_or_else(
        || std::env::temp_dir().join("zidane-quickstart"),
        PathBuf::from,
    );
    let sessions = user_dir.join(SESSIONS_DIR);
    let newest = std::fs::read_dir(&sessions)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path().join(SESSION_FILE))
        .filter_map(|file| Some((modified(&file)?, file)))
        .max();
    match newest {
        Some((_, file)) => Ok(file),
        None => Err(format!(
            "no session under {}: run `cargo run --example quickstart` first, \
             or give a session: cargo run --example replay -- <user_dir>/sessions/<id>",
            sessions.display()
        )
        .into()),
    }
}

fn modified(file: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(file).ok()?.modified().ok()
}
