//! Which of the host's environment variables a task gets: [`EnvPolicy`], and
//! [`EnvPolicy::apply`], the one function every context computes a task's environment
//! with.
//!
//! A host's environment holds its credentials (a model provider's key, a cloud
//! account's secret, zidane's own bearer token). A command a model runs has no use for
//! them, and what it prints lands in the model's context: so by default a task gets the
//! host's environment minus every variable named like a secret, and never zidane's own
//! credentials ([`ZIDANE_SECRET_ENV_VARS`]), whatever the policy says.
//!
//! How [`apply`](EnvPolicy::apply) decides, for each variable of the host:
//!
//! 1. one of [`ZIDANE_SECRET_ENV_VARS`] (any case): withheld, always;
//! 2. not inherited ([`EnvInherit::Core`] keeps only [`CORE_ENV_VARS`],
//!    [`EnvInherit::None`] nothing): withheld;
//! 3. matching a [`DEFAULT_ENV_EXCLUDES`] pattern (unless
//!    [`default_excludes`](EnvPolicy::default_excludes) is off): withheld;
//! 4. matching an [`exclude`](EnvPolicy::exclude) pattern: withheld;
//! 5. with [`include_only`](EnvPolicy::include_only) patterns given, matching none of
//!    them: withheld;
//! 6. else passed on, with its value.
//!
//! Then every [`set`](EnvPolicy::set) entry is added, replacing a value of the same
//! name, whatever steps 2 to 5 said — but never one of [`ZIDANE_SECRET_ENV_VARS`].
//!
//! Patterns are globs over the variable's name, matched without regard to ASCII case:
//! `*` stands for any run of characters (none included), `?` for exactly one; every
//! other character stands for itself.
//!
//! ```
//! use zidane_context::{EnvInherit, EnvPolicy};
//!
//! let host = [
//!     ("PATH", "/usr/bin"),
//!     ("HOME", "/home/ada"),
//!     ("OPENAI_API_KEY", "sk-…"),
//!     ("ZIDANE_MCP_TOKEN", "t0k3n"),
//!     ("EDITOR", "vi"),
//! ];
//! let child = EnvPolicy::default().apply(host);
//! assert_eq!(child.names(), ["EDITOR", "HOME", "PATH"]);
//! assert_eq!(child.withheld_names(), ["OPENAI_API_KEY", "ZIDANE_MCP_TOKEN"]);
//!
//! let core = EnvPolicy::default()
//!     .inherit(EnvInherit::Core)
//!     .set("CI", "true")
//!     .set("ZIDANE_MCP_TOKEN", "never passed");
//! let child = core.apply(host);
//! assert_eq!(child.names(), ["CI", "HOME", "PATH"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The variable `zidane mcp` takes its HTTP bearer token from: a credential of zidane's
/// own, so in [`ZIDANE_SECRET_ENV_VARS`].
pub const MCP_TOKEN_ENV: &str = "ZIDANE_MCP_TOKEN";

/// zidane's own credentials: never passed to a task, whatever the policy, not even by
/// [`set`](EnvPolicy::set). Matched without regard to ASCII case.
///
/// A model provider's key (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) is not here: it is the
/// user's, withheld by [`DEFAULT_ENV_EXCLUDES`] like any other key, and a user may hand
/// it to tasks on purpose with [`set`](EnvPolicy::set).
pub const ZIDANE_SECRET_ENV_VARS: &[&str] = &[MCP_TOKEN_ENV];

/// The patterns withheld by default ([`EnvPolicy::default_excludes`]): any name holding
/// `KEY`, `SECRET`, `TOKEN` or `PASSWORD`, in any case.
pub const DEFAULT_ENV_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*"];

/// What [`EnvInherit::Core`] keeps of the host's environment: where programs are
/// (`PATH`), who and where the user is (`HOME`, `USER`, `LOGNAME`, `SHELL`), the locale
/// (`LANG`, `LANGUAGE`, `LC_*`), the terminal type (`TERM`), the temporary directory
/// (`TMPDIR`) and the time zone (`TZ`); on Windows, what its programs cannot start
/// without (`SystemRoot`, `SystemDrive`, `windir`, `ComSpec`, `PATHEXT`), the user's
/// folders (`USERPROFILE`, `HOMEDRIVE`, `HOMEPATH`, `APPDATA`, `LOCALAPPDATA`,
/// `ProgramData`, `ProgramFiles*`), `USERNAME`, `TEMP` and `TMP` (names match in any
/// case). `PWD` is not kept: the shell sets it to the task's own directory.
pub const CORE_ENV_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TMPDIR",
    "TZ",
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles*",
    "USERNAME",
    "TEMP",
    "TMP",
];

