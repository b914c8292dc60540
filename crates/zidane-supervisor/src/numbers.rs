//! Task numbers: never given twice, even after `zidane clean` removed a task's
//! directory or the supervisor was killed.
//!
//! The counter file holds the highest number *reserved*, not the last one given, and is
//! written once per block of [`BLOCK`] numbers: a start then writes no file for its
//! number. A supervisor that dies mid-block leaves the rest of the block unused, so the
//! next one begins past it: numbers may skip, never repeat.

use std::path::PathBuf;

use crate::error::{Result, SupervisorError};

/// How many numbers one write of the counter file reserves.
pub(crate) const BLOCK: u64 = 32;

/// The supervisor's task numbers.
#[derive(Debug)]
pub(crate) struct TaskNumbers {
    counter: PathBuf,
    /// The last number given by this supervisor (or reserved by an earlier one).
    given: u64,
    /// The highest number the counter file reserves.
    reserved: u64,
}

impl TaskNumbers {
    /// Reads the counter file in `state` (none yet: nothing reserved).
    pub(crate) fn load(state: &std::path::Path) -> Self {
        let counter = state.join("last-id");
        let reserved = std::fs::read_to_string(&counter)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .unwrap_or(0);
        Self {
            counter,
            given: reserved,
            reserved,
        }
    }

    /// The next number, past `last_kept` (the highest task number on disk) and past
    /// every number reserved; reserves a new block when this one is used up.
    pub(crate) fn next(&mut self, last_kept: u64) -> Result<u64> {
        let n = self.given.max(last_kept) + 1;
        if n > self.reserved {
            let reserved = n + BLOCK - 1;
            let temp = self.counter.with_file_name(".last-id.tmp");
            std::fs::write(&temp, reserved.to_string())
                .and_then(|()| std::fs::rename(&temp, &self.counter))
                .map_err(SupervisorError::state(&self.counter))?;
            self.reserved = reserved;
        }
        self.given = n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(dir: &std::path::Path) -> u64 {
        std::fs::read_to_string(dir.join("last-id"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn one_write_reserves_a_block_and_the_numbers_follow_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let mut numbers = TaskNumbers::load(dir.path());
        assert_eq!(numbers.next(0).unwrap(), 1);
        assert_eq!(counter(dir.path()), BLOCK);
        // The file is not written again inside the block.
        std::fs::remove_file(dir.path().join("last-id")).unwrap();
        for expected in 2..=BLOCK {
            assert_eq!(numbers.next(0).unwrap(), expected);
        }
        assert!(!dir.path().join("last-id").exists());
        assert_eq!(numbers.next(0).unwrap(), BLOCK + 1);
        assert_eq!(counter(dir.path()), 2 * BLOCK);
    }

    #[test]
    fn a_supervisor_killed_mid_block_is_followed_past_the_block() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = TaskNumbers::load(dir.path());
        let given: Vec<u64> = (0..3).map(|_| first.next(0).unwrap()).collect();
        drop(first);
        let mut next = TaskNumbers::load(dir.path());
        let after = next.next(0).unwrap();
        assert!(given.iter().all(|&n| n < after), "{given:?} then {after}");
        assert_eq!(after, BLOCK + 1);
    }

    #[test]
    fn a_task_kept_past_the_counter_is_never_numbered_again() {
        // A counter file lost or older than the tasks on disk.
        let dir = tempfile::tempdir().unwrap();
        let mut numbers = TaskNumbers::load(dir.path());
        assert_eq!(numbers.next(500).unwrap(), 501);
        assert_eq!(numbers.next(0).unwrap(), 502);
    }

    #[test]
    fn an_unwritable_counter_is_an_error_and_gives_no_number() {
        let dir = tempfile::tempdir().unwrap();
        let mut numbers = TaskNumbers::load(&dir.path().join("missing"));
        assert!(numbers.next(0).is_err());
        assert!(
            numbers.next(0).is_err(),
            "a failed reservation reserved nothing"
        );
    }

    proptest::proptest! {
        /// Starts, supervisors killed and reloaded, tasks cleaned away: no number is
        /// given twice.
        #[test]
        fn no_number_is_given_twice(steps in proptest::collection::vec(0u8..3, 1..200)) {
            let dir = tempfile::tempdir().unwrap();
            let mut numbers = TaskNumbers::load(dir.path());
            let mut given = std::collections::BTreeSet::new();
            for step in steps {
                match step {
                    // A supervisor killed: the next one reads the counter file.
                    0 => numbers = TaskNumbers::load(dir.path()),
                    // A start with every task cleaned away (none kept on disk).
                    1 => proptest::prop_assert!(given.insert(numbers.next(0).unwrap())),
                    // A start with the tasks kept on disk.
                    _ => {
                        let kept = given.last().copied().unwrap_or(0);
                        proptest::prop_assert!(given.insert(numbers.next(kept).unwrap()));
                    }
                }
            }
        }
    }
}
