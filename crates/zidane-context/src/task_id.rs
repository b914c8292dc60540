//! `TaskId`: the only shape of task id that may ever touch a path.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::ContextError;

/// The prefix of every task id.
pub const TASK_ID_PREFIX: &str = "bash_";

/// The prefix of a detached task's id: `bash_d<n>`.
pub const DETACHED_TASK_ID_PREFIX: &str = "bash_d";

/// The most digits a task id may carry (any `u64`).
pub(crate) const MAX_TASK_ID_DIGITS: usize = 20;

/// The most digits a detached task's number may carry (any number below `2^62`).
const MAX_DETACHED_DIGITS: usize = 19;

/// Held tasks' provisional ids are numbered above this: half the range of a `u64`,
/// beyond any sequence of task ids a handle runs through.
pub const HELD_TASK_NUMBERS: u64 = 1 << 63;

/// Detached tasks' ids are numbered above this and below [`HELD_TASK_NUMBERS`]:
/// [`TaskId::detached`]`(n)` is `DETACHED_TASK_NUMBERS + n`, spelled `bash_d<n>`. No
/// handle's sequence reaches this range, and `bash_<n>` with `n` inside it is refused,
/// so a detached id has exactly one spelling.
pub const DETACHED_TASK_NUMBERS: u64 = 1 << 62;

/// A background task id: `bash_<n>`, `n` a decimal `u64` without leading zeros, or a
/// detached task's `bash_d<n>`, `n` from 1 to below `2^62`.
///
/// Ids are minted by contexts (`bash_1`, `bash_2`, … per context; `bash_d1`, `bash_d2`,
/// … per user by the supervisor that owns detached tasks) and echoed back by the model,
/// so parsing is strict: anything else — `../x`, `bash_1/..`, `bash_01`, `bash_d0`, an
/// empty string, whitespace, more digits than a `u64` holds, a plain `bash_<n>` whose
/// number is a detached task's ([`DETACHED_TASK_NUMBERS`]) — is refused before it can be
/// joined into a path. Every id has exactly one spelling.
///
/// ```
/// use zidane_context::TaskId;
/// let id: TaskId = "bash_7".parse()?;
/// assert_eq!(id.number(), 7);
/// assert_eq!(id.to_string(), "bash_7");
/// assert!("../etc".parse::<TaskId>().is_err());
///
/// let detached: TaskId = "bash_d3".parse()?;
/// assert!(detached.is_detached());
/// assert_eq!(detached.detached_number(), Some(3));
/// assert_eq!(Some(detached), TaskId::detached(3));
/// assert_eq!(detached.to_string(), "bash_d3");
/// assert!("bash_d0".parse::<TaskId>().is_err());
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

    /// The id of the `n`-th detached task (`bash_d<n>`), numbered above
    /// [`DETACHED_TASK_NUMBERS`]; `None` for `n == 0` or `n >= 2^62`. Detached ids are
    /// minted per user by the supervisor that owns detached tasks.
    pub const fn detached(n: u64) -> Option<Self> {
        if n == 0 || n >= DETACHED_TASK_NUMBERS {
            None
        } else {
            Some(Self(DETACHED_TASK_NUMBERS + n))
        }
    }

    /// Whether this is a detached task's id (see [`detached`](Self::detached)).
    pub const fn is_detached(self) -> bool {
        self.0 > DETACHED_TASK_NUMBERS && self.0 < HELD_TASK_NUMBERS
    }

    /// The `n` of a detached task's `bash_d<n>`; `None` for any other id.
    pub const fn detached_number(self) -> Option<u64> {
        if self.is_detached() {
            Some(self.0 - DETACHED_TASK_NUMBERS)
        } else {
            None
        }
    }

    /// The id's number: the `n` of `bash_<n>`; for a detached id, its place in the
    /// reserved range ([`DETACHED_TASK_NUMBERS`] `+ n`), see
    /// [`detached_number`](Self::detached_number).
    pub const fn number(self) -> u64 {
        self.0
    }

    /// Parses a task id, refusing anything that is not `bash_<digits>` or
    /// `bash_d<digits>` in their one canonical spelling.
    pub fn parse(input: &str) -> Result<Self, ContextError> {
        let invalid = |reason| ContextError::InvalidTaskId {
            input: input.to_owned(),
            reason,
        };
        if let Some(digits) = input.strip_prefix(DETACHED_TASK_ID_PREFIX) {
            let n = parse_digits(digits, MAX_DETACHED_DIGITS, "bash_d").map_err(invalid)?;
            return Self::detached(n)
                .ok_or_else(|| invalid("a detached task's number is from 1 to below 2^62"));
        }
        let digits = input
            .strip_prefix(TASK_ID_PREFIX)
            .ok_or_else(|| invalid("a task id is `bash_` followed by digits"))?;
        let id = Self(parse_digits(digits, MAX_TASK_ID_DIGITS, "bash_").map_err(invalid)?);
        if id.is_detached() {
            return Err(invalid(
                "this number belongs to a detached task, spelled `bash_d<n>`",
            ));
        }
        Ok(id)
    }
}