/// Which of the host's variables a task starts from, before excludes. Serialised as
/// `all`, `core` or `none`; read in any case, as its [`FromStr`] does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum EnvInherit {
    /// Every variable of the host (the default).
    #[default]
    All,
    /// Only [`CORE_ENV_VARS`].
    Core,
    /// None: a task gets only what [`set`](EnvPolicy::set) gives it.
    None,
}

impl EnvInherit {
    /// `all`, `core` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Core => "core",
            Self::None => "none",
        }
    }
}

impl fmt::Display for EnvInherit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<String> for EnvInherit {
    type Error = EnvPolicyError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl FromStr for EnvInherit {
    type Err = EnvPolicyError;

    /// `all`, `core` or `none`, in any case.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(Self::All),
            "core" => Ok(Self::Core),
            "none" => Ok(Self::None),
            _ => Err(EnvPolicyError::UnknownInherit(value.to_owned())),
        }
    }
}

/// A glob over a variable's name, matched without regard to ASCII case: `*` is any run
/// of characters, `?` exactly one.
///
/// ```
/// use zidane_context::EnvPattern;
///
/// let pattern = EnvPattern::new("*_token");
/// assert!(pattern.matches("GITHUB_TOKEN"));
/// assert!(!pattern.matches("TOKENIZER"));
/// assert!(EnvPattern::new("LC_?????").matches("lc_ctype"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EnvPattern(String);

impl EnvPattern {
    /// The pattern `glob`.
    pub fn new(glob: impl Into<String>) -> Self {
        Self(glob.into())
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `name` matches, ignoring ASCII case.
    pub fn matches(&self, name: &str) -> bool {
        glob_matches(self.0.as_bytes(), name.as_bytes())
    }
}

impl fmt::Debug for EnvPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for EnvPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for EnvPattern {
    fn from(glob: &str) -> Self {
        Self::new(glob)
    }
}

impl FromStr for EnvPattern {
    type Err = std::convert::Infallible;

    fn from_str(glob: &str) -> Result<Self, Self::Err> {
        Ok(Self::new(glob))
    }
}

/// Whether `name` matches `glob` (`*`, `?`), ignoring ASCII case. Greedy with one
/// backtrack point, so linear in practice and never exponential.
fn glob_matches(glob: &[u8], name: &[u8]) -> bool {
    let (mut g, mut n) = (0, 0);
    // The last `*` seen, and the name position it was tried against.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match glob.get(g) {
            Some(b'*') => {
                star = Some((g, n));
                g += 1;
            }
            Some(&c) if c == b'?' || c.eq_ignore_ascii_case(&name[n]) => {
                // `?` is one character: a UTF-8 sequence counts as one.
                if c == b'?' {
                    n += utf8_len(name[n]);
                } else {
                    n += 1;
                }
                g += 1;
            }
            _ => match star {
                // Let the last `*` take one more character and try again.
                Some((star_g, star_n)) => {
                    let next = star_n + utf8_len(name[star_n]);
                    star = Some((star_g, next));
                    g = star_g + 1;
                    n = next;
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|&c| c == b'*')
}

/// The length of the UTF-8 sequence `first` begins (1 for a byte that begins none).
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Which of the host's environment variables a task gets, and what is added: see the
/// module docs for the order of the rules.
///
/// The default inherits everything but names matching [`DEFAULT_ENV_EXCLUDES`] and
/// [`ZIDANE_SECRET_ENV_VARS`]. Serialises as a table (`inherit`, `default_excludes`,
/// `exclude`, `include_only`, `set`), every field optional, so a worker can be handed
/// one and a user can keep one in a file:
///
/// ```
/// use zidane_context::{EnvInherit, EnvPolicy};
///
/// let policy: EnvPolicy = serde_json::from_str(
///     r#"{"inherit": "core", "exclude": ["AWS_*"], "set": {"CI": "1"}}"#,
/// )?;
/// assert_eq!(policy.inherit, EnvInherit::Core);
/// assert!(policy.default_excludes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvPolicy {
    /// Which of the host's variables a task starts from (default [`EnvInherit::All`]).
    pub inherit: EnvInherit,
    /// Whether [`DEFAULT_ENV_EXCLUDES`] are withheld (default: yes).
    pub default_excludes: bool,
    /// More names to withhold.
    pub exclude: Vec<EnvPattern>,
    /// When not empty, only names matching one of these are passed on (what `set` adds
    /// is passed on all the same).
    pub include_only: Vec<EnvPattern>,
    /// Variables every task gets, replacing the host's value of the same name; never one
    /// of [`ZIDANE_SECRET_ENV_VARS`].
    pub set: BTreeMap<String, String>,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            inherit: EnvInherit::All,
            default_excludes: true,
            exclude: Vec::new(),
            include_only: Vec::new(),
            set: BTreeMap::new(),
        }
    }
}

