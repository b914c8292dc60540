//! What a command may touch: the [`SandboxPolicy`] a context runs its commands under,
//! the [`SandboxScope`] one command asks for, and the [`SandboxReport`] a context gives
//! of what it enforces.
//!
//! These are data only. A context enforces them (zidane-process with bubblewrap on
//! Linux and a Seatbelt profile on macOS); the tools tell the model the rules from the
//! report; a host narrows a command's policy (Codex's sandbox) or lifts it for one
//! command a person approved.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much of the file system a command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read everything but the denied paths; write only the workspace roots, the temp
    /// directories, the build caches and the extra writable directories.
    #[default]
    WorkspaceWrite,
    /// Read everything but the denied paths; write only the temp directories.
    ReadOnly,
    /// No sandbox: a command has every right of the user.
    Off,
}

impl SandboxMode {
    /// Its name on the command line and in the config file.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }

    /// How strict it is: the stricter of two modes has the higher rank.
    const fn rank(self) -> u8 {
        match self {
            Self::Off => 0,
            Self::WorkspaceWrite => 1,
            Self::ReadOnly => 2,
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandbox setting that names nothing zidane knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a {setting} setting: expected one of {expected}")]
pub struct SandboxSettingError {
    /// What was given.
    pub value: String,
    /// Which setting it was for (`sandbox`, `network`).
    pub setting: &'static str,
    /// The values that are understood.
    pub expected: &'static str,
}

impl FromStr for SandboxMode {
    type Err = SandboxSettingError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "read-only" => Ok(Self::ReadOnly),
            "off" => Ok(Self::Off),
            _ => Err(SandboxSettingError {
                value: value.to_owned(),
                setting: "sandbox",
                expected: "`workspace-write`, `read-only`, `off`",
            }),
        }
    }
}

/// Whether a sandboxed command may use the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkAccess {
    /// The host's network, loopback included: a dev server binds localhost and the
    /// host reaches it.
    #[default]
    On,
    /// A network of its own with only a loopback: nothing of the host's, nothing
    /// outside.
    Off,
}

impl NetworkAccess {
    /// Its name on the command line and in the config file.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

impl fmt::Display for NetworkAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for NetworkAccess {
    type Err = SandboxSettingError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            _ => Err(SandboxSettingError {
                value: value.to_owned(),
                setting: "network",
                expected: "`on`, `off`",
            }),
        }
    }
}

