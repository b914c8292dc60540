//! What can stop a command, and how it is told.

use std::io::Write as _;
use std::process::ExitCode;

use zidane::agent::error_chain;

use crate::provider::Missing;

/// Exit status for a usage or configuration error (no provider, unknown session, a
/// variable or config file zidane does not accept).
const EXIT_USAGE: u8 = 2;

/// Why a command could not run.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// No model provider is configured.
    #[error(transparent)]
    Provider(#[from] Missing),
    /// The agent layer failed (a session that cannot be read or saved, a bad id…).
    #[error(transparent)]
    Agent(#[from] zidane::agent::AgentError),
    /// The sessions directory cannot be cleaned (unreadable, or a symlink).
    #[error(transparent)]
    Retention(#[from] zidane::agent::RetentionError),
    /// `--resume` or `replay` named a session that is not stored.
    #[error("no session {id} under {dir}; `zidane sessions` lists them")]
    UnknownSession {
        /// The id asked for.
        id: String,
        /// Where sessions live.
        dir: String,
    },
    /// The user dir could not be found.
    #[error("no user dir: set ZIDANE_USER_DIR (the platform has no data dir)")]
    NoUserDir,
    /// The interactive session was started without a terminal.
    #[error("the interactive session needs a terminal; for scripts use -p \"prompt\" (print mode)")]
    NotATerminal,
    /// `zidane top` was started without a terminal.
    #[error(
        "zidane top needs a terminal; `zidane top --once` prints one frame, `zidane ps` the list"
    )]
    TopNotATerminal,
    /// `--restate` names no reachable workers, or a worker id that is not one.
    #[error("--restate: {0}")]
    Fleet(String),
    /// A fleet's task could not be listed, read, waited for or killed.
    #[error("on the fleet: {0}")]
    FleetTask(#[from] zidane::context::ContextError),
    /// `zidane mcp` could not start or stopped serving.
    #[error("mcp: {0}")]
    Mcp(zidane_mcp::McpServeError),
    /// The config file cannot be read, or holds what zidane does not accept.
    #[error("config file {}: {reason}", path.display())]
    Config {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The environment policy asked for cannot be applied.
    #[error(transparent)]
    EnvPolicy(#[from] zidane::context::EnvPolicyError),
    /// An environment variable of zidane's holds a value it does not accept.
    #[error(transparent)]
    BadEnv(#[from] zidane::process::EnvValueError),
    /// `RUST_LOG` holds a filter tracing cannot parse.
    #[error("RUST_LOG={value:?} is not a valid log filter: {reason}")]
    LogFilter {
        /// What it held.
        value: String,
        /// Why tracing refused it.
        reason: String,
    },
    /// The working directory, the workspace of the sandbox, cannot be read.
    #[error("cannot read the working directory: {0}")]
    WorkingDir(std::io::Error),
    /// The sandbox is required, but this machine cannot build it.
    #[error(
        "the sandbox is required ({setting}) but unavailable: {reason}; \
         `--sandbox off` runs commands without one"
    )]
    SandboxRequired {
        /// Why it is unavailable.
        reason: String,
        /// The setting that requires it: `--sandbox-required` or the config file's.
        setting: String,
    },
    /// The supervisor of detached tasks refused, or could not be reached.
    #[error(transparent)]
    Supervisor(#[from] zidane::supervisor::SupervisorError),
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// The terminal could not be written or set up.
    #[error("terminal: {0}")]
    Io(std::io::Error),
}

// Printed in the message, so not also a `source()` (a chain would print it twice).
impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

// Printed in the message, so not also a `source()`.
impl From<zidane_mcp::McpServeError> for CliError {
    fn from(error: zidane_mcp::McpServeError) -> Self {
        Self::Mcp(error)
    }
}

impl CliError {
    /// Prints the error on stderr and gives the exit status. A closed stdout (`| head`)
    /// is not an error: nobody is listening.
    pub fn report(self) -> ExitCode {
        if let Self::Io(error) = &self
            && error.kind() == std::io::ErrorKind::BrokenPipe
        {
            return ExitCode::SUCCESS;
        }
        let code = match self {
            Self::Provider(_)
            | Self::UnknownSession { .. }
            | Self::NoUserDir
            | Self::NotATerminal
            | Self::TopNotATerminal
            | Self::Config { .. }
            | Self::EnvPolicy(_)
            | Self::BadEnv(_)
            | Self::LogFilter { .. }
            | Self::SandboxRequired { .. } => EXIT_USAGE,
            _ => 1,
        };
        print(&self);
        ExitCode::from(code)
    }
}

/// Prints `zidane: ` and the error's [`chain`] on stderr: every error exit of the binary
/// says its error this way.
pub(crate) fn print(error: &(dyn std::error::Error + 'static)) {
    let _ = writeln!(std::io::stderr(), "zidane: {}", error_chain(error));
}