impl EnvPolicy {
    /// Sets which of the host's variables a task starts from.
    #[must_use]
    pub fn inherit(mut self, inherit: EnvInherit) -> Self {
        self.inherit = inherit;
        self
    }

    /// Sets whether [`DEFAULT_ENV_EXCLUDES`] are withheld.
    #[must_use]
    pub fn default_excludes(mut self, on: bool) -> Self {
        self.default_excludes = on;
        self
    }

    /// Withholds the names matching `pattern` too.
    #[must_use]
    pub fn exclude(mut self, pattern: impl Into<EnvPattern>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Passes on only names matching `pattern` (or another `include_only` pattern).
    #[must_use]
    pub fn include_only(mut self, pattern: impl Into<EnvPattern>) -> Self {
        self.include_only.push(pattern.into());
        self
    }

    /// Gives every task `name=value`.
    #[must_use]
    pub fn set(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.set.insert(name.into(), value.into());
        self
    }

    /// Refuses a [`set`](Self::set) entry the operating system cannot pass on (an
    /// empty name, one holding `=` or a NUL byte, a value holding a NUL byte) or one of
    /// [`ZIDANE_SECRET_ENV_VARS`]. [`apply`](Self::apply) never passes such an entry;
    /// this says so before a task starts.
    pub fn validate(&self) -> Result<(), EnvPolicyError> {
        for (name, value) in &self.set {
            if !valid_name(name) || value.contains('\0') {
                return Err(EnvPolicyError::InvalidSet { name: name.clone() });
            }
            if is_zidane_secret(name) {
                return Err(EnvPolicyError::SecretSet { name: name.clone() });
            }
        }
        Ok(())
    }

    /// Why `name`, a variable of the host, is withheld; `None` if it is passed on
    /// (before [`set`](Self::set), which may replace its value).
    pub fn withholds(&self, name: &str) -> Option<WithheldReason> {
        if is_zidane_secret(name) {
            return Some(WithheldReason::ZidaneSecret);
        }
        let inherited = match self.inherit {
            EnvInherit::All => true,
            EnvInherit::Core => CORE_ENV_VARS
                .iter()
                .any(|core| glob_matches(core.as_bytes(), name.as_bytes())),
            EnvInherit::None => false,
        };
        if !inherited {
            return Some(WithheldReason::NotInherited(self.inherit));
        }
        if self.default_excludes
            && let Some(pattern) = DEFAULT_ENV_EXCLUDES
                .iter()
                .find(|pattern| glob_matches(pattern.as_bytes(), name.as_bytes()))
        {
            return Some(WithheldReason::DefaultExclude(EnvPattern::new(*pattern)));
        }
        if let Some(pattern) = self.exclude.iter().find(|pattern| pattern.matches(name)) {
            return Some(WithheldReason::Excluded(pattern.clone()));
        }
        if !self.include_only.is_empty()
            && !self
                .include_only
                .iter()
                .any(|pattern| pattern.matches(name))
        {
            return Some(WithheldReason::NotIncluded);
        }
        None
    }

    /// The environment a task gets from a host whose environment is `host`, and what of
    /// it was withheld (see the module docs for the rules). A name that is not UTF-8 is
    /// matched as its lossy rendering.
    pub fn apply<I, K, V>(&self, host: I) -> ChildEnv
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let mut vars = BTreeMap::new();
        let mut withheld = BTreeMap::new();
        for (name, value) in host {
            let name = name.into();
            match self.withholds(&name.to_string_lossy()) {
                Some(reason) => {
                    withheld.insert(name, reason);
                }
                None => {
                    vars.insert(name, value.into());
                }
            }
        }
        for (name, value) in &self.set {
            let key = OsString::from(name);
            if is_zidane_secret(name) {
                vars.remove(&key);
                withheld.insert(key, WithheldReason::ZidaneSecret);
            } else if !valid_name(name) || value.contains('\0') {
                withheld.insert(key, WithheldReason::InvalidSet);
            } else {
                // Given on purpose: the name reaches the task, with this value.
                withheld.remove(&key);
                vars.insert(key, OsString::from(value));
            }
        }
        ChildEnv {
            vars,
            withheld: withheld
                .into_iter()
                .map(|(name, reason)| WithheldVar {
                    name: name.to_string_lossy().into_owned(),
                    reason,
                })
                .collect(),
        }
    }

