//! `HttpOptions` and `RetryPolicy`: the timeouts, retries and size limits of a
//! provider's requests, with their defaults.

use std::time::Duration;

/// How long connecting to the provider may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the provider may take to answer a request with its status and headers.
/// Generous: a server first reads the whole prompt, which takes a while for a long
/// session on a local model.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a stream may go quiet: the longest wait for its next chunk (providers send
/// keep-alive events while they think).
pub const DEFAULT_CHUNK_TIMEOUT: Duration = Duration::from_secs(90);
/// How many times a request is sent at most, the first time included.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 4;
/// The first retry's backoff, doubled each retry (before jitter).
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(500);
/// The longest backoff between two attempts (a `retry-after` may ask for more).
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);
/// The longest time spent retrying one request: a retry that would start later is not
/// made, and the last error is returned.
pub const DEFAULT_MAX_RETRY_TIME: Duration = Duration::from_secs(120);
/// The largest event a stream may send (its bytes before it is complete).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 1 << 20;
/// The largest stream, all events together.
pub const DEFAULT_MAX_STREAM_BYTES: usize = 64 << 20;
/// Timeouts, retries and size limits of a provider's requests.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// See [`DEFAULT_CONNECT_TIMEOUT`].
    pub connect_timeout: Duration,
    /// See [`DEFAULT_FIRST_BYTE_TIMEOUT`].
    pub first_byte_timeout: Duration,
    /// See [`DEFAULT_CHUNK_TIMEOUT`].
    pub chunk_timeout: Duration,
    /// When and how often a failed request is sent again.
    pub retry: RetryPolicy,
    /// See [`DEFAULT_MAX_EVENT_BYTES`].
    pub max_event_bytes: usize,
    /// See [`DEFAULT_MAX_STREAM_BYTES`].
    pub max_stream_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: DEFAULT_FIRST_BYTE_TIMEOUT,
            chunk_timeout: DEFAULT_CHUNK_TIMEOUT,
            retry: RetryPolicy::default(),
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_stream_bytes: DEFAULT_MAX_STREAM_BYTES,
        }
    }
}

impl HttpOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the connect timeout.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets how long the provider may take to start answering.
    #[must_use]
    pub fn first_byte_timeout(mut self, timeout: Duration) -> Self {
        self.first_byte_timeout = timeout;
        self
    }

    /// Sets how long a stream may go quiet between two chunks.
    #[must_use]
    pub fn chunk_timeout(mut self, timeout: Duration) -> Self {
        self.chunk_timeout = timeout;
        self
    }

    /// Sets the retry policy.
    #[must_use]
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the size limits: of one event, and of a whole stream.
    #[must_use]
    pub fn limits(mut self, max_event_bytes: usize, max_stream_bytes: usize) -> Self {
        self.max_event_bytes = max_event_bytes;
        self.max_stream_bytes = max_stream_bytes;
        self
    }
}

/// Retries of a request that failed before its stream began: on 408, 429, 5xx (and
/// Anthropic's 529), a connection error, or a first-byte timeout. The delay is the
/// provider's `retry-after-ms` / `retry-after` when it sends one, else exponential
/// backoff with full jitter. A stream that breaks off is not retried: the host has
/// already been shown part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// See [`DEFAULT_MAX_ATTEMPTS`]; 1 turns retries off.
    pub max_attempts: u32,
    /// See [`DEFAULT_BASE_DELAY`].
    pub base_delay: Duration,
    /// See [`DEFAULT_MAX_DELAY`].
    pub max_delay: Duration,
    /// See [`DEFAULT_MAX_RETRY_TIME`].
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base_delay: DEFAULT_BASE_DELAY,
            max_delay: DEFAULT_MAX_DELAY,
            max_total: DEFAULT_MAX_RETRY_TIME,
        }
    }
}

impl RetryPolicy {
    /// A policy of at most `max_attempts` attempts, the other settings default.
    pub fn attempts(max_attempts: u32) -> Self {
        Self {
            max_attempts,
            ..Self::default()
        }
    }

    /// Sets the backoff: the first delay and the longest.
    #[must_use]
    pub fn backoff(mut self, base_delay: Duration, max_delay: Duration) -> Self {
        self.base_delay = base_delay;
        self.max_delay = max_delay;
        self
    }

    /// Sets the longest time spent retrying one request.
    #[must_use]
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = max_total;
        self
    }

    /// The jittered backoff before retry number `retry` (1 for the first retry).
    pub(crate) fn backoff_delay(&self, retry: u32) -> Duration {
        let ceiling = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)))
            .min(self.max_delay);
        // Full jitter: clients that failed together do not retry together.
        ceiling.mul_f64(fastrand::f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let policy = RetryPolicy::attempts(10)
            .backoff(Duration::from_millis(100), Duration::from_millis(1000));
        for retry in 1..12 {
            let ceiling = Duration::from_millis(100 * (1 << (retry - 1).min(4)))
                .min(Duration::from_millis(1000));
            assert!(policy.backoff_delay(retry) <= ceiling, "retry {retry}");
        }
    }
}
