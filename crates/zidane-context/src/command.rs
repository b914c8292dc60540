//! Where a command runs and with what environment: the part of running a command that
//! a foreground `exec` and a background task share.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::sandbox::SandboxScope;

/// The working directory and extra environment of a command, shared by
/// [`ExecOptions`](crate::ExecOptions) and [`BackgroundOptions`](crate::BackgroundOptions)
/// (whose JSON carries these fields flat, beside their own).
///
/// ```
/// use zidane_context::{BackgroundOptions, CommandSpec, ExecOptions};
///
/// let spec = CommandSpec::new().cwd("/work").env("RUST_LOG", "debug");
/// let exec = ExecOptions::new().spec(spec.clone());
/// let background = BackgroundOptions::new("/tmp/tasks").spec(spec);
/// assert_eq!(exec.spec, background.spec);
/// assert_eq!(exec.spec.env["RUST_LOG"], "debug");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CommandSpec {
    /// Working directory (default: the context's).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables, on top of what the context's environment policy
    /// passes on.
    pub env: BTreeMap<String, String>,
    /// What this command asks of the context's sandbox: its policy (the default), a
    /// stricter one (a host's), or none (a person approved running it outside).
    #[serde(default, skip_serializing_if = "SandboxScope::is_context")]
    pub sandbox: SandboxScope,
}

impl CommandSpec {
    /// The context's working directory and no extra variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets what the command asks of the context's sandbox.
    #[must_use]
    pub fn sandbox(mut self, scope: SandboxScope) -> Self {
        self.sandbox = scope;
        self
    }
}
