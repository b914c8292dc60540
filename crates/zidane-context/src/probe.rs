//! Readiness probes: the checks `wait_task … until` makes of a server a task started,
//! run by the context where its tasks run. A task on a worker listens on the worker's
//! ports, so a probe from the host would check the wrong machine.

use serde::{Deserialize, Serialize};

/// One readiness check of a task's machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum Probe {
    /// Whether `127.0.0.1:<port>` accepts a TCP connection.
    Port {
        /// The port.
        port: u16,
    },
    /// Whether a GET of an `http://` URL answers 2xx or 3xx (redirects are not
    /// followed: a redirect is an answer).
    Http {
        /// The URL.
        url: String,
    },
}

impl Probe {
    /// A TCP connect to `127.0.0.1:port`.
    pub const fn port(port: u16) -> Self {
        Self::Port { port }
    }

    /// A GET of `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Self::Http { url: url.into() }
    }
}

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
#[non_exhaustive]
pub enum ProbeOutcome {
    /// The check held; for an HTTP probe, the status the server answered.
    Ready {
        /// The HTTP status (an HTTP probe only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// Not yet: why, in words a model can act on (`connect to 127.0.0.1:8080:
    /// Connection refused`).
    NotReady {
        /// What the probe saw.
        reason: String,
    },
}
