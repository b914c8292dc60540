//! A held task's log moved to the name of its id, never over a file that is there (a
//! log is never written over one), its open handle writing on: one move that does not
//! replace. A new link and the old name removed, as `log_move.rs` does, would leave the
//! old name until the log is closed, since Windows removes an open file's name only
//! then.

use std::io;
use std::path::Path;

/// Moves the log at `from` to `to`; `AlreadyExists` when `to` is taken.
pub(crate) fn move_log(from: &Path, to: &Path) -> io::Result<()> {
    crate::sys::windows::move_file_no_replace(from, to)
}
