//! Child processes for the crate's unit tests.

use std::process::{Child, Command, Stdio};

/// Starts `sleep 1000` (stdin on `/dev/null`) with `env` added to its environment.
/// The caller kills and reaps it.
pub(crate) fn sleep_1000(env: &[(&str, &str)]) -> Child {
    let mut command = Command::new("sleep");
    command.arg("1000").stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().unwrap()
}