/// What the commands of a context may touch.
///
/// The paths are what the user gave; a context adds its own fixed sets (the temp
/// directories, the build caches, the credential stores it denies, shell startup files)
/// when it enforces the policy.
///
/// ```
/// use zidane_context::{NetworkAccess, SandboxMode, SandboxPolicy};
///
/// let user = SandboxPolicy::workspace_write("/work/app").deny_read("/work/app/.env");
/// let host = SandboxPolicy::read_only().network(NetworkAccess::Off);
/// let both = user.narrowed_by(&host);
/// assert_eq!(both.mode, SandboxMode::ReadOnly);
/// assert_eq!(both.network, NetworkAccess::Off);
/// assert!(both.deny_read.iter().any(|path| path.ends_with(".env")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SandboxPolicy {
    /// How much may be written.
    pub mode: SandboxMode,
    /// Whether the network is reachable.
    pub network: NetworkAccess,
    /// The workspace roots: writable under `workspace-write` (but for their `.git`
    /// hooks and config and hosts' config directories).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workspace: Vec<PathBuf>,
    /// More writable directories, under `workspace-write`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<PathBuf>,
    /// More paths no command may read, beside the context's own set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_read: Vec<PathBuf>,
    /// More paths inside the writable ones that stay read-only, beside the context's
    /// own set (a host's: Codex keeps its workspace's `.git` whole).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// `workspace-write` with `root` as the workspace, network on.
    pub fn workspace_write(root: impl Into<PathBuf>) -> Self {
        Self {
            workspace: vec![root.into()],
            ..Self::default()
        }
    }

    /// `read-only`, network on.
    pub fn read_only() -> Self {
        Self {
            mode: SandboxMode::ReadOnly,
            ..Self::default()
        }
    }

    /// No sandbox.
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            ..Self::default()
        }
    }

    /// Sets the mode.
    #[must_use]
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the network access.
    #[must_use]
    pub fn network(mut self, network: NetworkAccess) -> Self {
        self.network = network;
        self
    }

    /// Adds a workspace root.
    #[must_use]
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace.push(root.into());
        self
    }

    /// Adds a writable directory.
    #[must_use]
    pub fn writable(mut self, dir: impl Into<PathBuf>) -> Self {
        self.writable.push(dir.into());
        self
    }

    /// Adds a path no command may read.
    #[must_use]
    pub fn deny_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.deny_read.push(path.into());
        self
    }

    /// Adds a path inside the writable ones that stays read-only.
    #[must_use]
    pub fn read_only_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push(path.into());
        self
    }

    /// Whether commands run sandboxed at all.
    pub fn is_on(&self) -> bool {
        self.mode != SandboxMode::Off
    }

    /// The stricter of this policy and `other` (a host's): the stricter mode and
    /// network, only the writable places both allow, every denied and every read-only
    /// path of either.
    ///
    /// A place is writable when it is writable in both: a root of one inside a root of
    /// the other keeps the inner one. `Off` on one side takes the other side whole.
    #[must_use]
    pub fn narrowed_by(&self, other: &SandboxPolicy) -> SandboxPolicy {
        if !other.is_on() {
            return self.clone();
        }
        if !self.is_on() {
            return other.clone();
        }
        let mode = if other.mode.rank() > self.mode.rank() {
            other.mode
        } else {
            self.mode
        };
        let network = if self.network == NetworkAccess::Off || other.network == NetworkAccess::Off {
            NetworkAccess::Off
        } else {
            NetworkAccess::On
        };
        let mine: Vec<&PathBuf> = self.workspace.iter().chain(&self.writable).collect();
        let theirs: Vec<&PathBuf> = other.workspace.iter().chain(&other.writable).collect();
        let workspace = both_allow(&self.workspace, &theirs, &other.workspace, &mine);
        let writable = both_allow(&self.writable, &theirs, &other.writable, &mine);
        SandboxPolicy {
            mode,
            network,
            workspace,
            writable,
            deny_read: union(&self.deny_read, &other.deny_read),
            read_only: union(&self.read_only, &other.read_only),
        }
    }
}

/// The paths of `ours`, then those of `theirs` not among them.
fn union(ours: &[PathBuf], theirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut all = ours.to_vec();
    for path in theirs {
        if !all.contains(path) {
            all.push(path.clone());
        }
    }
    all
}

/// The paths of `ours` inside one of `their_roots`, then those of `theirs` inside one of
/// `our_roots`: the places both sides let a command write.
fn both_allow(
    ours: &[PathBuf],
    their_roots: &[&PathBuf],
    theirs: &[PathBuf],
    our_roots: &[&PathBuf],
) -> Vec<PathBuf> {
    let within =
        |path: &PathBuf, roots: &[&PathBuf]| roots.iter().any(|root| path.starts_with(root));
    let mut kept: Vec<PathBuf> = Vec::new();
    let candidates = ours
        .iter()
        .filter(|path| within(path, their_roots))
        .chain(theirs.iter().filter(|path| within(path, our_roots)));
    for path in candidates {
        if !kept.contains(path) {
            kept.push(path.clone());
        }
    }
    kept
}

/// What one command asks of its context's sandbox (see
/// [`CommandSpec::sandbox`](crate::CommandSpec::sandbox)).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxScope {
    /// The context's policy.
    #[default]
    Context,
    /// The stricter of the context's policy and this one (a host's own sandbox, which
    /// zidane never runs wider than).
    Within(SandboxPolicy),
    /// No sandbox for this command: a person approved running it outside. Only a host
    /// that asked someone sets it.
    Outside,
}

impl SandboxScope {
    /// Whether this is the context's own policy.
    pub fn is_context(&self) -> bool {
        matches!(self, Self::Context)
    }
}

/// Whether a context's sandbox is in force.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "reason")]
pub enum SandboxStatus {
    /// Every command runs inside it.
    Enforced,
    /// The policy says `off`.
    Off,
    /// The policy asks for a sandbox, but this machine cannot build it: commands run
    /// unsandboxed, and why is said.
    Unavailable(String),
}

/// What a context enforces: its policy and whether it holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SandboxReport {
    /// The policy the user gave.
    pub policy: SandboxPolicy,
    /// Whether it is in force.
    pub status: SandboxStatus,
}

impl SandboxReport {
    /// A report of `policy` with `status`.
    pub fn new(policy: SandboxPolicy, status: SandboxStatus) -> Self {
        Self { policy, status }
    }