/// The digits after a prefix: ASCII, not empty, no leading zero, at most `max` of them,
/// within a `u64`.
fn parse_digits(digits: &str, max: usize, prefix: &str) -> Result<u64, &'static str> {
    if digits.is_empty() {
        return Err(if prefix == TASK_ID_PREFIX {
            "no digits after `bash_`"
        } else {
            "no digits after `bash_d`"
        });
    }
    if digits.len() > max {
        return Err("too many digits");
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(if prefix == TASK_ID_PREFIX {
            "only ASCII digits may follow `bash_`"
        } else {
            "only ASCII digits may follow `bash_d`"
        });
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err("leading zeros are not allowed");
    }
    digits.parse::<u64>().map_err(|_| "number out of range")
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detached_number() {
            Some(n) => write!(f, "{DETACHED_TASK_ID_PREFIX}{n}"),
            None => write!(f, "{TASK_ID_PREFIX}{}", self.0),
        }
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

    #[test]
    fn detached_ids_have_one_spelling() {
        let id = TaskId::detached(7).unwrap();
        assert!(id.is_detached());
        assert!(!id.is_held());
        assert_eq!(id.detached_number(), Some(7));
        assert_eq!(id.number(), DETACHED_TASK_NUMBERS + 7);
        assert_eq!(id.to_string(), "bash_d7");
        assert_eq!(TaskId::parse("bash_d7").unwrap(), id);
        assert!(TaskId::parse(&format!("bash_{}", id.number())).is_err());
        assert_eq!(TaskId::detached(0), None);
        assert_eq!(TaskId::detached(DETACHED_TASK_NUMBERS), None);
        assert_eq!(TaskId::detached(u64::MAX), None);
        let last = TaskId::detached(DETACHED_TASK_NUMBERS - 1).unwrap();
        assert_eq!(last.to_string(), "bash_d4611686018427387903");
        assert_eq!(TaskId::parse("bash_d4611686018427387903").unwrap(), last);
        for bad in [
            "bash_d",
            "bash_d0",
            "bash_d01",
            "bash_d-1",
            "bash_d+1",
            "bash_d 1",
            "bash_d1 ",
            "bash_d1/..",
            "bash_D1",
            "bash_dd1",
            "bash_d4611686018427387904",
            "bash_d9223372036854775809",
            "bash_d18446744073709551615",
            "bash_d00000000000000000001",
        ] {
            assert!(TaskId::parse(bad).is_err(), "accepted {bad:?}");
        }
        // The bounds of the reserved range stay plain ids; the held ids stay held.
        for n in [DETACHED_TASK_NUMBERS, HELD_TASK_NUMBERS] {
            let id = TaskId::from_number(n);
            assert!(!id.is_detached());
            assert_eq!(TaskId::parse(&id.to_string()).unwrap(), id);
        }
        let held = TaskId::held(1);
        assert!(held.is_held() && !held.is_detached());
        assert_eq!(held.detached_number(), None);
        assert_eq!(TaskId::parse(&held.to_string()).unwrap(), held);
        assert_eq!(TaskId::from_number(7).detached_number(), None);
    }

    #[test]
    fn detached_ids_serde_through_their_spelling() {
        let id = TaskId::detached(12).unwrap();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"bash_d12\"");
        assert_eq!(serde_json::from_str::<TaskId>(&json).unwrap(), id);
        let plain = format!("\"bash_{}\"", id.number());
        assert!(serde_json::from_str::<TaskId>(&plain).is_err());
    }

    /// The one canonical reading of `s`, as the spec says: `bash_d<n>` with `n` in
    /// `1..2^62`, or `bash_<n>` with `n` outside the detached range, both in plain
    /// decimal without leading zeros.
    fn canonical(s: &str) -> Option<TaskId> {
        let decimal = |d: &str| d.parse::<u64>().ok().filter(|n| n.to_string() == d);
        if let Some(d) = s.strip_prefix("bash_d") {
            return decimal(d).and_then(TaskId::detached);
        }
        s.strip_prefix("bash_")
            .and_then(decimal)
            .map(TaskId::from_number)
            .filter(|id| !id.is_detached())
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(n in any::<u64>()) {
            let id = TaskId::from_number(n);
            prop_assert_eq!(TaskId::parse(&id.to_string()).unwrap(), id);
        }

        #[test]
        fn detached_display_parse_round_trip(n in 1..DETACHED_TASK_NUMBERS) {
            let id = TaskId::detached(n).unwrap();
            let text = id.to_string();
            prop_assert_eq!(&text, &format!("bash_d{n}"));
            prop_assert_eq!(TaskId::parse(&text).unwrap(), id);
            prop_assert_eq!(id.detached_number(), Some(n));
        }

        #[test]
        fn plain_spelling_of_a_detached_number_is_refused(n in 1..DETACHED_TASK_NUMBERS) {
            let plain = format!("bash_{}", DETACHED_TASK_NUMBERS + n);
            prop_assert!(TaskId::parse(&plain).is_err());
        }

        #[test]
        fn only_canonical_bash_digits_is_accepted(s in "\\PC*") {
            prop_assert_eq!(TaskId::parse(&s).ok(), canonical(&s));
        }

        #[test]
        fn only_canonical_spellings_are_accepted(s in "bash_d?[0-9]{0,21}") {
            prop_assert_eq!(TaskId::parse(&s).ok(), canonical(&s));
        }

        #[test]
        fn whatever_parses_displays_as_itself(s in "(bash_d?[0-9]{1,20})|\\PC{0,24}") {
            if let Ok(id) = TaskId::parse(&s) {
                prop_assert_eq!(id.to_string(), s);
            }
        }

        #[test]
        fn near_misses_are_refused(prefix in "[a-z_./ ]{0,6}", n in any::<u64>(), suffix in "[a-z_./ ]{1,6}") {
            let s = format!("{prefix}bash_{n}{suffix}");
            prop_assert!(TaskId::parse(&s).is_err());
            let s = format!("{prefix}bash_d{n}{suffix}");
            prop_assert!(TaskId::parse(&s).is_err());
        }
    }
}