    /// [`apply`](Self::apply) to this process's own environment.
    pub fn apply_to_host(&self) -> ChildEnv {
        self.apply(std::env::vars_os())
    }
}

/// Whether `name` is one of [`ZIDANE_SECRET_ENV_VARS`] (any ASCII case).
pub fn is_zidane_secret(name: &str) -> bool {
    ZIDANE_SECRET_ENV_VARS
        .iter()
        .any(|secret| secret.eq_ignore_ascii_case(name))
}

/// Whether the operating system can pass on a variable named `name`.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// Why a variable of the host does not reach a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WithheldReason {
    /// One of [`ZIDANE_SECRET_ENV_VARS`].
    ZidaneSecret,
    /// Not kept by this [`EnvInherit`] mode.
    NotInherited(EnvInherit),
    /// Matches this one of [`DEFAULT_ENV_EXCLUDES`].
    DefaultExclude(EnvPattern),
    /// Matches this [`exclude`](EnvPolicy::exclude) pattern.
    Excluded(EnvPattern),
    /// Matches no [`include_only`](EnvPolicy::include_only) pattern.
    NotIncluded,
    /// A [`set`](EnvPolicy::set) entry the operating system cannot pass on.
    InvalidSet,
}

impl fmt::Display for WithheldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZidaneSecret => f.write_str("zidane's own credential"),
            Self::NotInherited(mode) => write!(f, "not inherited (inherit = {mode})"),
            Self::DefaultExclude(pattern) => write!(f, "default exclude {pattern}"),
            Self::Excluded(pattern) => write!(f, "exclude {pattern}"),
            Self::NotIncluded => f.write_str("matches no include_only pattern"),
            Self::InvalidSet => f.write_str("a set entry the system cannot pass on"),
        }
    }
}

/// A variable withheld from tasks: its name (never its value) and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WithheldVar {
    /// The variable's name (lossy where it is not UTF-8).
    pub name: String,
    /// Why it is withheld.
    pub reason: WithheldReason,
}

/// What [`EnvPolicy::apply`] computed: a task's whole environment, and what of the
/// host's was withheld.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    /// Every variable a task gets: a context starts its commands with exactly these
    /// (plus the command's own), nothing else of the host's.
    pub vars: BTreeMap<OsString, OsString>,
    /// The host's variables a task does not get, by name.
    pub withheld: Vec<WithheldVar>,
}

impl ChildEnv {
    /// The names a task gets, sorted (lossy where not UTF-8).
    pub fn names(&self) -> Vec<String> {
        self.vars
            .keys()
            .map(|name| name.to_string_lossy().into_owned())
            .collect()
    }

    /// The names withheld, sorted.
    pub fn withheld_names(&self) -> Vec<&str> {
        self.withheld.iter().map(|var| var.name.as_str()).collect()
    }
}

/// A policy that cannot be used as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvPolicyError {
    /// An inherit mode other than `all`, `core` or `none`.
    #[error("unknown environment inherit mode {0:?}: use all, core or none")]
    UnknownInherit(String),
    /// A `set` entry the operating system cannot pass on.
    #[error(
        "cannot set environment variable {name:?}: a name must be non-empty without `=` or NUL, a value without NUL"
    )]
    InvalidSet {
        /// The entry's name.
        name: String,
    },
    /// A `set` entry naming one of zidane's own credentials.
    #[error("{name} is zidane's own credential and is never passed to tasks")]
    SecretSet {
        /// The entry's name.
        name: String,
    },
    /// A `set` entry not written `NAME=VALUE`.
    #[error("{0:?} is not NAME=VALUE")]
    NotAnAssignment(String),
}

/// Splits `NAME=VALUE` (at the first `=`), as a command line gives a `set` entry.
///
/// ```
/// use zidane_context::parse_env_assignment;
///
/// assert_eq!(parse_env_assignment("A=b=c")?, ("A".to_owned(), "b=c".to_owned()));
/// assert!(parse_env_assignment("A").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_env_assignment(entry: &str) -> Result<(String, String), EnvPolicyError> {
    match entry.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(EnvPolicyError::NotAnAssignment(entry.to_owned())),
    }
}

#[cfg(test)]
#[path = "env_policy_tests.rs"]
mod tests;
