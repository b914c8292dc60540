//! The errors of this crate.

use std::path::PathBuf;

/// What can go wrong talking to Restate, serving a worker, or running a Restate server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RestateError {
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {cause}")]
    Client {
        /// The client's error. Printed in the message, so not also a `source()`.
        cause: reqwest::Error,
    },
    /// A request to Restate did not complete (connection, timeout).
    #[error("request to {target} failed: {cause}")]
    Http {
        /// `service/key/handler` (or the admin path).
        target: String,
        /// The client's error. Printed in the message, so not also a `source()`.
        cause: reqwest::Error,
    },
    /// Restate or the handler answered with an error.
    #[error("{target} answered {status}: {message}")]
    Handler {
        /// `service/key/handler` (or the admin path).
        target: String,
        /// The HTTP status.
        status: u16,
        /// The error message.
        message: String,
    },
    /// A request could not be encoded, or an answer decoded, as JSON.
    #[error("JSON of {target}: {cause}")]
    Decode {
        /// `service/key/handler`.
        target: String,
        /// serde_json's error. Printed in the message, so not also a `source()`.
        cause: serde_json::Error,
    },
    /// No worker could be reached for an operation that needs one.
    #[error("no worker answered for {operation}: {last}")]
    NoWorker {
        /// What was being done.
        operation: &'static str,
        /// The last worker's error.
        last: String,
    },
    /// A worker was made outside a tokio runtime.
    #[error("a Worker must be made inside a tokio runtime")]
    NoRuntime,
    /// The worker's configuration holds a value it does not accept: an environment
    /// variable (`ZIDANE_PROCESS_PATH`), or an environment policy that cannot be applied.
    #[error("{0}")]
    Config(String),
    /// A context was given no worker to run its tasks on.
    #[error("no worker ids given: a context needs at least one worker to run tasks on")]
    NoWorkers,
    /// A worker id with characters a service name cannot hold.
    #[error("invalid worker id {0:?}: use 1-64 ASCII letters, digits or '_'")]
    InvalidWorkerId(String),
    /// The worker could not listen or serve.
    #[error("worker endpoint on {address}: {cause}")]
    Serve {
        /// The listen address.
        address: String,
        /// The OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// The Restate server binary was not found.
    #[error("restate-server not found (set {var} or run `cargo xtask ci`): looked at {looked:?}")]
    ServerNotFound {
        /// The environment variable that names it.
        var: &'static str,
        /// Paths tried.
        looked: Vec<PathBuf>,
    },
    /// The Restate server could not be started or did not become ready.
    #[error("restate-server: {reason}")]
    Server {
        /// What happened.
        reason: String,
    },
    /// An identity key (or a file or variable of them) the worker cannot use.
    #[error("{origin}: {reason}")]
    IdentityKey {
        /// Where it came from: the flag, file (and line) or environment variable.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Local I/O failed.
    #[error("I/O error on {path}: {cause}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
}

impl From<RestateError> for zidane_context::ContextError {
    fn from(error: RestateError) -> Self {
        zidane_context::ContextError::Io {
            path: None,
            cause: std::io::Error::other(error),
        }
    }
}
