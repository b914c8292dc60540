//! `zidane replay <id>`: paints a stored session without running anything — the same
//! painter as a live session, each `<task-notification>` as a `⌁` banner. Plain text
//! when stdout is not a terminal.

use std::io::Write as _;
use std::process::ExitCode;

use zidane::agent::SessionStore;
use zidane::wire::Painter;

use crate::error::CliError;
use crate::host::stored_session;
use crate::user_dir::user_dir;

/// Paints the session `id`.
pub fn run(id: &str) -> Result<ExitCode, CliError> {
    let store = SessionStore::new(user_dir()?);
    let session = stored_session(&store, id)?;
    let painter = Painter::for_stdout();
    let mut out = std::io::stdout().lock();
    for event in &session.events() {
        out.write_all(painter.event(event).as_bytes())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
