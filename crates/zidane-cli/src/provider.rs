//! Where the model comes from: one function, [`model_from_env`].
//!
//! The real providers (OpenAI-compatible, Anthropic) and their configuration live in the
//! `zidane-models` crate (`zidane::models::from_env`); this module is the one seam the host
//! calls, and adds to that crate's answer what a person at a terminal needs: examples of
//! the variables to set, and `--demo`.

use std::sync::Arc;

use zidane::agent::Model;
use zidane::models::{
    ANTHROPIC_API_KEY_ENV, EnvError, MODEL_ENV, OPENAI_API_KEY_ENV, OPENAI_BASE_URL_ENV,
    PROVIDER_ENV,
};

/// No usable provider: what to set, and the way to try zidane without one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no model provider configured: {reason}{}\n\
     e.g.  {PROVIDER_ENV}=openai {MODEL_ENV}=gpt-4o-mini {OPENAI_API_KEY_ENV}=… ({OPENAI_BASE_URL_ENV} for any OpenAI-compatible server)\n\
     or    {PROVIDER_ENV}=anthropic {MODEL_ENV}=claude-sonnet-4-5 {ANTHROPIC_API_KEY_ENV}=…\n\
     or try it without a provider: zidane --demo",
    if missing.is_empty() { String::new() } else { format!("\nset {}", missing.join(", ")) }
)]
pub struct Missing {
    /// Why the configuration is not enough.
    pub reason: String,
    /// The variables to set.
    pub missing: Vec<&'static str>,
}

/// The model of the configured provider (`zidane::models::from_env`), with its name for
/// the footer; or what to set, naming `--demo`.
pub fn model_from_env() -> Result<(Arc<dyn Model>, String), Missing> {
    match zidane::models::from_env() {
        Ok(model) => {
            let name = std::env::var(MODEL_ENV).unwrap_or_default();
            Ok((model, name))
        }
        Err(error) => Err(missing_from(error)),
    }
}

/// What to tell the person for an error of `from_env`: the variables to set, or the
/// whole cause (an invalid base URL, an unknown provider).
fn missing_from(error: EnvError) -> Missing {
    match error {
        EnvError::Missing { missing } => Missing {
            reason: "the provider's variables are not all set".to_owned(),
            missing,
        },
        error => Missing {
            reason: error.to_string(),
            missing: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_base_url_is_reported_as_such() {
        let error = EnvError::Build {
            provider: "openai",
            cause: zidane::models::BuildError::InvalidBaseUrl {
                url: "ftp://example".to_owned(),
            },
        };
        let text = missing_from(error).to_string();
        assert!(
            text.contains("invalid base URL \"ftp://example\""),
            "{text}"
        );
    }

    #[test]
    fn the_message_names_every_variable_and_the_demo() {
        let missing = Missing {
            reason: "the provider's variables are not all set".to_owned(),
            missing: vec![PROVIDER_ENV, MODEL_ENV],
        };
        let text = missing.to_string();
        for var in [
            PROVIDER_ENV,
            MODEL_ENV,
            OPENAI_BASE_URL_ENV,
            OPENAI_API_KEY_ENV,
            ANTHROPIC_API_KEY_ENV,
        ] {
            assert!(text.contains(var), "{var} missing from {text}");
        }
        assert!(
            text.contains(&format!("\nset {PROVIDER_ENV}, {MODEL_ENV}\n")),
            "{text}"
        );
        assert!(text.contains("zidane --demo"));
    }
}
