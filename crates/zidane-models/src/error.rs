//! The errors of building a provider. Errors of a model call are
//! [`zidane_llm::ModelError`]s.

/// Why a provider could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The base URL is not an `http://` or `https://` URL.
    #[error("invalid base URL {url:?}: it must start with http:// or https://")]
    InvalidBaseUrl {
        /// What was given.
        url: String,
    },
    /// The API key cannot be sent in an HTTP header (a control character, a newline).
    #[error("the API key cannot be sent in an HTTP header")]
    InvalidApiKey,
    /// The HTTP client could not be set up (its TLS backend failed to load).
    #[cfg(feature = "http")]
    #[error("the HTTP client could not be built: {0}")]
    Client(reqwest::Error),
}

/// Why [`from_env`](crate::from_env) could not pick a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// Variables that must be set (and not empty) are not. Each entry names one
    /// variable, or alternatives joined by ` or `.
    #[error("cannot pick a model: set {}", missing.join(", "))]
    Missing {
        /// What is missing, in a fixed order.
        missing: Vec<&'static str>,
    },
    /// `ZIDANE_PROVIDER` names no provider.
    #[error("ZIDANE_PROVIDER={0:?} is not a provider: use openai or anthropic")]
    UnknownProvider(String),
    /// The provider was left out of this build.
    #[error(
        "ZIDANE_PROVIDER={provider}: this build has no {provider} provider (enable the `{provider}` feature of zidane or zidane-models)"
    )]
    NotCompiled {
        /// `openai` or `anthropic`.
        provider: &'static str,
    },
    /// The variables are there but the provider could not be built from them.
    #[error("the {provider} provider could not be built from the environment: {cause}")]
    Build {
        /// `openai` or `anthropic`.
        provider: &'static str,
        /// Why.
        cause: BuildError,
    },
}
