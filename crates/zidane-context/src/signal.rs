//! `Signal`: a POSIX signal that serialises as its name and knows its number.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Names of the standard signals, indexed by their Linux number (index 0 unused).
const NAMES: [&str; 32] = [
    "",
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGILL",
    "SIGTRAP",
    "SIGABRT",
    "SIGBUS",
    "SIGFPE",
    "SIGKILL",
    "SIGUSR1",
    "SIGSEGV",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGCHLD",
    "SIGCONT",
    "SIGSTOP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
    "SIGIO",
    "SIGPWR",
    "SIGSYS",
];

/// A signal that terminated a task, e.g. `SIGTERM` (15).
///
/// Serialises as its name (`"SIGTERM"`); numbers without a standard name (real-time
/// signals) serialise as `"SIG<n>"`. Numbers are Linux's, the platform zidane's process
/// context targets.
///
/// ```
/// use zidane_context::Signal;
/// assert_eq!(Signal::TERM.number(), 15);
/// assert_eq!(Signal::TERM.to_string(), "SIGTERM");
/// assert_eq!("SIGKILL".parse::<Signal>().unwrap(), Signal::KILL);
/// assert_eq!(Signal::TERM.exit_code(), 143);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
pub struct Signal(i32);

impl Signal {
    /// `SIGHUP` (1).
    pub const HUP: Self = Self(1);
    /// `SIGINT` (2).
    pub const INT: Self = Self(2);
    /// `SIGKILL` (9).
    pub const KILL: Self = Self(9);
    /// `SIGSEGV` (11).
    pub const SEGV: Self = Self(11);
    /// `SIGPIPE` (13).
    pub const PIPE: Self = Self(13);
    /// `SIGTERM` (15).
    pub const TERM: Self = Self(15);

    /// The signal with this number, if it is a valid signal number (1–64).
    pub fn from_number(number: i32) -> Option<Self> {
        (1..=64).contains(&number).then_some(Self(number))
    }

    /// The signal's number.
    pub const fn number(self) -> i32 {
        self.0
    }

    /// The POSIX shell exit code of a process terminated by this signal: `128 + number`.
    pub const fn exit_code(self) -> i32 {
        128 + self.0
    }

    /// The signal's name, e.g. `SIGTERM`, or `SIG<n>` for unnamed numbers.
    pub fn name(self) -> String {
        usize::try_from(self.0)
            .ok()
            .and_then(|i| NAMES.get(i))
            .filter(|name| !name.is_empty())
            .map_or_else(|| format!("SIG{}", self.0), |name| (*name).to_owned())
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name(), self.0)
    }
}

/// A string that names no signal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown signal name {0:?}")]
pub struct SignalParseError(pub String);

impl FromStr for Signal {
    type Err = SignalParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(i) = NAMES.iter().position(|name| !name.is_empty() && *name == s) {
            return i32::try_from(i)
                .map(Self)
                .map_err(|_| SignalParseError(s.to_owned()));
        }
        s.strip_prefix("SIG")
            .filter(|digits| !digits.starts_with('0'))
            .and_then(|digits| digits.parse::<i32>().ok())
            .filter(|n| usize::try_from(*n).is_ok_and(|i| i >= NAMES.len()))
            .and_then(Self::from_number)
            .ok_or_else(|| SignalParseError(s.to_owned()))
    }
}

impl TryFrom<String> for Signal {
    type Error = SignalParseError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<Signal> for String {
    fn from(signal: Signal) -> Self {
        signal.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(Signal::KILL.name(), "SIGKILL");
        assert_eq!(Signal::from_number(40).unwrap().name(), "SIG40");
        assert!(Signal::from_number(0).is_none());
        assert!("SIGNOPE".parse::<Signal>().is_err());
        assert!(
            "SIG15".parse::<Signal>().is_err(),
            "named signals parse by name only"
        );
    }

    proptest! {
        #[test]
        fn name_round_trips(n in 1i32..=64) {
            let signal = Signal::from_number(n).unwrap();
            prop_assert_eq!(signal.name().parse::<Signal>().unwrap(), signal);
        }
    }
}