    /// The report of a context that does not sandbox.
    pub fn off() -> Self {
        Self::new(SandboxPolicy::off(), SandboxStatus::Off)
    }

    /// Whether commands run inside a sandbox.
    pub fn enforced(&self) -> bool {
        self.status == SandboxStatus::Enforced
    }

    /// The policy in one line, as the model is told it: `None` when there is no
    /// sandbox by choice (`off`), else what may be written, the network, or why there
    /// is no sandbox though one was asked for.
    ///
    /// ```
    /// use zidane_context::{SandboxPolicy, SandboxReport, SandboxStatus};
    ///
    /// let report = SandboxReport::new(SandboxPolicy::workspace_write("/work"), SandboxStatus::Enforced);
    /// assert_eq!(
    ///     report.line().unwrap(),
    ///     "Sandbox: workspace-write. Commands may write only /work, the temp directories and build caches; \
    ///      credential stores and shell startup files are out of reach; network on."
    /// );
    /// ```
    pub fn line(&self) -> Option<String> {
        match &self.status {
            SandboxStatus::Off => None,
            SandboxStatus::Unavailable(reason) => Some(format!("unsandboxed: {reason}")),
            SandboxStatus::Enforced => {
                let policy = &self.policy;
                let writes = match policy.mode {
                    SandboxMode::ReadOnly | SandboxMode::Off => {
                        "Commands may write only the temp directories".to_owned()
                    }
                    SandboxMode::WorkspaceWrite => {
                        let mut roots: Vec<String> = policy
                            .workspace
                            .iter()
                            .chain(&policy.writable)
                            .map(|path| path.display().to_string())
                            .collect();
                        roots.push("the temp directories and build caches".to_owned());
                        let last = roots.pop().unwrap_or_default();
                        if roots.is_empty() {
                            format!("Commands may write only {last}")
                        } else {
                            format!("Commands may write only {}, {last}", roots.join(", "))
                        }
                    }
                };
                Some(format!(
                    "Sandbox: {}. {writes}; credential stores and shell startup files are out \
                     of reach; network {}.",
                    policy.mode, policy.network
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_name_themselves() {
        for mode in [
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
            SandboxMode::Off,
        ] {
            assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
        }
        let error = "strict".parse::<SandboxMode>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "`strict` is not a sandbox setting: expected one of `workspace-write`, `read-only`, `off`"
        );
        assert_eq!("off".parse::<NetworkAccess>(), Ok(NetworkAccess::Off));
        assert!("maybe".parse::<NetworkAccess>().is_err());
    }

    #[test]
    fn narrowing_never_widens() {
        let user = SandboxPolicy::workspace_write("/work").writable("/data");
        let host = SandboxPolicy::workspace_write("/work/app")
            .writable("/elsewhere")
            .read_only_path("/work/app/.git");
        let both = user.narrowed_by(&host);
        assert_eq!(both.workspace, vec![PathBuf::from("/work/app")]);
        assert!(both.writable.is_empty(), "{both:?}");
        assert_eq!(both.read_only, vec![PathBuf::from("/work/app/.git")]);
        assert_eq!(user.narrowed_by(&SandboxPolicy::off()), user);
        assert_eq!(SandboxPolicy::off().narrowed_by(&host), host);
        let read_only = user.narrowed_by(&SandboxPolicy::read_only());
        assert_eq!(read_only.mode, SandboxMode::ReadOnly);
        let no_net = SandboxPolicy::read_only()
            .network(NetworkAccess::Off)
            .narrowed_by(&user);
        assert_eq!(
            (no_net.mode, no_net.network),
            (SandboxMode::ReadOnly, NetworkAccess::Off)
        );
    }

    #[test]
    fn the_line_says_why_there_is_none() {
        let report = SandboxReport::new(
            SandboxPolicy::workspace_write("/w"),
            SandboxStatus::Unavailable("bubblewrap (bwrap) is not installed".into()),
        );
        assert_eq!(
            report.line().unwrap(),
            "unsandboxed: bubblewrap (bwrap) is not installed"
        );
        assert_eq!(SandboxReport::off().line(), None);
        let read_only = SandboxReport::new(SandboxPolicy::read_only(), SandboxStatus::Enforced);
        assert!(
            read_only
                .line()
                .unwrap()
                .starts_with("Sandbox: read-only. Commands may write only the temp directories;")
        );
    }
}
