//! The one error type of this crate.

use std::net::SocketAddr;

use zidane_agent::AgentError;

/// What can stop a server from starting or serving. Bad requests never do: they are
/// JSON-RPC errors or tool errors, and the session goes on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServeError {
    /// The session's agent could not be built (its tasks directory cannot be named, or a
    /// tool was registered twice).
    #[error("cannot start a session: {0}")]
    Session(AgentError),
    /// The MCP handshake or the transport failed.
    #[error("MCP transport error: {0}")]
    Transport(String),
    /// The HTTP listener could not be bound.
    #[error("cannot listen on {addr}: {cause}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// `--http` names an address that is not loopback, without `--allow-remote` and a
    /// bearer token.
    #[error(
        "refusing to listen on {addr}: it is not a loopback address. Pass --allow-remote together with a bearer token (--bearer-token or ZIDANE_MCP_TOKEN) to serve other machines"
    )]
    RemoteWithoutToken {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// `--allow-remote` was given without a bearer token.
    #[error("--allow-remote needs a non-empty bearer token (--bearer-token or ZIDANE_MCP_TOKEN)")]
    MissingToken,
    /// The bearer token given is empty, or holds whitespace or control characters (it
    /// could not be sent in a header as it is).
    #[error(
        "the bearer token (--bearer-token or ZIDANE_MCP_TOKEN) must be a non-empty string with no whitespace or control characters; leave both unset to have one generated"
    )]
    BadToken,
    /// HTTP without a bearer token, and without `--no-token` saying so.
    #[error(
        "serving HTTP without a bearer token needs --no-token; otherwise give one (--bearer-token or ZIDANE_MCP_TOKEN) or let `zidane mcp` generate one"
    )]
    NoToken,
    /// `--no-token` together with a token.
    #[error("--no-token cannot be used with a bearer token (--bearer-token or ZIDANE_MCP_TOKEN)")]
    NoTokenWithToken,
    /// `--no-token` together with `--allow-remote`.
    #[error("--no-token cannot be used with --allow-remote: other machines need a token")]
    NoTokenWithRemote,
    /// No randomness for a token could be had from the operating system.
    #[error("cannot generate a bearer token: {0}")]
    Randomness(String),
    /// The generated token could not be written to its private file.
    #[error("cannot write the bearer token to {}: {cause}", path.display())]
    TokenFile {
        /// The file, or its directory.
        path: std::path::PathBuf,
        /// The OS error. Printed in the message, so not also a `source()`.
        cause: std::io::Error,
    },
    /// zidane's configuration holds a value it does not accept: an environment variable
    /// (`ZIDANE_PROCESS_PATH`), or an environment policy that cannot be applied.
    #[error("{0}")]
    Config(String),
    /// Serving HTTP failed.
    #[error("HTTP server error: {0}")]
    Http(std::io::Error),
    /// Stdout could not be set aside for the protocol.
    #[error("cannot set stdout aside for the protocol: {0}")]
    Stdout(std::io::Error),
}

// Printed in the message, so not also a `source()` (a chain would print it twice).
impl From<AgentError> for McpServeError {
    fn from(error: AgentError) -> Self {
        Self::Session(error)
    }
}

/// An agent failure while serving a request, as the JSON-RPC error the client gets.
pub(crate) fn agent_error(error: AgentError) -> rmcp::ErrorData {
    rmcp::ErrorData::internal_error(format!("the session cannot serve this call: {error}"), None)
}

/// Why Codex's sandbox state (`_meta["codex/sandbox-state-meta"]`) could not be read.
/// Never a request error: the call's commands then run `read-only` without network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SandboxMetaError {
    /// A field it must have is missing.
    #[error("`{0}` is missing")]
    Missing(&'static str),
    /// A field that must be a string is not.
    #[error("`{0}` is not a string")]
    NotText(&'static str),
    /// A value is not the JSON kind it must be.
    #[error("{what} is not a {kind}")]
    NotA {
        /// What was read.
        what: &'static str,
        /// The kind it must be (`object`, `list`).
        kind: &'static str,
    },
    /// A value zidane does not know, so cannot tell how much it allows.
    #[error("{what} `{value}` is not one zidane knows")]
    Unknown {
        /// What was read.
        what: &'static str,
        /// What it was.
        value: String,
    },
    /// A path that is not absolute, climbs with `..`, or a URL that is not a `file:`
    /// one.
    #[error("`{0}` is not an absolute path or file URL")]
    BadPath(String),
}
