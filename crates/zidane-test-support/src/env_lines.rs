//! What `env` printed, as a map: the tests of the environment policy read a task's
//! environment this way in every crate.

use std::collections::BTreeMap;

/// `env`'s `NAME=value` lines as a map (lines without `=` skipped).
pub fn env_of(output: &str) -> BTreeMap<String, String> {
    output
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}
