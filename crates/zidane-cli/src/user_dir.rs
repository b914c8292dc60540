//! The user dir every command works in: sessions, task logs, detached tasks.

use std::path::PathBuf;

use crate::error::CliError;

/// The variable that chooses the user dir (sessions and task logs).
pub const USER_DIR_VAR: &str = "ZIDANE_USER_DIR";

/// The user dir: `$ZIDANE_USER_DIR`, else `<platform data dir>/zidane`.
pub fn user_dir() -> Result<PathBuf, CliError> {
    match std::env::var_os(USER_DIR_VAR).filter(|dir| !dir.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => dirs::data_dir()
            .map(|dir| dir.join("zidane"))
            .ok_or(CliError::NoUserDir),
    }
}
