//! `TaskId`: the only shape of task id that may ever touch a path.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ContextError;

/// The prefix of every task id.
pub const TASK_ID_PREFIX: &str = "bash_";

/// The most digits a task id may carry (any `u64`).
pub(crate) const MAX_TASK_ID_DIGITS: usize = 20;

/// Held tasks' provisional ids are numbered above this: half the range of a `u64`,
/// beyond any sequence of task ids a handle runs through.
pub const HELD_TASK_NUMBERS: u64 = 1 << 63;

/// A background task id: `bash_<n>`, `n` a decimal `u64` without leading zeros.
///
/// Ids are minted by contexts (`bash_1`, `bash_2`, … per context) and echoed back by the
/// model, so parsing is strict: anything else — `../x`, `bash_1/..`, `bash_01`, an empty
/// string, whitespace, more digits than a `u64` holds — is refused before it can be
/// joined into a path.
///
/// ```
/// use zidane_context::TaskId;
/// let id: TaskId = "bash_7".parse()?;
/// assert_eq!(id.number(), 7);
/// assert_eq!(id.to_string(), "bash_7");
/// assert!("../etc".parse::<TaskId>().is_err());
/// # Ok::<(), zidane_context::ContextError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
pub struct TaskId(u64);

impl TaskId {
    /// The id with number `n` (`bash_<n>`).
    pub const fn from_number(n: u64) -> Self {
        Self(n)
    }

    /// The `n`-th provisional id a context gives a held task
    /// ([`BackgroundOptions::held`](crate::BackgroundOptions::held)), from 1: numbered
    /// above [`HELD_TASK_NUMBERS`], so no handle's sequence ever meets one.
    pub const fn held(n: u64) -> Self {
        Self(HELD_TASK_NUMBERS.saturating_add(n))
    }

    /// Whether this is a held task's provisional id (see [`held`](Self::held)).
    pub const fn is_held(self) -> bool {
        self.0 > HELD_TASK_NUMBERS
    }

    /// The number after `bash_`.
    pub const fn number(self) -> u64 {
        self.0
    }

    /// Parses a task id, refusing anything that is not `bash_<digits>`.
    pub fn parse(input: &str) -> Result<Self, ContextError> {
        let invalid = |reason| ContextError::InvalidTaskId {
            input: input.to_owned(),
            reason,
        };
        let digits = input
            .strip_prefix(TASK_ID_PREFIX)
            .ok_or_else(|| invalid("a task id is `bash_` followed by digits"))?;
        if digits.is_empty() {
            return Err(invalid("no digits after `bash_`"));
        }
        if digits.len() > MAX_TASK_ID_DIGITS {
            return Err(invalid("too many digits"));
        }
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("only ASCII digits may follow `bash_`"));
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(invalid("leading zeros are not allowed"));
        }
        digits
            .parse::<u64>()
            .map(Self)
            .map_err(|_| invalid("number out of range"))
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{TASK_ID_PREFIX}{}", self.0)
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaskId({self})")
    }
}

impl FromStr for TaskId {
    type Err = ContextError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<String> for TaskId {
    type Error = ContextError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<TaskId> for String {
    fn from(id: TaskId) -> Self {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_path_like_and_malformed_ids() {
        for bad in [
            "",
            " ",
            "bash_",
            "bash_ 1",
            " bash_1",
            "bash_1 ",
            "bash_1/..",
            "../x",
            "bash_-1",
            "bash_+1",
            "bash_01",
            "BASH_1",
            "bash1",
            "bash_1a",
            "bash_١",
            "bash_99999999999999999999999",
            "bash_18446744073709551616",
        ] {
            assert!(TaskId::parse(bad).is_err(), "accepted {bad:?}");
        }
        assert_eq!(TaskId::parse("bash_0").unwrap().number(), 0);
        assert_eq!(
            TaskId::parse("bash_18446744073709551615").unwrap().number(),
            u64::MAX
        );
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(n in any::<u64>()) {
            let id = TaskId::from_number(n);
            prop_assert_eq!(TaskId::parse(&id.to_string()).unwrap(), id);
        }

        #[test]
        fn only_canonical_bash_digits_is_accepted(s in "\\PC*") {
            let canonical = s
                .strip_prefix("bash_")
                .and_then(|d| d.parse::<u64>().ok().filter(|n| n.to_string() == d));
            prop_assert_eq!(TaskId::parse(&s).is_ok(), canonical.is_some());
        }

        #[test]
        fn near_misses_are_refused(prefix in "[a-z_./ ]{0,6}", n in any::<u64>(), suffix in "[a-z_./ ]{1,6}") {
            let s = format!("{prefix}bash_{n}{suffix}");
            prop_assert!(TaskId::parse(&s).is_err());
        }
    }
}
