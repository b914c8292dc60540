//! A bounded wait for async tests.

use std::time::Duration;

/// Polls `condition` every `every` until it holds, panicking with `failure` once
/// `within` has passed: for conditions no event announces (a process gone, a file
/// written).
pub async fn poll_until(
    within: Duration,
    every: Duration,
    failure: &str,
    mut condition: impl FnMut() -> bool,
) {
    let deadline = tokio::time::Instant::now() + within;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "{failure}");
        tokio::time::sleep(every).await;
    }
}
