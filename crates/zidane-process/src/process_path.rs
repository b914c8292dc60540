//! [`ProcessPath`]: which mechanisms a context starts commands and moves output with,
//! and [`PROCESS_PATH_ENV`], the variable that picks it.

/// How a context starts commands and moves their output: the same behaviour either
/// way, by different mechanisms (`docs/PROCESS.md` has the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessPath {
    /// Linux's own mechanisms: a `vfork`-style `clone` that sheds every descriptor but
    /// stdio, and `splice(2)` from the pipe into the log. Elsewhere the same as
    /// [`Portable`](Self::Portable).
    Fast,
    /// What every Unix has: `std::process::Command` with `process_group(0)`, a plain
    /// read/write copy of the pipe into the log, the exit through `waitpid`.
    Portable,
}

/// The environment variable that picks the [`ProcessPath`] of a context whose builder
/// names none: `portable` or `fast`.
pub const PROCESS_PATH_ENV: &str = "ZIDANE_PROCESS_PATH";

/// What [`PROCESS_PATH_ENV`] accepts, as an error message says it.
const PROCESS_PATH_VALUES: &str =
    "`portable` or `fast` (any case), or unset for the platform's default";

/// An environment variable of zidane's holds a value it does not accept: a
/// configuration error, which a binary reports and exits on rather than guess.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value:?} is not a valid value: {var} accepts {accepted}")]
pub struct EnvValueError {
    /// The variable.
    pub var: &'static str,
    /// What it held.
    pub value: String,
    /// What it accepts.
    pub accepted: &'static str,
}

impl ProcessPath {
    /// This platform's default: [`Fast`](Self::Fast) on Linux, else
    /// [`Portable`](Self::Portable).
    pub const fn platform_default() -> Self {
        if cfg!(target_os = "linux") {
            Self::Fast
        } else {
            Self::Portable
        }
    }

    /// What [`PROCESS_PATH_ENV`] asks for (`portable` or `fast`, any case), else (unset
    /// or empty) the [`platform_default`](Self::platform_default). Any other value is
    /// an error naming the variable and what it accepts.
    pub fn from_env() -> Result<Self, EnvValueError> {
        Self::from_var(std::env::var_os(PROCESS_PATH_ENV))
    }

    /// [`from_env`](Self::from_env) of the variable's value.
    fn from_var(value: Option<std::ffi::OsString>) -> Result<Self, EnvValueError> {
        let value = match value {
            Some(value) if !value.is_empty() => value,
            _ => return Ok(Self::platform_default()),
        };
        value
            .to_str()
            .and_then(Self::parse)
            .ok_or_else(|| EnvValueError {
                var: PROCESS_PATH_ENV,
                value: value.to_string_lossy().into_owned(),
                accepted: PROCESS_PATH_VALUES,
            })
    }

    /// `portable` or `fast` (any case).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "portable" => Some(Self::Portable),
            "fast" => Some(Self::Fast),
            _ => None,
        }
    }

    /// Whether Linux's fast mechanisms are in use: [`Fast`](Self::Fast), on Linux.
    pub(crate) fn is_fast(self) -> bool {
        cfg!(target_os = "linux") && self == Self::Fast
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_path_variable_refuses_what_it_does_not_accept() {
        let from = |value: Option<&str>| ProcessPath::from_var(value.map(Into::into));
        assert_eq!(from(None), Ok(ProcessPath::platform_default()));
        assert_eq!(from(Some("")), Ok(ProcessPath::platform_default()));
        assert_eq!(from(Some(" Portable ")), Ok(ProcessPath::Portable));
        assert_eq!(from(Some("fast")), Ok(ProcessPath::Fast));
        let error = from(Some("bogus")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "ZIDANE_PROCESS_PATH=\"bogus\" is not a valid value: ZIDANE_PROCESS_PATH accepts \
             `portable` or `fast` (any case), or unset for the platform's default"
        );
    }
}
