//! `zidane sessions`: the stored sessions, newest first, one line each — plain text
//! when stdout is not a terminal.

use std::io::Write as _;
use std::process::ExitCode;

use zidane::agent::SessionStore;
use zidane::wire::Painter;

use crate::error::CliError;
use crate::user_dir::user_dir;

/// Characters of the first prompt shown.
const PROMPT_PREVIEW_CHARS: usize = 60;

/// Lists the sessions under the user dir.
pub fn run() -> Result<ExitCode, CliError> {
    let store = SessionStore::new(user_dir()?);
    let listing = store.list()?;
    let painter = Painter::for_stdout();
    let mut out = std::io::stdout().lock();
    if listing.sessions.is_empty() {
        out.write_all(
            painter
                .note(&format!("no sessions under {}", store.user_dir().display()))
                .as_bytes(),
        )?;
    }
    for session in &listing.sessions {
        let prompt = session
            .first_prompt
            .as_deref()
            .map_or_else(|| "(no prompt)".to_owned(), preview);
        writeln!(
            out,
            "{}  {}  {:>5} turns  {prompt}",
            session.id,
            session.updated_at.format("%Y-%m-%d %H:%M:%S"),
            session.turns
        )?;
    }
    for broken in &listing.unreadable {
        out.write_all(
            painter
                .note(&format!(
                    "unreadable: {}: {}",
                    broken.dir.display(),
                    broken.error
                ))
                .as_bytes(),
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The first line of a prompt, cut to [`PROMPT_PREVIEW_CHARS`].
fn preview(prompt: &str) -> String {
    let line = prompt.lines().next().unwrap_or_default();
    if line.chars().count() > PROMPT_PREVIEW_CHARS {
        let cut: String = line.chars().take(PROMPT_PREVIEW_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        line.to_owned()
    }
}
