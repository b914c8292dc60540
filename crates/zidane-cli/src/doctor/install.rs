//! This zidane itself: its version and platform, whether hosts find it on `PATH`, the
//! process path its tasks start by, and its config file.

use zidane::process::{PROCESS_PATH_ENV, ProcessPath};

use super::finding::{Finding, Status};
use super::here::{Here, same_file};
use crate::env_config::{self, ConfigFile};
use crate::error::CliError;

/// This binary: its version, platform and path, and the `zidane` a host given the bare
/// name starts.
pub(crate) fn zidane(here: &Here) -> Finding {
    let exe = here
        .exe
        .as_ref()
        .map_or_else(|| "an unknown path".to_owned(), |exe| here.show(exe));
    let said = format!(
        "zidane {} ({} {}) at {exe}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    let Some(exe) = &here.exe else {
        return Finding::ok("zidane", said);
    };
    match here.which("zidane") {
        Some(found) if same_file(exe, &found) => {
            Finding::ok("zidane", format!("{said}, the `zidane` on PATH"))
        }
        Some(found) => Finding::new(
            "zidane",
            Status::Info,
            format!(
                "{said}; hosts given the bare name start another one, first on PATH: {}",
                here.show(&found)
            ),
        ),
        None => {
            let dir = exe
                .parent()
                .map_or_else(String::new, |dir| dir.display().to_string());
            Finding::new(
                "zidane",
                Status::Info,
                format!("{said}, not on PATH: a host entry must give its full path"),
            )
            .fix(format!(
                "export PATH=\"{dir}:$PATH\" (in your shell's profile), or give hosts the full path"
            ))
        }
    }
}

/// The process path tasks start by, and whether `ZIDANE_PROCESS_PATH` chose it.
pub(crate) fn process_path() -> Finding {
    let chosen = std::env::var_os(PROCESS_PATH_ENV).filter(|value| !value.is_empty());
    match ProcessPath::from_env() {
        Ok(path) => {
            let (name, how) = match path {
                ProcessPath::Fast if cfg!(target_os = "linux") => {
                    ("fast", "a vfork-style clone, output moved with splice")
                }
                ProcessPath::Fast => ("fast", "the portable mechanisms on this platform"),
                ProcessPath::Portable => ("portable", "std's spawn, output copied with read/write"),
            };
            let why = if chosen.is_some() {
                format!("{PROCESS_PATH_ENV}={name}")
            } else {
                "the default here".to_owned()
            };
            Finding::ok(
                "process-path",
                format!("process path: {name} ({how}; {why})"),
            )
        }
        Err(error) => Finding::new(
            "process-path",
            Status::Broken,
            format!("process path: {error}"),
        )
        .fix(format!(
            "unset {PROCESS_PATH_ENV}, or set it to `portable` or `fast`"
        )),
    }
}

/// The config file, read as every command reads it; its tables (the defaults where
/// it is missing or refused, which the finding then says).
pub(crate) fn config_file(here: &Here) -> (Finding, ConfigFile) {
    let Some(path) = env_config::config_path() else {
        let finding = Finding::new(
            "config-file",
            Status::Info,
            "config file: none (this platform has no config dir)",
        );
        return (finding, ConfigFile::default());
    };
    let shown = here.show(&path);
    match env_config::config_file() {
        Ok(config) if path.is_file() => (
            Finding::ok("config-file", format!("config file: {shown}")),
            config,
        ),
        Ok(config) => (
            Finding::ok(
                "config-file",
                format!("config file: {shown} (none: the defaults apply)"),
            ),
            config,
        ),
        Err(CliError::Config { reason, .. }) => (
            Finding::new(
                "config-file",
                Status::Broken,
                format!(
                    "config file: {shown}: {reason}; `zidane` and `zidane mcp` refuse to start"
                ),
            )
            .fix(format!(
                "edit {shown}: correct or remove what the message names"
            )),
            ConfigFile::default(),
        ),
        Err(error) => (
            Finding::new(
                "config-file",
                Status::Broken,
                format!("config file: {shown}: {error}"),
            ),
            ConfigFile::default(),
        ),
    }
}
