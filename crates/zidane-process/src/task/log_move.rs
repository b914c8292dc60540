//! A held task's log moved to the name of its id, never over a file that is there (a
//! log is never written over one), every open descriptor of it writing on: a new link,
//! then the old name removed. `log_move_windows.rs` is its twin.

use std::io;
use std::path::Path;

/// Moves the log at `from` to `to`; `AlreadyExists` when `to` is taken.
pub(crate) fn move_log(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::hard_link(from, to)?;
    if let Err(error) = std::fs::remove_file(from) {
        tracing::warn!(path = %from.display(), %error, "a held task's log kept its old name beside its new one");
    }
    Ok(())
}
